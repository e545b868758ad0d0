"""`r3bench reproduce PLAN [--dry-run] [--methods a,b]`: a grid of models x methods x tasks, end to end.

A cell is one model x method x task (OUT/MODEL/METHOD/TASK/). Before anything runs (and alone, with
--dry-run), every cell is printed with its estimated GPU-hours, judge calls and tokens and the
assumptions of the estimate (`estimate`, `ESTIMATE`; a plan's `estimate:` block overrides them).
For each cell, in order:

1. what the method needs, made once per model and method and shared by its tasks: training,
   `python -m trainers.<sft|dpo|stepfix|grpo> --config OUT/MODEL/METHOD/train.yaml` under the plan's
   or the method's `launch` (python; torchrun --nproc_per_node N; accelerate launch --config_file
   trainers/configs/accelerate/NAME.yaml --num_processes N; N = num_processes) with the plan's
   `train` block, then the method's (`init_from: sft` starts from the same model's SFT adapter, as the
   paper's stepfix does; a run that saved a checkpoint and did not finish is resumed); RAG's index,
   `python -m trainers.rag --out OUT/MODEL/rag/index [index_args]` (then `index=`, and `source=all`
   when index_args index worked solutions - `--procgen_n N`, `--solutions F` - unless the method's
   model_args set `source`; index.done keeps the index_args, and other index_args rebuild it); a
   PSV for a stepco / bestofn method with `psv: {train: {...}}`, `python -m trainers.psv` into
   OUT/MODEL/psv (then `psv_model=`). A stepco method with verifier psv (the default) or a bestofn
   method with scorer=psv and neither a `psv:` block, `psv_model=DIR` in its model_args nor
   R3BENCH_PSV_MODEL is refused (PlanError) before anything runs;
2. evaluate the cell's task with plain lm-eval: `python -m lm_eval --model B --model_args
   pretrained=M[,peft=ADAPTER] --tasks TASK --output_path CELL/lm_eval --log_samples ...`, B =
   eval.backend (auto: vllm where importable - the adapter as lora_local_path - else hf;
   local-chat-completions with eval.base_url for a served model, no trained cells), or `--model
   r3-rag|r3-stepco|r3-bestofn --model_args inner=B,...` for the strategy methods. A plan whose
   methods train or verify steps must name seven-tag tasks (the prompt training uses);
3. write the run record beside lm-eval's results file (r3bench/results/records.py).

Then the leaderboard (OUT/leaderboard.md, .csv), the accuracy and training-curve plots, the error
analysis of the structured tasks (OUT/errors/) and OUT/reproduce.md (status of every cell).

Resumable cell by cell: a cell whose results file and record exist is skipped; a half-done evaluation
is redone; a finished training run (run.json status finished + final/ or psv_model/) is kept. A
failing command is recorded in CELL/cell.json with its stage, exit code and the tail of its log, and
the grid goes on (a shared stage that failed is not tried again in the same run). Misspelt methods,
tasks, launch configs, backends and options are refused at load with the valid names.

A plan is a YAML file, or the name of one shipped in r3bench/apps/plans/ (`paper`, `cpu`):

    name: cpu
    out: results/reproduce/cpu       # --out overrides
    data_dir: null                   # benchmark data dir (default $R3BENCH_DATA_DIR)
    models: [r3bench/smollm2-135m-instruct]
    methods: [cot, sft, stepfix]     # or a mapping method -> options (train, init_from, model_args,
                                     # index_args, launch, psv)
    tasks: [r3_procgen]              # a list of task names (or one name)
    launch: python                   # python | torchrun | an accelerate config name; num_processes: N
    eval: {backend: auto, device: cpu, batch_size: 8, limit: 3, gen_kwargs: "max_gen_toks=96"}
    train: {max_steps: 2, batch_size: 2, eval_tasks: ""}   # trainers' Config fields, for every trainer
    estimate: {problems: {r3_procgen: 250}}                # the dry run's assumptions (optional)
    timeout_s: 3600                  # per command (optional)
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from r3bench.core.methods import RUNNABLE, VERIFIER_ARGS
from r3bench.core.methods import label as method_label
from r3bench.eval.data import paper_count
from r3bench.results import errors, leaderboard, plots, records
from r3bench.results.cells import model_args, model_name
from r3bench.results.records import portable, record_path
from verifiers.psv import PsvConfig

# method -> how it is made: a trainer (and what it starts from) or an lm-eval strategy wrapper
# (index: python -m trainers.rag builds CELL/index first); the method table is r3bench/core/methods.py
METHODS = RUNNABLE
PLAN_KEYS = {"name", "out", "data_dir", "models", "methods", "tasks", "eval", "train", "timeout_s", "reference",
             "description", "launch", "num_processes", "estimate"}
EVAL_KEYS = {"device", "batch_size", "limit", "gen_kwargs", "apply_chat_template", "seed", "num_fewshot",
             "model_args", "extra_args", "backend", "base_url"}
METHOD_KEYS = {"train", "init_from", "model_args", "index_args", "launch", "psv"}
# evaluation backends: auto = vllm where it is importable, else hf; local-chat-completions = lm-eval's
# OpenAI-compatible client (eval.base_url), for a model served elsewhere (no adapter: no trainer cells)
BACKENDS = ("auto", "hf", "vllm", "local-chat-completions")
API = "local-chat-completions"


class PlanError(ValueError):
    """The plan cannot be run as written: the message says which field and why."""


@dataclass
class Cell:
    """One model x method x task: its own evaluation (dir/lm_eval, dir/cell.json); the training run,
    RAG index and PSV it needs are shared by the model's cells of that method (base/train, base/index,
    MODEL/psv) and made once."""
    model: str
    method: str
    spec: dict
    dir: Path  # OUT/<model>/<method>/<task>
    task: str = ""
    base: Path | None = None  # OUT/<model>/<method>
    commands: list = field(default_factory=list)  # (stage, argv)


def accelerate_configs() -> dict[str, Path]:
    """name -> trainers/configs/accelerate/<name>.yaml (the folder is the list of accelerate launch configs)."""
    import importlib.util

    spec = importlib.util.find_spec("trainers")
    roots = list(spec.submodule_search_locations or []) if spec else []
    d = Path(roots[0]) / "configs" / "accelerate" if roots else None
    return {f.stem: f for f in sorted(d.glob("*.yaml"))} if d and d.is_dir() else {}


def launch_names() -> list[str]:
    """Every launch config a trainer cell can name: plain python, torchrun, or an accelerate config."""
    return ["python", "torchrun", *accelerate_configs()]


def _task_files() -> tuple[dict[str, bool], dict[str, list[str]]]:
    """({r3 task: whether it asks for the seven-tag solution}, {r3 group: its tasks}) from tasks/r3/."""
    import re

    from r3bench.eval.hook import tasks_dir

    own, groups = {}, {}
    for f in sorted(tasks_dir().glob("*.yaml")):
        text = f.read_text(encoding="utf-8")
        name = re.search(r"^(task|group):\s*(\S+)\s*$", text, re.M)
        if not name:
            continue
        if name.group(1) == "group":
            groups[name.group(2)] = re.findall(r"^\s+-\s+(r3_\S+)\s*$", text, re.M)
        else:
            own[name.group(2)] = "include: _r3_structured_template_yaml" in text
    return own, groups


def _seven_tag_tasks() -> dict[str, bool]:
    """r3bench task or group name -> whether it asks for the seven-tag solution (the prompt training uses)."""
    own, groups = _task_files()
    own.update({g: bool(ts) and all(own.get(t, False) for t in ts) for g, ts in groups.items()})
    return own


def expand_groups(tasks: list[str]) -> list[str]:
    """A plan's task list with each r3 group replaced by its tasks (a cell per task): `r3_physics_structured`
    -> the seven-tag task of every benchmark of the table (tasks/r3/ is generated from it)."""
    groups = _task_files()[1]
    return [t for name in tasks for t in groups.get(name, [name])]


def _check_tasks(plan: dict) -> None:
    """Every task a trained adapter or a step verifier is scored on asks for the seven-tag format:
    the CoT variant of a benchmark would score an adapter on a prompt it never saw."""
    from r3bench.eval.lmeval import unknown_tasks_message

    kinds = _seven_tag_tasks()
    structured = sorted(t for t, ok in kinds.items() if ok)
    bad = unknown_tasks_message(plan["tasks"])  # before anything trains or loads a model
    if bad:
        raise PlanError(f"plan field 'tasks': {bad}; seven-tag tasks: {', '.join(structured)}")
    needs = [m for m, sp in plan["methods"].items() if sp.get("trainer") or sp.get("lm_eval_model") in VERIFIER_ARGS]
    cot = [t for t in plan["tasks"] if t in kinds and not kinds[t]]
    if needs and cot:
        fix = "; ".join(f"{t} -> {t}_structured" if kinds.get(f"{t}_structured") else t for t in cot)
        raise PlanError(f"plan field 'tasks': {', '.join(cot)} use(s) the CoT prompt, but {', '.join(needs)} "
                        f"train(s) on or verify(ies) the seven-tag format: use the *_structured task ({fix}); "
                        f"seven-tag tasks: {', '.join(structured)}")


def slug(model: str) -> str:
    """Folder name of a model's cells: a local folder's name, else the hub id with / -> __."""
    p = Path(str(model).rstrip("/"))
    return p.name if p.is_absolute() or p.is_dir() else str(model).strip("/").replace("/", "__")


def plan_names() -> list[str]:
    return sorted(p.name[:-5] for p in resources.files("r3bench.apps").joinpath("plans").iterdir()
                  if p.name.endswith(".yaml"))


def load_plan(name_or_path: str) -> dict:
    """A plan from a YAML path or a shipped plan name; PlanError says what is wrong."""
    import yaml

    p = Path(name_or_path)
    if p.is_file():
        text = p.read_text(encoding="utf-8")
    else:
        res = resources.files("r3bench.apps").joinpath("plans", f"{name_or_path}.yaml")
        if not res.is_file():
            raise PlanError(f"no plan file {name_or_path!r} and no shipped plan of that name "
                            f"(shipped: {', '.join(plan_names())})")
        text = res.read_text(encoding="utf-8")
    try:
        plan = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise PlanError(f"{name_or_path}: not YAML: {e}") from None
    if not isinstance(plan, dict):
        raise PlanError(f"{name_or_path}: expected a mapping")
    unknown = sorted(set(plan) - PLAN_KEYS)
    if unknown:
        raise PlanError(f"unknown plan field(s) {unknown}; known: {sorted(PLAN_KEYS)}")
    for key in ("models", "methods", "tasks"):
        if not plan.get(key):
            raise PlanError(f"plan field {key!r} is missing or empty")
    if isinstance(plan["tasks"], str):
        plan["tasks"] = [plan["tasks"]]
    if not isinstance(plan["models"], list) or not all(isinstance(m, str) and m for m in plan["models"]):
        raise PlanError("plan field 'models' must be a list of model ids or folders (strings)")
    if not isinstance(plan["tasks"], list) or not all(isinstance(t, str) and t for t in plan["tasks"]):
        raise PlanError("plan field 'tasks' must be a list of task names (strings), or one task name")
    plan["tasks"] = expand_groups(plan["tasks"])
    for key in ("eval", "train", "estimate"):
        if plan.get(key) is not None and not isinstance(plan[key], dict):
            raise PlanError(f"plan field {key!r} must be a mapping field -> value, got {type(plan[key]).__name__}")
    t = plan.get("timeout_s")
    if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float)) or t <= 0):
        raise PlanError(f"plan field 'timeout_s' must be a positive number of seconds, got {t!r}")
    methods = plan["methods"]
    methods = {m: {} for m in methods} if isinstance(methods, list) else methods
    if not isinstance(methods, dict):
        raise PlanError("plan field 'methods' must be a list or a mapping method -> options")
    for m, opts in methods.items():
        if m not in METHODS:
            raise PlanError(f"unknown method {m!r}; known: {', '.join(METHODS)}")
        if opts is not None and not isinstance(opts, dict):
            raise PlanError(f"options of method {m!r} must be a mapping")
        bad = sorted(set(opts or {}) - METHOD_KEYS)
        if bad:
            raise PlanError(f"method {m!r}: unknown option(s) {bad}; known: {sorted(METHOD_KEYS)}")
        for k, typ, what in (("train", dict, "a mapping field -> value"), ("index_args", list, "a list of arguments"),
                             ("init_from", str, "a method name"), ("psv", dict, "a mapping (train: psv fields)")):
            if (opts or {}).get(k) is not None and not isinstance(opts[k], typ):
                raise PlanError(f"method {m!r}: {k!r} must be {what}, got {type(opts[k]).__name__}")
    plan["methods"] = {m: {**METHODS[m], **(opts or {})} for m, opts in methods.items()}
    bad = sorted(set(plan.get("eval") or {}) - EVAL_KEYS)
    if bad:
        raise PlanError(f"unknown eval field(s) {bad}; known: {sorted(EVAL_KEYS)}")
    _check_launch(plan)
    _check_backend(plan)
    _check_tasks(plan)
    for m, spec in plan["methods"].items():
        if spec.get("psv") is not None and spec.get("lm_eval_model") not in VERIFIER_ARGS:
            raise PlanError(f"method {m!r}: 'psv' (train a PSV first) is for the methods with a step verifier: "
                            f"{', '.join(k for k, s in METHODS.items() if s.get('lm_eval_model') in VERIFIER_ARGS)}")
        _check_psv(plan, m, spec)
    psvs = {m: sp["psv"] or {} for m, sp in plan["methods"].items() if sp.get("psv") is not None}
    if len({json.dumps(v, sort_keys=True, default=str) for v in psvs.values()}) > 1:
        raise PlanError(f"methods {', '.join(psvs)} train one PSV per model (MODEL/psv): give them the same "
                        "'psv' block")
    plan.setdefault("name", p.stem if p.is_file() else name_or_path)
    return plan


def _check_launch(plan: dict) -> None:
    """launch: python | torchrun | an accelerate config of trainers/configs/accelerate/ (plan-wide, or per method)."""
    names = launch_names()
    for where, v in [("launch", plan.get("launch"))] + [(f"method {m!r}: launch", sp.get("launch"))
                                                        for m, sp in plan["methods"].items()]:
        if v is not None and v not in names:
            import difflib

            close = difflib.get_close_matches(str(v), names, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise PlanError(f"{where}: unknown launch config {v!r}{hint}"
                            + f"; known: {', '.join(names)} (accelerate configs: trainers/configs/accelerate/)")
    n = plan.get("num_processes", 1)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise PlanError(f"plan field 'num_processes' must be a whole number >= 1, got {n!r}")


def launch_of(plan: dict, spec: dict) -> str:
    return spec.get("launch") or plan.get("launch") or "python"


def _check_backend(plan: dict) -> None:
    ev = plan.get("eval") or {}
    b = ev.get("backend", "auto")
    if b not in BACKENDS:
        raise PlanError(f"eval.backend: unknown backend {b!r}; known: {', '.join(BACKENDS)}")
    if b == API:
        if not ev.get("base_url"):
            raise PlanError(f"eval.backend {API} needs eval.base_url (an OpenAI-compatible server's "
                            ".../v1/chat/completions)")
        trained = [m for m, sp in plan["methods"].items() if sp.get("trainer") or sp.get("index")]
        if trained:
            raise PlanError(f"eval.backend {API}: the server serves a fixed model, so {', '.join(trained)} (an "
                            "adapter or index made by the grid) cannot be evaluated through it: use hf or vllm")


def backend(plan: dict) -> str:
    """The lm-eval model the plan evaluates with: vllm where it is importable (auto), else hf, or the API."""
    import importlib.util

    b = (plan.get("eval") or {}).get("backend", "auto")
    if b == "auto":
        return "vllm" if importlib.util.find_spec("vllm") is not None else "hf"
    return b


def _cell_model_args(plan: dict, spec: dict) -> dict:
    """key -> value of the plan's eval.model_args and the method's model_args (the method's win)."""
    got = {}
    for extra in ((plan.get("eval") or {}).get("model_args"), spec.get("model_args")):
        if extra:
            got.update(model_args({"model_args": extra}))
    return got


def _check_psv(plan: dict, method: str, spec: dict) -> None:
    """A stepco / bestofn cell whose verifier is psv needs psv_model=DIR in its model_args (no stage
    of the grid trains a PSV): otherwise every such cell would fail when lm-eval builds the model.
    StepCo's verifier is psv unless named; Best-of-N without a scorer and without a PSV model votes."""
    key, default = VERIFIER_ARGS.get(spec.get("lm_eval_model") or "", (None, None))
    if not key:
        return
    ma = _cell_model_args(plan, spec)
    if spec.get("psv") is not None:
        return  # the grid trains its PSV first (python -m trainers.psv) and passes psv_model=
    if ma.get(key, default) == "psv" and not PsvConfig.from_env(model=ma.get("psv_model")).model:
        raise PlanError(f"method {method!r}: {key}=psv" + (" (the default)" if key not in ma else "")
                        + " needs a trained PSV: add psv_model=DIR to its "
                        f"model_args (train one with python -m trainers.psv; DIR = its OUTPUT_DIR/psv_model), or "
                        "give the method 'psv: {train: {...}}' (the grid trains it first), or "
                        f"set R3BENCH_PSV_MODEL, or choose {key}=symbolic|judge"
                        + ("|vote" if key == "scorer" else "") + " (those read the reference: an oracle verifier)")


def _index_args(spec: dict) -> list[str]:
    return [str(a) for a in (spec.get("index_args") or [])]


def _indexes_solutions(spec: dict) -> bool:
    """index_args that put worked solutions into the index (trainers.rag --procgen_n N / --solutions F)."""
    args = _index_args(spec)
    for i, a in enumerate(args):
        flag, _, val = a.partition("=")
        if flag == "--solutions":
            return True
        if flag == "--procgen_n":
            v = val or (args[i + 1] if i + 1 < len(args) else "0")
            if v.strip() not in ("", "0"):
                return True
    return False


def _ordered(methods: dict) -> list[str]:
    """Plan order, but a method's init_from dependency first."""
    out = []

    def add(m, seen=()):
        if m in out:
            return
        dep = methods[m].get("init_from")
        if dep and dep in methods and dep not in seen:
            add(dep, (*seen, m))
        out.append(m)
    for m in methods:
        add(m)
    return out


def _trainers_of(plan: dict):
    """(method, trainer, its plan fields) for every training run of the plan: the methods' and their PSVs'."""
    for m, spec in plan["methods"].items():
        if spec.get("trainer"):
            yield m, spec["trainer"], {**(plan.get("train") or {}), **(spec.get("train") or {})}
        if spec.get("psv") is not None:
            yield f"{m} (psv)", "psv", {**(plan.get("train") or {}), **((spec["psv"] or {}).get("train") or {})}


def check_train_fields(plan: dict) -> list[str]:
    """Unknown trainer fields in the plan (the trainers' Config dataclasses are the schema)."""
    import dataclasses
    import importlib

    problems = []
    for m, trainer, fields in _trainers_of(plan):
        try:
            cls = importlib.import_module(f"trainers.{trainer}").Config
        except ImportError as e:
            problems.append(f"method {m}: cannot import trainers.{trainer} ({e}): pip install 'r3bench[train]'")
            continue
        names = {f.name for f in dataclasses.fields(cls)}
        bad = sorted(set(fields) - names)
        if bad:
            problems.append(f"method {m}: unknown trainers.{trainer} field(s) {bad}")
    return problems


def _adapter(out: Path, model: str, method: str) -> Path:
    return out / slug(model) / method / "train" / "final"


def _psv_dir(out: Path, model: str) -> Path:
    """The model's PSV run (python -m trainers.psv), shared by its stepco and bestofn cells."""
    return out / slug(model) / "psv"


def train_config(plan: dict, out: Path, model: str, method: str) -> dict:
    spec = plan["methods"][method]
    cfg = {**(plan.get("train") or {}), **(spec.get("train") or {}), "model": model,
           "output_dir": str(out / slug(model) / method / "train")}
    if spec.get("init_from"):
        cfg["init_adapter"] = str(_adapter(out, model, spec["init_from"]))
    return cfg


def psv_config(plan: dict, out: Path, model: str, method: str) -> dict:
    """The PSV a stepco / bestofn method trains first: the plan's train fields, then its psv.train."""
    psv = plan["methods"][method].get("psv") or {}
    return {**(plan.get("train") or {}), **(psv.get("train") or {}), "model": model,
            "output_dir": str(_psv_dir(out, model))}


def train_command(plan: dict, trainer: str, config: Path, launch: str) -> list[str]:
    """`python -m trainers.X`, `torchrun --nproc_per_node N -m trainers.X` or `accelerate launch
    --config_file trainers/configs/accelerate/NAME.yaml --num_processes N -m trainers.X`, then --config."""
    n = str(plan.get("num_processes", 1))
    tail = ["-m", f"trainers.{trainer}", "--config", str(config)]
    if launch == "python":
        return [sys.executable, *tail]
    if launch == "torchrun":
        return [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", n, *tail]
    cfg = accelerate_configs()[launch]
    return [sys.executable, "-m", "accelerate.commands.launch", "--config_file", _repo_relative(cfg),
            "--num_processes", n, *tail]


def _repo_relative(p: Path) -> str:
    """trainers/configs/accelerate/X.yaml when run from the repository, else the full path."""
    try:
        return p.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(p)


def eval_command(plan: dict, cell: Cell, out: Path) -> list[str]:
    ev = dict(plan.get("eval") or {})
    spec = cell.spec
    base = cell.base or cell.dir
    lm_backend = backend(plan)
    ma = [f"model={cell.model}" if lm_backend == API else f"pretrained={cell.model}"]
    if lm_backend == API:
        ma.append(f"base_url={ev['base_url']}")
    if spec.get("trainer"):  # vllm serves the adapter as a LoRA request (lm-eval's lora_local_path)
        ma.append(f"{'lora_local_path' if lm_backend == 'vllm' else 'peft'}={base / 'train' / 'final'}")
    if spec.get("index"):
        ma.append(f"index={base / 'index'}")
    if spec.get("psv") is not None:
        ma.append(f"psv_model={_psv_dir(out, cell.model) / 'psv_model'}")
    for extra in (ev.get("model_args"), spec.get("model_args")):
        if extra:
            ma.append(str(extra))
    if spec.get("index") and _indexes_solutions(spec) and "source" not in _cell_model_args(plan, spec):
        ma.append("source=all")  # the worked solutions built into the index are retrieved too (default: formulas)
    lm = spec.get("lm_eval_model") or lm_backend
    if lm != lm_backend:
        ma.insert(0, f"inner={lm_backend}")
    cmd = [sys.executable, "-m", "lm_eval", "--model", lm, "--model_args", ",".join(ma),
           "--tasks", cell.task, "--output_path", str(cell.dir / "lm_eval"), "--log_samples"]
    for key in ("device", "batch_size", "limit", "gen_kwargs", "seed", "num_fewshot"):
        if ev.get(key) is not None and not (key == "device" and lm_backend != "hf"):  # vllm / API: no --device
            cmd += [f"--{key}", str(ev[key])]
    if ev.get("apply_chat_template", True) or lm_backend == API:  # a chat API takes messages only
        cmd.append("--apply_chat_template")
    cmd += [str(a) for a in (ev.get("extra_args") or [])]
    return cmd


def cells(plan: dict, out: Path) -> list[Cell]:
    """Model x method x task, in that order (a method after the one it starts from). Each cell lists
    every stage it needs; a stage shared with an earlier cell (train, index, psv) is run once."""
    got = []
    for model in plan["models"]:
        for method in _ordered(plan["methods"]):
            spec = plan["methods"][method]
            base = out / slug(model) / method
            pre = []
            if spec.get("trainer"):
                pre.append(("train", train_command(plan, spec["trainer"], base / "train.yaml", launch_of(plan, spec))))
            if spec.get("index"):
                pre.append(("index", [sys.executable, "-m", "trainers.rag", "--out", str(base / "index"),
                                      *_index_args(spec)]))
            if spec.get("psv") is not None:
                pre.append(("psv", train_command(plan, "psv", _psv_dir(out, model) / "train.yaml",
                                                 launch_of(plan, spec))))
            for task in plan["tasks"]:
                c = Cell(model, method, spec, base / task, task=task, base=base, commands=list(pre))
                c.commands.append(("eval", eval_command(plan, c, out)))
                got.append(c)
    return got


def results_of(cell: Cell) -> list[Path]:
    return sorted((cell.dir / "lm_eval").rglob("results_*.json")) if (cell.dir / "lm_eval").is_dir() else []


def finished(cell: Cell) -> bool:
    return any(record_path(r).is_file() for r in results_of(cell))


def _finished_run(d: Path, product: str) -> bool:
    """A trainer run folder whose run.json says finished and whose product (final/, psv_model/) exists."""
    try:
        return json.loads((d / "run.json").read_text()).get("status") == "finished" and (d / product).is_dir()
    except (OSError, ValueError):
        return False


def _trained(cell: Cell) -> bool:
    return _finished_run((cell.base or cell.dir) / "train", "final")


def _shown(argv, out: Path) -> str:
    return shlex.join(["python" if a == sys.executable else a for a in argv])


def _run(argv, log_file: Path, env: dict, timeout_s) -> tuple[int, str]:
    with open(log_file, "w", encoding="utf-8") as fh:
        fh.write("$ " + shlex.join(argv) + "\n")
        fh.flush()
        try:
            rc = subprocess.run(argv, stdout=fh, stderr=subprocess.STDOUT, env=env, timeout=timeout_s).returncode
        except subprocess.TimeoutExpired:
            rc = 124
            fh.write(f"\n[r3bench reproduce] timed out after {timeout_s} s\n")
        except OSError as e:  # the command could not be started (no such interpreter, not executable, ...)
            rc = 127
            fh.write(f"\n[r3bench reproduce] could not run {argv[0]}: {type(e).__name__}: {e}\n")
    tail = log_file.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-15:]
    return rc, "\n".join(tail)


def _index_built(cell: Cell) -> list[str] | None:
    """The index_args METHOD/index was built with (METHOD/index.done), None when unknown or not built."""
    try:
        got = json.loads(((cell.base or cell.dir) / "index.done").read_text(encoding="utf-8")).get("index_args")
    except (OSError, ValueError, AttributeError):
        return None
    return got if isinstance(got, list) else None


def _flatten(d: Path) -> None:
    """lm-eval writes OUTPUT_PATH/<model name sanitised>/...; for a peft model that name is the adapter's
    full path (machine-specific): move the files up into OUTPUT_PATH so records stay committable."""
    if not d.is_dir():
        return
    for sub in [x for x in d.iterdir() if x.is_dir()]:
        for f in sub.iterdir():
            if f.is_file():
                f.replace(d / f.name)
        if not any(sub.iterdir()):
            sub.rmdir()


def _status(cell: Cell, **kw) -> None:
    cell.dir.mkdir(parents=True, exist_ok=True)
    (cell.dir / "cell.json").write_text(json.dumps({"model": cell.model, "method": cell.method, "task": cell.task,
                                                    **kw},
                                                   indent=1, default=str) + "\n", encoding="utf-8")


def _half_done(run_dir: Path) -> bool:
    """A trainer run that saved a checkpoint and did not finish: the next try resumes it (--resume)."""
    return any(run_dir.glob("checkpoint-*"))


def run_cell(plan: dict, cell: Cell, out: Path, env: dict, log=lambda s: None, shared: dict | None = None) -> dict:
    """Train / build the index / train the PSV (each once per model and method: `shared` keeps what an
    earlier cell of this run did), evaluate the cell's task, record. Returns the cell's status (cell.json)."""
    import shutil

    import yaml

    shared = {} if shared is None else shared
    t0 = time.time()
    shown = [_shown(a, out) for _, a in cell.commands]
    base = cell.base or cell.dir
    cell.dir.mkdir(parents=True, exist_ok=True)
    timeout_s = plan.get("timeout_s")

    def failed(**st):
        st.pop("status", None)
        _status(cell, status="failed", **st, commands=shown, seconds=round(time.time() - t0, 1))
        return {"status": "failed", **st}

    for stage, argv in cell.commands:
        where = cell.dir if stage == "eval" else _psv_dir(out, cell.model) if stage == "psv" else base
        key = (stage, str(where))
        if key in shared:  # made (or failed) for an earlier cell of this run
            if shared[key]["status"] != "finished":
                return failed(**{**shared[key], "reason": f"{stage} failed for an earlier cell of "
                                 f"{cell.method}: {shared[key].get('reason', '')}"})
            continue
        if stage in ("train", "psv"):
            run_dir = where / "train" if stage == "train" else where
            if _finished_run(run_dir, "final" if stage == "train" else "psv_model"):
                log(f"  {stage}: finished before, kept ({run_dir})")
                continue
            cfg = train_config(plan, out, cell.model, cell.method) if stage == "train" else \
                psv_config(plan, out, cell.model, cell.method)
            if cfg.get("init_adapter") and not Path(cfg["init_adapter"]).is_dir():
                return failed(stage=stage, reason=f"needs the {cell.spec['init_from']} adapter {cfg['init_adapter']}, "
                              f"which is missing ({cell.spec['init_from']} failed or is not in the plan)")
            if _half_done(run_dir):
                cfg["resume"] = True
                log(f"  {stage}: a checkpoint of an unfinished run exists: resumed")
            where.mkdir(parents=True, exist_ok=True)
            (where / "train.yaml").write_text(yaml.safe_dump(cfg, sort_keys=True), encoding="utf-8")
        elif stage == "index":
            if _index_built(cell) == _index_args(cell.spec):
                log(f"  index: built before with the same index_args, kept ({base / 'index'})")
                continue
            (base / "index.done").unlink(missing_ok=True)  # built with other index_args (or unknown): rebuilt
        else:
            shutil.rmtree(cell.dir / "lm_eval", ignore_errors=True)  # an earlier, failed evaluation: not mixed in
        log(f"  {stage}: {_shown(argv, out)}")
        rc, tail = _run(argv, where / f"{stage}.log", env, timeout_s)
        got = {"status": "finished" if rc == 0 else "failed", "stage": stage, "returncode": rc, "reason": tail,
               "log": os.path.relpath(where / f"{stage}.log", cell.dir)}
        if stage != "eval":
            shared[key] = got
        if rc != 0:
            return failed(**{k: v for k, v in got.items() if k != "status"})
        if stage == "index":
            (base / "index.done").write_text(json.dumps({"index_args": _index_args(cell.spec), "log_tail": tail},
                                                        indent=1) + "\n", encoding="utf-8")
        if stage in ("train", "psv"):  # the training run's own record: data hash, config, seeds, versions
            try:
                records.write_for_run(run_dir, plan.get("data_dir"))
            except records.RecordError as e:
                log(f"  {stage} record: {e}")
    _flatten(cell.dir / "lm_eval")
    res = results_of(cell)
    if not res:
        return failed(stage="eval", reason="lm_eval exited 0 but wrote no results_*.json")
    try:
        rec = records.write_for_results(res[-1], plan.get("data_dir"),
                                        reproduce={"plan": plan["name"], "method": cell.method, "task": cell.task,
                                                   "launch": launch_of(plan, cell.spec) if cell.spec.get("trainer")
                                                   else None, "eval_backend": backend(plan),
                                                   "commands": [c.replace(str(out), "<out>") for c in shown]})
    except records.RecordError as e:
        return failed(stage="record", reason=str(e))
    st = {"status": "finished", "result": res[-1].relative_to(cell.dir).as_posix(),
          "record": rec.relative_to(cell.dir).as_posix(), "seconds": round(time.time() - t0, 1)}
    _status(cell, **st, commands=shown)
    return st


# --- the dry run's estimate ------------------------------------------------------------------------
# Every number below is an assumption, printed with the estimate; a plan's `estimate:` block overrides any.
ESTIMATE = {
    "problems": {},            # task -> problems evaluated; else eval.limit, else the paper's count of
                               # the task's benchmark (r3bench.eval.data.BENCHMARKS), else default_problems
    "default_problems": 250,
    "prompt_tokens": 400,      # one generation's prompt: question, seven-tag instructions, chat template
    "gen_tokens": None,        # one generation's output; None: eval.gen_kwargs max_gen_toks, else 768 (the
                               # structured tasks' cap): an upper bound, every answer runs to the cap
    "train_tokens_per_s": 6000,  # LoRA forward + backward of a 1B-parameter model on one GPU (bf16)
    "gen_tokens_per_s": {"hf": 1000, "vllm": 5000, "local-chat-completions": 0},  # generated tokens/s of a
                               # 1B model on one GPU, batched; 0: the server's GPUs, not counted
    "params_b": {},            # model -> billions of parameters; else read from the name (1.5B, 3B), else 1
    "judge_prompt_tokens": 1500,  # one judge call: question, the solution's steps, reference, instructions
    "judge_completion_tokens": 150,
    "judge_price_in": 2.5,     # dollars per million judge tokens (GPT-4o's list price when this was written)
    "judge_price_out": 10.0,
}


def _assumptions(plan: dict) -> dict:
    got = {**ESTIMATE, **(plan.get("estimate") or {})}
    bad = sorted(set(plan.get("estimate") or {}) - set(ESTIMATE))
    if bad:
        raise PlanError(f"unknown estimate field(s) {bad}; known: {sorted(ESTIMATE)}")
    return got


def _params_b(model: str, a: dict) -> float:
    import re

    if model in a["params_b"]:
        return float(a["params_b"][model])
    m = re.search(r"(\d+(?:\.\d+)?)\s*([bBmM])(?![a-zA-Z])", model.rsplit("/", 1)[-1])  # 1.5B, 135M
    return (float(m.group(1)) / (1000 if m.group(2) in "mM" else 1)) if m else 1.0


def _gen_toks(plan: dict, a: dict) -> int:
    if a["gen_tokens"]:
        return int(a["gen_tokens"])
    for kv in str((plan.get("eval") or {}).get("gen_kwargs") or "").split(","):
        k, _, v = kv.partition("=")
        if k.strip() == "max_gen_toks" and v.strip().isdigit():
            return int(v)
    return 768


def _trainer_fields(trainer: str, cfg: dict) -> dict:
    """The trainer's Config defaults, then the plan's fields."""
    import dataclasses
    import importlib

    try:
        cls = importlib.import_module(f"trainers.{trainer}").Config
        return {**{f.name: f.default for f in dataclasses.fields(cls)}, **cfg}
    except ImportError:
        return dict(cfg)


# a generation cap of 0 is derived from the pool at run time (the longest reference solution plus a margin,
# trainers/rl_sampling.py); the estimate takes the cap the trainers had before (the procgen pools' longest
# references are 144-371 tokens, plus the 128-token margin)
DERIVED_CAP_ESTIMATE = 512


def _train_cost(trainer: str, cfg: dict, a: dict) -> dict:
    """Tokens, generated tokens and judge calls of one training run (formulas in the docstring of `estimate`)."""
    f = _trainer_fields(trainer, cfg)
    steps, batch, accum = int(f.get("max_steps", 100)), int(f.get("batch_size", 1)), int(f.get("grad_accum", 1))
    judge = 0
    if trainer == "stepfix":  # per problem: an attempt and `revisions` revisions, each verified
        gen = int(f.get("max_new_tokens") or DERIVED_CAP_ESTIMATE)
        per = 1 + max(1, int(f.get("revisions") or 1))
        generated = steps * accum * per * batch * gen
        trained = steps * accum * per * batch * (a["prompt_tokens"] + gen)
        judge = steps * accum * per * batch if f.get("verifier") == "judge" else 0
    elif trainer == "grpo":  # batch_size completions per step (groups included), each verified
        gen = int(f.get("max_completion_length") or DERIVED_CAP_ESTIMATE)
        generated = steps * accum * batch * gen
        trained = steps * accum * batch * (a["prompt_tokens"] + gen)
        judge = steps * accum * batch if f.get("verifier") == "judge" else 0
    else:  # sft, psv (exact labels), dpo (chosen + rejected): sequences of up to max_length
        generated = 0
        trained = steps * accum * batch * int(f.get("max_length", 1024)) * (2 if trainer == "dpo" else 1)
    return {"trained": trained, "generated": generated, "judge": judge}


def _eval_cost(plan: dict, cell: Cell, a: dict) -> dict:
    ev = plan.get("eval") or {}
    n = a["problems"].get(cell.task) or paper_count(cell.task) or a["default_problems"]
    if ev.get("limit"):
        n = min(n, int(float(ev["limit"]))) if float(ev["limit"]) >= 1 else max(1, round(n * float(ev["limit"])))
    ma = _cell_model_args(plan, cell.spec)
    lm = cell.spec.get("lm_eval_model")
    gens, judge = 1, 0
    if lm in VERIFIER_ARGS:  # stepco: the first attempt + at most `rounds` revisions; bestofn: n samples
        key, default = VERIFIER_ARGS[lm]  # stepco names a verifier (and rounds), bestofn a scorer (and n)
        gens = 1 + int(ma.get("rounds", 5)) if key == "verifier" else int(ma.get("n", 10))
        if ma.get(key, default) == "judge":
            judge = n * gens
    gen = _gen_toks(plan, a)
    return {"problems": n, "generated": n * gens * gen, "tokens": n * gens * (a["prompt_tokens"] + gen),
            "judge": judge}


def _rate(a: dict, lm_backend: str) -> float:
    r = a["gen_tokens_per_s"]
    return float(r.get(lm_backend, 0) if isinstance(r, dict) else r)


def estimate(plan: dict, grid: list[Cell], out: Path) -> list[dict]:
    """Per cell: GPU-hours, judge calls, judge tokens and model tokens (prompt + generated + trained).

    A training run is counted once, on the first cell that makes it (the model's other tasks reuse it):
    sft / psv: max_steps x batch_size x grad_accum x max_length tokens (dpo x 2: chosen and rejected);
    stepfix: per problem an attempt and a revision of max_new_tokens, both verified, so judge calls =
    2 x batch_size x grad_accum x max_steps with verifier judge; grpo: batch_size completions of
    max_completion_length per step (judge calls = batch_size x max_steps with verifier judge).
    Evaluation: problems x generations x (prompt_tokens + gen_tokens), generations = 1, 1 + rounds
    (stepco) or n (bestofn), each judged when the verifier / scorer is judge. GPU seconds = trained
    tokens / train_tokens_per_s + generated tokens / gen_tokens_per_s, both per 1B parameters
    (scaled by the model's size). Not counted: RAG index building and PSV scoring (CPU / one forward
    pass), model loading, the API server's or judge's GPUs."""
    a = _assumptions(plan)
    gen_rate = _rate(a, backend(plan))
    seen, rows = set(), []
    for c in grid:
        size = _params_b(c.model, a)
        gpu_s = judge = tokens = 0.0
        stages = []
        for stage, _ in c.commands:
            if stage in ("train", "psv"):
                key = (stage, c.model, c.method if stage == "train" else "")
                if key in seen:
                    continue
                seen.add(key)
                cfg = train_config(plan, out, c.model, c.method) if stage == "train" else \
                    psv_config(plan, out, c.model, c.method)
                trainer = c.spec["trainer"] if stage == "train" else "psv"
                t = _train_cost(trainer, cfg, a)
                gpu_s += t["trained"] * size / a["train_tokens_per_s"]
                rate = _rate(a, "vllm" if _trainer_fields(trainer, cfg).get("use_vllm") else "hf")
                gpu_s += t["generated"] * size / rate if rate else 0  # stepfix / grpo generate with hf unless use_vllm
                judge += t["judge"]
                tokens += t["trained"]
                stages.append(stage)
        e = _eval_cost(plan, c, a)
        gpu_s += e["generated"] * size / gen_rate if gen_rate else 0
        judge += e["judge"]
        tokens += e["tokens"]
        rows.append({"cell": c, "stages": stages + ["eval"], "problems": e["problems"], "gpu_h": gpu_s / 3600,
                     "judge_calls": int(judge), "tokens": int(tokens),
                     "judge_tokens": int(judge * (a["judge_prompt_tokens"] + a["judge_completion_tokens"])),
                     "judge_usd": judge * (a["judge_prompt_tokens"] * a["judge_price_in"]
                                           + a["judge_completion_tokens"] * a["judge_price_out"]) / 1e6})
    return rows


def estimate_text(plan: dict, rows: list[dict]) -> str:
    """The estimate as markdown: assumptions, totals per method and for the grid, then a row per cell."""
    a = _assumptions(plan)
    lm_backend = backend(plan)
    models = list(dict.fromkeys(r["cell"].model for r in rows))
    methods = list(dict.fromkeys(r["cell"].method for r in rows))
    tasks = list(dict.fromkeys(r["cell"].task for r in rows))
    gr = a["gen_tokens_per_s"]
    out = [f"# plan {plan['name']}: {len(models)} models x {len(methods)} methods x {len(tasks)} tasks = "
           f"{len(rows)} cells; evaluation with --model {lm_backend}",
           "# estimate (assumptions; a plan's `estimate:` block overrides them): "
           f"prompt {a['prompt_tokens']} and output {_gen_toks(plan, a)} tokens per generation (the output cap: "
           f"an upper bound); {a['default_problems']} problems per task unless the plan's estimate.problems "
           f"or eval.limit say; training {a['train_tokens_per_s']} tokens/s and generation "
           f"{gr.get(lm_backend, 0) if isinstance(gr, dict) else gr} tokens/s per GPU for a 1B model, scaled by "
           "its size (read from the name, else estimate.params_b, else 1B); sft/psv steps x batch x grad_accum x "
           "max_length tokens (dpo x 2); stepfix an attempt + a revision per problem, judge calls = 2 x batch x "
           "grad_accum x steps with verifier judge; grpo batch completions per step (judge calls = batch x steps "
           "with verifier judge); stepco 1 + rounds and bestofn n generations per problem, each judged with "
           f"the judge verifier; one judge call = {a['judge_prompt_tokens']} prompt + "
           f"{a['judge_completion_tokens']} completion tokens at ${a['judge_price_in']} / ${a['judge_price_out']} "
           "per million; stepfix / grpo generate with hf (vllm with use_vllm: true); "
           "a training run is counted on the first cell "
           "that makes it; not counted: model loading, RAG indexing, PSV scoring, the judge's GPUs",
           "", "Totals (the cells follow):", "",
           "| method | cells | GPU-h | judge calls | judge tokens | judge $ | tokens |", "|---|---|---|---|---|---|---|"]
    # the totals first: a grid of 160 cells is 160 rows, and the sums are what a reader looks for
    for m in methods + [None]:
        rs = [r for r in rows if m is None or r["cell"].method == m]
        out.append(f"| {m or '**total**'} | {len(rs)} | {sum(r['gpu_h'] for r in rs):.1f} | "
                   f"{sum(r['judge_calls'] for r in rs):,} | {sum(r['judge_tokens'] for r in rs):,} | "
                   f"{sum(r['judge_usd'] for r in rs):.0f} | "
                   f"{sum(r['tokens'] for r in rs):,} |")
    out += ["", "| # | model | method | task | launch | stages | problems | GPU-h | judge calls | tokens |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for i, r in enumerate(rows, start=1):
        c = r["cell"]
        launch = launch_of(plan, c.spec) if c.spec.get("trainer") or c.spec.get("psv") is not None else "-"
        out.append(f"| {i} | {c.model} | {c.method} | {c.task} | {launch} | {'+'.join(r['stages'])} | "
                   f"{r['problems']} | {r['gpu_h']:.2f} | {r['judge_calls']:,} | {r['tokens']:,} |")
    return "\n".join(out) + "\n"


def summary_table(rows: list[tuple[Cell, dict]]) -> str:
    md = ["| model | method | task | status | stage | note |", "|---|---|---|---|---|---|"]
    for c, st in rows:
        note = (st.get("reason") or "").strip().splitlines()[-1:] if st.get("status") == "failed" else \
            [(f"{st['seconds']} s" if st.get("seconds") is not None else "")
             + ("; skipped on this run (result + record exist)" if st.get("skipped") else "")]
        md.append(f"| {model_name(c.model)} | {method_label(c.method)} | {c.task} | {st.get('status')} | "
                  f"{st.get('stage', '')} | "
                  f"{(note[0] if note else '').replace('|', '/')[:160]} |")
    return "\n".join(md) + "\n"


def select_methods(plan: dict, names) -> None:
    """Keep only the named methods of the plan (and what they start from); PlanError for a name not in it."""
    if not names:
        return
    names = [n.strip() for n in (names.split(",") if isinstance(names, str) else names) if n.strip()]
    bad = [n for n in names if n not in plan["methods"]]
    if bad:
        raise PlanError(f"--methods: {', '.join(bad)} not in plan {plan['name']} (its methods: "
                        f"{', '.join(plan['methods'])}; every method: {', '.join(METHODS)})")
    keep = set()

    def add(m):
        keep.add(m)
        dep = plan["methods"][m].get("init_from")
        if dep in plan["methods"] and dep not in keep:
            add(dep)
    for n in names:
        add(n)
    plan["methods"] = {m: sp for m, sp in plan["methods"].items() if m in keep}


def run(plan_ref: str, out: str | None = None, dry_run: bool = False, log=lambda s: None,
        methods=None) -> int:
    """Run (or, dry_run, list) a plan. Returns 0 when every cell finished, 1 if any failed, 2 for a bad plan.
    Either way the cells and their estimate are printed first."""
    try:
        plan = load_plan(plan_ref)
        select_methods(plan, methods)
        _assumptions(plan)
    except PlanError as e:
        log(f"error: {e}")
        return 2
    out_dir = Path(out or plan.get("out") or f"results/reproduce/{plan['name']}")
    bad = check_train_fields(plan)
    if bad:
        for b in bad:
            log(f"error: {b}")
        return 2
    grid = cells(plan, out_dir)
    log(estimate_text(plan, estimate(plan, grid, out_dir)))
    if dry_run:
        printed = set()
        for i, c in enumerate(grid, start=1):
            done = finished(c)
            log(f"# [{i}/{len(grid)}] {c.model} / {c.method} / {c.task}" + (" (finished: skipped)" if done else ""))
            for stage, argv in c.commands:
                shown = _shown(argv, out_dir)
                if stage != "eval" and shown in printed:
                    continue  # made once, for the first cell that needs it
                printed.add(shown)
                if stage == "train":
                    log(f"# {c.base / 'train.yaml'}: " + json.dumps(train_config(plan, out_dir, c.model, c.method),
                                                                  sort_keys=True))
                if stage == "psv":
                    log(f"# {_psv_dir(out_dir, c.model) / 'train.yaml'}: "
                        + json.dumps(psv_config(plan, out_dir, c.model, c.method), sort_keys=True))
                log(("# " if done else "") + shown)
        return 0
    env = dict(os.environ)
    if plan.get("data_dir"):
        env["R3BENCH_DATA_DIR"] = str(plan["data_dir"])
    rows, shared = [], {}
    for i, c in enumerate(grid, start=1):
        name = f"{c.model} / {c.method} / {c.task}"
        if finished(c):
            log(f"[{i}/{len(grid)}] {name}: finished before, skipped")
            try:
                st = json.loads((c.dir / "cell.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                st = {}
            rows.append((c, {**st, "status": "finished", "stage": "", "skipped": True}))
            continue
        log(f"[{i}/{len(grid)}] {name}")
        st = run_cell(plan, c, out_dir, env, log, shared)
        log(f"  -> {st['status']}" + (f" at {st['stage']}: {st['reason'].splitlines()[-1] if st['reason'] else ''}"
                                      if st["status"] != "finished" else ""))
        rows.append((c, st))
    _results(plan, out_dir, rows, log)
    return 0 if all(st["status"] == "finished" for _, st in rows) else 1


def _results(plan: dict, out: Path, rows, log) -> None:
    (out / "reproduce.md").write_text(f"# r3bench reproduce: {plan['name']}\n\n" + summary_table(rows),
                                      encoding="utf-8")
    problems = []
    ref = plan.get("reference", leaderboard.REFERENCE)
    md, csv_path, n = leaderboard.write([out], out, reference=ref, problems=problems)
    log(f"leaderboard: {n} cells -> {md}, {csv_path}")
    for p in problems:
        log(f"  leaderboard: {p}")
    failed = []  # plots and error analysis: a failure is recorded in reproduce.md, the rest still runs
    try:
        png = plots.accuracy_bars(leaderboard.collect([out]), out / "accuracy.png")
        curves = plots.training_curves(sorted(out.glob("*/*/train")) + sorted(out.glob("*/psv")),
                                       out / "training_curves.png")
        for x in (png, curves):
            if x:
                log(f"plot -> {x}")
    except ImportError as e:
        failed.append(f"plots skipped: {e} (pip install matplotlib)")
    except Exception as e:  # noqa: BLE001 - the grid's results are written whatever a plot does
        failed.append(f"plots failed: {type(e).__name__}: {str(e)[:300]}")
    try:
        emd, _, epng, verdicts = errors.write([out], out / "errors")
        log(f"error analysis: {len(verdicts)} samples -> {emd}" + (f", {epng}" if epng else ""))
    except Exception as e:  # noqa: BLE001
        failed.append(f"error analysis failed: {type(e).__name__}: {str(e)[:300]}")
    for f in failed:
        log(f)
    if failed:
        with open(out / "reproduce.md", "a", encoding="utf-8") as fh:
            fh.write("\nProblems after the grid:\n\n" + "".join(f"- {portable(f)}\n" for f in failed))
