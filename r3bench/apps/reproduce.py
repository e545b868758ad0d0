"""`r3bench reproduce PLAN [--dry-run]`: a grid of models x methods x tasks, end to end.

For each (model, method) cell of the plan, in order:

1. train, where the method trains: `python -m trainers.<sft|dpo|stepfix|grpo> --config CELL/train.yaml`
   (fields: the plan's `train` block, then the method's own `train` block; `init_from: sft` starts
   from the same model's SFT adapter, as the paper's stepfix does); RAG builds its retrieval index
   instead: `python -m trainers.rag --out CELL/index [index_args]` (then `index=CELL/index`, and
   `source=all` when index_args index worked solutions - `--procgen_n N`, `--solutions F` - unless the
   method's model_args set `source`; CELL/index.done keeps the index_args, and other index_args rebuild it);
2. evaluate with plain lm-eval over all the plan's tasks:
   `python -m lm_eval --model hf --model_args pretrained=M[,peft=ADAPTER] --tasks ... --output_path
   CELL/lm_eval --log_samples ...`, or `--model r3-rag|r3-stepco|r3-bestofn --model_args
   inner=hf,pretrained=M,...` for the strategy methods (r3bench/eval/strategies/); no stage trains a
   PSV, so a stepco method with verifier psv (the default) or a bestofn method with scorer=psv must name
   one in its model_args (`psv_model=DIR`, DIR = a `python -m trainers.psv` OUTPUT_DIR/psv_model) or
   R3BENCH_PSV_MODEL must be set: otherwise the plan is refused (PlanError) before anything runs;
3. write the run record beside lm-eval's results file (r3bench/results/records.py).

Then the leaderboard (OUT/leaderboard.md, .csv), the accuracy and training-curve plots, the error
analysis of the structured tasks (OUT/errors/) and OUT/reproduce.md (status of every cell).

Resumable: a cell whose results file and record exist is skipped; a finished training run
(run.json status finished + final/) is not repeated. A failing command is recorded in
CELL/cell.json with its stage, exit code and the tail of its log (CELL/train.log, CELL/eval.log), and
the grid goes on. `--dry-run` lists the exact commands and writes nothing.

A plan is a YAML file, or the name of one shipped in r3bench/apps/plans/ (`paper`, `cpu`):

    name: cpu
    out: results/reproduce/cpu       # --out overrides
    data_dir: null                   # benchmark data dir (default $R3BENCH_DATA_DIR)
    models: [r3bench/smollm2-135m-instruct]
    methods: [cot, sft, stepfix]     # or a mapping method -> options (train:, init_from:, model_args:)
    tasks: [r3_procgen]              # a list of task names (or one name)
    eval: {device: cpu, batch_size: 8, limit: 3, gen_kwargs: "max_gen_toks=96", apply_chat_template: true}
    train: {max_steps: 2, batch_size: 2, eval_tasks: ""}   # trainers' Config fields, for every trainer
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
from r3bench.results import errors, leaderboard, plots, records
from r3bench.results.cells import model_args, model_name
from r3bench.results.records import portable, record_path

# method -> how it is made: a trainer (and what it starts from) or an lm-eval strategy wrapper
# (index: python -m trainers.rag builds CELL/index first); the method table is r3bench/core/methods.py
METHODS = RUNNABLE
PLAN_KEYS = {"name", "out", "data_dir", "models", "methods", "tasks", "eval", "train", "timeout_s", "reference",
             "description"}
EVAL_KEYS = {"device", "batch_size", "limit", "gen_kwargs", "apply_chat_template", "seed", "num_fewshot",
             "model_args", "extra_args"}


class PlanError(ValueError):
    """The plan cannot be run as written: the message says which field and why."""


@dataclass
class Cell:
    model: str
    method: str
    spec: dict
    dir: Path
    commands: list = field(default_factory=list)  # (stage, argv)


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
    from r3bench.eval.lmeval import unknown_tasks_message

    bad = unknown_tasks_message(plan["tasks"])  # before anything trains or loads a model
    if bad:
        raise PlanError(f"plan field 'tasks': {bad}")
    for key in ("eval", "train"):
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
        for k, typ, what in (("train", dict, "a mapping field -> value"), ("index_args", list, "a list of arguments"),
                             ("init_from", str, "a method name")):
            if (opts or {}).get(k) is not None and not isinstance(opts[k], typ):
                raise PlanError(f"method {m!r}: {k!r} must be {what}, got {type(opts[k]).__name__}")
    plan["methods"] = {m: {**METHODS[m], **(opts or {})} for m, opts in methods.items()}
    bad = sorted(set(plan.get("eval") or {}) - EVAL_KEYS)
    if bad:
        raise PlanError(f"unknown eval field(s) {bad}; known: {sorted(EVAL_KEYS)}")
    for m, spec in plan["methods"].items():
        _check_psv(plan, m, spec)
    plan.setdefault("name", p.stem if p.is_file() else name_or_path)
    return plan


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
    if ma.get(key, default) == "psv" and not ma.get("psv_model") and not os.environ.get("R3BENCH_PSV_MODEL"):
        raise PlanError(f"method {method!r}: {key}=psv" + (" (the default)" if key not in ma else "")
                        + " needs a trained PSV: add psv_model=DIR to its "
                        f"model_args (train one with python -m trainers.psv; DIR = its OUTPUT_DIR/psv_model), or "
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


def check_train_fields(plan: dict) -> list[str]:
    """Unknown trainer fields in the plan (the trainers' Config dataclasses are the schema)."""
    import dataclasses
    import importlib

    problems = []
    for m, spec in plan["methods"].items():
        if not spec.get("trainer"):
            continue
        try:
            cls = importlib.import_module(f"trainers.{spec['trainer']}").Config
        except ImportError as e:
            problems.append(f"method {m}: cannot import trainers.{spec['trainer']} ({e}): pip install 'r3bench[train]'")
            continue
        names = {f.name for f in dataclasses.fields(cls)}
        bad = sorted(set(plan.get("train") or {}) - names) + sorted(set(spec.get("train") or {}) - names)
        if bad:
            problems.append(f"method {m}: unknown trainers.{spec['trainer']} field(s) {bad}")
    return problems


def _adapter(out: Path, model: str, method: str) -> Path:
    return out / slug(model) / method / "train" / "final"


def train_config(plan: dict, out: Path, model: str, method: str) -> dict:
    spec = plan["methods"][method]
    cfg = {**(plan.get("train") or {}), **(spec.get("train") or {}), "model": model,
           "output_dir": str(out / slug(model) / method / "train")}
    if spec.get("init_from"):
        cfg["init_adapter"] = str(_adapter(out, model, spec["init_from"]))
    return cfg


def eval_command(plan: dict, cell: Cell, out: Path) -> list[str]:
    ev = dict(plan.get("eval") or {})
    spec = cell.spec
    ma = [f"pretrained={cell.model}"]
    if spec.get("trainer"):
        ma.append(f"peft={cell.dir / 'train' / 'final'}")
    if spec.get("index"):
        ma.append(f"index={cell.dir / 'index'}")
    for extra in (ev.get("model_args"), spec.get("model_args")):
        if extra:
            ma.append(str(extra))
    if spec.get("index") and _indexes_solutions(spec) and "source" not in _cell_model_args(plan, spec):
        ma.append("source=all")  # the worked solutions built into the index are retrieved too (default: formulas)
    lm = spec.get("lm_eval_model") or "hf"
    if lm != "hf":
        ma.insert(0, "inner=hf")
    cmd = [sys.executable, "-m", "lm_eval", "--model", lm, "--model_args", ",".join(ma),
           "--tasks", ",".join(plan["tasks"]), "--output_path", str(cell.dir / "lm_eval"), "--log_samples"]
    for key in ("device", "batch_size", "limit", "gen_kwargs", "seed", "num_fewshot"):
        if ev.get(key) is not None:
            cmd += [f"--{key}", str(ev[key])]
    if ev.get("apply_chat_template", True):
        cmd.append("--apply_chat_template")
    cmd += [str(a) for a in (ev.get("extra_args") or [])]
    return cmd


def cells(plan: dict, out: Path) -> list[Cell]:
    got = []
    for model in plan["models"]:
        for method in _ordered(plan["methods"]):
            spec = plan["methods"][method]
            c = Cell(model, method, spec, out / slug(model) / method)
            if spec.get("trainer"):
                c.commands.append(("train", [sys.executable, "-m", f"trainers.{spec['trainer']}",
                                             "--config", str(c.dir / "train.yaml")]))
            if spec.get("index"):
                c.commands.append(("index", [sys.executable, "-m", "trainers.rag", "--out", str(c.dir / "index"),
                                             *_index_args(spec)]))
            c.commands.append(("eval", eval_command(plan, c, out)))
            got.append(c)
    return got


def results_of(cell: Cell) -> list[Path]:
    return sorted((cell.dir / "lm_eval").rglob("results_*.json")) if (cell.dir / "lm_eval").is_dir() else []


def finished(cell: Cell) -> bool:
    return any(record_path(r).is_file() for r in results_of(cell))


def _trained(cell: Cell) -> bool:
    run = cell.dir / "train" / "run.json"
    try:
        return json.loads(run.read_text()).get("status") == "finished" and (cell.dir / "train" / "final").is_dir()
    except (OSError, ValueError):
        return False


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
    """The index_args CELL/index was built with (CELL/index.done), None when unknown or not built."""
    try:
        got = json.loads((cell.dir / "index.done").read_text(encoding="utf-8")).get("index_args")
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
    (cell.dir / "cell.json").write_text(json.dumps({"model": cell.model, "method": cell.method, **kw},
                                                   indent=1, default=str) + "\n", encoding="utf-8")


def run_cell(plan: dict, cell: Cell, out: Path, env: dict, log=lambda s: None) -> dict:
    """Train (if the method trains), evaluate, record. Returns the cell's status dict (also in cell.json)."""
    import yaml


    t0 = time.time()
    shown = [_shown(a, out) for _, a in cell.commands]
    cell.dir.mkdir(parents=True, exist_ok=True)
    timeout_s = plan.get("timeout_s")
    for stage, argv in cell.commands:
        if stage == "train":
            if _trained(cell):
                log(f"  train: finished before, kept ({cell.dir / 'train'})")
                continue
            cfg = train_config(plan, out, cell.model, cell.method)
            if cfg.get("init_adapter") and not Path(cfg["init_adapter"]).is_dir():
                st = {"status": "failed", "stage": "train", "reason": f"needs the {cell.spec['init_from']} adapter "
                      f"{cfg['init_adapter']}, which is missing ({cell.spec['init_from']} failed or is not in the plan)"}
                _status(cell, **st, commands=shown)
                return st
            (cell.dir / "train.yaml").write_text(yaml.safe_dump(cfg, sort_keys=True), encoding="utf-8")
        elif stage == "index":
            if _index_built(cell) == _index_args(cell.spec):
                log(f"  index: built before with the same index_args, kept ({cell.dir / 'index'})")
                continue
            (cell.dir / "index.done").unlink(missing_ok=True)  # built with other index_args (or unknown): rebuilt
        else:
            import shutil

            shutil.rmtree(cell.dir / "lm_eval", ignore_errors=True)  # an earlier, failed evaluation: not mixed in
        log(f"  {stage}: {_shown(argv, out)}")
        rc, tail = _run(argv, cell.dir / f"{stage}.log", env, timeout_s)
        if rc != 0:
            st = {"status": "failed", "stage": stage, "returncode": rc, "reason": tail, "log": f"{stage}.log"}
            _status(cell, **st, commands=shown, seconds=round(time.time() - t0, 1))
            return st
        if stage == "index":
            (cell.dir / "index.done").write_text(json.dumps({"index_args": _index_args(cell.spec), "log_tail": tail},
                                                            indent=1) + "\n", encoding="utf-8")
        if stage == "train":  # the training run's own record: data hash, config, seeds, versions
            try:
                records.write_for_run(cell.dir / "train", plan.get("data_dir"))
            except records.RecordError as e:
                log(f"  train record: {e}")
    _flatten(cell.dir / "lm_eval")
    res = results_of(cell)
    if not res:
        st = {"status": "failed", "stage": "eval", "reason": "lm_eval exited 0 but wrote no results_*.json"}
        _status(cell, **st, commands=shown)
        return st
    try:
        rec = records.write_for_results(res[-1], plan.get("data_dir"),
                                        reproduce={"plan": plan["name"], "method": cell.method,
                                                   "commands": [c.replace(str(out), "<out>") for c in shown]})
    except records.RecordError as e:
        st = {"status": "failed", "stage": "record", "reason": str(e)}
        _status(cell, **st, commands=shown)
        return st
    st = {"status": "finished", "result": res[-1].relative_to(cell.dir).as_posix(),
          "record": rec.relative_to(cell.dir).as_posix(), "seconds": round(time.time() - t0, 1)}
    _status(cell, **st, commands=shown)
    return st


def summary_table(rows: list[tuple[Cell, dict]]) -> str:
    md = ["| model | method | status | stage | note |", "|---|---|---|---|---|"]
    for c, st in rows:
        note = (st.get("reason") or "").strip().splitlines()[-1:] if st.get("status") == "failed" else \
            [(f"{st['seconds']} s" if st.get("seconds") is not None else "")
             + ("; skipped on this run (result + record exist)" if st.get("skipped") else "")]
        md.append(f"| {model_name(c.model)} | {method_label(c.method)} | {st.get('status')} | {st.get('stage', '')} | "
                  f"{(note[0] if note else '').replace('|', '/')[:160]} |")
    return "\n".join(md) + "\n"


def run(plan_ref: str, out: str | None = None, dry_run: bool = False, log=lambda s: None) -> int:
    """Run (or, dry_run, list) a plan. Returns 0 when every cell finished, 1 if any failed, 2 for a bad plan."""
    try:
        plan = load_plan(plan_ref)
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
    if dry_run:
        for c in grid:
            done = finished(c)
            log(f"# {c.model} / {c.method}" + (" (finished: skipped)" if done else ""))
            if c.spec.get("trainer"):
                log(f"# {c.dir / 'train.yaml'}: " + json.dumps(train_config(plan, out_dir, c.model, c.method),
                                                             sort_keys=True))
            for stage, argv in c.commands:
                log(("# " if done else "") + _shown(argv, out_dir))
        return 0
    env = dict(os.environ)
    if plan.get("data_dir"):
        env["R3BENCH_DATA_DIR"] = str(plan["data_dir"])
    rows = []
    for i, c in enumerate(grid, start=1):
        if finished(c):
            log(f"[{i}/{len(grid)}] {c.model} / {c.method}: finished before, skipped")
            try:
                st = json.loads((c.dir / "cell.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                st = {}
            rows.append((c, {**st, "status": "finished", "stage": "", "skipped": True}))
            continue
        log(f"[{i}/{len(grid)}] {c.model} / {c.method}")
        st = run_cell(plan, c, out_dir, env, log)
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
        curves = plots.training_curves(sorted(out.glob("*/*/train")), out / "training_curves.png")
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
