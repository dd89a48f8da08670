"""Whole-array passes: the finiteness check and the read-only roofline pass."""

import numpy as np
from numba import njit, prange

from .._config import JIT, PJIT

_CHUNK = 1 << 16


@njit(**PJIT)
def count_nonfinite(x):
    """Number of NaN or +-Inf entries of the 1-D array ``x``.

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
    return bad


@njit(**PJIT)
def count_outside(indices, ncols):
    """Number of entries of the 1-D integer array ``indices`` outside
    ``[0, ncols)``: compared as unsigned numbers, a negative index is caught
    by the same single test (and the loop vectorises)."""
    n = indices.shape[0]
    nchunks = (n + _CHUNK - 1) // _CHUNK
    limit = np.uint64(ncols)
    bad = 0
    for c in prange(nchunks):
        lo = c * _CHUNK
        hi = min(n, lo + _CHUNK)
        local = 0
        for i in range(lo, hi):
            local += np.uint64(indices[i]) >= limit
        bad += local
    return bad


@njit(**JIT)
def pointers_valid(indptr, nnz):
    """True when ``indptr`` is a non-decreasing pointer array into ``nnz`` entries."""
    m = indptr.shape[0] - 1
    if m < 0 or indptr[0] < 0 or indptr[m] > nnz:
        return False
    decreasing = 0
    for i in range(m):
        decreasing += indptr[i + 1] < indptr[i]
    return decreasing == 0


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
