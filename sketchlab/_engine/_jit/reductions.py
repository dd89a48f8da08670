"""Whole-array passes: the finiteness check, the read-only roofline pass and
the first write to fresh pages."""

import numpy as np
from numba import njit, prange

from ..._config import JIT, PJIT

_CHUNK = 1 << 16
CHUNK = _CHUNK  # for callers that size per-chunk results (chunk_squares)


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
def entry_bounds(indices, bits, exponent, one, finite, low, high, exponent_or):
    """Per chunk ``c`` of ``_CHUNK`` entries (none may be empty): ``low[c]``
    and ``high[c]``, the smallest and largest entry of ``indices`` in it
    (for 4-byte indices; 8-byte ones go to :func:`entry_top`), and, with
    ``finite``, ``exponent_or[c]``, the OR over the chunk of ``(b &
    exponent) + one`` for the bits ``b`` of the values (``bits``: float64
    values viewed as uint64, or float32 as uint32; ``exponent`` the mask of
    the exponent field, ``one`` its lowest bit).  The sum carries into the
    sign bit exactly when the exponent field is all ones (NaN or Inf), so
    the values are finite when the top bit of every ``exponent_or`` is clear.

    Integer min, max and OR reductions have no floating-point order to keep:
    the compiler vectorizes them, and the check of a CSR/CSC matrix (index
    range and finite values) runs at the speed of reading its two arrays."""
    n = indices.shape[0]
    nchunks = high.shape[0]
    for c in prange(nchunks):
        lo = c * _CHUNK
        hi = min(n, lo + _CHUNK)
        small = indices[lo]
        large = indices[lo]
        for i in range(lo, hi):
            v = indices[i]
            small = min(small, v)
            large = max(large, v)
        low[c] = small
        high[c] = large
        if finite:
            exponent_or[c] = _exponent_or(bits, exponent, one, lo, hi)


@njit(**PJIT)
def entry_top(indices, bits, exponent, one, finite, top, exponent_or):
    """:func:`entry_bounds` for 8-byte indices: ``top[c]``, the largest
    entry of ``indices`` in chunk ``c`` read as unsigned (a negative index
    is huge), one reduction where AVX2 has no 64-bit min or max (measured
    about as fast as reading the arrays, where min and max together were up
    to twice as slow)."""
    n = indices.shape[0]
    nchunks = top.shape[0]
    for c in prange(nchunks):
        lo = c * _CHUNK
        hi = min(n, lo + _CHUNK)
        large = np.uint64(0)
        for i in range(lo, hi):
            large = max(large, np.uint64(indices[i]))
        top[c] = large
        if finite:
            exponent_or[c] = _exponent_or(bits, exponent, one, lo, hi)


@njit(inline="always")
def _exponent_or(bits, exponent, one, lo, hi):
    acc = exponent ^ exponent
    for i in range(lo, hi):
        acc |= (bits[i] & exponent) + one
    return acc


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


@njit(**PJIT)
def chunk_squares(x, inv_scale, sums, maxs):
    """``sums[c]`` = sum of ``(x[i] * inv_scale)**2`` and ``maxs[c]`` = max of
    ``|x[i]|`` over chunk ``c`` of ``x`` (``_CHUNK`` entries): one pass, no
    BLAS (OpenBLAS threads left spinning by a ddot slow the Numba loops that
    run next).  Summing ``sums`` in order gives a result independent of the
    thread count."""
    n = x.shape[0]
    nchunks = sums.shape[0]
    for c in prange(nchunks):
        lo = c * _CHUNK
        hi = min(n, lo + _CHUNK)
        # four accumulators: independent additions the CPU can overlap
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        m = 0.0
        i = lo
        while i + 4 <= hi:
            v0 = np.float64(x[i]) * inv_scale
            v1 = np.float64(x[i + 1]) * inv_scale
            v2 = np.float64(x[i + 2]) * inv_scale
            v3 = np.float64(x[i + 3]) * inv_scale
            s0 += v0 * v0
            s1 += v1 * v1
            s2 += v2 * v2
            s3 += v3 * v3
            m = max(m, abs(np.float64(x[i])), abs(np.float64(x[i + 1])),
                    abs(np.float64(x[i + 2])), abs(np.float64(x[i + 3])))
            i += 4
        while i < hi:
            v = np.float64(x[i]) * inv_scale
            s0 += v * v
            m = max(m, abs(np.float64(x[i])))
            i += 1
        sums[c] = (s0 + s1) + (s2 + s3)
        maxs[c] = m



@njit(**PJIT)
def touch_pages(flat, step):
    """``flat[::step] = 0`` for a 1-D array, the entries split into one
    contiguous range per thread: the first write to each page of fresh
    memory, its page faults taken by all threads on disjoint ranges."""
    n = (flat.shape[0] + step - 1) // step
    for i in prange(n):
        flat[i * step] = 0
