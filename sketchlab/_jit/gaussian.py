"""Columns of a Gaussian sketch, regenerated from the hash.

Entry ``(t, j)`` of an ``s x d`` Gaussian sketch is normal number
``j * s2 + t`` of the stream (``s2 = s`` rounded up to even, so that the
Box-Muller pair of an entry never straddles two columns), divided by sqrt(s).
"""

import numpy as np
from numba import njit, prange

from .._config import PJIT
from .hashing import hash64, uniform_of


@njit(**PJIT)
def gaussian_columns(key, s, j0, out):
    """out[jj, t] = S[t, j0 + jj] for an ``(b, s)`` output (columns of S as rows)."""
    b = out.shape[0]
    s2 = s + (s & 1)
    scale = 1.0 / np.sqrt(s)
    key = np.uint64(key)
    two_pi = 2.0 * np.pi
    for jj in prange(b):
        base = np.uint64(j0 + jj) * np.uint64(s2)
        for t in range(0, s, 2):
            pair = (base + np.uint64(t)) >> np.uint64(1)
            u1 = uniform_of(hash64(key, np.uint64(2) * pair))
            u2 = uniform_of(hash64(key, np.uint64(2) * pair + np.uint64(1)))
            radius = np.sqrt(-2.0 * np.log(u1)) * scale
            out[jj, t] = radius * np.cos(two_pi * u2)
            if t + 1 < s:
                out[jj, t + 1] = radius * np.sin(two_pi * u2)
