"""Fast Walsh-Hadamard transform kernels for the SRHT.

``S = P H D / sqrt(s)``: D random signs (length d), H the unnormalised
Walsh-Hadamard matrix of order ``dpad`` (next power of two >= d, the input
zero-padded implicitly) and P the ``s`` sampled rows.  Each input vector is
copied once into a scratch buffer of length ``dpad`` (signs applied, padding
zeroed), transformed in place and sampled.  Scratch buffers belong to a fixed
number of groups, not to threads, so results do not depend on the thread
count.
"""

import numpy as np
from numba import njit, prange

from ..._config import JIT, PJIT
from .indexing import uindex

_GROUPS = 64


@njit(**JIT)
def fwht_inplace(x):
    """In-place unnormalised Walsh-Hadamard transform of ``x`` (length 2**k)."""
    n = x.shape[0]
    h = 1
    while h < n:
        for i in range(0, n, 2 * h):
            for k in range(i, i + h):
                a = x[k]
                b = x[k + h]
                x[k] = a + b
                x[k + h] = a - b
        h *= 2


@njit(**PJIT)
def srht_dense_rows(a, signs, rows, scale, dpad, out):
    """out[i, t] = scale * (H D a[i, :])[rows[t]] for C-ordered ``a`` (m x d)."""
    m, d = a.shape
    s = rows.shape[0]
    ngroups = min(_GROUPS, m)
    for g in prange(ngroups):
        buf = np.empty(dpad, dtype=np.float64)
        for i in range(g, m, ngroups):
            for j in range(d):
                buf[j] = signs[j] * a[i, j]
            for j in range(d, dpad):
                buf[j] = 0.0
            fwht_inplace(buf)
            for t in range(s):
                out[i, t] = scale * buf[rows[t]]


@njit(**PJIT)
def srht_dense_cols(a, signs, rows, scale, dpad, out):
    """out[t, q] = scale * (H D a[:, q])[rows[t]] for C-ordered ``a`` (d x n).

    Columns are gathered eight at a time (one cache line of each row of a)
    into column-major scratch and transformed one by one."""
    d, n = a.shape
    s = rows.shape[0]
    width = 8
    nchunks = (n + width - 1) // width
    ngroups = min(_GROUPS, nchunks)
    for g in prange(ngroups):
        buf = np.empty((width, dpad), dtype=np.float64)
        for c in range(g, nchunks, ngroups):
            q0 = c * width
            w = min(width, n - q0)
            for j in range(d):
                sj = signs[j]
                for q in range(w):
                    buf[q, j] = sj * a[j, q0 + q]
            for q in range(w):
                for j in range(d, dpad):
                    buf[q, j] = 0.0
                fwht_inplace(buf[q])
                for t in range(s):
                    out[t, q0 + q] = scale * buf[q, rows[t]]


@njit(**PJIT)
def srht_sparse_vectors(ptr, idx, val, signs, rows, scale, dpad, out):
    """out[v, t] = scale * (H D x_v)[rows[t]] where x_v is compressed vector v
    (row v of CSR arrays, or column v of CSC arrays); duplicates are summed."""
    nvec = ptr.shape[0] - 1
    s = rows.shape[0]
    ngroups = min(_GROUPS, nvec)
    for g in prange(ngroups):
        buf = np.empty(dpad, dtype=np.float64)
        for v in range(g, nvec, ngroups):
            buf[:] = 0.0
            for q in range(uindex(ptr[v]), uindex(ptr[v + 1])):
                j = uindex(idx[q])
                buf[j] += signs[j] * val[q]
            fwht_inplace(buf)
            for t in range(s):
                out[v, t] = scale * buf[rows[t]]


@njit(**PJIT)
def srht_columns(signs, rows, scale, j0, out):
    """out[jj, t] = S[t, j0 + jj] = scale * signs[j] * (-1)**popcount(rows[t] & j)."""
    b, s = out.shape
    for jj in prange(b):
        j = j0 + jj
        sj = scale * signs[j - j0]
        for t in range(s):
            x = rows[t] & j
            parity = 0
            while x:
                parity ^= 1
                x &= x - 1
            out[jj, t] = -sj if parity else sj
