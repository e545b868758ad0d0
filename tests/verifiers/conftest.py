"""Fixtures shared by the verifier tests (tests/verifiers/): the sandbox's isolation levels and a local
TCP server for its network tests."""
import os
import socket
import threading

import pytest

from verifiers.sandbox import FALLBACK, probe


REQUIRE_VAR = "R3BENCH_REQUIRE_SANDBOX"  # .ci/run sets it: on CI's machine a weaker sandbox is a failure


def ns_level(monkeypatch):
    """The namespaces+seccomp level (R3BENCH_SANDBOX_ISOLATION=auto), or a skip with the probe's reason -
    unless R3BENCH_REQUIRE_SANDBOX=namespaces+seccomp (as in CI), then a failure: a machine whose sandbox
    lost a namespace or seccomp must not pass by skipping the tests that would notice."""
    monkeypatch.setenv("R3BENCH_SANDBOX_ISOLATION", "auto")
    info = probe()
    if info["level"] != "namespaces+seccomp":
        msg = f"namespaces+seccomp are not available here: {info['why']}"
        if os.environ.get(REQUIRE_VAR, "").strip() == "namespaces+seccomp":
            pytest.fail(f"{msg}; {REQUIRE_VAR}=namespaces+seccomp makes this an error")
        pytest.skip(msg)
    return info["level"]


@pytest.fixture
def ns(monkeypatch):
    """A test that needs the namespaces+seccomp level."""
    return ns_level(monkeypatch)


@pytest.fixture(params=["ns", "fallback"])
def level(request, monkeypatch):
    """Each test at both levels: namespaces+seccomp (skipped where absent) and the fallback. A test named in
    its module's FALLBACK_MISSES (name without "test_" -> why, or (why, strict)) is an expected failure
    at the fallback level (strict unless said otherwise)."""
    if request.param == "fallback":
        monkeypatch.setenv("R3BENCH_SANDBOX_ISOLATION", "fallback")
        misses = getattr(request.module, "FALLBACK_MISSES", {})
        name = request.node.originalname.removeprefix("test_")
        if name in misses:
            why, strict = misses[name] if isinstance(misses[name], tuple) else (misses[name], True)
            request.applymarker(pytest.mark.xfail(strict=strict, reason="fallback level: " + why))
        return FALLBACK
    return ns_level(monkeypatch)


@pytest.fixture
def server():
    """A real TCP server on 127.0.0.1 that records every connection and every byte it receives: yields
    (port, seen), one entry in seen per accepted connection (its first bytes, b"" if none)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.1)
    seen, stop = [], threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            conn.settimeout(0.5)
            try:
                seen.append(conn.recv(100))
            except OSError:
                seen.append(b"")
            conn.close()
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1], seen
    stop.set()
    t.join(2)
    srv.close()
