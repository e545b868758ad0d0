"""Wall-clock bounds of the guards, moved here from tests/ (issue 18): on a loaded 2-core machine these
bounds made the fast test run flaky, so the tests keep the functional assertion (the status, the verdict,
the reason) and this file keeps the clock.

    python -m pytest benchmarks/test_bench_deadlines.py -q

Run it on a quiet machine. Each check re-runs the inputs of a test in tests/ (imported from there, so the
two never drift apart) and holds it to the bound that test used to assert:

- the answer checker: any text < 2 s (hypothesis), unclosed openers linear (< 2 s each), the longest of
  the pathological checks in 4 threads < 8 s, a 0.5 ms symbolic limit returns < 1 s, a limit in threads
  < 60 s in all, and the property tests' per-example deadlines (2-5 s);
- the seven-tag parser on 100 kB inputs < 5 s; safeexpr refuses an attack < 5 s;
- the sandbox: a CPU loop stopped < 4 s (< 5 s when it ignores SIGTERM), a sleep at the wall-clock limit
  < 3 s, an output flood < 3 s, the supervisor alone (the host's kill switched off) < 8 s;
- the LLM judge: a slow endpoint is given up < 5 s, a Retry-After of an hour is capped (< 5 s).
"""
import importlib
import pathlib
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import settings

from verifiers import CheckConfig, check, worker
from verifiers.sandbox import SandboxLimits, run_python

TESTS = pathlib.Path(__file__).resolve().parents[1] / "tests"
sys.path[:0] = [str(TESTS), str(TESTS / "verifiers"), str(TESTS / "procgen")]  # the tests below and judge_double


def _timed(fn, *a, **kw):
    t = time.monotonic()
    out = fn(*a, **kw)
    return time.monotonic() - t, out


# ------------------------------------------------------------------------------- property tests' deadlines

DEADLINES_MS = [  # (module in tests/verifiers/ or tests/procgen/, property test, per-example deadline it had)
    ("test_check", "test_never_raises", 2000),
    ("test_check_guards", "test_arbitrary_text_never_raises", 2000),
    ("test_check_guards", "test_latexish_text_never_raises_inside_a_thread", 3000),
    ("test_procgen", "test_parser_and_oracle_never_raise_on_tag_soup", 2000),
    ("test_safeexpr", "test_any_text_parses_or_raises_exprerror", 2000),
    ("test_steps", "test_never_raises_on_arbitrary_solutions", 3000),
    ("test_steps_handwritten", "test_never_raises_on_notation_soup_in_any_step", 5000),
]


@pytest.mark.parametrize("module,name,ms", DEADLINES_MS, ids=[f"{m}.{n}" for m, n, _ in DEADLINES_MS])
def test_property_tests_within_their_deadline(module, name, ms):
    fn = getattr(importlib.import_module(module), name)
    # a worker's cold start (importing sympy) and building the unit registry happen once per process and
    # are no check's work (the checker's own deadline leaves them out too): done before the clock runs
    worker.pool().warm(1)
    check("5 km/h", "5 m/s")
    # the test runs deadline-free in tests/; here the same examples run with the deadline put back
    fn._hypothesis_internal_use_settings = settings(fn._hypothesis_internal_use_settings, deadline=ms)
    fn()


# ----------------------------------------------------------------------------------------------- checker

def test_unclosed_openers_are_linear():
    from test_check_adversarial import PATHOLOGICAL

    for text in PATHOLOGICAL:
        for ref, kind in (("A", "mcq"), ("5 m", None)):
            dt, _ = _timed(check, text, ref, kind=kind)
            assert dt < 2.0, (text[:20], ref, dt)


def test_longest_pathological_check_in_threads():
    from test_check_adversarial import PATHOLOGICAL

    cases = [(t, "A", "mcq") for t in PATHOLOGICAL] + [(t, "5 m", None) for t in PATHOLOGICAL]
    with ThreadPoolExecutor(4) as ex:
        got = list(ex.map(lambda c: _timed(check, *c), cases * 2))
    assert max(dt for dt, _ in got) < 8.0  # 4 threads on 2 CPUs; a check took 25 s before


def test_a_symbolic_timeout_returns_within_a_second():
    worker.pool().warm(1)
    n = time.time_ns() % 10_000_000  # a text no worker has cached
    dt, v = _timed(check, rf"\boxed{{\frac{{{n}}}{{2}} m v^2 + \sin(x)^{{2}}}}", f"{n}*m*v**2/2 + 1 - cos(x)**2",
                   kind="symbolic", cfg=CheckConfig(timeout_s=0.0005))
    assert v.reason.startswith("timeout") and dt < 1.0


def test_the_limit_inside_threads_in_all():
    cfg = CheckConfig(timeout_s=0.0005)
    fresh = [(rf"\boxed{{\frac{{{i + 907}}}{{2}} m v^2 + \sin(x)^{{2}}}}", f"{i + 907}*m*v**2/2 + sin(x)**2")
             for i in range(6)]
    with ThreadPoolExecutor(max_workers=4) as ex:
        dt, vs = _timed(lambda: list(ex.map(lambda p: check(p[0], p[1], kind="symbolic", cfg=cfg), fresh)))
    assert all("timeout" in v.reason for v in vs) and dt < 60.0  # includes restarting killed workers


# ------------------------------------------------------------------------------------ parsers on big input

def _params(fn):
    """The argument values of a test's @pytest.mark.parametrize."""
    mark = next(m for m in getattr(fn, "pytestmark", []) if m.name == "parametrize")
    return list(mark.args[1])


def test_seventag_large_input_is_fast():
    import test_seventag
    from verifiers.seventag import parse

    for text in _params(test_seventag.test_large_input_is_fast):
        dt, _ = _timed(parse, text)
        assert dt < 5.0, (text[:20], dt)  # catches quadratic blow-up, not jitter


def test_safeexpr_attacks_refused_quickly(tmp_path, monkeypatch):
    from test_safeexpr import ATTACKS
    from verifiers.safeexpr import ExprError, evaluate, parse

    monkeypatch.chdir(tmp_path)
    for text in ATTACKS:
        t = time.monotonic()
        for f in (lambda: parse(text), lambda: evaluate(text, {"x": 1.0, "y": 2.0, "z": 3.0})):
            with pytest.raises(ExprError):
                f()
        assert time.monotonic() - t < 5, text[:40]  # refused quickly, not after building a huge number


# ------------------------------------------------------------------------------------------------ sandbox

@pytest.fixture(params=["auto", "fallback"])
def isolation(request, monkeypatch):
    monkeypatch.setenv("R3BENCH_SANDBOX_ISOLATION", request.param)
    return request.param


@pytest.mark.parametrize("code,limits,bound", [
    ("while True: pass", SandboxLimits(wall_s=2, cpu_s=1, memory_mb=256), 4),
    ("import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True: pass",
     SandboxLimits(wall_s=3, cpu_s=2, memory_mb=256), 5),
    ("import time\ntime.sleep(60)", SandboxLimits(wall_s=1), 3),
    ("import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(60)", SandboxLimits(wall_s=1), 3),
    ("while True: print('y' * 1000)", SandboxLimits(wall_s=1, output_kb=8), 3),
    ("import sys\nwhile True: sys.stdout.write('y' * 65536)", SandboxLimits(wall_s=1, output_kb=8), 3),
], ids=["cpu_loop", "cpu_loop_ignoring_sigterm", "sleep", "sleep_ignoring_sigterm", "print_flood", "write_flood"])
def test_sandbox_stops_runaway_programs_quickly(isolation, code, limits, bound):
    dt, r = _timed(run_python, code, limits)
    assert r.status == "timeout" and dt < bound, (r, dt)


def test_the_supervisor_alone_ends_the_run(monkeypatch):
    import verifiers.sandbox as sb

    monkeypatch.setattr(sb, "_killpg", lambda pgid: None)
    dt, r = _timed(run_python, "import time\ntime.sleep(20)", SandboxLimits(wall_s=1))
    assert r.status == "timeout" and dt < 8, (r, dt)  # wall_s + 2 s and the start


# -------------------------------------------------------------------------------------------------- judge

def test_judge_gives_up_on_a_slow_endpoint_and_caps_retry_after(tmp_path):
    pytest.importorskip("openai")
    from test_judge import GOOD, P, Server

    from verifiers.judge import Judge

    def _judge(url, cache, **kw):  # the judge of tests/verifiers/test_judge.py's cases, against its local server
        return Judge(base_url=url, model="judge-test", api_key="k", cache_dir=cache, backoff_s=0.01, **kw)

    s = Server([("sleep", 3)])
    try:
        dt, v = _timed(_judge(s.url, tmp_path / "a", timeout_s=0.5, retries=1).verify, P.question, P.solution)
        assert v.valid is False and dt < 5
    finally:
        s.close()
    s = Server([("status", 429, 3600), GOOD])
    try:
        dt, v = _timed(_judge(s.url, tmp_path / "b", retries=2, max_retry_after_s=0.2).verify, P.question, P.solution)
        assert v.first_error == 4 and dt < 5
    finally:
        s.close()
