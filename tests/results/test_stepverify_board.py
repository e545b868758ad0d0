"""The verifier leaderboard on r3_stepverify (r3bench.results.stepverify_board, `r3bench stepverify-board`)."""
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from r3bench.eval import stepverify_data
from r3bench.results import stepverify_board as board

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "results" / "stepverify"


def test_wilson_interval():
    lo, hi = board.wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = board.wilson(5, 10)
    assert lo == pytest.approx(1 - hi) and lo < 0.5 < hi
    assert all(math.isnan(x) for x in board.wilson(0, 0))


def test_f1_interval_holds_the_estimate_and_needs_both_kinds():
    o = [{"erroneous": True, "hit": i % 4 != 0} for i in range(40)] + \
        [{"erroneous": False, "hit": i % 2 == 0} for i in range(20)]
    lo, hi = board.f1_interval(o)
    assert 0 <= lo < 2 * 0.75 * 0.5 / 1.25 < hi <= 1
    assert board.f1_interval(o) == (lo, hi)  # seeded
    assert all(math.isnan(x) for x in board.f1_interval(o[:40]))


def test_reference_modes():
    it = stepverify_data.items("test", "procgen")[0]
    assert board.shown_reference(it, "solution") == it["reference"]
    assert board.shown_reference(it, "answer").startswith("\\boxed{") and "<" not in board.shown_reference(it, "answer")
    assert board.shown_reference(it, "none") == ""
    with pytest.raises(ValueError, match="reference mode"):
        board.shown_reference(it, "gold")


def test_symbolic_rows_on_procgen_items():
    items = stepverify_data.items("test", "procgen")[:14]
    with_ref = board.score(board.records(items, "symbolic", "solution"))
    assert with_ref["exact"] == 1.0  # procgen's labels are exact; the symbolic backend reads them
    bare = board.records(items, "symbolic", "none")
    assert all(r["step"] != 0 for r in bare)  # reference-free never calls a solution correct: it abstains


def test_samples_file_rows_are_read_like_the_task(tmp_path):
    items = stepverify_data.items("test")[:3]
    replies = ["First wrong step: %d" % items[0]["first_error"], "none", "no idea"]
    f = tmp_path / "samples_r3_stepverify.jsonl"
    f.write_text("".join(json.dumps({"doc_id": i, "doc": it, "resps": [[r]], "filtered_resps": [r]}) + "\n"
                         for i, (it, r) in enumerate(zip(items, replies))))
    rows = board.from_samples(f)
    assert [r["step"] for r in rows] == [items[0]["first_error"], 0, None]
    assert "no step named" in rows[2]["explanation"]


def test_committed_table_is_rebuilt_byte_for_byte_from_its_records(tmp_path):
    board.write(tmp_path, COMMITTED / "records")
    for name in ("leaderboard.md", "leaderboard.csv"):
        assert (tmp_path / name).read_bytes() == (COMMITTED / name).read_bytes(), \
            f"{name}: rerun r3bench stepverify-board"
    rows = board.table(board.load(COMMITTED / "records"))
    real = next(r for r in rows if r["row"] == "symbolic" and r["subset"] == "real")
    assert real["n_correct"] < board.MIN_SIDE and real["f1"] != real["f1"]  # one correct item: no F1
    md = (COMMITTED / "leaderboard.md").read_text()
    assert "another domain" in md and "87.9" in md and "| symbolic |" in md


def test_committed_symbolic_records_match_the_verifier_now():
    """A sample of the committed symbolic row, verified again: a verifier change makes the table stale."""
    about, rows = board.read_records(COMMITTED / "records" / "symbolic.jsonl")
    assert about["reference"] == "solution" and about["n"] == len(stepverify_data.items("test"))
    by_id = {it["id"]: it for it in stepverify_data.items("test")}
    sample = rows[::60]
    again = board.records([by_id[r["id"]] for r in sample], "symbolic", "solution")
    assert [(r["step"], r["pred_class"]) for r in again] == [(r["step"], r["pred_class"]) for r in sample], \
        "rerun: r3bench stepverify-board --run symbolic"


def test_cli_renders_and_runs_a_row(tmp_path):
    p = subprocess.run([sys.executable, "-m", "r3bench.apps.cli", "stepverify-board", "--out", str(tmp_path),
                        "--run", "sym5", "--limit", "5"], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "| sym5 | step verifier: symbolic, reference: solution | test | 5 (" in p.stdout
    assert (tmp_path / "records" / "sym5.jsonl").is_file() and (tmp_path / "leaderboard.csv").is_file()
    bad = subprocess.run([sys.executable, "-m", "r3bench.apps.cli", "stepverify-board", "--out", str(tmp_path),
                          "--samples", str(tmp_path / "x.jsonl")], capture_output=True, text=True, cwd=REPO)
    assert bad.returncode == 2 and "--name" in bad.stderr


def _sample(it, reply, **doc):
    return json.dumps({"doc": {**it, **doc}, "resps": [[reply]], "filtered_resps": [reply]}) + "\n"


def test_samples_file_is_not_trusted(tmp_path):
    """The gold comes from the items, never from the file's doc; unknown or repeated ids are refused
    naming file:line; an item no longer in the test split is dropped and counted."""
    it = stepverify_data.items("test")[0]
    f = tmp_path / "s.jsonl"
    f.write_text(_sample(it, "First wrong step: 2", first_error=2, error_class="CM", source="procgen"))
    (row,) = board.from_samples(f)
    assert (row["first_error"], row["error_class"], row["source"]) == (it["first_error"], it["error_class"],
                                                                        it["source"])
    f.write_text(_sample(it, "none") + _sample(it, "none"))
    with pytest.raises(board.SamplesError, match=r"s.jsonl:2: .* again"):
        board.from_samples(f)
    f.write_text(_sample(it, "none", id="written:made:up"))
    with pytest.raises(board.SamplesError, match=r"s.jsonl:1: 'written:made:up' is no r3_stepverify item"):
        board.from_samples(f)
    dev = stepverify_data.items("dev")[0]
    f.write_text(_sample(it, "none") + _sample(dev, "none"))
    rows = board.from_samples(f)
    assert [r["id"] for r in rows] == [it["id"]] and rows.dropped == 1


def test_committed_rows_are_on_the_test_split_and_label_procgen():
    test = {it["id"]: it for it in stepverify_data.items("test")}
    for p in sorted((COMMITTED / "records").glob("*.jsonl")):
        about, rows = board.read_records(p)
        assert about["n"] == len(rows) and len({r["id"] for r in rows}) == len(rows)
        for r in rows:
            assert r["id"] in test, f"{p.name}: {r['id']} is not in the test split"
            assert (r["first_error"], r["error_class"]) == (test[r["id"]]["first_error"], test[r["id"]]["error_class"])
    md = (COMMITTED / "leaderboard.md").read_text()
    assert "| procgen: new instances of the generator the verifier was developed against (an upper bound) |" in md
