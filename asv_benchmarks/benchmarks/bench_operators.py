"""Sketching operators: S A (left), A S^T (right), S1 A S2^T (two-sided, one
pass) and S A on a row block (``offset=``), on dense and CSR data, with the
peers a user would otherwise write timed on the same data in the same class.

One class per operator family; ``kind`` is a parameter within it.  Setup
builds the data and the operators, calls every code path once on a miniature
of the data (so kernels are compiled, or loaded from Numba's cache, before any
timing) and builds the operators' hash tables, so ``time_*`` measures steady
state.  ``peakmem_*`` is the process's peak resident memory (data included).
"""

import functools

import numpy as np
import scipy.sparse as sp
from asv_runner.benchmarks.mark import skip_for_params

import sketchlab as sl

from . import common

if common.QUICK:
    DATA = ["dense 2000x500", "csr 20000x10000"]
else:
    DATA = [
        "dense 2000x500",  # madelon's shape
        "dense 8124x112",  # mushrooms' shape
        "dense 16384x1000",
        "csr 8124x112",
        "csr 20000x10000",
        "csr 52396x25252",  # debian-tfidf's shape and density
        "dense madelon",
        "csr debian-tfidf",
    ]
CSR_DATA = [d for d in DATA if d.startswith("csr")]

# the kind lists, from the registry: hashing (one pass, usable by the SVDs),
# sampling (one pass, not for the SVDs), dense (read through S1 A)
HASHING = common.kinds(one_pass=True, svd=True)
SAMPLING = common.kinds(one_pass=True, svd=False)
DENSE = common.kinds(one_pass=False, gmr=True)


# SRHT on sparse input costs O(n d' log d') (one dense transform per vector).
_SRHT_SPARSE_MAX_WORK = 1 << 27


def _srht_work(m, n):
    def padded(d):
        return 1 << max(0, int(d - 1).bit_length())

    return max(n * padded(m), m * padded(n))


def dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X)


class _OperatorSuite:
    param_names = ["kind", "data"]
    timeout = 600

    def setup(self, kind, data):
        A = common.load(data)
        m, n = A.shape
        if kind == "srht" and sp.issparse(A) and _srht_work(m, n) > _SRHT_SPARSE_MAX_WORK:
            raise NotImplementedError(
                f"SRHT of a sparse {m}x{n} matrix transforms every column at the padded length "
                f"(work ~{_srht_work(m, n):.2g}): skipped, it is not meant for large sparse input"
            )
        s1, s2 = common.sketch_sizes(A.shape)
        gen = np.random.default_rng(0)
        scores = kind in common.kinds(needs_scores=True)
        self.S1 = common.make_operator(kind, s1, m, gen, common.squared_norms(A, 0) if scores else None)
        self.S2 = common.make_operator(kind, s2, n, gen, common.squared_norms(A, 1) if scores else None)
        self.A = A
        # a row block of a quarter of A, at offset m/4 (streaming, distributed)
        self.i0 = m // 4
        self.block = A[self.i0 : self.i0 + max(1, m // 4)]
        self._warm_up(kind)

    def _warm_up(self, kind):
        X, B = common.miniature(self.A), common.miniature(self.block, (4, 16))
        ones = np.ones(16)
        T1 = common.make_operator(kind, 4, 16, 1, ones)
        T2 = common.make_operator(kind, 4, 16, 2, ones)
        T1 @ X
        X @ T2.T
        sl.sketch_both(T1, X, T2)
        T1.apply(B, axis=0, offset=4)
        for S in (self.S1, self.S2):  # the hash and sampling kinds build O(d) tables once
            if isinstance(S, (sl.OSNAP, sl.UniformSampler, sl.LeverageScoreSampler)):
                S.apply(np.zeros(S.input_dim))

    # ours

    def time_left(self, kind, data):
        self.S1 @ self.A

    def time_right(self, kind, data):
        self.A @ self.S2.T

    def time_two_sided(self, kind, data):
        sl.sketch_both(self.S1, self.A, self.S2)

    def time_block(self, kind, data):
        self.S1.apply(self.block, axis=0, offset=self.i0)

    def peakmem_left(self, kind, data):
        self.S1 @ self.A

    def peakmem_right(self, kind, data):
        self.A @ self.S2.T

    def peakmem_two_sided(self, kind, data):
        sl.sketch_both(self.S1, self.A, self.S2)

    def peakmem_block(self, kind, data):
        self.S1.apply(self.block, axis=0, offset=self.i0)


class _ExplicitSparsePeer:
    """Peer: the same S as an explicit scipy sparse matrix (``S.tosparse()``),
    producing the same dense result."""

    def setup(self, kind, data):
        super().setup(kind, data)
        self.P1, self.P2 = self.S1.tosparse("csr"), self.S2.tosparse("csr")
        self.P1_block = self.P1[:, self.i0 : self.i0 + self.block.shape[0]]

    def time_peer_explicit_left(self, kind, data):
        dense(self.P1 @ self.A)

    def time_peer_explicit_right(self, kind, data):
        dense(self.A @ self.P2.T)

    def time_peer_explicit_two_sided(self, kind, data):
        dense((self.P1 @ self.A) @ self.P2.T)

    def time_peer_explicit_block(self, kind, data):
        dense(self.P1_block @ self.block)


class HashingSketches(_ExplicitSparsePeer, _OperatorSuite):
    """CountSketch and OSNAP (4 nonzeros per column); peers: explicit sparse S,
    and scipy's ``clarkson_woodruff_transform`` for CountSketch S A."""

    params = [HASHING, DATA]

    def time_two_sided_unchecked(self, kind, data):
        sl.sketch_both(self.S1, self.A, self.S2, check_finite=False)

    @skip_for_params([("osnap", d) for d in DATA])
    def time_peer_scipy_cwt_left(self, kind, data):
        from scipy.linalg import clarkson_woodruff_transform

        dense(clarkson_woodruff_transform(self.A, self.S1.sketch_size, seed=1))


class SamplingSketches(_ExplicitSparsePeer, _OperatorSuite):
    """Uniform and leverage-score row sampling; peers: explicit sparse S, and
    numpy/scipy fancy indexing ``w[:, None] * A[idx]``."""

    params = [SAMPLING, DATA]

    def time_peer_indexing_left(self, kind, data):
        dense(self.A[self.S1.indices]) * self.S1.weights[:, None]

    def time_peer_indexing_right(self, kind, data):
        dense(self.A[:, self.S2.indices]) * self.S2.weights

    def time_peer_indexing_two_sided(self, kind, data):
        rows = self.A[self.S1.indices]
        dense(rows[:, self.S2.indices]) * np.outer(self.S1.weights, self.S2.weights)


class DenseSketches(_OperatorSuite):
    """Gaussian and SRHT; peers: the explicit dense S times A (BLAS or scipy's
    sparse-dense product), and numpy's ``standard_normal`` + GEMM for Gaussian
    (generation included, as ours generates its entries)."""

    params = [DENSE, DATA]

    def setup(self, kind, data):
        super().setup(kind, data)
        self.D1, self.D2 = self.S1.toarray(), self.S2.toarray()
        self.D1_block = np.ascontiguousarray(self.D1[:, self.i0 : self.i0 + self.block.shape[0]])
        self.gen = np.random.default_rng(0)

    def time_peer_explicit_left(self, kind, data):
        self.D1 @ self.A

    def time_peer_explicit_right(self, kind, data):
        self.A @ self.D2.T

    def time_peer_explicit_two_sided(self, kind, data):
        (self.D1 @ self.A) @ self.D2.T

    def time_peer_explicit_block(self, kind, data):
        self.D1_block @ self.block

    def _gaussian(self, s, d):
        G = self.gen.standard_normal((s, d))
        G *= 1.0 / np.sqrt(s)
        return G

    @skip_for_params([("srht", d) for d in DATA])
    def time_peer_numpy_gaussian_left(self, kind, data):
        self._gaussian(*self.S1.shape) @ self.A

    @skip_for_params([("srht", d) for d in DATA])
    def time_peer_numpy_gaussian_right(self, kind, data):
        self.A @ self._gaussian(*self.S2.shape).T

    @skip_for_params([("srht", d) for d in DATA])
    def time_peer_numpy_gaussian_two_sided(self, kind, data):
        (self._gaussian(*self.S1.shape) @ self.A) @ self._gaussian(*self.S2.shape).T


class ReadPassRoofline:
    """The memory roofline of a one-pass sketch of a CSR matrix: a parallel
    pass that only reads its values and column indices (SPEC 7 compares
    ``sketch_both`` with it)."""

    params = [CSR_DATA]
    param_names = ["data"]

    def setup(self, data):
        from sketchlab._engine._jit.reductions import read_pass

        self.A = common.load(data)
        self.read_pass = read_pass
        X = common.miniature(self.A)
        read_pass(X.data, X.indices)

    def time_read_pass(self, data):
        self.read_pass(self.A.data, self.A.indices)


class ComposedSketches:
    """A small Gaussian over a hashing sketch (``compose(GaussianSketch(s,
    4 s), inner)``: fast_sp_svd's default "osnap-gaussian" range sketch, s =
    20, and s = 10 as the error estimates' probes were until they became a
    CountSketch of s rows with the Gaussian on their gram) on CSR data, left and right:
    into a new array (the two steps), and onto a running sketch as a
    SketchState keeps it (``_running``: F order on the right), where the
    intermediate may not outgrow the output (one compiled pass, or the two
    steps in pieces across A's rows).  Peers: the two steps a user would
    write (the hashing sketch, then the Gaussian by BLAS) and the explicit
    dense product with scipy's sparse-dense kernel."""

    param_names = ["inner", "s", "data"]
    params = [HASHING, [10, 20], CSR_DATA]
    timeout = 600

    def setup(self, inner, s, data):
        A = common.load(data)
        m, n = A.shape
        self.A = A
        self.L = sl.compose(sl.GaussianSketch(s, 4 * s, rng=1),
                            common.make_operator(inner, 4 * s, m, 2))
        self.R = sl.compose(sl.GaussianSketch(s, 4 * s, rng=3),
                            common.make_operator(inner, 4 * s, n, 4))
        self.DL, self.DR = self.L.toarray(), self.R.toarray()
        X = common.miniature(A)
        T = sl.compose(sl.GaussianSketch(2, 8, rng=1), common.make_operator(inner, 8, 16, 2))
        T @ X, X @ T.T  # compile or load the kernels
        self.L @ A, A @ self.R.T  # and build the hash tables
        self.out_left = np.zeros((s, n))
        self.out_right = np.zeros((m, s), order="F")

    def time_left(self, inner, s, data):
        self.L @ self.A

    def time_right(self, inner, s, data):
        self.A @ self.R.T

    def time_left_running(self, inner, s, data):
        self.L.apply(self.A, axis=0, out=self.out_left, accumulate=True)

    def time_right_running(self, inner, s, data):
        self.R.apply(self.A, axis=1, out=self.out_right, accumulate=True)

    def time_peer_two_step_left(self, inner, s, data):
        self.L.outer.toarray() @ (self.L.inner @ self.A)

    def time_peer_two_step_right(self, inner, s, data):
        (self.A @ self.R.inner.T) @ self.R.outer.toarray().T

    def time_peer_explicit_left(self, inner, s, data):
        (self.A.T @ self.DL.T).T

    def time_peer_explicit_right(self, inner, s, data):
        self.A @ self.DR.T


@functools.lru_cache(maxsize=None)
def scatter_floor_loop():
    """The simplest compiled two-sided CountSketch scatter (the floor of
    ``sketch_both``): precomputed buckets and signs of both sides, one
    buffer per chunk of rows, summed; no checks, no tables, no hashing."""
    from numba import njit, prange

    @njit(parallel=True, cache=False)
    def floor(indptr, indices, data, row_bucket, row_sign, col_bucket, col_sign, bounds, bufs):
        for c in prange(bounds.shape[0] - 1):
            buf = bufs[c]
            buf[:, :] = 0.0
            for i in range(bounds[c], bounds[c + 1]):
                t = row_bucket[i]
                w = row_sign[i]
                for q in range(indptr[i], indptr[i + 1]):
                    j = indices[q]
                    buf[t, col_bucket[j]] += w * col_sign[j] * data[q]

    return floor


def scatter_floor(A, S1, S2, nchunks=8):
    """``S1 A S2^T`` by :func:`scatter_floor_loop` for a CSR A and two
    CountSketches: a zero-argument call that runs it."""
    def buckets(S):
        P = S.tosparse("csc")  # one nonzero per column
        return P.indices.astype(np.int64), P.data.astype(np.float64)

    rb, rs = buckets(S1)
    cb, cs = buckets(S2)
    bounds = np.searchsorted(A.indptr, np.linspace(0, A.nnz, nchunks + 1)).astype(np.int64)
    bounds[0], bounds[-1] = 0, A.shape[0]
    bufs = np.empty((nchunks, S1.sketch_size, S2.sketch_size))
    out = np.empty((S1.sketch_size, S2.sketch_size))
    loop = scatter_floor_loop()

    def run():
        loop(A.indptr, A.indices, A.data, rb, rs, cb, cs, bounds, bufs)
        return np.sum(bufs, axis=0, out=out)

    return run


class CSRCheckAndFloor:
    """The input check of a CSR matrix (pointers, index range, finite values: what every
    entry point runs on A), the read-only pass, the simplest compiled two-sided CountSketch
    scatter (:func:`scatter_floor`, the floor of ``sketch_both``) and ``sketch_both`` itself,
    with int32 and int64 indices."""

    params = [CSR_DATA, ["int32", "int64"]]
    param_names = ["data", "indices"]
    timeout = 600

    def setup(self, data, index_dtype):
        from sketchlab._engine._jit.reductions import read_pass
        from sketchlab._validation import check_compressed

        A = sp.csr_matrix(common.load(data))
        B = A.copy()
        B.indices, B.indptr = A.indices.astype(index_dtype), A.indptr.astype(index_dtype)
        s1, s2 = common.sketch_sizes(B.shape)
        self.S1 = sl.CountSketch(s1, B.shape[0], rng=1)
        self.S2 = sl.CountSketch(s2, B.shape[1], rng=2)
        self.B, self.read_pass, self.check = B, read_pass, check_compressed
        self.floor = scatter_floor(B, self.S1, self.S2)
        np.testing.assert_allclose(self.floor(), sl.sketch_both(self.S1, B, self.S2), rtol=1e-9,
                                   atol=1e-12)
        self.time_check(data, index_dtype), self.time_read_pass(data, index_dtype)

    def time_check(self, data, index_dtype):
        self.check(self.B, "A")

    def time_read_pass(self, data, index_dtype):
        self.read_pass(self.B.data, self.B.indices)

    def time_scatter_floor(self, data, index_dtype):
        self.floor()

    def time_sketch_both(self, data, index_dtype):
        sl.sketch_both(self.S1, self.B, self.S2)


# ---- compare.py's rows (sections "sketch" and "check") ------------------------------------

_CS = ("countsketch", common.TEXT)
def _hashing(method, alone=False):
    return common.Call(HashingSketches, _CS, method, alone)


def _dense(kind, method):
    return common.Call(DenseSketches, (kind, common.DENSE_DATA), method)


def _check(dtype, method):
    return common.Call(CSRCheckAndFloor, (common.TEXT, dtype), method)


TARGETS = [
    common.Target(
        "sketch", "CountSketch sketch_both 200x200",
        [_hashing("time_two_sided"), _hashing("time_peer_explicit_two_sided", alone=True)],
        "ratio", 10, "scipy (S_C@A)@S_R.T",
        why="sketch_both(S_C, A, S_R) (S_C A S_R^T in one pass over the nonzeros of A) against "
        "the same product with S_C, S_R as scipy sparse matrices, two sparse products: the "
        "one-pass kernel must beat the obvious scipy code by an order of magnitude (round one)."),
    common.Target(
        "sketch", "  ... time / read-only pass (roofline)",
        [_hashing("time_two_sided"), common.Call(ReadPassRoofline, (common.TEXT,),
                                                 "time_read_pass")],
        "slowdown", 3, "read pass",
        why="the same default call (input checks on: finite values, index bounds) against a "
        "parallel pass that only reads A's values and column indices (indptr is m + 1 entries): "
        "the sketch is memory-bound, so within 3x of reading its input is the roofline's bar."),
    common.Target(
        "sketch", "  ... check_finite=False, time / read-only pass",
        [_hashing("time_two_sided_unchecked"), common.Call(ReadPassRoofline, (common.TEXT,),
                                                           "time_read_pass")],
        "slowdown", None, "read pass"),
    common.Target(
        "sketch", "CountSketch S @ A (s = 200)",
        [_hashing("time_left"), _hashing("time_peer_scipy_cwt_left", alone=True)],
        "ratio", 3, "scipy clarkson_woodruff",
        why="S @ A against scipy.linalg.clarkson_woodruff_transform (the same CountSketch, "
        "scipy's own), densified (round one's bar, kept)."),
    common.Target(
        "sketch", "CountSketch S @ A (s = 200)",
        [_hashing("time_left"), _hashing("time_peer_explicit_left", alone=True)],
        "ratio", 4, "(S_sparse @ A).toarray()",
        why="S @ A (dense s x n result) against the explicit sparse S (S.tosparse()) times A, "
        "densified: both read A once and write the same dense output, so a compiled kernel "
        "that skips scipy's sparse result should win by 4x."),
    common.Target(
        "sketch", "CountSketch A @ S.T (s = 200)",
        [_hashing("time_right"), _hashing("time_peer_explicit_right", alone=True)],
        "ratio", 3, "(A @ S_sparse.T).toarray()",
        why="A S^T (dense m x s) against the explicit sparse product, densified (round one's "
        "bar, kept)."),
    common.Target(
        "sketch", f"SRHT S @ A, {common.DENSE_DATA}, s = 200",
        [_dense("srht", "time_left"), _dense("gaussian", "time_left")],
        "ratio", None, "GaussianSketch"),
    common.Target(
        "sketch", f"GaussianSketch S @ A, {common.DENSE_DATA}, s = 200",
        [_dense("gaussian", "time_left"), _dense("gaussian", "time_peer_numpy_gaussian_left")],
        "ratio", 1.0, "numpy randn+GEMM",
        why="GaussianSketch @ A (entries regenerated from the counter-based hash, any thread "
        "count) against numpy's generator drawing S then one GEMM: the reproducible sketch must "
        "cost no more than the throw-away one."),
]
for _dtype in ("int32", "int64"):
    TARGETS += [
        common.Target(
            "check", f"check of a CSR A ({_dtype} indices) / read pass",
            [_check(_dtype, "time_check"), _check(_dtype, "time_read_pass")],
            "slowdown", 1.25, "read pass", statistic="min",
            why="the input check of a CSR matrix (pointers, index range, finite values: what "
            "every entry point runs on A) against a parallel pass that only reads A's values "
            "and indices: one fused pass of integer reductions, at memory speed (minimum of "
            "the calls in turns)."),
        common.Target(
            "check", f"  scatter floor ({_dtype}, 200x200) / read pass",
            [_check(_dtype, "time_scatter_floor"), _check(_dtype, "time_read_pass")],
            "slowdown", None, "read pass", statistic="min",
            why="the simplest compiled two-sided CountSketch scatter (precomputed buckets and "
            "signs, bench_operators.scatter_floor) against the read pass: what a scatter costs "
            "beyond reading on this machine."),
        common.Target(
            "check", f"sketch_both, checks on ({_dtype}) / (scatter floor + read pass)",
            [_check(_dtype, "time_sketch_both"), _check(_dtype, "time_scatter_floor"),
             _check(_dtype, "time_read_pass")],
            "slowdown", 1.0, "floor + read", statistic="min",
            combine=lambda t, _: (t[0], t[1] + t[2]),
            why="sketch_both(S1, A, S2) with its input checks on against the floor of the same "
            "scatter plus one read of A (the bound of a checked scatter): the hashing, the "
            "tables and the checks together cost no more than one read (minimum of the calls "
            "in turns)."),
    ]

