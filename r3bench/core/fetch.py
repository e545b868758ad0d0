"""`r3bench data fetch`: download the benchmark files from their public sources, with checksums.

Every file is pinned to a commit of its source repository; the files are the `sources` of the
benchmark table's entries (r3bench.eval.data.BENCHMARKS, `fetch_sources()`). JSON files are checked by the sha256 of
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


class FetchError(RuntimeError):
    pass


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


def fetch(root: str | os.PathLike, sources, mirror: str = RAW, timeout_s: float = 10.0, log=print) -> list[dict]:
    """Fetch every source into `root` (the benchmarks' sources: r3bench.eval.data.fetch_sources()).
    Returns one report per file; raises FetchError if any failed."""
    root = Path(root)
    sources = list(sources)
    report, failed = [], 0
    for src in sources:
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
        raise FetchError(f"{failed} of {len(sources)} files could not be fetched (no network? see above); "
                         f"nothing half-written was left in {root}")
    return report
