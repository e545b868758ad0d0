"""The seven-tag format check every step backend runs first: format_error(solution) -> FORMAT verdict | None.

A broken format - a missing, empty, unclosed, nested, duplicated or out-of-order tag, no tags at all,
an over-long output, several different boxed answers, a non-finite number - decides the verdict
before any content check (verifiers.reference_based, verifiers.reference_free, verifiers.judge, verifiers.psv), and
the rewards refuse the same outputs (verifiers.rewards). Shared helpers: boxed_all (every boxed
answer of a text) and same_answer (two boxed answers that are one value).
"""
from __future__ import annotations

import re

from verifiers import seventag
from verifiers import step_reading as P
from verifiers.extract import find_braced
from verifiers.verdict import FORMAT, MAX_SOLUTION_CHARS, MAX_STEP_CHARS, TAG_OF_STEP, StepVerdict, at_step


def boxed_all(text: str) -> list[str]:
    """The contents of every \\boxed{...} / \\fbox{...} of a text, in order (unclosed ones left out)."""
    out = []
    for m in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        got = find_braced(text, m.end() - 1)
        if got is not None:
            out.append(got[0].strip())
    return out


def same_answer(a: str, b: str) -> bool:
    """Two boxed answers that are one value (same quantity in any unit form), or the same text."""
    qa, qb = P.quantity(a), P.quantity(b)
    if qa and qb:
        return P.close(qa[0], qb[0]) and (qa[1] == qb[1] or not qa[1] or not qb[1])
    return re.sub(r"\s+", "", a) == re.sub(r"\s+", "", b)


def _outside(text: str) -> str:
    """The text outside the seven tags (tag names as seventag.parse reads them)."""
    t = re.sub(r"<\s*(" + "|".join(seventag.TAGS) + r")\s*>.*?<\s*/\s*\1\s*>", " ", text, flags=re.S | re.I)
    return t


def format_error(solution) -> StepVerdict | None:
    """The FORMAT verdict of a solution whose seven-tag format is broken, else None.

    The first error is the first of the seven positions whose tag is missing, broken (unclosed,
    nested, duplicated, empty), out of order or over MAX_STEP_CHARS long (a flood that would stall the
    verifier: the steps of honest solutions are a few hundred characters); an over-long output or no
    tag at all is at step 1;
    a non-finite number (nan, inf) at the step that holds it; several different boxed answers, or a
    boxed answer outside <final_answer>, at step 7.
    """
    text = solution if isinstance(solution, str) else ("" if solution is None else str(solution))
    if len(text) > MAX_SOLUTION_CHARS:
        return at_step(1, f"the output is {len(text)} characters, over the {MAX_SOLUTION_CHARS} allowed", 0, FORMAT)
    sol = seventag.parse(text)
    n = sol.n
    if n == 0:
        return at_step(1, "no seven-tag steps found in the solution", 0, FORMAT)
    for k, tag in TAG_OF_STEP.items():
        st = sol.get(tag)
        if st is None:
            return at_step(k, f"step {k} <{tag}> is missing", n, FORMAT)
        if tag in sol.flawed:
            why = next((p for p in sol.problems if tag in p), "broken")
            return at_step(k, f"step {k} <{tag}> is broken ({why})", n, FORMAT)
        if st.index != k:
            return at_step(k, f"step {k} <{tag}> is out of order (position {st.index})", n, FORMAT)
        if len(st.content) > MAX_STEP_CHARS:
            return at_step(k, f"step {k} <{tag}> is {len(st.content)} characters, over the {MAX_STEP_CHARS} a step "
                              "may hold", n, FORMAT)
    for k in (4, 5, 6, 7):
        if P.NONFINITE.search(sol.get(TAG_OF_STEP[k]).content):
            return at_step(k, f"step {k} <{TAG_OF_STEP[k]}> holds a non-finite number (nan/inf)", n, FORMAT)
    fa = sol.get("final_answer").content
    boxes = boxed_all(fa)
    if len(boxes) > 1 and any(not same_answer(boxes[0], b) for b in boxes[1:]):
        return at_step(7, f"the final answer holds {len(boxes)} different boxed answers", n, FORMAT)
    if boxed_all(_outside(text)):
        return at_step(7, "a boxed answer outside <final_answer>", n, FORMAT)
    return None
