"""Randomly pivoted Cholesky, accelerated: blocks of candidate pivots with
rejection sampling (Epperly, Tropp & Webber 2024, "Embrace rejection: kernel
matrix approximation by accelerated randomly pivoted Cholesky").

Sequential RPCholesky (Chen, Epperly, Tropp & Webber 2022) draws pivot i with
probability proportional to the diagonal ``r`` of the current residual
``K - F F^T`` and updates F by one column: one kernel column and one
matrix-vector product with F per pivot, memory-bound work.  The accelerated
algorithm draws ``b`` candidates at once, independently, from the residual
diagonal ``d`` at the start of the block, and runs a Cholesky on the b x b
residual block of the candidates in which candidate j is accepted with
probability ``h_j / d_j``, ``h_j`` its diagonal entry after the elimination
of the candidates accepted before it (its residual diagonal given every
pivot accepted so far).  Since ``h <= d`` entrywise (residuals only
shrink), this is rejection sampling: an accepted candidate is distributed
with probabilities proportional to ``h``, exactly as the next pivot of the
sequential algorithm, whatever the block size.  The accepted pivots then
update F by one matrix-matrix product and one block of kernel columns.

Same output distribution, BLAS-3 work, and the kernel columns of each block
evaluated in one call.
"""

import math

import numpy as np

from ._engine.threads import fault_in
from ._linalg import cholesky, gemm_add, lower_inverse, product, trmm_right

# Candidates drawn per block (fewer when fewer pivots are missing).
BLOCK_SIZE = 100
# A residual diagonal (or pivot) below this fraction of the initial trace is
# taken as zero: the kernel is exhausted up to rounding.
_ZERO = 1e-14
# Blocks in a row that accept nothing before the residual diagonal is taken as
# rounding noise (the first candidate of a block is accepted with probability
# about 1 unless the tracked diagonal has drifted from the true residual).
_MAX_EMPTY_BLOCKS = 8


def _as_float64_diagonal(K):
    return np.array(K.diagonal(), dtype=np.float64)


def block_rpcholesky(K, c, gen, block_size=BLOCK_SIZE, columns=True):
    """Accelerated RPCholesky of the kernel oracle K: ``(pivots, C, F)``.

    ``pivots`` are the c landmarks in the order drawn, ``C = K[:, pivots]``
    (the oracle's dtype; None with ``columns=False``, when the caller needs
    only F: n c entries less to store and copy), ``F`` (n x c, float64) the Cholesky factor with
    ``F F^T = C W^+ C^T`` (the Nystrom approximation on the pivots), in the
    same column order.  Once the residual diagonal vanishes (K has rank
    below c up to rounding), the remaining landmarks are drawn uniformly from
    the rest, as in the sequential algorithm, and their columns of F are 0.

    C and F are stored by columns (Fortran order), so that each block of
    pivots fills contiguous columns, and F's block is worked on in place: the
    kernel columns are computed into it, the residual of the earlier pivots
    subtracted (one GEMM) and the block's triangular factor applied (one
    TRMM).
    """
    n = K.shape[0]
    d = _as_float64_diagonal(K)
    total = float(np.maximum(d, 0.0).sum())
    F = np.zeros((n, c), order="F")
    C = None
    pivots = np.empty(c, dtype=np.int64)
    taken = np.zeros(n, dtype=bool)
    count = 0
    exhausted = not (math.isfinite(total) and total > 0)
    empty_blocks = 0
    while count < c:
        residual = np.maximum(d, 0.0)
        residual[taken] = 0.0
        rsum = float(residual.sum())
        if exhausted or not rsum > _ZERO * total:
            rest = gen.choice(np.flatnonzero(~taken), size=c - count, replace=False)
            pivots[count:] = rest
            if columns:
                C = _columns_of(K, C, n, c)
                C[:, count:] = np.asarray(K[:, rest])
            break
        need = c - count
        b = min(block_size, need)
        cand = gen.choice(n, size=b, p=residual / rsum)
        u = gen.random(b)
        accepted = _rejection_block(K, F[:, :count], cand, u, residual, taken, need, total)
        if not accepted:
            empty_blocks += 1
            exhausted = empty_blocks >= _MAX_EMPTY_BLOCKS
            continue
        empty_blocks = 0
        T = np.asarray(accepted, dtype=np.int64)
        # the block's columns of F, worked on in place: first the kernel columns
        G = F[:, count:count + T.size]
        fault_in(G)  # fresh memory (np.zeros): its pages faulted in here, not in the GEMM
        block = _kernel_columns(K, T, G)  # n x t kernel entries, one call
        if columns:
            C = _columns_of(K, C, n, c)
            fault_in(C[:, count:count + T.size])
            C[:, count:count + T.size] = block
        if count:  # minus the earlier pivots' part: the residual columns
            Fc = F[T, :count]  # t x count, C order: its transpose is a Fortran operand
            if not gemm_add(G, F[:, :count], Fc.T, alpha=-1.0):  # pragma: no cover - layouts above
                G -= F[:, :count] @ Fc.T
        t = _factor_columns(G, T, total)
        pivots[count:count + t] = T[:t]
        taken[T[t:]] = False  # dropped by the factorization (rounding): undo
        d -= np.einsum("ij,ij->i", G[:, :t], G[:, :t])
        d[T[:t]] = 0.0
        count += t
        if t < T.size:  # a pivot vanished: the rest is rounding noise
            exhausted = True
    return pivots, C, F


def _kernel_columns(K, T, G):
    """``G[...] = K[:, T]`` (G: float64, Fortran order); returns the columns
    in the oracle's dtype (G itself for float64).  For an oracle symmetric
    by its formula (the RBF kernel) computed as the rows ``K[T, :]`` into
    ``G.T`` (C order): the rows' product ``X[T] @ X.T`` is the faster
    orientation of OpenBLAS's GEMM (about 1.7x at 784 features, measured),
    and writing it where it stays saves a fresh n x t block per call, whose
    page faults cost as much as the GEMM on a VM (measured: 12 blocks of
    60,000 x 83, 2.0 s with a fresh block each, 1.3 s without)."""
    if getattr(K, "_symmetric_by_formula", False):
        if K.dtype == np.float64:
            K.rows_into(T, G.T)
            return G
        block = np.asarray(K[T, :]).T
    else:
        block = np.asarray(K[:, T])
    G[...] = block
    return G if block.dtype == np.float64 else block


def _columns_of(K, C, n, c):
    """C (n x c, Fortran order, the oracle's dtype), allocated when None."""
    return np.empty((n, c), dtype=K.dtype, order="F") if C is None else C


def _rejection_block(K, F, cand, u, residual, taken, need, total):
    """The accepted candidates, in order (at most ``need``); marks them taken.

    H is the residual block ``K[cand, cand] - F[cand] F[cand]^T``; candidate j
    is accepted when ``u_j residual_j < H_jj`` (probability ``H_jj /
    residual_j``), and then eliminated from H (one step of Cholesky)."""
    H = np.array(K[cand, cand], dtype=np.float64)
    if F.shape[1]:
        Fc = F[cand]
        H -= product(Fc, np.ascontiguousarray(Fc.T))  # b x b: small (one BLAS thread; a GEMM, not SYRK)
    accepted = []
    floor = _ZERO * total
    for j in range(cand.size):
        s = int(cand[j])
        h = H[j, j]
        if taken[s] or not h > floor or not u[j] * residual[s] < h:
            continue
        taken[s] = True
        accepted.append(s)
        if len(accepted) == need:
            break
        col = H[j + 1:, j] / math.sqrt(h)
        H[j + 1:, j + 1:] -= np.outer(col, col)
    return accepted


def _factor_columns(G, T, total):
    """Turn the residual columns ``G`` (n x t, Fortran order) of the pivots T
    into columns of the Cholesky factor, in place: ``G L^-T`` with ``L L^T =
    G[T]``.  Returns the number of columns kept: when a pivot of that
    Cholesky is not positive (rounding), the columns from it on are dropped
    (set to 0)."""
    t = T.size
    S = G[T]
    S = (S + S.T) / 2
    try:
        L = cholesky(S)  # t x t, t <= b
        if np.all(np.diag(L) > math.sqrt(_ZERO * total)):
            # G L^-T as a TRMM with the (t x t) inverse: OpenBLAS's threaded
            # TRSM is slow on small triangles on a loaded machine
            Linv = lower_inverse(L)
            if Linv is not None:
                trmm_right(G, Linv, lower=True, trans=True)
                return t
    except np.linalg.LinAlgError:
        pass
    # column by column, stopping at the first vanishing pivot
    for j in range(t):
        g = G[:, j] - G[:, :j] @ G[T[j], :j]
        pivot = g[T[j]]
        if not pivot > _ZERO * total:
            G[:, j:] = 0.0
            return j
        G[:, j] = g / math.sqrt(pivot)
    return t


def sequential_rpcholesky(K, c, gen):
    """Sequential randomly pivoted Cholesky: ``(pivots, C, F)`` as
    :func:`block_rpcholesky` (pivots in the order drawn).

    Pivot i is drawn with probability proportional to the residual diagonal
    ``d = diag(K - F F^T)``; the new column of F is the residual column at
    the pivot scaled by its diagonal.  Kept as the reference of the
    accelerated algorithm (a statistical test compares their outputs, and a
    benchmark their speed)."""
    n = K.shape[0]
    d = _as_float64_diagonal(K)
    total = float(np.maximum(d, 0.0).sum())
    F = np.zeros((n, c))
    cols = np.empty(c, dtype=np.int64)
    C = None
    taken = np.zeros(n, dtype=bool)
    exhausted = not (math.isfinite(total) and total > 0)
    for i in range(c):
        residual = np.maximum(d, 0.0)
        residual[taken] = 0.0
        if not exhausted and not residual.sum() > _ZERO * total:
            exhausted = True
        if exhausted:
            cols[i] = gen.choice(np.flatnonzero(~taken))
        else:
            cols[i] = gen.choice(n, p=residual / residual.sum())
        taken[cols[i]] = True
        column = np.asarray(K[:, int(cols[i])])  # n entries
        if C is None:
            C = np.empty((n, c), dtype=column.dtype)
        C[:, i] = column
        if exhausted:
            continue
        g = np.asarray(column, dtype=np.float64) - F[:, :i] @ F[cols[i], :i]
        pivot = g[cols[i]]
        if not pivot > _ZERO * total:
            exhausted = True
            continue
        F[:, i] = g / math.sqrt(pivot)
        d -= F[:, i] ** 2
    return cols, C, F
