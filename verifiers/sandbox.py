"""Run model-written (untrusted) Python in a separate, limited, throwaway process tree.

    run_python(code, limits=SandboxLimits(), inputs=None) -> SandboxResult      # never raises
    isolation_level() -> str          # "namespaces+seccomp" | "namespaces" | "rlimits+audit-hook"
    probe() -> dict                   # what was tried and why that level (cached; `r3bench doctor`)
    number_value(value) -> str | None # the number in a result's value, or None (for text sent to a model)

The code runs with `exec` in a worker process: `inputs` are its variables, and `value` is the repr
of a variable named `result` if the code sets one. stdout and stderr are captured and cut to
`output_kb` each. The trusted half (the supervisor that sets up the confinement, forks the worker and
reports what it observed) is verifiers/sandbox_runner.py, run by path as
`python -I -S -B sandbox_runner.py <result fd> <payload file>`; its docstring describes the process
tree, the mounts, the order of the confinement steps and the result channel.

Isolation levels (every SandboxResult says which one it ran under, in `isolation`)
--------------------------------------------------------------------------------
"namespaces+seccomp" (the default where the kernel allows it). Enforced by the kernel:
  - util-linux `unshare --mount --net --pid --ipc --fork --kill-child=SIGKILL` (plus `--user
    --map-root-user` when the host is not root): a private mount namespace (a new root with the
    interpreter, the standard library and site-packages read-only, a private writable scratch
    directory, no project checkout, no $HOME, no project packages), a network namespace with no
    interface up (127.0.0.1 is unreachable), a PID namespace (the code sees only its own tree;
    when the supervisor, PID 1, exits, the kernel kills everything left in it, setsid or not), an
    IPC namespace (SysV shared memory, message queues, semaphores and POSIX queues the code creates
    are destroyed with it instead of staying on the host);
  - an unprivileged uid per run (no groups; when the host is root) or, in a user namespace, no
    capabilities; no_new_privs;
  - a seccomp filter (verifiers/seccomp.py: no mknod, ptrace, mount, keyrings, namespace creation,
    bpf, perf_event_open, kexec, io_uring, ...): the kernel reports a denied call to the supervisor
    (user notification), which ends the run; memfd_create/memfd_secret, io_setup, inotify, file
    locks, socket buffer sizes, AF_UNIX sockets and datagram socketpairs get an errno;
  - a memory cgroup per run (memory_mb + CGROUP_EXTRA_MB, everything the run allocates, kernel
    objects included; cgroup v2 where delegated, else v1's memory controller, else none with a
    warning; and a cgroup v1 cpuacct cgroup beside a v1 one, for the run's CPU time), the IPC namespace's
    own shm/msg/sem/mqueue limits set small, /dev's nodes bound
    read-only, and a Landlock domain (files opened for writing only in the scratch directory and
    /dev's nodes; no signals out of the domain);
  - rlimits: CPU (soft `cpu_s`: SIGXCPU, hard +1: SIGKILL), AS (`memory_mb`), FSIZE
    (`file_size_mb`), NOFILE 256, CORE 0, NPROC 1 + `max_processes` (the per-run uid owns no other
    process, and the kernel enforces NPROC for it, unlike for root);
  - the wall clock, kept here: the whole tree is SIGKILLed at `wall_s` and after every run;
  - an environment built from constants only (nothing of the parent's: no API keys).
  Inside, the audit-hook guards of the earlier in-process sandbox stay as a second layer (clear
  "refused" messages; they no longer carry the security).
"namespaces": the same without the seccomp filter (libseccomp could not be loaded); a warning.
"rlimits+audit-hook" (fallback): the kernel refused the namespaces (some container platforms), or
  R3BENCH_SANDBOX_ISOLATION=fallback. The earlier guards only: rlimits, the empty environment, the
  throwaway directory, a process-group kill, and the audit hook in the same interpreter, which code
  with ctypes can switch off (tests/verifiers/test_sandbox_attacks.py lists what then gets through). A warning
  is logged once, and the level is in every result, ProgramVerdict, CE feedback evidence and run record.

Why util-linux `unshare` + ctypes + libseccomp: it is present on every Debian/Ubuntu machine (no new
system package, CI installs only through pip), Python 3.11 has no os.unshare, and calling unshare(2)
in a forked child of a threaded parent (preexec_fn) is unsafe, while the `unshare` binary does the
namespace creation between fork and exec in C and its --kill-child ties the namespace's lifetime to a
process we can SIGKILL. Mounts, pivot_root, the uid drop and seccomp are a few ctypes calls in the
supervisor, where they are plain sequential code. bubblewrap would do the same but is a new system
dependency; pyseccomp/python-prctl are pip packages that wrap the same libseccomp.

R3BENCH_SANDBOX_ISOLATION: "auto" (default: the strongest level the probe finds, else the fallback,
loudly), "fallback" (or "off"; force "rlimits+audit-hook"), "require" (namespaces+seccomp or every
run returns status "error"; for RL runs that must not run unconfined).

Statuses: "ok"; "error" (an exception: its type and message, a non-zero exit, a tampered report
channel, "report too large", a failed setup); "timeout" (the wall clock, kept here, or "cpu time
limit" on SIGXCPU / the hard CPU SIGKILL when the kernel measured the CPU time); "memory"
(MemoryError, a native allocation failure under RLIMIT_AS, or the memory cgroup's OOM kill);
"refused" (a guard, the kernel's report of a denied call in any process of the run, or the file-size
limit); "killed" (any other signal, also a SIGSYS or SIGXCPU the program raised itself).
`source` says whose status it is: "supervisor" (observed from outside the program: the wall clock, a denied
call, the cgroup's OOM kill, the CPU time of all the run's processes, a signal, the setup, a forged report line)
or "program" (its own report: refused/memory only with the texts the worker itself writes, issue 55).

Also from outside the program: its stdin is a pipe of its own (not the host's /dev/null), it starts in a
fresh session keyring, the supervisor kills and reaps every process of the run when the worker exits, and a
reaper process per caller removes a run's scratch directory and cgroup when the caller dies mid-run.
"""
from __future__ import annotations

import atexit
import dataclasses
import json
import keyword
import logging
import math
import fcntl
import os
import re
import resource
import secrets
import selectors
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

STATUSES = ("ok", "error", "timeout", "memory", "killed", "refused")
LEVELS = ("namespaces+seccomp", "namespaces", "rlimits+audit-hook")
FALLBACK = "rlimits+audit-hook"
ENV_VAR = "R3BENCH_SANDBOX_ISOLATION"
RUNNER = Path(__file__).with_name("sandbox_runner.py")
SECCOMP = Path(__file__).with_name("seccomp.py")
PROJECT_ROOT = Path(__file__).resolve().parent.parent
PROJECT_PACKAGES = ("r3bench", "verifiers", "trainers", "tasks", "r3bench_lmeval_hook.py")
SCRATCH_MAX_MB = 256  # the scratch tmpfs: file_size_mb x max_files, at most this
PROBE_RETRY_S = 60.0  # a failed probe is tried again after this long (a successful one is kept)
# the run's /proc shows its processes only (mount option subset=pid); False: the older kernels' way, the host-wide
# entries masked one by one (sandbox_runner.PROC_MASKED; a test switch, the runner also falls back by itself)
PROC_SUBSET = True
DRAIN_EVERY_S, _DRAIN_MAX = 0.05, 4 << 20  # a stream past output_kb: drained this often, at most this much each time
CGROUP_EXTRA_MB = 64  # a run's memory cgroup holds memory_mb + this (scratch files, pipes, kernel objects)
CGROUP_PREFIX = "r3sandbox-"
CPU_LIMIT_SHARE = 0.85  # SIGXCPU / SIGKILL count as the CPU limit when the kernel measured this share of cpu_s
_DRAIN_S = 0.5  # how long to keep reading pipes after the child (group) is gone


@dataclass(frozen=True)
class SandboxLimits:
    wall_s: float = 5.0  # wall clock, kept by the parent
    cpu_s: int = 3  # RLIMIT_CPU (whole seconds; the hard limit is one more)
    memory_mb: int = 512  # RLIMIT_AS
    file_size_mb: int = 1  # RLIMIT_FSIZE
    max_processes: int = 0  # processes beyond the worker itself (RLIMIT_NPROC + the runner's guards)
    output_kb: int = 64  # stdout and stderr are each cut to this
    max_files: int = 100  # files and directories the code may create in its working directory
    io_mb_s: int = 64  # block-device reads and writes, MB/s per device (a blkio / io cgroup where there is one; 0: none)


@dataclass(frozen=True)
class SandboxResult:
    ok: bool
    status: str  # ok | error | timeout | memory | killed | refused
    stdout: str
    stderr: str
    returncode: int | None
    value: str | None  # repr of `result` when the code sets it
    seconds: float
    reason: str  # human-readable, never empty
    isolation: str = ""  # the level this run had: one of LEVELS ("" only for arguments refused before a run)
    calls: tuple = ()  # CallResult per Calls.inputs entry, when the run was given `calls`
    # who says so: "supervisor" (what the trusted side observed from outside: the wall clock, the kernel's report
    # of a denied call, the memory cgroup's OOM kill, the CPU time, a signal, an exit code, the setup) or
    # "program" (the run's own report: a value, an exception, a guard's refusal; the code can write it)
    source: str = ""


@dataclass(frozen=True)
class Calls:
    """A fork server inside one run: after `code` ran (imports, the program's top level), `code` here runs once
    per entry of `inputs` (its variables set in the module's namespace), each in a fresh fork of that state.
    Each call is timed by the supervisor's clock, from sending the call's inputs to receiving its result, and
    its processes are killed at `seconds`; the program's process cannot stop or change that clock. The first
    call that reaches its limit ends the run (status `timeout`); the calls after it are `not run`. `start_s`:
    the same for the start (interpreter, imports, the code's top level) up to the first call."""
    code: str
    inputs: tuple  # of dicts (JSON-serialisable)
    seconds: float  # each call's time limit
    start_s: float | None = None  # the start's limit (None: only limits.wall_s)


@dataclass(frozen=True)
class CallResult:
    status: str  # ok | error | memory | refused | timeout | not run
    value: str | None  # repr of `result` after the call's code
    reason: str
    seconds: float | None  # the supervisor's clock (None: not run)


# control characters (C0, DEL, C1) and the invisible format characters that reorder or hide text (bidi
# overrides and isolates, zero-width marks, BOM): written as escapes in every string from a run
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def visible_text(text: str) -> str:
    """`text` with its control and invisible format characters written as backslash escapes: one line of
    visible text, for a run's strings that reach a verdict, a log line or a terminal.

        visible_text("5\\n\\x1b[2J")  ->  "5\\\\n\\\\x1b[2J"
    """
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def _clean(text):
    """A str that encodes as UTF-8 and is one line of visible text: no NUL, newline, terminal escape or
    bidi override (each written as its backslash escape: "\\n", "\\x1b", "\\u202e"). `value` and
    `reason` carry the code's own text (a __repr__ may return a lone surrogate, an exception message
    may hold a forged "reward 1.000 (success)" line or an OSC title sequence): a caller that writes
    them out (a log line, a terminal, a UTF-8 file, a database) must neither crash nor be fooled."""
    if not isinstance(text, str):
        return text
    text = visible_text(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _result(status, reason, t0, stdout="", stderr="", returncode=None, value=None, isolation="", source="supervisor"):
    return SandboxResult(status == "ok", status, stdout, stderr, returncode, _clean(value),
                         round(time.monotonic() - t0, 4), _clean(reason) or status, isolation, source=source)


# what the in-process guards refuse (verifiers/sandbox_runner.py GUARD_KINDS, the same tuple): a refusal the
# program reports is "<kind> is refused in the sandbox (<what>)", never the text of an outside observation
GUARD_KINDS = ("starting or signalling processes", "network access", "creating special files", "calling native code",
               "changing resource limits", "tracing or walking the interpreter", "loading this native module",
               "loading native libraries", "using this path object", "using a path of an unknown type",
               "writing outside the working directory", "linking outside the working directory", "creating more files",
               "reading other processes", "opening directories outside the working directory",
               "an action the guards could not check")
_GUARD = re.compile("(?:" + "|".join(re.escape(k) for k in GUARD_KINDS) + r") is refused in the sandbox \([^\n]*")  # cut at 500 characters: no ")" then


def _program_claim(final, limits):
    """None where the program's final report is one the worker itself writes, else why it is forged. The
    report channel is the program's: `refused` only with a guard's text or the worker's file-size text,
    `memory` only with the worker's MemoryError texts. A line with the kernel's refusal text or the memory
    cgroup's OOM text (statuses only the supervisor may give) is a forged line."""
    status, reason = final.get("final"), str(final.get("reason") or "")
    if status == "refused":
        if _GUARD.fullmatch(reason) or re.fullmatch(
                rf"file size limit of {re.escape(str(limits.file_size_mb))} MB reached(?: \(line \d+\))?", reason):
            return None
        return "a final report claiming 'refused' with a text no guard of the worker writes"
    if status == "memory":
        if reason in _memory_texts(limits):
            return None
        return "a final report claiming 'memory' with a text the worker never writes"
    if status == "ok" and reason not in ("ran to completion", "ran to completion (sys.exit(0))"):
        return "a final report claiming 'ok' with a text the worker never writes"
    return None


def _memory_texts(limits):
    memory = f"memory limit of {limits.memory_mb} MB reached (MemoryError)"
    return (memory, memory + " in repr(result)")


def _site_paths():
    paths = []
    try:
        paths += site.getsitepackages()
    except AttributeError:  # very old virtualenv
        pass
    return [p for p in dict.fromkeys(paths) if os.path.isdir(p)]


def _user_tasks(uid):
    """Processes and threads of real uid `uid` (what RLIMIT_NPROC counts), or None without /proc."""
    n = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    for e in entries:
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/status", "rb") as f:
                real_uid = threads = None
                for line in f:
                    if line.startswith(b"Uid:"):
                        real_uid = int(line.split()[1])
                    elif line.startswith(b"Threads:"):
                        threads = int(line.split()[1])
            if real_uid == uid:
                n += threads or 1
        except (OSError, ValueError, IndexError):
            continue
    return n


def _rlimits(lim: SandboxLimits, own_uid: bool):
    """[(name, soft, hard)], never above the limits the parent already has.

    NPROC: with a per-run uid (`own_uid`) the worker is that uid's only task, so 1 + max_processes is
    exact; otherwise the kernel counts every task of the uid, so the tasks it has now are added
    (approximate, and not applied at all to root: the fallback's guards stop forks there)."""
    mib = 1024 * 1024
    tasks = 0 if own_uid else (_user_tasks(os.getuid()) or 0) + 1  # + the supervisor
    nproc = tasks + 1 + lim.max_processes
    want = [("RLIMIT_CPU", lim.cpu_s, lim.cpu_s + 1), ("RLIMIT_AS", lim.memory_mb * mib, lim.memory_mb * mib),
            ("RLIMIT_FSIZE", lim.file_size_mb * mib, lim.file_size_mb * mib), ("RLIMIT_CORE", 0, 0),
            ("RLIMIT_NOFILE", 256, 256), ("RLIMIT_NPROC", nproc, nproc),
            # no real-time priority and no raised nice ceiling, whatever the caller was given
            ("RLIMIT_RTPRIO", 0, 0), ("RLIMIT_NICE", 0, 0)]
    out = []
    for name, soft, hard in want:
        _, cur_hard = resource.getrlimit(getattr(resource, name))
        if cur_hard != resource.RLIM_INFINITY:
            hard = min(hard, cur_hard)
        out.append((name, min(soft, hard), hard))
    return out


def _check(code, limits, inputs):
    if not isinstance(code, str):
        return f"code must be a str, not {type(code).__name__}"
    if not isinstance(limits, SandboxLimits):
        return "limits must be a SandboxLimits"
    for name in ("wall_s", "cpu_s", "memory_mb", "file_size_mb", "output_kb"):
        v = getattr(limits, name)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not v > 0:
            return f"limits.{name} must be a positive number, not {v!r}"
    for name in ("max_processes", "max_files", "io_mb_s"):
        v = getattr(limits, name)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            return f"limits.{name} must be a non-negative int, not {v!r}"
    if inputs is not None and not isinstance(inputs, dict):
        return "inputs must be a dict"
    for k in inputs or {}:
        if not isinstance(k, str) or not k.isidentifier() or keyword.iskeyword(k) or k.startswith("__"):
            return f"input name {k!r} is not a usable variable name"
    return None


class _Capped:
    """Keeps the first `cap` bytes of a stream and counts the rest."""

    def __init__(self, cap):
        self.cap, self.data, self.dropped = cap, bytearray(), 0

    def add(self, chunk):
        room = self.cap - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self):
        s = self.data.decode("utf-8", "replace")
        if self.dropped:
            s += f"\n[... {self.dropped} more bytes cut: the output limit is {self.cap // 1024} KB]"
        return s


def _exited(pid):
    """True once the child has exited (still unreaped: its pid and group id stay reserved)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _killpg(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_supervisor(unshare_pid, wait_s=2.0):
    """SIGKILL `unshare`'s child (the supervisor, PID 1 of the run's namespace) and wait until `unshare` has
    reaped it and exited: then no process of the namespace is left."""
    try:
        with open(f"/proc/{unshare_pid}/task/{unshare_pid}/children") as f:
            kids = [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        return
    for k in kids:
        try:
            os.kill(k, signal.SIGKILL)
        except OSError:
            pass
    end = time.monotonic() + wait_s
    while not _exited(unshare_pid) and time.monotonic() < end:
        time.sleep(0.002)


def _kill_descendants(pid, wait_s=1.0):
    """SIGKILL every descendant of `pid` (/proc/<pid>/task/<tid>/children, walked again until none is found: a
    process forking meanwhile)."""
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        found, todo = [], [pid]
        while todo:
            p = todo.pop()
            try:
                tids = os.listdir(f"/proc/{p}/task")
            except OSError:
                continue
            for t in tids:
                try:
                    with open(f"/proc/{p}/task/{t}/children") as f:
                        kids = [int(x) for x in f.read().split()]
                except (OSError, ValueError):
                    continue
                found += kids
                todo += kids
        alive = False
        for k in found:
            try:
                with open(f"/proc/{k}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        continue  # a zombie: the supervisor reaps it (or init, once the supervisor is gone)
            except (OSError, IndexError):
                continue
            alive = True
            try:
                os.kill(k, signal.SIGKILL)
            except OSError:
                pass
        if not alive:
            return
        time.sleep(0.002)


def _wait_group_gone(pgid, wait_s=2.0):
    """At the fallback: until no process of the run's group (SIGKILLed) is left, at most wait_s."""
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.002)


# -- the reaper: the run's leftovers go also when the caller dies ------------------------------------------------

# A tiny process per caller process, in a session of its own, that holds the read end of a pipe from the caller.
# The caller writes "+D <dir>", "+C <cgroup>", "+G <process group>" before each run and "-..." after it; when the
# pipe closes with entries left (the caller died: OOM-killed, SIGKILL), it kills the groups and the cgroups'
# processes, removes the cgroups and the scratch directories, and exits. The supervisor ends its run on its own
# too (it sees the result pipe's reader gone). Before it, a caller killed mid-run left its scratch directory
# (the run's payload and files) and, until wall_s + 2 s, its run's processes.
_REAPER_CODE = r"""
import os, shutil, signal, time
for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM, signal.SIGPIPE):
    signal.signal(s, signal.SIG_IGN)
held, buf = {}, b""
while True:
    try:
        chunk = os.read(0, 65536)
    except InterruptedError:
        continue
    if not chunk:
        break
    buf += chunk
    *lines, buf = buf.split(b"\n")
    for ln in lines:
        try:
            key = (ln[1:2], bytes.fromhex(ln[3:].decode("ascii")).decode("utf-8", "surrogateescape"))
        except ValueError:
            continue
        if ln[:1] == b"+":
            held[key] = 1
        elif ln[:1] == b"-":
            held.pop(key, None)
ours = lambda a: os.path.basename(a).startswith("r3sandbox-") and os.path.isabs(a)  # nothing else, ever
for kind, arg in held:
    if kind == b"G" and arg.isdigit() and int(arg) > 1:
        try:
            os.killpg(int(arg), 9)
        except OSError:
            pass
cgs = [a for k, a in held if k == b"C" and ours(a)]
end = time.monotonic() + 10
while cgs and time.monotonic() < end:
    for cg in list(cgs):
        try:
            with open(cg + "/cgroup.kill", "w") as f:
                f.write("1")
        except OSError:
            pass
        try:
            with open(cg + "/cgroup.procs") as f:
                for p in f.read().split():
                    try:
                        os.kill(int(p), 9)
                    except (OSError, ValueError):
                        pass
        except OSError:
            pass
        for name in ("memory.force_empty", "memory.reclaim"):  # see _cgroup_reclaim
            try:
                with open(cg + "/" + name, "w") as f:
                    f.write("0" if name == "memory.force_empty" else "1G")
            except OSError:
                pass
        try:
            os.rmdir(cg)
            cgs.remove(cg)
        except FileNotFoundError:
            cgs.remove(cg)
        except OSError:
            pass
    time.sleep(0.02)
dirs = [a for k, a in held if k == b"D" and ours(a)]
for i in range(2 if dirs else 0):  # twice: a process of the run dying just now may still write
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)
    time.sleep(0.2 * (1 - i))
"""
_REAPER: list | None = None  # [the caller's pid, the pipe's write end, the reaper's pid]
_REAPER_LOCK = threading.Lock()  # its own: _reaper_start may warn, and _warn_once takes _LOCK


def _reaper_start():
    r, w = os.pipe()
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        try:
            pid = os.posix_spawn(sys.executable, [sys.executable, "-I", "-S", "-B", "-c", _REAPER_CODE],
                                 {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, setsid=True,
                                 file_actions=[(os.POSIX_SPAWN_DUP2, r, 0), (os.POSIX_SPAWN_DUP2, devnull, 1),
                                               (os.POSIX_SPAWN_DUP2, devnull, 2)])
        finally:
            os.close(devnull)
    except (OSError, ValueError, TypeError) as e:
        os.close(w)
        _warn_once("reaper", f"sandbox: no reaper process ({type(e).__name__}: {e}); a caller that dies mid-run "
                             "leaves its scratch directory")
        return None
    finally:
        os.close(r)
    return [os.getpid(), w, pid]


def _reaper_send(*lines):
    """Tell the reaper (started at the first run of this process, or of a forked child) what to clean up if
    this process dies: "+D dir", "-D dir" and so on. Never raises."""
    global _REAPER
    try:
        with _REAPER_LOCK:
            rp = _REAPER
            if rp is not None and rp[0] == os.getpid():
                try:
                    gone = os.waitpid(rp[2], os.WNOHANG)[0] != 0
                except ChildProcessError:
                    gone = True
                if gone:
                    os.close(rp[1])
                    rp = None
            elif rp is not None:  # a forked child: the parent's reaper is the parent's
                try:
                    os.close(rp[1])
                except OSError:
                    pass
                rp = None
            if rp is None:
                rp = _REAPER = _reaper_start()
            if rp is not None:
                # "<+|-><kind> <argument in hex>": a path is the caller's (its TMPDIR) and may hold a newline; sent
                # as text it wrote reaper lines of its own ("+G <a host process group>": held-out sandbox round 7)
                os.write(rp[1], "".join(ln[:2] + " " + ln[3:].encode("utf-8", "surrogateescape").hex() + "\n"
                                        for ln in lines).encode("ascii"))
    except Exception:
        pass


def _signame(sig):
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


# -- numbers only: what may go back into a prompt -----------------------------------------------------------------

_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_WRAPPED = re.compile(r"(?:np\.|numpy\.)?(?:float64|float32|int64|int32|float_|int_)\((.*)\)")


def number_value(value: str | None) -> str | None:
    """The number in a result's `value` (the repr of an int or a finite float, also NumPy's
    `np.float64(x)`), as a canonical float string; None for anything else.

    For feedback that goes back into a model's prompt (issue 17, item 4: CE feedback returns numbers
    only): text the code computed, e.g. the contents of a file, never passes through this.
        number_value("9.81") -> "9.81";  number_value("np.float64(2.5)") -> "2.5"
        number_value("'root:x:0:0'") -> None;  number_value("nan") -> None
    """
    if not isinstance(value, str) or len(value) > 64:
        return None
    v = value.strip()
    m = _WRAPPED.fullmatch(v)
    if m:
        v = m.group(1).strip()
    if not _NUMBER.fullmatch(v):
        return None
    try:
        x = float(v)
    except (ValueError, OverflowError):
        return None
    return repr(x) if math.isfinite(x) else None


# -- the isolation level: mount plan, probe, cache ---------------------------------------------------------

def _under(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _mount_plan() -> list:
    """[(kind, path, extra)] for the supervisor's new root, parents first.

    bind: read-only bind of a directory at the same path; file: the same for one file; symlink: a
    link (merged-/usr systems: /lib -> usr/lib); mask: an empty read-only tmpfs over a directory
    that a bind would otherwise expose (the project checkout, $HOME, the project's packages)."""
    plan, binds = [], []
    for d in ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin"):
        if os.path.islink(d):
            plan.append(("symlink", d, os.readlink(d)))
        elif os.path.isdir(d):
            binds.append(d)
    py = [sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix,
          os.path.dirname(os.path.realpath(sys.executable)), *_site_paths()]
    for p in py:
        for q in dict.fromkeys((os.path.abspath(p), os.path.realpath(p))):
            if os.path.isdir(q) and not any(_under(q, b) for b in binds):
                binds = [b for b in binds if not _under(b, q)] + [q]
    plan += [("bind", b, None) for b in binds]
    plan += [("file", f, None) for f in ("/etc/ld.so.cache", "/etc/localtime") if os.path.isfile(f)]
    hidden = [str(PROJECT_ROOT), os.path.expanduser("~")]
    hidden += [os.path.join(sp, name) for sp in _site_paths() for name in PROJECT_PACKAGES]
    for h in hidden:
        if os.path.isdir(h) and any(_under(h, b) and h != b for b in binds):
            plan.append(("mask", h, None))
    plan.sort(key=lambda e: (e[1].rstrip("/").count("/"), e[1]))
    return plan


_LOCK = threading.Lock()
_PROBE: dict | None = None
_WARNED: set = set()


def _mode() -> str:
    v = os.environ.get(ENV_VAR, "auto").strip().lower()
    if v in ("off", "fallback", FALLBACK, "none"):
        return "fallback"
    return v if v in ("auto", "require") else "auto"


def _warn_once(key, msg):
    with _LOCK:
        if key in _WARNED:
            return
        _WARNED.add(key)
    log.warning(msg)


def _unshare_argv():
    exe = shutil.which("unshare") or ("/usr/bin/unshare" if os.path.exists("/usr/bin/unshare") else None)
    if exe is None:
        return None
    # --ipc: without it SysV shared memory, message queues and semaphores (and POSIX message queues)
    # live in the host's IPC namespace and outlive the run (memory the host never gets back, a channel
    # between runs); a private IPC namespace is destroyed with its last process
    argv = [exe, "--mount", "--net", "--pid", "--ipc", "--fork", "--kill-child=SIGKILL"]
    if os.geteuid() != 0:
        argv[1:1] = ["--user", "--map-root-user"]
    return argv


def probe(refresh: bool = False) -> dict:
    """Try one namespaced run of `result = 1` and say which level holds, and why (cached).

    A probe that found the namespaces is kept for the life of the process. A failed one is tried
    again after PROBE_RETRY_S: one transient failure (a loaded machine at the start of an RL run, the
    15 s probe timing out) once put every later run of the process at the fallback level."""
    global _PROBE
    with _LOCK:
        if _PROBE is not None and not refresh and (
                _PROBE["namespaces"] or _PROBE["unshare"] is None
                or time.monotonic() - _PROBE.get("at", 0.0) < PROBE_RETRY_S):
            return dict(_PROBE)
    info = {"euid": os.geteuid(), "unshare": None, "user_namespace": os.geteuid() != 0,
            "seccomp": None, "namespaces": False, "level": FALLBACK, "why": ""}
    argv = _unshare_argv()
    if argv is None:
        info["why"] = "util-linux `unshare` not found on PATH"
    else:
        info["unshare"] = argv[0]
        t0 = time.monotonic()
        r, setup = _run_once("result = 1", SandboxLimits(wall_s=15, cpu_s=10), None, "namespaces", t0,
                             "namespaces+seccomp")
        info["probe_seconds"] = round(time.monotonic() - t0, 3)
        info["seccomp"] = bool(setup.get("seccomp"))
        info["seccomp_notify"] = bool(setup.get("seccomp_notify"))
        info["ipc_limits"] = setup.get("ipc_limits")
        info["landlock_abi"] = setup.get("landlock_abi")
        info["bound_trees"] = setup.get("bound_trees")
        kind, where = _cgroup_parent()
        info["memory_cgroup"] = {"kind": kind, "parent" if kind else "why": where,
                                 "used_by_probe": setup.get("memory_cgroup") is not None}
        if setup.get("seccomp_error"):
            info["seccomp_error"] = setup["seccomp_error"]
        if r.ok and r.value == "1" and setup.get("root"):
            info["namespaces"] = True
            info["level"] = "namespaces+seccomp" if info["seccomp"] else "namespaces"
            info["why"] = "a probe run in new mount/net/pid/ipc namespaces succeeded" + (
                "" if info["seccomp"] else f" (seccomp unavailable: {setup.get('seccomp_error', '?')})")
            if str(info["bound_trees"]).startswith("bind"):
                _warn_once("bound_trees", f"sandbox: no overlayfs for the bound trees, plain binds instead: a host "
                           f"FIFO there can be opened for reading by model code ({info['bound_trees']})")
        else:
            info["why"] = f"the namespaced probe run failed: {r.status}: {r.reason}"[:600]
    info["at"] = time.monotonic()
    _sweep_stale()
    with _LOCK:
        _PROBE = info
    return dict(info)


STALE_S = 600.0  # a dead owner's scratch directory or cgroup is removed once it is this old


def _sweep_stale(tmp=None, parents=None):
    """Remove what runs of callers that are gone left behind (the second layer under the reaper, for a reaper
    killed with its caller): `r3sandbox-<pid>-*` scratch directories in the temp directory and empty cgroups of
    that name, whose owner pid is not alive here, owned by this uid and untouched for STALE_S (a caller of
    another PID namespace that shares the temp directory is not seen alive here). At each probe. Never raises."""
    now = time.time()
    pat = re.compile(r"r3sandbox-(\d+)-")
    dirs = []
    try:
        tmp = tmp or tempfile.gettempdir()
        dirs += [(os.path.join(tmp, e), False) for e in os.listdir(tmp)]
    except OSError:
        pass
    if parents is None:
        parents = [_cgroup_parent()[1] if _cgroup_parent()[0] else None, _cpu_cgroup_parent(), _io_cgroup_parent()]
    for parent in filter(None, parents):
        try:
            dirs += [(os.path.join(parent, e), True) for e in os.listdir(parent)]
        except OSError:
            pass
    for path, is_cgroup in dirs:
        m = pat.match(os.path.basename(path))
        if m is None:
            continue
        try:
            st = os.lstat(path)
            if st.st_uid != os.geteuid() or now - st.st_mtime < STALE_S or not os.path.isdir(path):
                continue
            os.kill(int(m.group(1)), 0)
            continue  # the owner lives (or its pid is someone's now)
        except ProcessLookupError:
            pass
        except (OSError, ValueError, OverflowError):
            continue
        try:
            if is_cgroup:
                os.rmdir(path)  # only an empty one
            else:
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            pass


def isolation_level() -> str:
    """The level runs get now (cached probe + R3BENCH_SANDBOX_ISOLATION), for run records."""
    mode = _mode()
    if mode == "fallback":
        return FALLBACK
    return probe()["level"]


# -- the run's memory cgroup -------------------------------------------------------------------------------------

_CGROUP: tuple | None = None  # (kind "v2" | "v1" | None, parent directory or the reason there is none)
_CGROUP_LEFT: list = []  # cgroups whose removal failed (a process still exiting): tried again later


def _cgroup_mounts():
    """{"v2": mount point, "v1:<controller>": mount point} from /proc/self/mountinfo (mounts of root "/")."""
    out = {}
    try:
        with open("/proc/self/mountinfo") as f:
            lines = f.read().splitlines()
    except OSError:
        return out
    for ln in lines:
        pre, _, post = ln.partition(" - ")
        a, b = pre.split(), post.split()
        if len(a) < 5 or len(b) < 3 or a[3] != "/":
            continue
        if b[0] == "cgroup2":
            out.setdefault("v2", a[4])
        elif b[0] == "cgroup":
            for opt in b[2].split(","):
                out.setdefault("v1:" + opt, a[4])
    return out


def _cgroup_parent():
    """Where per-run memory cgroups are made: ("v2" | "v1", directory) or (None, why not). Cached.

    cgroup v2 where this process's own cgroup delegates the memory controller to its children (memory in
    cgroup.subtree_control); else the cgroup v1 memory controller's cgroup of this process; else none."""
    global _CGROUP
    if _CGROUP is not None:
        return _CGROUP
    found = (None, "no memory cgroup controller")
    try:
        with open("/proc/self/cgroup") as f:
            own = [ln.split(":", 2) for ln in f.read().splitlines() if ln.count(":") >= 2]
    except OSError:
        own = []
    mounts = _cgroup_mounts()
    v2 = next((p for h, c, p in own if h == "0" and c == ""), None)
    v1 = next((p for h, c, p in own if "memory" in c.split(",")), None)
    if v2 is not None and "v2" in mounts:
        d = os.path.join(mounts["v2"], v2.lstrip("/"))
        try:
            with open(os.path.join(d, "cgroup.subtree_control")) as f:
                if "memory" in f.read().split() and os.access(d, os.W_OK):
                    found = ("v2", d)
        except OSError:
            pass
    if found[0] is None and v1 is not None and "v1:memory" in mounts:
        d = os.path.join(mounts["v1:memory"], v1.lstrip("/"))
        if os.path.isfile(os.path.join(d, "memory.limit_in_bytes")) and os.access(d, os.W_OK):
            found = ("v1", d)
        else:
            found = (None, f"the cgroup v1 memory controller's cgroup {d} is not writable here")
    elif found[0] is None and v2 is not None and "v2" in mounts:
        found = (None, "cgroup v2 without the memory controller delegated to this process's cgroup")
    _CGROUP = found
    return found


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def _cgroup_make(limits: SandboxLimits):
    """A fresh memory cgroup for one run, limited to memory_mb + CGROUP_EXTRA_MB (swap included), or None."""
    kind, parent = _cgroup_parent()
    if kind is None:
        return None
    _cgroup_sweep()
    path = os.path.join(parent, CGROUP_PREFIX + f"{os.getpid()}-" + secrets.token_hex(8))
    limit = (int(math.ceil(limits.memory_mb)) + CGROUP_EXTRA_MB) << 20
    try:
        os.mkdir(path)
    except OSError as e:
        _warn_once("cgroup", f"sandbox: no memory cgroup for this run ({kind} {parent}: {e}); memory is bounded "
                             "by RLIMIT_AS and the namespace's IPC limits only")
        return None
    try:
        if kind == "v1":
            _write(os.path.join(path, "memory.limit_in_bytes"), str(limit))
            try:  # memory + swap (where swap accounting is on)
                _write(os.path.join(path, "memory.memsw.limit_in_bytes"), str(limit))
            except OSError:
                pass
        else:
            _write(os.path.join(path, "memory.max"), str(limit))
            for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):  # an OOM kills the whole run
                try:
                    _write(os.path.join(path, name), value)
                except OSError:
                    pass
    except OSError as e:
        _cgroup_remove({"path": path})
        _warn_once("cgroup", f"sandbox: the run's memory cgroup could not be limited ({e}); none is used")
        return None
    return {"kind": kind, "path": path, "procs": os.path.join(path, "cgroup.procs"), "limit_mb": limit >> 20}


_V1_PARENTS: dict = {}  # v1 controller -> this process's cgroup directory of it (writable) or None, looked up once


def _v1_cgroup_parent(controller, probe):
    """This process's cgroup of the cgroup v1 `controller` (a file `probe` in it says the controller is there),
    where writable (None elsewhere). Cached."""
    if controller in _V1_PARENTS:
        return _V1_PARENTS[controller]
    found = None
    try:
        with open("/proc/self/cgroup") as f:
            own = [ln.split(":", 2) for ln in f.read().splitlines() if ln.count(":") >= 2]
        mount = _cgroup_mounts().get("v1:" + controller)
        rel = next((p for h, c, p in own if controller in c.split(",")), None)
        if mount and rel is not None:
            d = os.path.join(mount, rel.lstrip("/"))
            if os.path.isfile(os.path.join(d, probe)) and os.access(d, os.W_OK):
                found = d
    except OSError:
        pass
    _V1_PARENTS[controller] = found
    return found


def _cpu_cgroup_parent():
    return _v1_cgroup_parent("cpuacct", "cpuacct.usage")


def _io_cgroup_parent():
    return _v1_cgroup_parent("blkio", "blkio.throttle.read_bps_device")


def _v1_cgroup_make(parent, kind):
    """A fresh cgroup for one run under `parent` (a v1 controller's directory), or None."""
    if parent is None:
        return None
    path = os.path.join(parent, CGROUP_PREFIX + f"{os.getpid()}-" + secrets.token_hex(8))
    try:
        os.mkdir(path)
    except OSError:
        return None
    return {"kind": kind, "path": path, "procs": os.path.join(path, "cgroup.procs")}


def _cpu_cgroup_make():
    """A cgroup v1 cpuacct cgroup for one run (where the memory cgroup is v1 or absent: a v2 one counts CPU
    itself), or None. Its cpuacct.usage counts every process that was in it, also a child reaped by nobody
    (a parent with SIGCHLD ignored: the kernel drops such a child's rusage)."""
    return _v1_cgroup_make(_cpu_cgroup_parent(), "v1-cpuacct")


def _block_devices():
    """"major:minor" of every block device of the host (/sys/block)."""
    out = []
    try:
        names = os.listdir("/sys/block")
    except OSError:
        return out
    for name in names:
        try:
            with open(f"/sys/block/{name}/dev") as f:
                dev = f.read().strip()
        except OSError:
            continue
        if re.fullmatch(r"\d+:\d+", dev):
            out.append(dev)
    return out


def _io_cgroup_make(limits: SandboxLimits, cg=None):
    """The run's disk bandwidth, `io_mb_s` per block device for reads and for writes: a run read the host's disk
    at 1 GB/s with O_DIRECT, bounded by nothing (held-out sandbox round 6). Where the memory cgroup is v2 with
    the io controller delegated, its io.max (returns None: no cgroup of its own); else a cgroup v1 blkio cgroup
    for the run (returned), else none. Devices a controller refuses are skipped."""
    if not limits.io_mb_s:
        return None
    bps = int(limits.io_mb_s) << 20
    devs = _block_devices()
    if cg is not None and cg["kind"] == "v2":
        try:
            with open(os.path.join(os.path.dirname(cg["path"]), "cgroup.subtree_control")) as f:
                if "io" not in f.read().split():
                    return None
        except OSError:
            return None
        for dev in devs:
            try:
                _write(os.path.join(cg["path"], "io.max"), f"{dev} rbps={bps} wbps={bps}")
            except OSError:
                pass
        return None
    io_cg = _v1_cgroup_make(_io_cgroup_parent(), "v1-blkio")
    if io_cg is None:
        return None
    for dev in devs:
        for name in ("blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device"):
            try:
                _write(os.path.join(io_cg["path"], name), f"{dev} {bps}")
            except OSError:
                pass
    return io_cg


def _oom_kills(cg):
    """The kernel's count of OOM kills in the run's memory cgroup (0 where it cannot be read)."""
    try:
        name = "memory.oom_control" if cg["kind"] == "v1" else "memory.events"
        with open(os.path.join(cg["path"], name)) as f:
            for ln in f.read().splitlines():
                k, _, v = ln.partition(" ")
                if k == "oom_kill":
                    return int(v)
    except (OSError, ValueError):
        pass
    return 0


def _cgroup_facts(cg, cpu_cg=None):
    """{"oom_kill": n, "peak_mb": m, "cpu_s": s} of a run's cgroups after the run (what the kernel counted)."""
    out = {"oom_kill": 0, "peak_mb": None}
    if cpu_cg is not None:
        try:
            with open(os.path.join(cpu_cg["path"], "cpuacct.usage")) as f:
                out["cpu_s"] = int(f.read().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            pass
    if cg is None:
        return out
    out["oom_kill"] = _oom_kills(cg)
    try:
        name = "memory.max_usage_in_bytes" if cg["kind"] == "v1" else "memory.peak"
        with open(os.path.join(cg["path"], name)) as f:
            out["peak_mb"] = round(int(f.read().split()[0]) / 2 ** 20, 1)
    except (OSError, ValueError, IndexError):
        pass
    if cg["kind"] == "v2" and "cpu_s" not in out:  # the CPU time of every process that was in the cgroup (no controller needed)
        try:
            with open(os.path.join(cg["path"], "cpu.stat")) as f:
                for ln in f.read().splitlines():
                    k, _, v = ln.partition(" ")
                    if k == "usage_usec":
                        out["cpu_s"] = int(v) / 1e6
        except (OSError, ValueError):
            pass
    return out


def _cgroup_reclaim(path):
    """Free what the run's memory cgroup still holds once its processes are gone, before the cgroup is removed:
    kernel objects charged to it outlive the run otherwise (a run left 300,000 negative dentries of lookups on
    the host's own file systems: held-out sandbox round 5), and so do the pages of host files it was the first
    to read (the page cache it warmed: round 4). v1: memory.force_empty; v2: memory.reclaim. Best effort (an
    older kernel has neither for v2; a cgroup with a process left refuses)."""
    v1 = os.path.join(path, "memory.force_empty")
    try:
        if os.path.exists(v1):
            _write(v1, "0")
            return True
        with open(os.path.join(path, "memory.current")) as f:
            current = int(f.read())
        if current > 0:
            _write(os.path.join(path, "memory.reclaim"), str(current))
        return True
    except (OSError, ValueError):  # EAGAIN: not all of it could be reclaimed; EBUSY: a process is left
        return False


def _cgroup_remove(cg, wait_s=2.0):
    """SIGKILL what is left in the cgroup, free what it holds (_cgroup_reclaim) and remove it; a cgroup that
    cannot be removed yet (a process still exiting) is kept in _CGROUP_LEFT and tried again before the next run."""
    end = time.monotonic() + wait_s
    delay = 0.002
    try:  # cgroup v2 (5.14+): every process in it at once, also one forking meanwhile
        _write(os.path.join(cg["path"], "cgroup.kill"), "1")
    except OSError:
        pass
    reclaimed = cg.get("kind") not in ("v1", "v2")  # a memory cgroup only
    while True:
        if not reclaimed:
            reclaimed = _cgroup_reclaim(cg["path"])
        try:
            os.rmdir(cg["path"])
            return True
        except FileNotFoundError:
            return True
        except OSError:
            pass
        try:
            with open(os.path.join(cg["path"], "cgroup.procs")) as f:
                pids = [int(x) for x in f.read().split()]
        except (OSError, ValueError):
            pids = []
        for pid in pids:  # only the run's processes are in it
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if time.monotonic() >= end:
            with _LOCK:
                _CGROUP_LEFT.append(cg)
            return False
        time.sleep(delay)
        delay = min(0.05, delay * 2)


def _cgroup_sweep(wait_s=0.0):
    with _LOCK:
        left, _CGROUP_LEFT[:] = list(_CGROUP_LEFT), []
    for cg in left:
        _cgroup_remove(cg, wait_s=wait_s)


atexit.register(_cgroup_sweep, 1.0)  # a cgroup still busy after the last run goes with the process


# -- SysV IPC objects at the fallback level (no IPC namespace of its own) ----------------------------------------

_SYSV = (("shm", "shmid"), ("msg", "msqid"), ("sem", "semid"))


def _sysv_objects(uid):
    """{(kind, id)} of the SysV objects created by `uid` (cuid) in this IPC namespace (/proc/sysvipc)."""
    out = set()
    for kind, idcol in _SYSV:
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                rows = f.read().splitlines()
        except OSError:
            continue
        if not rows:
            continue
        head = rows[0].split()
        if idcol not in head or "cuid" not in head:
            continue
        i, c = head.index(idcol), head.index("cuid")
        for r in rows[1:]:
            cols = r.split()
            try:
                if len(cols) > max(i, c) and int(cols[c]) == uid:
                    out.add((kind, int(cols[i])))
            except ValueError:
                continue
    return out


def _sysv_remove(objs):
    """IPC_RMID each object; returns those that could not be removed."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    left = []
    for kind, ident in sorted(objs):
        if kind == "shm":
            rc = libc.shmctl(ident, 0, None)
        elif kind == "msg":
            rc = libc.msgctl(ident, 0, None)
        else:
            rc = libc.semctl(ident, 0, 0)
        if rc != 0 and ctypes.get_errno() not in (22, 43):  # EINVAL/EIDRM: gone already
            left.append((kind, ident))
    return left


# -- running -------------------------------------------------------------------------------------------------------

def run_python(code: str, limits: SandboxLimits = SandboxLimits(), inputs: dict | None = None,
               calls: Calls | None = None) -> SandboxResult:
    """Run `code` in the sandbox; see the module docstring. Never raises (short of interpreter shutdown).

    With `calls` (a `Calls`), the run is a fork server: see `Calls`; `limits.max_processes` must be at least 1
    (the fork of each call) and `limits.wall_s` cover the code plus every call."""
    t0 = time.monotonic()
    try:
        bad = _check(code, limits, inputs) or _check_calls(calls, limits)
        if bad:
            return _result("error", bad, t0)
        mode = _mode()
        if mode == "fallback":
            _warn_once("forced", f"sandbox: {ENV_VAR} forces the fallback level {FALLBACK!r}: model code runs "
                                 "without kernel isolation (an audit hook that ctypes can switch off)")
            level = FALLBACK
        else:
            info = probe()
            level = info["level"]
            if level != "namespaces+seccomp":
                if mode == "require":
                    return _result("error", f"sandbox: {ENV_VAR}=require but the level here is {level!r} "
                                            f"({info['why']}); not run", t0, isolation=level)
                _warn_once(level, f"sandbox: falling back to {level!r}: {info['why']}")
        r, _ = _run_once(code, limits, inputs, "namespaces" if level != FALLBACK else "direct", t0, level, calls)
        return r
    except Exception as e:  # a bug or an exhausted parent: still a result
        return _result("error", f"sandbox failure: {type(e).__name__}: {e}", t0)


def _run_once(code, limits, inputs, mode, t0, level, calls=None):
    """One run in `mode` ("namespaces" or "direct") expected at `level`: (SandboxResult, the supervisor's
    setup facts). A supervisor that reports no seccomp filter lowers the level of that run."""
    own_uid = mode == "namespaces" and os.geteuid() == 0
    uid = 0x40000000 + secrets.randbelow(1 << 24) if own_uid else None
    payload = {"code": code, "inputs": inputs or {}, "paths": _site_paths(), "mode": mode, "uid": uid,
               "proc_subset": PROC_SUBSET, "rlimits": _rlimits(limits, own_uid),
               "limits": {"output_kb": limits.output_kb, "memory_mb": limits.memory_mb, "wall_s": limits.wall_s,
                          "file_size_mb": limits.file_size_mb, "max_files": limits.max_files}}
    cap = int(limits.output_kb * 1024)
    n_calls = len(calls.inputs) if calls is not None else 0
    payload["report_max"] = _report_max(cap, n_calls)
    if calls is not None:
        payload["calls"] = {"code": calls.code, "inputs": list(calls.inputs), "seconds": float(calls.seconds),
                            "start_s": float(calls.start_s) if calls.start_s else None}
    base = tempfile.mkdtemp(prefix=f"r3sandbox-{os.getpid()}-")  # the owner's pid: _sweep_stale
    cg = cpu_cg = io_cg = sysv_before = None
    try:
        base = os.path.realpath(base)
        _reaper_send(f"+D {base}")
        wd = os.path.join(base, "work")
        os.mkdir(wd, 0o700)
        if mode == "namespaces":
            os.mkdir(os.path.join(base, "root"), 0o700)
            if uid is not None:
                os.chown(wd, uid, uid)
            scratch = {"size_mb": min(SCRATCH_MAX_MB, max(1, limits.file_size_mb * max(1, limits.max_files))),
                       "inodes": limits.max_files + 16, "uid": uid or 0}
            payload.update(plan=_mount_plan(), root=os.path.join(base, "root"), wd=wd, scratch=scratch,
                           seccomp_module=str(SECCOMP) if SECCOMP.is_file() else None)
            cg = _cgroup_make(limits)
            cpu_cg = _cpu_cgroup_make() if cg is None or cg["kind"] == "v1" else None
            io_cg = _io_cgroup_make(limits, cg)
            for c in (cg, cpu_cg, io_cg):
                if c is not None:
                    payload.setdefault("cgroup_procs", []).append(c["procs"])
                    _reaper_send(f"+C {c['path']}")
        else:  # no IPC namespace: what the run creates is in the host's, and is removed after it
            sysv_before = _sysv_objects(os.geteuid())
        try:
            text = json.dumps(payload, allow_nan=True)
        except (TypeError, ValueError) as e:
            return _result("error", f"inputs are not JSON-serialisable: {e}", t0, isolation=level), {}
        ppath = os.path.join(base, "payload.json")
        fd = os.open(ppath, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        r, setup = _start(ppath, wd, limits, mode, t0, level, cg, n_calls, cpu_cg)
        if cg is not None:
            setup = dict(setup, memory_cgroup=cg["kind"])
        if io_cg is not None:
            setup = dict(setup, io_cgroup=io_cg["kind"])
        return r, setup
    finally:
        for c in (cg, cpu_cg, io_cg):
            if c is not None and _cgroup_remove(c):
                _reaper_send(f"-C {c['path']}")
        if sysv_before is not None:
            new = _sysv_objects(os.geteuid()) - sysv_before
            if new:
                left = _sysv_remove(new)
                if left:
                    log.warning("sandbox: %d SysV IPC objects of a fallback run could not be removed: %s",
                                len(left), left[:5])
        shutil.rmtree(base, ignore_errors=True)
        _reaper_send(f"-D {base}")


def _report_max(cap, n_calls=0):
    """The most the host reads of the supervisor's line: its value (cap characters, 4 bytes each in
    UTF-8), the reason and notes (the supervisor cuts them), the setup facts; in hex (x2). A fork server's
    calls each add a value and a reason of the same size."""
    one = 2 * (4 * max(1024, cap) + 4 * 2000)
    return max(1 << 22, one + 2 * 5 * 4 * 500 + n_calls * (one + 256) + (1 << 16))


def _start(ppath, wd, limits, mode, t0, level, cg=None, n_calls=0, cpu_cg=None):
    if not sys.executable:
        return _result("error", "no Python executable to start (sys.executable is empty)", t0, isolation=level), {}
    env = {"PATH": "/usr/bin:/bin", "HOME": wd, "TMPDIR": wd, "LANG": "C.UTF-8",
           "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    rfd, wfd = os.pipe()
    try:
        argv = [sys.executable, "-I", "-S", "-B", str(RUNNER), str(wfd), ppath]
        if mode == "namespaces":
            pre = _unshare_argv()
            if pre is None:
                return _result("error", "util-linux `unshare` not found", t0, isolation=level), {}
            argv = pre + ["--"] + argv
        try:
            # stdin: a pipe whose write end is closed at once (EOF, like /dev/null). Not the host's /dev/null:
            # an inherited descriptor of a host node let the run change the node (futimens, fchmod on fd 0 set
            # the host's /dev/null's times: a channel from one run to the next). Every descriptor the run
            # inherits is its own: this pipe, the stdout/stderr pipes and the result pipe
            proc = subprocess.Popen(argv, cwd=wd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, pass_fds=(wfd,), close_fds=True, start_new_session=True)
        except (OSError, subprocess.SubprocessError, ValueError) as e:
            return _result("error", f"could not start the sandboxed process: {type(e).__name__}: {e}", t0, isolation=level), {}
        finally:
            os.close(wfd)
        proc.stdin.close()
        _reaper_send(f"+G {proc.pid}")
        return _supervise(proc, rfd, limits, mode, t0, level, cg, n_calls, cpu_cg)
    finally:
        os.close(rfd)


def _parse_supervisor(data: bytes):
    """The supervisor's one line b"S <hex json>" -> dict, or None (absent or malformed)."""
    lines = [ln for ln in data.splitlines() if ln.strip()]
    if len(lines) != 1 or not lines[0].startswith(b"S "):
        return None
    try:
        msg = json.loads(bytes.fromhex(lines[0][2:].decode("ascii")).decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    return msg if isinstance(msg, dict) else None


def _supervise(proc, rfd, limits, mode, t0, level, cg=None, n_calls=0, cpu_cg=None):
    cap = int(limits.output_kb * 1024)
    # the supervisor's line is never longer than this (it says "report too large" instead); + a margin
    out, err, res = _Capped(cap), _Capped(cap), _Capped(_report_max(cap, n_calls) + 4096)
    sel = selectors.DefaultSelector()
    for fd, sink in ((proc.stdout.fileno(), out), (proc.stderr.fileno(), err), (rfd, res)):
        sel.register(fd, selectors.EVENT_READ, sink)

    # a stream past its cap is drained in bulk, DRAIN_EVERY_S apart, not read as it comes: the run's writes of a
    # byte each made the caller spend as much CPU reading and dropping them as the run spent writing (held-out
    # sandbox round 6). Between drains the pipe fills and the run's writes wait (its output is cut anyway)
    parked: dict = {}  # fd -> (sink, when to drain it next)

    def drain(fd, sink):
        """Drop what the pipe holds (at most _DRAIN_MAX): spliced into /dev/null, not copied out, where the kernel
        can; False at EOF."""
        nonlocal devnull
        got = 0
        while got < _DRAIN_MAX:
            try:
                if devnull is not None:
                    n = os.splice(fd, devnull, 1 << 20, flags=getattr(os, "SPLICE_F_NONBLOCK", 2))
                    sink.dropped += n
                else:
                    chunk = os.read(fd, 1 << 20)
                    sink.add(chunk)
                    n = len(chunk)
            except BlockingIOError:
                return True
            except OSError:
                if devnull is not None:  # no splice here: read and drop instead
                    os.close(devnull)
                    devnull = None
                    continue
                n = 0
            if not n:
                return False  # EOF
            got += n
        return True

    try:
        devnull = os.open(os.devnull, os.O_WRONLY) if hasattr(os, "splice") else None
    except OSError:
        devnull = None

    def pump(timeout):
        now = time.monotonic()
        for fd, (sink, when) in list(parked.items()):
            if now >= when:
                if drain(fd, sink):
                    parked[fd] = (sink, now + DRAIN_EVERY_S)
                else:
                    del parked[fd]
        for key, _ in sel.select(timeout):
            try:
                chunk = os.read(key.fd, 65536)
            except OSError:
                chunk = b""
            if chunk:
                key.data.add(chunk)
                if key.data is not res and key.data.dropped:  # past the cap: parked, drained in bulk
                    sel.unregister(key.fd)
                    os.set_blocking(key.fd, False)
                    try:  # a bigger pipe: fewer, larger drains (best effort: pipe-max-size may be lower)
                        fcntl.fcntl(key.fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
                    except OSError:
                        pass
                    parked[key.fd] = (key.data, time.monotonic() + DRAIN_EVERY_S)
            else:
                sel.unregister(key.fd)

    deadline = t0 + float(limits.wall_s)
    timed_out = oom_stopped = False
    try:
        exited_at = None
        while True:
            now = time.monotonic()
            if exited_at is None and _exited(proc.pid):
                exited_at = now
            if exited_at is not None and (not sel.get_map() or now - exited_at > _DRAIN_S):
                break  # exited; its pipes are read, or held by a straggler that is about to be killed
            if exited_at is None and now >= deadline:
                timed_out = True
                break
            if exited_at is None and cg is not None and _oom_kills(cg):
                # the run ends at its first OOM kill: a parent that forked again after each one had its children
                # killed 315 times, each a report in the host's kernel log (held-out sandbox round 7)
                oom_stopped = True
                break
            if sel.get_map():
                pump(min(0.05, max(0.0, deadline - now)))
            elif parked:
                pump(0)
                time.sleep(0.01)
            else:
                time.sleep(0.01)
    finally:
        if mode != "namespaces" and not _exited(proc.pid):
            # the fallback, the run killed here (wall_s): the supervisor's descendants first, also those in a
            # session of their own (the group kill below misses them), and the supervisor last (while it lives,
            # it is their subreaper: none is handed to the host's init meanwhile)
            _kill_descendants(proc.pid)
            end = time.monotonic() + 0.5  # the supervisor sees its worker gone, reaps the rest and exits
            while not _exited(proc.pid) and time.monotonic() < end:
                time.sleep(0.002)
        if mode == "namespaces" and not _exited(proc.pid):
            # the supervisor first, so that `unshare` reaps it: its exit (PID 1 of the namespace) returns only
            # once the kernel has killed and reaped every process of the namespace. Killing `unshare` first
            # left the supervisor's exit, and with it a fork storm's processes, running after the return
            _kill_supervisor(proc.pid)
        # the whole group, every time (unshare and the supervisor; in the namespace mode the kernel then
        # kills everything in the PID namespace); the unreaped leader keeps the group id reserved
        _killpg(proc.pid)
        proc.wait()
        if mode != "namespaces":
            _wait_group_gone(proc.pid)
        _reaper_send(f"-G {proc.pid}")
        end = time.monotonic() + _DRAIN_S
        while sel.get_map() and time.monotonic() < end:
            pump(0.05)
        for fd, (sink, _) in parked.items():
            drain(fd, sink)
        if devnull is not None:
            os.close(devnull)
        sel.close()
        proc.stdout.close()
        proc.stderr.close()
    stdout, stderr = out.text(), err.text()
    msg = _parse_supervisor(bytes(res.data))
    setup = (msg or {}).get("setup") if isinstance((msg or {}).get("setup"), dict) else {}
    if mode == "namespaces" and msg is not None and not setup.get("seccomp"):
        level = "namespaces"
    n_lines = sum(1 for ln in bytes(res.data).splitlines() if ln.strip())
    facts = _cgroup_facts(cg, cpu_cg) if cg is not None or cpu_cg is not None else None
    if facts is not None:
        setup = dict(setup, memory_peak_mb=facts["peak_mb"], oom_kill=facts["oom_kill"])
    if oom_stopped:
        r = _result("memory", f"memory limit reached: the run's memory cgroup ({limits.memory_mb:g} MB + "
                              f"{CGROUP_EXTRA_MB} MB) was full and the kernel killed a process of the run; the run was "
                              "ended at that first kill", t0, stdout, stderr, proc.returncode, None, level)
    else:
        r = _classify(msg, timed_out, proc.returncode, stdout, stderr, limits, level, t0, n_lines, facts,
                      bool(n_calls))
    if n_calls:
        r = dataclasses.replace(r, calls=_call_results((msg or {}).get("calls"), n_calls, r, limits))
    return r, setup


def _call_results(raw, n, run, limits=None):
    """The supervisor's per-call records -> n CallResults (a call without one: not run, with the run's reason)."""
    out = []
    raw = raw if isinstance(raw, list) else []
    for i in range(n):
        c = raw[i] if i < len(raw) and isinstance(raw[i], dict) else None
        if c is None or not isinstance(c.get("status"), str):
            out.append(CallResult("not run", None, f"not run: the run ended first ({run.status}: {run.reason})"[:2000],
                                  None))
            continue
        sec = c.get("seconds")
        value = c.get("value")
        status, reason = c["status"], str(c.get("reason") or c["status"])
        if limits is not None and (status == "memory" and reason not in _memory_texts(limits)
                                   or status == "ok" and reason != "ran to completion"):
            # the call's line is the program's: `memory` and `ok` only with the worker's own texts
            status, value, reason = "error", None, f"a forged result line for the call (claims {status!r})"
        out.append(CallResult(status, _clean(value) if isinstance(value, str) else None, _clean(reason),
                              round(float(sec), 4) if isinstance(sec, (int, float)) else None))
    return tuple(out)


def _check_calls(calls, limits):
    if calls is None:
        return None
    if not isinstance(calls, Calls) or not isinstance(calls.code, str):
        return "calls must be a Calls(code: str, inputs: tuple of dicts, seconds)"
    if not isinstance(calls.inputs, (tuple, list)) or not all(isinstance(d, dict) for d in calls.inputs):
        return "calls.inputs must be a tuple of dicts"
    if not isinstance(calls.seconds, (int, float)) or isinstance(calls.seconds, bool) or not calls.seconds > 0:
        return f"calls.seconds must be a positive number, not {calls.seconds!r}"
    if calls.start_s is not None and (not isinstance(calls.start_s, (int, float)) or not calls.start_s > 0):
        return f"calls.start_s must be None or a positive number, not {calls.start_s!r}"
    if limits.max_processes < 1:
        return "calls need limits.max_processes >= 1 (each call is a fork)"
    for d in calls.inputs:
        bad = _check("", limits, d)
        if bad:
            return bad
    return None


def _classify(msg, timed_out, rc, stdout, stderr, limits, level, t0, msg_lines=None, cgroup=None, calls=False):
    def done(status, reason, value=None, returncode=None, source="supervisor"):
        return _result(status, reason, t0, stdout, stderr, returncode, value, level, source)

    if timed_out:
        return done("timeout", f"wall-clock limit of {limits.wall_s:g} s reached; the process tree was killed")
    if msg is None and isinstance(msg_lines, int) and msg_lines > 1:
        return done("error", f"the result channel was tampered with: {msg_lines} supervisor reports on it", returncode=rc)
    if msg is None:
        last = stderr.strip().splitlines()[-1][:300] if stderr.strip() else ""
        return done("error", f"sandbox failure: the supervisor exited (code {rc}) without a report"
                             + (f": {last}" if last else ""), returncode=rc)
    if msg.get("setup_error"):
        return done("error", f"sandbox setup failed: {msg['setup_error']}", returncode=rc)
    sig, code = msg.get("signal"), msg.get("exit")
    sig = sig if isinstance(sig, int) else None
    code = code if isinstance(code, int) else None
    returncode = -sig if sig is not None else code
    cpu = msg.get("cpu") if isinstance(msg.get("cpu"), (int, float)) else 0.0
    # the CPU time of every process of the run: the supervisor reaps them all (RUSAGE_CHILDREN), and where the
    # run has a cgroup v2, its cpu.stat says the same from the kernel's side; the larger counts
    cpu_all = msg.get("cpu_all") if isinstance(msg.get("cpu_all"), (int, float)) else cpu
    if cgroup is not None and isinstance(cgroup.get("cpu_s"), (int, float)):
        cpu_all = max(cpu_all, cgroup["cpu_s"])
    final = msg.get("final") if isinstance(msg.get("final"), dict) else None
    # the guards' notes are the program's text too: only ones of the guards' own form are kept
    notes = [str(n) for n in msg.get("notes") or [] if _GUARD.fullmatch(str(n))][:5]
    problem = msg.get("problem")

    def said(status, reason, value=None, source="supervisor"):
        if status != "refused" and notes:
            reason += "; refused along the way: " + "; ".join(dict.fromkeys(notes))
        return done(status, reason, value, returncode, source)

    denied = [str(d)[:200] for d in msg.get("denied") or [] if isinstance(d, str)][:5]
    too_large = problem if isinstance(problem, str) and problem.startswith("report too large") else None
    # what the kernel and the supervisor observed come first. A seccomp refusal only when the kernel reported a
    # denied call to the supervisor (user notification), in the worker or any process it started: a SIGSYS
    # the program raises itself is just a signal
    if denied:
        return said("refused", "a system call was refused by the kernel's seccomp filter: " + ", ".join(denied)
                    + " (reported by the kernel to the supervisor, which ended the run)"
                    + (f"; {too_large}" if too_large else ""))
    if cgroup is not None and cgroup.get("oom_kill") and sig == signal.SIGKILL:
        return said("memory", f"memory limit reached: the run's memory cgroup ({limits.memory_mb:g} MB + "
                              f"{CGROUP_EXTRA_MB} MB) was full and the kernel killed the program")
    start_error = msg.get("start_error")
    if isinstance(start_error, str):  # the supervisor's observation: the start left threads running
        return said("error", start_error[:500])
    call_timeout = msg.get("call_timeout")
    if isinstance(call_timeout, str):  # the supervisor's clock: it killed the call's processes (and the rest)
        return said("timeout", call_timeout[:500])
    if cpu_all > limits.cpu_s and not calls and msg.get("calls") is None:
        # `cpu_s` is the run's CPU time, all its processes together. Past the soft limit the kernel sent SIGXCPU
        # to the process that reached it; a run that caught or ignored it and went on (up to the hard limit, a
        # second more, in each process), or whose processes together used more, ran over, whatever its handlers
        # did and whatever it reports (the kernel's counts, read by the supervisor). A fork server's calls are
        # each timed by the supervisor's clock instead
        return said("timeout", f"cpu time limit of {limits.cpu_s} s exceeded ({cpu_all:.2f} s used by the run's "
                               "processes together, the kernel's count; the run went on past SIGXCPU)")
    if sig is not None:
        # the CPU time is the kernel's (wait4's rusage): a SIGXCPU the program raises itself early is just a signal.
        # The rusage lags the kernel's own RLIMIT_CPU check (0.93-1.03 s at SIGXCPU for cpu_s = 1 on a loaded
        # machine), hence the margin
        if sig in (signal.SIGXCPU, signal.SIGKILL) and cpu >= CPU_LIMIT_SHARE * limits.cpu_s:
            return said("timeout", f"cpu time limit of {limits.cpu_s} s reached ({_signame(sig)})")
        if sig == getattr(signal, "SIGXFSZ", None):
            return said("refused", f"file size limit of {limits.file_size_mb} MB reached")
        low = stderr.lower()
        if any(s in low for s in ("memoryerror", "bad_alloc", "out of memory", "cannot allocate memory")):
            # read from stderr, which the program writes: its claim
            return said("memory", f"memory limit of {limits.memory_mb} MB reached ({_signame(sig)})",
                        source="program")
        return said("killed", f"killed by {_signame(sig)}")
    if too_large:
        return said("error", too_large)
    if problem:
        return said("error", f"the result channel was tampered with: {problem}")
    if final is not None and code == 0:
        forged = _program_claim(final, limits)
        if forged:
            return said("error", f"the result channel was tampered with: {forged} (a forged line)")
        value = final.get("value")
        return said(final["final"], str(final.get("reason") or final["final"]), value if isinstance(value, str) else None,
                    source="program")
    low = stderr.lower()
    if any(s in low for s in ("memoryerror", "cannot allocate memory", "failed to map segment", "out of memory")):
        return said("memory", f"memory limit of {limits.memory_mb} MB reached before the code could report "
                              "(or too low for the interpreter to start)", source="program")
    last = stderr.strip().splitlines()[-1][:300] if stderr.strip() else ""
    return said("error", f"exited with code {code} without reporting a result" + (f": {last}" if last else ""))
