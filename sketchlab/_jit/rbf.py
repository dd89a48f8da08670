"""RBF kernel blocks: the kernel values from a Gram block, and the Gram block
of selected rows of CSR matrices.

A block ``exp(-gamma ||a_i - b_j||^2)`` is computed as
``||a_i||^2 + ||b_j||^2 - 2 a_i . b_j`` (clamped at 0), with the inner
products from BLAS (dense) or from :func:`csr_gram` (sparse).
"""

import numpy as np
from numba import njit, prange

from .._config import PJIT

# Output rows handled by one task of csr_gram: each task owns a dense
# work vector of length n_features, so this amortizes its allocation.
_ROWS_PER_TASK = 32


@njit(**PJIT)
def rbf_from_gram(G, sq_a, sq_b, ids_a, ids_b, gamma, out):
    """``out[a, b] = exp(-gamma * max(sq_a[a] + sq_b[b] - 2 G[a, b], 0))``.

    Where ``ids_a[a] == ids_b[b] >= 0`` (the same point on both sides) the
    value is exactly 1.  ``out`` may be ``G`` itself (float64).
    """
    m, p = G.shape
    for a in prange(m):
        ia = ids_a[a]
        na = sq_a[a]
        for b in range(p):
            if ia >= 0 and ia == ids_b[b]:
                out[a, b] = 1.0
            else:
                d = na + sq_b[b] - 2.0 * G[a, b]
                if d < 0.0:  # rounding of nearly identical points
                    d = 0.0
                out[a, b] = np.exp(-gamma * d)


@njit(**PJIT)
def csr_gram(a_ptr, a_idx, a_val, rows, b_ptr, b_idx, b_val, cols, n_features, out):
    """``out[a, b] = x_{rows[a]} . y_{cols[b]}`` for CSR matrices x and y
    (canonical: no duplicate indices in a row).

    Row ``x_{rows[a]}`` is scattered into a dense work vector and each
    ``y_{cols[b]}`` gathers from it: O(nnz(x[rows]) + len(rows) nnz(y[cols])).
    """
    m = rows.shape[0]
    p = cols.shape[0]
    ntasks = (m + _ROWS_PER_TASK - 1) // _ROWS_PER_TASK
    for t in prange(ntasks):
        work = np.zeros(n_features)
        for a in range(t * _ROWS_PER_TASK, min(m, (t + 1) * _ROWS_PER_TASK)):
            i = rows[a]
            for k in range(a_ptr[i], a_ptr[i + 1]):
                work[a_idx[k]] = a_val[k]
            for b in range(p):
                j = cols[b]
                acc = 0.0
                for k in range(b_ptr[j], b_ptr[j + 1]):
                    acc += work[b_idx[k]] * b_val[k]
                out[a, b] = acc
            for k in range(a_ptr[i], a_ptr[i + 1]):
                work[a_idx[k]] = 0.0
