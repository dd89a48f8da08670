"""Whole-array passes: the finiteness check and the read-only roofline pass."""

import numpy as np
from numba import njit, prange

from .._config import PJIT

_CHUNK = 1 << 16


@njit(**PJIT)
def all_finite(x):
    """True when every entry of the 1-D array ``x`` is finite.

    ``v - v`` is 0 for finite ``v`` and NaN for NaN or +-Inf; counting the
    nonzero differences is an integer reduction, which vectorises."""
    n = x.shape[0]
    nchunks = (n + _CHUNK - 1) // _CHUNK
    bad = 0
    for c in prange(nchunks):
        lo = c * _CHUNK
        hi = min(n, lo + _CHUNK)
        local = 0
        for i in range(lo, hi):
            local += (x[i] - x[i]) != 0.0
        bad += local
    return bad == 0


@njit(**PJIT)
def read_pass(data, indices):
    """Read every stored value and index once (the memory roofline of a
    one-pass sketch); returns a checksum so the reads cannot be elided."""
    n = data.shape[0]
    nchunks = (n + _CHUNK - 1) // _CHUNK
    acc = 0.0
    for c in prange(nchunks):
        lo = c * _CHUNK
        hi = min(n, lo + _CHUNK)
        local = 0.0
        for i in range(lo, hi):
            local += data[i] + np.float64(indices[i])
        acc += local
    return acc


@njit(**PJIT)
def check_compressed(indptr, indices, data, ncols, finite):
    """Validate compressed sparse arrays before a kernel trusts them.

    Returns 0 when valid, 1 when ``indptr`` is not a non-decreasing pointer
    array into ``indices``/``data``, 2 when an index is outside ``[0, ncols)``,
    3 when (with ``finite``) a stored value is NaN or Inf.  One pass over the
    stored entries, in fixed chunks."""
    m = indptr.shape[0] - 1
    nnz = min(indices.shape[0], data.shape[0])
    if m < 0 or indptr[0] < 0:
        return 1
    for i in range(m):
        if indptr[i + 1] < indptr[i]:
            return 1
    if indptr[m] > nnz:
        return 1
    lo0 = indptr[0]
    n = indptr[m] - lo0
    nchunks = (n + _CHUNK - 1) // _CHUNK
    bad = 0
    nonfinite = 0
    for c in prange(nchunks):
        lo = lo0 + c * _CHUNK
        hi = min(lo0 + n, lo + _CHUNK)
        local_bad = 0
        local_nonfinite = 0
        for q in range(lo, hi):
            local_bad += (indices[q] < 0) | (indices[q] >= ncols)
        if finite:
            for q in range(lo, hi):
                local_nonfinite += (data[q] - data[q]) != 0.0
        bad += local_bad
        nonfinite += local_nonfinite
    if bad:
        return 2
    if nonfinite:
        return 3
    return 0
