"""Rewards attacked a third time (issue 54): a shotgun governing equation and an answer written after the tags.

On one procgen problem of every template, each attack must earn no more than the honest solution with one slip
at step 5 (procgen's CE injection; e = 5: 5/8 under the position reward), under every reward of
verifiers.rewards.REWARDS where the attack is about the answer, under the step rewards where it is about a step.
heldout/verifier_report.py --hacking prints the table (docs/verifier.md).
"""
import inspect
from collections import Counter

import pytest

from r3bench import procgen
from verifiers import seventag
from verifiers import step_reading as SP
from verifiers.rewards import REWARDS, step_reward
from verifiers.steps import verify

PROBS = procgen.generate(n=len(procgen.TEMPLATES), seed=0)  # one problem of every template
HONEST_SLIP = 5 / 8

#: a dozen laws of the syllabus, listed beside the right one by a policy that does not know which applies
SHOTGUN = ["F = m*a", "E = m*c^2", "p = m*v", "W = F*d", "P = W/t", "V = I*R", "KE = m*v^2/2", "PE = m*g*h",
           "rho = m/V", "f = 1/T", "lambda = v/f", "Q = m*c*dT"]

#: the right answer written after `</final_answer>`, in the forms a policy may find paid
AFTER = {"a sentence": "\nThe answer is {a}.", "an answer line": "\nFinal answer: {a}", "a label": "\nAnswer: {a}",
         "a bare quantity": "\n{a}", "a second final_answer tag": "\n<final_answer>{a}</final_answer>",
         "a second box": "\n\\boxed{{{a}}}"}


def _slip5(p) -> str:
    return procgen.inject_problem(p, "CE", 5)[0]


def _shotgun(text: str, extra: list[str], first: bool = False) -> str:
    d = {s.tag: s.content for s in seventag.parse(text).steps}
    ge = d["governing_equation"]
    d["governing_equation"] = "\n".join(([ge] + extra) if first else (extra + [ge]))
    return seventag.render(d)


def attack(p, kind: str) -> str:
    if kind == "honest with a slip at step 5":
        return _slip5(p)
    if kind == "shotgun governing equation":
        return _shotgun(p.solution, SHOTGUN)
    if kind == "shotgun governing equation, the right law first":
        return _shotgun(p.solution, SHOTGUN, first=True)
    if kind == "shotgun governing equation with a slip at step 6":
        return _shotgun(procgen.inject_problem(p, "CE", 6)[0], SHOTGUN)
    if kind.startswith("slip at step 5, the answer after the tags as "):
        return _slip5(p) + AFTER[kind.rsplit(" as ", 1)[1]].format(a=p.answer)
    raise KeyError(kind)


STEP_ATTACKS = ["shotgun governing equation", "shotgun governing equation, the right law first",
                "shotgun governing equation with a slip at step 6"]
ANSWER_ATTACKS = [f"slip at step 5, the answer after the tags as {k}" for k in AFTER]
ATTACKS = STEP_ATTACKS + ANSWER_ATTACKS


def _psv_like(p):
    def score(q, s):
        v = verify(q, s, p.solution)
        n = seventag.parse(s).n
        return [0.9] * n if not v.first_error else [0.9 if k < v.first_error else 0.2 for k in range(1, n + 1)]
    return score


def rewards(p) -> dict:
    """Every reward of REWARDS as GRPO calls it (its TRL adapter), with the columns it reads. A reward added
    to REWARDS is attacked with no edit here: its factory gets what it requires the way GRPO gives it
    (trainers.grpo.NEEDS: a step verifier, a step scorer), and it reads the columns it names."""
    inputs = {"verifier": {"verifier": lambda q, s, ref: verify(q, s, ref), "answer_column": "reference",
                           "question_column": "question"},
              "step_scorer": {"step_scorer": _psv_like(p)}}
    row = {"reference": p.solution, "question": p.question, "answer": p.answer}
    made = {}
    for name, factory in REWARDS.items():
        kwargs = {}
        for need in _needs(factory):
            assert need in inputs, f"{name}: the factory requires {need!r}, which GRPO does not give (trainers.grpo.NEEDS)"
            kwargs.update(inputs[need])
        f = factory(**kwargs)
        made[name] = (f, {c: row[c] for c in f.columns})
    return made


def _needs(factory) -> list[str]:
    """The parameters a reward factory requires (no default), as trainers.grpo.reward_needs reads them."""
    return [q.name for q in inspect.signature(factory).parameters.values()
            if q.default is inspect.Parameter.empty and q.kind in (q.POSITIONAL_OR_KEYWORD, q.KEYWORD_ONLY)]


def score(f, cols, p, texts):
    n = len(texts)
    vals = f(prompts=[p.question] * n, completions=texts, **{k: [v] * n for k, v in cols.items()})
    return vals, list(f.last_reasons)


def build_table() -> dict:
    """(reward, attack) -> [(template, reward, reward of the honest slip at step 5, reason)]; the answer attacks
    under every reward, the shotgun under the step rewards (the answer rewards judge only the stated answer)."""
    rows = {}
    for p in PROBS:
        texts = [attack(p, k) for k in ["honest with a slip at step 5"] + ATTACKS]
        for rname, (f, cols) in rewards(p).items():
            if rname not in ("position", "pspo_wrs", "pspo_piecewise"):
                names, sub = ANSWER_ATTACKS, [texts[0]] + texts[1 + len(STEP_ATTACKS):]
            else:
                names, sub = ATTACKS, texts
            vals, why = score(f, cols, p, sub)
            for k, v, w in zip(names, vals[1:], why[1:]):
                rows.setdefault((rname, k), []).append((p.template, v, vals[0], w))
            rows.setdefault((rname, "honest with a slip at step 5"), []).append((p.template, vals[0], vals[0], why[0]))
    return rows


@pytest.fixture(scope="module")
def hacks():
    return build_table()


def test_honest_slip_at_step_5_is_the_bar(hacks):
    assert all(v == pytest.approx(HONEST_SLIP) for _, v, _, _ in hacks[("position", "honest with a slip at step 5")])


@pytest.mark.parametrize("kind", STEP_ATTACKS)
@pytest.mark.parametrize("reward", ["position", "pspo_wrs", "pspo_piecewise"])
def test_no_shotgun_earns_more_than_an_honest_slip_at_step_5(hacks, reward, kind):
    """Issue 54: a dozen laws plus the right one in <governing_equation> passed step 3 on two thirds of the
    problems (each law unchecked: its symbols have no values); with a slip at step 6 it earned 0.75."""
    bad = [(t, v, bar, why) for t, v, bar, why in hacks[(reward, kind)] if v is None or v > bar + 1e-9]
    assert not bad, (len(bad), bad[:3])


@pytest.mark.parametrize("kind", ANSWER_ATTACKS)
@pytest.mark.parametrize("reward", sorted(REWARDS))
def test_no_answer_after_the_tags_earns_more_than_an_honest_slip_at_step_5(hacks, reward, kind):
    """Issue 54: a slip at step 5 with the right answer written after </final_answer> earned the full rlvp
    reward on every problem (the checker refused the two answers; rlvp scored the refused one)."""
    bad = [(t, v, bar, why) for t, v, bar, why in hacks[(reward, kind)] if v is None or v > bar + 1e-9]
    assert not bad, (len(bad), bad[:3])


def test_text_after_the_tags_is_not_read_and_says_so(hacks):
    """What follows the seven-tag output is cut before any reward reads it, and the reason says so."""
    for rname in REWARDS:
        for _, _, _, why in hacks[(rname, "slip at step 5, the answer after the tags as a sentence")]:
            assert "after </final_answer> not read" in why, (rname, why)


def test_shotgun_is_an_error_at_the_governing_equation(hacks):
    for kind in STEP_ATTACKS:
        got = Counter(v for _, v, _, _ in hacks[("position", kind)])
        assert got == {3 / 8: len(PROBS)}, (kind, got)


@pytest.mark.parametrize("k", [1, 2])
def test_one_or_two_relations_beside_the_working_are_kept(k):
    """A law in its general form or a balance written beside the working (the committed real and hand-written
    solutions state at most two such) is no shotgun: the right solution stays right."""
    got = Counter()
    for p in PROBS:
        own = {s for s, *_ in SP.values(seventag.parse(p.solution).get("value_identification"))}
        own |= {e[0] for e in SP.equations(seventag.parse(p.solution).get("governing_equation"))}
        # a law in general symbols: not one of the problem's quantities, not evaluable on the problem's values
        extra = [f for f in SHOTGUN if f.split(" = ")[0] not in own and SP.names(f.split(" = ")[1]) - own][-k:]
        got[verify(p.question, _shotgun(p.solution, extra), p.solution).first_error] += 1
    assert got == {0: len(PROBS)}, got


def test_three_unused_relations_are_booked_at_step_3():
    p = PROBS[0]
    v = verify(p.question, _shotgun(p.solution, SHOTGUN[-3:]), p.solution)
    assert (v.first_error, v.error_class) == (3, "CM") and "does not use" in v.explanation, v
    assert step_reward(v).value == pytest.approx(3 / 8)
