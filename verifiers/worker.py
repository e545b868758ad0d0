"""Hard time limits for the unbounded part of checking (sympy), safe in threads and process pools.

Numeric, integer and MCQ checks run in-process: their inputs are capped (length, exponent, unit
size) and every regex is linear, so they are bounded by construction. Symbolic equivalence is not:
sympy's parser and simplify can run for minutes on small inputs. Those comparisons go to a
persistent worker *subprocess* (`python -m verifiers.worker`) over line-delimited JSON on its pipes.
A request that runs past its deadline kills the worker; the next request starts a fresh one.

Why a subprocess and not `signal.alarm` or `multiprocessing`: alarms only fire in the main
thread (a threaded RL trainer would crash or silently get no timeout), and daemonic pool workers may
not fork `multiprocessing` children. `subprocess.Popen` works from any thread of any process.

The worker also caps its own address space (RLIMIT_AS) so that a blow-up cannot take the machine.
"""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time

MEMORY_LIMIT_BYTES = 4 * 1024 ** 3


class WorkerTimeout(Exception):
    pass


class WorkerError(Exception):
    pass


class _Worker:
    def __init__(self):
        self.proc = None
        self.lock = threading.Lock()

    def _start(self):
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "verifiers.worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=env, bufsize=0, close_fds=True)
        self._buf = b""

    def _kill(self):
        if self.proc is not None:
            try:
                self.proc.kill()
                self.proc.wait(timeout=5)
            except Exception:  # already gone
                pass
        self.proc = None

    def _readline(self, deadline):
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkerTimeout()
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                raise WorkerTimeout()
            chunk = os.read(fd, 65536)
            if not chunk:
                raise WorkerError("worker exited")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line

    def call(self, req: dict, timeout: float) -> dict:
        with self.lock:
            deadline = time.monotonic() + timeout
            try:
                if self.proc is None or self.proc.poll() is not None:
                    self._start()
                self.proc.stdin.write((json.dumps(req) + "\n").encode())
                self.proc.stdin.flush()
                return json.loads(self._readline(deadline))
            except WorkerTimeout:
                self._kill()
                raise
            except (OSError, ValueError, WorkerError) as e:
                self._kill()
                raise WorkerError(f"{type(e).__name__}: {e}") from None


class _Pool:
    """A few workers, so that threads checking at once do not queue behind one sympy call."""

    def __init__(self, size: int = 2):
        self.workers = [_Worker() for _ in range(size)]
        self._next = 0
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def call(self, req, timeout):
        if os.getpid() != self._pid:  # forked child: do not share the parent's pipes
            self.__init__(len(self.workers))
        for w in self.workers:  # an idle worker first
            if w.lock.acquire(blocking=False):
                w.lock.release()
                return w.call(req, timeout)
        with self._lock:
            w = self.workers[self._next % len(self.workers)]
            self._next += 1
        return w.call(req, timeout)

    def close(self):
        for w in self.workers:
            with w.lock:
                w._kill()


_POOL: _Pool | None = None
_POOL_LOCK = threading.Lock()


def pool() -> _Pool:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = _Pool(int(os.environ.get("R3BENCH_SYMPY_WORKERS", "2")))
    return _POOL


def clear_caches(timeout: float = 10.0):
    """Forget parsed expressions in every live worker (benchmarks use it to time cold predictions)."""
    p = pool()
    for w in p.workers:
        if w.proc is not None and w.proc.poll() is None:
            w.call({"op": "clear"}, timeout)


def symbolic_compare(pred: str, ref: str, timeout: float) -> dict:
    """{"ok": bool, "why": str, "pc": str|None, "rc": str|None}; raises WorkerTimeout / WorkerError."""
    return pool().call({"pred": pred, "ref": ref}, timeout)


def numeric_value(expr: str, timeout: float) -> dict:
    """{"value": float} for a constant expression (\\frac{1}{2}, 2\\pi, \\sqrt{2}), or {"error": reason}."""
    return pool().call({"op": "value", "expr": expr}, timeout)


# --- the worker side -----------------------------------------------------------------------------

def _value(parsed, expr):
    try:
        e = parsed(expr)
    except ValueError as err:
        return {"error": f"unparseable: {err}"}
    if e.free_symbols:
        return {"error": "expression has free symbols: " + ", ".join(sorted(s.name for s in e.free_symbols))[:100]}
    try:
        v = complex(e.evalf())
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return {"error": "expression does not evaluate to a number"}
    if abs(v.imag) > 1e-12 * max(1.0, abs(v.real)):
        return {"error": "expression is complex"}
    return {"value": v.real}


def _serve():
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    except (ImportError, ValueError, OSError):
        pass
    import functools

    from verifiers import symbolic

    @functools.lru_cache(maxsize=2048)
    def parsed(s):  # the reference is parsed once per worker, however many predictions it meets
        return symbolic.parse_expr(s)

    out = sys.stdout
    for line in sys.stdin:
        try:
            req = json.loads(line)
            if req.get("op") == "clear":
                parsed.cache_clear()
                out.write(json.dumps({"cleared": True}) + "\n")
                out.flush()
                continue
            if req.get("op") == "value":
                resp = _value(parsed, req["expr"])
                out.write(json.dumps(resp) + "\n")
                out.flush()
                continue
            try:
                pe, re_ = parsed(req["pred"]), parsed(req["ref"])
            except ValueError as e:
                resp = {"ok": False, "why": f"unparseable: {e}", "pc": req["pred"][:200], "rc": req["ref"][:200]}
            else:
                ok, why = symbolic.equivalent(pe, re_)
                resp = {"ok": bool(ok), "why": why, "pc": str(pe)[:500], "rc": str(re_)[:500]}
        except MemoryError:
            resp = {"ok": False, "why": "symbolic comparison ran out of memory", "pc": None, "rc": None}
        except Exception as e:  # noqa: BLE001 - the worker answers every request
            resp = {"ok": False, "why": f"symbolic comparison failed: {type(e).__name__}", "pc": None, "rc": None}
        out.write(json.dumps(resp) + "\n")
        out.flush()


if __name__ == "__main__":
    _serve()
