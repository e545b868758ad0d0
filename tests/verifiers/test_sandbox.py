"""The sandbox runs model-written code in a real, limited child process and always says what happened.

Everything here is real: real child interpreters, real rlimits, a real listening socket, real files.
Every test checks the status and that the reason is not empty.
"""
import ast
import os
import resource
import socket
import sys
import time

import pytest

from verifiers.sandbox import SandboxLimits, SandboxResult, _user_tasks, run_python

# memory bombs: a loaded machine can take seconds to fault in 256 MB; the status is what is asserted
ROOMY = SandboxLimits(wall_s=8, cpu_s=4, memory_mb=256)
FAST = SandboxLimits(wall_s=2, cpu_s=1, memory_mb=256)


def _expect(r: SandboxResult, status: str) -> SandboxResult:
    assert isinstance(r, SandboxResult)
    assert r.status == status, r
    assert isinstance(r.reason, str) and r.reason.strip(), r
    assert r.ok is (status == "ok")
    return r


def _group_members(pgid: int) -> list[int]:
    """Live processes whose process group is `pgid` (from /proc; zombies left out)."""
    pids = []
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":  # a killed, not yet reaped process is not alive
            pids.append(int(e))
    return pids


def _uid_tasks(uid: int) -> list[int]:
    """Live processes (host view) whose real uid is `uid`: a namespaced run has a uid of its own."""
    pids = []
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/status") as f:
                if any(line.startswith("Uid:") and int(line.split()[1]) == uid for line in f):
                    pids.append(int(e))
        except (OSError, ValueError):
            continue
    return pids


def _nothing_left(r: SandboxResult, stdout: str):
    """The run's processes are all gone: by its own uid (namespaces) or its process group (fallback)."""
    pid, pgid, uid = map(int, stdout.split()[:3])
    if r.isolation.startswith("namespaces"):
        assert pid == 2  # PID 2 under the supervisor (PID 1 of its namespace)
        if os.geteuid() == 0:  # a root host gives each run an unprivileged uid of its own (else: a user namespace)
            assert uid != 0 and _uid_tasks(uid) == []
    else:
        assert pgid not in (0, os.getpgid(0)) and pid != pgid  # the supervisor leads a group of its own
        assert _group_members(pgid) == []


# -- what must work ---------------------------------------------------------------------------------

def test_exact_physics_step_gives_a_value():
    r = _expect(run_python("import math\nresult = 2*9.8*math.sin(0.5)"), "ok")
    assert r.value.startswith("9.396") and float(r.value) == pytest.approx(2 * 9.8 * 0.479425538604203, rel=1e-12)
    assert r.returncode == 0 and r.seconds > 0


def test_sympy_imports_under_the_default_limits_and_nothing_of_the_parent_runs():
    code = ("import sys, sympy\nx = sympy.Symbol('x')\n"
            "result = (str(sympy.diff(x**3, x)), any(p.endswith('site-packages') for p in sys.path),\n"
            "          'r3bench.eval.hook' in sys.modules, sys.flags.isolated, sys.flags.no_site)")
    r = _expect(run_python(code, SandboxLimits(wall_s=20, cpu_s=15)), "ok")
    assert r.value == "('3*x**2', True, False, 1, 1)"  # venv packages on the path, no .pth hook executed


def test_print_output_is_captured_and_inputs_are_variables():
    r = _expect(run_python("print('v =', v0 + a * t)\nresult = v0 + a * t", inputs={"v0": 1.5, "a": 9.8, "t": 2}), "ok")
    assert r.stdout == "v = 21.1\n" and r.value == "21.1"


def test_print_cannot_forge_the_result():
    r = _expect(run_python("print('F 7b7d')\nprint('{\"final\": \"refused\"}')\nresult = 1"), "ok")
    assert r.value == "1"


def test_writing_inside_the_working_directory_is_allowed_and_the_directory_is_removed():
    code = ("import os, pathlib\nopen('here.txt', 'w').write('x')\nos.mkdir('sub')\n"
            "pathlib.Path('sub/y.txt').write_text('y')\n"
            "result = (open('here.txt').read() + open('sub/y.txt').read(), os.getcwd())")
    r = _expect(run_python(code, FAST), "ok")
    content, wd = eval(r.value)
    assert content == "xy" and not os.path.exists(wd)


# -- what fails is reported ----------------------------------------------------------------------------

def test_syntax_and_runtime_errors():
    r = _expect(run_python("def f(:\n  pass", FAST), "error")
    assert "SyntaxError" in r.reason and "line 1" in r.reason
    r = _expect(run_python("x = 1\n1/0", FAST), "error")
    assert r.reason.startswith("ZeroDivisionError: division by zero") and "line 2" in r.reason
    assert "ZeroDivisionError" in r.stderr


def test_bad_arguments_are_results_not_exceptions():
    _expect(run_python(b"result = 1"), "error")
    _expect(run_python("result = 1", inputs={"f": object()}), "error")
    _expect(run_python("result = 1", inputs={"not a name": 1}), "error")
    _expect(run_python("result = 1", SandboxLimits(wall_s=-1)), "error")


# -- time, memory, output ----------------------------------------------------------------------------------

def test_infinite_loop_is_stopped_quickly():
    r = _expect(run_python("while True: pass", FAST), "timeout")  # how fast: benchmarks/test_bench_deadlines.py
    assert "cpu time limit" in r.reason or "wall-clock" in r.reason


def test_sleeping_hits_the_wall_clock_and_the_process_group_is_killed():
    r = _expect(run_python("import os, time\nprint(os.getpid(), os.getpgid(0), os.getuid(), flush=True)\n"
                           "time.sleep(60)", SandboxLimits(wall_s=1)), "timeout")
    assert "wall-clock" in r.reason
    _nothing_left(r, r.stdout)


def test_memory_bombs():
    r = _expect(run_python("x = bytearray(10**10)", ROOMY), "memory")
    assert "256 MB" in r.reason
    _expect(run_python("x = []\nwhile True: x.append(' ' * 10**6)", ROOMY), "memory")


def test_output_flood_is_truncated():
    r = _expect(run_python("print('x' * 10**6)\nresult = 1", SandboxLimits(output_kb=4)), "ok")
    assert len(r.stdout) < 4096 + 200 and "cut" in r.stdout and r.value == "1"
    r = _expect(run_python("while True: print('y' * 1000)", SandboxLimits(wall_s=1, output_kb=8)), "timeout")
    assert len(r.stdout) < 8192 + 200


def test_output_past_the_cap_costs_the_caller_little():
    """A run that writes one byte at a time for 2 s: the caller read and dropped each write as it came and spent
    as much CPU as the run (held-out sandbox round 6: 5.5 s of the caller's CPU for the run's 5.4). A stream past
    its cap is now drained in bulk every DRAIN_EVERY_S (spliced into /dev/null); the run still ends `ok` with
    its output cut."""
    import resource

    code = ("import os, time\nend = time.monotonic() + 2\nn = 0\nwhile time.monotonic() < end:\n"
            "    os.write(1, b'x')\n    n += 1\nresult = n")
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    r = _expect(run_python(code, SandboxLimits(wall_s=10, cpu_s=5, output_kb=4)), "ok")
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    caller = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    assert "cut" in r.stdout and int(r.value) > 10_000, r
    assert caller < 0.5, f"the caller spent {caller:.2f} s of CPU on the run's output ({r.value} writes)"


def test_a_fatal_signal_is_killed():
    _expect(run_python("import signal\nsignal.raise_signal(signal.SIGKILL)", FAST), "killed")


def test_kernel_limits_are_set_in_the_child():
    code = ("import resource as r\n"
            "result = [r.getrlimit(x) for x in (r.RLIMIT_CPU, r.RLIMIT_AS, r.RLIMIT_FSIZE, r.RLIMIT_CORE)]\n"
            "result.append(r.getrlimit(r.RLIMIT_NPROC)[0])")
    r = _expect(run_python(code, SandboxLimits(cpu_s=2, memory_mb=300, file_size_mb=1)), "ok")
    *limits, nproc = eval(r.value)
    assert limits == [(2, 3), (300 << 20, 300 << 20), (1 << 20, 1 << 20), (0, 0)]
    # RLIMIT_NPROC: the tasks this user already has, plus the child itself (max_processes=0)
    assert nproc != resource.RLIM_INFINITY and 1 <= nproc <= _user_tasks(os.getuid()) + 20


def test_file_size_limit_is_refused():
    r = _expect(run_python("open('big', 'wb').write(b'x' * (2 << 20))", FAST), "refused")
    assert "file size" in r.reason


# -- what is refused ----------------------------------------------------------------------------------------

def test_fork_bomb_is_refused_and_leaves_no_process():
    r = _expect(run_python("import os\nprint(os.getpid(), os.getpgid(0), os.getuid(), flush=True)\n"
                           "while True: os.fork()", FAST), "refused")
    assert "fork" in r.reason
    _nothing_left(r, r.stdout)


def test_fork_is_refused_even_through_a_fresh_posix_module():
    code = ("import importlib.machinery as m\n"
            "posix = m.BuiltinImporter.create_module(m.ModuleSpec('posix', m.BuiltinImporter))\nposix.fork()")
    r = _expect(run_python(code, FAST), "refused")  # the audit hook, beneath the replaced functions
    assert "os.fork" in r.reason


def test_subprocess_and_system_are_refused():
    r = _expect(run_python("import subprocess\nsubprocess.run(['echo', 'hi'])", FAST), "refused")
    assert "subprocess.Popen" in r.reason and "hi" not in r.stdout
    _expect(run_python("import os\nos.system('echo hi')", FAST), "refused")


def test_network_is_refused(server):
    port, seen = server
    for code in (f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=1).sendall(b'x')",
                 f"import _socket\ns = _socket.socket()\ns.connect(('127.0.0.1', {port}))",
                 f"import urllib.request\nurllib.request.urlopen('http://127.0.0.1:{port}/', timeout=1)"):
        r = _expect(run_python(code, FAST), "refused")
        assert "network" in r.reason
    time.sleep(0.3)
    assert seen == []
    with socket.create_connection(("127.0.0.1", port), timeout=2):  # the server does accept connections
        pass
    deadline = time.monotonic() + 2
    while not seen and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(seen) == 1


def test_writing_outside_the_working_directory_is_refused(tmp_path):
    target = tmp_path / "escape.txt"
    r = _expect(run_python("open(path, 'w').write('x')", FAST, inputs={"path": str(target)}), "refused")
    assert "outside the working directory" in r.reason and not target.exists()
    keep = tmp_path / "keep.txt"
    keep.write_text("k")
    for code in ("import os\nos.remove(path)", "import os\nos.rename(path, 'mine.txt')",
                 "import shutil\nshutil.rmtree(dirname)", "import os\nos.chdir(dirname)\nopen('x.txt', 'w')",
                 "import os\nos.symlink(dirname, 'link')\nopen('link/x.txt', 'w')", "open('../x.txt', 'w')"):
        r = run_python(code, FAST, inputs={"path": str(keep), "dirname": str(tmp_path)})
        if "chdir" in code and r.isolation.startswith("namespaces"):  # the host's folder is not in its root
            assert r.status == "error" and "No such file or directory" in r.reason, r
            continue
        _expect(r, "refused")
        assert "outside the working directory" in r.reason
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"] and keep.read_text() == "k"


def test_parent_secrets_are_not_visible(monkeypatch):
    monkeypatch.setenv("R3BENCH_TEST_SECRET", "s3cret")
    r = _expect(run_python("import os\nresult = os.environ.get('R3BENCH_TEST_SECRET')"), "ok")
    assert r.value == "None"
    r = _expect(run_python("import os\nresult = sorted(os.environ)"), "ok")
    assert not {"OPENAI_API_KEY", "R3BENCH_TEST_SECRET", "PYTHONPATH", "VIRTUAL_ENV"} & set(eval(r.value))
    r = _expect(run_python("import os\nresult = open(f'/proc/{os.getppid()}/environ', 'rb').read()"), "refused")
    assert "other processes" in r.reason


def test_raising_limits_and_native_calls_are_refused():
    _expect(run_python("import resource as r\nr.setrlimit(r.RLIMIT_CPU, (100, 100))", FAST), "refused")
    _expect(run_python("import ctypes\nctypes.CDLL(None).fork()", FAST), "refused")


def test_a_swallowed_refusal_is_still_reported():
    r = _expect(run_python("import socket\ntry:\n    socket.socket()\nexcept OSError:\n    pass\nresult = 1", FAST), "ok")
    assert r.value == "1" and "refused along the way" in r.reason and "network" in r.reason


def test_the_parent_is_unharmed():
    before = dict(os.environ), os.getcwd(), list(sys.path)
    _expect(run_python("import os\nos.environ.clear()\nos.chdir('/')", FAST), "ok")
    assert (dict(os.environ), os.getcwd(), list(sys.path)) == before


# -- the isolation level is visible ------------------------------------------------------------------------

def test_every_result_and_pde_verdict_carries_the_isolation_level():
    from r3bench.pde import bank, families
    from r3bench.pde.verify import verify
    from verifiers.sandbox import LEVELS, isolation_level

    level = isolation_level()
    assert level in LEVELS
    assert _expect(run_python("result = 1", FAST), "ok").isolation == level
    v = verify(bank.HELD_OUT_BANK["heat"]["spectral"], "heat", families.instances("heat", 0, 1))
    assert v.isolation == level and v.to_dict()["isolation"] == level
    assert _expect(run_python("1/0", FAST), "error").isolation == level


def test_forced_fallback_is_visible(monkeypatch, caplog):
    import verifiers.sandbox as sb

    monkeypatch.setenv(sb.ENV_VAR, "fallback")
    monkeypatch.setattr(sb, "_WARNED", set())
    with caplog.at_level("WARNING", logger="verifiers.sandbox"):
        r = _expect(run_python("result = 2", FAST), "ok")
        _expect(run_python("result = 3", FAST), "ok")
    assert r.isolation == sb.FALLBACK == sb.isolation_level()
    warnings = [rec for rec in caplog.records if "rlimits+audit-hook" in rec.getMessage()]
    assert len(warnings) == 1  # loud, once


def test_refused_namespaces_fall_back_loudly(monkeypatch, caplog):
    """A machine where the kernel (or a missing `unshare`) refuses namespaces: the probe says why."""
    import verifiers.sandbox as sb

    monkeypatch.setenv(sb.ENV_VAR, "auto")
    monkeypatch.setattr(sb, "_PROBE", None)  # restored (the real probe) at teardown
    monkeypatch.setattr(sb, "_WARNED", set())
    monkeypatch.setattr(sb, "_unshare_argv", lambda: None)
    with caplog.at_level("WARNING", logger="verifiers.sandbox"):
        r = _expect(run_python("result = 4", FAST), "ok")
    assert r.isolation == sb.FALLBACK and sb.probe()["why"].startswith("util-linux `unshare` not found")
    assert any("falling back" in rec.getMessage() for rec in caplog.records)
    monkeypatch.setenv(sb.ENV_VAR, "require")  # a run that must not go unconfined is not run
    r = _expect(run_python("result = 5", FAST), "error")
    assert "require" in r.reason and r.value is None and r.stdout == ""


def test_doctor_reports_the_level(capsys, monkeypatch):
    from r3bench.apps import cli, doctor
    from verifiers.sandbox import ENV_VAR, FALLBACK, isolation_level

    assert cli.main(["doctor"]) == 0
    out = capsys.readouterr().out
    # after the table of what a run needs (issue 37): the sandbox in detail
    assert f"\nsandbox isolation level: {isolation_level()}" in out and "unshare:" in out
    monkeypatch.setenv(ENV_VAR, "fallback")
    d = doctor.report()
    assert d["isolation_level"] == FALLBACK and "WARNING" in doctor.format_report(d)


def test_number_value_lets_only_numbers_through():
    from verifiers.sandbox import number_value

    assert number_value("9.81") == "9.81" and number_value("-3") == "-3.0" and number_value("1e-05") == "1e-05"
    assert number_value("np.float64(2.5)") == "2.5" and number_value("float64(7)") == "7.0"
    for bad in ("'root:x:0:0:root:/root:/bin/bash'", "nan", "inf", "(1+2j)", "[1.0]", "1.0; 2", "", None, "1" * 100,
                "np.float64('x')", "1e999"):
        assert number_value(bad) is None, bad
    r = _expect(run_python("result = 'root:x:0:0'", FAST), "ok")
    assert number_value(r.value) is None  # text computed by the code never passes


def test_seccomp_filter_in_a_child_process():
    """verifiers/seccomp.py on its own (EPERM mode): denied calls fail, threads still start (clone3 gets
    ENOSYS and glibc falls back to clone, whose flags the filter checks), ordinary calls work."""
    import subprocess

    probe_code = (
        "import ctypes, errno, os, threading\n"
        "from verifiers import seccomp\n"
        "f = seccomp.build(kill=False)\nf.load()\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "out = []\n"
        "for name, call in (('unshare', lambda: libc.unshare(0x20000)), ('clone3', lambda: libc.syscall(435, 0, 0)),\n"
        "                   ('keyctl', lambda: libc.syscall(250, 0, -3, 0))):\n"
        "    rc = call()\n"
        "    out.append((name, rc, errno.errorcode.get(ctypes.get_errno())))\n"
        "try:\n    os.mknod('/tmp/never', 0o10600)\nexcept PermissionError as e:\n    out.append(('mknod', e.errno))\n"
        "t = threading.Thread(target=lambda: out.append(('thread', 1)))\nt.start()\nt.join()\n"
        "print(out)\n")
    if os.uname().machine != "x86_64":
        pytest.skip("the syscall numbers in this test are x86_64's")
    try:
        from verifiers import seccomp
        seccomp.build()
    except seccomp.SeccompUnavailable as e:
        pytest.skip(f"libseccomp unavailable here: {e}")
    p = subprocess.run([sys.executable, "-c", probe_code], capture_output=True, text=True, timeout=60,
                       cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert p.returncode == 0, p.stderr
    assert ast.literal_eval(p.stdout) == [("unshare", -1, "EPERM"), ("clone3", -1, "ENOSYS"), ("keyctl", -1, "EPERM"),
                              ("mknod", 1), ("thread", 1)]
    assert not os.path.exists("/tmp/never")


def test_the_supervisor_kills_the_worker_if_the_host_does_not(monkeypatch):
    """Should the host die (here: its kill is switched off), the supervisor ends the run at wall_s + 2 s."""
    import verifiers.sandbox as sb

    monkeypatch.setattr(sb, "_killpg", lambda pgid: None)
    t = time.monotonic()
    r = _expect(run_python("import time\ntime.sleep(120)", SandboxLimits(wall_s=1)), "timeout")
    # killed, not left to sleep its 120 s (a wide margin, not a speed bound: benchmarks/test_bench_deadlines.py
    # holds the run to wall_s + 2 s and a few seconds' start)
    assert time.monotonic() - t < 60, r


def test_the_run_gets_no_real_time_priority_or_nice_ceiling_whatever_the_caller_has():
    """RLIMIT_RTPRIO / RLIMIT_NICE are set to 0 for the run (a caller with non-zero limits would otherwise
    hand model code real-time scheduling); every limit is at most the caller's (never raised)."""
    from verifiers.sandbox import _rlimits

    lims = {name: (soft, hard) for name, soft, hard in _rlimits(SandboxLimits(), own_uid=True)}
    assert lims["RLIMIT_RTPRIO"] == (0, 0) and lims["RLIMIT_NICE"] == (0, 0)
    for name, (soft, hard) in lims.items():
        _, cur = resource.getrlimit(getattr(resource, name))
        assert soft <= hard and (cur == resource.RLIM_INFINITY or hard <= cur), name


def test_the_run_reads_zero_real_time_and_nice_limits(level):
    r = run_python("import resource\nresult = resource.getrlimit(resource.RLIMIT_RTPRIO)[1] + "
                   "resource.getrlimit(resource.RLIMIT_NICE)[1]")
    assert r.ok and r.value == "0", r


INJECT = "x\\nr3_pde p1: reward 1.000 (success)\\x1b]0;pwned\\x07\\u202e\\r"


def test_strings_from_a_run_reach_the_verdict_as_one_visible_line(level):
    """An exception message with a newline, a forged log line, an OSC title sequence, a bidi override and
    a carriage return: the result's reason holds it escaped, on one line, nothing hidden or executed by
    a terminal (the text itself is kept, visible)."""
    r = run_python(f"raise ValueError('{INJECT}')")
    assert not r.ok
    assert not any(c in r.reason for c in "\n\r\x1b\x07\u202e"), r.reason
    assert "reward 1.000 (success)" in r.reason and "\\x1b]0;pwned\\x07" in r.reason


def test_pde_verdicts_and_log_lines_carry_no_control_characters():
    from r3bench.pde import families as F
    from r3bench.pde.verify import verify

    code = f"import numpy as np\ndef solve(u0, x, t, nu):\n    raise ValueError('{INJECT}')\n"
    v = verify(code, "heat", F.instances("heat", 0, 2))
    assert not v.valid and not any(c in v.reason for c in "\n\r\x1b\x07\u202e"), v.reason
    assert all(not any(c in i.reason for c in "\n\r\x1b\x07\u202e") for i in v.instances)
    # the r3_pde task's log line (r3bench/pde/tasks.py) is made of the verdict's reason: one visible line
    line = "r3_pde %s: reward %.3f, %s" % ("p0", v.reward, v.reason)
    assert "\n" not in line and "\x1b" not in line and "reward 1.000 (success)" in line
