"""Application of a sparse sketch given by tables, to CSR or C-ordered dense A.

One kernel family serves CountSketch, OSNAP and the samplers: the operator
hands over its nonzeros as a CSR table (row t of S -> columns and values) for
the left side and as a CSC table (column j of S -> rows and values) for the
right side.  CSC and F-ordered inputs are handled by the caller through
transposition (the CSC arrays of A are the CSR arrays of A^T).

Every parallel loop runs over output rows that no other iteration writes, and
visits its inputs in a fixed order, so results are bit-for-bit the same for
any number of threads.  Each iteration zeroes its own output row, which also
spreads the first-touch page faults of a fresh ``np.empty`` over the threads.
Duplicate or unsorted indices in A are simply summed, as scipy does.
"""

from numba import njit, prange

from .._config import PJIT


@njit(**PJIT)
def left_csr(s_ptr, s_idx, s_val, a_ptr, a_idx, a_val, out):
    """out = S A  (s x n) with S as a CSR table and A as CSR arrays."""
    s, n = out.shape
    for t in prange(s):
        for jj in range(n):
            out[t, jj] = 0.0
        for k in range(s_ptr[t], s_ptr[t + 1]):
            i = s_idx[k]
            w = s_val[k]
            for q in range(a_ptr[i], a_ptr[i + 1]):
                out[t, a_idx[q]] += w * a_val[q]


@njit(**PJIT)
def right_csr(a_ptr, a_idx, a_val, c_ptr, c_idx, c_val, out):
    """out = A S^T  (m x s) with A as CSR arrays and S as a CSC table."""
    m, s = out.shape
    for i in prange(m):
        for t in range(s):
            out[i, t] = 0.0
        for q in range(a_ptr[i], a_ptr[i + 1]):
            j = a_idx[q]
            v = a_val[q]
            for k in range(c_ptr[j], c_ptr[j + 1]):
                out[i, c_idx[k]] += v * c_val[k]


@njit(**PJIT)
def both_csr(s_ptr, s_idx, s_val, a_ptr, a_idx, a_val, c_ptr, c_idx, c_val, out):
    """out = S1 A S2^T  (s1 x s2) in one pass over the nonzeros of A: S1 as a
    CSR table, A as CSR arrays, S2 as a CSC table."""
    s1, s2 = out.shape
    for t in prange(s1):
        for u in range(s2):
            out[t, u] = 0.0
        for k in range(s_ptr[t], s_ptr[t + 1]):
            i = s_idx[k]
            w = s_val[k]
            for q in range(a_ptr[i], a_ptr[i + 1]):
                j = a_idx[q]
                wv = w * a_val[q]
                for k2 in range(c_ptr[j], c_ptr[j + 1]):
                    out[t, c_idx[k2]] += wv * c_val[k2]


@njit(**PJIT)
def left_dense(s_ptr, s_idx, s_val, a, out):
    """out = S A  (s x n) with S as a CSR table and A dense (C order)."""
    s, n = out.shape
    for t in prange(s):
        for jj in range(n):
            out[t, jj] = 0.0
        for k in range(s_ptr[t], s_ptr[t + 1]):
            i = s_idx[k]
            w = s_val[k]
            for jj in range(n):
                out[t, jj] += w * a[i, jj]


@njit(**PJIT)
def right_dense(a, c_ptr, c_idx, c_val, out):
    """out = A S^T  (m x s) with A dense (C order) and S as a CSC table."""
    m, s = out.shape
    n = a.shape[1]
    for i in prange(m):
        for t in range(s):
            out[i, t] = 0.0
        for j in range(n):
            v = a[i, j]
            for k in range(c_ptr[j], c_ptr[j + 1]):
                out[i, c_idx[k]] += v * c_val[k]


@njit(**PJIT)
def both_dense(s_ptr, s_idx, s_val, a, c_ptr, c_idx, c_val, out):
    """out = S1 A S2^T  (s1 x s2) with A dense (C order), one pass over the
    rows of A that S1 touches."""
    s1, s2 = out.shape
    n = a.shape[1]
    for t in prange(s1):
        for u in range(s2):
            out[t, u] = 0.0
        for k in range(s_ptr[t], s_ptr[t + 1]):
            i = s_idx[k]
            w = s_val[k]
            for j in range(n):
                wv = w * a[i, j]
                for k2 in range(c_ptr[j], c_ptr[j + 1]):
                    out[t, c_idx[k2]] += wv * c_val[k2]
