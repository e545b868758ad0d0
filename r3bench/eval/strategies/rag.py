"""r3-rag: the top-k hits of the retrieval index are put in front of the prompt (in the first user turn
under a chat template). The problem's own worked solution is never retrieved."""
from __future__ import annotations

from lm_eval.api.instance import Instance

from r3bench.eval.retrieval import SOURCES, Index
from r3bench.eval.strategies.base import Prompt, StrategyLM


class RagLM(StrategyLM):
    NAME = "rag"

    def __init__(self, k=3, index=None, source="formulas", **kw):
        super().__init__(**kw)
        if source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
        self.k, self.source = int(k), source
        self.index = Index(index)
        self.index.require(source)

    def settings(self):
        return {"k": self.k, "source": self.source, "index": self.index.manifest()}

    def _augment(self, question: str, prompt: Prompt, doc_id: str | None = None) -> tuple[Prompt, list]:
        hits = self.index.query(question, k=self.k, source=self.source, exclude_question=question, exclude_id=doc_id)
        return prompt.prepend(Index.render(hits)), hits

    def solve(self, problems):
        items = []
        for p in problems:
            try:
                prompt, hits = self._augment(p.question, p.prompt, p.doc.get("id"))
            except Exception as e:  # noqa: BLE001 - retrieval failure: answer without context, recorded
                prompt, hits = p.prompt, []
                p.errors.append({"call": "retrieve", "error": f"{type(e).__name__}: {e}"[:500]})
            p.extra["retrieved"] = [{"source": h.source, "id": h.id, "topic": h.topic, "distance": round(h.distance, 4)}
                                    for h in hits]
            items.append((p, prompt, "", p.gen_kwargs))
        for p, text in zip(problems, self.generate(items, "generate")):
            p.final = text or ""
            p.stop = "generated" if text is not None else "inner model failed"
            p.rounds.append({"round": 0, "response": p.final, "gen_tokens": p.gen_tokens,
                             "prompt_tokens": p.prompt_tokens})

    def loglikelihood(self, requests):
        # multiple-choice (loglikelihood) tasks: the same retrieved context in front of each context
        out = []
        for r in requests:
            ctx, cont = r.args
            doc = r.doc if isinstance(r.doc, dict) else {}
            try:
                block = self._augment(str(doc.get("question") or ctx), Prompt(text=""), doc.get("id"))[0].text.rstrip()
                ctx2 = self._prompt_of(ctx).prepend(block).render(self.inner) if block else ctx
            except Exception:  # noqa: BLE001 - no context for this request rather than a crashed run
                ctx2 = ctx
            out.append(Instance(r.request_type, r.doc, (ctx2, cont), r.idx, (r.task_name, r.doc_id, r.repeats)))
        return self.inner.loglikelihood(out)
