"""A posteriori error estimates: how far an answer is from the matrix it approximates.

Every estimate here comes from probes: linear measurements of the error
matrix ``E = A - A_hat`` that are unbiased for ``||E||_F^2`` and cost a small
fraction of the algorithm (a test sketch gathered in the same pass over A, or
a few sampled rows of a kernel matrix).  The interval comes from the law of
the probes, with its spread measured on the probes themselves (not a fixed
factor):

- Gaussian probes (:func:`from_gaussian_probes`): rows ``z_b = g_b^T E`` with
  ``g_b ~ N(0, I)`` (Tropp, Yurtsever, Udell & Cevher 2019, Section 6).
  ``||z_b||^2`` is a weighted chi-square with mean ``||E||_F^2`` and variance
  ``2 tr((E E^T)^2)``; the sum over q probes is close to a scaled chi-square
  with ``d = q ||E||_F^4 / tr((E E^T)^2)`` degrees of freedom (Satterthwaite).
  ``tr((E E^T)^2)`` is estimated without bias from the q(q-1)/2 products
  ``(z_b . z_b')^2``, so d, and the width of the interval, adapt to the error
  matrix: narrow for a flat residual spectrum (d >> q), as wide as the
  worst case ``chi2_q`` bound when one direction dominates (d >= q always).
- Independent unbiased samples (:func:`from_samples`, e.g. ``n ||e_i||^2``
  for uniformly sampled rows i of an error matrix), or any unbiased estimate
  with a variance estimate (:func:`from_moments`, as the kernel methods'
  exact diagonal plus a sampled block of the off-diagonal error): a Gamma
  interval matched to the mean and variance.

The algorithms' estimates are built here from those laws:
:class:`ResidualProbe` (``||A - C X R||_F`` of fast_gmr and cur, from a
two-sided test sketch of A gathered with the other sketches),
:func:`rank_for_tol` (the estimate of every rank of a single-pass SVD at once,
from its test sketch) and :func:`kernel_estimate` (``||K - C U C^T||_F`` of
the SPSD methods: the exact diagonal and a sampled block).

Assumptions, stated in each docstring that returns an estimate: the probes
are independent of the answer (drawn from their own seeds, never used to
compute it), and the interval is meant to hold the true value with about
90% probability (two-sided 5% / 95% quantiles).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ._engine.reductions import squared_frobenius
from ._linalg import exponent_of_largest, product
from ._operators import CountSketch, GaussianSketch, sketch_both
from ._results import outside_stacklevel
from ._validation import Checked, check_int

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from ._operators import SketchOperator

__all__ = ["ErrorEstimate", "from_gaussian_probes", "from_probe_sketch", "from_samples",
           "from_moments", "probe_operator", "probe_left", "probe_mixer", "check_probes",
           "ResidualProbe", "rank_for_tol", "kernel_estimate", "frobenius_identity_estimate",
           "lowrank_probe_estimate", "InaccurateSVDWarning", "warn_if_inaccurate",
           "CONFIDENCE", "DEFAULT_PROBES"]

CONFIDENCE = 0.90
_TAIL = (1.0 - CONFIDENCE) / 2
DEFAULT_PROBES = 10
"""Probes of a test sketch by default."""
MAX_PROBES = 1 << 16


def check_probes(n_probes, default=DEFAULT_PROBES):
    """``n_probes`` as an int in [2, 65536] (default when None)."""
    if n_probes is None:
        return default
    return check_int(n_probes, "n_probes", 2, MAX_PROBES)


# Gaussian probes act through a CountSketch S of as many rows as probes: the
# pass over A is then the cheapest sketch there is (one scatter per stored
# entry into q columns, like a range sketch of q columns), and the probes
# G S (G a q x q Gaussian) are formed afterwards on the q x q gram of
# E S^T (from_probe_sketch), never on A.  S's own variance doubles the
# relative variance of the estimate at worst (rank-one errors), which the
# interval takes in (from_gaussian_probes' ``inner_size``).  Four rows per
# probe, with G applied in the pass, cost 1.5-3x as much (debian-tfidf).
_PROBE_STREAM = 0x50524F424553  # "PROBES": the stream of G, from the seed of S


def probe_operator(n_probes: int, dim: int, gen: np.random.Generator) -> SketchOperator:
    """The test sketch of the error estimates, as it is applied to A: a
    CountSketch S of ``n_probes`` rows (one pass over the nonzeros of A), or
    ``n_probes`` Gaussian probes (N(0, 1/q) entries) when q >= dim.

    The probes of a CountSketch are ``G S`` with G of :func:`probe_mixer`,
    applied to the gram of the probed error by :func:`from_probe_sketch`."""
    if n_probes >= dim:
        return GaussianSketch(n_probes, dim, rng=gen)
    return CountSketch(n_probes, dim, rng=gen)


# A tall error matrix is probed from both sides, ``Phi E Theta^T`` with a
# CountSketch Phi of this many rows per probe: the pass over A costs the same
# (one scatter per stored entry, into a p x q buffer that stays in L1 cache
# instead of an m x q array), and the factors of A_hat meet Phi as small
# sketches (Phi C of fast_gmr, p x c) instead of an m x q product.  Phi's
# variance adds q / p to the relative variance S's adds (0.06 here).
_LEFT_ROWS_PER_PROBE = 16


def probe_left(n_probes: int, dim: int, gen: np.random.Generator) -> SketchOperator | None:
    """The left sketch Phi of a two-sided test sketch ``Phi E Theta^T`` of an
    error matrix with ``dim`` rows: a CountSketch of ``16 n_probes`` rows,
    or None when E has no more rows than that (``E Theta^T`` is then as
    small).  Its rows are the ``left_size`` of :func:`from_probe_sketch`."""
    p = _LEFT_ROWS_PER_PROBE * n_probes
    return CountSketch(p, dim, rng=gen) if dim > p else None


def probe_mixer(theta: SketchOperator) -> NDArray[np.floating] | None:
    """The q x q standard normal G of the Gaussian probes ``G S`` through a
    test sketch S of :func:`probe_operator` (drawn from S's own seed, so that
    it travels with S: block streams, merged states, dask workers), or None
    when the test sketch is Gaussian itself."""
    if isinstance(theta, GaussianSketch):
        return None
    q = theta.sketch_size
    return np.random.default_rng([theta.seed, _PROBE_STREAM]).standard_normal((q, q))


def from_probe_sketch(F: NDArray[np.floating], theta: SketchOperator, *,
                      norm: float | None = None, left_size: int | None = None
                      ) -> ErrorEstimate:
    """ErrorEstimate of ``||E||_F`` from the test sketch ``F = E theta^T``
    (m x q) of an error matrix E, for ``theta`` of :func:`probe_operator`,
    or from ``F = Phi E theta^T`` (p x q) for a CountSketch Phi of
    ``left_size = p`` rows (:func:`probe_left`).

    For a CountSketch S, the probes ``z_b = g_b^T S E^T`` (g_b the rows of
    :func:`probe_mixer`) have the gram ``G (F^T F) G^T``: what
    :func:`from_gaussian_probes` reads, formed from q x q products (the
    interval counts S's variance, ``inner_size = q``).  Given S, the z_b
    are Gaussian with mean square ``||S E^T||_F^2``, unbiased for
    ``||E||_F^2`` since ``E[S^T S] = I``; so is ``||Phi E S^T||_F^2``, and
    Phi's variance (at most ``2 q / (p d)`` relative, as S's with p rows)
    widens the interval too.
    """
    F = np.asarray(F, dtype=np.float64)
    m, q = F.shape
    G = probe_mixer(theta)
    if G is None:  # N(0, 1/q) entries: rows sqrt(q) F^T are N(0, I) probes
        return from_gaussian_probes(F.T * math.sqrt(q), norm=norm, inner_size=left_size)
    K, scale = _probe_gram(F)  # (q, q)
    if K is None:
        return ErrorEstimate(scale, scale, scale, _relative(scale, norm), q)
    # S and Phi together: 1 + q / inner = 1 + q / q + q / p
    inner = q if left_size is None else q * left_size / (q + left_size)
    return _from_gram(G @ K @ G.T, m, scale, norm, inner_size=inner)


def _probe_gram(F):
    """``(F^T F / scale^2, scale)`` for probes as the columns of F.  The
    product is read as it is when it is finite and its largest diagonal
    entry lies well inside float64's range (the usual case: no other pass
    over F); otherwise F is scaled first by a power of two (exact) so that
    the squares stay in range.  ``(None, 0.0)`` for an all-zero F and
    ``(None, inf)`` for one that is not finite: the estimate is then that
    value, exactly."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        K = F.T @ F
    top = float(np.diag(K).max()) if K.size else 0.0
    if _GRAM_LOW < top < _GRAM_HIGH and np.isfinite(K).all():
        return K, 1.0
    top = max(float(F.max()), -float(F.min())) if F.size else 0.0
    if top == 0.0 or not np.isfinite(top):
        return None, (0.0 if top == 0.0 else float("inf"))
    e = exponent_of_largest(top)
    Fs = np.ldexp(F, -e) if e else F
    return Fs.T @ Fs, math.ldexp(1.0, e)


_GRAM_LOW, _GRAM_HIGH = 1e-200, 1e200


@dataclass(frozen=True)
class ErrorEstimate:
    """An a posteriori estimate of ``||A - A_hat||_F`` for the answer returned.

    Attributes
    ----------
    value : float
        The estimate of the Frobenius norm of the error.
    low, high : float
        A two-sided interval meant to hold the true error with about 90%
        probability (from the probes' law; see the function that made it).
    relative : float
        ``value / ||A||_F`` (exact norm where the algorithm reads all of A,
        else its estimate from the same probes).
    n_probes : int
        Number of probes (test vectors, or sampled rows) it used.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> A = np.random.default_rng(0).standard_normal((300, 200))
    >>> U, s, Vt = res = sketchlab.fast_sp_svd(A, 5, rng=0, estimate_error=True)
    >>> est = res.error_estimate
    >>> true = np.linalg.norm(A - (U * s) @ Vt)
    >>> bool(abs(est.value / true - 1) < 0.2), bool(est.low < est.value < est.high)
    (True, True)
    """

    value: float
    low: float
    high: float
    relative: float
    n_probes: int

    def __repr__(self) -> str:
        return (f"ErrorEstimate(value={self.value:.4g}, low={self.low:.4g}, high={self.high:.4g}, "
                f"relative={self.relative:.4g}, n_probes={self.n_probes})")

    def contains(self, error: float) -> bool:
        """True when ``low <= error <= high``."""
        return self.low <= error <= self.high


def _chi2_ppf(p, dof):
    """The p-quantile of the chi-square law with ``dof`` degrees of freedom
    (scipy.special's inverse of the upper tail: the quantile scipy.stats'
    chi2.ppf gives, without its argument handling, which costs more than the
    quantile in a per-call estimate)."""
    from scipy.special import chdtri

    return float(chdtri(dof, 1.0 - p))


def _relative(value, norm):
    if norm is None or not np.isfinite(norm):
        return float("nan")
    if norm == 0.0:
        return 0.0 if value == 0.0 else float("inf")
    return value / norm


def from_gaussian_probes(Z: NDArray[np.floating], *, norm: float | None = None,
                         inner_size: float | None = None) -> ErrorEstimate:
    """ErrorEstimate from Gaussian probes ``Z`` of an error matrix E.

    Parameters
    ----------
    Z : ndarray of shape (q, n)
        Row b is ``g_b^T E`` for independent ``g_b ~ N(0, I_m)``, or
        ``g_b^T S E`` when the probes act through a hashing sketch S with
        ``inner_size`` rows (Gaussian after CountSketch, as the test sketches
        of sketchlab are; E[S^T S] = I).
    norm : float, optional
        ``||A||_F`` for the relative error.
    inner_size : int, optional
        Rows of the hashing sketch S (or of a CountSketch on the other side
        of E); its own variance (about
        ``2 tr((E E^T)^2) / inner_size`` on ``||S E||_F^2``) widens the
        interval by the factor ``1 + q / inner_size`` on the variance.

    Returns
    -------
    ErrorEstimate
    """
    Z = np.asarray(Z, dtype=np.float64)
    q = Z.shape[0]
    gram, scale = _probe_gram(Z.T)  # (q, q): squared norms of the probes and their overlaps
    if gram is None:
        return ErrorEstimate(scale, scale, scale, _relative(scale, norm), q)
    return _from_gram(gram, Z.shape[1], scale, norm, inner_size)


def _from_gram(gram, n, scale, norm, inner_size):
    """from_gaussian_probes from the gram ``Z Z^T / scale^2`` of q probes Z
    of length n."""
    q = gram.shape[0]
    sq = np.diag(gram)  # ||z_b||^2 / scale^2
    mean = float(sq.mean())  # unbiased for ||E||_F^2 / scale^2
    value = scale * math.sqrt(mean)
    if q < 2:
        dof = 1.0
    else:
        off = gram[np.triu_indices(q, 1)] / mean  # in units of the mean (its squares stay finite)
        ratio = float(np.mean(off * off))  # unbiased for tr((E E^T)^2) / (tr E E^T)^2
        # d = q (tr K)^2 / tr K^2 lies in [q, q rank(E)]: clip the estimate there
        dof = q / ratio if ratio > 0 else float(q * min(q, n))
        dof = min(max(dof, float(q)), float(q * n))
    if inner_size:
        # the relative variances add: 2 / d from the probes given S, at most
        # 2 q / (inner_size d) from S (Var ||S E^T||_F^2 <= 2 tr((E E^T)^2) / s)
        dof = dof / (1.0 + q / inner_size)
    total = dof * mean  # sum of squares scaled to d degrees of freedom
    low = scale * math.sqrt(total / _chi2_ppf(1.0 - _TAIL, dof))
    high = scale * math.sqrt(total / _chi2_ppf(_TAIL, dof))
    return ErrorEstimate(value, low, high, _relative(value, norm), q)


def from_samples(y: ArrayLike, *, norm: float | None = None,
                 population: int | None = None) -> ErrorEstimate:
    """ErrorEstimate from independent unbiased samples ``y_b`` of ``||E||_F^2``.

    For instance ``y_b = ||e_{i_b}||^2 / p_{i_b}`` for rows ``i_b`` of an
    error matrix drawn with probabilities p.  The interval is
    :func:`from_moments`' on the samples' mean and its variance
    ``var(y) / q``.  It assumes the samples are independent and that their
    variance is seen in the q samples (no large error concentrated on rows
    that are never drawn).

    Parameters
    ----------
    y : array_like of shape (q,)
    norm : float, optional
        ``||A||_F`` (or its estimate) for the relative error.
    population : int, optional
        When the samples are drawn without replacement from ``population``
        items (rows), the finite-population correction
        ``1 - q / population`` scales the variance (to 0 when every row
        was drawn: the estimate is then exact).

    Returns
    -------
    ErrorEstimate
    """
    y = np.asarray(y, dtype=np.float64)
    q = y.shape[0]
    scale = float(np.abs(y).max()) if q else 0.0
    if scale == 0.0:
        return ErrorEstimate(0.0, 0.0, 0.0, _relative(0.0, norm), q)
    ys = y / scale
    if q < 2:
        value = math.sqrt(scale * float(ys.mean()))
        return ErrorEstimate(value, 0.0, float("inf"), _relative(value, norm), q)
    variance = float(ys.var(ddof=1)) / q
    if population is not None:
        variance *= max(0.0, 1.0 - q / population)
    return from_moments(float(ys.mean()), variance, unit=math.sqrt(scale), norm=norm,
                        n_probes=q)


def from_moments(mean: float, variance: float, *, known: float = 0.0, unit: float = 1.0,
                 norm: float | None = None, n_probes: int = 0) -> ErrorEstimate:
    """ErrorEstimate of ``||E||_F = unit sqrt(known + T)`` from an unbiased
    estimate ``mean`` of the sampled part T and the variance of that estimate
    (``unit`` keeps squares of large errors finite).

    ``known`` is the part of ``||E||_F^2 / unit^2`` computed exactly (as the
    diagonal of a kernel's error).  The estimate of T, a positive sum of
    right-skewed terms, is treated as a scaled chi-square (a Gamma law) with
    the degrees of freedom ``2 mean^2 / variance`` that match its two
    moments: the interval widens upward when a few large terms dominate,
    where a symmetric normal interval would sit too low.
    """
    value = unit * math.sqrt(max(known + mean, 0.0))
    if not variance > 0.0 or not mean > 0.0:
        return ErrorEstimate(value, value, value, _relative(value, norm), n_probes)
    dof = min(2.0 * mean * mean / variance, 1e8)
    low = unit * math.sqrt(known + dof * mean / _chi2_ppf(1.0 - _TAIL, dof))
    high = unit * math.sqrt(known + dof * mean / _chi2_ppf(_TAIL, dof))
    return ErrorEstimate(value, low, high, _relative(value, norm), n_probes)


# -- the estimates of the algorithms ------------------------------------------


class ResidualProbe:
    """The test sketch of an error estimate of ``||A - C X R||_F``, from both
    sides for a tall A: ``Phi A Theta^T`` (p x q, Phi of
    :func:`~sketchlab._errors.probe_left`, Theta of
    :func:`~sketchlab._errors.probe_operator`), ``Phi C`` and ``R
    Theta^T``; then ``Phi E Theta^T = Phi A Theta^T - (Phi C) X (R
    Theta^T)`` for any X, from small matrices alone.  Without Phi (A of
    at most 16 q rows): ``A Theta^T``, C and ``R Theta^T``.

    ``ResidualProbe(phi, theta, probe, C, R, norm)`` takes the sketch of A
    and ``||A||_F`` already gathered (the dask front's pass); :meth:`of`
    gathers them from an in-memory A."""

    # Its products are thin (q = 10 columns): they run on one BLAS thread, so
    # that idle OpenBLAS threads do not compete with the Numba kernels next.
    def __init__(self, phi, theta, probe, C, R, norm):
        self.phi = phi
        self.theta = theta
        self.probe = probe  # (p, q), or (m, q) without phi
        # C, R validated by the caller
        self.RT = theta.apply(Checked(R), axis=1)  # (r, q)
        self.C = C if phi is None else phi.apply(Checked(C))  # (p, c)
        self.norm = norm

    @classmethod
    def of(cls, A, C, R, q, gen):
        """The probe of an in-memory A (validated, as by check_gmr_inputs)."""
        theta = probe_operator(q, A.shape[1], gen)
        phi = probe_left(q, A.shape[0], gen)
        probe = (theta.apply(Checked(A), axis=1) if phi is None
                 else sketch_both(phi, Checked(A), theta))
        return cls(phi, theta, probe, C, R, float(np.sqrt(squared_frobenius(A))))

    def residual_sketch(self, X):
        """``Phi E Theta^T`` (or ``E Theta^T``), p x q: small (p = 16 q, or
        A itself of at most 16 q rows), so formed as a new array."""
        W = product(np.asarray(X, dtype=np.float64), self.RT)  # (c, q)
        return np.asarray(self.probe, dtype=np.float64) - product(self.C, W)

    def estimate(self, X):
        """The ErrorEstimate of ``||A - C X R||_F``."""
        left_size = None if self.phi is None else self.phi.sketch_size
        return from_probe_sketch(self.residual_sketch(X), self.theta, norm=self.norm,
                                 left_size=left_size)


def rank_for_tol(tol, s, Z, LU, TV, norm, theta):
    """Smallest rank whose estimated ``||A - A_rank||_F / ||A||_F`` is at most
    ``tol``, from the test sketch alone (no pass over A).

    ``Z = Phi A Theta^T`` (p x q) is the test sketch, ``LU = Phi U`` (p x
    t) the same left sketch of the left singular vectors (without Phi, Z =
    A Theta^T and LU = U) and ``TV = Theta V`` (q x t) the sketched right
    ones.  The estimate of rank l is the value of
    :func:`~sketchlab._errors.from_probe_sketch` on ``F_l = Z - LU_l S_l
    TV_l^T``: ``||F_l P^T||_F^2`` with P the probes' q x q mixer over a
    CountSketch (``G / sqrt(q)``, identity for Gaussian probes); it is
    ``||Z P^T||_F^2 - 2 sum_{j <= l} s_j w_j . tv_j + sum_{i, j <= l} s_i
    s_j (LU^T LU)_ij tv_i . tv_j`` with ``w_j = P Z^T LU e_j`` and ``tv_j
    = P TV e_j``: every rank at once from small products.  When no rank
    reaches it: ``(None, best)``, ``best`` the rank with the smallest
    estimated error (the higher ranks of a single-pass SVD can be worse
    than the lower ones, even worse than zero).
    """
    # in units of ||A||_F (finite at any scale): the squares stay in range
    unit = norm if 0.0 < norm < math.inf else 1.0
    Z, s = Z / unit, s / unit
    G = probe_mixer(theta)
    P = np.eye(Z.shape[1]) if G is None else G / math.sqrt(G.shape[0])
    ZP = product(Z, P.T)  # (p, q)
    TV = product(P, TV)
    cross = np.einsum("bj,bj->j", product(ZP.T, LU), TV) * s  # s_j w_j . tv_j
    H = np.outer(s, s) * product(LU.T, LU) * product(TV.T, TV)
    own = np.diagonal(H.cumsum(axis=0).cumsum(axis=1))  # the leading l x l blocks' sums
    residual2 = float(np.einsum("ab,ab->", ZP, ZP)) - 2 * np.cumsum(cross) + own
    for rank, value in enumerate(residual2, start=1):  # ||F_rank P^T||_F^2 estimates ||E_rank||_F^2
        if math.sqrt(max(value, 0.0)) <= tol * norm / unit:
            return rank, rank
    return None, int(np.argmin(residual2)) + 1 if residual2.size else 0


# rows' worth of kernel entries the error estimate evaluates by default
_KERNEL_PROBES = 40
# share of the estimate's row and column draws led by the approximation's rows
_KERNEL_LED = 0.8


def kernel_estimate(K, C, U, n_probes, gen):
    """ErrorEstimate of ``||K - C U C^T||_F``: the diagonal of the error
    ``E = K - C U C^T`` exactly, and its off-diagonal part from one sampled
    block ``E[I, J]`` of about ``n_probes * n`` entries.

    The diagonal costs the diagonal of K (known for RBF) and O(n c) and
    holds half or more of ``||E||_F^2`` on the paper's kernels.  The rows I
    and the columns J (m = ceil(sqrt(q n)) each) are drawn independently,
    with replacement, with probabilities

        p_i = 0.8 ||(C U C^T)_i||^2 / ||C U C^T||_F^2 + 0.2 / n

    (O(n c^2)): a row the approximation makes large is where the error of an
    indefinite core (fast, faster SPSD) lies, and the uniform fifth keeps
    every entry possible.  ``sum E_ij^2 / (p_i p_j) / m^2`` over the block,
    with the diagonal left out, is unbiased for the off-diagonal sum; its
    variance is estimated by the two-way (rows plus columns) variance of the
    block's row and column means, and :func:`~sketchlab._errors.from_moments`
    gives the Gamma interval.  A block, unlike q whole rows, draws m distinct
    rows, so that the few points whose rows carry much of the error (the
    estimate sweep finds five rows with 15% of it on madelon) are seen in
    its variance."""
    n = K.shape[0]
    q = check_probes(n_probes, _KERNEL_PROBES)
    C = np.asarray(C, dtype=np.float64)
    CU = C @ U
    K_diag = np.asarray(K.diagonal(), dtype=np.float64)
    diag_error = K_diag - np.einsum("ij,ij->i", CU, C)
    rows_norm = np.einsum("ij,ij->i", CU @ (C.T @ C), CU)  # ||(C U C^T)_i||^2
    total = float(rows_norm.sum())
    p = np.full(n, 1.0 / n)
    if total > 0 and np.isfinite(total):
        p = _KERNEL_LED * np.maximum(rows_norm, 0.0) / total + (1.0 - _KERNEL_LED) / n
        p /= p.sum()
    m = math.ceil(math.sqrt(q * n))
    I, J = gen.choice(n, size=m, p=p), gen.choice(n, size=m, p=p)
    rows, row_of = np.unique(I, return_inverse=True)
    cols, col_of = np.unique(J, return_inverse=True)
    K_block = np.asarray(K[rows, cols], dtype=np.float64)[np.ix_(row_of, col_of)]
    E_block = K_block - CU[I] @ C[J].T
    off = I[:, None] != J[None, :]
    weight = off / (p[I][:, None] * p[J][None, :])
    norm = _two_way(K_block, weight, K_diag).value
    return _two_way(E_block, weight, diag_error, norm=norm, n_probes=q)


def _two_way(block, weight, diag, norm=None, n_probes=0):
    """ErrorEstimate of ``sqrt(sum diag^2 + T)`` where T is estimated by the
    weighted squares of a sampled block, ``sum(weight * block^2) / m^2``, with
    the variance of a two-way design: var(row means) / m + var(column means) / m."""
    m = block.shape[0]
    unit = max(float(np.abs(block).max(initial=0.0)), float(np.abs(diag).max(initial=0.0)))
    if unit == 0.0 or not np.isfinite(unit):  # exactly zero, or beyond float64
        return from_moments(0.0, 0.0, known=1.0, unit=0.0 if unit == 0.0 else math.inf,
                            norm=norm, n_probes=n_probes)
    W = weight * (block / unit) ** 2
    mean = float(W.mean())
    variance = (float(W.mean(axis=1).var(ddof=1)) + float(W.mean(axis=0).var(ddof=1))) / m \
        if m > 1 else 0.0
    d = diag / unit
    return from_moments(mean, variance, known=float(d @ d), unit=unit, norm=norm,
                        n_probes=n_probes)


# ---------------------------------------------------------------------------
# The estimates of the SVDs made in several passes, and the single-pass warning
# ---------------------------------------------------------------------------


def frobenius_identity_estimate(err2: float, margin2: float, norm2: float) -> ErrorEstimate:
    """ErrorEstimate of an orthogonal projection's answer from the Frobenius
    identity ``||A - P A||_F^2 = ||A||_F^2 - ||P A||_F^2`` (``err2``), exact
    up to rounding: the interval is the rounding allowance ``margin2``
    (``n_probes=0``)."""
    value = math.sqrt(max(err2, 0.0))
    low = math.sqrt(max(err2 - margin2, 0.0))
    high = math.sqrt(max(err2, 0.0) + margin2)
    norm = math.sqrt(norm2)
    relative = value / norm if norm > 0 else 0.0
    return ErrorEstimate(value, low, high, relative, 0)


def lowrank_probe_estimate(AG: NDArray[np.floating], G: NDArray[np.floating],
                           U: NDArray[np.floating], s: NDArray[np.floating],
                           Vt: NDArray[np.floating]) -> ErrorEstimate:
    """ErrorEstimate of ``||A - U diag(s) Vt||_F`` from ``A G`` for a Gaussian
    G (n x q): the columns of ``(A - U S Vt) G`` are Gaussian probes of the
    error, and ``||A G||_F / sqrt(q)`` estimates ``||A||_F``."""
    AG = np.asarray(AG, dtype=np.float64)
    G = np.asarray(G, dtype=np.float64)
    EG = AG - product(np.asarray(U, dtype=np.float64) * np.asarray(s, dtype=np.float64),
                      product(np.asarray(Vt, dtype=np.float64), G))
    norm = float(np.linalg.norm(AG)) / math.sqrt(G.shape[1])
    return from_gaussian_probes(EG.T, norm=norm)


class InaccurateSVDWarning(UserWarning):
    """A single-pass SVD whose own error estimate is near or above
    ``||A||_F`` (it captures next to nothing of A): the warning names
    :func:`~sketchlab.krylov_svd`, which reaches the best rank-k error in a few passes."""


# The single-pass SVDs warn from this estimated relative error on: an
# answer that far off captures next to nothing (||A - 0||_F = ||A||_F).
INACCURATE_RELATIVE = 0.9


def warn_if_inaccurate(estimate: ErrorEstimate, stacklevel: int = 2) -> None:
    """Warn (InaccurateSVDWarning) when a single-pass SVD's estimated
    relative error is at least :data:`INACCURATE_RELATIVE`."""
    if estimate.relative >= INACCURATE_RELATIVE:
        warnings.warn(
            f"the estimated error of this single-pass SVD is {estimate.relative:.2g} ||A||_F: "
            "it captures little or nothing of A (a flat spectrum?); sketchlab.krylov_svd "
            "reaches the best rank-k error in a few passes over A",
            InaccurateSVDWarning, stacklevel=outside_stacklevel())
