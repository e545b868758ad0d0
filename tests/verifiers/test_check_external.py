"""The checker against other projects' own graders and test suites (regression tables).

1. Math-Verify (github.com/huggingface/Math-Verify, MIT licence), tests/test_all.py at commit
   5d148cfaaf99: the number, expression, percent, unit and text cases that a physics answer can
   meet, one row per case in tests/verifiers/data/math_verify_cases.jsonl, each naming its test function and
   index. Left out: matrices, number bases, unions of intervals, tuples/intervals of coordinates,
   two boxed answers, and cases whose gold is a whole solution rather than an answer.
   Math-Verify's call is ``verify(parse(gold), parse(pred))``; ours is ``check(pred, gold)``.
2. JEEBench (github.com/dair-iitd/jeebench), compute_metrics.py ``compute_score``: reimplemented
   below as the oracle; the checker must give the same score to answers written in sentences.
"""
import json
import pathlib

import pytest

from verifiers import CheckConfig, check

MV = [json.loads(line) for line in
      (pathlib.Path(__file__).parent / "data" / "math_verify_cases.jsonl").read_text(encoding="utf-8").splitlines()]


def test_math_verify_table_is_the_documented_selection():
    assert len(MV) >= 140
    assert {r["category"] for r in MV} == {"number", "expression", "percent", "unit", "text"}
    assert all(r["source"].startswith("huggingface/Math-Verify@5d148cfaaf99 tests/test_all.py::") for r in MV)
    assert sum(not r["expected"] for r in MV) >= 15  # the table holds negative cases too


@pytest.mark.parametrize("row", MV, ids=[r["source"].split("::")[1] for r in MV])
def test_math_verify_case(row):
    v = check(row["pred"], row["gold"])
    assert v.equivalent is row["expected"], v


# --- JEEBench ------------------------------------------------------------------------------------

def official_compute_score(gold: str, resp: str, question_type: str) -> float:
    """JEEBench compute_metrics.py ``compute_score`` (dair-iitd/jeebench), same rules:
    MCQ(multiple): 1.0 for the exact set, 0.25 per chosen option when none is wrong, else 0;
    MCQ: exact set of letters; Integer/Numeric: 0 for "None", else |gold - resp| <= 0.01."""
    if question_type == "MCQ(multiple)":
        g = {c for c in "ABCD" if c in gold}
        r = {c for c in "ABCD" if c in resp}
        if r == g:
            return 1.0
        return 0.25 * len(r) if not r - g else 0.0
    if question_type == "MCQ":
        return float({c for c in "ABCD" if c in gold} == {c for c in "ABCD" if c in resp})
    if resp == "None":
        return 0.0
    return float(abs(float(gold) - float(resp)) <= 0.01)


KIND = {"MCQ": "mcq", "MCQ(multiple)": "mcq_multi", "Integer": "integer", "Numeric": "numeric"}

# golds of the shapes JEEBench uses (letters, integers, 2-decimal numerics)
GOLDS = [("MCQ", "B"), ("MCQ", "D"), ("MCQ(multiple)", "ABD"), ("MCQ(multiple)", "CD"), ("MCQ(multiple)", "C"),
         ("MCQ(multiple)", "ABCD"), ("Integer", "9"), ("Integer", "0"), ("Integer", "130"), ("Numeric", "0.75"),
         ("Numeric", "6.3"), ("Numeric", "5.56"), ("Numeric", "100.00"), ("Numeric", "0.18"), ("Numeric", "25.6")]


def _extracts(qtype: str, gold: str) -> list[str]:
    """Intended answers: right, near, wrong, partial."""
    if qtype == "MCQ":
        return [gold, "A" if gold != "A" else "C"]
    if qtype == "MCQ(multiple)":
        wrong = next(c for c in "ABCD" if c not in gold) if len(gold) < 4 else None
        out = [gold, gold[0]]
        if len(gold) > 1:
            out.append(gold[:-1])
        if wrong:
            out += [gold + wrong, wrong]
        return [''.join(sorted(set(x))) for x in out]
    g = float(gold)
    if qtype == "Integer":
        return [gold, str(int(g) + 1)]
    return [gold, f"{g + 0.004:.3f}", f"{g + 0.02:.2f}", f"{g:.1f}" if round(g, 1) != g else f"{g:.3f}"]


LETTER_TEMPLATES = [
    lambda ls: f"Therefore, the correct answer is {', '.join(ls)}.",
    lambda ls: "Hence the correct option" + ("s are " if len(ls) > 1 else " is ") + " and ".join(f"({c})" for c in ls) + ".",
    lambda ls: f"Final Answer: The final answer is {''.join(ls)}. I hope it is correct.",
    lambda ls: f"All the statements were checked above, so the answer is \\boxed{{{''.join(ls)}}}",
    lambda ls: "Thus, option" + ("s " if len(ls) > 1 else " ") + " and ".join(f"({c})" for c in ls)
    + (" are" if len(ls) > 1 else " is") + " correct.",
    lambda ls: f"Answer: {', '.join(f'({c})' for c in ls)}",
    lambda ls: f"**Answer:** {''.join(ls)}",
    lambda ls: f"The correct answer is option {' and '.join(ls)}.",
]
NUMBER_TEMPLATES = [
    lambda x: f"Therefore, the value of the ratio is {x}.",
    lambda x: f"Final Answer: The final answer is ${x}$. I hope it is correct.",
    lambda x: f"So we get n = {x}, which is the required value.",
    lambda x: f"Putting the values in, the speed is {x} m/s.",
    lambda x: f"**Answer:** {x}",
    lambda x: f"Hence the required answer is \\boxed{{{x}}}.",
    lambda x: f"The ratio comes out to be approximately {x}.",
    lambda x: f"The answer is {x} (rounded to two decimal places).",
    lambda x: f"Solving, $t = {x}\\,\\mathrm{{s}}$.",
    lambda x: f"From the energy equation we find that the work done is {x} J, so the answer is {x}.",
    lambda x: f"Using $v^2 = u^2 + 2as$ with $u = 0$, we get $x \\approx {x}$.",
    lambda x: f"The answer is: {x}",
    lambda x: f"The required value is {float(x) * 10:g} \\times 10^{{-1}}.",
    lambda x: f"Numerically, the answer is {x}, which matches the expected order of magnitude (about 10 units).",
    lambda x: f"Answer: {x} (to 2 decimal places)",
]


def jeebench_rows():
    rows = []
    for qtype, gold in GOLDS:
        for x in _extracts(qtype, gold):
            if qtype.startswith("MCQ"):
                rows += [(qtype, gold, x, t(list(x))) for t in LETTER_TEMPLATES]
            else:
                rows += [(qtype, gold, x, t(x)) for t in NUMBER_TEMPLATES]
    return rows


ROWS = jeebench_rows()


def test_jeebench_table_size():
    assert len(ROWS) >= 200
    assert {official_compute_score(g, x, q) for q, g, x, _ in ROWS} >= {0.0, 0.25, 0.5, 1.0}


@pytest.mark.parametrize("qtype,gold,extract,sentence", ROWS)
def test_jeebench_official_score_on_sentences(qtype, gold, extract, sentence):
    v = check(sentence, gold, kind=KIND[qtype], cfg=CheckConfig(mode="jeebench"))
    assert v.score == official_compute_score(gold, extract, qtype), v
