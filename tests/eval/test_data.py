"""Benchmark loaders: the paper's counts, one schema, clear errors on bad files."""
import json

import pytest

from r3bench.eval import data


@pytest.mark.parametrize("bench,n", sorted(data.PAPER_COUNTS.items()))
def test_paper_eval_set_sizes(shared_data, bench, n):
    recs = data.load(bench, shared_data)
    assert len(recs) == n
    assert len({r.id for r in recs}) == n
    for r in recs:
        assert r.benchmark == bench and r.question.strip() and r.answer.strip()
        if r.answer_kind == "mcq":
            assert r.answer in "ABCD" and len(r.options) == 4
        if r.answer_kind == "mcq_multi":
            assert set(r.answer) <= set("ABCD") and len(r.answer) >= 1  # JEEBench multi may have one correct


def test_jeebench_kinds(shared_data):
    kinds = [r.answer_kind for r in data.load("jeebench", shared_data)]
    assert kinds.count("mcq_multi") == 40 and kinds.count("numeric") == 33
    assert kinds.count("mcq") == 18 and kinds.count("integer") == 16


def test_physicsqa_repairs_and_labels(shared_data):
    recs = data.load("physicsqa", shared_data)
    repaired = [r for r in recs if r.meta["repaired_escapes"]]
    assert len(repaired) >= 25
    for r in repaired:
        text = r.question + " ".join(r.options) + (r.solution or "")
        assert not any(c in text for c in "\r\x07\x08\x0c")
    assert any("\\alpha" in (r.question + " ".join(r.options)) for r in repaired)
    first = recs[0]
    assert first.answer == "C" and "40" in first.meta["answer_option_text"]
    non_mcq = [r for r in recs if not r.options]
    assert 10 <= len(non_mcq) <= 20 and all(r.answer_kind != "mcq" for r in non_mcq)
    assert sum(r.answer_kind == "mcq_multi" for r in recs) >= 1


def test_repair_escapes():
    assert data.repair_escapes("\right)") == ("\\right)", 1)
    assert data.repair_escapes("a\tb\theta") == ("a\\tb\\theta", 2)
    assert data.repair_escapes("two\tx") == ("two\\tx", 1)
    assert data.repair_escapes("plain\n") == ("plain\n", 0)


def test_standard_mmlu_csv_split(shared_data):
    recs = data.load("mmlu_college", shared_data, file="mmlu_college/college_physics_test.csv")
    assert len(recs) == 102 and all(len(r.options) == 4 for r in recs)


def test_split_options_schemes():
    assert data.split_options("(a) 1 J (b) 2 J (c) 3 J (d) 4 J") == ("1 J", "2 J", "3 J", "4 J")
    assert data.split_options("1. x\n2. y\n3. z\n4. w") == ("x", "y", "z", "w")
    assert data.split_options("p\nq\nr\ns") == ("p", "q", "r", "s")
    assert data.split_options("") == ()


def test_missing_and_corrupt_files_name_the_file(tmp_path):
    with pytest.raises(data.DataError, match="PhysicsQA.json"):
        data.load("physicsqa", tmp_path)
    (tmp_path / "jeebench").mkdir()
    (tmp_path / "jeebench" / "dataset_phy.json").write_text("[{\"question\": ")
    with pytest.raises(data.DataError, match="corrupt.*dataset_phy.json"):
        data.load("jeebench", tmp_path)
    (tmp_path / "jeebench" / "dataset_phy.json").write_text(json.dumps([{"question": "q"}]))
    with pytest.raises(data.DataError, match="lacks"):
        data.load("jeebench", tmp_path)
    (tmp_path / "mmlu_high").mkdir()
    (tmp_path / "mmlu_high" / "t.csv").write_text("q,a,b\n")
    with pytest.raises(data.DataError, match="t.csv"):
        data.load("mmlu_high", tmp_path, file="mmlu_high/t.csv")


def test_no_data_dir(monkeypatch, tmp_path):
    monkeypatch.delenv(data.ENV_VAR, raising=False)
    with pytest.raises(data.DataError, match="R3BENCH_DATA_DIR"):
        data.load("scieval")
    with pytest.raises(data.DataError, match="does not exist"):
        data.load("scieval", tmp_path / "nope")
    with pytest.raises(data.DataError, match="unknown benchmark"):
        data.load("nope", tmp_path)


def test_cli_data_list(shared_data, capsys, tmp_path):
    from r3bench.apps.cli import main

    assert main(["data", "list", "--data-dir", str(shared_data)]) == 0
    out = capsys.readouterr().out
    assert "| physicsqa | 370 | 370 |" in out and "| jeebench | 107 | 107 |" in out
    assert main(["data", "list", "--data-dir", str(tmp_path)]) == 1
    assert "missing benchmark file" in capsys.readouterr().err


def test_physicsqa_free_form_answers_get_kinds(shared_data):
    from collections import Counter
    from r3bench.eval.data import load_physicsqa
    rs = [r for r in load_physicsqa(shared_data) if r.answer_kind != "mcq"]
    kinds = Counter(r.answer_kind for r in rs)
    assert kinds["numeric"] >= 3 and kinds["symbolic"] >= 1 and kinds["text"] >= 10
    latex_num = [r for r in rs if "10^{3}" in r.answer]
    assert latex_num and latex_num[0].answer_kind == "numeric"
