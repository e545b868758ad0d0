"""Hard time limits and the worker pool: symbolic comparisons run in killable, isolated worker
subprocesses (no signal.alarm); deadlines count the check's own work; verdicts do not depend on
where the check runs (serially, in 8 threads, in a process pool)."""
import os
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import pytest

from verifiers import CheckConfig, check
from verifiers import worker

SYM = [
    (r"\boxed{\frac{1}{2} m v^2}", "m*v**2/2", True),
    (r"\boxed{m v^2}", "m*v**2/2", False),
    (r"\boxed{2\pi\sqrt{\frac{l}{g}}}", "2*pi*sqrt(l/g)", True),
]

# a mix of ordinary and pathological inputs; every verdict must be the same wherever it is computed
MIXED = [
    (r"\boxed{\frac{1}{2} m v^2}", "m*v**2/2", "symbolic"),
    (r"\boxed{10^{10^{10}}}", "x", "symbolic"),
    (r"\boxed{10^{10^{10}}}", "5 m", None),
    ("(" * 3000, "5 m", None),
    ("x" * 5000, "q_1*q_2/(4*pi*epsilon_0*r**2)", "symbolic"),
    (r"\boxed{\sin(x)^{2}+\cos(x)^{2}}", "1", "symbolic"),
    ("The answer is __import__('os').getcwd()", r"2\pi\sqrt{l/g}", None),
    (r"\boxed{zoo}", r"2\pi\sqrt{l/g}", None),
    ("The answer is nan", "x", None),
    (r"\boxed{\frac{1}{0}}", "5", None),
    (r"\boxed{9^{9^{9}}}", "1", None),
    ("9**9**9", "1", None),
    (r"\boxed{\{1, 2\}}", r"\{2, 1\}", None),
    (r"\boxed{x < 3}", "3 > x", None),
    (r"\boxed{5 m/s)}", "5 m/s", None),
    (r"\boxed{\frac13}", "0.3333", None),
    ("The answer is BD", "B", None),
    (r"\boxed{3/4}", "3", None),
    ("9.8 m/s^2", "9.81 m/s^2", None),
    (r"\boxed{\left(\frac{1}{2}\right)^{1000}}", "0", None),
    (r"\boxed{" + "+".join(["x"] * 150) + "}", "150*x", "symbolic"),
]


# the property is "the same verdict wherever it is computed", not speed: a limit far above any of these
# checks' time (longest threaded one 1.6 s, benchmarks/results/check) so a loaded machine cannot turn one
# into "timeout" (the default limit's worst case is timed in benchmarks/test_bench_deadlines.py)
UNHURRIED = CheckConfig(timeout_s=30.0)


def _sym(args):
    pred, ref, _ = args
    return check(pred, ref, kind="symbolic", cfg=UNHURRIED).equivalent


def _verdict(args):
    pred, ref, kind = args
    v = check(pred, ref, kind=kind, cfg=UNHURRIED)
    return v.equivalent, v.score, v.reason


def test_timeout_gives_reasoned_verdict_and_worker_recovers():
    worker.pool().warm(1)
    n = time.time_ns() % 10_000_000  # a text no worker has cached
    v = check(rf"\boxed{{\frac{{{n}}}{{2}} m v^2 + \sin(x)^{{2}}}}", f"{n}*m*v**2/2 + 1 - cos(x)**2", kind="symbolic",
              cfg=CheckConfig(timeout_s=0.0005))  # returns within 1 s: benchmarks/test_bench_deadlines.py
    assert v.equivalent is False and v.reason.startswith("timeout")
    assert check(r"\boxed{\frac{1}{2} m v^2}", "m*v**2/2", kind="symbolic").equivalent is True


def test_cold_start_is_not_counted_against_the_limit():
    worker.pool().close()
    assert worker.pool().live() == 0
    # a cold worker takes seconds to import sympy; a 1 s limit still holds for the check's own work
    v = check(r"\boxed{\frac{1}{2} m v^2}", "m*v**2/2", kind="symbolic", cfg=CheckConfig(timeout_s=1.0))
    assert v.equivalent is True, v


@pytest.mark.slow
def test_waiting_for_a_worker_is_not_counted_against_the_limit():
    p = worker.Pool(max_workers=1)
    p.warm(1)

    def req(i):  # distinct texts, so that no reply comes from the worker's cache (~0.1 s each)
        return {"op": "compare", "pred": rf"\sin(x)^{{2}}+\cos(x)^{{2}}+\tan(y)^{{2}}+{i}",
                "ref": rf"\sec(y)^{{2}}+{i}", "rel_tol": 1e-2, "sym_tol": 1e-6}
    limit = 1.0
    try:
        # 32 callers (16 finished in 0.87 s on a warm, fast machine: wall > limit did not hold)
        with ThreadPoolExecutor(max_workers=32) as ex:
            t0 = time.monotonic()
            futs = [ex.submit(p.call, req(i), limit) for i in range(32)]
            outs = [f.result(timeout=300) for f in futs]
            wall = time.monotonic() - t0
        # 32 callers shared one worker: the last waited longer than the limit, yet none timed out
        assert wall > limit
        assert all(o["ok"] for o in outs), outs
    finally:
        p.close()


@pytest.mark.slow
def test_pool_grows_to_the_callers():
    p = worker.Pool(max_workers=3)
    req = {"op": "compare", "pred": "x", "ref": "x", "rel_tol": 1e-2, "sym_tol": 1e-6}
    try:
        with ThreadPoolExecutor(max_workers=3) as ex:
            list(ex.map(lambda _: p.call(req, 5.0), range(6)))
        assert 1 <= p.live() <= 3
    finally:
        p.close()
    assert p.live() == 0


@pytest.mark.slow
def test_limit_holds_inside_threads():
    cfg = CheckConfig(timeout_s=0.0005)
    # texts no worker has parsed before (a cached comparison can finish within the limit)
    fresh = [(rf"\boxed{{\frac{{{i + 7}}}{{2}} m v^2 + \sin(x)^{{2}}}}", f"{i + 7}*m*v**2/2 + sin(x)**2", True)
             for i in range(6)]
    with ThreadPoolExecutor(max_workers=4) as ex:
        vs = list(ex.map(lambda p: check(p[0], p[1], kind="symbolic", cfg=cfg), fresh))
    assert all(not v.equivalent and "timeout" in v.reason for v in vs)
    with ThreadPoolExecutor(max_workers=4) as ex:
        assert list(ex.map(_sym, SYM * 2)) == [ok for _, _, ok in SYM * 2]


@pytest.mark.slow
def test_same_verdicts_serially_in_threads_and_in_a_process_pool():
    serial = [_verdict(c) for c in MIXED]
    with ThreadPoolExecutor(max_workers=8) as ex:
        threaded = list(ex.map(_verdict, MIXED))
    assert threaded == serial
    with ProcessPoolExecutor(max_workers=2) as ex:
        pooled = list(ex.map(_verdict, MIXED))
    assert pooled == serial
    assert not any(r.startswith(("timeout", "internal error", "symbolic worker failed")) for _, _, r in serial)


def test_worker_start_failure_is_a_verdict(monkeypatch):
    monkeypatch.setattr(worker._Worker, "start", lambda self, timeout=0: (_ for _ in ()).throw(OSError("no fork")))
    monkeypatch.setattr(worker, "_POOL", worker.Pool(max_workers=1))
    v = check(r"\boxed{x^2}", "x**2", kind="symbolic")
    assert v.equivalent is False and "worker failed" in v.reason


@pytest.mark.skipif(not os.path.exists("/proc/self/environ"), reason="needs Linux /proc")
def test_worker_is_isolated():
    """Empty environment (no API keys), no file writes, a memory cap; stdout is not the protocol."""
    os.environ["R3BENCH_TEST_SECRET"] = "leak-me"
    try:
        p = worker.Pool(max_workers=1)
        p.warm(1)
        w = p._idle[0]
        pid = w.proc.pid
        env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
        assert [e for e in env if e] == [b"PYTHONHASHSEED=0"]
        limits = open(f"/proc/{pid}/limits").read()
        assert any(ln.startswith("Max file size") and ln.split()[3] == "0" for ln in limits.splitlines())
        assert any(ln.startswith("Max address space") and ln.split()[3] != "unlimited" for ln in limits.splitlines())
        assert os.readlink(f"/proc/{pid}/fd/1") == "/dev/null"  # a printed line cannot reach the parent
        assert w.proc.stdout is None
        p.close()
    finally:
        del os.environ["R3BENCH_TEST_SECRET"]


def test_reply_to_another_request_is_refused():
    r, wfd = os.pipe()
    fake = worker._Worker()

    class _Proc:
        stdin = open(os.devnull, "wb")

        def poll(self):
            return None

        def kill(self):
            pass

        def wait(self, timeout=None):
            return 0

    fake.proc, fake.resp_fd = _Proc(), r
    worker._write_msg(wfd, {"id": "not-your-nonce", "ok": True, "why": "forged"})
    with pytest.raises(worker.WorkerError, match="does not match"):
        fake.call({"op": "compare", "pred": "x", "ref": "y"}, 5.0)
    os.close(wfd)
