"""The compiled parts of the input checks: reductions at the speed of
reading the arrays (``sketchlab._validation`` says what is wrong)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .threads import threads_for

__all__ = ["nonfinite_count", "pointers_valid", "entries_outside_or_nonfinite"]

# the exponent field of the float types (mask, lowest bit), and the unsigned
# integer type their bits are read as by the fused entry check
_EXPONENT = {
    np.dtype(np.float64): (np.uint64, np.uint64(0x7FF0000000000000), np.uint64(1 << 52)),
    np.dtype(np.float32): (np.uint32, np.uint32(0x7F800000), np.uint32(1 << 23)),
}


def nonfinite_count(flat: Any) -> int:
    """The NaN and Inf in a 1-D float array (one parallel pass)."""
    from ._jit.reductions import count_nonfinite as count

    with threads_for(flat.shape[0]):
        return int(count(flat))


def pointers_valid(indptr: Any, nindices: int) -> bool:
    """Whether an int64 ``indptr`` is non-decreasing and ends at most at ``nindices``."""
    from ._jit.reductions import pointers_valid as valid

    return bool(valid(indptr, nindices))


def entries_outside_or_nonfinite(indices: Any, data: Any, ncols: int) -> tuple[bool, bool]:
    """``(outside, nonfinite)``: whether an index lies outside [0, ncols) and
    (``data`` given, float32 or float64) whether a value is NaN or Inf: ONE
    compiled pass over both arrays, parallel over chunks, of integer
    min/max/OR reductions only, at the speed of reading them."""
    from ._jit.reductions import CHUNK, entry_bounds, entry_top

    n = indices.shape[0]
    if n == 0:
        return False, False
    nchunks = (n + CHUNK - 1) // CHUNK
    finite = data is not None
    if finite:
        utype, exponent, one = _EXPONENT[data.dtype]
        bits = data.view(utype)
        seen = np.empty(nchunks, dtype=utype)
    else:
        exponent, one = np.uint64(0), np.uint64(0)
        bits = seen = np.zeros(1, dtype=np.uint64)
    if indices.dtype.itemsize == 8:  # the unsigned maximum: a negative index is huge
        top = np.empty(nchunks, dtype=np.uint64)
        with threads_for(n):
            entry_top(indices, bits, exponent, one, finite, top, seen)
        outside = int(top.max()) >= ncols
    else:
        low = np.empty(nchunks, dtype=indices.dtype)
        high = np.empty(nchunks, dtype=indices.dtype)
        with threads_for(n):
            entry_bounds(indices, bits, exponent, one, finite, low, high, seen)
        outside = bool(low.min() < 0 or high.max() >= ncols)
    nonfinite = finite and bool(int(np.bitwise_or.reduce(seen)) >> (8 * seen.itemsize - 1))
    return outside, nonfinite
