"""The pde reward in trainers.grpo (one GRPO step on a tiny model) and SFT on the bank export."""
import json
from pathlib import Path

import pytest

pytest.importorskip("scipy")
pytest.importorskip("torch")
pytest.importorskip("trl")

from trainers import grpo, sft  # noqa: E402
from trainers.core.config import make, parse  # noqa: E402
from trainers.errors import ConfigError  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory):
    from r3bench.pde.tasks import export

    d = tmp_path_factory.mktemp("pde_data")
    export(d, per_family=1)
    return d


def _kw(tiny, out, **kw):
    d = dict(model=tiny, output_dir=str(out), max_steps=1, batch_size=2, group_size=2, save_steps=1,
             eval_tasks="", report_to="none", max_length=2048, seed=0, rewards="pde", max_completion_length=8)
    d.update(kw)
    return d


@pytest.mark.slow
def test_grpo_step_with_the_pde_reward(tiny, tmp_path):
    cfg = make(grpo.Config, **_kw(tiny, tmp_path, pde_prompts=1))
    res = grpo.train(cfg)
    assert (tmp_path / "final").is_dir() and res["adapter"]
    logs = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert any("rewards/pde_reward/mean" in d for d in logs)


def test_grpo_pde_dataset_from_the_export_keeps_one_row_per_prompt(export_dir, tmp_path):
    cfg = make(grpo.Config, data=str(export_dir), rewards="pde", output_dir=str(tmp_path))
    data, path = grpo.dataset(cfg, log=lambda *a: None)
    assert len(data) == 6 and path.name == "sft.jsonl"
    assert {"family", "seed", "n_instances", "prompt"} <= set(data.column_names)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"prompt": "p", "family": "heat", "seed": 0}) + "\n")
    with pytest.raises(ConfigError, match="held-out"):
        grpo.dataset(make(grpo.Config, data=str(bad), rewards="pde", output_dir=str(tmp_path)))


@pytest.mark.slow
def test_sft_on_the_bank_export(tiny, export_dir, tmp_path):
    cfg = make(sft.Config, model=tiny, data=str(export_dir), output_dir=str(tmp_path), max_steps=1,
                      batch_size=2, save_steps=1, eval_tasks="", report_to="none", max_length=2048, seed=0)
    sft.train(cfg)
    assert (tmp_path / "final").is_dir()


def test_grpo_pde_config_parses():
    cfg = parse(grpo.Config, ["--config", str(REPO / "trainers" / "configs" / "grpo_pde.yaml")])
    assert cfg.reward_names() == ["pde"]
