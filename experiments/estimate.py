"""Sweep ``estimate``: sketchlab's a posteriori error estimates against the true errors.

Not an experiment of the paper: the library's ``estimate_error=True`` (an
:class:`sketchlab.ErrorEstimate` with a value and an interval meant to hold
the true error with about 90% probability) and its ``tol=`` modes, checked on
the paper's data over sketch sizes and seeds.  Rows (column ``part``):

``estimate``
    One (algorithm, data set, sketch size, seed) case: the true error (exact,
    never densifying a sparse A), the estimate's ``value``, ``low``, ``high``,
    ``covered`` (``low <= true <= high``), and the time of the same call with
    the estimate (``seconds``) and without it (``seconds_plain``); the answer
    is checked to be the same both ways (the probes are drawn after
    everything else).

    - ``fast_gmr`` (Algorithm 1) as the ``gmr`` sweep runs it: C = A G_C,
      R = G_R A (Gaussian), c = r = 20, s_c = a c, s_r = a r, Gaussian
      sketches on dense data and CountSketch on sparse data, a on the gmr
      sweep's grids; ``error_ratio`` is the exact error ratio of Figure 1.
    - ``fast_sp_svd`` (Algorithm 3), ``practical_sp_svd``,
      ``three_sketch_svd`` as the ``svd`` sweep sizes them (k = 10, x =
      (c + r) / k on its grid), rank-k output; ``error_ratio`` is
      ``||A - U S V^T||_F / ||A - A_k||_F - 1``.
    - ``faster_spsd`` (Algorithm 2) with c = 2k = 30 uniform landmarks and
      s = a c, and ``nystrom`` with c landmarks (a uniform draw whose first c
      are the landmarks of size c), on the RBF kernels of the data sets that
      have a kernel scale; the true error is ``||K - C U C^T||_F``.

``gmr-tol`` and ``gmr-fixed``
    ``fast_gmr(tol=t)`` on the same problems (``tol_reps`` seeds), its true
    error ratio against t, and its time against a fixed-size call at a*, the
    smallest a of the grid whose mean error ratio (the ``estimate`` rows of
    this run) is at most t, timed right after it on the same problem.

``cost``
    The two cost targets on ``cost_datasets`` (every data set run when none
    of them is): ``fast_gmr`` at a = ``cost_a`` on the problem of the
    ``estimate`` rows (CountSketch on sparse data), and ``fast_sp_svd(A, k)``
    at the library's default sizes and sketches, each timed with and
    without the estimate in alternation, ``cost_repeats`` pairs after a
    warm-up (one row per pair); the report compares the medians.

``svd-tol``
    The single-pass SVDs with ``tol=t`` (a relative-error target), ``svd_tol_reps`` seeds, k =
    ``svd_tol_k`` (sketch rank 2k): the rank chosen, the true relative error
    ``||A - U S V^T||_F / ||A||_F``, and the best rank (the smallest q with
    ``||A - A_q||_F / ||A||_F <= t``).  The targets are the relative errors of
    the best rank-q approximations for q in ``svd_tol_ranks``, rounded up to
    three significant digits.
"""

import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import datasets as ds
from . import gmr as gmr_sweep
from . import kernel as kernel_sweep
from . import svd as svd_sweep
from .analysis import group
from .plotting import DATASET_COLORS, panel_figure, pyplot, title
from .report import Verdict, dataset_label, figure_lines, fmt, load_caveat, mark, md_table
from .runs import derive_seed, load_average, positive_float, progress

NAME = "estimate"
DEFAULT_DATASETS = ("madelon", "dna", "mushrooms", "debian-tfidf")
GMR = ("fast_gmr",)
SVDS = ("fast_sp_svd", "practical_sp_svd", "three_sketch_svd")
SPSD = ("faster_spsd", "nystrom")
ALGORITHMS = GMR + SVDS + SPSD
SVD_METHOD = dict(zip(SVDS, ("fast", "practical", "three-sketch")))
COLUMNS = (
    "part", "algorithm", "dataset", "storage", "sketch", "m", "n", "k", "c", "r", "a", "x", "s",
    "s_c", "s_r", "rep", "seed", "tol", "true_error", "value", "low", "high", "covered",
    "n_probes", "error_ratio", "rank", "best_rank", "seconds", "seconds_plain", "same_answer",
    "load",
)  # fmt: skip
CASES_TARGET = 200  # cases per algorithm before coverage and accuracy are judged
# targets of the report (sketchlab's, not the paper's)
COVERAGE_TARGET = 0.85
ACCURACY_TARGET = 0.10  # median |value / true - 1|
TOL_SUCCESS_TARGET = 0.90
TOL_TIME_TARGET = 4.0
GMR_COST_TARGET = 1.25  # fast_gmr with / without the estimate
SVD_COST_TARGET = 1.10  # fast_sp_svd with / without the estimate


@dataclass(frozen=True)
class EstimateConfig:
    """Configuration of the ``estimate`` sweep.

    ``gmr_grid_dense`` / ``gmr_grid_sparse`` hold a = s_c / c (the gmr
    sweep's grids), ``svd_grid`` x = (c + r) / k, ``spsd_grid`` a = s / c of
    faster SPSD, ``nystrom_c`` the landmark counts of Nystrom.
    ``tol_datasets`` names the data sets of the tol studies (all GMR/SVD
    data sets run when none of them is); ``tol_reps`` and ``svd_tol_reps``
    are their seeds.
    """

    datasets: tuple = ()
    reps: int = 10
    seed: int = 0
    c: int = 20
    gmr_grid_dense: tuple = tuple(range(2, 13))
    gmr_grid_sparse: tuple = tuple(range(3, 14))
    k: int = 10
    svd_grid: tuple = (2, 3, 4, 6, 8)
    kernel_k: int = 15
    spsd_grid: tuple = (3, 4, 6, 8, 10, 13, 16)
    nystrom_c: tuple = (10, 20, 30, 50, 80, 120, 160)
    tol_datasets: tuple = ("madelon", "debian-tfidf")
    gmr_tols: tuple = (0.02, 0.05, 0.1)
    tol_reps: int = 10
    svd_tol_ranks: tuple = (5, 10, 20)
    svd_tol_k: int = 20
    svd_tol_reps: int = 3
    cost_datasets: tuple = ("debian-tfidf",)
    cost_a: int = 10
    cost_repeats: int = 15
    algorithms: tuple = ALGORITHMS
    gamma: float | None = None

    @classmethod
    def quick(cls, **kwargs):
        """Few sizes and seeds, no SVD tol study (``--quick``): about a minute on the
        four default data sets."""
        base = {"reps": 1, "gmr_grid_dense": (4, 10), "gmr_grid_sparse": (5, 10),
                "svd_grid": (4,), "spsd_grid": (10,), "nystrom_c": (30,), "gmr_tols": (0.05,),
                "tol_reps": 2, "svd_tol_ranks": (), "cost_repeats": 5}  # fmt: skip
        return cls(**{**base, **kwargs})


def add_options(parser):
    parser.add_argument("--gamma", type=positive_float,
                        help="RBF scale of the kernel cases for files given by path (default: "
                        "the registry's; files without one get no kernel cases)")


def make_config(datasets, *, quick=False, reps=None, seed=0, gamma=None):
    """The config of the CLI options (``--reps`` sets the seeds of every part)."""
    kwargs = {"datasets": tuple(datasets), "seed": seed, "gamma": gamma}
    if reps is not None:
        kwargs.update(reps=reps, tol_reps=reps)
    return EstimateConfig.quick(**kwargs) if quick else EstimateConfig(**kwargs)


def _kernel_specs(config):
    return [s for s in config.datasets if ds.get(s, gamma=config.gamma).gamma is not None]


def _named_or_all(config, names):
    named = [s for s in config.datasets if ds.get(s).name in names]
    return named or list(config.datasets)


def _tol_specs(config):
    return _named_or_all(config, config.tol_datasets)


def _cost_specs(config):
    return _named_or_all(config, config.cost_datasets)


def load_all(config):
    loaded = {spec: ds.load_cached(spec) for spec in config.datasets}
    for spec in _kernel_specs(config):
        loaded[spec] = kernel_sweep.kernel_data(spec, config.gamma)[0]
    return list(loaded.values())


def timed(fn, min_total=0.05, repeat=3):
    """(first result, fastest time) of ``fn()``: a call shorter than
    ``min_total`` seconds is repeated up to ``repeat`` times, so that the
    timings of fast calls are not single samples of a noisy clock."""
    t0 = time.perf_counter()
    result = fn()
    best = time.perf_counter() - t0
    spent = best
    for _ in range(repeat - 1):
        if spent >= min_total:
            break
        t0 = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - t0
        best, spent = min(best, elapsed), spent + elapsed
    return result, best


def _row(part, algorithm, name, **keys):
    """A row; ``load``, the machine's load average, is taken now, right after its timings."""
    row = dict.fromkeys(COLUMNS, math.nan)
    row.update(part=part, algorithm=algorithm, dataset=name, load=load_average(), **keys)
    return row


def _estimate_keys(true, est):
    return {"true_error": true, "value": est.value, "low": est.low, "high": est.high,
            "covered": bool(est.low <= true <= est.high), "n_probes": est.n_probes}


def run(config, *, show_progress=True):
    """Run the sweep; tidy rows with the keys of ``COLUMNS``."""
    rows = []
    for spec in config.datasets:
        data = ds.load_cached(spec)
        if "fast_gmr" in config.algorithms:
            grid_rows = gmr_cases(data, config, show_progress)
            rows += grid_rows
            if spec in _tol_specs(config):
                rows += gmr_tol(data, config, grid_rows, show_progress)
        if set(SVDS) & set(config.algorithms):
            rows += svd_cases(data, config, show_progress)
            if spec in _tol_specs(config) and config.svd_tol_ranks:
                rows += svd_tol(data, config, show_progress)
        if spec in _cost_specs(config) and config.cost_repeats:
            rows += cost_cases(data, config)
    if set(SPSD) & set(config.algorithms):
        for spec in _kernel_specs(config):
            rows += spsd_cases(spec, config, show_progress)
    return rows


# ---------------------------------------------------------------------------
# fast_gmr
# ---------------------------------------------------------------------------


def _gmr_problem(data, config, rep):
    import sketchlab

    A, name = data.X, data.dataset.name
    C, R = gmr_sweep.gmr_inputs(A, config.c, config.c, derive_seed(config.seed, name, rep, "CR"))
    X_opt = sketchlab.gmr(A, C, R)
    return C, R, X_opt, sketchlab.gmr_residual(A, C, X_opt, R)


def gmr_cases(data, config, show_progress=True):
    """fast_gmr with and without its estimate at every a of the grid, ``reps`` seeds."""
    import sketchlab

    A, name = data.X, data.dataset.name
    kind = "gaussian" if data.dense else "countsketch"
    grid = config.gmr_grid_dense if data.dense else config.gmr_grid_sparse
    m, n = A.shape
    rows = []
    bar = progress(total=config.reps * len(grid), desc=f"estimate fast_gmr {name}",
                   enabled=show_progress)  # fmt: skip
    with bar:
        for rep in range(config.reps):
            C, R, X_opt, opt = _gmr_problem(data, config, rep)
            if rep == 0:  # warm-up: kernels loaded before anything is timed
                sketchlab.fast_gmr(A, C, R, sketch_size=gmr_sizes(grid[0], config.c, A.shape),
                                   sketch=kind, rng=0, estimate_error=True)  # fmt: skip
            for a in grid:
                s_c, s_r = gmr_sizes(a, config.c, A.shape)
                seed = derive_seed(config.seed, name, rep, NAME, "fast_gmr", int(a))

                def call(estimate_error):
                    return sketchlab.fast_gmr(A, C, R, sketch_size=(s_c, s_r), sketch=kind,
                                              rng=seed, estimate_error=estimate_error)

                (X,), plain = timed(lambda: call(False))
                res, seconds = timed(lambda: call(True))
                X_est, est = res.X, res.error_estimate
                true = sketchlab.gmr_residual(A, C, X, R)
                rows.append(_row(
                    "estimate", "fast_gmr", name, storage=_storage(data), sketch=kind, m=m, n=n,
                    c=config.c, r=config.c, a=int(a), s_c=s_c, s_r=s_r, rep=rep, seed=seed,
                    error_ratio=true / opt - 1.0 if opt > 0 else math.nan, seconds=seconds,
                    seconds_plain=plain, same_answer=bool(np.array_equal(X, X_est)),
                    **_estimate_keys(true, est)))  # fmt: skip
                bar.update()
    return rows


def gmr_sizes(a, c, shape):
    """(s_c, s_r) = (a c, a c), capped at (m, n): sketchlab refuses sketches larger
    than A (dna has 180 columns, mushrooms 112)."""
    return min(int(a) * c, shape[0]), min(int(a) * c, shape[1])


def smallest_a(grid_rows, tol):
    """The smallest a whose mean error ratio over ``grid_rows`` is at most ``tol`` (None)."""
    means = {a: float(np.mean([r["error_ratio"] for r in sub]))
             for (a,), sub in group(grid_rows, "a").items()}  # fmt: skip
    within = sorted(a for a, v in means.items() if v <= tol)
    return (within[0], means[within[0]]) if within else (None, math.nan)


def gmr_tol(data, config, grid_rows, show_progress=True):
    """fast_gmr(tol=t) against the true error ratio, and its time against the
    fixed-size call at the smallest grid a whose mean error ratio is within t."""
    import sketchlab

    A, name = data.X, data.dataset.name
    kind = "gaussian" if data.dense else "countsketch"
    m, n = A.shape
    rows = []
    bar = progress(total=config.tol_reps * len(config.gmr_tols), desc=f"estimate tol {name}",
                   enabled=show_progress)  # fmt: skip
    with bar:
        for rep in range(config.tol_reps):
            C, R, X_opt, opt = _gmr_problem(data, config, rep)
            for t in config.gmr_tols:
                seed = derive_seed(config.seed, name, rep, NAME, "tol", str(t))
                res, seconds = timed(lambda: sketchlab.fast_gmr(
                    A, C, R, tol=t, sketch=kind, rng=seed, estimate_error=True))
                X, est = res.X, res.error_estimate
                true = sketchlab.gmr_residual(A, C, X, R)
                keys = {"storage": _storage(data), "sketch": kind, "m": m, "n": n,
                        "c": config.c, "r": config.c, "rep": rep, "tol": t}  # fmt: skip
                rows.append(_row("gmr-tol", "fast_gmr", name, seed=seed, seconds=seconds,
                                 error_ratio=true / opt - 1.0, **keys,
                                 **_estimate_keys(true, est)))  # fmt: skip
                a, _ = smallest_a(grid_rows, t)
                if a is not None:
                    s_c, s_r = gmr_sizes(a, config.c, A.shape)
                    fixed_seed = derive_seed(config.seed, name, rep, NAME, "fixed", int(a))
                    X_fixed, fixed = timed(lambda: sketchlab.fast_gmr(
                        A, C, R, sketch_size=(s_c, s_r), sketch=kind, rng=fixed_seed).X)
                    rows.append(_row(
                        "gmr-fixed", "fast_gmr", name, seed=fixed_seed, a=int(a), s_c=s_c, s_r=s_r,
                        seconds=fixed, error_ratio=sketchlab.gmr_error_ratio(
                            A, C, X_fixed, R, X_opt=X_opt), **keys))  # fmt: skip
                bar.update()
    return rows


def _storage(data):
    return "dense" if data.dense else "sparse"


# ---------------------------------------------------------------------------
# single-pass SVDs
# ---------------------------------------------------------------------------


def svd_cases(data, config, show_progress=True):
    """The single-pass SVDs with and without their estimate over the svd sweep's sizes."""
    import sketchlab

    A, name = data.X, data.dataset.name
    kind = "gaussian" if data.dense else "countsketch"
    m, n = A.shape
    k = config.k
    opt = svd_sweep.residual_opt(data, k)
    methods = [a for a in SVDS if a in config.algorithms]
    plan = [(x, alg, svd_sweep.method_sizes(SVD_METHOD[alg], x, k, A.shape))
            for x in config.svd_grid for alg in methods]  # fmt: skip
    for alg in methods:  # warm-up
        svd_sweep.call(SVD_METHOD[alg], A, k, *plan[0][2], kind, 0, rank=k, estimate_error=True)
    rows = []
    bar = progress(total=config.reps * len(plan), desc=f"estimate svd {name}",
                   enabled=show_progress)  # fmt: skip
    with bar:
        for rep in range(config.reps):
            for x, alg, (c, r, s_c, s_r) in plan:
                seed = derive_seed(config.seed, name, rep, NAME, alg, str(x))

                def call(estimate_error):
                    return svd_sweep.call(SVD_METHOD[alg], A, k, c, r, s_c, s_r, kind, seed,
                                          rank=k, estimate_error=estimate_error)

                (U, s, Vt), plain = timed(lambda: call(False))
                res, seconds = timed(lambda: call(True))
                (U2, s2, Vt2), est = res, res.error_estimate
                true = sketchlab.lowrank_residual(A, U, s, Vt)
                same = all(np.array_equal(p, q) for p, q in ((U, U2), (s, s2), (Vt, Vt2)))
                rows.append(_row(
                    "estimate", alg, name, storage=_storage(data), sketch=kind, m=m, n=n, k=k,
                    c=c, r=r, x=x, s_c=s_c, s_r=s_r, rep=rep, seed=seed, rank=s.size,
                    error_ratio=true / opt - 1.0 if opt > 0 else math.nan, seconds=seconds,
                    seconds_plain=plain, same_answer=same, **_estimate_keys(true, est)))
                bar.update()
    return rows


def svd_targets(data, ranks):
    """{q: t}: the relative error of the best rank-q approximation, rounded up to
    three significant digits, for each q of ``ranks``; and the relative tails."""
    norm = math.sqrt(svd_sweep.squared_norm(data.X))
    sigma = svd_sweep.singular_values(data, max(ranks) + 1)
    tails = relative_tails(sigma, norm)
    targets = {}
    for q in ranks:
        value = tails[q]
        digits = 2 - math.floor(math.log10(value)) if value > 0 else 3
        targets[q] = math.ceil(value * 10**digits) / 10**digits
    return targets, tails


def relative_tails(sigma, norm):
    """``||A - A_q||_F / ||A||_F`` for q = 0 .. len(sigma), from the top
    singular values and ``||A||_F``."""
    sq = np.concatenate([[0.0], np.cumsum(np.sort(np.asarray(sigma))[::-1] ** 2)])
    return np.sqrt(np.maximum(norm**2 - sq, 0.0)) / norm


def best_rank(tails, t):
    """The smallest q with ``tails[q] <= t`` (None when no q known reaches t)."""
    hits = np.flatnonzero(np.asarray(tails) <= t)
    return int(hits[0]) if hits.size else None


def svd_tol(data, config, show_progress=True):
    """The single-pass SVDs with ``tol=t``: rank chosen and true relative error."""
    import sketchlab

    A, name = data.X, data.dataset.name
    kind = "gaussian" if data.dense else "countsketch"
    m, n = A.shape
    k = config.svd_tol_k
    targets, tails = svd_targets(data, config.svd_tol_ranks)
    norm = math.sqrt(svd_sweep.squared_norm(A))
    methods = [a for a in SVDS if a in config.algorithms]
    rows = []
    bar = progress(total=config.svd_tol_reps * len(targets) * len(methods),
                   desc=f"estimate svd tol {name}", enabled=show_progress)  # fmt: skip
    with bar:
        for rep in range(config.svd_tol_reps):
            for q, t in targets.items():
                for alg in methods:
                    c, r, s_c, s_r = svd_sweep.method_sizes(SVD_METHOD[alg], 4, k, A.shape)
                    seed = derive_seed(config.seed, name, rep, NAME, "svd-tol", alg, str(t))
                    res, seconds = timed(lambda: svd_sweep.call(
                        SVD_METHOD[alg], A, k, c, r, s_c, s_r, kind, seed, rank=None, tol=t,
                        estimate_error=True))  # fmt: skip
                    (U, s, Vt), est = res, res.error_estimate
                    true = sketchlab.lowrank_residual(A, U, s, Vt)
                    rows.append(_row(
                        "svd-tol", alg, name, storage=_storage(data), sketch=kind, m=m, n=n, k=k,
                        c=c, r=r, x=4, s_c=s_c, s_r=s_r, rep=rep, seed=seed, tol=t, rank=s.size,
                        best_rank=best_rank(tails, t), error_ratio=true / norm,
                        seconds=seconds, **_estimate_keys(true, est)))  # fmt: skip
                    bar.update()
    return rows


# ---------------------------------------------------------------------------
# the cost of the estimate
# ---------------------------------------------------------------------------


def _pair(fn, swap=False):
    """(seconds of fn(False), seconds of fn(True)), timed back to back (the call
    with the estimate first when ``swap``, so that neither always runs second)."""
    seconds = {}
    for flag in (True, False) if swap else (False, True):
        t0 = time.perf_counter()
        fn(flag)
        seconds[flag] = time.perf_counter() - t0
    return seconds[False], seconds[True]


def cost_cases(data, config):
    """fast_gmr at a = ``cost_a`` and fast_sp_svd at its defaults, with and without
    the estimate in alternation: ``cost_repeats`` rows each (after a warm-up pair)."""
    import sketchlab

    A, name = data.X, data.dataset.name
    kind = "gaussian" if data.dense else "countsketch"
    m, n = A.shape
    C, R, _, _ = _gmr_problem(data, config, 0)
    s_c, s_r = gmr_sizes(config.cost_a, config.c, A.shape)
    gmr_seed = derive_seed(config.seed, name, NAME, "cost", "fast_gmr")
    svd_seed = derive_seed(config.seed, name, NAME, "cost", "fast_sp_svd")

    def gmr(estimate_error):
        return sketchlab.fast_gmr(A, C, R, sketch_size=(s_c, s_r), sketch=kind, rng=gmr_seed,
                                  estimate_error=estimate_error)  # fmt: skip

    def svd(estimate_error):
        return sketchlab.fast_sp_svd(A, config.k, rng=svd_seed, estimate_error=estimate_error)

    rows = []
    for alg, fn, keys in (
        ("fast_gmr", gmr, {"sketch": kind, "c": config.c, "r": config.c, "a": config.cost_a,
                           "s_c": s_c, "s_r": s_r, "seed": gmr_seed}),
        ("fast_sp_svd", svd, {"sketch": "default", "k": config.k, "seed": svd_seed}),
    ):  # fmt: skip
        if alg not in config.algorithms:
            continue
        _pair(fn)  # warm-up
        for rep in range(config.cost_repeats):
            plain, seconds = _pair(fn, swap=rep % 2 == 1)
            rows.append(_row("cost", alg, name, storage=_storage(data), m=m, n=n, rep=rep,
                             seconds=seconds, seconds_plain=plain, **keys))  # fmt: skip
    return rows


# ---------------------------------------------------------------------------
# SPSD kernel approximations
# ---------------------------------------------------------------------------


def spsd_cases(spec, config, show_progress=True):
    """faster_spsd over s = a c (c = 2k) and nystrom over c, with and without estimates.

    Per seed, one uniform order of the points: its first c are the landmarks
    of size c (and faster SPSD's the first 2k), so that ``C^T K`` of the
    largest c (one O(n^2 c) product per seed) gives the exact error of every
    smaller one in O(n c^2).
    """
    import sketchlab

    data, gamma = kernel_sweep.kernel_data(spec, config.gamma)
    X = kernel_sweep.kernel_input(data.X)
    name, n = data.dataset.name, X.shape[0]
    K = kernel_sweep.kernel_matrix(X, gamma)
    norm = math.sqrt(float(np.einsum("ij,ij->", K, K)))
    c0 = 2 * config.kernel_k
    plan = [("faster_spsd", c0, int(a) * c0, a) for a in config.spsd_grid
            if int(a) * c0 <= n and "faster_spsd" in config.algorithms]
    plan += [("nystrom", int(c), math.nan, math.nan) for c in config.nystrom_c
             if c <= n and "nystrom" in config.algorithms]  # fmt: skip
    c_max = max(c for _, c, _, _ in plan)
    rows = []
    bar = progress(total=config.reps * len(plan), desc=f"estimate spsd {name}",
                   enabled=show_progress)  # fmt: skip
    with bar:
        for rep in range(config.reps):
            gen = np.random.default_rng(derive_seed(config.seed, name, rep, "order"))
            order = gen.permutation(n)
            top = order[:c_max]
            Ct = np.ascontiguousarray(K[top])  # C^T of the largest c (K is symmetric)
            CtK = Ct @ K  # its C^T K, once per seed
            oracle = sketchlab.RBFKernel(X, gamma)
            for alg, c, s, a in plan:
                pos = np.argsort(top[:c])  # landmarks sorted, as the library keeps them
                cols = top[pos]
                seed = derive_seed(config.seed, name, rep, NAME, alg, c, str(a))

                def call(estimate_error, alg=alg, c=c, s=s, cols=cols, seed=seed):
                    if alg == "faster_spsd":
                        return sketchlab.faster_spsd(oracle, c, s, columns=cols, rng=seed,
                                                     estimate_error=estimate_error)
                    return sketchlab.nystrom(oracle, c, columns=cols, rng=seed,
                                             estimate_error=estimate_error)

                if rep == 0 and (alg, c) == plan[0][:2]:
                    call(True)  # warm-up
                plain_result, plain = timed(lambda: call(False))
                result, seconds = timed(lambda: call(True))
                assert np.array_equal(result.columns, cols)
                err = norm * kernel_sweep.RelativeError.from_parts(
                    norm**2, CtK[pos] @ Ct[pos].T, Ct[pos] @ Ct[pos].T)(result.U)
                est = result.error_estimate
                rows.append(_row(
                    "estimate", alg, name, storage=_storage(data), m=n, n=n, k=config.kernel_k,
                    c=c, r=c, a=a, s=s, rep=rep, seed=seed, seconds=seconds, seconds_plain=plain,
                    error_ratio=err / norm, same_answer=bool(
                        np.array_equal(plain_result.U, result.U)), **_estimate_keys(err, est)))
                bar.update()
    return rows


# ---------------------------------------------------------------------------
# summaries (the report uses them too)
# ---------------------------------------------------------------------------


def coverage(rows):
    """Fraction of rows whose true error lies in [low, high] (NaN without rows)."""
    flags = [bool(r["covered"]) for r in rows if isinstance(r["covered"], (bool, np.bool_))]
    return float(np.mean(flags)) if flags else math.nan


def accuracy(rows):
    """Median over rows of |value / true - 1| (NaN without rows)."""
    vals = [abs(r["value"] / r["true_error"] - 1.0) for r in rows
            if r["true_error"] > 0 and np.isfinite(r["value"])]  # fmt: skip
    return float(np.median(vals)) if vals else math.nan


def cost(rows):
    """(median per-case time with / without the estimate, total with / total without)."""
    pairs = [(r["seconds"], r["seconds_plain"]) for r in rows
             if np.isfinite(r["seconds"]) and np.isfinite(r["seconds_plain"])
             and r["seconds_plain"] > 0]  # fmt: skip
    if not pairs:
        return math.nan, math.nan
    with_, without = np.array(pairs).T
    return float(np.median(with_ / without)), float(with_.sum() / without.sum())


def analyse(rows):
    """Per algorithm (and per (algorithm, data set)): cases, coverage, accuracy, cost."""
    cases = [r for r in rows if r["part"] == "estimate"]
    out = {}
    for (alg,), sub in group(cases, "algorithm").items():
        item = {"cases": len(sub), "coverage": coverage(sub), "accuracy": accuracy(sub),
                "cost": cost(sub), "same": all(bool(r["same_answer"]) for r in sub),
                "per_set": {}}  # fmt: skip
        for (name,), part in group(sub, "dataset").items():
            item["per_set"][name] = {"cases": len(part), "coverage": coverage(part),
                                     "accuracy": accuracy(part), "cost": cost(part)}
        judged = item["cases"] >= CASES_TARGET  # fewer cases (--quick): shown, not judged
        item["coverage_ok"] = item["coverage"] >= COVERAGE_TARGET if judged else None
        item["accuracy_ok"] = item["accuracy"] <= ACCURACY_TARGET if judged else None
        out[alg] = item
    return out


COST_TARGETS = {"fast_gmr": GMR_COST_TARGET, "fast_sp_svd": SVD_COST_TARGET}


def analyse_cost(rows):
    """Per (data set, algorithm) of the ``cost`` rows: pairs, median seconds with and
    without the estimate, their ratio, the target and the verdict."""
    out = []
    for (name, alg), sub in group([r for r in rows if r["part"] == "cost"], "dataset",
                                  "algorithm").items():  # fmt: skip
        with_ = float(np.median([r["seconds"] for r in sub]))
        without = float(np.median([r["seconds_plain"] for r in sub]))
        ratio = with_ / without if without > 0 else math.nan
        target = COST_TARGETS.get(alg)
        out.append({"dataset": name, "algorithm": alg, "pairs": len(sub), "with": with_,
                    "without": without, "ratio": ratio, "target": target, "a": sub[0]["a"],
                    "k": sub[0]["k"], "s_c": sub[0]["s_c"], "s_r": sub[0]["s_r"],
                    "ok": None if target is None else bool(ratio <= target)})  # fmt: skip
    return out


def analyse_gmr_tol(rows):
    """Per (data set, t): runs, fraction with true error ratio <= t, the ratios,
    a* and its mean error ratio, and the median of time(tol) / time(fixed)."""
    grid = [r for r in rows if r["part"] == "estimate" and r["algorithm"] == "fast_gmr"]
    out = []
    for (name, t), sub in group([r for r in rows if r["part"] == "gmr-tol"], "dataset",
                                "tol").items():  # fmt: skip
        ratios = np.array([r["error_ratio"] for r in sub])
        a, mean_at = smallest_a([r for r in grid if r["dataset"] == name], t)
        fixed = {r["rep"]: r for r in rows if r["part"] == "gmr-fixed" and r["dataset"] == name
                 and r["tol"] == t}  # fmt: skip
        speed = [r["seconds"] / fixed[r["rep"]]["seconds"] for r in sub if r["rep"] in fixed]
        item = {"dataset": name, "tol": t, "runs": len(sub),
                "success": float(np.mean(ratios <= t)), "median": float(np.median(ratios)),
                "max": float(ratios.max()), "a_fixed": a, "mean_at_a": mean_at,
                "time_ratio": float(np.median(speed)) if speed else math.nan,
                "coverage": coverage(sub)}  # fmt: skip
        item["success_ok"] = item["success"] >= TOL_SUCCESS_TARGET
        item["time_ok"] = (item["time_ratio"] <= TOL_TIME_TARGET) if speed else None
        out.append(item)
    return out


def analyse_svd_tol(rows):
    """Per (data set, method, t): best rank, chosen ranks, true relative errors."""
    out = []
    for (name, alg, t), sub in group([r for r in rows if r["part"] == "svd-tol"], "dataset",
                                     "algorithm", "tol").items():  # fmt: skip
        rel = np.array([r["error_ratio"] for r in sub])
        ranks = np.array([r["rank"] for r in sub])
        out.append({"dataset": name, "algorithm": alg, "tol": t, "runs": len(sub),
                    "best_rank": sub[0]["best_rank"], "rank_median": float(np.median(ranks)),
                    "rank_min": int(ranks.min()), "rank_max": int(ranks.max()),
                    "rel_median": float(np.median(rel)), "rel_max": float(rel.max()),
                    "success": float(np.mean(rel <= t))})  # fmt: skip
    return out


def summary(rows):
    lines = []
    for alg, item in analyse(rows).items():
        ratio, _ = item["cost"]
        lines.append(f"{alg}: {item['cases']} cases, coverage {100 * item['coverage']:.0f}%, "
                     f"median |value/true - 1| {item['accuracy']:.3f}, time with/without "
                     f"{ratio:.2f}x")  # fmt: skip
    for item in analyse_cost(rows):
        lines.append(f"{item['algorithm']} on {item['dataset']}: the estimate adds "
                     f"{100 * (item['ratio'] - 1):+.0f}% (median of {item['pairs']} pairs, "
                     f"{item['with']:.3g} s / {item['without']:.3g} s)")  # fmt: skip
    for item in analyse_gmr_tol(rows):
        lines.append(f"fast_gmr(tol={item['tol']:g}) on {item['dataset']}: "
                     f"{100 * item['success']:.0f}% within tol, time / fixed a = "
                     f"{item['a_fixed']}: {item['time_ratio']:.2f}x")  # fmt: skip
    return lines


# -- figure and report section --------------------------------------------------------------


def draw(ax, rows):
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


def plot(rows, folder):
    """``estimate.png``: one panel per algorithm, estimate against truth, every case."""
    plt = pyplot()
    cases = [r for r in rows if r["part"] == "estimate"]
    if not cases:
        return []
    return [panel_figure(plt, cases, "algorithm", draw, Path(folder) / "estimate.png",
                          legend=False)]


def _pct(value):
    return f"{fmt(100 * value, '.0f')}%"


def section(out, rows, verdicts, runs):
    res = analyse(rows)
    lines = [
        "## Error estimates and fixed accuracy (sketchlab's targets, not the paper's)", "",
        "`estimate_error=True` returns an `ErrorEstimate` of ||A - A_hat||_F for the answer "
        "returned, with an interval [low, high] meant to hold the true error about 90% of the "
        "time. Each case is one (algorithm, data set, sketch size, seed), its true error "
        "computed exactly: fast_gmr (Algorithm 1) on the gmr sweep's problems (c = r = "
        f"{EstimateConfig.c}, s = a c), the single-pass SVDs at the svd sweep's sizes "
        "(rank-k output), faster SPSD (Algorithm 2, c = 2k uniform landmarks, s = a c) and "
        "Nystrom (c landmarks) on the RBF kernels. Targets: the interval holds the true error "
        f"in >= {100 * COVERAGE_TARGET:.0f}% of >= {CASES_TARGET} cases per algorithm, "
        f"and the median of |value / true - 1| is <= {ACCURACY_TARGET:g} (with fewer cases, "
        "a `--quick` run, the numbers are shown and not judged). The answer is the same with "
        "and without the estimate (its probes are drawn after everything else): column "
        "'same answer'.", "",
    ]  # fmt: skip
    header = ["algorithm", "cases", "coverage (per data set)", "median abs(value/true - 1)",
              "same answer", "time with / without (median of single runs)",
              f"coverage >= {100 * COVERAGE_TARGET:.0f}%",
              f"accuracy <= {ACCURACY_TARGET:g}"]  # fmt: skip
    record = runs.get(NAME, (None, {}))[1]
    body = []
    for alg, item in res.items():
        per_set = ", ".join(f"{n} {_pct(v['coverage'])} of {v['cases']}"
                            for n, v in item["per_set"].items())  # fmt: skip
        few = f"{item['cases']} of the {CASES_TARGET} cases it needs"  # a --quick run
        body.append([alg, item["cases"], f"{_pct(item['coverage'])} ({per_set})",
                     fmt(item["accuracy"], ".3f"), "yes" if item["same"] else "**no**",
                     f"{fmt(item['cost'][0], '.2f')}x", mark(item["coverage_ok"], few),
                     mark(item["accuracy_ok"], few)])  # fmt: skip
        for key, what, value in (("coverage_ok", "interval coverage", _pct(item["coverage"])),
                                 ("accuracy_ok", "median abs(value/true - 1)",
                                  fmt(item["accuracy"], ".3f"))):  # fmt: skip
            verdicts.append(Verdict(
                f"estimate_{key}", alg, f"error estimate of {alg}, {what}: {value} over "
                f"{item['cases']} cases -> {mark(item[key], few)}", item[key],
                f"sketchlab's error estimate ({what}) of {alg}"))  # fmt: skip
    lines += md_table(header, body)
    cost = analyse_cost(rows)
    if cost:
        lines += ["", "### The cost of the estimate", "",
                  "The same call with and without `estimate_error=True`, timed in alternation "
                  "(after a warm-up), median of each: fast_gmr on the problem above at a = "
                  f"{cost[0]['a'] if math.isfinite(cost[0]['a']) else '?'}, fast_sp_svd(A, k) "
                  "at the library's default sizes and sketches. Targets: at most "
                  f"+{100 * (GMR_COST_TARGET - 1):.0f}% for fast_gmr, "
                  f"+{100 * (SVD_COST_TARGET - 1):.0f}% for fast_sp_svd.", ""]  # fmt: skip
        body = []
        for c in cost:
            sizes = (f"a = {c['a']:g}, s = {c['s_c']:g} x {c['s_r']:g}"
                     if c["algorithm"] == "fast_gmr" else f"k = {c['k']:g}, default sizes")
            timed = [r for r in rows if r["part"] == "cost" and r["dataset"] == c["dataset"]
                     and r["algorithm"] == c["algorithm"]]  # fmt: skip
            caveat = load_caveat(timed, record)
            body.append([dataset_label(c["dataset"]), c["algorithm"], sizes, c["pairs"],
                         f"{c['without'] * 1e3:.1f}", f"{c['with'] * 1e3:.1f}",
                         f"{100 * (c['ratio'] - 1):+.1f}%", mark(c["ok"]) + caveat])  # fmt: skip
            if c["ok"] is not None:
                verdicts.append(Verdict(
                    "estimate_cost", c["dataset"], f"cost of the estimate of {c['algorithm']} on "
                    f"{c['dataset']}: {100 * (c['ratio'] - 1):+.1f}% (target <= "
                    f"+{100 * (c['target'] - 1):.0f}%) -> {mark(c['ok'])}{caveat}", c["ok"],
                    f"sketchlab's estimate cost for {c['algorithm']} on {c['dataset']}"))
        lines += md_table(["data set", "algorithm", "sizes", "pairs", "without (ms)", "with (ms)",
                         "added", "verdict"], body)  # fmt: skip
    tol = analyse_gmr_tol(rows)
    if tol:
        lines += ["", "### fast_gmr(tol=t)", "",
                  "`fast_gmr(A, C, R, tol=t)` chooses its sketch size; on the problems above, "
                  "over the seeds: the fraction of runs whose true error ratio is <= t (target "
                  f">= {100 * TOL_SUCCESS_TARGET:.0f}%), and its time against a fixed-size "
                  "call at a*, the smallest a of the grid whose mean error ratio (the cases "
                  f"above) is within t, timed right after it (target <= {TOL_TIME_TARGET:g}x,"
                  " median over seeds).", ""]  # fmt: skip
        body = []
        for t in tol:
            body.append([dataset_label(t["dataset"]), f"{t['tol']:g}", t["runs"],
                         _pct(t["success"]),
                         f"{fmt(t['median'], '.4f')} / {fmt(t['max'], '.4f')}",
                         "none" if t["a_fixed"] is None else
                         f"{t['a_fixed']} ({fmt(t['mean_at_a'], '.4f')})",
                         f"{fmt(t['time_ratio'], '.2f')}x", _pct(t["coverage"]),
                         mark(t["success_ok"]), mark(t["time_ok"])])  # fmt: skip
            where = f"{t['dataset']}, t = {t['tol']:g}"
            timed = [r for r in rows if r["part"] in ("gmr-tol", "gmr-fixed")
                     and r["dataset"] == t["dataset"] and r["tol"] == t["tol"]]  # fmt: skip
            caveat = load_caveat(timed, record)
            verdicts.append(Verdict(
                "tol_success", t["dataset"], f"fast_gmr(tol) on {where}: true error ratio <= t "
                f"in {_pct(t['success'])} of {t['runs']} runs -> {mark(t['success_ok'])}",
                t["success_ok"], f"sketchlab's fast_gmr(tol) accuracy on {where}"))
            verdicts.append(Verdict(
                "tol_time", t["dataset"], f"fast_gmr(tol) on {where}: "
                f"{fmt(t['time_ratio'], '.2f')}x the fixed size a* = {t['a_fixed']} -> "
                f"{mark(t['time_ok'])}{caveat}", t["time_ok"],
                f"sketchlab's fast_gmr(tol) time on {where}"))  # fmt: skip
        lines += md_table(["data set", "t", "runs", "error ratio <= t", "error ratio median / max",
                         "a* (its mean error ratio)", "time / fixed a*", "interval coverage",
                         "accuracy verdict", "time verdict"], body)  # fmt: skip
    svd_tol = analyse_svd_tol(rows)
    if svd_tol:
        lines += ["", "### Single-pass SVDs with tol=t (information)", "",
                  "`fast_sp_svd(A, k, tol=t)` and its peers return the smallest rank whose "
                  "estimated relative error ||A - A_hat||_F / ||A||_F is <= t (when no rank up "
                  f"to the sketch rank, 2k = {2 * EstimateConfig.svd_tol_k}, is: the one "
                  "with the smallest estimated error, with a warning). t is the relative error "
                  "of the best rank-q approximation (rounded up); the best rank is the "
                  "smallest q reaching t.", ""]  # fmt: skip
        body = [[dataset_label(t["dataset"]), t["algorithm"], f"{t['tol']:g}", t["runs"],
                 t["best_rank"], f"{t['rank_median']:g} ({t['rank_min']}-{t['rank_max']})",
                 f"{fmt(t['rel_median'], '.4f')} / {fmt(t['rel_max'], '.4f')}",
                 _pct(t["success"])] for t in svd_tol]  # fmt: skip
        lines += md_table(["data set", "algorithm", "t", "runs", "best rank", "rank chosen "
                         "(median, range)", "true relative error median / max",
                         "true relative error <= t"], body)  # fmt: skip
    return lines + [""] + figure_lines(out, "estimate")
