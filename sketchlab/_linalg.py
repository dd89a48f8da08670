"""The dense linear algebra of the package, in one place: what runs on one BLAS thread.

Every LAPACK call of the package goes through a function of this module
(thin SVD, QR and the sketch-basis policy, symmetric eigenproblems,
Cholesky factors, triangular solves, the BLAS handles of the Krylov bases'
in-place updates, the GEMM update of a running sketch), and each applies
the BLAS-thread policy at its entry (the decorator
``sketchlab._config.one_blas_thread``): the small dense steps that sit
between compiled loops run on one BLAS thread.  What it holds besides: the
one rank rule, the GMR core, the QR policy of sketches, Nystrom's core and
the PSD factor.  What runs on all threads (the products in fixed row chunks,
the reductions over a matrix's values, page faulting) is in
``sketchlab._engine``; the growing bases of block Krylov are in
``sketchlab._krylov_basis``.
One rank rule decides every cutoff (:func:`numerical_rank`, with
:func:`default_rtol`), for singular values and for the eigenvalues of a
PSD core alike (:func:`psd_factor`).

Every method of the package ends in the same small problem: given factors
``L`` (p x c) and ``Rr`` (r x q) and a middle matrix ``M`` (p x q), the
minimum-norm solution ``X = L^+ M Rr^+`` of ``min_X ||L X Rr - M||_F``.

==================================  ===========================  ==================  ==================
caller                              L                            M                   Rr
==================================  ===========================  ==================  ==================
gmr, optimal_spsd (exact)           T_C (C = Q_C T_C)            Q_C^T A Q_R         T_R^T (R^T = Q_R T_R)
fast_gmr (Algorithm 1)              S_C C                        S_C A S_R^T         R S_R^T
nystrom                             W = K[I, I]                  W                   W
fast_spsd, faster_spsd (Alg. 2)     S_1 C                        S_1 K S_2^T         C^T S_2^T
fast_sp_svd, three_sketch_svd       S_C U_C                      S_C A S_R^T         V_R^T S_R^T
practical_sp_svd                    Psi U_C                      R V_R               (none)
==================================  ===========================  ==================  ==================

:func:`solve_core` solves it with ONE rank rule (:func:`numerical_rank`): a
factor clearly of full rank (condition number far below the rule's cutoff)
goes through a Cholesky QR (:func:`cholesky_qr`, Gram-matrix GEMMs that run
at several times the speed of LAPACK's tall thin SVD), and any other through
its truncated thin SVD; :func:`symmetrize` and :func:`project_psd`
are the projections of Theorem 2; the QR of a tall sketch follows one policy (:func:`sketch_basis`:
CholeskyQR2 where it pays and the sketch is clearly of full rank, else
Householder's).  Everything here is small (c, r, s of a few hundred at most) and runs on one
BLAS thread: idle OpenBLAS threads spin after a call and slow down the Numba
loops that run next (see ``sketchlab._config.serial_blas``).
"""

from __future__ import annotations

import contextlib
import math
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import scipy.linalg as sla

from ._config import one_blas_thread, serial_blas
from ._validation import Checked

if TYPE_CHECKING:
    from typing import TypeAlias

    from numpy.typing import NDArray

    from ._validation import Matrix

    Array: TypeAlias = NDArray[np.floating]

__all__ = [
    "square_safe_exponent",
    "exponent_of_largest",
    "default_rtol",
    "numerical_rank",
    "truncated_svd",
    "cholesky_qr",
    "solve_core",
    "range_factors",
    "exact_core",
    "symmetrize",
    "project_psd",
    "svd",
    "svd_values",
    "qr_pivoted",
    "cholesky_upper",
    "upper_inverse",
    "blas_functions",
    "qr",
    "orthonormal",
    "pivoted_qr_order",
    "eigh",
    "eigvalsh",
    "pinvh",
    "lstsq",
    "qr_r",
    "cholesky",
    "lower_solve",
    "lower_transpose_solve",
    "lower_inverse",
    "spd_solver",
    "gram_t",
    "top_singular_sparse",
    "product",
    "gemm_add",
    "trmm_right",
    "nystrom_core",
    "psd_factor",
    "nystrom_factor",
    "factored_eigh",
    "nystrom_eigh",
    "Basis",
    "sketch_basis",
    "ONE_ROUND_COND",
]

# entries whose magnitudes lie in this range can be squared and summed (Gram
# matrices, norms, Householder vectors) without under- or overflow
_SQUARE_SAFE = (1e-140, 1e140)


def square_safe_exponent(X: Array) -> int:
    """0 when the largest magnitude of X lies in (1e-140, 1e140) (or X is
    zero, empty or not finite), else its binary exponent e: ``ldexp(X, -e)``
    then has its largest magnitude in [0.5, 1), exactly, and its squares
    neither underflow nor overflow (some BLAS builds square without scaling
    in nrm2, so a Householder QR of a matrix near 1e-301 lost 9 digits)."""
    return exponent_of_largest(float(np.max(np.abs(X))) if X.size else 0.0)


def exponent_of_largest(top: float) -> int:
    """:func:`square_safe_exponent` of a matrix whose largest magnitude is
    ``top`` (for a caller that has it already)."""
    if top == 0.0 or not top < np.inf or _SQUARE_SAFE[0] < top < _SQUARE_SAFE[1]:
        return 0
    return math.frexp(top)[1]


def default_rtol(shape: tuple[int, ...], eps: float) -> float:
    """The default relative cutoff of singular values for a factor of
    ``shape``: ``max(shape) * eps``, as ``numpy.linalg.matrix_rank``."""
    return max(shape) * eps


def numerical_rank(s: Array, rtol: float) -> int:
    """Number of singular values ``s`` (non-increasing) above ``rtol * s[0]``:
    the one rank rule of the package."""
    if s.size == 0 or not s[0] > 0:
        return 0
    return int(np.count_nonzero(s > rtol * s[0]))


@one_blas_thread
def truncated_svd(B: Array, rtol: float | None = None,
                  eps: float = np.finfo(np.float64).eps) -> tuple[Array, Array, Array]:
    """Thin SVD of a small dense ``B`` truncated to its numerical rank.

    Singular values at or below ``rtol * s_max`` are dropped (default
    ``rtol = max(B.shape) * eps``).  Returns ``U, s, Vt`` of that rank.
    """
    B = np.asarray(B, dtype=np.float64)
    try:
        U, s, Vt = sla.svd(B, full_matrices=False, check_finite=False, lapack_driver="gesdd")
    except np.linalg.LinAlgError:  # pragma: no cover - gesdd rarely fails to converge
        U, s, Vt = sla.svd(B, full_matrices=False, check_finite=False, lapack_driver="gesvd")
    if rtol is None:
        rtol = default_rtol(B.shape, eps)
    k = numerical_rank(s, rtol)
    return U[:, :k], s[:k], Vt[:k]


# A factor goes through the Cholesky QR only when its estimated condition
# number is below this: cholesky_qr's Gram matrix squares it (cond^2 eps is
# then at most 0.02, so the Cholesky factorization exists), and the second pass
# of CholeskyQR2 makes Q orthonormal to working precision.
_CHOLQR_MAX_COND = 1e7
# ... and one Cholesky pass is enough (``Q = B T1^-1`` is orthonormal to
# about eps cond(B)^2, under 1.5e-14) when the first factor's 2-norm
# condition number is below this.  Range sketches usually are that well
# conditioned: 1.2-1.9 for CountSketch sketches of 13-40 columns of
# debian-tfidf, where Q came out orthonormal to 1.5e-15.
ONE_ROUND_COND = 8.0


def cholesky_qr(B: Array, rtol: float | None = None,
                eps: float = np.finfo(np.float64).eps, *,
                overwrite: bool = False, exponent: int | None = None,
                finish: bool = True, second_round: bool = True) -> tuple[Array, ...] | None:
    """``B = Q T`` by CholeskyQR2 for a tall B clearly of full column rank, else None.

    Two passes of ``T_k = chol(Q^T Q)``, ``Q <- Q T_k^-1`` (Fukaya, Nakatsukasa
    et al. 2014): Q is orthonormal to working precision when
    ``cond(B)^2 eps < 1``.  B counts as clearly of full rank when the
    first factor's estimated condition number (LAPACK's trcon, times the
    number of columns for the gap between norms) is below
    ``min(1e7, 0.01 / rtol)``: then every singular value is far above the
    rank rule's cutoff ``rtol * s_max`` (default ``max(shape) * eps``), and
    the truncated SVD would keep them all.  None (use the SVD) when the
    Cholesky factorization fails, the Gram matrix is not finite, B is wide
    or has no columns.  ``overwrite=True`` lets Q take the memory of an
    F-ordered float64 B when a factorization is returned (B is then spent;
    with None it is untouched).  ``exponent``: the power of two to scale B
    by before squaring, for a caller that knows it (else
    :func:`square_safe_exponent`, a scan of B with a temporary of its size).
    ``finish=False`` returns ``(Q1, T2, T)`` with ``Q = Q1 T2^-1`` not
    formed: a caller that only multiplies Q by small matrices applies
    ``T2^-1`` on their side and saves a pass over the tall Q.  When B is
    well conditioned (2-norm condition number under 8: one Cholesky pass
    already gives Q orthonormal to about ``eps cond(B)^2``), Q1 is B itself
    (scaled by ``2^-exponent``; the caller's array when that is 0) and T2
    the first factor: no pass over B after its Gram matrix.
    ``second_round=False`` (with ``finish=False``) returns None where one
    pass is not enough, for a caller whose other choice is cheaper than
    the second pass (Householder's QR of a sketch of few columns).
    """
    B = np.asarray(B, dtype=np.float64)
    m, n = B.shape
    if n == 0 or m < n:
        return None
    if rtol is None:
        rtol = default_rtol(B.shape, eps)
    limit = min(_CHOLQR_MAX_COND, 0.01 / rtol) if rtol > 0 else _CHOLQR_MAX_COND
    # the Gram matrix neither under- nor overflows
    e = square_safe_exponent(B) if exponent is None else exponent
    if e:
        B = np.ldexp(B, -e)
        overwrite = True  # a copy of ours
    T1 = _gram_cholesky(B)
    if T1 is None:
        return None
    rcond = _triangular_rcond(T1)
    if not n < limit * rcond:  # n / rcond >= limit, NaN-safe
        return None
    if not finish:
        s = sla.svdvals(T1, check_finite=False)
        if s[0] < ONE_ROUND_COND * s[-1]:
            return B, T1, (np.ldexp(T1, e) if e else T1)
        if not second_round:
            return None
    Q = _right_solve(B, T1, overwrite)
    T2 = _gram_cholesky(Q)
    if T2 is None:  # pragma: no cover - Q has condition number near 1 here
        return None
    T = np.ldexp(T2 @ T1, e) if e else T2 @ T1
    if not finish:
        return Q, T2, T
    return _right_solve(Q, T2, True), T


def _triangular_rcond(T):
    """Reciprocal 1-norm condition number of an upper triangular T: LAPACK's
    trcon estimate where scipy has it (not in 1.10), else exactly from the
    inverse (``trtri``, as many flops as the Cholesky factorization); 0 when T
    is singular."""
    trcon = getattr(sla.lapack, "dtrcon", None)
    if trcon is not None:
        rcond, info = trcon(T, norm="1", uplo="U")
        return rcond if info == 0 else 0.0
    Tinv, info = sla.lapack.dtrtri(T, lower=0)
    if info != 0:
        return 0.0
    return 1.0 / (np.abs(T).sum(axis=0).max() * np.abs(Tinv).sum(axis=0).max())


def _gram_cholesky(B):
    """Upper Cholesky factor of ``B^T B``, or None when it does not exist."""
    with np.errstate(over="ignore", invalid="ignore"):
        G = B.T @ B
    if not np.isfinite(G).all():
        return None
    T, info = sla.lapack.dpotrf(G, lower=0, clean=1)
    return T if info == 0 else None


def _right_solve(B, T, overwrite=False):
    """``B T^-1`` for an upper triangular T (one BLAS trsm; in B's memory
    with ``overwrite`` when B is F-ordered float64)."""
    return sla.blas.dtrsm(1.0, T, np.asfortranarray(B), side=1, lower=0, overwrite_b=overwrite)


def _pinv_factors(B, rtol, eps):
    """``(U, W)`` with ``B^+ = W U^T`` and U of orthonormal columns: from
    :func:`cholesky_qr` (``W = T^-1``) when B is clearly of full rank, else
    from its truncated SVD (``W = V diag(1/s)``)."""
    qr = cholesky_qr(B, rtol, eps)
    if qr is not None:
        Q, T = qr
        return Q, sla.lapack.dtrtri(T, lower=0)[0]
    U, s, Vt = truncated_svd(B, rtol, eps)
    return U, Vt.T / s


@one_blas_thread
def solve_core(L: Array, M: Array, Rr: Array | None = None, *, rtol_left: float | None = None,
               rtol_right: float | None = None, eps: float = np.finfo(np.float64).eps) -> Array:
    """``L^+ M Rr^+``, the minimum-norm solution of ``min_X ||L X Rr - M||_F``.

    With ``L^+ = W1 U1^T`` and ``(Rr^T)^+ = W2 U2^T`` (U of orthonormal
    columns: the Q of a Cholesky QR and ``W = T^-1`` for a factor clearly of
    full rank, else the truncated thin SVD ``U diag(s) V^T`` and
    ``W = V diag(1/s)``), ``L^+ M Rr^+ = W1 (U1^T M U2) W2^T``.
    ``Rr=None`` stands for the identity (``L^+ M``).

    Parameters
    ----------
    L : ndarray of shape (p, c)
    M : ndarray of shape (p, q)
    Rr : ndarray of shape (r, q), optional
    rtol_left, rtol_right : float, optional
        Relative singular-value cutoffs of L and Rr; default
        ``max(shape) * eps`` of each (:func:`default_rtol`).
    eps : float
        Machine epsilon of the computation's precision (float32's when all
        inputs of the calling algorithm were float32).

    Returns
    -------
    ndarray of shape (c, r) (or (c, q) without Rr), float64.
    """
    U1, W1 = _pinv_factors(L, rtol_left, eps)
    core = U1.T @ np.asarray(M, dtype=np.float64)
    if Rr is None:
        return W1 @ core
    U2, W2 = _pinv_factors(np.asarray(Rr, dtype=np.float64).T, rtol_right, eps)
    return (W1 @ (core @ U2)) @ W2.T


def range_factors(A: Matrix, C: Array, R: Array) -> tuple[Array, Array, Array, Array, Array]:
    """Thin QRs ``C = Q_C T_C``, ``R^T = Q_R T_R`` and ``B = Q_C^T A Q_R``.

    Then ``C X R = Q_C (T_C X T_R^T) Q_R^T`` for every X, so the exact GMR
    problem reduces to the small ``min_X ||B - T_C X T_R^T||`` (:func:`exact_core`)
    plus the part of A outside the two ranges.  A (dense, or sparse with a
    ``@``) is touched by one product, on the thinner side.
    """
    # The QRs of thin matrices are memory-bound level-2 work that threads
    # barely speed up, and on a busy machine two OpenBLAS threads made the
    # small GEMM below 10-100x slower.  A sparse product is serial scipy; a
    # dense one a GEMM.
    with serial_blas():
        Q_C, T_C = sla.qr(np.asarray(C, dtype=np.float64), mode="economic", check_finite=False)
        Q_R, T_R = sla.qr(np.asarray(R, dtype=np.float64).T, mode="economic", check_finite=False)
    right = Q_R.shape[1] <= Q_C.shape[1]
    AQ = np.asarray(A @ Q_R) if right else np.asarray(A.T @ Q_C)  # (m, k_r) or (n, k_c)
    with serial_blas():
        B = Q_C.T @ AQ if right else AQ.T @ Q_R
    return Q_C, T_C, Q_R, T_R, B


def exact_core(T_C: Array, T_R: Array, B: Array, shape_c: tuple[int, int], shape_r: tuple[int, int],
               rtol: float | None = None, eps: float = np.finfo(np.float64).eps) -> Array:
    """``X* = T_C^+ B (T_R^T)^+ = C^+ A R^+`` from :func:`range_factors`.

    ``C^+ = T_C^+ Q_C^T`` because Q_C has orthonormal columns (likewise for
    R); the default rank cutoff is that of the full factors (``max(m, c) eps``
    for C of shape ``shape_c``, ``max(n, r) eps`` for R), whose singular
    values are those of T_C and T_R.
    """
    rtol_c = default_rtol(shape_c, eps) if rtol is None else rtol
    rtol_r = default_rtol(shape_r, eps) if rtol is None else rtol
    return solve_core(T_C, B, T_R.T, rtol_left=rtol_c, rtol_right=rtol_r, eps=eps)


def symmetrize(X: Array) -> Array:
    """``(X + X^T) / 2``: the projection onto symmetric matrices."""
    return (X + X.T) / 2


@one_blas_thread
def project_psd(X: Array) -> Array:
    """Symmetrize, then zero the negative eigenvalues: the projection onto
    the PSD cone in Frobenius norm."""
    w, V = sla.eigh(symmetrize(X), check_finite=False)
    np.maximum(w, 0.0, out=w)
    return symmetrize((V * w) @ V.T)


# ---------------------------------------------------------------------------
# The LAPACK and BLAS calls of the package (one BLAS thread unless asked)
# ---------------------------------------------------------------------------


def _blas(parallel):
    """The BLAS-thread policy: one thread (``serial_blas``), or the
    caller's (a large dense problem with nothing compiled around it)."""
    return contextlib.nullcontext() if parallel else serial_blas()


def svd(B: Array, *, full_matrices: bool = False, parallel: bool = False
        ) -> tuple[Array, Array, Array]:
    """``U, s, Vt`` of B by LAPACK's gesdd (scipy's default driver)."""
    with _blas(parallel):
        return sla.svd(B, full_matrices=full_matrices, check_finite=False, lapack_driver="gesdd")


@one_blas_thread
def svd_values(B: Array) -> Array:
    """Singular values of B, non-increasing."""
    return sla.svdvals(B, check_finite=False)


@one_blas_thread
def qr_pivoted(X: Array) -> tuple[Array, Array, NDArray[np.intp]]:
    """Householder QR with column pivoting ``X P = Q R`` (``(Q, R, piv)``)."""
    return sla.qr(X, pivoting=True, check_finite=False)


@one_blas_thread
def cholesky_upper(S: Array) -> Array:
    """The upper Cholesky factor R of a symmetric positive definite S (``R^T
    R = S``); ``numpy.linalg.LinAlgError`` when S is not."""
    return sla.cholesky(S, lower=False, check_finite=False)


@one_blas_thread
def upper_inverse(R: Array) -> Array:
    """``R^-1`` of an upper triangular R (a triangular solve with I)."""
    return sla.solve_triangular(R, np.eye(R.shape[0], dtype=R.dtype), check_finite=False)


def blas_functions(names: tuple[str, ...], like: Array) -> tuple[Any, ...]:
    """The BLAS routines ``names`` ("gemm", "syrk", ...) for arrays like
    ``like`` (scipy's handles, for in-place updates of a buffer)."""
    return sla.blas.get_blas_funcs(names, (like,))


@one_blas_thread
def qr(X: Array, *, overwrite: bool = False) -> tuple[Array, Array]:
    """Economic Householder QR ``X = Q T``."""
    return sla.qr(X, mode="economic", overwrite_a=overwrite, check_finite=False)


def orthonormal(Y: Array) -> Array:
    """An orthonormal basis of the columns of Y (the Q of its economic QR)."""
    return qr(Y)[0]


@one_blas_thread
def pivoted_qr_order(V: Array) -> NDArray[np.intp]:
    """The column pivots of the economic QR of V with column pivoting."""
    return sla.qr(V, mode="economic", pivoting=True, check_finite=False)[2]


@one_blas_thread
def eigh(X: Array) -> tuple[Array, Array]:
    """``w, V`` of the symmetric X (its lower triangle), ascending."""
    return sla.eigh(X, check_finite=False)


@one_blas_thread
def eigvalsh(X: Array) -> Array:
    """Eigenvalues of the symmetric X (its lower triangle), ascending."""
    return sla.eigvalsh(X, check_finite=False)


@one_blas_thread
def pinvh(X: Array) -> Array:
    """Pseudo-inverse of the symmetric X."""
    return sla.pinvh(X, check_finite=False)


@one_blas_thread
def lstsq(A: Array, b: Array) -> Array:
    """The minimum-norm least-squares solution of ``A x = b`` (numpy's gelsd)."""
    return np.linalg.lstsq(A, b, rcond=None)[0]


@one_blas_thread
def qr_r(X: Array, *, overwrite: bool = False) -> Array:
    """The triangle T of the economic Householder QR ``X = Q T`` (Q not formed)."""
    return sla.qr(X, mode="r", overwrite_a=overwrite, check_finite=False)[0]


@one_blas_thread
def cholesky(S: Array) -> Array:
    """The lower Cholesky factor L of a symmetric positive definite S (``L L^T
    = S``); ``numpy.linalg.LinAlgError`` when S is not."""
    return sla.cholesky(S, lower=True, check_finite=False)


@one_blas_thread
def lower_solve(L: Array, B: Array) -> Array:
    """``L^-1 B`` for a lower-triangular L (its upper triangle not read)."""
    return sla.solve_triangular(L, B, lower=True, check_finite=False)


def lower_transpose_solve(L: Array, B: Array) -> Array:
    """``L^-T B`` for a lower-triangular L (its upper triangle not read)."""
    return sla.solve_triangular(L, B, lower=True, trans="T", check_finite=False)


@one_blas_thread
def lower_inverse(L: Array) -> Array | None:
    """The inverse of a lower-triangular float64 L (LAPACK's trtri), None when
    L is singular."""
    Linv, info = sla.lapack.dtrtri(L, lower=1)
    return np.tril(Linv) if info == 0 else None


def spd_solver(M: Array) -> Any:
    """A function ``V -> M^-1 V`` for a symmetric M that is positive definite
    up to rounding: its Cholesky factor, with a shift of ``1e-12 trace(M) /
    c`` (grown tenfold, up to 8 tries) when the factorization fails."""
    M = (M + M.T) / 2
    shift = 0.0
    for _ in range(8):
        try:
            with serial_blas():
                factor = sla.cho_factor(M + shift * np.eye(M.shape[0]), lower=True,
                                        check_finite=False)
            break
        except np.linalg.LinAlgError:
            shift = max(10 * shift, 1e-12 * max(float(np.trace(M)), 1e-300) / M.shape[0])
    else:  # pragma: no cover - M is not close to positive semidefinite
        raise np.linalg.LinAlgError("the preconditioner is not positive definite")
    return lambda V: sla.cho_solve(factor, V, check_finite=False)


# gram_t(A, A): column blocks of at least this many columns, at most
# _GRAM_BLOCKS of them
_GRAM_BLOCK_MIN = 256
_GRAM_BLOCKS = 8


def gram_t(A: Array, B: Array) -> Array:
    """``A^T B`` on the caller's BLAS threads.  For ``B is A`` (c columns),
    exactly symmetric, by GEMMs on column blocks on and above the diagonal
    block, mirrored: about ``(1 + 1/nb) n c^2`` flops for nb blocks against
    ``2 n c^2`` for one GEMM, with no SYRK whose output is larger than a
    block (numpy sends ``A.T @ A`` to BLAS's SYRK, whose multi-threaded
    OpenBLAS kernel has crashed on large problems on some machines), and no
    copy of A in either memory order."""
    if B is not A:
        return A.T @ B
    c = A.shape[1]
    nb = max(1, min(_GRAM_BLOCKS, c // _GRAM_BLOCK_MIN))
    edges = np.linspace(0, c, nb + 1).astype(int)
    out = np.empty((c, c), dtype=np.result_type(A.dtype, np.float32))
    for i in range(nb):
        Ai = A[:, edges[i]:edges[i + 1]]
        for j in range(i, nb):
            block = Ai.T @ A[:, edges[j]:edges[j + 1]]
            out[edges[i]:edges[i + 1], edges[j]:edges[j + 1]] = block
            if j > i:
                out[edges[j]:edges[j + 1], edges[i]:edges[i + 1]] = block.T
    return out


def top_singular_sparse(A: Any, k: int, v0: Array) -> tuple[Array, Array]:
    """``U, s``: the top k singular triplets' left vectors and values of a
    sparse A by ARPACK, from the start vector v0, s non-increasing."""
    from scipy.sparse.linalg import svds

    with serial_blas():  # ARPACK's dense steps are thin
        U, s, _ = svds(A, k=k, v0=v0)
    order = np.argsort(s)[::-1]
    return U[:, order], s[order]


@one_blas_thread
def product(X: Any, Y: Any) -> Any:
    """``X @ Y`` on one BLAS thread (a thin product between compiled loops)."""
    return X @ Y


def gemm_add(target: Array, Y: Array, G: Array, alpha: float = 1.0) -> bool:
    """target += alpha Y @ G in place by BLAS (beta = 1) when ``target`` is C-
    or F-contiguous and the dtypes agree; False otherwise."""
    if target.flags.c_contiguous and not target.flags.f_contiguous:
        return gemm_add(target.T, G.T, Y.T, alpha)
    if not target.flags.f_contiguous or not (Y.dtype == G.dtype == target.dtype):
        return False
    gemm = sla.blas.get_blas_funcs("gemm", (target,))
    a, trans_a = (Y, 0) if Y.flags.f_contiguous else (Y.T, 1)
    b, trans_b = (G, 0) if G.flags.f_contiguous else (G.T, 1)
    if not (a.flags.f_contiguous and b.flags.f_contiguous):
        return False
    res = gemm(alpha, a, b, beta=1.0, c=target, trans_a=trans_a, trans_b=trans_b, overwrite_c=1)
    if not np.shares_memory(res, target):  # pragma: no cover - f2py copied after all
        target[...] = res
    return True


def trmm_right(G: Array, T: Array, *, lower: bool, trans: bool) -> None:
    """``G <- G op(T)`` in place (BLAS trmm; op = transpose when ``trans``)
    for a triangular T, on the caller's BLAS threads (a large G)."""
    trmm = sla.blas.get_blas_funcs("trmm", (G,))
    res = trmm(1.0, T, G, side=1, lower=int(lower), trans_a=int(trans), overwrite_b=1)
    if res is not G and not (np.shares_memory(res, G) and res.strides == G.strides):
        G[...] = res  # f2py copied an operand it could not use as it is


# ---------------------------------------------------------------------------
# PSD cores: Nystrom's, and the factor of a PSD core
# ---------------------------------------------------------------------------


def nystrom_core(W: Array) -> Array:
    """``U = W^+`` of the landmark block ``W = K[I, I]`` (symmetrized),
    symmetric: the core of the Nystrom approximation ``C W^+ C^T``."""
    return symmetrize(solve_core(symmetrize(np.asarray(W, dtype=np.float64)),
                                 np.eye(W.shape[0])))


def nystrom_factor(C: Array, W: Array, rtol: float | None = None) -> Array:
    """F (n x r) with ``F F^T = C W^+ C^T``, the Nystrom approximation on the
    landmark columns C (n x c) and block W (c x c, symmetrized), W's
    eigenvalues that the rank rule drops (:func:`psd_factor`) left out."""
    w, V = psd_factor(np.asarray(W, dtype=np.float64), rtol)
    keep = w > 0
    return np.asarray(C, dtype=np.float64) @ (V[:, keep] / np.sqrt(w[keep]))


def psd_factor(U: Array, rtol: float | None = None,
               eps: float = np.finfo(np.float64).eps) -> tuple[Array, Array]:
    """``w, V`` with ``U ~ V diag(w) V^T`` for a symmetric PSD core U (c x
    c), ascending, with the eigenvalues the rank rule drops set to 0: those
    at or below ``rtol * max(w)`` (default ``rtol = c * eps``,
    :func:`default_rtol`), negative ones (rounding) included."""
    w, V = eigh(symmetrize(U))
    if rtol is None:
        rtol = default_rtol(U.shape, eps)
    w = np.where(w > rtol * max(w.max(), 0.0), w, 0.0)
    return w, V


@one_blas_thread
def nystrom_eigh(Y: Array, Omega: Array) -> tuple[Array, Array]:
    """``lam, U``: the eigenvalues (non-increasing, >= 0) and orthonormal
    eigenvectors of the randomized Nystrom approximation ``Y (Omega^T Y)^+
    Y^T`` of a PSD H (d x d) from ``Y = H Omega`` (d x l), by the stable
    algorithm (Tropp, Yurtsever, Udell and Cevher 2017, Algorithm 3;
    Frangella, Tropp and Udell 2023, Algorithm 2.1): the sketch of
    ``H + nu I``, ``nu = sqrt(d) eps ||Y||_F``, then ``nu`` taken off the
    eigenvalues.  float64 whatever Y's dtype.  Fewer than l pairs when
    rounding left ``Omega^T Y`` indefinite (its PSD part is used): the
    missing eigenvalues are zero."""
    Y = np.asarray(Y, dtype=np.float64)
    Omega = np.asarray(Omega, dtype=np.float64)
    d, l = Y.shape
    norm = float(np.linalg.norm(Y))
    if norm == 0.0:
        return np.zeros(0), np.zeros((d, 0))
    nu = math.sqrt(d) * np.finfo(np.float64).eps * norm
    Ynu = Y + nu * Omega
    M = symmetrize(Omega.T @ Ynu)
    try:
        L = sla.cholesky(M, lower=True, check_finite=False)
        B = sla.solve_triangular(L, Ynu.T, lower=True, check_finite=False).T
    except np.linalg.LinAlgError:  # rounding left Omega^T Y_nu indefinite: its PSD part
        w, V = sla.eigh(M, check_finite=False)
        keep = w > default_rtol(M.shape, np.finfo(np.float64).eps) * max(float(w[-1]), 0.0)
        B = Ynu @ (V[:, keep] / np.sqrt(w[keep]))
    U, s, _ = sla.svd(B, full_matrices=False, check_finite=False, lapack_driver="gesdd")
    return np.maximum(s * s - nu, 0.0), U


@one_blas_thread
def factored_eigh(C: Array, U: Array, k: int) -> tuple[Array, Array]:
    """Top-k eigenpairs of ``C U C^T`` (C tall, U symmetric c x c), largest
    first: thin QR ``C = Q T``, then the eigendecomposition of ``T U T^T``."""
    Q, T = sla.qr(np.asarray(C, dtype=np.float64), mode="economic", check_finite=False)
    w, Z = sla.eigh(symmetrize(T @ U @ T.T), check_finite=False)
    top = np.argsort(w)[::-1][:k]
    return w[top], Q @ Z[:, top]


# ---------------------------------------------------------------------------
# The orthonormal basis of a tall sketch: the QR policy of the SVDs
# ---------------------------------------------------------------------------

# Row chunks of the in-place products at the end.
_CHUNKS = 8
# Rows of U_C, V_R sketched per call in the final step: block application with
# offsets, so no O(m) table of a hash sketch is built at the end.
_FINAL_STEP = 1 << 16
# sketch_basis: CholeskyQR2 for sketches of more entries (16 MB: beyond half the L3
# cache), and for tall ones of at least 16 columns from 2**16 entries on
_CHOLQR_MIN_ENTRIES = 1 << 21
_CHOLQR_TALL_MIN_ENTRIES = 1 << 16
_CHOLQR_MIN_COLUMNS = 16
_CHOLQR_MIN_ASPECT = 8


def _chunks(n, pieces=_CHUNKS):
    """``pieces`` (at most n) nearly equal ranges covering [0, n)."""
    step = -(-n // max(1, min(n, pieces)))
    return [(i, min(n, i + step)) for i in range(0, n, step)]


def _cholesky_qr_pays(shape):
    """Whether CholeskyQR2 (Gram products and triangular solves, all level-3
    BLAS) beats Householder's QR on one BLAS thread for a sketch of
    ``shape``: beyond the last-level cache Householder's unblocked panel
    sweeps X once per column, and inside it OpenBLAS's Householder QR of 16
    columns or more is still the slower one; under 16 columns neither wins
    everywhere (the thresholds come from timing both on one BLAS thread;
    asv_benchmarks' SinglePassSVD and TallSinglePassSVD measure the SVDs
    that use them)."""
    m, n = shape
    return m > n and (m * n > _CHOLQR_MIN_ENTRIES
                      or (n >= _CHOLQR_MIN_COLUMNS and _one_round_pays(shape)))


def _one_round_pays(shape):
    """Whether one Cholesky pass (a Gram product, when it is enough: see
    :func:`cholesky_qr`) beats Householder's QR where
    CholeskyQR2 does not (:func:`_cholesky_qr_pays`): a tall sketch of
    fewer columns, where timing both on one BLAS thread (CountSketch
    sketches of debian-tfidf) found the Gram product faster
    (asv_benchmarks' TallSinglePassSVD measures the SVDs that use it)."""
    m, n = shape
    return m > n and m * n >= _CHOLQR_TALL_MIN_ENTRIES and m >= _CHOLQR_MIN_ASPECT * n


class Basis(NamedTuple):
    """An orthonormal basis ``Q = Q1 T2^-1`` of a tall sketch, kept as the
    tall Q1 and CholeskyQR2's last small triangular factor T2 (None: Q =
    Q1).  Q only ever meets small matrices (the sketches of Q, the lift
    ``Q Z``), so ``T2^-1`` goes on their side: one pass over the tall Q
    (a triangular solve) less per basis.  For a
    well-conditioned sketch Q1 is the sketch itself and T2 the one Cholesky
    factor (:func:`cholesky_qr`): ``spare`` False when
    Q1 is memory the caller keeps (the lift then writes a new array)."""

    Q1: NDArray[np.floating]
    T2: NDArray[np.floating] | None
    spare: bool = True

    @one_blas_thread
    def rows(self, op: Any) -> Array:
        """``op @ Q`` (op a sketching operator of Q's rows)."""
        return self.times(_sketch_rows(op, self.Q1))

    @one_blas_thread
    def times(self, Y):
        """``Y T2^-1`` of a small ``Y = (...) Q1``: the same product with Q."""
        if self.T2 is None:
            return Y
        return sla.solve_triangular(self.T2, Y.T, trans="T", check_finite=False).T

    @one_blas_thread
    def lift(self, Z):
        """``Q Z``, written into the first columns of Q1 when it is spare
        (the basis is spent)."""
        # the one large product of a recovery, on one BLAS thread as the rest
        # of it (partial_fit's recoveries sit between compiled passes)
        if self.T2 is not None:
            Z = sla.solve_triangular(self.T2, Z, check_finite=False)
        if not self.spare:
            return self.Q1 @ Z.astype(self.Q1.dtype, copy=False)
        return _lift(self.Q1, Z)


def sketch_basis(X: Array, overwrite: bool, norm: float) -> tuple[Basis, Array]:
    """Economic QR of a tall X, a sketch of a matrix of Frobenius norm
    ``norm``: (basis, T), the orthonormal :class:`Basis`.  Householder's,
    except where CholeskyQR2 is the faster (:func:`_cholesky_qr_pays`) and
    X is clearly of full rank.  Where ``norm`` is far from 1, X is scaled by
    a power of two first if its squares would under- or overflow (exact:
    only T carries the scale); in between, the entries that matter (within
    1e-30 or so of the norm) square safely, and X is not read twice."""
    e = 0 if 1e-100 < norm < 1e100 else square_safe_exponent(X)
    pays = _cholesky_qr_pays(X.shape)
    if X.dtype == np.float64 and (pays or _one_round_pays(X.shape)):
        with serial_blas():
            qr = cholesky_qr(X, overwrite=overwrite and X.flags.f_contiguous, exponent=e,
                             finish=False, second_round=pays)
        if qr is not None:
            Q1, T2, T = qr
            return Basis(Q1, T2, overwrite or not np.shares_memory(Q1, X)), T
    if e:
        X = np.ldexp(X, -e, out=X if overwrite else None)
    with serial_blas():
        Q, T = sla.qr(X, mode="economic", overwrite_a=overwrite, check_finite=False)
    return Basis(Q, None), np.ldexp(T, e) if e else T


def _sketch_rows(op, Q):
    """``op @ Q`` in float64, applied in row blocks of Q with offsets (no O(m)
    table of a hash operator is built); the blocks are handed over as
    checked (a basis computed from checked sketches)."""
    Q = Q if Q.dtype == np.float64 else Q.astype(np.float64)
    out = np.zeros((op.sketch_size, Q.shape[1]))
    for i0 in range(0, Q.shape[0], _FINAL_STEP):
        op.apply(Checked(Q[i0:i0 + _FINAL_STEP]), axis=0, offset=i0, out=out, accumulate=True)
    return out


def _lift(Q, Z):
    """``Q @ Z`` (Q of shape (p, q), Z of shape (q, t), t <= q), written into
    the first t columns of Q one row chunk at a time (Q is spent)."""
    Z = Z.astype(Q.dtype, copy=False)
    t = Z.shape[1]
    for r0, r1 in _chunks(Q.shape[0]):
        Q[r0:r1, :t] = Q[r0:r1] @ Z
    return Q[:, :t]
