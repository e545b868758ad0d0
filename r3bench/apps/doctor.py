"""`r3bench doctor`: what a run needs on this machine, in one table, then the sandbox in detail.

    needs(data_dir=None) -> list[dict]  # rows: torch, the model file, the data directory, lm-eval task
                                        # discovery, the sandbox level, free disk, memory (ok / warn / missing)
    format_needs(rows) -> str           # the table
    report(refresh=False) -> dict       # the sandbox: plain data; the CLI prints it (this module never prints)
    format_report(d) -> str

The level comes from verifiers.sandbox.isolation_level() (a cached probe: one namespaced run of
`result = 1`), plus the pieces the probe depends on, so a "rlimits+audit-hook" answer says which
piece is missing: the util-linux `unshare` binary, permission to create mount/net/pid namespaces
(some container platforms refuse it), libseccomp, and the R3BENCH_SANDBOX_ISOLATION setting.
"""
from __future__ import annotations

import importlib.util
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

from verifiers import sandbox
from verifiers import seccomp


def _unshare_version(path):
    if not path:
        return None
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError) as e:
        return f"not runnable: {type(e).__name__}"
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr).strip() else None


def _libseccomp():
    try:
        f = seccomp.build(kill=True)  # built, not loaded: this process is not confined by it
    except seccomp.SeccompUnavailable as e:
        return {"available": False, "why": str(e)}
    return {"available": True, "denied": list(f.denied)}


def report(refresh: bool = False) -> dict:
    """Everything `r3bench doctor` shows, as plain data."""
    info = sandbox.probe(refresh=refresh)
    return {
        "isolation_level": sandbox.isolation_level(),
        "setting": f"{sandbox.ENV_VAR}={os.environ.get(sandbox.ENV_VAR, 'auto')}",
        "probe": info,
        "unshare_version": _unshare_version(info.get("unshare")),
        "libseccomp": _libseccomp(),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "levels": list(sandbox.LEVELS),
    }


def format_report(d: dict) -> str:
    p = d["probe"]
    lines = [f"sandbox isolation level: {d['isolation_level']}",
             f"  setting:        {d['setting']}",
             "  why:            " + (f"forced by {d['setting']} (the probe found: {p.get('level')}, {p.get('why', '')})"
                                      if d["isolation_level"] != p.get("level") else p.get("why", "")),
             f"  euid:           {p.get('euid')} ({'user namespace' if p.get('user_namespace') else 'per-run uid'})",
             f"  unshare:        {p.get('unshare') or 'not found'} ({d.get('unshare_version') or '?'})",
             f"  namespaces:     {'ok' if p.get('namespaces') else 'refused or not tried'}"
             + (f" (probe run {p['probe_seconds']} s)" if "probe_seconds" in p else ""),
             "  bound trees:    " + (p.get("bound_trees") or "-")
             + (" (host FIFOs and path sockets there are not the host's)" if p.get("bound_trees") == "overlay" else ""),
             "  seccomp:        " + ("libseccomp ok, " + str(len(d["libseccomp"]["denied"])) + " rules"
                                      if d["libseccomp"]["available"] else "unavailable: " + d["libseccomp"]["why"]),
             f"  kernel:         {d['kernel']} ({d['machine']}), Python {d['python']}"]
    if d["isolation_level"] != d["levels"][0]:
        lines.append(f"  WARNING: model-written code runs at {d['isolation_level']!r}, not {d['levels'][0]!r}: "
                     "see docs/sandbox.md for what that level does not stop")
    return "\n".join(lines)


# what a run needs: below these, the demo or a trainer runs out of disk or memory
MIN_FREE_DISK_GB = 5.0   # the venv is ~2.4 GB, the converted model 0.54 GB, a run folder up to ~1 GB
MIN_MEMORY_GB = 4.0      # stepfix peaks at ~3.3 GB (docs/training.md)


def _row(name: str, status: str, detail: str) -> dict:
    return {"check": name, "status": status, "detail": detail}


def _torch() -> dict:
    if importlib.util.find_spec("torch") is None:
        return _row("torch", "missing", "pip install torch==2.13.0 (the CPU build: README)")
    import torch

    gpu = torch.cuda.is_available()
    return _row("torch", "ok", f"{torch.__version__}, " + (f"GPU: {torch.cuda.get_device_name(0)}" if gpu else
                                                           f"CPU only, {torch.get_num_threads()} threads"))


def _model() -> dict:
    from r3bench.core import models

    try:
        gguf = models.gguf_path()
    except models.ModelError as e:
        return _row("model file", "missing", str(e))
    conv = models.cache_root() / "models" / models.SHORT_NAMES["r3bench/smollm2-135m-instruct"]
    why = models.check_cache(conv)
    return _row("model file", "ok", f"{gguf.name} ({gguf.stat().st_size / 1e6:.0f} MB); converted: "
                + ("yes" if why is None else "not yet (the first run converts it, once)"))


def _data(data_dir) -> dict:
    from r3bench.apps.demo import find_data_dir
    from r3bench.eval.data import fetch_sources

    found, how = find_data_dir(data_dir)
    if found is None:
        return _row("data directory", "warn", how)
    if not Path(found).is_dir():
        return _row("data directory", "missing", f"{found} does not exist")
    sources = fetch_sources()
    have = sum((Path(found) / src.dest).is_file() for src in sources)
    return _row("data directory", "ok" if have == len(sources) else "warn",
                f"{how}; {have} of {len(sources)} benchmark files")


def _lm_eval() -> dict:
    if importlib.util.find_spec("lm_eval") is None:
        return _row("lm-eval tasks", "missing", "pip install 'r3bench[eval]'")
    import lm_eval
    from lm_eval.tasks import TaskManager

    from r3bench.eval.hook import tasks_dir

    try:
        names = [t for t in TaskManager(include_path=str(tasks_dir()), include_defaults=False).all_tasks
                 if t.startswith("r3_")]
    except Exception as e:  # noqa: BLE001 - a broken index is what this row reports
        return _row("lm-eval tasks", "missing", f"task index failed: {type(e).__name__}: {str(e)[:120]}")
    return _row("lm-eval tasks", "ok" if names else "missing",
                f"lm-eval {getattr(lm_eval, '__version__', '?')}: {len(names)} r3_* tasks and groups found")


def _sandbox() -> dict:
    level = sandbox.isolation_level()
    return _row("sandbox", "ok" if level == sandbox.LEVELS[0] else "warn",
                f"{level} (details below; docs/sandbox.md)")


def _disk(path=".") -> dict:
    free = shutil.disk_usage(path).free / 1e9
    return _row("free disk", "ok" if free >= MIN_FREE_DISK_GB else "warn",
                f"{free:.1f} GB free here (want >= {MIN_FREE_DISK_GB:g} GB)")


def _memory() -> dict:
    try:
        info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines() if ":" in line)
        avail = int(info["MemAvailable"].split()[0]) / 1e6
    except (OSError, KeyError, ValueError):
        return _row("memory", "warn", "unknown (no /proc/meminfo)")
    return _row("memory", "ok" if avail >= MIN_MEMORY_GB else "warn",
                f"{avail:.1f} GB available (want >= {MIN_MEMORY_GB:g} GB)")


def needs(data_dir=None) -> list[dict]:
    """One row per thing a run needs: torch, the model file, the data directory, lm-eval task
    discovery, the sandbox level, free disk, memory; status ok, warn or missing."""
    return [_torch(), _model(), _data(data_dir), _lm_eval(), _sandbox(), _disk(), _memory()]


def format_needs(rows: list[dict]) -> str:
    lines = ["| check | status | detail |", "|---|---|---|"]
    lines += [f"| {r['check']} | {r['status']} | {r['detail'].replace('|', '/')} |" for r in rows]
    return "\n".join(lines)
