"""The trainers as config/trainer pairs (issue 18, item 4 and the trainer bullets of item 8): one entry
helper, StepFixTrainer a module-level class, the timing mixin shared by stepfix and GRPO, one name for
the KL coefficient (old names still load, with a warning), light imports for --help, the default
end-of-run evaluation off with its cost stated, and each trainer's --help saying what its long steps
cost. Nothing here trains a model."""
from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from trainers import dpo, grpo, psv, sft, stepfix
from trainers.core import entry as entry_room
from trainers.core import mixins, records
from trainers.core.config import eval_cost_note, field_names, make, parse
from trainers.core.evaluation import no_eval_note
from trainers.core.mixins import GuardMixin, TimingMixin
from trainers.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
MODULES = {"sft": sft, "dpo": dpo, "psv": psv, "grpo": grpo, "stepfix": stepfix}


def test_importing_the_trainers_loads_neither_torch_nor_transformers():
    code = ("import sys; import trainers.sft, trainers.dpo, trainers.grpo, trainers.psv, trainers.stepfix; "
            "print(sorted(m for m in ('torch', 'transformers', 'trl') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 0, r.stderr[-1500:]
    assert r.stdout.strip() == "[]"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_trainer_uses_the_shared_entry(name):
    mod = MODULES[name]
    assert mod.main.__module__ == mod.__name__ and mod.main.__qualname__ == "main"
    assert mod.train.__code__ is sft.train.__code__  # trainers.core.entry's train, not a copy of the tail
    assert mod.Config.costs, "say what the long steps cost"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_help_says_what_the_long_steps_cost(name, capsys):
    with pytest.raises(SystemExit):
        MODULES[name].main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "usage: python -m trainers." + name in text
    assert "Cost" in text and "%%" not in text
    if name != "psv":  # a PSV is a verifier: lm-eval does not score it
        assert "End-of-run evaluation: off by default" in text and "5 problems x 512 tokens (~23 min" in text


def test_stepfix_trainer_is_a_module_level_class():
    torch = pytest.importorskip("torch")  # noqa: F841
    pytest.importorskip("transformers")
    from trainers.stepfix_trainer import StepFixTrainer

    assert StepFixTrainer.__module__ == "trainers.stepfix_trainer" and StepFixTrainer.__qualname__ == "StepFixTrainer"
    assert stepfix.StepFixTrainer is StepFixTrainer
    mro = StepFixTrainer.__mro__
    assert mro.index(TimingMixin) < mro.index(GuardMixin)  # the guard's check is inside the timed step
    assert StepFixTrainer.r3_phases == ("generate", "verify", "feedback", "forward", "ref_forward", "backward")
    assert not hasattr(stepfix, "_make_trainer_class")


def test_grpo_and_stepfix_share_the_timing_mixin():
    assert issubclass(grpo.GRPOPhases, TimingMixin)
    assert grpo.GRPOPhases.r3_phases == ("generate", "verify", "rest")


class _FakeTrainer:
    """What TimingMixin needs of an HF Trainer: training_step and log."""

    def __init__(self, step_work=None):
        self.logged = []
        self.step_work = step_work

    def training_step(self, model, inputs, num_items_in_batch=None):
        self.step_work(self)
        return 1.0

    def log(self, logs, start_time=None):
        self.logged.append(dict(logs))


class _Timed(TimingMixin, _FakeTrainer):
    r3_phases = ("generate", "verify", "rest")


def test_timing_mixin_gives_the_rest_of_a_step_to_the_last_phase(monkeypatch):
    clock = iter([0.0, 10.0])  # training_step starts at 0 and ends at 10
    monkeypatch.setattr(mixins.time, "perf_counter", lambda: next(clock))
    times = defaultdict(float)

    def work(t):
        t.r3_times["generate"] += 6.0
        t.r3_times["verify"] += 1.0

    t = _Timed(work, r3_times=times)
    assert t.r3_times is times  # shared with helpers (GRPO's reward wrappers)
    t.training_step(None, None)
    t.log({"loss": 1.0})
    t.log({"train_runtime": 3.0})  # not a training log: no times
    first = t.logged[0]
    assert first["time_generate_s"] == 6.0 and first["time_verify_s"] == 1.0 and first["time_rest_s"] == 3.0
    assert first["share_generate"] == pytest.approx(0.6) and "time_step_s" not in first
    assert t.logged[1] == {"train_runtime": 3.0}
    assert not any(times.values())  # restarted after the training log


def test_timing_mixin_logs_the_whole_step_when_asked(monkeypatch):
    clock = iter([0.0, 4.0])
    monkeypatch.setattr(mixins.time, "perf_counter", lambda: next(clock))

    class T(_Timed):
        r3_phases = ("generate", "backward")
        r3_log_step_time = True

    t = T(lambda t: t.r3_times.__setitem__("generate", 1.0))
    t.training_step(None, None)
    t.log({"loss": 0.5})
    assert t.logged[0]["time_step_s"] == 4.0 and t.logged[0]["time_backward_s"] == 3.0


# ------------------------------------------------------------------------------- KL coefficient

@pytest.mark.parametrize("mod,old,value", [(grpo, "kl_coef", 0.02), (dpo, "tau", 0.3)])
def test_the_kl_coefficient_is_beta_and_the_old_name_still_loads(mod, old, value, tmp_path):
    names = {f.name for f in __import__("dataclasses").fields(mod.Config)}
    assert "beta" in names and old not in names
    assert old in field_names(mod.Config)
    with pytest.warns(FutureWarning, match=f"'{old}' is the old name of 'beta'"):
        assert make(mod.Config, **{old: value}).beta == value
    y = tmp_path / "c.yaml"
    y.write_text(f"{old}: {value}\n")
    with pytest.warns(FutureWarning):
        assert parse(mod.Config, ["--config", str(y)]).beta == value
    with pytest.warns(FutureWarning):
        assert parse(mod.Config, [f"--{old}", str(value)]).beta == value
    with pytest.raises(ConfigError, match="both"):
        make(mod.Config, **{old: value, "beta": value})


def test_stepfix_keeps_tau_as_its_skip_threshold():
    assert stepfix.Config().tau == 0.9 and stepfix.Config.renamed == {}
    assert make(stepfix.Config, tau=0.5, beta=0.2).beta == 0.2


@pytest.mark.parametrize("name", ["dpo", "grpo", "grpo_pde"])
def test_shipped_configs_use_beta(name):
    text = (REPO / "trainers" / "configs" / f"{name}.yaml").read_text()
    assert "\nbeta:" in text and "kl_coef" not in text and "\ntau:" not in text


# ---------------------------------------------------------------------------------- evaluation

def test_default_end_of_run_evaluation_is_off_and_its_cost_is_stated():
    cfg = sft.Config()
    assert cfg.eval_tasks == ""  # 5 problems x 512 tokens are ~23 min on a shared 2-core CPU
    note = no_eval_note(cfg, "BASE", Path("runs/sft/final"))
    assert "lm_eval --model hf --model_args pretrained=BASE,peft=runs/sft/final --tasks r3_procgen" in note
    assert "--eval_tasks r3_procgen --eval_limit 5" in note and "5 problems x 512 tokens (~23 min" in note
    assert "4 problems x 256 tokens (~9 min" in eval_cost_note(
        make(sft.Config, eval_tasks="r3_procgen", eval_limit=4, eval_max_gen_toks=256))
    assert psv.Config.scored_by_lm_eval is False


@pytest.mark.parametrize("name", ["sft", "dpo", "stepfix", "grpo", "grpo_pde"])
def test_shipped_configs_do_not_evaluate_by_default_and_say_what_it_costs(name):
    text = (REPO / "trainers" / "configs" / f"{name}.yaml").read_text()
    assert "\neval_tasks:" not in text and "# eval_tasks:" in text and "2-core CPU" in text
    if name != "sft":
        assert "python -m trainers.sft " in text  # the command that makes the SFT adapter it needs


# --- rewards report failure as data (issue 18 item 3) ---------------------------------------------

def test_grpo_rewards_are_the_verifiers_registry_plus_pde():
    from trainers import grpo
    from verifiers.rewards import REWARDS

    assert set(grpo.REWARD_FACTORIES) - set(REWARDS) == {"pde"}  # no GRPO name outside the registry
    assert set(REWARDS) <= set(grpo.REWARD_FACTORIES)  # every registry name a GRPO reward (pspo_piecewise was not)


@pytest.mark.parametrize("name", sorted(__import__("verifiers.rewards", fromlist=["REWARDS"]).REWARDS))
def test_every_registry_reward_builds_from_a_grpo_config_and_scores(name, monkeypatch):
    """Each REWARDS entry built from a GRPO config (its required inputs from grpo.NEEDS) and called the way
    TRL calls it, with the columns grpo.dataset gives (a double of the PSV model for the step scorers)."""
    from types import SimpleNamespace

    from r3bench.procgen import generate
    from verifiers.rewards import RewardFunc

    monkeypatch.setattr(grpo, "PSV", lambda path, **placement: SimpleNamespace(step_scores=lambda q, s: [0.9, 0.8]))
    cfg = make(grpo.Config, rewards=name, psv_model="psv-double")
    fn = grpo.REWARD_FACTORIES[name](cfg)
    assert isinstance(fn, RewardFunc)
    p = generate(n=1, seed=0)[0]
    out = fn(prompts=[[{"role": "user", "content": p.question}]], completions=[[{"role": "assistant",
             "content": p.solution}]], question=[p.question], reference=[p.solution], answer=[str(p.answer)])
    assert len(out) == 1 and fn.last_results[0].ok, fn.last_results


def test_a_reward_needing_a_psv_model_says_so_at_config_load():
    for name in ("pspo_wrs", "pspo_piecewise"):
        with pytest.raises(ConfigError, match=f"the {name} reward needs psv_model"):
            make(grpo.Config, rewards=name)


@pytest.mark.parametrize("cls,field,bad,valid", [
    (grpo.Config, "verifier", "symbolc", "['judge', 'psv', 'symbolic']"),
    (grpo.Config, "loss_type", "grp", "'dr_grpo'"),
    (dpo.Config, "loss_type", "ipoo", "'sigmoid'"),
    (sft.Config, "lr_scheduler", "cosin", "'cosine_with_restarts'"),
    (stepfix.Config, "verifier", "judg", "['judge', 'psv', 'symbolic']"),
])
def test_a_misspelt_name_fails_at_config_load_with_the_valid_names(cls, field, bad, valid):
    """GRPO's verifier typo made every reward None (a run on no signal); loss types and schedulers failed at
    the first optimizer step, after data export and model loads."""
    with pytest.raises(ConfigError, match=rf"{field} must be one of .*{re.escape(valid)}.*got '{bad}'"):
        make(cls, **{field: bad})
    make(cls)  # the default is one of the valid names


# ------------------------------------------------------------------------------- the core's rooms

CORE = REPO / "trainers" / "core"
# bottom up: a room imports only rooms before it (trainers/core/__init__.py says the same)
ROOMS = ("upstream", "config", "data", "model", "memory", "evaluation", "mixins", "records", "entry")
TRAINER_MODULES = ("sft", "dpo", "grpo", "psv", "stepfix", "stepfix_trainer", "stepfix_loss", "generation", "rag", "rl_sampling")


def _first_party_imports(path: Path) -> set:
    got = set()
    for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(n, ast.Import):
            got |= {a.name for a in n.names if a.name.startswith("trainers")}
        elif isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("trainers"):
            got |= {n.module} | {f"{n.module}.{a.name}" for a in n.names}
    return got


def test_the_core_is_in_rooms_of_a_few_hundred_lines():
    assert not (REPO / "trainers" / "common.py").exists()
    rooms = sorted(p.stem for p in CORE.glob("*.py") if p.stem != "__init__")
    assert rooms == sorted(ROOMS), f"rooms of trainers/core: {rooms}; add a new one to ROOMS in its place"
    big = {p.name: n for p in CORE.glob("*.py") if (n := len(p.read_text().splitlines())) > 450}
    assert not big, f"rooms over 450 lines (split them by what they do): {big}"
    init = (CORE / "__init__.py").read_text()
    assert all(f"    {r}.py" in init for r in ROOMS), "trainers/core/__init__.py maps every room"
    assert "import" not in init.split('"""')[-1], "trainers/core re-exports nothing"


@pytest.mark.parametrize("room", ROOMS)
def test_a_room_imports_only_rooms_below_it_and_no_trainer(room):
    got = _first_party_imports(CORE / f"{room}.py")
    up = sorted(m for m in got if m in {f"trainers.core.{r}" for r in ROOMS[ROOMS.index(room):]})
    assert not up, f"trainers/core/{room}.py imports a room at or above it: {up}"
    trainers_above = sorted(m for m in got for t in TRAINER_MODULES if m == f"trainers.{t}" or m.startswith(f"trainers.{t}."))
    assert not trainers_above, f"trainers/core/{room}.py imports a trainer module: {trainers_above}"


def test_the_run_status_is_decided_in_one_place():
    """run.json's end status (finished, error, non_finite_loss, judge_budget_spent, interrupted) is decided by
    records.status_of and written by records.recorded; run_training and main both use it (it was written
    twice, once in each)."""

    for fn in (entry_room.run_training, entry_room.main):
        src = inspect.getsource(fn).split('"""')[-1]  # the code, not the docstring
        assert "records.recorded(" in src and '"non_finite_loss"' not in src and "KeyboardInterrupt" not in src
    assert records.status_of(KeyboardInterrupt())[0] == "interrupted"
    assert records.status_of(ConfigError("x"))[0] == "interrupted"  # inside run_training: with its traceback
    assert records.status_of(ConfigError("x"), clean=(ConfigError,)) == ("error", {"error": "x"})


def test_counting_reward_reads_ok_not_the_reasons_wording():
    from collections import Counter, defaultdict

    from trainers.grpo import CountingReward
    from verifiers.rewards import RewardResult

    class Fn:
        __name__ = "fake"

        def __call__(self, prompts=None, completions=None, **kw):
            self.last_results = [RewardResult(0.5, True, "verifier error: a wording only"),
                                 RewardResult(None, False, "judge timed out"),
                                 RewardResult(0.0, True, "wrong answer")]
            self.last_reasons = [r.reason for r in self.last_results]
            return [0.5, None, 0.0]

    counts = Counter()
    out = CountingReward(Fn(), counts, defaultdict(float))(prompts=[1, 2, 3], completions=[1, 2, 3])
    assert out == [0.5, None, 0.0] and counts["reward_failures/fake"] == 1


def test_pde_verifier_failure_is_a_flag():
    from r3bench.pde import verify as V
    from r3bench.pde.verify import ProgramVerdict, combine

    bad = V.verify("def solve(*a): return 0", "no_such_family", [{"args": [], "shape": [1]}])
    assert isinstance(bad, ProgramVerdict) and bad.verifier_ok is False
    own = V.verify("", "no_such_family", [])
    assert own.verifier_ok is False  # unknown family: the verifier's side
    inst_ok = V._invalid("timeout: slow program")
    inst_err = V._invalid("verifier error: reference failed", verifier_ok=False)
    assert combine([inst_ok]).verifier_ok is True
    assert combine([inst_ok, inst_err]).verifier_ok is False
