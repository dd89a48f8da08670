"""Reductions over the stored values of a matrix, in one compiled pass:
``||A||_F^2`` (scaled where the squares would over- or underflow) and the
largest magnitude, summed over fixed chunks in chunk order (the same for
any thread count)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp

from .threads import threads_for

__all__ = ["squared_frobenius", "frobenius_parts", "largest_magnitude"]


def squared_frobenius(A: Any) -> float:
    """``||A||_F^2`` of a dense or sparse A in float64 (duplicate sparse
    entries summed first), in one compiled pass over the values (no BLAS, no
    temporary the size of A), and scaled by the largest magnitude when the
    squares would overflow or underflow (inf when ``||A||_F^2`` itself
    exceeds float64: see :func:`frobenius_parts`)."""
    e, ssq = frobenius_parts(A)
    if not (ssq > 0 and math.isfinite(ssq)):
        return ssq
    with np.errstate(over="ignore"):
        return float(np.ldexp(ssq, 2 * e))


def largest_magnitude(A: Any) -> float:
    """``max |A_ij|`` of a dense or sparse A (0 for an empty or zero A), in one
    compiled pass over the values (no temporary the size of A)."""
    from ._jit.reductions import CHUNK, chunk_squares

    data = A.data if sp.issparse(A) else np.asarray(A)
    if not sp.issparse(A):
        data = data.ravel(order="K") if data.flags.c_contiguous or data.flags.f_contiguous \
            else data.ravel()
    if data.size == 0:
        return 0.0
    if data.dtype not in (np.float32, np.float64):
        data = data.astype(np.float64)
    nchunks = (data.size + CHUNK - 1) // CHUNK
    sums, maxs = np.empty(nchunks), np.empty(nchunks)
    with threads_for(data.size):
        chunk_squares(data, 1.0, sums, maxs)
    return float(maxs.max())


def frobenius_parts(A: Any) -> tuple[int, float]:
    """``(e, ssq)`` with ``||A||_F^2 = 2**(2 e) ssq``: ``e = 0`` for entries
    whose squares stay in range (one compiled pass), else the binary exponent
    of the largest magnitude (a second pass scaled by ``2**-e``, exact)."""
    from ._jit.reductions import CHUNK, chunk_squares

    if sp.issparse(A):
        if not A.has_canonical_format:
            A = A.copy()
            A.sum_duplicates()
        data = A.data
    else:
        data = np.asarray(A)
        data = data.ravel(order="K") if data.flags.c_contiguous or data.flags.f_contiguous \
            else data.ravel()
    if data.size == 0:
        return 0, 0.0
    if data.dtype not in (np.float32, np.float64):  # the compiled pass reads these two
        data = data.astype(np.float64)
    nchunks = (data.size + CHUNK - 1) // CHUNK
    sums, maxs = np.empty(nchunks), np.empty(nchunks)
    with threads_for(data.size):
        chunk_squares(data, 1.0, sums, maxs)
    scale = float(maxs.max())
    if scale == 0.0 or not np.isfinite(scale):
        return 0, scale
    if 1e-140 < scale < 1e140:
        return 0, float(sum(sums.tolist()))  # in chunk order
    e = math.frexp(scale)[1]
    with threads_for(data.size):
        chunk_squares(data, math.ldexp(1.0, -e), sums, maxs)
    return e, float(sum(sums.tolist()))
