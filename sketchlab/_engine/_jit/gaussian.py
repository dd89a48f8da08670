"""Columns of a Gaussian sketch, regenerated from the hash.

Entry ``(t, j)`` of an ``s x d`` Gaussian sketch is normal number
``j * s2 + t`` of the stream (``s2 = s`` rounded up to even, a layout kept
from an earlier pairwise generator), divided by sqrt(s).  The normals come
from the counter-based ziggurat defined (and twinned in NumPy) in
``sketchlab._hash``: one hash, two table reads and a multiply for 98.5% of
them; the rare path draws from a stream of its own entry, so every number
is a pure function of ``(key, index)``.
"""

import numpy as np
from numba import njit, prange

from ..._config import JIT, PJIT
from ..._hash import retry_key, ziggurat_tables
from .hashing import hash64, sign_of, uniform_of

_LAYER = np.uint64(0xFF)
_LAYER_AND_SIGN = np.uint64(0x1FF)
_GRID_SHIFT = np.uint64(12)  # bits 12-63: the 52-bit grid position m


@njit(**JIT)
def ziggurat_rare(h, entry_key, widths, limits, heights, r):
    """Normal whose first draw ``h`` missed the fast test: a height test in
    the wedge of layer i >= 1 (a new draw when above f) or the tail beyond
    ``r`` (Marsaglia 1964), with uniforms ``hash64(entry_key, c)``,
    c = 0, 1, 2, ...  Same operations, in the same order, as
    ``sketchlab._hash._ziggurat_rare``."""
    one = np.uint64(1)
    c = np.uint64(0)
    while True:
        layer = h & _LAYER
        m = h >> _GRID_SHIFT
        x = (np.float64(m) + 0.5) * widths[h & _LAYER_AND_SIGN]
        if m < limits[layer]:
            return x
        if layer == 0:
            while True:
                a = -np.log(uniform_of(hash64(entry_key, c))) / r
                b = -np.log(uniform_of(hash64(entry_key, c + one)))
                c += np.uint64(2)
                if b + b > a * a:
                    return (r + a) * sign_of(h >> np.uint64(8))
        u = uniform_of(hash64(entry_key, c))
        c += one
        low = heights[layer]
        high = heights[layer + one]
        if low + u * (high - low) < np.exp(-0.5 * x * x):
            return x
        h = hash64(entry_key, c)
        c += one


@njit(**PJIT)
def ziggurat_columns(key, retry, s, j0, out, widths, limits, heights, r):
    """out[jj, t] = normal ``(j0 + jj) s2 + t`` of the stream ``key`` over
    sqrt(s), for an ``(b, s)`` output; tables from ``ziggurat_tables``."""
    b = out.shape[0]
    s2 = s + (s & 1)
    scale = 1.0 / np.sqrt(s)
    key = np.uint64(key)
    retry = np.uint64(retry)
    for jj in prange(b):
        base = np.uint64(j0 + jj) * np.uint64(s2)
        for t in range(s):
            index = base + np.uint64(t)
            h = hash64(key, index)
            m = h >> _GRID_SHIFT
            if m < limits[h & _LAYER]:
                z = (np.float64(m) + 0.5) * widths[h & _LAYER_AND_SIGN]
            else:
                z = ziggurat_rare(h, hash64(retry, index), widths, limits, heights, r)
            out[jj, t] = z * scale


def gaussian_columns(key, s, j0, out):
    """out[jj, t] = S[t, j0 + jj] for an ``(b, s)`` output (columns of S as rows).

    The tables are passed as arguments, not read as globals: Numba freezes a
    global array into the compiled code and its on-disk cache would not see
    a change of ``sketchlab._hash``.
    """
    tables = ziggurat_tables()
    ziggurat_columns(
        np.uint64(key), np.uint64(retry_key(key)), s, j0, out,
        tables.widths, tables.limits, tables.heights, tables.r,
    )
