"""Application of a sparse sketch given by tables, to CSR or C-ordered dense A.

One family of loops serves CountSketch, OSNAP and the samplers.  The operator
hands over its nonzeros in the forms a loop needs:

- a CSR table (row t of S -> columns and values) for the left side;
- a CSC table (column j of S -> rows and values) for the right side;
- for the hashing kinds, also packed codes: the ``p`` nonzeros of column j
  are ``codes[j p : (j + 1) p]``, each ``row << 1 | sign_bit``, of magnitude
  ``scale``.  One 4-byte load per nonzero instead of a pointer, an index and
  a value keeps the table and the output buffer of the streaming loops in
  L2 cache.

CSC and F-ordered inputs are handled by the caller through transposition
(the CSC arrays of A are the CSR arrays of A^T).

The loops that gather rows of A in a table's order (rather than A's own)
prefetch the rows a few steps ahead (:mod:`.prefetch`): those rows lie
anywhere in A, and waiting for each was most of their time.

Every loop writes a preallocated ``out``: with ``accumulate`` False it
overwrites it (zeroing its own output rows first, which also spreads the
first-touch page faults of a fresh ``np.empty`` over the threads), with
``accumulate`` True it adds to it (``out += result``, for block updates of a
running sketch).

Determinism: parallel loops run either over output rows that no other
iteration writes, or over a FIXED number of input chunks (chosen from the
problem size, never from the thread count) that accumulate into their own
buffers, summed afterwards in chunk order.  Results are therefore bit-for-bit
the same for any number of threads.  Duplicate or unsorted indices in A are
simply summed, as scipy does.
"""

import numpy as np
from numba import njit, prange

from ..._config import JIT, PJIT
from .indexing import uindex as _u
from .prefetch import prefetch_csr_row, prefetch_dense_row

_SIGNS = np.array([1.0, -1.0])  # indexed by the sign bit of a code


# ---------------------------------------------------------------------------
# Inner loops shared by the loops below (inlined by Numba at compile time)
# ---------------------------------------------------------------------------


@njit(inline="always")
def _add_scaled_row(row, a_idx, a_val, lo, hi, w):
    """row[a_idx[q]] += w * a_val[q] for q in [lo, hi): one stored row of A,
    scaled, scattered into one output row."""
    for q in range(_u(lo), _u(hi)):
        row[_u(a_idx[q])] += w * a_val[q]


@njit(inline="always")
def _add_dense_row(row, a, i, w):
    """row += w * a[i]: one dense row of A, scaled."""
    for jj in range(a.shape[1]):
        row[jj] += w * a[i, jj]


@njit(inline="always")
def _scatter_codes(row, a_idx, a_val, lo, hi, w, codes, p):
    """row[rows of column a_idx[q]] += (w * a_val[q]) * sign for q in [lo, hi):
    one stored row of A pushed through the p packed codes of each column
    (``A S^T`` for a hashing S); no inner loop for CountSketch (p = 1)."""
    if p == 1:
        for q in range(_u(lo), _u(hi)):
            code = np.uint32(codes[np.uint64(a_idx[q])])
            row[code >> np.uint32(1)] += (w * a_val[q]) * _SIGNS[code & np.uint32(1)]
    else:
        up = np.uint64(p)
        for q in range(_u(lo), _u(hi)):
            base = np.uint64(a_idx[q]) * up
            wv = w * a_val[q]
            for b in range(p):
                code = np.uint32(codes[base + np.uint64(b)])
                row[code >> np.uint32(1)] += wv * _SIGNS[code & np.uint32(1)]


@njit(inline="always")
def _code_target(codes, p, i, b):
    """(output row, sign) of the b-th nonzero of column i of a hashing S."""
    code = np.uint32(codes[np.uint64(i) * np.uint64(p) + np.uint64(b)])
    return code >> np.uint32(1), _SIGNS[code & np.uint32(1)]


@njit(inline="always")
def _chunk_lo_hi(bounds, c):
    return bounds[c], bounds[c + 1]


# ---------------------------------------------------------------------------
# Left side: S A
# ---------------------------------------------------------------------------


@njit(**PJIT)
def left_csr(s_ptr, s_idx, s_val, a_ptr, a_idx, a_val, out, accumulate):
    """out (+)= S A  (s x n) with S as a CSR table and A as CSR arrays: each
    output row gathers the rows of A it needs."""
    s, n = out.shape
    end = s_ptr[s]
    for t in prange(s):
        row = out[t]
        if not accumulate:
            row[:] = 0.0
        for k in range(s_ptr[t], s_ptr[t + 1]):
            prefetch_csr_row(s_idx, k, end, a_ptr, a_idx, a_val)
            i = s_idx[k]
            _add_scaled_row(row, a_idx, a_val, a_ptr[i], a_ptr[i + 1], s_val[k])


@njit(**PJIT)
def left_dense(s_ptr, s_idx, s_val, a, out, accumulate):
    """out (+)= S A  (s x n) with S as a CSR table and A dense (C order)."""
    s, n = out.shape
    end = s_ptr[s]
    for t in prange(s):
        row = out[t]
        if not accumulate:
            row[:] = 0.0
        for k in range(s_ptr[t], s_ptr[t + 1]):
            prefetch_dense_row(s_idx, k, end, a)
            _add_dense_row(row, a, s_idx[k], s_val[k])


@njit(**PJIT)
def left_csr_chunks_hash(codes, p, scale, a_ptr, a_idx, a_val, bounds, bufs, accumulate):
    """bufs[c] (+)= S[:, rows of chunk c] A[rows of chunk c] (s x n each) for a
    hashing kind: A's rows streamed in their natural order (for outputs small
    enough to keep one buffer per chunk).  Sum with :func:`sum_chunks`."""
    nchunks = bounds.shape[0] - 1
    for c in prange(nchunks):
        buf = bufs[c]
        if not accumulate:
            buf[:, :] = 0.0
        lo, hi = _chunk_lo_hi(bounds, c)
        for i in range(lo, hi):
            for b in range(p):
                target, sign = _code_target(codes, p, i, b)
                _add_scaled_row(buf[target], a_idx, a_val, a_ptr[i], a_ptr[i + 1],
                                scale * sign)


@njit(**PJIT)
def left_dense_chunks_hash(codes, p, scale, a, bounds, bufs, accumulate):
    """bufs[c] (+)= S[:, rows of chunk c] A[rows of chunk c] for dense
    C-ordered A and a hashing kind, rows streamed in order (small outputs)."""
    nchunks = bounds.shape[0] - 1
    for c in prange(nchunks):
        buf = bufs[c]
        if not accumulate:
            buf[:, :] = 0.0
        lo, hi = _chunk_lo_hi(bounds, c)
        for i in range(lo, hi):
            for b in range(p):
                target, sign = _code_target(codes, p, i, b)
                _add_dense_row(buf[target], a, i, scale * sign)


@njit(**PJIT)
def left_csr_chunks_hash_dense(codes, p, scale, gt, a_ptr, a_idx, a_val, bounds, bufs):
    """bufs[c] = (G S[:, rows of chunk c] A[rows of chunk c])^T (cols x s each)
    for a hashing S (s0 x rows, packed codes) under a small dense G (s x s0,
    given as ``gt = G^T``): row i of A is scaled by the column ``g_i = G
    S[:, i]`` (s values) and added into the rows of the buffer its nonzeros
    name.  One pass over the nonzeros and no s0 x cols intermediate: for
    Gaussian probes through a CountSketch, whose intermediate is several times
    the output.  Sum with :func:`sum_chunks`."""
    nchunks = bounds.shape[0] - 1
    s = gt.shape[1]
    for c in prange(nchunks):
        buf = bufs[c]
        buf[:, :] = 0.0
        g = np.empty(s)
        lo, hi = _chunk_lo_hi(bounds, c)
        for i in range(lo, hi):
            g[:] = 0.0
            for b in range(p):
                target, sign = _code_target(codes, p, i, b)
                w = scale * sign
                for t in range(s):
                    g[t] += w * gt[target, t]
            for q in range(_u(a_ptr[i]), _u(a_ptr[i + 1])):
                row = buf[_u(a_idx[q])]
                v = a_val[q]
                for t in range(s):
                    row[t] += v * g[t]


# ---------------------------------------------------------------------------
# Right side: A S^T
# ---------------------------------------------------------------------------


@njit(**PJIT)
def hash_dense_rows(codes, p, scale, gt, w):
    """w[j] = (G S)[:, j] for a hashing S (packed codes, columns j0 + j of
    the tables) and ``gt = G^T``: the explicit columns of a small composed
    sketch, p rows of gt per column."""
    d, s = w.shape
    for j in prange(d):
        row = w[j]
        row[:] = 0.0
        for b in range(p):
            target, sign = _code_target(codes, p, j, b)
            f = scale * sign
            for t in range(s):
                row[t] += f * gt[target, t]


@njit(**JIT, inline="always")
def _add_row_times(row, a_ptr, a_idx, a_val, w, i):
    """``row += A[i] W``: each stored a_ij adds a_ij W[j], in storage order.
    One or two columns (a vector, eigsh's narrow blocks) are summed in
    registers (the same additions in the same order: the same bits)."""
    s = w.shape[1]
    lo, hi = _u(a_ptr[i]), _u(a_ptr[i + 1])
    if s == 1:
        acc = row[0]
        for q in range(lo, hi):
            acc += a_val[q] * w[_u(a_idx[q]), 0]
        row[0] = acc
        return
    if s == 2:
        acc0, acc1 = row[0], row[1]
        for q in range(lo, hi):
            v = a_val[q]
            j = _u(a_idx[q])
            acc0 += v * w[j, 0]
            acc1 += v * w[j, 1]
        row[0], row[1] = acc0, acc1
        return
    for q in range(lo, hi):
        v = a_val[q]
        wj = w[_u(a_idx[q])]
        for t in range(s):
            row[t] += v * wj[t]


@njit(**PJIT)
def right_csr_dense(a_ptr, a_idx, a_val, w, out, accumulate):
    """out (+)= A W (m x s) for A as CSR arrays and a dense, C-ordered W
    (cols x s, a few columns): rows of out are independent (parallel, no
    buffers); each stored a_ij adds a_ij W[j] into row i."""
    m = out.shape[0]
    for i in prange(m):
        row = out[i]
        if not accumulate:
            row[:] = 0.0
        _add_row_times(row, a_ptr, a_idx, a_val, w, i)


# right_csr_dense_blocked: rows summed per block into a small accumulator
# (ROWS x s doubles, in L1/L2 cache for the few columns of a Krylov block),
# and rows per parallel task (each task allocates its accumulator once)
_ROW_BLOCK = 32
_ROWS_PER_TASK = 1024


@njit(**PJIT)
def right_csr_dense_blocked(a_ptr, a_idx, a_val, w, out):
    """out = A W as :func:`right_csr_dense`, for an ``out`` of any layout
    (a Fortran-ordered block of a basis): each block of rows is summed into
    a small C-ordered accumulator, then written once (scattered += on the
    strided rows of ``out`` would cost a cache line per entry per
    nonzero).  Rows are independent: the same result for any thread count,
    and the same bits as :func:`right_csr_dense`."""
    m = out.shape[0]
    s = w.shape[1]
    ntasks = (m + _ROWS_PER_TASK - 1) // _ROWS_PER_TASK
    for task in prange(ntasks):
        acc = np.empty((_ROW_BLOCK, s), dtype=out.dtype)
        end = min(m, (task + 1) * _ROWS_PER_TASK)
        for r0 in range(task * _ROWS_PER_TASK, end, _ROW_BLOCK):
            r1 = min(end, r0 + _ROW_BLOCK)
            for i in range(r0, r1):
                row = acc[i - r0]
                row[:] = 0.0
                _add_row_times(row, a_ptr, a_idx, a_val, w, i)
            for t in range(s):
                for i in range(r0, r1):
                    out[i, t] = acc[i - r0, t]


@njit(**PJIT)
def right_csr_table(a_ptr, a_idx, a_val, c_ptr, c_idx, c_val, out, accumulate):
    """out (+)= A S^T  (m x s) with A as CSR arrays and S as a CSC table."""
    m, s = out.shape
    for i in prange(m):
        row = out[i]
        if not accumulate:
            row[:] = 0.0
        for q in range(_u(a_ptr[i]), _u(a_ptr[i + 1])):
            j = _u(a_idx[q])
            v = a_val[q]
            for k in range(_u(c_ptr[j]), _u(c_ptr[j + 1])):
                row[_u(c_idx[k])] += v * c_val[k]


@njit(**PJIT)
def right_csr_hash(a_ptr, a_idx, a_val, codes, p, scale, out, accumulate):
    """out (+)= A S^T  (m x s) with A as CSR arrays and S as packed codes."""
    m, s = out.shape
    for i in prange(m):
        row = out[i]
        if not accumulate:
            row[:] = 0.0
        _scatter_codes(row, a_idx, a_val, a_ptr[i], a_ptr[i + 1], scale, codes, p)


@njit(**PJIT)
def right_dense(a, c_ptr, c_idx, c_val, out, accumulate):
    """out (+)= A S^T  (m x s) with A dense (C order) and S as a CSC table."""
    m, s = out.shape
    n = a.shape[1]
    for i in prange(m):
        row = out[i]
        if not accumulate:
            row[:] = 0.0
        for j in range(n):
            v = a[i, j]
            for k in range(_u(c_ptr[j]), _u(c_ptr[j + 1])):
                row[_u(c_idx[k])] += v * c_val[k]


@njit(**PJIT)
def right_dense_hash(a, codes, p, scale, out, accumulate):
    """out (+)= A S^T  (m x s) with A dense (C order) and S as packed codes."""
    m, s = out.shape
    n = a.shape[1]
    up = np.uint64(p)
    for i in prange(m):
        row = out[i]
        if not accumulate:
            row[:] = 0.0
        for j in range(n):
            v = scale * a[i, j]
            base = np.uint64(j) * up
            for b in range(p):
                code = np.uint32(codes[base + np.uint64(b)])
                row[code >> np.uint32(1)] += v * _SIGNS[code & np.uint32(1)]


# ---------------------------------------------------------------------------
# Both sides: S1 A S2^T
# ---------------------------------------------------------------------------


@njit(**PJIT)
def both_csr_rows(s_ptr, s_idx, s_val, a_ptr, a_idx, a_val, c_ptr, c_idx, c_val, out,
                  accumulate):
    """out (+)= S1 A S2^T  (s1 x s2), one output row per iteration: S1 as a CSR
    table (only the rows of A that S1 touches are read: the loop for
    samplers), A as CSR arrays, S2 as a CSC table."""
    s1, s2 = out.shape
    end = s_ptr[s1]
    for t in prange(s1):
        row = out[t]
        if not accumulate:
            row[:] = 0.0
        for k in range(s_ptr[t], s_ptr[t + 1]):
            prefetch_csr_row(s_idx, k, end, a_ptr, a_idx, a_val)
            i = s_idx[k]
            w = s_val[k]
            for q in range(_u(a_ptr[i]), _u(a_ptr[i + 1])):
                j = _u(a_idx[q])
                wv = w * a_val[q]
                for k2 in range(_u(c_ptr[j]), _u(c_ptr[j + 1])):
                    row[_u(c_idx[k2])] += wv * c_val[k2]


@njit(**PJIT)
def both_csr_rows_hash(s_ptr, s_idx, s_val, a_ptr, a_idx, a_val, codes2, p2, scale2, out,
                       accumulate):
    """out (+)= S1 A S2^T  (s1 x s2), one output row per iteration, for an S2
    given as packed codes: the loop for outputs too large for the streaming
    buffers (each output row stays in L1 while the rows of A that S1 sends
    to it are scattered through the 4-byte codes of S2)."""
    s1, s2 = out.shape
    end = s_ptr[s1]
    for t in prange(s1):
        row = out[t]
        if not accumulate:
            row[:] = 0.0
        for k in range(s_ptr[t], s_ptr[t + 1]):
            prefetch_csr_row(s_idx, k, end, a_ptr, a_idx, a_val)
            i = s_idx[k]
            _scatter_codes(row, a_idx, a_val, a_ptr[i], a_ptr[i + 1], s_val[k] * scale2,
                           codes2, p2)


@njit(**PJIT)
def both_csr_chunks_hash(
    codes1, p1, scale1, a_ptr, a_idx, a_val, codes2, p2, scale2, bounds, bufs, accumulate
):
    """bufs[c] (+)= S1[:, rows of chunk c] A[rows of chunk c] S2^T for hashing
    kinds given as packed codes: the rows of A are read in their natural
    order (a streaming pass over the nonzeros), chunk ``c`` covering rows
    ``[bounds[c], bounds[c + 1])``.  Sum ``bufs`` in chunk order with
    :func:`sum_chunks`."""
    nchunks = bounds.shape[0] - 1
    for c in prange(nchunks):
        buf = bufs[c]
        if not accumulate:
            buf[:, :] = 0.0
        lo, hi = _chunk_lo_hi(bounds, c)
        for i in range(lo, hi):
            for b1 in range(p1):
                target, sign = _code_target(codes1, p1, i, b1)
                _scatter_codes(buf[target], a_idx, a_val, a_ptr[i], a_ptr[i + 1],
                               scale1 * scale2 * sign, codes2, p2)


@njit(**PJIT)
def sum_chunks(bufs, out, accumulate):
    """out (+)= bufs[0] + bufs[1] + ... in that order (thread-count independent)."""
    nchunks, s1, s2 = bufs.shape
    for t in prange(s1):
        for u in range(s2):
            acc = bufs[0, t, u]
            for c in range(1, nchunks):
                acc += bufs[c, t, u]
            if accumulate:
                out[t, u] += acc
            else:
                out[t, u] = acc
