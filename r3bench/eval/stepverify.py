"""What the step-verification task YAMLs (`r3_stepverify*`) call: the prompt, reading the model's reply,
and the metrics - ProcessBench's protocol (Zheng et al. 2024, QwenLM/ProcessBench) on seven-tag physics.

    prompt(doc) -> str                         the problem, the seven steps numbered, what to answer
    read_reply(text) -> Reading                the step (0 = none wrong, None = unreadable), class, how/why
    results(doc, [reply]) -> per-sample metrics
    summary(pairs) -> f1, acc_erroneous, acc_correct, exact, class_acc, parsed, n (the leaderboard's too)

The reply is data: it is matched against the patterns of READINGS (a table: name, pattern, example),
never evaluated; a reply no pattern reads is a miss whose `reason` says why. ProcessBench F1 is the
harmonic mean of the accuracy on erroneous solutions (the exact first wrong step) and on correct ones
(`none`); class accuracy compares the class (the reply's, else the one of its step: verifiers.verdict.STEP_CLASS)
with the gold class, `none` for correct solutions, over all items, as verifiers.steps.report does.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from verifiers import seventag
from verifiers.verdict import ERROR_CLASSES, STEP_CLASS, TAG_OF_STEP

MAX_REPLY_CHARS = 4000  # a longer reply is read from its first 4,000 characters only

CLASS_WORDS = {"miscomprehension": "MC", "misread": "MC", "conceptual": "CM", "calculation": "CE",
               "arithmetic": "CE"}

INSTRUCTIONS = (
    "Below is a physics problem and a solution in seven steps: 1 problem_analysis (what is asked and given), "
    "2 principle (the law used), 3 governing_equation, 4 value_identification (the given values with units), "
    "5 substitution, 6 calculation, 7 final_answer.\n"
    "Error classes: MC = miscomprehension (wrong quantity asked, or a value misread: steps 1, 4), "
    "CM = conceptual misapplication (wrong law or equation: steps 2, 3), CE = calculation error (steps 5, 6, 7).\n"
    "Find the earliest wrong step. A later step that only follows from an earlier error is not the earliest.")
ASK = ("Reply with one line: \"First wrong step: K (CLASS)\" with K from 1 to 7 and CLASS one of MC, CM, CE, "
       "or \"First wrong step: none\" if every step is correct.")


def steps_text(solution: str) -> str:
    """The solution's seven steps, numbered; the raw text when it does not parse into seven tags."""
    parsed = seventag.parse(solution or "")
    if parsed.n != len(TAG_OF_STEP):
        return (solution or "").strip()
    return "\n".join(f"Step {k} ({tag}):\n{parsed.get(tag).content.strip()}" for k, tag in TAG_OF_STEP.items())


def prompt(doc: dict) -> str:
    return (f"{INSTRUCTIONS}\n\nProblem:\n{doc['question'].strip()}\n\nSolution:\n{steps_text(doc['solution'])}"
            f"\n\n{ASK}")


# --- reading the reply -------------------------------------------------------------------------------

_STEP = r"(?:step[ \t]*)?(?P<v>none|zero|-?\d+)(?![.,]\d)"  # a decimal number (2.5 m) is no step
_CLASS = r"\(?[ \t]*(?:MC|CM|CE|" + "|".join(CLASS_WORDS) + r")\b"
# name -> (pattern, example); tried in this order, the LAST match of a pattern counts (a reply that
# corrects itself ends on its answer), the first pattern that matches decides. Before matching, the
# prompt's own text (INSTRUCTIONS, ASK, the quoted answer templates) is removed from the reply, and a
# step followed by a tag name or "is correct" is a walk through the solution, never an answer.
READINGS = {
    "marker": (re.compile(r"(?:first|earliest)\s+(?:wrong|incorrect|erroneous)\s+step[ \t]*(?:is)?[ \t]*[:=-]?[ \t]*[\"'*`]{0,3}[ \t]*"
                          + _STEP, re.I),
               "First wrong step: 3 (CM)"),
    "boxed": (re.compile(r"\\boxed\{\s*" + _STEP + r"\s*\}", re.I), "\\boxed{3}  (ProcessBench's form; -1 = none)"),
    # a bare answer line only: the step alone (punctuation after it), or the step and its class
    "leading": (re.compile(r"\A\W{0,3}" + _STEP + r"(?![\w.])(?=[ \t]*(?:[.!:;)*`'\"]*[ \t]*(?:\n|\Z)|[-:,]?[ \t]*"
                           + _CLASS + r"|(?:,|/|\bor\b|\band\b)))", re.I),
                "3 (CM)  (the reply goes on from the prompt's marker)"),
    # on a line that names no step, not negated before it
    "no_error": (re.compile(r"^(?![^\n]*\bstep[ \t]*\d)(?![^\n]*\b(?:not|never|isn't|aren't)\b[^\n]*(?:all|every) (?:the )?steps?)"
                            r"[^\n]{0,80}?\b(?P<v>no (?:step is |steps? (?:are|is) )?(?:wrong|incorrect|errors?|mistakes?)|"
                            r"(?:all|every) (?:the )?steps? (?:is|are) (?:correct|right))\b(?![^\n]*\bstep[ \t]*\d)", re.I | re.M),
                 "All steps are correct."),
}

# the prompt's own text: a reply quoting it back has not answered with it
_PROMPT_TEXT = [re.compile(r"\s+".join(map(re.escape, frag.split())), re.I) for frag in sorted(
    {ASK, *INSTRUCTIONS.split("\n"), *re.split(r"(?<=[.)])\s+", INSTRUCTIONS + " " + ASK),
     '"First wrong step: K (CLASS)"', 'or "First wrong step: none" if every step is correct',
     '"First wrong step: none" if every step is correct'}, key=len, reverse=True) if frag.strip()]
_NOT_AN_ANSWER = re.compile(r"[ \t]*(?:\(?[ \t]*(?:" + "|".join(TAG_OF_STEP.values()) + r")\b|is (?:correct|right|fine|ok)\b)",
                            re.I)
_HEDGE = re.compile(r"[ \t]*(?:\([^)\n]{0,40}\)|(?:MC|CM|CE)\b)?[ \t]*(?:,|/|\bor\b|\band\b)[ \t]*(?:step[ \t]*)?"
                    r"(?P<v>none|zero|\d+)(?![.,]\d)", re.I)


def strip_prompt(reply: str) -> str:
    """The reply without the prompt's own sentences (the instructions, the answer templates)."""
    for pat in _PROMPT_TEXT:
        reply = pat.sub(" ", reply)
    return reply


def _hedged(v: str, tail: str) -> list[str]:
    """The other answers a hedge names right after the step ("3, 4 or 5", "3 or none")."""
    out, pos = [], 0
    while (h := _HEDGE.match(tail, pos)):
        out.append(h.group("v").lower())
        pos = h.end()
    norm = {"zero": "none", "0": "none"}
    return [x for x in out if norm.get(x, x) != norm.get(v, v)]


@dataclass(frozen=True)
class Reading:
    step: int | None  # 0 = no wrong step; 1..7; None = the reply could not be read
    error_class: str  # "MC" / "CM" / "CE" (given or the step's), "" for none or unread
    class_given: bool  # the reply named the class itself
    how: str  # the READINGS entry that read it, or "" when unread
    reason: str  # what was read, or why nothing could be

    @property
    def answer(self) -> str:
        """The canonical answer: "none", "3 CM", or "" when unread."""
        if self.step is None:
            return ""
        return "none" if self.step == 0 else f"{self.step} {self.error_class}"


def _class_after(text: str) -> str:
    line = text.split("\n", 1)[0][:80]
    m = re.search(r"\b(" + "|".join(ERROR_CLASSES) + r")\b", line)
    if m:
        return m.group(1)
    m = re.search(r"\b(" + "|".join(CLASS_WORDS) + r")", line, re.I)
    return CLASS_WORDS[m.group(1).lower()] if m else ""


def read_reply(text) -> Reading:
    """The step and class a reply names (never raises; model output is only matched, never run)."""
    if not isinstance(text, str):
        return Reading(None, "", False, "", f"not text: {type(text).__name__}")
    reply = text[:MAX_REPLY_CHARS].strip()
    if not reply:
        return Reading(None, "", False, "", "empty reply")
    reply = strip_prompt(reply).strip()
    if not reply:
        return Reading(None, "", False, "", "the reply only repeats the prompt")
    for how, (pat, _example) in READINGS.items():
        found = [m for m in pat.finditer(reply)
                 if how == "no_error" or not _NOT_AN_ANSWER.match(reply, m.end())]
        if not found:
            continue
        m = found[-1]
        v = m.group("v").lower()
        others = [] if how == "no_error" else _hedged(v, reply[m.end():])
        if others:
            return Reading(None, "", False, how, f"{how}: a hedge naming several answers ({', '.join([v, *others])})")
        if how == "no_error" or v in ("none", "zero", "0") or (v == "-1" and how == "boxed"):
            return Reading(0, "", False, how, f"{how}: no wrong step")
        step = int(v)
        if step not in STEP_CLASS:
            return Reading(None, "", False, how, f"{how}: step {step} is outside 1-7")
        cls = _class_after(reply[m.end():])
        given = bool(cls)
        return Reading(step, cls or STEP_CLASS[step], given, how,
                       f"{how}: step {step}, class {cls or STEP_CLASS[step]}{'' if given else ' (of the step)'}")
    head = re.sub(r"\s+", " ", reply)[:60]
    return Reading(None, "", False, "", f"no step named (reply starts: {head!r})")


# --- metrics -----------------------------------------------------------------------------------------

def outcome(gold_step: int, gold_class: str, step: int | None, error_class: str) -> dict:
    """One item's scores: hit (exact first wrong step, `none` for correct), class_ok, erroneous, parsed."""
    hit = step is not None and step == gold_step
    pred_c = "invalid" if step is None else ("none" if step == 0 else (error_class or STEP_CLASS.get(step, "")))
    return {"erroneous": bool(gold_step), "hit": hit, "class_ok": pred_c == (gold_class if gold_step else "none"),
            "parsed": step is not None}


def results(doc, results_):
    """process_results of the r3_stepverify tasks: per-sample metrics plus the answer read and the reason."""
    r = read_reply(results_[0] if results_ else "")
    o = outcome(int(doc["first_error"]), doc["error_class"], r.step, r.error_class)
    err, hit = o["erroneous"], float(o["hit"])
    return {"f1": (err, hit), "acc_erroneous": (err, hit), "acc_correct": (not err, hit), "exact": hit,
            "class_acc": float(o["class_ok"]), "parsed": float(o["parsed"]), "answer": r.answer, "reason": r.reason}


def _mean_of(items, want: bool) -> float:
    sel = [s for is_err, s in items if is_err == want]
    return sum(sel) / len(sel) if sel else float("nan")


def agg_where(items) -> float:
    """Mean score over the items whose flag is true (items: (flag, hit)): acc_erroneous takes
    (erroneous, hit), acc_correct (correct, hit); nan if no item has the flag."""
    return _mean_of(items, True)


def harmonic(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b):
        return float("nan")
    return 2 * a * b / (a + b) if a + b else 0.0


def agg_f1(items) -> float:
    """ProcessBench F1: the harmonic mean of the accuracy on erroneous and on correct solutions."""
    return harmonic(_mean_of(items, True), _mean_of(items, False))


def agg_distinct(items) -> float:
    """The number of distinct values (the answers or reasons themselves stay in the samples file)."""
    return float(len(set(items)))


def summary(outcomes: list[dict]) -> dict:
    """The task's metrics over outcome() dicts, with counts (the leaderboard scores every row with it)."""
    err = [o["hit"] for o in outcomes if o["erroneous"]]
    cor = [o["hit"] for o in outcomes if not o["erroneous"]]
    n = len(outcomes)
    acc_e = sum(err) / len(err) if err else float("nan")
    acc_c = sum(cor) / len(cor) if cor else float("nan")
    return {"n": n, "n_erroneous": len(err), "n_correct": len(cor), "f1": harmonic(acc_e, acc_c),
            "acc_erroneous": acc_e, "acc_correct": acc_c,
            "exact": sum(o["hit"] for o in outcomes) / n if n else float("nan"),
            "class_acc": sum(o["class_ok"] for o in outcomes) / n if n else float("nan"),
            "parsed": sum(o["parsed"] for o in outcomes) / n if n else float("nan")}
