"""r3-stepco (StepCo): verify every step, revise from the first failing one, until accepted or out of rounds."""
from __future__ import annotations

import json

from r3bench.eval.strategies.base import Problem, Prompt, StrategyLM, answer_key, as_bool, jsonable_key, log
from r3bench.eval.strategies.scorer import Scorer
from verifiers import seventag

FEEDBACK = ("A verifier checked your solution step by step. Step {k} ({tag}) is probably wrong: it scores "
            "{score:.2f}, below the threshold {thr:g}. {kept}Rewrite step {k} and every step after it, in the "
            "same seven-tag format.")
KEPT_SOME = "Steps 1 to {j} are kept as they are. "
FEEDBACK_NO_STEPS = ("A verifier could not find the seven tagged steps in your solution, so no step could be "
                     "checked. Write the whole solution again in this format.\n" + seventag.CONVENTIONS)
KEPT = "\n\nThe steps kept:\n{steps}"

class StepCoLM(StrategyLM):
    NAME = "stepco"

    def __init__(self, verifier="psv", psv_model=None, threshold=0.5, rounds=5, prefill=None, psv_device="cpu", **kw):
        super().__init__(**kw)
        self.scorer = Scorer(verifier, psv_model, float(threshold), psv_device)
        self.max_rounds = int(rounds)
        if self.max_rounds < 0:
            raise ValueError(f"rounds must be >= 0, got {rounds}")
        # an API model may not continue a prefilled assistant turn: quote the kept steps instead
        self.prefill = as_bool(prefill) if prefill is not None else self.inner_name not in (
            "local-chat-completions", "openai-chat-completions", "local-completions", "openai-completions")

    def settings(self):
        return {"verifier": self.scorer.kind, "oracle_verifier": self.scorer.oracle, "threshold": self.scorer.threshold,
                "max_rounds": self.max_rounds, "prefill": self.prefill}

    def _score(self, p: Problem, text: str, rnd: int, tokens_before: tuple) -> dict:
        s = self.scorer.steps(p.question, text, p.reference)
        k = self.scorer.first_failing(s["scores"]) if s["valid"] else None
        key = answer_key(p.doc, text)
        entry = {"round": rnd, "response": text, "step_scores": [round(x, 4) for x in s["scores"]],
                 "verifier": s["explanation"][:300], "verdict_valid": s["valid"], "first_failing": k,
                 "failing_tag": s.get("failing_tag"),
                 "answer": jsonable_key(key), "gen_tokens": p.gen_tokens - tokens_before[0],
                 "prompt_tokens": p.prompt_tokens - tokens_before[1]}
        p.rounds.append(entry)
        return entry

    def _revision(self, p: Problem, prev: str, entry: dict) -> tuple[Prompt, str, str, str]:
        """(prompt, prefill, feedback, kept steps) for revising `prev` from its first failing step."""
        sol = seventag.parse(prev or "")
        k = entry["first_failing"]
        if not sol.steps:
            fb = FEEDBACK_NO_STEPS
            return p.prompt.follow_up(prev, fb), "", fb, ""
        kept = sol.steps[:k - 1]
        score = entry["step_scores"][k - 1] if k - 1 < len(entry["step_scores"]) else 0.0
        # the failing step's own tag (a PSV's k is a position in the document; a missing step has its name
        # from the verifier)
        tag = sol.steps[k - 1].tag if k <= len(sol.steps) else (entry.get("failing_tag") or "the next step")
        fb = FEEDBACK.format(k=k, tag=tag, score=score, thr=self.scorer.threshold,
                             kept=KEPT_SOME.format(j=k - 1) if k > 1 else "")
        kept_text = seventag.render(kept) + "\n" if kept else ""
        if self.prefill:
            return p.prompt.follow_up(prev, fb), kept_text, fb, kept_text
        if kept_text:
            fb = fb + KEPT.format(steps=kept_text.strip())
        return p.prompt.follow_up(prev, fb), "", fb, kept_text

    @staticmethod
    def _with_kept(text: str, kept_text: str) -> str:
        """Without a prefill the model may (as told) write only steps k..: put the kept steps back in front."""
        if not kept_text:
            return text
        got, kept = seventag.parse(text or "").steps, seventag.parse(kept_text).steps
        if got and kept and got[0].tag == kept[0].tag:
            return text  # it restated the whole solution
        return kept_text + text

    def solve(self, problems):
        if problems and not any("<problem_analysis>" in (p.prompt.text or json.dumps(p.prompt.messages))
                                for p in problems[:5]):
            log("stepco: the task's prompt does not ask for the seven-tag format, so first attempts will "
                 "rarely have verifiable steps; the *_structured tasks (e.g. r3_jeebench_structured) do")
        last: dict[int, dict] = {}
        texts = self.generate([(p, p.prompt, "", p.gen_kwargs) for p in problems], "round 0")
        for p, t in zip(problems, texts):
            p.final = t or ""
            if t is None:
                p.stop = "inner model failed"
                continue
            last[p.index] = self._score(p, t, 0, (0, 0))
        active = [p for p in problems if p.index in last and self._needs_revision(p, last[p.index])]
        for rnd in range(1, self.max_rounds + 1):
            if not active:
                break
            log(f"stepco round {rnd}: revising {len(active)} of {len(problems)} problems")
            items, kept, before = [], {}, {}
            for p in active:
                prompt, prefill, fb, kept[p.index] = self._revision(p, p.final, last[p.index])
                last[p.index]["feedback"] = fb
                items.append((p, prompt, prefill, p.gen_kwargs))
                before[p.index] = (p.gen_tokens, p.prompt_tokens)
            texts = self.generate(items, f"round {rnd}")
            nxt = []
            for p, t in zip(active, texts):
                if t is None:
                    p.stop = f"inner model failed in round {rnd}; kept round {rnd - 1}"
                    p.rounds.append({"round": rnd, "response": None, "error": p.errors[-1]["error"] if p.errors else "",
                                     "gen_tokens": p.gen_tokens - before[p.index][0],
                                     "prompt_tokens": p.prompt_tokens - before[p.index][1]})
                    continue
                if not self.prefill:
                    t = self._with_kept(t, kept[p.index])
                prev_key = last[p.index]["answer"]
                p.final = t
                e = last[p.index] = self._score(p, t, rnd, before[p.index])
                if prev_key is not None and e["answer"] == prev_key:
                    p.stop = f"two consecutive answers agree (rounds {rnd - 1} and {rnd})"
                elif self._needs_revision(p, e):
                    nxt.append(p)
            active = nxt
        for p in active:
            p.stop = f"round limit ({self.max_rounds} revisions) reached"

    def _needs_revision(self, p: Problem, e: dict) -> bool:
        if not e["verdict_valid"]:
            p.stop = f"no verdict from the verifier ({e['verifier'][:120]}); kept as is"
            p.errors.append({"call": f"verify round {e['round']}", "error": e["verifier"]})
            return False
        if e["first_failing"] is None:
            p.stop = f"accepted: every step scores >= {self.scorer.threshold:g} (round {e['round']})"
            return False
        return True
