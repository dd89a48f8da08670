"""Sweep ``gmr``: the paper's Figure 1, the Fast GMR error ratio against a = s_c / c.

Protocol (the paper's Section 6.1): C = A G_C and R = G_R A with
Gaussian G_C (n x c), G_R (r x m), c = r = 20; Fast GMR (Algorithm 1) with
s_c = a c, s_r = a r, Gaussian sketches and a = 2..12 for dense A,
CountSketch and a = 3..13 for sparse A; the error ratio
``||A - C X~ R||_F / ||A - C C^+ A R^+ R||_F - 1`` is computed exactly (never
densifying a sparse A), where the paper estimated it with two more sketches.
Theorem 1 predicts error ratio ~ alpha / a^2.
"""

import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from . import datasets as ds
from . import paper
from .analysis import band, curve, fit_power_law, fit_two_terms, group
from .plotting import PAPER, dataset_figures, draw_band, title
from .report import Verdict, dataset_label, figure_lines, fmt, mark, md_table
from .runs import ConfigError, derive_seed, positive_int, progress, storage_option
from .runs import grid as grid_type

NAME = "gmr"
DEFAULT_DATASETS = ds.GMR_DATASETS
COLUMNS = (
    "dataset", "storage", "sketch", "m", "n", "c", "r", "a", "s_c", "s_r",
    "rep", "seed", "error_ratio", "residual_opt", "rho", "seconds", "seconds_exact",
)  # fmt: skip


@dataclass(frozen=True)
class GMRConfig:
    """Configuration of the ``gmr`` sweep.

    ``datasets`` are registry names or file paths; ``storage`` ("auto",
    "dense" or "sparse") overrides how a data set is treated (dense: Gaussian
    sketches and ``dense_grid``; sparse: CountSketch and ``sparse_grid``).
    """

    datasets: tuple = ()
    reps: int = 10
    seed: int = 0
    c: int = 20
    r: int = 20
    dense_grid: tuple = tuple(range(2, 13))
    sparse_grid: tuple = tuple(range(3, 14))
    dense_sketch: str = "gaussian"
    sparse_sketch: str = "countsketch"
    storage: str = "auto"

    @classmethod
    def quick(cls, **kwargs):
        """Reduced grid and repetitions (``--quick``)."""
        base = {"reps": 3, "dense_grid": (2, 4, 6, 8, 10, 12), "sparse_grid": (3, 5, 7, 10, 13)}
        return cls(**{**base, **kwargs})


def add_options(parser):
    parser.add_argument("--c", type=positive_int,
                        help="c = r, columns of C and rows of R (default 20)")
    parser.add_argument("--grid", type=grid_type, help="comma-separated values of a")
    storage_option(parser)


def make_config(datasets, *, quick=False, reps=None, seed=0, c=None, grid=None, storage="auto"):
    """The config of the CLI options (``--c`` sets c = r, ``--grid`` both grids)."""
    kwargs = {"datasets": tuple(datasets), "seed": seed, "storage": storage}
    if reps is not None:
        kwargs["reps"] = reps
    if c is not None:
        kwargs["c"] = kwargs["r"] = c
    if grid is not None:
        if any(float(a) != int(a) or a < 1 for a in grid):
            raise ConfigError(f"--grid for gmr must be integers a >= 1, got {grid}")
        kwargs["dense_grid"] = kwargs["sparse_grid"] = tuple(int(a) for a in grid)
    return GMRConfig.quick(**kwargs) if quick else GMRConfig(**kwargs)


def load_all(config):
    """The data sets of ``config``, loaded (cached) as the sweep sees them."""
    return [ds.load_cached(spec, dense=_dense_flag(config.storage)) for spec in config.datasets]


def gmr_inputs(A, c, r, seed):
    """The paper's C = A G_C (m x c) and R = G_R A (r x n), Gaussian G, from ``seed``."""
    import sketchlab

    gen = np.random.default_rng(seed)
    m, n = A.shape
    G_C = sketchlab.GaussianSketch(c, n, rng=gen)  # G_C^T of the paper
    G_R = sketchlab.GaussianSketch(r, m, rng=gen)
    return G_C.apply(A, axis=1), G_R.apply(A, axis=0)


def gmr_rho(A, C, R):
    """Theorem 1's rho, eq. (3.2) of the paper.

    ``rho = ||A - P_C A P_R||_F / (||(I - P_C) A P_R||_F + ||P_C A (I - P_R)||_F)``.

    P_C = C C^+ and P_R = R^+ R are the projections onto range(C) and
    range(R^T): rho compares what of A lies outside both spaces with what
    lies in one of them but not the other.  The theorem
    needs sketch sizes of order max(c / sqrt(eps), c / (eps rho^2)), so the
    error ratio falls like 1/a^2 only while a is below about rho^2 and like
    1/a beyond.  With orthonormal bases Q_C, Q_R and B = Q_C^T A Q_R the
    three norms are differences of ||A||_F^2, ||A Q_R||_F^2, ||Q_C^T A||_F^2
    and ||B||_F^2 (one product of A with each basis).
    """
    Q_C = sla.qr(C, mode="economic", check_finite=False)[0]
    Q_R = sla.qr(R.T, mode="economic", check_finite=False)[0]
    AQ = np.asarray(A @ Q_R)
    QA = np.asarray(A.T @ Q_C)
    B = Q_C.T @ AQ
    norm2 = float(A.data @ A.data) if sp.issparse(A) else float(np.einsum("ij,ij->", A, A))
    b2 = float(np.einsum("ij,ij->", B, B))
    outside = math.sqrt(max(norm2 - b2, 0.0))
    left = math.sqrt(max(float(np.einsum("ij,ij->", AQ, AQ)) - b2, 0.0))
    right = math.sqrt(max(float(np.einsum("ij,ij->", QA, QA)) - b2, 0.0))
    return outside / (left + right) if left + right > 0 else math.inf


def run(config, *, show_progress=True):
    """Run the sweep; one row per (data set, repetition, a).

    Returns
    -------
    rows : list of dict
        With the keys of ``COLUMNS``; ``seed`` is the ``rng`` given to
        ``fast_gmr`` for that row, and C, R come from
        ``gmr_inputs(A, c, r, derive_seed(config.seed, dataset, rep, "CR"))``.
    """
    import sketchlab

    rows = []
    for data in load_all(config):
        A, name = data.X, data.dataset.name
        grid = config.dense_grid if data.dense else config.sparse_grid
        kind = config.dense_sketch if data.dense else config.sparse_sketch
        m, n = A.shape
        bar = progress(total=config.reps * len(grid), desc=f"gmr {name}", enabled=show_progress)
        with bar:
            for rep in range(config.reps):
                C, R = gmr_inputs(A, config.c, config.r, derive_seed(config.seed, name, rep, "CR"))
                t0 = time.perf_counter()
                X_opt = sketchlab.gmr(A, C, R)
                t_exact = time.perf_counter() - t0
                residual_opt = sketchlab.gmr_residual(A, C, X_opt, R)
                rho = gmr_rho(A, C, R)
                for a in grid:
                    seed = derive_seed(config.seed, name, rep, int(a))
                    s_c, s_r = int(a) * config.c, int(a) * config.r
                    t0 = time.perf_counter()
                    X = sketchlab.fast_gmr(A, C, R, sketch_size=(s_c, s_r), sketch=kind, rng=seed).X
                    seconds = time.perf_counter() - t0
                    rows.append({
                        "dataset": name, "storage": "dense" if data.dense else "sparse",
                        "sketch": kind, "m": m, "n": n, "c": config.c, "r": config.r,
                        "a": int(a), "s_c": s_c, "s_r": s_r, "rep": rep, "seed": seed,
                        "error_ratio": sketchlab.gmr_error_ratio(A, C, X, R, X_opt=X_opt),
                        "residual_opt": residual_opt, "rho": rho, "seconds": seconds,
                        "seconds_exact": t_exact,
                    })  # fmt: skip
                    bar.update()
    return rows


def _dense_flag(storage):
    return {"auto": None, "dense": True, "sparse": False}[storage]


def summary(rows):
    """One line per data set: the fitted slope, alpha and the error ratio at a = 10."""
    lines = []
    for (name,), sub in group(rows, "dataset").items():
        cv = curve(sub, "a", "error_ratio")
        fit = fit_power_law(cv["x"], cv["mean"])
        at10 = cv["mean"][cv["x"] == 10]
        tail = f", error ratio at a = 10: {at10[0]:.4f}" if at10.size else ""
        lines.append(
            f"{name}: slope {fit['slope']:.2f} (theory -2), alpha {fit['alpha']:.3g}{tail}"
        )
    return lines


# -- figure and report section --------------------------------------------------------------


def draw(ax, rows):
    cv = curve(rows, "a", "error_ratio")
    draw_band(ax, cv, "Fast GMR (mean, 10-90%)", "tab:blue", "-")
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


def analyse(rows):
    """Per data set: power-law fit, the a = 10 value, mean rho, and the two verdicts."""
    out = []
    for (name,), sub in group(rows, "dataset").items():
        cv = curve(sub, "a", "error_ratio")
        fit = fit_power_law(cv["x"], cv["mean"])
        at10 = [r["error_ratio"] for r in sub if r["a"] == 10]
        mean10, lo10, hi10, _ = band(at10)
        bound = paper.GMR_A10_BOUND
        rho = band([r.get("rho", math.nan) for r in sub])[0]
        two = fit_two_terms(cv["x"], cv["mean"])
        out.append({
            "dataset": name, "storage": sub[0]["storage"], "sketch": sub[0]["sketch"],
            "a_min": cv["x"].min(), "a_max": cv["x"].max(), "reps": int(cv["n"].max()),
            **fit, "at10": mean10, "at10_p10": lo10, "at10_p90": hi10, "bound": bound,
            "rho": rho, "two_alpha": two["alpha"], "two_beta": two["beta"], "curve": cv,
            "rate_ok": (-2.5 <= fit["slope"] <= -1.5) if math.isfinite(fit["slope"]) else None,
            "a10_ok": (mean10 <= bound) if at10 else None,
        })  # fmt: skip
    return out


RHO = (
    "rho (eq. (3.2) of Theorem 1) = ||A - P_C A P_R||_F / (||(I - P_C) A P_R||_F + "
    "||P_C A (I - P_R)||_F), with P_C = C C^+ and P_R = R^+ R the projections onto the column "
    "space of C and the row space of R: how much of A lies outside both spaces, against what "
    "lies in one but not the other"
)


def section(out, rows, verdicts, runs):
    res = analyse(rows)
    lines = [
        "## Fast GMR error ratio against a (Figure 1, Section 6.1)", "",
        f"Paper: {paper.CLAIMS['gmr_rate']}; {paper.CLAIMS['gmr_a10']}.", "",
        f"Protocol: C = A G_C, R = G_R A (Gaussian), c = r = {rows[0]['c']}, s_c = a c, "
        "s_r = a r; Gaussian sketches on dense A, CountSketch on sparse A; error ratio from "
        "exact residuals (the paper estimated them with two more sketches). Fit: least squares "
        "of log(mean error ratio) on log a (free slope); alpha = geometric mean of "
        "error ratio x a^2 (slope fixed at -2).", "",
        f"The bound of the a = 10 claim is {paper.GMR_A10_BOUND:g} on every data set. Section "
        "6.1 writes that at a = 10 the error ratio \"is close to 0.05 on most datasets\", about "
        "Figure 1 as a whole, whose sparse data sets use CountSketch and dense ones Gaussian "
        "sketches. An earlier version of this report allowed 0.1 (twice the printed value) on "
        "sparse data, for the larger sketch sizes CountSketch needs in theory (the + c^2 of "
        "Table 2); the paper makes no such allowance in its claim, so neither do we.", "",
    ]  # fmt: skip
    header = ["data set", "storage / sketch", "a", "reps", "slope (theory -2)",
              "alpha (slope -2)", "R^2", "rho (eq. (3.2))", "error ratio at a = 10 (10-90%)",
              "1/a^2 law", "a = 10 claim"]  # fmt: skip
    body = [[dataset_label(r["dataset"]), f"{r['storage']} / {r['sketch']}",
             f"{r['a_min']:g}..{r['a_max']:g}", r["reps"], fmt(r["slope"], ".2f"),
             fmt(r["alpha"], ".3g"), fmt(r["r2"], ".3f"), fmt(r["rho"], ".2f"),
             f"{fmt(r['at10'], '.4f')} ({fmt(r['at10_p10'], '.4f')}-"
             f"{fmt(r['at10_p90'], '.4f')}), bound {r['bound']:g}",
             mark(r["rate_ok"]), mark(r["a10_ok"])] for r in res]  # fmt: skip
    lines += md_table(header, body)
    lines += [
        "", f"Here {RHO}. Theorem 1 asks for sketch sizes of order "
        "max(c / sqrt(eps), c / (eps rho^2)), so the error ratio behaves like "
        "alpha / a^2 + beta / (a rho^2): the pure 1/a^2 law holds while a is below about "
        "rho^2, and the curve bends toward 1/a beyond. The smaller rho, the flatter the "
        "fitted slope.", "",
    ]  # fmt: skip
    for r in res:
        name = r["dataset"]
        verdicts.append(Verdict(
            "gmr_rate", name, f"Fast GMR error ratio ~ 1/a^2 on {name}: slope "
            f"{fmt(r['slope'], '.2f')}, alpha {fmt(r['alpha'], '.3g')} -> {mark(r['rate_ok'])}",
            r["rate_ok"], f"Figure 1's 1/a^2 law on {name}"))  # fmt: skip
        verdicts.append(Verdict(
            "gmr_a10", name, f"Fast GMR error ratio at a = 10 on {name}: "
            f"{fmt(r['at10'], '.4f')} (bound {r['bound']:g}) -> {mark(r['a10_ok'])}",
            r["a10_ok"], f"Figure 1's error ratio at a = 10 on {name}"))  # fmt: skip
    return lines + figure_lines(out, "gmr")


def plot(rows, folder):
    """``gmr.png`` (one panel per data set, a legend in each: the fitted line differs) and
    ``gmr/<dataset>.png``."""
    return dataset_figures(NAME, rows, folder, draw, legend_each=True)
