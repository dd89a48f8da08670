"""Sweep ``cur``: CUR decompositions A ~ C U R, every selection and core, against c.

Not a figure of the paper, but its first application (Section 1): once
columns C and rows R of A are chosen, the best core is the GMR solution
``U = C^+ A R^+`` and Fast GMR (Algorithm 1) computes it from sketches.
``sketchlab.cur`` with k = 10 and c = r from 2k to 10k, for each selection
(uniform, exact and approximate rank-k leverage scores, DEIM, pivoted QR)
and each core ("fast": Fast GMR with s = 10 c; "exact": ``C^+ A R^+``;
"cross": ``A[rows, columns]^+``).  Error ratio ``||A - C U R||_F /
||A - A_k||_F`` (exact, never densifying a sparse A; ``||A - A_k||_F`` from
LAPACK or ARPACK, computed once per process).  The three cores of one
(selection, c, seed) share the columns and rows (the seed draws the
selection first).  Rows of part ``sweep``.

The two claims on the CUR decomposition, measured on ``claim_dataset`` at
k = 10, c = r = 100 (rows of parts ``core`` and ``select``):

- the fast core is at least 10x faster than the exact core with an error
  within 2% of it: ``fast_gmr(A, C, R, sketch_size=(10 c, 10 r))`` against
  ``gmr(A, C, R)`` on the C and R of an approx-leverage selection, both
  warmed up, median of ``timing_repeats`` runs each;
- approx-leverage selection is at least 5x faster than exact leverage
  scores, with an error at most 1.1x: ``cur(..., core="cross")`` with each
  selection (the selection and a c x r pseudo-inverse, no pass over A), median
  of ``timing_repeats`` runs, and the error of each selection with the same
  (exact) core, mean over ``claim_reps`` seeds.
"""

import math
import time
from dataclasses import dataclass

import numpy as np

from . import datasets as ds
from . import svd as svd_sweep
from .analysis import curve, group
from .plotting import DATASET_COLORS, dataset_figures, title
from .report import Verdict, dataset_label, figure_lines, load_caveat, mark, md_table
from .runs import ConfigError, derive_seed, load_average, positive_int, progress
from .runs import grid as grid_type

NAME = "cur"
DEFAULT_DATASETS = ("madelon", "debian-tfidf", "fashion-mnist")
SELECTIONS = ("uniform", "leverage", "approx-leverage", "deim", "pivoted-qr")
CORES = ("fast", "exact", "cross")
COLUMNS = (
    "part", "dataset", "storage", "m", "n", "k", "c", "r", "select", "core", "s_c", "s_r", "rep",
    "seed", "error", "error_ratio", "residual_opt", "seconds", "repeats", "load",
)  # fmt: skip
CORE_SPEEDUP = 10.0  # fast core vs exact core
CORE_ERROR = 0.02  # fast core's error within 2% of the exact core's
SELECT_SPEEDUP = 5.0  # approx-leverage vs leverage
SELECT_ERROR = 1.1  # approx-leverage's error at most 1.1x leverage's


@dataclass(frozen=True)
class CURConfig:
    """Configuration of the ``cur`` sweep.

    ``leverage_max_entries``: exact leverage selection on a dense A only up to
    this many entries (it takes two dense SVDs of A per call: 205 s for
    Fashion-MNIST, 60000 x 784, on the 2-core build machine); ``claim_dataset``
    the data set of the two claims (skipped when it is not run).
    """

    datasets: tuple = ()
    reps: int = 3
    seed: int = 0
    k: int = 10
    grid: tuple = (20, 40, 60, 80, 100)
    selections: tuple = SELECTIONS
    cores: tuple = CORES
    core_factor: int = 10
    leverage_max_entries: int = 5_000_000
    claim_dataset: str = "debian-tfidf"
    claim_c: int = 100
    claim_reps: int = 3
    timing_repeats: int = 5

    @classmethod
    def quick(cls, **kwargs):
        """One c = r (4k), one seed, fewer timing runs (``--quick``)."""
        base = {"reps": 1, "grid": (40,), "claim_reps": 1, "timing_repeats": 2}
        return cls(**{**base, **kwargs})


def add_options(parser):
    parser.add_argument("--k", type=positive_int, help="target rank k (default 10)")
    parser.add_argument("--grid", type=grid_type, help="comma-separated values of c = r")


def make_config(datasets, *, quick=False, reps=None, seed=0, k=None, grid=None):
    """The config of the CLI options (``--grid`` holds c = r)."""
    kwargs = {"datasets": tuple(datasets), "seed": seed}
    if reps is not None:
        kwargs.update(reps=reps, claim_reps=reps)
    if k is not None:
        kwargs["k"] = k
    if grid is not None:
        if any(float(c) != int(c) or c < 1 for c in grid):
            raise ConfigError(f"--grid for cur holds c = r, integers >= 1, got {grid}")
        kwargs["grid"] = tuple(int(c) for c in grid)
    return CURConfig.quick(**kwargs) if quick else CURConfig(**kwargs)


def load_all(config):
    return [ds.load_cached(spec) for spec in config.datasets]


def _median_time(fn, repeats):
    """(median wall time of ``fn()`` over ``repeats`` runs after one warm-up run, its
    result)."""
    result = fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), result


def _selections(config, A):
    import scipy.sparse as sp

    dense_entries = 0 if sp.issparse(A) else A.shape[0] * A.shape[1]
    return [s for s in config.selections
            if s != "leverage" or dense_entries <= config.leverage_max_entries]  # fmt: skip


def run(config, *, show_progress=True):
    """Run the sweep; tidy rows with the keys of ``COLUMNS``."""
    rows = []
    for spec in config.datasets:
        data = ds.load_cached(spec)
        rows += sweep(data, config, show_progress)
        if data.dataset.name == config.claim_dataset:
            rows += claims(data, config, show_progress)
    return rows


def _keys(data, config, c):
    m, n = data.X.shape
    return {"dataset": data.dataset.name, "storage": "dense" if data.dense else "sparse",
            "m": m, "n": n, "k": config.k, "c": c, "r": c}  # fmt: skip


def _row(part, **keys):
    """A row; ``load``, the machine's load average, is taken now, right after its timings."""
    row = dict.fromkeys(COLUMNS, math.nan)
    row.update(part=part, load=load_average(), **keys)
    return row


def sweep(data, config, show_progress=True):
    """Every selection x core at every c of the grid, ``reps`` seeds; the
    three cores of one (selection, c, seed) share its columns and rows."""
    import sketchlab

    A, name = data.X, data.dataset.name
    m, n = A.shape
    opt = svd_sweep.residual_opt(data, config.k)
    selections = _selections(config, A)
    grid = [c for c in config.grid if c <= min(m, n)]
    # warm-up: every selection's kernels, and the fast core's, loaded before anything is
    # timed (the other cores run no compiled code)
    for select in selections:
        sketchlab.cur(A, grid[0], k=config.k, select=select, core="cross", rng=0)
    if "fast" in config.cores:
        sketchlab.cur(A, grid[0], k=config.k, select="uniform", core="fast", rng=0)
    rows = []
    bar = progress(total=config.reps * len(grid) * len(selections), desc=f"cur {name}",
                   enabled=show_progress)  # fmt: skip
    with bar:
        for rep in range(config.reps):
            for c in grid:
                s_c, s_r = min(m, config.core_factor * c), min(n, config.core_factor * c)
                for select in selections:
                    seed = derive_seed(config.seed, name, rep, NAME, select, c)
                    chosen = None
                    for core in config.cores:
                        t0 = time.perf_counter()
                        d = sketchlab.cur(A, c, k=config.k, select=select, core=core,
                                          sketch_size=(s_c, s_r), rng=seed)
                        seconds = time.perf_counter() - t0
                        if chosen is None:
                            chosen = (d.columns, d.rows)
                        assert np.array_equal(d.columns, chosen[0])
                        assert np.array_equal(d.rows, chosen[1])
                        error = d.error(A)
                        rows.append(_row(
                            "sweep", **_keys(data, config, c), select=select, core=core,
                            s_c=s_c if core == "fast" else math.nan,
                            s_r=s_r if core == "fast" else math.nan, rep=rep, seed=seed,
                            error=error, error_ratio=error / opt, residual_opt=opt,
                            seconds=seconds, repeats=1))  # fmt: skip
                    bar.update()
    return rows


def claims(data, config, show_progress=True):
    """The measurements of the two CUR claims (see the module docstring)."""
    import sketchlab

    A, name = data.X, data.dataset.name
    m, n = A.shape
    c, k, q = config.claim_c, config.k, config.timing_repeats
    if c > min(m, n):
        return []
    opt = svd_sweep.residual_opt(data, k)
    s_c, s_r = min(m, config.core_factor * c), min(n, config.core_factor * c)
    keys = _keys(data, config, c)
    rows = []
    bar = progress(total=config.claim_reps * 2, desc=f"cur claims {name}", enabled=show_progress)
    with bar:
        for rep in range(config.claim_reps):
            seed = derive_seed(config.seed, name, rep, NAME, "claims")
            d = sketchlab.cur(A, c, k=k, select="approx-leverage", core="cross", rng=seed)
            C, R = d.C, d.R
            core_seed = derive_seed(config.seed, name, rep, NAME, "claims", "fast")

            def fast():
                return sketchlab.fast_gmr(A, C, R, sketch_size=(s_c, s_r), rng=core_seed).X

            def exact():
                return sketchlab.gmr(A, C, R)

            for core, solve in (("fast", fast), ("exact", exact)):
                seconds, X = _median_time(solve, q)
                error = sketchlab.gmr_residual(A, C, X, R)
                rows.append(_row("core", **keys, select="approx-leverage", core=core,
                                 s_c=s_c if core == "fast" else math.nan,
                                 s_r=s_r if core == "fast" else math.nan, rep=rep,
                                 seed=core_seed if core == "fast" else seed, error=error,
                                 error_ratio=error / opt, residual_opt=opt, seconds=seconds,
                                 repeats=q))  # fmt: skip
            bar.update()
            for select in ("approx-leverage", "leverage"):
                sel_seed = derive_seed(config.seed, name, rep, NAME, "claims", select)

                def choose(select=select, sel_seed=sel_seed):
                    return sketchlab.cur(A, c, k=k, select=select, core="cross", rng=sel_seed)

                seconds, chosen = _median_time(choose, q)
                # the same (exact) core for both selections: the error of the selection
                error = sketchlab.gmr_residual(A, chosen.C, sketchlab.gmr(A, chosen.C, chosen.R),
                                               chosen.R)  # fmt: skip
                rows.append(_row("select", **keys, select=select, core="exact", rep=rep,
                                 seed=sel_seed, error=error, error_ratio=error / opt,
                                 residual_opt=opt, seconds=seconds, repeats=q))  # fmt: skip
            bar.update()
    return rows


# ---------------------------------------------------------------------------
# summaries (the report uses them too)
# ---------------------------------------------------------------------------


def analyse(rows):
    """{data set: {(select, core): {c: (mean error ratio, mean seconds, runs)}}}."""
    out = {}
    for (name, select, core, c), sub in group([r for r in rows if r["part"] == "sweep"],
                                              "dataset", "select", "core", "c").items():
        out.setdefault(name, {}).setdefault((select, core), {})[c] = (
            float(np.mean([r["error_ratio"] for r in sub])),
            float(np.mean([r["seconds"] for r in sub])), len(sub))
    return out


def analyse_claims(rows):
    """Per data set of the claims: the two claims' numbers and verdicts.

    Core: medians over seeds of time(exact) / time(fast) and of
    error(fast) / error(exact) - 1.  Selection: the median over seeds of
    time(leverage) / time(approx-leverage), and mean error(approx-leverage) /
    mean error(leverage) (same exact core).
    """
    out = []
    for (name,), sub in group([r for r in rows if r["part"] in ("core", "select")],
                              "dataset").items():  # fmt: skip
        core = {(r["rep"], r["core"]): r for r in sub if r["part"] == "core"}
        sel = {(r["rep"], r["select"]): r for r in sub if r["part"] == "select"}
        reps = sorted({r["rep"] for r in sub})
        item = {"dataset": name, "c": sub[0]["c"], "k": sub[0]["k"], "reps": len(reps),
                "repeats": sub[0]["repeats"]}  # fmt: skip
        pairs = [(core[rep, "fast"], core[rep, "exact"]) for rep in reps
                 if (rep, "fast") in core and (rep, "exact") in core]  # fmt: skip
        if pairs:
            item["core_speedup"] = float(np.median([e["seconds"] / f["seconds"] for f, e in pairs]))
            item["core_error"] = float(np.median([f["error"] / e["error"] - 1 for f, e in pairs]))
            item["core_fast_s"] = float(np.median([f["seconds"] for f, _ in pairs]))
            item["core_exact_s"] = float(np.median([e["seconds"] for _, e in pairs]))
            item["core_ok"] = (item["core_speedup"] >= CORE_SPEEDUP
                               and item["core_error"] <= CORE_ERROR)  # fmt: skip
        both = [(sel[rep, "approx-leverage"], sel[rep, "leverage"]) for rep in reps
                if (rep, "approx-leverage") in sel and (rep, "leverage") in sel]  # fmt: skip
        if both:
            item["select_speedup"] = float(np.median([e["seconds"] / a["seconds"]
                                                      for a, e in both]))  # fmt: skip
            item["select_error"] = (float(np.mean([a["error"] for a, _ in both]))
                                    / float(np.mean([e["error"] for _, e in both])))
            item["select_approx_s"] = float(np.median([a["seconds"] for a, _ in both]))
            item["select_exact_s"] = float(np.median([e["seconds"] for _, e in both]))
            item["select_ok"] = (item["select_speedup"] >= SELECT_SPEEDUP
                                 and item["select_error"] <= SELECT_ERROR)  # fmt: skip
        out.append(item)
    return out


def summary(rows):
    lines = []
    for name, combos in analyse(rows).items():
        best = min(combos.items(), key=lambda t: t[1][max(t[1])][0])
        (select, core), cells = best
        c = max(cells)
        lines.append(f"{name}: lowest error ratio at c = {c}: {select} + {core} core "
                     f"{cells[c][0]:.3f}")  # fmt: skip
    for item in analyse_claims(rows):
        if "core_speedup" in item:
            lines.append(f"{item['dataset']} c = {item['c']}: fast core "
                         f"{item['core_speedup']:.1f}x faster than exact, error "
                         f"{100 * item['core_error']:+.2f}%")  # fmt: skip
        if "select_speedup" in item:
            lines.append(f"{item['dataset']} c = {item['c']}: approx-leverage "
                         f"{item['select_speedup']:.1f}x faster than leverage, error "
                         f"{item['select_error']:.3f}x")  # fmt: skip
    return lines


# -- figure and report section --------------------------------------------------------------


STYLE = {"fast": "-", "exact": "--", "cross": ":"}


COLORS = dict(zip(("uniform", "leverage", "approx-leverage", "deim", "pivoted-qr"),
                      DATASET_COLORS))  # fmt: skip


def draw(ax, rows):
    """One data set: CUR error ratio against c = r, each selection (color) x core (line)."""
    for (select, core), sub in group(rows, "select", "core").items():
        cv = curve(sub, "c", "error_ratio")
        ax.plot(cv["x"], cv["mean"], STYLE.get(core, "-"), marker="o", ms=3, lw=1.2,
                color=COLORS.get(select, "gray"), label=f"{select}, {core} core")
    ax.set_yscale("log")
    ax.set_xlabel("c = r (columns and rows kept)")
    ax.set_ylabel("||A - C U R||_F / ||A - A_k||_F")
    r0 = rows[0]
    ax.set_title(f"{title(r0['dataset'])}\nm = {r0['m']}, n = {r0['n']}, k = {r0['k']}",
                 fontsize=9)  # fmt: skip


def section(out, rows, verdicts, runs):
    res = analyse(rows)
    sweep = [r for r in rows if r["part"] == "sweep"]
    k = sweep[0]["k"] if sweep else rows[0]["k"]
    lines = [
        "## CUR decomposition (sketchlab's targets; the paper's Section 1 application)", "",
        f"`sketchlab.cur(A, c, k={k:g}, select=..., core=...)` with c = r columns and rows of A "
        "chosen by each selection (uniform; exact rank-k leverage scores; approximate, "
        "sketched ones; DEIM; pivoted QR) and each core U (\"fast\": Fast GMR, Algorithm 1, "
        "with s = 10 c; \"exact\": C^+ A R^+; \"cross\": A[rows, columns]^+). The three "
        "cores of one (selection, c, seed) share its columns and rows. Error ratio "
        "||A - C U R||_F / ||A - A_k||_F (exact; 1 is the best rank-k error, which a CUR with "
        "c > k columns can beat), mean over seeds, and mean seconds of the `cur` call.", "",
    ]  # fmt: skip
    for name, combos in res.items():
        cs = sorted({c for cells in combos.values() for c in cells})
        body = []
        for (select, core), cells in combos.items():
            body.append([select, core, *[
                "n/a" if c not in cells else f"{cells[c][0]:.3f} ({cells[c][1]:.2g} s)"
                for c in cs]])  # fmt: skip
        lines += [f"### {dataset_label(name)}", ""]
        lines += md_table(["selection", "core", *[f"c = r = {c:g}" for c in cs]], body) + [""]
        skipped = [s for s in SELECTIONS if not any(s == sel for sel, _ in combos)]
        if skipped:
            lines += [f"Not run on {name}: {', '.join(skipped)} (exact leverage scores of a "
                      "dense matrix this large take two dense SVDs per call).", ""]  # fmt: skip
    claims = analyse_claims(rows)
    if claims:
        lines += [
            "### The two CUR targets", "",
            "On the claims' data set, with k = 10 and c = r = 100: (1) on the columns and rows "
            "of an approx-leverage selection, the fast core (`fast_gmr`, s = 10 c) is >= "
            f"{CORE_SPEEDUP:g}x faster than the exact core (`gmr`, C^+ A R^+) with an "
            f"error within {100 * CORE_ERROR:g}% of it; (2) approx-leverage selection is "
            f">= {SELECT_SPEEDUP:g}x faster than exact leverage scores (each timed as "
            "`cur(..., core=\"cross\")`, the selection and a c x r pseudo-inverse) with an error "
            f"(exact core on each selection) at most {SELECT_ERROR:g}x. Times: median "
            "of repeated runs after a warm-up; ratios: median over seeds.", "",
        ]  # fmt: skip
        record = runs.get(NAME, (None, {}))[1]
        body = []
        for c in claims:
            where = f"{c['dataset']}, c = r = {c['c']:g}, k = {c['k']:g}"
            caveats = {part: load_caveat([r for r in rows if r["part"] == part
                                          and r["dataset"] == c["dataset"]], record)
                       for part in ("core", "select")}  # fmt: skip
            if "core_speedup" in c:
                body.append([dataset_label(c["dataset"]), "fast core vs exact core",
                             f"{c['core_fast_s'] * 1e3:.1f} / {c['core_exact_s'] * 1e3:.1f} ms",
                             f"{c['core_speedup']:.1f}x", f"{100 * c['core_error']:+.2f}%",
                             c["reps"], mark(c["core_ok"]) + caveats["core"]])  # fmt: skip
                verdicts.append(Verdict(
                    "cur_core", c["dataset"], f"CUR fast core on {where}: "
                    f"{c['core_speedup']:.1f}x faster than the exact core, error "
                    f"{100 * c['core_error']:+.2f}% -> {mark(c['core_ok'])}{caveats['core']}",
                    c["core_ok"],
                    f"sketchlab's CUR fast core on {c['dataset']}"))  # fmt: skip
            if "select_speedup" in c:
                body.append([dataset_label(c["dataset"]), "approx-leverage vs leverage selection",
                             f"{c['select_approx_s'] * 1e3:.1f} / "
                             f"{c['select_exact_s'] * 1e3:.1f} ms",
                             f"{c['select_speedup']:.1f}x", f"{c['select_error']:.3f}x",
                             c["reps"], mark(c["select_ok"]) + caveats["select"]])  # fmt: skip
                verdicts.append(Verdict(
                    "cur_select", c["dataset"], f"CUR approx-leverage selection on {where}: "
                    f"{c['select_speedup']:.1f}x faster than exact leverage, error "
                    f"{c['select_error']:.3f}x -> {mark(c['select_ok'])}{caveats['select']}",
                    c["select_ok"],
                    f"sketchlab's approx-leverage CUR selection on {c['dataset']}"))
        lines += md_table(["data set", "comparison", "time (fast / slow)", "speed-up",
                         "error (fast vs slow)", "seeds", "verdict"], body)  # fmt: skip
    return lines + [""] + figure_lines(out, "cur")


def plot(rows, folder):
    """``cur.png`` (one panel per data set, the sweep's rows) and ``cur/<dataset>.png``."""
    return dataset_figures(NAME, [r for r in rows if r["part"] == "sweep"], folder, draw)
