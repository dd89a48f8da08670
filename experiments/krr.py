"""``python -m experiments krr``: kernel ridge classification of Fashion-MNIST,
test accuracy against fit time.

Methods (every one an RBF kernel with the same gamma, ridge with the same
alpha, one +-1 target per class, the class of the largest output):

- ``KernelRidge``: scikit-learn's exact solver (the n x n kernel stored and
  factored), for n up to 20,000; run with one BLAS thread
  (``threadpoolctl.threadpool_limits(1)``, in that step only), because the
  multi-threaded OpenBLAS DSYRK of the numpy/scipy wheels crashes on
  ``X @ X.T`` from about 16,500 rows of 784 columns on these machines.
- ``Nystroem + RidgeClassifier``: scikit-learn's uniform Nystrom features of
  several ranks on all the training points, then a linear ridge classifier
  with the same alpha.
- ``SketchedKernelRidgeClassifier`` with ``solver="pcg"`` (the full problem,
  n up to 20,000) and ``solver="restricted"`` (the problem on the landmarks,
  all 60,000 training points), each with uniform and RPCholesky landmarks.

gamma = 1 / 133 ~ 0.0075 is the median heuristic: 133 is the median squared
distance between pixel vectors scaled to [0, 1] (2,000 random training
images).  alpha = 0.1 was the best of {0.01, 0.1, 1, 3} with KernelRidge
on 4,000 training images at this gamma, scored on 2,000 other training
images, never the test set (85.85% there; 0.01: 85.7%, 1: 83.45%; twice
and four times this gamma gave the same within 0.1 point).

Equal fit time (the target "restricted with RPCholesky landmarks beats
Nystroem + RidgeClassifier by at least 1 point at equal fit time"): for
each Nystroem rank, our accuracy at that rank's fit time, linearly
interpolated in time along our restricted fits (c from 500 to 4000 by 500;
our slowest fit when all are faster, so that ours then has less time), and
the largest c no slower than the peer beside it.  At equal c the two solve
the same ridge problem on the landmarks (up to RidgeClassifier's
intercept), so a gain at equal time comes from fitting more landmarks in
the same time.

Writes ``OUT/krr/krr.csv`` (one row per fit: method, solver, landmarks, n,
c, accuracy, fit seconds, peak memory of the fit, CG iterations, final
relative residual and the machine's 1-minute load average after the fit),
``OUT/figures/krr.png`` and a section of ``OUT/REPORT.md`` (the verdicts).
Every model is fitted once on a few hundred images first (untimed), so that
no fit time includes the compilation of its loops.  Fit times are wall clock
on whatever machine runs it; the peak memory of a fit is the larger of two
lower bounds of its growth over what the process held before: the peak of what Python and numpy
allocated (tracemalloc) and the growth of the peak resident set (Linux
VmHWM after a reset).
"""

import logging
import math
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import datasets as ds
from .plotting import pyplot, save
from .report import Verdict, load_caveat, mark, md_table
from .runs import ConfigError, load_average

NAME = "krr"
DEFAULT_DATASETS = ()  # Fashion-MNIST's four IDX files, found by load_fashion()
GAMMA = 1.0 / 133
ALPHA = 0.1
# issue 31's bounds: CG iterations to a relative residual of 1e-6, and the
# peak memory of the n = 60,000 fits (4 GB = 4e9 bytes, in MiB)
CG_MAX_ITER = 100
PEAK_LIMIT_MB = 4e9 / 2**20
COLUMNS = ("method", "solver", "landmarks", "n", "c", "accuracy", "fit_seconds", "peak_mb",
           "n_iter", "residual", "load")
FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
         "t10k-labels-idx1-ubyte")

FULL = dict(n_test=10000, kernel_ridge_n=(2500, 5000, 10000, 20000),
            pcg_n=(5000, 10000, 20000), pcg_c=1000,
            nystroem_ranks=(500, 1000, 2000, 3000),
            restricted_c=(500, 1000, 1500, 2000, 2500, 3000, 3500, 4000),
            restricted_n=60000)
QUICK = dict(n_test=1000, kernel_ridge_n=(1000, 3000), pcg_n=(3000,), pcg_c=200,
             nystroem_ranks=(100, 300), restricted_c=(100, 300), restricted_n=3000)


@dataclass(frozen=True)
class KRRConfig:
    """Configuration of the ``krr`` sweep: the sizes of FULL (or QUICK with ``--quick``);
    every fit runs once (``reps`` is 1)."""

    quick: bool = False
    seed: int = 0
    reps: int = 1

    @property
    def plan(self):
        return QUICK if self.quick else FULL


def add_options(parser):
    pass  # the common options only


def make_config(datasets=(), *, quick=False, reps=None, seed=0):
    """The config of the CLI options (``datasets``: none, the sweep reads Fashion-MNIST)."""
    if datasets:
        raise ConfigError(f"the krr sweep reads Fashion-MNIST only, got data sets {datasets}")
    if reps not in (None, 1):
        raise ConfigError(f"the krr sweep fits each model once, got --reps {reps}")
    return KRRConfig(quick=quick, seed=seed)


def load_all(config):
    return []  # Fashion-MNIST's IDX files (load_fashion), not registry entries


def _find(stem):
    for name in (f"{stem}.gz", stem):
        path = ds.find_file(name)
        if path is not None:
            return path
        path = ds.SYSTEM_FASHION_DIR / name
        if path.is_file():
            return path
    raise ds.NoDataError(
        f"Fashion-MNIST file {stem}(.gz) not found in {ds.describe_dirs()} nor in "
        f"{ds.SYSTEM_FASHION_DIR} (install the Debian package dataset-fashion-mnist)")


def load_fashion():
    """``(X_train, y_train, X_test, y_test)``: pixels scaled to [0, 1] (float64)."""
    arrays = [ds.read_idx(_find(stem)) for stem in FILES]
    Xtr, ytr, Xte, yte = arrays
    return (Xtr.reshape(len(Xtr), -1) / 255.0, ytr.astype(np.int64),
            Xte.reshape(len(Xte), -1) / 255.0, yte.astype(np.int64))


def _status_mb(key):
    """A memory figure of /proc/self/status in MB (Linux), else None."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


class _PeakMemory:
    """Peak memory of a block over what the process held at its start: the
    larger of two lower bounds, (1) the peak of what Python and numpy
    allocated (tracemalloc; blind to what compiled code allocates itself,
    e.g. LAPACK copies) and (2) the growth of the peak resident set (Linux
    VmHWM, reset through /proc/self/clear_refs; blind to memory the
    allocator reuses, so mostly to small blocks)."""

    def __enter__(self):
        try:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")  # resets VmHWM to the current resident set
            self.rss = _status_mb("VmRSS:")
        except OSError:
            self.rss = None
        tracemalloc.start()
        self.base = tracemalloc.get_traced_memory()[0]
        return self

    def __exit__(self, *exc):
        traced = (tracemalloc.get_traced_memory()[1] - self.base) / 2.0**20
        tracemalloc.stop()
        hwm = _status_mb("VmHWM:")
        resident = hwm - self.rss if self.rss is not None and hwm is not None else 0.0
        self.peak_mb = max(traced, resident)
        return False


def _targets(y):
    return np.where(y[:, None] == np.arange(10)[None, :], 1.0, -1.0)


def _timed(fit, predict, yte):
    with _PeakMemory() as mem:
        started = time.perf_counter()
        model = fit()
        seconds = time.perf_counter() - started
    accuracy = float(np.mean(predict(model) == yte))
    return model, accuracy, seconds, mem.peak_mb


def run(config, *, show_progress=True):
    """All the fits; returns the rows (each also logged, on stderr, as it is measured;
    ``show_progress`` has no bar to show)."""
    from sklearn.kernel_approximation import Nystroem
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.linear_model import RidgeClassifier
    from threadpoolctl import threadpool_limits

    from sketchlab import SketchedKernelRidgeClassifier

    plan, seed = config.plan, config.seed
    log = logging.getLogger("experiments").info  # one line per fit, on stderr: a long run
    Xtr, ytr, Xte, yte = load_fashion()
    order = np.random.default_rng(seed).permutation(len(Xtr))  # fixed subsets: prefixes
    Xte, yte = Xte[:plan["n_test"]], yte[:plan["n_test"]]
    rows = []

    def record(method, solver, landmarks, n, c, accuracy, seconds, peak, n_iter=None,
               residual=None):
        row = dict(method=method, solver=solver, landmarks=landmarks, n=n, c=c,
                   accuracy=round(accuracy, 5), fit_seconds=round(seconds, 3),
                   peak_mb=round(peak, 1), n_iter=n_iter,
                   residual=None if residual is None else float(f"{residual:.3g}"),
                   load=load_average())
        rows.append(row)
        log(" ".join(f"{k}={'' if v is None else v}" for k, v in row.items()))

    _warm_up(Xtr[order[:300]], ytr[order[:300]], seed)

    for n in plan["kernel_ridge_n"]:
        X, y = Xtr[order[:n]], ytr[order[:n]]

        def fit():
            with threadpool_limits(limits=1):  # OpenBLAS DSYRK crash: see the docstring
                return KernelRidge(alpha=ALPHA, kernel="rbf", gamma=GAMMA).fit(X, _targets(y))
        _, acc, sec, peak = _timed(fit, lambda m: m.predict(Xte).argmax(axis=1), yte)
        record("KernelRidge (1 BLAS thread)", "cholesky", "", n, n, acc, sec, peak)

    X, y = Xtr[order[:plan["restricted_n"]]], ytr[order[:plan["restricted_n"]]]
    for rank in plan["nystroem_ranks"]:
        def fit():
            feats = Nystroem(gamma=GAMMA, n_components=rank, random_state=seed)
            Z = feats.fit_transform(X)
            return feats, RidgeClassifier(alpha=ALPHA).fit(Z, y)
        _, acc, sec, peak = _timed(fit, lambda m: m[1].predict(m[0].transform(Xte)), yte)
        record("Nystroem + RidgeClassifier", "", "uniform", len(X), rank, acc, sec, peak)

    def ours(solver, landmarks, n, c):
        Xs, ys = Xtr[order[:n]], ytr[order[:n]]

        def fit():
            return SketchedKernelRidgeClassifier(
                alpha=ALPHA, gamma=GAMMA, n_components=c, landmarks=landmarks, solver=solver,
                tol=1e-6, max_iter=200, cache_size=8192, random_state=seed).fit(Xs, ys)
        model, acc, sec, peak = _timed(fit, lambda m: m.predict(Xte), yte)
        record("SketchedKernelRidgeClassifier", solver, landmarks, n, c, acc, sec, peak,
               model.n_iter_, float(model.residual_history_[-1].max()))

    for landmarks in ("uniform", "rpcholesky"):
        for n in plan["pcg_n"]:
            ours("pcg", landmarks, n, plan["pcg_c"])
        for c in plan["restricted_c"]:
            ours("restricted", landmarks, plan["restricted_n"], c)
    return rows


def _warm_up(X, y, seed):
    """Fit every kind of model once on a few images (untimed): the first call of a compiled
    loop in a process pays for its compilation or its loading from Numba's cache."""
    from sklearn.kernel_approximation import Nystroem
    from sklearn.kernel_ridge import KernelRidge

    from sketchlab import SketchedKernelRidgeClassifier

    KernelRidge(alpha=ALPHA, kernel="rbf", gamma=GAMMA).fit(X, _targets(y))
    Nystroem(gamma=GAMMA, n_components=50, random_state=seed).fit_transform(X)
    for solver in ("pcg", "restricted"):
        for landmarks in ("uniform", "rpcholesky"):
            SketchedKernelRidgeClassifier(alpha=ALPHA, gamma=GAMMA, n_components=50,
                                          landmarks=landmarks, solver=solver, tol=1e-6,
                                          max_iter=200, random_state=seed).fit(X, y)


def _given(value):
    """A cell that holds a value (the CSV's blanks read back as NaN)."""
    return not (value is None or value == "" or (isinstance(value, float) and math.isnan(value)))


def _cell(value):
    return str(value) if _given(value) else ""


def _label(row):
    if row["method"].startswith("Sketched"):
        return f"ours, {row['solver']}, {row['landmarks']}"
    return row["method"]


def plot(rows, folder):
    """``krr.png``: test accuracy against fit time, one series per method."""
    plt = pyplot()
    series = {}
    for row in rows:
        series.setdefault(_label(row), []).append(row)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, items in series.items():
        items = sorted(items, key=lambda r: float(r["fit_seconds"]))
        t = [float(r["fit_seconds"]) for r in items]
        a = [100 * float(r["accuracy"]) for r in items]
        ax.plot(t, a, marker="o", label=label)
        for r, ti, ai in zip(items, t, a):
            size = f"n={r['n']}" if r["solver"] in ("cholesky", "pcg") else f"c={r['c']}"
            ax.annotate(size, (ti, ai), fontsize=6, xytext=(3, 3), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_xlabel("fit time (s, wall clock)")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(f"Fashion-MNIST, RBF gamma={GAMMA:.4g}, alpha={ALPHA:g}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return [save(fig, Path(folder) / "krr.png")]


def _num(row, key):
    return float(row[key])


def claims(rows):
    """(line, ok) per claim of issue 31 that these rows can decide (ok None: information)."""
    out = []
    kr = {int(r["n"]): r for r in rows if r["method"].startswith("KernelRidge")}
    pcg = {(r["landmarks"], int(r["n"])): r for r in rows if r["solver"] == "pcg"}
    n = max((m for (lm, m) in pcg if lm == "rpcholesky" and m in kr), default=None)
    if n is not None:
        a, b = pcg[("rpcholesky", n)], kr[n]
        speed = _num(b, "fit_seconds") / max(_num(a, "fit_seconds"), 1e-9)
        mem = _num(a, "peak_mb") / max(_num(b, "peak_mb"), 1e-9)
        gap = 100 * (_num(b, "accuracy") - _num(a, "accuracy"))
        ok = gap <= 0.2 and speed >= 3 and mem <= 0.6
        out.append((f"n={n}: pcg (RPCholesky) accuracy {100 * _num(a, 'accuracy'):.2f}% vs "
                    f"KernelRidge {100 * _num(b, 'accuracy'):.2f}% (gap {gap:.2f} points), "
                    f"{speed:.1f}x faster, peak memory {mem:.2f}x: "
                    f"{'meets' if ok else 'misses'} the target (<= 0.2 points, >= 3x, <= 0.6x)",
                    ok))
    out += _equal_time_verdicts(rows)
    ours = {(r["solver"], r["landmarks"], r["n"], r["c"]): r for r in rows
            if r["method"].startswith("Sketched")}
    for (solver, lm, n_, c), r in sorted(ours.items(),
                                         key=lambda kv: (kv[0][0], int(kv[0][2]), int(kv[0][3]))):
        u = ours.get((solver, "uniform", n_, c))
        if lm != "rpcholesky" or u is None:
            continue
        out.append((f"{solver} n={n_} c={c}: RPCholesky landmarks "
                    f"{100 * _num(r, 'accuracy'):.2f}% in {_num(r, 'fit_seconds'):.1f} s "
                    f"({_cell(r['n_iter'])} CG iterations), uniform "
                    f"{100 * _num(u, 'accuracy'):.2f}% in {_num(u, 'fit_seconds'):.1f} s "
                    f"({_cell(u['n_iter'])})", None))
    its = [r for r in rows if _given(r["n_iter"])]
    if its:
        worst = max(its, key=lambda r: int(r["n_iter"]))
        conv = all(float(r["residual"]) <= 1e-6 for r in its)
        ok = conv and int(worst["n_iter"]) <= CG_MAX_ITER
        out.append((f"CG: at most {int(worst['n_iter'])} iterations ({_label(worst)}, "
                    f"c={worst['c']}), every fit {'reached' if conv else 'did NOT reach'} a "
                    f"relative residual of 1e-6: {'meets' if ok else 'misses'} the target (1e-6 "
                    f"in at most {CG_MAX_ITER} iterations, both solvers, alpha = {ALPHA:g})", ok))
    return out


def _at_time(curve, seconds):
    """Our accuracy at a fit time along ``curve`` (our fits sorted by time):
    ``(interpolated, below, above)``: the accuracy linearly interpolated in
    time between the fit just faster and the one just slower (the fastest
    fit's accuracy when all are faster: ours then had less time), and those
    two fits (``above`` None when all are faster); None when every fit of
    ours is slower."""
    below = [r for r in curve if _num(r, "fit_seconds") <= seconds]
    if not below:
        return None
    lo = below[-1]
    above = [r for r in curve if _num(r, "fit_seconds") > seconds]
    if not above:
        return _num(lo, "accuracy"), lo, None
    hi = above[0]
    t0, t1 = _num(lo, "fit_seconds"), _num(hi, "fit_seconds")
    w = (seconds - t0) / (t1 - t0)
    return (1 - w) * _num(lo, "accuracy") + w * _num(hi, "accuracy"), lo, hi


def _equal_time_verdicts(rows):
    """The restricted solver with RPCholesky landmarks against Nystroem +
    RidgeClassifier at equal fit time: for each Nystroem rank, our accuracy
    at that rank's fit time (interpolated along our curve, and the largest c
    no slower than it), and one line on the target."""
    curve = sorted((r for r in rows if r["solver"] == "restricted"
                    and r["landmarks"] == "rpcholesky"), key=lambda r: _num(r, "fit_seconds"))
    nys = sorted((r for r in rows if r["method"].startswith("Nystroem")),
                 key=lambda r: int(r["c"]))
    if not curve or not nys:
        return []
    out, gains = [], []
    for p in nys:
        t, acc = _num(p, "fit_seconds"), 100 * _num(p, "accuracy")
        head = (f"Nystroem+RidgeClassifier rank {p['c']} ({t:.1f} s, {acc:.2f}%) against "
                "restricted RPCholesky at equal fit time: ")
        at = _at_time(curve, t)
        if at is None:
            out.append((head + f"none of ours is that fast (fastest: c={curve[0]['c']}, "
                        f"{_num(curve[0], 'fit_seconds'):.1f} s)", None))
            continue
        ours, lo, hi = at
        gain = 100 * ours - acc
        gains.append(gain)
        where = (f"between c={lo['c']} ({_num(lo, 'fit_seconds'):.1f} s) and c={hi['c']} "
                 f"({_num(hi, 'fit_seconds'):.1f} s)" if hi is not None else
                 f"our slowest fit, c={lo['c']} ({_num(lo, 'fit_seconds'):.1f} s, less time)")
        out.append((head + f"{100 * ours:.2f}% {where}: {gain:+.2f} points; the largest c no "
                    f"slower, c={lo['c']}: {100 * _num(lo, 'accuracy') - acc:+.2f} points", None))
    peak = max(_num(r, "peak_mb") for r in curve)
    ok = bool(gains) and min(gains) >= 1.0 and peak < PEAK_LIMIT_MB
    out.append((f"restricted RPCholesky against Nystroem+RidgeClassifier at equal fit time: "
                f"gains {', '.join(f'{g:+.2f}' for g in gains) or 'none'} points over the ranks "
                f"our fits reach, peak memory at most {peak:.0f} MiB: "
                f"{'meets' if ok else 'misses'} the target (>= +1 point at every such rank, "
                f"< {PEAK_LIMIT_MB:.0f} MiB = 4 GB)", ok))
    return out


def summary(rows):
    return [line for line, _ in claims(rows)]


def section(out, rows, verdicts, runs):
    """The report's section: the verdicts and every fit."""
    record = runs.get(NAME, (None, {}))[1]
    quick = record.get("config", {}).get("quick", False)
    caveat = load_caveat(rows, record)
    lines = [f"## Kernel ridge regression on Fashion-MNIST{' (--quick)' if quick else ''}", "",
             f"RBF kernel, gamma = {GAMMA:.5g} (median heuristic), alpha = {ALPHA:g} (best on a "
             "validation split of the training set); one +-1 target per class. KernelRidge ran "
             "with one BLAS thread (threadpoolctl, in that step only): the multi-threaded "
             "OpenBLAS DSYRK of the wheels crashes on large X @ X.T on these machines. Fit "
             "times are wall clock after an untimed warm-up fit of each model" + caveat + ".",
             "", "![accuracy against fit time](figures/krr.png)", ""]
    for line, ok in claims(rows):
        timed = ok is not None and ("faster" in line or "equal fit time" in line)
        text = line + (caveat if timed else "")
        lines.append(f"- {text}")
        verdicts.append(Verdict("krr", "fashion-mnist", f"kernel ridge: {text}"
                                + ("" if ok is None else f" -> {mark(ok)}"), ok,
                                f"kernel ridge: {line.split(':')[0]}"))
    lines += ["", "### Fits", ""]
    lines += md_table(COLUMNS, [[_cell(r[k]) for k in COLUMNS] for r in rows])
    return lines
