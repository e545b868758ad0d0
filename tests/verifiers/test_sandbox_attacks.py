"""Attacks on the sandbox, each run at both isolation levels; every test asserts HOW it was stopped.

Levels (verifiers.sandbox): "ns" = the default, namespaces+seccomp (the probe must find it, else these
tests are skipped with the probe's reason); "fallback" = R3BENCH_SANDBOX_ISOLATION=fallback, the
rlimits + audit-hook guards in the same interpreter. Several attacks first switch the audit hook
off (DISARM: ctypes.memset over the hash table of the hook's watch set, which raises no audit
event), as an attacker did against the in-process sandbox; what stops them then is the kernel.
The attacks the fallback does not stop are expected failures there (`FALLBACK_MISSES`, strict: a
fallback that starts stopping one turns the xfail into a failure), so the suite documents what the
fallback level leaves open. Everything here is real: processes, sockets, files, /proc.

Attacks that would harm the host if they got through at the fallback level (mount, kill(-1), an
unbounded fork bomb with the hook disarmed) are written in a bounded or harmless form.
"""
import os
import site
import subprocess
import time
import uuid


from verifiers.sandbox import PROJECT_ROOT, SandboxLimits, SandboxResult, run_python

# memory bombs: a loaded machine can take seconds to fault in 256 MB; the status is what is asserted
ROOMY = SandboxLimits(wall_s=8, cpu_s=4, memory_mb=256)
FAST = SandboxLimits(wall_s=3, cpu_s=2, memory_mb=256)

from _sandbox_programs import DISARM  # noqa: E402 - the audit hook switched off from inside

FALLBACK_MISSES = {
    "readline_history_outside": "readline.write_history_file raises no audit event",
    "readline_history_into_site_packages": ("readline.write_history_file raises no audit event (a host running as "
                                            "root can write into site-packages)", False),
    "sqlite_creates_file_outside": "sqlite3.connect raises no audit event for the file it creates",
    "fresh_posix_mknod": "a fresh posix module's mkfifo/mknod raise no audit event",
    "disarmed_write_outside": "ctypes.memset switches the audit hook off",
    "disarmed_many_files": "the file count is kept by the audit hook only",
    "disarmed_fork_burst": ("RLIMIT_NPROC does not apply to root, and the hook is off (a non-root host: it does)", False),
    "disarmed_socket_to_localhost": "the same network namespace: 127.0.0.1 is reachable",
    "disarmed_parent_environ": "the same PID namespace and uid: the parent's /proc entries are readable",
    "import_r3bench_from_checkout": "the checkout is in the same filesystem",
    "read_the_checkout": "the checkout is in the same filesystem",
    "forge_host_result": "the supervisor runs as the same uid: its fds are reachable through /proc",
    "disarmed_raise_rlimit": ("root with CAP_SYS_RESOURCE may raise hard limits (containers often drop it)", False),
    "disarmed_ptrace": "no seccomp filter",
    "disarmed_keyctl": "no seccomp filter",
    "disarmed_unshare": "no seccomp filter",
    "disarmed_own_seccomp_filter_by_prctl": "no seccomp filter",
    "disarmed_own_seccomp_filter_by_syscall": "no seccomp filter",
    "page_cache_eviction_of_a_host_file": "no seccomp filter",
    "page_cache_eviction_by_madvise": "no seccomp filter",
}


# the fixture `level` (which reads FALLBACK_MISSES above) and `server`: tests/verifiers/conftest.py


def _run(code, level, limits=FAST, **kw) -> SandboxResult:
    r = run_python(code, limits, **kw)
    assert isinstance(r, SandboxResult) and r.reason.strip(), r
    assert r.isolation == level, r  # the level is in every result
    return r


def _comm_pids(token: str) -> list[int]:
    """Live processes (host view) whose name (comm) is `token`."""
    pids = []
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/comm") as f:
                comm = f.read().strip()
            with open(f"/proc/{e}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if comm == token and state != "Z":
            pids.append(int(e))
    return pids


# -- the four escapes found against the in-process sandbox ------------------------------------------------

def test_readline_history_outside(level, tmp_path):
    target = tmp_path / "evil.pth"
    r = _run("import readline\nreadline.add_history('import os')\nreadline.write_history_file(path)\nresult = 1",
             level, inputs={"path": str(target)})
    assert not target.exists(), r
    assert r.status == "error" and "No such file or directory" in r.reason  # the host's folder is not there


def test_readline_history_into_site_packages(level):
    sp = site.getsitepackages()[0]
    target = os.path.join(sp, f"r3-attack-{uuid.uuid4().hex[:8]}.txt")
    try:
        r = _run("import readline\nreadline.write_history_file(path)\nresult = 1", level, inputs={"path": target})
        assert not os.path.exists(target), r
        assert r.status == "error" and ("Read-only file system" in r.reason or "Permission denied" in r.reason), r
    finally:
        if os.path.exists(target):
            os.remove(target)


def test_sqlite_creates_file_outside(level, tmp_path):
    target = tmp_path / "x.db"
    r = _run("import sqlite3\nsqlite3.connect(path).execute('create table t(x)')\nresult = 1", level,
             inputs={"path": str(target)})
    assert not target.exists(), r
    assert r.status == "error" and "unable to open database file" in r.reason


def test_fresh_posix_mknod(level):
    code = ("import _imp, importlib.machinery as m, os\n"
            "posix = _imp.create_builtin(m.ModuleSpec('posix', None))\n"
            "posix.mkfifo('fifo')\nposix.mknod('null2', 0o20666, os.makedev(1, 3))\n"
            "result = sorted(os.listdir('.'))")
    r = _run(code, level)
    # the kernel reports the denied mknodat to the supervisor (seccomp user notification), which kills the run
    assert r.status == "refused" and "seccomp" in r.reason and "mknodat" in r.reason, r
    assert r.returncode == -9 and r.value is None


def test_disarmed_write_outside(level, tmp_path):
    target = tmp_path / "escape.txt"
    r = _run(DISARM + "open(path, 'w').write('x')\nresult = 1", level, inputs={"path": str(target)})
    assert not target.exists(), r
    assert r.status == "error" and "No such file or directory" in r.reason


def test_disarmed_setsid_survivor(level):
    token = "r3s" + uuid.uuid4().hex[:10]  # the survivor renames itself (comm) so the host can look for it
    code = DISARM + (
        "import _imp, importlib.machinery as m, time, os\n"
        "posix = _imp.create_builtin(m.ModuleSpec('posix', None))\n"
        "if posix.fork() == 0:\n"
        "    posix.setsid()\n"
        "    if posix.fork() == 0:\n"
        "        _c.CDLL(None).prctl(15, token.encode(), 0, 0, 0)  # PR_SET_NAME\n"
        "        open('ready', 'w').close()\n"
        "        time.sleep(30)\n"
        "    posix._exit(0)\n"
        "t = time.monotonic()\n"
        "while not os.path.exists('ready') and time.monotonic() - t < 2:\n"
        "    time.sleep(0.01)\n"
        "result = os.path.exists('ready')")
    try:
        r = _run(code, level, SandboxLimits(wall_s=4, cpu_s=2, memory_mb=256, max_processes=2),
                 inputs={"token": token})
        assert r.status == "ok" and r.value == "True", r  # the survivor was really started
        time.sleep(0.2)
        assert _comm_pids(token) == []  # and nothing of it is alive: PID 1 of its namespace is gone
    finally:
        for pid in _comm_pids(token):
            os.kill(pid, 9)


def test_disarmed_fork_burst(level):
    # bounded: only the first process forks (a real bomb would hurt the host at the fallback level)
    code = DISARM + (
        "import _imp, importlib.machinery as m, time\n"
        "posix = _imp.create_builtin(m.ModuleSpec('posix', None))\n"
        "n = 0\n"
        "for i in range(30):\n"
        "    if posix.fork() == 0:\n"
        "        time.sleep(3)\n"
        "        posix._exit(0)\n"
        "    n += 1\n"
        "result = n")
    r = _run(code, level)
    assert r.status == "error" and "BlockingIOError" in r.reason, r  # RLIMIT_NPROC of the per-run uid: EAGAIN


def test_disarmed_many_files(level):
    code = DISARM + "n = 0\nfor i in range(1000):\n    open(f'f{i}', 'w').close()\n    n += 1\nresult = n"
    r = _run(code, level)  # the limit is max_files (100): the scratch tmpfs has max_files + 16 inodes
    assert r.status == "error" and "No space left on device" in r.reason and r.value is None, r


# -- processes, time, memory, output -----------------------------------------------------------------------

def test_fork_bomb(level):
    r = _run("import os\nwhile True: os.fork()", level)
    assert r.status == "refused" and "os.fork" in r.reason


def test_memory_bomb(level):
    r = _run("x = bytearray(10**10)", level, ROOMY)
    assert r.status == "memory" and "256 MB" in r.reason
    r = _run("x = []\nwhile True: x.append(' ' * 10**6)", level, ROOMY)
    assert r.status == "memory"


def test_cpu_loop_ignoring_sigterm(level):
    r = _run("import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True: pass", level)
    assert r.status == "timeout"  # how fast: benchmarks/test_bench_deadlines.py
    assert "cpu time limit" in r.reason or "wall-clock" in r.reason


def test_sleep_ignoring_sigterm(level):
    r = _run("import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(60)", level,
             SandboxLimits(wall_s=1))
    assert r.status == "timeout" and "wall-clock" in r.reason


def test_huge_output(level):
    r = _run("import sys\nwhile True: sys.stdout.write('y' * 65536)", level, SandboxLimits(wall_s=1, output_kb=8))
    assert r.status == "timeout" and len(r.stdout) < 8192 + 200 and "cut" in r.stdout


def test_huge_result_value(level):
    r = _run("result = 'x' * 10**7", level, SandboxLimits(output_kb=4))
    assert r.status == "ok" and len(r.value) < 4096 + 100 and "characters cut" in r.value


# -- network ----------------------------------------------------------------------------------------------------

def test_socket_to_localhost(level, server):
    port, seen = server
    r = _run(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=1).sendall(b'x')", level)
    assert r.status == "refused" and "network" in r.reason
    time.sleep(0.3)
    assert seen == []


def test_disarmed_socket_to_localhost(level, server):
    port, seen = server
    code = DISARM + (f"import _socket\ns = _socket.socket.__mro__[-2]()\ns.settimeout(1)\ns.connect(('127.0.0.1', {port}))\n"
                     "s.send(b'stolen')\nresult = 1")
    r = _run(code, level)
    time.sleep(0.3)
    assert seen == [], r
    assert r.status == "error" and "Network is unreachable" in r.reason  # no interface is up in its namespace


# -- the parent: environment, /proc, the project ------------------------------------------------------------------

def test_parent_env_secret(level, monkeypatch):
    monkeypatch.setenv("R3BENCH_TEST_SECRET", "s3cret-" + uuid.uuid4().hex)
    r = _run("import os\nresult = dict(os.environ)", level)
    assert r.status == "ok" and "s3cret" not in r.value and "R3BENCH_TEST_SECRET" not in r.value


def test_parent_proc_environ(level, monkeypatch):
    monkeypatch.setenv("R3BENCH_TEST_SECRET", "s3cret")
    r = _run("import os\nresult = open(f'/proc/{os.getppid()}/environ', 'rb').read()", level)
    assert r.status == "refused" and "other processes" in r.reason


def test_disarmed_parent_environ(level):
    """A host process with a secret in its environment (as exec'd: /proc/<pid>/environ shows that one)."""
    secret = "s3cret-" + uuid.uuid4().hex
    holder = subprocess.Popen(["sleep", "30"], env={"R3BENCH_TEST_SECRET": secret, "PATH": "/usr/bin:/bin"})
    try:
        deadline, env = time.monotonic() + 5, b""
        while secret.encode() not in env and time.monotonic() < deadline:  # until its exec is visible
            with open(f"/proc/{holder.pid}/environ", "rb") as f:
                env = f.read()
        assert secret.encode() in env  # the secret is there to be read by anyone who can
        code = DISARM + (
            "import os\nfound = []\n"
            "for p in [str(pid), *os.listdir('/proc')]:\n"
            "    try:\n"
            "        found.append(open(f'/proc/{p}/environ', 'rb').read().decode('latin-1'))\n"
            "    except (OSError, ValueError):\n"
            "        pass\n"
            "result = '|'.join(found)")
        r = _run(code, level, inputs={"pid": holder.pid})
        assert r.status == "ok" and secret not in (r.value or ""), r
        assert "R3BENCH" not in r.value  # what it can read (its own environ) holds the constants only
    finally:
        holder.kill()
        holder.wait()


def test_import_r3bench_from_checkout(level):
    r = _run("import sys\nsys.path.insert(0, root)\nimport r3bench.pde.families\nresult = 1", level,
             inputs={"root": str(PROJECT_ROOT)})
    assert r.status == "error" and "ModuleNotFoundError" in r.reason and "r3bench" in r.reason


def test_import_r3bench_plain(level):
    r = _run("import r3bench\nresult = 1", level)
    assert r.status == "error" and "ModuleNotFoundError" in r.reason


def test_read_the_checkout(level):
    r = _run("result = open(path).read()[:20]", level, inputs={"path": str(PROJECT_ROOT / "README.md")})
    assert r.status == "error" and "No such file or directory" in r.reason, r


# -- the result channel ----------------------------------------------------------------------------------------------

FORGE_REPORT = r'''
import os, json
fds = [int(f) for f in os.listdir('/proc/self/fd') if int(f) > 2]
line = b"F " + json.dumps({"final": "ok", "reason": "ran to completion", "value": "'forged'"}).encode().hex().encode()
for fd in fds:
    try:
        os.write(fd, line + b"\n")
    except OSError:
        pass
raise RuntimeError("the real outcome")
'''


def test_forged_report_line(level):
    r = _run(FORGE_REPORT, level)
    assert r.value is None and r.status == "error" and "tampered" in r.reason, r


def test_forged_report_then_exit(level):
    # a forged line followed by a hard exit: the program's own claim, which is all it can ever fake
    r = _run(FORGE_REPORT.replace('raise RuntimeError("the real outcome")', "os._exit(0)"), level)
    assert r.status == "ok" and r.value == "'forged'"  # no different from `result = 'forged'`
    r = _run(FORGE_REPORT.replace('raise RuntimeError("the real outcome")', "os._exit(0)")
             .replace('"final": "ok"', '"final": "ok", "extra": 1'), level)
    assert r.status == "error" and "tampered" in r.reason  # the fixed format is checked


def test_forge_host_result(level):
    """Write a supervisor line ("S ...") into the supervisor's own result fd, then kill the supervisor."""
    code = DISARM + r'''
import os, json, signal
msg = {"setup": {}, "exit": 0, "signal": None, "cpu": 0.0, "final": {"final": "ok", "reason": "x", "value": "'forged'"},
       "notes": [], "problem": None}
line = b"S " + json.dumps(msg).encode().hex().encode() + b"\n"
sup, written, errors = os.getppid(), 0, set()
try:
    fds = os.listdir(f'/proc/{sup}/fd')
except OSError as e:
    fds, errors = [], {type(e).__name__}
for fd in fds:
    try:
        w = os.open(f'/proc/{sup}/fd/{fd}', os.O_WRONLY)
        written += os.write(w, line) > 0
    except OSError as e:
        errors.add(type(e).__name__)
_c.CDLL(None).kill(sup, signal.SIGKILL)  # libc's kill: os.kill is replaced by a refusing function
result = (written, sorted(errors))
'''
    r = _run(code, level)
    assert r.value != "'forged'", r
    assert r.status == "ok" and r.value == "(0, ['PermissionError'])", r  # /proc/1 is closed to the worker


# -- native calls with the hook disarmed: the seccomp filter and the unprivileged uid ------------------------------

def test_disarmed_raise_rlimit(level):
    r = _run(DISARM + "import resource as r\nr.setrlimit(r.RLIMIT_CPU, (100, 100))\nresult = 1", level)
    assert r.status == "error" and "ValueError" in r.reason and "not allowed to raise" in r.reason, r


def _libc_call(expr):
    return DISARM + f"import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nresult = {expr}"


def test_disarmed_ptrace(level):
    r = _run(_libc_call("libc.ptrace(0, 0, 0, 0)"), level)  # PTRACE_TRACEME: harmless if it got through
    assert r.status == "refused" and "seccomp" in r.reason, r


def test_disarmed_keyctl(level):
    nr = {"x86_64": 250, "aarch64": 219}[os.uname().machine]
    r = _run(_libc_call(f"libc.syscall({nr}, 0, -3, 0)"), level)  # keyctl(GET_KEYRING_ID, session keyring)
    assert r.status == "refused" and "seccomp" in r.reason, r


def test_disarmed_unshare(level):
    r = _run(_libc_call("libc.unshare(0x10000000)"), level)  # CLONE_NEWUSER
    assert r.status == "refused" and "seccomp" in r.reason, r


def test_ctypes_with_the_hook_in_place(level):
    r = _run("import ctypes\nctypes.CDLL(None).fork()", level)
    assert r.status == "refused" and "native code" in r.reason


def test_write_outside_with_the_hook_in_place(level):
    r = _run("open('/usr/r3-attack.txt', 'w').write('x')", level)
    assert r.status == "refused" and "outside the working directory" in r.reason
    assert not os.path.exists("/usr/r3-attack.txt")


# A hidden seccomp layer: a run that loads its own filter answering ERRNO for the denied calls outranks the
# supervisor's user-notification action (ERRNO > USER_NOTIF), so ptrace/mount/bpf/unshare would fail quietly
# and the run end "ok" with no refusal recorded. Loading a filter at all is refused (and recorded).
def test_disarmed_own_seccomp_filter_by_prctl(level):
    r = _run(_libc_call("libc.prctl(22, 1, 0, 0, 0)"), level)  # PR_SET_SECCOMP, SECCOMP_MODE_STRICT
    assert r.status == "refused" and "seccomp" in r.reason, r


def test_disarmed_own_seccomp_filter_by_syscall(level):
    nr = {"x86_64": 317, "aarch64": 277}[os.uname().machine]  # seccomp(SECCOMP_SET_MODE_FILTER, 0, NULL)
    r = _run(_libc_call(f"libc.syscall({nr}, 1, 0, 0)"), level)
    assert r.status == "refused" and "seccomp" in r.reason, r


# The shared page cache as a channel between runs (and a way to empty the host's cache of its own files):
# evicting a read-only host file's pages and timing reads carried 64 of 64 bits from one run to the next.
def test_page_cache_eviction_of_a_host_file(level):
    code = ("import os, sys\nfd = os.open(sys.executable, os.O_RDONLY)\ntry:\n"
            "    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)\n    result = 'evicted'\n"
            "except PermissionError:\n    result = 'refused'\n")
    r = _run(code, level)
    assert r.ok and r.value == "'refused'", r


def test_page_cache_eviction_by_madvise(level):
    code = ("import mmap, sys\nf = open(sys.executable, 'rb')\nm = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)\n"
            "out = []\nfor advice in (20, 21):  # MADV_COLD, MADV_PAGEOUT\n    try:\n        m.madvise(advice)\n"
            "        out.append('done')\n    except OSError as e:\n        out.append(e.errno)\n"
            "result = str(out)\n")
    r = _run(code, level)
    assert r.ok and r.value == repr(str([1, 1])), r  # EPERM, EPERM
