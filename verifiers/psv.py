"""StepCo-style process-supervised verifier (PSV) backend: a model scores every step.

The PSV is a causal LM fine-tuned (trainers issue) to answer, after each step prefix, with a
"good" or a "bad" token (Math-Shepherd style labels). Its score for step k is
P(good) / (P(good) + P(bad)) at the position after steps 1..k. The first step scoring under the
threshold is the first error. A PSV does not classify errors: the class reported is the one the
seven-tag format assigns to that step (1, 4 -> MC; 2, 3 -> CM; 5-7 -> CE), and the explanation says
so. Step index and class come from the same tag (verifiers.verdict.STEP_OF_TAG), and a broken format is
a FORMAT verdict before any scoring, so the index is the step's position in the seven-step format.

PSV loads a local HF causal-LM directory: verifiers knows no model names. A caller that does turns
its names into directories when it builds the backend's config (`PsvConfig.resolved(resolve)`; r3bench:
r3bench.core.models.local_path, trainers: model_path), so psv_model= and R3BENCH_PSV_MODEL also take
r3bench's short names there.

    psv = PSV("path/to/psv", threshold=0.5)
    psv.step_scores(question, solution) -> [float per step]
    psv.verify(question, solution, reference="") -> StepVerdict(step_scores=...)
    verify(question, solution, reference, backend="psv", config=PsvConfig(model="path/to/psv"))

PsvConfig.from_env() is the one place R3BENCH_PSV_MODEL and R3BENCH_PSV_THRESHOLD are read (the
documented defaults of a config nobody gave).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from typing import Callable

from verifiers import seventag
from verifiers.tag_format import format_error
from verifiers.verdict import STEP_CLASS, STEP_OF_TAG, StepVerdict

@dataclass(frozen=True)
class PsvConfig:
    """The psv backend's settings.

    model:     a local folder holding the PSV (python -m trainers.psv writes OUTPUT_DIR/psv_model)
    threshold: a step scoring under it is the first error
    device, dtype: where and in what precision it scores, e.g. "cuda:1", "bfloat16" (None: the CPU, float32);
                   a trainer passes its own device and training dtype (trainers.judging.verifier_config), so
                   the PSV scores beside the policy
    """

    model: str = ""
    threshold: float = 0.5
    device: str | None = None
    dtype: str | None = None

    @classmethod
    def from_env(cls, **given) -> "PsvConfig":
        """The config from `given` (None / "" left out) over the documented defaults: R3BENCH_PSV_MODEL,
        R3BENCH_PSV_THRESHOLD (else 0.5). The one place these variables are read."""
        kw = {"model": os.environ.get("R3BENCH_PSV_MODEL", ""),
              "threshold": float(os.environ.get("R3BENCH_PSV_THRESHOLD", "0.5"))}
        names = {f.name for f in fields(cls)}
        kw.update({k: v for k, v in given.items() if k in names and v is not None and v != ""})
        return cls(**kw)

    def resolved(self, resolve: Callable[[str], str]) -> "PsvConfig":
        """The config with its model name turned into a folder by the caller's `resolve` (verifiers knows
        no model names: r3bench's local_path, the trainers' model_path)."""
        return replace(self, model=resolve(self.model)) if self.model else self


DEFAULT_DEVICE, DEFAULT_DTYPE = "cpu", "float32"  # where a PSV scores when its caller names no placement

PROMPT = "Problem: {question}\nSolution so far:\n{steps}\nIs the last step correct? Answer + or -:"


class PSV:
    def __init__(self, path: str | os.PathLike, threshold: float = 0.5, good: str = "+", bad: str = "-",
                 device: str | None = None, dtype: str | None = None):
        """`device` and `dtype` (e.g. "cuda:1", "bfloat16"): where and in what precision the PSV scores
        (None: the CPU, float32); a trainer passes its own (trainers.core.model.training_placement)."""
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        path = os.fspath(path)
        device = device or DEFAULT_DEVICE
        dtype = getattr(torch, dtype or DEFAULT_DTYPE)
        self.tok = AutoTokenizer.from_pretrained(path)
        self.model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype).to(device).eval()
        self.device, self.threshold = device, threshold
        self.good = self.tok.encode(good, add_special_tokens=False)[-1]
        self.bad = self.tok.encode(bad, add_special_tokens=False)[-1]
        if self.good == self.bad:
            raise ValueError(f"good and bad labels map to one token ({good!r}, {bad!r})")

    def step_scores(self, question: str, solution: str) -> list[float]:
        return self.step_scores_batch([(question, solution)])[0]

    def step_scores_batch(self, items: list[tuple[str, str]], max_batch: int = 64) -> list[list[float]]:
        """step_scores of many (question, solution) pairs: every step prefix of every solution in
        forwards of up to `max_batch` prefixes (left-padded, the score read at the last position), on
        the PSV's device and dtype; the softmax of the two label logits in float32."""
        import torch

        prompts, owner = [], []
        for i, (question, solution) in enumerate(items):
            sol = seventag.parse(solution or "")
            for k in range(len(sol.steps)):
                prompts.append(PROMPT.format(question=question, steps=seventag.render(sol.steps[:k + 1])))
                owner.append(i)
        out: list[list[float]] = [[] for _ in items]
        if not prompts:
            return out
        self.tok.padding_side = "left"
        if self.tok.pad_token is None:
            self.tok.pad_token = self.tok.eos_token
        for j in range(0, len(prompts), max_batch):
            enc = self.tok(prompts[j:j + max_batch], return_tensors="pt", padding=True, truncation=True,
                           max_length=2048).to(self.device)
            with torch.no_grad():
                logits = self.model(**enc, logits_to_keep=1).logits[:, -1, :].float()
            pair = torch.stack([logits[:, self.good], logits[:, self.bad]], dim=-1).softmax(-1)
            for i, x in zip(owner[j:j + max_batch], pair[:, 0].tolist()):
                out[i].append(float(x))
        return out

    def verify(self, question: str, solution: str, reference: str = "") -> StepVerdict:
        bad = format_error(solution)
        if bad is not None:
            return bad
        scores = self.step_scores(question, solution)
        tags = [st.tag for st in seventag.parse(solution).steps]
        for tag, s in zip(tags, scores):
            k = STEP_OF_TAG[tag]  # index and class from the same tag
            if s < self.threshold:
                return StepVerdict(k, STEP_CLASS[k], f"PSV score {s:.3f} < {self.threshold:g} at step {k} <{tag}> "
                                   "(class from the step's tag: a PSV does not classify)", len(scores),
                                   tuple(scores))
        return StepVerdict(0, None, f"every step scores >= {self.threshold:g}", len(scores), tuple(scores))


_LOADED: dict[tuple, PSV] = {}  # (model, threshold, device, dtype) -> PSV: a backend loads each model once


def load(config: PsvConfig | None = None) -> PSV:
    """The PSV of a config (None: PsvConfig.from_env()), loaded once per model, threshold and placement: the
    config's device and dtype (None: the CPU, float32), so that two configs in one process never share or
    move each other's PSV."""
    cfg = config if config is not None else PsvConfig.from_env()
    if not cfg.model:
        raise RuntimeError("set R3BENCH_PSV_MODEL or PsvConfig(model=DIR) to a trained PSV model directory "
                           "(python -m trainers.psv writes one)")
    key = (cfg.model, cfg.threshold, cfg.device or DEFAULT_DEVICE, cfg.dtype or DEFAULT_DTYPE)
    if key not in _LOADED:
        _LOADED[key] = PSV(cfg.model, threshold=cfg.threshold, device=key[2], dtype=key[3])
    return _LOADED[key]


def psv_backend(question, solution, reference, config: PsvConfig | None = None):
    """`verify(..., backend="psv", config=PsvConfig(...))`: the verdict of the config's PSV."""
    return load(config).verify(question, solution, reference)


def psv_missing(config: PsvConfig) -> str | None:
    """What a psv config lacks: a model folder (None when it names one)."""
    return None if config.model else ("a PSV model folder: psv_model=DIR (PsvConfig.model) or R3BENCH_PSV_MODEL "
                                      "(train one with python -m trainers.psv)")


def psv_step_scores(question, solution, config: PsvConfig | None = None) -> list[float]:
    """The psv backend's per-step scores (the strategies' Scorer reads them, not only the verdict)."""
    return load(config).step_scores(question, solution)
