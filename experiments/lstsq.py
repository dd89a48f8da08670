"""Sweep ``lstsq``: stability of sketched least-squares solvers against the condition number.

The comparison of Epperly, Meier and Nakatsukasa, "Fast randomized
least-squares solvers can be just as accurate and stable as classical direct
solvers" (2024), on their random test problems: ``A = U diag(s) V^T`` with
Haar-random U (m x n) and V (n x n), singular values log-spaced from
``1/kappa`` to 1, a solution x of norm 1 and ``b = A x + r`` with r
orthogonal to range(A) of a prescribed norm.  For each kappa in 1..1e15 and
each residual size, every method solves the same problem:
``sketchlab.lstsq`` with ``method="sketch-and-solve"``, ``"blendenpik"`` (the
classical sketch-and-precondition, LSQR warm-started at the sketch-and-solve
answer), ``"spir"``, ``"fossils"``, and ``scipy.linalg.lstsq`` (gelsd).

Measured per solve: the forward error ``||x^ - x|| / ||x||``, the residual
error ``||A (x - x^)|| / ||b||``, and the backward error: the Karlson-Walden
estimate computed with A's own SVD (within a factor sqrt(2) of the exact
backward error, Grcar 2011), relative to ``||A||_F``; besides the solver's
own estimate, its iterations and its time.

Artifacts: ``OUT/lstsq/lstsq.csv`` and ``run.json``, ``OUT/figures/lstsq.png``
(forward, residual and backward error against kappa, one panel each, as the
paper's figure) and a section of ``OUT/REPORT.md`` with a verdict per claim.  This
sweep needs no data set (``DEFAULT_DATASETS`` is empty: it takes no ``--dataset``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .report import Verdict, mark, md_table
from .runs import ConfigError, derive_seed, positive_int, progress

NAME = "lstsq"
DEFAULT_DATASETS = ()
METHODS = ("sketch-and-solve", "blendenpik", "spir", "fossils", "scipy")
COLUMNS = ("m", "n", "kappa", "residual", "rep", "method", "seed", "forward_error",
           "residual_error", "backward_error", "estimate", "iterations", "converged", "seconds")
STYLE = {
    "sketch-and-solve": ("sketch-and-solve", "tab:gray", ":", "x"),
    "blendenpik": ("sketch-and-precondition (LSQR, warm start)", "tab:purple", "-.", "s"),
    "spir": ("SPIR", "tab:pink", "--", "v"),
    "fossils": ("FOSSILS", "tab:orange", "-", "^"),
    "scipy": ("scipy.linalg.lstsq (gelsd)", "black", ":", "o"),
}
# the claims: FOSSILS within this factor of scipy for every kappa up to CLAIM_KAPPA
CLAIM_FACTOR = 10.0
CLAIM_KAPPA = 1e14
# "visibly worse at high kappa": median ratio to scipy over kappa >= HIGH_KAPPA
HIGH_KAPPA = 1e10
WORSE_FACTOR = 10.0


@dataclass(frozen=True)
class LstsqConfig:
    """Configuration of the ``lstsq`` sweep."""

    m: int = 4000
    n: int = 50
    kappas: tuple = tuple(10.0 ** e for e in range(16))
    residuals: tuple = (1e-6, 1e-2)
    methods: tuple = METHODS
    reps: int = 3
    seed: int = 0

    @classmethod
    def quick(cls, **kwargs):
        defaults = dict(m=1000, n=20, kappas=tuple(10.0 ** e for e in (*range(0, 16, 2), 15)),
                        residuals=(1e-6,), reps=1)
        defaults.update(kwargs)
        return cls(**defaults)


def add_options(parser):
    parser.add_argument("--m", type=positive_int,
                        help="rows of A (default 4000; 1000 with --quick)")
    parser.add_argument("--n", type=positive_int,
                        help="columns of A (default 50; 20 with --quick)")


def make_config(datasets=(), *, quick=False, reps=None, seed=0, m=None, n=None):
    """The config of the CLI options (``datasets``: none, the problems are synthetic)."""
    if datasets:
        raise ConfigError(f"the lstsq sweep makes its own problems, got data sets {datasets}")
    kwargs = {"seed": seed}
    for key, value in (("reps", reps), ("m", m), ("n", n)):
        if value is not None:
            kwargs[key] = value
    config = LstsqConfig.quick(**kwargs) if quick else LstsqConfig(**kwargs)
    if config.n < 2 or config.m < config.n + 1:
        raise ConfigError(f"need m > n >= 2, got m = {config.m}, n = {config.n}")
    return config


def load_all(config):
    return []  # synthetic problems


def _haar(rng, rows, cols):
    Q, R = np.linalg.qr(rng.standard_normal((rows, cols)))
    return Q * np.sign(np.diag(R))


def random_problem(m, n, kappa, residual, seed):
    """``(A, b, x, (s, Vt))``: the paper's random problem with A's SVD factors."""
    rng = np.random.default_rng(seed)
    U = _haar(rng, m, n + 1)
    V = _haar(rng, n, n)
    s = np.logspace(-math.log10(kappa), 0, n)
    A = (U[:, :n] * s) @ V.T
    x = rng.standard_normal(n)
    x /= np.linalg.norm(x)
    b = A @ x + residual * U[:, n]
    return A, b, x, (s, V.T)


def kw_backward_error(A, b, y, svd):
    """Karlson-Walden estimate of the backward error of y, relative to ||A||_F."""
    s, Vt = svd
    r = b - A @ y
    rn, yn = np.linalg.norm(r), np.linalg.norm(y)
    if rn == 0:
        return 0.0
    if yn == 0:
        return math.inf
    omega = rn / yn
    g = Vt @ (A.T @ r)
    return float(np.linalg.norm(g / np.sqrt(s * s + omega * omega)) / yn / np.linalg.norm(s))


def _solve(method, A, b, seed):
    import scipy.linalg as sla

    import sketchlab

    if method == "scipy":
        return sla.lstsq(A, b, lapack_driver="gelsd")[0], math.nan, 0, True
    res = sketchlab.lstsq(A, b, method=method, rng=seed)
    return res.x, res.backward_error, res.iterations, res.converged


def run(config, *, show_progress=True):
    """One row per (kappa, residual, rep, method)."""
    import sketchlab

    # compile the kernels outside the timed calls
    A0, b0, _, _ = random_problem(max(config.m, 3 * config.n), config.n, 10.0, 1e-3, 0)
    for method in config.methods:
        if method != "scipy":
            sketchlab.lstsq(A0, b0, method=method, rng=0)
    rows = []
    cases = [(kappa, res, rep) for kappa in config.kappas for res in config.residuals
             for rep in range(config.reps)]
    for kappa, res, rep in progress(cases, desc="lstsq", enabled=show_progress):
        problem_seed = derive_seed(config.seed, "problem", rep,
                                   int(round(math.log10(kappa) * 100)),
                                   int(round(-math.log10(res) * 100)))
        A, b, x, svd = random_problem(config.m, config.n, kappa, res, problem_seed)
        bnorm = np.linalg.norm(b)
        for method in config.methods:
            seed = derive_seed(config.seed, "sketch", rep, method, int(round(math.log10(kappa))))
            t0 = time.perf_counter()
            y, estimate, iterations, converged = _solve(method, A, b, seed)
            seconds = time.perf_counter() - t0
            rows.append({
                "m": config.m, "n": config.n, "kappa": kappa, "residual": res, "rep": rep,
                "method": method, "seed": seed,
                "forward_error": float(np.linalg.norm(y - x) / np.linalg.norm(x)),
                "residual_error": float(np.linalg.norm(A @ (x - y)) / bnorm),
                "backward_error": kw_backward_error(A, b, y, svd),
                "estimate": estimate, "iterations": iterations, "converged": converged,
                "seconds": seconds,
            })  # fmt: skip
    return rows


# -- analysis -------------------------------------------------------------------------


def _by(rows, method, residual):
    """{kappa: [rows]} of one method at one residual size."""
    out = {}
    for r in rows:
        if r["method"] == method and r["residual"] == residual:
            out.setdefault(r["kappa"], []).append(r)
    return dict(sorted(out.items()))


def ratios(rows, method, residual, floor=True):
    """{kappa: worst backward error of ``method`` / scipy's, over the reps}.

    With ``floor``, both floored at the unit roundoff (below it the two are
    equally stable): for "visibly worse", so that a method is not called
    worse for a backward error below u."""
    eps = np.finfo(np.float64).eps if floor else 0.0
    mine, ref = _by(rows, method, residual), _by(rows, "scipy", residual)
    out = {}
    for kappa, group in mine.items():
        if kappa not in ref:
            continue
        pairs = {r["rep"]: max(r["backward_error"], eps) for r in group}
        base = {r["rep"]: max(r["backward_error"], eps) for r in ref[kappa]}
        out[kappa] = max(pairs[k] / base[k] for k in pairs if k in base)
    return out


def claims(rows):
    """[(claim, ok, detail)] over every residual size swept."""
    found = []
    residuals = sorted({r["residual"] for r in rows})
    methods = {r["method"] for r in rows}
    for res in residuals:
        for method in ("fossils", "spir"):
            if method not in methods:
                continue
            rt = {k: v for k, v in ratios(rows, method, res, floor=False).items()
                  if k <= CLAIM_KAPPA}
            if not rt:
                continue
            worst_k = max(rt, key=rt.get)
            ok = rt[worst_k] <= CLAIM_FACTOR
            found.append((f"{method}: backward error within {CLAIM_FACTOR:g}x of scipy's for "
                          f"every kappa in 1..{CLAIM_KAPPA:.0e} (||r|| = {res:g})", ok,
                          f"worst ratio {rt[worst_k]:.2f} at kappa {worst_k:.0e} (raw "
                          "estimates, not floored)"))
        for method in ("sketch-and-solve", "blendenpik"):
            if method not in methods:
                continue
            rt = {k: v for k, v in ratios(rows, method, res).items() if k >= HIGH_KAPPA}
            if not rt:
                continue
            median = float(np.median(list(rt.values())))
            found.append((f"{method}: visibly worse than scipy at high kappa (median backward-"
                          f"error ratio >= {WORSE_FACTOR:g} over kappa >= {HIGH_KAPPA:.0e}, "
                          f"||r|| = {res:g})", median >= WORSE_FACTOR,
                          f"median ratio {median:.3g} (" + ", ".join(
                              f"{k:.0e}: {v:.2g}" for k, v in rt.items()) + ")"))
    return found


def summary(rows):
    return [f"[{'PASS' if ok else 'FAIL'}] {claim}: {detail}" for claim, ok, detail in
            claims(rows)]


# -- figure and report --------------------------------------------------------------------


def plot(rows, folder):
    """``folder/lstsq.png``: forward, residual and backward error against kappa
    (one row of three panels per residual size)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    residuals = sorted({r["residual"] for r in rows})
    metrics = (("forward_error", "forward error ||x^ - x|| / ||x||"),
               ("residual_error", "residual error ||A (x - x^)|| / ||b||"),
               ("backward_error", "backward error / ||A||_F (Karlson-Walden)"))
    fig, axes = plt.subplots(len(residuals), 3, figsize=(15, 4.2 * len(residuals)),
                             squeeze=False)
    for i, res in enumerate(residuals):
        for j, (key, label) in enumerate(metrics):
            ax = axes[i, j]
            for method, (name, color, style, marker) in STYLE.items():
                by = _by(rows, method, res)
                if not by:
                    continue
                ks = np.array(list(by))
                vals = np.array([np.median([r[key] for r in g]) for g in by.values()])
                ax.plot(ks, np.maximum(vals, 1e-20), style, color=color, marker=marker, ms=5,
                        lw=1.5, label=name)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("condition number kappa")
            ax.set_ylabel(label)
            m, n = rows[0]["m"], rows[0]["n"]
            ax.set_title(f"m = {m}, n = {n}, ||r|| = {res:g}", fontsize=9)
            if i == 0 and j == 0:
                ax.legend(fontsize=8)
    fig.tight_layout()
    path = folder / "lstsq.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path]


def section(out, rows, verdicts, runs):
    """The report's section: the verdicts and the median backward errors per kappa."""
    lines = ["## Least squares from a sketch: stability against the condition number", "",
             "Epperly, Meier and Nakatsukasa (2024)'s random test problems; backward error = "
             "Karlson-Walden estimate with A's SVD, relative to ||A||_F (median over the "
             "repetitions).  Figure: `figures/lstsq.png`.", ""]
    for claim, ok, detail in claims(rows):
        text = f"{claim}: {detail}"
        lines.append(f"- {text} -> {mark(ok)}")
        verdicts.append(Verdict("lstsq", "synthetic", f"{text} -> {mark(ok)}", ok,
                                f"least squares: {claim.split(':')[0]}"))
    for res in sorted({r["residual"] for r in rows}):
        lines += ["", f"### Backward error, ||r|| = {res:g}", ""]
        body = []
        for kappa in sorted({r["kappa"] for r in rows}):
            cells = []
            for method in METHODS:
                group = _by(rows, method, res).get(kappa, [])
                cells.append(f"{np.median([r['backward_error'] for r in group]):.1e}"
                             if group else "")
            body.append([f"{kappa:.0e}", *cells])
        lines += md_table(["kappa", *(STYLE[m][0] for m in METHODS)], body)
        lines += ["", "Iterations (median): " + ", ".join(
            f"{STYLE[m][0]} {np.median([r['iterations'] for r in rows if r['method'] == m]):g}"
            for m in ("blendenpik", "spir", "fossils") if any(r["method"] == m for r in rows))]
    return lines
