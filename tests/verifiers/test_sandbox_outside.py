"""Issue 55, round three: what a run could reach or claim outside its own processes.

- host state through inherited descriptors (fd 0 was the host's /dev/null);
- statuses that claim an outside observation (the kernel's refusal, the memory cgroup's OOM kill) forged on
  the program's own report channel;
- the caller's session keyring;
- a caller killed mid-run (its scratch directory and its run's processes);
- cleanup after a fork storm;
- CPU overrun in a child that catches SIGXCPU.

Each test failed on the code before its fix (docs/sandbox.md, "Round three"). `level` tests run at
namespaces+seccomp and at the forced fallback (FALLBACK_MISSES: strict expected failures there).
"""
import ctypes
import glob
import json
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

import verifiers.sandbox as sb
from verifiers.sandbox import SandboxLimits, SandboxResult, run_python

from _sandbox_programs import DISARM, FRESH_POSIX, REPORT_FD  # noqa: E402

FAST = SandboxLimits(wall_s=8, cpu_s=4, memory_mb=256)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FALLBACK_MISSES = {
    "host_fingerprint_is_masked": "no mount namespace at the fallback: the host's /proc is the run's",
    "host_wide_proc_values_are_not_visible": "no mount namespace at the fallback: the host's /proc is the run's",
    "negative_dentries_do_not_outlive_the_run": "no memory cgroup at the fallback: nothing holds the run's "
                                                "kernel objects apart to free them",
    "page_cache_a_run_warmed_is_dropped": "no memory cgroup at the fallback: the pages it charged are nobody's",
    "cpu_of_children_nobody_reaps": "no cgroup at the fallback: the kernel drops the rusage of a child it reaps itself",
    "host_user_keyring_is_not_reachable": "the run has the caller's uid, whose user keyring (@u) is its own too",
    "host_keys_are_not_listed": "the run has the caller's uid: /proc/keys lists the descriptions of that uid's keys "
                                "(their payloads stay unreadable: not possessed)",
}


def _run(code, level, limits=FAST, **kw) -> SandboxResult:
    r = run_python(code, limits, **kw)
    assert isinstance(r, SandboxResult) and r.reason.strip(), r
    assert r.isolation == level, r
    return r


def _value(r):
    assert r.status == "ok", r
    return eval(r.value)  # a literal of ints/strs built by our own test program


# -- 1. inherited descriptors --------------------------------------------------------------------------------

def test_inherited_descriptors_are_the_runs_own(level):
    """fd 0 was the host's /dev/null, opened on the host's writable /dev: futimens/fchmod/fchown on fd 0 (the
    audit hook skips integer paths) or on /proc/self/fd/0 changed the host's node (its times: a signal from
    one run to the next). Now fds 0-2 are pipes of the run's own; the host's /dev/null is unchanged."""
    code = DISARM + r'''
import errno, os, stat
res = {}
for fd in (0, 1, 2):
    st = os.fstat(fd)
    res["type %d" % fd] = "fifo" if stat.S_ISFIFO(st.st_mode) else "chr" if stat.S_ISCHR(st.st_mode) else oct(st.st_mode)
    for target in (fd, "/proc/self/fd/%d" % fd):
        for name in ("utime", "chmod", "chown"):
            try:
                cur = os.stat(target)
                if name == "utime":
                    os.utime(target, None)
                elif name == "chmod":
                    os.chmod(target, stat.S_IMODE(cur.st_mode))
                else:
                    os.chown(target, cur.st_uid, cur.st_gid)
                res["%s %s" % (name, target)] = "done"
            except OSError as e:
                res["%s %s" % (name, target)] = errno.errorcode.get(e.errno, str(e)[:60])
result = res
'''
    keys = ("st_mode", "st_uid", "st_gid", "st_mtime_ns", "st_ctime_ns")
    before = {k: getattr(os.stat("/dev/null"), k) for k in keys}
    r = _run(code, level)
    after = {k: getattr(os.stat("/dev/null"), k) for k in keys}
    assert after == before, (r, before, after)
    got = _value(r)
    assert all(got[f"type {fd}"] == "fifo" for fd in (0, 1, 2)), got


def test_stdin_reads_eof(level):
    """The run's stdin is an empty pipe: input() gets EOF as it did on /dev/null."""
    r = _run("import sys\nresult = (sys.stdin.read(), sys.stdin.isatty())", level)
    assert _value(r) == ("", False), r


# -- 2. statuses only the supervisor may give ------------------------------------------------------------------

KERNEL_REFUSAL = ("a system call was refused by the kernel's seccomp filter: ptrace (reported by the kernel to the "
                  "supervisor, which ended the run)")
CGROUP_OOM = ("memory limit reached: the run's memory cgroup (256 MB + 64 MB) was full and the kernel killed the "
              "program")


def _forge(final, reason):
    return REPORT_FD + f'''
import json
line = json.dumps({{"final": {final!r}, "reason": {reason!r}, "value": None}})
os.write(report_fd, b"F " + line.encode().hex().encode() + b"\\n")
os._exit(0)
'''


@pytest.mark.parametrize("final,reason", [("refused", KERNEL_REFUSAL), ("memory", CGROUP_OOM),
                                          ("refused", "file size limit of 1 MB reached; " + KERNEL_REFUSAL),
                                          ("memory", "memory limit of 256 MB reached (SIGKILL)"),
                                          ("ok", "ran to completion; " + KERNEL_REFUSAL)])
def test_forged_outside_observation_lines(level, final, reason):
    """The program writes its own final report line with the kernel's refusal text or the cgroup's OOM text
    and exits 0: before, the same status and reason as the real thing (only the return code differed). Now
    `refused`/`memory` from the program's channel only with the texts the worker itself writes; this is an
    error about a forged line."""
    r = _run(_forge(final, reason), level)
    assert r.status == "error" and "forged" in r.reason, r
    assert r.source == "supervisor", r


def test_forged_refusal_by_exception(level):
    """A PermissionError the program raises with the kernel's text (+ the guards' marker) is an ordinary error."""
    r = _run(f"raise PermissionError({KERNEL_REFUSAL + ' is refused in the sandbox'!r})", level)
    assert r.status == "error" and r.status != "refused", r


def test_a_long_guard_refusal_is_still_a_refusal(level):
    """A guard's text is cut at 500 characters (its closing parenthesis lost): still the guard's refusal."""
    r = _run("open('/' + 'x' * 700, 'w')", level)
    assert r.status == "refused" and r.source == "program" and "is refused in the sandbox" in r.reason, r


def test_forged_notes_are_dropped(level):
    """R lines (the guards' notes) with the kernel's text do not reach the reason."""
    code = REPORT_FD + f'''
os.write(report_fd, b"R " + {KERNEL_REFUSAL!r}.encode().hex().encode() + b"\\n")
result = 1
'''
    r = _run(code, level)
    assert r.status == "ok" and "seccomp" not in r.reason, r


def test_real_observations_keep_their_status(ns):
    """The real ones: a denied call is `refused` by the supervisor; a guard's refusal is the program's claim."""
    r = _run(DISARM + "import ctypes\nctypes.CDLL(None).ptrace(0, 0, 0, 0)\nresult = 1", ns)
    assert r.status == "refused" and "seccomp" in r.reason and r.source == "supervisor", r
    r = _run("import socket\nsocket.socket()", ns)
    assert r.status == "refused" and "network access is refused" in r.reason and r.source == "program", r
    r = _run("x = bytearray(10 ** 10)", ns)
    assert r.status == "memory" and r.source == "program", r


def test_real_cgroup_oom_is_from_the_supervisor(ns):
    if sb.probe()["memory_cgroup"]["kind"] is None:
        pytest.skip("no memory cgroup here")
    code = "chunk = b'x' * (1 << 20)\nfor i in range(4):\n    with open(f'f{i}', 'wb') as f:\n" \
           "        for _ in range(64):\n            f.write(chunk)\nresult = 'wrote 256 MB'"
    r = _run(code, ns, SandboxLimits(wall_s=30, cpu_s=20, memory_mb=64, file_size_mb=64, max_files=4))
    assert r.status == "memory" and "cgroup" in r.reason and r.source == "supervisor", r


def test_the_run_ends_at_its_first_oom_kill(ns):
    """A parent that forks a child to fill the memory cgroup, again after every OOM kill, had its children killed
    315 times in one run, each kill a report in the host's kernel log (held-out sandbox round 7). The run ends at
    the first kill now: status `memory`, from the supervisor, and few kills."""
    if sb.probe()["memory_cgroup"]["kind"] is None:
        pytest.skip("no memory cgroup here")
    code = DISARM + FRESH_POSIX + r'''
import time
kills, end = 0, time.monotonic() + 6
while time.monotonic() < end:  # two children of 100 MB each: the cgroup (128 + 64 MB) is full, RLIMIT_AS is not
    pids = []
    for _ in range(2):
        pid = posix.fork()
        if pid == 0:
            x = [bytearray(1 << 20) for _ in range(100)]
            time.sleep(5)
            posix._exit(0)
        pids.append(pid)
    for pid in pids:
        posix.waitpid(pid, 0)
    kills += 1
result = kills
'''
    r = _run(code, ns, SandboxLimits(wall_s=20, cpu_s=15, memory_mb=128, max_processes=3))
    assert r.status == "memory" and r.source == "supervisor" and "first kill" in r.reason, r
    assert r.seconds < 5, r


def test_guard_kinds_match_the_runner():
    """verifiers/sandbox.py's GUARD_KINDS is the runner's (a refusal text of a new guard must pass as one)."""
    from verifiers import sandbox_runner
    assert sb.GUARD_KINDS == sandbox_runner.GUARD_KINDS


# -- 3. the caller's keyring -----------------------------------------------------------------------------------

SYS_ADD_KEY = {"x86_64": 248, "aarch64": 217}
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}


@pytest.fixture
def host_key():
    """A key in this process's session keyring (add_key), removed afterwards: (id, description, payload)."""
    machine = os.uname().machine
    if machine not in SYS_ADD_KEY:
        pytest.skip(f"no syscall numbers for {machine}")
    libc = ctypes.CDLL(None, use_errno=True)
    desc = b"r3bench-test-" + uuid.uuid4().hex[:10].encode()
    payload = b"host-secret-" + uuid.uuid4().hex[:10].encode()
    kid = libc.syscall(ctypes.c_long(SYS_ADD_KEY[machine]), b"user", desc, payload, ctypes.c_size_t(len(payload)),
                       ctypes.c_long(-3))  # KEY_SPEC_SESSION_KEYRING
    if kid < 0:
        pytest.skip(f"the kernel refuses keys here: {os.strerror(ctypes.get_errno())}")
    try:
        yield kid, desc.decode(), payload.decode()
    finally:
        libc.syscall(ctypes.c_long(SYS_KEYCTL[machine]), ctypes.c_long(21), ctypes.c_long(kid))  # KEYCTL_INVALIDATE


def _read_key_code(kid):
    return DISARM + f'''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(256)
n = libc.syscall(ctypes.c_long({SYS_KEYCTL.get(os.uname().machine, 250)}), ctypes.c_long(11), ctypes.c_long({kid}),
                 buf, ctypes.c_long(256))  # KEYCTL_READ
result = buf.raw[:n].decode() if n > 0 else "errno %d" % ctypes.get_errno()
'''


# the run's key list: /proc/keys, which a /proc of the run's processes only (subset=pid) does not have
KEYS_LISTED = "try:\n    result = open('/proc/keys').read()\nexcept FileNotFoundError:\n    result = ''"


def test_host_keys_are_not_listed(level, host_key):
    """/proc/keys listed the caller's session keys (possessed through the inherited session keyring)."""
    kid, desc, _ = host_key
    assert desc in open("/proc/keys").read()  # the caller sees it
    r = _run(KEYS_LISTED, level)
    assert desc not in _value(r), r


def test_host_key_payload_is_not_readable(level, host_key):
    """KEYCTL_READ on the caller's key: refused by the seccomp filter (namespaces+seccomp), EACCES where there
    is none (a fresh session keyring: the key is not possessed)."""
    kid, _, payload = host_key
    r = _run(_read_key_code(kid), level)
    assert payload not in (r.value or "") and payload not in r.stdout, r
    assert r.status == "refused" if level == "namespaces+seccomp" else r.status == "ok", r


def test_host_key_not_readable_without_the_seccomp_filter(ns, host_key, monkeypatch):
    """The `namespaces` level (no libseccomp): KEYCTL_READ returned the key's payload."""
    monkeypatch.setattr(sb, "SECCOMP", sb.SECCOMP.with_name("no-such-seccomp-module.py"))
    kid, desc, payload = host_key
    r = run_python(_read_key_code(kid) + "\n_read = result\n" + KEYS_LISTED + "\nresult = (_read, result)", FAST)
    assert r.isolation == "namespaces" and r.status == "ok", r
    got = eval(r.value)
    assert payload not in got[0] and desc not in got[1], r


@pytest.fixture
def host_user_key():
    """A key in this uid's user keyring (@u, which outlives the process), removed afterwards."""
    machine = os.uname().machine
    if machine not in SYS_ADD_KEY:
        pytest.skip(f"no syscall numbers for {machine}")
    libc = ctypes.CDLL(None, use_errno=True)
    desc = b"r3bench-test-u-" + uuid.uuid4().hex[:10].encode()
    payload = b"host-user-secret-" + uuid.uuid4().hex[:10].encode()
    kid = libc.syscall(ctypes.c_long(SYS_ADD_KEY[machine]), b"user", desc, payload, ctypes.c_size_t(len(payload)),
                       ctypes.c_long(-4))  # KEY_SPEC_USER_KEYRING
    if kid < 0:
        pytest.skip(f"the kernel refuses keys here: {os.strerror(ctypes.get_errno())}")
    try:
        yield kid, desc.decode(), payload.decode()
    finally:
        libc.syscall(ctypes.c_long(SYS_KEYCTL[machine]), ctypes.c_long(21), ctypes.c_long(kid))  # KEYCTL_INVALIDATE


def test_host_user_keyring_is_not_reachable(level, host_user_key):
    """The caller uid's user keyring (@u): the run links it into its own session keyring and reads the key.
    With a per-run uid (or a user namespace, whose @u is its own) that is a different, empty keyring; with the
    filter keyctl is refused. The fallback runs as the caller's uid: its @u is the caller's (strict xfail)."""
    kid, _, payload = host_user_key
    nr = SYS_KEYCTL.get(os.uname().machine, 250)
    code = DISARM + f'''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
k = lambda *a: libc.syscall(ctypes.c_long({nr}), *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
k(8, -4, -3)  # KEYCTL_LINK: @u into the session keyring
buf = ctypes.create_string_buffer(256)
n = k(11, {kid}, buf, 256)  # KEYCTL_READ
result = buf.raw[:n].decode() if n > 0 else "errno %d" % ctypes.get_errno()
'''
    r = _run(code, level)
    assert payload not in (r.value or ""), r


def test_no_reaper_still_runs(monkeypatch, caplog):
    """A reaper that cannot be started is a warning; the run goes on (and nothing waits on a lock)."""
    def refuse(*a, **k):
        raise OSError(1, "refused for the test")
    monkeypatch.setattr(sb, "_REAPER", None)
    monkeypatch.setattr(sb.os, "posix_spawn", refuse)
    monkeypatch.setattr(sb, "_WARNED", set())
    r = run_python("result = 1", FAST)
    assert r.status == "ok" and r.value == "1", r
    assert sb._REAPER is None and "no reaper process" in caplog.text


# -- 4. a caller that dies mid-run -------------------------------------------------------------------------------

def _procs_with(text):
    """Pids (host view) whose command line holds `text`, zombies included."""
    out = []
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                with open(f"/proc/{e}/cmdline", "rb") as f:
                    if text.encode() in f.read():
                        out.append(int(e))
            except OSError:
                pass
    return out


def test_a_temp_directory_cannot_write_reaper_lines(level, tmp_path):
    """The reaper's protocol was lines of text, and the run's directory (in the caller's TMPDIR) went into it as
    text: a TMPDIR with newlines spelling "+G <group>" made the reaper kill a host process group when the caller
    exited (held-out sandbox round 7). The argument travels hex-encoded now."""
    victim = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        odd = tmp_path / f"nl\n+G {victim.pid}\n-D x\nx"
        odd.mkdir()
        env = dict(os.environ, TMPDIR=str(odd), PYTHONPATH=REPO,
                   R3BENCH_SANDBOX_ISOLATION="fallback" if level == sb.FALLBACK else "auto")
        done = subprocess.run([sys.executable, "-c", (
            "import verifiers.sandbox as sb\n"
            "r = sb.run_python('result = 1', sb.SandboxLimits(wall_s=20, cpu_s=10))\n"
            "print(r.status, flush=True)\n")], env=env, cwd=REPO, capture_output=True, text=True, timeout=60)
        assert done.stdout.strip() == "ok", done
        time.sleep(1.0)  # the reaper acts once the caller's pipe closes
        assert victim.poll() is None, "the reaper killed a host process group named in TMPDIR"
    finally:
        victim.kill()
        victim.wait()


def test_caller_killed_mid_run_leaves_nothing(level, tmp_path):
    """A real caller process SIGKILLed while its run sleeps: before, its scratch directory stayed (and, in the
    namespace mode, the run's processes until wall_s + 2 s). Now the reaper removes the scratch and the
    run's cgroup, and the supervisor ends the run when the result pipe's reader is gone."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp), PYTHONPATH=REPO,
               R3BENCH_SANDBOX_ISOLATION="fallback" if level == sb.FALLBACK else "auto")
    caller = subprocess.Popen([sys.executable, "-c", (
        "import verifiers.sandbox as sb\n"
        "sb.isolation_level()\n"  # the probe's own run first, so that the one directory left is the run's
        "print('probed', flush=True)\n"
        "sb.run_python('import time\\nwhile True: time.sleep(0.05)', sb.SandboxLimits(wall_s=60, cpu_s=30))\n")],
        env=env, cwd=REPO, stdout=subprocess.PIPE)
    try:
        assert caller.stdout.readline() == b"probed\n"
        end = time.monotonic() + 30
        base, procs = None, []
        while time.monotonic() < end:  # the run is up: its worker (a fork of the supervisor) exists
            dirs = glob.glob(str(tmp / "r3sandbox-*"))
            if dirs:
                base = dirs[0]
                procs = _procs_with(base)
                if len(procs) >= (3 if level == "namespaces+seccomp" else 2):
                    break
            time.sleep(0.05)
        assert base and procs, "the run did not start"
        time.sleep(0.3)
        cgroups = []
        for p in procs:
            try:
                with open(f"/proc/{p}/cgroup") as f:
                    cgroups += [ln.split(":", 2)[2] for ln in f.read().splitlines() if "r3sandbox-" in ln]
            except OSError:
                pass
        caller.kill()
        caller.wait()
        end = time.monotonic() + 5
        while time.monotonic() < end and (os.path.exists(base) or _procs_with(base)):
            time.sleep(0.05)
        assert not os.path.exists(base), os.listdir(base)
        assert _procs_with(base) == []
        kind, parent = sb._cgroup_parent()  # the caller's cgroup is this process's (a child of it)
        for cg in set(cgroups):
            assert not (kind and os.path.isdir(os.path.join(parent, os.path.basename(cg)))), cg
    finally:
        if caller.poll() is None:
            caller.kill()
        for p in _procs_with(str(tmp)):
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass


def test_stale_scratch_of_a_dead_caller_is_swept(tmp_path):
    """The second layer under the reaper (a reaper killed with its caller): a dead owner's old scratch directory
    and empty cgroup go at the next probe; a live owner's, a recent one and another name stay."""
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    dead = p.pid
    old = time.time() - sb.STALE_S - 60
    made = {}
    for name in (f"r3sandbox-{dead}-abc", f"r3sandbox-{os.getpid()}-abc", f"r3sandbox-{dead}-new", "r3sandbox-xyz"):
        d = tmp_path / name
        (d / "work").mkdir(parents=True)
        if not name.endswith("new"):
            os.utime(d, (old, old))
        made[name] = d
    cg = tmp_path / "cg"
    (cg / f"r3sandbox-{dead}-cg").mkdir(parents=True)
    os.utime(cg / f"r3sandbox-{dead}-cg", (old, old))
    sb._sweep_stale(str(tmp_path), [str(cg)])
    assert not made[f"r3sandbox-{dead}-abc"].exists()
    assert made[f"r3sandbox-{os.getpid()}-abc"].exists() and made[f"r3sandbox-{dead}-new"].exists()
    assert made["r3sandbox-xyz"].exists()
    assert not (cg / f"r3sandbox-{dead}-cg").exists()


# -- 5. a fork storm -------------------------------------------------------------------------------------------

def _named(token):
    """Pids whose comm is `token`, zombies included (a zombie is still a process of the run)."""
    out = []
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                with open(f"/proc/{e}/comm") as f:
                    if f.read().strip() == token:
                        out.append(int(e))
            except OSError:
                pass
    return out


STORM = DISARM + r'''
import _imp, importlib.machinery as m, time
posix = _imp.create_builtin(m.ModuleSpec('posix', None))
libc = _c.CDLL(None)
n = 0
for i in range(200):  # up to the process limit
    try:
        pid = posix.fork()
    except OSError:
        break
    if pid == 0:
        libc.prctl(15, token.encode(), 0, 0, 0)  # PR_SET_NAME
        while True:
            time.sleep(0.05)
    n += 1
if wait:
    time.sleep(60)
result = n
'''


@pytest.mark.parametrize("wait", [False, True], ids=["exits", "wall-clock"])
def test_fork_storm_leaves_no_process(level, wait):
    """~200 children at the process limit; right after run_python returns, none is left (5 runs): the worker
    exits (the supervisor kills and reaps the rest), or the host kills the run at wall_s (the supervisor
    first, so that `unshare` returns only once the namespace is empty). Before: SIGKILLed but still there
    at the return (the fallback's process group; the namespace's exit going on after `unshare` died)."""
    for i in range(5):
        token = "r3f" + uuid.uuid4().hex[:10]
        lim = SandboxLimits(wall_s=4 if wait else 20, cpu_s=10, memory_mb=512, max_processes=200)
        r = _run(STORM, level, lim, inputs={"token": token, "wait": wait})
        left = _named(token)
        try:
            assert left == [], (i, len(left), r)
            if wait:
                assert r.status == "timeout", r
            else:
                assert r.status == "ok" and int(r.value) >= 50, r
        finally:
            for p in left:
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass


def test_setsid_survivor_at_the_wall_clock(level):
    """A double-forked child in a session of its own while the host kills the run at wall_s: before, at the
    fallback it escaped the process-group kill and lived on. Now the host kills the supervisor's descendants
    first (the supervisor is their subreaper), at the namespaces level the PID namespace goes with PID 1."""
    token = "r3w" + uuid.uuid4().hex[:10]
    code = DISARM + r'''
import _imp, importlib.machinery as m, time
posix = _imp.create_builtin(m.ModuleSpec('posix', None))
if posix.fork() == 0:
    posix.setsid()
    if posix.fork() == 0:
        _c.CDLL(None).prctl(15, token.encode(), 0, 0, 0)  # PR_SET_NAME
        while True:
            time.sleep(0.05)
    posix._exit(0)
time.sleep(60)
'''
    r = _run(code, level, SandboxLimits(wall_s=3, cpu_s=2, memory_mb=256, max_processes=3), inputs={"token": token})
    left = [p for p in _named(token) if _state(p) != "Z"]
    try:
        assert r.status == "timeout" and left == [], (left, r)
    finally:
        for p in left:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass


def _state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "gone"


# -- 6. CPU overrun in a child -----------------------------------------------------------------------------------

CHILD_SPIN = DISARM + r'''
import _imp, importlib.machinery as m, os, signal, time
posix = _imp.create_builtin(m.ModuleSpec('posix', None))
r, w = os.pipe()
pid = posix.fork()
if pid == 0:
    signal.signal(signal.SIGXCPU, lambda *a: None)  # caught: the child goes on past its soft limit
    told = False
    while time.process_time() < spin:
        if not told and time.process_time() > cpu_limit + 0.2:
            os.write(w, b"x")
            told = True
    os.write(w, b"x")
    os._exit(0)
os.read(r, 1)  # the child is past the limit (or done)
if wait:
    os.waitpid(pid, 0)
result = 'done'
'''


@pytest.mark.parametrize("wait", [True, False], ids=["reaped", "orphaned"])
def test_cpu_overrun_in_a_child_is_a_timeout(level, wait):
    """A child catches SIGXCPU and runs on past cpu_s (up to the hard limit); the worker exits 0. Before:
    `ok` (the overrun was judged only for single-process runs). Now the run's CPU time, every process of it
    (reaped by the supervisor; the cgroup's cpu.stat where it is v2), is judged."""
    lim = SandboxLimits(wall_s=15, cpu_s=1, memory_mb=256, max_processes=2)
    r = _run(CHILD_SPIN, level, lim, inputs={"spin": 1.6, "cpu_limit": 1, "wait": wait})
    assert r.status == "timeout" and "cpu time limit" in r.reason, r


def test_cpu_of_children_nobody_reaps(level):
    """The worker ignores SIGCHLD, so the kernel reaps its children itself and drops their rusage; two of them
    burn 0.7 s each against cpu_s = 1. The rusage alone misses that; a cgroup counts it (cpu.stat in v2, a v1
    cpuacct cgroup: namespaces level). The fallback has no cgroup (strict xfail)."""
    code = DISARM + r'''
import _imp, importlib.machinery as m, os, signal, time
posix = _imp.create_builtin(m.ModuleSpec('posix', None))
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
for i in range(2):
    if posix.fork() == 0:
        while time.process_time() < 0.7:
            pass
        os._exit(0)
t = time.monotonic()
while time.monotonic() - t < 4:  # the children end and are gone, unreaped by anyone
    time.sleep(0.05)
result = 'done'
'''
    if level != sb.FALLBACK and sb._cpu_cgroup_parent() is None and sb._cgroup_parent()[0] != "v2":
        pytest.skip("no cgroup that counts CPU time here")
    r = _run(code, level, SandboxLimits(wall_s=15, cpu_s=1, memory_mb=256, max_processes=3))
    assert r.status == "timeout" and "cpu time limit" in r.reason, r


def test_processes_within_the_cpu_budget_are_ok(level):
    """Two processes that together stay under cpu_s: `ok`."""
    lim = SandboxLimits(wall_s=15, cpu_s=3, memory_mb=256, max_processes=2)
    r = _run(CHILD_SPIN, level, lim, inputs={"spin": 0.4, "cpu_limit": 3, "wait": True})
    assert r.status == "ok", r


def test_at_the_namespaces_level_without_seccomp(ns, monkeypatch):
    """The `namespaces` level (no libseccomp): the same mechanisms hold there (fds, forged lines, the CPU time
    of a child, a fork storm)."""
    monkeypatch.setattr(sb, "SECCOMP", sb.SECCOMP.with_name("no-such-seccomp-module.py"))
    before = os.stat("/dev/null")
    r = run_python("import os, stat\ntry:\n    os.utime(0, None)\nexcept OSError:\n    pass\n"
                   "result = stat.S_ISFIFO(os.fstat(0).st_mode)", FAST)
    assert r.isolation == "namespaces" and r.value == "True", r
    assert os.stat("/dev/null").st_mtime_ns == before.st_mtime_ns
    r = run_python(_forge("refused", KERNEL_REFUSAL), FAST)
    assert r.isolation == "namespaces" and r.status == "error" and "forged" in r.reason, r
    lim = SandboxLimits(wall_s=15, cpu_s=1, memory_mb=256, max_processes=2)
    r = run_python(CHILD_SPIN, lim, {"spin": 1.6, "cpu_limit": 1, "wait": False})
    assert r.isolation == "namespaces" and r.status == "timeout", r
    token = "r3n" + uuid.uuid4().hex[:10]
    r = run_python(STORM, SandboxLimits(wall_s=20, cpu_s=10, memory_mb=512, max_processes=200),
                   {"token": token, "wait": False})
    assert r.isolation == "namespaces" and r.status == "ok" and _named(token) == [], r


def test_reaper_is_one_process_per_caller():
    """The reaper: one per calling process, alive, not in the caller's session."""
    run_python("result = 1", FAST)
    run_python("result = 2", FAST)
    rp = sb._REAPER
    assert rp is not None and rp[0] == os.getpid()
    assert os.getsid(rp[2]) == rp[2] != os.getsid(0)
    with open(f"/proc/{rp[2]}/cmdline", "rb") as f:
        assert b"-c" in f.read()
    json.dumps(rp)


# -- 7. the host's fingerprint (held-out round 4: boot_id and the kernel command line read) -----------------

def test_host_fingerprint_is_masked(level):
    """The run's /proc showed the host's boot id and kernel command line (a fingerprint of the machine,
    held-out sandbox round 4) and the kernel's key list and timers: read-only /dev/null binds over them now
    (namespaces levels); the host's own files are unchanged and non-empty."""
    names = ("cmdline", "sys/kernel/random/boot_id", "keys", "timer_list")
    host = {n: open(f"/proc/{n}").read() for n in names if os.path.isfile(f"/proc/{n}")}
    assert host.get("cmdline") and host.get("sys/kernel/random/boot_id")
    code = "import os\nout = {}\nfor n in %r:\n    try:\n        out[n] = open('/proc/' + n).read()\n" \
           "    except OSError as e:\n        out[n] = 'error ' + type(e).__name__\nresult = out" % (tuple(host),)
    got = _value(_run(code, level))
    for n, text in host.items():
        if text.strip():
            assert text.strip() not in got[n], (n, got[n][:200])
    for n in ("sys/kernel/random/boot_id", "cmdline"):  # masked, or absent from a /proc of the run's processes
        assert got[n] == "" or got[n].startswith("error "), (n, got[n][:200])


# -- 8. host-wide values in /proc (held-out sandbox round 5) -----------------------------------------------------

# what a concurrent run moved and another read (round 5 decoded 12 of 12 bits through the first four), what a
# run leaves for the next, and the host's load and memory
HOST_WIDE = ("stat", "loadavg", "sys/fs/file-nr", "meminfo", "uptime", "vmstat", "sys/fs/dentry-state",
             "sys/fs/inode-nr", "pressure/cpu", "interrupts", "locks", "cpuinfo", "diskstats")


@pytest.mark.parametrize("subset", [True, False], ids=["subset", "masked"])
def test_host_wide_proc_values_are_not_visible(level, subset, monkeypatch):
    """The run's /proc had the host's counters: a concurrent run moved the fork count in /proc/stat, file-nr,
    CPU jiffies and the caller's task count in /proc/loadavg, and the receiving run decoded every bit (held-out
    sandbox round 5). The run's /proc is now its processes' entries only (subset=pid); on a kernel without
    that option (forced here: `masked`), the host-wide entries are masked one by one."""
    monkeypatch.setattr(sb, "PROC_SUBSET", subset)
    host = [n for n in HOST_WIDE if os.path.exists("/proc/" + n) and open("/proc/" + n).read().strip()]
    assert "stat" in host and "loadavg" in host
    code = ("out = {}\nfor n in %r:\n    try:\n        out[n] = open('/proc/' + n).read()\n"
            "    except OSError as e:\n        out[n] = 'error ' + type(e).__name__\n"
            "out['self'] = open('/proc/self/status').read()[:5]\nresult = out" % (tuple(host),))
    got = _value(_run(code, level))
    assert got["self"] == "Name:", got["self"]  # the run's own entries stay
    shown = {n: got[n][:80] for n in host if got[n] != "" and not got[n].startswith("error ")}
    assert not shown, shown


# -- 9. kernel memory a run leaves behind (held-out sandbox round 5) ----------------------------------------------

def _negative_dentries():
    with open("/proc/sys/fs/dentry-state") as f:
        return int(f.read().split()[4])


def test_negative_dentries_do_not_outlive_the_run(level):
    """300,000 failed lookups of names on the host's own file systems left 300,000 negative dentries (kernel
    memory the host kept after the run, held-out sandbox round 5). They are charged to the run's memory cgroup,
    which is emptied before it is removed."""
    if sb._cgroup_parent()[0] is None:
        pytest.skip("no memory cgroup here: " + sb._cgroup_parent()[1])
    lookups = 60_000
    code = ("import os, sys\nbase = os.path.dirname(os.__file__)\nfor i in range(%d):\n    try:\n"
            "        os.stat(base + '/r3-%s-%%d' %% i)\n    except OSError:\n        pass\nresult = 1"
            % (lookups, uuid.uuid4().hex[:12]))  # names never looked up before (no dentry of an earlier run)
    before = _negative_dentries()
    r = _run(code, level, SandboxLimits(wall_s=30, cpu_s=20, memory_mb=256))
    assert r.status == "ok", r
    grown = _negative_dentries() - before
    assert grown < lookups // 3, f"{grown} negative dentries left after {lookups} lookups"


def _cached_pages(path, n):
    """Which of the first n pages of `path` are in the host's page cache (mincore on a fresh mapping)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    size = n * 4096
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, ctypes.c_size_t(size), 1, 1, fd, ctypes.c_long(0))  # PROT_READ, MAP_SHARED
    finally:
        os.close(fd)
    assert addr not in (None, ctypes.c_void_p(-1).value)
    vec = (ctypes.c_ubyte * n)()
    try:
        assert libc.mincore(ctypes.c_void_p(addr), ctypes.c_size_t(size), vec) == 0
    finally:
        libc.munmap(ctypes.c_void_p(addr), ctypes.c_size_t(size))
    return [v & 1 for v in vec]


def test_page_cache_a_run_warmed_is_dropped(level):
    """A run that reads chosen pages of a host file nobody had cached leaves them in the host's page cache: a
    signal to a later run that times its reads (held-out sandbox round 4 read a 16-bit secret from it with
    mincore). The pages are charged to the run's memory cgroup, which is emptied before it is removed."""
    if sb._cgroup_parent()[0] is None:
        pytest.skip("no memory cgroup here: " + sb._cgroup_parent()[1])
    path = os.path.join(os.path.dirname(os.__file__), "pydoc_data", "topics.py")  # in the run's bound tree
    n = 32
    assert os.path.getsize(path) > n * 4096
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # the host drops its clean pages
    os.close(fd)
    if any(_cached_pages(path, n)):
        pytest.skip("the file's pages could not be dropped here")
    code = "f = open(%r, 'rb')\nfor i in range(0, %d, 2):\n    f.seek(i * 4096)\n    f.read(1)\nresult = 1" % (path, n)
    r = _run(code, level)
    assert r.status == "ok", r
    assert not any(_cached_pages(path, n)), _cached_pages(path, n)


# -- 10. orphans and siblings are reaped as they end (held-out sandbox round 6) -------------------------------------

def test_a_sibling_that_ends_is_reaped_at_once(ns):
    """A CLONE_PARENT child of the worker is a child of the supervisor (PID 1 of the run's namespace); one that
    exited stayed a zombie until the run's end (held-out rounds 5 and 6 read its memory cgroup as "/" from the
    host). The supervisor reaps every child as it ends."""
    code = DISARM + r'''
import time
libc = _c.CDLL(None, use_errno=True)
pid = libc.syscall(56, 0x8000 | 17, 0, 0, 0, 0)  # clone(CLONE_PARENT | SIGCHLD)
if pid == 0:
    libc._exit(0)
time.sleep(0.5)
try:
    with open("/proc/%d/stat" % pid) as f:
        result = f.read().rpartition(")")[2].split()[0]
except FileNotFoundError:
    result = "gone"
'''
    r = _run(code, ns, SandboxLimits(wall_s=8, cpu_s=4, memory_mb=256, max_processes=2))
    assert _value(r) == "gone", r
