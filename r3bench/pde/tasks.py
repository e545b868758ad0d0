"""Prompts, documents, lm-eval glue, the SFT export and the GRPO reward of the r3_pde tasks.

    docs(families, split, per_family) -> [doc]            doc: id, family, seen, seed, n_instances, prompt
    dataset_seen / dataset_heldout / dataset_all           custom_dataset of tasks/r3/r3_pde*.yaml
    prompt(doc) -> str                                     doc_to_text
    results(doc, responses) / results_sc(doc, responses)   process_results (never raise)
    export(out, per_family, seed) -> path of sft.jsonl     SFT warm start from the solver bank
    PDEReward                                              TRL reward (columns family, seed, n_instances)

A document is one PDE prompt; its hidden instances are `families.instances(family, seed, n)`,
regenerated wherever the document is scored, so eval and reward use the same instances and the same
verifier. Evaluation seeds (split "test") start at 1000; training seeds (split "train") at 0, and
training documents only come from seen families.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np

from r3bench.pde import families as F
from r3bench.pde.metrics import prompt_metrics
from r3bench.pde.verify import ProgramVerdict, VerifyConfig, extract_code, verify
from r3bench.pde.bank import BANK
from verifiers.rewards import RewardResult, completion_text

log = logging.getLogger(__name__)
VERSION = 1
TEST_SEED0, TRAIN_SEED0 = 1000, 0
N_INSTANCES = 3
PER_FAMILY_TEST = 4

PROMPT = """Write a Python program that numerically solves the following partial differential equation.

PDE ({title}): {statement}
{times}
Required function: `{signature}`. Array arguments are NumPy float arrays; the other arguments are floats.
Your function will be called on several hidden instances that vary the grid resolution, the output times, \
the parameters and the initial/boundary data. One instance, for example, has {example}.

The program runs in a sandbox: NumPy and SciPy are available, there is no file or network access, and each \
call must finish within about 2 seconds. The result is compared with an accurate reference solution, so \
choose a stable, accurate method (you may refine the grid internally).

Answer with a single ```python``` code block that defines `solve`."""


def _example(family, seed) -> str:
    inst = F.instances(family, seed + 7919, 1)[0]
    a = inst["args"]
    parts = []
    if "x" in a and "u0" in a:
        parts.append(f"len(x) = {len(a['x'])}")
    if "t" in a:
        parts.append(f"len(t) = {len(a['t'])} with t[-1] = {a['t'][-1]:g}")
    if "a" in a:
        parts.append(f"a of shape {tuple(np.shape(a['a']))}")
    for p in F.FAMILIES[family].params:
        parts.append(f"{p} = {a[p]:g}")
    return ", ".join(parts)


def prompt_text(family: str, seed: int) -> str:
    fam = F.FAMILIES[family]
    times = "" if family in ("darcy", "reaction_diffusion_2d") else F.TIME_DEPENDENT_NOTE  # 2D: in the statement
    return PROMPT.format(title=fam.title, statement=fam.statement, times=times, signature=fam.signature,
                         example=_example(family, seed))


def docs(families, split: str = "test", per_family: int = PER_FAMILY_TEST, n_instances: int = N_INSTANCES):
    seed0 = TEST_SEED0 if split == "test" else TRAIN_SEED0
    out = []
    for fam in families:
        if split == "train" and not F.FAMILIES[fam].seen:
            raise ValueError(f"{fam} is a held-out family: it never enters training prompts")
        for i in range(per_family):
            seed = seed0 + i
            out.append({"id": f"{fam}-{split}-{seed}", "family": fam, "seen": F.FAMILIES[fam].seen, "seed": seed,
                        "n_instances": n_instances, "split": split, "prompt": prompt_text(fam, seed)})
    return out


def _dataset(families, metadata):
    import datasets

    per = int(metadata.get("per_family", PER_FAMILY_TEST))
    n = int(metadata.get("n_instances", N_INSTANCES))
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(docs(families, "test", per, n))})


def dataset_seen(**metadata):
    return _dataset(F.SEEN, metadata)


def dataset_heldout(**metadata):
    return _dataset(F.HELD_OUT, metadata)


def dataset_all(**metadata):
    return _dataset(F.SEEN + F.HELD_OUT, metadata)


def prompt(doc) -> str:
    return doc["prompt"]


# --------------------------------------------------------------------------------- scoring

def score(doc, completion, cfg: VerifyConfig = VerifyConfig()) -> ProgramVerdict:
    """Verdict of one completion on the document's hidden instances (never raises)."""
    try:
        code = extract_code(completion)
        if code is None:
            return ProgramVerdict(False, False, 0.0, 1.0, "no program: no ```python``` block defining solve")
        insts = F.instances(doc["family"], int(doc["seed"]), int(doc.get("n_instances") or N_INSTANCES))
        return verify(code, doc["family"], insts, cfg)
    except Exception as e:  # noqa: BLE001 - a bad document or a verifier bug: a verdict with its reason, not ok
        # (verifier_ok False: GRPO skips and counts it instead of booking reward 0 against the completion)
        return ProgramVerdict(False, False, 0.0, 1.0, f"verifier error: {type(e).__name__}: {e}"[:500],
                              verifier_ok=False)


def _metrics(doc, responses, k):
    verdicts = [score(doc, r) for r in responses]
    for v in verdicts:
        log.info("r3_pde %s: reward %.3f, %s", doc.get("id"), v.reward, v.reason)
    m = prompt_metrics(verdicts, k)
    m["invalid_reasons"] = "; ".join(dict.fromkeys(v.reason for v in verdicts if not v.valid))[:2000]
    return m


def results(doc, responses):
    """Greedy task: validity, pass@1 (0/1), nRMSE (worst instance, invalid = 1), reward."""
    m = _metrics(doc, _flat(responses)[:1], 1)
    return {"validity": m["validity"], "pass_at_1": m["pass_at_1"], "nrmse": m["best_nrmse"],
            "reward": m["reward"], "invalid_reasons": m["invalid_reasons"]}


def _flat(responses) -> list:
    """lm-eval hands process_results one entry per request; with `repeats` and KeepAll that entry is
    the list of all k responses."""
    out = []
    for r in responses:
        out.extend(r if isinstance(r, (list, tuple)) else [r])
    return out


def results_sc(doc, responses):
    """`repeats: 8` task (KeepAll filter): validity, pass@1, pass@8 (unbiased), best-of-8 nRMSE."""
    m = _metrics(doc, _flat(responses), 8)
    return {"validity": m["validity"], "pass_at_1": m["pass_at_1"], "pass_at_8": m["pass_at_k"],
            "best_nrmse": m["best_nrmse"], "reward": m["reward"], "invalid_reasons": m["invalid_reasons"]}


def agg_reasons(items) -> float:
    """The reason strings stay in the samples file; the aggregate is the share of documents with one."""
    items = list(items)
    return sum(1 for s in items if s) / len(items) if items else 0.0


# --------------------------------------------------------------------------------- SFT export

def export(out, per_family: int = 8, log_fn=None) -> Path:
    """sft.jsonl (prompt, completion, family, seed, scheme, split=train) from the bank, seen families only;
    `python -m trainers.sft --data OUT` reads it."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for d in docs(F.SEEN, "train", per_family):
        for scheme, code in BANK[d["family"]].items():
            rows.append({"prompt": d["prompt"], "completion": f"```python\n{code.rstrip()}\n```",
                         "family": d["family"], "seed": d["seed"], "n_instances": d["n_instances"],
                         "scheme": scheme, "split": "train", "answer": ""})
    path = out / "sft.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    (out / "manifest.json").write_text(json.dumps({"kind": "r3bench.pde export", "version": VERSION,
                                                   "rows": len(rows), "families": list(F.SEEN),
                                                   "per_family": per_family}, indent=1))
    if log_fn:
        log_fn(f"wrote {len(rows)} rows to {path}")
    return path


# --------------------------------------------------------------------------------- GRPO reward

class PDEReward:
    """TRL reward: the hybrid verifier's reward of each completion on its prompt's hidden instances.

    Columns: family, seed, n_instances. `last_results` holds one verifiers.rewards.RewardResult per
    completion (ok False: the verifier failed, not the completion - trainers.grpo skips and counts it)
    and `last_reasons` their reasons."""

    def __init__(self, cfg: VerifyConfig = VerifyConfig(), name: str = "pde_reward"):
        self.cfg, self.__name__, self.last_reasons, self.last_results = cfg, name, [], []

    def __call__(self, prompts=None, completions=None, family=None, seed=None, n_instances=None, **_):
        if family is None or seed is None:
            raise ValueError("pde_reward needs the dataset columns family and seed")
        n = len(completions)
        rewards, reasons, results = [], [], []
        for i in range(n):
            doc = {"family": family[i], "seed": seed[i], "n_instances": (n_instances or [N_INSTANCES] * n)[i]}
            v = score(doc, completion_text(completions[i]) or "", self.cfg)
            rewards.append(float(v.reward))
            reasons.append(v.reason)
            results.append(RewardResult(float(v.reward), v.verifier_ok, v.reason))
        self.last_reasons, self.last_results = reasons, results
        return rewards


def grpo_rows(per_family: int = 16) -> list[dict]:
    """Training prompts of the seen families for GRPO (no completions needed)."""
    return [{"prompt": d["prompt"], "family": d["family"], "seed": d["seed"], "n_instances": d["n_instances"]}
            for d in docs(F.SEEN, "train", per_family)]
