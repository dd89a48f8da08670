"""``python -m experiments spectrum``: the spectrum of a matrix (issue 37),
residual and time against k, beside the peers a user would pick.

Tasks (each fit timed on its own, the peers in the same process):

- ``graph``: the top k eigenpairs (which = "LM") of the symmetrically
  normalized adjacency ``D^-1/2 W D^-1/2`` of the 10-nearest-neighbour graph
  of Fashion-MNIST images (``W`` the union of the neighbour lists, built
  with scikit-learn's ``kneighbors_graph``): ``sketchlab.eigsh(tol=1e-8)``
  against scipy's ``eigsh`` (ARPACK, ``tol=1e-8``, a fixed start vector) and
  ``lobpcg`` (``tol=1e-8``, a Gaussian start block); every residual
  ``||A v - lambda v||`` recomputed here, over ``||A||_2`` (1 for this A);
- ``pca-sparse``: ``RandomizedPCA`` (both solvers) against
  ``PCA(svd_solver="arpack")`` on debian-tfidf: the explained variances'
  largest relative difference from ARPACK's, and the peak memory over the
  CSR matrix's bytes;
- ``pca-dense``: ``RandomizedPCA`` against ``PCA(svd_solver="randomized")``
  on the 60,000 x 784 Fashion-MNIST images, each one's largest relative
  error of the explained variances against ``PCA(svd_solver="covariance_eigh")``;
- ``kpca``: ``SketchedKernelPCA`` (exact: eigsh on the centred kernel map)
  against ``KernelPCA(eigen_solver="arpack")`` on 10,000 images, RBF with
  the gamma of ``experiments krr``, 50 components: eigenvalues, time, peak
  memory, and the accuracy of a linear probe (a logistic regression on the
  components, scored on the 10,000 test images);
- ``kpca-landmarks``: ``SketchedKernelPCA(method="rpcholesky")`` on all
  60,000 images (2,000 landmarks): time, peak memory, probe accuracy.

Writes ``OUT/spectrum/spectrum.csv``, ``OUT/spectrum/REPORT.md`` (the
verdicts on the issue's targets) and ``OUT/figures/spectrum.png``.  Peak
memory is measured as in ``experiments krr`` (the larger of tracemalloc's
peak and the growth of the resident set's peak).
"""

import logging
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import datasets as ds
from .krr import GAMMA, _PeakMemory, load_fashion
from .plotting import pyplot, save
from .report import Verdict, load_caveat, mark, md_table
from .runs import ConfigError, load_average

NAME = "spectrum"
DEFAULT_DATASETS = ()  # Fashion-MNIST's IDX files and debian-tfidf, found by their loaders
TASKS = ("graph", "pca-sparse", "pca-dense", "kpca", "kpca-landmarks")
COLUMNS = ("task", "method", "n", "k", "seconds", "peak_mb", "residual", "accuracy", "probe",
           "data_mb", "passes", "load")
TOL = 1e-8
PEAK_LIMIT_MB = 4e9 / 2**20
FULL = dict(graph_n=20000, graph_k=(10, 20, 50), lobpcg_k=(10, 50), pca_k=(10, 50),
            tfidf_rows=None, dense_k=(10, 50), kpca_n=10000, kpca_k=50, landmarks_n=60000,
            landmarks=2000, n_test=10000)
QUICK = dict(graph_n=3000, graph_k=(5, 10), lobpcg_k=(5,), pca_k=(10,), tfidf_rows=8000,
             dense_k=(10,), kpca_n=1500, kpca_k=20, landmarks_n=4000, landmarks=300,
             n_test=1000)


@dataclass(frozen=True)
class SpectrumConfig:
    """Configuration of the ``spectrum`` sweep: the sizes of FULL (or QUICK with
    ``--quick``), the tasks to run; every fit runs once (``reps`` is 1)."""

    quick: bool = False
    seed: int = 0
    reps: int = 1
    tasks: tuple = TASKS

    @property
    def plan(self):
        return QUICK if self.quick else FULL


def add_options(parser):
    parser.add_argument("--task", action="append", choices=TASKS,
                        help="run only these tasks (repeatable; default all)")


def make_config(datasets=(), *, quick=False, reps=None, seed=0, task=None):
    """The config of the CLI options (``datasets``: none, the sweep finds its own)."""
    if datasets:
        raise ConfigError(f"the spectrum sweep reads Fashion-MNIST and debian-tfidf only, got "
                          f"data sets {datasets}")
    if reps not in (None, 1):
        raise ConfigError(f"the spectrum sweep fits each model once, got --reps {reps}")
    return SpectrumConfig(quick=quick, seed=seed, tasks=tuple(task) if task else TASKS)


def load_all(config):
    return []  # Fashion-MNIST's IDX files (load_fashion) and debian-tfidf, found when run


def knn_adjacency(X, neighbors=10):
    """The symmetrically normalized adjacency ``D^-1/2 W D^-1/2`` of the
    ``neighbors``-nearest-neighbour graph of the rows of X (W: 1 where either
    point is among the other's neighbours), CSR, exactly symmetric."""
    import scipy.sparse as sp
    from sklearn.neighbors import kneighbors_graph

    G = kneighbors_graph(X, neighbors, mode="connectivity", include_self=False)
    W = G.maximum(G.T).tocsr()
    d = 1.0 / np.sqrt(np.asarray(W.sum(axis=1)).ravel())
    A = sp.csr_matrix(sp.diags(d) @ W @ sp.diags(d))
    return ((A + A.T) * 0.5).tocsr()


def _residual(A, w, V):
    return float(np.max(np.linalg.norm(A @ V - V * w, axis=0)))


def _probe(Z, y, Zt, yt, seed):
    """Test accuracy of a logistic regression on standardized components."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scale = StandardScaler().fit(Z)
    clf = LogisticRegression(max_iter=2000, random_state=seed).fit(scale.transform(Z), y)
    return float(np.mean(clf.predict(scale.transform(Zt)) == yt))


def run(config, *, show_progress=True):
    """All the fits; returns the rows (each also logged, on stderr, as it is measured;
    ``show_progress`` has no bar to show)."""
    import scipy.sparse as sp
    from scipy.sparse.linalg import eigsh as arpack_eigsh
    from scipy.sparse.linalg import lobpcg
    from sklearn.decomposition import PCA, KernelPCA

    import sketchlab as sl

    plan, seed, tasks, quick = config.plan, config.seed, config.tasks, config.quick
    log = logging.getLogger("experiments").info  # one line per fit, on stderr: a long run
    rows = []

    def record(task, method, n, k, seconds, peak=None, residual=None, accuracy=None,
               probe=None, data_mb=None, passes=None):
        row = dict(task=task, method=method, n=n, k=k, seconds=round(seconds, 4),
                   peak_mb=None if peak is None else round(peak, 1),
                   residual=None if residual is None else float(f"{residual:.3g}"),
                   accuracy=None if accuracy is None else float(f"{accuracy:.6g}"),
                   probe=None if probe is None else round(probe, 5),
                   data_mb=None if data_mb is None else round(data_mb, 2), passes=passes,
                   load=load_average())
        rows.append(row)
        log(" ".join(f"{key}={'' if value is None else value}" for key, value in row.items()))

    def timed(fit):
        with _PeakMemory() as mem:
            started = time.perf_counter()
            out = fit()
            seconds = time.perf_counter() - started
        return out, seconds, mem.peak_mb

    fashion = None
    if any(t in tasks for t in ("graph", "pca-dense", "kpca", "kpca-landmarks")):
        fashion = load_fashion()
        Xtr, ytr, Xte, yte = fashion
        order = np.random.default_rng(seed).permutation(len(Xtr))

    if "graph" in tasks:
        n = plan["graph_n"]
        A = knn_adjacency(Xtr[order[:n]])
        log(f"graph: {n} images, 10 neighbours, nnz {A.nnz}")
        sl.eigsh(A[:200, :200], 2, rng=seed)  # compiles
        for k in plan["graph_k"]:
            res, sec, peak = timed(lambda: sl.eigsh(A, k, tol=TOL, rng=seed))
            record("graph", "sketchlab.eigsh", n, k, sec, peak, _residual(A, res.w, res.V),
                   passes=res.passes)
            v0 = np.random.default_rng(seed).standard_normal(n)
            (w, V), sec, peak = timed(lambda: arpack_eigsh(A, k, which="LM", tol=TOL, v0=v0))
            record("graph", "scipy eigsh", n, k, sec, peak, _residual(A, w, V),
                   accuracy=float(np.max(np.abs(np.sort(w) - res.w))))
            if k in plan["lobpcg_k"]:
                X0 = np.random.default_rng(seed).standard_normal((n, k))
                (w, V), sec, peak = timed(lambda: lobpcg(A, X0, tol=TOL, maxiter=5000,
                                                         largest=True))
                record("graph", "scipy lobpcg", n, k, sec, peak, _residual(A, w, V),
                       accuracy=float(np.max(np.abs(np.sort(w) - res.w))))

    if "pca-sparse" in tasks:
        try:
            D = ds.load_cached("debian-tfidf").X
        except (ds.DatasetError, ds.NoDataError) as exc:
            log(f"pca-sparse: debian-tfidf not found ({exc})")
            D = None
        if D is not None:
            if plan["tfidf_rows"]:
                D = D[:plan["tfidf_rows"]]
            csr_mb = (D.data.nbytes + D.indices.nbytes + D.indptr.nbytes) / 2**20
            sl.RandomizedPCA(3, random_state=seed).fit(D[:500])
            for k in plan["pca_k"]:
                ref, sec, peak = timed(lambda: PCA(k, svd_solver="arpack",
                                                   random_state=seed).fit(D))
                record("pca-sparse", "PCA(arpack)", D.shape[0], k, sec, peak, data_mb=csr_mb)
                for solver in ("krylov", "lanczos"):
                    ours, sec, peak = timed(lambda: sl.RandomizedPCA(
                        k, svd_solver=solver, random_state=seed).fit(D))
                    rel = float(np.max(np.abs(ours.explained_variance_
                                              / ref.explained_variance_ - 1)))
                    record("pca-sparse", f"RandomizedPCA({solver})", D.shape[0], k, sec, peak,
                           accuracy=rel, data_mb=csr_mb, passes=ours.n_passes_)

    if "pca-dense" in tasks:
        X = Xtr if not quick else Xtr[order[:10000]]
        for k in plan["dense_k"]:
            exact = PCA(k, svd_solver="covariance_eigh").fit(X).explained_variance_
            sl.RandomizedPCA(k, random_state=seed).fit(X[:500])
            for label, make in (("PCA(randomized)", lambda: PCA(k, svd_solver="randomized",
                                                                 random_state=seed)),
                                ("RandomizedPCA", lambda: sl.RandomizedPCA(
                                    k, random_state=seed))):
                model, sec, peak = timed(lambda: make().fit(X))
                rel = float(np.max(np.abs(model.explained_variance_ / exact - 1)))
                record("pca-dense", label, X.shape[0], k, sec, peak, accuracy=rel,
                       passes=getattr(model, "n_passes_", None))

    if "kpca" in tasks or "kpca-landmarks" in tasks:
        n, k = plan["kpca_n"], plan["kpca_k"]
        Xs, ys = Xtr[order[:n]], ytr[order[:n]]
        Xt, yt = Xte[:plan["n_test"]], yte[:plan["n_test"]]
        sl.SketchedKernelPCA(3, kernel="rbf", gamma=GAMMA, random_state=seed).fit(Xs[:300])
    if "kpca" in tasks:
        ref, sec, peak = timed(lambda: KernelPCA(k, kernel="rbf", gamma=GAMMA,
                                                 eigen_solver="arpack",
                                                 random_state=seed).fit(Xs))
        acc = _probe(ref.eigenvectors_ * np.sqrt(ref.eigenvalues_), ys, ref.transform(Xt), yt,
                     seed)
        record("kpca", "KernelPCA(arpack)", n, k, sec, peak, probe=acc)
        ours, sec, peak = timed(lambda: sl.SketchedKernelPCA(
            k, kernel="rbf", gamma=GAMMA, method="exact", random_state=seed).fit(Xs))
        rel = float(np.max(np.abs(ours.eigenvalues_ / ref.eigenvalues_ - 1)))
        acc = _probe(ours.eigenvectors_ * np.sqrt(ours.eigenvalues_), ys, ours.transform(Xt),
                     yt, seed)
        record("kpca", "SketchedKernelPCA(exact)", n, k, sec, peak,
               residual=float(ours.residuals_.max() / ours.eigenvalues_[0]), accuracy=rel,
               probe=acc, passes=ours.n_iter_)
    if "kpca-landmarks" in tasks:
        n, c = plan["landmarks_n"], plan["landmarks"]
        Xs, ys = Xtr[order[:n]], ytr[order[:n]]
        ours, sec, peak = timed(lambda: sl.SketchedKernelPCA(
            k, kernel="rbf", gamma=GAMMA, method="rpcholesky", n_landmarks=c,
            random_state=seed).fit(Xs))
        acc = _probe(ours.eigenvectors_ * np.sqrt(ours.eigenvalues_), ys, ours.transform(Xt),
                     yt, seed)
        record("kpca-landmarks", f"SketchedKernelPCA(rpcholesky, c={c})", n, k, sec, peak,
               probe=acc)
    return rows


def _num(row, key):
    value = row.get(key)
    return math.nan if value is None or value == "" else float(value)


def _find(rows, task, method, k=None):
    for row in rows:
        if row["task"] == task and str(row["method"]).startswith(method) and \
                (k is None or int(row["k"]) == int(k)):
            return row
    return None


def claims(rows):
    """(line, ok) per target of issue 37 that these rows measure."""
    out = []
    for k, bound in ((10, 0.7), (50, 0.5)):
        ours, peer = _find(rows, "graph", "sketchlab", k), _find(rows, "graph", "scipy eigsh", k)
        if ours and peer:
            ratio = _num(ours, "seconds") / _num(peer, "seconds")
            ok = ratio <= bound and _num(ours, "residual") <= TOL
            out.append((f"graph k={k}: eigsh {_num(ours, 'seconds'):.3g} s against scipy eigsh "
                        f"{_num(peer, 'seconds'):.3g} s ({ratio:.2f}x), max residual "
                        f"{_num(ours, 'residual'):.3g} ||A||: {'meets' if ok else 'misses'} the "
                        f"target (<= {bound}x, residuals <= 1e-8 ||A||)", ok))
        lob = _find(rows, "graph", "scipy lobpcg", k)
        if ours and lob:
            ratio = _num(ours, "seconds") / _num(lob, "seconds")
            out.append((f"graph k={k}: eigsh against lobpcg {_num(lob, 'seconds'):.3g} s "
                        f"({ratio:.2f}x): {'meets' if ratio <= 0.3 else 'misses'} the target "
                        "(<= 0.3x)", ratio <= 0.3))
    for row in rows:
        if row["task"] == "pca-sparse" and str(row["method"]).startswith("RandomizedPCA"):
            peer = _find(rows, "pca-sparse", "PCA(arpack)", row["k"])
            if peer is None:
                continue
            ratio = _num(row, "seconds") / _num(peer, "seconds")
            mem = _num(row, "peak_mb") / _num(row, "data_mb")
            ok = ratio <= 0.5 and _num(row, "accuracy") <= 1e-6 and mem < 2
            out.append((f"pca-sparse k={row['k']} {row['method']}: {ratio:.2f}x PCA(arpack)'s "
                        f"time, variances within {_num(row, 'accuracy'):.2g}, peak {mem:.2f}x "
                        f"the CSR matrix: {'meets' if ok else 'misses'} the target (<= 0.5x, "
                        "1e-6, < 2x)", ok))
    for k in sorted({int(r["k"]) for r in rows if r["task"] == "pca-dense"}):
        ours = _find(rows, "pca-dense", "RandomizedPCA", k)
        peer = _find(rows, "pca-dense", "PCA(randomized)", k)
        if ours and peer:
            ratio = _num(ours, "seconds") / _num(peer, "seconds")
            ok = ratio <= 1.0 and _num(ours, "accuracy") <= _num(peer, "accuracy")
            out.append((f"pca-dense k={k}: {ratio:.2f}x PCA(randomized)'s time, variance error "
                        f"{_num(ours, 'accuracy'):.2g} against its {_num(peer, 'accuracy'):.2g}: "
                        f"{'meets' if ok else 'misses'} the target (no slower, no less "
                        "accurate)", ok))
    ours, peer = _find(rows, "kpca", "SketchedKernelPCA"), _find(rows, "kpca", "KernelPCA")
    if ours and peer:
        ratio = _num(ours, "seconds") / _num(peer, "seconds")
        mem = _num(ours, "peak_mb") / _num(peer, "peak_mb")
        ok = ratio <= 0.5 and mem <= 0.2 and _num(ours, "accuracy") <= 1e-6
        out.append((f"kpca n={ours['n']}: eigenvalues within {_num(ours, 'accuracy'):.2g}, "
                    f"{ratio:.2f}x KernelPCA(arpack)'s time, {mem:.2f}x its peak memory "
                    f"({_num(ours, 'peak_mb'):.0f} / {_num(peer, 'peak_mb'):.0f} MiB): "
                    f"{'meets' if ok else 'misses'} the target (1e-6, <= 0.5x, <= 1/5)", ok))
    big, exact = _find(rows, "kpca-landmarks", "SketchedKernelPCA"), _find(rows, "kpca",
                                                                              "KernelPCA")
    if big and exact:
        gap = 100 * (_num(exact, "probe") - _num(big, "probe"))
        ok = _num(big, "peak_mb") < PEAK_LIMIT_MB and gap <= 0.5
        out.append((f"kpca on {big['n']} images: peak {_num(big, 'peak_mb'):.0f} MiB, probe "
                    f"accuracy {100 * _num(big, 'probe'):.2f}% against the exact method's "
                    f"{100 * _num(exact, 'probe'):.2f}% at {exact['n']}: "
                    f"{'meets' if ok else 'misses'} the target (< 4 GB, within 0.5 points)", ok))
    return out


def summary(rows):
    return [line for line, _ in claims(rows)]


def plot(rows, folder):
    """Time and residual against k on the graph, one series per method."""
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    graph = [r for r in rows if r["task"] == "graph"]
    for method in dict.fromkeys(r["method"] for r in graph):
        items = sorted((r for r in graph if r["method"] == method), key=lambda r: int(r["k"]))
        ks = [int(r["k"]) for r in items]
        left.plot(ks, [_num(r, "seconds") for r in items], marker="o", label=method)
        right.plot(ks, [max(_num(r, "residual"), 1e-17) for r in items], marker="o",
                   label=method)
    n = graph[0]["n"] if graph else "?"
    left.set_title(f"top-k eigenpairs, 10-NN graph of {n} images")
    left.set_xlabel("k")
    left.set_ylabel("time (s, wall clock)")
    left.set_yscale("log")
    right.axhline(TOL, color="black", linestyle=":", label="tol = 1e-8")
    right.set_xlabel("k")
    right.set_ylabel("max ||A v - lambda v|| / ||A||")
    right.set_yscale("log")
    for ax in (left, right):
        ax.grid(True, which="both", alpha=0.3)
        if graph:
            ax.legend(fontsize=7)
    fig.tight_layout()
    return [save(fig, Path(folder) / f"{NAME}.png")]


def _cell(value):
    if isinstance(value, float) and math.isnan(value):
        return ""
    return "" if value is None else value


def section(out, rows, verdicts, runs):
    """The report's section: the verdicts and every fit."""
    record = runs.get(NAME, (None, {}))[1]
    quick = record.get("config", {}).get("quick", False)
    caveat = load_caveat(rows, record)
    lines = [f"## The spectrum of a matrix (issue 37){' (--quick)' if quick else ''}", "",
             "eigsh against scipy's eigsh and lobpcg on a 10-nearest-neighbour graph of "
             "Fashion-MNIST images; RandomizedPCA against PCA; SketchedKernelPCA against "
             f"KernelPCA (RBF, gamma = {GAMMA:.5g}). Fit times are wall clock, the peers in the "
             "same process one after the other" + caveat + ".", "",
             "![time and residual against k](figures/spectrum.png)", ""]
    for line, ok in claims(rows):
        text = line + (caveat if ok is not None else "")
        lines.append(f"- {text}")
        verdicts.append(Verdict(NAME, "fashion-mnist", f"spectrum: {text}"
                                + ("" if ok is None else f" -> {mark(ok)}"), ok,
                                f"spectrum: {line.split(':')[0]}"))
    lines += ["", "### Fits", ""]
    lines += md_table(COLUMNS, [[_cell(r.get(k)) for k in COLUMNS] for r in rows])
    return lines
