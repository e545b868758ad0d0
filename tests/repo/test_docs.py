"""The docs say what is true when tried (issue 37, item 6).

Code blocks in README.md and docs/*.md that are meant to run carry the marker
`<!-- docs-test: run -->` on the line before their fence; this test runs each one (python blocks
with this interpreter, bash blocks with bash from the repository root, `r3bench` being this
checkout's CLI), so a marked snippet cannot go stale. Installs, training and long evaluations are
not marked. Statements found false when tried are checked to stay gone."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MARKER = "<!-- docs-test: run -->"
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def marked_blocks() -> list[tuple[str, str, str]]:
    """(where, language, code) of every marked block."""
    out = []
    for f in DOCS:
        lines = f.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if line.strip() != MARKER:
                continue
            fence = lines[i + 1] if i + 1 < len(lines) else ""
            assert fence.startswith("```"), f"{f.name}:{i + 1}: the marker is not followed by a code fence"
            lang = fence[3:].strip()
            end = next(j for j in range(i + 2, len(lines)) if lines[j].startswith("```"))
            out.append((f"{f.relative_to(REPO)}:{i + 2}", lang, "\n".join(lines[i + 2:end]) + "\n"))
    return out


BLOCKS = marked_blocks()


def test_readme_and_docs_have_marked_blocks():
    where = {w.split(":")[0] for w, _, _ in BLOCKS}
    assert "README.md" in where and len(BLOCKS) >= 4, where


def test_fences_are_balanced():
    """An unclosed fence turns the prose after it into code (the README's install block was one)."""
    for f in DOCS:
        opened = None
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if line.startswith("```"):
                if opened is None:
                    opened = i
                else:
                    assert line.strip() == "```", f"{f.name}:{i}: a fence with an info string closes the block of line {opened}"
                    opened = None
        assert opened is None, f"{f.name}:{opened}: fence never closed"


@pytest.fixture(scope="module")
def shim(tmp_path_factory) -> dict:
    """An environment whose `r3bench` and `python` are this checkout's, run from the repository root."""
    bin_dir = tmp_path_factory.mktemp("bin")
    for name, body in (("r3bench", f'exec "{sys.executable}" -m r3bench.apps.cli "$@"\n'),
                       ("python", f'exec "{sys.executable}" "$@"\n')):
        p = bin_dir / name
        p.write_text("#!/bin/sh\n" + body)
        p.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    return env


@pytest.mark.parametrize("where,lang,code", BLOCKS, ids=[w for w, _, _ in BLOCKS])
def test_marked_block_runs(where, lang, code, shim):
    if lang == "python":
        cmd = [sys.executable, "-c", code]
    elif lang in ("bash", "sh", "shell"):
        cmd = ["bash", "-e", "-o", "pipefail", "-c", code]
    else:
        pytest.fail(f"{where}: marked block of language {lang!r}: mark python or bash blocks only")
    r = subprocess.run(cmd, cwd=REPO, env=shim, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{where} exited {r.returncode}:\n{r.stdout[-1500:]}\n{r.stderr[-1500:]}"


@pytest.mark.parametrize("path,false", [
    ("docs/overview.md", "The RL conditions have not run yet"),
    ("docs/results.md", "holds the header only"),
    ("docs/training.md", "Each run then scores its adapter"),
    ("docs/training.md", "from r3bench import models"),
    ("docs/training.md", "have not run yet"),
    ("docs/training.md", "budget leaves the others waiting"),  # one rank's spent budget now stops every rank
    ("docs/training.md", "pushed to vLLM whenever the\n  optimizer changed them"),  # fused AdamW: no version bump
    ("README.md", "~70 s"),
    ("README.md", "to three minutes (stepfix)"),
])
def test_statements_found_false_stay_gone(path, false):
    assert false not in (REPO / path).read_text(encoding="utf-8")


def test_paper_reference_is_not_header_only():
    rows = (REPO / "results" / "paper_reference.csv").read_text().splitlines()
    assert len(rows) > 50 and re.match(r"task,model,method", rows[0])


def _commands() -> list[tuple[str, str]]:
    """(where, command) of every complete `lm_eval --...` / `r3bench eval --...` command in a bash
    block or an inline code span of README.md and docs/ (continuation lines joined)."""
    out = []
    for f in DOCS:
        text = f.read_text(encoding="utf-8")
        for m in re.finditer(r"```bash\n(.*?)```", text, re.S):
            for cmd in m.group(1).replace("\\\n", " ").splitlines():
                cmd = cmd.split(" #")[0].strip()
                if re.match(r"(lm_eval|r3bench eval) --", cmd) and "--tasks" in cmd:
                    out.append((f.name, cmd))
        for m in re.finditer(r"`((?:lm_eval|r3bench eval) --[^`]*)`", text):
            if "--tasks" in m.group(1):
                out.append((f.name, m.group(1)))
    return out


def test_documented_scoring_commands_keep_what_they_run():
    """Item 2: a scoring command that a user copies saves results and samples (lm_eval saves nothing
    without --output_path, no samples without --log_samples)."""
    from r3bench.apps import cli

    cmds = _commands()
    assert len(cmds) >= 6
    bad = [f"{w}: {c}" for w, c in cmds if "--output_path" not in c or "--log_samples" not in c]
    assert not bad, "\n".join(bad)
    import io
    import contextlib

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        cli.main(["eval", "--help"])
    assert "--output_path" in buf.getvalue() and "--log_samples" in buf.getvalue()


# ---- the README as a front door: its budget, its commands and its numbers stay true ------------------

README = (REPO / "README.md").read_text(encoding="utf-8")


def _steps(cmd: str) -> list[str]:
    """A shell command line as the steps it runs: split at `&&`, `;` and newlines, pip's quiet flag
    dropped (it changes what is printed, not what is installed)."""
    parts = re.split(r"&&|;|\n", cmd)
    return [" ".join(w for w in p.split() if w != "-q") for p in parts if p.strip() and not p.strip().startswith("#")]


def test_readme_is_a_front_door_under_150_lines():
    lines = README.splitlines()
    assert len(lines) < 150, len(lines)
    # what it is and how to set it up come first; the uses follow
    heads = [x for x in lines if x.startswith("## ")]
    assert heads[:4] == ["## Set up", "## Score your own model", "## Train with the paper's method",
                         "## Regenerate the leaderboard"], heads


def test_readme_where_things_are_names_stepverify_and_the_viewer():
    where = README[README.index("## Where things are"):]
    assert "(docs/stepverify.md)" in where and "`r3bench view`" in where


@pytest.mark.parametrize("path", ["README.md", "docs/results.md", "docs/CONTRIBUTING.md"])
def test_user_docs_cite_no_issue_numbers(path):
    text = (REPO / path).read_text(encoding="utf-8")
    assert not re.findall(r"\bissues? \d+", text, re.I), re.findall(r".{30}\bissues? \d+.{10}", text, re.I)


def test_readme_setup_commands_run_what_ci_runs():
    """The README's two set-up commands come first; command 2 is, step for step, what .ci/run runs
    after making its venv, and command 1 is the same install with the train extra, then the demo."""
    first = README.index("```bash\n")
    block = README[first:README.index("```\n", first + 8)]
    cmds = [x for x in block.splitlines()[1:] if x.startswith("python3 -m venv")]
    assert len(cmds) == 2 and README.index("## Set up") < first < README.index("## Score your own model")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    ci_steps = _steps(ci[ci.index("python3 -m venv"):])
    assert _steps(cmds[1]) == ci_steps, (_steps(cmds[1]), ci_steps)
    demo = _steps(cmds[0])
    assert demo[:-2] == ci_steps[:-2] and demo[-2:] == ["pip install -e '.[train]'", "r3bench demo"]


def test_readme_scoring_limit_and_costs_are_what_the_code_prints():
    """One scoring limit: the README's lm_eval command, the trainers' default and the demo's printed
    command; the costs it states are the ones the code computes (the trainers' CPU cost note, the sum
    of the demo's stage figures)."""
    from r3bench.apps import demo
    from trainers.core.config import BaseConfig, eval_cost_note

    limits = set(re.findall(r"--limit (\d+)", README))
    assert limits == {str(BaseConfig.eval_limit)} == {str(demo.SCORE_LIMIT)}, limits
    assert f"scores the adapter on {BaseConfig.eval_limit} problems" in README.replace("\n", " ")
    minutes = re.search(r"~(\d+) min", eval_cost_note(BaseConfig())).group(1)
    said = re.search(r"`--limit \d+` \(\d+ problems, up to (\d+) new tokens each\) takes about (\d+) minutes",
                     README.replace("\n", " "))
    assert said and said.groups() == (str(BaseConfig.eval_max_gen_toks), minutes), (said and said.groups(), minutes)
    demo_min = re.search(r"It takes about (\d+) minutes on a quiet 2-core CPU", README.replace("\n", " "))
    assert demo_min and int(demo_min.group(1)) == round(sum(m for *_, m in demo.STAGES))


def test_readme_reproduce_table_is_the_estimate_of_the_command_it_shows():
    from r3bench.apps import reproduce

    cmd = re.search(r"^r3bench reproduce (\S+) --dry-run --methods (\S+)$", README, re.M)
    assert cmd, "the README shows the dry run with the methods its table counts"
    rows = re.findall(r"^\| `--model (hf|vllm)`[^|]*\| (\d+) \| ([\d.]+) \| ([\d,]+) \| \$(\d+) \|$", README, re.M)
    assert [r[0] for r in rows] == ["hf", "vllm"], rows
    for backend, cells, gpu_h, judge_calls, usd in rows:
        plan = reproduce.load_plan(cmd.group(1))
        reproduce.select_methods(plan, cmd.group(2))
        plan.setdefault("eval", {})["backend"] = backend
        est = reproduce.estimate(plan, reproduce.cells(plan, Path("o")), Path("o"))
        assert int(cells) == len(est)
        assert gpu_h == f"{sum(r['gpu_h'] for r in est):.1f}"
        assert judge_calls == f"{sum(r['judge_calls'] for r in est):,}"
        assert usd == f"{sum(r['judge_usd'] for r in est):.0f}"
    full = reproduce.load_plan(cmd.group(1))
    n_all = re.search(r"Without `--methods` the plan adds [^:]*: (\d+) cells", README.replace("\n", " "))
    assert n_all and int(n_all.group(1)) == len(reproduce.cells(full, Path("o")))


def test_readme_results_are_in_the_files_they_link():
    """Every number of the README's results table (intervals, counts, scores) is in the file its row
    links: the table is a summary, never a second source."""
    table = README[README.index("## Results"):README.index("## Where things are")]
    rows = [x for x in table.splitlines() if x.startswith("| ") and "](" in x]
    assert len(rows) >= 4
    for row in rows:
        answer, details = row.split(" | ")[1:3]
        target = (REPO / re.search(r"\]\(([^)#]+)", details).group(1)).resolve()
        assert target.is_file(), target
        text = target.read_text(encoding="utf-8")
        numbers = re.findall(r"[\d.]+ \[[\d.]+, [\d.]+\]|[+-][\d.]+ \[[+-][\d.]+, [+-][\d.]+\]|[\d,]+/[\d,]+", answer)
        assert numbers, row
        missing = [n for n in numbers if n not in text]
        assert not missing, (target.name, missing)
