"""StepFixTrainer: the HF Trainer that runs the paper's step-level method (trainers.stepfix documents
the method and its options; trainers.stepfix_loss holds its pure pieces).

A module of its own because it imports torch and transformers at the top: trainers.stepfix (the
config and the CLI) stays light, and its `build` imports this module.
"""
from __future__ import annotations

import json
import math
import threading
import time
from collections import Counter, defaultdict, deque
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import Trainer

from trainers import distributed, generation, judging
from trainers import rl_sampling as rl
from trainers.core.data import user_chat
from trainers.core.mixins import GuardMixin, PhaseProgress, TimingMixin, nothing_to_learn, warn_nothing_to_learn
from trainers.core.model import model_path
from trainers.stepfix_loss import (chunked_token_stats, completion_batch, completion_hidden, completion_logits,
                                   loo_baseline, reward, skip, stepfix_loss, token_kl, token_logprobs)
from verifiers import feedback as feedback_mod
from verifiers.feedback import feedback as make_feedback
from verifiers.judge import JudgeBudgetExceeded, concurrently
from verifiers.steps import verify as verify_steps
from verifiers.verdict import StepVerdict


# feedback channels that wait on something outside this thread (verifiers.feedback: CM queries the
# ChromaDB formula store, CE runs the sandbox's subprocess): feedback_batch writes them concurrently
CONCURRENT_CHANNELS = frozenset({"CM", "CE"})


def prepare_reference(ref, accelerator):
    """The frozen reference placed as the policy is: sharded like it under ZeRO-3 / FSDP (TRL's
    prepare_deepspeed / prepare_fsdp, as TRL's trainers prepare theirs), else moved to its device."""
    if ref is None or accelerator is None:
        return ref
    st = accelerator.state
    if getattr(st, "deepspeed_plugin", None) is not None:
        from trl.models.utils import prepare_deepspeed

        return prepare_deepspeed(ref, accelerator)
    if getattr(st, "fsdp_plugin", None) is not None:
        from trl.models.utils import prepare_fsdp

        return prepare_fsdp(ref, accelerator)
    return ref.to(accelerator.device)


def _ids(rows) -> list:
    """The problem ids of a micro-batch (its identity in the generation buffer)."""
    return [r["id"] for r in rows]


@dataclass
class _Generated:
    """One micro-batch's share of a generation phase: its problems' ids, records, the (x, y1, x2, y2,
    r2, rec) of its kept problems, and its y1 chats and ids (the zero loss of an all-skipped micro-batch)."""

    ids: list
    recs: list
    used: list
    chats1: list
    y1: list


class StepFixTrainer(TimingMixin, GuardMixin, Trainer):
    """HF Trainer whose compute_loss runs the method (trainers.stepfix) on a batch of problem rows.

    A variant overrides `generate`, `verify` or `feedback` in a subclass and is passed to
    `trainers.stepfix.train(cfg, trainer_cls=...)` (`feedback` may then be called from several threads
    at once: feedback_batch). Seconds per phase (generate, verify, feedback,
    forward, ref_forward and, the rest of each step, backward) are logged by trainers.core.mixins.TimingMixin."""

    r3_phases = ("generate", "verify", "feedback", "forward", "ref_forward", "backward")
    r3_log_step_time = True

    def __init__(self, *a, stepfix_cfg=None, ref_model=None, tok=None, gen_cap=None, start_check=None, **kw):
        super().__init__(*a, **kw)
        # the sampling cap (trainers.rl_sampling.generation_cap; None: the config's max_new_tokens as it is) and the
        # start's format compliance measured before training (trainers.rl_sampling.start_compliance), for run.json
        self.r3_gen_cap, self.r3_start_check = gen_cap, start_check
        self.r3_truncation = rl.TruncationCount()  # every rank's samples: the counts are gathered at each log
        self.r3_verdicts = rl.VerdictTally()  # verdict shares and rewards per class (verdicts/*, reward_by_class/*)
        self._stops = None
        self.cfg, self.ref_model, self.tok = stepfix_cfg, prepare_reference(ref_model, self.accelerator), tok
        self.model_accepts_loss_kwargs = False
        self._acc = defaultdict(list)
        self._counts = Counter()
        self._counts_lock = threading.Lock()  # feedback runs on threads (feedback_batch)
        self.r2_running_mean = None  # the `mean` baseline's state
        self.generator = None  # trainers.generation backend, made on first use
        self._gen_calls = 0  # generation calls in this optimizer step (y1, y2, ...): part of their seed
        self._dummy = False  # True while a zero-weighted forward runs (no state may change)
        self.r3_nothing_to_learn = 0  # steps whose samples gave no learning signal (run.json)
        self.r3_progress = PhaseProgress()
        self._upcoming = deque()  # this optimizer step's micro-batches not yet trained on (get_batch_samples)
        self._buffer = deque()  # generated micro-batches not yet trained on (steps_per_generation)
        self._stop = None  # JudgeBudgetExceeded caught in this generation phase (_verify_all)

    # -- pieces a test (or a user) may replace
    def generate(self, model, chats: list[list[dict]]) -> list[list[int]]:
        """Sampled completion token ids (cut after the first end-of-turn id, kept) for each chat."""
        cfg = self.cfg
        if self.generator is None:
            self.generator = generation.make(cfg, model_path(cfg.model))
        sp = generation.Sampling(max_new_tokens=self.gen_cap, temperature=cfg.temperature, top_p=cfg.top_p,
                                 seed=self._next_seed(), synced_gpus=distributed.sharded(self.accelerator),
                                 policy_step=self.state.global_step)
        return self.generator.generate(model, self.tok, chats, sp)

    @property
    def gen_cap(self) -> int:
        """Maximum new tokens of y1 and y2: the run's derived or set cap, else the config's value."""
        if self.r3_gen_cap is not None:
            return int(self.r3_gen_cap["tokens"])
        return self.cfg.max_new_tokens or rl.FALLBACK_CAP

    def _count_truncated(self, kind: str, samples) -> None:
        """Count the samples of this generation call that hit the cap (no end-of-turn id)."""
        if self._stops is None:
            self._stops = generation.stop_token_ids(self.tok, self.accelerator.unwrap_model(self.model))
        with self._counts_lock:
            self._counts[f"{kind}_generated"] += len(samples)
            self._counts[f"{kind}_truncated"] += sum(rl.truncated(ids, self._stops) for ids in samples)
            self._counts[f"{kind}_tokens"] += sum(len(ids) for ids in samples)  # generated tokens (benchmarks/profile_step.py)

    def r3_run_record(self) -> dict:
        """What run.json says of the run's sampling (rl_sampling.run_record)."""
        return rl.run_record(self.r3_truncation, self.r3_gen_cap, self.r3_start_check)

    def _next_seed(self) -> int:
        """This call's sampling seed: per rank, per optimizer step, per call (distributed.generation_seed)."""
        if getattr(self, "_gen_step", None) != self.state.global_step:  # a resumed run draws the same seeds
            self._gen_step, self._gen_calls = self.state.global_step, 0
        self._gen_calls += 1
        return distributed.generation_seed(self.cfg.seed, self.state.global_step, distributed.rank(), self._gen_calls)

    @contextmanager
    def for_generation(self, model):
        """The policy to sample from: TRL's unwrap_model_for_generation (the module inside DDP, with
        ZeRO-3's parameters gathered and gradient checkpointing off while it samples) and, under FSDP
        v1, the full parameters summoned, as TRL's GRPO does."""
        import warnings

        from trl.distributed import DistributedBackend
        from trl.models.utils import unwrap_model_for_generation

        kwargs = getattr(self.args, "activation_checkpointing_kwargs", None)  # transformers 5's name
        with warnings.catch_warnings():
            # TRL 1.16's helper toggles checkpointing through transformers 5's deprecated aliases
            # (is_gradient_checkpointing, gradient_checkpointing_disable/enable): three FutureWarnings a
            # generation phase that are TRL's to fix; r3bench's own calls use the activation_* names
            warnings.filterwarnings("ignore", message=r"`?(is_)?gradient_checkpointing\w*`? is deprecated",
                                    category=FutureWarning)
            with unwrap_model_for_generation(model, self.accelerator, gradient_checkpointing_kwargs=kwargs) as m, \
                    DistributedBackend(self.accelerator).summon_full_params(model, recurse=False):
                yield m

    def r3_state(self) -> dict:
        return {"r2_running_mean": self.r2_running_mean, "truncation_total": list(self.r3_truncation.total)}

    def r3_state_gathered(self) -> dict:
        """run.json's truncation totals as of this checkpoint: the logged totals plus every rank's samples
        since the last training log (logging_steps > 1), so a run resumed here counts the steps before it."""
        with self._counts_lock:
            mine = tuple(self._counts.get(f"{k}_{w}", 0) for w in ("generated", "truncated") for k in ("y1", "y2"))
        every = distributed.gather_objects(mine)
        gen, cut = sum(c[0] + c[1] for c in every), sum(c[2] + c[3] for c in every)
        return {"truncation_total": [self.r3_truncation.total[0] + gen, self.r3_truncation.total[1] + cut]}

    def r3_load_state(self, state: dict) -> None:
        super().r3_load_state(state)
        self.r2_running_mean = state.get("r2_running_mean")
        self.r3_truncation.total = list(state.get("truncation_total") or [0, 0])

    def verify(self, question, text, reference):
        if getattr(self, "_verifier_config", None) is None:  # the backend's config from the run's, built once
            self._verifier_config = judging.verifier_config(self.cfg)
        return verify_steps(question, text, reference, backend=self.cfg.verifier, config=self._verifier_config)

    def verify_batch(self, items) -> list:
        """`self.verify` over (question, text, reference) items, in order: concurrently for the judge (up
        to its max_concurrency requests in flight; trainers.judging.workers), one by one otherwise."""
        return concurrently(self.verify, items, judging.workers(self.cfg))

    def feedback(self, question, text, verdict, reference) -> tuple[str, str]:
        try:
            fb = make_feedback(question, text, verdict, reference)
            return fb.text, ""
        except Exception as e:  # noqa: BLE001 - counted, see module docstring
            with self._counts_lock:
                self._counts["feedback_fallbacks"] += 1
            return (f"Step {verdict.first_error} is wrong: {verdict.explanation}.",
                    f"feedback failed ({type(e).__name__}: {str(e)[:100]})")

    def feedback_batch(self, items) -> list[tuple[str, str]]:
        """`self.feedback` over (question, text, verdict, reference) items, in order. The items whose
        channel waits on something else - CM (a ChromaDB query) and CE (a sandbox process) - run on up to
        `feedback_workers` threads at once; MC and FORMAT (string formatting) run here. The formula store
        is opened before the threads start (verifiers.feedback.store() opens it lazily, without a lock)."""
        items = list(items)
        out: list = [None] * len(items)
        pooled = [i for i, it in enumerate(items) if it[2].error_class in CONCURRENT_CHANNELS]
        if len(pooled) > 1 and self.cfg.feedback_workers > 1:
            if any(items[i][2].error_class == "CM" for i in pooled):
                feedback_mod.store()
            for i, fb in zip(pooled, concurrently(self.feedback, [items[i] for i in pooled], self.cfg.feedback_workers)):
                out[i] = fb
        for i, it in enumerate(items):
            if out[i] is None:
                out[i] = self.feedback(*it)
        return out

    def _prompt_ids(self, chat):
        return self.tok.apply_chat_template(chat, tokenize=True, add_generation_prompt=True, return_dict=False)

    # -- the method
    def get_batch_samples(self, epoch_iterator, num_batches, device):
        """HF's loop takes an optimizer step's micro-batches from the data loader at once: they are kept
        (in order) so that the generation phase can sample for `steps_per_generation` of them together."""
        batches, n_items = super().get_batch_samples(epoch_iterator, num_batches, device)
        if self._buffer:  # cannot happen when steps_per_generation divides grad_accum (Config.validate)
            raise RuntimeError(f"{len(self._buffer)} generated micro-batches left over at an optimizer step")
        self._upcoming = deque(batches)
        return batches, n_items

    def _generation_group(self, inputs) -> list:
        """The micro-batches to generate for now: `inputs` and the next steps_per_generation - 1 of this
        optimizer step (fewer at the short last step of an epoch); [inputs] when compute_loss is called
        outside HF's loop."""
        up = self._upcoming
        if up and _ids(up[0]) == _ids(inputs):
            return [inputs] + [up[i] for i in range(1, min(self.cfg.steps_per_generation, len(up)))]
        return [inputs]

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        """The method on one micro-batch: its samples come from the buffer the generation phase filled
        (`_generate_phase`, for steps_per_generation micro-batches at once); forward, loss, backward here."""
        unwrapped = self.accelerator.unwrap_model(model)
        prog = self.r3_progress
        prog.begin_step(self.state.global_step + 1)
        if not self._buffer:
            self._buffer = deque(self._generate_phase(model, self._generation_group(inputs)))
        mb = self._buffer.popleft()
        if self._upcoming and _ids(self._upcoming[0]) == _ids(inputs):
            self._upcoming.popleft()
        if mb.ids != _ids(inputs):  # the buffer and the data loader went out of step: never train on the wrong samples
            raise RuntimeError(f"generated micro-batch {mb.ids} does not match the micro-batch {_ids(inputs)}")
        used, t4 = mb.used, time.perf_counter()
        ref0 = self.r3_times["ref_forward"]
        scale = self._global_scale(used)
        if used:
            prog.phase(f"update: forward, KL and backward on {len(used)} samples")
            # the loss reads the backbone and the LM head directly (stepfix_loss.completion_logits), past the
            # autocast accelerate wraps the model's forward in: under mixed precision (`bf16` on a CPU:
            # autocast over fp32 weights) the policy's and the reference's forwards run in it here, alike;
            # log-probabilities are taken in fp32 (.float() before log_softmax)
            with self.accelerator.autocast():
                loss, parts = self._loss(model, unwrapped, used)
            loss = loss * scale
            for i, (*_, rec) in enumerate(used):
                rec.update({k: float(v[i]) for k, v in parts.items()})
                self._acc["kl"].append(float(parts["kl"][i]))
        else:
            with self.accelerator.autocast():
                loss = self._zero_loss(model, unwrapped, mb.chats1, mb.y1)
        self.r3_times["forward"] += time.perf_counter() - t4 - (self.r3_times["ref_forward"] - ref0)
        self._write(mb.recs)
        prog.end_step()
        return loss

    def _verify_all(self, items) -> list:
        """verify_batch, with the judge's budget caught: a spent budget (JudgeBudgetExceeded) is kept in
        self._stop and the items get no verdict, so that this rank runs the rest of the generation phase
        (under FSDP / ZeRO-3 its y2 sampling is a collective) and reaches the check where every rank
        stops together (distributed.raise_together)."""
        items = list(items)
        if self._stop is None:
            try:
                return self.verify_batch(items)
            except JudgeBudgetExceeded as e:
                self._stop = e
        why = f"not verified: the judge's budget is spent ({self._stop})"
        return [StepVerdict(0, None, why, 0, valid=False) for _ in items]

    def _generate_phase(self, model, group) -> list:
        """y1, verdicts, feedback, y2 and verdicts for the problems of the micro-batches in `group` (one
        generation call for y1, one for y2, one batched verification of each and one batch of feedback),
        cut back into one _Generated per micro-batch, in order."""
        cfg, tok, prog = self.cfg, self.tok, self.r3_progress
        fb0 = self.r3_times["feedback"]
        self._stop = None
        rows = [r for mb in group for r in mb]
        where = [i for i, mb in enumerate(group) for _ in mb]  # micro-batch of each row
        many = f" ({len(group)} micro-batches)" if len(group) > 1 else ""
        prog.phase(f"generating y1 for {len(rows)} problems{many} (up to {self.gen_cap} tokens each)")
        t0 = time.perf_counter()
        chats1 = [user_chat(r["prompt"]) for r in rows]
        with self.for_generation(model) as gen_model:
            y1 = self.generate(gen_model, chats1)
        t1 = time.perf_counter()
        self._count_truncated("y1", y1)
        prog.phase("verifying y1 and writing feedback")
        recs, todo = [], []
        texts1 = [tok.decode(ids, skip_special_tokens=True) for ids in y1]
        verdicts1 = self._verify_all([(r["question"], t, r["reference"]) for r, t in zip(rows, texts1)])
        for i, (r, ids, text, v) in enumerate(zip(rows, y1, texts1, verdicts1)):
            rec = {"step": self.state.global_step + 1, "id": r["id"], "y1": text, "e1": v.first_error,
                   "n1": v.n_steps, "class1": v.error_class, "why1": v.explanation,
                   # the problem and its gold answer, for `r3bench view` (the question's last 2,000 characters)
                   "question": str(r.get("question") or "")[-2000:], "gold": str(r.get("answer") or "")}
            r1, note = reward(v) if v.valid else (None, "")
            if not v.valid:
                self._counts["verifier_failures"] += 1
                rec.update(skipped=True, skip_reason=f"verifier gave no verdict: {v.explanation}")
            elif r1 is None:
                self._counts["reward_failures"] += 1
                rec.update(skipped=True, reward1_reason=note, skip_reason=f"no reward for y1: {note}")
            else:
                rec.update(r1=r1, reward1_reason=note)
                self._acc["r1"].append(r1)
                self._counts[f"y1_{v.error_class or 'correct'}"] += 1
                self.r3_verdicts.add("y1", v.error_class or "correct", r1)
                if skip(r1, cfg.tau):
                    rec.update(skipped=True, skip_reason=f"r1 = {r1:.3f} > tau = {cfg.tau}")
                else:
                    todo.append((i, chats1[i], r, ids, text, v, rec))
            recs.append(rec)
        tf = time.perf_counter()
        fbs = self.feedback_batch([(r["question"], text, v, r["reference"]) for _, _, r, _, text, v, _ in todo])
        self.r3_times["feedback"] += time.perf_counter() - tf
        keep = []
        for (i, chat1, r, ids, text, _, rec), (p1, fnote) in zip(todo, fbs):
            rec.update(skipped=False, feedback=p1, feedback_note=fnote)
            keep.append((i, chat1, r, ids, text, p1, rec))
        t2 = t3 = t4 = time.perf_counter()
        used = [[] for _ in group]
        k = cfg.revisions
        if keep or distributed.sharded(self.accelerator):
            chats2 = [user_chat(r["prompt"]) + [{"role": "assistant", "content": text},
                                                       {"role": "user", "content": f"{p1}\n\n{cfg.revise_instruction}"}]
                      for _, _, r, _, text, p1, _ in keep]
            prog.phase(f"generating y2 (revisions) for {len(keep)} problems" + (f" x {k}" if k > 1 else ""))
            # under FSDP / ZeRO-3 sampling is a collective: a rank with nothing to revise samples one
            # throw-away y2 so that the ranks with revisions are not left waiting. With revisions k > 1 each
            # problem's revision chat is in the batch k times (rows of one sampled batch draw apart)
            chats2k = [c for c in chats2 for _ in range(k)]
            with self.for_generation(model) as gen_model:
                y2 = self.generate(gen_model, chats2k or chats1[:1])[:len(chats2k)]
            t3 = time.perf_counter()
            self._count_truncated("y2", y2)
            texts2 = [tok.decode(ids2, skip_special_tokens=True) for ids2 in y2]
            verdicts2 = self._verify_all([(keep[j // k][2]["question"], t, keep[j // k][2]["reference"])
                                          for j, t in enumerate(texts2)])
            for n_keep, ((i, chat1, r, ids1, _, _, rec), chat2) in enumerate(zip(keep, chats2)):
                group_used, revs = [], []
                for j in range(n_keep * k, n_keep * k + k):
                    ids2, text2, v2 = y2[j], texts2[j], verdicts2[j]
                    # one revision's record: the problem's own with k = 1 (the paper), else an entry of its
                    # `revisions` list (the first one's fields also on the problem's record)
                    rv = rec if k == 1 else {"r1": rec["r1"], "revision": j - n_keep * k}
                    rv.update(y2=text2, e2=v2.first_error, n2=v2.n_steps, class2=v2.error_class, why2=v2.explanation)
                    revs.append(rv)
                    if not v2.valid:
                        self._counts["verifier_failures"] += 1
                        rv.update(skipped=True, skip_reason=f"verifier gave no verdict on y2: {v2.explanation}")
                        continue
                    r2, note2 = reward(v2)
                    rv["reward2_reason"] = note2
                    if r2 is None:
                        self._counts["reward_failures"] += 1
                        rv.update(skipped=True, skip_reason=f"no reward for y2: {note2}")
                        continue
                    rv["r2"] = r2
                    self._counts[f"y2_{v2.error_class or 'correct'}"] += 1
                    # the revision's class, and its reward and gain by the class of the error it revised
                    # (the feedback the paper tailors to that class)
                    self.r3_verdicts.add("y2", v2.error_class or "correct", r2)
                    self.r3_verdicts.add("y2_after", rec.get("class1") or "correct", r2)
                    self.r3_verdicts.add("gain_after", rec.get("class1") or "correct", r2 - rec["r1"], share=False)
                    if k > 1:
                        rv["group"] = f"{self.state.global_step + 1}:{r['id']}:{i}"  # the revisions of this y1
                    group_used.append((self._prompt_ids(chat1), ids1, self._prompt_ids(chat2), ids2, r2, rv))
                if cfg.baseline == "rloo" and len(group_used) == 1:
                    # a lone rewarded revision has no other to compare with: no sample of the loss
                    self._counts["rloo_singletons"] += 1
                    group_used[0][5].update(skipped=True, skip_reason="rloo: the other revisions of this y1 got no reward")
                    group_used = []
                if k > 1:
                    rec["revisions"] = revs
                    rec.update({f: revs[0][f] for f in ("y2", "e2", "n2", "class2", "why2", "r2", "reward2_reason")
                                if f in revs[0]})
                    if not group_used:
                        rec.update(skipped=True, skip_reason="no revision of this y1 reached the loss")
                for u in group_used:
                    self._acc["r2"].append(u[4])
                    self._acc["r2_minus_r1"].append(u[4] - rec["r1"])
                used[where[i]].extend(group_used)
            t4 = time.perf_counter()
        if cfg.reward_permutation:
            self._permute_rewards(used)
        self.r3_times["generate"] += (t1 - t0) + (t3 - t2)
        self.r3_times["verify"] += (t2 - t1) + (t4 - t3) - (self.r3_times["feedback"] - fb0)
        # the judge's budget spent on any rank stops every rank here, before any forward of this
        # optimizer step: run.json judge_budget_spent, exit 3, a checkpoint of the last step (trainers.core.records.judge_budget_stop)
        stop, self._stop = self._stop, None
        distributed.raise_together(stop)
        # skipped = contributed no loss: r1 > tau, or no verdict on y1 or on y2
        self._acc["skipped"].extend(1.0 if rec.get("skipped") else 0.0 for rec in recs)
        out = []
        for j, mb in enumerate(group):
            idx = [i for i, w in enumerate(where) if w == j]
            out.append(_Generated(ids=_ids(mb), recs=[recs[i] for i in idx], used=used[j],
                                  chats1=[chats1[i] for i in idx], y1=[y1[i] for i in idx]))
        return out

    def _permute_rewards(self, used) -> None:
        """The learns-at-all control (`reward_permutation`): the r2 (and r1, for the r1 baseline) of this
        generation phase's kept revisions deranged among them (no revision keeps its own), on this rank; the
        records keep the verifier's r2 / r1 and get the ones the loss used (r2_used, r1_used). A phase with a
        single kept revision gets zero weight (metrics.jsonl reward_permutation_skipped)."""
        flat = [(j, n) for j, mb in enumerate(used) for n in range(len(mb))]
        if len(flat) == 1:
            # one rewarded revision: no other reward to give it (no derangement of 1), and its own would be
            # real signal in the control: the phase gets zero weight (the micro-batch's zero loss)
            j, n = flat[0]
            used[j][n][5].update(skipped=True, skip_reason="reward_permutation: the only rewarded revision of its "
                                                           "generation phase on this rank (no other reward to give it)")
            used[j].clear()
            with self._counts_lock:
                self._counts[rl.PERMUTATION_SKIPPED] += 1
            return
        if not flat:
            return
        step = self.state.global_step + 1
        o2 = rl.permutation(len(flat), self.cfg.seed, step, distributed.rank())
        o1 = rl.permutation(len(flat), self.cfg.seed + 1, step, distributed.rank())
        r2 = [used[j][n][4] for j, n in flat]
        r1 = [used[j][n][5]["r1"] for j, n in flat]
        for k, (j, n) in enumerate(flat):
            u = used[j][n]
            u[5].update(r2_used=r2[o2[k]], r1_used=r1[o1[k]])
            used[j][n] = (*u[:4], r2[o2[k]], u[5])
        with self._counts_lock:
            self._counts["reward_permuted"] += len(flat)

    def _global_scale(self, used) -> float:
        """Factor from this rank's mean loss to its share of the global one: n_local * world / n_global.

        DDP averages gradients over the ranks; the method's loss is a mean over the kept problems of
        the GLOBAL batch. Without this factor a rank with 1 kept problem weighed as much as one with 4
        (and two processes gave another update than one process at the same global batch). In one
        process it is 1. Also gathers the batch's r2 for the `mean` baseline (the same on every rank)."""
        stats = distributed.gather_objects((len(used), sum(u[4] for u in used)))
        n_global = sum(n for n, _ in stats)
        self._batch_r2_stats = (sum(s for _, s in stats), n_global) if n_global else None
        return len(used) * len(stats) / n_global if n_global else 0.0

    def _zero_loss(self, model, unwrapped, chats1, y1):
        """The loss of a micro-batch with nothing kept: zero, but from the same forwards as a real one
        (policy on y1, reference, policy on y2, on the first problem's x and y1, weighted by 0), so
        that every rank runs the wrapper's forward and backward: DDP's gradient all-reduce (gloo: "Received
        data size doesn't match"; NCCL: a hang) and FSDP's parameter gathers stay in step."""
        x = self._prompt_ids(chats1[0])
        dummy = [(x, list(y1[0]), x, list(y1[0]), 0.0, {"r1": 0.0})]
        self._dummy = True
        try:
            loss, _ = self._loss(model, unwrapped, dummy)
        finally:
            self._dummy = False
        return loss * 0.0

    def _loss(self, model, unwrapped, used):
        cfg, dev = self.cfg, unwrapped.device
        pad = self.tok.pad_token_id
        # y1 | x with grad (policy: lp1 detached inside stepfix_loss, and the KL), ref without
        ids, att, tgt1, m1, st = completion_batch([(u[0], u[1]) for u in used], pad, dev)
        if cfg.kl_chunk > 0:
            out = self._loss_chunked(model, unwrapped, used, ids, att, tgt1, m1, st)
            if out is not None:
                return out
        pol1 = completion_logits(model, ids, att, st, tgt1.shape[1])  # model: DDP-wrapped or not
        tr = time.perf_counter()
        if cfg.kl_estimator == "none" or cfg.beta == 0:
            ref1 = pol1.detach()
        else:
            ref1 = self._reference(completion_logits, unwrapped, ids, att, st, tgt1.shape[1])
        self.r3_times["ref_forward"] += time.perf_counter() - tr
        kl_tok = token_kl(cfg.kl_estimator, pol1, ref1, tgt1)
        lp1_tok = token_logprobs(pol1, tgt1)
        del pol1, ref1
        ids2, att2, tgt2, m2, st2 = completion_batch([(u[2], u[3]) for u in used], pad, dev)
        lp2_tok = token_logprobs(completion_logits(model, ids2, att2, st2, tgt2.shape[1]), tgt2)
        return self._finish(used, lp2_tok, m2, lp1_tok, m1, kl_tok)

    def _reference(self, forward, unwrapped, *args):
        """forward(reference model, *args) without grad: the frozen SFT copy when there is one, else
        the policy with its adapter disabled."""
        with torch.no_grad():
            if self.ref_model is not None:
                self.ref_model.to(unwrapped.device)
                return forward(self.ref_model, *args)
            with unwrapped.disable_adapter():
                return forward(unwrapped, *args)

    def _finish(self, used, lp2_tok, m2, lp1_tok, m1, kl_tok):
        """The loss of the method from the per-token terms, and its per-sample parts for the records."""
        r2 = torch.tensor([u[4] for u in used], device=lp2_tok.device, dtype=lp2_tok.dtype)
        loss, parts = stepfix_loss(lp2_tok, m2, lp1_tok, m1, r2, kl_tok, self.cfg.beta, self.cfg.logprob,
                                   baseline=self._baseline(used, r2))
        return loss, {k: v.detach().float().cpu() for k, v in parts.items()}

    def _loss_chunked(self, model, unwrapped, used, ids, att, tgt1, m1, st):
        """_loss through hidden states and chunked_token_stats (`kl_chunk` > 0, the default); None
        when the model has no separable backbone and head (then _loss takes the logits path)."""
        cfg, dev, pad = self.cfg, unwrapped.device, self.tok.pad_token_id
        pol = completion_hidden(model, ids, att, st, tgt1.shape[1])
        if pol is None:
            return None
        h1, head = pol
        tr = time.perf_counter()
        h_ref = ref_head = None
        if not (cfg.kl_estimator == "none" or cfg.beta == 0):
            ref = self._reference(completion_hidden, unwrapped, ids, att, st, tgt1.shape[1])
            if ref is None:
                return None
            h_ref, ref_head = ref[0].detach(), ref[1]
        self.r3_times["ref_forward"] += time.perf_counter() - tr
        est = cfg.kl_estimator if h_ref is not None else "none"
        lp1_tok, kl_tok = chunked_token_stats(head, h1, tgt1, est, ref_head, h_ref, cfg.kl_chunk)
        del h1, h_ref
        ids2, att2, tgt2, m2, st2 = completion_batch([(u[2], u[3]) for u in used], pad, dev)
        h2, head2 = completion_hidden(model, ids2, att2, st2, tgt2.shape[1])
        lp2_tok, _ = chunked_token_stats(head2, h2, tgt2, "none", chunk=cfg.kl_chunk)
        return self._finish(used, lp2_tok, m2, lp1_tok, m1, kl_tok)

    def _baseline(self, used, r2):
        """b of the advantage r2 - b (module docstring, `baseline`); None = the paper's loss."""
        how = self.cfg.baseline
        if how == "none":
            return None
        if how == "r1":
            return torch.tensor([u[5].get("r1_used", u[5]["r1"]) for u in used], device=r2.device, dtype=r2.dtype)
        if self._dummy:
            return torch.zeros_like(r2)
        if how == "rloo":  # the k revisions of a y1 are in one micro-batch (_generate_phase keeps them together)
            return loo_baseline(r2, [u[5]["group"] for u in used])
        # the batch's r2 sum and count over every rank (_global_scale), so that every rank keeps the same running mean
        stats = getattr(self, "_batch_r2_stats", None)
        total, n = (float(r2.sum()), r2.numel()) if stats is None else stats
        batch = total / n
        if self.r2_running_mean is None:
            # the first batch has no earlier mean: each sample's b is the leave-one-out mean of the (global)
            # batch, independent of its own r2 (the batch mean with itself in was biased); 0 for a batch of one
            b = (total - r2) / (n - 1) if n > 1 else torch.zeros_like(r2)
            m = batch
        else:
            m = self.r2_running_mean
            b = torch.full_like(r2, m)
        k = self.cfg.baseline_momentum
        self.r2_running_mean = k * m + (1 - k) * batch
        return b

    def _write(self, recs):
        """Every rank's records of this micro-batch, gathered and written by rank 0 (rank order)."""
        if not self.cfg.log_samples:
            return
        for rec in recs:
            rec["rank"] = distributed.rank()
        every = distributed.gather_objects(recs)
        if not self.is_world_process_zero():
            return
        with open(Path(self.args.output_dir) / "stepfix_samples.jsonl", "a", encoding="utf-8") as fh:
            for rank_recs in every:
                for rec in rank_recs:
                    fh.write(json.dumps(rec, ensure_ascii=False, default=str) + "\n")

    def _gather_stats(self) -> tuple[dict, Counter]:
        """The statistics since the last log of every rank, merged (every rank calls log)."""
        acc, counts = defaultdict(list), Counter()
        for a, c in distributed.gather_objects((dict(self._acc), dict(self._counts))):
            for k, v in a.items():
                acc[k].extend(v)
            counts.update(c)
        return acc, counts

    def log(self, logs, start_time=None):
        if "loss" in logs:  # a training log (not the end-of-train summary)
            a, counts = self._gather_stats()
            n = len(a["skipped"])
            if n:
                logs["skip_rate"] = sum(a["skipped"]) / n
            for k in ("r1", "r2", "r2_minus_r1", "kl"):
                if a[k]:
                    m = sum(a[k]) / len(a[k])
                    logs[f"{k}_mean"] = m
                    logs[f"{k}_std"] = math.sqrt(sum((x - m) ** 2 for x in a[k]) / len(a[k]))
            logs["revised"] = len(a["r2"])
            for k, v in sorted(counts.items()):
                logs[k] = v
            gen = counts["y1_generated"] + counts["y2_generated"]
            cut = counts["y1_truncated"] + counts["y2_truncated"]
            self.r3_truncation.add(gen, cut)  # every rank's counts (gathered): the same total on every rank
            logs.update(rl.step_logs(gen, cut, self.cfg.truncation_warn, self.state.global_step,
                                     self.is_world_process_zero()))
            logs.update(judging.step_logs(self.cfg))  # this process's judge: dropped, requests, tokens, cost so far
            logs.update(self.r3_verdicts.logs())  # every rank's (gathered)
            why = nothing_to_learn(n, counts["y1_FORMAT"], a["r2"])  # over every rank
            logs["nothing_to_learn"] = int(why is not None)
            if why is not None:
                self.r3_nothing_to_learn += 1
                if self.is_world_process_zero():
                    warn_nothing_to_learn(self.state.global_step, why)
            self._acc, self._counts = defaultdict(list), Counter()
        elif "train_runtime" in logs:  # the end-of-train summary (every rank logs it): the steps since the last log
            self._flush_truncation()
        super().log(logs, *([start_time] if start_time is not None else []))

    def _flush_truncation(self) -> None:
        """The samples of the steps after the last training log (logging_steps > 1) into run.json's totals:
        every rank's counts gathered (every rank reaches the end-of-train log), then taken off the counts."""
        with self._counts_lock:
            mine = tuple(self._counts.pop(f"{k}_{w}", 0) for w in ("generated", "truncated") for k in ("y1", "y2"))
        every = distributed.gather_objects(mine)
        self.r3_truncation.add(sum(c[0] + c[1] for c in every), sum(c[2] + c[3] for c in every))  # + TimingMixin's time_*, share_*
