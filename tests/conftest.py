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
