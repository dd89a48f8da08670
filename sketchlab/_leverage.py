"""Leverage scores, exact and sketched.

The row leverage scores of A are the squared row norms of an orthonormal
basis of its column space (the diagonal of the projection A A^+); the rank-k
scores use the top-k left singular vectors instead.  ``method="exact"`` takes
them from a thin SVD (or, for the top k of a large sparse A, from ARPACK);
``method="sketch"`` approximates them in about O(nnz(A)) time: Drineas,
Magdon-Ismail, Mahoney & Woodruff, "Fast approximation of matrix coherence
and statistical leverage" (JMLR 13, 2012) for the full-rank scores, and
randomized subspace iteration (Halko, Martinsson & Tropp, "Finding structure
with randomness", SIAM Review 53, 2011) for the rank-k scores.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from ._config import serial_blas
from ._linalg import (
    cholesky_qr,
    default_rtol,
    numerical_rank,
    orthonormal,
    product,
    svd,
    top_singular_sparse,
)
from ._validation import as_generator, as_matrix, check_axis, check_choice, check_int
from ._validation import check_rtol

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ._validation import MatrixLike

__all__ = ["leverage_scores", "sampling_scores"]

_METHODS = ("exact", "sketch", "krylov")

# method="exact": a sparse A with more entries than this (32 MB of float64)
# gets its top-k singular vectors from ARPACK instead of a dense SVD.
_DENSE_SVD_ENTRIES = 1 << 22

# method="sketch", rank k: the top row space of A is found from a sketch with
# k + max(k, _OVERSAMPLING) rows refined by _POWER_ITERATIONS products with A^T A
# (HMT 2011 oversample by 5 to 10; more rows and iterations cost time and
# gain accuracy where sigma_k / sigma_{k+1} is close to 1).
_OVERSAMPLING = 10
_POWER_ITERATIONS = 2

# method="sketch", full rank: a d-dimensional subspace is embedded by an
# OSNAP with _EMBEDDING_ROWS_PER_DIM * d rows and _EMBEDDING_NNZ_PER_COL
# nonzeros per column; the row norms are estimated with
# ceil(_JL_COLUMNS_PER_LOG * ln m) Gaussian columns.
_EMBEDDING_ROWS_PER_DIM = 8
_EMBEDDING_NNZ_PER_COL = 4
_JL_COLUMNS_PER_LOG = 8


def _row_norms2(U):
    return np.einsum("ij,ij->i", U, U)


def _rank(s, rtol, shape):
    """The package's rank rule (:func:`~sketchlab._linalg.numerical_rank`)
    with the default cutoff of a matrix of ``shape``."""
    if rtol is None:
        rtol = default_rtol(shape, np.finfo(np.float64).eps)
    return numerical_rank(s, rtol)


def _is_zero(A):
    data = A.data if sp.issparse(A) else A
    return not np.any(data)


def leverage_scores(A: MatrixLike, axis: int = 0, *, k: int | None = None, method: str = "exact",
                    rtol: float | None = None,
                    rng: None | int | np.random.Generator = None) -> NDArray[np.float64]:
    """Leverage scores of ``A``, exact or sketched, full-rank or rank-k.

    Parameters
    ----------
    A : array_like or scipy.sparse matrix of shape (m, n)
        Dense or sparse (CSR/CSC; other formats are converted).
        ``method="exact"`` densifies a sparse A unless it asks for the top k
        of a large one; ``method="sketch"`` never densifies a sparse A.
    axis : {0, 1}, default 0
        0: one score per ROW of A (squared row norms of an orthonormal basis
        U of the column space; length m).  1: one score per COLUMN (squared
        row norms of a basis V of the row space; length n).
    k : int, optional
        Rank-k scores: squared row norms of the top-k left singular vectors
        (axis 0) or right singular vectors (axis 1), ``1 <= k <= min(m, n)``.
        Default: the scores of the whole column (row) space.
    method : {"exact", "sketch", "krylov"}, default "exact"
        ``"sketch"`` approximates the scores in about O(nnz(A)) time;
        ``"krylov"`` (k required) takes them from the hat matrix of the
        rank-k truncation that :func:`~sketchlab.krylov_svd` finds, more
        accurate for the same work where the spectrum is flat (see Notes).
    rtol : float in [0, 1), optional
        Singular values at or below ``rtol * sigma_max`` count as zero;
        default ``max(m, n) * eps`` as in ``numpy.linalg.matrix_rank``.
    rng : None, int or numpy.random.Generator
        Seeds the sketches of ``method="sketch"`` (unused by "exact").

    Returns
    -------
    ndarray of shape (m,) or (n,)
        float64 scores in [0, 1].  They sum to rank(A), or to ``min(k,
        rank(A))`` when k is given; all zero for a zero matrix.

    Raises
    ------
    TypeError
        If A is not numeric, k is not an int, rtol is not a real number (a
        bool is not), or rng is not None, an int or a Generator.
    ValueError
        If A holds NaN or Inf, axis is not 0 or 1, k is outside
        ``[1, min(m, n)]``, method is unknown (or "krylov" without k), or
        rtol is outside [0, 1).

    Notes
    -----
    ``method="exact"``: a thin SVD, O(m n min(m, n)).  With k given and a
    sparse A of more than 2**22 entries, ARPACK
    (``scipy.sparse.linalg.svds``, from a fixed start vector) finds the
    top-k singular vectors instead, to machine precision.  Rank-k scores are
    defined only when ``sigma_k > sigma_{k+1}`` and are ill-conditioned when
    the two are close.

    ``method="sketch"`` without k follows Algorithm 1 of Drineas,
    Magdon-Ismail, Mahoney & Woodruff (2012) (shown for axis 0 and an A with
    d = n columns): an OSNAP embedding Pi1 with 8 d rows and 4 nonzeros per
    column gives ``R^-1 = V Sigma^-1`` from the SVD of the small Pi1 A
    (rank-revealing with rtol), so that A R^-1 has nearly orthonormal
    columns; the squared row norms of ``A R^-1 Pi2``, Pi2 Gaussian with
    ``ceil(8 ln m)`` columns (skipped when the rank is smaller), estimate
    the scores.  A small Pi1 inflates all of them by about the same factor
    (for Gaussian Pi1, ``r / (r - d - 1)``), so they are rescaled to sum to
    the rank and capped at 1.  A wide A (``8 m < n``) is first compressed to
    8 m columns by an OSNAP on the right, which keeps its column space and
    so its row scores; when the embedding would be no smaller than A the
    scores are computed exactly.  Cost: O(nnz(A)) for the sketches, O(d^3)
    for the small SVD, O(nnz(A) log m) for the last product; meant for thin
    matrices (with k, any shape).  The paper proves relative-error
    approximations for sketch sizes O(d log d / eps^2) and O(log m / eps^2);
    with the sizes above, over five seeds on random tall matrices and on the
    mushrooms, dna and splice data sets, 99.8% of the ratios approximate /
    exact were in [0.5, 2] and all in [0.36, 1.94].

    ``method="sketch"`` with k computes the top-k left singular vectors of
    ``Q Q^T A``, where Q (m x l, l = k + max(k, 10)) comes from randomized
    subspace iteration with two products by ``A A^T`` (Halko, Martinsson &
    Tropp 2011, Algorithms 4.4 and 5.1) started from a CountSketch of the
    rows of A; Q Q^T A is a near-optimal rank-k approximation of A and its
    top-k leverage scores sum to exactly ``min(k, rank)``.  Cost: one
    O(nnz(A)) sketch, four products of A or A^T with l columns
    (O(nnz(A) l)), and O((m + n) l^2) for thin QRs and a small SVD.  The
    accuracy depends on the gap: where ``sigma_{k+1} / sigma_k <= 0.8`` every
    ratio approximate / exact was in [0.99, 1.01]; on debian-tfidf (52396 x
    25252, nnz 2.07M, ``sigma_11 / sigma_10 = 0.98``) with k = 10 over five
    seeds the median ratio was 1.03 (axis 0) and 1.17 (axis 1), 91% and 83%
    of the ratios were in [0.5, 2], the largest 15 and 27.  It is meant to
    take less time than the exact scores from ARPACK (measured by the
    ``cur (..., approx-leverage, core fast)`` row of
    asv_benchmarks/compare.py, against ``select="leverage"``).

    ``method="krylov"`` (k given): the diagonal of the hat matrix ``U_k
    U_k^T`` of the rank-k truncation ``U_k diag(s) V_k^T`` that
    :func:`~sketchlab.krylov_svd` returns (block Krylov with its default
    stopping rule: until the top k singular values settle), i.e. the squared
    row norms of ``U_k``.  The hat matrix of a truncation is a projection of
    rank k, so a randomized diagonal estimator (XDiag,
    :func:`~sketchlab.estimate_diagonal`) would return exactly these scores
    once its basis spans the k-dimensional range: the accuracy is that of the
    subspace, and block Krylov gets a better subspace per product than the
    subspace iteration of "sketch".  On debian-tfidf (rows, k = 50) the
    median relative error against the exact scores was 3e-4 (23 passes, 11
    s), against 0.10 for "sketch" (31 s, the same process, two seeds, load
    average about 10); 0.06 with ``passes=12`` (the ``compare.py`` row
    "leverage k=50" times the two in turns).

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> A = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    >>> sketchlab.leverage_scores(A)
    array([1., 1., 0.])
    >>> sketchlab.leverage_scores(np.diag([3.0, 2.0, 1.0]), k=2)
    array([1., 1., 0.])
    """
    axis = check_axis(axis)
    A = as_matrix(A, "A")
    method = check_choice(method, "method", _METHODS)
    rtol = check_rtol(rtol)
    gen = as_generator(rng)
    if k is not None:
        k = check_int(k, "k", 1, min(A.shape))
    if method == "krylov" and k is None:
        raise ValueError("method='krylov' needs k (the rank of the truncation)")
    if axis == 1:
        A = A.T
    if method == "krylov":
        return _krylov_scores(A, k, rtol, gen)
    if method == "sketch":
        return _sketched_scores(A, k, rtol, gen)
    return _exact_scores(A, k, rtol)


# ---- exact -------------------------------------------------------------------------


def _exact_scores(A, k, rtol, shape=None):
    """Exact scores; ``shape`` sets the default rtol (that of the matrix A
    stands for when it is a sketch of it)."""
    m, n = A.shape
    if sp.issparse(A) and k is not None and k < min(m, n) and m * n > _DENSE_SVD_ENTRIES:
        return _exact_top_k_sparse(A, k, rtol)
    if sp.issparse(A):
        A = A.toarray()
    A = np.asarray(A, dtype=np.float64)
    if A.size == 0:
        return np.zeros(m)
    shape = A.shape if shape is None else shape
    qr = cholesky_qr(A, default_rtol(shape, np.finfo(np.float64).eps) if rtol is None else rtol)
    if qr is not None:  # clearly of full column rank: its Q spans the range
        Q, T = qr
        if k is None or k >= n:
            return _row_norms2(Q)
        u = svd(T, full_matrices=True, parallel=True)[0]
        return _row_norms2(Q @ u[:, :k])
    U, s, _ = svd(A, parallel=True)
    rank = _rank(s, rtol, shape)
    return _row_norms2(U[:, : rank if k is None else min(k, rank)])


def _exact_top_k_sparse(A, k, rtol):
    """Rank-k scores of a large sparse A from its top-k singular vectors (ARPACK)."""
    m, n = A.shape
    if _is_zero(A):
        return np.zeros(m)
    A = A.astype(np.float64, copy=False)
    # a fixed start vector: the exact method does not depend on rng
    v0 = np.random.default_rng(0).standard_normal(min(m, n))
    U, s = top_singular_sparse(A, k, v0)
    return _row_norms2(U[:, : _rank(s, rtol, A.shape)])


# ---- sketched ----------------------------------------------------------------------


def _sketched_scores(A, k, rtol, gen):
    m, n = A.shape
    if A.size == 0 or _is_zero(A):
        return np.zeros(m)
    A = A.astype(np.float64, copy=False)  # sketches of float32 data accumulate in float64
    if k is None:
        return _sketched_full(A, rtol, gen)
    return _sketched_top_k(A, k, rtol, gen)


def _embedding_rows(d):
    return _EMBEDDING_ROWS_PER_DIM * d


def _sketched_full(A, rtol, gen):
    """Full-rank row scores (Drineas et al. 2012, Algorithm 1)."""
    from ._operators import OSNAP, GaussianSketch

    m, n = A.shape
    shape = A.shape
    rows = _embedding_rows(min(m, n))
    if rows < n:
        # wide A: A Omega^T has the column space of A (Omega embeds its row space)
        Omega = OSNAP(rows, n, nnz_per_col=min(_EMBEDDING_NNZ_PER_COL, rows), rng=gen)
        A = A @ Omega.T
        n = rows
    rows = _embedding_rows(n)
    if rows >= m:
        # the embedding would be no smaller than A: exact scores cost no more
        A = A.toarray() if sp.issparse(A) else A
        return _exact_scores(A, None, rtol, shape)
    Pi1 = OSNAP(rows, m, nnz_per_col=min(_EMBEDDING_NNZ_PER_COL, rows), rng=gen)
    B = Pi1 @ A
    _, s, Vt = svd(B)
    rank = _rank(s, rtol, shape)
    if rank == 0:
        return np.zeros(m)
    R_inv = Vt[:rank].T / s[:rank]  # (n, rank): A R_inv has nearly orthonormal columns
    columns = int(np.ceil(_JL_COLUMNS_PER_LOG * np.log(m)))
    if columns < rank:
        R_inv = R_inv @ GaussianSketch(columns, rank, rng=gen).T  # Pi2: E[Pi2 Pi2^T] = I
    scores = _row_norms2(np.asarray(A @ R_inv, dtype=np.float64))
    # A small Pi1 inflates every score by about the same factor (for a
    # Gaussian Pi1 with r rows, E[(U^T Pi1^T Pi1 U)^-1] = I r / (r - d - 1)):
    # rescale to the known sum, the rank, then cap at the exact scores' bound 1
    return np.minimum(scores * (rank / scores.sum()), 1.0)


def _sketched_top_k(A, k, rtol, gen):
    """Rank-k row scores from randomized subspace iteration (HMT 2011,
    Algorithms 4.4 and 5.1) started from a CountSketch of the rows."""
    from ._operators import CountSketch

    m, n = A.shape
    width = min(m, n, k + max(k, _OVERSAMPLING))
    Y = CountSketch(width, m, rng=gen) @ A  # (width, n): rows in the row space of A
    # each iteration multiplies by A^T A; the dense steps (thin QRs, the
    # small SVD, the lift) run on one BLAS thread (the policy of _linalg)
    for _ in range(_POWER_ITERATIONS):
        Q = orthonormal(Y.T)  # (n, width)
        AQ = np.asarray(A @ Q, dtype=np.float64)
        Q = orthonormal(AQ)  # (m, width): approximate top range of A
        Y = np.asarray(A.T @ Q, dtype=np.float64).T  # Q^T A
    U_B, s, _ = svd(Y)
    U = product(Q, U_B[:, : min(k, _rank(s, rtol, A.shape))])  # top-k left vectors of Q Q^T A
    return _row_norms2(U)


# the block Krylov SVD (``_krylov.krylov_svd``) of method="krylov", registered
# by that module when it is imported: this layer does not import it
_KRYLOV_SVD: list[Any] = []


def register_krylov_svd(svd_function: Any) -> None:
    """Set the truncated SVD of ``method="krylov"``: ``svd_function(A, k, rng=)``."""
    _KRYLOV_SVD[:] = [svd_function]


def _krylov_scores(A, k, rtol, gen):
    """Rank-k row scores: squared row norms of the left singular vectors of the
    rank-k truncation found by block Krylov (``krylov_svd``)."""
    m, n = A.shape
    if A.size == 0 or _is_zero(A):
        return np.zeros(m)
    if not _KRYLOV_SVD:
        import importlib

        importlib.import_module("sketchlab._krylov")  # it registers krylov_svd
    U, s, _ = _KRYLOV_SVD[0](A, k, rng=gen)
    return _row_norms2(np.asarray(U[:, : _rank(s, rtol, A.shape)], dtype=np.float64))


def sampling_scores(B: NDArray[np.floating], axis: int = 0) -> NDArray[np.float64]:
    """Leverage scores of ``B`` (rows for ``axis=0``, columns for ``axis=1``)
    to sample from; uniform scores when they all vanish (B = 0: then every
    sample gives the same answer)."""
    with serial_blas():  # a thin SVD, and everything around it
        scores = leverage_scores(B, axis=axis)
    return scores if scores.sum() > 0 else np.ones_like(scores)
