"""stepfix's chunked, checkpointed log-prob/KL path (`kl_chunk`) against the unchunked logits path:
the same per-token values and the same gradients, for every KL estimator and both references."""
import pytest
import torch

from trainers import stepfix

SEQS = [([5, 6, 7], [8, 9, 10, 11, 12, 13, 14]), ([20, 21, 22, 23, 24], [25, 26]), ([3, 4], [30, 31, 32, 33, 34])]


def _peft(tiny, seed=0):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    base = AutoModelForCausalLM.from_pretrained(tiny)
    m = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules="all-linear", lora_dropout=0.0,
                                        init_lora_weights=False))
    return m.eval()


def _grads(model):
    return {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.requires_grad and p.grad is not None}


@pytest.mark.parametrize("estimator", ["full", "k1", "k3", "none"])
@pytest.mark.parametrize("separate_ref", [False, True])
def test_chunked_equals_unchunked(tiny, estimator, separate_ref):
    from transformers import AutoModelForCausalLM

    model = _peft(tiny)
    ref_model = AutoModelForCausalLM.from_pretrained(tiny).eval() if separate_ref else None
    if ref_model is not None:  # a reference that differs from the policy's base
        with torch.no_grad():
            for p in ref_model.parameters():
                p.add_(0.01 * torch.randn_like(p))
    ids, att, tgt, mask, st = stepfix.completion_batch(SEQS, 0, "cpu")
    T = tgt.shape[1]

    def ref_logits():
        with torch.no_grad():
            if ref_model is not None:
                return stepfix.completion_logits(ref_model, ids, att, st, T)
            with model.disable_adapter():
                return stepfix.completion_logits(model, ids, att, st, T)

    # the older path: full [B, T, V] logits
    pol = stepfix.completion_logits(model, ids, att, st, T)
    kl0 = stepfix.token_kl(estimator, pol, ref_logits(), tgt)
    lp0 = stepfix.token_logprobs(pol, tgt)
    ((lp0 * mask).sum() + (kl0 * mask).sum()).backward()
    g0 = _grads(model)
    model.zero_grad()

    # the chunked path, with a chunk that does not divide T
    h, head = stepfix.completion_hidden(model, ids, att, st, T)
    with torch.no_grad():
        if ref_model is not None:
            hr, ref_head = stepfix.completion_hidden(ref_model, ids, att, st, T)
        else:
            with model.disable_adapter():
                hr, ref_head = stepfix.completion_hidden(model, ids, att, st, T)
    lp1, kl1 = stepfix.chunked_token_stats(head, h, tgt, estimator, ref_head, hr, chunk=3)
    ((lp1 * mask).sum() + (kl1 * mask).sum()).backward()
    g1 = _grads(model)

    assert torch.allclose(lp1 * mask, lp0 * mask, atol=1e-5)
    assert torch.allclose(kl1 * mask, kl0 * mask, atol=1e-5)
    if estimator != "none":
        assert (kl0 * mask).abs().sum() > 0  # the comparison is not of two zeros
    assert g0.keys() == g1.keys() and g0
    for n in g0:
        assert torch.allclose(g0[n], g1[n], atol=1e-5, rtol=1e-4), n


def test_head_with_an_adapter_falls_back_to_logits(tiny):
    """A LoRA on the LM head makes the reference head differ from the policy's: no hidden path."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    m = get_peft_model(AutoModelForCausalLM.from_pretrained(tiny),
                       LoraConfig(r=2, target_modules=["lm_head", "q_proj"], lora_dropout=0.0))
    ids, att, tgt, mask, st = stepfix.completion_batch(SEQS, 0, "cpu")
    assert stepfix.completion_hidden(m, ids, att, st, tgt.shape[1]) is None
    assert stepfix.completion_hidden(_peft(tiny), ids, att, st, tgt.shape[1]) is not None
