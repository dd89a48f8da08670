"""RBF kernel blocks: the kernel values from a Gram block, the exact
recomputation of the entries the Gram route cannot give, and the Gram block
of selected rows of CSR matrices.

A block ``exp(-gamma ||a_i - b_j||^2)`` is first computed from the expansion
``d = s - 2 a_i . b_j`` with ``s = ||a_i||^2 + ||b_j||^2`` and the inner
products from BLAS (dense) or :func:`csr_gram` (sparse).  The subtraction
cancels when d is small next to s: its rounding error is about
``sqrt(n_features) eps s``, which may be all of d (points far from the
origin, or close to each other).  :func:`rbf_from_gram` marks such entries
(and those whose norms over- or underflow) with -1 and counts them per row;
:func:`rbf_exact_dense` / :func:`rbf_exact_csr` then recompute the marked
entries from the explicit differences ``a_i - b_j`` of the points as given.

gamma is passed as ``g_m * 2**g_e`` (``g_e = 0`` when gamma is a normal
float), so that gamma times the square of a scale can exceed the float range
without becoming inf, and a zero distance never meets an infinite gamma.
"""

import math

import numpy as np
from numba import njit, prange

from .._config import JIT, PJIT

# Entries with d <= _TAU * s are recomputed.  Above the threshold the relative
# error of d is at most about sqrt(n_features) eps / _TAU, so the kernel value
# exp(-gamma d) is off by at most that times max_t t e^-t = 1/e.
_TAU = 2.0**-6
# Squared norms below this are near the subnormal range, where the expansion
# loses its relative precision.
_NORM_MIN = 2.0**-900
_DBL_MAX = np.finfo(np.float64).max
# A plain sum of squared differences in [_SSQ_LO, _SSQ_HI] is kept; outside,
# the differences are scaled by a power of two near the largest, unless that
# lies in [_SAFE_LO, _SAFE_HI] (squares summed over up to 2**60 features
# neither over- nor underflow).
_SSQ_LO = 2.0**-900
_SSQ_HI = 2.0**900
_SAFE_LO = 2.0**-450
_SAFE_HI = 2.0**450


@njit(**PJIT)
def rbf_from_gram(G, sq_a, sq_b, ids_a, ids_b, g_m, g_e, out, flagged):
    """``out[a, b] = exp(-gamma * (sq_a[a] + sq_b[b] - 2 G[a, b]))``, gamma =
    ``g_m * 2**g_e``, where that expansion is trustworthy; elsewhere
    ``out[a, b] = -1`` and ``flagged[a]`` counts the marked entries of row a.

    Where ``ids_a[a] == ids_b[b] >= 0`` (the same point on both sides) the
    value is exactly 1.  ``out`` may be ``G`` itself (float64).
    """
    m, p = G.shape
    for a in prange(m):
        ia = ids_a[a]
        na = sq_a[a]
        marked = 0
        for b in range(p):
            if ia >= 0 and ia == ids_b[b]:
                out[a, b] = 1.0
                continue
            s = na + sq_b[b]
            d = s - 2.0 * G[a, b]
            # written so that NaN (inf - inf) fails the test too
            if d > _TAU * s and d <= _DBL_MAX and s >= _NORM_MIN:
                e = d * g_m
                if g_e != 0:
                    e = np.ldexp(e, g_e)
                out[a, b] = np.exp(-e)
            else:
                out[a, b] = -1.0
                marked += 1
        flagged[a] = marked


@njit(**JIT)
def _shift_for(largest):
    """Exponent of a power of two that brings ``largest`` near 1, or 0 when
    the squares of the differences are safe as they are."""
    if _SAFE_LO <= largest <= _SAFE_HI:
        return 0
    return math.frexp(largest)[1]


@njit(**JIT)
def _value(ssq, shift, g_m, g_e):
    """``exp(-gamma * ssq * 4**shift)`` without forming gamma * 4**shift."""
    return np.exp(-np.ldexp(ssq * g_m, g_e + 2 * shift))


@njit(**JIT)
def _dense_pair(XA, i, XB, j, shift, largest_only):
    """Over the coordinates of ``XA[i]`` and ``XB[j]``: max |x_k - y_k| when
    ``largest_only``, else sum ((x_k - y_k) 2**-shift)^2."""
    acc = 0.0
    for k in range(XA.shape[1]):
        v = np.float64(XA[i, k]) - np.float64(XB[j, k])
        if largest_only:
            v = abs(v)
            if v > acc:
                acc = v
        else:
            if shift != 0:
                v = np.ldexp(v, -shift)
            acc += v * v
    return acc


@njit(**PJIT)
def rbf_exact_dense(XA, rows, XB, cols, todo, g_m, g_e, out):
    """Recompute the entries of ``out`` marked -1 in the rows ``todo``:
    ``exp(-gamma ||XA[rows[a]] - XB[cols[b]]||^2)`` from the differences,
    in float64, gamma = ``g_m * 2**g_e``.

    The plain sum of squares is kept when it lies in [2**-900, 2**900]: no
    term overflowed, and those that underflowed are below 2**-1022.  Else
    the differences are scaled by a power of two near the largest; one that
    overflows (inf) gives 0, which is the value: its square exceeds 2**2046
    and gamma >= 2**-1074.
    """
    p = cols.shape[0]
    for t in prange(todo.shape[0]):
        a = todo[t]
        i = rows[a]
        for b in range(p):
            if out[a, b] >= 0.0:
                continue
            j = cols[b]
            ssq = _dense_pair(XA, i, XB, j, 0, False)
            if _SSQ_LO <= ssq <= _SSQ_HI:
                out[a, b] = _value(ssq, 0, g_m, g_e)
                continue
            largest = _dense_pair(XA, i, XB, j, 0, True)
            if largest == 0.0:
                out[a, b] = 1.0
            elif largest > _DBL_MAX:
                out[a, b] = 0.0
            else:
                shift = _shift_for(largest)
                ssq = _dense_pair(XA, i, XB, j, shift, False)
                out[a, b] = _value(ssq, shift, g_m, g_e)


@njit(**JIT)
def _csr_pair(a_idx, a_val, alo, ahi, b_idx, b_val, blo, bhi, shift, largest_only):
    """:func:`_dense_pair` for two sorted sparse rows (the union of their
    indices)."""
    acc = 0.0
    ka = alo
    kb = blo
    while ka < ahi or kb < bhi:
        if kb >= bhi or (ka < ahi and a_idx[ka] < b_idx[kb]):
            v = a_val[ka]
            ka += 1
        elif ka >= ahi or b_idx[kb] < a_idx[ka]:
            v = -b_val[kb]
            kb += 1
        else:
            v = a_val[ka] - b_val[kb]
            ka += 1
            kb += 1
        if largest_only:
            v = abs(v)
            if v > acc:
                acc = v
        else:
            if shift != 0:
                v = np.ldexp(v, -shift)
            acc += v * v
    return acc


@njit(**PJIT)
def rbf_exact_csr(a_ptr, a_idx, a_val, rows, b_ptr, b_idx, b_val, cols, todo, g_m, g_e, out):
    """:func:`rbf_exact_dense` for canonical CSR points (sorted indices, no
    duplicates)."""
    p = cols.shape[0]
    for t in prange(todo.shape[0]):
        a = todo[t]
        i = rows[a]
        alo, ahi = a_ptr[i], a_ptr[i + 1]
        for b in range(p):
            if out[a, b] >= 0.0:
                continue
            j = cols[b]
            blo, bhi = b_ptr[j], b_ptr[j + 1]
            ssq = _csr_pair(a_idx, a_val, alo, ahi, b_idx, b_val, blo, bhi, 0, False)
            if _SSQ_LO <= ssq <= _SSQ_HI:
                out[a, b] = _value(ssq, 0, g_m, g_e)
                continue
            largest = _csr_pair(a_idx, a_val, alo, ahi, b_idx, b_val, blo, bhi, 0, True)
            if largest == 0.0:
                out[a, b] = 1.0
            elif largest > _DBL_MAX:
                out[a, b] = 0.0
            else:
                shift = _shift_for(largest)
                ssq = _csr_pair(a_idx, a_val, alo, ahi, b_idx, b_val, blo, bhi, shift, False)
                out[a, b] = _value(ssq, shift, g_m, g_e)


@njit(**PJIT)
def csr_gram(a_ptr, a_idx, a_val, rows, bt_ptr, bt_idx, bt_val, out):
    """``out[a, b] = x_{rows[a]} . y_b`` for a CSR matrix x and a matrix y
    given by its transpose in CSR form (``bt_ptr`` over the features,
    ``bt_idx`` the rows b of y that store each feature).

    Each nonzero ``(k, v)`` of ``x_{rows[a]}`` adds ``v * y_bk`` to the b that
    store feature k: the work is that of the sparse product, O(len(rows) p)
    to clear the output plus one multiply-add per pair of matching nonzeros,
    instead of one per nonzero of y for every row.  Each output row is summed
    in the order of x's features, whatever the thread count.
    """
    m = rows.shape[0]
    p = out.shape[1]
    for a in prange(m):
        for b in range(p):
            out[a, b] = 0.0
        i = rows[a]
        for ka in range(a_ptr[i], a_ptr[i + 1]):
            k = a_idx[ka]
            v = a_val[ka]
            for q in range(bt_ptr[k], bt_ptr[k + 1]):
                out[a, bt_idx[q]] += v * bt_val[q]
