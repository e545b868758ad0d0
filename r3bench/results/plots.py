"""PNG plots of what people look at: accuracy per task and method, and training curves.

    accuracy_bars(cells, "results/accuracy.png")          cells from r3bench.results.leaderboard.collect
    training_curves(["runs/sft", ...], "results/curves.png")   each run's metrics.jsonl

matplotlib with the Agg backend (no display needed). Each function returns the path written, or
None when there is nothing to plot (no cells, no logged losses) - never an empty figure.
"""
from __future__ import annotations

import json
from pathlib import Path

from r3bench.core.methods import label as method_label, sort_key as method_sort


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(plt, fig, out) -> Path:
    """Lay out, write and close a figure; returns the path written."""
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def accuracy_bars(cells, out) -> Path | None:
    cells = [c for c in cells if c.acc is not None]
    if not cells:
        return None
    plt = pyplot()
    groups = sorted({(c.task, c.model) for c in cells})
    methods = sorted({c.method for c in cells}, key=method_sort)
    val = {(c.task, c.model, c.method): c for c in cells}
    width = 0.8 / len(methods)
    fig, ax = plt.subplots(figsize=(max(5, 1.6 * len(groups) * max(1, len(methods)) / 2), 3.6))
    for j, m in enumerate(methods):
        xs, ys, es = [], [], []
        for i, (t, mo) in enumerate(groups):
            c = val.get((t, mo, m))
            if c:
                xs.append(i + (j - (len(methods) - 1) / 2) * width)
                ys.append(c.acc)
                es.append(c.stderr or 0.0)
        ax.bar(xs, ys, width, yerr=es, label=method_label(m), capsize=2)
    ax.set_xticks(range(len(groups)), [f"{t}\n{mo}" for t, mo in groups], fontsize=7)
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7)
    return save(plt, fig, out)


def training_curves(run_dirs, out) -> Path | None:
    series = {}
    for d in map(Path, run_dirs):
        f = d / "metrics.jsonl"
        if not f.is_file():
            continue
        pts = {}
        for line in f.read_text().splitlines():
            try:
                rec = json.loads(line)
                if "loss" in rec and "eval" not in rec:
                    pts[int(rec["step"])] = float(rec["loss"])  # a resumed step: the later record counts
            except (ValueError, KeyError, TypeError):
                continue
        if pts:
            series[d.name] = sorted(pts.items())
    if not series:
        return None
    plt = pyplot()
    fig, axes = plt.subplots(1, len(series), figsize=(3.2 * len(series), 2.8), squeeze=False)
    for ax, (name, pts) in zip(axes[0], sorted(series.items())):
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("step")
        ax.set_ylabel("loss")
    return save(plt, fig, out)
