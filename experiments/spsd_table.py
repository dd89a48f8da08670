"""Sweep ``spsd-table``: the paper's Table 7, the fast SPSD baseline at s = a c, a = 8..16.

The paper lists the error of the fast SPSD method of Wang et al. (2016),
U = (S C)^+ (S K S^T) (C^T S^T)^+ (eq. (4.1)), but not how its S samples.  This sweep
runs every variant of ``sketchlab.fast_spsd`` (sampling distribution, with
or without replacement, landmark columns forced into S or not) on the same
landmarks as the kernel sweep, so that the report can say which variant
reproduces the table.
"""

import time
from dataclasses import dataclass

from . import datasets as ds
from .analysis import group
from .kernel import (
    RelativeError,
    config_of,
    kernel_data,
    kernel_input,
    kernel_matrix,
    landmarks,
)
from .runs import derive_seed, progress

DEFAULT_DATASETS = ds.KERNEL_DATASETS

NAME = "spsd-table"
COLUMNS = (
    "dataset", "n", "gamma", "k", "c", "variant", "a", "s", "rep", "seed",
    "landmark_seed", "error", "n_evaluated", "seconds", "d",
)  # fmt: skip

# label -> keyword arguments of sketchlab.fast_spsd: sampling distribution of
# S's rows, with or without replacement, landmark rows forced into S or not.
VARIANTS = {
    f"{sampling}{'-replace' if replace else ''}{'-landmarks' if forced else ''}": {
        "sampling": sampling, "replace": replace, "include_columns": forced,
    }
    for sampling in ("uniform", "leverage")
    for replace in (False, True)
    for forced in (False, True)
}  # fmt: skip


@dataclass(frozen=True)
class SPSDTableConfig:
    """Configuration of the ``spsd-table`` sweep (``variants``: labels of ``VARIANTS``)."""

    datasets: tuple = ()
    reps: int = 10
    seed: int = 0
    k: int = 15
    grid: tuple = (8, 10, 12, 14, 16)
    gamma: float | None = None
    variants: tuple = tuple(VARIANTS)

    @property
    def c(self):
        return 2 * self.k

    @classmethod
    def quick(cls, **kwargs):
        return cls(**{"reps": 3, **kwargs})


def make_config(datasets, *, quick=False, reps=None, seed=0, k=None, grid=None, gamma=None):
    """The config of the CLI options (checked as the kernel sweep's)."""
    return config_of(SPSDTableConfig, datasets, quick=quick, reps=reps, seed=seed, k=k,
                     grid=grid, gamma=gamma)


def load_all(config):
    return [data for data, _ in (kernel_data(spec, config.gamma) for spec in config.datasets)]


def run(config, *, show_progress=True):
    """One row per (data set, repetition, variant, a)."""
    import sketchlab

    rows = []
    for spec in config.datasets:
        data, gamma = kernel_data(spec, config.gamma)
        X = kernel_input(data.X)
        name, n = data.dataset.name, X.shape[0]
        K = kernel_matrix(X, gamma)
        total = config.reps * len(config.variants) * len(config.grid)
        bar = progress(total=total, desc=f"spsd-table {name}", enabled=show_progress)
        with bar:
            for rep in range(config.reps):
                # the same landmarks as the kernel sweep's repetition
                lm_seed = derive_seed(config.seed, name, rep, "landmarks")
                cols = landmarks(n, config.c, lm_seed)
                err = RelativeError(K, K[:, cols])
                oracle = sketchlab.RBFKernel(X, gamma)
                for variant in config.variants:
                    options = VARIANTS[variant]
                    for a in config.grid:
                        s = int(a) * config.c
                        seed = derive_seed(config.seed, name, rep, "table", variant, int(a))
                        t0 = time.perf_counter()
                        result = sketchlab.fast_spsd(oracle, config.c, s, columns=cols,
                                                     rng=seed, **options)
                        seconds = time.perf_counter() - t0
                        rows.append({
                            "dataset": name, "n": n, "gamma": gamma, "k": config.k, "c": config.c,
                            "variant": variant, "a": int(a), "s": s, "rep": rep, "seed": seed,
                            "landmark_seed": lm_seed, "error": err(result.U),
                            "n_evaluated": result.n_evaluated, "seconds": seconds,
                            "d": X.shape[1],
                        })  # fmt: skip
                        bar.update()
    return rows


def summary(rows):
    from .report import analyse_spsd_table, best_variant

    best, scores = best_variant(analyse_spsd_table(rows))
    lines = [f"closest to the paper's table: {best}"] if best else []
    for (name,), sub in group(rows, "dataset").items():
        if best:
            means = {}
            for r in sub:
                if r["variant"] == best:
                    means.setdefault(r["a"], []).append(r["error"])
            vals = " ".join(f"{a}:{sum(v) / len(v):.2f}" for a, v in means.items())
            lines.append(f"{name} ({best}, mean): {vals}")
    return lines
