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

from ._linalg import cholesky, lower_inverse

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


def block_rpcholesky(K, c, gen, block_size=BLOCK_SIZE):
    """Accelerated RPCholesky of the kernel oracle K: ``(pivots, C, F)``.

    ``pivots`` are the c landmarks in the order drawn, ``C = K[:, pivots]``
    (the oracle's dtype), ``F`` (n x c, float64) the Cholesky factor with
    ``F F^T = C W^+ C^T`` (the Nystrom approximation on the pivots), in the
    same column order.  Once the residual diagonal vanishes (K has rank
    below c up to rounding), the remaining landmarks are drawn uniformly from
    the rest, as in the sequential algorithm, and their columns of F are 0.
    """
    n = K.shape[0]
    d = _as_float64_diagonal(K)
    total = float(np.maximum(d, 0.0).sum())
    F = np.zeros((n, c))
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
            block = np.asarray(K[:, rest])
            if C is None:
                C = np.empty((n, c), dtype=block.dtype)
            C[:, count:] = block
            pivots[count:] = rest
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
        block = np.asarray(K[:, T])  # n x t kernel entries, one call
        if C is None:
            C = np.empty((n, c), dtype=block.dtype)
        # the residual columns, in place when the block is a fresh float64 array
        # (C keeps its own copy below)
        G = block if block.dtype == np.float64 and block.flags.owndata else (
            np.array(block, dtype=np.float64))
        C[:, count:count + T.size] = block
        if count:
            G -= F[:, :count] @ F[T, :count].T  # residual columns (a GEMM)
        t, kept = _factor_columns(G, T, total)
        pivots[count:count + t] = T[:t]
        F[:, count:count + t] = kept
        taken[T[t:]] = False  # dropped by the factorization (rounding): undo
        count += t
        d -= np.einsum("ij,ij->i", kept, kept)
        d[T[:t]] = 0.0
        if t < T.size:  # a pivot vanished: the rest is rounding noise
            exhausted = True
    return pivots, C, F


def _rejection_block(K, F, cand, u, residual, taken, need, total):
    """The accepted candidates, in order (at most ``need``); marks them taken.

    H is the residual block ``K[cand, cand] - F[cand] F[cand]^T``; candidate j
    is accepted when ``u_j residual_j < H_jj`` (probability ``H_jj /
    residual_j``), and then eliminated from H (one step of Cholesky)."""
    H = np.array(K[cand, cand], dtype=np.float64)
    if F.shape[1]:
        Fc = F[cand]
        H -= Fc @ np.ascontiguousarray(Fc.T)  # b x b: small (a GEMM, not SYRK)
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
    """Columns of the Cholesky factor for the residual columns ``G`` (n x t)
    of the pivots T: ``(t_kept, G L^-T)`` with ``L L^T = G[T]``; when a pivot
    of that Cholesky is not positive (rounding), the pivots from it on are
    dropped."""
    t = T.size
    S = G[T]
    S = (S + S.T) / 2
    try:
        L = cholesky(S)  # t x t, t <= b
        if np.all(np.diag(L) > math.sqrt(_ZERO * total)):
            # G L^-T as a GEMM with the (t x t) inverse: OpenBLAS's threaded
            # TRSM is slow on small problems on a loaded machine
            Linv = lower_inverse(L)
            if Linv is not None:
                return t, G @ Linv.T
    except np.linalg.LinAlgError:
        pass
    # column by column, stopping at the first vanishing pivot
    out = np.zeros_like(G)
    for j in range(t):
        g = G[:, j] - out[:, :j] @ out[T[j], :j]
        pivot = g[T[j]]
        if not pivot > _ZERO * total:
            return j, out[:, :j]
        out[:, j] = g / math.sqrt(pivot)
    return t, out


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
