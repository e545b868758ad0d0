import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# the trainers' `bf16: auto` trains in bf16 on a CPU with AMX-BF16 (trainers.core.model.cpu_bf16_native): the
# tests run fp32 on every machine, so that their numbers do not depend on the CPU (the bf16 path's own tests
# set this to 1); child processes the tests start inherit it
os.environ.setdefault("R3BENCH_CPU_BF16", "0")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The benchmark data directory: $R3BENCH_DATA_DIR, else ../shared/data beside the repo.

    Absent, a test that needs it is skipped with a one-line reason - unless R3BENCH_REQUIRE_DATA=1
    (.ci/run sets it: CI has the data, and a skip there would hide a broken data path), then it fails."""
    p = Path(os.environ.get("R3BENCH_DATA_DIR") or REPO.parent / "shared" / "data")
    if not p.is_dir():
        msg = f"benchmark data directory not found at {p.name}/ (set R3BENCH_DATA_DIR to the data folder)"
        if os.environ.get("R3BENCH_REQUIRE_DATA") == "1":
            pytest.fail(msg + "; R3BENCH_REQUIRE_DATA=1 makes this an error")
        pytest.skip(msg)
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
    loopback port (r3bench.core.models.serve_gguf). Yields its base URL (".../v1")."""
    from r3bench.core import models

    log = tmp_path_factory.mktemp("llama") / "server.log"
    threads = int(os.environ.get("R3BENCH_TEST_THREADS", "2"))  # .ci/variations runs the suite at others
    try:
        with models.serve_gguf(log=log, threads=threads) as url:
            yield url
    except models.ModelError as e:
        pytest.fail(str(e))
