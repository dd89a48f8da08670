"""RBF kernel blocks: the kernel values from a Gram block, the exact
recomputation of the entries the Gram route cannot give, and the Gram block
of selected rows of CSR matrices.

A block ``exp(-gamma ||a_i - b_j||^2)`` is first computed from the expansion
``d = s - 2 a_i . b_j`` with ``s = ||a_i||^2 + ||b_j||^2`` and the inner
products from BLAS (dense), :func:`csr_dense_gram` (sparse rows against
dense columns) or :func:`csr_gram` (sparse against sparse).  The subtraction
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

from ..._config import JIT, PJIT
from .indexing import uindex

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


# exp(-x) for 0 <= x <= _EXP_FAST_MAX (results in the normal range) by
# range reduction and a polynomial, in loops that LLVM vectorizes: the libm
# call in a loop is not vectorized, and took about half the time of a block.
# x log2(e) is rounded to an integer n by adding and subtracting 1.5 * 2**52,
# r = -x - n ln 2 (Cody-Waite: ln 2 split so that n * _LN2_HI is exact for
# |n| < 2**11) lies in [-ln 2 / 2, ln 2 / 2], where the degree-13 Taylor
# polynomial of exp(r) is off by at most 4e-18 relative; 2**n is built from
# the low bits of the rounded sum.  Within 1 ulp of libm's exp (tested).
_EXP_FAST_MAX = 708.0
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_ROUNDER = 6755399441055744.0  # 1.5 * 2**52
_ROUNDER_BITS = 0x4338000000000000  # its bit pattern
_INV_FACTORIALS = tuple(1.0 / math.factorial(k) for k in range(14))
# Entries handled by one task of rbf_from_gram, in scratch vectors that stay
# in the L1/L2 cache.
_TASK_ENTRIES = 2048


@njit(**JIT)
def _exp_neg_into(E, out, P, T):
    """``out[b] = exp(-E[b])`` where ``E[b] >= 0``, else -1 (a mark kept).
    ``P`` and ``T`` are float64 scratch rows of the same length; returns
    nothing.  Values above _EXP_FAST_MAX (results below 2**-1021) go through
    libm's exp."""
    p = E.shape[0]
    c = _INV_FACTORIALS
    TB = T.view(np.int64)
    beyond = 0
    for b in range(p):
        x = min(max(E[b], 0.0), _EXP_FAST_MAX)
        beyond += E[b] > _EXP_FAST_MAX
        t = x * -_LOG2E + _ROUNDER
        n = t - _ROUNDER
        r = (-x - n * _LN2_HI) - n * _LN2_LO
        q = c[13]
        q = q * r + c[12]
        q = q * r + c[11]
        q = q * r + c[10]
        q = q * r + c[9]
        q = q * r + c[8]
        q = q * r + c[7]
        q = q * r + c[6]
        q = q * r + c[5]
        q = q * r + c[4]
        q = q * r + c[3]
        q = q * r + c[2]
        q = q * r + c[1]
        P[b] = q * r + c[0]
        T[b] = t
    for b in range(p):  # 2**n: n + 1023 into the exponent field
        TB[b] = (TB[b] - _ROUNDER_BITS + 1023) << 52
    for b in range(p):
        out[b] = P[b] * T[b] if E[b] >= 0.0 else -1.0
    if beyond:
        for b in range(p):
            if E[b] > _EXP_FAST_MAX:
                out[b] = np.exp(-E[b])


@njit(**PJIT)
def exp_neg(E, out):
    """``out = exp(-E)`` elementwise for a 2-D ``E >= 0`` (the vectorized exp
    of :func:`rbf_from_gram`, exposed for its tests)."""
    m, p = E.shape
    for a in prange(m):
        P = np.empty(p)
        T = np.empty(p)
        _exp_neg_into(E[a], out[a], P, T)


@njit(**PJIT)
def rbf_from_gram(G, sq_a, sq_b, ids_a, ids_b, g_m, g_e, out, flagged):
    """``out[a, b] = exp(-gamma * (sq_a[a] + sq_b[b] - 2 G[a, b]))``, gamma =
    ``g_m * 2**g_e``, where that expansion is trustworthy; elsewhere
    ``out[a, b] = -1`` and ``flagged[a]`` counts the marked entries of row a.

    Where ``ids_a[a] == ids_b[b] >= 0`` (the same point on both sides) the
    value is exactly 1.  ``out`` (C-ordered) may be ``G`` itself (float64).
    Each task takes whole rows, about _TASK_ENTRIES entries, as one flat
    vector (short rows would leave the vector loops mostly idle).
    """
    m, p = G.shape
    rows_per_task = max(1, _TASK_ENTRIES // p)
    ntasks = (m + rows_per_task - 1) // rows_per_task
    for task in prange(ntasks):
        a0 = task * rows_per_task
        a1 = min(m, a0 + rows_per_task)
        size = (a1 - a0) * p
        E = np.empty(size)
        P = np.empty(size)
        T = np.empty(size)
        for a in range(a0, a1):
            na = sq_a[a]
            base = (a - a0) * p
            marked = 0
            for b in range(p):
                s = na + sq_b[b]
                d = s - 2.0 * G[a, b]
                # written so that NaN (inf - inf) fails the test too
                ok = (d > _TAU * s) & (d <= _DBL_MAX) & (s >= _NORM_MIN)
                marked += not ok
                E[base + b] = d * g_m if ok else -1.0
            flagged[a] = marked
        if g_e != 0:
            for k in range(size):
                if E[k] >= 0.0:
                    E[k] = np.ldexp(E[k], g_e)
        _exp_neg_into(E, out[a0:a1].reshape(size), P, T)
        for a in range(a0, a1):
            ia = ids_a[a]
            if ia >= 0:
                for b in range(p):
                    if ids_b[b] == ia:
                        flagged[a] -= out[a, b] < 0.0
                        out[a, b] = 1.0


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


@njit(inline="always")
def _fold(acc, v, shift, largest_only):
    """One coordinate difference ``v`` into the running max |v| (``largest_only``)
    or the running sum of (v 2**-shift)^2 of :func:`_dense_pair` and :func:`_csr_pair`."""
    if largest_only:
        return max(acc, abs(v))
    if shift != 0:
        v = np.ldexp(v, -shift)
    return acc + v * v


@njit(**JIT)
def _dense_pair(XA, i, XB, j, shift, largest_only):
    """Over the coordinates of ``XA[i]`` and ``XB[j]``: max |x_k - y_k| when
    ``largest_only``, else sum ((x_k - y_k) 2**-shift)^2."""
    acc = 0.0
    for k in range(XA.shape[1]):
        acc = _fold(acc, np.float64(XA[i, k]) - np.float64(XB[j, k]), shift, largest_only)
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
        acc = _fold(acc, v, shift, largest_only)
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
        for ka in range(uindex(a_ptr[i]), uindex(a_ptr[i + 1])):
            k = a_idx[ka]
            v = a_val[ka]
            for q in range(uindex(bt_ptr[k]), uindex(bt_ptr[k + 1])):
                out[a, uindex(bt_idx[q])] += v * bt_val[q]


@njit(**PJIT)
def csr_dense_gram(a_ptr, a_idx, a_val, rows, Bt, out):
    """``out[a, b] = x_{rows[a]} . y_b`` for a CSR matrix x and dense points
    y given transposed (``Bt``, n_features x p, C-ordered).

    Each nonzero ``(k, v)`` of ``x_{rows[a]}`` adds ``v * Bt[k, :]`` to the
    output row, a loop over contiguous memory that vectorizes: nnz(x[rows]) p
    multiply-adds, against len(rows) n_features p for a dense product.  Each
    output row is summed in the order of x's features.
    """
    m = rows.shape[0]
    p = out.shape[1]
    for a in prange(m):
        for b in range(p):
            out[a, b] = 0.0
        i = rows[a]
        for ka in range(uindex(a_ptr[i]), uindex(a_ptr[i + 1])):
            k = uindex(a_idx[ka])
            v = a_val[ka]
            for b in range(p):
                out[a, b] += v * Bt[k, b]


@njit(**JIT)
def csr_rows_transposed(ptr, idx, val, rows, t_ptr, t_idx, t_val):
    """The rows ``rows`` of a CSR matrix, transposed, as CSR arrays over the
    features: ``t_ptr`` (length n_features + 1, zeroed by the caller),
    ``t_idx`` (positions in ``rows``, increasing within a feature) and
    ``t_val``.  O(nnz of the rows + n_features), serial."""
    n_features = t_ptr.shape[0] - 1
    for b in range(rows.shape[0]):
        i = rows[b]
        for k in range(ptr[i], ptr[i + 1]):
            t_ptr[idx[k] + 1] += 1
    for f in range(n_features):
        t_ptr[f + 1] += t_ptr[f]
    for b in range(rows.shape[0]):  # t_ptr[f] runs ahead as feature f fills
        i = rows[b]
        for k in range(ptr[i], ptr[i + 1]):
            f = idx[k]
            t_idx[t_ptr[f]] = b
            t_val[t_ptr[f]] = val[k]
            t_ptr[f] += 1
    for f in range(n_features, 0, -1):
        t_ptr[f] = t_ptr[f - 1]
    t_ptr[0] = 0


@njit(**JIT)
def csr_row_sq_norms(indptr, data, out):
    """``out[i]`` = the sum of the squared stored values of row i of a CSR
    matrix (its squared norm when canonical), summed in order, with no
    temporary array (numpy's square-then-reduceat made two, whose page
    faults cost ten times the arithmetic)."""
    for i in range(out.shape[0]):
        acc = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            acc += data[k] * data[k]
        out[i] = acc


_TILE = 64


@njit(**PJIT)
def transpose_into(src, dst):
    """``dst[...] = src.T`` by 64 x 64 tiles (each read and written a cache
    line at a time), the tile rows of dst in parallel: the mirror of a
    symmetric Gram block."""
    m, p = src.shape
    for tj in prange((p + _TILE - 1) // _TILE):
        j0 = tj * _TILE
        j1 = min(p, j0 + _TILE)
        for i0 in range(0, m, _TILE):
            i1 = min(m, i0 + _TILE)
            for j in range(j0, j1):
                row = dst[j]
                for i in range(i0, i1):
                    row[i] = src[i, j]
