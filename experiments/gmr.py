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
from .analysis import curve, fit_power_law, group
from .runs import ConfigError, derive_seed, progress

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
