"""Exact residual norms without densifying a sparse A.

For GMR, ||A - C X R||_F^2 = ||A||_F^2 - 2 <X, C^T A R^T> + ||C X R||_F^2;
for a low-rank factorization with orthonormal U, V,
||A - U diag(s) V^T||_F^2 = ||A||_F^2 - 2 sum_i s_i u_i^T A v_i + sum_i s_i^2.

Squares of entries above about 1e154 overflow and below about 1e-154
underflow, so no factor is squared as given: a factor far from 1 is scaled by
the power of two that brings its largest magnitude into [0.5, 1) (exact: only
the exponents change), the terms are brought to one common power of two
before they are squared and added, and the exponent is put back on the final
norm.
Squared quantities are therefore carried as pairs ``(value, e)`` meaning
``value * 4**e``, with ``e = None`` for an exact zero.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from ._validation import as_matrix
from ._gmr import check_core, check_gmr_inputs, out_dtype
from ._linalg import exact_core, range_factors

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ._validation import MatrixLike

__all__ = ["gmr_residual", "gmr_error_ratio", "lowrank_residual"]

# ||A||_F^2 - ||B||_F^2 loses about log10(||A||^2 / result) digits to
# cancellation; below this fraction of ||A||_F^2 the outside part is
# recomputed directly (1e-8 keeps about 8 digits, the residual about 8 too).
_CANCELLATION_RTOL = 1e-8
# Entries of a dense row block in the direct computation (8 MB of float64).
_BLOCK_ENTRIES = 1 << 20
# A whose largest magnitude lies in [2^-512, 2^512] is multiplied by thin
# factors as it is (its products with factors of magnitude <= 1 neither
# overflow nor fall to subnormal numbers); outside that range a copy scaled
# by a power of two is used instead.
_UNSCALED_EXPONENTS = 512
# When the largest magnitude of a float64 A is in [2^-448, 2^448], its squares
# do not overflow even summed over 2^63 entries, and the entries whose squares
# underflow are below 2^-62 times the largest (squares below 2^-124 of its
# square): there ||A||_F^2 is summed as it is, without a scaled copy.
_PLAIN_SQUARES_EXPONENTS = 448
# Factors (C, X, R; U, s, Vt) whose largest magnitude is within 2^+-128 are
# used as they are: a product of three of them, and its square (the Gram term
# of lowrank_residual), stay within 2^+-800 times powers of the dimensions.
_UNSCALED_FACTOR_EXPONENTS = 128


# ---- exact scaling by powers of two -------------------------------------------


def _exponent(x):
    """The ``e`` with ``max|x|`` in ``[2**(e-1), 2**e)``, or None when x is zero."""
    if x.size == 0:
        return None
    big = max(-float(x.min()), float(x.max()))
    if not math.isfinite(big):  # only sums of duplicate sparse entries get here
        raise ValueError("A must not contain NaN or Inf (its duplicate entries sum to Inf)")
    return math.frexp(big)[1] if big > 0 else None


def _times_pow2(x, k):
    """``x * 2**k`` for an int k, exact wherever the result is a normal
    number (as ``np.ldexp``, which is several times slower than a product)."""
    while k > 1023:  # 2**k itself would overflow; the partial products are exact
        x, k = x * 2.0**1023, k - 1023
    while k < -1022:  # only results at the subnormal level are rounded twice
        x, k = x * 2.0**-1022, k + 1022
    return x * 2.0**k


def _normalized(x):
    """``(x * 2**-e, e)`` in float64 with the largest magnitude of
    ``x * 2**-e`` in [0.5, 1), or within 2**+-_UNSCALED_FACTOR_EXPONENTS
    with e = 0 (x as it is, no copy); ``(x, None)`` for a zero x."""
    x = np.asarray(x, dtype=np.float64)
    e = _exponent(x)
    if e is None:
        return x, None
    if abs(e) <= _UNSCALED_FACTOR_EXPONENTS:
        return x, 0
    return _times_pow2(x, -e), e


def _max_exponent(*exponents):
    known = [e for e in exponents if e is not None]
    return max(known) if known else None


def _rescale(value, e_from, e_to):
    """``value * 4**e_from`` in units of ``4**e_to`` (0 when e_from is None,
    inf when it exceeds the float range)."""
    if e_from is None:
        return 0.0
    try:
        return math.ldexp(value, 2 * (e_from - e_to))
    except OverflowError:
        return math.inf


def _common(*terms):
    """The sum of squared quantities ``(value, e)`` as one ``(value, e)``."""
    e = _max_exponent(*(t[1] for t in terms))
    if e is None:
        return 0.0, None
    return sum(_rescale(v, t, e) for v, t in terms), e


def _root(value, e):
    """``sqrt(value * 4**e)``: inf only when the norm itself exceeds float64."""
    if e is None:
        return 0.0
    try:
        return math.ldexp(math.sqrt(max(value, 0.0)), e)
    except OverflowError:
        return math.inf


def _sum_of_squares(x):
    """``sum(x**2)`` of a small dense float64 array."""
    return float(np.einsum("ij,ij->", x, x)) if x.ndim == 2 else float(x @ x)


class _ScaledMatrix:
    """A dense or sparse A as ``A = 2**shift * work`` with its size ``e``
    (``max|A|`` in ``[2**(e-1), 2**e)``, None for a zero A) and
    ``norm2 = ||A 2**-e||_F^2``.

    Duplicate sparse entries are summed first (on a copy).  ``work`` is A
    itself when e is within +-_UNSCALED_EXPONENTS, else a scaled copy.
    """

    def __init__(self, A):
        if sp.issparse(A) and not A.has_canonical_format:
            A = A.copy()
            A.sum_duplicates()
        data = A.data if sp.issparse(A) else A.ravel(order="K")
        self.e = _exponent(data)
        self.norm2 = 0.0 if self.e is None else self._norm2(data, self.e)
        self.work, self.shift = A, 0
        if self.e is not None and abs(self.e) > _UNSCALED_EXPONENTS:
            self.shift = self.e
            if sp.issparse(A):
                self.work = A.copy()
                self.work.data = _times_pow2(A.data, -self.e)
            else:
                self.work = _times_pow2(A, -self.e)

    @staticmethod
    def _norm2(data, e):
        if data.dtype == np.float64 and abs(e) <= _PLAIN_SQUARES_EXPONENTS:
            return math.ldexp(float(data @ data), -2 * e)  # the same sum, 4**e times larger
        total = 0.0
        for i0 in range(0, data.shape[0], _BLOCK_ENTRIES):
            chunk = _times_pow2(np.asarray(data[i0:i0 + _BLOCK_ENTRIES], dtype=np.float64), -e)
            total += float(chunk @ chunk)
        return total

    def row_blocks(self, e):
        """Dense float64 row blocks ``(i0, i1, A[i0:i1] * 2**-e)`` of about
        _BLOCK_ENTRIES entries each."""
        A = self.work
        if sp.issparse(A) and A.format != "csr":
            A = A.tocsr()
        m, n = A.shape
        step = max(1, _BLOCK_ENTRIES // max(n, 1))
        for i0 in range(0, m, step):
            i1 = min(m, i0 + step)
            block = A[i0:i1]
            block = block.toarray() if sp.issparse(block) else block
            yield i0, i1, _times_pow2(np.asarray(block, dtype=np.float64), self.shift - e)


# ---- GMR residuals (gmr_residual, gmr_error_ratio) -------------------------


class _GMRSplit:
    """The split ||A - C X R||_F^2 = outside + inside(X) for every X.

    With thin QRs C = Q_C T_C, R^T = Q_R T_R and B = Q_C^T A Q_R,
    C X R = Q_C (T_C X T_R^T) Q_R^T, and by orthogonality
    ``outside = ||A - Q_C B Q_R^T||_F^2 = ||A||_F^2 - ||B||_F^2`` (the part of A
    outside range(C) x range(R^T), the same for every X) and
    ``inside(X) = ||B - T_C X T_R^T||_F^2`` (small, no cancellation).  This is
    the identity ||A||^2 - 2 <X, C^T A R^T> + ||C X R||^2 with the Gram
    matrices C^T C = T_C^T T_C and R R^T = T_R^T T_R kept as factors.

    The factors are those of C, R scaled by powers of two (``C = 2**e_C C1``,
    see _normalized), so ``T_C`` here is T_C 2**-e_C, ``T_R`` is T_R 2**-e_R,
    and ``B`` is stored in units of 2**e_A.
    """

    def __init__(self, A, C, R):
        self.eps = np.finfo(out_dtype(A, C, R)).eps
        self.shape_c, self.shape_r = C.shape, R.shape
        self.A = _ScaledMatrix(A)
        C1, self.e_C = _normalized(C)
        R1, self.e_R = _normalized(R)
        self.Q_C, self.T_C, self.Q_R, self.T_R, B = range_factors(self.A.work, C1, R1)
        e_A = self.A.e
        self.B = B if e_A is None else _times_pow2(B, self.A.shift - e_A)
        self._outside = None

    def inside(self, X1, e_X):
        """``||B - T_C X T_R^T||_F^2`` for ``X = 2**e_X X1`` as ``(value, e)``."""
        e_A, e_P = self.A.e, None
        if None not in (self.e_C, e_X, self.e_R):
            shift = self.e_C + e_X + self.e_R
            P = (self.T_C @ X1) @ self.T_R.T  # C X R in B's coordinates, units 2**shift
            e_P = _exponent(P)
            if e_P is not None:
                e_P += shift
        e = _max_exponent(e_A, e_P)
        if e is None:
            return 0.0, None
        D = np.zeros_like(self.B) if e_A is None else _times_pow2(self.B, e_A - e)
        if e_P is not None:
            D = D - _times_pow2(P, shift - e)
        return _sum_of_squares(D), e

    def optimum(self):
        """X* = C^+ A R^+ with gmr's default rank tolerance, as ``(X1, e_X)``."""
        if None in (self.A.e, self.e_C, self.e_R):
            return np.zeros((self.shape_c[1], self.shape_r[0])), None
        X1 = exact_core(
            self.T_C, self.T_R, self.B, self.shape_c, self.shape_r, None, self.eps
        )
        return X1, self.A.e - self.e_C - self.e_R

    def outside(self, floor):
        """``||A - Q_C B Q_R^T||_F^2`` as ``(value, e_A)``; recomputed
        directly, one row block of A at a time, when the total
        ``outside + floor`` is below ``_CANCELLATION_RTOL`` of ||A||_F^2
        (``floor`` = the smallest inside part that will be added)."""
        e_A = self.A.e
        if self._outside is None:
            norm2 = self.A.norm2
            if e_A is None:
                fast = 0.0
            else:
                fast = norm2 - _sum_of_squares(self.B)
                if fast + _rescale(*floor, e_A) < _CANCELLATION_RTOL * norm2:
                    fast = self._outside_direct()
            self._outside = max(fast, 0.0)
        return self._outside, e_A

    def _outside_direct(self):
        W = self.B @ self.Q_R.T  # Q_C^T-coordinates of the projection, (k_c, n)
        total = 0.0
        for i0, i1, block in self.A.row_blocks(self.A.e):
            D = block - self.Q_C[i0:i1] @ W
            total += _sum_of_squares(D)
        return total


def gmr_residual(A: MatrixLike, C: MatrixLike, X: ArrayLike, R: MatrixLike) -> float:
    """Residual ``||A - C X R||_F`` without forming an m x n matrix.

    Parameters
    ----------
    A : array_like or scipy.sparse matrix of shape (m, n)
        Dense or sparse (CSR/CSC; duplicate entries are summed).
    C : array_like of shape (m, c)
    X : array_like of shape (c, r)
    R : array_like of shape (r, n)

    Returns
    -------
    float
        ``||A - C X R||_F``, computed in float64.

    Raises
    ------
    TypeError
        If an input is not numeric, or X is sparse.
    ValueError
        If the shapes do not agree, a dimension is empty, or an input holds
        NaN or Inf (for a sparse A, also after its duplicate entries are summed).

    See Also
    --------
    gmr_error_ratio, sketchlab.gmr, sketchlab.fast_gmr

    Notes
    -----
    ``||A - C X R||_F^2 = ||A||_F^2 - 2 <X, C^T A R^T> + ||C X R||_F^2``,
    evaluated with the thin QRs C = Q_C T_C, R^T = Q_R T_R as
    ``(||A||_F^2 - ||B||_F^2) + ||B - T_C X T_R^T||_F^2`` with
    B = Q_C^T A Q_R: only the first, X-independent term can cancel.  When
    the result falls below 1e-8 of ||A||_F^2 that term is recomputed
    directly as ``||A - Q_C B Q_R^T||_F^2``, one row block of A (about 8 MB
    dense) at a time, so memory stays bounded and the result exact.

    A, C, X and R are each scaled by a power of two (exactly) before anything
    is squared, so data near 1e300 or 1e-300 neither overflows nor
    underflows: ``gmr_residual(t A, t C, X, R) = t gmr_residual(A, C, X, R)``
    to rounding for any t > 0.  The result is accurate to about eps times
    ``max(||A||_F, ||C|| ||X|| ||R||)``; it is ``inf`` only when the residual
    itself exceeds the float64 range.

    Cost: O(m c^2 + n r^2) for the QRs, one product with A
    (O(nnz(A) min(c, r))), O(c r (c + r)) for the small terms; the direct
    fallback adds O(m n min(c, r)) time.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> rng = np.random.default_rng(0)
    >>> A, C, R = rng.normal(size=(20, 15)), rng.normal(size=(20, 3)), rng.normal(size=(2, 15))
    >>> X = rng.normal(size=(3, 2))
    >>> r = sketchlab.gmr_residual(A, C, X, R)
    >>> bool(np.isclose(r, np.linalg.norm(A - C @ X @ R)))
    True
    """
    A, C, R = check_gmr_inputs(A, C, R)
    X = check_core(X, C, R, "X")
    split = _GMRSplit(A, C, R)
    inside = split.inside(*_normalized(X))
    return _root(*_common(split.outside(inside), inside))


def gmr_error_ratio(A: MatrixLike, C: MatrixLike, X: ArrayLike, R: MatrixLike,
                    X_opt: ArrayLike | None = None) -> float:
    """Error ratio ``||A - C X R||_F / ||A - C X* R||_F - 1`` (the paper's error ratio).

    Parameters
    ----------
    A : array_like or scipy.sparse matrix of shape (m, n)
    C : array_like of shape (m, c)
    X : array_like of shape (c, r)
        The solution to rate, e.g. from :func:`sketchlab.fast_gmr`.
    R : array_like of shape (r, n)
    X_opt : array_like of shape (c, r), optional
        The reference solution; default ``X* = C^+ A R^+`` as
        :func:`sketchlab.gmr` computes it (in float64, from the same
        factorizations, at no extra pass over A).

    Returns
    -------
    float
        The ratio, >= 0 up to rounding when X_opt is the optimum.  When the
        reference residual is zero: 0.0 if the residual of X is zero too,
        else ``inf``.

    Raises
    ------
    TypeError
        If an input is not numeric, or X (X_opt) is sparse.
    ValueError
        If the shapes do not agree, a dimension is empty, or an input holds
        NaN or Inf (for a sparse A, also after its duplicate entries are summed).

    See Also
    --------
    gmr_residual

    Notes
    -----
    Both residuals share the outside part ``e = ||A - Q_C B Q_R^T||_F^2``
    (see :func:`gmr_residual`), so with the inside parts ``i`` (of X) and
    ``i*`` (of X_opt) and ``t = (i - i*) / (e + i*)`` the ratio is
    ``sqrt(1 + t) - 1 = t / (sqrt(1 + t) + 1)``, accurate even for ratios far
    below the rounding of either residual.  The three parts are taken in one
    power-of-two unit, so the ratio does not depend on the scale of A (or of
    C, X, R).  Theorem 1 bounds it by eps with probability 0.95 for large
    enough sketches.  Same cost as :func:`gmr_residual`.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> rng = np.random.default_rng(0)
    >>> A = rng.normal(size=(300, 200))
    >>> C, R = A @ rng.normal(size=(200, 5)), rng.normal(size=(5, 300)) @ A
    >>> X, = sketchlab.fast_gmr(A, C, R, sketch_size=(50, 50), sketch="gaussian", rng=0)
    >>> ratio = sketchlab.gmr_error_ratio(A, C, X, R)
    >>> bool(0 <= ratio < 0.1)
    True
    """
    A, C, R = check_gmr_inputs(A, C, R)
    X = check_core(X, C, R, "X")
    split = _GMRSplit(A, C, R)
    if X_opt is None:
        X_opt = split.optimum()
    else:
        X_opt = _normalized(check_core(X_opt, C, R, "X_opt"))
    inside, inside_opt = split.inside(*_normalized(X)), split.inside(*X_opt)
    e = _max_exponent(inside[1], inside_opt[1])
    # mypy lets an unpacked Any (*inside) fill every parameter, so e seems one too many
    floor = min(_rescale(*inside, e), _rescale(*inside_opt, e))  # type: ignore[call-arg]
    outside = split.outside((floor, e))
    # the three parts in one unit: the ratio does not depend on the scale of A
    e = _max_exponent(e, outside[1])
    outside, inside, inside_opt = (_rescale(*p, e)  # type: ignore[call-arg]  # as above
                                   for p in (outside, inside, inside_opt))
    denominator = outside + inside_opt
    if denominator == 0.0:
        return 0.0 if outside + inside == 0.0 else float("inf")
    t = max((inside - inside_opt) / denominator, -1.0)
    return float(t / (np.sqrt(1.0 + t) + 1.0))


# ---- low-rank residual (lowrank_residual) -----------------------------------
# The expansion below reuses _ScaledMatrix, _CANCELLATION_RTOL and
# _BLOCK_ENTRIES of the GMR section: same norm, same cancellation rule.


def lowrank_residual(A: MatrixLike, U: ArrayLike, s: ArrayLike, Vt: ArrayLike) -> float:
    """Exact ``||A - U diag(s) Vt||_F`` without densifying A.

    Parameters
    ----------
    A : array_like or scipy.sparse matrix of shape (m, n)
    U : array_like of shape (m, q)
    s : array_like of shape (q,)
    Vt : array_like of shape (q, n)
        Any factors; U and Vt need not be orthonormal.

    Returns
    -------
    float
        The Frobenius norm of the residual, computed in float64.

    Raises
    ------
    ValueError
        Shapes that do not match, NaN or Inf in any input (for a sparse A, also
        after its duplicate entries are summed).
    TypeError
        Non-numeric input, sparse U or Vt.

    Notes
    -----
    Expands ``||A - U S V^T||_F^2 = ||A||_F^2 - 2 sum_i s_i u_i^T A v_i +
    s^T ((U^T U) o (V^T V)) s`` (``o`` the entrywise product; for orthonormal
    U, V the last term is ``sum_i s_i^2``).  Cost: one product
    ``A V`` (O(nnz(A) q)) and O((m + n) q^2).  When the result falls below
    1e-8 of ``||A||_F^2`` the expansion has lost too many digits to
    cancellation and the residual is recomputed directly, one dense row block
    of ``A - U S V^T`` at a time (O(m n q), memory of one block).  A, U, s
    and Vt are scaled by powers of two (exactly) before anything is squared,
    so entries near 1e300 or 1e-300 neither overflow nor underflow and
    ``lowrank_residual(t A, U, t s, Vt) = t lowrank_residual(A, U, s, Vt)``
    to rounding.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, sketchlab
    >>> gen = np.random.default_rng(0)
    >>> A = sp.random(60, 40, density=0.1, format="csr", random_state=gen)
    >>> U, s, Vt = np.linalg.svd(A.toarray(), full_matrices=False)
    >>> r = sketchlab.lowrank_residual(A, U[:, :5], s[:5], Vt[:5])
    >>> bool(np.isclose(r, np.sqrt((s[5:] ** 2).sum())))
    True
    """
    A = as_matrix(A, "A")
    U = as_matrix(U, "U", sparse=False)
    Vt = as_matrix(Vt, "Vt", sparse=False)
    s = np.asarray(s)
    if s.dtype == object or s.dtype.kind not in "biuf":
        raise TypeError(f"s must be a real numeric array, got dtype {s.dtype}")
    if s.ndim != 1:
        raise ValueError(f"s must be 1-D, got an array of shape {s.shape}")
    if not np.isfinite(s).all():
        raise ValueError("s must not contain NaN or Inf")
    m, n = A.shape
    q = s.shape[0]
    if U.shape != (m, q):
        raise ValueError(f"U must have shape (A.shape[0], len(s)) = ({m}, {q}), got {U.shape}")
    if Vt.shape != (q, n):
        raise ValueError(f"Vt must have shape (len(s), A.shape[1]) = ({q}, {n}), got {Vt.shape}")
    A = _ScaledMatrix(A)
    U1, e_U = _normalized(U)
    s1, e_s = _normalized(s)
    V1, e_V = _normalized(Vt)
    if None in (e_U, e_s, e_V):  # U diag(s) Vt = 0
        return _root(A.norm2, A.e)
    # U diag(s) Vt = 2**e_L U1 diag(s1) V1; every term is taken in units of
    # 4**e with e the larger of the sizes of A and of the factors
    e_L = e_U + e_s + e_V
    e = _max_exponent(A.e, e_L)
    norm2 = _rescale(A.norm2, A.e, e)
    AV = _times_pow2(np.asarray(A.work @ V1.T, dtype=np.float64), A.shift - e)  # one pass over A
    cross = math.ldexp(float(np.einsum("ij,ij->j", U1, AV) @ s1), e_L - e)
    gram = math.ldexp(float(s1 @ ((U1.T @ U1) * (V1 @ V1.T)) @ s1), 2 * (e_L - e))
    res2 = norm2 - 2.0 * cross + gram
    if res2 < _CANCELLATION_RTOL * norm2:
        res2 = _lowrank_direct(A, _times_pow2(U1 * s1, e_L - e), V1, e)
    return _root(res2, e)


def _lowrank_direct(A, US, Vt, e):
    """``||A - US Vt||_F^2`` in units of 4**e (A a _ScaledMatrix, US in
    units of 2**e), one dense row block at a time."""
    total = 0.0
    for i0, i1, block in A.row_blocks(e):
        total += _sum_of_squares(block - US[i0:i1] @ Vt)
    return total
