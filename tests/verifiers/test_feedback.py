"""The three feedback channels on injected MC / CM / CE solutions of the procedural bank."""
import pytest

from r3bench import procgen
from verifiers import feedback as fb
from verifiers.steps import verify


def test_mc_feedback_points_back_to_the_problem(injected_case):
    p, text, v = injected_case("kin_distance_const_accel", "MC", 4)
    f = fb.feedback(p.question, text, v, p.solution)
    assert f.error_class == "MC" and "step 4" in f.text and p.question.strip() in f.text


@pytest.fixture(scope="module")
def formula_store(tmp_path_factory):
    d = tmp_path_factory.mktemp("chroma")
    fb._STORE = fb.FormulaStore(d)
    yield d
    fb._STORE = None


@pytest.mark.slow
def test_cm_feedback_retrieves_the_formula_that_applies(formula_store, injected_case):
    p, text, v = injected_case("thermo_diatomic_heating", "CM", 3)  # monatomic C_v used for a diatomic gas
    f = fb.feedback(p.question, text, v, p.solution)
    assert f.error_class == "CM" and len(f.evidence["retrieved"]) == 3
    assert any(h["topic"] == "thermodynamics" for h in f.evidence["retrieved"])
    assert any("diatomic" in (h["name"] + h["validity"]).lower() for h in f.evidence["retrieved"]), f.evidence
    # persistent: a new client on the same folder, embedding function given again, same corpus
    again = fb.FormulaStore(formula_store)
    assert again.col.count() == fb._STORE.col.count() >= 150


def test_no_error_no_feedback():
    p = procgen.generate(n=5, seed=1)[0]
    f = fb.feedback(p.question, p.solution, verify(p.question, p.solution, p.solution))
    assert f.error_class is None and f.step == 0
