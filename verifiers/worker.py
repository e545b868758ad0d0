"""Hard time limits for the unbounded part of checking (sympy), in threads and process pools.

Numeric, integer and MCQ checks run in-process: their inputs are capped (length, exponent, unit
size) and every regex is linear, so they are bounded by construction. Symbolic work is not:
sympy's simplify can run for minutes on small inputs. It goes to a pool of persistent worker
*subprocesses*; a request that runs past its deadline kills its worker, and the next request that
needs one starts a fresh one.

- Deadlines count the check's own work: the clock starts when a started, idle worker has been
  handed to the request - not while waiting for one, and not while a worker imports sympy.
- Warm workers sized to the callers: a worker is started (lazily) when every live one is busy, up
  to ``max_workers`` (``R3BENCH_CHECK_WORKERS``, default min(8, CPUs)); callers beyond that wait.
- The worker is isolated: an empty environment (only PYTHONHASHSEED=0, so that every worker and
  every run orders sets alike and verdicts do not depend on the process), no user site, rlimits on
  address space, file size (0: it cannot write files), processes and core dumps. Its stdout and
  stderr go to /dev/null; verdicts come back on a dedicated pipe as length-prefixed JSON carrying
  the request's random nonce, so nothing the parsing libraries print (and no text of the answer)
  can forge or shift a verdict.

Why subprocesses and not ``signal.alarm`` or ``multiprocessing``: alarms fire only in the main
thread, and daemonic pool workers may not fork ``multiprocessing`` children. ``subprocess.Popen``
works from any thread of any process.
"""
from __future__ import annotations

import json
import os
import secrets
import select
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

from verifiers import symbolic
from verifiers.config import CheckConfig

MEMORY_LIMIT_BYTES = 4 * 1024 ** 3
START_TIMEOUT_S = 120.0  # importing sympy + the LaTeX parser on a loaded machine; not the check's time
MAX_MESSAGE = 1 << 20
_ROOT = str(Path(__file__).resolve().parent.parent)
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from verifiers.worker import _serve; _serve(int(sys.argv[2]))"


class WorkerTimeout(Exception):
    pass


class WorkerError(Exception):
    pass


def _write_msg(fd: int, obj: dict) -> None:
    data = json.dumps(obj).encode("ascii")
    data = struct.pack(">I", len(data)) + data
    while data:
        n = os.write(fd, data)
        data = data[n:]


class _Worker:
    def __init__(self):
        self.proc = None
        self.resp_fd = None
        self._buf = b""

    def start(self, timeout: float = START_TIMEOUT_S):
        r, w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-s", *(["-P"] if sys.version_info >= (3, 11) else []), "-c", _BOOT, _ROOT, str(w)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={"PYTHONHASHSEED": "0"},
                pass_fds=(w,), close_fds=True, cwd="/")
        except BaseException:
            os.close(r)
            raise
        finally:
            os.close(w)
        self.resp_fd, self._buf = r, b""
        got = self._read(time.monotonic() + timeout)
        if got.get("id") != "ready":
            self.kill()
            raise WorkerError("worker did not start")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        if self.proc is not None:
            try:
                self.proc.kill()
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
            for f in (self.proc.stdin,):
                try:
                    f.close()
                except OSError:
                    pass
        if self.resp_fd is not None:
            try:
                os.close(self.resp_fd)
            except OSError:
                pass
        self.proc, self.resp_fd = None, None

    def _read_exact(self, n: int, deadline: float) -> bytes:
        while len(self._buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkerTimeout()
            ready, _, _ = select.select([self.resp_fd], [], [], left)
            if not ready:
                raise WorkerTimeout()
            chunk = os.read(self.resp_fd, 65536)
            if not chunk:
                raise WorkerError("worker exited")
            self._buf += chunk
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def _read(self, deadline: float) -> dict:
        (n,) = struct.unpack(">I", self._read_exact(4, deadline))
        if n > MAX_MESSAGE:
            raise WorkerError("oversized reply")
        return json.loads(self._read_exact(n, deadline))

    def call(self, req: dict, timeout: float) -> dict:
        nonce = secrets.token_hex(8)
        req = dict(req, id=nonce)
        deadline = time.monotonic() + timeout
        try:
            _write_msg(self.proc.stdin.fileno(), req)
            resp = self._read(deadline)
        except WorkerTimeout:
            self.kill()
            raise
        except (OSError, ValueError, struct.error, WorkerError) as e:
            self.kill()
            raise WorkerError(f"{type(e).__name__}: {e}") from None
        if resp.pop("id", None) != nonce:  # a reply to another request: the channel is out of step
            self.kill()
            raise WorkerError("reply does not match the request")
        return resp


class Pool:
    """Workers started on demand up to ``max_workers``; a request takes an idle one or waits."""

    def __init__(self, max_workers: int | None = None):
        if max_workers is None:
            max_workers = int(os.environ.get("R3BENCH_CHECK_WORKERS", "0")) or min(8, os.cpu_count() or 2)
        self.max_workers = max(1, max_workers)
        self._idle: list[_Worker] = []
        self._count = 0
        self._cv = threading.Condition()

    def _acquire(self) -> _Worker:
        with self._cv:
            while True:
                while self._idle:
                    w = self._idle.pop()
                    if w.alive():
                        return w
                    w.kill()
                    self._count -= 1
                if self._count < self.max_workers:
                    self._count += 1
                    break
                self._cv.wait()
        w = _Worker()
        try:
            w.start()
        except (OSError, ValueError, WorkerError, WorkerTimeout) as e:
            w.kill()
            with self._cv:
                self._count -= 1
                self._cv.notify()
            raise WorkerError(f"could not start worker: {type(e).__name__}: {e}") from None
        return w

    def _release(self, w: _Worker):
        with self._cv:
            if w.alive():
                self._idle.append(w)
            else:
                w.kill()
                self._count -= 1
            self._cv.notify()

    def call(self, req: dict, timeout: float, waited: list | None = None) -> dict:
        """Send one request; ``timeout`` counts from the moment a ready worker is ours. ``waited``, when
        given, receives the seconds spent waiting for (or starting) that worker, so that a caller's own
        deadline can leave them out (verifiers.answer does)."""
        t0 = time.monotonic()
        w = self._acquire()
        if waited is not None:
            waited.append(time.monotonic() - t0)
        try:
            return w.call(req, timeout)
        finally:
            self._release(w)

    def warm(self, n: int = 1):
        """Start up to n workers now (so that a first timed check finds one ready)."""
        ws = []
        try:
            for _ in range(min(n, self.max_workers)):
                ws.append(self._acquire())
        finally:
            for w in ws:
                self._release(w)

    def close(self):
        with self._cv:
            idle, self._idle = self._idle, []
            self._count -= len(idle)
        for w in idle:
            w.kill()

    def live(self) -> int:
        return self._count


_POOL: Pool | None = None
_POOL_LOCK = threading.Lock()


def pool() -> Pool:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = Pool()
    return _POOL


def _after_fork():
    # a forked child (ProcessPoolExecutor) must not share the parent's pipes or locks
    global _POOL, _POOL_LOCK
    _POOL, _POOL_LOCK = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def clear_caches(timeout: float = 10.0):
    """Forget parsed expressions in every idle worker (benchmarks use it to time cold predictions)."""
    p = pool()
    with p._cv:  # take the idle workers out of the pool, so that no check uses one meanwhile
        idle, p._idle = p._idle, []
    for w in idle:
        if w.alive():
            try:
                w.call({"op": "clear"}, timeout)
            except (WorkerError, WorkerTimeout):
                pass
        p._release(w)
    _cache_clear()


def symbolic_compare(pred: str, ref: str, timeout: float, rel_tol: float, sym_tol: float) -> dict:
    """{"ok": bool, "why": str, "pc": str|None, "rc": str|None}; raises WorkerTimeout / WorkerError."""
    return pool().call({"op": "compare", "pred": pred, "ref": ref, "rel_tol": rel_tol, "sym_tol": sym_tol},
                       timeout)


def numeric_value(expr: str, timeout: float, waited: list | None = None) -> dict:
    """{"value": float} for a constant expression (\\frac{1}{2}, 2\\pi, \\sqrt{2}), or {"error": reason}."""
    return pool().call({"op": "value", "expr": expr}, timeout, waited)


# --- the work itself (run in the worker, or in-process when CheckConfig.isolate is False) --------

_CACHE: dict = {}
_DEFAULT = CheckConfig()  # the tolerances of a request that names none


def _cache_clear():
    _CACHE.clear()


def _parsed(text: str, equation: str = "auto"):
    """Parsed answer, cached per worker (a reference meets many predictions): object or ParseError."""
    key = (text, equation)
    if key not in _CACHE:
        if len(_CACHE) > 4096:
            _CACHE.clear()
        try:
            _CACHE[key] = symbolic.parse(text, equation=equation)
        except symbolic.ParseError as e:
            _CACHE[key] = e
    return _CACHE[key]


def handle(req: dict) -> dict:
    """Answer one request; never raises for bad answer text."""
    import sympy

    op = req.get("op")
    if op == "clear":
        _cache_clear()
        return {"cleared": True}
    if op == "value":
        e = _parsed(req["expr"])
        if isinstance(e, Exception):
            return {"error": f"unparseable: {e}"}
        try:
            return {"value": symbolic.constant_value(e)}
        except symbolic.ParseError as err:
            return {"error": str(err)}
    if op != "compare":
        return {"error": f"unknown op {op!r}"}
    pred, ref = req["pred"], req["ref"]
    r = _parsed(ref)
    if isinstance(r, Exception):
        return {"ok": False, "why": f"reference unparseable: {r}", "pc": None, "rc": ref[:200], "ref_error": True}
    p = _parsed(symbolic.strip_unit_text(pred), equation="keep" if isinstance(r, sympy.Eq) else "value")
    if isinstance(p, Exception):
        return {"ok": False, "why": f"unparseable: {p}", "pc": pred[:200], "rc": str(r)[:500]}
    ok, why = symbolic.equivalent(p, r, req.get("rel_tol", _DEFAULT.rel_tol),
                                  req.get("sym_tol", _DEFAULT.sym_rel_tol))
    return {"ok": bool(ok), "why": why, "pc": str(p)[:500], "rc": str(r)[:500]}


def _limits():
    try:
        import resource
    except ImportError:
        return
    for lim, val in (("RLIMIT_AS", MEMORY_LIMIT_BYTES), ("RLIMIT_FSIZE", 0), ("RLIMIT_CORE", 0),
                     ("RLIMIT_NPROC", 0)):
        if hasattr(resource, lim):
            try:
                resource.setrlimit(getattr(resource, lim), (val, val))
            except (ValueError, OSError):
                pass


def _read_req(fd: int) -> dict | None:
    def exact(n):
        buf = b""
        while len(buf) < n:
            chunk = os.read(fd, n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf

    head = exact(4)
    if head is None:
        return None
    (n,) = struct.unpack(">I", head)
    body = exact(n) if n <= MAX_MESSAGE else None
    return None if body is None else json.loads(body)


_WARM = (r"\frac{1}{2} m v^2", r"\frac{q_{1} q_2}{4 \pi \epsilon_0 r^2}", r"2\pi\sqrt{\frac{l}{g}}",
         r"x = \frac{v_0^2 \sin 2\theta}{g}", r"\frac{\mu_0 I}{2 \pi r}", r"\sqrt{\frac{G M}{r}}",
         r"3.0 \times 10^{8}", r"\{1, 2\}", r"1 \pm \sqrt{2}", r"x \leq 5", r"2x+4y-3=0", r"[0, 1)",
         r"\tan^2(y)+1", r"e^{-\frac{t}{R C}}", r"\frac{1}{2} k x^{2} + m g h", r"\text{C}", r"28\%")


def _serve(resp_fd: int):
    _limits()
    import sympy  # noqa: F401 - imported before "ready", so start-up is not counted against a check

    for text in _WARM:  # the ANTLR parser builds its DFA lazily: first parses take ~0.5 s each
        try:
            symbolic.equivalent(symbolic.parse(text), symbolic.parse("x"))
        except symbolic.ParseError:
            pass
    _write_msg(resp_fd, {"id": "ready"})
    while True:
        req = _read_req(0)
        if req is None:
            return
        try:
            resp = handle(req)
        except MemoryError:
            resp = {"ok": False, "why": "symbolic comparison ran out of memory", "pc": None, "rc": None}
        except RecursionError:
            resp = {"ok": False, "why": "symbolic comparison too deeply nested", "pc": None, "rc": None}
        except Exception as e:  # noqa: BLE001 - the worker answers every request; the reason is recorded
            resp = {"ok": False, "why": f"symbolic comparison failed: {type(e).__name__}", "pc": None, "rc": None}
        resp["id"] = req.get("id")
        _write_msg(resp_fd, resp)
