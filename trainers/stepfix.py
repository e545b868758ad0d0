"""The paper's step-level reward PG method: `python -m trainers.stepfix --config FILE`.

For each problem x of a batch:

  1. sample y1 ~ pi(. | x) (the seven-tag prompt, chat template, sampling at `temperature`)
  2. verify y1 (`verifier`: symbolic | judge | psv) -> first wrong step e1, class, explanation, n1 steps
  3. r1 = 1.0 if e1 == 0 else e1 / (7 + 1)           (verifiers.rewards.step_reward: n is the
     format's seven steps; a format failure gets the minimum 0; no usable verdict = skipped, counted)
  4. skip the problem when r1 > tau (default 0.9: only fully right solutions are skipped)
  5. p1 = feedback for the error class (verifiers.feedback: MC re-read prompt, CM retrieved
     formulas, CE sandbox-recomputed value), plus the revision instruction
  6. sample y2 ~ pi(. | x, y1, p1)  (chat: user x, assistant y1, user p1)
  7. verify y2 -> r2
  8. loss = -[(log pi(y2 | x, y1, p1) - log pi(y1 | x).detach()) * (r2 - b) - beta * KL(pi(. | x) || pi_ref(. | x))]
     with b = 0: the paper's exact loss (`baseline: none`, the default)

averaged over the problems of the micro-batch that were not skipped (an all-skipped micro-batch
contributes a zero loss that still touches every trainable parameter, so DDP stays in step).
The gradient flows through y2's log-probability and the KL only. pi_ref is the frozen SFT model
(`init_adapter` merged into a copy of the base); the policy is initialised from the same adapter
and trains it. Without `init_adapter`, a fresh LoRA is trained and pi_ref is the base (adapter
disabled).

Choices the paper leaves open, and the option that switches each:

* `kl_estimator` - how KL(pi(.|x) || pi_ref(.|x)) is estimated. The response distribution's KL is
  the expectation over y ~ pi(.|x) of sum_t KL_t; r3bench evaluates it on the sampled y1 (no extra
  sample): `full` (default) sums the exact full-vocabulary KL of the next-token distributions at
  each position of y1; `k1` sums log pi - log pi_ref of y1's tokens (unbiased, high variance,
  can be negative); `k3` sums exp(d) - d - 1 with d = log pi_ref - log pi (Schulman's
  non-negative estimator, as in TRL's GRPO); `none` drops the term. y1 is sampled at
  `temperature`, so it is a sample of the tempered policy (exact only at temperature 1).
* `logprob` - `sum` (default; the equation's sequence log-probabilities, and the KL summed over
  tokens) or `mean` (token-averaged log-probabilities and KL: length-normalised).
* `baseline` - b in step 8, which the paper does not have (its loss weights the log-ratio by r2
  itself, so every revision with r2 > 0 is reinforced, better than y1 or not): `none` (default, b =
  0, the paper's exact loss), `r1` (b = r1 of the same problem: the advantage r2 - r1 reinforces a
  revision only when it moved the first error later), or `mean` (b = a running mean of r2 over the
  previous micro-batches, momentum `baseline_momentum`, started at the first batch's mean; saved
  in checkpoints, so a resumed run continues it). A variance-reduction choice; off by default so
  that the default run is the paper's method.
* Generation goes through trainers.generation: HF generate with the KV cache, stopping at the chat
  template's end-of-turn ids (default), or vLLM in the training process (`use_vllm`, TRL's names).
* `tau`, `beta`, the revision instruction (`revise_instruction`), sampling settings and the
  verifier backend are config fields; a verifier that gives no verdict (valid=False: judge
  unreachable, junk reply, internal error) skips that problem and is counted
  (`verifier_failures`); a feedback channel that fails falls back to the verdict's explanation and
  is counted (`feedback_fallbacks`).

Logged besides the loss (what the paper does not report): skip rate, mean/std of r1 and r2 and
r2 - r1, counts of the error classes of y1 and y2 per logging step, and the seconds spent in
generation, verification, feedback, policy forward, reference forward and backward
(time_*_s and share_*). Every problem's record (texts,
verdicts, rewards, skip reason, loss terms) goes to OUTPUT_DIR/stepfix_samples.jsonl.
"""
from __future__ import annotations

import json
import math
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from trainers import common
from trainers.common import BaseConfig, ConfigError, _f
from trainers.generation import VllmFields

REVISE = ("Revise your solution: fix the step named above and everything that depends on it. "
          "Write the complete corrected solution again in the same seven-tag format, ending with "
          "<final_answer>.")

KL_ESTIMATORS = ("full", "k1", "k3", "none")
BASELINES = ("none", "r1", "mean")


@dataclass
class Config(BaseConfig, VllmFields):
    output_dir: str = _f("runs/stepfix", "where checkpoints, logs, the final adapter and run.json go")
    learning_rate: float = _f(5e-5, "peak learning rate")
    batch_size: int = _f(4, "problems per micro-batch")
    gradient_checkpointing: bool = _f(True, "recompute activations in the backward pass (long revision contexts: "
                                      "without it attention activations of x, y1, p1, y2 outgrow CPU memory)")
    tau: float = _f(0.9, "skip a problem when r1 > tau")
    beta: float = _f(0.1, "KL coefficient")
    kl_estimator: str = _f("full", "KL(pi(.|x) || pi_ref(.|x)) on y1: full | k1 | k3 | none")
    kl_chunk: int = _f(32, "positions per chunk of the LM head / log-softmax / KL under activation checkpointing "
                           "(0: the whole [B, T, V] at once, the older path: same values, ~10x the memory)")
    logprob: str = _f("sum", "sequence log-probabilities: sum (the equation) | mean (token-averaged)")
    verifier: str = _f("symbolic", "step verifier backend: symbolic | judge | psv")
    temperature: float = _f(0.7, "sampling temperature of y1 and y2")
    top_p: float = _f(1.0, "nucleus sampling of y1 and y2")
    max_new_tokens: int = _f(512, "maximum tokens of y1 and of y2")
    revise_instruction: str = _f(REVISE, "text appended to the feedback to ask for the revision")
    log_samples: bool = _f(True, "write every problem's record to OUTPUT_DIR/stepfix_samples.jsonl")
    baseline: str = _f("none", "b in (r2 - b): none (the paper's exact loss) | r1 | mean (running mean of r2)")
    baseline_momentum: float = _f(0.9, "momentum of the running-mean baseline (baseline: mean)")
    merge_lora_for_generation: bool = _f(False, "merge the LoRA into fp32 weights while sampling (unmerged "
                                         "after); off: no speed-up measured on CPU (docs/training.md)")

    def validate(self):
        if self.kl_estimator not in KL_ESTIMATORS:
            raise ConfigError(f"kl_estimator must be one of {KL_ESTIMATORS}, got {self.kl_estimator!r}")
        if self.logprob not in ("sum", "mean"):
            raise ConfigError(f"logprob must be sum or mean, got {self.logprob!r}")
        from verifiers.steps import BACKENDS

        if self.verifier not in BACKENDS:
            raise ConfigError(f"verifier must be one of {sorted(BACKENDS)}, got {self.verifier!r}")
        if not self.temperature > 0:
            raise ConfigError("temperature must be > 0 (y1 and y2 are sampled)")
        if self.beta < 0:
            raise ConfigError(f"beta must be >= 0, got {self.beta}")
        if self.baseline not in BASELINES:
            raise ConfigError(f"baseline must be one of {BASELINES}, got {self.baseline!r}")
        if not 0 <= self.baseline_momentum < 1:
            raise ConfigError(f"baseline_momentum must be in [0, 1), got {self.baseline_momentum}")
        self.check_vllm()


# ------------------------------------------------------------------------------ pure pieces

def skip(r1: float, tau: float) -> bool:
    """The paper's skip rule: a solution already good enough (r1 > tau) is not revised."""
    return r1 > tau


def reward(verdict) -> tuple[float | None, str]:
    """(r, reason) from a StepVerdict through verifiers.rewards.step_reward, the paper's position
    reward with n fixed at the format's seven steps: 1.0 with no wrong step, e / 8 for a first wrong
    step e, the minimum 0.0 for a format failure. r is None when no reward can be had (no verdict,
    an unusable verdict): the trainer skips that problem and counts it (`reward_failures`)."""
    from verifiers.rewards import step_reward

    res = step_reward(verdict)
    return (res.value if res.ok else None), res.reason


def token_kl(estimator: str, pol_logits, ref_logits, tokens):
    """Per-token KL estimates [B, T] at completion positions.

    pol_logits/ref_logits: [B, T, V] next-token logits at the positions that predict `tokens` [B, T]."""
    import torch

    lp = torch.log_softmax(pol_logits.float(), -1)
    lq = torch.log_softmax(ref_logits.float(), -1)
    if estimator == "full":
        return (lp.exp() * (lp - lq)).sum(-1)
    a = lp.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
    b = lq.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
    if estimator == "k1":
        return a - b
    if estimator == "k3":
        d = b - a
        return torch.exp(d) - d - 1
    return torch.zeros_like(a)


def _agg(x, mask, how: str):
    s = (x * mask).sum(-1)
    return s if how == "sum" else s / mask.sum(-1).clamp(min=1)


def stepfix_loss(lp2_tok, mask2, lp1_tok, mask1, r2, kl_tok, beta: float, logprob: str = "sum", baseline=None):
    """The loss of the method, per sample and averaged.

    lp2_tok [B, T2]: log pi(y2_t | x, y1, p1, y2_<t) (with grad); lp1_tok [B, T1]: log pi(y1_t | x, y1_<t)
    (detached here); kl_tok [B, T1]: per-token KL estimates on y1's positions (with grad); masks 1 on
    completion tokens; r2 [B]; baseline [B] or None (= 0, the paper's loss): the log-ratio is weighted
    by r2 - baseline. Returns (mean loss, dict of per-sample tensors lp2, lp1, kl, adv, loss)."""
    lp2 = _agg(lp2_tok, mask2, logprob)
    lp1 = _agg(lp1_tok, mask1, logprob).detach()
    kl = _agg(kl_tok, mask1, logprob)
    adv = r2 if baseline is None else r2 - baseline
    per = -((lp2 - lp1) * adv - beta * kl)
    return per.mean(), {"lp2": lp2, "lp1": lp1, "kl": kl, "adv": adv, "loss": per}


def completion_batch(seqs, pad_id: int, device):
    """Right-padded input_ids/attention_mask for [(prompt_ids, completion_ids)], and for each row the
    slice of logits positions [start, start+len(completion)) that predict the completion tokens."""
    import torch

    L = max(len(p) + len(c) for p, c in seqs)
    ids = torch.full((len(seqs), L), pad_id, dtype=torch.long)
    att = torch.zeros((len(seqs), L), dtype=torch.long)
    Tc = max(len(c) for _, c in seqs)
    tgt = torch.full((len(seqs), Tc), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), Tc))
    starts = []
    for i, (p, c) in enumerate(seqs):
        row = list(p) + list(c)
        ids[i, :len(row)] = torch.tensor(row)
        att[i, :len(row)] = 1
        tgt[i, :len(c)] = torch.tensor(list(c), dtype=torch.long)
        mask[i, :len(c)] = 1
        starts.append(len(p) - 1)
    return ids.to(device), att.to(device), tgt.to(device), mask.to(device), starts


def _backbone_and_head(model):
    """(decoder backbone, LM head) of a causal LM or a peft model around one, or None when the
    model's logits are more than head(hidden) (logit soft-capping or scaling) or it has no decoder."""
    inner = model.get_base_model() if hasattr(model, "get_base_model") else model
    cfg = getattr(inner, "config", None)
    text = cfg.get_text_config() if cfg is not None and hasattr(cfg, "get_text_config") else cfg
    if text is None or any(getattr(text, k, None) not in (None, 1, 1.0) for k in
                            ("final_logit_softcapping", "logit_scale", "logits_scaling", "output_multiplier")):
        return None
    get = getattr(inner, "get_decoder", None)
    dec, head = (get() if get else None), inner.get_output_embeddings()
    if dec is None or head is None or dec is inner:
        return None
    return dec, head


def completion_logits(model, ids, att, starts, Tc):
    """[B, Tc, V] logits at the positions predicting each row's completion tokens (positions past a
    row's end repeat its last position; they are masked out by the caller).

    The LM head runs only at those positions (hidden states gathered first): with SmolLM2's 49k
    vocabulary the full [B, L, V] logits of the prompt + completion rows were most of the step's
    memory (x, y1, p1 and y2 make L ~1,300 tokens for Tc ~300). Models whose logits are more than
    head(hidden) go through the plain forward."""
    import torch

    B, L = ids.shape
    pos = torch.tensor(starts, device=ids.device).unsqueeze(1) + torch.arange(Tc, device=ids.device)
    pos = pos.clamp(max=L - 1)
    parts = _backbone_and_head(model)
    if parts is None:
        logits = model(input_ids=ids, attention_mask=att).logits
        return logits.gather(1, pos.unsqueeze(-1).expand(-1, -1, logits.shape[-1]))
    dec, head = parts
    hidden = dec(input_ids=ids, attention_mask=att, use_cache=False).last_hidden_state
    hidden = hidden.gather(1, pos.unsqueeze(-1).expand(-1, -1, hidden.shape[-1]))
    return head(hidden)


def completion_hidden(model, ids, att, starts, Tc):
    """(hidden [B, Tc, H] at the positions predicting each row's completion tokens, LM head), or
    None when the model has no separable backbone and head (see _backbone_and_head) or its head
    carries an adapter of its own (then the reference head would differ from the policy's)."""
    import torch

    parts = _backbone_and_head(model)
    if parts is None or hasattr(parts[1], "lora_A"):
        return None
    dec, head = parts
    B, L = ids.shape
    pos = (torch.tensor(starts, device=ids.device).unsqueeze(1) + torch.arange(Tc, device=ids.device)).clamp(max=L - 1)
    hidden = dec(input_ids=ids, attention_mask=att, use_cache=False).last_hidden_state
    return hidden.gather(1, pos.unsqueeze(-1).expand(-1, -1, hidden.shape[-1])), head


def chunked_token_stats(head, h_pol, tokens, estimator: str = "none", ref_head=None, h_ref=None, chunk: int = 32):
    """Per-token log pi(token) [B, T] and KL estimates [B, T] (token_kl's formulas) from hidden states,
    `chunk` positions at a time under activation checkpointing: the [B, chunk, V] logits and
    log-softmaxes exist for one chunk at a time and are recomputed in the backward pass, instead of
    several [B, T, V] fp32 tensors (with SmolLM2's 49k vocabulary, B = 8 and T = 300 each is 0.47 GB)
    held for the backward. Same values and gradients as the unchunked path (tests/test_trainer_fixes.py)."""
    import torch
    from torch.utils.checkpoint import checkpoint

    def one(hp, hr, tk):
        lp = torch.log_softmax(head(hp).float(), -1)
        a = lp.gather(-1, tk.unsqueeze(-1)).squeeze(-1)
        if hr is None or estimator == "none":
            return a, torch.zeros_like(a)
        with torch.no_grad():
            lq = torch.log_softmax(ref_head(hr).float(), -1)
        if estimator == "full":
            return a, (lp.exp() * (lp - lq)).sum(-1)
        b = lq.gather(-1, tk.unsqueeze(-1)).squeeze(-1)
        if estimator == "k1":
            return a, a - b
        d = b - a
        return a, torch.exp(d) - d - 1

    lps, kls = [], []
    for i in range(0, tokens.shape[1], chunk):
        hr = None if h_ref is None else h_ref[:, i:i + chunk]
        a, k = checkpoint(one, h_pol[:, i:i + chunk], hr, tokens[:, i:i + chunk], use_reentrant=False)
        lps.append(a)
        kls.append(k)
    return torch.cat(lps, 1), torch.cat(kls, 1)


def token_logprobs(logits, tokens):
    import torch

    return torch.log_softmax(logits.float(), -1).gather(-1, tokens.unsqueeze(-1)).squeeze(-1)


# --------------------------------------------------------------------------------- trainer

def dataset(cfg, log=print):
    from datasets import Dataset

    rows, path = common.train_rows(cfg, "sft.jsonl", ("prompt", "completion", "answer"), log=log)
    recs = [{"id": str(r.get("id", i)), "prompt": r["prompt"], "question": r.get("question") or r["prompt"],
             "reference": r["completion"], "answer": str(r["answer"])} for i, r in enumerate(rows)]
    return Dataset.from_list(recs), path


def _make_trainer_class():
    import torch
    from transformers import Trainer

    class StepFixTrainer(common.GuardMixin, Trainer):
        """HF Trainer whose compute_loss runs the method on a batch of problem rows."""

        def __init__(self, *a, stepfix_cfg=None, ref_model=None, tok=None, **kw):
            super().__init__(*a, **kw)
            self.cfg, self.ref_model, self.tok = stepfix_cfg, ref_model, tok
            self.model_accepts_loss_kwargs = False
            self._acc = defaultdict(list)
            self._counts = Counter()
            self._t = defaultdict(float)
            self.r2_running_mean = None  # the `mean` baseline's state
            self.generator = None  # trainers.generation backend, made on first use

        # -- pieces a test (or a user) may replace
        def generate(self, model, chats: list[list[dict]]) -> list[list[int]]:
            """Sampled completion token ids (cut after the first end-of-turn id, kept) for each chat."""
            from trainers import generation

            cfg = self.cfg
            if self.generator is None:
                self.generator = generation.make(cfg, common.model_path(cfg.model))
            sp = generation.Sampling(max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature, top_p=cfg.top_p)
            return self.generator.generate(model, self.tok, chats, sp)

        def r3_state(self) -> dict:
            return {"r2_running_mean": self.r2_running_mean}

        def r3_load_state(self, state: dict) -> None:
            super().r3_load_state(state)
            self.r2_running_mean = state.get("r2_running_mean")

        def verify(self, question, text, reference):
            from verifiers.steps import verify

            return verify(question, text, reference, backend=self.cfg.verifier)

        def feedback(self, question, text, verdict, reference) -> tuple[str, str]:
            try:
                from verifiers.feedback import feedback

                fb = feedback(question, text, verdict, reference)
                return fb.text, ""
            except Exception as e:  # noqa: BLE001 - counted, see module docstring
                self._counts["feedback_fallbacks"] += 1
                return (f"Step {verdict.first_error} is wrong: {verdict.explanation}.",
                        f"feedback failed ({type(e).__name__}: {str(e)[:100]})")

        def _prompt_ids(self, chat):
            return self.tok.apply_chat_template(chat, tokenize=True, add_generation_prompt=True, return_dict=False)

        # -- the method
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            cfg, tok = self.cfg, self.tok
            unwrapped = self.accelerator.unwrap_model(model)
            fb0 = self._t["feedback"]
            t0 = time.perf_counter()
            chats1 = [common.user_chat(r["prompt"]) for r in inputs]
            y1 = self.generate(unwrapped, chats1)
            t1 = time.perf_counter()
            recs, keep = [], []
            for r, ids in zip(inputs, y1):
                text = tok.decode(ids, skip_special_tokens=True)
                v = self.verify(r["question"], text, r["reference"])
                rec = {"step": self.state.global_step + 1, "id": r["id"], "y1": text, "e1": v.first_error,
                       "n1": v.n_steps, "class1": v.error_class, "why1": v.explanation}
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
                    if skip(r1, cfg.tau):
                        rec.update(skipped=True, skip_reason=f"r1 = {r1:.3f} > tau = {cfg.tau}")
                    else:
                        tf = time.perf_counter()
                        p1, fnote = self.feedback(r["question"], text, v, r["reference"])
                        self._t["feedback"] += time.perf_counter() - tf
                        rec.update(skipped=False, feedback=p1, feedback_note=fnote)
                        keep.append((chats1[len(recs)], r, ids, text, p1, rec))
                recs.append(rec)
            t2 = t3 = t4 = time.perf_counter()
            used = []
            if keep:
                chats2 = [common.user_chat(r["prompt"]) + [{"role": "assistant", "content": text},
                                                           {"role": "user", "content": f"{p1}\n\n{cfg.revise_instruction}"}]
                          for _, r, _, text, p1, _ in keep]
                y2 = self.generate(unwrapped, chats2)
                t3 = time.perf_counter()
                for (chat1, r, ids1, _, _, rec), ids2, chat2 in zip(keep, y2, chats2):
                    text2 = tok.decode(ids2, skip_special_tokens=True)
                    v2 = self.verify(r["question"], text2, r["reference"])
                    rec.update(y2=text2, e2=v2.first_error, n2=v2.n_steps, class2=v2.error_class, why2=v2.explanation)
                    if not v2.valid:
                        self._counts["verifier_failures"] += 1
                        rec.update(skipped=True, skip_reason=f"verifier gave no verdict on y2: {v2.explanation}")
                        continue
                    r2, note2 = reward(v2)
                    rec["reward2_reason"] = note2
                    if r2 is None:
                        self._counts["reward_failures"] += 1
                        rec.update(skipped=True, skip_reason=f"no reward for y2: {note2}")
                        continue
                    rec["r2"] = r2
                    self._acc["r2"].append(r2)
                    self._acc["r2_minus_r1"].append(r2 - rec["r1"])
                    self._counts[f"y2_{v2.error_class or 'correct'}"] += 1
                    used.append((self._prompt_ids(chat1), ids1, self._prompt_ids(chat2), ids2, r2, rec))
                t4 = time.perf_counter()
            self._t["generate"] += (t1 - t0) + (t3 - t2)
            self._t["verify"] += (t2 - t1) + (t4 - t3) - (self._t["feedback"] - fb0)
            # skipped = contributed no loss: r1 > tau, or no verdict on y1 or on y2
            self._acc["skipped"].extend(1.0 if rec.get("skipped") else 0.0 for rec in recs)
            ref0 = self._t["ref_forward"]
            if used:
                loss, parts = self._loss(model, unwrapped, used)
                for i, (*_, rec) in enumerate(used):
                    rec.update({k: float(v[i]) for k, v in parts.items()})
                    self._acc["kl"].append(float(parts["kl"][i]))
            else:
                loss = sum((p * 0).sum() for p in model.parameters() if p.requires_grad)
            self._t["forward"] += time.perf_counter() - t4 - (self._t["ref_forward"] - ref0)
            self._write(recs)
            return loss

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
            with torch.no_grad():
                if cfg.kl_estimator == "none" or cfg.beta == 0:
                    ref1 = pol1.detach()
                elif self.ref_model is not None:
                    self.ref_model.to(dev)
                    ref1 = completion_logits(self.ref_model, ids, att, st, tgt1.shape[1])
                else:
                    with unwrapped.disable_adapter():
                        ref1 = completion_logits(unwrapped, ids, att, st, tgt1.shape[1])
            self._t["ref_forward"] += time.perf_counter() - tr
            kl_tok = token_kl(cfg.kl_estimator, pol1, ref1, tgt1)
            lp1_tok = token_logprobs(pol1, tgt1)
            del pol1, ref1
            ids2, att2, tgt2, m2, st2 = completion_batch([(u[2], u[3]) for u in used], pad, dev)
            lp2_tok = token_logprobs(completion_logits(model, ids2, att2, st2, tgt2.shape[1]), tgt2)
            r2 = torch.tensor([u[4] for u in used], device=dev, dtype=lp2_tok.dtype)
            loss, parts = stepfix_loss(lp2_tok, m2, lp1_tok, m1, r2, kl_tok, cfg.beta, cfg.logprob,
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
                with torch.no_grad():
                    if self.ref_model is not None:
                        self.ref_model.to(dev)
                        ref = completion_hidden(self.ref_model, ids, att, st, tgt1.shape[1])
                    else:
                        with unwrapped.disable_adapter():
                            ref = completion_hidden(unwrapped, ids, att, st, tgt1.shape[1])
                if ref is None:
                    return None
                h_ref, ref_head = ref[0].detach(), ref[1]
            self._t["ref_forward"] += time.perf_counter() - tr
            est = cfg.kl_estimator if h_ref is not None else "none"
            lp1_tok, kl_tok = chunked_token_stats(head, h1, tgt1, est, ref_head, h_ref, cfg.kl_chunk)
            del h1, h_ref
            ids2, att2, tgt2, m2, st2 = completion_batch([(u[2], u[3]) for u in used], pad, dev)
            h2, head2 = completion_hidden(model, ids2, att2, st2, tgt2.shape[1])
            lp2_tok, _ = chunked_token_stats(head2, h2, tgt2, "none", chunk=cfg.kl_chunk)
            r2 = torch.tensor([u[4] for u in used], device=dev, dtype=lp2_tok.dtype)
            loss, parts = stepfix_loss(lp2_tok, m2, lp1_tok, m1, r2, kl_tok, cfg.beta, cfg.logprob,
                                       baseline=self._baseline(used, r2))
            return loss, {k: v.detach().float().cpu() for k, v in parts.items()}

        def _baseline(self, used, r2):
            """b of the advantage r2 - b (module docstring, `baseline`); None = the paper's loss."""
            how = self.cfg.baseline
            if how == "none":
                return None
            if how == "r1":
                return torch.tensor([u[5]["r1"] for u in used], device=r2.device, dtype=r2.dtype)
            m = float(r2.mean()) if self.r2_running_mean is None else self.r2_running_mean
            k = self.cfg.baseline_momentum
            self.r2_running_mean = k * m + (1 - k) * float(r2.mean())
            return torch.full_like(r2, m)

        def training_step(self, model, inputs, num_items_in_batch=None):
            t0 = time.perf_counter()
            parts = ("generate", "verify", "feedback", "forward", "ref_forward")
            before = sum(self._t[k] for k in parts)
            out = super().training_step(model, inputs, num_items_in_batch)
            inner = sum(self._t[k] for k in parts) - before
            self._t["backward"] += time.perf_counter() - t0 - inner
            self._t["step"] += time.perf_counter() - t0
            return out

        def _write(self, recs):
            if not self.cfg.log_samples or not self.is_world_process_zero():
                return
            with open(Path(self.args.output_dir) / "stepfix_samples.jsonl", "a", encoding="utf-8") as fh:
                for rec in recs:
                    fh.write(json.dumps(rec, ensure_ascii=False, default=str) + "\n")

        def log(self, logs, start_time=None):
            if "loss" in logs:  # a training log (not the end-of-train summary)
                a = self._acc
                n = len(a["skipped"])
                if n:
                    logs["skip_rate"] = sum(a["skipped"]) / n
                for k in ("r1", "r2", "r2_minus_r1", "kl"):
                    if a[k]:
                        m = sum(a[k]) / len(a[k])
                        logs[f"{k}_mean"] = m
                        logs[f"{k}_std"] = math.sqrt(sum((x - m) ** 2 for x in a[k]) / len(a[k]))
                logs["revised"] = len(a["r2"])
                for k, v in sorted(self._counts.items()):
                    logs[k] = v
                parts = ("generate", "verify", "feedback", "forward", "ref_forward", "backward")
                tot = sum(self._t[k] for k in parts)
                logs["time_step_s"] = self._t["step"]
                for k in parts:
                    logs[f"time_{k}_s"] = self._t[k]
                    if tot:
                        logs[f"share_{k}"] = self._t[k] / tot
                self._acc, self._counts, self._t = defaultdict(list), Counter(), defaultdict(float)
            super().log(logs, *([start_time] if start_time is not None else []))

    return StepFixTrainer


def build(cfg, extra_callbacks=(), trainer_cls=None):
    from transformers import TrainingArguments

    base = common.model_path(cfg.model)
    tok = common.load_tokenizer(base)
    data, path = dataset(cfg)
    args = TrainingArguments(**common.training_args_kwargs(cfg), remove_unused_columns=False)
    cls = trainer_cls or _make_trainer_class()
    trainer = cls(model=common.policy_model(cfg, base), args=args, train_dataset=data, data_collator=lambda rows: rows,
                  callbacks=common.callbacks(cfg, tok, extra_callbacks), stepfix_cfg=cfg,
                  ref_model=common.frozen_reference(cfg, base), tok=tok)
    return trainer, tok, base, path


def train(cfg, extra_callbacks=(), trainer_cls=None):
    return common.run_training(cfg, build, extra_callbacks=extra_callbacks, trainer_cls=trainer_cls)[1]


def main(argv=None):
    return common.main(Config, train, argv, prog="python -m trainers.stepfix")


if __name__ == "__main__":
    raise SystemExit(main())
