"""`r3bench view`: the page's items, model text kept inert, and the page in a real headless Chromium
(Debian's `chromium`; skipped with the reason where it is absent, CI installs it)."""
import gzip
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from r3bench.apps import view
from r3bench.eval import stepverify_data

REPO = Path(__file__).resolve().parents[2]
ATTACK = "</script><script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"


def _samples(tmp_path: Path) -> Path:
    """An lm-eval output folder with one r3_stepverify samples file and one checker-task file, in
    lm-eval's samples format (doc, target, resps, filtered_resps, the task's per-sample metrics)."""
    out = tmp_path / "out" / "model"
    out.mkdir(parents=True)
    items = stepverify_data.items("test", "procgen")
    err = next(it for it in items if it["first_error"] == 5)
    cor = next(it for it in items if it["first_error"] == 0)
    sv = [{"doc_id": 0, "doc": err, "target": "5", "filtered_resps": ["First wrong step: 5 (CE)"]},
          {"doc_id": 1, "doc": cor, "target": "0", "filtered_resps": ["First wrong step: 3 " + ATTACK]}]
    (out / "samples_r3_stepverify_2026-12-07T10-00-00.jsonl").write_text("".join(json.dumps(s) + "\n" for s in sv))
    doc = {"id": "p1", "question": "A car moves at 10 m/s for 5 s. How far does it go?", "answer": "50 m",
           "solution": cor["reference"]}
    wrong_calc = err["solution"]  # a seven-tag solution with an error at step 5
    ck = [{"doc_id": 0, "doc": {**doc, "question": err["question"], "solution": err["reference"]}, "target": "x",
           "filtered_resps": [wrong_calc], "acc": 0.0, "answer": "12 m", "reason": "numeric mismatch"},
          {"doc_id": 1, "doc": doc, "target": "50 m", "filtered_resps": [ATTACK], "acc": 1.0, "answer": "50 m",
           "reason": "numeric match"}]
    (out / "samples_r3_procgen_2026-12-07T10-00-00.jsonl").write_text("".join(json.dumps(s) + "\n" for s in ck))
    return tmp_path / "out"


def test_items_from_an_lm_eval_folder(tmp_path):
    items = view.to_items(_samples(tmp_path))
    by_task = {}
    for it in items:
        by_task.setdefault(it["task"], []).append(it)
    assert sorted(by_task) == ["r3_procgen", "r3_stepverify"]
    sv = by_task["r3_stepverify"]
    assert [it["right"] for it in sv] == [True, False] and sv[0]["first_error"] == 5 and sv[0]["answer"] == "5 CE"
    assert len(sv[0]["steps"]) == 7 and sv[0]["steps"][4]["tag"] == "substitution"
    ck = by_task["r3_procgen"]
    assert ck[0]["first_error"] == 5 and ck[0]["error_class"] == "CE" and ck[0]["right"] is False  # verified now
    assert ck[1]["first_error"] is None and ck[1]["steps"][0]["k"] == 0  # no seven tags: raw text, unverified


def test_model_text_stays_inert_in_the_page(tmp_path):
    html = view.page(view.to_items(_samples(tmp_path)))
    assert "</script><script>document.title" not in html and "<img src=x" not in html
    data = re.search(r'<script id="data" type="application/json">(.*?)</script>', html, re.S).group(1)
    items = json.loads(data)["items"]
    texts = [it.get("reply", "") for it in items] + [s["text"] for it in items for s in it["steps"]]
    assert sum(ATTACK in t for t in texts) == 2  # kept, as data: the reply and the raw response


def test_cli_refuses_a_missing_path(tmp_path):
    p = subprocess.run([sys.executable, "-m", "r3bench.apps.cli", "view", str(tmp_path / "nope"), "--out",
                        str(tmp_path / "v.html")], capture_output=True, text=True, cwd=REPO)
    assert p.returncode == 2 and "no such file" in p.stderr


def _chromium():
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("chromium is not installed (Debian package `chromium`; .ci/run installs it)")
    try:  # a snap's stub `chromium-browser` is on PATH and only says to install the snap (exit non-zero)
        p = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        pytest.skip(f"{exe} --version did not run: {e}")
    if p.returncode != 0:
        pytest.skip(f"{exe} --version exits {p.returncode}, not a working browser: "
                    f"{(p.stderr or p.stdout).strip()[:200]}")
    return exe


def _dom(exe: str, page: Path, fragment: str = "") -> str:
    p = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri() + fragment],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


@pytest.mark.slow
def test_page_in_headless_chromium(tmp_path):
    exe = _chromium()
    page = tmp_path / "view.html"
    p = subprocess.run([sys.executable, "-m", "r3bench.apps.cli", "view", str(_samples(tmp_path)), "--out", str(page)],
                       capture_output=True, text=True, cwd=REPO, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    dom = _dom(exe, page)
    cards = re.findall(r'<article class="card"[^>]*>', dom)
    assert len(cards) == 4 and "4 of 4 shown" in dom
    assert dom.count('class="step wrong"') == 2  # the stepverify item's labelled step 5, the verified one's step 5
    assert re.search(r'<div class="verdict">CE: [^<]+</div>', dom)
    assert "<title>r3bench view" in dom and "pwned" not in re.search(r"<title>.*?</title>", dom).group(0)
    # a filter from the URL: only the wrong ones of r3_stepverify
    dom = _dom(exe, page, "#right=wrong&task=r3_stepverify")
    shown = [c for c in re.findall(r'<article class="card"[^>]*>', dom) if "hidden" not in c]
    assert len(shown) == 1 and 'data-task="r3_stepverify"' in shown[0] and "1 of 4 shown" in dom


@pytest.mark.slow
def test_largest_committed_samples_file_loads(tmp_path):
    """The learning study's largest samples file: every solution becomes a card in Chromium."""
    exe = _chromium()
    big = max((REPO / "results" / "learning" / "samples").glob("*.jsonl"), key=lambda f: f.stat().st_size)
    n = sum(1 for line in big.read_text().splitlines() if line.strip())
    page = view.write([big], tmp_path / "big.html")
    dom = _dom(exe, page)
    assert len(re.findall(r'<article class="card"', dom)) == n and f"{n} of {n} shown" in dom


def _it(i, right, task="t"):
    return {"task": task, "id": f"p{i}", "right": right, "steps": [], "question": ""}


def test_compare_pairs_problems_and_counts_gained_and_lost():
    a = [_it(0, False), _it(1, True), _it(2, False), _it(3, True), _it(9, True)]
    b = [_it(0, True), _it(1, False), _it(2, True), _it(3, True), _it(4, None)]
    pairs, s = view.compare(a, b)
    assert [p["change"] for p in pairs] == ["gained", "lost", "gained", "both right"]
    assert (s["paired"], s["gained"], s["lost"], s["only_a"], s["only_b"]) == (4, 2, 1, 1, 1)
    assert s["mcnemar_p"] == pytest.approx(1.0)  # 2 vs 1 discordant: exact two-sided p = 1
    assert pairs[0]["other"]["right"] is False  # A's item rides along
    # runs' samples files name their items' task after the run: then problems pair by id
    pairs, s = view.compare([_it(0, False, "base")], [_it(0, True, "sft")])
    assert s["gained"] == 1 and view.compare([_it(0, False)], [_it(1, True)])[1]["mcnemar_p"] is None


def test_compare_needs_two_runs(tmp_path):
    p = subprocess.run([sys.executable, "-m", "r3bench.apps.cli", "view", str(REPO / "README.md"), "--compare",
                        "--out", str(tmp_path / "v.html")], capture_output=True, text=True, cwd=REPO)
    assert p.returncode == 2 and "two runs" in p.stderr


@pytest.mark.slow
def test_two_runs_side_by_side_in_chromium(tmp_path):
    exe = _chromium()
    runs = REPO / "results" / "learning" / "samples"
    page = view.write([runs / "base_seventag__s0__t1.jsonl", runs / "sft__s0__t1.jsonl"], tmp_path / "cmp.html",
                      compare_runs=True)
    _, s = view.compare(view.to_items(runs / "base_seventag__s0__t1.jsonl"), view.to_items(runs / "sft__s0__t1.jsonl"))
    dom = _dom(exe, page, "#change=gained")
    assert len(re.findall(r'class="pair"', dom)) == s["paired"] > 0
    assert f"B gained {s['gained']}, lost {s['lost']}" in dom and f"{s['gained']} of {s['paired']} shown" in dom


def _view_cli(tmp_path, *paths):
    return subprocess.run([sys.executable, "-m", "r3bench.apps.cli", "view", *map(str, paths), "--out",
                           str(tmp_path / "v.html")], capture_output=True, text=True, cwd=REPO, timeout=300)


def test_cli_bad_input_is_one_line_naming_file_and_line(tmp_path):
    """A truncated samples file or a non-JSON file: exit 2, file:line, no traceback."""
    good = next(_samples(tmp_path).rglob("samples_r3_procgen_*.jsonl"))
    lines = good.read_text().splitlines()
    cut = tmp_path / "samples_r3_demo_2026.jsonl"
    cut.write_text(lines[0] + "\n" + lines[1][: len(lines[1]) // 2])  # a run killed mid-write
    p = _view_cli(tmp_path, cut)
    assert p.returncode == 2 and f"{cut}:2: not a JSON line" in p.stderr and "Traceback" not in p.stderr, p.stderr
    p = _view_cli(tmp_path, REPO / "README.md")
    assert p.returncode == 2 and "README.md:1: not a JSON line" in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_cli_refuses_a_folder_with_no_samples_files(tmp_path):
    (tmp_path / "empty").mkdir()
    p = _view_cli(tmp_path, tmp_path / "empty")
    assert p.returncode == 2 and "no samples files" in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_gzip_samples_files_open(tmp_path):
    gz = REPO / "results" / "learning" / "sft_start" / "eval_samples.jsonl.gz"
    n = sum(1 for line in gzip.open(gz, "rt") if line.strip())
    items = view.to_items(gz, check_steps=False)
    assert len(items) == n and items[0]["task"] == "eval_samples" and items[0]["steps"][0]["k"] == 1
    plain = next(_samples(tmp_path).rglob("samples_r3_stepverify_*.jsonl"))
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / (plain.name + ".gz")).write_bytes(gzip.compress(plain.read_bytes()))
    assert view.to_items(folder, check_steps=False) == view.to_items(plain, check_steps=False)


def test_a_lone_surrogate_in_model_text_is_written(tmp_path):
    item = view._item("t", "1", "q", "a reply with a lone surrogate \ud800", None, "", "", "x", "y", False)
    out = tmp_path / "v.html"
    out.write_text(view.page([item]), encoding="utf-8")
    assert "\\ud800" in out.read_text(encoding="utf-8")


def test_chromium_probe_skips_a_stub_browser(tmp_path, monkeypatch):
    stub = tmp_path / "chromium"
    stub.write_text("#!/bin/sh\necho 'Command requires the chromium snap to be installed.' >&2\nexit 1\n")
    stub.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(pytest.skip.Exception, match="--version exits 1.*snap"):
        _chromium()


def _stepfix_records(tmp_path: Path) -> Path:
    """A stepfix run's samples file as the trainer writes it (trainers/stepfix_trainer.py): one problem with
    two revisions (revisions: 2), one skipped first attempt (r1 above tau), model text holding an attack."""
    sol = stepverify_data.items("test", "procgen")
    err = next(it for it in sol if it["first_error"] == 3)
    fix = next(it for it in sol if it["first_error"] == 0)
    recs = [{"step": 1, "id": "p1", "question": err["question"], "gold": "12 m", "y1": err["solution"], "e1": 3,
             "n1": 7, "class1": "CM", "why1": "wrong governing equation", "r1": 0.375, "skipped": False,
             "feedback": "Conceptual error at step 3: check the law. " + ATTACK,
             "revisions": [{"r1": 0.375, "revision": 0, "y2": fix["solution"], "e2": 0, "n2": 7, "class2": None,
                            "why2": "", "r2": 1.0},
                           {"r1": 0.375, "revision": 1, "y2": err["solution"], "e2": 3, "n2": 7, "class2": "CM",
                            "why2": "same law again", "r2": 0.375}],
             "y2": fix["solution"], "e2": 0, "r2": 1.0},
            {"step": 1, "id": "p2", "question": fix["question"], "gold": "5 s", "y1": fix["solution"], "e1": 0,
             "n1": 7, "class1": None, "why1": "", "r1": 1.0, "skipped": True, "skip_reason": "r1 = 1.000 > tau = 0.9"}]
    f = tmp_path / "run" / "stepfix_samples.jsonl"
    f.parent.mkdir(parents=True)
    f.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return f.parent


def test_stepfix_training_samples_become_items(tmp_path):
    a, b = view.to_items(_stepfix_records(tmp_path))
    assert (a["first_error"], a["error_class"], a["right"], a["gold"]) == (3, "CM", False, "12 m")
    assert [(r["first_error"], r["right"], r["r"]) for r in a["revisions"]] == [(0, True, 1.0), (3, False, 0.375)]
    assert a["feedback"].startswith("Conceptual error") and "r2 1.000, 0.375" in a["reason"]
    assert (b["first_error"], b["right"], b["revisions"]) == (0, True, [])
    assert "no loss: r1 = 1.000 > tau" in b["reason"]


@pytest.mark.slow
def test_stepfix_run_in_chromium(tmp_path):
    """A stepfix run's folder: the first attempt's wrong step marked, the feedback, both revisions (one
    right, one wrong at step 3), and the feedback's markup left inert."""
    exe = _chromium()
    page = view.write([_stepfix_records(tmp_path)], tmp_path / "run.html")
    dom = _dom(exe, page)
    assert "2 of 2 shown" in dom and "pwned" not in re.search(r"<title>.*?</title>", dom).group(0)
    assert len(re.findall(r'class="solution revision"', dom)) == 2
    assert re.search(r'<div class="feedback">feedback given: Conceptual error', dom)
    assert dom.count('class="step wrong"') == 2  # y1's step 3 and the second revision's step 3
    assert "revision 1 (r2 1.000): right" in dom and "revision 2 (r2 0.375): wrong" in dom
    dom = _dom(exe, page, "#cls=CM")
    shown = [c for c in re.findall(r'<article class="card"[^>]*>', dom) if "hidden" not in c]
    assert len(shown) == 1 and "1 of 2 shown" in dom
