"""Per-step scores of a seven-tag solution from one of the step verifiers (verifiers.steps.BACKENDS)."""
from __future__ import annotations

import math
from collections.abc import Set
from dataclasses import fields

from r3bench.core import models
from verifiers import seventag
from verifiers.judge import default_judge, judge_for
from verifiers.psv import PsvConfig
from verifiers.steps import BACKENDS, backend, config_for, oracle_names, verify


class _Names(Set):
    """Names of the backend table read at each use (a backend registered later shows at once)."""

    def __init__(self, keep=lambda name: True):
        self._keep = keep

    def _names(self) -> tuple:
        return tuple(n for n in BACKENDS if self._keep(n))

    def __contains__(self, name):
        return name in self._names()

    def __iter__(self):
        return iter(self._names())

    def __len__(self):
        return len(self._names())

    def __repr__(self):
        return repr(self._names())


VERIFIERS = _Names()  # every backend of verifiers.steps.BACKENDS
ORACLE = _Names(lambda n: n in oracle_names())  # they read the reference solution (Backend.oracle)
AGGS = ("min", "prod", "mean", "last")


def psv_model_given(psv_model: str | None = None) -> str | None:
    """The PSV model to load: psv_model, else the psv config's default (R3BENCH_PSV_MODEL); None when
    neither names one."""
    return PsvConfig.from_env(model=psv_model).model or None


class Scorer:
    """Per-step scores of a seven-tag solution from one of the step verifiers.

    `config`: the backend's config (verifiers.steps.config_for); without one it is built from psv_model,
    threshold and psv_device (the strategies' model_args) over the backend's defaults, model names
    resolved by r3bench (models.local_path)."""

    def __init__(self, kind: str, psv_model: str | None = None, threshold: float = 0.5, psv_device: str = "cpu",
                 config=None):
        entry = backend(kind)  # ValueError with the valid names
        self.kind, self.threshold, self.oracle = kind, float(threshold), entry.oracle
        self.config = config if config is not None else self._config(kind, psv_model=psv_model,
                                                                      psv_device=psv_device, threshold=threshold)
        self._scores = entry.step_scores
        why = entry.problem(self.config)
        if why:
            raise ValueError(f"verifier={kind} needs {why}")

    @staticmethod
    def _config(kind: str, **model_args):
        """The backend's config from the model args that name its fields (`<kind>_<field>` or `<field>`:
        psv_model, psv_device, threshold for the psv); None when none does (the backend's defaults - for
        the judge, the one verifiers.judge.configure installed)."""
        cls = backend(kind).config
        names = {f.name for f in fields(cls)}
        given = {k.removeprefix(f"{kind}_"): v for k, v in model_args.items() if v not in (None, "")}
        given = {k: v for k, v in given.items() if k in names}
        return config_for(kind, models.local_path, **given) if given else None

    def steps(self, question: str, solution: str, reference: str) -> dict:
        """{"scores": one per step of the solution (document order), "valid", "explanation"}; never raises.

        A pass/fail verifier names the first wrong step by its tag's position in the seven-tag order
        (a missing governing_equation is "step 3" even when only two tags are present): every present
        step at or after that position scores 0, and when the wrong step is absent (the solution
        stopped early or skipped it) a 0 is appended, so that such a solution is never accepted."""
        if self._scores is not None:
            try:
                return {"scores": self._scores(question, solution, self.config), "valid": True,
                        "explanation": self.kind}
            except Exception as e:  # noqa: BLE001 - a verifier failure is recorded, not fatal
                return {"scores": [], "valid": False, "explanation": f"{self.kind} error: {type(e).__name__}: {e}"[:300]}
        return self._from_verdict(solution, verify(question, solution, reference, backend=self.kind,
                                                   config=self.config))

    def steps_many(self, rows) -> list[dict]:
        """`steps` of each {question, solution, reference} row, in order. The judge verifies them
        concurrently (verifiers.judge.Judge.verify_many: up to its max_concurrency requests in flight);
        the other verifiers one by one. Raises JudgeBudgetExceeded only, once the judge's budget is spent."""
        rows = list(rows)
        if self.kind != "judge":
            return [self.steps(r["question"], r["solution"], r["reference"]) for r in rows]
        verdicts = (default_judge() if self.config is None else judge_for(self.config)).verify_many(rows)
        return [self._from_verdict(r["solution"], v) for r, v in zip(rows, verdicts)]

    def _from_verdict(self, solution: str, v) -> dict:
        if not v.valid:
            return {"scores": [], "valid": False, "explanation": v.explanation}
        pos = [seventag.TAGS.index(st.tag) + 1 for st in seventag.parse(solution or "").steps]
        if v.first_error:
            scores = [0.0 if k >= v.first_error else 1.0 for k in pos]
            if 0.0 not in scores:
                scores.append(0.0)
        else:
            scores = [1.0] * len(pos)
        return {"scores": scores, "valid": True, "explanation": v.explanation, "error_class": v.error_class,
                "first_error": v.first_error,
                "failing_tag": seventag.TAGS[v.first_error - 1] if 0 < v.first_error <= len(seventag.TAGS) else None}

    def first_failing(self, scores: list) -> int | None:
        """1-based index of the first step under the threshold; 1 when there are no steps; None = accept."""
        if not scores:
            return 1
        return next((k for k, s in enumerate(scores, start=1) if s < self.threshold), None)

    @staticmethod
    def aggregate(scores: list, how: str = "min") -> float:
        if not scores:
            return 0.0
        if how == "min":
            return float(min(scores))
        if how == "prod":
            return float(math.prod(scores))
        if how == "mean":
            return float(sum(scores) / len(scores))
        if how == "last":
            return float(scores[-1])
        raise ValueError(f"unknown aggregation {how!r} (have: {', '.join(AGGS)})")
