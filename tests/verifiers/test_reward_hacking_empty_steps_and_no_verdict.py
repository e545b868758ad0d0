"""Rewards attacked with steps that say nothing checkable (a tautology for the law, every law named in the
principle, a circular principle, the answer written as the equation, a substitution that copies the result) and
with the no-verdict escapes: every reward reads the answer through verifiers.check, and a completion without a
verdict leaves its GRPO group.

The suite: on one procgen problem of every template, each attack is scored by the step rewards as the
trainers call them (position through its TRL adapter; stepfix through step_reward of the verdict: the same
number) and must earn no more than the honest solution with one slip at step 5 (e = 5: 5/8 = 0.625). The
position reward's e/(n+1) for a wrong final answer (7/8 when only the answer is wrong) is the paper's design.
heldout/verifier_report.py --hacking prints the table (docs/verifier.md).
"""
from collections import Counter, defaultdict

import pytest

from r3bench import procgen
from verifiers import seventag
from verifiers import step_reading as SP
from verifiers.rewards import outcome_reward_func, position_reward_func, rlvp_reward_func, step_reward
from verifiers.steps import verify

PROBS = procgen.generate(n=len(procgen.TEMPLATES), seed=0)  # one problem of every template
HONEST_SLIP = 5 / 8

ALL_LAWS = "We use " + ", ".join(sorted({
    "Newton's second law", "constant acceleration", "conservation of energy", "conservation of momentum", "impulse",
    "friction", "work", "Hooke's law", "centripetal force", "law of gravitation", "Kepler's law",
    "simple harmonic motion", "wave relation", "ideal gas law", "first law of thermodynamics", "constant volume",
    "isothermal", "Carnot", "calorimetry", "Coulomb's law", "electric field", "capacitor", "Ohm's law", "series",
    "electric power", "RC charging", "Ampere's law", "Lorentz force", "Faraday's law", "lens equation",
    "Snell's law", "total internal reflection", "interference", "Planck's photon energy", "photoelectric effect",
    "de Broglie", "radioactive decay", "mass-energy", "Bohr model", "torque", "buoyancy", "Bernoulli",
    "continuity equation", "Doppler", "elastic collision", "inelastic collision"})) + "."


def _parts(p) -> dict:
    return {s.tag: s.content for s in seventag.parse(p.solution).steps}


def _target(p) -> str:
    return SP.equations(seventag.parse(p.solution).get("governing_equation"))[-1][0]


def _wrong(p, factor=3.0):
    v = p.answer_value * factor
    return f"{v:.4g} {p.answer_unit}".strip()


def attack(p, kind: str) -> str:
    d, t = _parts(p), _target(p)
    if kind.startswith("tautology"):
        rhs = {"tautology s = s": t, "tautology s = s + 0": f"{t} + 0", "tautology \\frac{s}{1}": f"\\frac{{{t}}}{{1}}",
               "tautology with a wrong answer": t}[kind]
        d.update(governing_equation=f"{t} = {rhs}", substitution=f"{t} = {rhs}")
        if kind == "tautology with a wrong answer":
            d.update(calculation=f"{t} = {_wrong(p)}", final_answer=f"\\boxed{{{_wrong(p)}}}")
    elif kind == "every law named in the principle":
        d.update(principle=ALL_LAWS)
    elif kind == "circular principle":
        d.update(principle=d["principle"].rstrip(".") + f"; in short {t} = 2*{t}/2.")
    elif kind == "answer written as the equation":
        num = p.answer.split()[0]
        d.update(governing_equation=f"{t} = {num}", substitution=f"{t} = {num}")
    elif kind == "substitution copies the result":
        d.update(substitution=f"{t} = {t}")
    elif kind == "honest with a slip at step 5":
        return procgen.inject_problem(p, "CE", 5)[0]
    else:
        raise KeyError(kind)
    return seventag.render(d)


ATTACKS = ["tautology s = s", "tautology s = s + 0", "tautology \\frac{s}{1}", "tautology with a wrong answer",
           "every law named in the principle", "circular principle", "answer written as the equation",
           "substitution copies the result"]


def _position(p, texts):
    f = position_reward_func(lambda q, s, ref: verify(q, s, ref), answer_column="reference", question_column="question")
    n = len(texts)
    out = f(prompts=[p.question] * n, completions=texts, question=[p.question] * n, reference=[p.solution] * n)
    return out, f


@pytest.fixture(scope="module")
def table():
    """attack -> [(template, position reward, stepfix reward, reason)] over every template."""
    rows = defaultdict(list)
    for p in PROBS:
        names = ["honest with a slip at step 5"] + ATTACKS
        texts = [attack(p, k) for k in names]
        vals, f = _position(p, texts)
        for k, text, val, why in zip(names, texts, vals, f.last_reasons):
            rows[k].append((p.template, val, step_reward(verify(p.question, text, p.solution)).value, why))
    return rows


def test_honest_slip_at_step_5_earns_5_of_8(table):
    assert all(v == pytest.approx(HONEST_SLIP) and s == pytest.approx(HONEST_SLIP) for _, v, s, _ in table[
        "honest with a slip at step 5"])


@pytest.mark.parametrize("kind", ATTACKS)
def test_no_attack_earns_more_than_an_honest_slip_at_step_5(table, kind):
    bad = [(t, v, why) for t, v, s, why in table[kind] if v is None or s is None or v > HONEST_SLIP or s > HONEST_SLIP]
    assert not bad, bad[:3]


def test_tautologies_are_errors_at_the_governing_equation(table):
    """Issue: `s = s` as the law and the substitution earned 1.0 on every problem (step 3 skipped a right side it
    could not evaluate; step 5 evaluated it with the solution's own result)."""
    for kind in ("tautology s = s", "tautology s = s + 0", "tautology \\frac{s}{1}"):
        got = Counter(v for _, v, _, _ in table[kind])
        assert got == {3 / 8: len(PROBS)}, (kind, got)


def test_every_law_named_is_an_error_at_the_principle(table):
    """Issue: naming every law of the law table passed step 2 (29 of 36)."""
    assert Counter(v for _, v, _, _ in table["every law named in the principle"]) == {2 / 8: len(PROBS)}


def test_tautology_with_a_wrong_answer_gets_a_verdict(table):
    """Issue: the no-verdict escape - every step checked, the answer was wrong, no verdict (reward None)."""
    assert all(v is not None and v <= 3 / 8 for _, v, _, _ in table["tautology with a wrong answer"])


def test_substitution_cannot_use_its_own_result():
    p = PROBS[0]
    v = verify(p.question, attack(p, "substitution copies the result"), p.solution)
    assert (v.first_error, v.error_class) == (5, "CE"), v


def test_wrong_final_answer_whose_steps_all_check_is_an_error_at_step_7():
    """Every step that is written checks, the answer is wrong (the fall time boxed where the impact speed is
    asked): first error at the final answer (before: valid=False, no verdict, reward None)."""
    from r3bench.procgen.templates import BY_NAME

    p = procgen.generate(n=1, seed=0, templates=[BY_NAME["kin_free_fall"]])[0]
    sol = p.solution.replace("v = g*t_f\n", "").replace("v = 9.8*4.165\n", "").replace("v = 40.82 m/s\n", "") \
        .replace("\\boxed{40.82 m/s}", "\\boxed{4.165 s}")
    v = verify(p.question, sol, p.solution)
    assert v.valid and (v.first_error, v.error_class) == (7, "CE"), v


def test_correct_bare_number_in_si_units_is_accepted():
    """Issue: a correct bare number in SI units got no verdict (36 of 36)."""
    for p in PROBS:
        d = _parts(p)
        d.update(final_answer=f"\\boxed{{{SP.quantity(p.answer)[0]:.6g}}}")
        v = verify(p.question, seventag.render(d), p.solution)
        assert v.valid and v.first_error == 0, (p.template, v)


def test_every_reward_reads_the_answer_through_the_checker(monkeypatch):
    """The answer checker decides what the committed answer is (hedges, self-corrections, answer sentences):
    when it refuses, no reward pays the answer - the step verifier's final-answer step included."""
    from verifiers import answer
    from verifiers.answer import Verdict

    p = PROBS[0]
    real = answer.check

    def refusing(pred, ref, kind=None, cfg=None, **kw):
        if "hedge" in str(pred):
            return Verdict(False, 0.0, "hedged: no committed answer", kind or "numeric")
        return real(pred, ref, kind) if cfg is None else real(pred, ref, kind, cfg)

    monkeypatch.setattr(answer, "check", refusing)
    hedged = p.solution.replace("</final_answer>", "\nhedge: or perhaps 3 m\n</final_answer>")
    vals, _ = _position(p, [p.solution, hedged])
    assert vals[0] == 1.0 and vals[1] == pytest.approx(7 / 8)
    for f, col in ((outcome_reward_func(), "answer"), (rlvp_reward_func(), "answer")):
        got = f(prompts=[p.question] * 2, completions=[p.solution, hedged], **{col: [p.answer] * 2})
        assert got[0] > 0.9 and got[1] == 0.0, (f.__name__, got, f.last_reasons)


def test_hedge_outside_the_box_is_not_paid():
    """Issue: a right box plus `The answer is <wrong>` earned 1.0 from every reward."""
    p = PROBS[0]
    hedged = p.solution.replace("</final_answer>", f"\nThe answer is {_wrong(p)}.\n</final_answer>")
    vals, _ = _position(p, [hedged])
    assert vals[0] < 1.0
    assert outcome_reward_func()(prompts=[p.question], completions=[hedged], answer=[p.answer]) == [0.0]


# --- GRPO: a completion without a verdict leaves its group ------------------------------------------------------

def test_grpo_removes_a_completion_without_a_verdict_and_counts_it():
    torch = pytest.importorskip("torch")
    from trainers import grpo
    from verifiers.steps import StepVerdict

    verdicts = iter([StepVerdict(0, None, "ok", 7), StepVerdict(-1, None, "judge down", 7, valid=False),
                     StepVerdict(5, "CE", "slip", 7), StepVerdict(3, "CM", "law", 7)])
    counts, times = Counter(), defaultdict(float)
    fn = grpo.CountingReward(position_reward_func(lambda q, s, r: next(verdicts), answer_column=None), counts, times)

    class Base:  # TRL's side, reduced to what GRPOPhases overrides: rewards, then group advantages as TRL 1.16
        reward_funcs = [fn]

        def __init__(self, *a, **kw):
            self.accelerator = type("A", (), {"process_index": 0})()
            self.r3_stops = (7,)  # the end-of-turn id of this double's completions (the truncation count)

        def _calculate_rewards(self, inputs, prompts, completions, ids):
            out = fn(prompts=prompts, completions=completions)
            return torch.tensor([[float("nan") if r is None else r] for r in out])

        def _generate_and_score_completions(self, inputs):
            r = self._calculate_rewards(inputs, ["q"] * 4, inputs, None)
            unscorable = torch.isnan(r).all(dim=1)
            rew = r.nansum(dim=1)
            rew[unscorable] = float("nan")
            adv = torch.nan_to_num(rew - torch.nanmean(rew), nan=0.0)
            return {"completion_mask": torch.ones(4, 3, dtype=torch.long), "advantages": adv, "rewards": rew,
                    "completion_ids": torch.tensor([[1, 2, 7]] * 4)}

    class T(grpo.GRPOPhases, Base):
        pass

    sol = PROBS[0].solution
    t = T(r3_counts=Counter())
    out = t._generate_and_score_completions([sol] * 4)
    assert out["completion_mask"][1].sum() == 0 and out["completion_mask"][0].sum() == 3
    assert out["advantages"][1] == 0.0
    assert torch.isnan(out["rewards"][1])  # out of the group's mean: the others are centred on their own mean
    assert out["advantages"][[0, 2, 3]].sum().abs() < 1e-6
    assert t.r3_counts["no_verdict_removed"] == 1 and counts["reward_failures/position_reward"] == 1
