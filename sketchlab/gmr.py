"""Generalized matrix regression: exact (``gmr``) and sketched (``fast_gmr``,
Algorithm 1), with the symmetric and PSD projections of Theorem 2."""

import numpy as np
import scipy.linalg as sla

from ._validation import as_matrix

__all__ = ["project_symmetric", "project_psd"]


def project_symmetric(X):
    """Projection onto symmetric matrices, ``(X + X^T) / 2`` (eq. pi_H).

    Parameters
    ----------
    X : array_like of shape (c, c)

    Returns
    -------
    ndarray of shape (c, c)

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> sketchlab.project_symmetric(np.array([[1.0, 2.0], [0.0, 1.0]]))
    array([[1., 1.],
           [1., 1.]])
    """
    X = _square(X)
    return (X + X.T) / 2


def project_psd(X):
    """Projection onto the PSD cone (eq. pi_H+): symmetrize, then zero the
    negative eigenvalues.

    By Proposition 1 the projection never moves ``X`` further from any PSD
    matrix, so it never increases the error of a PSD target.

    Parameters
    ----------
    X : array_like of shape (c, c)

    Returns
    -------
    ndarray of shape (c, c)
        Symmetric positive semi-definite.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> sketchlab.project_psd(np.diag([2.0, -1.0]))
    array([[2., 0.],
           [0., 0.]])
    """
    X = _square(X)
    w, V = sla.eigh((X + X.T) / 2, check_finite=False)
    w = np.maximum(w, 0.0)
    out = (V * w) @ V.T
    return (out + out.T) / 2


def _square(X):
    X = as_matrix(X, "X", sparse=False)
    if X.shape[0] != X.shape[1]:
        raise ValueError(f"X must be square, got shape {X.shape}")
    return X
