"""Sweep ``svd-passes`` (run by ``python -m experiments svd``): error against passes over A.

Rank-k SVDs (k = 10) of each data set by

- the three single-pass methods at the library's default sizes
  (``fast_sp_svd``, ``practical_sp_svd``, ``three_sketch_svd``): 1 pass;
- scikit-learn's ``randomized_svd`` with ``n_iter`` = 0..7 power iterations
  (10 oversamples, its default normalizer): ``2 n_iter + 2`` passes;
- ``sketchlab.krylov_svd`` stopped after a given number of passes, and with
  its default stopping rule (``setting = "default"``).

Error ratio ``||A - U S V^T||_F / ||A - A_k||_F - 1`` (both norms exact) and
the wall time of the call, in one process, after one untimed call of each method on the
same matrix (so that no timing includes the compilation of a loop, or its loading from
Numba's cache), with the machine's 1-minute load average taken after it (``load``).
"""

import math
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import datasets as ds
from . import svd
from .analysis import curve, group
from .plotting import pyplot, save, title
from .report import dataset_label, figure_lines, load_caveat, md_table
from .runs import derive_seed, load_average, positive_int, progress

NAME = "svd-passes"
DEFAULT_DATASETS = ("debian-tfidf", "madelon")
SINGLE_PASS = ("fast", "practical", "three-sketch")
METHODS = (*SINGLE_PASS, "randomized_svd", "krylov_svd")
COLUMNS = (
    "dataset", "storage", "m", "n", "k", "method", "setting", "passes", "rep", "seed",
    "error_ratio", "residual", "residual_opt", "seconds", "load",
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


def add_options(parser):
    parser.add_argument("--k", type=positive_int, help="target rank k (default 10)")


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
    from sklearn.utils.extmath import randomized_svd

    import sketchlab

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


def _warm_up(calls, A, seed):
    """One untimed call of each method (its first setting) on ``A``; their warnings (the
    single-pass methods' on flat spectra) are those of the timed calls again, not recorded."""
    first = {}
    for method, _, _, call in calls:
        first.setdefault(method, call)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for call in first.values():
            call(A, seed)


def run(config, *, show_progress=True):
    """Run the sweep; one row per (data set, repetition, method, setting)."""
    import sketchlab

    rows = []
    for data in load_all(config):
        A, name = data.X, data.dataset.name
        m, n = A.shape
        opt = svd.residual_opt(data, config.k)
        calls = plan(config, A.shape)
        _warm_up(calls, A, derive_seed(config.seed, name, "warm-up"))
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
                        "load": load_average(),
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


# -- figure and report section --------------------------------------------------------------


STYLE = {
    "fast": ("Fast SP-SVD (1 pass)", "tab:blue", "o"),
    "practical": ("Practical SP-SVD (1 pass)", "tab:red", "s"),
    "three-sketch": ("three-sketch (1 pass)", "tab:green", "^"),
    "randomized_svd": ("sklearn randomized_svd, n_iter = 0..7", "tab:purple", "-"),
    "krylov_svd": ("sketchlab krylov_svd", "black", "-"),
}


def draw(axes, rows):
    """One data set: error ratio (left) and seconds (right) against passes over A."""
    err_ax, time_ax = axes
    floor = 1e-12  # converged answers reach the rounding of the exact residuals
    for method, (label, color, style) in STYLE.items():
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


def plot(rows, folder):
    """``svd-passes.png``: a row of two panels (error, time) per data set."""
    plt = pyplot()
    per_set = group(rows, "dataset")
    fig, axes = plt.subplots(len(per_set), 2, figsize=(10, 4 * len(per_set)), squeeze=False)
    for pair, (_, sub) in zip(axes, per_set.items()):
        draw(pair, sub)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8)
    fig.tight_layout(rect=(0, 0.08 / len(per_set), 1, 1))
    return [save(fig, Path(folder) / "svd-passes.png")]


def section(out, rows, verdicts, runs):
    res = analyse(rows)
    lines = [
        "## Error against passes over A", "",
        "Rank-k SVDs by the single-pass methods (library default sizes, 1 pass), "
        "scikit-learn's `randomized_svd` with n_iter = 0..7 power iterations "
        "(2 n_iter + 2 passes) and `sketchlab.krylov_svd` stopped after a given number of "
        "passes (and with its default stopping rule); error ratio ||A - U S V^T||_F / "
        "||A - A_k||_F - 1, time of the call in one process, after an untimed call of each "
        "method" + load_caveat(rows, runs.get(NAME, (None, {}))[1]) + ".", "",
    ]  # fmt: skip
    body = []
    for item in res:
        single = ", ".join(f"{m} {v:.3g}" for m, v in item["single"].items())
        default = item["default"]
        body.append([dataset_label(item["dataset"]), single,
                     _reach(item["randomized_svd"]),
                     _reach(item["krylov_svd"]),
                     "n/a" if default is None else
                     f"{default[0]:.0f} passes, {default[1]:.2g} ({default[2]:.2f} s)"])
    lines += md_table(["data set", "one pass: error ratio",
                     f"randomized_svd to <= {res[0]['target']:g}" if res else "randomized_svd",
                     f"krylov_svd to <= {res[0]['target']:g}" if res else "krylov_svd",
                     "krylov_svd default rule"], body)  # fmt: skip
    lines += ["", "Which to use when: a single-pass method when A can be read only once "
              "(a stream, data larger than memory) and its spectrum decays fast, with "
              "`estimate_error=True` to see what it missed; when A can be read again, "
              "`krylov_svd`, which reaches a given error in fewer passes than power iteration "
              "(`randomized_svd`) and stops by itself (default rule, or `tol=`); on flat "
              "spectra (TF-IDF, counts) a single pass captures little of the best rank-k "
              "answer and should not be used.", ""]  # fmt: skip
    return lines + figure_lines(out, "svd-passes")
