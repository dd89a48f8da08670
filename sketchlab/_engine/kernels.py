"""Kernel blocks: ``exp(-gamma ||x_i - y_j||^2)`` of dense or sparse points,
block by block, for the kernel oracles of ``sketchlab._kernel_matrices``.

The expansion ``||x||^2 + ||y||^2 - 2 x.y`` on Gram products (BLAS for dense
points, compiled loops for sparse ones, the route chosen by the density),
then the entries where it cancels recomputed exactly from the points as
given; points far from the origin (next to their spread) are centred and
points of extreme scale scaled by a power of two first (:class:`Points`).
Symmetric blocks are exactly symmetric (mirrored tiles).
"""

from __future__ import annotations

import math


import numpy as np
import scipy.sparse as sp

from .._config import serial_blas
from .threads import fault_in, threads_for

__all__ = ["DENSIFY_MAX_ENTRIES", "SYRK_MAX_ROWS", "Points", "rbf_block", "gram", "symmetric_gram", "csr_sq_norms", "gamma_parts",
           "recompute", "shift_of", "largest", "can_center", "center_if_it_pays"]

# Inner products of sparse points: when both sides are sparser than
# _DENSIFY_MIN_DENSITY (or the column points too many to densify), a sparse
# product (csr_gram); else the column points are densified and sparse rows
# sparser than _CSR_ROWS_MAX_DENSITY go through csr_dense_gram, denser ones
# are densified too for one BLAS product (each dense copy at most
# DENSIFY_MAX_ENTRIES entries).  The thresholds come from timing the routes
# against each other on one thread on mushrooms, dna and splice: sparse rows
# against dense columns win on sparse data, BLAS on a densified copy on dense
# data, the sparse product only when both sides are very sparse
# (asv_benchmarks' bench_rbf.RBFOracle measures the blocks that use them).
_DENSIFY_MIN_DENSITY = 1 / 32
_CSR_ROWS_MAX_DENSITY = 1 / 3
DENSIFY_MAX_ENTRIES = 1 << 22
# Gram products of at most this many multiply-adds run on one BLAS thread.
_SERIAL_GEMM_MAX = 1 << 26
# Rows of the largest ``A @ A.T`` (a BLAS SYRK) a kernel block computes in one
# call; larger symmetric blocks are tiled (see symmetric_gram).
SYRK_MAX_ROWS = 2048
# Points whose largest |coordinate| lies outside this range are scaled by a
# power of two (exactly) so that squared norms and inner products stay far
# from over- and underflow; gamma takes the square of the scale.  float32
# points never need it (their squares are formed in float64).
_SCALE_LOW, _SCALE_HIGH = 2.0**-200, 2.0**200
# Points (dense, or sparse ones stored as densely) are centered on their
# (rounded) column mean when the mean's squared norm exceeds this fraction of
# the mean squared norm: the points then lie far from
# the origin next to their spread, so that the expansion ||x||^2 + ||y||^2 -
# 2 x.y of most distances would cancel (and be recomputed exactly, slowly).
_CENTER_MIN_OFFSET = 15 / 16


def shift_of(largest):
    """Exponent of the power of two that scales points whose largest
    |coordinate| is ``largest`` into [0.5, 1), or 0 when they need none."""
    if largest == 0.0 or _SCALE_LOW <= largest <= _SCALE_HIGH:
        return 0
    return math.frexp(largest)[1]


def center_if_it_pays(X, mean, sq_norms):
    """A center for the points X (dense or CSR) when they lie far from the
    origin next to their spread (see _CENTER_MIN_OFFSET), else None.

    The center is the column mean rounded to a power-of-two grid of about
    2**-12 of each column's range (no finer than the spacing of its largest
    value): off the mean by a negligible amount, and coarse enough that
    ``x - center`` is exact for points on a grid (integer features, fixed
    point), whose Gram products then stay exact, so that an entry does not
    depend on the block it is computed in.
    """
    if not float(mean @ mean) > _CENTER_MIN_OFFSET * float(sq_norms.mean()):
        return None
    high = np.asarray(X.max(axis=0).toarray() if sp.issparse(X) else X.max(axis=0),
                      dtype=np.float64).ravel()
    low = np.asarray(X.min(axis=0).toarray() if sp.issparse(X) else X.min(axis=0),
                     dtype=np.float64).ravel()
    step = np.maximum((high - low) * 2.0**-12, np.spacing(np.maximum(np.abs(high), np.abs(low))))
    step = np.ldexp(0.5, np.frexp(step)[1])  # the power of two at or below
    return np.round(mean / step) * step


def largest(values):
    return max(float(values.max()), -float(values.min())) if values.size else 0.0


def can_center(X):
    """Whether points may be centered: dense ones, and sparse ones whose
    dense copy is no larger than their CSR arrays (centering densifies)."""
    if not sp.issparse(X):
        return True
    return X.shape[0] * X.shape[1] * 8 <= X.data.nbytes + X.indices.nbytes + X.indptr.nbytes


class Points:
    """Rows of a data matrix as the kernels read them.

    ``orig`` holds the points as given (dense C-ordered float32/float64, or
    canonical CSR with float64 values): the exact recomputation reads these.
    ``X`` is the working copy the Gram products use, with its squared norms
    in float64: ``orig`` itself, or ``orig * 2**-shift - center``: a dense
    float64 copy when centered, else (sparse points only scaled) a CSR
    matrix sharing the index arrays.  With ``shift=None`` the transform is
    chosen for these points; otherwise the given one (another side's) is
    applied, so that both sides of a block are in the same frame; a center
    is given only for points that :func:`can_center`.
    """

    def __init__(self, X, shift=None, center=None):
        # The squared norms that choose the scale may overflow (that is how
        # points beyond it show), and new points may over- or underflow in
        # another side's frame: those entries are marked and recomputed.
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            self._setup(X, shift, center)

    def _setup(self, X, shift, center):
        choose = shift is None
        sparse = sp.issparse(X)
        if sparse:
            X = X.tocsr()
            if not X.has_canonical_format:
                X = X.copy()
                X.sum_duplicates()
            if X.dtype != np.float64:
                X = X.astype(np.float64)
        else:
            X = np.ascontiguousarray(X)
        self.orig = X
        sq = csr_sq_norms(X) if sparse else np.einsum("ij,ij->i", X, X, dtype=np.float64)
        if choose:
            # squared norms in [2**-350, 2**350] put the largest |coordinate|
            # in [2**-200, 2**200] (up to 2**50 features): no scale needed
            top = float(sq.max())
            in_range = 2.0**-350 <= top <= 2.0**350
            shift = 0 if in_range else shift_of(largest(X.data if sparse else X))
        self.shift = shift
        if shift:
            if sparse:
                X = sp.csr_matrix((np.ldexp(X.data, -shift), X.indices, X.indptr), shape=X.shape)
                sq = csr_sq_norms(X)
            else:
                X = np.ldexp(X, -shift, dtype=np.float64)
                sq = np.einsum("ij,ij->i", X, X)
        if choose and can_center(X):
            mean = (np.asarray(X.sum(axis=0), dtype=np.float64).ravel() / X.shape[0] if sparse
                    else X.mean(axis=0, dtype=np.float64))
            center = center_if_it_pays(X, mean, sq)
        if center is not None and sparse:
            X = X.toarray()
        if center is not None:
            if X is self.orig or X.dtype != np.float64:
                X = X - center
            else:
                X -= center
            sq = np.einsum("ij,ij->i", X, X)
        self.X = X
        self._sq = sq
        self.center = center
        self.sparse = sp.issparse(X)
        self.density = X.nnz / max(1, X.shape[0] * X.shape[1]) if self.sparse else 1.0
        self.n_features = X.shape[1]
        self._transposed = None

    def sq_norms(self, ids, span):
        return self._sq[span[0]:span[1]] if span is not None else self._sq[ids]

    def dense_rows(self, ids, span):
        """Selected rows of the working copy as a float64 array (a view when
        possible)."""
        X = self.X
        R = X[span[0]:span[1]] if span is not None else X[ids]
        if self.sparse:
            return R.toarray()
        return np.asarray(R, dtype=np.float64)

    def transposed_rows(self, ids, span):
        """The selected rows of the sparse working copy, transposed, as CSR
        arrays ``(indptr, indices, data)`` over the features; that of all
        rows is kept, since row_blocks asks for it again and again."""
        X = self.X
        if span is not None and span == (0, X.shape[0]):
            if self._transposed is None:
                T = X.tocsc()
                self._transposed = (T.indptr, T.indices, T.data)
            return self._transposed
        nnz = int(np.sum(X.indptr[ids + 1] - X.indptr[ids]))
        t_ptr = np.zeros(X.shape[1] + 1, dtype=np.int64)
        t_idx = np.empty(nnz, dtype=np.int64)
        t_val = np.empty(nnz)
        _loops().csr_rows_transposed(X.indptr, X.indices, X.data, ids, t_ptr, t_idx, t_val)
        return t_ptr, t_idx, t_val


def csr_sq_norms(X):
    """Squared norms of the rows of a canonical CSR matrix, in float64."""
    sq = np.empty(X.shape[0])
    _loops().csr_row_sq_norms(X.indptr, X.data, sq)
    return sq


def gram(PA, rows, rspan, PB, cols, cspan, same, out=None):
    """Inner products ``a_rows[i] . b_cols[j]`` of the working copies as a
    C-ordered float64 array (written into ``out``, a C-contiguous float64
    array of that shape, when given and the points are dense)."""
    m, p, d = rows.shape[0], cols.shape[0], PA.n_features
    if m == 0 or p == 0:
        return np.zeros((m, p))
    fits_a = not PA.sparse or m * d <= DENSIFY_MAX_ENTRIES
    fits_b = not PB.sparse or p * d <= DENSIFY_MAX_ENTRIES
    if PA.sparse and PB.sparse and (
            min(PA.density, PB.density) < _DENSIFY_MIN_DENSITY or not fits_b):
        XA = PA.X
        bt_ptr, bt_idx, bt_val = PB.transposed_rows(cols, cspan)
        out = np.empty((m, p))
        with threads_for(m * p):
            _loops().csr_gram(XA.indptr, XA.indices, XA.data, rows, bt_ptr, bt_idx, bt_val, out)
        return out
    if PA.sparse and fits_b and (PA.density < _CSR_ROWS_MAX_DENSITY or not fits_a):
        XA = PA.X
        Bt = np.ascontiguousarray(PB.dense_rows(cols, cspan).T)
        out = np.empty((m, p))
        with threads_for(m * p):
            _loops().csr_dense_gram(XA.indptr, XA.indices, XA.data, rows, Bt, out)
        return out
    if fits_a and fits_b:
        A = PA.dense_rows(rows, rspan)
        if same and m > SYRK_MAX_ROWS:
            return symmetric_gram(A)
        B = A if same else PB.dense_rows(cols, cspan)
        if out is not None:
            return np.matmul(A, B.T, out=out)
        if m * p * d <= _SERIAL_GEMM_MAX:
            return np.ascontiguousarray(_serial_product(A, B.T))
        out = np.empty((m, p))
        fault_in(out)  # fresh pages faulted in on all threads, not inside the threaded GEMM
        return np.matmul(A, B.T, out=out)
    # dense rows against sparse points too large to densify
    return np.ascontiguousarray((PB.X[cols] @ PA.dense_rows(rows, rspan).T).T)


def symmetric_gram(A):
    """``A @ A.T`` by tiles of at most SYRK_MAX_ROWS rows: GEMMs of distinct
    tiles above the diagonal, mirrored (so the result is exactly symmetric),
    and small SYRKs on the diagonal.  numpy sends ``A @ A.T`` to BLAS's SYRK,
    and the multi-threaded DSYRK of the OpenBLAS in the numpy wheels has been
    seen to crash (SkylakeX kernels on AMD EPYC) from about 16,500 rows of
    784 columns; no SYRK here has more than SYRK_MAX_ROWS rows."""
    m = A.shape[0]
    out = np.empty((m, m))
    fault_in(out)
    step = SYRK_MAX_ROWS
    for i0 in range(0, m, step):
        i1 = min(m, i0 + step)
        Ai = A[i0:i1]
        out[i0:i1, i0:i1] = Ai @ Ai.T
        if i1 < m:
            block = Ai @ A[i1:].T  # distinct rows: a GEMM
            out[i0:i1, i1:] = block
            with threads_for(block.size):
                _loops().transpose_into(block, out[i1:, i0:i1])
    return out


def gamma_parts(gamma, shift):
    """``(g_m, g_e)`` with ``gamma * 4**shift == g_m * 2**g_e``; ``g_e == 0``
    when that product is a normal float (then ``g_m`` is it)."""
    mantissa, exponent = math.frexp(gamma)
    exponent += 2 * shift
    if -1021 <= exponent <= 1024:
        return math.ldexp(mantissa, exponent), 0
    return mantissa, exponent


def rbf_block(PA, rows, rspan, PB, cols, cspan, same, ids_a, ids_b, gamma, dtype, out=None):
    """``exp(-gamma ||a_rows[i] - b_cols[j]||^2)``: the expansion on the
    working copies, then the marked entries exactly from the points as given.
    ``out``: a C-contiguous float64 array of the block's shape to compute it
    in (dense float64 points; no fresh block whose pages fault in)."""
    into = out is not None and dtype == np.float64 and not (PA.sparse or PB.sparse)
    G = gram(PA, rows, rspan, PB, cols, cspan, same and not into, out if into else None)
    if out is not None and not into:
        out[...] = rbf_block(PA, rows, rspan, PB, cols, cspan, same, ids_a, ids_b, gamma, dtype)
        return out
    out = G if dtype == np.float64 else np.empty(G.shape, dtype=dtype)
    if G.size == 0:
        return out
    flagged = np.empty(G.shape[0], dtype=np.int64)
    g_m, g_e = gamma_parts(gamma, PA.shift)
    with threads_for(G.size):
        _loops().rbf_from_gram(G, np.ascontiguousarray(PA.sq_norms(rows, rspan)),
                      np.ascontiguousarray(PB.sq_norms(cols, cspan)), ids_a, ids_b,
                      g_m, g_e, out, flagged)
    todo = np.flatnonzero(flagged)
    if todo.size:
        recompute(PA, rows, PB, cols, todo, gamma, out)
    return out


def recompute(PA, rows, PB, cols, todo, gamma, out):
    """Write the entries of ``out`` marked -1, in the rows ``todo``, from the
    explicit differences of the points as given."""
    g_m, g_e = gamma_parts(gamma, 0)
    A, B = PA.orig, PB.orig
    if not (sp.issparse(A) or sp.issparse(B)):
        with threads_for(todo.size * cols.shape[0]):
            _loops().rbf_exact_dense(A, rows, B, cols, todo, g_m, g_e, out)
        return
    if not sp.issparse(A):  # the marked rows only, as CSR
        A = sp.csr_matrix(A[rows[todo]])
        rows = np.zeros(rows.shape[0], dtype=np.int64)
        rows[todo] = np.arange(todo.size)
    if not sp.issparse(B):
        B = sp.csr_matrix(B[cols])
        cols = np.arange(cols.shape[0], dtype=np.int64)
    with threads_for(todo.size * cols.shape[0]):
        _loops().rbf_exact_csr(A.indptr, A.indices, A.data, rows, B.indptr, B.indices, B.data, cols,
                      todo, g_m, g_e, out)




def _serial_product(X, Y):
    """``X @ Y`` on one BLAS thread (a small product between compiled loops)."""
    with serial_blas():
        return X @ Y


def _loops():
    """The compiled kernel loops (imported on first use: importing the engine
    does not import Numba)."""
    from ._jit import rbf

    return rbf
