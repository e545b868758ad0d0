"""Doubles for the distributed tests (tests/trainers/test_distributed.py) and studies/dist_compare.py, and a
launcher that runs a trainer with them: `torchrun --nproc_per_node 2 tests/trainers/dist_doubles.py stepfix --flags`.

Two processes must give the same loss and update as one at the same global batch; sampling from a
random tiny model cannot be made independent of how a batch is split across ranks, so these stand
in for generation and verification and are named doubles:

* GENERATION DOUBLE: a completion's token ids are a hash of its chat (stepfix) or of its prompt ids
  and its place in the group (GRPO): the same on any rank, in any batch split.
* VERIFIER DOUBLE (stepfix): y1 is wrong at step 2 (r1 = 0.25), y2 at step 5 (r2 = 0.625); y1 is
  right (r1 = 1 > tau: skipped) for the problems of rank 1 in step 1 - a rank whose micro-batch is
  all skipped - or, in one process (R3_SKIP_FILE), for the (step, id) pairs that the two-process run
  skipped, so both runs skip the same problems.
* REWARD DOUBLE (GRPO): the completion's length / 100.
* JUDGE BUDGET HOOK (stepfix, GRPO): with R3_BUDGET_RANK=N, the verifier double (stepfix) or the
  reward double (GRPO) of rank N raises JudgeBudgetExceeded (as a judge whose budget is spent does,
  inside verify) from step R3_BUDGET_STEP (default 1) on: one rank's budget spent, the other's not.

Everything else (data, model, LoRA, loss, optimizer, DDP, gathering, checkpoints) is the real code.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def _hash_ids(key: str, n: int, lo: int = 20, hi: int = 250) -> list[int]:
    h = hashlib.sha256(key.encode()).digest()
    return [lo + b % (hi - lo) for b in h[:n]]


def stepfix_double_cls():
    from trainers import distributed
    from trainers.stepfix_trainer import StepFixTrainer
    from verifiers.steps import StepVerdict

    skip_file = os.environ.get("R3_SKIP_FILE")
    replay = {tuple(x) for x in json.loads(Path(skip_file).read_text())} if skip_file else None

    class StepfixDoubles(StepFixTrainer):
        """GENERATION DOUBLE and VERIFIER DOUBLE (module docstring) around the real StepFixTrainer."""

        def _generate_phase(self, model, group):
            # the problems verified in this phase: those of every micro-batch it generates for
            # (steps_per_generation of them)
            step, rows = self.state.global_step + 1, [r for mb in group for r in mb]
            if replay is not None:
                self._skip_q = {r["question"] for r in rows if (step, r["id"]) in replay}
            else:
                self._skip_q = {r["question"] for r in rows} if (distributed.rank() == 1 and step == 1) else set()
            return super()._generate_phase(model, group)

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            loss = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            if os.environ.get("R3_NAN_RANK") == str(distributed.rank()):  # a non-finite loss on one rank
                loss = loss * float("nan")
            return loss

        def generate(self, model, chats):
            if os.environ.get("R3_GEN_LOG"):  # every generation call: its rank, step and number of chats
                with open(os.environ["R3_GEN_LOG"], "a") as fh:
                    fh.write(json.dumps([distributed.rank(), self.state.global_step + 1, len(chats)]) + "\n")
            eos = self.tok.convert_tokens_to_ids("<|im_end|>")
            out = [_hash_ids(json.dumps(c, sort_keys=True), 5 + len(c)) + [eos] for c in chats]
            if chats and len(chats[0]) > 1:  # revisions: remember their texts to tell y2 from y1
                self._y2_texts = {self.tok.decode(ids, skip_special_tokens=True) for ids in out}
            return out

        def verify(self, q, text, ref):
            if (os.environ.get("R3_BUDGET_RANK") == str(distributed.rank())
                    and self.state.global_step + 1 >= int(os.environ.get("R3_BUDGET_STEP", "1"))):
                # JUDGE BUDGET HOOK: this rank's judge has spent its budget (what verifiers.judge raises
                # inside verify before a request once the budget is gone)
                from verifiers.judge import JudgeBudgetExceeded

                raise JudgeBudgetExceeded(f"judge token budget spent: 900 of 900 tokens (judge budget hook, "
                                          f"rank {distributed.rank()})")
            if text in getattr(self, "_y2_texts", ()):
                return StepVerdict(5, "CE", "verifier double: y2", 7)
            if q in self._skip_q:
                return StepVerdict(0, None, "verifier double: y1 right", 7)
            return StepVerdict(2, "CM", "verifier double: y1", 7)

        def feedback(self, question, text, verdict, reference):
            return "feedback double", ""

    return StepfixDoubles


class LengthRewardDouble:
    """REWARD DOUBLE: the completion's length / 100."""
    __name__ = "length_reward"

    def __init__(self):
        self.last_reasons = []

    def __call__(self, prompts=None, completions=None, **kw):
        from trainers import distributed
        from verifiers.rewards import completion_text

        state = kw.get("trainer_state")
        if (os.environ.get("R3_BUDGET_RANK") == str(distributed.rank()) and state is not None
                and state.global_step + 1 >= int(os.environ.get("R3_BUDGET_STEP", "1"))):
            from verifiers.judge import JudgeBudgetExceeded  # JUDGE BUDGET HOOK (module docstring)

            raise JudgeBudgetExceeded(f"judge token budget spent: 900 of 900 tokens (judge budget hook, "
                                      f"rank {distributed.rank()})")
        out = [len(completion_text(c) or "") / 100 for c in completions]
        self.last_reasons = ["length"] * len(out)
        return out


def grpo_generation_double():
    """GENERATION DOUBLE for TRL's GRPO: trainers.grpo.GRPOPhases with _generate_single_turn replaced
    (grpo.build makes the trainer class from grpo.GRPOPhases)."""
    from trainers import grpo

    class GenerationDouble(grpo.GRPOPhases):
        def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
            eos = self.processing_class.convert_tokens_to_ids("<|im_end|>")
            seen, out = {}, []
            for ids in prompt_ids:
                k = seen[tuple(ids)] = seen.get(tuple(ids), -1) + 1  # place within its group
                out.append(_hash_ids(f"{ids}|{k}", 3 + 3 * k) + [eos])
            return out, None

    return GenerationDouble


def install_grpo_doubles(setattr_=setattr, setitem=None):
    """The GRPO generation double and the reward double ("length") installed into trainers.grpo
    (a test passes monkeypatch.setattr / monkeypatch.setitem so that they are undone after it)."""
    from trainers import grpo

    gen = grpo_generation_double()
    setattr_(grpo, "GRPOPhases", gen)
    if setitem is None:
        grpo.REWARD_FACTORIES["length"] = lambda cfg: LengthRewardDouble()
    else:
        setitem(grpo.REWARD_FACTORIES, "length", lambda cfg: LengthRewardDouble())


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    name, rest = argv[0], argv[1:]
    from trainers import grpo, stepfix
    from trainers.core import entry

    if name == "stepfix":
        cls = stepfix_double_cls()
        train = lambda cfg: stepfix.train(cfg, trainer_cls=cls)  # noqa: E731
        return entry.main(stepfix.Config, train, rest, prog="dist_doubles stepfix")
    if name == "grpo":
        install_grpo_doubles()
        return entry.main(grpo.Config, grpo.train, rest, prog="dist_doubles grpo")
    raise SystemExit(f"unknown trainer {name!r}")


if __name__ == "__main__":
    raise SystemExit(main())
