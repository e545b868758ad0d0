"""Per-step scores of a seven-tag solution from one of the step verifiers (psv, symbolic, judge)."""
from __future__ import annotations

import math
import os

from r3bench.core import models
from verifiers import seventag
from verifiers.judge import default_judge
from verifiers.psv import PSV
from verifiers.steps import verify

VERIFIERS = ("psv", "symbolic", "judge")
ORACLE = ("symbolic", "judge")  # they read the reference solution
AGGS = ("min", "prod", "mean", "last")


def psv_model_given(psv_model: str | None = None) -> str | None:
    """The PSV model to load: psv_model, else $R3BENCH_PSV_MODEL; None when neither names one."""
    return psv_model or os.environ.get("R3BENCH_PSV_MODEL") or None


class Scorer:
    """Per-step scores of a seven-tag solution from one of the step verifiers."""

    def __init__(self, kind: str, psv_model: str | None = None, threshold: float = 0.5, psv_device: str = "cpu"):
        if kind not in VERIFIERS:
            raise ValueError(f"unknown verifier {kind!r} (have: {', '.join(VERIFIERS)})")
        self.kind, self.threshold, self.oracle = kind, float(threshold), kind in ORACLE
        self.psv = None
        if kind == "psv":
            model = psv_model_given(psv_model)
            if not model:
                raise ValueError("verifier=psv needs psv_model=DIR (train one with python -m trainers.psv) "
                                 "or R3BENCH_PSV_MODEL")
            self.psv = PSV(models.local_path(model), threshold=self.threshold, device=psv_device)

    def steps(self, question: str, solution: str, reference: str) -> dict:
        """{"scores": one per step of the solution (document order), "valid", "explanation"}; never raises.

        A pass/fail verifier names the first wrong step by its tag's position in the seven-tag order
        (a missing governing_equation is "step 3" even when only two tags are present): every present
        step at or after that position scores 0, and when the wrong step is absent (the solution
        stopped early or skipped it) a 0 is appended, so that such a solution is never accepted."""
        if self.psv is not None:
            try:
                return {"scores": self.psv.step_scores(question, solution), "valid": True, "explanation": "psv"}
            except Exception as e:  # noqa: BLE001 - a verifier failure is recorded, not fatal
                return {"scores": [], "valid": False, "explanation": f"psv error: {type(e).__name__}: {e}"[:300]}
        return self._from_verdict(solution, verify(question, solution, reference, backend=self.kind))

    def steps_many(self, rows) -> list[dict]:
        """`steps` of each {question, solution, reference} row, in order. The judge verifies them
        concurrently (verifiers.judge.Judge.verify_many: up to its max_concurrency requests in flight);
        the other verifiers one by one. Raises JudgeBudgetExceeded only, once the judge's budget is spent."""
        rows = list(rows)
        if self.kind != "judge":
            return [self.steps(r["question"], r["solution"], r["reference"]) for r in rows]
        verdicts = default_judge().verify_many(rows)
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
