"""r3bench.results.paper: the paper's own tables -> results/paper_reference.csv and results/paper_errors.csv."""
from pathlib import Path

import pytest

from r3bench.results import leaderboard, paper
from r3bench.eval.data import DataError

REPO = Path(__file__).resolve().parents[2]


def test_reads_the_paper_tables(shared_data):
    acc, err = paper.accuracy_rows(shared_data), paper.error_rows(shared_data)
    assert len(acc) == 100 and len(err) == 60  # 5 x 4 x 5 and 4 x 5 x 3 (the paper's tables)
    assert {r["method"] for r in acc} == {"CoT", "RAG", "SFT", "DPO", "Ours"}
    assert {r["task"] for r in acc} == {"r3_scieval", "r3_mmlu_high", "r3_mmlu_college", "r3_jeebench", "r3_physicsqa"}
    assert all(0 <= float(r["acc"]) <= 1 for r in acc)


def test_committed_reference_is_the_regenerated_one(shared_data, tmp_path):
    """results/paper_reference.csv and paper_errors.csv are generated, never hand-edited."""
    a, e = paper.write(shared_data, tmp_path)
    assert a.read_bytes() == (REPO / "results" / "paper_reference.csv").read_bytes()
    assert e.read_bytes() == (REPO / "results" / "paper_errors.csv").read_bytes()
    ref = leaderboard.load_reference(a)
    assert ref[("r3_scieval", "Qwen 2.5 1.5B", "stepfix")]["acc"] == pytest.approx(0.7929)  # "Ours"


def _tables(tmp_path, acc_text, err_text=None):
    (tmp_path / "paper").mkdir(exist_ok=True)
    (tmp_path / "paper" / "r3_accuracy.csv").write_text(acc_text)
    (tmp_path / "paper" / "r3_error_distribution.csv").write_text(
        err_text or "task,model,method,error_class,share,source\nr3_physicsqa,M,CoT,MC,0.2,t\n")
    return tmp_path


@pytest.mark.parametrize("text, words", [
    ("task,model,method,acc,n,source\nr3_scieval,M,CoT,62.7,164,t\n", "not a fraction"),
    ("task,model,method,acc,n,source\nr3_scieval,M,CoT,abc,164,t\n", "not a number"),
    ("task,model,method,acc,n,source\nr3_scieval,M,CoT,0.5,164,t\nr3_scieval,M,CoT,0.6,164,t\n", "twice"),
    ("task,model,acc\nr3_scieval,M,0.5\n", "missing column"),
    ("task,model,method,acc,n,source\nr3_scieval,,CoT,0.5,164,t\n", "empty"),
    ("task,model,method,acc,n,source\nr3_scieval,M,CoT,0.5,many,t\n", "not a count"),
])
def test_corrupt_accuracy_table_names_file_and_line(tmp_path, text, words):
    d = _tables(tmp_path, text)
    with pytest.raises(DataError, match=words) as e:
        paper.accuracy_rows(d)
    assert "r3_accuracy.csv" in str(e.value)


def test_corrupt_error_table_and_missing_files(tmp_path):
    d = _tables(tmp_path, "task,model,method,acc,n,source\n",
                "task,model,method,error_class,share,source\nr3_physicsqa,M,CoT,XX,0.2,t\n")
    with pytest.raises(DataError, match="error_class"):
        paper.error_rows(d)
    with pytest.raises(DataError, match="missing"):
        paper.accuracy_rows(tmp_path / "nowhere")
    (d / "paper" / "r3_accuracy.csv").write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(DataError, match="unreadable"):
        paper.accuracy_rows(d)


def test_cli_exit_codes(tmp_path, shared_data, capsys):
    assert paper.main(["--data-dir", str(tmp_path)]) == 1
    assert "missing" in capsys.readouterr().err
    assert paper.main(["--data-dir", str(shared_data), "--out", str(tmp_path / "o")]) == 0
    assert (tmp_path / "o" / "paper_reference.csv").is_file()


def test_leaderboard_shows_the_papers_table_beside_ours(tmp_path, shared_data):
    """Cells of SmolLM2 on r3_scieval: the paper's four models appear in their own table below."""
    a, _ = paper.write(shared_data, tmp_path)
    cell = leaderboard.Cell(task="r3_scieval", model="SmolLM2-135M-Instruct", method="cot", acc=0.25,
                            stderr=0.1, n=20, source="x")
    md, _ = leaderboard.tables([cell], leaderboard.load_reference(a))
    assert "The paper's own table" in md
    line = next(x for x in md.splitlines() if x.startswith("| r3_scieval | Qwen 2.5 1.5B |"))
    assert "0.627" in line and "0.793" in line  # CoT and Ours (stepfix) of the paper
    assert "r3_jeebench" not in md  # only the tasks in the table
    md2, _ = leaderboard.tables([cell], {})
    assert "The paper's own table" not in md2
