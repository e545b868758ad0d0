"""StepCo's process-supervised verifier (PSV): `python -m trainers.psv --config FILE`.

The PSV reads "Problem ... Solution so far: <steps 1..k> Is the last step correct? Answer + or -:"
(verifiers.psv.PROMPT) and its score is P(+) / (P(+) + P(-)) at the last position. It is trained by
MSE regression of that score on a step label in [0, 1]:

  labels: exact  on procedural problems, label(k) = 1 while step k comes before the first wrong step
                 (0 = none) and 0 from it on; solutions are the references and injected-error
                 solutions of the bank's train split (or rows of `data` with question, solution,
                 first_error)
          mc     Monte-Carlo labels (Math-Shepherd / StepCo): label(k) = share of `mc_rollouts`
                 continuations, sampled by `rollout_model` from the prefix of steps 1..k, whose final
                 answer the unit-aware checker accepts (rows need question, solution, answer).
                 Labels are cached in OUTPUT_DIR/psv_labels.jsonl, so a resumed run does not redo them.

Outputs: OUTPUT_DIR/final (the LoRA adapter, like every trainer) and OUTPUT_DIR/psv_model (the
adapter merged into the base, with the tokenizer): the folder the psv verifier backend loads,
`verify(..., backend="psv", config=PsvConfig(model=OUTPUT_DIR/psv_model))` (or R3BENCH_PSV_MODEL), or
`verifiers.psv.PSV(OUTPUT_DIR/psv_model)`.

What the long steps cost on a CPU: Config.costs, which `--help` prints.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from r3bench import procgen
from r3bench.core.prompts import prompt_structured
from trainers.core.config import BaseConfig
from trainers.core.data import read_jsonl, user_chat
from trainers.core.entry import entry
from trainers.core.evaluation import callbacks
from trainers.core.mixins import guarded
from trainers.core.model import load_tokenizer, model_path, policy_model, training_args_kwargs
from trainers.errors import ConfigError, TrainDataError, option
from verifiers import check, seventag
from verifiers.psv import PROMPT

CELLS = [("MC", 1), ("CM", 2), ("CM", 3), ("MC", 4), ("CE", 5), ("CE", 6)]


@dataclass
class Config(BaseConfig):
    output_dir: str = option("runs/psv", "where checkpoints, logs, the final adapter, psv_model and run.json go")
    learning_rate: float = option(1e-4, "peak learning rate")
    batch_size: int = option(8, "step prefixes per micro-batch")
    labels: str = option("exact", "step labels: exact (first-error labels) | mc (Monte-Carlo rollouts)")
    mc_rollouts: int = option(4, "rollouts per step prefix for mc labels")
    mc_max_new_tokens: int = option(384, "maximum tokens of an mc rollout")
    mc_temperature: float = option(0.8, "sampling temperature of mc rollouts")
    rollout_model: str = option("", "model that samples mc rollouts (default: `model`)")
    good_token: str = option("+", "the PSV's 'correct' label token")
    bad_token: str = option("-", "the PSV's 'wrong' label token")
    eval_tasks: str = option("", "lm-eval tasks (none by default: a PSV is a verifier, not a solver)")

    scored_by_lm_eval = False
    costs = ("Cost on a CPU: exact labels are free (procedural first errors) and a step is one forward and backward "
             "of batch_size short prefixes (not measured yet). mc labels are the long step: mc_rollouts sampled "
             "continuations of up to mc_max_new_tokens per step prefix, ~7 steps per solution (with SmolLM2 on 2 "
             "cores, minutes per solution); they are cached in OUTPUT_DIR/psv_labels.jsonl.")

    def validate(self):
        if self.labels not in ("exact", "mc"):
            raise ConfigError(f"labels must be exact or mc, got {self.labels!r}")
        if self.mc_rollouts < 1:
            raise ConfigError("mc_rollouts must be >= 1")


# ------------------------------------------------------------------------------------- rows

def solution_rows(cfg) -> list[dict]:
    """Solutions to label: {question, solution, answer, first_error} (first_error may be None)."""
    if cfg.data:
        path = Path(cfg.data)
        if path.is_dir():
            path = path / "sft.jsonl"
        rows = read_jsonl(path, ("question", "solution") if "sft.jsonl" not in path.name else ())
        if "sft.jsonl" in path.name:  # reference solutions of an export: all steps right
            rows = [{"question": r.get("question") or r["prompt"], "solution": r["completion"],
                     "answer": r.get("answer"), "first_error": 0} for r in rows if r.get("split", "train") == "train"]
        out = [{"question": r["question"], "solution": r["solution"], "answer": r.get("answer"),
                "first_error": r.get("first_error")} for r in rows]
    else:
        rng = random.Random(cfg.seed)
        out = []
        for i, p in enumerate(x for x in procgen.generate(n=cfg.procgen_n, seed=cfg.procgen_seed) if x.split == "train"):
            out.append({"question": p.question, "solution": p.solution, "answer": p.answer, "first_error": 0})
            order = CELLS[i % len(CELLS):] + CELLS[:i % len(CELLS)]
            for cls, step in order:
                try:
                    text, fe, _, _ = procgen.inject_problem(p, cls, step, seed=rng.randrange(1 << 30))
                except procgen.InjectError:
                    continue
                out.append({"question": p.question, "solution": text, "answer": p.answer, "first_error": fe})
                break
    if cfg.max_train_samples:
        out = out[: cfg.max_train_samples]
    if not out:
        raise TrainDataError("no solutions to label")
    return out


def exact_labels(n_steps: int, first_error: int) -> list[float]:
    return [1.0 if (first_error == 0 or k < first_error) else 0.0 for k in range(1, n_steps + 1)]


def prefix_text(question: str, steps) -> str:
    return PROMPT.format(question=question, steps=seventag.render(steps))


def mc_labels(cfg, rows, log=print) -> list[dict]:
    """Monte-Carlo step labels, cached per solution in OUTPUT_DIR/psv_labels.jsonl."""
    import torch
    from transformers import AutoModelForCausalLM

    cache = Path(cfg.output_dir) / "psv_labels.jsonl"
    done = [json.loads(x) for x in cache.read_text().splitlines() if x.strip()] if cache.is_file() else []
    if len(done) >= len(rows):
        return done[: len(rows)]
    path = model_path(cfg.rollout_model or cfg.model)
    tok = load_tokenizer(path, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    from tqdm import tqdm

    with open(cache, "a", encoding="utf-8") as fh:
        for r in tqdm(rows[len(done):], desc="mc labels", initial=len(done), total=len(rows)):
            if r.get("answer") in (None, ""):
                raise TrainDataError("mc labels need an answer per row")
            sol = seventag.parse(r["solution"])
            chat = user_chat(prompt_structured({"question": r["question"], "options": [], "answer_kind": "numeric"}))
            head = tok.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
            labels = []
            for k in range(len(sol.steps)):
                prefix = seventag.render(sol.steps[:k + 1])
                if k == len(sol.steps) - 1:  # the complete solution: its own answer decides
                    labels.append(1.0 if check(r["solution"], r["answer"]).equivalent else 0.0)
                    continue
                enc = tok([head + prefix + "\n"] * cfg.mc_rollouts, return_tensors="pt", add_special_tokens=False)
                with torch.no_grad():
                    out = model.generate(**enc, do_sample=True, temperature=cfg.mc_temperature,
                                         max_new_tokens=cfg.mc_max_new_tokens, pad_token_id=tok.pad_token_id)
                conts = tok.batch_decode(out[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
                labels.append(sum(check(prefix + "\n" + c, r["answer"]).equivalent for c in conts) / len(conts))
            rec = {**r, "labels": labels}
            fh.write(json.dumps(rec) + "\n")
            fh.flush()
            done.append(rec)
    return done


def examples(cfg, log=print) -> list[dict]:
    rows = solution_rows(cfg)
    if cfg.labels == "mc":
        labelled = mc_labels(cfg, rows, log)
    else:
        labelled = []
        for r in rows:
            if r.get("first_error") is None:
                raise TrainDataError("exact labels need first_error per row (or use labels: mc)")
            n = len(seventag.parse(r["solution"]).steps)
            labelled.append({**r, "labels": exact_labels(n, int(r["first_error"]))})
    out = []
    for r in labelled:
        steps = seventag.parse(r["solution"]).steps
        for k, y in enumerate(r["labels"][: len(steps)]):
            out.append({"text": prefix_text(r["question"], steps[:k + 1]), "label": float(y)})
    if not out:
        raise TrainDataError("no labelled step prefixes (solutions without seven-tag steps?)")
    return out


# ---------------------------------------------------------------------------------- trainer

def label_tokens(tok, good: str, bad: str) -> tuple[int, int]:
    g = tok.encode(good, add_special_tokens=False)[-1]
    b = tok.encode(bad, add_special_tokens=False)[-1]
    if g == b:
        raise ConfigError(f"good and bad tokens map to one token id ({good!r}, {bad!r})")
    return g, b


def psv_loss(logits_last, good: int, bad: int, labels):
    """MSE between P(good) / (P(good) + P(bad)) at the last position and the step label."""
    import torch

    pair = torch.stack([logits_last[:, good], logits_last[:, bad]], -1).float().softmax(-1)[:, 0]
    return ((pair - labels.float()) ** 2).mean(), pair


class PSVLoss:
    """The PSV's loss on an HF Trainer (the PSV trainer is `trainers.core.mixins.guarded(Trainer, PSVLoss)`): psv_loss
    at the last position of each prefix; `good`, `bad` are the label token ids."""

    def __init__(self, *a, good: int, bad: int, **kw):
        super().__init__(*a, **kw)
        self.good, self.bad = good, bad
        self.model_accepts_loss_kwargs = False

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        import torch

        labels = inputs.pop("psv_labels")
        logits = model(**inputs).logits
        last = inputs["attention_mask"].sum(-1) - 1
        loss, _ = psv_loss(logits[torch.arange(logits.shape[0], device=logits.device), last], self.good, self.bad,
                           labels)
        return loss


def build(cfg, extra_callbacks=()):
    import torch
    from datasets import Dataset
    from transformers import Trainer, TrainingArguments

    base = model_path(cfg.model)
    tok = load_tokenizer(base, padding_side="right")
    good, bad = label_tokens(tok, cfg.good_token, cfg.bad_token)
    data = Dataset.from_list(examples(cfg))

    def collate(rows):
        enc = tok([r["text"] for r in rows], return_tensors="pt", padding=True, truncation=True,
                  max_length=cfg.max_length)
        enc["psv_labels"] = torch.tensor([r["label"] for r in rows])
        return enc

    args = TrainingArguments(**training_args_kwargs(cfg), remove_unused_columns=False)
    trainer = guarded(Trainer, PSVLoss)(
        model=policy_model(cfg, base), args=args, train_dataset=data, data_collator=collate,
        processing_class=tok, callbacks=callbacks(cfg, tok, extra_callbacks), good=good, bad=bad)
    return trainer, tok, base, None


def save_merged(cfg, trainer, res) -> dict:
    """After training: the adapter merged into the base, with the tokenizer, in OUTPUT_DIR/psv_model."""
    merged_dir = Path(cfg.output_dir) / "psv_model"
    if trainer.is_world_process_zero():
        model = trainer.accelerator.unwrap_model(trainer.model)
        model.merge_and_unload().save_pretrained(str(merged_dir))
        trainer.processing_class.save_pretrained(str(merged_dir))
    return {**res, "psv_model": str(merged_dir), "n_examples": len(trainer.train_dataset)}


train, main = entry(Config, build, after=save_merged)

if __name__ == "__main__":
    raise SystemExit(main())
