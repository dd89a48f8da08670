"""Exact leverage scores."""

import numpy as np
import scipy.sparse as sp

from ._validation import as_matrix, check_axis

__all__ = ["leverage_scores"]


def leverage_scores(A, axis=0, *, rtol=None):
    """Exact leverage scores of ``A`` (rank-revealing).

    Parameters
    ----------
    A : array_like or scipy.sparse matrix of shape (m, n)
        Sparse input is densified (the scores need an orthonormal basis of
        its range anyway).
    axis : {0, 1}, default 0
        0: one score per ROW of A (squared row norms of an orthonormal basis
        U of the column space; length m).  1: one score per COLUMN (length n).
    rtol : float, optional
        Singular values below ``rtol * sigma_max`` count as zero; default
        ``max(m, n) * eps`` as in ``numpy.linalg.matrix_rank``.

    Returns
    -------
    ndarray of shape (m,) or (n,)
        Scores in [0, 1] that sum to rank(A); all zero for a zero matrix.

    Notes
    -----
    Computed from a thin SVD, O(m n min(m, n)).

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> A = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    >>> sketchlab.leverage_scores(A)
    array([1., 1., 0.])
    """
    import scipy.linalg as sla

    axis = check_axis(axis)
    A = as_matrix(A, "A")
    if sp.issparse(A):
        A = A.toarray()
    A = np.asarray(A, dtype=np.float64)
    if axis == 1:
        A = A.T
    m, n = A.shape
    if A.size == 0:
        return np.zeros(m)
    U, s, _ = sla.svd(A, full_matrices=False, check_finite=False, lapack_driver="gesdd")
    if rtol is None:
        rtol = max(m, n) * np.finfo(np.float64).eps
    rank = int(np.count_nonzero(s > rtol * s[0])) if s[0] > 0 else 0
    U = U[:, :rank]
    return np.einsum("ij,ij->i", U, U)
