"""The stepfix method's pure pieces: the reward and skip rule, the KL estimators, the loss, and the
batching and log-probability gathering it runs on (trainers.stepfix documents the method;
trainers.stepfix_trainer.StepFixTrainer runs it). torch is imported where it is used, so importing
this module (and `python -m trainers.stepfix --help`) stays light.
"""
from __future__ import annotations

from verifiers.rewards import step_reward


def skip(r1: float, tau: float) -> bool:
    """The paper's skip rule: a solution already good enough (r1 > tau) is not revised."""
    return r1 > tau


def reward(verdict) -> tuple[float | None, str]:
    """(r, reason) from a StepVerdict through verifiers.rewards.step_reward, the paper's position
    reward with n fixed at the format's seven steps: 1.0 with no wrong step, e / 8 for a first wrong
    step e, the minimum 0.0 for a format failure. r is None when no reward can be had (no verdict,
    an unusable verdict): the trainer skips that problem and counts it (`reward_failures`)."""
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


def loo_baseline(r2, groups):
    """RLOO's baseline: for each revision, the mean r2 of the OTHER revisions of its group (the k
    revisions of one first attempt y1). Every group needs >= 2 members (a lone revision has no other
    to compare with: the trainer drops it, `rloo_singletons`). The advantages r2 - b of a group sum to
    zero, and b does not depend on the revision it is subtracted from, so E[(r2 - b) grad log pi(y2)]
    is still the gradient of E[r2] (Kool et al. 2019, "Buy 4 REINFORCE samples, get a baseline for free").

    r2 [B] (a tensor), groups: B hashable group keys. Returns b [B] like r2.

    >>> loo_baseline(torch.tensor([0.0, 0.5, 1.0]), ["a", "a", "a"]).tolist()
    [0.75, 0.5, 0.25]"""
    import torch

    keys = list(groups)
    if len(keys) != r2.shape[0]:
        raise ValueError(f"{len(keys)} group keys for {r2.shape[0]} rewards")
    out = torch.empty_like(r2)
    for g in dict.fromkeys(keys):
        idx = [i for i, k in enumerate(keys) if k == g]
        if len(idx) < 2:
            raise ValueError(f"group {g!r} has {len(idx)} revision(s); the leave-one-out baseline needs >= 2")
        sel = torch.tensor(idx, device=r2.device)
        vals = r2[sel]
        out[sel] = (vals.sum() - vals) / (len(idx) - 1)
    return out


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


def backbone_and_head(model):
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
    parts = backbone_and_head(model)
    if parts is None:
        logits = model(input_ids=ids, attention_mask=att).logits
        return logits.gather(1, pos.unsqueeze(-1).expand(-1, -1, logits.shape[-1]))
    dec, head = parts
    hidden = dec(input_ids=ids, attention_mask=att, use_cache=False).last_hidden_state
    hidden = hidden.gather(1, pos.unsqueeze(-1).expand(-1, -1, hidden.shape[-1]))
    return head(hidden)


def completion_hidden(model, ids, att, starts, Tc):
    """(hidden [B, Tc, H] at the positions predicting each row's completion tokens, LM head), or
    None when the model has no separable backbone and head (see backbone_and_head), its head
    carries an adapter of its own (then the reference head would differ from the policy's), or it is
    wrapped by FSDP / DeepSpeed (then the caller takes the logits path through the wrapper). A DDP
    wrapper is looked through for the head, and its forward is the one that runs."""
    import torch

    from trainers.distributed import unwrap

    inner = unwrap(model)
    if inner is not model and type(model).__name__ != "DistributedDataParallel":
        return None  # FSDP / DeepSpeed: the head's weights are shards outside the wrapper's forward
    parts = backbone_and_head(inner)
    if parts is None or hasattr(parts[1], "lora_A"):
        return None
    dec, head = parts
    B, L = ids.shape
    pos = (torch.tensor(starts, device=ids.device).unsqueeze(1) + torch.arange(Tc, device=ids.device)).clamp(max=L - 1)
    if inner is not model:
        # DDP: the forward must go through the wrapper (it arms the gradient all-reduce of the backward);
        # the backbone's last hidden state comes back as hidden_states[-1], and the LM head runs at one
        # position only (logits_to_keep=1) instead of [B, L, V]
        out = model(input_ids=ids, attention_mask=att, use_cache=False, output_hidden_states=True, logits_to_keep=1)
        hidden = out.hidden_states[-1]
    else:
        hidden = dec(input_ids=ids, attention_mask=att, use_cache=False).last_hidden_state
    return hidden.gather(1, pos.unsqueeze(-1).expand(-1, -1, hidden.shape[-1])), head


def chunked_token_stats(head, h_pol, tokens, estimator: str = "none", ref_head=None, h_ref=None, chunk: int = 32):
    """Per-token log pi(token) [B, T] and KL estimates [B, T] (token_kl's formulas) from hidden states,
    `chunk` positions at a time under activation checkpointing: the [B, chunk, V] logits and
    log-softmaxes exist for one chunk at a time and are recomputed in the backward pass, instead of
    several [B, T, V] fp32 tensors (with SmolLM2's 49k vocabulary, B = 8 and T = 300 each is 0.47 GB)
    held for the backward. Same values and gradients as the unchunked path (tests/trainers/test_stepfix_chunked.py)."""
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
