"""The PSV backend loads a real causal LM and scores every step (tiny random model here)."""
import pytest

from r3bench import procgen
from r3bench.core.models import build_tiny
from verifiers import steps
from verifiers.psv import PSV


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return str(build_tiny(tmp_path_factory.mktemp("psv")))


P = procgen.generate(n=5, seed=0)[0]


def test_scores_every_step_and_thresholds(tiny):
    psv = PSV(tiny, threshold=0.0)  # nothing is below 0: no error
    s = psv.step_scores(P.question, P.solution)
    assert len(s) == 7 and all(0.0 < x < 1.0 for x in s)
    v = psv.verify(P.question, P.solution)
    assert v.first_error == 0 and v.step_scores == tuple(s)
    strict = PSV(tiny, threshold=1.0)  # everything is below 1: the first step is the error
    v = strict.verify(P.question, P.solution)
    assert (v.first_error, v.error_class) == (1, "MC") and "does not classify" in v.explanation
    cut = sorted(s)[3]  # a threshold between scores: the first step under it is reported
    v = PSV(tiny, threshold=cut).verify(P.question, P.solution)
    assert v.first_error == next(k for k, x in enumerate(s, 1) if x < cut)


def test_backend_from_env_and_bad_input(tiny, monkeypatch):
    import verifiers.psv as psv_mod
    monkeypatch.setenv("R3BENCH_PSV_MODEL", tiny)
    monkeypatch.setattr(psv_mod, "_DEFAULT", None)
    v = steps.verify(P.question, P.solution, P.solution, backend="psv")
    assert v.valid and v.n_steps == 7 and len(v.step_scores) == 7
    assert steps.verify(P.question, "no tags at all", "", backend="psv").first_error == 1
    monkeypatch.delenv("R3BENCH_PSV_MODEL")
    monkeypatch.setattr(psv_mod, "_DEFAULT", None)
    v = steps.verify(P.question, P.solution, "", backend="psv")
    assert v.valid is False and "R3BENCH_PSV_MODEL" in v.explanation


def test_step_index_and_class_come_from_the_same_tag(tiny):
    """Without problem_analysis, the first present step (principle) was reported as step 1 with class MC:
    the index from the document, the class from the fixed map. Now a broken format is FORMAT at the
    missing tag's position, and a scored step's index and class both come from its tag."""
    no_pa = P.solution.split("</problem_analysis>", 1)[1]
    v = PSV(tiny, threshold=1.0).verify(P.question, no_pa)
    assert (v.first_error, v.error_class) == (1, "FORMAT") and "problem_analysis" in v.explanation
    v = PSV(tiny, threshold=1.0).verify(P.question, P.solution)
    assert (v.first_error, v.error_class) == (1, "MC") and "<problem_analysis>" in v.explanation
