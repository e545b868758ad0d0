"""Stepfix writes the feedback of a micro-batch concurrently (StepFixTrainer.feedback_batch) for the
channels that wait on something (CM: ChromaDB; CE: the sandbox), and keeps every record in order.

The GENERATION and VERIFIER DOUBLES of tests/trainers/dist_doubles.py stand in for sampling and verification
(every y1 is a CM error); the feedback is a FEEDBACK DOUBLE that proves concurrency without sleeps: each
call waits on a barrier that opens only when all four calls of the micro-batch are in flight at once,
and then returns in the REVERSE order of the batch (call i waits for call i+1 to finish), so a
result placed by completion order would put every record's feedback on the wrong problem."""
from __future__ import annotations

import json
import threading

import pytest

pytest.importorskip("torch")
pytest.importorskip("trl")

import dist_doubles  # noqa: E402  (tests/trainers/ is on sys.path)
from trainers import stepfix  # noqa: E402
from trainers.core.config import make  # noqa: E402

N = 4


def reverse_order_feedback_cls():
    class ConcurrentFeedbackDouble(dist_doubles.stepfix_double_cls()):
        def compute_loss(self, model, inputs, *a, **k):
            self._batch = [(r["question"], r["id"]) for r in inputs]
            self._barrier = threading.Barrier(len(inputs))
            self._done = [threading.Event() for _ in inputs]
            self.seen_batches = getattr(self, "seen_batches", []) + [[i for _, i in self._batch]]
            return super().compute_loss(model, inputs, *a, **k)

        def feedback(self, question, text, verdict, reference):
            i = [q for q, _ in self._batch].index(question)
            self._barrier.wait(timeout=20)  # broken (an error) unless all calls run at once
            if i + 1 < len(self._done):
                assert self._done[i + 1].wait(timeout=20)
            self._done[i].set()
            return f"feedback double for {self._batch[i][1]}", ""

    return ConcurrentFeedbackDouble


@pytest.mark.slow
def test_feedback_of_a_micro_batch_runs_concurrently_and_records_keep_their_order(tiny, data, tmp_path):
    out = tmp_path / "sf"
    cfg = make(stepfix.Config, model=tiny, data=data, output_dir=str(out), max_steps=1, save_steps=10,
                      report_to="none", batch_size=N, max_train_samples=N, max_length=4096, eval_tasks="",
                      feedback_workers=N)
    seen = {}

    class Keep(reverse_order_feedback_cls()):
        def compute_loss(self, *a, **k):
            loss = super().compute_loss(*a, **k)
            seen["batches"] = self.seen_batches
            return loss

    stepfix.train(cfg, trainer_cls=Keep)
    recs = [json.loads(x) for x in (out / "stepfix_samples.jsonl").read_text().splitlines()]
    assert [r["id"] for r in recs] == seen["batches"][0]
    assert all(r["feedback"] == f"feedback double for {r['id']}" for r in recs), [r["feedback"] for r in recs]
    assert all(r["class1"] == "CM" and not r["skipped"] for r in recs)
