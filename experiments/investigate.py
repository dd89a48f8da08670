"""Sweep ``investigate``: the studies behind the report's explanations of its disagreements.

``python -m experiments investigate`` (also run by ``reproduce``) writes
``OUT/investigate/investigate.csv``, one measurement per row (``metric``,
``value``), from three studies:

``kernel-scale``
    Which reading of the paper's kernel scale sigma (Table 6) gives Table
    6's eta on every data set: ``K_ij = exp(-sigma ||x_i - x_j||^2)`` as
    printed in Section 6.2, the Gaussian width ``exp(-||x_i - x_j||^2 / (2
    sigma^2))``, or ``exp(-||x_i - x_j||^2 / sigma)``.  Metric ``eta``
    (k = 15, ``sketchlab.eta``).

``spsd-table``
    Why our fast SPSD errors (Wang et al.'s core, eq. (4.1)) differ from
    Table 7.  On every data set of Table 7 that is present, the protocol as
    the ``spsd-table`` sweep runs it ("as run": c = 2k = 30 uniform
    landmarks, S of s = a c rows drawn uniformly without replacement), with
    many more repetitions, so that the report can show the spread of single
    runs and of means of 10 runs; and the other readings of the protocol
    (:data:`ATTEMPTS`): kernel scale, feature encoding, c, the distribution
    of S.  Metrics ``error`` (``||K - C U
    C^T||_F / ||K||_F``), ``cond_SC`` (condition number of S C, which the
    pseudo-inverse of eq. (4.1) inverts) and ``eta`` of the kernel used.

``svd-conditioning``
    Why Practical SP-SVD (Tropp et al. 2017, the paper's Algorithm 4) with
    c = r gets worse as storage grows.  Its sketch-rank output is
    ``U_C (Psi U_C)^+ Psi A`` (``U_C`` an orthonormal basis of ``C = A
    Omega``), so with ``T = (I - U_C U_C^T) A`` its error splits exactly into
    two orthogonal parts, ``||A - U_C (Psi U_C)^+ Psi A||_F^2 = ||T||_F^2 +
    ||(Psi U_C)^+ Psi T||_F^2``.  For c = r, ``Psi U_C`` is square and its
    smallest singular value is near zero; Tropp et al. take r >= 2c + 1.
    Metrics, for both splits of the same c + r (``svd.method_sizes``):
    ``sigma_min``, ``sigma_max``, ``cond`` of ``Psi U_C``; ``tail_ratio`` =
    ``||T||_F / ||A - A_k||_F``; ``amplification`` = ``||(Psi U_C)^+ Psi
    T||_F / ||T||_F``; and ``error_ratio`` = ``tail_ratio sqrt(1 +
    amplification^2) - 1``, the error ratio of Figure 3.

Seeds: a row's ``seed`` is the ``rng`` of its ``sketchlab.fast_spsd`` call,
or, in the SVD study, the seed of the ``numpy.random.default_rng`` that draws
Omega then Psi (``sketchlab.make_sketch``); landmarks of repetition ``rep``
are those of the kernel sweep's repetition ``rep`` (``derive_seed(seed,
dataset, rep, "landmarks")``).
"""

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from . import datasets as ds
from . import paper
from .analysis import band, group
from .kernel import RelativeError, kernel_data, kernel_input, kernel_matrix, landmarks
from .runs import ConfigError, derive_seed, progress

NAME = "investigate"
DEFAULT_DATASETS = tuple(dict.fromkeys(ds.KERNEL_DATASETS + ds.GMR_DATASETS))
STUDIES = ("kernel-scale", "spsd-table", "svd-conditioning")
COLUMNS = (
    "study", "dataset", "attempt", "n", "d", "gamma", "c", "r", "a", "x", "rep", "seed",
    "metric", "value",
)  # fmt: skip

# Readings of Table 6's sigma: label -> gamma of K_ij = exp(-gamma ||x_i - x_j||^2).
READINGS = {
    "gamma = sigma (as printed)": lambda sigma: sigma,
    "gamma = 1/(2 sigma^2) (Gaussian width sigma)": lambda sigma: 1.0 / (2.0 * sigma**2),
    "gamma = 1/sigma": lambda sigma: 1.0 / sigma,
}
AS_RUN = "as run"


@dataclass(frozen=True)
class Attempt:
    """One reading of Table 7's protocol.

    ``gamma_factor`` multiplies the data set's kernel scale; ``encoding`` is
    applied to the features first ("as read": LIBSVM's file as is; "pm1":
    ``2x - 1``; "unit-rows": rows scaled to unit norm; "standardized":
    columns to zero mean and unit variance); ``c`` overrides 2k; ``options``
    are keyword arguments of ``sketchlab.fast_spsd``, as (name, value) pairs.
    """

    label: str
    gamma_factor: float = 1.0
    encoding: str = "as read"
    c: int | None = None
    options: tuple = ()


ATTEMPTS = (
    Attempt(AS_RUN),
    Attempt("gamma = 0.8 sigma", gamma_factor=0.8),
    # a smaller step, within which eta may still round to Table 6's value
    Attempt("gamma = 1.05 sigma", gamma_factor=1.05),
    Attempt("gamma = 1.2 sigma", gamma_factor=1.2),
    Attempt("features in {-1, +1} (2x - 1)", encoding="pm1"),
    Attempt("rows scaled to unit norm", encoding="unit-rows"),
    Attempt("columns standardized", encoding="standardized"),
    Attempt("c = k = 15", c=15),
    Attempt("c = 4k = 60", c=60),
    Attempt("S uniform, with replacement", options=(("replace", True),)),
    Attempt("S by leverage scores of C", options=(("sampling", "leverage"),)),
    Attempt("S by leverage scores, rows unscaled",
            options=(("sampling", "leverage"), ("scaled", False))),  # fmt: skip
    Attempt("landmark rows forced into S", options=(("include_columns", True),)),
)
C_EQUALS_K = next(a for a in ATTEMPTS if a.label.startswith("c = k"))
SPLITS = {"c = r": "practical-equal", "r = 2c + 1": "practical"}
# The Gaussian model of the svd-conditioning study: draws of Psi U_C per (split, c).
MODEL = "gaussian-model"
MODEL_DRAWS = 2000


@dataclass(frozen=True)
class InvestigateConfig:
    """Configuration of the ``investigate`` sweep.

    ``reps`` runs of the as-run protocol per Table 7 data set (enough for the
    spread of means of 10 runs), ``attempt_reps`` per other attempt,
    ``svd_reps`` per (split, x) of the conditioning study.
    ``attempt_datasets`` names the data sets that get every attempt (None:
    all of the kernel studies'); the others get the protocol as run and c = k.
    """

    datasets: tuple = ()
    studies: tuple = STUDIES
    seed: int = 0
    reps: int = 50
    attempt_reps: int = 20
    svd_reps: int = 5
    k: int = 15
    grid: tuple = (8, 10, 12, 14, 16)
    attempt_datasets: tuple | None = None
    svd_k: int = 10
    svd_grid: tuple = (2, 3, 4, 6, 8)
    gamma: float | None = None

    @classmethod
    def quick(cls, **kwargs):
        """Fewer repetitions and x values (``--quick``)."""
        base = {"reps": 20, "attempt_reps": 3, "svd_reps": 2, "svd_grid": (2, 4, 8)}
        return cls(**{**base, **kwargs})


def make_config(datasets, *, quick=False, reps=None, seed=0, gamma=None, study=None):
    """The config of the CLI options (``--reps`` sets the repetitions of every study)."""
    kwargs = {"datasets": tuple(datasets), "seed": seed, "gamma": gamma}
    if reps is not None:
        kwargs.update(reps=reps, attempt_reps=reps, svd_reps=reps)
    if study:
        kwargs["studies"] = tuple(s for s in STUDIES if s in study)
    return InvestigateConfig.quick(**kwargs) if quick else InvestigateConfig(**kwargs)


def _kernel_specs(config):
    """The data sets of the kernel studies: those with a kernel scale."""
    out = []
    for spec in config.datasets:
        entry = ds.get(spec, gamma=config.gamma)
        if entry.gamma is not None:
            out.append(spec)
    return out


def _svd_specs(config):
    """The data sets of the SVD study: the paper's GMR/SVD sets, their stand-ins, files."""
    names = set(ds.GMR_DATASETS) | {ds.REGISTRY[n].stand_in for n in ds.GMR_DATASETS} - {None}
    return [s for s in config.datasets if ds.get(s).name in names or ds.get(s).path is not None]


def load_all(config):
    """The data sets of ``config`` as the studies see them."""
    loaded = {}
    if {"kernel-scale", "spsd-table"} & set(config.studies):
        for spec in _kernel_specs(config):
            loaded[spec] = kernel_data(spec, config.gamma)[0]
    if "svd-conditioning" in config.studies:
        for spec in _svd_specs(config):
            loaded.setdefault(spec, ds.load_cached(spec))
    return list(loaded.values())


def run(config, *, show_progress=True):
    """Run the studies of ``config``; tidy rows with the keys of ``COLUMNS``."""
    rows = []
    if {"kernel-scale", "spsd-table"} & set(config.studies):
        for spec in _kernel_specs(config):
            rows += kernel_studies(spec, config, show_progress)
    if "svd-conditioning" in config.studies:
        rows += gaussian_model(config)
        for spec in _svd_specs(config):
            rows += svd_conditioning(spec, config, show_progress)
    return rows


def _row(study, name, attempt, metric, value, **keys):
    row = dict.fromkeys(COLUMNS, math.nan)
    row.update(study=study, dataset=name, attempt=attempt, metric=metric, value=float(value))
    row.update(keys)
    return row


def encode(X, encoding):
    """The features under ``encoding`` (see :class:`Attempt`); a dense float64 array."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    if encoding == "as read":
        return X
    if encoding == "pm1":
        return 2.0 * X - 1.0
    if encoding == "unit-rows":
        norms = np.linalg.norm(X, axis=1, keepdims=True)
        return X / np.where(norms > 0, norms, 1.0)
    if encoding == "standardized":
        sd = X.std(axis=0)
        return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    raise ConfigError(f"encoding must be one of 'as read', 'pm1', 'unit-rows', "
                      f"'standardized', got {encoding!r}")  # fmt: skip


def _attempt_plan(config, name):
    """(attempt, repetitions) to run on data set ``name``: every attempt on
    ``attempt_datasets``, the protocol as run and c = k on the others (to see
    whether c = k is a consistent reading of the table)."""
    if "spsd-table" not in config.studies:
        return []
    everything = config.attempt_datasets is None or name in config.attempt_datasets
    chosen = ATTEMPTS if everything else [ATTEMPTS[0], C_EQUALS_K]
    return [(a, config.reps if a.label == AS_RUN else config.attempt_reps) for a in chosen]


def kernel_studies(spec, config, show_progress=True):
    """The kernel-scale and spsd-table studies on one data set (one kernel matrix at a time).

    Fast SPSD errors under each attempt at Table 7's a values, with cond(S C)
    and the eta of the kernel used; eta under each reading of sigma.
    Attempts that share features and kernel scale share the kernel matrix,
    and, for the same c and repetition, the landmarks and the exact error.
    """
    import sketchlab

    data, sigma = kernel_data(spec, config.gamma)
    name = data.dataset.name
    X0 = kernel_input(data.X)
    kernels = {}
    for attempt, reps in _attempt_plan(config, name):
        kernels.setdefault((attempt.encoding, attempt.gamma_factor), []).append((attempt, reps))
    readings = READINGS if "kernel-scale" in config.studies else {}
    total = sum(r * len(config.grid) for items in kernels.values() for _, r in items)
    bar = progress(total=total + len(readings), desc=f"investigate {name}", enabled=show_progress)
    rows, printed_eta = [], None
    with bar:
        for (encoding, factor), items in kernels.items():
            X = encode(X0, encoding)
            n, d = X.shape
            gamma = sigma * factor
            K = kernel_matrix(X, gamma)
            eta = sketchlab.eta(K, config.k, rng=0)
            if (encoding, factor) == ("as read", 1.0):
                printed_eta = eta
            oracle = sketchlab.RBFKernel(X, gamma)
            errors = {}  # (c, rep) -> (landmarks, RelativeError)
            for attempt, reps in items:
                c = attempt.c or 2 * config.k
                keys = {"n": n, "d": d, "gamma": gamma, "c": c}
                rows.append(_row("spsd-table", name, attempt.label, "eta", eta, **keys))
                for rep in range(reps):
                    if (c, rep) not in errors:
                        cols = landmarks(n, c, derive_seed(config.seed, name, rep, "landmarks"))
                        errors[c, rep] = cols, RelativeError(K, K[:, cols])
                    cols, err = errors[c, rep]
                    for a in config.grid:
                        if int(a) * c > n:  # S has at most n rows (small data, large c)
                            bar.update()
                            continue
                        seed = derive_seed(config.seed, name, rep, NAME, attempt.label, int(a))
                        result = sketchlab.fast_spsd(oracle, c, int(a) * c, columns=cols,
                                                     rng=seed, **dict(attempt.options))
                        at = {**keys, "a": int(a), "rep": rep, "seed": seed}
                        rows.append(_row("spsd-table", name, attempt.label, "error",
                                         err(result.U), **at))  # fmt: skip
                        rows.append(_row("spsd-table", name, attempt.label, "cond_SC",
                                         _cond_SC(result), **at))  # fmt: skip
                        bar.update()
            del K, oracle, errors
        n, d = X0.shape
        for label, reading in readings.items():
            gamma = reading(sigma)
            if gamma == sigma and printed_eta is not None:
                eta = printed_eta  # the kernel of the spsd-table study
            else:
                K = kernel_matrix(X0, gamma)
                eta = sketchlab.eta(K, config.k, rng=0)
                del K
            rows.append(_row("kernel-scale", name, label, "eta", eta, n=n, d=d, gamma=gamma))
            bar.update()
    return rows


def _cond_SC(result):
    """Condition number of S C for a fast SPSD result (S from its ``samples``)."""
    indices, weights = result.samples[0]
    SC = np.asarray(result.C, dtype=np.float64)[indices] * np.asarray(weights)[:, None]
    return float(np.linalg.cond(SC))


# ---------------------------------------------------------------------------
# svd-conditioning: Practical SP-SVD with c = r against r = 2c + 1
# ---------------------------------------------------------------------------


def practical_parts(A, C, Psi_A, Psi_U):
    """The two parts of Practical SP-SVD's error, from its sketches.

    Parameters
    ----------
    A : ndarray or sparse matrix of shape (m, n)
    C : ndarray of shape (m, c)
        ``A Omega^T``, the range sketch.
    Psi_A : ndarray of shape (r, n)
        ``Psi A``, the co-range sketch.
    Psi_U : callable
        ``Psi_U(U)`` returns ``Psi U`` for an (m, c) array U.

    Returns
    -------
    dict
        ``singular_values`` of ``Psi U_C``, ``tail`` = ``||(I - U_C U_C^T) A||_F``
        and ``amplification`` = ``||(Psi U_C)^+ Psi T||_F / ||T||_F``; the
        error of ``U_C (Psi U_C)^+ Psi A`` is ``tail sqrt(1 + amplification^2)``.
    """
    U = sla.qr(np.asarray(C, dtype=np.float64), mode="economic", check_finite=False)[0]
    PU = np.asarray(Psi_U(U), dtype=np.float64)
    UtA = np.asarray(A.T @ U).T  # U_C^T A, c x n
    norm2 = float(A.data @ A.data) if sp.issparse(A) else float(np.einsum("ij,ij->", A, A))
    tail = math.sqrt(max(norm2 - float(np.einsum("ij,ij->", UtA, UtA)), 0.0))
    Psi_T = np.asarray(Psi_A, dtype=np.float64) - PU @ UtA  # Psi (I - U_C U_C^T) A
    lifted = sla.lstsq(PU, Psi_T, check_finite=False)[0]  # (Psi U_C)^+ Psi T
    return {
        "singular_values": sla.svdvals(PU, check_finite=False),
        "tail": tail,
        "amplification": float(np.linalg.norm(lifted)) / tail if tail > 0 else math.nan,
    }


def gaussian_model(config):
    """The amplification of Practical SP-SVD's core when Psi is Gaussian, by simulation.

    With Psi Gaussian (entries of variance 1/r) and U_C orthonormal, ``Psi
    U_C`` is an r x c Gaussian matrix G and ``Psi T`` an independent one
    times T, so the mean of amplification^2 given G is ``||G^+||_F^2 / r``
    (``c / (r - c - 1)`` on average when r >= c + 2, infinite when r = c).
    Rows (dataset ``MODEL``): the median and 90th percentile over
    ``MODEL_DRAWS`` draws of ``sqrt(||G^+||_F^2 / r)`` for each split and
    each c of the SVD grid, and the mean the theory gives (NaN for r <= c + 1).
    """
    from .svd import method_sizes

    rows = []
    gen = np.random.default_rng(derive_seed(config.seed, MODEL))
    sizes = {}
    for x in config.svd_grid:
        for split, method in SPLITS.items():
            # any shape much larger than c, r: the split does not depend on it
            c, r, _, _ = method_sizes(method, x, config.svd_k, (10**6, 10**6))
            sizes.setdefault((split, c, r), x)
    for (split, c, r), x in sizes.items():
        G = gen.standard_normal((MODEL_DRAWS, r, c)) / math.sqrt(r)
        amp = np.sqrt(np.sum(np.linalg.pinv(G) ** 2, axis=(1, 2)) / r)
        theory = math.sqrt(c / (r - c - 1)) if r >= c + 2 else math.nan
        keys = {"c": c, "r": r, "x": x}
        for metric, value in (("amplification", np.median(amp)),
                              ("amplification_p90", np.percentile(amp, 90)),
                              ("amplification_theory", theory)):  # fmt: skip
            rows.append(_row("svd-conditioning", MODEL, split, metric, value, **keys))
    return rows


def svd_conditioning(spec, config, show_progress=True):
    """Conditioning of ``Psi U_C`` and the error parts for c = r and r = 2c + 1, one data set."""
    import sketchlab

    from .svd import method_sizes, residual_opt

    data = ds.load_cached(spec)
    A, name = data.X, data.dataset.name
    kind = "gaussian" if data.dense else "countsketch"
    m, n = A.shape
    opt = residual_opt(data, config.svd_k)
    plan = [(x, split) for x in config.svd_grid for split in SPLITS]
    rows = []
    bar = progress(total=len(plan) * config.svd_reps, desc=f"investigate svd {name}",
                   enabled=show_progress)  # fmt: skip
    with bar:
        for x, split in plan:
            c, r, _, _ = method_sizes(SPLITS[split], x, config.svd_k, A.shape)
            for rep in range(config.svd_reps):
                seed = derive_seed(config.seed, name, rep, NAME, split, str(x))
                gen = np.random.default_rng(seed)
                omega = sketchlab.make_sketch(kind, c, n, rng=gen)
                psi = sketchlab.make_sketch(kind, r, m, rng=gen)
                parts = practical_parts(A, omega.apply(A, axis=1), psi.apply(A, axis=0),
                                        lambda U: psi.apply(U, axis=0))  # fmt: skip
                sv = parts["singular_values"]
                tail_ratio = parts["tail"] / opt
                amp = parts["amplification"]
                keys = {"n": m, "d": n, "c": c, "r": r, "x": x, "rep": rep, "seed": seed}
                for metric, value in (
                    ("sigma_min", sv.min()), ("sigma_max", sv.max()),
                    ("cond", sv.max() / sv.min() if sv.min() > 0 else math.inf),
                    ("tail_ratio", tail_ratio), ("amplification", amp),
                    ("error_ratio", tail_ratio * math.sqrt(1.0 + amp**2) - 1.0),
                ):  # fmt: skip
                    rows.append(_row("svd-conditioning", name, split, metric, value, **keys))
                bar.update()
    return rows


# ---------------------------------------------------------------------------
# summaries (also used by the report)
# ---------------------------------------------------------------------------


def select(rows, study, **match):
    """The rows of ``study`` whose columns equal ``match``."""
    return [r for r in rows
            if r["study"] == study and all(r[k] == v for k, v in match.items())]  # fmt: skip


def mean_spread(values, size=10, resamples=4000, seed=0):
    """(5th, 95th percentile) of the mean of ``size`` draws from ``values`` (bootstrap).

    What the mean of ``size`` runs, as a paper reports it, could have been
    given the spread of our single runs.
    """
    v = np.asarray([x for x in values if np.isfinite(x)], dtype=float)
    if v.size == 0:
        return math.nan, math.nan
    gen = np.random.default_rng(seed)
    means = v[gen.integers(0, v.size, size=(resamples, size))].mean(axis=1)
    return float(np.percentile(means, 5)), float(np.percentile(means, 95))


def summary(rows):
    """One line per study and data set."""
    lines = []
    for (name,), sub in group(select(rows, "kernel-scale"), "dataset").items():
        etas = ", ".join(f"{r['attempt'].split(' (')[0]}: {r['value']:.3f}" for r in sub)
        lines.append(f"kernel-scale {name} (paper eta {paper.ETA.get(name, math.nan):.2f}): "
                     f"{etas}")  # fmt: skip
    for (name,), sub in group(select(rows, "spsd-table", metric="error"), "dataset").items():
        base = [r for r in sub if r["attempt"] == AS_RUN]
        cells = []
        for (a,), at in group(base, "a").items():
            mean, _, _, _ = band([r["value"] for r in at])
            cells.append(f"{a}: {mean:.2f} (median {np.median([r['value'] for r in at]):.2f})")
        lines.append(f"spsd-table {name}, as run, {len(base) // max(len(cells), 1)} runs: "
                     + ", ".join(cells))  # fmt: skip
    for (name,), sub in group(select(rows, "svd-conditioning", metric="cond"), "dataset").items():
        parts = []
        for (split, x), at in group(sub, "attempt", "x").items():
            parts.append(f"{split} x={x:g}: {np.median([r['value'] for r in at]):.3g}")
        lines.append(f"svd-conditioning {name}, median cond(Psi U_C): " + "; ".join(parts))
    return lines
