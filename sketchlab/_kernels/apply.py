"""Application of a sparse sketch given by tables, to CSR or C-ordered dense A.

One kernel family serves CountSketch, OSNAP and the samplers: the operator
hands over its nonzeros as a CSR table (row t of S -> columns and values) for
the left side and as a CSC table (column j of S -> rows and values) for the
right side.  A CSC table is "regular" when every column has exactly ``p``
entries (CountSketch, OSNAP): then ``p > 0`` is passed and the entries of
column j sit at ``[j p, (j + 1) p)`` without reading the pointer array; for
samplers ``p = 0`` and the pointers are read.  CSC and F-ordered inputs are
handled by the caller through transposition (the CSC arrays of A are the CSR
arrays of A^T).

Determinism: parallel loops run either over output rows that no other
iteration writes, or over a FIXED number of input chunks (chosen from the
problem size, never from the thread count) that accumulate into their own
buffers, summed afterwards in chunk order.  Results are therefore bit-for-bit
the same for any number of threads.  Kernels zero their own output rows,
which also spreads the first-touch page faults of a fresh ``np.empty`` over
the threads.  Duplicate or unsorted indices in A are simply summed, as scipy
does.
"""

from numba import njit, prange

from .._config import PJIT


@njit(**PJIT)
def left_csr(s_ptr, s_idx, s_val, a_ptr, a_idx, a_val, out):
    """out = S A  (s x n) with S as a CSR table and A as CSR arrays."""
    s, n = out.shape
    for t in prange(s):
        row = out[t]
        row[:] = 0.0
        for k in range(s_ptr[t], s_ptr[t + 1]):
            i = s_idx[k]
            w = s_val[k]
            for q in range(a_ptr[i], a_ptr[i + 1]):
                row[a_idx[q]] += w * a_val[q]


@njit(**PJIT)
def right_csr(a_ptr, a_idx, a_val, c_ptr, c_idx, c_val, p, out):
    """out = A S^T  (m x s) with A as CSR arrays and S as a CSC table
    (regular with ``p`` entries per column when ``p > 0``)."""
    m, s = out.shape
    for i in prange(m):
        row = out[i]
        row[:] = 0.0
        for q in range(a_ptr[i], a_ptr[i + 1]):
            j = a_idx[q]
            v = a_val[q]
            lo = j * p if p > 0 else c_ptr[j]
            hi = lo + p if p > 0 else c_ptr[j + 1]
            for k in range(lo, hi):
                row[c_idx[k]] += v * c_val[k]


@njit(**PJIT)
def both_csr_rows(s_ptr, s_idx, s_val, a_ptr, a_idx, a_val, c_ptr, c_idx, c_val, p, out):
    """out = S1 A S2^T  (s1 x s2), one output row per iteration: S1 as a CSR
    table (visits only the rows of A that S1 touches: the kernel for
    samplers), A as CSR arrays, S2 as a CSC table."""
    s1, s2 = out.shape
    for t in prange(s1):
        row = out[t]
        row[:] = 0.0
        for k in range(s_ptr[t], s_ptr[t + 1]):
            i = s_idx[k]
            w = s_val[k]
            for q in range(a_ptr[i], a_ptr[i + 1]):
                j = a_idx[q]
                wv = w * a_val[q]
                lo = j * p if p > 0 else c_ptr[j]
                hi = lo + p if p > 0 else c_ptr[j + 1]
                for k2 in range(lo, hi):
                    row[c_idx[k2]] += wv * c_val[k2]


@njit(**PJIT)
def both_csr_chunks(
    r_ptr, r_idx, r_val, p1, a_ptr, a_idx, a_val, c_ptr, c_idx, c_val, p2, bounds, bufs
):
    """bufs[c] = S1[:, rows of chunk c] A[rows of chunk c] S2^T: the rows of A
    are read in their natural order (a streaming pass over the nonzeros),
    chunk ``c`` covering rows ``[bounds[c], bounds[c + 1])``.  S1 and S2 are
    CSC tables.  Sum ``bufs`` in chunk order (:func:`sum_chunks`)."""
    nchunks = bounds.shape[0] - 1
    for c in prange(nchunks):
        buf = bufs[c]
        buf[:, :] = 0.0
        for i in range(bounds[c], bounds[c + 1]):
            lo1 = i * p1 if p1 > 0 else r_ptr[i]
            hi1 = lo1 + p1 if p1 > 0 else r_ptr[i + 1]
            for k1 in range(lo1, hi1):
                row = buf[r_idx[k1]]
                w = r_val[k1]
                for q in range(a_ptr[i], a_ptr[i + 1]):
                    j = a_idx[q]
                    wv = w * a_val[q]
                    lo = j * p2 if p2 > 0 else c_ptr[j]
                    hi = lo + p2 if p2 > 0 else c_ptr[j + 1]
                    for k2 in range(lo, hi):
                        row[c_idx[k2]] += wv * c_val[k2]


@njit(**PJIT)
def sum_chunks(bufs, out):
    """out = bufs[0] + bufs[1] + ... in that order (thread-count independent)."""
    nchunks, s1, s2 = bufs.shape
    for t in prange(s1):
        for u in range(s2):
            acc = bufs[0, t, u]
            for c in range(1, nchunks):
                acc += bufs[c, t, u]
            out[t, u] = acc


@njit(**PJIT)
def left_dense(s_ptr, s_idx, s_val, a, out):
    """out = S A  (s x n) with S as a CSR table and A dense (C order)."""
    s, n = out.shape
    for t in prange(s):
        row = out[t]
        row[:] = 0.0
        for k in range(s_ptr[t], s_ptr[t + 1]):
            i = s_idx[k]
            w = s_val[k]
            for jj in range(n):
                row[jj] += w * a[i, jj]


@njit(**PJIT)
def right_dense(a, c_ptr, c_idx, c_val, p, out):
    """out = A S^T  (m x s) with A dense (C order) and S as a CSC table."""
    m, s = out.shape
    n = a.shape[1]
    for i in prange(m):
        row = out[i]
        row[:] = 0.0
        for j in range(n):
            v = a[i, j]
            lo = j * p if p > 0 else c_ptr[j]
            hi = lo + p if p > 0 else c_ptr[j + 1]
            for k in range(lo, hi):
                row[c_idx[k]] += v * c_val[k]


@njit(**PJIT)
def both_dense(s_ptr, s_idx, s_val, a, c_ptr, c_idx, c_val, p, out):
    """out = S1 A S2^T  (s1 x s2) with A dense (C order), one pass over the
    rows of A that S1 touches."""
    s1, s2 = out.shape
    n = a.shape[1]
    for t in prange(s1):
        row = out[t]
        row[:] = 0.0
        for k in range(s_ptr[t], s_ptr[t + 1]):
            i = s_idx[k]
            w = s_val[k]
            for j in range(n):
                wv = w * a[i, j]
                lo = j * p if p > 0 else c_ptr[j]
                hi = lo + p if p > 0 else c_ptr[j + 1]
                for k2 in range(lo, hi):
                    row[c_idx[k2]] += wv * c_val[k2]
