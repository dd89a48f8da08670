"""Sweep ``eta``: the paper's Table 6, eta = ||K_k||_F^2 / ||K||_F^2 of each RBF kernel.

The paper chose each sigma so that eta (k = 15) is above 0.6; this recomputes
eta exactly with the paper's sigma: the k largest eigenvalues of the full
kernel matrix K (symmetric PSD, so they are its top singular values) by
Lanczos (``scipy.sparse.linalg.eigsh``), and ||K||_F^2 from all entries.
Deterministic: one row per data set, no repetitions.
"""

import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse.linalg as spla

from . import datasets as ds
from . import paper
from .analysis import group
from .kernel import kernel_data, kernel_matrix
from .plotting import count_text, pyplot, save, title
from .report import Verdict, dataset_label, figure_lines, fmt, mark, md_table
from .runs import ConfigError, positive_float, positive_int

NAME = "eta"
DEFAULT_DATASETS = ds.KERNEL_DATASETS
COLUMNS = ("dataset", "n", "gamma", "k", "eta", "top_k_squares", "norm2", "seconds", "d")


@dataclass(frozen=True)
class EtaConfig:
    """Configuration of the ``eta`` sweep (``reps`` and ``seed`` are recorded, unused)."""

    datasets: tuple = ()
    k: int = 15
    gamma: float | None = None
    reps: int = 1
    seed: int = 0

    @classmethod
    def quick(cls, **kwargs):
        return cls(**kwargs)


def add_options(parser):
    parser.add_argument("--gamma", type=positive_float, help="RBF scale (required for a path)")
    parser.add_argument("--k", type=positive_int, help="k (default 15)")


def make_config(datasets, *, quick=False, reps=None, seed=0, k=None, gamma=None):
    kwargs = {"datasets": tuple(datasets), "seed": seed, "gamma": gamma}
    if k is not None:
        kwargs["k"] = k
    return EtaConfig(**kwargs)


def load_all(config):
    return [data for data, _ in (kernel_data(spec, config.gamma) for spec in config.datasets)]


def eta(K, k):
    """(eta, sum of the k largest eigenvalues squared, ||K||_F^2) of a symmetric PSD ``K``."""
    n = K.shape[0]
    if not 1 <= k < n:
        raise ConfigError(f"k must be in [1, {n - 1}] for a kernel of order {n}, got {k}")
    top = spla.eigsh(K, k=k, which="LA", return_eigenvectors=False, tol=0, v0=np.ones(n))
    top_sq = float(np.sum(top**2))
    norm2 = float(np.einsum("ij,ij->", K, K))
    return top_sq / norm2, top_sq, norm2


def run(config, *, show_progress=True):
    """One row per data set."""
    rows = []
    for spec in config.datasets:
        data, gamma = kernel_data(spec, config.gamma)
        t0 = time.perf_counter()
        K = kernel_matrix(data.X, gamma)
        value, top_sq, norm2 = eta(K, config.k)
        rows.append({
            "dataset": data.dataset.name, "n": K.shape[0], "gamma": gamma, "k": config.k,
            "eta": value, "top_k_squares": top_sq, "norm2": norm2,
            "seconds": time.perf_counter() - t0, "d": data.X.shape[1],
        })  # fmt: skip
    return rows


def summary(rows):
    from .paper import ETA

    return [
        f"{r['dataset']}: eta {r['eta']:.4f} (paper {ETA.get(r['dataset'], float('nan')):.2f})"
        for (_,), (r, *_) in group(rows, "dataset").items()
    ]


# -- figure and report section --------------------------------------------------------------


def draw(ax, rows):
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
    ax.set_xticklabels([f"{title(r['dataset'])}\nn = {count_text(r['n'])}, "
                        f"d = {count_text(r.get('d'))}\ngamma = {r['gamma']:g}" for r in rows],
                       fontsize=7)  # fmt: skip
    ax.set_ylim(0, 1.25)
    ax.set_ylabel("eta = ||K_k||_F^2 / ||K||_F^2")
    ax.set_title(f"eta of the RBF kernels, k = {rows[0]['k']} (Table 6)", fontsize=9)
    ax.legend(fontsize=8, loc="upper center", ncol=2)


def section(out, rows, verdicts, runs):
    lines = ["## Table 6: eta = ||K_k||_F^2 / ||K||_F^2", "",
             f"Paper: {paper.CLAIMS['eta']}. Agreement: equal when rounded to two decimals.", ""]
    body = []
    for r in rows:
        want = paper.ETA.get(r["dataset"])
        ok = None if want is None else round(r["eta"], 2) == want
        body.append([dataset_label(r["dataset"]), fmt(r["gamma"], "g"), r["k"], fmt(want, ".2f"),
                     fmt(r["eta"], ".4f"), mark(ok)])  # fmt: skip
        verdicts.append(Verdict("eta", r["dataset"], f"eta on {r['dataset']}: {r['eta']:.4f} "
                                f"(paper {fmt(want, '.2f')}) -> {mark(ok)}", ok,
                                f"Table 6's eta on {r['dataset']}"))  # fmt: skip
    lines += md_table(["data set", "gamma (Table 6's sigma)", "k", "paper", "ours", "verdict"],
                    body)
    missing = [n for n in paper.ETA if n not in {r["dataset"] for r in rows}]
    if missing:
        lines += ["", f"Not run (data not available): {', '.join(missing)}."]
    return lines + [""] + figure_lines(out, "eta")


def plot(rows, folder):
    """``eta.png``: ours beside Table 6's, one pair of bars per data set."""
    fig, ax = pyplot().subplots(figsize=(1.6 + 1.3 * len(rows), 4))
    draw(ax, rows)
    return [save(fig, Path(folder) / "eta.png")]
