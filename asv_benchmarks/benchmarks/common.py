"""What every suite shares: the size profile, the data, and small helpers.

Size profile
------------
``SKETCHLAB_BENCH_PROFILE=quick`` (the default) runs the whole suite in a few
minutes on small synthetic matrices; ``SKETCHLAB_BENCH_PROFILE=paper`` uses
sizes shaped like the paper's data sets and adds the real data sets found where the
experiments and the tests find them (``tests/_data.py``: ``$SKETCHLAB_DATA`` when
it is set, else ``~/.cache/sketchlab`` then ``../shared/datasets``).  The profile only
chooses the parameter lists; a data label always means the same matrix, so
results of the two profiles never mix in asv's history.

Data labels
-----------
``"<kind> <m>x<n>"`` is a seeded synthetic matrix, ``"<kind> <name>"`` a real
one (its absence skips the benchmark: asv skips a parameter set whose setup
raises ``NotImplementedError``):

- ``dense MxN``: low rank (50) with decaying singular values plus noise,
  C-ordered float64.
- ``csr MxN``: sparse with a text-like shape: word-like (Zipf) column
  frequencies, values from a rank-10 pattern, unit-norm rows (as TF-IDF rows);
  density 0.157% (debian-tfidf's) unless N is small (then mushrooms' 18.75%).
- ``onehot MxN``: binary rows of 22 one-hot categorical features drawn from
  10 clusters (the shape of mushrooms, for the kernel suites).
- ``csr debian-tfidf``, ``csr mushrooms``, ``dense madelon``: the LIBSVM files.

Sparse matrices are ``scipy.sparse.csr_array`` with int64 indices (what
``load_svmlight_file`` gives for the LIBSVM files, and what the synthetic
generators produce too).  Each matrix is built once per machine and kept
in ``asv_benchmarks/.asv/data`` (``$SKETCHLAB_BENCH_CACHE``), so that the
setup of a benchmark loads it in milliseconds.
"""

import importlib.util
import lzma
import os
import re
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from asv_runner.benchmarks.mark import SkipNotImplemented

PROFILES = ("quick", "paper")
PROFILE = os.environ.get("SKETCHLAB_BENCH_PROFILE", "quick")
if PROFILE not in PROFILES:
    raise ValueError(f"SKETCHLAB_BENCH_PROFILE must be one of {PROFILES}, got {PROFILE!r}")
QUICK = PROFILE == "quick"

CACHE_DIR = Path(
    os.environ.get("SKETCHLAB_BENCH_CACHE", Path(__file__).resolve().parents[1] / ".asv" / "data")
)
# Bump when a generator changes, so that stale cached matrices are not reused.
_GENERATOR_VERSION = 1

REAL_FILES = {
    "debian-tfidf": "debian-tfidf.svm.xz",
    "mushrooms": "mushrooms.xz",
    "madelon": "madelon.xz",
}
# The paper's RBF widths, used as gamma (SPEC 5); synthetic one-hot data gets mushrooms'.
RBF_GAMMA = {"mushrooms": 0.1, "madelon": 3.5e-6, "onehot": 0.1}

TEXT_DENSITY = 0.00157  # debian-tfidf: nnz 2.07M of 52,396 x 25,252
ROWS_DENSITY = 21 / 112  # mushrooms: 21 ones in each row of 112


def _initialize_numba():
    """Import Numba and the kernel modules and start Numba's compiler here.

    asv forks every benchmark from one server process that imported this
    module; with Numba ready there, a benchmark's setup loads the kernels from
    Numba's cache in about 0.1 s instead of paying 1-2 s for the import and
    the compiler's start.  Only serial code runs here: the OpenMP runtime of
    the parallel kernels is not fork-safe.
    """
    import importlib
    import pkgutil

    import numba

    import sketchlab._engine._jit as kernels

    for info in pkgutil.iter_modules(kernels.__path__):
        importlib.import_module(f"{kernels.__name__}.{info.name}")

    @numba.njit(cache=False)
    def one(x):
        return x + 1

    one(1)


_initialize_numba()


def _data_rule():
    """``tests/_data.py``, the data-directory rule of the tests and the experiments, loaded by
    its path: the checkout is not on ``sys.path`` here, and putting it there would shadow the
    sketchlab that asv installed for the commit under test."""
    path = Path(__file__).resolve().parents[2] / "tests" / "_data.py"
    spec = importlib.util.spec_from_file_location("sketchlab_tests_data", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DATA_RULE = _data_rule()


def find_data(filename):
    """Path of a real data file by the one rule (:data:`DATA_RULE`), or None."""
    return DATA_RULE.find_file(filename)


# ---- loading -------------------------------------------------------------------

_MEMORY = {}


def load(label):
    """The matrix of a data label (see the module docstring), from memory, the
    disk cache, or built and cached.  Raises NotImplementedError (asv: skip)
    when a real data set is absent."""
    if label in _MEMORY:
        return _MEMORY[label]
    kind, name = label.split(" ", 1)
    if name in REAL_FILES:
        A = _load_real(kind, name)
    else:
        match = re.fullmatch(r"(\d+)x(\d+)", name)
        if kind not in ("dense", "csr", "onehot") or match is None:
            raise ValueError(f"unknown data label {label!r}")
        m, n = int(match.group(1)), int(match.group(2))
        path = CACHE_DIR / f"{kind}-{m}x{n}-v{_GENERATOR_VERSION}.npz"
        A = _read_cached(path)
        if A is None:
            A = {"dense": _dense, "csr": _text_like, "onehot": _onehot}[kind](m, n, seed=m * 7 + n)
            _write_cached(path, A)
    _MEMORY[label] = A
    return A


def _load_real(kind, name):
    path = find_data(REAL_FILES[name])
    if path is None:
        raise NotImplementedError(
            f"data set {REAL_FILES[name]} not found in {DATA_RULE.describe_dirs()}"
        )
    stat = path.stat()
    cached = CACHE_DIR / f"{name}-{stat.st_size}-{stat.st_mtime_ns}.npz"
    X = _read_cached(cached)
    if X is None:
        from sklearn.datasets import load_svmlight_file

        with lzma.open(path) if path.suffix == ".xz" else open(path, "rb") as fh:
            X, _ = load_svmlight_file(fh)
        X = sp.csr_array(X)
        _write_cached(cached, X)
    return np.ascontiguousarray(X.toarray()) if kind == "dense" else X


def _read_cached(path):
    if not path.exists():
        return None
    with np.load(path) as f:
        if "dense" in f:
            return f["dense"]
        return sp.csr_array((f["data"], f["indices"], f["indptr"]), shape=tuple(f["shape"]))


def _write_cached(path, A):
    """Write atomically: parallel asv processes may build the same matrix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npz")
    with os.fdopen(fd, "wb") as fh:
        if sp.issparse(A):
            np.savez(fh, data=A.data, indices=A.indices, indptr=A.indptr, shape=np.array(A.shape))
        else:
            np.savez(fh, dense=A)
    os.replace(tmp, path)


# ---- synthetic generators ------------------------------------------------------


def _dense(m, n, seed, rank=50):
    """Rank-``rank`` part with singular values 1/(i+1), plus 1% noise, scaled to O(1) entries."""
    gen = np.random.default_rng(seed)
    rank = min(rank, m, n)
    U = np.linalg.qr(gen.standard_normal((m, rank)))[0]
    V = np.linalg.qr(gen.standard_normal((n, rank)))[0]
    A = (U / (1.0 + np.arange(rank))) @ V.T
    A += gen.standard_normal((m, n)) * (0.01 / np.sqrt(max(m, n)))
    A *= np.sqrt(m * n)
    return np.ascontiguousarray(A)


def _text_like(m, n, seed, rank=10):
    gen = np.random.default_rng(seed)
    density = ROWS_DENSITY if n <= 1000 else TEXT_DENSITY
    nnz = int(round(density * m * n))
    rows = gen.integers(0, m, nnz)
    zipf = np.cumsum(1.0 / (np.arange(n) + 10.0))
    cols = gen.permutation(n)[np.searchsorted(zipf / zipf[-1], gen.random(nnz))]
    U = gen.standard_normal((m, rank))
    V = gen.standard_normal((n, rank)) / (1.0 + np.arange(rank))
    vals = np.empty(nnz)
    for i0 in range(0, nnz, 1 << 20):  # bounded temporaries
        i1 = min(nnz, i0 + (1 << 20))
        vals[i0:i1] = np.abs(np.einsum("ij,ij->i", U[rows[i0:i1]], V[cols[i0:i1]]))
    vals += 0.1 * gen.random(nnz)
    A = sp.csr_array(sp.coo_array((vals, (rows, cols)), shape=(m, n)))
    A.sum_duplicates()
    row_of = np.repeat(np.arange(m), np.diff(A.indptr))
    norms = np.sqrt(np.bincount(row_of, weights=A.data**2, minlength=m))
    A.data /= norms[row_of]
    return A


def _onehot(m, n, seed, n_features=22, n_clusters=10):
    """Rows of ``n_features`` categorical features, one-hot in ``n`` columns."""
    gen = np.random.default_rng(seed)
    widths = np.full(n_features, n // n_features)
    widths[: n % n_features] += 1
    starts = np.concatenate([[0], np.cumsum(widths)[:-1]])
    cluster = gen.integers(0, n_clusters, m)
    cols = np.empty((m, n_features), dtype=np.int64)
    for f in range(n_features):
        probs = gen.dirichlet(np.full(widths[f], 0.3), size=n_clusters)  # (clusters, width)
        cdf = np.cumsum(probs, axis=1)[cluster]
        pick = (cdf < gen.random((m, 1))).sum(axis=1)
        cols[:, f] = starts[f] + np.minimum(pick, widths[f] - 1)
    indptr = np.arange(0, m * n_features + 1, n_features)
    return sp.csr_array((np.ones(m * n_features), cols.ravel(), indptr), shape=(m, n))


# ---- helpers -------------------------------------------------------------------


def require(*names):
    """Skip unless the installed sketchlab has these public names: the suites
    also run on older commits (``asv continuous``, ``asv run`` over history).
    Raises ``SkipNotImplemented``, which asv treats as a skip both in a setup
    and in a benchmark's body."""
    import sketchlab

    for name in names:
        try:
            getattr(sketchlab, name)
        except (AttributeError, ModuleNotFoundError) as exc:
            raise SkipNotImplemented(f"sketchlab.{name} is not in this version ({exc})") from None


def miniature(X, shape=(16, 16)):
    """A small matrix of the same type as ``X`` (format, class, value and index
    dtypes, memory order): a call on it compiles or loads from the cache the
    same kernels as a call on ``X``, without touching memory like one."""
    m, n = shape
    if sp.issparse(X):
        major, minor = (m, n) if X.format == "csr" else (n, m)
        indptr = np.arange(major + 1).astype(X.indptr.dtype)
        indices = (np.arange(major) % minor).astype(X.indices.dtype)
        M = type(X)((np.ones(major, dtype=X.dtype), indices, indptr), shape=shape)
        M.indices, M.indptr = indices, indptr  # the constructor may narrow them
        return M
    return np.ones(shape, dtype=X.dtype, order="C" if X.flags.c_contiguous else "F")


def sketch_sizes(shape, s=200):
    """(s1, s2) of the left and right operators: ``s`` (SPEC 7's 200) capped at
    half of each dimension."""
    return tuple(min(s, max(1, d // 2)) for d in shape)


def squared_norms(A, axis):
    """Squared row (axis=0) or column (axis=1) norms: leverage-like scores that
    cost one pass, for benchmarking the sampler's application."""
    if sp.issparse(A):
        return np.asarray(A.multiply(A).sum(axis=1 - axis)).ravel()
    return np.einsum("ij,ij->i", A, A) if axis == 0 else np.einsum("ij,ij->j", A, A)


def kinds(**flags):
    """Kind names of the registry (``sketchlab._registry``, built from the
    operator classes) whose capabilities match ``flags``: the suite's kind
    lists, so that a new kind is benchmarked without an edit here."""
    from sketchlab._registry import kinds_with

    return list(kinds_with(**flags))


def make_operator(kind, s, d, rng, scores=None):
    """Operator of a registered kind name (``scores`` for the kinds that need them)."""
    import sketchlab as sl
    from sketchlab._registry import KINDS

    if KINDS[kind].needs_scores:
        return sl.make_sketch(kind, s, d, scores=np.asarray(scores) + 1e-12, rng=rng)
    return sl.make_sketch(kind, s, d, rng=rng)


def rbf_gamma(data, n_features):
    """The paper's RBF width of a data label (mushrooms' for synthetic one-hot
    data), else ``1 / n_features`` (scikit-learn's default)."""
    kind, name = data.split(" ", 1)
    for key in (name, kind):
        if key in RBF_GAMMA:
            return RBF_GAMMA[key]
    return 1.0 / n_features


def frobenius2(A):
    data = A.data if sp.issparse(A) else A.ravel()
    return float(np.dot(data, data))


def best_rank_k_residual(label, A, k):
    """``||A - A_k||_F`` (A_k the best rank-k approximation), from the top k
    singular values; cached on disk next to the matrices."""
    path = CACHE_DIR / f"tail-{label.replace(' ', '_')}-k{k}-v{_GENERATOR_VERSION}.npy"
    if path.exists():
        return float(np.load(path))
    if sp.issparse(A):
        from scipy.sparse.linalg import svds

        top = svds(A, k=k, return_singular_vectors=False, random_state=0)
    else:
        from scipy.linalg import svdvals

        top = svdvals(A)[:k]
    tail = float(np.sqrt(max(frobenius2(A) - float(np.sum(top.astype(np.float64) ** 2)), 0.0)))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npy")
    with os.fdopen(fd, "wb") as fh:
        np.save(fh, np.float64(tail))
    os.replace(tmp, path)
    return tail


# ---- the rows of compare.py, declared beside the classes they time ----------------------

# The data of compare.py's rows (asv_benchmarks/compare.py sets the profile before importing
# the suites: "quick" with --quick, else "paper"): debian-tfidf where it is found, else a
# synthetic matrix of its shape and density; the same for mushrooms.  --quick (CI: the code
# paths run, the ratios mean nothing) takes a text-like matrix a quarter the quick profile's
# side, as compare.py always has.
if QUICK:
    TEXT, KERNEL_DATA, DENSE_DATA = "csr 5000x2500", "onehot 2000x112", "dense 2000x500"
else:
    TEXT = "csr debian-tfidf" if find_data(REAL_FILES["debian-tfidf"]) else "csr 52396x25252"
    KERNEL_DATA = "csr mushrooms" if find_data(REAL_FILES["mushrooms"]) else "onehot 8124x112"
    DENSE_DATA = "dense 16384x1000"


class Call:
    """One benchmark of a suite: ``cls().setup(*params)``, then ``method(*params)`` (a
    ``time_*`` method is timed, a ``track_*`` method returns its value).  ``alone``: time
    it in a block of its own rather than in turns with the others of its section."""

    def __init__(self, cls, params, method, alone=False):
        self.cls, self.params, self.method, self.alone = cls, tuple(params), method, alone

    @property
    def key(self):
        return (self.cls.__module__, self.cls.__name__, self.params, self.method)

    def __repr__(self):
        return f"{self.cls.__name__}{self.params}.{self.method}"


class Target:
    """One row of compare.py's table, declared beside the suites it reads.

    ``calls[0]`` is ours; the row's kind decides the rest:

    - ``"ratio"``: the speed-up ``peer / ours`` (at least ``bound``), the peer's time being
      ``calls[1]``'s, or ``(ours, peer) = combine(times, objects)`` of all the calls (the
      objects: the suites' instances, after their setup);
    - ``"slowdown"``: ``ours / peer`` (at most ``bound``), the same way;
    - ``"value"``: the value of a ``track_*`` call, or ``combine(values, objects)`` of the
      calls' values (a ``time_*`` call's value is its time) (at most ``bound``, or at least
      with ``higher=True``);
    - ``"within"``: such a value in ``bound = (low, high)``.

    ``statistic``: ``"median"`` of the timings in turns, or ``"min"`` (for a bound the
    call cannot beat: a read pass, a floor loop).  ``peer`` names the peer (or the unit of a
    value); ``why`` is the legend line: what is timed against what, and why the bound.
    """

    def __init__(self, section, what, calls, kind="ratio", bound=None, peer="", why=None,
                 combine=None, higher=False, statistic="median"):
        self.section, self.what, self.calls, self.kind = section, what, tuple(calls), kind
        self.bound, self.peer, self.why, self.combine = bound, peer, why, combine
        self.higher, self.statistic = higher, statistic
