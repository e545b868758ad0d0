"""One table of step verifier backends (issue 38): a backend added in ONE file - a function, its config
dataclass and `register(Backend(...))` into verifiers.steps.BACKENDS - reaches verify(), the CLI's
`r3bench verify --backend`, the stepfix and GRPO config validation (and the verifier GRPO's position
reward calls) and the strategies' Best-of-N scorer, with no other list to edit.

The toy backend below is a real one, registered from one file (TOY). Files a newcomer touches to add a
backend: that one (in the repository: a module of verifiers/ plus its `register` line in verifiers/steps.py,
or the function and its row in verifiers/steps.py itself). Before the table: three hand-edited places
(steps.BACKENDS, strategies/scorer.py's VERIFIERS and ORACLE, stepfix's help text), and the backend's settings
read from environment variables with resolvers injected by the CLI and the trainers.
"""
import importlib.util
import json

import pytest
from lm_eval.api.instance import Instance
from lm_eval.api.model import LM

from r3bench import procgen
from r3bench.apps import cli
from r3bench.eval.strategies import BestOfNLM
from r3bench.eval.strategies.scorer import ORACLE, VERIFIERS, Scorer
from trainers import grpo, judging, stepfix
from trainers.core.config import make
from trainers.errors import ConfigError
from verifiers import steps

TOY = '''
from dataclasses import dataclass

from verifiers import seventag
from verifiers.steps import Backend, register
from verifiers.verdict import StepVerdict, at_step


@dataclass(frozen=True)
class ToyConfig:
    marker: str = "??"

    @classmethod
    def from_env(cls, **given):
        return cls(**{k: v for k, v in given.items() if v not in (None, "")})


def toy_verify(question, solution, reference, config=None):
    cfg = config or ToyConfig.from_env()
    sol = seventag.parse(solution or "")
    for k, st in enumerate(sol.steps, start=1):
        if cfg.marker in st.content:
            return at_step(k, f"step {k} holds {cfg.marker!r}", sol.n)
    return StepVerdict(0, None, "no marker", sol.n)


register(Backend("toy", toy_verify, ToyConfig, oracle=False, help="the first step that holds a marker"))
'''


@pytest.fixture()
def toy_backend(tmp_path):
    """The toy backend registered from its one file; removed from the table afterwards."""
    module = tmp_path / "toy_backend.py"
    module.write_text(TOY, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("toy_backend", module)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
        yield mod
    finally:
        steps.BACKENDS.pop("toy", None)


@pytest.fixture(scope="module")
def prob():
    return procgen.generate(n=8, seed=0)[0]


def marked(p):
    """The problem's solution with the toy's marker in its calculation (step 6)."""
    return p.solution.replace("<calculation>", "<calculation>?? ", 1)


class ScriptedLM(LM):
    """TEST DOUBLE of an inner lm-eval model: the n-th call answers script[n]."""

    def __init__(self, script):
        super().__init__()
        self.script, self.n = script, 0

    def generate_until(self, requests, disable_tqdm=False):
        out = []
        for _ in requests:
            out.append(self.script[self.n])
            self.n += 1
        return out

    def loglikelihood(self, requests):
        raise NotImplementedError

    def loglikelihood_rolling(self, requests):
        raise NotImplementedError


def test_a_toy_backend_reaches_verify(toy_backend, prob):
    v = steps.verify(prob.question, marked(prob), "", backend="toy")
    assert (v.first_error, v.error_class) == (6, "CE") and "'??'" in v.explanation
    assert steps.verify(prob.question, prob.solution, "", backend="toy").first_error == 0
    # its config is typed and passed, not read from the environment
    assert steps.verify(prob.question, marked(prob), "", backend="toy", config=toy_backend.ToyConfig(marker="!!")).first_error == 0
    assert steps.config_for("toy", marker="!!") == toy_backend.ToyConfig(marker="!!")
    with pytest.raises(TypeError, match="ToyConfig"):
        steps.verify(prob.question, prob.solution, "", backend="toy", config=steps.SymbolicConfig())
    assert steps.report([{"question": prob.question, "solution": marked(prob), "reference": "", "first_error": 6,
                          "error_class": "CE"}], backend="toy")["first_error_accuracy"] == 1.0


def test_an_unknown_backend_names_the_valid_ones(toy_backend):
    # every backend of the table, the toy among them (not an exact list: the repository may hold more)
    with pytest.raises(ValueError, match=f"have: {', '.join(steps.BACKENDS)}\\)") as got:
        steps.verify("q", "s", "r", backend="nope")
    assert "symbolic, judge, psv" in str(got.value) and str(got.value).endswith(", toy)")
    with pytest.raises(ValueError, match="toy"):
        steps.backend("nope")


def test_a_toy_backend_reaches_the_cli(toy_backend, prob, tmp_path, capsys):
    f = tmp_path / "in.jsonl"
    f.write_text("\n".join(json.dumps({"question": prob.question, "solution": s, "reference": ""})
                           for s in (marked(prob), prob.solution)) + "\n", encoding="utf-8")
    assert cli.main(["verify", "--backend", "toy", "--jsonl", str(f)]) == 0
    got = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.strip()]
    assert [g["first_error"] for g in got] == [6, 0]
    assert cli.main(["verify", "--backend", "nope", "--jsonl", str(f)]) == 2
    assert f"have: {', '.join(steps.BACKENDS)})" in capsys.readouterr().err


@pytest.mark.parametrize("cls", [stepfix.Config, grpo.Config])
def test_a_toy_backend_passes_trainer_config_validation(toy_backend, cls):
    cfg = make(cls, verifier="toy")
    assert judging.verifier_config(cfg) == toy_backend.ToyConfig()
    with pytest.raises(ConfigError, match="'toy'"):
        make(cls, verifier="nope")


def test_a_toy_backend_reaches_the_grpo_position_reward(toy_backend, prob):
    cfg = make(grpo.Config, verifier="toy", rewards="position")
    verifier = grpo.NEEDS["verifier"](cfg)["verifier"]
    assert verifier(prob.question, marked(prob), prob.solution).first_error == 6


def test_a_toy_backend_is_a_best_of_n_scorer(toy_backend, prob):
    assert "toy" in VERIFIERS and "toy" not in ORACLE and "symbolic" in ORACLE
    s = Scorer("toy")
    assert s.oracle is False and s.steps(prob.question, marked(prob), "")["first_error"] == 6
    answers = [marked(prob), prob.solution, marked(prob)]
    lm = BestOfNLM(inner=ScriptedLM(answers), n=3, scorer="toy")
    doc = {"id": prob.id, "question": prob.question, "solution": prob.solution, "answer": prob.answer}
    req = Instance("generate_until", doc, ("Question: " + prob.question + "\nSolution:",
                                           {"until": ["\n\nQuestion:"], "max_gen_toks": 64}), 0, ("r3_procgen", 0, 1))
    assert lm.generate_until([req]) == [prob.solution]
    assert lm.settings()["scorer"] == "toy" and lm.settings()["oracle_verifier"] is False
