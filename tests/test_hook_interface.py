"""The lm-eval hook against the lm-eval installed here: every internal it patches still has the shape
it knows (a failure says which and names the fallback), and a changed interface is one warning naming
`--include_path`, never a broken lm_eval (issue 38 item 6)."""
import importlib
import types
import warnings

import pytest

from r3bench.eval import hook, tasks_dir

FALLBACK = f"use `lm_eval --include_path {tasks_dir()}` or `r3bench eval` until the hook is updated"


@pytest.mark.parametrize("module, attr, method", [
    ("lm_eval.tasks.manager", "TaskManager", "__init__"),
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
    assert len(msgs) == 1 and "--include_path" in msgs[0] and "signature" in msgs[0], msgs
    assert fake.TaskManager is TaskManager and not getattr(TaskManager.__init__, "_r3bench", False)
    TaskManager(include_path="x")  # lm-eval's own class still works, untouched
