"""The lm-eval layer: benchmark data, task glue, the import hook, retrieval and the inference strategies."""
from pathlib import Path


def tasks_dir() -> Path:
    """r3bench's lm-eval task folder (tasks/r3/): what the hook adds to lm-eval's include_path."""
    return Path(__file__).resolve().parents[2] / "tasks" / "r3"
