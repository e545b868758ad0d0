"""r3bench errors: first-error classes over real lm-eval samples (tiny model) and hand-made samples
with errors injected at known steps (r3bench.procgen.inject)."""
from __future__ import annotations

import json

import pytest


@pytest.fixture(scope="module")
def tiny_samples(tmp_path_factory):
    pytest.importorskip("lm_eval")
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    from r3bench.core import models
    from r3bench.eval.hook import tasks_dir

    root = tmp_path_factory.mktemp("err")
    tiny = str(models.build_tiny(root / "tiny-model"))
    tracker = EvaluationTracker(output_path=str(root / "lm_eval"))
    r = simple_evaluate(model="hf", model_args=f"pretrained={tiny}", batch_size=3, device="cpu",
                        tasks=["r3_procgen", "r3_demo"], limit=3, apply_chat_template=True,
                        task_manager=TaskManager(include_path=str(tasks_dir()), include_defaults=False),
                        gen_kwargs={"max_gen_toks": 8}, bootstrap_iters=0, log_samples=True, evaluation_tracker=tracker)
    tracker.save_results_aggregated(results=r, samples=r["samples"])
    for name, samples in r["samples"].items():
        tracker.save_results_samples(task_name=name, samples=samples)
    return root


@pytest.mark.slow
def test_real_lmeval_samples(tiny_samples, tmp_path, capsys):
    from r3bench.results import errors
    from r3bench.apps.cli import main

    problems = []
    verdicts = errors.analyse([tiny_samples / "lm_eval"], problems=problems)
    # r3_procgen is structured and its docs carry a seven-tag reference; r3_demo is CoT: skipped, listed
    assert {v.task for v in verdicts} == {"r3_procgen"} and len(verdicts) == 3
    assert all(v.model == "tiny-model" and v.method == "cot" for v in verdicts)
    assert "r3_demo: 3 samples skipped (not a structured seven-tag task)" in problems
    # 8 random tokens hold no seven-tag steps: a format failure at step 1, booked apart (it was MC before)
    assert {(v.outcome, v.first_error) for v in verdicts} == {("FORMAT", 1)}
    assert main(["errors", str(tiny_samples / "lm_eval"), "--out", str(tmp_path / "o")]) == 0
    md = (tmp_path / "o" / "errors.md").read_text()
    assert "| tiny-model | CoT | 3 | 0 | 0 (-) | 0 (-) | 0 (-) | 0 (-) | 3 (100.0%) | 0 | 0 |" in md
    assert (tmp_path / "o" / "errors.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len((tmp_path / "o" / "errors.jsonl").read_text().splitlines()) == 3


def _sample(i, p, resp, solution=None):
    return {"doc_id": i, "doc": {"question": p.question, "solution": p.solution if solution is None else solution},
            "target": p.answer, "resps": [[resp]], "filtered_resps": [resp]}


def test_hand_made_samples_with_known_first_errors(tmp_path):
    """Responses with errors injected at known steps: the table counts exactly those classes."""
    from r3bench import procgen
    from r3bench.results import errors

    probs = procgen.generate(n=40, seed=3)
    want, samples = {"MC": 0, "CM": 0, "CE": 0, "none": 0, "FORMAT": 0, "no reference": 0, "no verdict": 0}, []
    for i, p in enumerate(probs[:12]):
        cls = ("MC", "CM", "CE", "none")[i % 4]
        text = p.solution if cls == "none" else procgen.inject_problem(p, cls)[0]
        samples.append(_sample(i, p, text))
        want[cls] += 1
    samples.append(_sample(12, probs[12], probs[12].solution, solution=""))  # a benchmark doc: no reference,
    want["none"] += 1  # the gold answer (target) is there: the reference-free mode verifies it
    no_gold = _sample(14, probs[14], probs[14].solution, solution="")
    no_gold.pop("target")
    samples.append(no_gold)  # neither a reference nor a gold answer: counted, never guessed
    want["no reference"] += 1
    samples.append(_sample(15, probs[15], "<problem_analysis>x</problem_analysis> \\boxed{1}"))
    want["FORMAT"] += 1  # a broken format is its own outcome, not MC
    samples.append({"doc_id": 13, "doc": {"question": "q", "solution": probs[13].solution}, "resps": []})
    want["no verdict"] += 1
    ts = "2026-01-01T00-00-00.000000"
    d = tmp_path / "run"
    d.mkdir()
    lines = [json.dumps(s) for s in samples] + ["[1, 2]"]  # a junk line is listed, not a crash
    (d / f"samples_r3_procgen_{ts}.jsonl").write_text("\n".join(lines) + "\n")
    (d / f"results_{ts}.json").write_text(json.dumps({  # parsing: model, method and task kind come from here
        "results": {"r3_procgen": {"acc,none": 0.0}},
        "configs": {"r3_procgen": {"doc_to_text": "def prompt_structured(doc): ..."}},
        "config": {"model": "r3-bestofn", "model_args": "inner=hf,pretrained=org/Handmade-1B"}}))
    problems = []
    md, csv_path, png, verdicts = errors.write([tmp_path], tmp_path / "o", problems=problems)
    got = {k: sum(v.outcome == k for v in verdicts) for k in want}
    assert got == want
    assert any(":17: not a JSON object" in p for p in problems)
    # injected first-error steps are the ones the verifier reports (MC at 1 or 4, CM at 2-3, CE at 5-7)
    steps = {v.outcome: set() for v in verdicts}
    for v in verdicts:
        steps[v.outcome].add(v.first_error)
    assert steps["MC"] <= {1, 4} and steps["CM"] <= {2, 3} and steps["CE"] <= {5, 6, 7} and steps["none"] == {0}
    (row,) = errors.summarize(verdicts)
    assert (row["model"], row["method"], row["verified"]) == ("Handmade-1B", "bestofn", 13)
    assert row["MC_share"] == pytest.approx(3 / 13) and row["CE_of_errors"] == pytest.approx(1 / 3)
    assert ("| Handmade-1B | Best-of-N | 16 | 13 | 3 (23.1%) | 3 (23.1%) | 3 (23.1%) | 4 (30.8%) | 1 (6.2%) | 1 | 1 |"
            in md.read_text())
    header = csv_path.read_text().splitlines()[0]
    assert header.startswith("model,method,samples,verified,MC,CM,CE,none,FORMAT,no verdict,no reference,MC_share")
    assert png is not None and png.stat().st_size > 2000


def test_no_results_beside_and_missing_paths(tmp_path):
    from r3bench.results import errors

    (tmp_path / "samples_r3_procgen_x.jsonl").write_text("")
    problems = []
    assert errors.analyse([tmp_path / "samples_r3_procgen_x.jsonl", tmp_path / "nope"], problems=problems) == []
    assert any("model and method unknown" in p for p in problems) and any("not found" in p for p in problems)
    assert errors.plot([], tmp_path / "x.png") is None


def test_samples_with_a_doc_or_task_config_that_is_not_a_mapping(tmp_path):
    from r3bench.results import errors

    assert errors.is_structured("r3_procgen", ["not", "a", "config"]) is True
    assert errors.is_structured("r3_scieval", "doc_to_text: x") is False
    assert errors.verify_sample({"doc": "a string", "resps": [["x"]]})[0] == "no verdict"
    d = {"results": {"r3_procgen": {"acc,none": 0.0}}, "config": {"model": "hf", "model_args": "pretrained=m"},
         "configs": {"r3_procgen": "not a mapping"}}
    (tmp_path / "results_2026-01-01T00-00-00.json").write_text(json.dumps(d))
    lines = [{"doc_id": 0, "doc": ["a", "list"], "resps": [["x"]], "filtered_resps": ["x"]},
             {"doc_id": 1, "doc": None, "resps": [["x"]], "filtered_resps": ["x"]}]
    (tmp_path / "samples_r3_procgen_2026-01-01T00-00-00.jsonl").write_text("\n".join(map(json.dumps, lines)) + "\n")
    problems = []
    got = errors.analyse([tmp_path], problems=problems)
    assert [v.outcome for v in got] == ["no verdict", "no reference"]
    assert any("doc is a list" in p for p in problems)
