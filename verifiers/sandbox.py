"""A sandbox for model-written Python: a separate, limited, throwaway process.

    run_python(code, limits=SandboxLimits(), inputs=None) -> SandboxResult     # never raises

Enforced by the kernel (hold against any code, native included):
  - CPU time (RLIMIT_CPU), address space (RLIMIT_AS), file size (RLIMIT_FSIZE), no core dumps;
  - a wall-clock timeout kept by the parent, which kills the child's whole process group;
  - a throwaway working directory (removed afterwards) and a minimal environment: the parent's
    variables (API keys, tokens) are not passed; Python runs isolated (-I: no user site, no
    PYTHON* variables, no current directory on sys.path).
Enforced inside the child before the user code runs (an audit hook, which cannot be removed once
installed; it stops Python-level code, which is what model-written code is, but it is not a boundary
against native code - the rlimits and the empty environment are):
  - no network: socket creation, connect, bind, getaddrinfo are refused;
  - no new processes: fork, exec, spawn, subprocess, os.system are refused;
  - no writes, deletes or renames outside the working directory.
A refused action raises PermissionError in the child; the result says "refused" and what was refused.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

MARK = "\x00R3BENCH-SANDBOX-RESULT\x00"


@dataclass(frozen=True)
class SandboxLimits:
    wall_s: float = 5.0
    cpu_s: int = 3
    memory_mb: int = 512
    file_size_mb: int = 1
    output_kb: int = 64


@dataclass(frozen=True)
class SandboxResult:
    ok: bool
    status: str  # ok | error | timeout | memory | refused | killed
    stdout: str
    stderr: str
    returncode: int | None
    value: str | None  # repr of `result` when the code sets it
    seconds: float
    reason: str


_RUNNER = r'''
import json, os, sys
MARK = %(mark)r
WD = os.path.realpath(os.getcwd())
def _inside(p):
    try:
        p = os.path.realpath(os.fsdecode(p) if not isinstance(p, int) else WD)
    except Exception:
        return False
    return p == WD or p.startswith(WD + os.sep)
_NET = {"socket.__new__", "socket.connect", "socket.bind", "socket.getaddrinfo", "socket.sendto",
        "socket.gethostbyname", "socket.gethostbyaddr"}
_PROC = {"os.fork", "os.forkpty", "os.system", "os.posix_spawn", "os.spawn", "os.exec", "subprocess.Popen",
         "os.kill", "os.killpg", "pty.spawn", "os.startfile"}
_FS = {"os.remove", "os.unlink", "os.rename", "os.replace", "os.rmdir", "os.mkdir", "shutil.rmtree",
       "os.chmod", "os.chown", "os.symlink", "os.link", "os.truncate"}
def _hook(event, args):
    if event in _NET:
        raise PermissionError(f"network access refused ({event})")
    if event in _PROC or event.startswith("os.exec") or event.startswith("os.spawn"):
        raise PermissionError(f"starting processes refused ({event})")
    if event == "open" and args:
        path, mode = args[0], args[1] if len(args) > 1 else "r"
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(args[2] if len(args) > 2 else 0, int) and (args[2] if len(args) > 2 else 0) & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
        if writing and not isinstance(path, int) and not _inside(path):
            raise PermissionError(f"writing outside the working directory refused ({path})")
    if event in _FS and args and not isinstance(args[0], int) and not _inside(args[0]):
        raise PermissionError(f"changing files outside the working directory refused ({event} {args[0]})")
    if event in ("os.rename", "os.replace", "os.link", "os.symlink") and len(args) > 1 and not _inside(args[1]):
        raise PermissionError(f"changing files outside the working directory refused ({event} {args[1]})")
payload = json.loads(sys.stdin.read())
glb = {"__name__": "__main__", **payload["inputs"]}
sys.addaudithook(_hook)
out = {"status": "ok", "reason": "ran to completion", "value": None}
try:
    exec(compile(payload["code"], "<model code>", "exec"), glb)
    if "result" in glb:
        out["value"] = repr(glb["result"])[:2000]
except MemoryError:
    out = {"status": "memory", "reason": "memory limit reached (MemoryError)", "value": None}
except PermissionError as e:
    out = {"status": "refused", "reason": str(e)[:300], "value": None}
except SystemExit as e:
    out = {"status": "ok" if not e.code else "error", "reason": f"exit({e.code})", "value": None}
except BaseException as e:
    out = {"status": "error", "reason": f"{type(e).__name__}: {str(e)[:300]}", "value": None}
sys.stdout.flush()
sys.__stdout__.write(MARK + json.dumps(out) + "\n")
sys.__stdout__.flush()
'''


def _limits(lim: SandboxLimits):
    def apply():
        import resource
        os.setsid()
        mem = lim.memory_mb * 1024 * 1024
        for res, val in ((resource.RLIMIT_CPU, (lim.cpu_s, lim.cpu_s + 1)), (resource.RLIMIT_AS, (mem, mem)),
                         (resource.RLIMIT_FSIZE, (lim.file_size_mb * 1024 * 1024,) * 2), (resource.RLIMIT_CORE, (0, 0))):
            try:
                resource.setrlimit(res, val)
            except (ValueError, OSError):
                pass
    return apply


def run_python(code: str, limits: SandboxLimits = SandboxLimits(), inputs: dict | None = None) -> SandboxResult:
    t0 = time.monotonic()
    try:
        payload = json.dumps({"code": str(code), "inputs": dict(inputs or {})})
    except (TypeError, ValueError) as e:
        return SandboxResult(False, "error", "", "", None, None, 0.0, f"inputs are not JSON-serialisable: {e}")
    cap = limits.output_kb * 1024
    with tempfile.TemporaryDirectory(prefix="r3sandbox-") as wd:
        env = {"PATH": "/usr/bin:/bin", "HOME": wd, "LANG": "C.UTF-8", "TMPDIR": wd}
        try:
            proc = subprocess.Popen([sys.executable, "-I", "-B", "-c", _RUNNER % {"mark": MARK}], cwd=wd, env=env,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    preexec_fn=_limits(limits), close_fds=True)
        except OSError as e:
            return SandboxResult(False, "error", "", "", None, None, time.monotonic() - t0, f"could not start: {e}")
        timed_out = False
        try:
            out, err = proc.communicate(payload.encode(), timeout=limits.wall_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            out, err = proc.communicate()
    secs = time.monotonic() - t0
    out_s, err_s = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    info = None
    if MARK in out_s:
        out_s, _, tail = out_s.rpartition(MARK)
        try:
            info = json.loads(tail.strip().splitlines()[0])
        except (ValueError, IndexError):
            info = None
    trunc = lambda s: s if len(s) <= cap else s[:cap] + f"\n[... {len(s) - cap} characters cut]"  # noqa: E731
    rc = proc.returncode
    if timed_out:
        return SandboxResult(False, "timeout", trunc(out_s), trunc(err_s), rc, None, secs,
                             f"wall-clock limit of {limits.wall_s:g} s reached; the process group was killed")
    if info is not None:
        return SandboxResult(info["status"] == "ok", info["status"], trunc(out_s), trunc(err_s), rc, info["value"],
                             secs, info["reason"])
    if rc is not None and rc < 0:
        sig = -rc
        if sig in (signal.SIGXCPU, signal.SIGKILL) and secs >= limits.cpu_s * 0.8:
            return SandboxResult(False, "timeout", trunc(out_s), trunc(err_s), rc, None, secs,
                                 f"cpu time limit of {limits.cpu_s} s reached (signal {sig})")
        if sig == signal.SIGXFSZ:
            return SandboxResult(False, "refused", trunc(out_s), trunc(err_s), rc, None, secs,
                                 f"file size limit of {limits.file_size_mb} MB reached")
        return SandboxResult(False, "killed", trunc(out_s), trunc(err_s), rc, None, secs, f"killed by signal {sig}")
    if "MemoryError" in err_s:
        return SandboxResult(False, "memory", trunc(out_s), trunc(err_s), rc, None, secs, "memory limit reached")
    last = err_s.strip().splitlines()[-1] if err_s.strip() else f"exit code {rc}"
    return SandboxResult(False, "error", trunc(out_s), trunc(err_s), rc, None, secs, f"no result: {last[:300]}")
