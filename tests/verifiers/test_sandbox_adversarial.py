"""A second adversarial pass over the sandbox (after issue 17's kernel isolation): holes found and fixed.

Each test failed on the code before its fix; see docs/sandbox.md ("Second adversarial pass").
"ns" tests need the namespaces+seccomp level (skipped with the probe's reason elsewhere); tests
parametrised over both levels also run at the forced fallback (R3BENCH_SANDBOX_ISOLATION=fallback).
Everything here is real (SysV IPC objects, sockets, pipes); what a test creates on the host when the
fix is missing is removed again in its `finally`.
"""
import ctypes
import errno
import json
import os
import secrets

import pytest

import verifiers.sandbox as sb
from verifiers.sandbox import FALLBACK, SandboxLimits, SandboxResult, run_python

FAST = SandboxLimits(wall_s=5, cpu_s=3, memory_mb=256)

# the audit hook's watch set zeroed: only the kernel stops what follows
from _sandbox_programs import DISARM  # noqa: E402

# the program's own report pipe (the only pipe among its fds above 2)
REPORT_FD = r'''
import os, stat
report_fd = None
for _i in range(3, 256):
    try:
        if stat.S_ISFIFO(os.fstat(_i).st_mode):
            report_fd = _i
    except OSError:
        pass
'''


# the fixtures `ns` and `level`: tests/verifiers/conftest.py


def _run(code, level, limits=FAST, **kw) -> SandboxResult:
    r = run_python(code, limits, **kw)
    assert isinstance(r, SandboxResult) and r.reason.strip(), r
    assert r.isolation == level, r
    return r


# -- SysV IPC lived in the host's IPC namespace ----------------------------------------------------------------

def _sysv_ids(kind: str, key: int) -> list[int]:
    """ids of the host's SysV objects (kind: shm, msg, sem) with `key` (/proc/sysvipc, host view)."""
    try:
        with open(f"/proc/sysvipc/{kind}") as f:
            rows = [ln.split() for ln in f.read().splitlines()[1:]]
    except OSError:
        return []
    return [int(r[1]) for r in rows if len(r) > 1 and r[0].lstrip("-").isdigit() and int(r[0]) == key]


def test_sysv_ipc_does_not_outlive_the_run(ns):
    """shmget/msgget/semget with IPC_CREAT: without an IPC namespace of its own, the segment (with the
    memory the code wrote into it), the queue and the semaphore set stayed on the host after the run,
    owned by nobody (memory the host never gets back; a channel from one run to the next)."""
    key = 0x5E000000 | secrets.randbits(24)
    code = DISARM + f'''
libc = _c.CDLL(None, use_errno=True)
shm = libc.shmget({key}, 1 << 20, 0o1600)  # IPC_CREAT | 0600
libc.shmat.restype = _c.c_void_p
addr = libc.shmat(shm, None, 0)
if shm >= 0 and addr not in (None, 2 ** 64 - 1):
    _c.memset(addr, 7, 1 << 20)
msg = libc.msgget({key}, 0o1600)
sem = libc.semget({key}, 1, 0o1600)
result = (shm >= 0, msg >= 0, sem >= 0)
'''
    libc = ctypes.CDLL(None, use_errno=True)
    try:
        r = _run(code, ns)
        assert r.status == "ok" and r.value == "(True, True, True)", r  # created inside: the attack ran
        left = {k: _sysv_ids(k, key) for k in ("shm", "msg", "sem")}
        assert left == {"shm": [], "msg": [], "sem": []}, f"SysV objects outlived the run: {left}"
    finally:  # the pre-fix code leaves them on the host
        for i in _sysv_ids("shm", key):
            libc.shmctl(i, 0, None)  # IPC_RMID
        for i in _sysv_ids("msg", key):
            libc.msgctl(i, 0, None)
        for i in _sysv_ids("sem", key):
            libc.semctl(i, 0, 0)


# -- socket families the network namespace does not confine ----------------------------------------------------

def test_socket_families_other_than_inet_and_unix(ns):
    """AF_VSOCK is not confined by a network namespace (on a VM it reaches the hypervisor's host);
    netlink, packet, AF_ALG are kernel surface the code never needs. Now: EAFNOSUPPORT from the
    seccomp filter (also with high bits set above the 32-bit family); AF_INET/INET6 still work."""
    code = DISARM + r'''
libc = _c.CDLL(None, use_errno=True)
def sock(family, nr=None):
    fd = libc.syscall(41, _c.c_long(family), 1 if family not in (16,) else 3, 0) if nr else libc.socket(family, 1 if family != 16 else 3, 0)
    err = _c.get_errno()
    if fd >= 0:
        libc.close(fd)
        return "fd"
    return err
result = {"vsock": sock(40), "netlink": sock(16), "packet": sock(17), "alg": sock(38), "bluetooth": sock(31),
          "x25": sock(9), "vsock_high_bits": sock(40 | (1 << 32), nr=True),
          "unix": sock(1), "inet": sock(2), "inet6": sock(10)}
'''
    r = _run(code, ns)
    assert r.status == "ok", r
    got = eval(r.value)  # a dict literal of ints and "fd" from our own code
    for fam in ("vsock", "netlink", "packet", "alg", "bluetooth", "x25", "vsock_high_bits"):
        assert got[fam] == errno.EAFNOSUPPORT, (fam, got)
    assert got["inet"] == "fd", got
    # AF_UNIX too since the third pass: a path socket inside a read-only bind is a host socket (see
    # tests/test_sandbox_round3.py); socketpair(SOCK_STREAM) still works
    assert got["unix"] == errno.EAFNOSUPPORT, got
    assert got["inet6"] in ("fd", errno.EAFNOSUPPORT), got  # a kernel without IPv6 says so itself


# -- the result channel ---------------------------------------------------------------------------------------

def test_forged_setup_failure(level):
    """An "X" line on the program's own report pipe and exit code 70 used to be taken as the worker's
    confinement failing: any program could turn its run into "sandbox setup failed" (an infrastructure
    error that a trainer may skip instead of scoring). Setup failures now come on a pipe closed before
    the code runs; the X line is a tampered report."""
    code = DISARM + REPORT_FD + r'''
import json
os.write(report_fd, b"X " + json.dumps("confinement failed: forged").encode().hex().encode() + b"\n")
os._exit(70)
'''
    r = _run(code, level)
    assert "sandbox setup failed" not in r.reason and "forged" not in r.reason, r
    assert r.status == "error" and "tampered" in r.reason, r


def test_real_setup_failure_still_reported(level, monkeypatch):
    """The worker's own confinement failing (here: an impossible rlimit) is still a setup failure."""
    monkeypatch.setattr(sb, "_rlimits", lambda lim, own_uid: [("RLIMIT_CPU", 5, 3)])  # soft above hard
    r = _run("result = 1", level)
    assert r.status == "error" and r.reason.startswith("sandbox setup failed") and "ValueError" in r.reason, r
    assert r.value is None, r


def test_deeply_nested_report_does_not_hide_sigsys(ns):
    """A final line of deeply nested JSON made the supervisor's json.loads raise RecursionError, so it
    died without reporting and the SIGSYS it had observed became "sandbox failure". Now the report
    counts as unparsable and what was seen from outside (the seccomp kill) is reported."""
    code = DISARM + REPORT_FD + r'''
os.write(report_fd, b"F " + (b"[" * 20000 + b"]" * 20000).hex().encode() + b"\n")
_c.CDLL(None).syscall(101, 0, 0, 0, 0)  # ptrace: killed by the seccomp filter
'''
    r = _run(code, ns)
    # the kernel reports the denied call to the supervisor (seccomp user notification), which kills the run
    assert r.status == "refused" and "seccomp" in r.reason and "ptrace" in r.reason and r.returncode == -9, r


def test_value_is_always_encodable(level):
    """repr(result) is the code's: a __repr__ returning a lone surrogate or a NUL came back verbatim,
    and `r.value.encode()` (print, a UTF-8 file, a database) raised in the caller. Also for a forged
    final report with surrogates in its reason."""
    r = _run("class X:\n    def __repr__(self):\n        return 'a\\ud800b\\x00c'\nresult = X()\n", level)
    assert r.status == "ok", r
    r.value.encode("utf-8")
    assert "\x00" not in r.value and r.value.startswith("a") and r.value.endswith("c"), r

    forged = json.dumps({"final": "ok", "reason": "x\udc80\x00", "value": "\ud800 1"})
    code = REPORT_FD + f'''
os.write(report_fd, b"F " + {forged!r}.encode().hex().encode() + b"\\n")
os._exit(0)
'''
    r = _run(code, level)
    (r.value or "").encode("utf-8")
    r.reason.encode("utf-8")
    assert "\x00" not in r.reason, r


# -- honest programs that were called tampering -----------------------------------------------------------------

def test_long_non_ascii_result_is_not_tampering(level):
    """A legitimate result of 100,000 CJK characters: the worker's report (ASCII JSON, 6 bytes a character,
    in hex) passed the supervisor's cap, and the run became "the result channel was tampered with"."""
    r = _run("result = '\\u4e00' * 100000 + '\\U0001F600'", level)
    assert r.status == "ok" and r.value.startswith("'\u4e00\u4e00") and "characters cut" in r.value, r
    assert len(r.value) < 70000, len(r.value)


def test_refusals_in_a_loop_are_not_tampering(level):
    """A program that retries a refused call (and catches the PermissionError) 3000 times: every refusal was
    a note on the report pipe, the pipe went over its cap, and the run was called tampered with."""
    code = "import os\nfor i in range(3000):\n    try:\n        os.kill(1, 0)\n    except PermissionError:\n" \
           "        pass\nresult = 1\n"
    r = _run(code, level)
    assert r.status == "ok" and r.value == "1" and "os.kill" in r.reason, r


# -- the level -------------------------------------------------------------------------------------------------

def test_a_failed_probe_is_tried_again(ns, monkeypatch):
    """One failed probe (here: a probe run that timed out, as on a loaded machine at the start of an RL
    run) was cached for the life of the process: every later run went unconfined at the fallback
    level. A failed probe is now tried again after PROBE_RETRY_S; a successful one is kept."""
    real = sb._run_once
    calls = []

    def flaky(code, limits, inputs, mode, t0, level, *rest):
        calls.append(code)
        if len(calls) == 1:
            return sb._result("timeout", "wall-clock limit of 15 s reached (simulated)", t0, isolation=level), {}
        return real(code, limits, inputs, mode, t0, level, *rest)

    monkeypatch.setattr(sb, "_PROBE", None)  # the real probe is restored at teardown
    monkeypatch.setattr(sb, "_WARNED", set())
    monkeypatch.setattr(sb, "_run_once", flaky)
    first = run_python("result = 1", FAST)
    assert first.isolation == FALLBACK and first.status == "ok", first  # the failed probe: loud fallback
    assert run_python("result = 1", FAST).isolation == FALLBACK  # within PROBE_RETRY_S: not probed again
    sb._PROBE["at"] -= sb.PROBE_RETRY_S + 1
    later = run_python("result = 1", FAST)
    assert later.isolation == "namespaces+seccomp" and later.status == "ok", later
    n = len(calls)
    sb._PROBE["at"] -= sb.PROBE_RETRY_S + 1  # a successful probe is kept
    assert run_python("result = 1", FAST).isolation == "namespaces+seccomp"
    assert len(calls) == n + 1  # the run itself, no probe


def test_modify_ldt_is_refused(ns):
    """modify_ldt (x86 local descriptor tables) is kernel surface with a history of exploits that no
    Python program needs; it was allowed. Now the seccomp filter kills the worker."""
    import platform
    if platform.machine() != "x86_64":
        pytest.skip("modify_ldt exists on x86 only")
    r = _run(DISARM + "result = _c.CDLL(None).syscall(154, 0, 0, 0)\n", ns)  # read the LDT
    assert r.status == "refused" and "seccomp" in r.reason and r.value is None, r


def test_memfd_memory_outside_the_limits(ns):
    """memfd_create'd files are memory that RLIMIT_AS does not count and the scratch tmpfs does not hold:
    256 fds x file_size_mb (252 MB at the defaults) beyond memory_mb. Now ENOSYS (an ordinary error:
    libffi and others fall back to a file in $TMPDIR); ctypes callbacks still work."""
    code = DISARM + r'''
import os, errno
try:
    os.memfd_create("x")
    got = "created"
except OSError as e:
    got = errno.errorcode.get(e.errno)
CB = _c.CFUNCTYPE(_c.c_double, _c.c_double)
result = (got, CB(lambda x: x * x)(3.0))
'''
    r = _run(code, ns)
    assert r.status == "ok" and r.value == "('ENOSYS', 9.0)", r


def test_sigint_to_the_supervisor(level):
    """SIGINT to the supervisor (Python's KeyboardInterrupt) killed it before it reported, and the run
    became "sandbox failure" with the SIGSYS it was about to see lost. Reachable wherever the worker
    has the supervisor's uid: in the user-namespace path (host not root: both are uid 0 there; seen
    with uid 65534) and at the fallback level (here, as root). The supervisor now ignores SIGINT."""
    code = DISARM + r'''
import os, signal, time
if os.getppid() == 0:  # the parent is outside this PID namespace: the supervisor has no pid here
    result = "unreachable"
else:
    target = 1 if os.getpid() == 2 else os.getppid()  # PID 1 of the namespace, else the parent
    sent = _c.CDLL(None, use_errno=True).kill(target, signal.SIGINT)
    time.sleep(0.3)
    result = (sent, _c.get_errno() if sent else 0)
'''
    r = _run(code, level)
    assert r.status == "ok", r  # the supervisor reported
    if level == FALLBACK or os.geteuid() != 0:
        assert r.value == "(0, 0)", r  # the signal was delivered, and ignored
    else:
        assert r.value == "(-1, 1)", r  # root host: another uid, EPERM


@pytest.mark.xfail(os.geteuid() != 0, strict=True,
                   reason="open hole of the user-namespace path (host not root): see docs/sandbox.md")
def test_prlimit_on_the_supervisor(ns):
    """Lower the supervisor's RLIMIT_AS to what it uses, make it grow a buffer (800 KB of notes), then a
    denied call. On a root host the worker is another uid: the prlimit fails (EPERM) and the seccomp
    kill is what the run reports. In the user-namespace path (host not root) the worker has the
    supervisor's uid, the prlimit works, the supervisor dies on its next allocation, and the run is
    "sandbox failure" with the SIGSYS lost (seen as uid 65534): an open hole, strict xfail there. A
    PID namespace of the worker's own would hide the supervisor's pid, but made the worker PID 1
    (signal and reaping semantics; 4 tests of tests/verifiers/test_sandbox*.py failed that way)."""
    code = DISARM + REPORT_FD + r'''
import resource
try:
    vm = int(open('/proc/1/status').read().split('VmSize:')[1].split()[0]) * 1024
    resource.prlimit(1, resource.RLIMIT_AS, (vm + 4096, vm + 4096))
except (OSError, ValueError, IndexError):
    pass
os.write(report_fd, b"R " + b"41" * 400000 + b"\n")
_c.CDLL(None).syscall(101, 0, 0, 0, 0)  # ptrace: SIGSYS
'''
    r = _run(code, ns)
    assert r.status == "refused" and "seccomp" in r.reason, r
