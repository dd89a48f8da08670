"""Figures, drawn from the CSV files alone (matplotlib, Agg backend): what the sweeps'
``plot`` functions share, and :func:`plot_all`.

Each sweep draws its own figures (its module's ``plot(rows, folder)``), most with
:func:`dataset_figures`: ``OUT/figures/<sweep>.png`` with one panel per data set (as the
paper's figures), and ``OUT/figures/<sweep>/<dataset>.png`` with one figure per data set.
Curves are the mean over the repetitions with the 10-90% band shaded (:func:`draw_band`).
Black crosses (:data:`PAPER`) mark the paper's numbers where it prints them (Section 6.1's
0.05 at a = 10, Section 6.2's madelon values, Table 7, Table 6's eta); panel titles name the
data set (stand-ins as such, :func:`title`), its n samples and d features, and the kernel
scale.
"""

import math
from pathlib import Path

import numpy as np

from . import datasets as ds
from .analysis import group
from .runs import read_run

# the paper's numbers: black crosses, drawn over the axes' edges too
PAPER = {"color": "black", "marker": "X", "ms": 8, "ls": "none", "clip_on": False, "zorder": 5}


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def title(name):
    """A data set's display name; stand-ins say what they stand in for."""
    entry = ds.REGISTRY.get(name)
    return entry.label if entry is not None else name


def count_text(value):
    return "?" if value is None or (isinstance(value, float) and math.isnan(value)) else \
        f"{int(value)}"


def kernel_title(row):
    """Data set, n, d and gamma of a kernel sweep's row (d: absent from older CSVs)."""
    return (f"{title(row['dataset'])}\nn = {count_text(row['n'])}, d = {count_text(row.get('d'))}, "
            f"gamma = {row['gamma']:g}")


def draw_band(ax, cv, label, color, style, *, marker="o"):
    ax.plot(cv["x"], cv["mean"], style, color=color, marker=marker, ms=3, lw=1.5, label=label)
    if np.any(cv["n"] > 1):
        ax.fill_between(cv["x"], cv["p10"], cv["p90"], color=color, alpha=0.2, lw=0)


def draw_hline(ax, cv_rows, y, xs, label, color, style):
    vals = np.array([r[y] for r in cv_rows], dtype=float)
    mean, lo, hi = vals.mean(), np.percentile(vals, 10), np.percentile(vals, 90)
    ax.plot(xs, [mean, mean], style, color=color, lw=1.5, label=label)
    if vals.size > 1:
        ax.fill_between(xs, [lo, lo], [hi, hi], color=color, alpha=0.15, lw=0)


DATASET_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")


def save(fig, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    pyplot().close(fig)
    return path


def shared_legend(fig, axes):
    """One legend above the panels, with the entries of every panel (first seen first)."""
    entries = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    fig.legend(list(entries.values()), list(entries), loc="lower center",
               ncol=min(4, len(entries)), fontsize=8, bbox_to_anchor=(0.5, 1.0))  # fmt: skip


def panels(plt, count):
    ncol = min(3, count)
    nrow = math.ceil(count / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.6 * ncol, 3.8 * nrow), squeeze=False)
    for ax in axes.flat[count:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:count])


def panel_figure(plt, rows, key, draw, path, legend=True):
    """One panel per value of ``key`` (``draw(ax, rows)`` each), a shared
    legend, saved to ``path``; returns the path."""
    per_value = group(rows, key)
    fig, axes = panels(plt, len(per_value))
    for ax, (_, sub) in zip(axes, per_value.items()):
        draw(ax, sub)
    if legend:
        shared_legend(fig, axes)
    fig.tight_layout()
    return save(fig, Path(path))


def dataset_figures(name, rows, folder, draw, legend_each=False):
    """``folder/<name>.png`` with one panel per data set (``draw(ax, rows)`` each), and
    ``folder/<name>/<dataset>.png`` with one figure per data set; returns the paths.

    ``legend_each``: a legend in every panel (when the entries differ per panel, as the gmr
    sweep's fitted lines), else one legend above the panels."""
    plt = pyplot()
    folder = Path(folder)
    per_set = group(rows, "dataset")
    written = []
    fig, axes = panels(plt, len(per_set))
    for ax, (_, sub) in zip(axes, per_set.items()):
        draw(ax, sub)
    if legend_each:
        for ax in axes:
            ax.legend(fontsize=7)
    else:
        shared_legend(fig, axes)
    fig.tight_layout()
    written.append(save(fig, folder / f"{name}.png"))
    for (dataset,), sub in per_set.items():
        fig, ax = plt.subplots(figsize=(5, 4))
        draw(ax, sub)
        ax.legend(fontsize=7)
        written.append(save(fig, folder / name / f"{safe_name(dataset)}.png"))
    return written


def safe_name(name):
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(name))


def plot_all(out):
    """Redraw every figure from the CSV files under ``out``; returns the PNG paths."""
    from .sweeps import SWEEPS

    out = Path(out)
    written = []
    for name, sweep in SWEEPS.items():
        rows, _ = read_run(out, name)
        if rows:
            written += sweep.module.plot(rows, out / "figures")
    return written
