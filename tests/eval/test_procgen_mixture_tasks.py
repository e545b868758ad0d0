"""The lm-eval tasks of the mixture's evaluation sets (r3_procgen_learning / r3_procgen_transfer) and the
flexible metrics in the generated YAMLs (issue 35)."""
import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TASKS = REPO / "tasks" / "r3"


def _generator():
    spec = importlib.util.spec_from_file_location("r3_task_generator", TASKS / "_generate.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return gen


def test_generator_lists_flexible_beside_strict_and_version_at_least_1_2():
    gen = _generator()
    for t in ("r3_mmlu_college_structured", "r3_jeebench", "r3_procgen_learning", "r3_procgen_transfer"):
        assert gen.version_of(t) >= 1.2, t  # 1.2 brought flexible-extract; later bumps: tests/eval/test_task_versions.py
    names = lambda c: [m["metric"] for m in c["metric_list"]]  # noqa: E731
    mm = names(gen.config("r3_mmlu_college_structured", "mmlu_college", "structured"))
    assert mm[:2] == ["acc", "acc_flexible"]
    jee = names(gen.config("r3_jeebench", "jeebench", "cot"))
    assert {"acc_flexible", "acc_flexible_mcq", "acc_flexible_mcq_multi"} <= set(jee)
    assert "acc_flexible" not in names(gen.config("r3_procgen", "procgen", "structured"))  # numeric only
    assert "acc_flexible" not in names(gen.config("r3_scieval_sc", "scieval", "sc"))
    for s in ("learning", "transfer"):
        c = gen.config(f"r3_procgen_{s}", "procgen_mixture", "structured", {"procgen_set": s},
                       f"{gen.TIER_GLUE}.dataset_mixture")
        assert {"acc", "acc_flexible", "acc_mcq", "acc_mcq_multi", "acc_integer", "acc_numeric",
                "format_compliance"} <= set(names(c))
    assert (TASKS / "r3_procgen_learning.yaml").is_file() and (TASKS / "r3_procgen_transfer.yaml").is_file()


@pytest.mark.parametrize("name", ["r3_procgen_learning", "r3_procgen_transfer"])
def test_mixture_tasks_load_and_score_their_references_1(name):
    from lm_eval.tasks import TaskManager

    task = TaskManager(include_path=str(TASKS), include_defaults=False).load([name])["tasks"][name]
    docs = list(task.test_docs())
    assert len(docs) == 400 and {d["answer_kind"] for d in docs} == {"mcq", "mcq_multi", "integer", "numeric"}
    metrics = {m["metric"] for m in task.config.metric_list}
    for doc in docs[:60]:
        prompt = task.doc_to_text(doc)
        assert "<final_answer>" in prompt
        r = task.process_results(doc, [doc["solution"]])
        assert set(r) <= metrics, set(r) - metrics  # lm-eval aggregates every key it is handed
        assert r["acc"] == 1.0 and r["acc_flexible"] == 1.0 and r["format_compliance"] == 1.0, doc["id"]
        assert r[f"acc_{doc['answer_kind']}"] == (True, 1.0)
