"""The sandbox's fork server (`run_python(..., calls=Calls(...))`): the code's top level runs once, each call
in a fresh fork of that state, timed and killed by the supervisor's clock (the PDE verifier's per-instance
runs, issue 36's follow-up). Both levels: the supervisor does the timing at the fallback level too."""

from _sandbox_programs import DISARM, FRESH_POSIX
from verifiers.sandbox import Calls, SandboxLimits, run_python

# the audit hook switched off and a fresh posix module: a real fork, as a program that gets past the guards makes
FORK = DISARM + FRESH_POSIX

LIM = SandboxLimits(wall_s=20, cpu_s=5, memory_mb=512, max_processes=1)


# the fixture `level` (both isolation levels): tests/verifiers/conftest.py


def test_each_call_is_a_fresh_fork_of_the_top_level(level):
    code = "import os\nstate = []\nstarted = os.getpid()\n"
    call = "state.append(x)\nresult = (x, len(state), os.getpid() != started)"
    r = run_python(code, LIM, calls=Calls(call, ({"x": 1}, {"x": 2}, {"x": 3}), 3.0))
    assert r.ok and r.isolation == level, r
    assert [c.status for c in r.calls] == ["ok"] * 3, r.calls
    assert [eval(c.value) for c in r.calls] == [(1, 1, True), (2, 1, True), (3, 1, True)]
    assert all(c.seconds is not None and c.seconds < 3.0 for c in r.calls)


def test_a_call_is_timed_and_killed_by_the_supervisor(level):
    """Alarms switched off and the clock patched inside the call: the supervisor's clock still ends it."""
    code = "import signal, time\ntime.perf_counter = time.monotonic = lambda: 0.0\n"
    call = "signal.setitimer(signal.ITIMER_REAL, 0)\nif x == 2:\n    time.sleep(6)\nresult = x"
    r = run_python(code, LIM, calls=Calls(call, ({"x": 1}, {"x": 2}, {"x": 3}), 1.0))
    assert r.status == "timeout" and "call 1" in r.reason and "supervisor" in r.reason, r
    assert [c.status for c in r.calls] == ["ok", "timeout", "not run"], r.calls
    assert 1.0 <= r.calls[1].seconds < 3.0 and r.seconds < 5.0, r


def test_the_start_has_its_own_limit(level):
    r = run_python("import time\ntime.sleep(6)", LIM, calls=Calls("result = 1", ({},), 1.0, start_s=1.0))
    assert r.status == "timeout" and "start" in r.reason and r.seconds < 4.0, r
    assert [c.status for c in r.calls] == ["not run"], r.calls


def test_a_call_that_exits_without_a_result(level):
    call = "import os\nif x == 1:\n    os._exit(0)\nresult = x"
    r = run_python("", LIM, calls=Calls(call, ({"x": 0}, {"x": 1}, {"x": 2}), 2.0))
    assert [c.status for c in r.calls] == ["ok", "error", "ok"], r.calls
    assert "without a result" in r.calls[1].reason


def test_forged_fork_server_lines_cannot_shorten_a_call(level):
    """The top level writes "C" (a result for call 0 before it is sent) and extra "G" lines on its report
    pipe: a "C" before the call is sent is ignored, and every call is still timed from sending its inputs."""
    forged = (
        "import fcntl, json, os, stat, time\n"
        "report_fd = [i for i in range(3, 64) if os.path.exists(f'/proc/self/fd/{i}') and"
        " stat.S_ISFIFO(os.fstat(i).st_mode) and fcntl.fcntl(i, fcntl.F_GETFL) & os.O_WRONLY][0]\n"
        "fake = json.dumps({'i': 0, 'final': 'ok', 'reason': 'forged', 'value': '42'}).encode().hex().encode()\n"
        "os.write(report_fd, b'C ' + fake + b'\\n')\n")
    call = "time.sleep(0.4)\nresult = 7"
    r = run_python(forged, LIM, calls=Calls(call, ({}, {}), 3.0))
    assert r.ok, r
    assert [c.value for c in r.calls] == ["7", "7"], r.calls
    assert all(c.seconds >= 0.4 for c in r.calls), r.calls


def test_calls_need_a_process_to_fork():
    r = run_python("", SandboxLimits(), calls=Calls("result = 1", ({},), 1.0))
    assert r.status == "error" and "max_processes" in r.reason, r


def test_a_helper_of_the_start_is_ended_with_the_start(level):
    """The start forks a helper that works on into a shared mapping the calls read (held-out sandbox round 5):
    work done outside every call's clock. Every process of the run but the serving worker is ended when the
    start ends, so no call sees the helper's later work."""
    code = FORK + ("import mmap, os, time\nSH = mmap.mmap(-1, 64, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)\n"
            "if posix.fork() == 0:\n    time.sleep(0.3)\n    SH[:4] = b'DONE'\n    time.sleep(30)\n    os._exit(0)\n")
    call = "import time\ntime.sleep(0.5)\nresult = bytes(SH[:4])"
    r = run_python(code, SandboxLimits(wall_s=20, cpu_s=5, memory_mb=256, max_processes=3),
                   calls=Calls(call, ({}, {}), 3.0))
    assert [c.status for c in r.calls] == ["ok", "ok"], r
    assert all("DONE" not in c.value for c in r.calls), r.calls


def test_a_helper_of_a_call_is_ended_before_the_next(level):
    """The same between calls: a call's own helper does not work on into the next call's time."""
    code = FORK + "import mmap\nSH = mmap.mmap(-1, 64, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)\n"
    call = ("import os, time\nif x == 0 and posix.fork() == 0:\n    time.sleep(0.3)\n    SH[:4] = b'DONE'\n"
            "    os._exit(0)\ntime.sleep(0.6) if x else None\nresult = bytes(SH[:4])")
    r = run_python(code, SandboxLimits(wall_s=20, cpu_s=5, memory_mb=256, max_processes=3),
                   calls=Calls(call, ({"x": 0}, {"x": 1}), 3.0))
    assert [c.status for c in r.calls] == ["ok", "ok"], r
    assert all("DONE" not in c.value for c in r.calls), r.calls


def test_threads_left_by_the_start_are_an_error(level):
    """A thread of the start would work on beside the fork server outside the calls' clock: the supervisor
    sees it when the start ends, and the run is an error it says so (no call runs)."""
    code = "import threading, time\nthreading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
    r = run_python(code, SandboxLimits(wall_s=20, cpu_s=5, memory_mb=256, max_processes=3),
                   calls=Calls("result = 1", ({},), 3.0))
    assert r.status == "error" and "thread" in r.reason and r.source == "supervisor", r
    assert [c.status for c in r.calls] == ["not run"], r.calls


def test_a_timer_of_the_start_does_no_work_between_calls(level):
    """The start arms an interval timer whose handler counts into a shared mapping: the handler ran in the
    serving process between and during calls, work outside every call's clock (held-out sandbox round 6).
    The serving process blocks every signal and stops its timers; each call gets the start's mask back."""
    code = ("import mmap, signal\nSH = mmap.mmap(-1, 8, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)\n"
            "def tick(*_):\n    SH[0] = (SH[0] + 1) % 256\n"
            "signal.signal(signal.SIGALRM, tick)\nsignal.setitimer(signal.ITIMER_REAL, 0.01, 0.01)\n")
    call = "import time\ntime.sleep(0.3)\nresult = (SH[0], signal.getsignal(signal.SIGALRM) is tick)"
    r = run_python(code, LIM, calls=Calls(call, ({}, {}, {}), 3.0))
    assert [c.status for c in r.calls] == ["ok"] * 3, r
    counts = [eval(c.value)[0] for c in r.calls]
    assert len(set(counts)) == 1, counts  # no tick after the start
    assert all(eval(c.value)[1] for c in r.calls)  # the start's handlers are still the call's


def test_a_call_that_patches_its_exit_ends_at_its_result(level):
    """A call replaced os._exit so that, after its result went out, it worked on into a shared mapping that
    later calls read (held-out sandbox round 6). The serving loop's exit and wait are taken before the program
    runs, and the call's processes are ended when its result is read."""
    code = "import mmap\nSH = mmap.mmap(-1, 8, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)\n"
    call = ("import os, posix, sys, time\nif x == 0:\n    real = os._exit\n"
            "    def linger(code=0):\n        time.sleep(0.3)\n        SH[:4] = b'DONE'\n        real(code)\n"
            "    os._exit = posix._exit = sys.exit = linger\n    result = 'patched'\n"
            "else:\n    time.sleep(0.5)\n    result = bytes(SH[:4])")
    r = run_python(code, LIM, calls=Calls(call, ({"x": 0}, {"x": 1}, {"x": 2}), 3.0))
    assert [c.status for c in r.calls] == ["ok"] * 3, r
    assert all("DONE" not in c.value for c in r.calls), r.calls


def test_a_fork_hook_of_the_program_fails_the_run(level):
    """os.register_at_fork(after_in_parent=...) ran the program's code in the serving process after every fork,
    beside the call and outside every clock (held-out sandbox round 7: 0.6 s of work a later call read). The
    supervisor watches the serving process's own CPU: past the fork server's margin the run is an error."""
    code = ("import os, time\ndef burn():\n    t = time.process_time()\n"
            "    while time.process_time() - t < 0.6:\n        pass\nos.register_at_fork(after_in_parent=burn)\n")
    r = run_python(code, LIM, calls=Calls("result = 1", ({}, {}, {}, {}), 3.0))
    assert r.status == "error" and r.source == "supervisor" and "serving process" in r.reason, r
    assert "not run" in [c.status for c in r.calls], r.calls


def test_many_honest_calls_stay_within_the_servers_margin(level):
    """The margin is the fork server's own work: 60 calls of a process that imported NumPy and SciPy are ok."""
    r = run_python("import numpy, scipy.integrate", LIM,
                   calls=Calls("result = float(numpy.arange(10).sum())", tuple({} for _ in range(60)), 3.0))
    assert r.ok and [c.value for c in r.calls] == ["45.0"] * 60, r


def test_a_large_top_level_stays_within_the_servers_margin(level):
    """Each fork of a worker holding 400 MB copies its page tables (system time in the serving process): only
    the serving process's user time counts against its margin, so 40 honest calls of such a worker are ok."""
    lim = SandboxLimits(wall_s=60, cpu_s=10, memory_mb=1024, max_processes=1)
    r = run_python("grid = bytearray(400 << 20)\nfor i in range(0, len(grid), 4096):\n    grid[i] = 1\n", lim,
                   calls=Calls("result = grid[4096]", tuple({} for _ in range(40)), 5.0))
    assert r.ok and [c.value for c in r.calls] == ["1"] * 40, r
