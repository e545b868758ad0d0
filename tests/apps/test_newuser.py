"""What a new user ran into (issue 18, item 8): one clear line instead of a traceback, nothing
overwritten by a failed command, tables and plots that say what they show."""
from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from r3bench.apps.cli import main
from r3bench.core import models
from r3bench.eval import data
from r3bench.results import leaderboard, plots

REPO = Path(__file__).resolve().parents[2]


# ---- lm_eval: an unknown r3bench/ model name, a missing data directory ----------------------------

def test_unknown_r3bench_model_name_in_lm_eval_is_one_clear_error(tmp_path, monkeypatch):
    """`lm_eval --model hf --model_args pretrained=r3bench/nope`: the hook's HFLM wrapper refuses the
    name with the short names, before the hub client is asked (it was an 88-line hub traceback)."""
    from r3bench.eval.hook import patch_hflm

    seen = []

    class HFLM:  # the shape of lm_eval.models.huggingface.HFLM.__init__ the hook wraps
        def __init__(self, pretrained="gpt2", tokenizer=None, **kw):
            seen.append(pretrained)

    patch_hflm(types.SimpleNamespace(HFLM=HFLM))
    with pytest.raises(models.ModelError) as e:
        HFLM(pretrained="r3bench/nope")
    msg = str(e.value)
    assert "'r3bench/nope'" in msg and "r3bench/smollm2-135m-instruct" in msg and "\n" not in msg
    assert seen == []  # refused before lm-eval's own constructor ran
    HFLM(pretrained="gpt2")  # names that are not r3bench's pass through untouched
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r3bench" / "mine").mkdir(parents=True)
    HFLM(pretrained="r3bench/mine")  # a local folder of that name is a path, not a short name
    assert seen == ["gpt2", "r3bench/mine"]


def test_unknown_r3bench_model_name_in_r3bench_eval(monkeypatch):
    from r3bench.apps.cli import eval_argv

    with pytest.raises(models.ModelError, match="unknown model 'r3bench/nope'.*smollm2"):
        eval_argv(["--model", "hf", "--model_args", "pretrained=r3bench/nope", "--tasks", "r3_demo"])
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    assert main(["eval", "--model", "hf", "--model_args", "pretrained=r3bench/nope", "--tasks", "r3_demo"]) == 1
    assert err.getvalue().count("\n") == 1 and "unknown model 'r3bench/nope'" in err.getvalue()


@pytest.mark.parametrize("argv0", ["/venv/bin/lm_eval", "/venv/bin/lm-eval",
                                   "/venv/lib/python3.11/site-packages/lm_eval/__main__.py"])
def test_missing_data_dir_inside_lm_eval_names_what_lm_eval_takes(monkeypatch, argv0):
    """The function lm-eval calls (custom_dataset: r3bench.eval.lmeval.dataset_jeebench) without a data
    directory: lm_eval has no --data-dir, so the message names the variable (and --metadata)."""
    from r3bench.eval import lmeval

    monkeypatch.delenv(data.ENV_VAR, raising=False)
    monkeypatch.setattr(sys, "argv", [argv0, "--tasks", "r3_jeebench"])
    with pytest.raises(data.DataError) as e:
        lmeval.dataset_jeebench()
    msg = str(e.value)
    assert "R3BENCH_DATA_DIR=" in msg and "--metadata" in msg and "--data-dir" not in msg and "\n" not in msg


def test_missing_data_dir_in_the_r3bench_cli_names_data_dir(monkeypatch, capsys):
    monkeypatch.delenv(data.ENV_VAR, raising=False)
    monkeypatch.setattr(sys, "argv", ["/venv/bin/r3bench", "data", "list"])
    assert main(["data", "list"]) == 1
    assert "pass --data-dir" in capsys.readouterr().err


# ---- r3bench leaderboard -----------------------------------------------------------------------------

def _results(path: Path, tasks: dict, model="org/Tiny-Model"):
    d = {"results": {t: {"acc,none": a, "acc_stderr,none": 0.1} for t, a in tasks.items()},
         "n-samples": {t: {"effective": 4} for t in tasks},
         "config": {"model": "hf", "model_args": f"pretrained={model}"}}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(d))


def test_leaderboard_with_no_results_writes_nothing(tmp_path, capsys):
    out = tmp_path / "results"
    out.mkdir()
    (out / "leaderboard.md").write_text("the committed table\n")
    (tmp_path / "empty").mkdir()
    assert main(["leaderboard", str(tmp_path / "empty"), "--out", str(out)]) == 1
    assert "no lm-eval results" in capsys.readouterr().err
    assert (out / "leaderboard.md").read_text() == "the committed table\n"
    assert not (out / "leaderboard.csv").exists()


def test_leaderboard_counts_the_cells_of_the_table(tmp_path, capsys):
    """Three sources, two of them the same cell: a table of two cells says 2 (it said 3)."""
    _results(tmp_path / "runs" / "a" / "results_2026-01-01T00-00-00.json", {"r3_scieval": 0.5, "r3_jeebench": 0.25})
    _results(tmp_path / "runs" / "b" / "results_2026-01-02T00-00-00.json", {"r3_scieval": 0.75})
    assert len(leaderboard.collect([tmp_path / "runs"])) == 3
    assert main(["leaderboard", str(tmp_path / "runs"), "--out", str(tmp_path / "o"), "--reference", "none"]) == 0
    out = capsys.readouterr().out
    assert "2 cells ->" in out and "more than one source" in out
    assert len((tmp_path / "o" / "leaderboard.csv").read_text().splitlines()) == 1 + 2


def test_base_model_on_a_seven_tag_task_is_not_labelled_cot(tmp_path):
    _results(tmp_path / "results_2026-01-01T00-00-00.json",
             {"r3_scieval": 0.5, "r3_procgen": 0.25, "r3_physicsqa_structured": 0.0})
    cells = leaderboard.collect([tmp_path])
    md, csv_text = leaderboard.tables(cells)
    assert md.startswith("| task | model | CoT | base (seven-tag) |")
    rows = {line.split(" | ")[0].strip("| "): line for line in md.splitlines() if line.startswith("| r3_")}
    assert rows["r3_procgen"].endswith("|  | 0.250 ± 0.100 (4) |")       # in the seven-tag column
    assert rows["r3_scieval"].endswith("| 0.500 ± 0.100 (4) |  |")       # chain of thought: CoT
    assert "base (seven-tag) = the base model" in md
    assert {r.split(",")[2] for r in csv_text.splitlines()[1:]} == {"cot"}  # the method itself is unchanged


# ---- plots ------------------------------------------------------------------------------------------

@pytest.fixture
def figures(monkeypatch):
    pytest.importorskip("matplotlib")
    got = []

    def save(plt, fig, out):
        fig.canvas.draw()
        got.append(fig)
        return Path(out)

    monkeypatch.setattr(plots, "save", save)
    return got


def test_accuracy_bars_title_n_and_missing_bars(figures, tmp_path):
    C = leaderboard.Cell
    cells = [C("r3_scieval", "M", "cot", 0.0, 0.0, 4, "a"),   # a measured zero
             C("r3_scieval", "M", "sft", 0.5, 0.1, 4, "b"),
             C("r3_jeebench", "M", "cot", 0.25, 0.1, 4, "c")]  # no sft cell for r3_jeebench: not run
    plots.accuracy_bars(cells, tmp_path / "a.png")
    (ax,) = figures[0].axes
    assert "accuracy" in ax.get_title() and "n=4" in ax.get_title()
    texts = [t.get_text() for t in ax.texts]
    assert "n/a (not run)" in texts and "0.00\nn=4" in texts  # missing: labelled; zero: a value, not an empty slot
    assert any(p.get_hatch() for p in ax.patches)


def test_training_curves_integer_steps_and_title(figures, tmp_path):
    run = tmp_path / "sft"
    run.mkdir()
    (run / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "loss": 1.0 / s}) + "\n" for s in (1, 2, 3)))
    plots.training_curves([run], tmp_path / "c.png")
    fig = figures[0]
    assert fig._suptitle is not None and "loss" in fig._suptitle.get_text()
    (ax,) = fig.axes
    assert "n=3" in ax.get_title()
    ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
    assert ticks and all(float(t).is_integer() for t in ticks), ticks


# ---- r3bench check --jsonl on a file that is not UTF-8 -------------------------------------------------

def test_check_jsonl_not_utf8_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    f = tmp_path / "preds.jsonl"
    f.write_bytes(b'{"pred": "1", "ref": "1"}\n{"pred": "caf\xe9", "ref": "1"}\n')
    assert main(["check", "--jsonl", str(f)]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out.splitlines()[0])["line"] == 1  # the lines before are still answered
    assert err.count("\n") == 1 and str(f) in err and "line 2 is not UTF-8" in err
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(f.read_bytes()), encoding="utf-8"))
    assert main(["check", "--jsonl", "-"]) == 2
    assert "stdin: line 2 is not UTF-8" in capsys.readouterr().err


# ---- the first GGUF conversion says what it is doing ---------------------------------------------------

def test_first_conversion_is_announced_on_stderr(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("R3BENCH_CACHE", str(tmp_path))

    def fake_convert(out):  # stands for the ~70 s conversion
        out.mkdir(parents=True)
        (out / "w.bin").write_bytes(b"x")
        (out / models.MANIFEST).write_text(json.dumps({"files": {"w.bin": {"size": 1, "sha256": ""}}}))
        return out

    monkeypatch.setattr(models, "convert_smollm2", fake_convert)
    d = models.resolve("r3bench/smollm2-135m-instruct")
    out, err = capsys.readouterr()
    assert out == ""
    first, second = err.splitlines()
    assert "converting the SmolLM2 GGUF" in first and "~70 s" in first and str(d) in first
    assert second.startswith("r3bench: converted in")
    models.resolve("r3bench/smollm2-135m-instruct")  # cached: silent
    assert capsys.readouterr().err == ""


# ---- packaging: a vllm extra; another distribution owning `verifiers` or `tasks` ---------------------

def test_vllm_extra_for_gpu_machines_never_in_test():
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(x.startswith("vllm") for x in extras["vllm"])
    assert not any("vllm" in x for x in extras["test"])


def _python(code, cwd, *front, flags=()):
    import os

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, front), str(REPO)])}
    return subprocess.run([sys.executable, *flags, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def test_a_foreign_verifiers_package_is_a_clear_import_error(tmp_path):
    fake = tmp_path / "other"
    (fake / "verifiers").mkdir(parents=True)
    (fake / "verifiers" / "__init__.py").write_text("")  # e.g. PyPI's `verifiers` RL library
    r = _python("import r3bench", tmp_path, fake)
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: r3bench: the top-level package 'verifiers'") and str(fake) in last
    ok = _python("import r3bench, verifiers; print(verifiers.__file__)", tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert Path(ok.stdout.strip()).parent == REPO / "verifiers"


def test_a_tasks_package_in_site_packages_is_an_error_a_project_folder_is_not(tmp_path):
    site = tmp_path / "site-packages"
    (site / "tasks").mkdir(parents=True)
    (site / "tasks" / "__init__.py").write_text("")
    # -S: no site at start-up (its .pth would import r3bench before the stand-in site-packages is set)
    code = f"import site; site.getsitepackages = lambda: [{str(site)!r}]; import r3bench"
    r = _python(code, tmp_path, site, flags=("-S",))
    assert r.returncode != 0 and "top-level package 'tasks'" in r.stderr
    project = tmp_path / "myproject"
    (project / "tasks").mkdir(parents=True)
    (project / "tasks" / "__init__.py").write_text("")  # the user's own tasks/ in the working directory
    r = _python("import r3bench", project)
    assert r.returncode == 0, r.stderr


# ---- data files corrupt in type -----------------------------------------------------------------------

FILES = {"scieval": "scieval/scieval-valid_physics.json",
         "mmlu_high": "mmlu_high/mora_variant/MMLU_High_School_Physics.json",
         "mmlu_college": "mmlu_college/mora_variant/MMLU_College_Physics.json",
         "jeebench": "jeebench/dataset_phy.json", "physicsqa": "physicsqa/PhysicsQA.json"}


@pytest.fixture
def data_copy(shared_data, tmp_path):
    """The five benchmark files, copied (the shared data directory is never modified)."""
    root = tmp_path / "data"
    for rel in FILES.values():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shared_data / rel, root / rel)
    return root


def _edit(root, bench, i, **fields):
    f = root / FILES[bench]
    rows = json.loads(f.read_text(encoding="utf-8"))
    rows[i].update(fields)
    f.write_text(json.dumps(rows), encoding="utf-8")


@pytest.mark.parametrize("bench, i, fields, what", [
    ("jeebench", 3, {"question": None}, "'question' is null"),
    ("jeebench", 0, {"gold": ["A"]}, "'gold' is a list"),
    ("scieval", 2, {"answer": []}, "empty answer list"),
    ("scieval", 2, {"question": ["q"]}, "'question' is a list"),
    ("physicsqa", 7, {"answer": ["a", "b"]}, "'answer' is a list"),
    ("physicsqa", 7, {"question": None}, "'question' is null"),
    ("physicsqa", 7, {"solution": {"x": 1}}, "'solution' is a dict"),
    ("mmlu_high", 5, {"answer": "E"}, "'E' is not one of A-D"),
    ("mmlu_college", 1, {"question": None}, "'question' is null"),
])
def test_type_corrupt_records_raise_data_error_naming_file_and_record(data_copy, bench, i, fields, what):
    _edit(data_copy, bench, i, **fields)
    with pytest.raises(data.DataError) as e:
        data.load(bench, data_copy)
    msg = str(e.value)
    assert Path(FILES[bench]).name in msg and f"record {i}" in msg and what in msg, msg


def test_a_directory_where_a_file_belongs(data_copy, tmp_path):
    f = data_copy / FILES["jeebench"]
    f.unlink()
    f.mkdir()
    with pytest.raises(data.DataError, match="dataset_phy.json"):
        data.load("jeebench", data_copy)
    (data_copy / "mmlu_high" / "x.csv").mkdir()
    with pytest.raises(data.DataError, match="x.csv"):
        data.load("mmlu_high", data_copy, file="mmlu_high/x.csv")


def test_data_list_reports_the_other_benchmarks_anyway(data_copy, capsys):
    _edit(data_copy, "jeebench", 3, question=None)
    assert main(["data", "list", "--data-dir", str(data_copy)]) == 1
    out, err = capsys.readouterr()
    assert "| physicsqa | 370 | 370 |" in out and "| scieval | 164 | 164 |" in out
    assert "| jeebench | error | 107 | - |" in out
    assert "dataset_phy.json" in err and "record 3" in err


# ---- no argparse abbreviations --------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [["data", "list", "--data-d", "x"],
                                  ["leaderboard", "{tmp}/p", "--out", "{tmp}/o", "--ref", "none"],
                                  ["check", "1", "1", "--ki", "numeric"]])
def test_abbreviated_flags_are_refused(argv, capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        main([a.format(tmp=tmp_path) for a in argv])
    assert e.value.code == 2 and "unrecognized arguments" in capsys.readouterr().err
