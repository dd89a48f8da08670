"""Traces, diagonals and effective dimensions of a matrix seen only through
its products, each with an error estimate.

:func:`estimate_trace` and :func:`estimate_diagonal` follow Epperly, Tropp
and Webber, "XTrace: making the most of every sample in stochastic trace
estimation" (SIAM J. Matrix Anal. Appl. 45, 2024; arXiv 2301.07825), and
Meyer, Musco, Musco and Woodruff, "Hutch++: optimal stochastic trace
estimation" (SOSA 2021; arXiv 2010.09649).  Every method splits A into a
low-rank part, whose trace is computed exactly from a basis Q of the range
of ``A Omega``, and the rest, whose trace is a Hutchinson estimate
``omega^T (I - P) A (I - P) omega``.  XTrace and XNysTrace use every test
vector for both parts by leaving it out of the basis that deflates it (the
exchangeability principle): with m test vectors they average m estimates,
the i-th built from the basis of the other m - 1.

How the leave-one-out bases are had cheaply (our notation; the paper's
Section 2): with ``Y = A Omega = Q R`` (Q orthonormal, r x m coefficients
R), the range of ``Y`` without column i is that of Q without the direction
``Q s_i``, ``s_i`` the unit vector along ``R^-T e_i`` (orthogonal to every
other column of R).  For XNysTrace the Nystrom approximation ``A<Omega> = Y
(Omega^T Y)^-1 Y^T`` loses the rank-one term ``Y H^-1 e_i e_i^T H^-1 Y^T /
(H^-1)_ii`` (``H = Omega^T Y``) when column i is left out, and its residual
at ``omega_i`` is then that term alone, since the full approximation
interpolates A on the columns of Omega.

The error estimates: the m leave-one-out estimates are exchangeable, not
independent (each pair shares m - 2 test vectors), so their standard error
``std / sqrt(m)`` (the paper's estimate) is too small: on the paper's six
spectra (200 trials, budgets 20 to 300) covering 90% of the errors would
have taken it times 9 (XNysTrace, fast decay) to 14 (XTrace with as many
test vectors as a step's rank).  The estimate returned for XTrace and
XNysTrace is instead the delete-one jackknife over the test vectors: the
spread of the m estimates the method gives without test vector j, each a
mean of leave-two-out estimates, all m^2 of them from m x m algebra
(``_xtrace_jackknife``, ``_xnystrace_jackknife``: O(m^3), no products);
it sees the whole estimator vary, common errors included.  It is
multiplied by a factor (``_coverage_factor``) chosen so that it covered
the true error in at least 90% of the trials of every spectrum and budget
of that sweep (see the constants below and ``tests/test_trace.py``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ._linalg import cholesky, default_rtol, lower_inverse, lower_solve, lower_transpose_solve
from ._linalg import eigvalsh, gram_t, product, qr, spd_solver, square_safe_exponent, svd
from ._linear_map import LinearMap, as_linear_map
from ._results import result_type, warn_unconverged
from ._rpcholesky import block_rpcholesky
from ._validation import as_generator, check_choice, check_int, check_positive, check_tol

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["estimate_trace", "estimate_diagonal", "effective_dimension", "TraceResult",
           "DiagonalResult", "EffectiveDimensionResult", "TRACE_METHODS", "DIAGONAL_METHODS",
           "TEST_VECTORS", "factor_effective_dimension", "FactorEffectiveDimension",
           "rpcholesky_for_rank", "is_auto"]

TRACE_METHODS = ("xtrace", "xnystrace", "hutch++", "hutchinson")
DIAGONAL_METHODS = ("xdiag", "hutchinson")
TEST_VECTORS = ("improved", "rademacher", "gaussian")

# each method's test vectors unless asked otherwise: the paper's improved
# (uniform on the sphere of radius sqrt(n), then rescaled per estimate) for
# XTrace and XNysTrace, random signs for the others (XDiag needs
# omega_i * omega_i = 1 entrywise)
_DEFAULT_VECTORS = {"xtrace": "improved", "xnystrace": "improved", "hutch++": "rademacher",
                    "hutchinson": "rademacher", "xdiag": "rademacher"}

# fewest products of a fixed budget (at least two estimates to spread)
_MIN_MATVECS = {"xtrace": 4, "xnystrace": 2, "hutch++": 4, "hutchinson": 2, "xdiag": 4}

# The error estimate returned: the standard error (XTrace, XNysTrace: the
# jackknife's; the others: of their independent Hutchinson samples; XDiag:
# of each entry's m estimates) times ``_COVERAGE_FACTOR`` times the 95%
# quantile of Student's t with m - 1 degrees of freedom (m samples; approximated
# by 1.645 + 2.3 / (m - 1), within 4% from m = 4 on): a two-sided 90% interval
# for independent normal samples, widened by the factor.  The factor was
# chosen on the XTrace paper's six spectra (n = 1,000, budgets 20 to 300, 100
# trials each): the 90% quantiles of |error| / standard error were at most 2.1
# for XTrace and 1.6 for XNysTrace (both on the flat spectrum), 2.2 for Hutch++
# and 2.1 for Hutchinson (at the fewest samples), and the factor's estimate
# (2.3 to 2.8) covered the true error in at least 90% of the trials of every
# spectrum and budget; 1.3 left Hutch++ and Hutchinson at 88% on two budgets
# of a 50-trial run.
_COVERAGE_FACTOR = 1.4
# no trace is known better than this many eps times n times its samples'
# mean magnitude (rounding: the estimates of a matrix captured whole by the
# sketch differ only by it, and their spread says nothing)
_TRACE_ROUNDING = 1.0


def _coverage_factor(samples: int) -> float:
    """The factor on a standard error from ``samples`` samples."""
    return _COVERAGE_FACTOR * (1.645 + 2.3 / max(samples - 1, 1))


# The 2-norm error of a diagonal: the norm of the entries' standard errors
# times this factor (a sum of n squared errors concentrates: 1.5 covered the
# error in every trial of 30 at 40, 100 and 200 products on each of the six
# spectra, where the entries' factor would have been twice too wide).
_DIAGONAL_NORM_FACTOR = 1.5
# an entry's error estimate is at least this many eps ||A||_F (rounding)
_ROUNDING_FLOOR = 10.0

# tol= runs: products of the first round, then doubled each round
_FIRST_ROUND = 16
_DEFAULT_TOL = 1e-2
# identity columns per product when the trace or diagonal is computed exactly
_EXACT_BLOCK = 256


if TYPE_CHECKING:
    class _TraceFields(NamedTuple):
        trace: Any

    class TraceResult(_TraceFields):
        error_estimate: float
        matvecs: int
        method: str
        converged: bool

        def __new__(cls, trace: Any, *, error_estimate: float = ..., matvecs: int = ...,
                    method: str = ..., converged: bool = ...) -> TraceResult: ...

    class _DiagonalFields(NamedTuple):
        diagonal: NDArray[np.floating]

    class DiagonalResult(_DiagonalFields):
        error_estimate: float
        entry_errors: NDArray[np.float64]
        matvecs: int
        method: str
        converged: bool

        def __new__(cls, diagonal: NDArray[np.floating], *, error_estimate: float = ...,
                    entry_errors: NDArray[np.float64] = ..., matvecs: int = ...,
                    method: str = ..., converged: bool = ...) -> DiagonalResult: ...

    class _EffectiveDimensionFields(NamedTuple):
        effective_dimension: float

    class EffectiveDimensionResult(_EffectiveDimensionFields):
        error_estimate: float
        bounds: tuple[float, float]
        matvecs: int
        rank: int
        converged: bool

        def __new__(cls, effective_dimension: float, *, error_estimate: float = ...,
                    bounds: tuple[float, float] = ..., matvecs: int = ..., rank: int = ...,
                    converged: bool = ...) -> EffectiveDimensionResult: ...

else:
    TraceResult = result_type(
        "TraceResult", ("trace",),
        {"error_estimate": None, "matvecs": 0, "method": None, "converged": True},
        """An estimate of ``tr(A)``: unpacks as ``trace,``.

        Attributes
        ----------
        trace : numpy.float64 or numpy.float32
            The estimate (A's dtype: float32 for float32 A).
        error_estimate : float
            An estimate of ``|trace - tr(A)|``, calibrated to cover the true
            error in about 90% of runs (see :func:`estimate_trace`, Notes);
            0.0 when the trace was computed exactly.
        matvecs : int
            Products with A (vectors) used.
        method : str
            The method used.
        converged : bool
            With ``tol``: whether ``error_estimate <= tol |trace|`` was met
            within the budget; True for a fixed budget.
        """)

    DiagonalResult = result_type(
        "DiagonalResult", ("diagonal",),
        {"error_estimate": None, "entry_errors": None, "matvecs": 0, "method": None,
         "converged": True},
        """An estimate of the diagonal of A: unpacks as ``diagonal,``.

        Attributes
        ----------
        diagonal : ndarray of shape (n,)
            The estimate (float32 for float32 A).
        error_estimate : float
            An estimate of ``||diagonal - diag(A)||_2`` (calibrated as the
            trace estimates; 0.0 when computed exactly).
        entry_errors : ndarray of shape (n,)
            The same for each entry (the standard error of that entry's m
            estimates times the same factor).
        matvecs : int
            Products with A or A^T (vectors) used.
        method : str
            The method used.
        converged : bool
            With ``tol``: whether ``error_estimate <= tol ||diagonal||_2`` was
            met within the budget; True for a fixed budget.
        """)

    EffectiveDimensionResult = result_type(
        "EffectiveDimensionResult", ("effective_dimension",),
        {"error_estimate": None, "bounds": None, "matvecs": 0, "rank": 0, "converged": True},
        """An estimate of ``d_eff = tr(K (K + alpha I)^-1)``: unpacks as
        ``effective_dimension,``.

        Attributes
        ----------
        effective_dimension : float
            The estimate.
        error_estimate : float
            An estimate of ``|effective_dimension - d_eff|`` (see
            :func:`effective_dimension`, Notes).
        bounds : (float, float)
            ``(lower, upper)`` with ``lower <= d_eff <= upper``: guaranteed
            (up to rounding) when ``tr(K)`` is known exactly (a matrix, a
            kernel oracle, ``gram=True``); with an estimated ``tr(K)`` the
            upper bound carries that estimate's error.
        matvecs : int
            Products with K (vectors; ``gram=True``: products with A or
            A^T, two per vector of ``A^T A``).
        rank : int
            Columns of the Nystrom approximation the estimate rests on.
        converged : bool
            Whether ``error_estimate <= tol * effective_dimension`` was met
            within the budget.
        """)


# ---- the products -------------------------------------------------------------------


class _Products:
    """A square map, the random test vectors and the products with them.

    Products come back in float64, multiplied by ``2**-exp``, a power of
    two fixed at the first product (0 unless its largest entry lies outside
    (1e-140, 1e140)): an exact rescaling, so that squares and sums of the
    products neither over- nor underflow whatever the scale of A.
    """

    def __init__(self, op: LinearMap, gen: np.random.Generator, gram: bool = False):
        self.op, self.gen, self.gram = op, gen, gram
        self.n = op.shape[1]
        self.dtype = op.dtype
        self.eps = float(np.finfo(op.dtype).eps)
        self.exp: int | None = None
        self.start = op.matvecs

    @property
    def used(self) -> int:
        return self.op.matvecs - self.start

    def vectors(self, kind: str, m: int) -> NDArray[np.float64]:
        """m test vectors (n x m), as multiplied (rounded to A's dtype)."""
        n = self.n
        if kind == "rademacher":
            Om = self.gen.integers(0, 2, size=(n, m)).astype(np.float64)
            Om = 2.0 * Om - 1.0
        else:
            Om = self.gen.standard_normal((n, m))
            if kind == "improved":
                Om *= math.sqrt(n) / np.linalg.norm(Om, axis=0)
        return Om.astype(self.dtype).astype(np.float64)

    def times(self, X: NDArray[np.float64], adjoint: bool = False) -> NDArray[np.float64]:
        """``A X`` (``A^T X``), float64, scaled by ``2**-exp``."""
        if X.shape[1] == 0:
            return np.zeros((self.op.shape[0], 0))
        Xp = np.ascontiguousarray(X, dtype=self.dtype)
        if self.gram:  # A^T A X, one pass (two products per vector)
            Y = self.op.normal(Xp)
        else:
            Y = (self.op.rmatmat if adjoint else self.op.matmat)(Xp)
        Y = np.asarray(Y, dtype=np.float64)
        if not np.isfinite(Y).all():
            raise ValueError("the products with A are not finite (NaN or Inf in A, or it "
                             "overflows its dtype)")
        if self.exp is None:
            self.exp = square_safe_exponent(Y)
        return np.ldexp(Y, -self.exp) if self.exp else Y

    def unscale(self, value: Any) -> Any:
        """A value in the products' units back in A's."""
        return np.ldexp(value, self.exp) if self.exp else value

    def scale(self, value: float) -> float:
        """A value in A's units in the products' (``2**-exp`` times)."""
        return float(np.ldexp(value, -self.exp)) if self.exp else value


def _colsum(X, Y):
    """The column sums of the entrywise product ``X * Y``."""
    return np.einsum("ij,ij->j", X, Y)


def _new_directions(Q, Y, threshold):
    """Orthonormal directions of range(Y) not in range(Q): Y orthogonalized
    against Q twice (block Gram-Schmidt), then its directions with singular
    values above ``threshold`` (the rest is rounding)."""
    W = Y.copy()
    if Q.shape[1]:
        for _ in range(2):
            W -= product(Q, product(Q.T, W))
    if W.shape[1] > W.shape[0]:
        W = W[:, : W.shape[0]]
    Qw, Rw = qr(W)
    U, s, _ = svd(Rw)
    return product(Qw, U[:, s > threshold])


class _Deflation:
    """The test vectors ``Om``, ``Y = A Om``, an orthonormal basis Q of the
    numerical range of Y (grown block by block, old columns kept) and ``Z =
    A Q`` (``A^T Q`` with ``adjoint``): the products of XTrace and XDiag."""

    def __init__(self, P: _Products, kind: str, adjoint: bool = False):
        self.P, self.kind, self.adjoint = P, kind, adjoint
        n = P.n
        self.Om = np.zeros((n, 0))
        self.Y = np.zeros((n, 0))
        self.Q = np.zeros((n, 0))
        self.Z = np.zeros((n, 0))

    @property
    def m(self) -> int:
        return self.Om.shape[1]

    def grow(self, m: int) -> None:
        k = m - self.m
        if k <= 0:
            return
        Om = self.P.vectors(self.kind, k)
        Y = self.P.times(Om)
        self.Om = np.hstack([self.Om, Om])
        self.Y = np.hstack([self.Y, Y])
        n = self.P.n
        threshold = default_rtol((n, self.m), self.P.eps) * np.linalg.norm(self.Y)
        Qn = _new_directions(self.Q, Y, threshold)
        Zn = self.P.times(Qn, self.adjoint)
        self.Q = np.hstack([self.Q, Qn])
        self.Z = np.hstack([self.Z, Zn])

    def leave_one_out(self):
        """``R = Q^T Y``, ``W = Q^T Om``, the unit vectors ``s_i`` (columns of
        S, coordinates in Q): ``Q s_i`` is the direction of range(Y) that
        leaving column i out of Y removes, and ``Z = R^-T`` (S before
        normalization; None when S is 0).  When Y is numerically rank
        deficient (A of rank below m, up to rounding) every m - 1 of its
        columns span all of its range and S is 0."""
        Q = self.Q
        R = product(Q.T, self.Y)
        W = product(Q.T, self.Om)
        r, m = R.shape
        if r < m or m < 2:
            return R, W, np.zeros((r, m)), None, r
        U, s, Vt = svd(R)
        Z = product(U, Vt / s[:, None])  # R^-T
        return R, W, Z / np.linalg.norm(Z, axis=0), Z, r - 1


def _improved_scale(n, Om, W, sw, dim):
    """Per test vector, ``sqrt((n - dim) / ||(I - P_i) omega_i||^2)``, P_i the
    projection on the leave-one-out basis (of dimension ``dim``): the
    improved estimator's normalization (the paper's Section 2.2)."""
    resid = _colsum(Om, Om) - _colsum(W, W) + sw * sw
    resid = np.maximum(resid, 1e-300)
    return np.sqrt(max(n - dim, 1) / resid)


def _xtrace_estimates(D: _Deflation) -> tuple[NDArray[np.float64], float | None]:
    """The m leave-one-out estimates of XTrace (``A`` any square map)::

        t_i = tr(Q_i^T A Q_i) + u_i^T A u_i,   u_i = (I - Q_i Q_i^T) omega_i

    with ``Q_i Q_i^T = Q (I - s_i s_i^T) Q^T``, from ``H = Q^T A Q``, ``T =
    (A Q)^T Omega``, R and W (no more products); and the jackknife standard
    error of their mean (:func:`_xtrace_jackknife`; None when Y is rank
    deficient: the estimate is then exact up to rounding)."""
    R, W, S, Zinv, dim = D.leave_one_out()
    Om, Y = D.Om, D.Y
    Z = D.Z
    H = product(D.Q.T, Z)
    T = product(Z.T, Om)  # t_i = (A Q)^T omega_i
    jack = None if Zinv is None else _xtrace_jackknife(D, R, W, Zinv, H, T)
    sw = _colsum(S, W)
    if D.kind == "improved":
        scale = _improved_scale(D.P.n, Om, W, sw, dim)
        Om, Y, R, W, T, sw = (Om * scale, Y * scale, R * scale, W * scale, T * scale,
                              sw * scale)
    C = W - S * sw  # u_i = omega_i - Q c_i
    ests = (np.trace(H) - _colsum(S, product(H, S)) + _colsum(Om, Y) - _colsum(T, C)
            - _colsum(R, C) + _colsum(C, product(H, C)))
    return ests, jack


def _jackknife_error(replicates):
    """The delete-one jackknife's standard error from the m replicates."""
    m = replicates.size
    return math.sqrt((m - 1) / m * float(np.sum((replicates - replicates.mean()) ** 2)))


def _pairs(X):
    """``(X[i, i] for each row, X[j, i] at [i, j])``: the two coordinates of
    column i on the pair basis (i, j), as m x m arrays indexed [i, j]."""
    return np.diag(X)[:, None] * np.ones((1, X.shape[1])), X.T


def _xtrace_jackknife(D, R, W, Z, H, T):
    """The delete-one jackknife standard error of XTrace's estimate: the
    spread of the m estimates ``T_-j`` that XTrace would give without test
    vector j, each the mean of the leave-two-out estimates ``t_i^(-j)``
    (i != j), whose basis leaves out the plane of ``z_i, z_j`` (columns of
    ``Z = R^-T``: the directions range(Y) loses with columns i and j).  All
    m^2 of them from m x m products in the basis Q, 2 x 2 solves entrywise:
    O(m^3) work, no products with A.  (The m leave-one-out estimates share
    their test vectors, so their own spread understates the error; the
    jackknife sees the whole estimator vary.)"""
    n, m = D.P.n, W.shape[1]
    Om, Y = D.Om, D.Y
    C = product(Z.T, Z)
    HZ = product(H, Z)
    F = product(Z.T, HZ)
    a0, a1 = _pairs(product(Z.T, W))  # Z_ij^T w_i
    b0, b1 = _pairs(product(Z.T, T))  # Z_ij^T t_i
    h0, h1 = _pairs(product(HZ.T, W))  # Z_ij^T H w_i
    cii, cjj = np.diag(C)[:, None], np.diag(C)[None, :]
    det = cii * cjj - C * C
    det = np.where(det > 0, det, np.inf)
    p0 = (cjj * a0 - C * a1) / det  # (Z_ij^T Z_ij)^-1 Z_ij^T w_i
    p1 = (cii * a1 - C * a0) / det
    fii, fjj = np.diag(F)[:, None], np.diag(F)[None, :]
    plane_trace = (cjj * fii - 2 * C * F + cii * fjj) / det  # tr of H on the plane
    # u = w_i - Z_ij p (coordinates in Q): u^T A u from the products at hand
    # (z_a . r_i = delta_ai: R's columns against R^-T's)
    quad = (_colsum(Om, Y)[:, None] - (_colsum(T, W)[:, None] - (b0 * p0 + b1 * p1))
            - (_colsum(R, W)[:, None] - p0)
            + _colsum(W, product(H, W))[:, None] - 2 * (h0 * p0 + h1 * p1)
            + fii * p0 * p0 + 2 * F * p0 * p1 + fjj * p1 * p1)
    if D.kind == "improved":
        kept = _colsum(Om, Om)[:, None] - _colsum(W, W)[:, None] + a0 * p0 + a1 * p1
        quad = quad * (max(n - m + 2, 1) / np.maximum(kept, 1e-300))
    loo2 = np.trace(H) - plane_trace + quad  # [i, j]: t_i^(-j)
    np.fill_diagonal(loo2, 0.0)
    return _jackknife_error(loo2.sum(axis=0) / (m - 1))


def _xnystrace_estimates(Om, Y, kind, eps) -> tuple[NDArray[np.float64], float | None]:
    """The m leave-one-out estimates of XNysTrace (A positive semidefinite)::

        t_i = tr(A<Omega_-i>) + omega_i^T (A - A<Omega_-i>) omega_i

    computed on ``A + nu I`` (a shift of rounding size that keeps ``H =
    Omega^T (A + nu I) Omega`` positive definite), ``nu n`` taken off."""
    n, m = Om.shape
    norm = float(np.linalg.norm(Y))
    if norm == 0.0:  # A Omega = 0: every estimate is 0
        return np.zeros(m), 0.0
    nu = eps * norm / math.sqrt(n)
    for _ in range(12):
        Yn = Y + nu * Om
        H = product(Om.T, Yn)
        H = (H + H.T) / 2
        try:
            L = cholesky(H)
        except np.linalg.LinAlgError:
            nu *= 10.0
            continue
        Linv = lower_inverse(L)
        if Linv is not None and np.isfinite(Linv).all():
            break
        nu *= 10.0
    else:
        raise ValueError("method='xnystrace' needs a positive semidefinite A: Omega^T A Omega "
                         "is not positive semidefinite (use method='xtrace')")
    Q, R = qr(Yn)
    # by triangular solves (not H^-1 formed: its rounding swamps tr(A<Omega>)
    # when H is ill-conditioned): B = R L^-T, so that A<Omega> = Q B B^T Q^T
    Bt = lower_solve(L, R.T)
    nystrom_trace = float(np.sum(Bt * Bt))
    # columns of R H^-1 = B L^-1 (Y H^-1 e_i in the basis Q), over sqrt((H^-1)_ii)
    Su = lower_transpose_solve(L, Bt).T
    S = Su / np.linalg.norm(Linv, axis=0)
    sw = _colsum(S, product(Q.T, Om))
    Ginv = None
    scale: Any = 1.0
    # ||(I - P_i) omega_i||^2 = 1 / (G^-1)_ii for the projection P_i on the
    # other test vectors (G = Omega^T Omega); the residual A - A<Omega_-i>
    # vanishes on them, so only that part of omega_i counts (G is positive
    # definite for m < n test vectors; were it not, the plain estimates)
    Gi = lower_inverse(cholesky(product(Om.T, Om))) if kind == "improved" else None
    if Gi is not None:
        Ginv = product(Gi.T, Gi)
        scale = (n - m + 1) * np.diag(Ginv)
    ests = nystrom_trace - _colsum(S, S) + scale * sw * sw - nu * n
    jack = _xnystrace_jackknife(n, nystrom_trace, Linv, Su, Ginv) if m > 2 else None
    return ests, jack


def _xnystrace_jackknife(n, nystrom_trace, Linv, Su, Ginv):
    """The delete-one jackknife standard error of XNysTrace's estimate (see
    :func:`_xtrace_jackknife`): without test vectors i and j the Nystrom
    approximation loses ``Y H^-1 E (E^T H^-1 E)^-1 E^T H^-1 Y^T`` (E the
    columns i, j of the identity), whose trace is ``tr(M^-1 N_ij)`` with M
    the i, j block of ``H^-1`` and N that of ``(R H^-1)^T (R H^-1)``, and
    the residual at omega_i is ``(M^-1)_00``: 2 x 2 algebra on m x m
    matrices.  (The shift nu n is the same in every replicate.)"""
    m = Su.shape[1]
    Hinv = product(Linv.T, Linv)
    N = product(Su.T, Su)
    hd, nd = np.diag(Hinv), np.diag(N)
    det = hd[:, None] * hd[None, :] - Hinv * Hinv
    det = np.where(det > 0, det, np.inf)
    lost = (hd[None, :] * nd[:, None] - 2 * Hinv * N + hd[:, None] * nd[None, :]) / det
    residual = hd[None, :] / det
    if Ginv is not None:
        gd = np.diag(Ginv)
        residual = residual * ((n - m + 2) * (gd[:, None] - Ginv * Ginv / gd[None, :]))
    loo2 = nystrom_trace - lost + residual  # [i, j]: t_i^(-j) + nu n
    np.fill_diagonal(loo2, 0.0)
    return _jackknife_error(loo2.sum(axis=0) / (m - 1))


# ---- the trace -----------------------------------------------------------------------


class _TraceRun:
    """One method's products, grown to a budget; ``estimate()`` gives the
    trace and its error estimate (in the scaled units of the products)."""

    def __init__(self, method: str, P: _Products, kind: str):
        self.method, self.P, self.kind = method, P, kind
        n = P.n
        if method == "xtrace":
            self.D = _Deflation(P, kind)
        elif method == "hutch++":
            self.D = _Deflation(P, kind)  # its basis part: Q and A Q
            self.G = np.zeros((n, 0))
            self.AG = np.zeros((n, 0))
        else:  # xnystrace, hutchinson: Omega and A Omega
            self.Om = np.zeros((n, 0))
            self.Y = np.zeros((n, 0))

    def grow(self, budget: int) -> None:
        """Test vectors for ``budget`` products in all (at most)."""
        if self.method == "xtrace":
            self.D.grow(budget // 2)
        elif self.method == "hutch++":
            k = budget // 3  # a third for the basis, a third for A Q, the rest Hutchinson
            self.D.grow(k)
            g = budget - 2 * k - self.G.shape[1]
            if g > 0:
                G = self.P.vectors(self.kind, g)
                self.AG = np.hstack([self.AG, self.P.times(G)])
                self.G = np.hstack([self.G, G])
        else:
            k = budget - self.Om.shape[1]
            if k > 0:
                Om = self.P.vectors(self.kind, k)
                self.Y = np.hstack([self.Y, self.P.times(Om)])
                self.Om = np.hstack([self.Om, Om])

    def estimate(self) -> tuple[float, float]:
        """The estimate and its error estimate (the products' units)."""
        jack = None
        if self.method == "xtrace":
            ests, jack = _xtrace_estimates(self.D)
            base = 0.0
        elif self.method == "hutch++":
            Q, Z = self.D.Q, self.D.Z
            H = product(Q.T, Z)
            Wg = product(Q.T, self.G)
            # (g - Q w)^T A (g - Q w) from A G and A Q
            ests = (_colsum(self.G, self.AG) - _colsum(product(Z.T, self.G), Wg)
                    - _colsum(Wg, product(Q.T, self.AG)) + _colsum(Wg, product(H, Wg)))
            base = float(np.trace(H))
        elif self.method == "xnystrace":
            ests, jack = _xnystrace_estimates(self.Om, self.Y, self.kind, self.P.eps)
            base = 0.0
        else:
            ests = _colsum(self.Om, self.Y)
            base = 0.0
        m = ests.size
        if jack is None:  # independent samples (or an exact answer): their standard error
            jack = float(np.std(ests, ddof=1)) / math.sqrt(m) if m > 1 else math.inf
        error = _coverage_factor(m) * jack
        scale = abs(base) + float(np.mean(np.abs(ests)))
        floor = _TRACE_ROUNDING * self.P.eps * self.P.n * scale
        return base + float(np.mean(ests)), max(error, floor)


def _check_square(op, name="A"):
    m, n = op.shape
    if m != n:
        raise ValueError(f"{name} must be square, got shape {op.shape}")
    return n


def _check_budget(matvecs):
    return None if matvecs is None else check_int(matvecs, "matvecs", 1)


def _exact_columns(op, take):
    """Products with the identity's columns, block by block: ``take(j0, j1,
    Y)`` reads each block ``A[:, j0:j1]`` (n products in all)."""
    n = op.shape[1]
    for j0 in range(0, n, _EXACT_BLOCK):
        j1 = min(n, j0 + _EXACT_BLOCK)
        E = np.zeros((n, j1 - j0), dtype=op.dtype)
        E[np.arange(j0, j1), np.arange(j1 - j0)] = 1
        take(j0, j1, np.asarray(op.matmat(E), dtype=np.float64))


def _exact_diagonal(op):
    n = op.shape[1]
    d = np.empty(n)

    def take(j0, j1, Y):
        d[j0:j1] = Y[np.arange(j0, j1), np.arange(j1 - j0)]

    _exact_columns(op, take)
    if not np.isfinite(d).all():
        raise ValueError("the products with A are not finite (NaN or Inf in A, or it "
                         "overflows its dtype)")
    return d


def _check_psd_hint(op):
    if op.psd is False:
        raise ValueError("method='xnystrace' needs a positive semidefinite A (use 'xtrace')")
    d = op.diagonal()
    if d is not None and d.size and float(np.min(d)) < 0:
        raise ValueError("method='xnystrace' needs a positive semidefinite A, but A has a "
                         f"negative diagonal entry ({float(np.min(d)):.3g}); use 'xtrace'")


def _rounds(run, measure, P, budget, tol, cap, n):
    """Grow ``run`` to a fixed ``budget``, or (tol) round by round, doubling
    the products (every one kept), until ``measure()`` = ``(answer, error,
    size)`` has ``error <= tol * size`` or the next round would pass
    ``cap``.  Returns ``(answer, error, converged, exact)``: ``exact`` when
    the rounds would reach n products, where the caller computes the answer
    exactly (n products) instead."""
    if tol is None:
        run.grow(budget)
        answer, error, _ = measure()
        return answer, error, True, False
    target = min(_FIRST_ROUND, n - 1)
    while True:
        run.grow(target)
        answer, error, size = measure()
        if error <= tol * size:
            return answer, error, True, False
        following = 2 * target
        if following >= n:
            if cap is None or P.used + n <= cap:
                return answer, error, False, True
            following = n - 1  # as far as the test vectors may go below n
        if following <= target or (cap is not None and following > cap):
            return answer, error, False, False
        target = following


def estimate_trace(A: Any, *, method: str = "xtrace", matvecs: int | None = None,
                   tol: float | None = None, rng: None | int | np.random.Generator = None,
                   test_vectors: str | None = None) -> TraceResult:
    """Estimate ``tr(A)`` from products with A, with an error estimate.

    Parameters
    ----------
    A : array_like, sparse matrix, LinearOperator, kernel oracle or LinearMap, shape (n, n)
        Seen only through products ``A X`` (see
        :func:`~sketchlab._linear_map.as_linear_map`: dense, CSR/CSC, a scipy
        ``LinearOperator``, :class:`~sketchlab.RBFKernel`, ...).  float32
        stays float32.
    method : {"xtrace", "xnystrace", "hutch++", "hutchinson"}, default "xtrace"
        ``"xtrace"``: any square A.  ``"xnystrace"``: A symmetric positive
        semidefinite (a kernel matrix, a covariance, ``A^T A``); half the
        products of XTrace for the same test vectors.  ``"hutch++"`` and
        ``"hutchinson"``: the baselines.
    matvecs : int, optional
        The budget of products (vectors).  At least 4 for xtrace and
        hutch++, 2 for the others; with ``matvecs >= n`` the trace is
        computed exactly from the n columns of A (n products, error 0).
        With ``tol``: the most products the rounds may use (default: no
        cap: the trace is computed exactly when the rounds would reach n).
    tol : float in (0, 1), optional
        Grow the sample, doubling the products each round (every product
        kept), until ``error_estimate <= tol * |trace|``.  Default: 1e-2
        when ``matvecs`` is not given either.
    rng : None, int or numpy.random.Generator
        Seeds the test vectors: the same rng gives the same estimate, for
        any thread count.
    test_vectors : {"improved", "rademacher", "gaussian"}, optional
        ``"improved"``: uniform on the sphere of radius sqrt(n), each
        estimate's vector renormalized after its deflation (the paper's
        improved estimator; xtrace and xnystrace only).  ``"rademacher"``:
        random signs.  Default: "improved" for xtrace and xnystrace,
        "rademacher" for the others.

    Returns
    -------
    TraceResult
        Unpacks as ``trace,``; ``error_estimate``, ``matvecs`` (the products
        used), ``method`` and ``converged`` as attributes.

    Raises
    ------
    ValueError
        If A is not square, has NaN or Inf, or (xnystrace) is visibly not
        positive semidefinite; if ``matvecs`` is below the method's minimum,
        ``tol`` outside (0, 1), or method or test_vectors unknown.
    TypeError
        If matvecs is not an int or rng not None, an int or a Generator.

    Warns
    -----
    sklearn.exceptions.ConvergenceWarning
        With ``tol``, when the budget ran out first (``converged=False``).

    Notes
    -----
    With m test vectors Omega and ``Y = A Omega = Q R``:

    - Hutchinson: ``mean_i omega_i^T A omega_i`` (m products).
    - Hutch++ (Meyer et al. 2021, Algorithm 1): a third of the budget for
      Omega, a third for ``A Q``, the rest for Hutchinson on ``(I - Q Q^T)
      A (I - Q Q^T)``.
    - XTrace (Epperly, Tropp and Webber 2024, Algorithm 1 with its improved
      estimator): m = matvecs / 2 test vectors and the m products ``A Q``;
      the mean of the m estimates ``tr(Q_i^T A Q_i) + u_i^T A u_i``, Q_i a
      basis of ``Y`` without column i and ``u_i = (I - Q_i Q_i^T)
      omega_i``.  Exact (up to rounding) when A has rank below m.
    - XNysTrace (Algorithm 3): m = matvecs test vectors and no second
      product; the mean of ``tr(A<Omega_-i>) + omega_i^T (A -
      A<Omega_-i>) omega_i`` over the Nystrom approximations that leave
      one test vector out.

    For spectra that decay, XTrace and XNysTrace reach a given accuracy with
    far fewer products than Hutch++ (the paper's Figure 1, reproduced by
    ``python -m experiments trace``); on a flat spectrum every method is
    about Hutchinson.  Cost beyond the products: O(n m^2) and O(m^3).

    The error estimate: for XTrace and XNysTrace, the delete-one jackknife
    standard error over the test vectors (computed from the same products in
    O(m^3); their m estimates share test vectors, and their own standard
    error, the paper's estimate, covered the true error in as few as 20% of
    the trials on some of the paper's spectra); for Hutch++ and Hutchinson,
    the standard error of their Hutchinson samples.  Times 1.4 times the 95%
    quantile of Student's t with m - 1 degrees of freedom (m samples: 2.3 to
    2.8), with which it covered the true error in at least 90% of the trials
    on each of the paper's six test spectra at every budget from 20 to 300
    (``python -m experiments trace`` measures it).  It is an
    estimate, not a bound; the jackknife tends to overstate the error where
    the spectrum decays fast (by a few times).

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> gen = np.random.default_rng(0)
    >>> Q, _ = np.linalg.qr(gen.standard_normal((300, 300)))
    >>> A = (Q * 0.8 ** np.arange(300)) @ Q.T
    >>> res = sketchlab.estimate_trace(A, matvecs=60, rng=0)
    >>> round(float(res.trace), 2), res.matvecs           # tr(A) = 5
    (5.0, 60)
    >>> bool(abs(float(res.trace) - np.trace(A)) <= res.error_estimate)
    True
    """
    method = check_choice(method, "method", TRACE_METHODS)
    op = as_linear_map(A, "A")
    n = _check_square(op)
    budget = _check_budget(matvecs)
    tol = check_tol(tol)
    kind = _DEFAULT_VECTORS[method] if test_vectors is None else \
        check_choice(test_vectors, "test_vectors", TEST_VECTORS)
    if kind == "improved" and method not in ("xtrace", "xnystrace"):
        raise ValueError(f"test_vectors='improved' is defined for xtrace and xnystrace only, "
                         f"got method={method!r}")
    if tol is None and budget is not None and budget < n and budget < _MIN_MATVECS[method]:
        raise ValueError(f"matvecs must be an int >= {_MIN_MATVECS[method]} for "
                         f"method={method!r} (or >= n = {n}), got {matvecs!r}")
    if method == "xnystrace":
        _check_psd_hint(op)
    gen = as_generator(rng)
    if tol is None and budget is None:
        tol = _DEFAULT_TOL
    P = _Products(op, gen)
    dtype = op.dtype.type
    if n == 0:
        return TraceResult(dtype(0.0), error_estimate=0.0, matvecs=0, method=method)
    if tol is None and budget >= n:
        return _exact_trace(op, P, method, True)
    run = _TraceRun(method, P, kind)
    def measure():
        value, error = run.estimate()
        return value, error, abs(value)

    value, error, converged, exact = _rounds(run, measure, P, budget, tol, budget, n)
    if exact:
        return _exact_trace(op, P, method, True)
    if not converged:
        warn_unconverged(
            f"estimate_trace stopped at its budget of {budget} products with an estimated "
            f"relative error of {error / max(abs(value), 1e-300):.2g} > tol={tol:g}")
    return TraceResult(dtype(P.unscale(value)), error_estimate=float(P.unscale(error)),
                       matvecs=P.used, method=method, converged=converged)


def _exact_trace(op, P, method, converged):
    d = _exact_diagonal(op)
    return TraceResult(op.dtype.type(math.fsum(d)), error_estimate=0.0, matvecs=P.used,
                       method=method, converged=converged)


# ---- the diagonal --------------------------------------------------------------------


class _DiagonalRun:
    """XDiag's or Hutchinson's products, grown to a budget; ``estimate()``
    gives the diagonal and each entry's standard error (``samples``: the m
    estimates it came from)."""

    samples = 0

    def __init__(self, method: str, P: _Products, kind: str, adjoint: bool):
        self.method, self.P, self.kind = method, P, kind
        if method == "xdiag":
            self.D = _Deflation(P, kind, adjoint=adjoint)
        else:
            self.Om = np.zeros((P.n, 0))
            self.Y = np.zeros((P.n, 0))

    def grow(self, budget: int) -> None:
        if self.method == "xdiag":
            self.D.grow(budget // 2)
            return
        k = budget - self.Om.shape[1]
        if k > 0:
            Om = self.P.vectors(self.kind, k)
            self.Y = np.hstack([self.Y, self.P.times(Om)])
            self.Om = np.hstack([self.Om, Om])

    def estimate(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        if self.method == "xdiag":
            E = _xdiag_estimates(self.D)
        else:
            E = self.Om * self.Y  # omega_i * (A omega_i), entrywise
        m = self.samples = E.shape[1]
        d = E.mean(axis=1)
        spread = np.std(E, axis=1, ddof=1) / math.sqrt(m) if m > 1 else np.full(E.shape[0],
                                                                                   math.inf)
        # rounding: no entry is known better than a few eps ||A||_F (the
        # products' scale: ||A omega||^2 ~ ||A||_F^2 for these test vectors)
        Y = self.D.Y if self.method == "xdiag" else self.Y
        floor = _ROUNDING_FLOOR * self.P.eps * float(np.linalg.norm(Y)) / math.sqrt(m)
        return d, np.maximum(spread, floor)


def _xdiag_estimates(D: _Deflation) -> NDArray[np.float64]:
    """The m leave-one-out estimates of XDiag (columns of an n x m matrix)::

        d_i = diag(Q_i Q_i^T A) + omega_i * ((I - Q_i Q_i^T) A omega_i)

    from ``Z = A^T Q`` (``diag(Q Q^T A)`` is the row sums of ``Q * Z``)."""
    R, _, S, _, _ = D.leave_one_out()
    Q, Z, Om, Y = D.Q, D.Z, D.Om, D.Y
    QS = product(Q, S)
    low_rank = np.einsum("ij,ij->i", Q, Z)[:, None] - QS * product(Z, S)
    # (I - Q_i Q_i^T) y_i = y_i - Q r_i + Q s_i (s_i . r_i)
    residual = Y - product(Q, R) + QS * _colsum(S, R)
    return low_rank + Om * residual


def estimate_diagonal(A: Any, *, method: str = "xdiag", matvecs: int | None = None,
                      tol: float | None = None, rng: None | int | np.random.Generator = None,
                      test_vectors: str | None = None) -> DiagonalResult:
    """Estimate the diagonal of A from products with A (and A^T), with an
    error estimate.

    Parameters
    ----------
    A : array_like, sparse matrix, LinearOperator, kernel oracle or LinearMap, shape (n, n)
        As for :func:`estimate_trace`.  XDiag multiplies by A and by A^T
        (by A twice when A is known to be symmetric: a kernel oracle).
    method : {"xdiag", "hutchinson"}, default "xdiag"
        ``"xdiag"``: Epperly, Tropp and Webber's XDiag.  ``"hutchinson"``:
        ``mean_i omega_i * (A omega_i)`` (Bekas, Kokiopoulou and Saad 2007),
        the baseline.
    matvecs : int, optional
        The budget of products (vectors; at least 4 for xdiag, 2 for
        hutchinson).  With ``matvecs >= n`` the diagonal is computed exactly
        from the n columns of A.  With ``tol``: the most products the rounds
        may use (default: no cap).
    tol : float in (0, 1), optional
        Grow the sample, doubling the products each round, until
        ``error_estimate <= tol * ||diagonal||_2``.  Default: 1e-2 when
        ``matvecs`` is not given either.
    rng : None, int or numpy.random.Generator
        Seeds the test vectors.
    test_vectors : {"rademacher", "gaussian"}, optional
        Default "rademacher" (random signs: ``omega * omega = 1`` entrywise,
        the smallest variance).

    Returns
    -------
    DiagonalResult
        Unpacks as ``diagonal,``; ``error_estimate`` (of the 2-norm error),
        ``entry_errors``, ``matvecs``, ``method`` and ``converged`` as
        attributes.

    Raises
    ------
    ValueError
        As :func:`estimate_trace`.

    Notes
    -----
    XDiag (Epperly, Tropp and Webber 2024, Section 5): with m = matvecs / 2
    test vectors, ``Y = A Omega``, Q a basis of its range and ``Z = A^T
    Q``, the mean of the m estimates ``diag(Q_i Q_i^T A) + omega_i * ((I -
    Q_i Q_i^T) A omega_i)``, Q_i the basis without test vector i.  Exact
    (up to rounding) when A has rank below m; far more accurate than
    Hutchinson's estimator when the spectrum of A decays.  Cost beyond the
    products: O(n m^2).  The error estimates are the standard errors of the
    m estimates, entry by entry, times the factor of :func:`estimate_trace`
    (``error_estimate`` is the 2-norm of ``entry_errors``).

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> gen = np.random.default_rng(0)
    >>> Q, _ = np.linalg.qr(gen.standard_normal((300, 300)))
    >>> A = (Q * 0.8 ** np.arange(300)) @ Q.T
    >>> res = sketchlab.estimate_diagonal(A, matvecs=100, rng=0)
    >>> bool(np.abs(res.diagonal - np.diag(A)).max() < 1e-4), res.matvecs
    (True, 100)
    >>> bool(np.linalg.norm(res.diagonal - np.diag(A)) <= res.error_estimate)
    True
    """
    method = check_choice(method, "method", DIAGONAL_METHODS)
    op = as_linear_map(A, "A")
    n = _check_square(op)
    budget = _check_budget(matvecs)
    tol = check_tol(tol)
    kind = _DEFAULT_VECTORS[method] if test_vectors is None else \
        check_choice(test_vectors, "test_vectors", ("rademacher", "gaussian"))
    if tol is None and budget is not None and budget < n and budget < _MIN_MATVECS[method]:
        raise ValueError(f"matvecs must be an int >= {_MIN_MATVECS[method]} for "
                         f"method={method!r} (or >= n = {n}), got {matvecs!r}")
    gen = as_generator(rng)
    if tol is None and budget is None:
        tol = _DEFAULT_TOL
    P = _Products(op, gen)
    if n == 0 or (tol is None and budget >= n):
        return _exact_diagonal_result(op, P, method)
    run = _DiagonalRun(method, P, kind, adjoint=not op.symmetric)
    entry_errors: list[Any] = []

    def measure():
        d, spread = run.estimate()
        entry_errors[:] = [_coverage_factor(run.samples) * spread]
        return d, _DIAGONAL_NORM_FACTOR * float(np.linalg.norm(spread)), \
            float(np.linalg.norm(d))

    d, error, converged, exact = _rounds(run, measure, P, budget, tol, budget, n)
    errors = entry_errors[0]
    if exact:
        return _exact_diagonal_result(op, P, method)
    if not converged:
        warn_unconverged(
            f"estimate_diagonal stopped at its budget of {budget} products with an estimated "
            f"relative error of {error / max(float(np.linalg.norm(d)), 1e-300):.2g} "
            f"> tol={tol:g}")
    return DiagonalResult(P.unscale(d).astype(op.dtype), error_estimate=float(P.unscale(error)),
                          entry_errors=P.unscale(errors), matvecs=P.used, method=method,
                          converged=converged)


def _exact_diagonal_result(op, P, method):
    d = _exact_diagonal(op) if op.shape[0] else np.zeros(0)
    return DiagonalResult(d.astype(op.dtype), error_estimate=0.0, entry_errors=np.zeros(d.size),
                          matvecs=P.used, method=method)


# ---- the effective dimension ---------------------------------------------------------

# The Nystrom part grows (doubling from _FIRST_NYSTROM columns) until its
# smallest eigenvalue is at most _NYSTROM_RATIO * alpha: the preconditioner of
# the remainder's solves is then good (their condition number about 1 +
# _NYSTROM_RATIO) and f(K_hat) holds the eigenvalues f weighs most.
_FIRST_NYSTROM = 16
_NYSTROM_RATIO = 0.1
# Hutchinson vectors of the remainder: first round, then doubled
_FIRST_PROBES = 8
_DEFAULT_DEFF_TOL = 0.05
_CG_MAXITER = 100


class _Nystrom:
    """The Nystrom approximation ``K<Omega> = Y (Omega^T Y)^-1 Y^T`` of the
    (scaled) PSD map, grown by doubling Omega.  Kept as ``Yn = Y + nu
    Omega`` (a shift of rounding size that keeps ``H = Omega^T Yn``
    positive definite) and the Cholesky factor L of H: ``K<Omega> + nu-part
    = B B^T`` with ``B = Yn L^-T``, never formed; its eigenvalues ``mu`` are
    those of ``B^T B = L^-1 Yn^T Yn L^-T`` (m x m)."""

    def __init__(self, P: _Products):
        self.P = P
        self.Om = np.zeros((P.n, 0))
        self.Y = np.zeros((P.n, 0))
        self.mu = np.zeros(0)
        self.nu = 0.0

    @property
    def columns(self) -> int:
        return self.Om.shape[1]

    def grow(self, ell: int) -> None:
        k = ell - self.columns
        if k <= 0:
            return
        Om = self.P.vectors("gaussian", k)
        self.Y = np.hstack([self.Y, self.P.times(Om)])
        self.Om = np.hstack([self.Om, Om])
        self._factor()

    def _factor(self):
        Om, Y = self.Om, self.Y
        n, m = Om.shape
        norm = float(np.linalg.norm(Y))
        nu = self.P.eps * max(norm, 1e-300) / math.sqrt(n)
        for _ in range(12):
            Yn = Y + nu * Om
            H = product(Om.T, Yn)
            try:
                L = cholesky((H + H.T) / 2)
                break
            except np.linalg.LinAlgError:
                nu *= 10.0
        else:
            raise ValueError("K must be positive semidefinite: Omega^T K Omega is not")
        # B = Yn L^-T = Qy M with M = Ry L^-T (m x m): B^T B = M^T M, positive
        # semidefinite as computed, however ill-conditioned L is
        Qy, Ry = qr(Yn)
        M = lower_solve(L, Ry.T).T
        self.G = gram_t(M, M)
        self.mu = np.maximum(eigvalsh(self.G)[::-1], 0.0)
        self.Qy, self.M, self.nu = Qy, M, nu

    def eigenvalues(self) -> NDArray[np.float64]:
        """Those of ``K<Omega>`` (the shift taken off), above rounding."""
        lam = self.mu - self.nu
        if not lam.size:
            return lam
        return lam[lam > default_rtol(self.Om.shape, self.P.eps) * max(float(lam[0]), 0.0)]

    def precond(self, alpha):
        """``V -> (B B^T + alpha I)^-1 V = (V - B (B^T B + alpha I)^-1 B^T V) / alpha``."""
        solve = spd_solver(self.G + alpha * np.eye(self.G.shape[0]))
        Qy, M = self.Qy, self.M

        def apply(V):
            T = product(M.T, product(Qy.T, V))  # B^T V
            return (V - product(Qy, product(M, solve(T)))) / alpha

        return apply


def effective_dimension(K: Any, alpha: float, *, gram: bool = False,
                        matvecs: int | None = None, tol: float | None = None,
                        rng: None | int | np.random.Generator = None
                        ) -> EffectiveDimensionResult:
    """Estimate the effective dimension ``d_eff = tr(K (K + alpha I)^-1)`` of a
    positive semidefinite K from products with K.

    ``d_eff`` counts the eigenvalues of K above alpha (each eigenvalue
    ``lambda`` counts ``lambda / (lambda + alpha)``): the rank a kernel
    ridge model with regularization alpha effectively uses, and the rank a
    Nystrom approximation or preconditioner needs.

    Parameters
    ----------
    K : array_like, sparse matrix, LinearOperator, kernel oracle or LinearMap
        Symmetric positive semidefinite, shape (n, n) (not checked beyond a
        failed factorization); with ``gram=True`` any A of shape (m, n),
        for ``K = A^T A``.
    alpha : float
        The regularization, > 0.
    gram : bool, default False
        Estimate ``d_eff`` of ``A^T A`` for a data matrix A (ridge
        regression's): products by ``A^T (A X)``, one pass over a CSR A.
    matvecs : int, optional
        The most products with K to use (vectors; with ``gram=True`` two
        products, with A and with A^T, per vector).  Default: no cap.
    tol : float in (0, 1), default 0.05
        Stop when ``error_estimate <= tol * effective_dimension``.
    rng : None, int or numpy.random.Generator
        Seeds the test vectors.

    Returns
    -------
    EffectiveDimensionResult
        Unpacks as ``effective_dimension,``; ``error_estimate``,
        ``bounds``, ``matvecs``, ``rank`` and ``converged`` as attributes.

    Raises
    ------
    ValueError
        If K is not square (without ``gram``), holds NaN or Inf, is visibly
        not positive semidefinite, or alpha, matvecs or tol is out of range.

    Warns
    -----
    sklearn.exceptions.ConvergenceWarning
        When ``matvecs`` ran out before ``tol`` was met.

    Notes
    -----
    ``f(K) = K (K + alpha I)^-1`` is operator monotone, so a Nystrom
    approximation ``K_hat <= K`` gives ``tr f(K_hat) <= d_eff``, and
    ``f(K) - f(K_hat)`` is positive semidefinite with most of its trace
    spread over many small eigenvalues: the funNystrom++ estimator of
    Persson and Kressner ("Randomized low-rank approximation of monotone
    matrix functions", SIAM J. Matrix Anal. Appl. 44, 2023) applied to f:

    1. ``K_hat = Y (Omega^T Y)^-1 Y^T`` with ``Y = K Omega`` (Gaussian,
       16 columns, doubled) until its smallest eigenvalue is at most
       ``alpha / 10``; ``tr f(K_hat)`` from its eigenvalues.  A sketch of n
       columns is K itself: d_eff is then exact.
    2. Hutchinson's estimate of ``tr(f(K) - f(K_hat)) = alpha tr((K_hat +
       alpha I)^-1 - (K + alpha I)^-1)`` with random sign vectors g (8,
       doubled), ``(K + alpha I)^-1 g`` by conjugate gradients
       preconditioned by ``(K_hat + alpha I)^-1`` (a few iterations: the
       condition number is about 1.1).  The quadratic form of CG from 0
       errs by ``||residual||^2 / alpha`` at most (Gauss quadrature), so
       the iteration stops at a relative residual of
       ``sqrt(0.1 tol d_eff / n)``.

    ``error_estimate`` is the standard error of step 2's samples times the
    factor of :func:`estimate_trace` (they are independent: at least a 90%
    interval).  ``bounds``: ``tr f(K_hat)``
    below; above, ``tr f(K_hat) + (tr K - tr K_hat) / alpha`` where
    ``tr K`` is known (a matrix's diagonal, a kernel's, ``||A||_F^2``),
    since ``f' <= 1 / alpha``.  Products: the Nystrom columns plus one per
    CG iteration per sample; on an RBF kernel of 5,000 Fashion-MNIST images
    about ``1.5 d_eff`` to ``2.5 d_eff`` for d_eff from 50 to 1,500 (see
    ``tests/test_trace.py``).

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> X = np.random.default_rng(0).standard_normal((1000, 3))
    >>> K = sketchlab.RBFKernel(X, gamma=0.5)
    >>> exact = np.sum(np.reciprocal(1.0 + 0.1 / np.linalg.eigvalsh(K.toarray()).clip(1e-300)))
    >>> res = sketchlab.effective_dimension(K, 0.1, rng=0)
    >>> bool(abs(res.effective_dimension - exact) <= 0.05 * exact), bool(res.matvecs < 4 * exact)
    (True, True)
    """
    from ._cg import pcg

    alpha = check_positive(alpha, "alpha")
    op = as_linear_map(K, "A" if gram else "K")
    n = op.shape[1] if gram else _check_square(op, "K")
    cap = None if matvecs is None else check_int(matvecs, "matvecs", 1)
    tol = check_tol(tol)
    tol = _DEFAULT_DEFF_TOL if tol is None else tol
    gen = as_generator(rng)
    if not gram and op.psd is not True:
        d = op.diagonal()
        if d is not None and d.size and float(np.min(d)) < 0:
            raise ValueError("K must be positive semidefinite, but it has a negative diagonal "
                             f"entry ({float(np.min(d)):.3g})")
    P = _Products(op, gen, gram=gram)
    per_vector = 2 if gram else 1
    if n == 0:
        return EffectiveDimensionResult(0.0, error_estimate=0.0, bounds=(0.0, 0.0))
    total = _trace_of(op, gram)

    def room():  # products (vectors) still allowed
        return math.inf if cap is None else (cap - P.used) // per_vector

    # 1. the Nystrom part
    N = _Nystrom(P)
    ell = min(_FIRST_NYSTROM, n)
    while ell - N.columns <= room():
        N.grow(ell)
        lam = N.eigenvalues()
        if lam.size < N.columns or lam[-1] <= _NYSTROM_RATIO * P.scale(alpha) or ell >= n:
            break  # K's rank exhausted, or the spectrum is below alpha
        ell = min(2 * ell, n)
    a = P.scale(alpha)
    lam = N.eigenvalues()
    lower = float(np.sum(lam / (lam + a)))
    upper = math.inf if total is None else \
        lower + max(P.scale(total) - float(np.sum(lam)), 0.0) / a
    # 2. Hutchinson on the remainder f(K) - f(B B^T)
    nystrom = float(np.sum(N.mu / (N.mu + a)))
    samples = np.zeros(0)
    h = _FIRST_PROBES
    estimate, error, converged = lower, math.inf, False
    if N.columns >= n or lam.size < N.columns:
        # K<Omega> = K up to rounding (the rank of K is below the sketch)
        estimate, error, converged = lower, 0.0, True
    else:
        precond = N.precond(a)
    while not converged:
        k = h - samples.size
        if k <= 0 or room() < 2 * k:
            break
        G = P.vectors("rademacher", k)
        rtol = min(1e-2, max(1e-10, math.sqrt(0.1 * tol * max(lower, 1.0) / n)))
        out = pcg(lambda V: P.times(V) + a * V, G, tol=rtol, maxiter=_CG_MAXITER,
                  precond=precond)
        q = a * (_colsum(G, precond(G)) - _colsum(G, out.X))
        samples = np.concatenate([samples, q])
        estimate = nystrom + float(np.mean(samples))
        error = _coverage_factor(samples.size) * float(np.std(samples, ddof=1)) / \
            math.sqrt(samples.size)
        converged = error <= tol * estimate
        h *= 2
    estimate = min(max(estimate, lower), upper)
    if not converged:
        warn_unconverged(
            f"effective_dimension stopped at its budget of {cap} products with an estimated "
            f"relative error of {error / max(estimate, 1e-300):.2g} > tol={tol:g}")
    return EffectiveDimensionResult(estimate, error_estimate=error, bounds=(lower, upper),
                                    matvecs=P.used, rank=int(lam.size), converged=converged)


def _trace_of(op, gram):
    """``tr K`` where it is at hand (float64), else None."""
    if gram:
        total = op.frobenius2()
        return None if total is None or callable(total) else float(total)
    d = op.diagonal()
    return None if d is None else math.fsum(np.asarray(d, dtype=np.float64))


class FactorEffectiveDimension(NamedTuple):
    """``d_eff`` read off a Nystrom factor (see :func:`factor_effective_dimension`)."""

    estimate: float
    lower: float
    upper: float


def factor_effective_dimension(gram: NDArray[np.floating], total: float,
                               alpha: float) -> FactorEffectiveDimension:
    """``d_eff(K, alpha)`` read off a Nystrom factor F of K (``F F^T <= K``,
    n x c: RPCholesky's, or ``C W^-1/2``), given its Gram matrix ``gram = F^T
    F`` and ``total = tr K``, without products with K: ``lower = tr f(F
    F^T)`` (f operator monotone), ``upper = lower + (tr K - ||F||_F^2) /
    alpha`` (``f' <= 1 / alpha``), and the estimate ``lower + (tr K -
    ||F||_F^2) / (alpha + lam_c)``, lam_c the smallest positive eigenvalue of
    ``F F^T``: the remainder's eigenvalues taken at most lam_c.  The landmark
    rules of the kernel estimators use it; it is as good as the factor
    captures K (:func:`effective_dimension` estimates from products, with an
    error estimate)."""
    lam = np.maximum(eigvalsh((gram + gram.T) / 2), 0.0) if gram.shape[0] else np.zeros(0)
    lower = float(np.sum(lam / (lam + alpha)))
    rest = max(float(total) - float(np.sum(lam)), 0.0)
    positive = lam[lam > 0]
    smallest = float(positive[0]) if positive.size else 0.0
    return FactorEffectiveDimension(lower + rest / (alpha + smallest), lower,
                                    lower + rest / alpha)


def is_auto(value: Any, name: str = "n_components") -> bool:
    """Whether an estimator's rank parameter asks for "auto"; a string that
    is not "auto" is refused (an int is checked by the caller)."""
    if isinstance(value, str):
        if value != "auto":
            raise ValueError(f"{name} must be an int >= 1 or 'auto', got {value!r}")
        return True
    return False


# rpcholesky_for_rank: the first run's landmarks, and the fewest returned
_RANK_FIRST = 256
_RANK_MIN = 50


def rpcholesky_for_rank(K: Any, alpha: float, total: float, gen: np.random.Generator,
                        c_max: int) -> tuple[NDArray[np.intp], NDArray[np.float64],
                                             NDArray[np.float64]]:
    """Accelerated RPCholesky of the kernel oracle K with as many landmarks as
    its effective dimension: the fewest landmarks c (at least 50, at most
    c_max) whose factor F says ``d_eff(K, alpha) <= c``
    (:func:`factor_effective_dimension`'s estimate, which falls as c grows).
    Runs 256 landmarks, then continues the run to twice as many (while the
    estimate of the whole factor asks for more): no work is repeated.  The
    landmarks are the first pivots of the run (RPCholesky's first pivots are
    a run of their own), their number found by bisection to within 5%.
    Returns ``(pivots, F, F^T F)``.  The rank rule of ``n_components="auto"``
    in the kernel estimators."""
    n = K.shape[0]
    least = min(_RANK_MIN, n, c_max)
    c = min(c_max, max(_RANK_FIRST, least))
    start = None
    while True:
        cols, _, F = block_rpcholesky(K, c, gen, columns=False, start=start)
        G = gram_t(F, F)

        def estimate(w):
            return factor_effective_dimension(G[:w, :w], total, alpha).estimate

        if estimate(c) <= c or c >= c_max:
            lo, hi = least, c  # estimate(hi) <= hi (or hi = c_max)
            if estimate(lo) <= lo:
                hi = lo
            while hi - lo > max(1, hi // 20):
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if estimate(mid) <= mid else (mid, hi)
            return cols[:hi], np.asfortranarray(F[:, :hi]), G[:hi, :hi].copy()
        start = (cols, F)
        c = min(c_max, 2 * c)
