import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The benchmark data directory: $R3BENCH_DATA_DIR, else ../shared/data beside the repo."""
    p = Path(os.environ.get("R3BENCH_DATA_DIR") or REPO.parent / "shared" / "data")
    if not p.is_dir():
        pytest.fail(f"benchmark data directory not found at {p}: set R3BENCH_DATA_DIR")
    return p


@pytest.fixture(scope="session")
def injected_case():
    """(problem, injected solution, verdict) for a template, error class and step (procedural bank)."""
    from r3bench import procgen
    from verifiers.steps import verify

    probs = procgen.generate(n=3 * len(procgen.TEMPLATES), seed=4)

    def make(template, cls, step):
        p = next(p for p in probs if p.template == template)
        text, fe, c, why = procgen.inject_problem(p, cls, step)
        v = verify(p.question, text, p.solution)
        assert (v.first_error, v.error_class) == (step, cls)
        return p, text, v
    return make


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """A tiny random chat model (r3bench.core.models.build_tiny), built once per session and shared read-only
    by every test that needs one (tests that need the folder under a particular name build their own)."""
    from r3bench.core import models

    return str(models.build_tiny(tmp_path_factory.mktemp("tiny") / "m"))


@pytest.fixture(scope="session")
def data(tmp_path_factory):
    """A small procedural-bank export (n 60, seed 1), read-only for the tests that use it."""
    from r3bench.procgen.export import export

    d = tmp_path_factory.mktemp("data")
    export(d, n=60, seed=1, log=lambda *a: None)
    return str(d)


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    """A real OpenAI-compatible HTTP server with a real model: llama-cpp-python's server (the test
    extra installs it; pip builds llama.cpp from source) serving the packaged SmolLM2 GGUF on a free
    loopback port. Yields its base URL (".../v1"); stopped at the end of the session."""
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    from r3bench.core import models

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path_factory.mktemp("llama") / "server.log"
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(models.gguf_path()), "--host", "127.0.0.1",
           "--port", str(port), "--n_ctx", "4096", "--n_threads", "2", "--chat_format", "chatml",
           "--model_alias", "smollm2-gguf"]
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(url + "/models", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"llama-cpp-python's server did not start (exit {proc.poll()}):\n"
                        f"{log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.5)
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
