"""Unsigned indices for the loops over stored entries.

Numba wraps negative indices as Python does, so every ``x[i]`` with a
signed ``i`` that LLVM cannot prove non-negative carries a sign test and two
conditional moves.  The loops over the stored entries of a sparse matrix
take their bounds from ``indptr`` and their targets from ``indices``, both
in range by validation, and there this wraparound cost a large share of the
loops' time (compare.py's sketch_both and S @ A rows measure them).
Indexing with :func:`uindex` of the value drops it.  With
``NUMBA_BOUNDSCHECK=1`` an out-of-range index still raises.
"""

import numpy as np
from numba import njit


@njit(inline="always")
def uindex(i):
    """``i`` as uint64, for indexing without the negative-index wraparound
    (``i`` must be >= 0).  Mixing it with signed integers in arithmetic gives
    floats in Numba: add ``np.uint64`` constants to it, or index only."""
    return np.uint64(i)
