"""The lm-eval hook against the lm-eval installed here: every internal it patches still has the shape
it knows (a failure says which and names the fallback), and a changed interface is one warning naming
`--include_path`, never a broken lm_eval (issue 38 item 6).

The hook's tested range (hook.TESTED, pyproject's `eval` extra) is the lm-eval versions this file and a
task listing passed against: each installed with `pip install --no-deps --target DIR lm-eval==V` and
run with `PYTHONPATH=.:DIR python -m pytest -q tests/eval/test_hook_interface.py` (docs/ARCHITECTURE.md)."""
import importlib
import importlib.metadata
import inspect
import types
import warnings

import pytest

from r3bench.eval import hook, tasks_dir

FALLBACK = (f"use `lm_eval --include_path {tasks_dir()}` or `r3bench eval` until the hook is updated "
            f"(tested with lm-eval {'-'.join(hook.TESTED)}; installed: {importlib.metadata.version('lm_eval')})")


def test_task_manager_takes_the_arguments_the_hook_passes():
    """The interface the hook relies on, read from lm-eval itself (not from whether the patch took):
    TaskManager(verbosity, include_path, ...) importable from lm_eval.tasks."""
    tasks = importlib.import_module("lm_eval.tasks")
    cls = getattr(tasks, "TaskManager", None)
    assert cls is not None, f"lm-eval has no lm_eval.tasks.TaskManager: its interface changed; {FALLBACK}"
    params = list(inspect.signature(inspect.unwrap(cls.__init__)).parameters)
    assert params[:3] == hook.TASK_MANAGER_PARAMS, (
        f"lm-eval's TaskManager interface changed: __init__{tuple(params)}, the hook needs "
        f"{tuple(hook.TASK_MANAGER_PARAMS)} first; {FALLBACK}")
    assert cls.__module__ in hook.TASK_MANAGER_MODULES, (
        f"lm-eval's TaskManager moved to {cls.__module__} (the hook watches {hook.TASK_MANAGER_MODULES}); {FALLBACK}")


@pytest.mark.parametrize("module, attr, method", [
    ("lm_eval.tasks", "TaskManager", "__init__"),
    ("lm_eval.models.huggingface", "HFLM", "__init__"),
    ("lm_eval.evaluator", "simple_evaluate", None),
    ("lm_eval.config.evaluate_config", "EvaluatorConfig", "process_tasks"),
])
def test_every_patched_internal_has_the_shape_the_hook_knows(module, attr, method):
    if not hook.enabled():
        pytest.skip("the hook is switched off (R3BENCH_LM_EVAL_HOOK=0)")
    mod = importlib.import_module(module)
    obj = getattr(mod, attr, None)
    assert obj is not None, f"lm-eval's {module}.{attr} is gone: the r3bench hook cannot patch it; {FALLBACK}"
    target = getattr(obj, method) if method else obj
    assert getattr(target, "_r3bench", False), (
        f"lm-eval's {module}.{attr}{'.' + method if method else ''} was not patched by the r3bench hook (its "
        f"interface changed, or the .pth hook did not load: R3BENCH_LM_EVAL_HOOK={hook.enabled()}); {FALLBACK}")


def test_the_strategy_models_are_registered():
    if not hook.enabled():
        pytest.skip("the hook is switched off (R3BENCH_LM_EVAL_HOOK=0)")
    importlib.import_module("lm_eval.models")
    from lm_eval.api.registry import model_registry

    missing = [n for n in hook.REGISTRY if n not in model_registry]
    assert not missing, f"r3bench's lm-eval models {missing} are not registered; {FALLBACK}"


def test_a_changed_task_manager_is_one_warning_naming_the_fallback():
    class TaskManager:  # a future lm-eval whose constructor takes other arguments
        def __init__(self, include_path=None, verbosity="INFO"):
            self.include_path = include_path

    fake = types.ModuleType("lm_eval.tasks.manager")

    class Inner:
        def create_module(self, spec):
            return None

        def exec_module(self, module):
            module.TaskManager = TaskManager

    loader = hook._Loader(Inner(), "lm_eval.tasks.manager")
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        loader.exec_module(fake)
    msgs = [str(w.message) for w in got]
    assert len(msgs) == 1 and "--include_path" in msgs[0] and "signature" in msgs[0] and "tested with" in msgs[0], msgs
    assert fake.TaskManager is TaskManager and not getattr(TaskManager.__init__, "_r3bench", False)
    TaskManager(include_path="x")  # lm-eval's own class still works, untouched


def test_pyproject_allows_exactly_the_tested_range():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    low, high = hook.TESTED
    nxt = high.rsplit(".", 1)[0] + "." + str(int(high.rsplit(".", 1)[1]) + 1)
    want = f'"lm-eval[api]>={low},<{nxt}"'
    assert want in text, f"pyproject's eval extra must allow the tested lm-eval range {low}-{high}: {want}"
    assert not re.search(r'"lm-eval\[api\]==', text)


def test_scores_only_drops_nan_per_kind_rows_never_a_headline_metric():
    """--limit with no correct solution: r3_stepverify's f1 is NaN and stays (lm-eval shows N/A);
    a per-kind score of a kind never scored (acc_mcq) leaves, as do the per-sample fields."""
    nan = float("nan")
    config = {"metric_list": [{"metric": "f1"}, {"metric": "acc_mcq"},
                              {"metric": "reason", "aggregation": "r3bench.eval.stepverify.agg_distinct"}]}
    results = {"configs": {"t": config},
               "results": {"t": {"f1,none": nan, "f1_stderr,none": "N/A", "acc_correct,none": nan,
                                 "acc_mcq,none": nan, "acc_mcq_stderr,none": "N/A", "acc_flexible_numeric,none": nan,
                                 "acc_numeric,none": 0.5, "reason,none": 3.0, "alias": "t"}}}
    row = hook.scores_only(results)["results"]["t"]
    assert set(row) == {"f1,none", "f1_stderr,none", "acc_correct,none", "acc_numeric,none", "alias"}
