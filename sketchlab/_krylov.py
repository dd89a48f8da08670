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
rows are independent (no reduction split across threads), the large products
with the bases are summed over fixed row chunks in chunk order, and every
BLAS and LAPACK call runs under :func:`~sketchlab._config.serial_blas`, so
the result is the same for any number of threads.
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from ._config import serial_blas
from ._errors import DEFAULT_PROBES, frobenius_identity_estimate, lowrank_probe_estimate
from ._engine.threads import tall_mul
from ._krylov_basis import GrowingBasis
from ._linalg import svd, svd_values
from ._linear_map import as_linear_map
from ._results import SVDResult, warn_unconverged
from ._validation import as_generator, check_int, check_tol

if TYPE_CHECKING:

    from ._validation import MatrixLike

__all__ = ["krylov_svd", "krylov_core", "krylov_run"]


# rounding level of the singular values of an answer, in units of eps s_max
# (the bases are orthonormal to about eps; the values of the projected matrix
# move by about eps ||A||_2 from pass to pass once converged)
_NOISE = 8.0
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


# ---------------------------------------------------------------------------
# The orthonormal bases
# ---------------------------------------------------------------------------


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


def _largest_cluster(s, rel=1e-6):
    """The most values of the descending ``s`` within ``rel`` (relative) of
    one another."""
    best, lo = 0, 0
    for hi in range(s.shape[0]):
        while s[lo] - s[hi] > rel * s[lo]:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


def _settled(rise, prev_rise, s, rtol, noise=0.0):
    """The k mode's rule: every singular value rose by at most ``rtol`` of
    itself over the last pass, and what is left of its rise, extrapolated
    from the last two (they converge geometrically, the ratio r of
    consecutive rises: ``rise r / (1 - r)`` to go), is within ``rtol`` too.
    A smaller block converges with a larger r, where the last rise alone
    would stop early.  Rises below ``rtol / 1000`` count as settled, and so
    do rises (either way) within ``noise``, the rounding level of the values
    in the working precision (``_NOISE`` eps ``s_max``): below it a rise is
    no convergence left to see, and its ratio to the last one is noise."""
    if not np.all(rise <= np.maximum(rtol * s, noise)):
        return False
    if prev_rise is None:
        return False
    small = (rise <= 1e-3 * rtol * s) | (np.abs(rise) <= noise)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = rise / prev_rise
        left = np.where((r >= 0) & (r < 1), rise * r / (1 - r), np.inf)
    return bool(np.all(small | (left <= rtol * s)))


def _product(ops, side, X, basis):
    """``A X`` (side "right") or ``A^T X`` ("left"), written straight into
    the basis's next block."""
    multiply = ops.matmat if side == "right" else ops.rmatmat
    return multiply(X, out=basis.reserve(X.shape[1]))


def _margin(norm2, eps, shape):
    """Rounding allowance on ``||A||_F^2 - sum s_j^2`` (the products' and the
    bases' rounding, relative eps per entry summed over the longer side)."""
    return 16.0 * eps * math.sqrt(max(shape)) * norm2


def _pass_bound(k, tol, passes, b, shape, dtype, max_passes):
    """``(max_passes, fixed)``: the passes the iteration may make, and whether
    exactly that many are asked for (``passes`` without ``tol``)."""
    m, n = shape
    if passes is not None:
        return passes, tol is None
    if k is not None and b < k + _OVERSAMPLE:
        # a smaller block than k + 4 builds the same basis size in more
        # passes: the same bound on the basis, not on the passes
        max_passes = 2 * -(-(max_passes // 2) * (k + _OVERSAMPLE) // b)
    if tol is not None:  # until the bases fill their memory allowance or the whole space
        cols = max(b, _BASIS_BYTES // ((m + n) * np.dtype(dtype).itemsize))
        max_passes = 2 * max(1, -(-min(cols, min(m, n)) // b)) + 1
    return max_passes, False


class _Bidiagonalization:
    """The two bases and the projected matrix of block Lanczos
    bidiagonalization: ``A V = U Bcol`` (odd passes) and ``U^T A = Brow V^T``
    (even passes), every coefficient kept."""

    def __init__(self, ops, shape, dtype, b, max_passes, gen):
        m, n = shape
        # room for every pass the bound allows (np.empty: pages untouched until a
        # block is written; growing copies the basis), within the tol mode's allowance
        cols = b * (max_passes // 2 + 1)
        room = max(b, _BASIS_BYTES // ((m + n) * np.dtype(dtype).itemsize))
        self.ops, self.gen = ops, gen
        self.U = GrowingBasis(m, dtype, min(m, cols, room))
        self.V = GrowingBasis(n, dtype, min(n, cols + b, room + b))
        self.Bcol, self.Brow = _Coefficients(), _Coefficients()
        self.V.extend(gen.standard_normal((n, b)), gen)
        self.v_done = 0  # columns of V multiplied by A
        self.u_done = 0  # columns of U multiplied by A^T
        self.last_u = self.last_v = None  # the blocks multiplied by the previous two passes

    def step(self, p):
        """Pass ``p`` (odd: ``A V_j``; even: ``A^T U_j``): the next block of
        the other basis.  Returns ``(small, added)``: the projected matrix of
        the answer after this pass and the directions the block added."""
        U, V, Bcol, Brow = self.U, self.V, self.Bcol, self.Brow
        if p % 2:  # A V_j: one pass, the next block of U
            cols = slice(self.v_done, V.size)
            # U_{j-1}^T A V_j, the R of V_j (pass before): the recurrence's term
            local = (None if self.last_u is None
                     else (self.last_u, Brow.view(U.size, V.size)[self.last_u, cols]))
            C, R = U.extend(_product(self.ops, "right", V.Q[:, cols], U), self.gen, local)
            self.last_v = cols
            Bcol.put(slice(0, C.shape[0]), cols, C)
            Bcol.put(slice(C.shape[0], U.size), cols, R)
            self.v_done = V.size
            return Bcol.view(U.size, self.v_done), R.shape[0]
        rows = slice(self.u_done, U.size)  # A^T U_j: one pass, the next block of V
        # V_j^T A^T U_j = (the R of U_j, pass before)^T
        local = (self.last_v, Bcol.view(U.size, V.size)[rows, self.last_v].T)
        C, R = V.extend(_product(self.ops, "left", U.Q[:, rows], V), self.gen, local)
        self.last_u = rows
        Brow.put(rows, slice(0, C.shape[0]), C.T)
        Brow.put(rows, slice(C.shape[0], V.size), R.T)
        self.u_done = U.size
        return Brow.view(self.u_done, V.size), R.shape[0]

    def close(self):
        self.U.close()
        self.V.close()

    def answer(self, p, small, rank, dtype):
        """``(U, s, Vt)`` of rank ``rank`` after pass p, from the SVD of the
        projected matrix ``small``."""
        Ub, s, Vbt = svd(small)
        U, V = self.U, self.V
        if p % 2:  # A V V^T = U Bcol V^T
            Uout = tall_mul(U.Q, Ub[:, :rank])
            Vtout = np.ascontiguousarray(tall_mul(V.Q[:, :self.v_done], Vbt[:rank].T).T)
        else:  # U U^T A = U Brow V^T
            Uout = tall_mul(U.Q[:, :self.u_done], Ub[:, :rank])
            Vtout = np.ascontiguousarray(tall_mul(V.Q, Vbt[:rank].T).T)
        return (Uout.astype(dtype, copy=False), s[:rank].astype(dtype),
                Vtout.astype(dtype, copy=False))


class _Rule:
    """The stopping rule: a fixed number of passes; tol without k (the rank
    that meets it has stopped falling); or k (with tol: met at rank k;
    without: the top k values settled, :func:`_settled`)."""

    def __init__(self, k, tol, fixed, max_passes, rtol, eps):
        self.k, self.tol, self.fixed, self.max_passes, self.rtol = k, tol, fixed, max_passes, rtol
        self.eps = eps
        self.target: Any = None
        self.prev_s = self.prev_rank = self.prev_rise = None

    def stop(self, p, s, err2):
        """Whether to stop after pass p (the rule met: converged)."""
        k = self.k
        if self.fixed:
            return p >= self.max_passes
        if self.tol is not None and k is None:
            hit = np.flatnonzero(err2 <= self.target)
            rank = int(hit[0]) + 1 if hit.size else None
            settled = rank is not None and self.prev_rank is not None and \
                self.prev_rank - rank <= _RANK_SETTLED * rank
            self.prev_rank = rank
            return settled
        assert k is not None  # k mode, or k and tol
        stop = False
        if s.shape[0] >= k:
            if self.tol is not None and err2[k - 1] <= self.target:
                stop = True
            elif self.prev_s is not None and self.prev_s.shape[0] >= k:
                rise = s[:k] - self.prev_s[:k]
                stop = _settled(rise, self.prev_rise, s[:k], self.rtol,
                                _NOISE * self.eps * float(s[0]))
                self.prev_rise = rise
            self.prev_s = s
        return stop

    def rank(self, s, err2):
        """``(rank, met)``: the rank of the answer and whether tol is met."""
        if self.k is None:
            hit = np.flatnonzero(err2 <= self.target)
            return max(int(hit[0]) + 1 if hit.size else s.shape[0], 1), bool(hit.size)
        rank = min(self.k, s.shape[0])
        return max(rank, 1), self.tol is None or bool(err2[rank - 1] <= self.target)


def krylov_core(ops: Any, shape: tuple[int, int], dtype: np.dtype, *, k: int | None,
                tol: float | None, passes: int | None, block_size: int, gen: np.random.Generator,
                norm2: Any, rtol: float = _CONVERGED,
                max_passes: int = _DEFAULT_PASSES) -> dict[str, Any]:
    """The iteration without input validation (in-memory and dask fronts).

    ``ops`` is the :class:`~sketchlab._linear_map.LinearMap` of A; ``norm2`` is
    ``||A||_F^2`` (needed with tol), or a function that gives it after the
    first pass (a dask A: computed in that pass); ``rtol`` the k mode's rule (largest
    rise of a singular value over a pass, relative), ``max_passes`` its
    bound when ``passes`` is None.  Returns a dict with U, s, Vt, passes,
    converged, err2 (None without norm2), margin2.
    """
    b = block_size
    eps = float(np.finfo(dtype).eps)
    bound, fixed = _pass_bound(k, tol, passes, b, shape, dtype, max_passes)
    rule = _Rule(k, tol, fixed, bound, rtol, eps)
    margin2: Any = None

    def resolve(norm2):
        nonlocal margin2
        if norm2 is not None:
            margin2 = _margin(norm2, eps, shape)
            if tol is not None:
                rule.target = tol * tol * norm2 - margin2
        return norm2

    if not callable(norm2):
        norm2 = resolve(norm2)
    basis = _Bidiagonalization(ops, shape, dtype, b, bound, gen)
    converged = False
    p = 0
    while p < bound:
        p += 1
        small, added = basis.step(p)
        if callable(norm2):  # known after the first pass (computed in it)
            norm2 = resolve(norm2())
        # the singular values alone (a quarter of the flops): the vectors only
        # of the last answer, below
        s = svd_values(small)
        err2: Any = None if norm2 is None else norm2 - np.cumsum(s * s)
        stop = rule.stop(p, s, err2)
        converged = stop
        if added == 0 or stop:  # no direction left: the space is all of R^m or R^n
            converged = converged or added == 0
            break
    rank, met = rule.rank(s, err2)
    if _restart_for_cluster(s, k, b, passes):
        assert k is not None  # a cluster is looked for among the top k only
        basis.close()
        out = krylov_core(ops, shape, dtype, k=k, tol=tol, passes=None,
                          block_size=min(k + _OVERSAMPLE, *shape), gen=gen, norm2=norm2,
                          rtol=rtol, max_passes=max_passes)
        out["passes"] += p
        return out
    U, s, Vt = basis.answer(p, small, rank, dtype)
    basis.close()  # the bases' buffers back to the workspace: the next call reuses them
    return dict(U=U, s=s, Vt=Vt, passes=p, converged=converged, met=met,
                err2=None if err2 is None else float(err2[rank - 1]), margin2=margin2,
                norm2=norm2, rank=rank)


def _restart_for_cluster(s, k, b, passes):
    """Whether to start again with a block of k + 4: a block finds at most b
    copies of a repeated singular value (the Krylov space of b vectors
    meets its singular subspace in b dimensions) unless rank-deficient
    blocks brought in fresh directions, so b or more equal values among the
    top k may hide more.  With a fixed number of passes, warn where exactly
    b were found instead (more than b: the fresh directions were at work,
    as on a flat spectrum)."""
    cluster = _largest_cluster(s[:k]) if k is not None and b < k else 0
    if cluster < b:
        return False
    if passes is None:
        return True
    if cluster == b:
        warnings.warn(
            f"krylov_svd: {b} equal singular values (a block's worth) among the top "
            f"{k}: a block of {b} finds at most {b} copies of a repeated value, so some "
            "may be missing; pass block_size >= k (or no passes=, which restarts with "
            "k + 4)", UserWarning, stacklevel=6)
    return False


def _estimate_from_identity(out):
    """The answer's ErrorEstimate from the Frobenius identity."""
    return frobenius_identity_estimate(out["err2"], out["margin2"], out["norm2"])


def _estimate_from_probes(ops, out, gen, dtype):
    """The answer's ErrorEstimate from Gaussian probes of the error (one more
    pass over A: ``A G`` for a fresh n x q Gaussian G)."""
    G = gen.standard_normal((ops.shape[1], DEFAULT_PROBES)).astype(dtype)
    return lowrank_probe_estimate(ops.matmat(G), G, out["U"], out["s"], out["Vt"])


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
        the singular values, and the rise left, extrapolated from the last
        two, is as small), at most 24 passes with blocks of k + 4 (as many
        basis columns with smaller blocks); with ``tol``, until it is met,
        while the two bases fit in 1 GiB.
    block_size : int, optional
        Vectors per block, ``1 <= block_size <= min(m, n)``.  Default
        ``k + 4`` up to k = 20, ``max(24, ceil(k / 3) + 4)`` above (a smaller
        basis reaches the same accuracy in more, cheaper passes), capped at
        min(m, n); 16 when k is None.  A block smaller than k needs more
        passes before the answer has k components, and finds at most
        ``block_size`` copies of a repeated singular value: when that many
        equal values (within 1e-6) come out among the top k, the iteration
        starts again with blocks of k + 4 (the passes of both runs count);
        with ``passes`` given, it warns instead.
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
        the asked number of ``passes`` without tol; False whenever ``tol``
        was not met), ``res.error_estimate`` as above.

    Raises
    ------
    ValueError
        For k outside [1, min(m, n)], neither k nor tol, tol with a
        LinearOperator, a passes bound too small for k components.

    Warns
    -----
    ConvergenceWarning
        (scikit-learn's, where it is installed) When ``tol`` was not met
        within the passes, or the singular values had not settled within the
        default bound (``converged`` is then False).
    UserWarning
        With ``passes`` given, when as many equal singular values as the block
        has columns came out among the top k (some copies may be missing).

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
    orthogonalization (d = m or n, D the basis size so far) and the singular
    values of the D x D projected matrix.  The product writes into the
    basis's buffer, and the orthogonalization works there in place.

    Results are the same for any number of threads: the start block comes
    from ``rng``, the sparse products from Numba loops whose output rows are
    independent, the large products with the bases run in fixed chunks of
    rows (summed in chunk order) on Numba's threads with one BLAS thread
    each, and every other BLAS/LAPACK call runs on one thread (dense
    products included).
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
    ops = as_linear_map(A)
    return krylov_run(ops, ops.shape, ops.dtype, k=k, tol=tol, passes=passes,
                      block_size=block_size, rng=rng, estimate_error=estimate_error, rtol=rtol,
                      max_passes=max_passes, stacklevel=stacklevel + 1)


def krylov_run(ops: Any, shape: tuple[int, int], dtype: np.dtype, *, k, tol, passes, block_size,
               rng, estimate_error, rtol=_CONVERGED, max_passes=_DEFAULT_PASSES,
               stacklevel=3) -> SVDResult:
    """The parameters' checks, the iteration and its result, for any
    :class:`~sketchlab._linear_map.LinearMap` ``ops`` (whose ``frobenius2()``
    is ``||A||_F^2``, None when unknown, or a function that gives it after
    the first pass, which computes it: a dask A).  The in-memory and the
    dask fronts differ only in their ``ops``."""
    k, tol, passes, block_size = check_parameters(shape, k, tol, passes, block_size,
                                                  estimate_error)
    norm2 = ops.frobenius2()
    if tol is not None and norm2 is None:
        raise ValueError("tol needs ||A||_F, which a LinearOperator does not give: "
                         "pass the matrix, or k (and estimate_error=True for an estimate)")
    if norm2 is not None and not callable(norm2) and not math.isfinite(norm2):
        raise ValueError("A's squared Frobenius norm overflows float64; scale A down")
    gen = as_generator(rng)
    with serial_blas():
        out = krylov_core(ops, shape, dtype, k=k, tol=tol, passes=passes,
                          block_size=block_size, gen=gen, norm2=norm2, rtol=rtol,
                          max_passes=max_passes)
        return finish(out, ops, tol, estimate_error, gen, dtype, stacklevel + 1)


def default_block(k):
    """The default block size: ``k + 4`` up to k = 20; for larger k a third of
    k plus 4 (at least 24).  The basis needed for a given accuracy is
    smaller with smaller blocks (more passes, each cheaper; on a TF-IDF
    matrix at k = 100, blocks of 38 reach the top singular values to 1e-4
    with a basis of about 480 columns against 730 for blocks of 104), and
    the orthogonalization grows with its square.  Without k (tol mode), 16."""
    if k is None:
        return _TOL_BLOCK
    return min(k + _OVERSAMPLE, max(24, -(-k // 3) + _OVERSAMPLE))


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
        block_size = min(default_block(k), min(m, n))
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
    the warnings of an unmet tolerance or an unsettled iteration
    (``ConvergenceWarning``: ``converged`` is False then)."""
    converged = out["converged"]
    if tol is not None and not out["met"]:
        converged = False
        rel = math.sqrt(max(out["err2"], 0.0) / out["norm2"]) if out["norm2"] else 0.0
        warn_unconverged(
            f"krylov_svd: tol={tol} not met in {out['passes']} passes over A (relative error "
            f"{rel:.3g} at rank {out['rank']}); pass a larger passes= (or block_size=)")
    elif not converged:
        warn_unconverged(
            f"krylov_svd: the top {out['rank']} singular values had not settled after "
            f"{out['passes']} passes over A (the bound); pass passes= or a larger block_size=")
    estimate = None
    passes = out["passes"]
    if estimate_error:
        if out["err2"] is not None:
            estimate = _estimate_from_identity(out)
        else:
            estimate = _estimate_from_probes(ops, out, gen, dtype)
            passes += 1
    return SVDResult(out["U"], out["s"], out["Vt"], error_estimate=estimate, passes=passes,
                     converged=converged)
