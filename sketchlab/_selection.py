"""Choosing columns (and rows): CUR selections and kernel landmarks, one family.

For a matrix A (the CUR decomposition, :func:`select`):

- ``"uniform"``: c distinct indices uniformly.
- ``"leverage"``: c distinct indices drawn with probabilities proportional to
  the exact rank-k leverage scores (Drineas, Mahoney & Muthukrishnan 2008).
- ``"approx-leverage"``: the same with approximate rank-k scores in the
  spirit of Drineas, Magdon-Ismail, Mahoney & Woodruff 2012: one pass over
  A gives a row sketch ``S A`` (l x n) and a column sketch ``A T^T``
  (m x l), l = max(4k, k + 10), each S, T a Gaussian after a CountSketch
  (O(nnz(A)) plus a small GEMM); the squared row norms of the top-k right
  singular vectors of ``S A`` (of the left ones of ``A T^T``) approximate
  the column (row) scores.  No product of A with a dense matrix, no power
  iteration: O(nnz(A) + (m + n) l^2).
- ``"deim"``: the discrete empirical interpolation indices of the top c
  singular vectors of the same kind of sketches (Sorensen & Embree 2016).
- ``"pivoted-qr"``: the first c pivots of a column-pivoted QR of those
  sketched singular vectors (as scipy.linalg.interpolative does on a sketch).

For an SPSD kernel matrix given as an oracle (the landmarks of Nystrom and of
the other SPSD methods, :func:`select_landmarks`):

- ``"uniform"``.
- ``"rpcholesky"``: randomly pivoted Cholesky (Chen, Epperly, Tropp & Webber
  2022): each pivot is drawn with probability proportional to the diagonal
  of the current residual kernel, then the residual is updated by that
  column; computed by the accelerated algorithm of Epperly, Tropp & Webber
  (2024: blocks of candidates with rejection sampling, the same output
  distribution); ``c n`` entries (the pivot columns, which are also C), plus
  the ``b x b`` blocks of the candidates and the diagonal where it is not
  known.
- ``"ridge-leverage"``: recursive ridge leverage score sampling (Musco &
  Musco 2017): approximate ridge leverage scores on nested uniform halves
  of the points, each level estimated from the sample of the level below;
  at most about ``c n`` entries besides C.

Every kernel entry goes through the oracle, which counts it.
"""

import math

import numpy as np

from ._linalg import eigh, eigvalsh, lstsq, pinvh, pivoted_qr_order, product
from ._linalg import numerical_rank, square_safe_exponent
from ._operators import GaussianSketch
from ._registry import make_sketch
from ._rpcholesky import block_rpcholesky
from ._validation import Checked

__all__ = ["CUR_SELECTIONS", "LANDMARKS", "select", "select_landmarks", "selection_sketches",
           "select_from_sketches", "weighted_without_replacement"]

CUR_SELECTIONS = ("uniform", "leverage", "approx-leverage", "deim", "pivoted-qr")
LANDMARKS = ("uniform", "rpcholesky", "ridge-leverage")


def weighted_without_replacement(weights, c, gen):
    """``c`` distinct indices drawn with probabilities proportional to
    ``weights`` (successive draws, as ``Generator.choice(replace=False)``);
    indices of zero weight come last, uniformly, if fewer than c are positive."""
    weights = np.asarray(weights, dtype=np.float64)
    n = weights.shape[0]
    positive = np.flatnonzero(weights > 0)
    take = min(c, positive.size)
    chosen = np.empty(0, dtype=np.int64)
    if take:
        p = weights[positive] / weights[positive].sum()
        chosen = gen.choice(positive, size=take, replace=False, p=p)
    if take < c:
        rest = np.setdiff1d(np.arange(n), chosen)
        chosen = np.concatenate([chosen, gen.choice(rest, size=c - take, replace=False)])
    return np.sort(chosen.astype(np.int64))


# ---------------------------------------------------------------------------
# Columns and rows of a matrix (CUR)
# ---------------------------------------------------------------------------

# rows of the sketches whose singular vectors the sketched selections use:
# max(4 k, k + 10) for the leverage scores, max(2 c, c + 10) for DEIM and
# pivoted QR; each a Gaussian after a CountSketch of twice as many rows
_SKETCH_FACTOR = 4
_INNER_FACTOR = 2
# singular values of a sketch below this fraction of the largest are not
# resolved by the eigenvalues of its Gram matrix (their squares are within
# 1e-24 of the largest): the rank rule's tolerance for those vectors
_GRAM_RTOL = 1e-12


def selection_sketches(A_shape, c, r, k, method, gen):
    """The two sketches the sketched selections need, for a SketchState:
    ``{"row-space": (G S, None), "column-space": (None, G' T)}``: ``G S A``
    (l x n) spans about the top row space of A, ``A (G' T)^T`` (m x l') its
    top column space (one pass over A for both).  None for "uniform" and
    "leverage" (exact), which need no sketch of A."""
    if method in ("uniform", "leverage"):
        return None
    m, n = A_shape
    if method == "approx-leverage":
        size_r = size_c = max(_SKETCH_FACTOR * k, k + 10)
    else:
        size_c, size_r = max(2 * c, c + 10), max(2 * r, r + 10)
    return {"row-space": (_sketch_operator(min(m, size_c), m, gen), None),
            "column-space": (None, _sketch_operator(min(n, size_r), n, gen))}


def _sketch_operator(size, dim, gen):
    """Gaussian after a CountSketch of twice as many rows: the registry's
    "osnap-gaussian" with one nonzero per column; a Gaussian alone when the
    inner sketch would not be smaller than the input."""
    inner = min(dim, _INNER_FACTOR * size)
    if inner == size:
        return GaussianSketch(size, dim, rng=gen)
    return make_sketch("osnap-gaussian", size, dim, rng=gen, inner_size=inner, nnz_per_col=1)


def _top_singular_vectors(B, count, side):
    """Top ``count`` right (``side="right"``: B is l x n) or left (B is m x l)
    singular vectors of a thin sketch B, from the eigenvectors of its l x l
    Gram matrix (squaring the condition number only matters for directions
    far below the leading ones, which no selection uses), and the singular
    values of B, scaled by a power of two when its Gram matrix would under- or
    overflow (see :func:`~sketchlab._linalg.square_safe_exponent`): then the
    vectors do not depend on the scale of A."""
    B = np.asarray(B, dtype=np.float64)
    e = square_safe_exponent(B)
    if e:
        B = np.ldexp(B, -e)
    Bt = B.T if side == "right" else B  # tall: (n or m) x l
    w, V = eigh(product(Bt.T, Bt))
    order = np.argsort(w)[::-1]
    w, V = np.maximum(w[order], 0.0), V[:, order]
    sigma = np.sqrt(w)
    count = min(count, numerical_rank(sigma, _GRAM_RTOL))
    sigma = sigma[:count]
    vectors = product(Bt, V[:, :count]) / np.where(sigma > 0, sigma, 1.0)
    return vectors, sigma


def _deim(V):
    """DEIM indices of the columns of V (n x c): one per column, greedily
    where the interpolation residual of the next vector is largest."""
    n, c = V.shape
    chosen = [int(np.argmax(np.abs(V[:, 0])))]
    for j in range(1, c):
        P = np.asarray(chosen)
        coef = lstsq(V[P, :j], V[P, j])
        residual = np.abs(V[:, j] - V[:, :j] @ coef)
        residual[P] = -1.0  # never twice
        chosen.append(int(np.argmax(residual)))
    return np.asarray(chosen, dtype=np.int64)


def _from_vectors(V, count, method, k, gen):
    """``count`` distinct indices of the rows of V (dim x l, orthonormal
    columns, leading singular directions first) by ``method``."""
    dim = V.shape[0]
    if method == "approx-leverage":
        Vk = V[:, :k]
        return weighted_without_replacement(np.einsum("ij,ij->i", Vk, Vk), count, gen)
    Vc = V[:, :min(count, V.shape[1])]
    if Vc.shape[1] == 0:  # a zero sketch (A = 0): no direction to choose by
        chosen = np.empty(0, dtype=np.int64)
    elif method == "deim":
        chosen = _deim(Vc)
    else:  # pivoted-qr
        piv = pivoted_qr_order(Vc.T)
        chosen = piv[:Vc.shape[1]].astype(np.int64)
    if chosen.size < count:  # more indices than the sketch's rank: fill uniformly
        rest = np.setdiff1d(np.arange(dim), chosen)
        chosen = np.concatenate([chosen, gen.choice(rest, count - chosen.size, replace=False)])
    return np.sort(chosen)


def select_from_sketches(sketches, c, r, k, method, gen):
    """``(columns, rows)`` from the arrays of :func:`selection_sketches`
    (``"row-space"``: l x n, ``"column-space"``: m x l')."""
    V, _ = _top_singular_vectors(sketches["row-space"], c if method != "approx-leverage" else k,
                                 "right")
    U, _ = _top_singular_vectors(sketches["column-space"],
                                 r if method != "approx-leverage" else k, "left")
    return _from_vectors(V, c, method, k, gen), _from_vectors(U, r, method, k, gen)


def select(A, c, r, method, k, gen):
    """``(columns, rows)``: c distinct column and r distinct row indices of a
    validated A by ``method`` (one of :data:`CUR_SELECTIONS`), target rank k
    for the leverage scores.  The sketched methods read A once for both."""
    from ._leverage import leverage_scores

    m, n = A.shape
    if method == "uniform":
        cols = np.sort(gen.choice(n, size=c, replace=False).astype(np.int64))
        return cols, np.sort(gen.choice(m, size=r, replace=False).astype(np.int64))
    if method == "leverage":
        col_scores = leverage_scores(A, axis=1, k=k)
        row_scores = leverage_scores(A, axis=0, k=k)
        return (weighted_without_replacement(col_scores, c, gen),
                weighted_without_replacement(row_scores, r, gen))
    sketches = selection_sketches(A.shape, c, r, k, method, gen)
    A = Checked(A)  # validated by the caller; in memory, no running state needed
    arrays = {"row-space": sketches["row-space"][0].apply(A, axis=0),
              "column-space": sketches["column-space"][1].apply(A, axis=1)}
    return select_from_sketches(arrays, c, r, k, method, gen)


# ---------------------------------------------------------------------------
# Landmarks of a kernel matrix
# ---------------------------------------------------------------------------


def _diagonal(K):
    return np.asarray(K.diagonal(), dtype=np.float64)


def rpcholesky(K, c, gen):
    """Randomly pivoted Cholesky: ``(columns, C)`` with C = K[:, columns].

    The accelerated algorithm (blocks of candidates with rejection sampling,
    :func:`~sketchlab._rpcholesky.block_rpcholesky`), whose pivots have the
    distribution of the sequential algorithm's: pivot i drawn with
    probability proportional to the diagonal of the current residual kernel.
    Once the residual diagonal vanishes (K has rank below c, up to rounding),
    the remaining landmarks are drawn uniformly from the rest: they cannot
    improve the approximation."""
    cols, C, _ = block_rpcholesky(K, c, gen)
    order = np.argsort(cols)
    return cols[order], C[:, order]


def ridge_leverage(K, c, gen):
    """Recursive ridge leverage score sampling: ``columns`` (C not formed).

    Nested uniform halves ``P_0 = all points, P_1, ..., P_L`` (|P_L| about c);
    from a weighted sample S of the level below, the ridge leverage scores of
    the points of the current level are approximated by
    ``l_i = min(1, o (K_ii - K_iS W (W K_SS W + lambda I)^-1 W K_Si) / lambda)``
    (o = log c, the oversampling; W the sampling weights; lambda from the
    tail of the eigenvalues of the weighted sampled block, for rank about
    c / (4 o)), and c/2 points are sampled from them for the next level.
    The c landmarks are the last sample completed by c/2 points drawn with
    probabilities proportional to the scores of the top level (all points),
    where that sample represents the kernel worst."""
    n = K.shape[0]
    d = _diagonal(K)
    order = gen.permutation(n)
    sizes = [n]
    while sizes[-1] > max(2 * c, 16):
        sizes.append((sizes[-1] + 1) // 2)
    oversample = max(1.0, math.log(c))
    rank = max(1, math.ceil(c / (4 * oversample)))
    budget = max(1, min(c // 2, sizes[-1]))
    # the bottom level: a uniform sample; each point stands for size / budget
    sample = order[np.sort(gen.choice(sizes[-1], size=budget, replace=False))]
    weights = np.full(budget, math.sqrt(sizes[-1] / budget))
    drawn_from = sizes[-1]
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)  # row of a point in K[order[:size], ...]
    scores = None
    for size in reversed(sizes):
        points = order[:size]
        weights = weights * math.sqrt(size / drawn_from)  # a sample of twice as many points
        KS = np.asarray(K[points, sample], dtype=np.float64)  # size x |S| entries
        SKS = KS[position[sample]]  # the sampled block: the sample's own rows of KS
        weighted = SKS * np.outer(weights, weights)
        eig = np.sort(np.abs(eigvalsh((weighted + weighted.T) / 2)))
        trace = float(np.trace(weighted))
        lam = max(float(trace - eig[::-1][:rank].sum()) / rank, 1e-10 * max(trace, 1e-300))
        # l_i = (K_ii - K_iS W (W K_SS W + lam I)^-1 W K_Si) / lam, scaled by the oversampling
        inv = pinvh(weighted + lam * np.eye(sample.size))
        KSW = KS * weights
        quad = np.einsum("ij,ij->i", KSW @ inv, KSW)
        scores = np.minimum(1.0, oversample * np.maximum(d[points] - quad, 0.0) / lam)
        if size == n:
            break
        keep = weighted_without_replacement(scores, min(budget, size), gen)
        p = np.minimum(1.0, keep.size * scores[keep] / max(scores.sum(), 1e-300))
        sample = points[keep]
        weights = 1.0 / np.sqrt(np.maximum(p, 1e-12))
        drawn_from = size
    # the last sample represents the points well; complete it where it does
    # not (high scores at the top level)
    full = np.empty(n)
    full[order] = scores
    full[sample] = 0.0
    extra = weighted_without_replacement(full, c - sample.size, gen)
    return np.sort(np.concatenate([sample, extra]))


def select_landmarks(K, c, method, gen):
    """``(columns, C or None)``: c distinct landmark indices of the kernel
    oracle K by ``method`` (one of :data:`LANDMARKS`), and ``K[:, columns]``
    when the selection evaluated it on the way (rpcholesky)."""
    n = K.shape[0]
    if method == "uniform":
        from ._operators import UniformSampler

        return UniformSampler(c, n, replace=False, rng=gen).indices.copy(), None
    if method == "rpcholesky":
        return rpcholesky(K, c, gen)
    return ridge_leverage(K, c, gen), None

