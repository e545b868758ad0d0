"""Tests for verifiers.rewards: the reward equations, their TRL adapters, and one real GRPO step."""
import math
import pickle

import pytest
from hypothesis import given, settings, strategies as st

from verifiers.seventag import EXAMPLE_SOLUTION, parse
from verifiers.rewards import (
    REWARDS, WEIBULL_C, WEIBULL_K, WEIBULL_LAMBDA, completion_text, outcome_reward, outcome_reward_func,
    piecewise_shaping, position_reward, position_reward_func, prompt_text, pspo_piecewise_reward_func,
    pspo_reward_func, pspo_wrs_reward, rlvp_reward, rlvp_reward_func, weibull_shaping,
)


# ------------------------------------------------------------------ position reward r = e/(n+1)

@pytest.mark.parametrize("e,n,want", [(3, 7, 3 / 8), (0, 7, 1.0), (7, 7, 7 / 8), (1, 7, 1 / 8), (1, 1, 0.5),
                                      (0, 1, 1.0), (2, 3, 0.5)])
def test_position_reward_values(e, n, want):
    assert position_reward(e, n) == pytest.approx(want, abs=0, rel=1e-15)


@pytest.mark.parametrize("e,n,match", [(8, 7, "first_error"), (-1, 7, "first_error"), (0, 0, "n_steps"),
                                       (1, -3, "n_steps"), (1.5, 3, "integer"), ("2", 3, "integer"),
                                       (True, 3, "bool"), (None, 3, "integer")])
def test_position_reward_rejects_bad_input(e, n, match):
    with pytest.raises(ValueError, match=match):
        position_reward(e, n)


def test_position_reward_accepts_integral_float():
    assert position_reward(3.0, 7) == 3 / 8


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 200).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n), st.integers(1, n))))
def test_position_reward_increases_with_first_error(t):
    n, e1, e2 = t
    e1, e2 = min(e1, e2), max(e1, e2)
    r1, r2 = position_reward(e1, n), position_reward(e2, n)
    assert 0 < r1 <= r2 < 1 == position_reward(0, n)
    if e1 < e2:
        assert r1 < r2


# ------------------------------------------------------------------ Weibull / piecewise shaping

def test_weibull_constants_and_hand_values():
    assert (WEIBULL_C, WEIBULL_K, WEIBULL_LAMBDA) == (10.735, 1.5, 8.0)
    # L = lambda: (L/lambda) = 1, so f = C * k/lambda * exp(-1)
    assert weibull_shaping(8) == pytest.approx(10.735 * 1.5 / 8 * math.exp(-1), rel=1e-12)
    assert weibull_shaping(8) == pytest.approx(0.740472, abs=1e-6)
    # L = 1: x = 1/8, x**0.5 = 0.3535534, x**1.5 = 0.0441942
    assert weibull_shaping(1) == pytest.approx(10.735 * 0.1875 * 0.3535534 * math.exp(-0.0441942), rel=1e-6)
    assert weibull_shaping(1) == pytest.approx(0.68087, abs=1e-5)
    # L = 16: x = 2, x**0.5 = sqrt(2), x**1.5 = 2 sqrt(2)
    assert weibull_shaping(16) == pytest.approx(10.735 * 0.1875 * math.sqrt(2) * math.exp(-2 * math.sqrt(2)), rel=1e-12)
    assert weibull_shaping(0) == 0.0
    for bad in (-1, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            weibull_shaping(bad)


def test_weibull_peak_is_one():
    """C = 10.735 normalises the peak: max f = 0.999996 at the mode L* = 8 (1/3)**(2/3) = 3.846."""
    mode = WEIBULL_LAMBDA * ((WEIBULL_K - 1) / WEIBULL_K) ** (1 / WEIBULL_K)
    assert mode == pytest.approx(3.846, abs=1e-3)
    grid = [i / 1000 for i in range(1, 40001)]  # 0.001 .. 40
    vals = [weibull_shaping(x) for x in grid]
    i = max(range(len(vals)), key=vals.__getitem__)
    assert grid[i] == pytest.approx(mode, abs=2e-3)
    assert vals[i] == pytest.approx(1.0, abs=1e-5)
    assert weibull_shaping(mode) == pytest.approx(0.9999956, abs=1e-6)
    assert weibull_shaping(mode) <= 1.0
    ints = {L: weibull_shaping(L) for L in range(0, 100)}
    assert max(ints, key=ints.get) == 4
    assert ints[4] == pytest.approx(0.99941, abs=1e-5)


@pytest.mark.parametrize("L,want", [(0, 0.0), (1, 0.25), (2, 0.5), (4, 1.0), (7, 1.0), (12, 1.0), (18, 0.5),
                                    (23, 1 / 12), (24, 0.0), (100, 0.0)])
def test_piecewise_shaping_defaults(L, want):
    assert piecewise_shaping(L) == pytest.approx(want)


def test_piecewise_shaping_parameters():
    assert piecewise_shaping(3, L0=6, L1=8, L2=10) == pytest.approx(0.5)
    assert piecewise_shaping(9, L0=6, L1=8, L2=10) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="L0 <= L1 < L2"):
        piecewise_shaping(3, L0=5, L1=4, L2=10)
    with pytest.raises(ValueError):
        piecewise_shaping(-2)


# ------------------------------------------------------------------ PSPO-WRS

def test_pspo_geometric_mean_times_shaping():
    # geometric mean of (0.5, 0.5, 1, 1) = 0.25 ** (1/4) = 1/sqrt(2)
    assert pspo_wrs_reward([0.5, 0.5, 1, 1], shaping="weibull_paper") == pytest.approx(2 ** -0.5 * weibull_shaping(4))
    assert pspo_wrs_reward([1.0] * 8, shaping="weibull_paper") == pytest.approx(0.740472, abs=1e-6)
    # the default Weibull peaks at the format's seven steps: fewer steps never pay more
    assert pspo_wrs_reward([1.0] * 7) == pytest.approx(1.0, abs=1e-12)
    assert all(pspo_wrs_reward([1.0] * L) < 0.51 for L in (1, 2, 3, 4, 5, 6, 8, 9, 12))
    assert pspo_wrs_reward([0.8] * 7, shaping="piecewise") == pytest.approx(0.8)
    assert pspo_wrs_reward([0.9, 0.4], shaping="piecewise") == pytest.approx(0.6 * 0.5)  # sqrt(.36) * 2/4
    assert pspo_wrs_reward([1.0] * 3, shaping="piecewise", L0=6, L1=8, L2=10) == pytest.approx(0.5)
    assert pspo_wrs_reward([0.5, 1.0], shaping=lambda L: 1.0) == pytest.approx(math.sqrt(0.5))


def test_pspo_edge_cases():
    assert pspo_wrs_reward([]) == 0.0
    assert pspo_wrs_reward([], shaping="piecewise") == 0.0
    assert pspo_wrs_reward(None) == 0.0
    assert pspo_wrs_reward([1.0, 0.0, 1.0]) == 0.0  # one zero step zeroes the geometric mean
    # clipping to [0, 1]: 1.7 -> 1, -0.3 -> 0, NaN -> 0
    assert pspo_wrs_reward([1.7] * 8, shaping="weibull_paper") == pytest.approx(weibull_shaping(8))
    assert pspo_wrs_reward([0.5, -0.3]) == 0.0
    assert pspo_wrs_reward([0.5, float("nan")]) == 0.0
    assert pspo_wrs_reward([float("inf")] * 4, shaping="weibull_paper") == pytest.approx(weibull_shaping(4))
    with pytest.raises(ValueError, match="unknown shaping"):
        pspo_wrs_reward([1.0], shaping="gaussian")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=40),
       st.sampled_from(["weibull", "weibull_paper", "piecewise"]))
def test_pspo_bounded(scores, shaping):
    r = pspo_wrs_reward(scores, shaping=shaping)
    assert 0.0 <= r <= 1.0


# ------------------------------------------------------------------ RLVP

def test_rlvp_hand_values():
    assert rlvp_reward(10.1, 10.0) == pytest.approx(math.exp(-0.2), rel=1e-9)  # 1 % error, T = 0.05
    assert rlvp_reward(9.9, 10.0) == pytest.approx(math.exp(-0.2), rel=1e-9)
    assert rlvp_reward(-10.5, -10.0) == pytest.approx(math.exp(-1.0), rel=1e-9)  # 5 %
    assert rlvp_reward(10.0, 10.0) == 1.0
    assert rlvp_reward(10.0, 10.0, V=2.5) == 2.5
    assert rlvp_reward(11.0, 10.0, T=0.1) == pytest.approx(math.exp(-1.0))
    # reference 0: absolute error
    assert rlvp_reward(0.01, 0.0) == pytest.approx(math.exp(-0.2))
    assert rlvp_reward(0.0, 0.0) == 1.0


@pytest.mark.parametrize("pred", [None, float("nan"), float("inf"), -float("inf"), "10", object()])
def test_rlvp_bad_prediction_is_zero(pred):
    assert rlvp_reward(pred, 10.0) == 0.0


def test_rlvp_bad_parameters():
    for T in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="T"):
            rlvp_reward(1.0, 1.0, T=T)
    with pytest.raises(ValueError, match="ref_value"):
        rlvp_reward(1.0, float("nan"))


@settings(max_examples=200, deadline=None)
@given(st.floats(1e-6, 1e6), st.floats(0, 10), st.floats(0, 10), st.sampled_from([1, -1]))
def test_rlvp_decreases_with_relative_error(ref, e1, e2, sign):
    lo, hi = min(e1, e2), max(e1, e2)
    r_lo = rlvp_reward(ref * (1 + sign * lo), ref)
    r_hi = rlvp_reward(ref * (1 + sign * hi), ref)
    assert 0.0 <= r_hi <= r_lo <= 1.0
    if hi - lo > 1e-3 and r_lo > 1e-300:
        assert r_hi < r_lo


def test_outcome_reward():
    assert outcome_reward("\\boxed{36 km/h}", "10 m/s") == 1.0
    assert outcome_reward("\\boxed{10 s}", "10 m/s") == 0.0
    assert outcome_reward(None, "10 m/s") == 0.0
    assert outcome_reward("The answer is (B)", "B", kind="mcq") == 1.0


# ------------------------------------------------------------------ TRL adapters

def trl_call(func, completions, prompts=None, **columns):
    """Call `func` exactly as trl 1.x GRPOTrainer._calculate_rewards does."""
    n = len(completions)
    prompts = prompts if prompts is not None else ["Solve."] * n
    extra = {"trainer_state": None, "log_extra": lambda column, values: None, "log_metric": lambda name, value: None}
    out = func(prompts=prompts, completions=completions, completion_ids=[[1, 2, 3]] * n, **columns, **extra)
    assert isinstance(out, list) and len(out) == n and all(isinstance(x, float) for x in out)
    assert len(func.last_reasons) == n and all(isinstance(r, str) and r for r in func.last_reasons)
    return out


def conv(text):
    return [{"role": "assistant", "content": text}]


CONV_PROMPT = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "How fast?"}]


@pytest.mark.parametrize("wrap", [lambda t: t, conv], ids=["plain", "conversational"])
def test_outcome_adapter(wrap):
    f = outcome_reward_func()
    comps = [wrap("so v = \\boxed{36 km/h}"), wrap("\\boxed{10 s}"), wrap("<final_answer>\\boxed{10 m/s}</final_answer>")]
    prompts = [CONV_PROMPT] * 3 if wrap is conv else None
    assert trl_call(f, comps, prompts, answer=["10 m/s"] * 3) == [1.0, 0.0, 1.0]
    assert "dimension mismatch" in f.last_reasons[1]


def test_outcome_adapter_kind_column():
    f = outcome_reward_func(kind_column="kind")
    out = trl_call(f, ["answer: (B)", "\\boxed{3}"], answer=["B", "3"], kind=["mcq", None])
    assert out == [1.0, 1.0]


@pytest.mark.parametrize("wrap", [lambda t: t, conv], ids=["plain", "conversational"])
def test_rlvp_adapter_unit_aware(wrap):
    f = rlvp_reward_func()
    comps = [wrap("\\boxed{36 km/h}"), wrap("\\boxed{10 s}"), wrap("\\boxed{10.1 m/s}"), wrap("\\boxed{10}"),
             wrap("\\boxed{36.36 km/h}")]
    prompts = [CONV_PROMPT] * 5 if wrap is conv else None
    out = trl_call(f, comps, prompts, answer=["10 m/s"] * 5)
    assert out[0] == 1.0                                          # 36 km/h == 10 m/s exactly
    assert out[1] == 0.0 and "dimension mismatch" in f.last_reasons[1]
    assert out[2] == pytest.approx(math.exp(-0.2), rel=1e-6)      # 1 % relative error
    assert out[3] == 1.0                                          # bare number read in the reference's unit
    assert out[4] == pytest.approx(math.exp(-0.2), rel=1e-6)      # 36.36 km/h = 10.1 m/s


def test_rlvp_adapter_temperature_and_nonnumeric_reference():
    f = rlvp_reward_func(T=0.1)
    out = trl_call(f, ["\\boxed{1.1 N}", "\\boxed{5}", "\\boxed{1.1 J/m}"], answer=["1 N", "B", "1 N"])
    assert out[0] == pytest.approx(math.exp(-1.0))
    assert out[1] == 0.0 and "not a numeric quantity" in f.last_reasons[1]
    assert out[2] == pytest.approx(math.exp(-1.0))  # J/m is N in SI base units
    with pytest.raises(ValueError):
        rlvp_reward_func(T=0)


MALFORMED = [None, "", "   \n", "<final_answer></final_answer>", "<principle>unclosed <calculation>", 12345,
             [], [{"role": "assistant"}], [{"role": "assistant", "content": None}], {"weird": 1},
             conv(""), conv("no number here at all"), [{"role": "assistant", "content": [{"type": "image"}]}]]


def _fixed_verifier(question, solution, answer):  # full marks for whatever reaches it
    return 0, 7


def _scorer(question, solution):  # one perfect score per seven-tag step
    return [1.0] * parse(solution).n


def all_adapters():
    return [outcome_reward_func(), rlvp_reward_func(), position_reward_func(_fixed_verifier),
            pspo_reward_func(_scorer), pspo_piecewise_reward_func(_scorer)]


@pytest.mark.parametrize("f", all_adapters(), ids=lambda f: f.__name__)
def test_malformed_completions_give_zero_with_reason(f):
    out = trl_call(f, MALFORMED, answer=["10 m/s"] * len(MALFORMED))
    assert out == [0.0] * len(MALFORMED)
    assert f.last_reasons[0].startswith("no completion text")
    assert f.last_reasons[1] == "empty completion"
    if f.__name__ in ("position_reward", "pspo_wrs_reward", "pspo_piecewise_reward"):
        assert f.last_reasons[3] == "format failure at step 1: step 1 <problem_analysis> is missing"
        assert f.last_reasons[4].startswith("format failure at step 1")


def test_broken_tags_can_be_allowed():
    broken = EXAMPLE_SOLUTION.replace("</substitution>", "")
    assert parse(broken).n == 7 and parse(broken).flawed
    strict = position_reward_func(_fixed_verifier)
    lax = position_reward_func(_fixed_verifier, reject_broken_tags=False)
    assert trl_call(strict, [broken], answer=["1"]) == [0.0]
    assert trl_call(lax, [broken], answer=["1"]) == [1.0]
    # a missing tag is a format failure: the minimum, never e/(n_present+1) (it paid 6/7 before)
    six = EXAMPLE_SOLUTION.split("<final_answer>")[0]
    f = position_reward_func(lambda q, s, a: (6, parse(s).n))
    assert trl_call(f, [six], answer=["1"]) == [0.0] and "step 7 <final_answer> is missing" in f.last_reasons[0]
    assert trl_call(pspo_reward_func(_scorer, reject_broken_tags=False, shaping="weibull_paper"),
                    [broken]) == [pytest.approx(weibull_shaping(7))]
    assert trl_call(pspo_reward_func(_scorer), [broken]) == [0.0]


def test_adapter_names_and_registry():
    import trl.trainer.utils as tu

    names = [tu.get_callable_name(f) for f in all_adapters()]
    assert names == ["outcome_reward", "rlvp_reward", "position_reward", "pspo_wrs_reward", "pspo_piecewise_reward"]
    # the paper's rewards; a reward added to REWARDS is one more (tests/repo/test_recipes.py adds one)
    assert {"position", "pspo_wrs", "pspo_piecewise", "rlvp", "outcome"} <= set(REWARDS)
    assert REWARDS["outcome"]().__name__ == "outcome_reward"
    assert REWARDS["rlvp"]().__name__ == "rlvp_reward"
    assert REWARDS["position"](_fixed_verifier).__name__ == "position_reward"
    assert REWARDS["pspo_wrs"](_scorer).__name__ == "pspo_wrs_reward"
    assert REWARDS["pspo_piecewise"](_scorer).__name__ == "pspo_piecewise_reward"
    assert outcome_reward_func(name="acc").__name__ == "acc"


def test_adapters_pickle():
    for f in all_adapters():
        g = pickle.loads(pickle.dumps(f))
        assert g.__name__ == f.__name__


def test_missing_column_is_a_config_error():
    f = outcome_reward_func(answer_column="solution")
    with pytest.raises(ValueError, match="'solution' not passed"):
        f(prompts=["q"], completions=["\\boxed{1}"], completion_ids=[[1]], answer=["1"], trainer_state=None)
    with pytest.raises(ValueError, match="2 values for 1 completions"):
        outcome_reward_func()(prompts=["q"], completions=["\\boxed{1}"], answer=["1", "2"])


def test_position_adapter():
    seen = []

    def verifier(question, solution, answer):
        seen.append((question, answer))
        return 3, parse(solution).n

    f = position_reward_func(verifier)
    out = trl_call(f, [EXAMPLE_SOLUTION, conv(EXAMPLE_SOLUTION)], [CONV_PROMPT, "Plain question?"],
                   answer=["10 m/s", "10 m/s"])
    assert out == [3 / 8, 3 / 8]
    assert seen == [("How fast?", "10 m/s"), ("Plain question?", "10 m/s")]
    assert "first wrong step 3 of 7" in f.last_reasons[0]

    ok = position_reward_func(lambda q, s, a: (0, 7), answer_column=None)
    assert trl_call(ok, [EXAMPLE_SOLUTION]) == [1.0]

    qcol = position_reward_func(lambda q, s, a: (1, 7) if q == "Q1" else (0, 7), question_column="question")
    assert trl_call(qcol, [EXAMPLE_SOLUTION] * 2, answer=["a", "b"], question=["Q1", "Q2"]) == [0.125, 1.0]
    # n is the format's seven steps: a verifier counting only the tags present is refused
    assert trl_call(position_reward_func(lambda q, s, a: (1, 3)), [EXAMPLE_SOLUTION], answer=["a"]) == [0.0]


def test_position_adapter_bad_verifiers():
    def boom(q, s, a):
        raise RuntimeError("step checker crashed")

    for verifier, why in [(boom, "verifier error: RuntimeError"), (lambda q, s, a: (9, 7), "invalid"),
                          (lambda q, s, a: None, "verifier error"), (lambda q, s, a: (1, 0), "invalid"),
                          (lambda q, s, a: "xy", "invalid")]:
        f = position_reward_func(verifier)
        assert trl_call(f, [EXAMPLE_SOLUTION], answer=["1"]) == [0.0]
        assert why in f.last_reasons[0], f.last_reasons
    with pytest.raises(TypeError):
        position_reward_func("not callable")


def test_pspo_adapter():
    f = pspo_reward_func(lambda q, s: [1.0] * 8, shaping="weibull_paper", reject_broken_tags=False)
    assert trl_call(f, ["any text", conv("any text")]) == pytest.approx([0.740472] * 2, abs=1e-6)
    assert trl_call(pspo_reward_func(lambda q, s: [1.0] * 8), ["any text"]) == [0.0]  # not seven-tag: minimum
    g = pspo_reward_func(lambda q, s: [0.8] * 7, shaping="piecewise")
    assert g.__name__ == "pspo_piecewise_reward"
    assert trl_call(g, [EXAMPLE_SOLUTION]) == pytest.approx([0.8])
    h = pspo_piecewise_reward_func(lambda q, s: [1.0] * 3, L0=6, L1=8, L2=10, reject_broken_tags=False)
    assert trl_call(h, ["x"]) == pytest.approx([0.5])

    for scorer, why in [(lambda q, s: [], "no steps scored"), (lambda q, s: None, "no steps scored"),
                        (lambda q, s: 1 / 0, "step scorer error: ZeroDivisionError"),
                        (lambda q, s: ["a", "b"], "unusable")]:
        f = pspo_reward_func(scorer)
        assert trl_call(f, [EXAMPLE_SOLUTION]) == [0.0]
        assert why in f.last_reasons[0], f.last_reasons
    with pytest.raises(ValueError):
        pspo_reward_func(_scorer, shaping="nope")


def test_text_helpers():
    assert completion_text("a") == "a"
    assert completion_text(conv("b")) == "b"
    assert completion_text([{"role": "assistant", "content": [{"type": "text", "text": "c"}]}]) == "c"
    assert completion_text([{"role": "assistant", "content": "x"}, {"role": "tool", "content": "t"},
                            {"role": "assistant", "content": "y"}]) == "x\ny"
    assert completion_text(None) is None and completion_text(3) is None
    assert prompt_text(CONV_PROMPT) == "How fast?" and prompt_text("q") == "q" and prompt_text(None) == ""


# ------------------------------------------------------------------ one real GRPO step

@pytest.mark.slow
@pytest.mark.parametrize("conversational", [True, False], ids=["conversational", "plain"])
def test_grpo_trainer_one_step(tmp_path, conversational, tiny):
    datasets = pytest.importorskip("datasets")
    trl = pytest.importorskip("trl")
    questions = ["A car goes 100 m in 10 s. Speed?", "Convert 36 km/h to m/s."]
    if conversational:
        prompts = [[{"role": "user", "content": q}] for q in questions]
    else:
        prompts = questions
    ds = datasets.Dataset.from_dict({"prompt": prompts, "answer": ["10 m/s", "10 m/s"]})
    args = trl.GRPOConfig(output_dir=str(tmp_path / "out"), max_steps=1, per_device_train_batch_size=2,
                          num_generations=2, max_completion_length=8, report_to=[], use_cpu=True, bf16=False,
                          logging_steps=1, save_strategy="no", seed=0)
    funcs = [outcome_reward_func(), rlvp_reward_func()]
    trainer = trl.GRPOTrainer(model=tiny, reward_funcs=funcs, args=args, train_dataset=ds)
    trainer.train()
    assert trainer.state.global_step == 1
    logged = {k for entry in trainer.state.log_history for k in entry}
    for name in ("outcome_reward", "rlvp_reward"):
        assert f"rewards/{name}/mean" in logged, sorted(logged)
    for f in funcs:  # the adapters really were called by the trainer, once per completion
        assert len(f.last_reasons) == 2


# ------------------------------------------------------------------ the step reward in the answer forms

def _form_items():
    import random

    from r3bench import procgen
    from r3bench.procgen import forms

    probs = procgen.generate(n=6, seed=11)
    rng = random.Random(1)
    return {f: [it for p in probs if (it := forms.make_item(p, f, rng)) is not None] for f in ("mcq", "mcq_multi", "integer")}


def _with_letter(text, letters):
    fa = parse(text).get("final_answer").content
    return text.replace(fa, f"\\boxed{{{letters}}}")


@pytest.mark.parametrize("form", ["mcq", "mcq_multi", "integer"])
def test_step_reward_in_every_answer_form(form):
    """An MCQ / multi-correct / rounded-integer reference earns the full step reward through the TRL adapter,
    its question read from the structured prompt (the options below it); a wrong letter earns 7/8."""
    from r3bench.core.prompts import prompt_structured
    from verifiers.steps import verify

    items = _form_items()[form]
    assert items
    f = position_reward_func(verify, answer_column="reference")
    prompts = [prompt_structured(it.doc()) for it in items]
    assert trl_call(f, [it.solution for it in items], prompts, reference=[it.solution for it in items]) == \
        [1.0] * len(items), f.last_reasons
    if form == "integer":
        return
    wrong = [_with_letter(it.solution, next(x for x in ("A", "B", "C", "D") if x != it.answer)) for it in items]
    assert trl_call(f, wrong, prompts, reference=[it.solution for it in items]) == [7 / 8] * len(items), f.last_reasons
    assert all("first wrong step 7 of 7 (CE)" in r for r in f.last_reasons)


def test_step_reward_of_an_mcq_against_a_gold_letter():
    """Reference-free (a benchmark's gold letter): the right letter earns 1, a letter the calculation contradicts
    7/8 where the prompt shows the options; without them a wrong letter gets no verdict (None), never a reward."""
    from r3bench.core.prompts import prompt_structured
    from verifiers.steps import verify

    it = _form_items()["mcq"][0]
    wrong = _with_letter(it.solution, next(x for x in "ABCD" if x != it.answer))
    f = position_reward_func(verify, answer_column="answer")
    prompt = prompt_structured(it.doc())
    assert trl_call(f, [it.solution, wrong], [prompt] * 2, answer=[it.answer] * 2) == [1.0, 7 / 8], f.last_reasons
    out = f(prompts=[it.question], completions=[wrong], answer=[it.answer])
    assert out == [None] and f.last_results[0].ok is False
