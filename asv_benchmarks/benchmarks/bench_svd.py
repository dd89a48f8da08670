"""Single-pass SVD end to end: ``fast_sp_svd`` (Algorithm 3) against
``practical_sp_svd`` and ``three_sketch_svd`` with the same storage, and
scikit-learn's ``randomized_svd`` (``n_iter=0``, a two-pass method, and its
default power iterations) with the same range sketch size.

k = 10 and the paper's point x = (c + r)/k = 4: c = r = 20, s_c = s_r =
3 c sqrt(x) = 120 (SPEC 5); the sketch kind is Gaussian for dense data and
CountSketch for sparse data.  Every method returns a rank-k factorization
(``rank=k``), so ``track_error_ratio`` = ``||A - U S V^T||_F / ||A - A_k||_F - 1``
compares like with like.  ``SinglePassSVDStream`` feeds the single-pass
methods A as a stream of column blocks; ``ErrorEstimateOverhead`` times
``fast_sp_svd`` with and without ``estimate_error=True`` (its test sketch
gathered in the same pass).
"""

import math

import scipy.sparse as sp
from asv_runner.benchmarks.mark import skip_for_params

import sketchlab as sl

from . import common

if common.QUICK:
    DATA = ["dense 2000x500", "csr 20000x10000"]
else:
    DATA = ["dense madelon", "dense 16384x1000", "csr 52396x25252", "csr debian-tfidf"]
# a range sketch of m x 20 = 2.4M (quick) or 8M entries: beyond 2**21, CholeskyQR2's
TALL = "dense 120000x60" if common.QUICK else "dense 400000x100"
METHODS = [
    "fast_sp_svd",
    "practical_sp_svd",
    "three_sketch_svd",
    "randomized_svd n_iter=0",
    "randomized_svd",
]
SINGLE_PASS = METHODS[:3]
K = 10
X_POINT = 4  # (c + r) / k
BLOCK_COLUMNS = 2048


def sizes(shape, k=K, x=X_POINT):
    """(c, r, s_c, s_r) of Fast SP-SVD at x (capped at the dimensions)."""
    m, n = shape
    c = r = min(x * k // 2, m, n)
    return c, r, min(m, math.ceil(3 * c * math.sqrt(x))), min(n, math.ceil(3 * r * math.sqrt(x)))


def decomposer(name, A, k=K, rank=K):
    """A function ``A -> (U, s, Vt)`` for a method name, with the sizes above;
    ``rank=None`` asks for the method's sketch rank min(c, r)."""
    from sketchlab import practical_sp_svd_sizes, three_sketch_svd_sizes

    m, n = A.shape
    kind = "countsketch" if sp.issparse(A) else "gaussian"
    c, r, s_c, s_r = sizes(A.shape, k)
    if name == "fast_sp_svd":
        kw = dict(c=c, r=r, s_c=s_c, s_r=s_r, range_sketch=kind, core_sketch=kind)
        rank = min(c, r) if rank is None else rank
        return lambda X, **more: sl.fast_sp_svd(X, k, rank=rank, rng=0, **kw, **more)
    if name == "practical_sp_svd":
        c_p, r_p = practical_sp_svd_sizes(c + r, k)
        kw = dict(c=c_p, r=r_p, range_sketch=kind)
        rank = c_p if rank is None else rank
        return lambda X, **more: sl.practical_sp_svd(X, k, rank=rank, rng=0, **kw, **more)
    if name == "three_sketch_svd":
        c_t, r_t, sc_t, sr_t = three_sketch_svd_sizes(m * c + n * r + s_c * s_r, (m, n), k)
        kw = dict(c=c_t, r=r_t, s_c=sc_t, s_r=sr_t, range_sketch=kind, core_sketch=kind)
        rank = min(c_t, r_t) if rank is None else rank
        return lambda X, **more: sl.three_sketch_svd(X, k, rank=rank, rng=0, **kw, **more)
    from sklearn.utils.extmath import randomized_svd

    n_iter = 0 if name.endswith("n_iter=0") else "auto"
    return lambda X: randomized_svd(X, k, n_oversamples=c - k, n_iter=n_iter, random_state=0)


def column_blocks(A, width=BLOCK_COLUMNS):
    """A generator of A's column blocks, made one at a time (CSC slices when A is CSC)."""
    for j0 in range(0, A.shape[1], width):
        yield A[:, j0 : j0 + width]


class SinglePassSVD:
    params = [DATA, METHODS]
    param_names = ["data", "method"]
    timeout = 900

    def setup(self, data, name):
        common.require("fast_sp_svd", "practical_sp_svd", "three_sketch_svd")
        self.A = common.load(data)
        self.decompose = decomposer(name, self.A)
        self.decompose(self.A)  # compiles or loads the kernels

    def time_decompose(self, data, name):
        self.decompose(self.A)

    def peakmem_decompose(self, data, name):
        self.decompose(self.A)

    def track_error_ratio(self, data, name):
        common.require("lowrank_residual")
        U, s, Vt = self.decompose(self.A)
        best = common.best_rank_k_residual(data, self.A, K)
        return sl.lowrank_residual(self.A, U, s, Vt) / best - 1.0

    track_error_ratio.unit = "ratio"

    @skip_for_params([(d, m) for d in DATA for m in METHODS if m not in SINGLE_PASS])
    def track_error_ratio_sketch_rank(self, data, name):
        """The same at the method's sketch rank (the paper's definition of its output)."""
        common.require("lowrank_residual")
        U, s, Vt = decomposer(name, self.A, rank=None)(self.A)
        best = common.best_rank_k_residual(data, self.A, K)
        return sl.lowrank_residual(self.A, U, s, Vt) / best - 1.0

    track_error_ratio_sketch_rank.unit = "ratio"


class TallSinglePassSVD(SinglePassSVD):
    """A tall matrix whose range sketch (m x 2k) outgrows the last-level cache,
    where the single-pass SVDs take CholeskyQR2 for its thin QR (Householder's
    sweeps it once per column): the single-pass methods beside sklearn's
    randomized_svd without power iterations, the one-pass peer."""

    params = [[TALL], SINGLE_PASS + ["randomized_svd n_iter=0"]]


class SinglePassSVDStream:
    """The single-pass methods reading A as a stream of column blocks
    (``BLOCK_COLUMNS`` wide; CSC slices for sparse A), one block at a time."""

    params = [DATA, SINGLE_PASS]
    param_names = ["data", "method"]
    timeout = 900

    def setup(self, data, name):
        common.require("fast_sp_svd", "practical_sp_svd", "three_sketch_svd")
        A = common.load(data)
        self.A = A.tocsc() if sp.issparse(A) else A
        self.decompose = decomposer(name, self.A)
        self.time_column_blocks(data, name)  # compiles or loads the kernels

    def time_column_blocks(self, data, name):
        self.decompose(column_blocks(self.A), shape=self.A.shape)

    def peakmem_column_blocks(self, data, name):
        self.decompose(column_blocks(self.A), shape=self.A.shape)

    @skip_for_params([(d, m) for d in DATA for m in SINGLE_PASS if m != "fast_sp_svd"])
    def track_traced_peak_ratio(self, data, name):
        """fast_sp_svd's Python-traced peak memory over the blocks (tracemalloc, the blocks
        made one at a time from the CSC copy that exists before tracing starts) against its
        sketches (m c + r n + s_c s_r floats) plus one block, the sketches counted 1.5 times
        (slack for the finishing QRs and solve)."""
        import gc
        import tracemalloc

        m, n = self.A.shape
        c, r, s_c, s_r = sizes(self.A.shape)
        block = max((B.data.nbytes + B.indices.nbytes + B.indptr.nbytes if sp.issparse(B)
                     else B.nbytes for B in column_blocks(self.A)), default=0)
        sketches = (m * c + r * n + s_c * s_r) * 8
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        result = self.decompose(column_blocks(self.A), shape=self.A.shape)
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        del result
        return peak / (1.5 * sketches + block)

    track_traced_peak_ratio.unit = "ratio"


class ErrorEstimateOverhead:
    """``fast_sp_svd`` with ``estimate_error`` off and on, same sizes and seed:
    the price of the error estimate's test sketch."""

    params = [DATA, [False, True]]
    param_names = ["data", "estimate_error"]
    timeout = 900

    def setup(self, data, estimate_error):
        common.require("fast_sp_svd", "ErrorEstimate")
        self.A = common.load(data)
        self.decompose = decomposer("fast_sp_svd", self.A)
        self.time_decompose(data, estimate_error)  # compiles or loads the kernels

    def time_decompose(self, data, estimate_error):
        self.decompose(self.A, estimate_error=estimate_error)

    def peakmem_decompose(self, data, estimate_error):
        self.decompose(self.A, estimate_error=estimate_error)


def stacked_copies(A, copies, seed=0):
    """``copies`` copies of the CSR matrix A stacked by rows, each with its
    columns permuted afresh (so no copy repeats another's access pattern);
    A's index dtype is kept, so every member of a family is read alike."""
    import numpy as np

    gen = np.random.default_rng(seed)
    m, n = A.shape
    data, indices, indptr = [], [], [A.indptr[:1]]
    for j in range(copies):
        block = sp.csr_matrix((A.data, gen.permutation(n).astype(A.indices.dtype)[A.indices],
                               A.indptr), shape=A.shape)
        block.sort_indices()
        data.append(block.data)
        indices.append(block.indices)
        indptr.append(A.indptr[1:] + j * A.nnz)
    index = A.indices.dtype
    B = sp.csr_matrix((np.concatenate(data), np.concatenate(indices).astype(index, copy=False),
                       np.concatenate(indptr).astype(index, copy=False)), shape=(copies * m, n))
    B.indices = B.indices.astype(index, copy=False)  # the constructor may change them
    B.indptr = B.indptr.astype(index, copy=False)
    return B


_STACKED = {}


class NnzScaling:
    """``sketch_both`` (CountSketches, s_c = s_r = 200) and ``fast_sp_svd`` (k = 10, x = 4,
    as ``SinglePassSVD``) on 1, 2, 4 and 8 row-stacked copies of a CSR matrix
    (:func:`stacked_copies`): a one-pass method's time is linear in nnz(A)."""

    params = [[d for d in DATA if d.startswith("csr")], [1, 2, 4, 8],
              ["sketch_both", "fast_sp_svd"]]
    param_names = ["data", "copies", "method"]
    timeout = 900

    def setup(self, data, copies, method):
        key = (data, copies)
        if key not in _STACKED:  # the sketch_both and fast_sp_svd rows share a member
            _STACKED[key] = stacked_copies(sp.csr_matrix(common.load(data)), copies)
        B = self.B = _STACKED[key]
        if method == "sketch_both":
            S_C = sl.CountSketch(200, B.shape[0], rng=1)
            S_R = sl.CountSketch(200, B.shape[1], rng=2)
            self.run = lambda: sl.sketch_both(S_C, B, S_R)
        else:
            decompose = decomposer("fast_sp_svd", B)
            self.run = lambda: decompose(B)
        self.run()  # compiles or loads the kernels

    def time_run(self, data, copies, method):
        self.run()


# ---- compare.py's rows (section "svd"; "scaling") ------------------------------------------


def _svd(method, call="time_decompose"):
    # scikit-learn's calls in a block of their own: the OpenBLAS threads they leave
    # spinning would slow the next call in turns
    return common.Call(SinglePassSVD, (common.TEXT, method), call,
                       alone=not method.endswith("sp_svd") and method not in SINGLE_PASS)


def _estimate(flag):
    return common.Call(ErrorEstimateOverhead, (common.TEXT, flag), "time_decompose")


TARGETS = [
    common.Target(
        "svd", f"fast_sp_svd (k = {K}, x = {X_POINT}) vs", [_svd("fast_sp_svd"), _svd(method)],
        "ratio", 1.0 if method == "practical_sp_svd" else None, method,
        why=None if method != "practical_sp_svd" else (
            f"fast_sp_svd against practical_sp_svd, each at x = (c + r)/k = {X_POINT} with the "
            "same storage (CountSketch on sparse A), rank-k output: Algorithm 3's extra core "
            "sketch M = S_C A S_R^T rides the same pass, so it must cost no more time."))
    for method in METHODS[1:]
]
TARGETS += [
    common.Target(
        "svd", "  fast_sp_svd estimate_error=True / plain", [_estimate(True), _estimate(False)],
        "slowdown", 1.10, "plain",
        why="the same fast_sp_svd call with estimate_error=True (a test sketch of Gaussian "
        "probes gathered in the same pass) against the plain call: no second pass over A, so "
        "at most 10% more."),
]
TARGETS += [common.Target("svd", f"  {method} error ratio (rank k)",
                          [_svd(method, "track_error_ratio")], "value") for method in METHODS]
TARGETS += [common.Target("svd", f"  {method} error ratio (sketch rank)",
                          [_svd(method, "track_error_ratio_sketch_rank")], "value")
            for method in SINGLE_PASS]
TARGETS.append(common.Target(
    "svd", "fast_sp_svd blocks: peak extra / (1.5 sketches + 1 block)",
    [common.Call(SinglePassSVDStream, (common.TEXT, "fast_sp_svd"), "track_traced_peak_ratio")],
    "value", 1.0,
    why=f"Python-traced peak memory of fast_sp_svd over {BLOCK_COLUMNS}-column blocks against "
    "its sketches (m c + r n + s_c s_r floats) plus one block: a single pass holds the "
    "sketches and the block being read, never A whole (half the sketches' size again as "
    "slack for the finishing QRs and solve)."))


def _slope(times, objs):
    """The least-squares slope of log time against log nnz(A)."""
    import numpy as np

    nnz = [obj.B.nnz for obj in objs]
    return float(np.polyfit(np.log(nnz), np.log(times), 1)[0])


for _method, _setting in (("sketch_both", "CountSketches, s_c = s_r = 200"),
                          ("fast_sp_svd", "k = 10, x = 4, CountSketches, as in the svd rows")):
    TARGETS.append(common.Target(
        "scaling", f"scaling: {_method} time against nnz(A), log-log slope",
        [common.Call(NnzScaling, (common.TEXT, copies, _method), "time_run")
         for copies in (1, 2, 4, 8)], "value", 1.1, combine=_slope,
        why=f"{_method} ({_setting}) timed on 1, 2, 4 and 8 row-stacked copies of the matrix, "
        "each with fresh column permutations: a one-pass method's time is linear in nnz(A), "
        "and a slope above 1.1 means a cost that grows faster (cache misses, a serial step, an "
        "m^2 term)."))

