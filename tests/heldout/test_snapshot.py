"""heldout/snapshot.py: the committed verdicts of the checker and the step verifier on every labelled set.

The full `--check` takes minutes (heldout/README.md); here it runs on the first rows of a few sets of each
shape, each set in its fresh process as the full run computes it, so a change to verifiers/ that moves one
of their verdicts fails here. The machinery (bad rows recorded, differences found) is tested on sets made here."""
from __future__ import annotations

import json
import shutil

import pytest

import heldout_scripts  # tests/heldout/ is on sys.path (pytest's rootdir-less import)

SUBSET = ["benchmarks/check_pairs.jsonl", "tests/verifiers/data/math_verify_cases.jsonl",
          "heldout/round8/answers_r8.jsonl", "heldout/round8/solutions_r8.jsonl", "heldout/verifier_heldout.jsonl"]


@pytest.fixture(scope="module")
def snap():
    return heldout_scripts.load("snapshot")


def test_every_committed_set_is_found_and_has_its_snapshot(snap):
    sets, unknown = snap.discover()
    names = {s.name for s in sets}
    assert set(SUBSET) <= names and unknown == []
    assert {s.shape for s in sets} == {"answers", "solutions", "real_answers", "real_solutions"}
    assert "r3bench/eval/stepverify_items.jsonl:procgen" in names
    for s in sets:
        rows = snap.read_snapshot(s)
        assert rows, f"{s.name}: no snapshot; python heldout/snapshot.py --write --sets {s.name}"
        assert not [r for r in rows if "error" in r], s.name  # every committed row has a verdict
    committed = {f.name for f in snap.SNAPSHOT.glob("*.jsonl")}
    assert committed == {s.snapshot_file.name for s in sets}  # no snapshot of a set that is gone
    assert sum(f.stat().st_size for f in snap.SNAPSHOT.glob("*.jsonl")) < 3_000_000


def test_check_on_a_subset_finds_no_difference(snap, capsys):
    """The first 30 rows of answer and solution sets: the verdicts the committed snapshot holds."""
    rc = snap.main(["--check", "--sets", ",".join(SUBSET), "--limit", "30"])
    out = capsys.readouterr().out
    assert rc == 0, out


def test_check_on_real_graded_rows_finds_no_difference(snap, shared_data, capsys):
    """Hand-graded real outputs, resolved from the committed samples and the data folder."""
    rc = snap.main(["--check", "--sets", "heldout/round8/real_answers_graded_r8.jsonl", "--limit", "15",
                    "--data-dir", str(shared_data)])
    assert rc == 0, capsys.readouterr().out


def test_a_changed_verdict_is_printed_and_fails(snap, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(snap, "SNAPSHOT", tmp_path)
    s = next(x for x in snap.discover()[0] if x.name == "benchmarks/check_pairs.jsonl")
    shutil.copy(snap.HERE / "snapshot" / s.snapshot_file.name, tmp_path)
    rows = snap.read_snapshot(s)
    rows[2]["verdict"]["correct"] = not rows[2]["verdict"]["correct"]
    snap.write_snapshot(s, rows)
    assert snap.main(["--check", "--sets", s.name, "--limit", "5"]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith(f"{s.name} | {rows[2]['id']} | ")


def test_bad_rows_are_recorded_not_raised(snap, tmp_path):
    """Bad JSON, a missing field, an unverifiable row: each an error row; the good rows keep their verdicts;
    a row without an id is named by a hash of its content, a repeated id gets a suffix."""
    f = tmp_path / "answers_x.jsonl"
    f.write_text("\n".join([
        json.dumps({"id": "a", "pred": "The answer is 4 N.", "ref": "4 N", "kind": "numeric"}),
        "{not json",
        json.dumps({"id": "b", "pred": "4 N"}),  # no ref
        json.dumps(["a list"]),
        json.dumps({"pred": "5 kg", "ref": "5 N"}),
        json.dumps({"id": "a", "pred": "3 N", "ref": "4 N"}),
    ]) + "\n")
    rows = snap.compute(snap.Set("x", f, "answers"), None, tmp_path)
    assert [r["id"] for r in rows] == ["a", "line 2", "b", "line 4", rows[4]["id"], "a~2"]
    assert rows[4]["id"].startswith("#") and rows[4]["verdict"]["correct"] is False
    assert rows[0]["verdict"]["correct"] is True and rows[5]["verdict"]["correct"] is False
    assert "not JSON" in rows[1]["error"] and "missing field 'gold'" in rows[2]["error"]
    assert "not a JSON object" in rows[3]["error"]
    sol = tmp_path / "solutions_x.jsonl"
    sol.write_text(json.dumps({"id": "s", "question": "q", "solution": "no tags", "reference": ""}) + "\n"
                   + json.dumps({"id": "t", "question": "q"}) + "\n")
    rows = snap.compute(snap.Set("y", sol, "solutions"), None, tmp_path)
    assert rows[0]["verdict"]["error_class"] == "FORMAT" and "missing field" in rows[1]["error"]
    real = tmp_path / "real_answers_graded_x.jsonl"
    real.write_text(json.dumps({"key": "no_such_file#0", "label": True}) + "\n")
    rows = snap.compute(snap.Set("z", real, "real_answers"), None, tmp_path / "no-data")
    assert "no data directory" in rows[0]["error"]


def test_differences_name_set_id_before_and_after(snap):
    s = snap.Set("x", snap.ROOT / "x.jsonl", "answers")
    v = {"correct": True, "score": 1.0, "reason": "numeric match"}
    before = [{"id": "a", "in": "1", "verdict": v}, {"id": "b", "in": "2", "verdict": v},
              {"id": "c", "in": "3", "verdict": v}]
    after = [{"id": "a", "in": "1", "verdict": {**v, "correct": False}}, {"id": "b", "in": "9", "verdict": v},
             {"id": "d", "in": "4", "verdict": v}]
    got = snap.differences(s, before, after, limited=False)
    assert got[0].startswith("x | a | {'correct': True") and "-> {'correct': False" in got[0]
    assert got[1].startswith("x | b | input changed")
    assert got[2].startswith("x | d | new row") and got[3].startswith("x | c | row gone")
    assert len(snap.differences(s, before, after, limited=True)) == 3  # rows past a --limit are not missed
    assert snap.differences(s, before, before, limited=False) == []


def test_a_blind_round_is_left_out_until_it_is_scored(snap, tmp_path):
    """A round committed blind (its BLIND file) is not snapshotted: its verdicts would score it early."""
    for name in ("round5", "round6"):
        d = tmp_path / "heldout" / name
        d.mkdir(parents=True)
        (d / f"answers_{name}.jsonl").write_text('{"id": "a1", "pred": "5 m", "ref": "5 m", "label": true}\n')
    (tmp_path / "heldout" / "round6" / snap.BLIND).write_text("not scored yet\n")
    names = {s.name for s in snap.discover(tmp_path)[0]}
    assert "heldout/round5/answers_round5.jsonl" in names and not any("round6" in n for n in names)
    assert snap.blind_rounds(tmp_path) == ["heldout/round6"]

