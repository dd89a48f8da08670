"""Exact residual norms without densifying a sparse A.

For GMR, ||A - C X R||_F^2 = ||A||_F^2 - 2 <X, C^T A R^T> + ||C X R||_F^2;
for a low-rank factorization with orthonormal U, V,
||A - U diag(s) V^T||_F^2 = ||A||_F^2 - 2 sum_i s_i u_i^T A v_i + sum_i s_i^2.
"""

import numpy as np
import scipy.sparse as sp

from ._validation import as_matrix
from ._gmr import check_core, check_gmr_inputs, out_dtype
from ._linalg import exact_core, range_factors

__all__ = ["gmr_residual", "gmr_error_ratio", "lowrank_residual"]

# ---- GMR residuals (gmr_residual, gmr_error_ratio) -------------------------

# ||A||_F^2 - ||B||_F^2 loses about log10(||A||^2 / result) digits to
# cancellation; below this fraction of ||A||_F^2 the outside part is
# recomputed directly (1e-8 keeps about 8 digits, the residual about 8 too).
_CANCELLATION_RTOL = 1e-8
# Entries of a dense row block in the direct computation (8 MB of float64).
_BLOCK_ENTRIES = 1 << 20


def _squared_norm(A):
    """||A||_F^2 in float64; duplicate sparse entries are summed first."""
    if sp.issparse(A):
        if not A.has_canonical_format:
            A = A.copy()
            A.sum_duplicates()
        data = A.data
    else:
        data = A.ravel(order="K")
    data = np.asarray(data, dtype=np.float64)
    return float(data @ data)


class _GMRSplit:
    """The split ||A - C X R||_F^2 = outside + inside(X) for every X.

    With thin QRs C = Q_C T_C, R^T = Q_R T_R and B = Q_C^T A Q_R,
    C X R = Q_C (T_C X T_R^T) Q_R^T, and by orthogonality
    ``outside = ||A - Q_C B Q_R^T||_F^2 = ||A||_F^2 - ||B||_F^2`` (the part of A
    outside range(C) x range(R^T), the same for every X) and
    ``inside(X) = ||B - T_C X T_R^T||_F^2`` (small, no cancellation).  This is
    the identity ||A||^2 - 2 <X, C^T A R^T> + ||C X R||^2 with the Gram
    matrices C^T C = T_C^T T_C and R R^T = T_R^T T_R kept as factors.
    """

    def __init__(self, A, C, R):
        self.A, self.C, self.R = A, C, R
        self.Q_C, self.T_C, self.Q_R, self.T_R, self.B = range_factors(A, C, R)
        self.norm2 = _squared_norm(A)
        self._outside = None

    def inside(self, X):
        D = self.B - (self.T_C @ X) @ self.T_R.T
        return float(np.einsum("ij,ij->", D, D))

    def optimum(self):
        """X* = C^+ A R^+ with gmr's default rank tolerance, in float64."""
        eps = np.finfo(out_dtype(self.A, self.C, self.R)).eps
        return exact_core(self.T_C, self.T_R, self.B, self.C.shape, self.R.shape, None, eps)

    def outside(self, floor):
        """``||A - Q_C B Q_R^T||_F^2``; recomputed directly, one row block of A at a
        time, when the total ``outside + floor`` is below ``_CANCELLATION_RTOL``
        of ||A||_F^2 (``floor`` = the smallest inside part that will be added)."""
        if self._outside is None:
            fast = self.norm2 - float(np.einsum("ij,ij->", self.B, self.B))
            if self.norm2 == 0.0:
                fast = 0.0
            elif fast + floor < _CANCELLATION_RTOL * self.norm2:
                fast = self._outside_direct()
            self._outside = max(fast, 0.0)
        return self._outside

    def _outside_direct(self):
        A = self.A
        if sp.issparse(A) and A.format != "csr":
            A = A.tocsr()
        W = self.B @ self.Q_R.T  # Q_C^T-coordinates of the projection, (k_c, n)
        m, n = A.shape
        step = max(1, _BLOCK_ENTRIES // n)
        total = 0.0
        for i0 in range(0, m, step):
            i1 = min(m, i0 + step)
            block = A[i0:i1]
            block = block.toarray() if sp.issparse(block) else np.asarray(block)
            D = block - self.Q_C[i0:i1] @ W
            total += float(np.einsum("ij,ij->", D, D))
        return total


def gmr_residual(A, C, X, R):
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
        NaN or Inf.

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
    inside = split.inside(X)
    return float(np.sqrt(split.outside(inside) + inside))


def gmr_error_ratio(A, C, X, R, X_opt=None):
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
        NaN or Inf.

    See Also
    --------
    gmr_residual

    Notes
    -----
    Both residuals share the outside part ``e = ||A - Q_C B Q_R^T||_F^2``
    (see :func:`gmr_residual`), so with the inside parts ``i`` (of X) and
    ``i*`` (of X_opt) and ``t = (i - i*) / (e + i*)`` the ratio is
    ``sqrt(1 + t) - 1 = t / (sqrt(1 + t) + 1)``, accurate even for ratios far
    below the rounding of either residual.  Theorem 1 bounds it by eps with
    probability 0.95 for large enough sketches. Same cost as
    :func:`gmr_residual`.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> rng = np.random.default_rng(0)
    >>> A = rng.normal(size=(300, 200))
    >>> C, R = A @ rng.normal(size=(200, 5)), rng.normal(size=(5, 300)) @ A
    >>> X = sketchlab.fast_gmr(A, C, R, sketch_size=(50, 50), sketch="gaussian", rng=0)
    >>> ratio = sketchlab.gmr_error_ratio(A, C, X, R)
    >>> bool(0 <= ratio < 0.1)
    True
    """
    A, C, R = check_gmr_inputs(A, C, R)
    X = check_core(X, C, R, "X")
    split = _GMRSplit(A, C, R)
    X_opt = split.optimum() if X_opt is None else check_core(X_opt, C, R, "X_opt")
    inside, inside_opt = split.inside(X), split.inside(X_opt)
    outside = split.outside(min(inside, inside_opt))
    denominator = outside + inside_opt
    if denominator == 0.0:
        return 0.0 if outside + inside == 0.0 else float("inf")
    t = max((inside - inside_opt) / denominator, -1.0)
    return float(t / (np.sqrt(1.0 + t) + 1.0))


# ---- low-rank residual (lowrank_residual) -----------------------------------
# The expansion below reuses _squared_norm, _CANCELLATION_RTOL and
# _BLOCK_ENTRIES of the GMR section: same norm, same cancellation rule.


def lowrank_residual(A, U, s, Vt):
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
        Shapes that do not match, NaN or Inf in any input.
    TypeError
        Non-numeric input, sparse U or Vt.

    Notes
    -----
    Expands ``||A - U S V^T||_F^2 = ||A||_F^2 - 2 sum_i s_i u_i^T A v_i +
    s^T ((U^T U) o (V^T V)) s`` (``o`` the entrywise product; for orthonormal
    U, V the last term is ``sum_i s_i^2``, SPEC section 3).  Cost: one product
    ``A V`` (O(nnz(A) q)) and O((m + n) q^2).  When the result falls below
    1e-8 of ``||A||_F^2`` the expansion has lost too many digits to
    cancellation and the residual is recomputed directly, one dense row block
    of ``A - U S V^T`` at a time (O(m n q), memory of one block).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, sketchlab
    >>> A = sp.random(60, 40, density=0.1, format="csr", random_state=0)
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
    U = U.astype(np.float64, copy=False)
    Vt = Vt.astype(np.float64, copy=False)
    s = s.astype(np.float64)
    norm2 = _squared_norm(A)
    AV = np.asarray(A @ Vt.T)  # (m, q), one pass over A
    cross = float(np.einsum("ij,ij->j", U, AV) @ s)
    gram = (U.T @ U) * (Vt @ Vt.T)
    res2 = norm2 - 2.0 * cross + float(s @ gram @ s)
    if res2 < _CANCELLATION_RTOL * norm2:
        res2 = _lowrank_direct(A, U * s, Vt)
    return float(np.sqrt(max(res2, 0.0)))


def _lowrank_direct(A, US, Vt):
    """``||A - US Vt||_F^2`` one dense row block at a time."""
    if sp.issparse(A) and A.format != "csr":
        A = A.tocsr()
    m, n = A.shape
    step = max(1, _BLOCK_ENTRIES // max(n, 1))
    total = 0.0
    for i0 in range(0, m, step):
        i1 = min(m, i0 + step)
        block = A[i0:i1]
        block = block.toarray() if sp.issparse(block) else block
        D = np.asarray(block, dtype=np.float64) - US[i0:i1] @ Vt
        total += float(np.einsum("ij,ij->", D, D))
    return total
