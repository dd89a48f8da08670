"""Randomized block Krylov SVD: several passes over A, accurate on any spectrum.

Block Lanczos bidiagonalization from a Gaussian start (Musco & Musco 2015;
Tropp & Webber 2023, Algorithm A.1; the stopping rule of RandLAPACK's RBKI).
Each pass over A is one product with A or with A^T, and after every pass
there is an answer:

- odd pass ``2i + 1``: ``A V = U B`` (V of ``(i + 1) b`` orthonormal columns,
  U the orthonormalized products), and the answer is ``A V V^T``;
- even pass ``2i``: ``U^T A = B V^T`` (U of ``i b`` columns, V one block
  more), and the answer is ``U U^T A``.

The small matrix ``B = U^T A V`` (every coefficient of every
orthogonalization kept, not only the block bidiagonal that exact arithmetic
would leave) has the singular values of the answer, and the answer of rank r
misses exactly ``||A||_F^2 - sum_{j <= r} s_j^2`` (the Frobenius identity of
an orthogonal projection): the error of every rank, known after each pass
without another pass over A, up to rounding.

Stability (full reorthogonalization): every new block loses the component
the recurrence predicts (the previous block's coefficient), then is
projected against the whole basis of its side by block classical
Gram-Schmidt, a second time wherever the first projection removed more than
half of a column ("twice is enough", Kahan and Parlett), then orthonormalized
by CholeskyQR2 when well conditioned, else by a rank-revealing Householder
QR; directions that are rounding noise (a numerically rank-deficient block:
a steep spectrum, an invariant subspace, a low-rank A) are replaced by fresh
Gaussian directions, and a block with small singular values is projected
once more.  The bases stay orthonormal to working precision whatever the
spectrum (tests: flat, steep and rank-deficient spectra, 1e-12).

Determinism: the start block and the fresh directions come from
``as_generator(rng)``; the sparse products run in Numba loops whose output
rows are independent (no reduction split across threads) and every BLAS and
LAPACK call runs under :func:`~sketchlab._config.serial_blas`, so the result
is the same for any number of threads.
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ._config import serial_blas
from ._errors import DEFAULT_PROBES, ErrorEstimate, from_gaussian_probes
from ._linalg import squared_frobenius
from ._products import csr_times_dense
from ._results import SVDResult
from ._validation import as_generator, as_matrix, check_int, check_tol, result_dtype

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ._validation import MatrixLike

__all__ = ["krylov_svd", "InaccurateSVDWarning", "warn_if_inaccurate", "KrylovProducts",
           "krylov_core"]


class InaccurateSVDWarning(UserWarning):
    """A single-pass SVD whose own error estimate is near or above
    ``||A||_F`` (it captures next to nothing of A): the warning names
    :func:`krylov_svd`, which reaches the best rank-k error in a few passes."""


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
            InaccurateSVDWarning, stacklevel=stacklevel + 1)

# k mode (no tol, no passes): stop when no singular value of the top k rose
# by more than this fraction over the last pass.  They rise monotonically
# (each answer's space holds the previous one's), geometrically once the
# space is large enough.
_CONVERGED = 1e-4
# passes when neither tol nor passes bounds them (k mode)
_DEFAULT_PASSES = 24
# columns added to k for the default block size
_OVERSAMPLE = 4
# default block size in tol mode (k None)
_TOL_BLOCK = 16
# tol mode: the bases of both sides together stay within this many bytes
# unless passes= asks for more
_BASIS_BYTES = 1 << 30
# tol mode without k: the rank found must have stopped falling (it only
# falls, pass after pass) by more than this fraction over the last pass
_RANK_SETTLED = 0.02


class KrylovProducts:
    """A as its products ``A @ W`` and ``A.T @ Z``, one pass over A each.

    The sparse products run in a Numba loop over output rows (CSR for
    ``A @ W``, the CSR of A^T, built once on first use, for ``A.T @ Z``):
    about twice as fast as scipy's on two threads, and the same for any
    thread count.  Dense products are BLAS calls (under the caller's
    ``serial_blas``).  A LinearOperator's own ``matmat`` / ``rmatmat``.
    """

    def __init__(self, A: Any, dtype: np.dtype):
        self.A = A
        self.dtype = dtype
        self.shape = tuple(A.shape)
        self._rows = self._cols = None  # CSR arrays of A and of A^T
        self._work: dict[tuple[int, int], Any] = {}  # the products' output arrays, by shape, reused pass after pass
        if sp.issparse(A):
            if A.format == "csr":
                self._rows = A
            else:
                self._cols = A.T  # CSC of A: the CSR of A^T, no copy
            self.kind = "sparse"
        elif isinstance(A, np.ndarray):
            self.kind = "dense"
        else:
            self.kind = "operator"

    def frobenius2(self) -> float | None:
        """``||A||_F^2``, None for a LinearOperator (not known without n products)."""
        return None if self.kind == "operator" else squared_frobenius(self.A)

    def right(self, W: NDArray[np.floating]) -> NDArray[np.floating]:
        """``A @ W`` (m x b)."""
        if self.kind == "sparse":
            if self._rows is None:
                self._rows = self.A.tocsr()
            return _csr_times(self._rows, W, self.dtype, self._work)
        if self.kind == "dense":
            return self.A @ W
        return self._checked(self.A.matmat(W), (self.shape[0], W.shape[1]), "matmat")

    def left(self, Z: NDArray[np.floating]) -> NDArray[np.floating]:
        """``A.T @ Z`` (n x b)."""
        if self.kind == "sparse":
            if self._cols is None:
                self._cols = self.A.T.tocsr()
            return _csr_times(self._cols, Z, self.dtype, self._work)
        if self.kind == "dense":
            return self.A.T @ Z
        return self._checked(self.A.rmatmat(Z), (self.shape[1], Z.shape[1]), "rmatmat")

    def _checked(self, Y, shape, what):
        Y = np.asarray(Y)
        if Y.shape != shape:
            raise ValueError(f"A.{what} returned an array of shape {Y.shape}, expected {shape}")
        if not np.isfinite(Y).all():
            raise ValueError(f"A.{what} returned values that are not finite")
        return np.array(Y, dtype=self.dtype)  # a copy: the bases overwrite it


def _csr_times(X, W, dtype, work):
    """``X @ W`` for CSR X (W cast to X's dtype: one compiled loop per dtype),
    into the array kept in ``work`` for this shape (fresh memory costs page
    faults at every pass; the caller is done with the previous product)."""
    shape = (X.shape[0], W.shape[1])
    out = work.get(shape)
    if out is None:
        out = work[shape] = np.empty(shape, dtype=dtype)
    return csr_times_dense(X, np.ascontiguousarray(W, dtype=dtype), out)


# ---------------------------------------------------------------------------
# The orthonormal bases
# ---------------------------------------------------------------------------


class _Basis:
    """Orthonormal columns of one side (m or n rows), grown block by block in
    a Fortran-ordered buffer (contiguous columns for the projections)."""

    def __init__(self, dim, dtype, capacity):
        self.dim = dim
        self.size = 0
        self.buf = np.empty((dim, max(capacity, 1)), dtype=dtype, order="F")

    @property
    def Q(self):
        return self.buf[:, :self.size]

    def append(self, Q):
        w = Q.shape[1]
        if self.size + w > self.buf.shape[1]:
            new = np.empty((self.dim, max(2 * self.buf.shape[1], self.size + w)),
                           dtype=self.buf.dtype, order="F")
            new[:, :self.size] = self.Q
            self.buf = new
        self.buf[:, self.size:self.size + w] = Q
        self.size += w

    def extend(self, W, gen, local=None):
        """Orthonormalize the new block W against the basis and append it.

        Returns ``(C, R)`` with ``W = Q_old C + Q_new R`` (up to rounding and
        to directions below the noise, dropped), C of shape (old, b) and R
        (new, b), both float64.  ``Q_new`` has ``min(b, dim - old)`` columns:
        directions W lacks (rank-deficient W) are filled with fresh Gaussian
        ones, orthogonal to everything before.

        ``local = (block, X)``: W's coefficients X on the basis columns
        ``block``, known from the recurrence (the Lanczos three-term step:
        in exact arithmetic W has no other component along the basis), taken
        out first.  Then block classical Gram-Schmidt against the whole
        basis, once, and a second time when it removed more than half of a
        column (Kahan and Parlett's "twice is enough": a column that kept
        half its norm is orthogonal to working precision); always twice
        without ``local``."""
        dtype = self.buf.dtype
        eps = float(np.finfo(dtype).eps)
        B = self.Q
        j, b = B.shape[1], W.shape[1]
        W = np.asarray(W, dtype=dtype)  # the caller's fresh product: ours to overwrite
        scale = float(np.linalg.norm(W))
        C = np.zeros((j, b))
        if j:
            if local is not None:
                block, X = local
                W -= B[:, block] @ X.astype(dtype)
                C[block] += X
            for round_ in range(2):  # block classical Gram-Schmidt, once or twice
                before = np.linalg.norm(W, axis=0)
                D = B.T @ W
                W -= B @ D
                C += D
                if round_ == 0 and local is not None and \
                        np.all(np.linalg.norm(W, axis=0) >= 0.5 * before):
                    break
            scale_now = float(np.linalg.norm(before))
        else:
            scale_now = scale
        width = min(b, self.dim - j)
        if width == 0:
            return C, np.zeros((0, b))
        QR = _cholesky_qr2(W, eps)
        if QR is not None:  # well conditioned: every direction kept
            Q, R = QR
            d = sla.svdvals(R, check_finite=False)
            keep = width = b
        else:
            # rank-revealing QR as W = Q1 R1 (Householder) and a pivoted QR
            # of the small R1 = Q2 R2 P^T: W P = (Q1 Q2) R2 (dgeqp3 on all of
            # W is BLAS 2, several times slower on a tall block)
            Q1, R1 = sla.qr(W, mode="economic", overwrite_a=True, check_finite=False)
            Q2, R, piv = sla.qr(R1, pivoting=True, check_finite=False)
            d = np.abs(np.diag(R))
            # below eps**0.7 of the block the direction is rounding noise;
            # above it the Q column's leftover along B (about eps scale / d)
            # is at most eps**0.3, which one more projection removes
            keep = min(int(np.count_nonzero(d > eps ** 0.7 * scale)), width)
            Q = Q1 @ Q2[:, :keep]
            R = R[:keep][:, np.argsort(piv)]
        R = R.astype(np.float64)
        if keep and j and d[:keep].min() < 1e-3 * scale_now:
            D = B.T @ Q
            Q = Q - B @ D
            Q, R2 = sla.qr(Q, mode="economic", check_finite=False)
            C += D.astype(np.float64) @ R
            R = R2.astype(np.float64) @ R
        if keep < width:
            G = gen.standard_normal((self.dim, width - keep)).astype(dtype)
            for _ in range(2):
                for P in (B, Q):
                    if P.shape[1]:
                        G -= P @ (P.T @ G)
            G, _ = sla.qr(G, mode="economic", check_finite=False)
            Q = np.hstack([Q, G])
            R = np.vstack([R, np.zeros((width - keep, b))])
        self.append(Q)
        return C, R


def _cholesky_qr2(W, eps):
    """``(Q, R)`` with ``W = Q R`` by CholeskyQR2 (Fukaya, Nakatsukasa et al.
    2014: two rounds of ``R_i = chol(Q^T Q)``, ``Q <- Q R_i^-1``, BLAS 3
    only), orthonormal to working precision when ``cond(W) < eps^-1/2``;
    None when W is not that well conditioned (the caller's Householder QR
    then reveals its rank).  W is C-ordered (m x b), tall."""
    m, b = W.shape
    if m < b:
        return None
    trsm = sla.blas.get_blas_funcs("trsm", (W,))
    Q, factors = W, []
    for _ in range(2):
        with np.errstate(over="ignore", invalid="ignore"):
            G = Q.T @ Q
        if not np.isfinite(G).all():
            return None
        try:
            R = sla.cholesky(G, lower=False, check_finite=False)
        except np.linalg.LinAlgError:
            return None
        s = sla.svdvals(R, check_finite=False) if not factors else None
        if s is not None and not s[-1] > 10 * math.sqrt(eps) * s[0]:
            return None
        # Q R^-1 through its transpose: R^-T Q^T on the F-ordered view of Q
        Q = trsm(1.0, R, Q.T, side=0, lower=0, trans_a=1).T
        factors.append(R)
        if s is not None and s[0] < _ONE_ROUND_COND * s[-1]:
            # one round leaves Q orthonormal to about eps cond(W)^2: enough
            return Q, R
    return Q, factors[1] @ factors[0]


# CholeskyQR: one round is enough below this condition number of the block
# (Q orthonormal to about 64 eps), as in _linalg.cholesky_qr
_ONE_ROUND_COND = 8.0


class _Coefficients:
    """A growing float64 matrix, zero where nothing was written."""

    def __init__(self):
        self.buf = np.zeros((0, 0))

    def put(self, rows, cols, X):
        r1, c1 = rows.stop, cols.stop
        if r1 > self.buf.shape[0] or c1 > self.buf.shape[1]:
            new = np.zeros((max(r1, 2 * self.buf.shape[0]), max(c1, 2 * self.buf.shape[1])))
            new[:self.buf.shape[0], :self.buf.shape[1]] = self.buf
            self.buf = new
        self.buf[rows, cols] = X

    def view(self, r, c):
        return self.buf[:r, :c]


# ---------------------------------------------------------------------------
# The iteration
# ---------------------------------------------------------------------------


def _margin(norm2, eps, shape):
    """Rounding allowance on ``||A||_F^2 - sum s_j^2`` (the products' and the
    bases' rounding, relative eps per entry summed over the longer side)."""
    return 16.0 * eps * math.sqrt(max(shape)) * norm2


def krylov_core(ops: Any, shape: tuple[int, int], dtype: np.dtype, *, k: int | None,
                tol: float | None, passes: int | None, block_size: int, gen: np.random.Generator,
                norm2: Any, rtol: float = _CONVERGED,
                max_passes: int = _DEFAULT_PASSES) -> dict[str, Any]:
    """The iteration without input validation (in-memory and dask fronts).

    ``ops`` has ``right(W) = A @ W`` and ``left(Z) = A.T @ Z``; ``norm2`` is
    ``||A||_F^2`` (needed with tol), or a function that gives it after the
    first pass (a dask A: computed in that pass); ``rtol`` the k mode's rule (largest
    rise of a singular value over a pass, relative), ``max_passes`` its
    bound when ``passes`` is None.  Returns a dict with U, s, Vt, passes,
    converged, err2 (None without norm2), margin2.
    """
    m, n = shape
    b = block_size
    eps = float(np.finfo(dtype).eps)
    target: Any = None
    margin2: Any = None

    def resolve(norm2):
        nonlocal target, margin2
        if norm2 is not None:
            margin2 = _margin(norm2, eps, shape)
            if tol is not None:
                target = tol * tol * norm2 - margin2
        return norm2

    if not callable(norm2):
        norm2 = resolve(norm2)
    if passes is None:
        if tol is not None:  # until the bases fill their memory allowance or the whole space
            cols = max(b, _BASIS_BYTES // ((m + n) * np.dtype(dtype).itemsize))
            max_passes = 2 * max(1, -(-min(cols, min(m, n)) // b)) + 1
        fixed = False
    else:
        max_passes, fixed = passes, tol is None
    early = min(max_passes, 16) + 2  # capacity for the passes most runs make; grown after
    U = _Basis(m, dtype, min(m, b * early // 2))
    V = _Basis(n, dtype, min(n, b * early // 2 + b))
    Bcol, Brow = _Coefficients(), _Coefficients()  # A V = U Bcol; U^T A = Brow V^T
    V.extend(gen.standard_normal((n, b)), gen)
    v_done = 0  # columns of V multiplied by A
    u_done = 0  # columns of U multiplied by A^T
    last_u = last_v = None  # the blocks multiplied by the previous two passes
    prev_s = prev_rank = None
    converged = False
    p = 0
    while p < max_passes:
        p += 1
        if p % 2:  # A V_j: one pass, the next block of U
            cols = slice(v_done, V.size)
            # U_{j-1}^T A V_j, the R of V_j (pass before): the recurrence's term
            local = None if last_u is None else (last_u, Brow.view(U.size, V.size)[last_u, cols])
            C, R = U.extend(ops.right(V.Q[:, cols]), gen, local)
            last_v = cols
            Bcol.put(slice(0, C.shape[0]), cols, C)
            Bcol.put(slice(C.shape[0], U.size), cols, R)
            v_done = V.size
            added = R.shape[0]
            small = Bcol.view(U.size, v_done)
        else:  # A^T U_j: one pass, the next block of V
            rows = slice(u_done, U.size)
            # V_j^T A^T U_j = (the R of U_j, pass before)^T
            local = (last_v, Bcol.view(U.size, V.size)[rows, last_v].T)
            C, R = V.extend(ops.left(U.Q[:, rows]), gen, local)
            last_u = rows
            Brow.put(rows, slice(0, C.shape[0]), C.T)
            Brow.put(rows, slice(C.shape[0], V.size), R.T)
            u_done = U.size
            added = R.shape[0]
            small = Brow.view(u_done, V.size)
        if callable(norm2):  # known after the first pass (computed in it)
            norm2 = resolve(norm2())
        # the singular values alone (a quarter of the flops): the vectors only
        # of the last answer, below
        s = sla.svdvals(small, check_finite=False)
        err2: Any = None if norm2 is None else norm2 - np.cumsum(s * s)
        stop = False
        if fixed:
            stop = p >= max_passes
            converged = stop
        elif tol is not None and k is None:
            hit = np.flatnonzero(err2 <= target)
            rank = int(hit[0]) + 1 if hit.size else None
            if rank is not None and prev_rank is not None and \
                    prev_rank - rank <= _RANK_SETTLED * rank:
                stop = converged = True
            prev_rank = rank
        else:
            assert k is not None  # k mode, or k and tol
            if s.shape[0] >= k:
                if tol is not None and err2[k - 1] <= target:
                    stop = converged = True
                elif prev_s is not None and prev_s.shape[0] >= k:
                    rise = s[:k] - prev_s[:k]
                    if np.all(rise <= rtol * s[:k]):
                        stop = converged = True
                prev_s = s
        if added == 0 or stop:  # no direction left: the space is all of R^m or R^n
            converged = converged or added == 0
            break
    if k is None:
        hit = np.flatnonzero(err2 <= target)
        rank = int(hit[0]) + 1 if hit.size else s.shape[0]
        met = bool(hit.size)
    else:
        rank = min(k, s.shape[0])
        met = tol is None or bool(err2[rank - 1] <= target)
    rank = max(rank, 1)
    Ub, s, Vbt = sla.svd(small, full_matrices=False, check_finite=False, lapack_driver="gesdd")
    if p % 2:  # A V V^T = U Bcol V^T
        Uout = U.Q @ Ub[:, :rank]
        Vtout = Vbt[:rank] @ V.Q[:, :v_done].T
    else:  # U U^T A = U Brow V^T
        Uout = U.Q[:, :u_done] @ Ub[:, :rank]
        Vtout = Vbt[:rank] @ V.Q.T
    return dict(U=Uout.astype(dtype, copy=False), s=s[:rank].astype(dtype),
                Vt=Vtout.astype(dtype, copy=False), passes=p, converged=converged, met=met,
                err2=None if err2 is None else float(err2[rank - 1]), margin2=margin2,
                norm2=norm2, rank=rank)


def _estimate_from_identity(out):
    """ErrorEstimate of the answer from the Frobenius identity (exact up to
    rounding: the interval is the rounding allowance)."""
    err2, margin2, norm2 = out["err2"], out["margin2"], out["norm2"]
    value = math.sqrt(max(err2, 0.0))
    low = math.sqrt(max(err2 - margin2, 0.0))
    high = math.sqrt(max(err2, 0.0) + margin2)
    norm = math.sqrt(norm2)
    relative = value / norm if norm > 0 else 0.0
    return ErrorEstimate(value, low, high, relative, 0)


def _estimate_from_probes(ops, out, gen, dtype):
    """ErrorEstimate from Gaussian probes of the error (one more pass over A):
    the columns of ``(A - U S Vt) G`` for a fresh n x q Gaussian G."""
    n = ops.shape[1]
    G = gen.standard_normal((n, DEFAULT_PROBES)).astype(dtype)
    AG = np.asarray(ops.right(G), dtype=np.float64)
    EG = AG - (out["U"].astype(np.float64) * out["s"].astype(np.float64)) @ (
        out["Vt"].astype(np.float64) @ G.astype(np.float64))
    norm = float(np.linalg.norm(AG)) / math.sqrt(DEFAULT_PROBES)
    return from_gaussian_probes(EG.T, norm=norm)


def _check_input(A):
    from scipy.sparse.linalg import LinearOperator

    if isinstance(A, LinearOperator):
        if len(A.shape) != 2:
            raise ValueError(f"A must be 2-D, got shape {A.shape}")
        dtype = result_dtype(np.dtype(A.dtype) if A.dtype is not None else np.float64)
        if np.dtype(dtype).kind != "f":
            raise TypeError(f"A must be a real LinearOperator, got dtype {A.dtype}")
        return A, dtype
    A = as_matrix(A, "A")
    return A, A.dtype


def krylov_svd(A: MatrixLike, k: int | None = None, *, tol: float | None = None,
               passes: int | None = None, block_size: int | None = None,
               rng: None | int | np.random.Generator = None,
               estimate_error: bool = False) -> Any:  # an SVDResult
    """Truncated SVD by randomized block Krylov iteration, in a few passes over A.

    Each pass is one product of A (or A^T) with a block of ``block_size``
    vectors; after every pass the answer is the best one in the Krylov space
    built so far, and its error ``||A - U diag(s) Vt||_F`` is known (the
    Frobenius identity ``||A||_F^2 - sum s_i^2`` of an orthogonal projection,
    computed from the projected matrix, no extra pass).  Accurate whatever
    the spectrum: a flat one (TF-IDF, counts) that a single pass cannot
    resolve, or a steep one that breaks the orthogonality of plain Lanczos.

    Parameters
    ----------
    A : array_like, scipy.sparse matrix or scipy.sparse.linalg.LinearOperator
        The matrix (m x n): dense, CSR or CSC (other sparse formats become
        CSR), or a LinearOperator with ``matmat`` and ``rmatmat``.  float32
        stays float32; every other real dtype computes in float64.
    k : int, optional
        The rank, ``1 <= k <= min(m, n)``.  Required unless ``tol`` is given.
    tol : float in (0, 1), optional
        Ask for ``||A - U diag(s) Vt||_F <= tol ||A||_F``.  With ``k`` None,
        the smallest rank that meets it (MATLAB's ``svdsketch`` tolerance):
        the iteration runs until some rank meets it and that rank has stopped
        falling (within 2% over a pass).  With ``k``, it stops as soon as the
        rank-k answer meets it.  Needs ``||A||_F``: not for a
        LinearOperator.  A tolerance below the rounding allowance (about
        ``sqrt(16 eps sqrt(max(m, n)))``: 2e-6 in float64, 3e-3 in float32
        for a 10^5 x 10^5 A) cannot be certified.
    passes : int, optional
        Bound on the passes over A (products with A or A^T).  Without
        ``tol``, exactly this many are made (the answer after that pass).
        Default: with ``k`` alone, until no singular value of the top k rose
        by more than 1e-4 of itself over the last pass (they converge
        geometrically: that leaves them within a few 1e-5 of their limit,
        the singular values), at most 24; with
        ``tol``, until it is met, while the two bases fit in 1 GiB.
    block_size : int, optional
        Vectors per block, ``1 <= block_size <= min(m, n)``.  Default
        ``k + 4`` (capped at min(m, n)), 16 when k is None.  A block smaller
        than k needs more passes before the answer has k components.
    rng : None, int or numpy.random.Generator
        Seeds the Gaussian start block (and the fresh directions that replace
        rounding noise in a rank-deficient block).
    estimate_error : bool, default False
        Set ``error_estimate`` to an :class:`~sketchlab.ErrorEstimate` of
        ``||A - U diag(s) Vt||_F``: the Frobenius identity, whose interval
        is its rounding allowance (``n_probes=0``); for a LinearOperator,
        whose norm is not known, 10 Gaussian probes of the error in one more
        pass over A (counted in ``passes``).

    Returns
    -------
    SVDResult
        ``U, s, Vt = res``: U (m x r), s (r,), Vt (r x n) with r = k, or the
        rank found for ``tol``.  ``res.passes`` is the number of passes over
        A made, ``res.converged`` whether the stopping rule (k: the singular
        values settled; tol: met) was met within the passes (True after
        the asked number of ``passes`` without tol), ``res.error_estimate``
        as above.

    Raises
    ------
    ValueError
        For k outside [1, min(m, n)], neither k nor tol, tol with a
        LinearOperator, a passes bound too small for k components.

    Warns
    -----
    UserWarning
        When ``tol`` was not met within the passes.

    Notes
    -----
    The iteration is block Lanczos bidiagonalization with full
    reorthogonalization (Tropp & Webber 2023, Algorithm A.1): V_1 is an
    orthonormalized n x b Gaussian, and pass 2i - 1 orthonormalizes
    ``A V_i`` against U into ``U_i``, pass 2i orthonormalizes ``A^T U_i``
    against V into ``V_{i+1}``; every coefficient is kept in
    ``B = U^T A V``, whose SVD gives the answer.  Each block is
    reorthogonalized against the whole basis of its side (block Gram-Schmidt,
    repeated where it cancels, then CholeskyQR2 or a rank-revealing QR), with
    noise-level directions replaced by fresh random ones: the bases stay
    orthonormal to working precision at any spectrum.  With ``b >= k`` and ``q`` passes the
    rank-k answer is within ``1 + eps`` of the best in Frobenius norm for
    ``q = O(log(n) / sqrt(eps))``, whatever the gaps (Musco & Musco 2015,
    Theorem 1), against ``O(log(n) / eps)`` for the power iteration of
    ``sklearn.utils.extmath.randomized_svd``.

    Cost per pass: ``2 nnz(A) b`` for the product, plus ``4 d D b`` for the
    orthogonalization (d = m or n, D the basis size so far) and an SVD of the
    D x D projected matrix.

    Results are the same for any number of threads: the start block comes
    from ``rng``, the sparse products from Numba loops whose output rows are
    independent, and BLAS/LAPACK run on one thread (dense products included).
    For a LinearOperator, as deterministic as its own products.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> rng = np.random.default_rng(0)
    >>> A = rng.standard_normal((300, 200)) * (0.8 ** np.arange(200))
    >>> res = sketchlab.krylov_svd(A, 5, rng=0)
    >>> s_best = np.linalg.svd(A, compute_uv=False)[:5]
    >>> bool(np.allclose(res.s, s_best, rtol=1e-6))
    True
    >>> res = sketchlab.krylov_svd(A, tol=1e-2, rng=0, estimate_error=True)
    >>> U, s, Vt = res
    >>> bool(np.linalg.norm(A - (U * s) @ Vt) <= 1e-2 * np.linalg.norm(A))
    True
    >>> bool(res.error_estimate.relative <= 1e-2)
    True
    """
    return run_krylov_svd(A, k, tol=tol, passes=passes, block_size=block_size, rng=rng,
                       estimate_error=estimate_error)


def run_krylov_svd(A, k, *, tol, passes, block_size, rng, estimate_error, rtol=_CONVERGED,
                max_passes=_DEFAULT_PASSES, stacklevel=3):
    """krylov_svd with the k mode's rule ``rtol`` and pass bound ``max_passes``
    (the estimators' ``tol``)."""
    A, dtype = _check_input(A)
    k, tol, passes, block_size = check_parameters(A.shape, k, tol, passes, block_size,
                                                  estimate_error)
    ops = KrylovProducts(A, dtype)
    if tol is not None and ops.kind == "operator":
        raise ValueError("tol needs ||A||_F, which a LinearOperator does not give: "
                         "pass the matrix, or k (and estimate_error=True for an estimate)")
    gen = as_generator(rng)
    with serial_blas():
        norm2 = ops.frobenius2()
        if norm2 is not None and not math.isfinite(norm2):
            raise ValueError("A's squared Frobenius norm overflows float64; scale A down")
        out = krylov_core(ops, A.shape, dtype, k=k, tol=tol, passes=passes,
                          block_size=block_size, gen=gen, norm2=norm2, rtol=rtol,
                          max_passes=max_passes)
        return finish(out, ops, tol, estimate_error, gen, dtype, stacklevel + 1)


def check_parameters(shape, k, tol, passes, block_size, estimate_error):
    """``(k, tol, passes, block_size)`` of :func:`krylov_svd`, checked, with
    the default block size."""
    m, n = shape
    if m == 0 or n == 0:
        raise ValueError(f"A must have at least one row and one column, got shape {(m, n)}")
    tol = check_tol(tol)
    if k is None and tol is None:
        raise ValueError("give k (the rank) or tol (the relative error), got neither")
    if k is not None:
        k = check_int(k, "k", 1, min(m, n))
    if passes is not None:
        passes = check_int(passes, "passes", 1)
    if block_size is None:
        block_size = min(k + _OVERSAMPLE if k is not None else _TOL_BLOCK, min(m, n))
    else:
        block_size = check_int(block_size, "block_size", 1, min(m, n))
    if k is not None and passes is not None:
        reach = min(block_size * ((passes + 1) // 2), min(m, n))
        if reach < k:
            raise ValueError(
                f"passes={passes} with block_size={block_size} gives at most {reach} "
                f"components, fewer than k={k}")
    if not isinstance(estimate_error, (bool, np.bool_)):
        raise TypeError(f"estimate_error must be a bool, got {estimate_error!r}")
    return k, tol, passes, block_size


def finish(out, ops, tol, estimate_error, gen, dtype, stacklevel=3):
    """The SVDResult of :func:`krylov_core`'s answer, with its estimate and
    the warning of an unmet tolerance."""
    if tol is not None and not out["met"]:
        rel = math.sqrt(max(out["err2"], 0.0) / out["norm2"]) if out["norm2"] else 0.0
        warnings.warn(
            f"krylov_svd: tol={tol} not met in {out['passes']} passes over A (relative error "
            f"{rel:.3g} at rank {out['rank']}); pass a larger passes= (or block_size=)",
            stacklevel=stacklevel)
    estimate = None
    passes = out["passes"]
    if estimate_error:
        if out["err2"] is not None:
            estimate = _estimate_from_identity(out)
        else:
            estimate = _estimate_from_probes(ops, out, gen, dtype)
            passes += 1
    return SVDResult(out["U"], out["s"], out["Vt"], error_estimate=estimate, passes=passes,
                     converged=out["converged"])
