"""PNG plots of what people look at: accuracy per task and method, and training curves.

    accuracy_bars(cells, "results/accuracy.png")          cells from r3bench.results.leaderboard.collect
    training_curves(["runs/sft", ...], "results/curves.png")   each run's metrics.jsonl

matplotlib with the Agg backend (no display needed). Each function returns the path written, or
None when there is nothing to plot (no cells, no logged losses) - never an empty figure.
"""
from __future__ import annotations

import json
from pathlib import Path

from r3bench.results.leaderboard import column_label, column_of, column_sort


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
    # one bar colour per column of the leaderboard (the base model on seven-tag tasks apart from CoT)
    methods = sorted({column_of(c.task, c.method) for c in cells}, key=column_sort)
    val = {(c.task, c.model, column_of(c.task, c.method)): c for c in cells}
    width = 0.8 / len(methods)
    # the axis fits the data (a 0.17 bar is not a sliver under an axis to 1.12); a not-run slot is a
    # low hatched bar labelled n/a, never a full-height bar that dwarfs what was measured
    top = min(1.12, max(0.1, max(c.acc + (c.stderr or 0.0) for c in cells) * 1.45 + 0.04))
    not_run_h, floor = 0.12 * top, 0.012 * top
    fig, ax = plt.subplots(figsize=(max(5, 1.6 * len(groups) * max(1, len(methods)) / 2), 3.8))
    for j, m in enumerate(methods):
        xs, ys, es, ns, missing = [], [], [], [], []
        for i, (t, mo) in enumerate(groups):
            x = i + (j - (len(methods) - 1) / 2) * width
            c = val.get((t, mo, m))
            if c:
                xs.append(x)
                ys.append(c.acc)
                es.append(c.stderr or 0.0)
                ns.append(c.n)
            else:
                missing.append(x)
        # a measured 0 gets a thin visible bar (edged), and its value above it
        bars = ax.bar(xs, [max(y, floor) for y in ys], width, yerr=es, label=column_label(m), capsize=2,
                      edgecolor="0.2", linewidth=0.4)
        # the value and n above every bar: a measured 0 shows "0.00", never an empty slot
        for b, y, e, n in zip(bars, ys, es, ns):  # above the error bar
            ax.text(b.get_x() + b.get_width() / 2, min(max(y, floor) + e, top) + 0.01 * top,
                    f"{y:.2f}\nn={n if n is not None else '?'}", ha="center", va="bottom", fontsize=5)
        # a cell not run: a low hatched bar labelled "n/a (not run)", never an empty slot read as 0
        for x in missing:
            ax.bar(x, not_run_h, width, color="none", hatch="///", edgecolor="0.6", linewidth=0, zorder=0)
            ax.text(x, not_run_h + 0.01 * top, "n/a (not run)", ha="center", va="bottom", fontsize=6, rotation=90,
                    color="0.35")
    ax.set_xticks(range(len(groups)), [f"{t}\n{mo}" for t, mo in groups], fontsize=7)
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, top)
    ns = sorted({c.n for c in cells if c.n is not None})
    nt = "n=?" if not ns else f"n={ns[0]}" if len(ns) == 1 else f"n={ns[0]}-{ns[-1]}"
    any_missing = len(val) < len(groups) * len(methods)
    ax.set_title(f"accuracy by task and method ({nt} problems per bar"
                 + ("; hatched n/a: not run" if any_missing else "") + ")", fontsize=8)
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
    from matplotlib.ticker import FormatStrFormatter, MaxNLocator

    fig, axes = plt.subplots(1, len(series), figsize=(3.2 * len(series), 3.0), squeeze=False)
    for ax, (name, pts) in zip(axes[0], sorted(series.items())):
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3)
        ax.set_title(f"{name} (n={len(pts)} logged steps)", fontsize=9)
        ax.set_xlabel("step")
        ax.set_ylabel("loss")
        ax.xaxis.set_major_locator(MaxNLocator(nbins=6, integer=True))  # whole steps, few enough not to overlap
        # each tick label carries its own exponent: no offset text ("1e-7") to collide with the title
        ax.yaxis.set_major_formatter(FormatStrFormatter("%.3g"))
        ax.tick_params(labelsize=7)
    fig.suptitle("training loss per optimizer step", fontsize=10)
    return save(plt, fig, out)
