"""The one method table: every method r3bench names, how it is made and how a result shows it.

A method is a way of answering a task with a model: plain chain of thought (CoT), an adapter
trained by one of `trainers/` (SFT, DPO, stepfix, GRPO, PSV), or an inference strategy wrapped
around an inner lm-eval model (RAG, StepCo, Best-of-N: `--model r3-rag | r3-stepco | r3-bestofn`).
A StepCo or Best-of-N run whose verifier read the reference solution is a method of its own,
"... (oracle verifier)": it never shares the real method's column.

Read by `r3bench reproduce` (what to train or wrap), the leaderboard and the run records (the
column of a result), the strategy registry and the lm-eval hook (the wrapper names). To add a
method: a row here; a trainer (trainers/<name>.py) or a strategy (r3bench/eval/strategies/<key>.py).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Method:
    key: str
    label: str  # the leaderboard's column label
    trainer: str | None = None  # `python -m trainers.<trainer>` makes its adapter
    init_from: str | None = None  # the method whose adapter its training starts from
    lm_eval_model: str | None = None  # the strategy wrapper (`lm_eval --model NAME`) that runs it
    index: bool = False  # RAG: `python -m trainers.rag` builds the retrieval index first
    verifier_arg: str | None = None  # the wrapper's model_args key naming its verifier
    verifier_default: str | None = None  # the verifier it uses when that key is not given and no PSV model is
    oracle: bool = False  # a StepCo / Best-of-N run whose verifier read the reference solution
    runnable: bool = True  # a method `r3bench reproduce` can run from a plan

    def spec(self) -> dict:
        """How `r3bench reproduce` makes it: the fields that are set (trainer, init_from, lm_eval_model, index)."""
        got = {"trainer": self.trainer, "init_from": self.init_from, "lm_eval_model": self.lm_eval_model,
               "index": self.index}
        return {k: v for k, v in got.items() if v}


# in the leaderboard's column order
TABLE = (
    Method("cot", "CoT"),
    Method("rag", "RAG", lm_eval_model="r3-rag", index=True),
    Method("sft", "SFT", trainer="sft"),
    Method("dpo", "DPO", trainer="dpo", init_from="sft"),
    Method("stepfix", "stepfix", trainer="stepfix", init_from="sft"),
    Method("stepco", "StepCo", lm_eval_model="r3-stepco", verifier_arg="verifier", verifier_default="psv"),
    Method("stepco_oracle", "StepCo (oracle verifier)", oracle=True, runnable=False),
    Method("bestofn", "Best-of-N", lm_eval_model="r3-bestofn", verifier_arg="scorer", verifier_default="vote"),
    Method("bestofn_oracle", "Best-of-N (oracle verifier)", oracle=True, runnable=False),
    Method("grpo", "GRPO", trainer="grpo"),
    Method("psv", "PSV", trainer="psv", runnable=False),  # trains StepCo's verifier, not a model that answers
)
BY_KEY = {m.key: m for m in TABLE}

# method key -> column label, in column order
LABELS = {m.key: m.label for m in TABLE}
ORDER = [m.key for m in TABLE]
# names the paper (and people) use for the same methods
ALIASES = {**{m.label.lower(): m.key for m in TABLE}, "ours": "stepfix", "base": "cot",
           "best-of-n": "bestofn", "best_of_n": "bestofn"}
# what `r3bench reproduce` can run: method -> how it is made
RUNNABLE = {m.key: m.spec() for m in TABLE if m.runnable}
# lm-eval model types that wrap an inner model (r3bench/eval/strategies/) -> method key
WRAPPERS = {m.lm_eval_model: m.key for m in TABLE if m.lm_eval_model}
# wrapper -> (the model_args key naming its verifier, the verifier used when none is named and no PSV model is)
VERIFIER_ARGS = {m.lm_eval_model: (m.verifier_arg, m.verifier_default) for m in TABLE if m.verifier_arg}
# config fields only one trainer has: how a run record without a "trainer" key is recognised
# (in this order of trust)
TRAINER_FIELDS = (("stepfix", "kl_estimator"), ("grpo", "group_size"), ("psv", "mc_rollouts"), ("dpo", "tau"))


def key(m: str) -> str:
    """The method key of a name people use (a label, an alias, a key)."""
    return ALIASES.get(str(m).strip().lower(), str(m).strip().lower())


def label(m: str) -> str:
    """The column label of a method, or of an adapter+wrapper combination such as `sft+stepco`."""
    return "+".join(LABELS.get(p, p) for p in m.split("+"))


def sort_key(m: str):
    """Column order: the table's order of the first part, then the number of parts, then the name."""
    first = m.split("+")[0]
    return (ORDER.index(first) if first in ORDER else 99, m.count("+"), m)


def oracle_variant(wrapper_method: str) -> str:
    """The oracle-verifier method of a wrapper method (`stepco` -> `stepco_oracle`)."""
    return f"{wrapper_method}_oracle"
