"""The growing orthonormal bases of block Krylov (``krylov_svd``, ``eigsh``).

:class:`GrowingBasis` keeps orthonormal columns in a Fortran-ordered buffer
and grows it block by block: a new block is made where it will stay (the
product with A writes into the buffer's next columns, :meth:`GrowingBasis.reserve`),
and the projections and the QR work there in place with BLAS 3 calls, the
large ones in fixed row chunks on all threads (``sketchlab._engine.threads``),
so that the result does not depend on the thread count.  Block classical
Gram-Schmidt (twice where it cancels), CholeskyQR2 when the block is well
conditioned, else a rank-revealing Householder QR; directions that are
rounding noise are replaced by fresh random ones.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._config import one_blas_thread
from ._engine import workspace
from ._engine.threads import fault_in, sub_mul, tall_mul, tall_tmul
from ._linalg import (
    ONE_ROUND_COND,
    blas_functions,
    cholesky_upper,
    qr,
    qr_pivoted,
    svd_values,
    upper_inverse,
)

__all__ = ["GrowingBasis"]

# (basis columns) x (block columns) from which the projections run in row
# chunks on Numba's threads; below it, one in-place BLAS call is faster
_CHUNKED_MIN = 2048


class GrowingBasis:
    """Orthonormal columns (dim rows), grown block by block in a
    Fortran-ordered buffer: the bases of block Krylov (``_krylov``,
    ``_eigsh``).  A new block is made where it will stay: the product writes
    into the buffer's next columns (:meth:`reserve`), and the projections
    and the QR work on them in place with BLAS 3 calls (no temporary the
    size of the block, no copy after)."""

    def __init__(self, dim, dtype, capacity):
        self.dim = dim
        self.size = 0
        self.buf, recycled = workspace.take((dim, max(capacity, 1)), dtype)
        # columns written at least once (their pages faulted in): all of a
        # buffer the workspace recycled
        self.touched = self.buf.shape[1] if recycled else 0
        self.blas = blas_functions(("gemm", "syrk", "trmm"), self.buf)

    def close(self):
        """Give the buffer back to the workspace (the basis is spent: no view
        of it may be used after)."""
        if self.buf is not None:
            workspace.give(self.buf)
            self.buf = None

    @property
    def Q(self):
        return self.buf[:, :self.size]

    def reserve(self, w):
        """The view where the next w columns go (the buffer grown if needed)."""
        if self.size + w > self.buf.shape[1]:
            new, recycled = workspace.take(
                (self.dim, max(2 * self.buf.shape[1], self.size + w)), self.buf.dtype)
            new[:, :self.size] = self.Q
            workspace.give(self.buf)
            self.buf = new
            self.touched = new.shape[1] if recycled else self.size
        view = self.buf[:, self.size:self.size + w]
        if self.size + w > self.touched:  # fresh memory: fault it in here
            fault_in(self.buf[:, self.touched:self.size + w])
            self.touched = self.size + w
        return view

    @one_blas_thread
    def extend(self, W, gen, local=None):
        """Orthonormalize the new block W against the basis and append it.

        Returns ``(C, R)`` with ``W = Q_old C + Q_new R`` (up to rounding and
        to directions below the noise, dropped), C of shape (old, b) and R
        (new, b), both float64.  ``Q_new`` has ``min(b, dim - old)`` columns:
        directions W lacks (rank-deficient W) are filled with fresh Gaussian
        ones, orthogonal to everything before.  W may be the view
        :meth:`reserve` gave (then no copy is made) or any dim x b array.

        ``local = (block, X)``: W's coefficients X on the basis columns
        ``block``, known from the recurrence (the Lanczos three-term step:
        in exact arithmetic W has no other component along the basis), taken
        out first.  Then block classical Gram-Schmidt against the whole
        basis, once, and a second time when it removed more than half of a
        column (Kahan and Parlett's "twice is enough": a column that kept
        half its norm is orthogonal to working precision); always twice
        without ``local``.  Column norms come from the Gram matrix ``W^T W``
        that the Cholesky QR needs anyway."""
        dtype = self.buf.dtype
        eps = float(np.finfo(dtype).eps)
        j, b = self.size, W.shape[1]
        Y = self.reserve(b)  # after reserve: the buffer may have moved
        B = self.Q
        if not (isinstance(W, np.ndarray) and W.ctypes.data == Y.ctypes.data
                and W.strides == Y.strides):
            Y[...] = W
        C, G, scale, scale_now = self._project(Y, B, local)
        width = min(b, self.dim - j)
        if width == 0:
            return C, np.zeros((0, b))
        Q, R, d, keep, width = self._factor(Y, G, eps, scale, width)
        if keep and j and d[:keep].min() < 1e-3 * scale_now:
            D = B.T @ Q
            Q = Q - B @ D
            Q, R2 = qr(Q)
            C += D.astype(np.float64) @ R
            R = R2.astype(np.float64) @ R
        if keep < width:
            G = gen.standard_normal((self.dim, width - keep)).astype(dtype)
            for _ in range(2):
                for P in (B, Q):
                    if P.shape[1]:
                        G -= P @ (P.T @ G)
            G, _ = qr(G)
            Q = np.hstack([Q, G])
            R = np.vstack([R, np.zeros((width - keep, b))])
        if Q is not Y:
            Y[:, :width] = Q
        self.size += width
        return C, R

    def compress(self, Y, start):
        """The thick restart of a Krylov basis (``_eigsh``): the first
        ``start`` columns become ``Q[:, :start] @ Y`` (Y of shape (start,
        keep) with orthonormal columns: the new columns are orthonormal to
        rounding) and the columns from ``start`` on move right after them.
        The product runs in fixed row chunks (the same for any thread count;
        the caller holds ``serial_blas``)."""
        keep = Y.shape[1]
        tail = self.size - start
        head = tall_mul(self.buf[:, :start], Y)
        self.buf[:, :keep] = head
        if tail:
            self.buf[:, keep:keep + tail] = self.buf[:, start:self.size].copy(order="F")
        self.size = keep + tail

    def _project(self, Y, B, local):
        """Take the basis B out of the new block Y in place (the recurrence's
        known part ``local`` first, then block classical Gram-Schmidt, once or
        twice).  Returns ``(C, G, scale, scale_now)``: the coefficients along
        B, the Gram matrix of what is left (None for an empty basis), and the
        norms of the block before and after the local step."""
        gemm, syrk, _ = self.blas
        j, b = B.shape[1], Y.shape[1]
        with np.errstate(over="ignore", invalid="ignore"):
            scale = float(np.linalg.norm(Y))
            C = np.zeros((j, b))
            if not j:
                return C, None, scale, scale
            if local is not None:
                block, X = local
                gemm(-1.0, B[:, block], X, beta=1.0, c=Y, overwrite_c=1)
                C[block] += X
            G = _gram(syrk, Y)
            before2 = np.diag(G).copy()
            chunked = j * b >= _CHUNKED_MIN  # by size alone: the same for any thread count
            for round_ in range(2):  # block classical Gram-Schmidt, once or twice
                if chunked:
                    D = tall_tmul(B, Y)
                    sub_mul(Y, B, D)
                else:
                    D = gemm(1.0, B, Y, trans_a=1)
                    gemm(-1.0, B, D, beta=1.0, c=Y, overwrite_c=1)
                C += D
                G = _gram(syrk, Y)
                if round_ == 0 and local is not None and \
                        np.all(np.diag(G) >= 0.25 * before2):
                    break
            return C, G, scale, math.sqrt(max(float(np.sum(before2)), 0.0))

    def _factor(self, Y, G, eps, scale, width):
        """``(Q, R, d, keep, width)``: Y = Q R, by CholeskyQR2 in place when Y
        is well conditioned, else by a rank-revealing QR that keeps the
        ``keep`` directions above rounding noise (``d``: R's diagonal
        magnitudes or singular values)."""
        F = _block_cholesky_qr2(Y, eps, G, self.blas)
        if F is not None and F[1]:  # well conditioned: Y is Q, every direction kept
            R = F[0]
            return Y, R.astype(np.float64), svd_values(R), Y.shape[1], Y.shape[1]
        # rank-revealing QR as Y = Q1 R1 (Householder) and a pivoted QR
        # of the small R1 F = Q2 R2 P^T: W P = (Q1 Q2) R2 (dgeqp3 on all of
        # W is BLAS 2, several times slower on a tall block); F is the
        # factor a Cholesky round already took out of Y (W = Y F)
        Q1, R1 = qr(Y)
        if F is not None:
            R1 = R1 @ F[0].astype(R1.dtype)
        Q2, R, piv = qr_pivoted(R1)
        d = np.abs(np.diag(R))
        # below eps**0.7 of the block the direction is rounding noise;
        # above it the Q column's leftover along B (about eps scale / d)
        # is at most eps**0.3, which one more projection removes
        keep = min(int(np.count_nonzero(d > eps ** 0.7 * scale)), width)
        R = R[:keep][:, np.argsort(piv)]
        return Q1 @ Q2[:, :keep], R.astype(np.float64), d, keep, width


def _gram(syrk, Y):
    """``Y^T Y`` (both triangles) by one BLAS syrk."""
    G = syrk(1.0, Y, trans=1)
    return np.triu(G) + np.triu(G, 1).T


def _block_cholesky_qr2(Y, eps, G, blas):
    """CholeskyQR2 of Y in place (Fukaya, Nakatsukasa et al. 2014: two
    rounds of ``R_i = chol(Y^T Y)``, ``Y <- Y R_i^-1``, BLAS 3 only),
    orthonormal to working precision when ``cond(Y) < eps^-1/2``.

    Returns ``(F, done)``: ``W = Y F`` for the W that came in, and whether Y
    is now orthonormal; None when W is not that well conditioned (Y
    untouched; the caller's Householder QR then reveals its rank).  After a
    first round whose second fails (not seen, but possible in principle),
    ``(R_1, False)``.  G is ``Y^T Y`` when the caller has it.  ``Y R^-1``
    multiplies by the inverse of the small triangle in place (BLAS trmm;
    its rounding, eps cond(R), is what the second round is for).

    Not :func:`cholesky_qr`, which serves the sketches' bases: this one
    works on a block of any float dtype in the basis's own memory, takes the
    Gram matrix the Gram-Schmidt step already formed, and hands a block it
    cannot orthonormalize to a rank-revealing QR rather than an SVD."""
    _, syrk, trmm = blas
    m, b = Y.shape
    if m < b:
        return None
    factors: list[Any] = []
    for round_ in range(2):
        with np.errstate(over="ignore", invalid="ignore"):
            if G is None or round_:
                G = _gram(syrk, Y)
            ok = bool(np.isfinite(G).all())
        R = None
        if ok:
            try:
                R = cholesky_upper(G)
            except np.linalg.LinAlgError:
                R = None
        if R is None:
            return (factors[0], False) if factors else None
        s = svd_values(R) if not factors else None
        if s is not None and not s[-1] > 10 * math.sqrt(eps) * s[0]:
            return None
        factors.append(R)
        Rinv = upper_inverse(R)
        trmm(1.0, Rinv, Y, side=1, lower=0, overwrite_b=1)
        if s is not None and s[0] < ONE_ROUND_COND * s[-1]:
            # one round leaves Q orthonormal to about eps cond(W)^2: enough
            return R, True
    return factors[1] @ factors[0], True
