"""The operators' loops: every compiled loop that generates or applies a
sketching operator (the table loops of ``apply``, the hash codes, the
Gaussian and Hadamard columns, the fast Walsh-Hadamard transform).

The operator classes (``sketchlab._operators``) decide WHAT to compute
(which tables, which side, into which output); the functions here decide
HOW (which loop, how many chunks, how many threads) and launch it.

The compiled loops are imported on first use (:func:`_compiled`), so that
``import sketchlab`` does not import Numba.
"""

from __future__ import annotations

import numpy as np
from .._config import sparse as sp  # scipy.sparse, imported on first use

from .views import transpose as _transpose
from .views import work as _work

_JIT = None


def _compiled():
    """``sketchlab._engine._jit`` with the loop modules this engine calls, imported
    on the first call."""
    global _JIT
    if _JIT is None:
        from . import _jit
        from ._jit import apply, gaussian, hadamard, hashing  # noqa: F401 (submodules)

        _JIT = _jit
    return _JIT


# ---------------------------------------------------------------------------
# Generation: hash codes, tables, dense columns
# ---------------------------------------------------------------------------


def _index_dtype(n):
    return np.int32 if n < 2**31 else np.int64


def table_rows(col_ptr, rows, vals, nrows):
    """``(row_ptr, row_idx, row_val)``: the CSR form (row t of S -> its
    columns, in increasing order) of a CSC table (column j -> rows,
    values), by the counting sort of :func:`sketchlab._engine.products.transpose_arrays`."""
    from .products import transpose_arrays

    ncols = col_ptr.shape[0] - 1
    return transpose_arrays(col_ptr, rows, np.asarray(vals, dtype=np.float64), nrows,
                            ptr_dtype=np.int64, idx_dtype=_index_dtype(ncols))


def hash_codes(key, s, p, j0, b):
    """The ``b * p`` packed codes ``row << 1 | sign_bit`` of columns
    ``[j0, j0 + b)`` of a hashing operator (``p`` per column)."""
    J = _compiled()
    codes = np.empty(b * p, dtype=np.int32)  # fails fast when memory is short
    with J.threads_for(b * p):
        J.hashing.hashing_codes(key, s, p, j0, b, codes)
    return codes


def hash_codes_at(key, s, p, columns):
    """The packed codes of the given (sorted, global) columns."""
    J = _compiled()
    codes = np.empty(columns.shape[0] * p, dtype=np.int32)
    with J.threads_for(codes.shape[0]):
        J.hashing.hashing_codes_at(key, s, p, np.ascontiguousarray(columns, np.int64), codes)
    return codes


def gaussian_block(key, s, j0, j1, serial=False):
    """Columns ``[j0, j1)`` of a Gaussian operator as a C-ordered
    ``(j1 - j0, s)`` array (``serial``: on one thread)."""
    J = _compiled()
    out = np.empty((j1 - j0, s))
    with J.threads_for(0 if serial else out.size):
        J.gaussian.gaussian_columns(key, s, j0, out)
    return out


def srht_block(signs, rows, scale, j0, j1, serial=False):
    """Columns ``[j0, j1)`` of an SRHT (``signs`` of those columns) as a
    C-ordered ``(j1 - j0, s)`` array."""
    J = _compiled()
    out = np.empty((j1 - j0, rows.shape[0]))
    with J.threads_for(0 if serial else out.size):
        J.hadamard.srht_columns(signs, rows, scale, j0, out)
    return out


def srht_transform(A, axis, signs, rows, scale, dpad, dtype):
    """S A (``axis=0``) or A S^T (``axis=1``) of a whole validated input by
    the fast Walsh-Hadamard transform."""
    J = _compiled()
    s = rows.shape[0]
    with J.threads_for(_work(A) + s * A.shape[1 - axis]):
        return _srht_loops(J.hadamard, A, axis, (signs, rows, scale, dpad), s, dtype)


def _srht_loops(H, A, axis, args, s, dtype):
    if sp.issparse(A):
        # the loop transforms compressed vectors: columns for S A, rows for A S^T
        want = "csc" if axis == 0 else "csr"
        A = A.asformat(want)
        out = np.empty((A.shape[1 - axis], s), dtype=dtype)
        H.srht_sparse_vectors(A.indptr, A.indices, A.data, *args, out)
        return out.T if axis == 0 else out
    # a C-ordered matrix has its rows contiguous: transform rows (A S^T, or
    # S A for F order through A^T) or gathered columns (S A for C order)
    rows_contiguous = A.flags.c_contiguous
    if axis == 0 and rows_contiguous:
        out = np.empty((s, A.shape[1]), dtype=dtype)
        H.srht_dense_cols(A, *args, out)
        return out
    if axis == 0:
        out = np.empty((A.shape[1], s), dtype=dtype)
        H.srht_dense_rows(A.T, *args, out)
        return out.T
    if rows_contiguous:
        out = np.empty((A.shape[0], s), dtype=dtype)
        H.srht_dense_rows(A, *args, out)
        return out
    out = np.empty((s, A.shape[0]), dtype=dtype)
    H.srht_dense_cols(A.T, *args, out)
    return out.T


# ---------------------------------------------------------------------------
# Table loops: one side
# ---------------------------------------------------------------------------

# dense rows at most this long are streamed by the hashing kinds (see _left_loops)
_SHORT_DENSE_ROW = 64


def left(tables, X, out, accumulate):
    """out (+)= S X (s x cols) for a row-major X (CSR, or C-ordered dense): a
    hashing kind streams the rows of X into per-chunk buffers when the output
    is small; otherwise each output row gathers its rows of X."""
    J = _compiled()
    with J.threads_for(_work(X) + out.size):
        _left_loops(J.apply, tables, X, out, accumulate)


def _left_loops(K, tables, X, out, accumulate):
    sparse = sp.issparse(X)
    # streaming pays for its buffers with short CSR rows, p > 1 nonzeros per
    # column, or short dense rows (a thin factor such as C of fast_gmr: the
    # gather loop reads its rows in hash order, one cache miss each, and
    # needs the row table); a long dense row under a CountSketch is read once
    # by the gather loop (measured 1.2-9x faster than streaming for 1000
    # columns)
    stream = tables.codes is not None and (
        sparse or tables.p > 1 or X.shape[1] <= _SHORT_DENSE_ROW)
    # a sparse X streams only into buffers small enough for four or more
    # (about 2 MB each at most): with fewer, larger ones each scatter misses
    # the inner caches, and the gather loop (which prefetches its rows) was
    # faster: debian-tfidf, CountSketch s = 13 and 20 (3 and 2 chunks), 0.75x
    # and 0.65x the streaming time; 200000 x 5000 at 20 per row, s = 80,
    # 0.49x; 1M x 2000 at 3 per row, s = 200, 0.83x (s = 100, five chunks,
    # stays streaming: gather took 1.85x)
    least = _LEAST_SPARSE_LEFT_CHUNKS if sparse else _LEAST_CHUNKS
    nchunks = stream_chunks(_work(X), out.shape, out.dtype, least) if stream else 0
    if nchunks:
        bounds = chunk_bounds(X, nchunks)
        args = (tables.codes, tables.p, tables.scale)
        # one chunk streams straight into the output
        single = nchunks == 1
        bufs = out[np.newaxis] if single else np.empty((nchunks,) + out.shape, dtype=out.dtype)
        if sparse:
            K.left_csr_chunks_hash(*args, X.indptr, X.indices, X.data, bounds, bufs,
                                   single and accumulate)
        else:
            K.left_dense_chunks_hash(*args, X, bounds, bufs, single and accumulate)
        if not single:
            K.sum_chunks(bufs, out, accumulate)
    elif sparse:
        K.left_csr(*tables.csr, X.indptr, X.indices, X.data, out, accumulate)
    else:
        K.left_dense(*tables.csr, X, out, accumulate)


def right(tables, X, out, accumulate):
    """out (+)= X S^T (rows x s) for a row-major X: each output row is its
    row of X scattered through the columns of S."""
    J = _compiled()
    with J.threads_for(_work(X) + out.size):
        _right_loops(J.apply, tables, X, out, accumulate)


def _right_loops(K, tables, X, out, accumulate):
    if tables.codes is not None:
        args = (tables.codes, tables.p, tables.scale, out, accumulate)
        if sp.issparse(X):
            K.right_csr_hash(X.indptr, X.indices, X.data, *args)
        else:
            K.right_dense_hash(X, *args)
    elif sp.issparse(X):
        K.right_csr_table(X.indptr, X.indices, X.data, *tables.csc, out, accumulate)
    else:
        K.right_dense(X, *tables.csc, out, accumulate)


# ---------------------------------------------------------------------------
# Table loops: both sides, and a dense sketch over a hashing one
# ---------------------------------------------------------------------------


def both(left, A, right, target, into, transposed):
    """target (+)= S1 A S2^T over the CSR arrays of A (of A^T when
    ``transposed``), ``left`` and ``right`` the tables of the two sides."""
    J = _compiled()
    with J.threads_for(A.nnz + target.size):
        _both_loops(J.apply, left, A, right, target, into, transposed)


def _both_loops(K, left, A, right, target, into, transposed):
    shape, dtype = target.shape, target.dtype
    nchunks = stream_chunks(A.nnz, shape, dtype)
    if right.codes is not None and (left.codes is None or nchunks == 0):
        # buffers too large (or a sampler on the left): each output row
        # gathers the rows of A it needs, through S2's 4-byte codes
        K.both_csr_rows_hash(*left.csr, A.indptr, A.indices, A.data, right.codes, right.p,
                             right.scale, target, into)
    elif left.codes is None or right.codes is None or nchunks == 0:
        # samplers: each output row gathers the rows of A it needs, so a
        # sampler reads only its sampled rows
        K.both_csr_rows(*left.csr, A.indptr, A.indices, A.data, *right.csc, target, into)
    else:
        # hashing kinds touch every row: stream A once in its row order
        bounds = chunk_bounds(_transpose(A) if transposed else A, nchunks)
        single = nchunks == 1
        bufs = target[np.newaxis] if single else np.empty((nchunks,) + shape, dtype=dtype)
        K.both_csr_chunks_hash(
            left.codes, left.p, left.scale, A.indptr, A.indices, A.data,
            right.codes, right.p, right.scale, bounds, bufs, single and into,
        )
        if not single:
            K.sum_chunks(bufs, target, into)


def fused_along_rows(tables, gt, X, target, accumulate):
    """target (+)= (G H X)^T for a CSR X whose rows H hashes (``tables``) and
    a small dense G (``gt`` = G^T, s0 x s), in one pass that streams each row
    of X into per-chunk buffers.  False (nothing written) when the buffers
    do not fit."""
    J = _compiled()
    cols, s = target.shape
    nchunks = stream_chunks(X.nnz, (cols, s), np.float64)
    if not nchunks:
        return False
    bounds = chunk_bounds(X, nchunks)
    bufs = np.empty((nchunks, cols, s))
    with J.threads_for(X.nnz * s):
        J.apply.left_csr_chunks_hash_dense(tables.codes, tables.p, tables.scale, gt, X.indptr,
                                           X.indices, X.data, bounds, bufs)
        J.apply.sum_chunks(bufs, target, accumulate)
    return True


def fused_across_rows(tables, gt, X, hashed, res, accumulate):
    """res (+)= X (G H)^T for a CSR X whose columns H hashes: the explicit
    columns of G H (``hashed`` x s, built from the codes), then one row of X
    times them per output row."""
    J = _compiled()
    W = np.empty((hashed, gt.shape[1]))
    with J.threads_for(X.nnz * gt.shape[1]):
        J.apply.hash_dense_rows(tables.codes, tables.p, tables.scale, gt, W)
        J.apply.right_csr_dense(X.indptr, X.indices, X.data, W, res, accumulate)


# ---------------------------------------------------------------------------
# Chunk rules of the streaming loops
# ---------------------------------------------------------------------------

# Streaming loops (one output buffer per input chunk): at most this many
# chunks, each of at least this many stored entries, and all buffers together
# at most this many bytes, so that they stay in cache and never cost much
# memory (a large output uses the loops that own output rows instead).
_MAX_CHUNKS = 8
_MIN_CHUNK_NNZ = 1 << 16
_MAX_CHUNK_BYTES = 1 << 23
_LEAST_CHUNKS = 2  # fewer (large) buffers than this: the gathering loops
_LEAST_SPARSE_LEFT_CHUNKS = 4  # see _left_loops


def stream_chunks(work, shape, dtype, least=None):
    """Number of input chunks of a streaming loop with one output buffer of
    ``shape`` per chunk, 0 when the buffers would not fit the budget with at
    least ``least`` chunks (default 2; or all the chunks small work wants).
    Depends only on the problem, never on the thread count, so results do
    not either."""
    least = _LEAST_CHUNKS if least is None else least
    per_buffer = shape[0] * shape[1] * np.dtype(dtype).itemsize
    wanted = min(_MAX_CHUNKS, max(1, work // _MIN_CHUNK_NNZ))
    fits = _MAX_CHUNK_BYTES // max(per_buffer, 1)
    nchunks = min(wanted, fits)
    return int(nchunks) if nchunks >= min(wanted, least) else 0


def chunk_bounds(X, nchunks):
    """Row boundaries of ``nchunks`` chunks of a row-major X with about equal
    numbers of stored entries."""
    rows = X.shape[0]
    if sp.issparse(X):
        bounds = np.searchsorted(X.indptr, np.linspace(0, X.indptr[-1], nchunks + 1))
    else:
        bounds = np.linspace(0, rows, nchunks + 1).astype(np.int64)
    bounds[0], bounds[-1] = 0, rows
    return bounds.astype(np.int64)
