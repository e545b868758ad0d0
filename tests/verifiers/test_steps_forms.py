"""The step verifier in the benchmarks' answer forms (r3bench.procgen.forms): a letter (single or
multi-correct MCQ) or a rounded integer in the final-answer step; and the leftovers of the last round
(a substitution written in the law's natural form, a bracketed unit in the box)."""
import random

import pytest

from r3bench import procgen
from r3bench.procgen import forms
from r3bench.procgen.export import CELLS
from r3bench.procgen.mixture import POOL
from verifiers import seventag
from verifiers.steps import verify

# one instance of every fourth template of the bank, in every form (as tests/procgen/test_procgen_forms.py)
PROBS = [procgen.generate(n=1, seed=5, templates=[t])[0] for t in POOL[::4]]
RNG = random.Random(0)
ITEMS = {f: [it for p in PROBS if (it := forms.make_item(p, f, RNG)) is not None] for f in forms.FORMS}


def with_options(it) -> str:
    """The question as the structured prompt shows it (r3bench.core.prompts): the options below it."""
    return it.question + "\nOptions:\n" + "\n".join(f"({forms.LETTERS[i]}) {o}" for i, o in enumerate(it.options))


def boxed(text: str, new: str) -> str:
    fa = seventag.parse(text).get("final_answer").content
    return text.replace(fa, f"\\boxed{{{new}}}")


def ref(final: str, calc: str = "s = 378 m", sub: str = "s = 21*18") -> str:
    return seventag.render({
        "problem_analysis": "Find the distance travelled (s).", "principle": "Uniform motion: distance = speed x time.",
        "governing_equation": "s = v*t", "value_identification": "v = 21 m/s\nt = 18 s", "substitution": sub,
        "calculation": calc, "final_answer": final})


Q = "A car drives at a constant speed of 21 m/s for 18 s. How far does it go?"
OPTS = "\nOptions:\n(A) 189 m\n(B) 378 m\n(C) 37.8 m\n(D) 3780 m"
MULTI = ("\nWhich of the following statements are correct?\n(A) The distance travelled s is 37.8 m.\n"
         "(B) The time t is 18 s.\n(C) The speed v is 21 m/s.\n(D) The distance travelled s is 378 m.")


# --- single-answer MCQ ------------------------------------------------------------------------------

def test_mcq_reference_is_correct_with_or_without_options():
    r = ref("\\boxed{B}")
    for q in (Q, Q + OPTS, Q + " (A) 189 m (B) 378 m (C) 37.8 m (D) 3780 m"):
        v = verify(q, r, r)
        assert v.valid and v.first_error == 0, v


def test_a_wrong_letter_is_a_step_7_error_against_the_reference():
    r = ref("\\boxed{B}")
    for wrong in ("A", "C", "BD", "(C)", "378 m"):  # a value where a letter is asked is no letter
        v = verify(Q, ref(f"\\boxed{{{wrong}}}"), r)
        assert (v.first_error, v.error_class) == (7, "CE"), v
        assert "wrong against the reference" in v.explanation


def test_a_wrong_letter_for_a_right_calculation_names_the_matching_option():
    v = verify(Q + OPTS, ref("\\boxed{C}"), ref("\\boxed{B}"))
    assert (v.first_error, v.error_class) == (7, "CE")
    assert "(B) 378 m" in v.explanation, v.explanation


def test_the_option_letter_is_checked_without_a_reference():
    """Reference-free (a real MCQ benchmark: gold letter, no worked solution): the letter must be the option
    the calculation gives; where the options cannot be read, the gold decides as before."""
    right, wrong = ref("\\boxed{B}"), ref("\\boxed{C}")
    v = verify(Q + OPTS, right, "B")
    assert v.valid and v.first_error == 0, v
    v = verify(Q + OPTS, wrong, "B")
    assert v.valid and v.first_error == 7 and "(B) 378 m" in v.explanation, v
    assert not verify(Q, wrong, "B").valid  # no options: a wrong letter cannot be placed without a reference


def test_a_right_letter_with_an_upstream_error_is_found_upstream():
    bad_calc = ref("\\boxed{B}", calc="s = 388 m")
    v = verify(Q + OPTS, bad_calc, ref("\\boxed{B}"))
    assert v.first_error == 6, v


# --- multi-correct MCQ ------------------------------------------------------------------------------

def test_multi_reference_is_correct_and_each_wrong_set_is_step_7():
    r = ref("\\boxed{BCD}")
    for q in (Q, Q + MULTI):
        v = verify(q, r, r)
        assert v.valid and v.first_error == 0, v
    for wrong in ("BC", "ABCD", "AD", "B"):
        v = verify(Q + MULTI, ref(f"\\boxed{{{wrong}}}"), r)
        assert (v.first_error, v.error_class) == (7, "CE"), (wrong, v)
    v = verify(Q + MULTI, ref("\\boxed{BC}"), "BCD")
    assert v.first_error == 7 and "(D)" in v.explanation, v


# --- rounded integer --------------------------------------------------------------------------------

QI = "A cart rolls at a constant speed of 1.43 m/s for 10 s. How far does it go? Give the answer in m, rounded to the nearest integer."


def iref(final: str, calc: str = "s = 14.3 m") -> str:
    return ref(final, calc, "s = 1.43*10").replace("v = 21 m/s", "v = 1.43 m/s").replace("t = 18 s", "t = 10 s")


def test_a_rounded_integer_is_the_calculation_rounded():
    """14 is 2% from 14.3: beyond the checker's tolerance, so only the rounding the question asks for makes it right."""
    r = iref("\\boxed{14}")
    assert verify(QI, r, r).first_error == 0
    assert verify(QI, r, "14").first_error == 0  # reference-free with an integer gold
    assert verify(QI, iref("\\boxed{14 m}"), r).first_error == 0
    for wrong in ("13", "15", "14.3", "14.3 m"):
        v = verify(QI, iref(f"\\boxed{{{wrong}}}"), r)
        assert v.first_error == 7, (wrong, v)


def test_a_rounded_number_is_still_wrong_for_a_numeric_reference():
    q = QI.replace(" Give the answer in m, rounded to the nearest integer.", "")
    for r in (iref("\\boxed{14.3 m}"), "14.3 m"):
        v = verify(q, iref("\\boxed{14}"), r)
        assert v.first_error == 7 or not v.valid, v
        assert "does not follow" in v.explanation, v


# --- the procedural bank in every form --------------------------------------------------------------

@pytest.mark.parametrize("form", ["mcq", "mcq_multi", "integer"])
def test_every_reference_verifies_with_its_options_shown(form):
    bad = [(it.id, v.explanation) for it in ITEMS[form]
           if (v := verify(with_options(it), it.solution, it.solution)).first_error != 0 or not v.valid]
    assert not bad, bad[:3]


@pytest.mark.parametrize("form", ["mcq", "mcq_multi"])
def test_every_wrong_letter_is_step_7_with_or_without_options(form):
    for it in ITEMS[form]:
        wrong = next(x for x in ("A", "B", "C", "D", "AB", "CD") if x != it.answer and (form == "mcq_multi" or len(x) == 1))
        text = boxed(it.solution, wrong)
        for q in (it.question, with_options(it)):
            v = verify(q, text, it.solution)
            assert (v.first_error, v.error_class) == (7, "CE"), (it.id, v)


@pytest.mark.parametrize("form", ["mcq", "mcq_multi", "integer"])
@pytest.mark.parametrize("cls,step", [c for c in CELLS if c[1]])
def test_injected_errors_in_every_form_are_found_at_their_step(form, cls, step):
    """Where the verifier places the numeric form's injection at its step (it misplaces a few: a
    known limit measured by tests/verifiers/test_steps.py), it places the same injection in the other forms there too."""
    made = 0
    for it, num in zip(ITEMS[form], [n for n in ITEMS["numeric"] if n.problem.id in {i.problem.id for i in ITEMS[form]}]):
        try:
            text, fe, c, why = forms.inject_item(it, cls, step)
            ntext = forms.inject_item(num, cls, step)[0]
        except procgen.InjectError:
            continue
        if verify(num.question, ntext, num.solution).first_error != step:
            continue
        made += 1
        v = verify(with_options(it), text, it.solution)
        assert (v.first_error, v.error_class) == (step, cls), (it.id, why, v)
    assert made >= 3, (form, cls, step)


# --- leftovers: a natural-form substitution, a bracketed unit ---------------------------------------

QF = "A ball is dropped from rest from a height of 20 m. How long does it take to reach the ground? Take g = 9.8 m/s^2."


def fall(sub: str, final: str = "\\boxed{2.02 s}", calc: str = "t = 2.02 s") -> str:
    return seventag.render({
        "problem_analysis": "Find the time (t) the ball takes to fall.", "principle": "Free fall from rest: h = 1/2 g t^2.",
        "governing_equation": "h = \\frac{1}{2} g t^2", "value_identification": "h = 20 m\ng = 9.8 m/s^2",
        "substitution": sub, "calculation": calc, "final_answer": final})


FALL = fall("t = \\sqrt{2 \\cdot 20 / 9.8}")


@pytest.mark.parametrize("sub", ["20 = \\frac{1}{2} \\cdot 9.8 \\cdot t^2", "20 = 0.5*9.8*t^2",
                                 "20 = \\frac{1}{2} \\cdot 9.8 \\cdot t^2 \\\\ t = \\sqrt{20 / 4.9}",
                                 "20 = \\frac{1}{2} g t^2", "20 m = \\frac{1}{2} \\cdot 9.8 m/s^2 \\cdot t^2"])
def test_a_substitution_in_natural_form_is_solved_for_its_unknown(sub):
    v = verify(QF, fall(sub), FALL)
    assert v.valid and v.first_error == 0, v
    v = verify(QF, fall(sub), "2.02 s")  # reference-free: the same reading
    assert v.valid and v.first_error == 0, v


def test_a_wrong_natural_form_substitution_or_its_result_is_found():
    for sub in ("20 = \\frac{1}{2} \\cdot 8.9 \\cdot t^2", "20 = 9.8 \\cdot t^2"):
        v = verify(QF, fall(sub), FALL)
        assert (v.first_error, v.error_class) == (5, "CE"), (sub, v)
    v = verify(QF, fall("20 = \\frac{1}{2} \\cdot 9.8 \\cdot t^2", "\\boxed{4.08 s}", "t = 4.08 s"), FALL)
    assert (v.first_error, v.error_class) == (6, "CE"), v


def test_a_bracketed_unit_in_the_box_follows_from_the_calculation():
    """The step verifier reads `2.02 [s]` (step_reading.quantity); whether it is the reference's answer is the
    checker's reading (verifiers.answer), which does not read the bracket yet: the verdict says so."""
    v = verify(QF, fall("t = \\sqrt{2 \\cdot 20 / 9.8}", "\\boxed{2.02 [s]}"), FALL)
    assert "does not follow" not in v.explanation and "not a number" not in v.explanation, v


def test_a_bracketed_unit_in_the_box_is_the_reference_answer():
    # the step verifier reads the box without the brackets (step_checks._answer_right), as it reads value lines
    v = verify(QF, fall("t = \\sqrt{2 \\cdot 20 / 9.8}", "\\boxed{2.02 [s]}"), FALL)
    assert v.first_error == 0, v
