"""The sandbox stops or refuses what model-written code must not do, and always says why."""
import os
import socket
import threading

import pytest

from verifiers.sandbox import SandboxLimits, run_python

FAST = SandboxLimits(wall_s=3, cpu_s=1, memory_mb=256)


def _ok(r, status):
    assert r.status == status and r.reason, r
    return r


def test_exact_step_computation():
    r = _ok(run_python("import math\nresult = 2*9.8*math.sin(0.5)\nprint('hi')"), "ok")
    assert r.ok and abs(float(r.value) - 2 * 9.8 * 0.479425538604203) < 1e-9 and r.stdout.strip() == "hi"


def test_sympy_works_inside():
    r = _ok(run_python("import sympy\nx = sympy.Symbol('x')\nresult = str(sympy.diff(x**3, x))",
                       SandboxLimits(memory_mb=1024, wall_s=20, cpu_s=15)), "ok")
    assert r.value == "'3*x**2'"


def test_errors_are_reported():
    assert "SyntaxError" in _ok(run_python("def f(:"), "error").reason
    assert "ZeroDivisionError" in _ok(run_python("1/0"), "error").reason


def test_infinite_loop_is_stopped():
    r = _ok(run_python("while True: pass", FAST), "timeout")
    assert r.seconds < 5


def test_sleeping_forever_hits_the_wall_clock():
    r = _ok(run_python("import time\ntime.sleep(60)", SandboxLimits(wall_s=1)), "timeout")
    assert r.seconds < 4


def test_memory_bomb():
    _ok(run_python("x = bytearray(10**10)", FAST), "memory")
    _ok(run_python("x = []\nwhile True: x.append(' ' * 10**6)", FAST), "memory")


def test_fork_bomb_and_subprocess_are_refused():
    assert "fork" in _ok(run_python("import os\nwhile True: os.fork()", FAST), "refused").reason
    _ok(run_python("import subprocess\nsubprocess.run(['echo', 'hi'])", FAST), "refused")
    _ok(run_python("import os\nos.system('echo hi')", FAST), "refused")


def test_network_is_refused():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(2)
    port = srv.getsockname()[1]
    seen = []
    t = threading.Thread(target=lambda: seen.append(_accept(srv)), daemon=True)
    t.start()
    code = f"import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=1)\ns.sendall(b'x')"
    assert "network" in _ok(run_python(code, FAST), "refused").reason
    t.join(3)
    srv.close()
    assert seen == [None]  # nobody connected


def _accept(srv):
    try:
        return srv.accept()
    except OSError:
        return None


def test_writing_outside_is_refused_inside_is_fine(tmp_path):
    target = tmp_path / "escape.txt"
    r = _ok(run_python("open(path, 'w').write('x')", FAST, inputs={"path": str(target)}), "refused")
    assert "outside" in r.reason and not target.exists()
    _ok(run_python("import os\nos.remove(path)", FAST, inputs={"path": str(tmp_path)}), "refused")
    r = _ok(run_python("open('here.txt', 'w').write('x')\nresult = open('here.txt').read()", FAST), "ok")
    assert r.value == "'x'"


def test_parent_secrets_are_not_visible(monkeypatch):
    monkeypatch.setenv("R3BENCH_TEST_SECRET", "s3cret")
    r = _ok(run_python("import os\nresult = os.environ.get('R3BENCH_TEST_SECRET')"), "ok")
    assert r.value == "None"


def test_output_flood_is_truncated():
    r = _ok(run_python("print('x' * 10**6)", SandboxLimits(output_kb=4)), "ok")
    assert len(r.stdout) < 5000 and "characters cut" in r.stdout


def test_bad_inputs_are_a_result():
    _ok(run_python("result = 1", inputs={"f": object()}), "error")
