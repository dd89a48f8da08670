"""Whole-array passes: the finiteness check and the read-only roofline pass."""

import numpy as np
from numba import njit, prange

from .._config import PJIT

_CHUNK = 1 << 16


@njit(**PJIT)
def all_finite(x):
    """True when every entry of the 1-D array ``x`` is finite.

    ``v * 0.0`` is 0 for finite ``v`` and NaN for NaN or +-Inf, so the sum of
    those products is exactly 0.0 or NaN whatever the order of summation.
    """
    n = x.shape[0]
    nchunks = (n + _CHUNK - 1) // _CHUNK
    acc = 0.0
    for c in prange(nchunks):
        lo = c * _CHUNK
        hi = min(n, lo + _CHUNK)
        local = 0.0
        for i in range(lo, hi):
            local += x[i] * 0.0
        acc += local
    return acc == 0.0


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
