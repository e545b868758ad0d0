"""Makes plain `lm_eval --tasks r3_...` find r3bench's tasks (lm-eval has no task entry points).

Tested lm-eval versions: 0.4.10 to 0.4.13 (TESTED; the range pyproject's `eval` extra allows; tests/eval/test_hook_interface.py
checks every internal below against the lm-eval installed, and docs/ARCHITECTURE.md says how the range
was tested). Outside it, or whenever a patch fails, the fallback is `lm_eval --include_path "$(r3bench
tasks-path)"`.

A `.pth` file installed with the package imports this module at interpreter start. It only puts
a finder on `sys.meta_path`; nothing of lm-eval is imported until the program itself imports it.
When the module that defines `TaskManager` is executed (`lm_eval.tasks.manager` from 0.4.12,
`lm_eval.tasks` before), `TaskManager.__init__` is wrapped to append r3bench's task
folder to `include_path`; when `lm_eval.models.huggingface` is executed, `HFLM.__init__` is
wrapped to resolve r3bench's short model names (`pretrained=r3bench/smollm2-135m-instruct`); when
`lm_eval.evaluator` is executed, `simple_evaluate` checks r3bench's task names and the data directory
before the model loads, and its results keep the r3 tasks' scores only (scores_only) (r3bench.eval.preflight; from the command line already in
`EvaluatorConfig.process_tasks`, where lm-eval resolves task names); when
`lm_eval.models` is executed (it registers lm-eval's own models), r3bench's strategy wrappers
(`--model r3-rag | r3-stepco | r3-bestofn`, r3bench/eval/strategies/) are registered lazily beside them.

It fails soft: any mismatch with lm-eval's internals leaves lm-eval untouched (with one warning),
and `R3BENCH_LM_EVAL_HOOK=0` switches it off. The fallback that needs no hook is
`lm_eval --include_path <r3bench tasks folder>` (`r3bench tasks-path` prints it) or `r3bench eval`.
"""
from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import inspect
import os
import sys
import warnings
from pathlib import Path

from r3bench.core import models
from r3bench.eval import tasks_dir
from r3bench.eval.strategies import REGISTRY

ENV = "R3BENCH_LM_EVAL_HOOK"
# the lm-eval versions tests/eval/test_hook_interface.py and a task listing passed against (pyproject: eval extra)
TESTED = ("0.4.10", "0.4.13")  # lowest and highest; pyproject: lm-eval>=0.4.10,<0.4.14
# the module defining TaskManager moved in 0.4.12 (lm_eval.tasks -> lm_eval.tasks.manager); both are
# watched, and the class is patched once (the second sees the mark)
TASK_MANAGER_MODULES = ("lm_eval.tasks.manager", "lm_eval.tasks")
# TaskManager.__init__'s leading parameters the wrapper relies on (include_path is the second positional)
TASK_MANAGER_PARAMS = ["self", "verbosity", "include_path"]
_TARGETS = (*TASK_MANAGER_MODULES, "lm_eval.models.huggingface", "lm_eval.models", "lm_eval.evaluator",
            "lm_eval.config.evaluate_config")


def enabled() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def _warn(what, e):
    warnings.warn(f"r3bench: lm-eval hook could not {what} ({type(e).__name__}: {e}); "
                  f"use lm_eval --include_path {tasks_dir()} or `r3bench eval` (hook tested with lm-eval "
                  f"{'-'.join(TESTED)})", RuntimeWarning, stacklevel=2)


def task_manager_problem(cls) -> str | None:
    """Why this hook cannot wrap `cls.__init__` (a TaskManager), None when it can: the constructor must
    take (self, verbosity, include_path, ...) as lm-eval 0.4.10-0.4.13 do."""
    params = list(inspect.signature(cls.__init__).parameters)
    if params[:3] != TASK_MANAGER_PARAMS:
        return (f"TaskManager.__init__{tuple(params)} is not the signature this hook knows "
                f"{tuple(TASK_MANAGER_PARAMS)}")
    return None


def patch_task_manager(mod):
    cls = getattr(mod, "TaskManager", None)
    if cls is None:  # lm_eval.tasks.manager before 0.4.12 does not exist; lm_eval.tasks then defines it
        return
    if getattr(cls.__init__, "_r3bench", False):
        return
    orig = cls.__init__
    why = task_manager_problem(cls)
    if why:
        raise TypeError(why)

    @functools.wraps(orig)
    def __init__(self, *args, **kwargs):
        try:
            if len(args) >= 2:  # (verbosity, include_path, ...) given positionally
                args = list(args)
                args[1] = _with_ours(args[1])
                args = tuple(args)
            else:
                kwargs["include_path"] = _with_ours(kwargs.get("include_path"))
        except Exception as e:  # noqa: BLE001 - fail soft
            _warn("add its task folder", e)
        orig(self, *args, **kwargs)

    __init__._r3bench = True
    cls.__init__ = __init__


def _with_ours(include_path):
    ours = tasks_dir()
    if not ours.is_dir():
        return include_path
    if include_path is None:
        return [str(ours)]
    paths = list(include_path) if isinstance(include_path, (list, tuple)) else [include_path]
    if any(Path(p).resolve() == ours or ours.is_relative_to(Path(p).resolve()) for p in paths):
        return include_path
    return paths + [str(ours)]


def patch_hflm(mod):
    cls = mod.HFLM
    if getattr(cls.__init__, "_r3bench", False):
        return
    orig = cls.__init__
    if "pretrained" not in inspect.signature(orig).parameters:
        raise TypeError("HFLM.__init__ has no `pretrained` parameter")

    @functools.wraps(orig)
    def __init__(self, *args, **kwargs):
        p = kwargs.get("pretrained")
        if isinstance(p, str):
            if models.claims(p):  # an unknown r3bench/... name: ModelError naming the short names
                try:
                    kwargs["pretrained"] = str(models.resolve(p))
                except models.ModelError as e:
                    raise models.ModelError(f"r3bench: {e}") from None
                kwargs.setdefault("tokenizer", kwargs["pretrained"])
        orig(self, *args, **kwargs)

    __init__._r3bench = True
    cls.__init__ = __init__


def register_strategies(mod):
    """Lazy placeholders only (nothing of r3bench.eval.strategies is imported until a name is used);
    registering before lm_eval.models ran would break `--model hf` (FACTS: lm-eval 0.4.13)."""
    from lm_eval.api.registry import model_registry

    for name, target in REGISTRY.items():
        if name not in model_registry:
            model_registry.register(name, target=target)


def patch_evaluator(mod):
    """simple_evaluate checks r3bench's task names and the data directory they read BEFORE the model
    loads: plain `lm_eval --tasks r3_jeebnch` or a missing data directory is one line with what to do
    (r3bench.eval.preflight), not a traceback after the model has loaded. From lm_eval's command line
    the line ends the program (SystemExit: the line on stderr, exit 1); a program calling
    simple_evaluate gets PreflightError. After the run, the results of the r3 tasks keep their scores
    only (scores_only: no `answer` / `reason` / NaN rows in lm_eval's printed table)."""
    orig = mod.simple_evaluate
    if getattr(orig, "_r3bench", False):
        return
    sig = inspect.signature(orig)
    if not {"tasks", "metadata"} <= set(sig.parameters):
        raise TypeError(f"simple_evaluate{tuple(sig.parameters)} is not the signature this hook knows")

    @functools.wraps(orig)
    def simple_evaluate(*args, **kwargs):
        def tasks_and_metadata():
            bound = sig.bind_partial(*args, **kwargs).arguments
            # the tasks see the task manager's metadata and simple_evaluate's (a data_dir in either counts)
            meta = dict(getattr(bound.get("task_manager"), "metadata", None) or {})
            meta.update(bound.get("metadata") or {})
            return bound.get("tasks"), meta
        _preflight(tasks_and_metadata)
        results = orig(*args, **kwargs)
        try:
            scores_only(results)
        except Exception as e:  # noqa: BLE001 - fail soft: the results stay as lm-eval made them
            _warn("leave the per-sample fields out of the results table", e)
        return results

    simple_evaluate._r3bench = True
    mod.simple_evaluate = simple_evaluate


def per_sample_fields(config: dict) -> set:
    """The metric_list entries of an r3 task that are per-sample fields, not scores: the answer the
    checker read and its reason (r3bench.eval.lmeval.checked), which the tasks aggregate with
    agg_distinct only so that lm-eval logs them in every sample."""
    out = set()
    for m in (config or {}).get("metric_list") or ():
        agg = m.get("aggregation") if isinstance(m, dict) else None
        if "agg_distinct" in (agg if isinstance(agg, str) else getattr(agg, "__name__", "")):
            out.add(m.get("metric"))
    return out


def scores_only(results: dict | None) -> dict | None:
    """lm-eval's results table of the r3 tasks keeps their scores only: the per-sample fields
    (`answer`, `reason`; per_sample_fields) and the per-kind scores of a kind absent from the documents
    scored (NaN, e.g. acc_mcq under --limit 5; _per_kind) leave results["results"]; a NaN headline metric
    (f1 with no correct solution scored) stays, as lm-eval's own N/A, so neither the printed table
    nor results_*.json lists them as metrics. The samples keep `answer` and `reason`. In place; returns
    `results`."""
    if not isinstance(results, dict):
        return results
    configs = results.get("configs") or {}
    for task, row in (results.get("results") or {}).items():
        fields = per_sample_fields(configs.get(task))
        if not fields:
            continue  # not an r3 checker task: untouched
        before = dict(row)  # a stderr row follows its metric's value, whichever is met first
        for key in list(row):
            metric, _, filt = key.partition(",")
            base = metric[:-len("_stderr")] if metric.endswith("_stderr") else metric
            value = before.get(f"{base},{filt}")
            if base in fields or (isinstance(value, float) and value != value and _per_kind(base)):
                row.pop(key)
    return results


def _answer_kinds() -> tuple:
    try:
        from r3bench.eval import data  # at the call: the benchmark table's answer kinds

        return tuple({*data.KINDS, *data.JEE_KINDS})
    except Exception:  # noqa: BLE001 - the kinds the tasks report today
        return ("mcq", "mcq_multi", "integer", "numeric")


def _per_kind(metric: str) -> bool:
    """A per-kind score (acc_<kind>, acc_flexible_<kind>): NaN where no document of that kind was scored.
    A task's headline metric (r3_stepverify's f1 under --limit with no correct item) is never one."""
    return any(metric.endswith(f"_{k}") and len(metric) > len(k) + 1 for k in _answer_kinds())


def patch_evaluate_config(mod):
    """lm_eval's command line resolves its task names in EvaluatorConfig.process_tasks, before it loads
    the model and before simple_evaluate: the same preflight runs there, so a misspelt r3 task or a
    missing data directory is one line ("Tasks not found" was a traceback)."""
    cls = mod.EvaluatorConfig
    orig = cls.process_tasks
    if getattr(orig, "_r3bench", False):
        return
    if list(inspect.signature(orig).parameters)[:2] != ["self", "metadata"]:
        raise TypeError("EvaluatorConfig.process_tasks is not the signature this hook knows")

    @functools.wraps(orig)
    def process_tasks(self, metadata=None, *args, **kwargs):
        _preflight(lambda: (getattr(self, "tasks", None),
                            metadata if metadata is not None else getattr(self, "metadata", None)))
        return orig(self, metadata, *args, **kwargs)

    process_tasks._r3bench = True
    cls.process_tasks = process_tasks


def _preflight(tasks_and_metadata) -> None:
    """The one check both wrappers run: r3bench.eval.preflight on (tasks, metadata). A problem ends
    lm_eval's command line with its one line (SystemExit: exit 1) or raises PreflightError in
    a program; a failure of the check itself fails soft (lm-eval runs as it would without the hook)."""
    problem = None
    try:
        from r3bench.eval import preflight  # at the call, not at interpreter start (it imports the checker)

        problem = preflight.problem(*tasks_and_metadata())
    except Exception as e:  # noqa: BLE001 - fail soft
        _warn("check the tasks before the model loads", e)
    if problem:
        if _lm_eval_cli():
            raise SystemExit(f"r3bench: {problem}")
        raise preflight.PreflightError(problem)


def _lm_eval_cli() -> bool:
    argv0 = Path(sys.argv[0]).as_posix() if sys.argv and sys.argv[0] else ""
    return Path(argv0).name in ("lm_eval", "lm-eval") or argv0.endswith("lm_eval/__main__.py")


_PATCHES = {"lm_eval.tasks.manager": patch_task_manager, "lm_eval.tasks": patch_task_manager,
            "lm_eval.models.huggingface": patch_hflm,
            "lm_eval.models": register_strategies, "lm_eval.evaluator": patch_evaluator,
            "lm_eval.config.evaluate_config": patch_evaluate_config}


class _Loader(importlib.abc.Loader):
    def __init__(self, inner, name):
        self.inner, self.name = inner, name

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        self.inner.exec_module(module)
        try:
            _PATCHES[self.name](module)
        except Exception as e:  # noqa: BLE001 - fail soft
            _warn(f"patch {self.name}", e)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in _TARGETS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _Loader(spec.loader, name)
        return spec


def install():
    if not enabled() or any(isinstance(f, _Finder) for f in sys.meta_path):
        return
    for name in _TARGETS:  # already imported (hook installed late, e.g. by `r3bench eval`)
        if name in sys.modules:
            try:
                _PATCHES[name](sys.modules[name])
            except Exception as e:  # noqa: BLE001
                _warn(f"patch {name}", e)
    sys.meta_path.insert(0, _Finder())


install()
