"""r3-bestofn: n samples; the one with the best verifier score wins, or the unit-aware majority vote."""
from __future__ import annotations

import copy
import json
from collections import Counter

from r3bench.eval.strategies.base import StrategyLM, answer_key, jsonable_key
from r3bench.eval.strategies.scorer import AGGS, VERIFIERS, Scorer, psv_model_given


def default_scorer(psv_model=None) -> str:
    """psv when a PSV model is given (psv_model=DIR or R3BENCH_PSV_MODEL), else the unit-aware majority vote."""
    return "psv" if psv_model_given(psv_model) else "vote"


class BestOfNLM(StrategyLM):
    NAME = "bestofn"

    def __init__(self, n=10, scorer=None, psv_model=None, agg=None, temperature=0.7, top_p=None, sample_seed=1234,
                 threshold=0.5, psv_device="cpu", **kw):
        super().__init__(**kw)
        scorer = scorer or default_scorer(psv_model)
        # a PRM's solution score is its weakest step; a pass/fail verifier scores the share of steps
        # before its first error (so that, among wrong samples, the one wrong latest ranks first)
        agg = agg or ("min" if scorer == "psv" else "mean")
        self.n, self.agg, self.temperature, self.seed = int(n), agg, float(temperature), int(sample_seed)
        if not self.temperature > 0:
            raise ValueError(f"temperature must be > 0 for sampling, got {temperature}")
        self.top_p = None if top_p is None else float(top_p)
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        if agg not in AGGS:
            raise ValueError(f"agg must be one of {AGGS}, got {agg!r}")
        if scorer != "vote" and scorer not in VERIFIERS:
            raise ValueError(f"scorer must be vote or one of {', '.join(VERIFIERS)}, got {scorer!r}")
        self.scorer_name = scorer
        self.scorer = None if scorer == "vote" else Scorer(scorer, psv_model, float(threshold), psv_device)
        self._api = hasattr(self.inner, "base_url")

    def settings(self):
        return {"n": self.n, "scorer": self.scorer_name, "agg": self.agg, "temperature": self.temperature,
                "oracle_verifier": bool(self.scorer and self.scorer.oracle)}

    def _sampling(self, gk: dict, i: int) -> dict:
        g = copy.deepcopy(gk)
        g["do_sample"], g["temperature"] = True, self.temperature
        if self.top_p is not None:
            g["top_p"] = self.top_p
        if self._api:  # lm-eval sends one fixed seed with every API request unless told otherwise
            g["seed"] = self.seed + i
        return g

    def solve(self, problems):
        # a request repeated (`repeats: k`) gets its own seeds per repeat (API models are seeded per request)
        seen: dict = {}
        items = []
        for p in problems:
            j = seen[(p.request.task_name, p.request.doc_id)] = seen.get((p.request.task_name, p.request.doc_id), -1) + 1
            p.extra["repeat"] = j
            items += [(p, p.prompt, "", self._sampling(p.gen_kwargs, j * self.n + i)) for i in range(self.n)]
        texts = self.generate(items, f"{self.n} samples per problem")
        scored = {}  # every problem's samples at once: the judge verifies them concurrently (Scorer.steps_many)
        if self.scorer is not None:
            keys = [(j, i) for j in range(len(problems)) for i in range(self.n) if texts[j * self.n + i] is not None]
            rows = [{"question": problems[j].question, "solution": texts[j * self.n + i],
                     "reference": problems[j].reference} for j, i in keys]
            scored = dict(zip(keys, self.scorer.steps_many(rows)))
        for j, p in enumerate(problems):
            samples = texts[j * self.n:(j + 1) * self.n]
            cands = []
            for i, t in enumerate(samples):
                if t is None:
                    continue
                e = {"round": i, "sample": i, "response": t, "gen_tokens": self.ntokens(t),
                     "answer": jsonable_key(answer_key(p.doc, t))}
                if self.scorer is not None:
                    s = scored[(j, i)]
                    e["step_scores"] = [round(x, 4) for x in s["scores"]]
                    e["score"] = self.scorer.aggregate(s["scores"], self.agg) if s["valid"] else None
                    e["verifier"] = s["explanation"][:300]
                p.rounds.append(e)
                cands.append(e)
            if not cands:
                p.final, p.stop = "", "every sample failed in the inner model"
                continue
            vote = self._vote(cands)
            by_score = self._best(cands) if self.scorer is not None else None
            p.extra["pick_vote"] = vote["sample"] if vote else None
            p.extra["pick_score"] = by_score["sample"] if by_score else None
            pick = by_score or vote or cands[0]
            if self.scorer is not None and by_score is None:
                p.stop = "no sample got a verifier score: picked by vote"
            else:
                p.stop = f"picked by {self.scorer_name}"
            p.extra["pick"] = pick["sample"]
            p.final = pick["response"]

    @staticmethod
    def _vote(cands):
        keys = [json.dumps(c["answer"]) for c in cands if c["answer"] is not None]
        if not keys:
            return None
        top = Counter(keys).most_common(1)[0][0]
        return next(c for c in cands if c["answer"] is not None and json.dumps(c["answer"]) == top)

    @staticmethod
    def _best(cands):
        scored = [c for c in cands if c.get("score") is not None]
        if not scored:
            return None
        votes = Counter(json.dumps(c["answer"]) for c in cands if c["answer"] is not None)
        # best score; ties go to the answer more samples agree on, then to the earlier sample
        return max(scored, key=lambda c: (c["score"], votes.get(json.dumps(c["answer"]), 0) if c["answer"] is not None
                                          else 0, -c["sample"]))
