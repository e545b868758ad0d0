"""`r3bench data fetch`: download the benchmark files from their public sources, with checksums.

Every file is pinned to a commit of its source repository. JSON files are checked by the sha256 of
their canonical form (json.dumps, sorted keys) because some are derived (a filter, a re-indent)
from the published file; CSV files by the sha256 of their bytes. A file is written to a temporary
name and renamed only after its checksum matched, so a failed fetch leaves no half file. With no
network it fails within the timeout, naming the file and the reason.

`--mirror URL` replaces https://raw.githubusercontent.com (for a local mirror of the same paths).
"""
from __future__ import annotations

import hashlib
import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

RAW = "https://raw.githubusercontent.com"
MORA = ("maximus-21/MoRA", "622d671e62aa774f108259f583ed6707fe460fd2")
CS336 = ("stanford-cs336/assignment5-alignment", "eb2c562e05802d3c9ee4c4ec2eec43b104d77e9e")
JEE = ("hgaurav2k/JEEBench", "b44560c6c2155c722197f5f32f20fcadedc5bdda")


class FetchError(RuntimeError):
    pass


def _phy_only(rows):
    return [r for r in rows if r.get("subject") == "phy"]


@dataclass(frozen=True)
class Source:
    dest: str  # path inside the data directory
    repo: str
    commit: str
    path: str  # path inside the source repository
    sha256: str  # of the canonical JSON (JSON files) or of the bytes (others)
    derive: Callable | None = None  # JSON rows -> rows (e.g. the physics filter)

    def url(self, base: str = RAW) -> str:
        return f"{base.rstrip('/')}/{self.repo}/{self.commit}/{self.path}"


SOURCES = [
    Source("scieval/scieval-valid_physics.json", *MORA, "Dataset/SciEval_Static_Physics.json",
           "81c31edff6c5c20e0126befb0edf2f88728f978e4f366151a1b11e8bcf9f1437"),
    Source("mmlu_high/mora_variant/MMLU_High_School_Physics.json", *MORA, "Dataset/MMLU_High_School_Physics.json",
           "c7b84b882fb659762d7f9004dd543bcd9e86f9d89900c99dc3310673ee5ce6de"),
    Source("mmlu_college/mora_variant/MMLU_College_Physics.json", *MORA, "Dataset/MMLU_College_Physics.json",
           "54e8732ea67cff75bdb44efe056da93b4e3b6ea6fc98f094ec4533b54cb2f615"),
    Source("physicsqa/PhysicsQA.json", *MORA, "Dataset/PhysicsQA.json",
           "a94cd573dd04fd7d65bc1cda384b38da3812b17cdf48d1102428a61164a06b04"),
    Source("jeebench/dataset_phy.json", *JEE, "dataset.json",
           "3f2bd9704f3c7513bbe2dc26b4c40f1a8980bd3da39d3b1159ea51a99649e923", _phy_only),
] + [
    Source(f"mmlu_high/high_school_physics_{s}.csv", *CS336, f"data/mmlu/{s}/high_school_physics_{s}.csv", h)
    for s, h in (("dev", "5f008c3a44e7b14d86f6c1cbde28892fd0d97ae424e8af9901d75c4ee03972cc"),
                 ("val", "3861ace8d359bac8b8560481599212193d38120fc350082680d99ad2090eeb0e"),
                 ("test", "573e0f8d8309e4669f53a4b13248a908507b6d5d4c97c977f7bb9814658fee54"))
] + [
    Source(f"mmlu_college/college_physics_{s}.csv", *CS336, f"data/mmlu/{s}/college_physics_{s}.csv", h)
    for s, h in (("dev", "6e043d6c566091c5ad1d8bc1d002900e1aa0bff114f98d5e3f2e4f645efce100"),
                 ("val", "55c80f8fdd225c5ff57ab952d583fa5f20ac719e2432e9062fd5fb00e4abe42e"),
                 ("test", "079c3696eda22c13b0472de245c7bb4918315b59481964109a4f65d2a35b4243"))
]


def digest(dest: str, raw: bytes) -> str:
    if dest.endswith(".json"):
        return hashlib.sha256(json.dumps(json.loads(raw), sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return hashlib.sha256(raw).hexdigest()


def _payload(src: Source, raw: bytes) -> bytes:
    if src.derive is None:
        return raw
    try:
        rows = json.loads(raw)
    except ValueError as e:
        raise FetchError(f"{src.dest}: downloaded file is not JSON ({e})") from None
    return json.dumps(src.derive(rows), indent=4, ensure_ascii=False).encode()


def fetch(root: str | os.PathLike, mirror: str = RAW, timeout_s: float = 10.0, log=print) -> list[dict]:
    """Fetch every source into `root`. Returns one report per file; raises FetchError if any failed."""
    root = Path(root)
    report, failed = [], 0
    for src in SOURCES:
        out = root / src.dest
        if out.is_file():
            try:
                if digest(src.dest, out.read_bytes()) == src.sha256:
                    report.append({"file": src.dest, "status": "present"})
                    continue
            except ValueError:
                pass
        try:
            with urllib.request.urlopen(src.url(mirror), timeout=timeout_s) as r:
                raw = r.read()
            data = _payload(src, raw)
            got = digest(src.dest, data)
            if got != src.sha256:
                raise FetchError(f"checksum mismatch (got {got[:12]}, expected {src.sha256[:12]})")
        except (urllib.error.URLError, OSError, ValueError, FetchError) as e:
            why = getattr(e, "reason", None) or e
            report.append({"file": src.dest, "status": "failed", "url": src.url(mirror), "reason": str(why)})
            log(f"FAILED {src.dest}: {why} ({src.url(mirror)})")
            failed += 1
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".partial")
        tmp.write_bytes(data)
        tmp.replace(out)
        report.append({"file": src.dest, "status": "fetched", "sha256": src.sha256})
        log(f"fetched {src.dest}")
    if failed:
        raise FetchError(f"{failed} of {len(SOURCES)} files could not be fetched (no network? see above); "
                         f"nothing half-written was left in {root}")
    return report
