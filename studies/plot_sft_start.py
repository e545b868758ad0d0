"""Plot the SFT start of the learning study from a gpu_sft.py output folder.

    python studies/plot_sft_start.py results/learning/sft_start

Reads summary.json and train_log.jsonl (written by studies/gpu_sft.py) and writes
sft_start.png beside them: left, the training loss by optimizer step (epochs on the top axis);
right, greedy seven-tag format compliance and accuracy per curriculum tier on the held-out test
templates with Wilson 95% intervals, for the base model (where measured) and the SFT adapter.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path


def plot(folder: str | Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(folder)
    summary = json.loads((folder / "summary.json").read_text())
    log = [json.loads(x) for x in (folder / "train_log.jsonl").read_text().splitlines() if x.strip()]
    log = [r for r in log if "loss" in r and "step" in r]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    a.plot([r["step"] for r in log], [r["loss"] for r in log], lw=1.5)
    a.set_xlabel("optimizer step (batch 32)")
    a.set_ylabel("training loss (completion tokens)")
    a.set_yscale("log")
    tr = summary.get("phases", {}).get("train", {})
    a.set_title(f"SFT (LoRA r {summary['args']['lora_r']}), {tr.get('steps', '?')} steps, n rows "
                f"{summary['phases']['prepare'].get('train_rows', '?')}", fontsize=10)
    a.grid(alpha=0.3)
    bars, labels = [], []
    for model in ("base", "sft"):
        for tier, t in sorted(summary.get("eval", {}).get(model, {}).get("tiers", {}).items()):
            for metric in ("compliance", "accuracy"):
                lo, hi = t[f"{metric}_ci"]
                bars.append((t[metric], t[metric] - lo, hi - t[metric], metric))
                labels.append(f"{model}\ntier {tier}\n{metric[:4]}.\nn {t['n']}")
    xs = range(len(bars))
    colors = {"compliance": "tab:blue", "accuracy": "tab:orange"}
    b.bar(xs, [v for v, *_ in bars], yerr=[[lo for _, lo, _, _ in bars], [hi for _, _, hi, _ in bars]],
          color=[colors[m] for *_, m in bars], capsize=3)
    for x, (v, *_rest) in zip(xs, bars):
        b.text(x, v + 0.03, f"{v:.3f}", ha="center", fontsize=7)
    b.set_xticks(list(xs), labels, fontsize=6.5)
    b.set_ylim(0, 1.12)
    b.set_ylabel("fraction (Wilson 95% CI)")
    b.set_title("greedy, held-out test templates of each tier", fontsize=10)
    fig.suptitle("r3bench learning study: the SFT start (SmolLM2-135M-Instruct, one H200 run)", fontsize=11)
    fig.tight_layout()
    out = folder / "sft_start.png"
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


if __name__ == "__main__":
    print(plot(sys.argv[1] if len(sys.argv) > 1 else "results/learning/sft_start"))
