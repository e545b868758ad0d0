"""Worst-case time of one check on 20,000-character adversarial outputs (issue 32: every check inside
the 2 s deadline), with math-verify on the same inputs where it reads that kind of answer.

    python -m pytest benchmarks/test_bench_worstcase.py -q -s

Writes benchmarks/results/check/worstcase.md. Each input is an output a policy could write to stall
a reward: whitespace floods after an answer cue, unclosed openers, long digit strings, nested LaTeX,
looping answers, alternating letters. The checker's worker is warmed first (its cold start is not a
check's work); each input is checked cold (caches cleared) against references of every kind.
math-verify runs in the main thread with its own (signal) timeouts; its times are for comparison only.
"""
import pathlib
import time

import pytest

from verifiers import CheckConfig, answer, check, worker

N = 20000
HERE = pathlib.Path(__file__).parent
OUT = HERE / "results" / "check" / "worstcase.md"


def _fill(unit: str, head: str = "", tail: str = "") -> str:
    body = unit * ((N - len(head) - len(tail)) // max(len(unit), 1) + 1)
    return head + body[:N - len(head) - len(tail)] + tail


INPUTS = {
    "'The answer' + spaces + '.'": _fill(" ", "The answer", "."),
    "'answer is' + spaces + 'x'": _fill(" ", "answer is", "x"),
    "'option' + spaces + 'A'": _fill(" ", "option", "A"),
    "'I choose' + ' , ' flood + 'A'": _fill(" , ", "I choose", "A"),
    "'Answer:' + tabs/newlines + 'B'": _fill("\t \n", "Answer:", "B"),
    "'(A) ' repeated": _fill("(A) ", "The correct answer is "),
    "alternating 'Answer: (C)/(B)' lines": _fill("Answer: (C)\nAnswer: (B)\n"),
    "unclosed \\boxed{": _fill("\\boxed{"),
    "unclosed \\(": _fill("\\("),
    "dollar signs": _fill("$"),
    "unclosed <final_answer>": _fill("<final_answer>"),
    "nested \\frac{": _fill("\\frac{", "\\boxed{", "}"),
    "nested \\sqrt{": _fill("\\sqrt{", "\\boxed{", "}"),
    "open parentheses": _fill("("),
    "20k digits": _fill("9", "The answer is "),
    "'1,' list": _fill("1,", "The answer is "),
    "'5 ' list + m/s": _fill("5 ", "The answer is ", "m/s"),
    "space-grouped '1 200 '": _fill("1 200 ", "", "J"),
    "power tower 10^{": _fill("10^{", "\\boxed{", "}"),
    "'x^' chain": _fill("x^", "\\boxed{", "2}"),
    "'at least ' flood": _fill("at least ", "The answer is ", "5 m/s"),
    "'Actually, ' flood": _fill("Actually, ", "The answer is 5 m/s. ", "6 m/s"),
    "'not ' flood": _fill("not ", "The answer is ", "5"),
    "truncated repeat": _fill("The power is 35 A. ", "", "The power is 35"),
    "looping (1+m/N)": _fill("The velocity is v(1+m/N) where m is the mass ... "),
    "zero-width chars in digits": _fill("1\u200b"),
    "Greek letters": _fill("λ", "\\boxed{", "}"),
    "letter run 'mv'": _fill("mv", "\\boxed{", "}"),
    "'e' run": _fill("e", "\\boxed{", "}"),
    "\\text{ flood": _fill("\\text{", "\\boxed{5", "}"),
    "'.. ' range flood": _fill("2..", "The answer is "),
    "'or' hedges": _fill("5 m/s or ", "The answer is ", "6 m/s"),
    "sentences with numbers": _fill("After 2 s the speed is 5 m/s. "),
    "\\hat{i} vectors": _fill("3\\hat{i} + ", "\\boxed{", "4\\hat{j}}"),
    "number words": _fill("twenty ", "The answer is ", "m/s"),
    "two boxes around 20k dollar signs": _fill("$", "\\boxed{1}", "\\boxed{2}"),
    "'answer is $' + ' .' flood": _fill(" .", "answer is $"),
    "negated digit run": _fill("9", "The answer is not ", " m"),
}
REFS = [("5 m/s", None), ("A", "mcq"), ("BD", "mcq_multi"), (r"2\pi\sqrt{l/g}", None), ("1.6e-19 C", None),
        ("(3, 4)", None)]
ROWS = []


@pytest.fixture(scope="module", autouse=True)
def _warm():
    worker.pool().warm(1)
    check(r"\boxed{\frac{1}{2} m v^2}", "m*v**2/2", kind="symbolic")
    check("5 km/h", "5 m/s")  # the unit registry is built once per process, before any timed check
    yield
    _report()


def _mathverify(pred: str, ref: str):
    try:
        from math_verify import parse, verify
    except ImportError:
        return None
    t = time.monotonic()
    try:
        verify(parse(ref), parse(pred))
    except Exception:  # noqa: BLE001 - math-verify's own failure is a data point, not a bench failure
        pass
    return time.monotonic() - t


@pytest.mark.parametrize("name", list(INPUTS))
def test_every_check_within_the_deadline(name):
    text = INPUTS[name]
    assert len(text) == N
    worst = (0.0, None)
    mv = 0.0
    for ref, kind in REFS:
        answer.clear_caches()
        t = time.monotonic()
        v = check(text, ref, kind=kind)
        dt = time.monotonic() - t
        if dt > worst[0]:
            worst = (dt, f"{ref} -> {v.reason[:60]}")
        if kind is None and ref in ("5 m/s", r"2\pi\sqrt{l/g}"):
            got = _mathverify(text, ref)
            mv = max(mv, got) if got is not None else mv
    ROWS.append((name, worst[0], worst[1], mv))
    assert worst[0] < CheckConfig().timeout_s + 0.05, worst  # the deadline, plus the time to return


def _report():
    if not ROWS:
        return
    ROWS.sort(key=lambda r: -r[1])
    lines = ["# Worst-case checks on 20,000-character adversarial outputs", "",
             "`python -m pytest benchmarks/test_bench_worstcase.py -q -s`; one check per (input, reference) with",
             f"caches cleared, worker warm; references: {', '.join(r for r, _ in REFS)}; deadline "
             f"{CheckConfig().timeout_s:g} s. math-verify: parse + verify on the numeric and symbolic references.", "",
             "| input | longest r3bench check (s) | its verdict | math-verify (s) |", "|---|---|---|---|"]
    for name, dt, why, mv in ROWS:
        lines.append(f"| {name} | {dt:.3f} | {why.replace('|', '/')} | {mv:.3f} |")
    lines += ["", f"Longest r3bench check: {ROWS[0][1]:.3f} s ({ROWS[0][0]}); longest math-verify: "
              f"{max(r[3] for r in ROWS):.3f} s."]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
