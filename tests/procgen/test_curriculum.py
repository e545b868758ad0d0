"""Curriculum tiers of the procedural bank: exact solutions, working injector and oracle, a
template-level held-out split, byte-reproducible exports, and the lm-eval task variants."""
import json
import math
import random
from collections import Counter
from pathlib import Path

import pytest

from r3bench import procgen
from verifiers import seventag
from r3bench.eval import procgen_data as lmeval_data
from r3bench.procgen import core, tiers
from r3bench.procgen.export import CELLS, export
from verifiers import check

ROOT = Path(__file__).resolve().parents[2]
PROBS = {k: procgen.generate(n=2 * len(tiers.TIER_TEMPLATES[k]), seed=7, tier=k) for k in (1, 2)}


def test_tier_templates_are_what_the_tiers_promise():
    t1, t2 = tiers.TIER_TEMPLATES[1], tiers.TIER_TEMPLATES[2]
    assert len(t1) == len(t2) >= 15 and tiers.TIER_TEMPLATES[3] == list(procgen.TEMPLATES)
    assert all(t.tier == 1 and len(t.eqs) == 1 and all(g.integer for g in t.givens) for t in t1)
    assert all(c.value == 10.0 for t in t1 for c in t.consts)  # g = 10 m/s^2 keeps answers integer
    assert all(t.tier == 2 and len(t.eqs) == 1 for t in t2)
    # tier 2 = the same formulas with decimals / prefixed units: every template has a non-SI given
    for a, b in zip(t1, t2):
        assert tiers.family(a.name) == tiers.family(b.name) and a.eqs == b.eqs
        assert any(core.to_si(1.0, g.unit)[0] != 1.0 for g in b.givens), b.name
    assert all(t.tier == 3 for t in procgen.TEMPLATES)
    names = [t.name for ts in tiers.TIER_TEMPLATES.values() for t in ts] + [t.name for t in procgen.MORE]
    assert len(names) == len(set(names)) == len(procgen.BY_NAME)


def test_tier1_answers_are_integers_and_tier2_are_not_all():
    ints1 = [p.answer_value for p in procgen.generate(n=300, seed=1, tier=1)]
    assert all(float(x).is_integer() and abs(x) < 1e4 for x in ints1)
    for p in PROBS[1]:
        assert all(float(v).is_integer() for v, _ in p.givens.values())
    ints2 = [float(p.answer_value).is_integer() for p in procgen.generate(n=300, seed=1, tier=2)]
    assert sum(ints2) < 0.5 * len(ints2)


@pytest.mark.parametrize("tier", [1, 2])
def test_reference_solutions_are_exact(tier):
    for p in PROBS[tier]:
        sol = seventag.parse(p.solution)
        assert sol.ok and sol.n == 7 and not sol.problems, (p.template, sol.problems)
        assert check(p.solution, p.answer, kind="numeric").equivalent, p.template
        assert procgen.first_error(p, p.solution) == (0, "all steps correct"), p.template
        assert p.tier == tier


def test_tier1_solutions_are_short():
    """Tiers 1-2 render the short problem analysis; a tier-1 solution is ~145-175 SmolLM2 tokens
    (~80 of them the seven tag pairs), measured in studies/results/curriculum/summary.md; here in characters."""
    short = [len(p.solution) for p in PROBS[1]]
    long_ = [len(p.solution) for p in procgen.generate(n=128, seed=7)]
    assert max(short) < 460 and sum(short) / len(short) < 0.8 * sum(long_) / len(long_)
    assert all(seventag.parse(p.solution).get("problem_analysis").content.startswith("Find the") for p in PROBS[1])


@pytest.mark.parametrize("tier", [1, 2])
@pytest.mark.parametrize("cls,step", [c for c in CELLS if c[1]])
def test_injected_errors_on_tier_templates_sit_at_the_labelled_step(tier, cls, step):
    made = 0
    for p in PROBS[tier]:
        try:
            text, fe, c, why = procgen.inject_problem(p, cls, step)
        except procgen.InjectError:
            continue
        made += 1
        assert (fe, c) == (step, cls)
        assert procgen.first_error(p, text)[0] == step, (p.template, why)
        assert not check(text, p.answer, kind="numeric").equivalent, (p.template, why)
    assert made >= 4, (tier, cls, step)


@pytest.mark.parametrize("tier", [1, 2, 3])
def test_template_level_split_holds_out_whole_templates(tier):
    probs = procgen.generate(n=600, seed=3, tier=tier)
    held = set(procgen.heldout_templates(tier))
    by_split = {s: {p.template for p in probs if p.split == s} for s in ("train", "validation", "test")}
    assert by_split["test"] == held
    assert not held & (by_split["train"] | by_split["validation"])
    topics = Counter(t.topic for t in tiers.TIER_TEMPLATES[tier])
    assert len(held) == sum(1 for n in topics.values() if n >= 2)  # one per topic
    n_seen = sum(p.split != "test" for p in probs)
    assert Counter(p.split for p in probs)["validation"] == n_seen - round(0.9 * n_seen)


def test_the_same_family_is_held_out_in_tiers_1_and_2():
    fam = lambda k: {tiers.family(n) for n in procgen.heldout_templates(k)}  # noqa: E731
    assert fam(1) == fam(2)


@pytest.mark.slow
def test_task_datasets_have_300_test_problems_per_tier():
    for k in (1, 2, 3):
        recs = lmeval_data.records(k)
        assert len(recs) >= 300, (k, len(recs))
        assert {r.meta["template"] for r in recs} == set(procgen.heldout_templates(k))
        assert all(r.meta["tier"] == k and r.answer_kind == "numeric" for r in recs)


def test_tier_yaml_files_are_generated_and_current():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen", ROOT / "tasks/r3/_generate.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert gen.TIER_N == lmeval_data.TASK_N
    for k in (1, 2, 3):
        kw = {"procgen_tier": k, "procgen_n": gen.TIER_N, "procgen_seed": 0}
        fn = "r3bench.eval.procgen_data.dataset_tier"
        for suffix, variant in (("", "structured"), ("_cot", "cot")):
            name = f"r3_procgen_t{k}{suffix}"
            want = gen.HEADER + "\n" + gen.task(name, "procgen", variant, kw, fn, gen.TIER_TOKS[k])
            assert (ROOT / "tasks/r3" / f"{name}.yaml").read_text() == want


def test_dataset_tier_builds_the_lmeval_dataset():
    ds = lmeval_data.dataset_tier(procgen_tier=1, procgen_n=200, procgen_seed=0, pretrained="ignored")["test"]
    probs = [p for p in procgen.generate(n=200, seed=0, tier=1) if p.split == "test"]
    assert len(ds) == len(probs) and ds[0]["question"] == probs[0].question and ds[0]["answer"] == probs[0].answer
    assert json.loads(ds[0]["meta"])["tier"] == 1


def test_tier_export_is_byte_reproducible_and_records_the_split(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    m = export(a, n=240, seed=2, tier=1, log=lambda s: None)
    export(b, n=240, seed=2, tier=1, log=lambda s: None)
    files = sorted(x.name for x in a.iterdir())
    assert files == ["dpo.jsonl", "manifest.json", "procgen_test.jsonl", "sft.jsonl", "verifier.jsonl"]
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    man = json.loads((a / "manifest.json").read_text())
    assert "seconds" not in man and "seconds" in m  # timing returned, never written
    assert man["tier"] == 1 and man["heldout_templates"] == list(procgen.heldout_templates(1))
    assert set(man["per_template_split"]["test"]) == set(man["heldout_templates"])
    sft = [json.loads(x) for x in (a / "sft.jsonl").read_text().splitlines()]
    assert {r["tier"] for r in sft} == {1}
    assert not {r["template"] for r in sft if r["split"] == "train"} & set(man["heldout_templates"])
    ver = Counter((json.loads(x)["error_class"], json.loads(x)["first_error"])
                  for x in (a / "verifier.jsonl").read_text().splitlines())
    assert set(ver) == set(CELLS) and len(set(ver.values())) == 1


def test_untiered_export_is_byte_reproducible_too(tmp_path):
    export(tmp_path / "a", n=60, seed=0, log=lambda s: None)
    export(tmp_path / "b", n=60, seed=0, log=lambda s: None)
    for f in ("manifest.json", "sft.jsonl", "verifier.jsonl"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()


def test_bad_tier_is_refused_and_untiered_generation_is_unchanged():
    with pytest.raises(ValueError, match="tier"):
        procgen.generate(n=10, seed=0, tier=4)
    a = procgen.generate(n=300, seed=5)
    assert Counter(p.split for p in a) == {"train": 240, "validation": 30, "test": 30}
    assert {p.tier for p in a} == {3} and all(p.template in {t.name for t in procgen.TEMPLATES} for p in a)


def test_integer_ok_rejects_fractions_and_large_values():
    t = procgen.BY_NAME["t1_average_speed"]
    d = core.reference(t, {"d": 10.0, "t": 4.0})
    assert d.answer == 2.5 and not core.integer_ok(d)
    assert core.integer_ok(core.reference(t, {"d": 12.0, "t": 4.0}))
    raw, d = core.instance(t, random.Random(0))
    assert core.integer_ok(d) and math.isclose(d.answer, raw["d"] / raw["t"])
