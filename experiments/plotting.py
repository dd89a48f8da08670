"""Figures, drawn from the CSV files alone (matplotlib, Agg backend).

For each sweep found under ``OUT``: ``OUT/figures/<sweep>.png`` with one
panel per data set (as the paper's figures), and ``OUT/figures/<sweep>/
<dataset>.png`` with one figure per data set.  Curves are the mean over the
repetitions with the 10-90% band shaded.  Black crosses mark the paper's
numbers where it prints them (Section 6.1's 0.05 at a = 10, Section 6.2's
madelon values, Table 7, Table 6's eta); panel titles name the data set
(stand-ins as such), its n samples and d features, and the kernel scale.
The ``investigate`` sweep gives ``investigate.png`` (Table 7's protocol run
many times) and ``investigate-svd.png`` (Practical SP-SVD's core).
"""

import math
from pathlib import Path

import numpy as np

from . import datasets as ds
from . import paper
from .analysis import curve, fit_power_law, group
from .runs import read_run

SWEEP_NAMES = ("gmr", "kernel", "spsd-table", "eta", "svd", "estimate", "cur", "investigate",
               "svd-passes")
# the paper's numbers: black crosses, drawn over the axes' edges too
PAPER = {"color": "black", "marker": "X", "ms": 8, "ls": "none", "clip_on": False, "zorder": 5}

KERNEL_STYLE = {
    "nystrom": ("Nystrom", "tab:red", "--"),
    "fast_spsd": ("fast SPSD (Wang et al.)", "tab:orange", "-"),
    "faster_spsd": ("faster SPSD (Algorithm 2)", "tab:blue", "-"),
    "optimal": ("optimal core", "black", ":"),
}
SVD_STYLE = {
    "fast": ("Fast SP-SVD (Algorithm 3)", "tab:blue", "-"),
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


def _count(value):
    return "?" if value is None or (isinstance(value, float) and math.isnan(value)) else \
        f"{int(value)}"


def _kernel_title(row):
    """Data set, n, d and gamma of a kernel sweep's row (d: absent from older CSVs)."""
    return (f"{title(row['dataset'])}\nn = {_count(row['n'])}, d = {_count(row.get('d'))}, "
            f"gamma = {row['gamma']:g}")

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
    if cv["x"].min() <= 10 <= cv["x"].max():
        ax.plot([10], [paper.GMR_A10], **PAPER, label="paper: ~0.05 at a = 10 (Section 6.1)")
    ax.set_xlabel("a = s_c / c = s_r / r")
    ax.set_ylabel("error ratio")
    r0 = rows[0]
    ax.set_title(f"{title(r0['dataset'])}\nn = {r0['m']}, d = {r0['n']}, {r0['sketch']} sketches",
                 fontsize=9)  # fmt: skip


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
    name = rows[0]["dataset"]
    if name in paper.SPSD_TABLE:  # Table 7: the fast SPSD method at a = 8..16
        pts = paper.SPSD_TABLE[name]
        ax.plot(list(pts), list(pts.values()), **{**PAPER, "color": "tab:orange"},
                markeredgecolor="black", label="paper: fast SPSD (Table 7)")  # fmt: skip
    if name == "madelon":  # Section 6.2's text
        for y, color, what in ((paper.MADELON_NYSTROM, "tab:red", "Nystrom ~0.55"),
                               (paper.MADELON_OPTIMAL, "black", "faster SPSD ~0.42")):
            ax.plot([xs[-1]], [y], **{**PAPER, "color": color}, markeredgecolor="black",
                    label=f"paper: {what} (Section 6.2)")  # fmt: skip
    ax.set_yscale("log")
    ax.set_xlabel("a = s / c")
    ax.set_ylabel("||K - C U C^T||_F / ||K||_F")
    ax.set_title(f"{_kernel_title(rows[0])}, c = {rows[0]['c']}", fontsize=9)


def draw_spsd_table(ax, rows):
    name = rows[0]["dataset"]
    colors = iter(["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple",
                   "tab:brown", "tab:pink", "tab:olive", "tab:cyan", "tab:gray"])  # fmt: skip
    for (variant,), sub in group(rows, "variant").items():
        _band(ax, curve(sub, "a", "error"), variant, next(colors), "-", marker=".")
    if name in paper.SPSD_TABLE:
        pts = paper.SPSD_TABLE[name]
        ax.plot(list(pts), list(pts.values()), **PAPER, label="paper (Table 7)")
    ax.set_yscale("log")
    ax.set_xlabel("a = s / c")
    ax.set_ylabel("fast SPSD error ||K - C U C^T||_F / ||K||_F")
    ax.set_title(f"{_kernel_title(rows[0])}, c = {rows[0]['c']}", fontsize=9)


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
    ax.set_title(f"{title(r0['dataset'])}\nn = {r0['m']}, d = {r0['n']}, k = {r0['k']}, "
                 f"{r0['sketch']} sketches", fontsize=9)  # fmt: skip


def draw_eta(ax, rows):
    names = [r["dataset"] for r in rows]
    ours = [r["eta"] for r in rows]
    theirs = [paper.ETA.get(n, math.nan) for n in names]
    x = np.arange(len(names))
    ax.bar(x - 0.2, ours, 0.4, label="ours", color="tab:blue")
    ax.bar(x + 0.2, theirs, 0.4, label="paper (Table 6)", color="lightgray", edgecolor="black")
    for xi, value in zip(x, ours):
        ax.text(xi - 0.2, value + 0.01, f"{value:.2f}", ha="center", fontsize=7)
    for xi, value in zip(x, theirs):
        if math.isfinite(value):
            ax.text(xi + 0.2, value + 0.01, f"{value:.2f}", ha="center", fontsize=7)
    ax.set_xticks(x)
    ax.set_xticklabels([f"{title(r['dataset'])}\nn = {_count(r['n'])}, d = {_count(r.get('d'))}"
                        f"\ngamma = {r['gamma']:g}" for r in rows], fontsize=7)  # fmt: skip
    ax.set_ylim(0, 1.25)
    ax.set_ylabel("eta = ||K_k||_F^2 / ||K||_F^2")
    ax.set_title(f"eta of the RBF kernels, k = {rows[0]['k']} (Table 6)", fontsize=9)
    ax.legend(fontsize=8, loc="upper center", ncol=2)


DATASET_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")


def draw_estimate(ax, rows):
    """One algorithm's cases: estimated against true error, the interval as a bar."""
    per_set = group(rows, "dataset")
    lo, hi = math.inf, 0.0
    for i, ((name,), sub) in enumerate(per_set.items()):
        true = np.array([r["true_error"] for r in sub])
        value = np.array([r["value"] for r in sub])
        low = np.array([r["low"] for r in sub])
        high = np.array([r["high"] for r in sub])
        covered = np.mean([bool(r["covered"]) for r in sub])
        ax.errorbar(true, value, yerr=[value - low, high - value], fmt="o", ms=2.5, lw=0.6,
                    alpha=0.6, color=DATASET_COLORS[i % len(DATASET_COLORS)],
                    label=f"{title(name)} ({100 * covered:.0f}% of {len(sub)} covered)")
        lo, hi = min(lo, true.min(), low.min()), max(hi, true.max(), high.max())
    if math.isfinite(lo) and lo > 0:
        line = [lo / 1.2, hi * 1.2]
        ax.plot(line, line, "-", color="black", lw=0.8, label="estimate = truth")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_minor_formatter("")  # a narrow log range labels its minor ticks: they collide
    ax.set_xlabel("true error ||A - A_hat||_F")
    ax.set_ylabel("estimate, interval [low, high]")
    ax.set_title(f"{rows[0]['algorithm']}: {len(rows)} cases", fontsize=9)
    ax.legend(fontsize=6)


CUR_STYLE = {"fast": "-", "exact": "--", "cross": ":"}
CUR_COLORS = dict(zip(("uniform", "leverage", "approx-leverage", "deim", "pivoted-qr"),
                      DATASET_COLORS))  # fmt: skip


def draw_cur(ax, rows):
    """One data set: CUR error ratio against c = r, each selection (color) x core (line)."""
    for (select, core), sub in group(rows, "select", "core").items():
        cv = curve(sub, "c", "error_ratio")
        ax.plot(cv["x"], cv["mean"], CUR_STYLE.get(core, "-"), marker="o", ms=3, lw=1.2,
                color=CUR_COLORS.get(select, "gray"), label=f"{select}, {core} core")
    ax.set_yscale("log")
    ax.set_xlabel("c = r (columns and rows kept)")
    ax.set_ylabel("||A - C U R||_F / ||A - A_k||_F")
    r0 = rows[0]
    ax.set_title(f"{title(r0['dataset'])}\nm = {r0['m']}, n = {r0['n']}, k = {r0['k']}",
                 fontsize=9)  # fmt: skip


DRAW = {"gmr": draw_gmr, "kernel": draw_kernel, "spsd-table": draw_spsd_table, "svd": draw_svd,
        "cur": draw_cur}


def _save(fig, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    _pyplot().close(fig)
    return path


def _legend(fig, axes):
    """One legend above the panels, with the entries of every panel (first seen first)."""
    entries = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    fig.legend(list(entries.values()), list(entries), loc="lower center",
               ncol=min(4, len(entries)), fontsize=8, bbox_to_anchor=(0.5, 1.0))  # fmt: skip


def _panels(plt, count):
    ncol = min(3, count)
    nrow = math.ceil(count / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.6 * ncol, 3.8 * nrow), squeeze=False)
    for ax in axes.flat[count:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:count])


def _panel_figure(plt, rows, key, draw, path, legend=True):
    """One panel per value of ``key`` (``draw(ax, rows)`` each), a shared
    legend, saved to ``path``; returns the path."""
    per_value = group(rows, key)
    fig, axes = _panels(plt, len(per_value))
    for ax, (_, sub) in zip(axes, per_value.items()):
        draw(ax, sub)
    if legend:
        _legend(fig, axes)
    fig.tight_layout()
    return _save(fig, Path(path))


def plot_sweep(name, rows, folder):
    """Draw sweep ``name`` from its rows into ``folder``; returns the PNG paths."""
    plt = _pyplot()
    folder = Path(folder)
    if name == "eta":
        fig, ax = plt.subplots(figsize=(1.6 + 1.3 * len(rows), 4))
        draw_eta(ax, rows)
        return [_save(fig, folder / "eta.png")]
    if name == "investigate":
        return plot_investigate(rows, folder)
    if name == "estimate":
        return plot_estimate(rows, folder)
    if name == "svd-passes":
        return plot_svd_passes(rows, folder)
    if name == "cur":
        rows = [r for r in rows if r["part"] == "sweep"]
    extra = []
    if name == "kernel":
        from .kernel import figure_rows

        extra = plot_landmarks(rows, folder)
        rows = figure_rows(rows)
    draw = DRAW[name]
    per_set = group(rows, "dataset")
    written = []
    fig, axes = _panels(plt, len(per_set))
    for ax, ((dataset,), sub) in zip(axes, per_set.items()):
        draw(ax, sub)
    if name == "gmr":  # the fitted line differs per panel: legend in each
        for ax in axes:
            ax.legend(fontsize=7)
    else:
        _legend(fig, axes)
    fig.tight_layout()
    written.append(_save(fig, folder / f"{name}.png"))
    for (dataset,), sub in per_set.items():
        fig, ax = plt.subplots(figsize=(5, 4))
        draw(ax, sub)
        ax.legend(fontsize=7)
        written.append(_save(fig, folder / name / f"{_safe(dataset)}.png"))
    return written + extra


LANDMARK_COLORS = {"uniform": "tab:gray", "rpcholesky": "tab:blue", "ridge-leverage": "tab:green"}


def draw_landmarks(ax, rows, at=10):
    """One data set: mean Frobenius error of each method (sketched ones at a = ``at``)
    for each landmark kind at c = 2k, as grouped bars."""
    methods = [m for m in KERNEL_STYLE if any(r["method"] == m for r in rows)]
    kinds = [k for k in LANDMARK_COLORS if any(r["landmarks"] == k for r in rows)]
    width = 0.8 / max(len(kinds), 1)
    for i, kind in enumerate(kinds):
        means = []
        for m in methods:
            vals = [r["error"] for r in rows if r["landmarks"] == kind and r["method"] == m
                    and (not math.isfinite(r["a"]) or r["a"] == at)]  # fmt: skip
            means.append(np.mean(vals) if vals else np.nan)
        ax.bar(np.arange(len(methods)) + (i - (len(kinds) - 1) / 2) * width, means, width,
               color=LANDMARK_COLORS[kind], label=f"{kind} landmarks")  # fmt: skip
    ax.set_xticks(np.arange(len(methods)))
    ax.set_xticklabels([KERNEL_STYLE[m][0].replace(" (", "\n(") for m in methods], fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel(f"||K - C U C^T||_F / ||K||_F (s = {at} c)")
    ax.set_title(f"{_kernel_title(rows[0])}, c = {rows[0]['c']}", fontsize=9)


def plot_landmarks(rows, folder):
    """``kernel-landmarks.png``: the landmark kinds at c = 2k, one panel per data set."""
    plt = _pyplot()
    rows = [r for r in rows if isinstance(r.get("landmarks"), str) and r["c"] == 2 * r["k"]]
    if not any(r["landmarks"] != "uniform" for r in rows):
        return []
    return [_panel_figure(plt, rows, "dataset", draw_landmarks,
                          Path(folder) / "kernel-landmarks.png")]


def plot_estimate(rows, folder):
    """``estimate.png``: one panel per algorithm, estimate against truth, every case."""
    plt = _pyplot()
    cases = [r for r in rows if r["part"] == "estimate"]
    if not cases:
        return []
    return [_panel_figure(plt, cases, "algorithm", draw_estimate, Path(folder) / "estimate.png",
                          legend=False)]


def draw_runs(ax, rows):
    """Table 7's protocol run many times on one data set (the investigate sweep's as-run rows)."""
    from .investigate import mean_spread

    by_a = group(rows, "a")
    xs = np.array(sorted(a for (a,) in by_a), dtype=float)
    gen = np.random.default_rng(0)  # jitter only
    for a in xs:
        vals = np.array([r["value"] for r in by_a[(a,)]])
        ax.plot(a + gen.uniform(-0.3, 0.3, vals.size), vals, ".", color="gray", ms=3, alpha=0.6,
                label="single runs")  # fmt: skip
    means = [np.mean([r["value"] for r in by_a[(a,)]]) for a in xs]
    spread = np.array([mean_spread([r["value"] for r in by_a[(a,)]]) for a in xs])
    ax.plot(xs, means, "-o", color="tab:blue", ms=3, label="mean of all runs")
    ax.fill_between(xs, spread[:, 0], spread[:, 1], color="tab:blue", alpha=0.2, lw=0,
                    label="mean of 10 runs, 5-95%")  # fmt: skip
    name = rows[0]["dataset"]
    if name in paper.SPSD_TABLE:
        pts = paper.SPSD_TABLE[name]
        ax.plot(list(pts), list(pts.values()), **PAPER, label="paper (Table 7)")
    ax.set_yscale("log")
    ax.set_xlabel("a = s / c")
    ax.set_ylabel("fast SPSD error ||K - C U C^T||_F / ||K||_F")
    runs = len(by_a[(xs[0],)])
    ax.set_title(f"{_kernel_title(rows[0])}, c = {_count(rows[0]['c'])}, {runs} runs", fontsize=9)


def draw_conditioning(ax, rows, model):
    """Median amplification of Practical SP-SVD's core against x, both splits, one data set."""
    styles = {"c = r": ("tab:pink", "o"), "r = 2c + 1": ("tab:red", "s")}
    for (split,), sub in group([r for r in rows if r["metric"] == "amplification"],
                               "attempt").items():  # fmt: skip
        color, marker = styles.get(split, ("gray", "."))
        by_x = group(sub, "x")
        xs = sorted(x for (x,) in by_x)
        ax.plot(xs, [np.median([r["value"] for r in by_x[(x,)]]) for x in xs], "-",
                color=color, marker=marker, ms=4, label=f"{split}: measured (median)")
        mx = [r for r in model if r["attempt"] == split and r["metric"] == "amplification"]
        if mx:
            mx.sort(key=lambda r: r["x"])
            ax.plot([r["x"] for r in mx], [r["value"] for r in mx], "--", color=color,
                    label=f"{split}: Gaussian model (median)")
    ax.set_yscale("log")
    ax.set_xlabel("(c + r) / k")
    ax.set_ylabel("||(Psi U_C)^+ Psi T||_F / ||T||_F")
    r0 = rows[0]
    ax.set_title(f"{title(r0['dataset'])}\nn = {_count(r0['n'])}, d = {_count(r0['d'])}",
                 fontsize=9)


def plot_investigate(rows, folder):
    """``investigate.png`` and ``investigate-svd.png`` from the investigate sweep's rows."""
    from .investigate import AS_RUN, MODEL

    plt = _pyplot()
    written = []
    runs = [r for r in rows if r["study"] == "spsd-table" and r["attempt"] == AS_RUN
            and r["metric"] == "error"]  # fmt: skip
    if runs:
        written.append(_panel_figure(plt, runs, "dataset", draw_runs,
                                     Path(folder) / "investigate.png"))
    cond = [r for r in rows if r["study"] == "svd-conditioning"]
    model = [r for r in cond if r["dataset"] == MODEL]
    data = [r for r in cond if r["dataset"] != MODEL]
    if data:
        written.append(_panel_figure(plt, data, "dataset",
                                     lambda ax, sub: draw_conditioning(ax, sub, model),
                                     Path(folder) / "investigate-svd.png"))
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


PASSES_STYLE = {
    "fast": ("Fast SP-SVD (1 pass)", "tab:blue", "o"),
    "practical": ("Practical SP-SVD (1 pass)", "tab:red", "s"),
    "three-sketch": ("three-sketch (1 pass)", "tab:green", "^"),
    "randomized_svd": ("sklearn randomized_svd, n_iter = 0..7", "tab:purple", "-"),
    "krylov_svd": ("sketchlab krylov_svd", "black", "-"),
}


def draw_svd_passes(axes, rows):
    """One data set: error ratio (left) and seconds (right) against passes over A."""
    err_ax, time_ax = axes
    floor = 1e-12  # converged answers reach the rounding of the exact residuals
    for method, (label, color, style) in PASSES_STYLE.items():
        sub = [r for r in rows if r["method"] == method and r["setting"] != "default"]
        if not sub:
            continue
        cv_err = curve(sub, "passes", "error_ratio")
        cv_time = curve(sub, "passes", "seconds")
        err = np.maximum(cv_err["mean"], floor)
        if style in ("-", "--"):
            err_ax.plot(cv_err["x"], err, style, marker=".", color=color, label=label)
            time_ax.plot(cv_time["x"], cv_time["mean"], style, marker=".", color=color,
                         label=label)
        else:
            err_ax.plot(cv_err["x"], err, style, color=color, ms=7, ls="none", label=label)
            time_ax.plot(cv_time["x"], cv_time["mean"], style, color=color, ms=7, ls="none",
                         label=label)
    default = [r for r in rows if r["method"] == "krylov_svd" and r["setting"] == "default"]
    if default:
        p = np.mean([r["passes"] for r in default])
        err_ax.plot([p], [max(np.mean([r["error_ratio"] for r in default]), floor)], "*",
                    color="black", ms=11, ls="none", label="krylov_svd, default stopping rule")
        time_ax.plot([p], [np.mean([r["seconds"] for r in default])], "*", color="black",
                     ms=11, ls="none")
    err_ax.set_yscale("log")
    err_ax.set_xlabel("passes over A")
    err_ax.set_ylabel("||A - U S V^T||_F / ||A - A_k||_F - 1")
    time_ax.set_xlabel("passes over A")
    time_ax.set_ylabel("seconds (one process)")
    r0 = rows[0]
    err_ax.set_title(f"{title(r0['dataset'])}\nm = {r0['m']}, n = {r0['n']}, k = {r0['k']}",
                     fontsize=9)
    time_ax.set_title("time of the call", fontsize=9)


def plot_svd_passes(rows, folder):
    """``svd-passes.png``: a row of two panels (error, time) per data set."""
    plt = _pyplot()
    per_set = group(rows, "dataset")
    fig, axes = plt.subplots(len(per_set), 2, figsize=(10, 4 * len(per_set)), squeeze=False)
    for pair, (_, sub) in zip(axes, per_set.items()):
        draw_svd_passes(pair, sub)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8)
    fig.tight_layout(rect=(0, 0.08 / len(per_set), 1, 1))
    return [_save(fig, Path(folder) / "svd-passes.png")]
