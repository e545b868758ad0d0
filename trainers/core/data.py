"""Training data: the JSONL reader every trainer uses (errors name file and line), the data file of a
config (`data`: a procgen export folder or one JSONL file; empty: the procedural bank exported into
OUTPUT_DIR/data once, under a lock, for every process) and its train rows."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from r3bench.procgen.export import export
from trainers import distributed
from trainers.errors import TrainDataError


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while b := f.read(1 << 20):
            h.update(b)
    return h.hexdigest()


def read_jsonl(path: Path, required: tuple[str, ...] = (), what: str = "training data",
               allow_empty: bool = False) -> list[dict]:
    """One JSON object per line; a file that cannot be opened or decoded, a line that is not a JSON
    object or lacks a `required` field, or (unless `allow_empty`) no rows: TrainDataError naming
    path:line (`what` names the file in the cannot-open message)."""
    rows = []
    try:
        fh = open(path, encoding="utf-8")
    except OSError as e:
        raise TrainDataError(f"cannot open {what} {path}: {e}") from None
    with fh:
        try:
            for i, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise TrainDataError(f"{path}:{i}: not JSON ({e.msg})") from None
                if not isinstance(row, dict):
                    raise TrainDataError(f"{path}:{i}: expected a JSON object, got {type(row).__name__}")
                missing = [k for k in required if k not in row]
                if missing:
                    raise TrainDataError(f"{path}:{i}: missing field(s) {missing}")
                rows.append(row)
        except UnicodeDecodeError as e:
            raise TrainDataError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    if not rows and not allow_empty:
        raise TrainDataError(f"{path}: no rows")
    return rows


def data_file(cfg, name: str, log=print) -> Path:
    """The JSONL file `name` (sft.jsonl, dpo.jsonl, ...) of cfg.data, exporting the bank if needed."""
    if cfg.data:
        p = Path(cfg.data)
        if p.is_file():
            return p
        if p.is_dir():
            if not (p / name).is_file():
                raise TrainDataError(f"{p} has no {name} (expected a procgen export: r3bench procgen --out DIR)")
            return p / name
        raise TrainDataError(f"data {cfg.data!r} is neither a file nor a folder")
    out = Path(cfg.output_dir) / "data"
    # once for all processes, before the process group exists (torchrun starts every rank at once):
    # the first to take the lock exports, the others wait on it and find the manifest written
    with distributed.file_lock(Path(cfg.output_dir) / ".data.lock"):
        if not (out / "manifest.json").is_file():
            export(out, n=cfg.procgen_n, seed=cfg.procgen_seed, log=log)
    return out / name


def train_rows(cfg, name: str, required: tuple[str, ...], log=print) -> tuple[list[dict], Path]:
    path = data_file(cfg, name, log=log)
    rows = read_jsonl(path, required)
    if any("split" in r for r in rows):
        rows = [r for r in rows if r.get("split", "train") == "train"]
        if not rows:
            raise TrainDataError(f"{path}: no rows with split == 'train'")
    if cfg.max_train_samples:
        rows = rows[: cfg.max_train_samples]
    return rows, path


def user_chat(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]
