"""The symbolic verifier beyond procgen's rendering: the hand-written held-out set and targeted defects."""
import json
from pathlib import Path

from r3bench import procgen
from verifiers import seventag
from verifiers.steps import report, verify

#: the last batch is kept as written and untuned: it is the held-out measure of the verifier as committed, and
#: its known misses (docs/verifier.md) are not asserted away here
UNTUNED_BATCH = 6
ROWS = [json.loads(x) for x in (Path(__file__).resolve().parents[2] / "heldout" / "verifier_heldout.jsonl")
        .read_text().splitlines() if x]


def test_heldout_set_shape():
    assert len(ROWS) >= 30 and sum(r["first_error"] == 0 for r in ROWS) >= len(ROWS) // 3
    assert {(r["first_error"], r["error_class"]) for r in ROWS if r["first_error"]} == {
        (1, "MC"), (2, "CM"), (3, "CM"), (4, "MC"), (5, "CE"), (6, "CE"), (7, "CE")}


def test_heldout_goal():
    r = report(ROWS)
    assert r["first_error_accuracy"] >= 0.8 and r["class_accuracy"] >= 0.8 and r["processbench_f1"] >= 0.8, r


def test_identical_solution_is_correct_on_every_template():
    for t in procgen.TEMPLATES:
        p = procgen.generate(n=1, seed=5, templates=[t])[0]
        v = verify(p.question, p.solution, p.solution)
        assert v.first_error == 0 and v.valid, (t.name, v)


def test_identical_solution_is_correct_in_any_notation():
    """Each hand-written correct solution verified against itself (LaTeX, prose, renamed symbols, units
    in cm/kW/mA): the old verifier could not read LaTeX equations and called them wrong laws."""
    for r in ROWS:
        if r["first_error"] == 0 and r["batch"] < UNTUNED_BATCH:
            v = verify(r["question"], r["solution"], r["solution"])
            assert v.first_error == 0 and v.valid, (r["id"], v)


def test_asked_quantity_from_the_last_equation_not_the_first_parenthesis():
    """The reference names the height (h) before the asked time (t): the old verifier took h as the target
    and judged a solution that names only t wrong at step 1 ("does not name the asked quantity h")."""
    ref = ROWS[0]["reference"].replace("The problem asks for the fall time (t). Given: the height h",
                                       "From the height (h) the problem asks for the fall time (t). Given: h")
    sol = ROWS[0]["reference"].replace("The problem asks for the fall time (t). Given: the height h, the "
                                       "gravitational acceleration g.", "We need the fall time t.")
    assert verify(ROWS[0]["question"], sol, ref).first_error == 0


def test_paraphrased_principle_is_the_same_law():
    """'Energy is conserved: the elastic potential energy ... turns into kinetic energy' names the law of
    'Conservation of energy: the spring's elastic energy k x^2 / 2 becomes kinetic energy' (word overlap
    rejected it before); a contradicting qualifier is still a wrong law."""
    from verifiers.step_reading import same_law

    ref = "Conservation of energy: the spring's elastic energy k x^2 / 2 becomes kinetic energy."
    assert same_law("Energy is conserved: the elastic potential energy stored in the spring turns into kinetic "
                    "energy.", ref)[0]
    assert not same_law("Work of the average spring force over the compression.", ref)[0]
    assert not same_law("Newton's second law along a frictionless incline.",
                        "Newton's second law along the incline, with kinetic friction mu N.")[0]
    assert not same_law("Conservation of kinetic energy in the collision.",
                        "Conservation of linear momentum in a perfectly inelastic collision.")[0]


def test_errors_are_ordered_by_position_in_the_text():
    """A slip in the first calculation (step 6) and a wrong substitution of the second equation (step 5):
    step 5 comes first in the text, though the first equation's check ran first."""
    p = next(p for p in procgen.generate(n=300, seed=4) if p.template == "circ_loop_bottom")
    sol = seventag.parse(p.solution)
    sub2 = sol.get("substitution").content.splitlines()[1]
    calc1 = sol.get("calculation").content.splitlines()[0]
    lhs, rhs = calc1.split("=", 1)
    bad = p.solution.replace(sub2, sub2 + "*3").replace(calc1, f"{lhs}= {float(rhs.split()[0]) * 2:g} m/s")
    v = verify(p.question, bad, p.solution)
    assert (v.first_error, v.error_class) == (5, "CE"), v


def test_without_a_reference_no_silent_all_correct():
    p = procgen.generate(n=3, seed=0)[0]
    v = verify(p.question, p.solution, "")
    assert v.valid is False and v.first_error != 0  # it was r = 1 ("no error") before
    v = verify(p.question, p.solution, p.answer)  # the gold answer: the reference-free mode verifies it
    assert v.valid and v.first_error == 0


REGRESSIONS = {  # held-out rows each of which exposed a verifier defect the first time it was run
    "B-2": "'friction' where the reference says frictionless was not caught",
    "H-1": "'inelastic collision' matched the elastic-collision law",
    "F-1": "prose analysis 'Call that distance s' not read as naming the target",
    "L-1": "θ2 and sin(30°) not read",
    "N-1": "\\Delta T not one symbol; a temperature difference not a given",
    "P-1": "a principle naming both uniform velocity and constant acceleration called a contradiction",
    "Q-1": "½ not read",
    "S-1": "P = V^2/R read as centripetal (v^2/r)",
    "S-2": "same, on an erroneous solution",
    "T-1": "T_{1/2} not one symbol",
    "T-3": "numbers substituted in their written unit (grams) compared with SI values",
    "U-1": "\\rho_w split into rho and _w; F_B not matched with F_b; 'upthrust' not a name of the force",
    "V-1": "kx (k times x written together) not read",
    "Y-1": "a signed velocity (-8 m/s, a sign convention) not a given",
    "Z2-1": "a paraphrased principle outside the law table rejected by word overlap",
    "Z4-1": "same (hydrostatics)",
    "Z5-1": "same (transformer)",
    "Z4-2": "a known law (buoyancy) named where the reference's law is outside the table: still caught",
    "W-3": "momentum named for an energy: still caught at step 2",
}


def test_regressions_found_by_the_heldout_batches():
    by_id = {r["id"]: r for r in ROWS}
    for rid, what in REGRESSIONS.items():
        r = by_id[rid]
        v = verify(r["question"], r["solution"], r["reference"])
        assert (v.first_error, v.error_class) == (r["first_error"], r["error_class"]), (rid, what, v)


# ---------------------------------------------------------------- reference-free mode (no seven-tag reference)

Q_LC = ("An LC circuit with L = 0.1 H and C = 10^{-3} F sits in a magnetic field rising at 0.04 T/s through its "
        "area of 1 m^2. What is the maximum current in mA?")
RIGHT_LC = seventag.render({
    "problem_analysis": "The problem asks for the maximum current (I) in mA.",
    "principle": "Faraday's law gives a constant emf; the LC circuit oscillates with current amplitude emf sqrt(C/L).",
    "governing_equation": "emf = beta*A\nI = emf*sqrt(C/L)",
    "value_identification": "beta = 0.04 T/s\nA = 1 m^2\nC = 1e-3 F\nL = 0.1 H",
    "substitution": "emf = 0.04*1\nI = 0.04*sqrt(1e-3/0.1)", "calculation": "emf = 0.04 V\nI = 4 mA",
    "final_answer": "\\boxed{4}"})


def test_reference_free_right_solution_against_the_gold():
    v = verify(Q_LC, RIGHT_LC, "4")
    assert v.valid and v.first_error == 0, v  # 10^{-3} in the question is a given; a bare 4 read in mA


def test_reference_free_places_what_it_can_show():
    misread = RIGHT_LC.replace("A = 1 m^2", "A = 5 m^2").replace("0.04*1\n", "0.04*5\n")
    assert (verify(Q_LC, misread, "4").first_error, verify(Q_LC, misread, "4").error_class) == (4, "MC")
    dims = RIGHT_LC.replace("I = emf*sqrt(C/L)", "I = emf*C/L").replace("0.04*sqrt(1e-3/0.1)", "0.04*1e-3/0.1")
    assert verify(Q_LC, dims, "4").error_class == "CM"
    slip = RIGHT_LC.replace("I = 4 mA", "I = 6 mA").replace("{4}", "{6}")
    assert (verify(Q_LC, slip, "4").first_error, verify(Q_LC, slip, "4").error_class) == (6, "CE")


def test_reference_free_wrong_law_it_cannot_show_is_no_verdict():
    """A wrong law with every step consistent: no reference can show it, so valid=False with a reason
    (the trainers skip and count it) - neither 'all correct' nor a guessed step."""
    wrong = RIGHT_LC.replace("I = emf*sqrt(C/L)", "I = emf*sqrt(C/L)/2").replace(
        "0.04*sqrt(1e-3/0.1)", "0.04*sqrt(1e-3/0.1)/2").replace("I = 4 mA", "I = 2 mA").replace("{4}", "{2}")
    v = verify(Q_LC, wrong, "4")
    assert not v.valid and v.first_error == -1 and "no step shows the error" in v.explanation


from hypothesis import given, settings, strategies as st  # noqa: E402

_PIECES = st.sampled_from(["\\frac{", "}{", "}", "\\sqrt{", "^", "_{", "θ", "½", "×", "·", "°", "=", " ", "\n", "(", ")",
                           "x", "v_0", "2", "3.5e-3", "kg", "m/s", "nan", "\\boxed{", "<calculation>", "</calculation>",
                           "__import__", ".", "'", "**", "9" * 40])


@settings(max_examples=150, deadline=None)  # per-example deadline: benchmarks/test_bench_deadlines.py
@given(st.lists(_PIECES, max_size=40).map("".join), st.integers(0, 6))
def test_never_raises_on_notation_soup_in_any_step(junk, k):
    """Arbitrary LaTeX/unicode/operator soup in any step, with a reference and without one: a verdict, no crash."""
    r = ROWS[0]
    parts = {s.tag: s.content for s in seventag.parse(r["solution"]).steps}
    tag = seventag.TAGS[k]
    parts[tag] = junk or "x"
    text = seventag.render(parts)
    for ref in (r["reference"], "2.02 s", ""):
        v = verify(r["question"], text, ref)
        assert v.explanation and (v.valid and 0 <= v.first_error <= 7 or not v.valid and v.first_error == -1)
        assert "verifier error" not in v.explanation, v


def test_wrong_law_written_in_the_principle_is_placed_at_step_2():
    """Curriculum tiers 1-2 inject a wrong law by editing the principle's formula ('distance = speed / time'):
    the verifier placed 179 of 189 at step 3 (the equation). The first error is where the text first shows
    the wrong law: a principle stating a formula other than the reference principle's is wrong at step 2."""
    got = []
    for p in procgen.generate(n=80, seed=11, tier=1):
        try:
            text, fe, cls, _ = procgen.inject_problem(p, "CM", 2)
        except procgen.InjectError:
            continue
        v = verify(p.question, text, p.solution)
        got.append((v.first_error, v.error_class) == (2, "CM"))
    assert len(got) >= 40 and sum(got) / len(got) >= 0.8, (sum(got), len(got))
