"""The trainers in two processes on the CPU (torchrun, gloo) against one process at the same global batch.

Two processes of batch B and one process of batch 2B see the same problems in a step (the training
set is cut to one global batch, so every step is the whole set whatever the order); they must give
the same logged loss and the same trained weights within LOSS_RTOL and WEIGHT_ATOL (measured:
differences of 1e-7 relative in the loss and at most 1.2e-6 in a weight after 2 AdamW steps at
lr 1e-3, where a step moves a weight by ~1e-3; studies/results/distributed/summary.md).

Stepfix and GRPO sample from a random tiny model, which no seed makes independent of how a batch
is split over ranks: there the GENERATION, VERIFIER and REWARD DOUBLES of tests/trainers/dist_doubles.py
stand in (named so), and everything else is the real code. In stepfix's first step rank 1's whole
micro-batch is skipped (the verifier double finds its y1 right): before the fix gloo failed there
with "Received data size doesn't match expected size".

`torchrun --nproc_per_node 2` is used because `accelerate launch --cpu --num_processes 2` starts one
process on these machines (../shared/docs/FACTS.md); so does `accelerate launch` with a config whose
distributed_type is MULTI_CPU (accelerate's simple launcher needs mpirun for more). The accelerate
route is `--config_file trainers/configs/accelerate/multi_cpu.yaml` (MULTI_GPU launcher, gloo on the
CPU; its comment says why), tested for SFT and stepfix."""
from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

import dist_doubles  # noqa: E402  (tests/trainers/ is on sys.path: pytest's rootdir-less import mode)
from trainers import distributed, dpo, grpo, sft, stepfix  # noqa: E402
from trainers.core.config import make  # noqa: E402
from trainers.core.records import checkpoint_problems  # noqa: E402
from trainers.errors import ConfigError, NonFiniteLoss  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
LOSS_RTOL = 1e-5
# 10% of one AdamW step at lr 1e-3. DPO measured 1.1e-5 on one CPU: AdamW scales near-zero gradients up, so
# the all-reduce's other summation order shows in the weights by an amount that depends on the CPU's kernels
# (AVX2 / AVX-512 / AMX); a real difference in what is trained moves them by whole steps
WEIGHT_ATOL = 1e-4


# the one-process run on one thread, as each torchrun process (tests/trainers/conftest.py)
pytestmark = pytest.mark.usefixtures("one_thread")


def _env(**extra) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(OMP_NUM_THREADS="1", **extra)
    env.pop("RANK", None)
    env.pop("WORLD_SIZE", None)
    return env


def torchrun(target: list[str], args: list[str], timeout: int = 300, **env) -> subprocess.CompletedProcess:
    """`torchrun --standalone --nproc_per_node 2 TARGET ARGS` (a free port per run)."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", *target, *args]
    return subprocess.run(cmd, cwd=REPO, env=_env(**env), capture_output=True, text=True, timeout=timeout)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def accelerate_launch(config: str, target: list[str], args: list[str], timeout: int = 300, launcher_args=(),
                      **env) -> subprocess.CompletedProcess:
    """`accelerate launch --config_file trainers/configs/accelerate/CONFIG [LAUNCHER_ARGS] TARGET ARGS`
    (a free port per run)."""
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--config_file",
           str(REPO / "trainers" / "configs" / "accelerate" / config), "--main_process_port", str(free_port()),
           *launcher_args, *target, *args]
    return subprocess.run(cmd, cwd=REPO, env=_env(**env), capture_output=True, text=True, timeout=timeout)


def flags(d: dict) -> list[str]:
    return [x for k, v in d.items() for x in (f"--{k}", str(v))]


def common_kw(tiny, out, **kw) -> dict:
    d = dict(model=tiny, output_dir=str(out), max_steps=2, save_steps=10, report_to="none", lora_dropout=0.0,
             learning_rate=1e-3, max_length=4096, seed=0, eval_tasks="")
    d.update(kw)
    return d


def losses(out: Path) -> list[float]:
    return [json.loads(x)["loss"] for x in (out / "metrics.jsonl").read_text().splitlines() if '"loss"' in x]


def weights(out: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(out / "final" / "adapter_model.safetensors"))


def one_process_with_the_same_skips(recs, kw, one, tmp_path, monkeypatch):
    """stepfix in one process at the two-process run's global batch (batch 4), its verifier double
    skipping the problems the two-process run skipped (its records `recs`), into `one`."""
    skip_file = tmp_path / "skip.json"
    skip_file.write_text(json.dumps([[r["step"], r["id"]] for r in recs if "> tau" in r.get("skip_reason", "")]))
    monkeypatch.setenv("R3_SKIP_FILE", str(skip_file))
    stepfix.train(make(stepfix.Config, **{**kw, "output_dir": str(one), "batch_size": 4}),
                  trainer_cls=dist_doubles.stepfix_double_cls())


def assert_same_run(one: Path, two: Path, steps: int = 2):
    l1, l2 = losses(one), losses(two)
    assert len(l1) == len(l2) == steps, (l1, l2)
    for a, b in zip(l1, l2):
        assert math.isclose(a, b, rel_tol=LOSS_RTOL, abs_tol=1e-7), (l1, l2)
    w1, w2 = weights(one), weights(two)
    assert set(w1) == set(w2)
    diff = max(float((w1[k] - w2[k]).abs().max()) for k in w1)
    print(f"two vs one process: loss rel diff {max(abs(a - b) / max(abs(a), 1e-12) for a, b in zip(l1, l2)):.2e}, "
          f"max weight diff {diff:.2e}")
    assert diff <= WEIGHT_ATOL, f"weights differ by {diff}"
    moved = max(float(v.abs().max()) for k, v in w1.items() if "lora_B" in k)
    assert moved > 10 * WEIGHT_ATOL, "the adapter did not move: the comparison would be empty"
    rec = json.loads((two / "run.json").read_text())
    assert rec["status"] == "finished", rec.get("error")
    assert not list(two.glob("run.rank*.json"))


def check(proc: subprocess.CompletedProcess):
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]


# ------------------------------------------------------------------------- two processes vs one

@pytest.mark.slow
def test_sft_two_processes_equal_one_and_export_data_once(tiny, tmp_path):
    """No `data`: the procedural bank is exported into OUTPUT_DIR/data by whichever rank takes the lock
    first; before, rank 1 failed with TrainDataError ("cannot open .../sft.jsonl") while rank 0 exported."""
    two, one = tmp_path / "two", tmp_path / "one"
    kw = common_kw(tiny, two, batch_size=2, grad_accum=1, max_train_samples=4, procgen_n=30, procgen_seed=1)
    check(torchrun(["-m", "trainers.sft"], flags({**kw, "data": ""})))
    assert (two / "data" / "manifest.json").is_file()
    sft.train(make(sft.Config, **{**kw, "output_dir": str(one), "batch_size": 4, "data": str(two / "data")}))
    assert_same_run(one, two)


@pytest.mark.slow
def test_dpo_two_processes_equal_one(tiny, data, tmp_path):
    two, one = tmp_path / "two", tmp_path / "one"
    kw = common_kw(tiny, two, data=data, batch_size=2, max_train_samples=4)
    check(torchrun(["-m", "trainers.dpo"], flags(kw)))
    dpo.train(make(dpo.Config, **{**kw, "output_dir": str(one), "batch_size": 4}))
    assert_same_run(one, two)


@pytest.mark.slow
@pytest.mark.parametrize("launcher", ["torchrun", "accelerate"])
def test_stepfix_two_processes_with_an_all_skipped_rank_equal_one(tiny, data, tmp_path, monkeypatch, launcher):
    """torchrun, and accelerate launch with trainers/configs/accelerate/multi_cpu.yaml (before its fix it
    started one process)."""
    two, one = tmp_path / "two", tmp_path / "one"
    kw = common_kw(tiny, two, data=data, batch_size=2, max_train_samples=4)
    if launcher == "torchrun":
        check(torchrun(["tests/trainers/dist_doubles.py", "stepfix"], flags(kw)))
    else:
        check(accelerate_launch("multi_cpu.yaml", ["tests/trainers/dist_doubles.py", "stepfix"], flags(kw)))
    recs = [json.loads(x) for x in (two / "stepfix_samples.jsonl").read_text().splitlines()]
    # every rank's records, gathered to rank 0's file; rank 1 skipped its whole first micro-batch
    assert sorted({r["rank"] for r in recs}) == [0, 1] and len(recs) == 8
    assert all(r["skipped"] for r in recs if r["step"] == 1 and r["rank"] == 1)
    assert not any(r["skipped"] for r in recs if r["step"] == 1 and r["rank"] == 0)
    logs = [json.loads(x) for x in (two / "metrics.jsonl").read_text().splitlines()]
    first = next(d for d in logs if d.get("step") == 1 and "skip_rate" in d)
    assert first["skip_rate"] == 0.5 and first["revised"] == 2 and first["y1_correct"] == 2  # both ranks' statistics
    one_process_with_the_same_skips(recs, kw, one, tmp_path, monkeypatch)
    assert_same_run(one, two)


@pytest.mark.slow
def test_stepfix_steps_per_generation_two_processes_equal_one(tiny, data, tmp_path, monkeypatch):
    """steps_per_generation 2 under DDP: each rank samples its own two micro-batches (grad_accum 2) in one
    call for y1 and one for y2 (rank 1's step 1 wholly skipped: no y2 call), and the run equals one
    process at the same global batch with steps_per_generation 1."""
    two, one = tmp_path / "two", tmp_path / "one"
    kw = common_kw(tiny, two, data=data, batch_size=2, grad_accum=2, max_train_samples=8)
    gen_log = tmp_path / "gen.jsonl"
    check(torchrun(["tests/trainers/dist_doubles.py", "stepfix"], flags({**kw, "steps_per_generation": 2}),
                   R3_GEN_LOG=str(gen_log)))
    calls = [json.loads(x) for x in gen_log.read_text().splitlines()]
    assert sorted(calls) == [[0, 1, 4], [0, 1, 4], [0, 2, 4], [0, 2, 4], [1, 1, 4], [1, 2, 4], [1, 2, 4]], calls
    recs = [json.loads(x) for x in (two / "stepfix_samples.jsonl").read_text().splitlines()]
    assert len(recs) == 16 and all(r["skipped"] for r in recs if r["step"] == 1 and r["rank"] == 1)
    one_process_with_the_same_skips(recs, kw, one, tmp_path, monkeypatch)
    assert_same_run(one, two)
    assert json.loads((two / "run.json").read_text())["config"]["steps_per_generation"] == 2


@pytest.mark.slow
def test_grpo_two_processes_equal_one(tiny, data, tmp_path, monkeypatch):
    two, one = tmp_path / "two", tmp_path / "one"
    kw = common_kw(tiny, two, data=data, batch_size=2, max_train_samples=2, group_size=2, rewards="length", beta=0.04)
    check(torchrun(["tests/trainers/dist_doubles.py", "grpo"], flags(kw)))
    dist_doubles.install_grpo_doubles(monkeypatch.setattr, monkeypatch.setitem)
    grpo.train(make(grpo.Config, **{**kw, "output_dir": str(one), "batch_size": 4}))
    assert_same_run(one, two)


@pytest.mark.slow
def test_sft_under_accelerate_launch_multi_cpu_config_equal_one(tiny, data, tmp_path):
    """The accelerate-native route of CI: `accelerate launch --config_file .../multi_cpu.yaml`. Before, the
    config (distributed_type MULTI_CPU) went to accelerate's simple launcher, which starts several
    processes only through mpirun: here it started ONE process of batch 2 and the run silently differed
    from one process of batch 4."""
    acc, one = tmp_path / "acc", tmp_path / "one"
    kw = common_kw(tiny, acc, data=data, batch_size=2, grad_accum=1, max_train_samples=4)
    check(accelerate_launch("multi_cpu.yaml", ["-m", "trainers.sft"], flags(kw)))
    sft.train(make(sft.Config, **{**kw, "output_dir": str(one), "batch_size": 4}))
    assert_same_run(one, acc)


@pytest.mark.slow
def test_fsdp_config_on_the_cpu_stops_with_the_reason(tiny, data, tmp_path):
    """FSDP cannot run through the trainers on the CPU: accelerate 1.16 applies the FSDP plugin only to
    GPU-type processes, and under `use_cpu` (MULTI_CPU, gloo) it dropped it without a word - before,
    fsdp.yaml trained here as plain DDP (rank 0 held LlamaForCausalLM with whole Parameters; exit 0).
    Now every rank stops with ConfigError saying so (trainers.distributed.check_launch)."""
    out = tmp_path / "fsdp"
    kw = common_kw(tiny, out, data=data, batch_size=2, grad_accum=1, max_train_samples=4, max_steps=1, lora=False)
    proc = accelerate_launch("fsdp.yaml", ["-m", "trainers.sft"], flags(kw), launcher_args=["--mixed_precision", "no"])
    assert proc.returncode != 0, "fsdp.yaml trained on the CPU (as DDP: accelerate dropped FSDP)"
    rec = json.loads((out / "run.json").read_text())
    assert "asks for FSDP but accelerate runs MULTI_CPU" in rec["error"], rec
    assert not (out / "final").exists()


@pytest.mark.slow
def test_a_non_finite_loss_on_one_rank_stops_every_rank(tiny, data, tmp_path):
    out = tmp_path / "nan"
    kw = common_kw(tiny, out, data=data, batch_size=2, max_train_samples=4, max_steps=1)
    rc, log = torchrun_bounded(["tests/trainers/dist_doubles.py", "stepfix"], flags(kw), timeout=240, R3_NAN_RANK="1")
    assert rc is not None and rc != 0, log[-4000:]
    codes = sorted(int(c) for c in re.findall(r"exitcode\s*:\s*(-?\d+) \(pid", log))
    assert codes == [2, 2], f"exit codes {codes}: every rank ends with the non-finite loss's 2\n" + log[-4000:]
    rec = json.loads((out / "run.json").read_text())
    assert rec["status"] == "non_finite_loss" and "rank 1: nan" in rec["error"], rec
    assert not (out / "final").exists()


def torchrun_bounded(target: list[str], args: list[str], timeout: int, **env) -> tuple[int | None, str]:
    """torchrun as `torchrun` does it, in a session of its own: on the timeout every process of it is
    killed (a rank hanging in a collective outlives a killed torchrun) and the return code is None."""
    import signal

    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", *target, *args]
    p = subprocess.Popen(cmd, cwd=REPO, env=_env(**env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return None, out


@pytest.mark.slow
def test_a_judge_budget_spent_on_one_rank_stops_every_rank(tiny, data, tmp_path):
    """Only rank 1's judge has spent its budget, from step 2 on (the JUDGE BUDGET HOOK of the verifier
    double, tests/trainers/dist_doubles.py: JudgeBudgetExceeded raised inside verify, as the judge raises it).
    Before, rank 1 stopped alone while rank 0 went on into the next collective, and torchrun killed
    rank 0 (exit -15, seen) when rank 1 exited (without a launcher that stops the others, rank 0 waits
    there: gloo 30 minutes, NCCL a hang; the bounded launch below kills it at 240 s); with only the
    raise shared, rank 0, slower since it writes the checkpoint, was still killed (-15) when rank 1
    exited. Now both stop before any forward of step 2, save
    checkpoint-1 together (each its RNG state), and both exit 3 (torchrun's summary lists every rank's
    exit code); rank 0's run.json says judge_budget_spent and names rank 1."""
    out = tmp_path / "budget"
    kw = common_kw(tiny, out, data=data, batch_size=2, max_train_samples=4, max_steps=3)
    rc, log = torchrun_bounded(["tests/trainers/dist_doubles.py", "stepfix"], flags(kw), timeout=240,
                               R3_BUDGET_RANK="1", R3_BUDGET_STEP="2")
    assert rc is not None, "a rank hung after the judge's budget was spent on rank 1:\n" + log[-4000:]
    codes = sorted(int(c) for c in re.findall(r"exitcode\s*:\s*(-?\d+) \(pid", log))
    assert codes == [3, 3], f"exit codes {codes}:\n" + log[-4000:]
    ranks = log.split("closing signal SIGTERM")[0]  # the ranks' output, before torchrun's own report
    assert ranks.count("stopped: judge token budget spent") == 2 and "Traceback" not in ranks, log[-4000:]
    rec = json.loads((out / "run.json").read_text())
    assert rec["status"] == "judge_budget_spent", rec
    assert "judge budget hook, rank 1" in rec["error"] and "on rank 1 of 2; every rank stopped" in rec["error"], rec
    assert rec["global_step"] == 1 and rec["checkpoint"] == "checkpoint-1", rec
    ck = out / "checkpoint-1"
    assert not checkpoint_problems(ck)
    assert (ck / "rng_state_0.pth").is_file() and (ck / "rng_state_1.pth").is_file(), "a rank did not save"
    assert not (out / "final").exists()
    steps = {json.loads(x)["step"] for x in (out / "stepfix_samples.jsonl").read_text().splitlines()}
    assert steps == {1}, "records of step 2 were written: a forward of step 2 ran"


@pytest.mark.slow
def test_grpo_a_judge_budget_spent_on_one_rank_stops_every_rank(tiny, data, tmp_path):
    """GRPO: rank 1's reward double raises JudgeBudgetExceeded in step 2 (JUDGE BUDGET HOOK). Before,
    rank 1 stopped alone while rank 0 waited in TRL's gather of the rewards (torchrun then killed it:
    -15). Now the reward wrapper keeps the error, TRL's gather completes, and every rank raises it
    (GRPOPhases.r3_rewards): both exit 3, checkpoint-1 saved by both."""
    out = tmp_path / "grpo_budget"
    kw = common_kw(tiny, out, data=data, batch_size=2, max_train_samples=2, group_size=2, rewards="length",
                   beta=0.04, max_steps=3)
    rc, log = torchrun_bounded(["tests/trainers/dist_doubles.py", "grpo"], flags(kw), timeout=240,
                               R3_BUDGET_RANK="1", R3_BUDGET_STEP="2")
    assert rc is not None, "a rank hung after the judge's budget was spent on rank 1:\n" + log[-4000:]
    codes = sorted(int(c) for c in re.findall(r"exitcode\s*:\s*(-?\d+) \(pid", log))
    assert codes == [3, 3], f"exit codes {codes}:\n" + log[-4000:]
    rec = json.loads((out / "run.json").read_text())
    assert rec["status"] == "judge_budget_spent" and "on rank 1 of 2; every rank stopped" in rec["error"], rec
    assert rec["global_step"] == 1 and rec["checkpoint"] == "checkpoint-1", rec
    ck = out / "checkpoint-1"
    assert not checkpoint_problems(ck)
    assert (ck / "rng_state_0.pth").is_file() and (ck / "rng_state_1.pth").is_file(), "a rank did not save"


def test_raise_together_in_one_process_raises_the_error_itself():
    from verifiers.judge import JudgeBudgetExceeded

    distributed.raise_together(None)
    e = JudgeBudgetExceeded("judge token budget spent: 10 of 10 tokens")
    with pytest.raises(JudgeBudgetExceeded) as got:
        distributed.raise_together(e)
    assert got.value is e and not getattr(got.value, "raised_together", False)


# ------------------------------------------------------------------------------ one process, fast

def test_helpers_in_one_process(tmp_path):
    assert distributed.gather_objects({"a": 1}) == [{"a": 1}]
    assert distributed.sum_across(3) == 3.0
    assert distributed.stop_together(1.5, "loss") == [1.5]
    with pytest.raises(NonFiniteLoss, match="loss is non-finite"):
        distributed.stop_together(float("nan"), "loss")
    seeds = {distributed.generation_seed(0, 3, r, 1) for r in range(8)}
    assert len(seeds) == 8 and distributed.generation_seed(0, 3, 1, 1) == distributed.generation_seed(0, 3, 1, 1)
    with distributed.file_lock(tmp_path / "x.lock"):
        assert (tmp_path / "x.lock").exists()


def test_check_launch_refuses_fsdp_or_deepspeed_that_accelerate_dropped(monkeypatch):
    from types import SimpleNamespace

    from accelerate.utils import DistributedType

    cpu = SimpleNamespace(distributed_type=DistributedType.MULTI_CPU, device="cpu")
    distributed.check_launch(cpu)  # nothing asked
    distributed.check_launch(None)
    monkeypatch.setenv("ACCELERATE_USE_FSDP", "true")
    with pytest.raises(ConfigError, match="asks for FSDP but accelerate runs MULTI_CPU"):
        distributed.check_launch(cpu)
    distributed.check_launch(SimpleNamespace(distributed_type=DistributedType.FSDP, device="cuda:0"))
    monkeypatch.delenv("ACCELERATE_USE_FSDP")
    monkeypatch.setenv("ACCELERATE_USE_DEEPSPEED", "true")
    with pytest.raises(ConfigError, match="asks for DEEPSPEED"):
        distributed.check_launch(cpu)


def test_chunked_kl_finds_the_backbone_through_ddp(tiny, tmp_path):
    """Under DDP the chunked path (hidden states + head) was not found on the wrapper and the step fell
    back to full [B, L, V] logits, silently; now it runs the wrapper's forward and gives the same values."""
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    from transformers import AutoModelForCausalLM

    from trainers.stepfix_loss import completion_batch, completion_hidden

    model = AutoModelForCausalLM.from_pretrained(tiny, dtype=torch.float32)
    ids, att, tgt, _, st = completion_batch([([5, 6, 7], [8, 9, 10]), ([11, 12], [13, 14, 15, 16])], 0, "cpu")
    plain = completion_hidden(model, ids, att, st, tgt.shape[1])
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'pg'}", rank=0, world_size=1)
    try:
        wrapped = completion_hidden(DDP(model), ids, att, st, tgt.shape[1])
    finally:
        dist.destroy_process_group()
    assert plain is not None and wrapped is not None, "no backbone found through the DDP wrapper"
    assert torch.allclose(plain[0], wrapped[0], atol=1e-6) and wrapped[1] is model.get_output_embeddings()


# ------------------------------------------------------------------------------ full fine-tuning

@pytest.mark.slow
def test_full_finetuning_beside_lora(tiny, data, tmp_path):
    """`lora: false` trains every weight; `init_adapter` is merged into the start point (saved once to
    OUTPUT_DIR/init_merged) and the reference is a frozen copy of that start point, not the base."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(1)
    ad = get_peft_model(AutoModelForCausalLM.from_pretrained(tiny), LoraConfig(r=4, target_modules="all-linear"))
    with torch.no_grad():
        for n, p in ad.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 0.2)
    ad.save_pretrained(str(tmp_path / "adapter"))
    out = tmp_path / "full"
    cfg = make(stepfix.Config, **common_kw(tiny, out, data=data, batch_size=2, max_train_samples=2, max_steps=1),
                      lora=False, init_adapter=str(tmp_path / "adapter"))
    seen = {}

    class Probe(dist_doubles.stepfix_double_cls()):
        def compute_loss(self, model, inputs, *a, **k):
            seen["trainable"] = sum(p.numel() for p in model.parameters() if p.requires_grad)
            seen["total"] = sum(p.numel() for p in model.parameters())
            seen["ref"] = {n: p.detach().clone() for n, p in self.ref_model.named_parameters()}
            seen["ref_frozen"] = not any(p.requires_grad for p in self.ref_model.parameters())
            return super().compute_loss(model, inputs, *a, **k)

    res = stepfix.train(cfg, trainer_cls=Probe)
    assert seen["trainable"] == seen["total"] and seen["ref_frozen"]
    merged = AutoModelForCausalLM.from_pretrained(str(out / "init_merged"))
    start = dict(merged.named_parameters())
    assert all(torch.equal(start[n], p) for n, p in seen["ref"].items()), "reference is not the merged start point"
    base = dict(AutoModelForCausalLM.from_pretrained(tiny).named_parameters())
    assert any(not torch.equal(base[n], start[n]) for n in start), "the adapter was not merged into the start point"
    final = AutoModelForCausalLM.from_pretrained(str(out / "final"))
    assert any(not torch.equal(start[n], p) for n, p in final.named_parameters()), "no weight moved"
    assert res["lm_eval_model_args"] == f"pretrained={out / 'final'}"


def test_psv_scores_on_the_training_device_and_dtype(tiny):
    from verifiers import psv
    from r3bench import procgen

    sols = [p.solution for p in procgen.generate(n=4, seed=3)[:2]]
    v = psv.PSV(tiny, device="cpu", dtype="bfloat16")
    assert v.model.dtype == torch.bfloat16
    v32 = psv.PSV(tiny)  # no placement given: the CPU in float32
    assert v32.model.dtype == torch.float32
    batch = v32.step_scores_batch([("q1", sols[0]), ("q2", sols[1]), ("q3", "no steps")])
    assert batch[2] == [] and len(batch[0]) == 7
    one = [v32.step_scores("q1", sols[0]), v32.step_scores("q2", sols[1])]
    for a, b in zip(batch[:2], one):
        assert all(abs(x - y) < 1e-5 for x, y in zip(a, b))
    assert all(abs(x - y) < 5e-2 for x, y in zip(v.step_scores("q1", sols[0]), one[0]))  # bf16 vs fp32: CPUs with and
    # without native bf16 (AVX512-BF16, AMX) round differently
