"""`r3bench doctor`: what this machine gives the sandbox that runs model-written code, and why.

    report(refresh=False) -> dict       # plain data; the CLI prints it (this module never prints)
    format_report(d) -> str

The level comes from verifiers.sandbox.isolation_level() (a cached probe: one namespaced run of
`result = 1`), plus the pieces the probe depends on, so a "rlimits+audit-hook" answer says which
piece is missing: the util-linux `unshare` binary, permission to create mount/net/pid namespaces
(some container platforms refuse it), libseccomp, and the R3BENCH_SANDBOX_ISOLATION setting.
"""
from __future__ import annotations

import os
import platform
import subprocess
import sys

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
             f"  why:            " + (f"forced by {d['setting']} (the probe found: {p.get('level')}, {p.get('why', '')})"
                                      if d["isolation_level"] != p.get("level") else p.get("why", "")),
             f"  euid:           {p.get('euid')} ({'user namespace' if p.get('user_namespace') else 'per-run uid'})",
             f"  unshare:        {p.get('unshare') or 'not found'} ({d.get('unshare_version') or '?'})",
             f"  namespaces:     {'ok' if p.get('namespaces') else 'refused or not tried'}"
             + (f" (probe run {p['probe_seconds']} s)" if "probe_seconds" in p else ""),
             f"  seccomp:        " + ("libseccomp ok, " + str(len(d["libseccomp"]["denied"])) + " rules"
                                      if d["libseccomp"]["available"] else "unavailable: " + d["libseccomp"]["why"]),
             f"  kernel:         {d['kernel']} ({d['machine']}), Python {d['python']}"]
    if d["isolation_level"] != d["levels"][0]:
        lines.append(f"  WARNING: model-written code runs at {d['isolation_level']!r}, not {d['levels'][0]!r}: "
                     "see docs/sandbox.md for what that level does not stop")
    return "\n".join(lines)
