"""The PSV backend loads a real causal LM and scores every step (tiny random model here)."""
from pathlib import Path

import pytest

from r3bench import procgen
from verifiers import steps
from verifiers.psv import PSV


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


SHORT = "r3bench/smollm2-135m-instruct"


@pytest.fixture
def short_name_is_tiny(tiny, monkeypatch):
    """r3bench's short name resolves to the tiny model here (no GGUF conversion); psv's backend state
    is restored afterwards."""
    import verifiers.psv as psv_mod
    from r3bench.core import models

    monkeypatch.setattr(models, "resolve", lambda name, verify=False: Path(tiny))
    monkeypatch.setattr(psv_mod, "_DEFAULT", None)
    monkeypatch.setattr(psv_mod, "_RESOLVE", None)
    return tiny


def test_short_psv_model_names_are_resolved_on_the_r3bench_side(short_name_is_tiny, monkeypatch):
    """verifiers.psv loads directories only (it imports nothing of r3bench); r3bench's short names reach
    it resolved: `--model r3-stepco ... verifier=psv,psv_model=r3bench/smollm2-135m-instruct` (the
    Scorer), R3BENCH_PSV_MODEL through the Scorer, and R3BENCH_PSV_MODEL through `verify(...,
    backend="psv")` once the r3bench CLI has given its resolver."""
    import verifiers.psv as psv_mod
    from r3bench.apps import cli
    from r3bench.core import models
    from r3bench.eval.strategies.scorer import Scorer

    assert models.local_path(SHORT) == short_name_is_tiny and models.local_path("some/dir") == "some/dir"
    s = Scorer("psv", psv_model=SHORT, threshold=0.0)
    assert s.steps(P.question, P.solution, "")["valid"] and len(s.psv.step_scores(P.question, P.solution)) == 7
    monkeypatch.setenv("R3BENCH_PSV_MODEL", SHORT)
    assert Scorer("psv", threshold=0.0).psv is not None
    with pytest.raises(SystemExit):
        cli.main(["verify", "--help"])
    assert psv_mod._RESOLVE is models.local_path
    v = steps.verify(P.question, P.solution, P.solution, backend="psv")
    assert v.valid and len(v.step_scores) == 7, v.explanation


def test_trainers_give_psv_their_resolver(short_name_is_tiny, tmp_path, monkeypatch):
    """A trainer run (stepfix/grpo with verifier=psv) resolves R3BENCH_PSV_MODEL's short names too:
    run_training hands verifiers.psv the trainers' model_path before it builds anything."""
    import verifiers.psv as psv_mod
    from trainers import sft
    from trainers.core.config import make
    from trainers.core.entry import run_training
    from trainers.core.model import model_path

    cfg = make(sft.Config, output_dir=str(tmp_path / "run"), max_steps=1)

    def build(cfg):
        raise RuntimeError("stop before loading a model")

    with pytest.raises(RuntimeError, match="stop before"):
        run_training(cfg, build)
    assert psv_mod._RESOLVE is model_path
    monkeypatch.setenv("R3BENCH_PSV_MODEL", SHORT)
    v = steps.verify(P.question, P.solution, P.solution, backend="psv")
    assert v.valid and len(v.step_scores) == 7, v.explanation
