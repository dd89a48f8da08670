"""The counter-based hash as compiled code, and the bucket/sign tables of
CountSketch and OSNAP computed from it.

The functions below are the Numba twins of the NumPy versions in
``sketchlab._hash`` (same numbers; tests/test_hash.py checks both against the
splitmix64 generator).

Column ``j`` of an OSNAP with ``p`` nonzeros per column has one nonzero in
each of ``p`` row blocks ``[floor(b s / p), floor((b + 1) s / p))``; its row
within block ``b`` and its sign come from ``hash64(key, j p + b)``.  CountSketch
is the case ``p = 1``.
"""

import numpy as np
from numba import njit, prange

from ..._config import JIT, PJIT
from ..._hash import M1, M2, GOLDEN


@njit(**JIT)
def hash64(key, counter):
    """splitmix64 output for ``(key, counter)``; both uint64."""
    z = key + (counter + np.uint64(1)) * np.uint64(GOLDEN)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(M1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(M2)
    return z ^ (z >> np.uint64(31))


@njit(**JIT)
def bucket_of(h, n):
    """Uniform bucket in ``[0, n)`` from the high 32 bits of ``h``."""
    return np.int64(((h >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@njit(**JIT)
def sign_of(h):
    """+1.0 or -1.0 from bit 0 of ``h``."""
    return 1.0 - 2.0 * np.float64(h & np.uint64(1))


@njit(**JIT)
def uniform_of(h):
    """Uniform double in the open interval (0, 1) from the high 53 bits."""
    return (np.float64(h >> np.uint64(11)) + 0.5) * (1.0 / 9007199254740992.0)


@njit(**JIT)
def normal_of(key, index):
    """Standard normal number ``index`` of the stream ``key`` (Box-Muller)."""
    pair = np.uint64(index >> np.uint64(1))
    u1 = uniform_of(hash64(key, np.uint64(2) * pair))
    u2 = uniform_of(hash64(key, np.uint64(2) * pair + np.uint64(1)))
    radius = np.sqrt(-2.0 * np.log(u1))
    if index & np.uint64(1):
        return radius * np.sin(2.0 * np.pi * u2)
    return radius * np.cos(2.0 * np.pi * u2)


@njit(**JIT)
def _block_bounds(s, p):
    """Row blocks ``[lo, lo + size)`` of an OSNAP with p nonzeros per column
    (hoisted out of the loops: no division inside)."""
    lo = np.empty(p, dtype=np.int64)
    size = np.empty(p, dtype=np.int64)
    for blk in range(p):
        lo[blk] = (blk * s) // p
        size[blk] = ((blk + 1) * s) // p - lo[blk]
    return lo, size


@njit(inline="always")
def _column_codes(key, column, p, lo, size, codes, at):
    """The p packed codes of global column ``column`` into ``codes[at:at + p]``."""
    base = np.uint64(column) * np.uint64(p)
    for blk in range(p):
        h = hash64(key, base + np.uint64(blk))
        row = lo[blk] + bucket_of(h, size[blk])
        codes[at + blk] = (row << 1) | np.int64(h & np.uint64(1))


@njit(**PJIT)
def hashing_codes(key, s, p, j0, b, codes):
    """Packed nonzeros of columns ``[j0, j0 + b)``: local column ``jj`` has
    ``codes[jj p + blk] = row << 1 | sign_bit`` for its blocks ``blk < p``."""
    key = np.uint64(key)
    lo, size = _block_bounds(s, p)
    for jj in prange(b):
        _column_codes(key, j0 + jj, p, lo, size, codes, jj * p)


@njit(**PJIT)
def hashing_codes_at(key, s, p, columns, codes):
    """Packed nonzeros of the given global ``columns`` (the codes of column
    ``columns[t]`` at ``codes[t p : (t + 1) p]``): tables for the few columns
    a very sparse input touches, however large the operator."""
    key = np.uint64(key)
    lo, size = _block_bounds(s, p)
    for t in prange(columns.shape[0]):
        _column_codes(key, columns[t], p, lo, size, codes, t * p)
