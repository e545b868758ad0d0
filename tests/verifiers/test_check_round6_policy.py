"""Checker round six, a policy's search: outputs a generated search (templates and mutations around each gold)
found accepted for a wrong or uncommitted answer, each family closed in general form, with near misses that a
careful grader still accepts.

- HTML character references are read as what they render ("&lt;5 m/s" is a bound, "&ge; 5 m/s" too), and
  markdown strikethrough ("~~5 m/s~~") withdraws the struck text;
- "\\not=" / "\\not" strike a relation or value; "\\text{not } 5" negates the value inside the text command;
- a value offered with a doubt or a disavowal ("maybe 5 m/s", "5 m/s (guess)", "5 m/s (wrong)", "(unverified)",
  "anything but 5 m/s", "5 m/s or not", "would be 5 m/s", "unless ...") or as a multiple ("twice 5 m/s") is no
  committed answer;
- a malformed number ("3.23.2 J", "3.2.5 J", "3.2 000 J") is no value;
- an answer named as an alternative, someone else's or a supposition ("Alternative answer: 5 m/s", "Expected
  answer: 5 m/s", "Let me check whether the answer is 5 m/s") is not committed, and an output whose only value
  sits in a premise ("Suppose v = 5 m/s.", "Given: v = 5 m/s", "The initial value is 5 m/s.") states no answer.
"""
import pytest

from verifiers import check


def _ok(pred, ref, kind=None):
    return check(pred, ref, kind=kind).equivalent


@pytest.mark.parametrize("pred,gold", [
    ("Answer: &lt;5 m/s", "5 m/s"),
    ("Answer: &gt; 12 N", "12 N"),
    ("Answer: &ge; 3.2 J", "3.2 J"),
    ("Answer: &le;9.8 m/s^2", "9.8 m/s^2"),
    ("Answer: &#8805; 5 m/s", "5 m/s"),
    ("Answer: ~~5 m/s~~", "5 m/s"),
    ("Answer: ~~12 N~~ 15 N", "12 N"),
    ("\\boxed{\\not= 5 \\text{ m/s}}", "5 m/s"),
    ("\\boxed{\\text{not }5 \\text{ m/s}}", "5 m/s"),
])
def test_entities_strikethrough_and_struck_relations_are_refused(pred, gold):
    assert not _ok(pred, gold)


@pytest.mark.parametrize("pred,gold", [
    ("Answer: maybe 5 m/s", "5 m/s"),
    ("Answer: possibly 12 N", "12 N"),
    ("Answer: 3.2 J probably", "3.2 J"),
    ("Answer: 5 m/s (unverified)", "5 m/s"),
    ("Answer: 5 m/s (uncertain)", "5 m/s"),
    ("Answer: 5 m/s (I'm not sure)", "5 m/s"),
    ("Answer: 5 m/s (guess)", "5 m/s"),
    ("Answer: 5 m/s (wrong)", "5 m/s"),
    ("Answer: 12 N (incorrect)", "12 N"),
    ("Answer: anything but 5 m/s", "5 m/s"),
    ("Answer: other than 5 m/s", "5 m/s"),
    ("Answer: 5 m/s or not", "5 m/s"),
    ("Answer: 5 m/s unless friction matters", "5 m/s"),
    ("Answer: undefined; naive estimate 5 m/s", "5 m/s"),
    ("Answer: twice 5 m/s", "5 m/s"),
    ("Answer: half of 12 N", "12 N"),
    ("Answer: 3.23.2 J", "3.2 J"),
    ("Answer: 3.2.5 J", "3.2 J"),
    ("Answer: 3.2 000 J", "3.2 J"),
])
def test_doubted_disowned_multiplied_or_malformed_values_are_refused(pred, gold):
    assert not _ok(pred, gold)


@pytest.mark.parametrize("pred,gold", [
    ("Answer: 7 m/s\n\n(Alternative answer: 5 m/s)", "5 m/s"),
    ("Answer: 15 N\n\nAlternative answer: 12 N", "12 N"),
    ("Expected answer: 5 m/s", "5 m/s"),
    ("Let me check whether the answer is 5 m/s.", "5 m/s"),
    ("Given: v = 5 m/s", "5 m/s"),
    ("Known: 5 m/s. Unknown: x.", "5 m/s"),
    ("Suppose v = 5 m/s.", "5 m/s"),
    ("Assume v = 12 N.", "12 N"),
    ("Try v = 5 m/s.", "5 m/s"),
    ("Guess: v = 5 m/s.", "5 m/s"),
    ("Hypothesis: 5 m/s", "5 m/s"),
    ("Target: 5 m/s", "5 m/s"),
    ("Goal: show v = 5 m/s", "5 m/s"),
    ("We want to verify v = 5 m/s", "5 m/s"),
    ("The reference says 5 m/s.", "5 m/s"),
    ("I'd expect something like 5 m/s.", "5 m/s"),
    ("The initial value is 5 m/s.", "5 m/s"),
    ("Starting from 5 m/s, it decreases.", "5 m/s"),
])
def test_alternative_others_or_premise_values_are_no_answer(pred, gold):
    assert not _ok(pred, gold)


@pytest.mark.parametrize("pred,gold", [
    ("Answer: 5 m/s", "5 m/s"),
    ("Answer: &asymp;5 m/s", "5 m/s"),
    ("Answer: ~~7 m/s~~ 5 m/s", "5 m/s"),
    ("v = 5~\\text{m/s}", "5 m/s"),
    ("The speed is $5~~\\text{m/s}$.", "5 m/s"),
    ("Answer: 5 m/s (assuming no friction)", "5 m/s"),
    ("Answer: 5 m/s (approximately)", "5 m/s"),
    ("The most likely speed is 5 m/s.", "5 m/s"),
    ("Answer: a quarter of a joule", "0.25 J"),
    ("Answer: 3.20 J", "3.2 J"),
    ("Answer: 5 000 m", "5000 m"),
    ("The correct answer is 5 m/s.", "5 m/s"),
    ("Given that m = 2 kg, the speed is 5 m/s.", "5 m/s"),
    ("Suppose v0 = 2 m/s, then v = 5 m/s.", "5 m/s"),
    ("If g = 10 m/s^2, then v = 5 m/s.", "5 m/s"),
    ("Is the answer 7 m/s? No. The answer is 5 m/s.", "5 m/s"),
    ("Answer: $\\boxed{m g h}$", "m*g*h"),
])
def test_near_misses_still_pass(pred, gold):
    assert _ok(pred, gold)
