"""r3_pde through real lm-eval: the CLI on a tiny random model (the run, not the score), and an LM
that answers with the solver bank (pass@1 = 1 on every family, through the task's own scoring)."""
import glob
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("scipy")
pytest.importorskip("lm_eval")

from r3bench.pde import bank, families as F  # noqa: E402


@pytest.mark.slow
def test_lm_eval_cli_on_a_tiny_model(tiny, tmp_path):
    exe = os.path.join(os.path.dirname(sys.executable), "lm_eval")
    p = subprocess.run([exe, "--model", "hf", "--model_args", f"pretrained={tiny}", "--device", "cpu",
                        "--tasks", "r3_pde,r3_pde_sc", "--limit", "1", "--gen_kwargs", "max_gen_toks=8",
                        "--output_path", str(tmp_path), "--log_samples"], capture_output=True, text=True,
                       timeout=900, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert p.returncode == 0, p.stderr[-3000:]
    res = json.loads(open(glob.glob(str(tmp_path / "*" / "results_*.json"))[0]).read())["results"]
    for t in ("r3_pde_seen", "r3_pde_heldout"):
        assert res[t]["pass_at_1,none"] == 0.0 and res[t]["nrmse,none"] == 1.0
    assert res["r3_pde_sc"]["pass_at_8,all_samples"] == 0.0 and "best_nrmse,all_samples" in res["r3_pde_sc"]
    assert "validity,none" in res["r3_pde"]
    samples = glob.glob(str(tmp_path / "*" / "samples_r3_pde_seen_*.jsonl"))
    row = json.loads(open(samples[0]).readline())
    assert row["invalid_reasons"]  # a failure is a recorded reason


def _bank_lm():
    from lm_eval.api.model import LM

    programs = {**{f: next(iter(s.values())) for f, s in bank.BANK.items()},
                **{f: next(iter(s.values())) for f, s in bank.HELD_OUT_BANK.items()}}

    class BankLM(LM):
        def generate_until(self, requests, disable_tqdm=False):
            out = []
            for r in requests:
                ctx = r.args[0]
                fam = next(f for f in F.FAMILIES if f"PDE ({F.FAMILIES[f].title})" in ctx)
                out.append(f"A solver:\n```python\n{programs[fam]}```\n")
            return out

        def loglikelihood(self, requests, disable_tqdm=False):
            raise NotImplementedError

        def loglikelihood_rolling(self, requests, disable_tqdm=False):
            raise NotImplementedError

    return BankLM()


@pytest.mark.slow
def test_bank_scores_pass_at_1_through_lm_eval():
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    res = simple_evaluate(model=_bank_lm(), tasks=["r3_pde"], task_manager=TaskManager(), bootstrap_iters=0)
    r = res["results"]
    for t in ("r3_pde_seen", "r3_pde_heldout"):
        assert r[t]["pass_at_1,none"] == 1.0 and r[t]["validity,none"] == 1.0 and r[t]["nrmse,none"] < 0.01
    assert res["n-samples"]["r3_pde_seen"]["effective"] == 24 and res["n-samples"]["r3_pde_heldout"]["effective"] == 12
    sc = simple_evaluate(model=_bank_lm(), tasks=["r3_pde_sc"], task_manager=TaskManager(), bootstrap_iters=0,
                         limit=1)["results"]["r3_pde_sc"]
    assert sc["pass_at_1,all_samples"] == 1.0 and sc["pass_at_8,all_samples"] == 1.0
