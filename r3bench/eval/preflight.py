"""What plain `lm_eval` checks of r3bench's tasks before a model loads (the hook wraps simple_evaluate).

    problem(tasks, metadata) -> one line saying what is wrong and what to do, or None

An r3bench-like task name that is not r3bench's (with the closest names), or a task that reads the
benchmark data when no data directory is given (`R3BENCH_DATA_DIR`, or lm-eval's
`--metadata '{"data_dir": ...}'`) or the one given does not exist. Names unlike r3bench's are left to
lm-eval (they may be its own tasks).
"""
from __future__ import annotations

from r3bench.eval import data, lmeval


class PreflightError(ValueError):
    """An r3bench task cannot run as asked (raised before any model loads)."""


def problem(tasks, metadata=None) -> str | None:
    names = [t for t in ([tasks] if isinstance(tasks, str) else tasks or ()) if isinstance(t, str)]
    names = [n.strip() for t in names for n in t.split(",") if n.strip()]
    bad = lmeval.unknown_tasks_message(names)
    if bad:
        return bad
    need = [t for t in names if lmeval.needs_data(t)]
    if not need:
        return None
    given = metadata.get("data_dir") if isinstance(metadata, dict) else None
    try:
        data.data_dir(given)
    except data.DataError as e:
        return f"{', '.join(need)} read(s) the benchmark data: {e}"
    return None
