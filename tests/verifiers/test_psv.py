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
    from verifiers.psv import PsvConfig
    monkeypatch.setenv("R3BENCH_PSV_MODEL", tiny)
    v = steps.verify(P.question, P.solution, P.solution, backend="psv")  # no config: PsvConfig.from_env()
    assert v.valid and v.n_steps == 7 and len(v.step_scores) == 7
    assert steps.verify(P.question, "no tags at all", "", backend="psv").first_error == 1
    monkeypatch.delenv("R3BENCH_PSV_MODEL")
    v = steps.verify(P.question, P.solution, "", backend="psv")
    assert v.valid is False and "R3BENCH_PSV_MODEL" in v.explanation
    v = steps.verify(P.question, P.solution, P.solution, backend="psv", config=PsvConfig(model=tiny, threshold=0.0))
    assert v.valid and v.first_error == 0 and len(v.step_scores) == 7
    with pytest.raises(TypeError, match="PsvConfig"):
        steps.verify(P.question, P.solution, "", backend="psv", config=steps.SymbolicConfig())


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
    """r3bench's short name resolves to the tiny model here (no GGUF conversion)."""
    from r3bench.core import models

    monkeypatch.setattr(models, "resolve", lambda name, verify=False: Path(tiny))
    return tiny


def test_short_psv_model_names_are_resolved_on_the_r3bench_side(short_name_is_tiny, monkeypatch, tmp_path, capsys):
    """verifiers.psv loads directories only (it imports nothing of r3bench); r3bench's short names reach
    it resolved where r3bench builds the config: `--model r3-stepco ... verifier=psv,psv_model=r3bench/...`
    (the Scorer), R3BENCH_PSV_MODEL through the Scorer, and `r3bench verify --backend psv` (--psv-model
    or R3BENCH_PSV_MODEL)."""
    import json

    from r3bench.apps import cli
    from r3bench.core import models
    from r3bench.eval.strategies.scorer import Scorer

    assert models.local_path(SHORT) == short_name_is_tiny and models.local_path("some/dir") == "some/dir"
    s = Scorer("psv", psv_model=SHORT, threshold=0.0)
    assert s.config.model == short_name_is_tiny
    r = s.steps(P.question, P.solution, "")
    assert r["valid"] and len(r["scores"]) == 7
    monkeypatch.setenv("R3BENCH_PSV_MODEL", SHORT)
    assert Scorer("psv", threshold=0.0).config.model == short_name_is_tiny
    f = tmp_path / "in.jsonl"
    f.write_text(json.dumps({"question": P.question, "solution": P.solution, "reference": P.solution}) + "\n")
    assert cli.main(["verify", "--backend", "psv", "--jsonl", str(f)]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["valid"] and len(out["step_scores"]) == 7, out


def test_trainers_give_psv_their_resolver(short_name_is_tiny, tmp_path, monkeypatch):
    """A trainer run (stepfix/grpo with verifier=psv) resolves its psv_model (or R3BENCH_PSV_MODEL) short
    name too: trainers.judging.verifier_config builds the PsvConfig with the trainers' model_path, and a
    psv verifier without any model is refused at config load."""
    from trainers import grpo, judging, stepfix
    from trainers.core.config import make
    from trainers.errors import ConfigError

    monkeypatch.delenv("R3BENCH_PSV_MODEL", raising=False)
    for cls in (stepfix.Config, grpo.Config):
        with pytest.raises(ConfigError, match="psv_model"):
            make(cls, verifier="psv")
    cfg = make(stepfix.Config, output_dir=str(tmp_path / "run"), verifier="psv", psv_model=SHORT)
    conf = judging.verifier_config(cfg)
    assert conf.model == short_name_is_tiny
    v = steps.verify(P.question, P.solution, P.solution, backend="psv", config=conf)
    assert v.valid and len(v.step_scores) == 7, v.explanation
    monkeypatch.setenv("R3BENCH_PSV_MODEL", SHORT)
    assert judging.verifier_config(make(grpo.Config, verifier="psv")).model == short_name_is_tiny

class PsvLoaderDouble:
    """A double of psv.PSV's model loading: records the placement it was asked for, loads no model."""

    def __init__(self, path, threshold=0.5, device=None, dtype=None):
        self.path, self.threshold, self.device, self.dtype = path, threshold, device, dtype


def test_two_configs_in_one_process_keep_their_own_placement(monkeypatch):
    """The placement is the config's (no module-level setting a run leaves behind): a PSV config on a GPU in
    bf16 and one with none (the CPU, float32) in one process each load their own PSV, and neither moves the
    other's."""
    from verifiers import psv

    monkeypatch.setattr(psv, "PSV", PsvLoaderDouble)
    monkeypatch.setattr(psv, "_LOADED", {})
    gpu = psv.PsvConfig(model="m", device="cuda:1", dtype="bfloat16")
    cpu = psv.PsvConfig(model="m")
    a, b = psv.load(gpu), psv.load(cpu)
    assert (a.device, a.dtype) == ("cuda:1", "bfloat16")
    assert (b.device, b.dtype) == ("cpu", "float32")
    assert psv.load(gpu) is a and psv.load(cpu) is b and (a.device, a.dtype) == ("cuda:1", "bfloat16")
    assert not hasattr(psv, "set_placement") and not hasattr(psv, "_PLACEMENT")
