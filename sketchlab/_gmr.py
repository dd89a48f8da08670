"""Generalized matrix regression: exact (``gmr``) and sketched (``fast_gmr``,
Algorithm 1), with the symmetric and PSD projections of Theorem 2.

The GMR problem is ``min_X ||A - C X R||_F`` with solution
``X* = C^+ A R^+`` (eq. (1.1)).  Fast GMR solves the sketched problem
``min_X ||S_C C X R S_R^T - S_C A S_R^T||_F`` instead (eq. (3.1)), whose
solution is ``X~ = (S_C C)^+ (S_C A S_R^T) (R S_R^T)^+`` (eq. (3.3)).

Both share one small solver: ``L^+ M Rr^+`` through Cholesky QRs of the two
small factors where they are clearly of full rank, else their thin SVDs,
with singular values below a relative tolerance treated as zero
(pseudo-inverse semantics for rank-deficient factors).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from ._errors import ResidualProbe, check_probes
from ._leverage import sampling_scores
from ._engine.reductions import squared_frobenius
from ._linalg import exact_core, project_psd as _project_psd, range_factors
from ._linalg import product, solve_core, symmetrize
from ._operators import LeverageScoreSampler, SketchOperator, sketch_both
from ._registry import SKETCH_KINDS, kinds_with, make_sketch, operator_class
from ._results import GMRResult
from ._validation import as_generator, as_matrix, check_int, check_rtol, check_sketchable
from ._validation import Checked, check_tol

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from ._validation import Matrix, MatrixLike

__all__ = [
    "gmr",
    "fast_gmr",
    "project_symmetric",
    "project_psd",
    "UnderdeterminedSketchWarning",
]

_STRUCTURES = ("symmetric", "psd")


class UnderdeterminedSketchWarning(UserWarning):
    """A sketch size of :func:`fast_gmr` is below the matching dimension of
    C or R (``s_c < c`` or ``s_r < r``): ``S_C C`` (or ``R S_R^T``) cannot have
    full rank, the sketched problem is underdetermined and its minimum-norm
    solution carries no (1 + eps) guarantee."""


# ---------------------------------------------------------------------------
# Input checks (shared with sketchlab._residuals)
# ---------------------------------------------------------------------------


def _factor(B, name, dense):
    """A validated 2-D factor: dense, or CSR/CSC kept sparse unless ``dense``."""
    B = as_matrix(B, name)
    if dense and sp.issparse(B):
        B = B.toarray()
    if B.shape[0] == 0 or B.shape[1] == 0:
        raise ValueError(f"{name} must not have an empty dimension, got shape {B.shape}")
    return B


def check_gmr_inputs(A: MatrixLike, C: MatrixLike, R: MatrixLike, *,
                     dense_factors: bool = True) -> tuple[Any, Any, Any]:
    """Validate ``A`` (m, n), ``C`` (m, c), ``R`` (r, n): numeric, finite and
    of agreeing shapes.  A stays dense or CSR/CSC; C and R become dense
    unless ``dense_factors`` is False (then sparse ones stay sparse)."""
    A = as_matrix(A, "A")
    if A.shape[0] == 0 or A.shape[1] == 0:
        raise ValueError(f"A must not have an empty dimension, got shape {A.shape}")
    C = _factor(C, "C", dense_factors)
    R = _factor(R, "R", dense_factors)
    m, n = A.shape
    if C.shape[0] != m:
        raise ValueError(
            f"C must have A.shape[0] = {m} rows, got C of shape {C.shape} for A of shape {A.shape}"
        )
    if R.shape[1] != n:
        raise ValueError(
            f"R must have A.shape[1] = {n} columns, got R of shape {R.shape} "
            f"for A of shape {A.shape}"
        )
    return A, C, R


def check_core(X: ArrayLike, C: Matrix, R: Matrix, name: str = "X") -> NDArray[np.floating]:
    """Validate a core matrix of shape (c, r) for ``C X R``."""
    X = as_matrix(X, name, sparse=False)
    want = (C.shape[1], R.shape[0])
    if X.shape != want:
        raise ValueError(
            f"{name} must have shape (C.shape[1], R.shape[0]) = {want}, got {X.shape} "
            f"(C of shape {C.shape}, R of shape {R.shape})"
        )
    return X


def out_dtype(*arrays: Matrix) -> np.dtype:
    """float32 when every input is float32, else float64."""
    if all(a.dtype == np.float32 for a in arrays):
        return np.dtype(np.float32)
    return np.dtype(np.float64)


# ---------------------------------------------------------------------------
# Exact GMR
# ---------------------------------------------------------------------------


def gmr(A: MatrixLike, C: MatrixLike, R: MatrixLike, *,
        rtol: float | None = None) -> NDArray[np.floating]:
    """Exact generalized matrix regression ``X* = C^+ A R^+``.

    The minimizer of ``||A - C X R||_F`` of least Frobenius norm (eq. (1.1)),
    computed with thin QR factorizations and small SVDs, never with normal
    equations.

    Parameters
    ----------
    A : array_like or scipy.sparse matrix of shape (m, n)
        Dense (C or F order) or sparse (CSR/CSC; other formats are converted
        to CSR).
    C : array_like of shape (m, c)
        Dense (a sparse C is densified).
    R : array_like of shape (r, n)
        Dense (a sparse R is densified).
    rtol : float in [0, 1), optional
        Singular values of C (of R) at or below ``rtol`` times the largest
        count as zero, so a rank-deficient C or R gets pseudo-inverse
        semantics.  Default ``max(m, c) * eps`` for C and ``max(n, r) * eps``
        for R, with ``eps`` of float32 when A, C and R are all float32, else
        of float64 (as ``numpy.linalg.matrix_rank``).

    Returns
    -------
    X : ndarray of shape (c, r)
        float32 when A, C and R are all float32, else float64.

    Raises
    ------
    TypeError
        If an input is not numeric (strings, objects, complex).
    ValueError
        If the shapes do not agree (``C.shape[0] != m`` or
        ``R.shape[1] != n``), a dimension is empty, an input holds NaN or Inf,
        or ``rtol`` is outside [0, 1).

    See Also
    --------
    fast_gmr : the sketched solution (Algorithm 1).
    sketchlab.gmr_residual : ``||A - C X R||_F`` without densifying A.

    Notes
    -----
    With ``C = Q_C T_C`` and ``R^T = Q_R T_R`` (thin QR),
    ``X* = T_C^+ (Q_C^T A Q_R) (T_R^T)^+``; the pseudo-inverses of the small
    triangular factors come from their SVDs.  Cost O(m c^2 + n r^2) for the
    QRs, one product with A in O(nnz(A) min(c, r)) (O(m n min(c, r)) for a
    dense A), and O(c^3 + r^3) for the small SVDs.  Computation is in
    float64; the QRs and small solves run on one BLAS thread (spinning
    OpenBLAS threads slow down whatever runs next on a busy machine).

    Examples
    --------
    >>> import numpy as np
    >>> from sketchlab import gmr
    >>> rng = np.random.default_rng(0)
    >>> C, X0, R = rng.normal(size=(30, 3)), rng.normal(size=(3, 2)), rng.normal(size=(2, 20))
    >>> X = gmr(C @ X0 @ R, C, R)
    >>> bool(np.allclose(X, X0))
    True
    """
    rtol = check_rtol(rtol)
    A, C, R = check_gmr_inputs(A, C, R)
    dtype = out_dtype(A, C, R)
    _, T_C, _, T_R, B = range_factors(A, C, R)
    X = exact_core(T_C, T_R, B, C.shape, R.shape, rtol, np.finfo(dtype).eps)
    return X.astype(dtype, copy=False)


# ---------------------------------------------------------------------------
# Fast GMR (Algorithm 1)
# ---------------------------------------------------------------------------


DEFAULT_A = 10
"""The default sketch sizes of Fast GMR are ``s_c = a c``, ``s_r = a r`` with
this a: the paper's experiments on Fast GMR find the error
ratio falling like ``1/a^2`` and "close to 0.05 on most datasets" at a = 10."""


def default_sketch_size(c: int, r: int, shape: tuple[int, int]) -> tuple[int, int]:
    """``(s_c, s_r) = (a c, a r)`` with ``a = DEFAULT_A``, capped at ``(m, n)``
    (a sketch as large as A compresses nothing).  Used by :func:`fast_gmr`
    and :func:`sketchlab.cur` when no ``sketch_size`` is given."""
    m, n = shape
    return max(1, min(m, DEFAULT_A * c)), max(1, min(n, DEFAULT_A * r))


def check_sketch_size(sketch_size, kind, m, n):
    """(s_c, s_r) from an int or a pair; SRHT needs s <= the padded dimension."""
    sizes = _size_pair(sketch_size)
    out = []
    for name, s, d in (("sketch_size[0] (s_c)", sizes[0], m),
                       ("sketch_size[1] (s_r)", sizes[1], n)):
        # a sketch as large as A is no cheaper than the exact gmr (SRHT samples
        # from its padded dimension: the class says)
        out.append(check_int(s, name, 1, operator_class(kind).max_sketch_size(d)))
    return tuple(out)


def _size_pair(sketch_size):
    """(s_c, s_r) as given: an int (or 0-d array) for both, or a pair."""
    if isinstance(sketch_size, (tuple, list)) or np.ndim(sketch_size) > 0:
        if np.ndim(sketch_size) != 1 or len(sketch_size) != 2:
            raise ValueError(
                f"sketch_size must be an int or a pair (s_c, s_r), got {sketch_size!r}"
            )
        return tuple(sketch_size)
    return (sketch_size, sketch_size)


def _leverage_sampler(factor, axis, size, gen):
    """Sampler on the leverage scores of C (rows) or R (columns); uniform
    scores when the factor is zero (every score is then zero)."""
    scores = sampling_scores(factor, axis)
    return LeverageScoreSampler(size, scores.shape[0], scores=scores, rng=gen)


def _make_sketches(sketch, sketch_size, C, R, m, n, rng):
    """(S_C, S_R) from a kind name or a pair of operators."""
    check_sketchable((m, n))
    if isinstance(sketch, str):
        if sketch not in SKETCH_KINDS:
            raise ValueError(
                f"sketch must be one of {list(SKETCH_KINDS)} or a pair of SketchOperator "
                f"(S_C, S_R), got {sketch!r}"
            )
        if sketch_size is None:
            sketch_size = default_sketch_size(C.shape[1], R.shape[0], (m, n))
        s_c, s_r = check_sketch_size(sketch_size, sketch, m, n)
        gen = as_generator(rng)
        if operator_class(sketch).needs_scores:
            S_C = _leverage_sampler(C, 0, s_c, gen)
            S_R = _leverage_sampler(R, 1, s_r, gen)
        else:
            S_C = make_sketch(sketch, s_c, m, rng=gen)
            S_R = make_sketch(sketch, s_r, n, rng=gen)
        return S_C, S_R
    if not (isinstance(sketch, (tuple, list)) and len(sketch) == 2):
        raise TypeError(
            f"sketch must be a kind name in {list(SKETCH_KINDS)} or a pair of SketchOperator "
            f"(S_C, S_R), got {type(sketch).__name__}"
        )
    S_C, S_R = sketch
    for name, S, d, what in (("sketch[0] (S_C)", S_C, m, "A.shape[0]"),
                             ("sketch[1] (S_R)", S_R, n, "A.shape[1]")):
        if not isinstance(S, SketchOperator):
            raise TypeError(f"{name} must be a SketchOperator, got {type(S).__name__}")
        if S.input_dim != d:
            raise ValueError(
                f"{name} must have input_dim = {what} = {d}, got an operator of shape {S.shape}"
            )
    if sketch_size is not None:
        want = (S_C.sketch_size, S_R.sketch_size)
        if _size_pair(sketch_size) != want:
            raise ValueError(
                f"sketch_size must agree with the operators' sizes {want} (or be omitted), "
                f"got {sketch_size!r}"
            )
    return S_C, S_R


def _check_structure_name(structure):
    if structure is not None and not (isinstance(structure, str) and structure in _STRUCTURES):
        raise ValueError(f"structure must be None, 'symmetric' or 'psd', got {structure!r}")
    return structure


def _check_structure(structure, A, C, R):
    """Theorem 2 needs C = R^T (and A square, symmetric or SPSD)."""
    if structure is None:
        return
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"structure={structure!r} needs a square A, got A of shape {A.shape}")
    if C.shape != R.T.shape:
        raise ValueError(
            f"structure={structure!r} needs C = R^T, got C of shape {C.shape} and R of shape "
            f"{R.shape}"
        )
    tol = 100 * np.finfo(out_dtype(C, R)).eps * _norm(C)
    gap = _norm(C - R.T)
    if not gap <= tol:
        raise ValueError(
            f"structure={structure!r} needs C = R^T, got ||C - R^T||_F = {gap:.3g} "
            f"(tolerance {tol:.3g})"
        )


def _norm(B):
    return float(np.sqrt(squared_frobenius(B)))




def fast_gmr(A: MatrixLike, C: MatrixLike, R: MatrixLike, *,
             sketch_size: int | tuple[int, int] | None = None,
             sketch: str | tuple[SketchOperator, SketchOperator] = "countsketch",
             structure: str | None = None, rng: None | int | np.random.Generator = None,
             rtol: float | None = None, estimate_error: bool = False, tol: float | None = None,
             n_probes: int | None = None) -> GMRResult:
    """Fast generalized matrix regression (Algorithm 1).

    Solves the sketched problem ``min_X ||S_C C X R S_R^T - S_C A S_R^T||_F``:
    ``X~ = (S_C C)^+ (S_C A S_R^T) (R S_R^T)^+`` (eq. (3.3)), with the middle
    term formed by :func:`sketchlab.sketch_both` in one pass over the
    nonzeros of A.

    Parameters
    ----------
    A : array_like or scipy.sparse matrix of shape (m, n)
        Dense (C or F order) or sparse (CSR/CSC; other formats are converted
        to CSR).
    C : array_like or scipy.sparse matrix of shape (m, c)
        Dense or sparse; a sparse C (e.g. columns of a sparse A, as in CUR)
        is sketched as it is, never densified.
    R : array_like or scipy.sparse matrix of shape (r, n)
        Dense or sparse, likewise.
    sketch_size : int or (int, int), optional
        ``(s_c, s_r)``, the rows of S_C (s_c x m) and S_R (s_r x n); an int
        sets both.  Default with a kind name ``(10 c, 10 r)`` capped at
        ``(m, n)``: the paper's a = s_c / c = 10, where its experiments find
        the error ratio close to 0.05 on most data sets (see Notes).  With
        operators it may be omitted (else it must equal their sizes).  s_c
        must lie in [1, m] and s_r in [1, n] (a sketch as large as A is no
        cheaper than :func:`gmr`); for ``"srht"`` m and n are first rounded
        up to a power of two.  Sizes below c (r) warn with
        :class:`UnderdeterminedSketchWarning`.
    sketch : str or (SketchOperator, SketchOperator), default "countsketch"
        A kind in ``sketchlab.SKETCH_KINDS``: ``"countsketch"``, ``"osnap"``,
        ``"gaussian"``, ``"srht"``, ``"uniform"`` (with replacement) or
        ``"leverage"`` (S_C samples on the row leverage scores of C, S_R on the
        column leverage scores of R; uniform when C, or R, is zero).  Or a
        pair ``(S_C, S_R)`` of operators of input dimensions m and n, used as
        given (``rng`` is then ignored).
    structure : {None, "symmetric", "psd"}, default None
        For ``C = R^T`` (Theorem 2): project ``X~`` onto the symmetric
        matrices (:func:`project_symmetric`) or the PSD cone
        (:func:`project_psd`).  Needs A square and C equal to R^T (checked to
        100 eps relative); the guarantee needs A symmetric (SPSD for "psd"),
        which is not checked.
    rng : None, int or numpy.random.Generator
        Seed of the sketches with a kind name: S_C is drawn first, then S_R,
        both from ``as_generator(rng)``; results are deterministic given rng.
    rtol : float in [0, 1), optional
        Relative singular-value cutoff for the pseudo-inverses of ``S_C C``
        and ``R S_R^T``; default ``max(shape) * eps`` of each (``eps`` of
        float32 when A, C and R are all float32).
    estimate_error : bool, default False
        Attach an :class:`~sketchlab.ErrorEstimate` of ``||A - C X R||_F``
        for the X returned as ``error_estimate``: ``n_probes`` Gaussian probes
        acting through a CountSketch Theta on the columns of A and, for A of
        more than ``16 n_probes`` rows, a CountSketch Phi of ``16
        n_probes`` rows on its rows (``Phi A Theta^T``, one more pass over
        the nonzeros of A, into a small buffer; then only ``Phi C`` and ``R
        Theta^T`` of the factors), independent of the sketches that made X.
        The interval assumes only that, and counts the variance of both
        CountSketches (see :func:`~sketchlab._errors.from_probe_sketch`).
    tol : float in (0, 1), optional
        Fixed accuracy: choose the sketch size so that the error ratio
        ``||A - C X R||_F / ||A - C X* R||_F - 1`` is at most ``tol``.  Each
        round sketches with two independent halves (for "countsketch": an
        OSNAP with two nonzeros per column, whose two row blocks are
        independent CountSketches): the two half-size solutions differ by
        about twice the excess error of one, and with
        ``||A - C X R||^2 = ||A - C X* R||^2 + ||C (X - X*) R||^2`` and the
        probe's estimate of the left side this gives the error ratio of the
        whole-sketch solution (taking the excess to fall only like 1/s, the
        slow end of the paper's 1/a to 1/a^2 range, so the estimate errs on
        the safe side).  If it is above ``tol``, a next round at the size
        this predicts is combined with the earlier ones (weighted by their
        estimated excess errors), so no work is thrown away.
        ``sketch_size`` is then the size of the first round (default
        ``4 * (c, r)``), and ``sketch`` a kind name among "countsketch",
        "gaussian", "uniform", "leverage".
    n_probes : int, optional
        Probes of the error estimate, default 10 (at least 2).

    Returns
    -------
    GMRResult
        Unpacks as ``X,`` whatever the flags (``X, = fast_gmr(...)``, or
        ``fast_gmr(...).X``):

        X : ndarray of shape (c, r)
            float32 when A, C and R are all float32, else float64.

        and carries ``error_estimate`` (an :class:`~sketchlab.ErrorEstimate`
        with ``estimate_error=True`` or ``tol``, else None) and
        ``sketch_size``, the ``(s_c, s_r)`` used (with ``tol``: of the last
        round's whole sketch).

    Raises
    ------
    TypeError
        If an input is not numeric, ``sketch`` is neither a kind name nor a
        pair of operators, or a size is not an int.
    ValueError
        If shapes do not agree, an input holds NaN or Inf, a size is out of
        range or disagrees with the operators, ``sketch`` or ``structure`` is
        unknown, or ``structure`` is given with a non-square A or C != R^T.

    Warns
    -----
    UnderdeterminedSketchWarning
        If ``s_c < c`` or ``s_r < r``.

    See Also
    --------
    gmr : the exact solution.
    sketchlab.gmr_error_ratio : ``||A - C X~ R||_F / ||A - C X* R||_F - 1``.

    Notes
    -----
    Theorem 1: with sizes of order ``max(c / sqrt(eps), c / (eps rho^2))``
    (plus ``c^2`` for CountSketch, ``c log c`` for SRHT and leverage
    sampling, likewise for r), ``||A - C X~ R||_F <= (1 + eps) min_X
    ||A - C X R||_F`` with probability 0.95, where (eq. (3.2), with P_C,
    P_R the projections onto the ranges of C and R^T)
    ``rho = ||A - P_C A P_R||_F / (||(I - P_C) A P_R||_F + ||P_C A (I - P_R)||_F)``
    is at least 1/sqrt(2): large when most of the residual lies outside
    both ranges, small when it lies in one of them, which asks for larger
    sketches.  In practice the error ratio falls like ``1 / a^2`` for
    ``s_c = a c``, ``s_r = a r``; the default a = 10 is the paper's point
    where that ratio is about 0.05 on most data sets.  Theorem 2: the
    symmetric (PSD) projection of X~ keeps that bound when A is symmetric
    (SPSD) and C = R^T; by Proposition 1 it never moves X~ away from X*
    (Frobenius distance).

    Cost: the sketches (O(nnz(A)) for CountSketch and the samplers,
    O(p^2 nnz(A)) for OSNAP with p nonzeros per column, O(min(s_c, s_r)
    nnz(A)) for Gaussian, O(m n log(m n)) for SRHT on a dense A, plus
    O(m c + n r) for S_C C and R S_R^T with the hashing kinds), then
    O(s_c c^2 + s_r r^2 + s_c s_r min(c, r)) for the two small SVDs and
    products (eq. (3.4)).  ``"leverage"`` adds O(m c^2 + n r^2) for the
    scores.  The small solve runs on one BLAS thread, so that idle OpenBLAS
    threads do not compete with the Numba kernels of the next call.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, sketchlab
    >>> rng = np.random.default_rng(0)
    >>> gen = np.random.default_rng(0)
    >>> A = sp.random(2000, 1500, density=0.01, format="csr", random_state=gen)
    >>> C = A @ rng.normal(size=(1500, 10))
    >>> R = rng.normal(size=(10, 2000)) @ A
    >>> X, = sketchlab.fast_gmr(A, C, R, sketch_size=(100, 100), rng=0)
    >>> X.shape
    (10, 10)
    >>> bool(sketchlab.gmr_error_ratio(A, C, X, R) < 0.1)
    True

    The estimate, when asked for, is an attribute of the result:

    >>> res = sketchlab.fast_gmr(A, C, R, sketch_size=(100, 100), rng=0, estimate_error=True)
    >>> bool(np.array_equal(res.X, X)), res.sketch_size
    (True, (100, 100))
    >>> err = sketchlab.gmr_residual(A, C, X, R)
    >>> bool(res.error_estimate.low < err < res.error_estimate.high)
    True
    """
    structure = _check_structure_name(structure)
    rtol = check_rtol(rtol)
    tol = check_tol(tol)
    q = check_probes(n_probes)
    A, C, R = check_gmr_inputs(A, C, R, dense_factors=False)  # sketched as they are
    _check_structure(structure, A, C, R)
    dtype = out_dtype(A, C, R)
    eps = np.finfo(dtype).eps
    if tol is not None:
        X, estimate, sizes = _fast_gmr_tol(A, C, R, tol, sketch, sketch_size, structure, rtol,
                                           eps, q, rng)
        return GMRResult(X.astype(dtype, copy=False), error_estimate=estimate, sketch_size=sizes)
    m, n = A.shape
    S_C, S_R = _make_sketches(sketch, sketch_size, C, R, m, n, rng)
    (c, r), (s_c, s_r) = (C.shape[1], R.shape[0]), (S_C.sketch_size, S_R.sketch_size)
    if s_c < c or s_r < r:
        warnings.warn(
            f"sketch sizes (s_c, s_r) = {(s_c, s_r)} below (c, r) = {(c, r)}: the sketched "
            "problem is underdetermined and its solution carries no error guarantee",
            UnderdeterminedSketchWarning,
            stacklevel=2,
        )
    SC_C, M, R_SR = _sketch_problem(S_C, S_R, A, C, R)
    X = solve_sketched(SC_C, M, R_SR, rtol=rtol, eps=eps, structure=structure)
    estimate = None
    if estimate_error:
        # the probes are drawn after the sketches (from a generator of their
        # own when the sketches were given), so X is the same with or without
        probe = ResidualProbe.of(A, C, R, q, _probe_generator(sketch, rng))
        estimate = probe.estimate(X)
    return GMRResult(X.astype(dtype, copy=False), error_estimate=estimate,
                     sketch_size=(s_c, s_r))


def _probe_generator(sketch, rng):
    if isinstance(sketch, str):
        return as_generator(rng)  # the same generator, after the sketches drew from it
    return as_generator(None if rng is None else rng)


_MAX_TOL_ROUNDS = 6
_MAX_GROWTH = 8.0  # a round's sketch is at most this many times the previous one


def _fast_gmr_tol(A, C, R, tol, sketch, sketch_size, structure, rtol, eps, q, rng):
    """fast_gmr at fixed accuracy (see the ``tol`` parameter): rounds of
    two-halves sketches, combined.  ``(X, estimate, (s_c, s_r))``, the sizes
    of the final round's whole sketch (the one that met tol or hit the cap)."""
    # kinds whose sketch of size 2s splits into two independent sketches of size s
    split_kinds = kinds_with(splittable=True, gmr=True)
    if not isinstance(sketch, str) or sketch not in split_kinds:
        raise ValueError(
            f"tol= needs sketch to be a kind name in {list(split_kinds)} (sketches of size 2s "
            f"made of two independent halves), got {sketch!r}"
        )
    m, n = A.shape
    c, r = C.shape[1], R.shape[0]
    if sketch_size is None:
        half = (min(m // 2, 4 * c), min(n // 2, 4 * r))
    else:
        half = check_sketch_size(sketch_size, sketch, m // 2, n // 2)
    half = (max(1, half[0]), max(1, half[1]))
    gen = as_generator(rng)
    gram_C, gram_R = _gram(C.T, C), _gram(R, R.T)  # ||C D R||_F^2 = <D, C^T C D R R^T>
    probe = None
    rounds = []  # (X, estimated ||C (X - X*) R||_F^2)
    for _ in range(_MAX_TOL_ROUNDS):
        S_C, S_R = _split_sketches(sketch, half, C, R, m, n, gen)
        SC_C, M, R_SR = _sketch_problem(S_C, S_R, A, C, R)
        if probe is None:
            probe = ResidualProbe.of(A, C, R, q, gen)
        h_c, h_r = half
        solve = lambda rows, cols: solve_sketched(  # noqa: E731
            SC_C[rows], M[rows][:, cols], R_SR[:, cols], rtol=rtol, eps=eps, structure=structure)
        X1 = solve(slice(0, h_c), slice(0, h_r))
        X2 = solve(slice(h_c, 2 * h_c), slice(h_r, 2 * h_r))
        X = solve(slice(None), slice(None))
        # independent halves: E||C (X1 - X2) R||^2 = 2 excess(half); the whole
        # sketch has twice the size: excess / 2 (the slow, 1/s, end of the law)
        excess = _weighted_norm2(gram_C, X1 - X2, gram_R) / 4
        rounds.append((X, excess))
        weights = np.array([1.0 / max(v, 1e-300) for _, v in rounds])
        X_comb = sum(w * Xi for w, (Xi, _) in zip(weights, rounds)) / weights.sum()
        excess_comb = 1.0 / weights.sum()
        estimate = probe.estimate(X_comb)
        total = estimate.value ** 2
        optimum = max(total - excess_comb, 0.0)
        ratio = np.sqrt(1.0 + excess_comb / optimum) - 1.0 if optimum > 0 else (
            0.0 if excess_comb == 0 else np.inf)
        if ratio <= tol or 2 * h_c >= m or 2 * h_r >= n:
            if ratio > tol:
                warnings.warn(
                    f"fast_gmr(tol={tol}): the sketches reached the size of A with an estimated "
                    f"error ratio of {ratio:.3g}; use sketchlab.gmr for the exact solution",
                    stacklevel=3,
                )
            return X_comb, estimate, (2 * h_c, 2 * h_r)
        # excess falls like 1/s: the next round's whole sketch must bring the
        # combination's excess down to the target
        target = optimum * ((1.0 + 0.8 * tol) ** 2 - 1.0)
        if target > 0:
            need = 1.0 / target - 1.0 / excess_comb  # precision the next round must add
            grow = min(_MAX_GROWTH, max(1.5, excess * need))  # this round's excess over the next
        else:  # the estimated optimum is 0: no size is predicted, grow by the most
            grow = _MAX_GROWTH
        half = (min(m // 2, int(np.ceil(h_c * grow))), min(n // 2, int(np.ceil(h_r * grow))))
    warnings.warn(f"fast_gmr(tol={tol}) stopped after {_MAX_TOL_ROUNDS} rounds with an "
                  f"estimated error ratio of {ratio:.3g}", stacklevel=3)
    return X_comb, estimate, (2 * h_c, 2 * h_r)


def _gram(X, Y):
    """``X @ Y`` as a dense float64 array (X, Y dense or sparse)."""
    XY = product(X, Y)
    return np.asarray(XY.toarray() if sp.issparse(XY) else XY, dtype=np.float64)


def _weighted_norm2(gram_C, D, gram_R):
    """``||C D R||_F^2 = <D, (C^T C) D (R R^T)>`` from the Gram matrices."""
    return max(float(np.einsum("ij,ij->", D, gram_C @ D @ gram_R)), 0.0)


def _split_sketches(kind, half, C, R, m, n, gen):
    """(S_C, S_R) of sizes 2 * half whose first and last ``half`` rows are
    independent sketches of the kind (each scaled by 1/sqrt(2))."""
    h_c, h_r = half
    cls = operator_class(kind)
    if cls.needs_scores:  # sampled on the scores of C and R: i.i.d. rows
        return _leverage_sampler(C, 0, 2 * h_c, gen), _leverage_sampler(R, 1, 2 * h_r, gen)
    return cls.halves(h_c, m, gen), cls.halves(h_r, n, gen)


def _sketch_problem(S_C, S_R, A, C, R):
    """``(S_C C, S_C A S_R^T, R S_R^T)`` for validated A, C, R.

    Kinds that sketch both sides of A in one pass over its nonzeros do so
    (:func:`sketchlab.sketch_both`); the others go through ``S_C A``, and each
    operator is generated once for both of its products (``apply_many``).
    """
    one_pass = S_C.one_pass and S_R.one_pass
    # A, C, R validated once, by check_gmr_inputs (SC_A is their sketch)
    A, C, R = Checked(A), Checked(C), Checked(R)
    if one_pass:
        return S_C.apply(C), sketch_both(S_C, A, S_R), S_R.apply(R, axis=1)
    SC_C, SC_A = S_C.apply_many([C, A])
    R_SR, M = S_R.apply_many([R, Checked(SC_A)], axis=1)
    return SC_C, M, R_SR


def solve_sketched(SC_C: NDArray[np.floating], M: NDArray[np.floating],
                   R_SR: NDArray[np.floating], *, rtol: float | None = None,
                   eps: float = np.finfo(np.float64).eps,
                   structure: str | None = None) -> NDArray[np.floating]:
    """The Fast GMR solution ``X~ = (S_C C)^+ M (R S_R^T)^+`` of sketched factors
    (the paper's eq. (3.3)), projected onto the symmetric or PSD matrices for
    ``structure`` (Theorem 2).  fast_gmr and faster_spsd (Algorithm 2, Fast
    GMR on a kernel matrix with C = R^T) end here."""
    X = solve_core(SC_C, M, R_SR, rtol_left=rtol, rtol_right=rtol, eps=eps)
    if structure == "symmetric":
        return symmetrize(X)
    if structure == "psd":
        return _project_psd(X)
    return X


# ---------------------------------------------------------------------------
# Projections (eqs. (3.5) and (3.6))
# ---------------------------------------------------------------------------


def project_symmetric(X: ArrayLike) -> NDArray[np.floating]:
    """Projection onto symmetric matrices, ``(X + X^T) / 2`` (eq. (3.5)).

    Parameters
    ----------
    X : array_like of shape (c, c)

    Returns
    -------
    ndarray of shape (c, c)
        The nearest symmetric matrix in Frobenius norm (float32 kept).

    Raises
    ------
    TypeError
        If X is sparse or not numeric.
    ValueError
        If X is not square or holds NaN or Inf.

    Notes
    -----
    O(c^2).  Proposition 1: for any symmetric Y,
    ``||Y - project_symmetric(X)||_F <= ||Y - X||_F``.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> sketchlab.project_symmetric(np.array([[1.0, 2.0], [0.0, 1.0]]))
    array([[1., 1.],
           [1., 1.]])
    """
    return symmetrize(_square(X))


def project_psd(X: ArrayLike) -> NDArray[np.floating]:
    """Projection onto the PSD cone (eq. (3.6)): symmetrize, then zero the
    negative eigenvalues.

    Parameters
    ----------
    X : array_like of shape (c, c)

    Returns
    -------
    ndarray of shape (c, c)
        The nearest symmetric positive semi-definite matrix in Frobenius
        norm (float32 kept).

    Raises
    ------
    TypeError
        If X is sparse or not numeric.
    ValueError
        If X is not square or holds NaN or Inf.

    Notes
    -----
    One symmetric eigendecomposition, O(c^3).  Proposition 1: the PSD cone
    is closed and convex, so for any PSD Y,
    ``||Y - project_psd(X)||_F <= ||Y - X||_F``; the projection never
    increases the distance to a PSD target such as ``C^+ A (C^+)^T`` for an
    SPSD A (Theorem 2).

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> sketchlab.project_psd(np.diag([2.0, -1.0]))
    array([[2., 0.],
           [0., 0.]])
    """
    return _project_psd(_square(X))


def _square(X):
    X = as_matrix(X, "X", sparse=False)
    if X.shape[0] != X.shape[1]:
        raise ValueError(f"X must be square, got shape {X.shape}")
    return X
