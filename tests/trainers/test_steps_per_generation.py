"""`steps_per_generation` (k) of stepfix and GRPO.

stepfix (its own implementation): one generation phase - y1 sampled in one call, verified in one
batch, feedback in one batch, y2 in one call, verified in one batch - for k gradient-accumulation
micro-batches, the results buffered and cut back into the micro-batches (trainers.stepfix_trainer).

The equality test runs the real trainer on the tiny random model with a GENERATION DOUBLE and a
VERIFIER DOUBLE (below, named so): sampling from a random model depends on how the prompts are
batched and on the call's seed, so only a double gives k = 1 and k = 2 the same samples. With the same
samples, k must change nothing but the number of generation calls: every micro-batch's loss (paired
with the problems it trained on), every sample's record and the trained weights are compared. The
computation per micro-batch is the same code on the same tensors, so the expected difference is 0;
asserted: loss rel 1e-6, weights 1e-7 absolute (a step moves a weight by ~1e-3 at lr 1e-3). `baseline:
mean` makes the loss depend on the ORDER of the micro-batches too (a running mean over them), and
problems are skipped by content, so some micro-batches are partly or wholly skipped: a buffer cut
wrongly (samples of one micro-batch trained with another's problems, or in another order) changes a
paired loss or a record.

GRPO: TRL's GRPOTrainer has steps_per_generation (default: grad_accum); the config exposes it
(0 = TRL's default) and passes it to GRPOConfig."""
from __future__ import annotations

import hashlib
import json
import sys
import types

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from trainers import grpo, stepfix  # noqa: E402
from trainers.core.config import make  # noqa: E402
from trainers.errors import ConfigError  # noqa: E402


def _hash_ids(key: str, n: int) -> list[int]:
    return [20 + b % 230 for b in hashlib.sha256(key.encode()).digest()[:n]]


def _right(question: str) -> bool:
    """The VERIFIER DOUBLE's y1 is right (skipped) for about a third of the problems, by content."""
    return hashlib.sha256(question.encode()).digest()[0] % 3 == 0


def doubles_cls(calls: list, losses: list):
    from verifiers.steps import StepVerdict

    class Doubles(stepfix.StepFixTrainer):
        """GENERATION DOUBLE: a completion's ids are a hash of its chat (the same in any batch split).
        VERIFIER DOUBLE: y1 wrong at step 2 unless _right(question) (then right: skipped); y2 wrong at
        step 5 or 6 by content (two rewards, so the mean baseline moves). Records every generation call's
        size and every micro-batch's (problem ids, loss)."""

        def generate(self, model, chats):
            calls.append(len(chats))
            eos = self.tok.convert_tokens_to_ids("<|im_end|>")
            out = [_hash_ids(json.dumps(c, sort_keys=True), 5 + len(c)) + [eos] for c in chats]
            if chats and len(chats[0]) > 1:  # revisions: remember their texts to tell y2 from y1
                self._y2_texts = getattr(self, "_y2_texts", set()) | {
                    self.tok.decode(ids, skip_special_tokens=True) for ids in out}
            return out

        def verify(self, q, text, ref):
            if text in getattr(self, "_y2_texts", ()):
                return StepVerdict(5 + hashlib.sha256(q.encode()).digest()[1] % 2, "CE", "double: y2", 7)
            if _right(q):
                return StepVerdict(0, None, "double: y1 right", 7)
            return StepVerdict(2, "CM", "double: y1", 7)

        def feedback(self, question, text, verdict, reference):
            return "feedback double", ""

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            loss = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            losses.append(([r["id"] for r in inputs], float(loss.detach())))
            return loss

    return Doubles


def run_kw(tiny, data, out, **kw):
    d = dict(model=tiny, data=data, output_dir=str(out), max_steps=2, batch_size=2, grad_accum=4, save_steps=50,
             eval_tasks="", report_to="none", max_length=4096, seed=0, max_train_samples=16, lora_dropout=0.0,
             learning_rate=1e-3, baseline="mean")
    d.update(kw)
    return d


def _run(tiny, data, out, k):
    calls, losses = [], []
    cfg = make(stepfix.Config, **run_kw(tiny, data, out, steps_per_generation=k))
    stepfix.train(cfg, trainer_cls=doubles_cls(calls, losses))
    return calls, losses


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/trainers/conftest.py


@pytest.mark.slow
def test_k_micro_batches_per_generation_train_as_one_at_a_time(tiny, data, tmp_path):
    from safetensors.torch import load_file

    c1, l1 = _run(tiny, data, tmp_path / "k1", 1)
    c2, l2 = _run(tiny, data, tmp_path / "k2", 2)
    c4, l4 = _run(tiny, data, tmp_path / "k4", 4)
    # generation calls: 2 steps x 4 micro-batches x (y1, y2) at k=1 (a micro-batch wholly skipped makes no
    # y2 call), divided by k; every call of k = 4 holds 4 micro-batches' problems
    assert len(c1) >= 12 and len(c2) == 2 * 2 * 2 and len(c4) == 2 * 2, (c1, c2, c4)
    assert [n for n in c4[::2]] == [8, 8], c4  # y1 of 4 micro-batches x 2 problems in one call
    assert sum(c1) == sum(c2) == sum(c4), "another number of problems was sampled"
    out = {k: tmp_path / f"k{k}" for k in (1, 2, 4)}
    recs = {k: [json.loads(x) for x in (o / "stepfix_samples.jsonl").read_text().splitlines()] for k, o in out.items()}
    skipped = [r for r in recs[1] if r["skipped"]]
    assert skipped and len(skipped) < len(recs[1]), "the doubles skipped all or none: the test would be weaker"
    for k in (2, 4):
        # the same problems, paired with the same losses, in the same order
        assert [ids for ids, _ in l1] == [ids for ids, _ in (l2 if k == 2 else l4)]
        for (_, a), (_, b) in zip(l1, l2 if k == 2 else l4):
            assert a == pytest.approx(b, rel=1e-6, abs=1e-9), (l1, l2 if k == 2 else l4)
        assert [r["id"] for r in recs[k]] == [r["id"] for r in recs[1]]
        for a, b in zip(recs[1], recs[k]):
            for key in ("y1", "y2", "r1", "r2", "skipped", "loss", "kl"):
                if isinstance(a.get(key), float):
                    assert a[key] == pytest.approx(b.get(key), rel=1e-6, abs=1e-9), (key, a, b)
                else:
                    assert a.get(key) == b.get(key), (key, a, b)
    w = {k: load_file(str(o / "final" / "adapter_model.safetensors")) for k, o in out.items()}
    for k in (2, 4):
        diff = max(float((w[1][n] - w[k][n]).abs().max()) for n in w[1])
        ldiff = max(abs(a - b) for (_, a), (_, b) in zip(l1, l2 if k == 2 else l4))
        print(f"k={k} vs k=1: max micro-batch loss diff {ldiff:.2e}, max weight diff {diff:.2e}")
        assert diff <= 1e-7, f"k={k}: weights differ by {diff}"
    moved = max(float(v.abs().max()) for n, v in w[1].items() if "lora_B" in n)
    assert moved > 1e-4, "the adapter did not move: the comparison would be empty"
    run = json.loads((out[2] / "run.json").read_text())
    assert run["status"] == "finished" and run["config"]["steps_per_generation"] == 2


@pytest.mark.parametrize("kw,why", [({"steps_per_generation": 0}, "steps_per_generation must be >= 1"),
                                    ({"steps_per_generation": 3, "grad_accum": 4}, "must divide grad_accum"),
                                    ({"steps_per_generation": 2, "grad_accum": 1}, "must divide grad_accum")])
def test_steps_per_generation_is_validated(kw, why):
    with pytest.raises(ConfigError, match=why):
        make(stepfix.Config, **kw)
    assert make(stepfix.Config).steps_per_generation == 1
    assert make(stepfix.Config, steps_per_generation=2, grad_accum=4).steps_per_generation == 2


@pytest.mark.slow
def test_vllm_double_gets_one_request_per_generation_phase_and_one_sync_per_step(tiny, data, tmp_path, monkeypatch):
    """With use_vllm's path (VLLMGenerator around a DOUBLE of vllm.LLM, tests/trainers/test_vllm_double.py) and k =
    grad_accum = 2: one engine request of both micro-batches' prompts per y1 / y2, and the weights pushed
    once per optimizer step (the policy changes only there)."""
    from test_vllm_double import SamplingParamsDouble, VLLMEngineDouble

    from trainers import generation
    from verifiers.steps import StepVerdict

    monkeypatch.setitem(sys.modules, "vllm", types.SimpleNamespace(SamplingParams=SamplingParamsDouble))
    eng = VLLMEngineDouble()

    class OnDouble(stepfix.StepFixTrainer):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            self.generator = generation.VLLMGenerator("unused", llm=eng)

        def verify(self, q, text, ref):
            return StepVerdict(2, "CM", "double", 7)

        def feedback(self, question, text, verdict, reference):
            return "feedback double", ""

    cfg = make(stepfix.Config, **run_kw(tiny, data, tmp_path, grad_accum=2, max_train_samples=8,
                                               steps_per_generation=2, baseline="none"))
    stepfix.train(cfg, trainer_cls=OnDouble)
    assert [len(p) for p, _ in eng.calls] == [4, 4, 4, 4]  # 2 steps x (y1, y2), 2 micro-batches x 2 problems each
    assert len({params[0].kw["seed"] for _, params in eng.calls}) == 4  # a seed per call (+ the index per request)
    assert eng.resets == 2, "weights not pushed exactly once per optimizer step"


def test_grpo_exposes_trls_steps_per_generation(tiny, tmp_path):
    with pytest.raises(ConfigError, match="must be 0 .* or divide grad_accum"):
        make(grpo.Config, steps_per_generation=3, grad_accum=4)
    with pytest.raises(ConfigError, match="divide grad_accum"):
        make(grpo.Config, steps_per_generation=-1)
    kw = dict(model=tiny, output_dir=str(tmp_path), report_to="none", batch_size=2, group_size=2, grad_accum=4)
    assert grpo.grpo_args(make(grpo.Config, **kw)).steps_per_generation == 4  # TRL's default: grad_accum
    args = grpo.grpo_args(make(grpo.Config, **kw, steps_per_generation=2))
    assert args.steps_per_generation == 2 and args.generation_batch_size == 2 * 2


@pytest.mark.slow
def test_a_resume_with_k_generations_neither_reuses_nor_drops_samples(tiny, data, tmp_path):
    """k = grad_accum = 2, stopped after step 1 (its checkpoint) and resumed to step 3: the resumed steps
    generate for exactly their own micro-batches (a buffer never outlives an optimizer step, so none is
    in a checkpoint), and steps 2-3 train on the same problems with the same losses and records as an
    uninterrupted run (generation and verifier doubles: the same samples)."""
    kw = dict(grad_accum=2, steps_per_generation=2, max_train_samples=8, save_steps=1, baseline="none",
              lr_scheduler="constant")  # a linear schedule of max_steps 1 would differ from one of 3
    c_full, l_full = [], []
    stepfix.train(make(stepfix.Config, **run_kw(tiny, data, tmp_path / "full", max_steps=3, **kw)),
                  trainer_cls=doubles_cls(c_full, l_full))
    c_a, l_a = [], []
    stepfix.train(make(stepfix.Config, **run_kw(tiny, data, tmp_path / "part", max_steps=1, **kw)),
                  trainer_cls=doubles_cls(c_a, l_a))
    c_b, l_b = [], []
    stepfix.train(make(stepfix.Config, **run_kw(tiny, data, tmp_path / "part", max_steps=3, **kw), resume=True),
                  trainer_cls=doubles_cls(c_b, l_b))
    assert len(c_a) == 2 and len(c_b) == 4 and c_a + c_b == c_full, (c_a, c_b, c_full)
    assert [ids for ids, _ in l_a + l_b] == [ids for ids, _ in l_full]
    for (_, a), (_, b) in zip(l_a + l_b, l_full):
        assert a == pytest.approx(b, rel=1e-5, abs=1e-7), (l_a + l_b, l_full)
    recs = [json.loads(x) for x in (tmp_path / "part" / "stepfix_samples.jsonl").read_text().splitlines()]
    full = [json.loads(x) for x in (tmp_path / "full" / "stepfix_samples.jsonl").read_text().splitlines()]
    assert [(r["step"], r["id"], r.get("r2")) for r in recs] == [(r["step"], r["id"], r.get("r2")) for r in full]
