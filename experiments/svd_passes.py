"""Sweep ``svd-passes`` (run by ``python -m experiments svd``): error against passes over A.

Rank-k SVDs (k = 10) of each data set by

- the three single-pass methods at the library's default sizes
  (``fast_sp_svd``, ``practical_sp_svd``, ``three_sketch_svd``): 1 pass;
- scikit-learn's ``randomized_svd`` with ``n_iter`` = 0..7 power iterations
  (10 oversamples, its default normalizer): ``2 n_iter + 2`` passes;
- ``sketchlab.krylov_svd`` stopped after a given number of passes, and with
  its default stopping rule (``setting = "default"``).

Error ratio ``||A - U S V^T||_F / ||A - A_k||_F - 1`` (both norms exact) and
the wall time of the call, in one process.
"""

import math
import time
from dataclasses import dataclass

from . import datasets as ds
from . import svd
from .analysis import group
from .runs import derive_seed, progress

NAME = "svd-passes"
DEFAULT_DATASETS = ("debian-tfidf", "madelon")
SINGLE_PASS = ("fast", "practical", "three-sketch")
METHODS = (*SINGLE_PASS, "randomized_svd", "krylov_svd")
COLUMNS = (
    "dataset", "storage", "m", "n", "k", "method", "setting", "passes", "rep", "seed",
    "error_ratio", "residual", "residual_opt", "seconds",
)  # fmt: skip


@dataclass(frozen=True)
class SVDPassesConfig:
    """Configuration of the ``svd-passes`` sweep."""

    datasets: tuple = ()
    reps: int = 3
    seed: int = 0
    k: int = 10
    n_iters: tuple = (0, 1, 2, 3, 4, 5, 6, 7)
    krylov_passes: tuple = (2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16)

    @classmethod
    def quick(cls, **kwargs):
        """Fewer settings and repetitions (``--quick``)."""
        return cls(**{"reps": 1, "n_iters": (0, 1, 2), "krylov_passes": (2, 4, 6), **kwargs})


def make_config(datasets, *, quick=False, reps=None, seed=0, k=None):
    """The config of the CLI options (those of ``svd``)."""
    kwargs = {"datasets": tuple(datasets), "seed": seed}
    if reps is not None:
        kwargs["reps"] = reps
    if k is not None:
        kwargs["k"] = k
    return SVDPassesConfig.quick(**kwargs) if quick else SVDPassesConfig(**kwargs)


def load_all(config):
    return [ds.load_cached(spec) for spec in config.datasets]


def plan(config, shape):
    """[(method, setting, passes, call(A, k, seed))] of one repetition."""
    import sketchlab
    from sklearn.utils.extmath import randomized_svd

    k = config.k
    single = {"fast": sketchlab.fast_sp_svd, "practical": sketchlab.practical_sp_svd,
              "three-sketch": sketchlab.three_sketch_svd}
    out = [(name, "default sizes", 1, lambda A, seed, f=f: f(A, k, rng=seed)[:3])
           for name, f in single.items()]
    for q in config.n_iters:
        if k + 10 <= min(shape):
            out.append(("randomized_svd", f"n_iter={q}", 2 * q + 2,
                        lambda A, seed, q=q: randomized_svd(A, k, n_iter=q,
                                                         random_state=seed % 2**32)))
    for p in config.krylov_passes:
        out.append(("krylov_svd", f"passes={p}", p,
                    lambda A, seed, p=p: sketchlab.krylov_svd(A, k, passes=p, rng=seed)))
    out.append(("krylov_svd", "default", None,
                lambda A, seed: sketchlab.krylov_svd(A, k, rng=seed)))
    return out


def run(config, *, show_progress=True):
    """Run the sweep; one row per (data set, repetition, method, setting)."""
    import sketchlab

    rows = []
    for data in load_all(config):
        A, name = data.X, data.dataset.name
        m, n = A.shape
        opt = svd.residual_opt(data, config.k)
        calls = plan(config, A.shape)
        bar = progress(total=config.reps * len(calls), desc=f"svd-passes {name}",
                       enabled=show_progress)
        with bar:
            for rep in range(config.reps):
                for method, setting, passes, call in calls:
                    seed = derive_seed(config.seed, name, rep, method, setting)
                    t0 = time.perf_counter()
                    res = call(A, seed)
                    seconds = time.perf_counter() - t0
                    U, s, Vt = res[0], res[1], res[2]
                    if passes is None:
                        passes = res.passes
                    residual = sketchlab.lowrank_residual(A, U, s, Vt)
                    rows.append({
                        "dataset": name, "storage": "dense" if data.dense else "sparse",
                        "m": m, "n": n, "k": config.k, "method": method, "setting": setting,
                        "passes": passes, "rep": rep, "seed": seed,
                        "error_ratio": residual / opt - 1 if opt > 0 else math.nan,
                        "residual": residual, "residual_opt": opt, "seconds": seconds,
                    })  # fmt: skip
                    bar.update()
    return rows


def first_within(rows, method, target):
    """(passes, mean seconds) of the fewest passes at which ``method``'s mean
    error ratio is at most ``target`` (fixed-pass settings only), or None."""
    best = None
    for (setting,), sub in group([r for r in rows if r["method"] == method
                                  and r["setting"] != "default"], "setting").items():
        ratio = sum(r["error_ratio"] for r in sub) / len(sub)
        if ratio <= target:
            cand = (sub[0]["passes"], sum(r["seconds"] for r in sub) / len(sub))
            if best is None or cand[0] < best[0]:
                best = cand
    return best


def analyse(rows, target=1e-3):
    """Per data set: the single-pass methods' mean error ratios, and the passes
    and seconds randomized_svd and krylov_svd need for an error ratio <= target."""
    out = []
    for (name,), sub in group(rows, "dataset").items():
        single = {}
        for method in SINGLE_PASS:
            mrows = [r for r in sub if r["method"] == method]
            if mrows:
                single[method] = sum(r["error_ratio"] for r in mrows) / len(mrows)
        default = [r for r in sub if r["method"] == "krylov_svd" and r["setting"] == "default"]
        out.append({
            "dataset": name, "k": sub[0]["k"], "target": target, "single": single,
            "randomized_svd": first_within(sub, "randomized_svd", target),
            "krylov_svd": first_within(sub, "krylov_svd", target),
            "default": None if not default else (
                sum(r["passes"] for r in default) / len(default),
                sum(r["error_ratio"] for r in default) / len(default),
                sum(r["seconds"] for r in default) / len(default)),
        })  # fmt: skip
    return out


def _reach(cell):
    return "not within the settings run" if cell is None else \
        f"{cell[0]} passes ({cell[1]:.2f} s)"


def summary(rows):
    lines = []
    for item in analyse(rows):
        single = ", ".join(f"{m} {v:.3g}" for m, v in item["single"].items())
        lines.append(f"{item['dataset']}: one pass: {single}; error ratio <= {item['target']:g}: "
                     f"randomized_svd {_reach(item['randomized_svd'])}, krylov_svd "
                     f"{_reach(item['krylov_svd'])}")
    return lines
