"""The benchmarks' answer forms of the procedural bank (r3bench.procgen.forms): MCQ distractors from the
bank's own injected errors, multi-correct statements, integer and numeric; references exact in every form."""
import math
import random
from collections import Counter

import pytest

from r3bench import procgen
from r3bench.core.prompts import prompt_structured
from r3bench.procgen import forms
from r3bench.procgen.export import CELLS
from r3bench.procgen.mixture import POOL
from verifiers import check, seventag

# one instance of every template of the bank (tiers 1-3), in every form
PROBS = [procgen.generate(n=1, seed=5, templates=[t])[0] for t in POOL]
RNG = random.Random(0)
ITEMS = {f: [forms.make_item(p, f, RNG) for p in PROBS] for f in forms.FORMS}


def test_proportions_are_the_benchmarks_own(shared_data):
    from r3bench.eval.procgen_data import benchmark_kind_counts

    kinds, multi = benchmark_kind_counts(shared_data)
    assert kinds == forms.BENCHMARK_KIND_COUNTS and multi == forms.MULTI_K_COUNTS
    p = forms.proportions_of(kinds)
    assert p == forms.DEFAULT_PROPORTIONS and math.isclose(sum(p.values()), 1.0)
    assert p["mcq"] > p["mcq_multi"] > p["numeric"] > p["integer"] > 0


@pytest.mark.parametrize("n", [1, 7, 100, 2000])
def test_counts_for_sums_to_n_and_follows_the_shares(n):
    c = forms.counts_for(n, forms.DEFAULT_PROPORTIONS)
    assert sum(c.values()) == n
    assert all(abs(c[f] - n * forms.DEFAULT_PROPORTIONS[f]) < 1 for f in forms.FORMS)
    with pytest.raises(ValueError):
        forms.counts_for(n, {"mcq": -1, "numeric": 2})


@pytest.mark.parametrize("form", forms.FORMS)
def test_reference_of_every_form_checks_against_its_gold_and_the_oracle(form):
    made = [it for it in ITEMS[form] if it is not None]
    assert len(made) == len(PROBS) or form == "integer"
    for it in made:
        sol = seventag.parse(it.solution)
        assert sol.ok and sol.n == 7 and not sol.problems, (it.id, sol.problems)
        assert check(it.solution, it.answer, kind=form).equivalent, (it.id, it.answer)
        assert forms.first_error(it, it.solution) == (0, "all steps correct"), it.id
        # the calculation step carries the value in every form
        calc = sol.get("calculation").content.splitlines()[-1]
        assert forms.leading_number(calc.split("=", 1)[1]) == pytest.approx(it.problem.answer_value)
        doc = it.doc()
        assert doc["answer_kind"] == form and prompt_structured(doc).count("\n(") == len(it.options)


def test_integer_form_is_exact_or_asks_for_rounding():
    made = [it for it in ITEMS["integer"] if it is not None]
    assert len(made) >= 40
    for it in made:
        v = it.problem.answer_value
        assert int(it.answer) == round(v)
        assert it.meta["rounded"] == (not float(v).is_integer())
        assert ("rounded to the nearest integer" in it.question) == it.meta["rounded"]
    assert all(it.meta["rounded"] is False for it in made if it.problem.tier == 1)


def test_mcq_options_one_correct_three_injected_distractors():
    kinds = Counter()
    for it in ITEMS["mcq"]:
        assert len(it.options) == len(set(it.options)) == 4 and len(it.answer) == 1
        correct = [i for i, s in enumerate(it.option_sources) if s == "correct"]
        assert [forms.LETTERS[i] for i in correct] == [it.answer]
        assert it.options[correct[0]] == it.problem.answer
        for v, s in zip(it.option_values, it.option_sources):
            if s != "correct":
                assert abs(v - it.problem.answer_value) > 0.02 * abs(it.problem.answer_value), (it.id, s)
                kinds[s.split(":")[0]] += 1
    assert set(kinds) == {"wrong law", "unit slip", "misread value", "factor error"}
    assert all(n >= 20 for n in kinds.values()), kinds


def test_mcq_gold_letters_are_spread():
    letters = Counter(it.answer for it in ITEMS["mcq"])
    assert set(letters) == set(forms.LETTERS) and min(letters.values()) >= 0.1 * len(ITEMS["mcq"])


def test_multi_statements_are_true_exactly_where_the_reference_says_so():
    ks = Counter()
    for it in ITEMS["mcq_multi"]:
        assert len(it.options) == len(set(it.options)) == 4 and 1 <= len(it.answer) <= 3
        assert it.answer == "".join(sorted(it.answer)) and it.problem.template and "statements" in it.question
        d = procgen.core.reference(procgen.BY_NAME[it.problem.template], procgen.raw_values(it.problem))
        true = {**d.values, **{e.sym: r for e, r in zip(d.eqs, d.results)}}
        for letter, sym, v, src in zip(forms.LETTERS, it.option_syms, it.option_values, it.option_sources):
            assert (letter in it.answer) == (src == "correct") == math.isclose(v, true[sym], rel_tol=1e-9), it.id
        ks[len(it.answer)] += 1
    assert set(ks) >= {2, 3}


@pytest.mark.parametrize("form", ["mcq", "mcq_multi", "integer"])
@pytest.mark.parametrize("cls,step", [c for c in CELLS if c[1]])
def test_injected_errors_in_every_form_sit_at_the_labelled_step(form, cls, step):
    made = 0
    for it in ITEMS[form]:
        if it is None:
            continue
        try:
            text, fe, c, why = forms.inject_item(it, cls, step)
        except procgen.InjectError:
            continue
        made += 1
        assert (fe, c) == (step, cls) and seventag.parse(text).ok
        assert forms.first_error(it, text)[0] == step, (it.id, why)
    assert made >= 10, (form, cls, step)


@pytest.mark.parametrize("form", ["mcq", "mcq_multi"])
def test_a_wrong_letter_is_a_step_7_error_and_a_wrong_answer(form):
    for it in ITEMS[form][:30]:
        wrong = next(x for x in ("A", "B", "C", "D", "AB", "CD") if x != it.answer and (form == "mcq_multi" or len(x) == 1))
        text = it.solution.replace(f"\\boxed{{{it.answer}}}", f"\\boxed{{{wrong}}}")
        assert forms.first_error(it, text) == (7, "final answer does not match the calculation")
        assert not check(text, it.answer, kind=form).equivalent


def test_numeric_form_is_the_problem_unchanged():
    for p, it in zip(PROBS, ITEMS["numeric"]):
        assert (it.question, it.answer, it.solution, it.options) == (p.question, p.answer, p.solution, ())


def test_make_item_refuses_an_unknown_form():
    with pytest.raises(ValueError, match="unknown form"):
        forms.make_item(PROBS[0], "essay", random.Random(0))


@pytest.mark.parametrize("form", ["mcq", "mcq_multi", "integer"])
def test_step_verifier_accepts_the_reference_in_every_form(form):
    from verifiers.steps import verify

    bad = [i.id for i in ITEMS[form] if i is not None and verify(i.question, i.solution, i.solution).first_error != 0]
    assert not bad, (len(bad), bad[:3])
