"""The benchmark-shaped mixture (r3bench.procgen.mixture): held-out templates, an RL pool disjoint from
the SFT data, the learning and transfer evaluation sets, the export, and the old tasks left unchanged."""
import json
from collections import Counter
from pathlib import Path

import pytest

from r3bench import procgen
from r3bench.eval import lmeval
from r3bench.eval import procgen_data
from r3bench.procgen import forms, mixture, mixture_export, tiers
from verifiers import check

ROOT = Path(__file__).resolve().parents[2]
SIZES = dict(n_sft=240, n_rl=120, n_learning=80, n_transfer=80)
M = mixture.build(seed=3, **SIZES)


def test_at_least_30_templates_held_out_across_topics():
    held = set(mixture.HELDOUT)
    assert len(held) >= 30 and len({tiers.family(n) for n in held}) >= 30
    assert len({procgen.BY_NAME[n].topic for n in held}) == len({t.topic for t in mixture.POOL})
    # a held-out family is held out in every tier it has, and the old tasks' test templates are held out
    fams = {tiers.family(n) for n in held}
    assert not {tiers.family(t.name) for t in mixture.TRAIN_TEMPLATES} & fams
    assert {n for k in (1, 2, 3) for n in procgen.heldout_templates(k)} <= held
    assert {t.name for t in mixture.TRAIN_TEMPLATES} | held == {t.name for t in mixture.POOL}


def test_sets_share_no_instance_and_training_never_sees_a_heldout_template():
    sets = M.sets()
    ids = {k: [i.problem.id for i in v] for k, v in sets.items()}
    for k, v in ids.items():
        assert len(v) == len(set(v)), k  # one form per instance within a set too
    names = list(sets)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            assert not set(ids[a]) & set(ids[b]), (a, b)
    held = set(mixture.HELDOUT)
    for k in ("sft", "rl", "learning"):
        assert not {i.problem.template for i in sets[k]} & held, k
    assert {i.problem.template for i in M.transfer} <= held
    assert len({i.problem.template for i in M.transfer}) >= 30


def test_no_instance_the_committed_study_trained_on_or_scores():
    committed = {p.id for n, s, k in mixture.COMMITTED for p in procgen.generate(n=n, seed=s, tier=k)}
    committed |= {p.id for p in procgen.test_split(*mixture.R3_PROCGEN_TEST)}
    assert committed == set(mixture.excluded_ids())
    assert not committed & {i.problem.id for v in M.sets().values() for i in v}


def test_forms_follow_the_stated_proportions():
    for name, props in (("sft", M.proportions), ("rl", M.proportions), ("learning", M.eval_proportions),
                        ("transfer", M.eval_proportions)):
        items = M.sets()[name]
        assert Counter(i.form for i in items) == {f: c for f, c in forms.counts_for(len(items), props).items() if c}
    assert M.proportions == forms.DEFAULT_PROPORTIONS and M.eval_proportions == mixture.EVAL_PROPORTIONS
    custom = mixture.build(seed=3, n_sft=40, n_rl=8, n_learning=8, n_transfer=8,
                           proportions=(("mcq", 0.5), ("numeric", 0.5)))
    assert Counter(i.form for i in custom.sft) == {"mcq": 20, "numeric": 20}


def test_build_is_deterministic_and_seeded():
    again = mixture.build.__wrapped__(seed=3, **SIZES)
    assert [i.id for v in again.sets().values() for i in v] == [i.id for v in M.sets().values() for i in v]
    assert [i.solution for i in again.sft] == [i.solution for i in M.sft]
    other = mixture.build(seed=4, **SIZES)
    assert [i.id for i in other.sft] != [i.id for i in M.sft]


def test_export_rows_manifest_and_byte_reproducibility(tmp_path):
    a = mixture_export.export(tmp_path / "a", seed=3, **SIZES)
    mixture_export.export(tmp_path / "b", seed=3, **SIZES)
    files = sorted(x.name for x in (tmp_path / "a").iterdir())
    assert files == ["dpo.jsonl", "learning.jsonl", "manifest.json", "rl.jsonl", "sft.jsonl", "transfer.jsonl"]
    for f in files:
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f
    man = json.loads((tmp_path / "a" / "manifest.json").read_text())
    assert set(man["instance_overlaps"].values()) == {0} and man["heldout_templates"] == list(mixture.HELDOUT)
    assert man["rows"] == a["rows"] and man["rows"]["sft"] == SIZES["n_sft"]
    rows = {n: [json.loads(x) for x in (tmp_path / "a" / f"{n}.jsonl").read_text().splitlines()]
            for n in ("sft", "rl", "learning", "transfer", "dpo")}
    for n in ("sft", "rl"):  # what trainers.core.data.train_rows reads: split "train", prompt/completion/answer
        assert {r["split"] for r in rows[n]} == {"train"}
        # the RL outcome reward's default reads the kind from the gold (no kind column): letters, integers
        # and values must all be read as their form, and the reference must earn the reward
        assert all(check(r["completion"], r["answer"]).equivalent for r in rows[n])
        assert all(check(r["completion"], r["answer"]).kind == r["answer_kind"] for r in rows[n])
    for r in rows["sft"]:
        assert r["messages"][1]["content"] == r["completion"] and r["answer_kind"] in forms.FORMS
        if r["answer_kind"] in ("mcq", "mcq_multi"):
            assert "\n(A) " in r["prompt"] and "\n(D) " in r["prompt"] and r["answer"].isalpha()
            assert f"\\boxed{{{r['answer']}}}" in r["completion"]
    assert {r["split"] for n in ("learning", "transfer") for r in rows[n]} == {"test"}
    assert not {r["problem_id"] for r in rows["sft"]} & {r["problem_id"] for r in rows["rl"]}
    assert len(rows["dpo"]) >= 0.9 * SIZES["n_sft"] and all(r["chosen"] != r["rejected"] for r in rows["dpo"])


def test_eval_set_dataset_scores_its_references_through_the_lmeval_glue(monkeypatch):
    monkeypatch.setattr(mixture, "build", lambda seed=0, **kw: M)
    for name in procgen_data.MIXTURE_SETS:
        ds = procgen_data.dataset_mixture(procgen_set=name, procgen_seed=3, pretrained="ignored")["test"]
        assert len(ds) == len(getattr(M, name))
        kinds = Counter(ds["answer_kind"])
        assert set(kinds) == set(forms.FORMS)
        for doc in ds:
            assert lmeval.results_structured(doc, [doc["solution"]])["acc"] == 1.0, doc["id"]
            if doc["answer_kind"] == "mcq":
                wrong = next(x for x in "ABCD" if x != doc["answer"])
                assert lmeval.results_structured(doc, [f"\\boxed{{{wrong}}}"])["acc"] == 0.0
    with pytest.raises(ValueError, match="procgen_set"):
        procgen_data.mixture_records("sft")


def test_benchmark_tasks_exist():
    for task in mixture.BENCHMARK_TASKS:
        assert (ROOT / "tasks" / "r3" / f"{task}.yaml").is_file(), task


@pytest.mark.parametrize("tier", [1, 2])
def test_old_tier_tasks_still_score_the_documents_the_committed_study_scored(tier):
    """r3_procgen_t1/_t2 datasets unchanged: every committed learning-study sample's doc_id still
    names the same problem."""
    probs = procgen_data.problems(tier)
    files = sorted((ROOT / "results" / "learning" / "samples").glob(f"*__t{tier}.jsonl"))
    assert files
    for f in files:
        for line in f.read_text().splitlines():
            s = json.loads(line)
            assert probs[s["doc_id"]].id == s["id"], (f.name, s["doc_id"])
