"""Figures, drawn from the CSV files alone (matplotlib, Agg backend).

For each sweep found under ``OUT``: ``OUT/figures/<sweep>.png`` with one
panel per data set (as the paper's figures), and ``OUT/figures/<sweep>/
<dataset>.png`` with one figure per data set.  Curves are the mean over the
repetitions with the 10-90% band shaded.
"""

import math
from pathlib import Path

import numpy as np

from . import datasets as ds
from . import paper
from .analysis import curve, fit_power_law, group
from .runs import read_run

SWEEP_NAMES = ("gmr", "kernel", "spsd-table", "eta", "svd")

KERNEL_STYLE = {
    "nystrom": ("Nystrom", "tab:red", "--"),
    "fast_spsd": ("fast SPSD (Wang et al.)", "tab:orange", "-"),
    "faster_spsd": ("faster SPSD (Alg. 2)", "tab:blue", "-"),
    "optimal": ("optimal core", "black", ":"),
}
SVD_STYLE = {
    "fast": ("Fast SP-SVD (Alg. 3)", "tab:blue", "-"),
    "practical": ("Practical SP-SVD (r ~ 2c)", "tab:red", "--"),
    "practical-equal": ("Practical SP-SVD (c = r)", "tab:pink", ":"),
    "three-sketch": ("three-sketch (Tropp 2019)", "tab:green", "-."),
}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def title(name):
    """A data set's display name; stand-ins say what they stand in for."""
    entry = ds.REGISTRY.get(name)
    return entry.label if entry is not None else name


def _band(ax, cv, label, color, style, *, marker="o"):
    ax.plot(cv["x"], cv["mean"], style, color=color, marker=marker, ms=3, lw=1.5, label=label)
    if np.any(cv["n"] > 1):
        ax.fill_between(cv["x"], cv["p10"], cv["p90"], color=color, alpha=0.2, lw=0)


def _hline(ax, cv_rows, y, xs, label, color, style):
    vals = np.array([r[y] for r in cv_rows], dtype=float)
    mean, lo, hi = vals.mean(), np.percentile(vals, 10), np.percentile(vals, 90)
    ax.plot(xs, [mean, mean], style, color=color, lw=1.5, label=label)
    if vals.size > 1:
        ax.fill_between(xs, [lo, lo], [hi, hi], color=color, alpha=0.15, lw=0)


def draw_gmr(ax, rows):
    cv = curve(rows, "a", "error_ratio")
    _band(ax, cv, "Fast GMR (mean, 10-90%)", "tab:blue", "-")
    fit = fit_power_law(cv["x"], cv["mean"])
    if math.isfinite(fit["alpha"]):
        a = np.linspace(cv["x"].min(), cv["x"].max(), 50)
        ax.plot(a, fit["alpha"] / a**2, "--", color="gray",
                label=f"{fit['alpha']:.3g} / a^2 (free fit: slope {fit['slope']:.2f})")  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    ticks = cv["x"] if cv["x"].size <= 7 else cv["x"][::2]  # log axis: avoid crowding
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{v:g}" for v in ticks])
    ax.minorticks_off()
    ax.set_xlabel("a = s_c / c = s_r / r")
    ax.set_ylabel("error ratio")
    r0 = rows[0]
    ax.set_title(f"{title(r0['dataset'])}\n{r0['m']} x {r0['n']}, {r0['sketch']}", fontsize=9)


def draw_kernel(ax, rows):
    methods = group(rows, "method")
    swept = [r for r in rows if isinstance(r["a"], (int, float)) and math.isfinite(r["a"])]
    xs = [min(r["a"] for r in swept), max(r["a"] for r in swept)] if swept else [0, 1]
    for method, (label, color, style) in KERNEL_STYLE.items():
        sub = methods.get((method,))
        if not sub:
            continue
        if all(not math.isfinite(r["a"]) for r in sub):
            _hline(ax, sub, "error", xs, label, color, style)
        else:
            _band(ax, curve(sub, "a", "error"), label, color, style)
    ax.set_yscale("log")
    ax.set_xlabel("a = s / c")
    ax.set_ylabel("||K - C U C^T||_F / ||K||_F")
    r0 = rows[0]
    ax.set_title(f"{title(r0['dataset'])}\nn = {r0['n']}, gamma = {r0['gamma']:g}, c = {r0['c']}",
                 fontsize=9)  # fmt: skip


def draw_spsd_table(ax, rows):
    name = rows[0]["dataset"]
    colors = iter(["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple",
                   "tab:brown", "tab:pink", "tab:olive", "tab:cyan", "tab:gray"])  # fmt: skip
    for (variant,), sub in group(rows, "variant").items():
        _band(ax, curve(sub, "a", "error"), variant, next(colors), "-", marker=".")
    if name in paper.SPSD_TABLE:
        pts = paper.SPSD_TABLE[name]
        ax.plot(list(pts), list(pts.values()), "kX", ms=7, label="paper (Table spsd)")
    ax.set_yscale("log")
    ax.set_xlabel("a = s / c")
    ax.set_ylabel("fast SPSD error")
    ax.set_title(title(name), fontsize=9)


def draw_svd(ax, rows):
    methods = group(rows, "method")
    for method, (label, color, style) in SVD_STYLE.items():
        sub = methods.get((method,))
        if sub:
            _band(ax, curve(sub, "x", "error_ratio"), label, color, style)
    lows = [r["error_ratio"] for r in rows if np.isfinite(r["error_ratio"])]
    if lows and min(lows) <= 0:  # sketch-rank output can beat A_k: keep the sign visible
        ax.axhline(0.0, color="gray", lw=0.8)
        ax.set_yscale("symlog", linthresh=0.01)
    else:
        ax.set_yscale("log")
    ax.set_xlabel("(c + r) / k")
    ax.set_ylabel("||A - U S V^T||_F / ||A - A_k||_F - 1")
    r0 = rows[0]
    ax.set_title(f"{title(r0['dataset'])}\n{r0['m']} x {r0['n']}, k = {r0['k']}, {r0['sketch']}",
                 fontsize=9)  # fmt: skip


def draw_eta(ax, rows):
    names = [r["dataset"] for r in rows]
    ours = [r["eta"] for r in rows]
    theirs = [paper.ETA.get(n, math.nan) for n in names]
    x = np.arange(len(names))
    ax.bar(x - 0.2, ours, 0.4, label="ours", color="tab:blue")
    ax.bar(x + 0.2, theirs, 0.4, label="paper", color="lightgray", edgecolor="black")
    ax.set_xticks(x)
    ax.set_xticklabels(names, rotation=20)
    ax.set_ylim(0, 1)
    ax.set_ylabel("eta = ||K_k||_F^2 / ||K||_F^2")
    ax.set_title(f"eta, k = {rows[0]['k']}", fontsize=9)
    ax.legend(fontsize=8)


DRAW = {"gmr": draw_gmr, "kernel": draw_kernel, "spsd-table": draw_spsd_table, "svd": draw_svd}


def _save(fig, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    _pyplot().close(fig)
    return path


def plot_sweep(name, rows, folder):
    """Draw sweep ``name`` from its rows into ``folder``; returns the PNG paths."""
    plt = _pyplot()
    folder = Path(folder)
    if name == "eta":
        fig, ax = plt.subplots(figsize=(6, 3.5))
        draw_eta(ax, rows)
        return [_save(fig, folder / "eta.png")]
    draw = DRAW[name]
    per_set = group(rows, "dataset")
    written = []
    ncol = min(3, len(per_set))
    nrow = math.ceil(len(per_set) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.6 * ncol, 3.8 * nrow), squeeze=False)
    for ax, ((dataset,), sub) in zip(axes.flat, per_set.items()):
        draw(ax, sub)
    for ax in axes.flat[len(per_set):]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    if name == "gmr":  # the fitted line differs per panel: legend in each
        for ax in axes.flat[: len(per_set)]:
            ax.legend(fontsize=7)
    else:
        fig.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), fontsize=8,
                   bbox_to_anchor=(0.5, 1.0))  # fmt: skip
    fig.tight_layout()
    written.append(_save(fig, folder / f"{name}.png"))
    for (dataset,), sub in per_set.items():
        fig, ax = plt.subplots(figsize=(5, 4))
        draw(ax, sub)
        ax.legend(fontsize=7)
        written.append(_save(fig, folder / name / f"{_safe(dataset)}.png"))
    return written


def _safe(name):
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(name))


def plot_all(out):
    """Redraw every figure from the CSV files under ``out``; returns the PNG paths."""
    out = Path(out)
    written = []
    for name in SWEEP_NAMES:
        rows, _ = read_run(out, name)
        if rows:
            written += plot_sweep(name, rows, out / "figures")
    return written
