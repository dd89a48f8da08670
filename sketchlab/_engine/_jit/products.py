"""Products with a CSR A for the iterative solvers, and its transpose.

``A^T A Z`` in ONE pass over A (each row is used twice while it sits in
cache); ``A X`` for a CSR A is :func:`sketchlab._engine._jit.apply.right_csr_dense`;
the counting-sort transpose.
The row ranges (``bounds``) are fixed by the caller from A's shape or its
``indptr`` alone; each range writes its own partial result, and
:func:`reduce_parts` adds the partials in range order, so the result does not
depend on the number of threads.
"""

import numpy as np
from numba import njit, prange

from ..._config import JIT, PJIT
from .indexing import uindex as _u


@njit(**PJIT)
def csr_normal(data, indices, indptr, Z, bounds, parts):
    """``parts[c] = A[r0:r1]^T (A[r0:r1] Z)`` for a CSR A (Z of shape (n, k))."""
    nchunks = bounds.shape[0] - 1
    k = Z.shape[1]
    for c in prange(nchunks):
        acc = parts[c]
        acc[:] = 0.0
        t = np.empty(k, dtype=acc.dtype)
        for i in range(bounds[c], bounds[c + 1]):
            t[:] = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                a = data[p]
                col = indices[p]
                for j in range(k):
                    t[j] += a * Z[col, j]
            for p in range(indptr[i], indptr[i + 1]):
                a = data[p]
                col = indices[p]
                for j in range(k):
                    acc[col, j] += a * t[j]


@njit(**PJIT)
def csr_normal_vec(data, indices, indptr, z, bounds, parts):
    """As :func:`csr_normal` for one column ``z`` (``parts`` of shape (ranges, n))."""
    nchunks = bounds.shape[0] - 1
    for c in prange(nchunks):
        acc = parts[c]
        acc[:] = 0.0
        for i in range(bounds[c], bounds[c + 1]):
            t = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                t += data[p] * z[indices[p]]
            for p in range(indptr[i], indptr[i + 1]):
                acc[indices[p]] += data[p] * t


@njit(**JIT)
def reduce_parts(parts, out):
    """``out = parts[0] + parts[1] + ...`` in this order."""
    out[:] = parts[0]
    for c in range(1, parts.shape[0]):
        out += parts[c]


@njit(**PJIT)
def csr_transpose_counts(indptr, indices, bounds, counts):
    """``counts[c, j]`` = the stored entries of column j in the rows
    ``bounds[c]:bounds[c + 1]`` (counts zeroed by the caller)."""
    for c in prange(bounds.shape[0] - 1):
        row = counts[c]
        for i in range(bounds[c], bounds[c + 1]):
            for q in range(_u(indptr[i]), _u(indptr[i + 1])):
                row[_u(indices[q])] += 1


@njit(**JIT)
def csr_transpose_offsets(counts, t_ptr):
    """``t_ptr`` of the transpose, and ``counts[c, j]`` turned into where
    the entries of column j from row range c start (ranges in order)."""
    total = 0
    for j in range(counts.shape[1]):
        t_ptr[j] = total
        for c in range(counts.shape[0]):
            here = counts[c, j]
            counts[c, j] = total
            total += here
    t_ptr[counts.shape[1]] = total


@njit(**PJIT)
def csr_transpose_fill(indptr, indices, data, bounds, cursor, t_idx, t_val):
    """The entries of the transpose: each row range writes its entries of
    column j from ``cursor[c, j]`` on, rows in increasing order, so every
    row of the transpose has sorted column indices (whatever the threads)."""
    for c in prange(bounds.shape[0] - 1):
        at = cursor[c]
        for i in range(bounds[c], bounds[c + 1]):
            for q in range(_u(indptr[i]), _u(indptr[i + 1])):
                j = _u(indices[q])
                pos = _u(at[j])
                t_idx[pos] = i
                t_val[pos] = data[q]
                at[j] += 1
