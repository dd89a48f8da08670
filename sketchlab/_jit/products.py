"""Products with a tall A for the iterative least-squares solvers.

``A^T A Z`` in ONE pass over A (each row is used twice while it sits in
cache), ``A^T Y`` and ``A X``, for a C-contiguous dense A and for
CSR (``A X`` for a CSR A is :func:`sketchlab._jit.apply.right_csr_dense`).
The row ranges (``bounds``) are fixed by the caller from A's shape or its
``indptr`` alone; each range writes its own partial result, and
:func:`reduce_parts` adds the partials in range order, so the result does not
depend on the number of threads.  Dot products keep eight running sums in a
fixed order (:func:`_dot`), so they are the same on every call.
"""

import numpy as np
from numba import njit, prange

from .._config import JIT, PJIT
from .indexing import uindex as _u


@njit(**JIT, inline="always")
def _dot(x, y):
    """``x . y`` with eight running sums in a fixed order (vectorizes
    without reassociation, so the result is the same on every call)."""
    n = x.shape[0]
    n8 = n - n % 8
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
    for l in range(0, n8, 8):
        s0 += x[l] * y[l]
        s1 += x[l + 1] * y[l + 1]
        s2 += x[l + 2] * y[l + 2]
        s3 += x[l + 3] * y[l + 3]
        s4 += x[l + 4] * y[l + 4]
        s5 += x[l + 5] * y[l + 5]
        s6 += x[l + 6] * y[l + 6]
        s7 += x[l + 7] * y[l + 7]
    t = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
    for l in range(n8, n):
        t += x[l] * y[l]
    return t


@njit(**JIT, inline="always")
def _axpy(t, x, out):
    """``out += t x``."""
    for q in range(x.shape[0]):
        out[q] += t * x[q]


@njit(**PJIT)
def dense_normal(A, ZT, bounds, parts):
    """``parts[c] = (A[r0:r1]^T A[r0:r1] Z)^T`` for the ranges ``bounds[c], bounds[c + 1]``.

    One row at a time: its k dot products with the columns of Z (rows of
    ``ZT``), then its k updates, while the row sits in L1."""
    nchunks = bounds.shape[0] - 1
    k = ZT.shape[0]
    for c in prange(nchunks):
        acc = parts[c]
        acc[:] = 0.0
        for i in range(bounds[c], bounds[c + 1]):
            row = A[i]
            for j in range(k):
                _axpy(_dot(row, ZT[j]), row, acc[j])


@njit(**PJIT)
def dense_rmatmul(A, Y, bounds, parts):
    """``parts[c] = (A[r0:r1]^T Y[r0:r1])^T``."""
    nchunks = bounds.shape[0] - 1
    k = Y.shape[1]
    for c in prange(nchunks):
        acc = parts[c]
        acc[:] = 0.0
        for i in range(bounds[c], bounds[c + 1]):
            row = A[i]
            for j in range(k):
                _axpy(Y[i, j], row, acc[j])


@njit(**PJIT)
def dense_matmul(A, XT, bounds, out):
    """``out[r0:r1] = A[r0:r1] X`` (rows are independent: any order)."""
    nchunks = bounds.shape[0] - 1
    k = XT.shape[0]
    for c in prange(nchunks):
        for i in range(bounds[c], bounds[c + 1]):
            row = A[i]
            for j in range(k):
                out[i, j] = _dot(row, XT[j])


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


@njit(**PJIT)
def csr_rmatmul(data, indices, indptr, Y, bounds, parts):
    """``parts[c] = A[r0:r1]^T Y[r0:r1]`` for a CSR A."""
    nchunks = bounds.shape[0] - 1
    k = Y.shape[1]
    for c in prange(nchunks):
        acc = parts[c]
        acc[:] = 0.0
        for i in range(bounds[c], bounds[c + 1]):
            for p in range(indptr[i], indptr[i + 1]):
                a = data[p]
                col = indices[p]
                for j in range(k):
                    acc[col, j] += a * Y[i, j]


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
