"""CUR decomposition: A ~ C U R with C and R real columns and rows of A.

The paper's first application (its Section 1): once columns C and rows R are
chosen, the best core is the GMR solution ``U = C^+ A R^+``, which costs a
full product with A; Fast GMR (Algorithm 1) computes it from sketches in one
pass over the nonzeros of A.  The selection is shared with the kernel
methods' landmarks (``sketchlab._selection``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from ._errors import check_probes
from ._gmr import ResidualProbe, fast_gmr, gmr
from ._linalg import truncated_svd
from ._selection import CUR_SELECTIONS
from ._selection import select as select_indices
from ._validation import as_generator, as_matrix, check_choice, check_int, check_sketchable
from ._validation import trusted

if TYPE_CHECKING:
    from numpy.typing import NDArray
    from scipy.sparse.linalg import LinearOperator

    from ._errors import ErrorEstimate
    from ._validation import Matrix, MatrixLike

__all__ = ["cur", "CURDecomposition", "CUR_CORES"]

CUR_CORES = ("fast", "exact", "cross")
# default sketch sizes of the "fast" core: a = s / c = 10, the paper's point
# where the error ratio of Fast GMR is about 0.05 or less (Figure 1)
_DEFAULT_A = 10


class CURDecomposition:
    """A ~ C U R, returned by :func:`sketchlab.cur`.

    Attributes
    ----------
    columns : ndarray of shape (c,)
        Indices of the columns of A in C (sorted).
    rows : ndarray of shape (r,)
        Indices of the rows of A in R (sorted).
    C : ndarray or scipy.sparse matrix of shape (m, c)
        ``A[:, columns]``: sparse (CSC) when A is sparse.
    U : ndarray of shape (c, r)
        The core.
    R : ndarray or scipy.sparse matrix of shape (r, n)
        ``A[rows, :]``: sparse (CSR) when A is sparse.
    select, core : str
        How the columns and rows, and the core, were chosen.
    error_estimate : ErrorEstimate or None
        With ``cur(..., estimate_error=True)``.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> gen = np.random.default_rng(0)
    >>> A = gen.standard_normal((200, 5)) @ gen.standard_normal((5, 150))
    >>> d = sketchlab.cur(A, 10, rng=0)
    >>> d
    CURDecomposition(shape=(200, 150), c=10, r=10, select='approx-leverage', core='fast')
    >>> bool(d.error(A) < 1e-8 * np.linalg.norm(A))
    True
    """

    def __init__(self, columns: NDArray[np.int64], rows: NDArray[np.int64], C: Matrix,
                 U: NDArray[np.floating], R: Matrix, *, select: str, core: str,
                 error_estimate: ErrorEstimate | None = None) -> None:
        self.columns = columns
        self.rows = rows
        self.C = C
        self.U = U
        self.R = R
        self.select = select
        self.core = core
        self.error_estimate = error_estimate

    @property
    def shape(self) -> tuple[int, int]:
        return (self.C.shape[0], self.R.shape[1])

    def __repr__(self) -> str:
        return (f"CURDecomposition(shape={self.shape}, c={self.columns.size}, "
                f"r={self.rows.size}, select={self.select!r}, core={self.core!r})")

    def toarray(self) -> NDArray[np.floating]:
        """The dense ``m x n`` matrix ``C U R`` (small matrices only)."""
        CU = np.asarray(self.C @ self.U)
        return np.asarray(self.R.T @ CU.T).T if sp.issparse(self.R) else CU @ self.R

    def aslinearoperator(self) -> LinearOperator:
        """``C U R`` as a ``scipy.sparse.linalg.LinearOperator`` (never formed)."""
        from scipy.sparse.linalg import LinearOperator

        C, U, R = self.C, self.U, self.R

        def matmat(X):
            return np.asarray(C @ (U @ np.asarray(R @ X)))

        def rmatmat(Y):
            return np.asarray(R.T @ (U.T @ np.asarray(C.T @ Y)))

        return LinearOperator(self.shape, matvec=matmat, rmatvec=rmatmat, matmat=matmat,
                              rmatmat=rmatmat, dtype=np.float64)

    def error(self, A: MatrixLike, *, relative: bool = False) -> float:
        """Exact ``||A - C U R||_F`` (over ``||A||_F`` with ``relative``),
        without densifying a sparse A (:func:`sketchlab.gmr_residual`)."""
        from ._linalg import squared_frobenius
        from ._residuals import gmr_residual

        A = as_matrix(A, "A")
        if A.shape != self.shape:
            raise ValueError(f"A must have shape {self.shape}, got {A.shape}")
        value = gmr_residual(A, self.C, self.U, self.R)
        if not relative:
            return value
        norm = np.sqrt(squared_frobenius(A))
        return 0.0 if norm == 0 and value == 0 else value / norm


def _gather(A, columns, rows):
    """``A[:, columns]`` (CSC when A is sparse) and ``A[rows]`` (CSR)."""
    if sp.issparse(A):
        C = (A.tocsc() if A.format != "csc" else A)[:, columns]
        R = (A.tocsr() if A.format != "csr" else A)[rows]
        return sp.csc_matrix(C), sp.csr_matrix(R)
    return np.ascontiguousarray(A[:, columns]), np.ascontiguousarray(A[rows])


def cur(A: MatrixLike, c: int, r: int | None = None, *, k: int | None = None,
        select: str = "approx-leverage", core: str = "fast",
        sketch_size: int | tuple[int, int] | None = None,
        rng: None | int | np.random.Generator = None, estimate_error: bool = False,
        n_probes: int | None = None) -> CURDecomposition:
    """CUR decomposition ``A ~ C U R`` with columns and rows of A.

    Parameters
    ----------
    A : array_like or scipy.sparse matrix of shape (m, n)
        Dense or sparse (CSR/CSC; other formats are converted to CSR).
    c : int
        Number of columns, ``1 <= c <= n``.
    r : int, optional
        Number of rows, ``1 <= r <= m``; default c.
    k : int, optional
        Target rank of the leverage-score selections, ``1 <= k <=
        min(m, n)``; default ``max(1, c // 2)``.
    select : {"approx-leverage", "leverage", "uniform", "deim", "pivoted-qr"}
        How columns and rows are chosen: approximate or exact rank-k leverage
        scores (c distinct columns drawn with probabilities proportional to
        the scores), uniformly, or deterministically by DEIM or column-pivoted
        QR on sketched singular vectors (see Notes).
    core : {"fast", "exact", "cross"}, default "fast"
        ``U`` by Fast GMR (Algorithm 1: ``(S_C C)^+ S_C A S_R^T (R S_R^T)^+``,
        one pass over A, C and R kept sparse), by exact GMR
        (``C^+ A R^+``, one product with A, C and R densified), or the cross
        approximation ``W_k^+``, the pseudo-inverse of the rank-k truncation
        of ``W = A[rows, columns]`` (no pass over A; the full ``W^+``
        amplifies what lies beyond rank k when c > k).
    sketch_size : int or (int, int), optional
        ``(s_c, s_r)`` of the "fast" core; default ``(10 c, 10 r)`` capped at
        ``(m, n)`` (a = 10 in the paper's terms).
    rng : None, int or numpy.random.Generator
        Seeds the selection, then the core's sketches, then the probes.
    estimate_error : bool, default False
        Attach an :class:`~sketchlab.ErrorEstimate` of ``||A - C U R||_F``
        (Gaussian probes through CountSketches of A's columns and rows, as
        :func:`~sketchlab.fast_gmr`'s) as ``error_estimate``.
    n_probes : int, optional
        Probes of the estimate, default 10.

    Returns
    -------
    CURDecomposition

    Raises
    ------
    ValueError
        Sizes out of range, an unknown ``select`` or ``core``, NaN or Inf in A.
    TypeError
        Non-numeric A or non-int sizes.

    Notes
    -----
    Cost, for sparse A: the sketched selections read A once (a row and a
    column sketch, O(nnz(A)) plus dense work O((m + n) l^2) for l about 4k,
    or 2c for DEIM and pivoted QR); "leverage" needs the exact top-k singular
    vectors (ARPACK for a large sparse A); "uniform" nothing.  The "fast"
    core costs one pass over A, C and R (O(nnz)) and a small solve; "exact"
    a product of A with c or r dense columns and thin QRs of the densified C
    and R.  With the columns and rows chosen, Theorem 1 bounds the "fast"
    core: ``||A - C U R||_F <= (1 + eps) ||A - C U* R||_F`` for sketch sizes
    of order ``max(c / sqrt(eps), c / (eps rho^2))``, with rho of the
    paper's eq. (3.2) (at least 1/sqrt(2); small when the residual of A lies
    in the range of C or of R^T, and then the sketches must be larger: see
    :func:`sketchlab.fast_gmr`).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, sketchlab
    >>> gen = np.random.default_rng(0)
    >>> A = sp.random(3000, 2000, density=0.005, format="csr", random_state=gen)
    >>> d = sketchlab.cur(A, 50, rng=0)
    >>> sp.issparse(d.C), sp.issparse(d.R), d.U.shape
    (True, True, (50, 50))
    """
    A = as_matrix(A, "A")
    m, n = A.shape
    c, r, k, select_name, core, q, sketch_size = check_cur_args(
        A.shape, c, r, k, select, core, n_probes, sketch_size)
    gen = as_generator(rng)
    with trusted(A):  # validated above
        columns, rows = select_indices(A, c, r, select_name, k, gen)
    C, R = _gather(A, columns, rows)
    with trusted(A, C, R):
        if core == "fast":
            U = fast_gmr(A, C, R, sketch_size=sketch_size, rng=gen).X
        elif core == "exact":
            U = gmr(A, C, R)
        else:
            U = cross_core(R, columns, k)
    estimate = None
    if estimate_error:
        with trusted(A, C, R):
            estimate = ResidualProbe.of(A, C, R, q, gen).estimate(U)
    return CURDecomposition(columns, rows, C, U, R, select=select_name, core=core,
                            error_estimate=estimate)


def check_cur_args(shape, c, r, k, select, core, n_probes, sketch_size):
    """The checked arguments of :func:`cur`: ``(c, r, k, select, core,
    n_probes, sketch_size)`` with the defaults filled in."""
    m, n = check_sketchable(shape)
    if m == 0 or n == 0:
        raise ValueError(f"A must not have an empty dimension, got shape {tuple(shape)}")
    c = check_int(c, "c", 1, n)
    r = c if r is None else r
    r = check_int(r, "r", 1, m)
    k = max(1, c // 2) if k is None else k
    k = check_int(k, "k", 1, min(m, n))
    select = check_choice(select, "select", CUR_SELECTIONS)
    core = check_choice(core, "core", CUR_CORES)
    q = check_probes(n_probes)
    if sketch_size is None:
        sketch_size = (min(m, _DEFAULT_A * c), min(n, _DEFAULT_A * r))
    return c, r, k, select, core, q, sketch_size


def cross_core(R, columns, k):
    """The cross-approximation core ``W_k^+``, the pseudo-inverse of the
    rank-k truncation of ``W = A[rows, columns]`` (the columns of R: no pass
    over A).  With c > k the small singular values of W are mostly noise of
    A beyond rank k, and the full ``W^+`` amplifies them (the cur sweep
    measured error ratios of 10-390 on madelon with it)."""
    W = R[:, columns]
    W = np.asarray(W.toarray() if sp.issparse(W) else W, dtype=np.float64)
    U, s, Vt = truncated_svd(W)  # numerical rank first, then at most k
    t = min(k, s.shape[0])
    return (Vt[:t].T / s[:t]) @ U[:, :t].T
