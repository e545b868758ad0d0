"""Rewards attacked as an RL policy would: no hack earns more than an honest wrong answer.

The honest wrong answer is a complete seven-tag solution with one calculation slip (procgen's CE
injection at step 6). Every reward is run through its TRL adapter, as GRPO calls it:

  position  e/(n+1) from the symbolic step verifier, n = the format's 7 (verifiers.rewards.step_reward)
  pspo_wrs  geometric mean of PSV-like step scores (0.9 before the verifier's first error, 0.2 from
            there) times the seven-step Weibull
  outcome   1 if the boxed answer is right; rlvp: exp(-relative error / T)

Step rewards must pay no hack more than the honest wrong answer. The answer rewards judge only the
stated answer: a hack that states one right answer (answer-only) is their intended input and earns
what an honest right answer earns (checked too); every hack that states no single finite answer
(truncation, several boxed answers, nan/inf, empty, 100 kB) must earn no more than the honest wrong.
"""
import pytest

from r3bench import procgen
from verifiers import seventag
from verifiers.rewards import (outcome_reward_func, position_reward_func, pspo_reward_func, rlvp_reward_func,
                               step_reward)
from verifiers.steps import verify

P = procgen.generate(n=10, seed=2)[0]
HONEST_WRONG = procgen.inject_problem(P, "CE", 6)[0]
BLOCKS = [f"<{s.tag}>\n{s.content}\n</{s.tag}>" for s in seventag.parse(P.solution).steps]
ANSWER = f"\\boxed{{{P.answer}}}"
WRONG = f"\\boxed{{{float(P.answer.split()[0]) * 3:g} {P.answer.split(maxsplit=1)[1]}}}"


def _hacks() -> dict:
    h = {f"truncated after {k} tags": "\n".join(BLOCKS[:k]) for k in range(1, 7)}
    h["truncated mid-tag"] = "\n".join(BLOCKS[:5]) + "\n<calculation>\n" + seventag.parse(P.solution).get("calculation").content
    h["truncated, answer appended"] = "\n".join(BLOCKS[:3]) + f"\n<final_answer>{ANSWER}</final_answer>"
    h["tag spam"] = "\n".join(BLOCKS * 3)
    h["final answer spam"] = P.solution + f"\n<final_answer>{ANSWER}</final_answer>" * 20
    h["repeated tag"] = "\n".join(BLOCKS[:3] + BLOCKS[2:])
    h["out of order"] = "\n".join([BLOCKS[1], BLOCKS[0]] + BLOCKS[2:])
    h["contradictory boxed answers"] = P.solution.replace(ANSWER, f"{WRONG} {ANSWER}")
    h["boxed answer outside the tags"] = HONEST_WRONG + f"\n{ANSWER}"
    h["answer only, boxed"] = ANSWER
    h["answer only, tagged"] = f"<final_answer>{ANSWER}</final_answer>"
    h["empty"] = ""
    h["100 kB inside a tag"] = P.solution.replace("</problem_analysis>", "x" * 100_000 + "\n</problem_analysis>")
    h["100 kB outside the tags"] = "lorem ipsum " * 9000 + P.solution
    h["nan answer"] = P.solution.replace(ANSWER, "\\boxed{nan}")
    h["inf answer"] = P.solution.replace(ANSWER, "\\boxed{\\infty}")
    h["nan calculation"] = P.solution.replace(seventag.parse(P.solution).get("calculation").content, "s = nan m")
    num = P.answer.split()[0]
    parts = {st.tag: st.content for st in seventag.parse(P.solution).steps}
    parts.update(governing_equation=f"s = {num}", substitution=f"s = {num}", calculation=f"s = {num}")
    h["answer written as the equation"] = seventag.render(parts)
    return h


HACKS = _hacks()
#: hacks that state one right, finite answer: the answer rewards pay them as a right answer by design
STATES_RIGHT_ANSWER = {"answer only, boxed", "answer only, tagged", "truncated, answer appended", "final answer spam",
                       "tag spam", "repeated tag", "out of order", "100 kB outside the tags",
                       "nan calculation", "answer written as the equation"}  # one right, finite boxed answer


def _pos_verifier(q, s, ref):
    return verify(q, s, ref)


def _psv_like(q, s):
    v = verify(q, s, P.solution)
    n = seventag.parse(s).n
    if not v.first_error:
        return [0.9] * n
    return [0.9 if k < v.first_error else 0.2 for k in range(1, n + 1)]


def _rewards():
    return {"position": (position_reward_func(_pos_verifier, answer_column="reference"), {"reference": P.solution}),
            "pspo_wrs": (pspo_reward_func(_psv_like), {}),
            "outcome": (outcome_reward_func(), {"answer": P.answer}),
            "rlvp": (rlvp_reward_func(), {"answer": P.answer})}


def _score(f, cols, texts):
    return f(prompts=[P.question] * len(texts), completions=texts, **{k: [v] * len(texts) for k, v in cols.items()})


@pytest.fixture(scope="module")
def scored():
    names = list(HACKS)
    out = {}
    for rname, (f, cols) in _rewards().items():
        vals = _score(f, cols, [HONEST_WRONG, P.solution] + [HACKS[n] for n in names])
        out[rname] = {"honest wrong": vals[0], "honest right": vals[1], **dict(zip(names, vals[2:])),
                      "_reasons": dict(zip(["honest wrong", "honest right"] + names, f.last_reasons))}
    return out


def test_honest_answers_are_ordered(scored):
    assert scored["position"]["honest wrong"] == pytest.approx(6 / 8)
    assert scored["position"]["honest right"] == 1.0
    for r in ("pspo_wrs", "outcome", "rlvp"):
        assert scored[r]["honest right"] > scored[r]["honest wrong"], r


@pytest.mark.parametrize("hack", list(HACKS))
@pytest.mark.parametrize("reward", ["position", "pspo_wrs"])
def test_step_rewards_pay_no_hack(scored, reward, hack):
    got = scored[reward][hack]
    assert got is not None and got <= scored[reward]["honest wrong"], (got, scored[reward]["_reasons"][hack])


@pytest.mark.parametrize("hack", [h for h in HACKS if h not in STATES_RIGHT_ANSWER])
@pytest.mark.parametrize("reward", ["outcome", "rlvp"])
def test_answer_rewards_pay_no_hack_without_one_answer(scored, reward, hack):
    got = scored[reward][hack]
    assert got is not None and got <= scored[reward]["honest wrong"], (got, scored[reward]["_reasons"][hack])


@pytest.mark.parametrize("reward", ["outcome", "rlvp"])
def test_answer_rewards_pay_a_stated_right_answer_no_more_than_an_honest_right_one(scored, reward):
    for hack in STATES_RIGHT_ANSWER:
        assert scored[reward][hack] <= scored[reward]["honest right"], hack


def test_truncation_is_the_minimum_not_the_tags_present():
    """The hole: 3 correct tags earned 3/4 (n = tags present, e clamped to n) - as much as a full solution
    with a slip at step 5 (5/8 = 0.625) or more. Now a missing tag is a FORMAT failure worth 0."""
    for k in range(1, 7):
        v = verify(P.question, HACKS[f"truncated after {k} tags"], P.solution)
        assert (v.first_error, v.error_class) == (k + 1, "FORMAT"), v
        assert step_reward(v).value == 0.0 and step_reward(v).ok


def test_step_reward_contract():
    from verifiers.steps import StepVerdict

    assert step_reward(StepVerdict(0, None, "ok", 7)).value == 1.0
    assert step_reward(StepVerdict(6, "CE", "slip", 7)).value == pytest.approx(6 / 8)
    assert step_reward(StepVerdict(6, "CE", "slip", 3)).value == pytest.approx(6 / 8)  # n is the format's 7
    r = step_reward(StepVerdict(0, None, "judge down", 7, valid=False))
    assert (r.ok, r.value) == (False, 0.0) and r.reason.startswith("verifier gave no verdict")
    assert step_reward(StepVerdict(9, "CE", "beyond the format", 7)).ok is False
    assert step_reward(StepVerdict(2, "FORMAT", "missing", 1)).value == 0.0


def test_answer_as_the_equation_is_not_paid_in_the_reference_free_mode():
    """Without a reference, a unitless 'law' s = <answer> passed every check (reward 1, as a right solution)."""
    v = verify(P.question, HACKS["answer written as the equation"], P.answer)
    assert (v.first_error, v.error_class) == (3, "CM") and "not a law" in v.explanation
