"""Hard time limits: symbolic comparisons run in a killable worker subprocess (no signal.alarm)."""
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

from verifiers import CheckConfig, check
from verifiers import worker

SYM = [
    (r"\boxed{\frac{1}{2} m v^2}", "m*v**2/2", True),
    (r"\boxed{m v^2}", "m*v**2/2", False),
    (r"\boxed{2\pi\sqrt{\frac{l}{g}}}", "2*pi*sqrt(l/g)", True),
]


def _sym(args):
    pred, ref, _ = args
    return check(pred, ref, kind="symbolic").equivalent


def test_timeout_gives_reasoned_verdict_and_worker_recovers():
    worker.pool().close()  # cold workers: the first request cannot finish in 1 ms
    t0 = time.monotonic()
    v = check(r"\boxed{\frac{1}{2} m v^2}", "m*v**2/2", kind="symbolic", cfg=CheckConfig(timeout_s=0.001))
    assert time.monotonic() - t0 < 1.0
    assert v.equivalent is False and v.reason.startswith("timeout")
    assert check(r"\boxed{\frac{1}{2} m v^2}", "m*v**2/2", kind="symbolic").equivalent is True


def test_limit_holds_inside_threads():
    cfg = CheckConfig(timeout_s=0.001)
    worker.pool().close()
    with ThreadPoolExecutor(max_workers=4) as ex:
        t0 = time.monotonic()
        vs = list(ex.map(lambda p: check(p[0], p[1], kind="symbolic", cfg=cfg), SYM * 2))
        assert time.monotonic() - t0 < 3.0
    assert all(not v.equivalent and "timeout" in v.reason for v in vs)
    with ThreadPoolExecutor(max_workers=4) as ex:
        assert list(ex.map(_sym, SYM * 2)) == [ok for _, _, ok in SYM * 2]


def test_checks_inside_a_process_pool():
    check(*SYM[0][:2], kind="symbolic")  # the parent's worker exists before the fork
    with ProcessPoolExecutor(max_workers=2) as ex:
        assert list(ex.map(_sym, SYM * 2)) == [ok for _, _, ok in SYM * 2]


def test_worker_crash_is_a_verdict(monkeypatch):
    monkeypatch.setattr(worker._Worker, "_start", lambda self: (_ for _ in ()).throw(OSError("no fork")))
    worker.pool().close()
    v = check(r"\boxed{x^2}", "x**2", kind="symbolic")
    assert v.equivalent is False and "worker failed" in v.reason
