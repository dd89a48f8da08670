"""SPSD (kernel) matrix approximation ``K ~ C U C^T``.

``C = K[:, columns]`` holds ``c`` landmark columns drawn uniformly without
replacement; the methods differ in how the ``c x c`` core ``U`` is built and
in how many entries of K they evaluate:

==============  =====================================================  ===============
method          core U                                                 entries of K
==============  =====================================================  ===============
nystrom         W^+ with W = K[columns, columns]                       n c
fast_spsd       (S C)^+ (S K S^T) (C^T S^T)^+ (Wang et al. 2016)       n c + s^2
faster_spsd     pi_+((S1 C)^+ S1 K S2^T (C^T S2^T)^+) (Algorithm 2)    n c + s^2
optimal_spsd    C^+ K (C^+)^T                                          n c + n^2
==============  =====================================================  ===============

K is a kernel oracle (:class:`sketchlab.RBFKernel`) or a square symmetric
ndarray.  Every method accepts ``columns=`` so that several methods can share
the same landmarks, and returns an :class:`SPSDApproximation`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from ._errors import kernel_estimate
from ._gmr import solve_sketched
from ._kernel_matrices import as_kernel
from ._leverage import sampling_scores
from ._engine.reductions import frobenius_parts
from ._linalg import (
    exact_core,
    factored_eigh,
    nystrom_core,
    orthonormal,
    product,
    qr,
    symmetrize,
)
from ._linalg import eigvalsh as _eigvalsh
from ._linalg import svd as _svd
from ._operators import LeverageScoreSampler, UniformSampler
from ._selection import LANDMARKS, select_landmarks
from ._validation import as_generator, check_choice, check_int, check_positive

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from ._errors import ErrorEstimate
    from ._kernel_matrices import KernelLike

__all__ = ["SPSDApproximation", "nystrom", "fast_spsd", "faster_spsd", "optimal_spsd", "eta"]


class SPSDApproximation:
    """A low-rank approximation ``K ~ C U C^T`` of an SPSD matrix.

    Returned by :func:`nystrom`, :func:`fast_spsd`, :func:`faster_spsd` and
    :func:`optimal_spsd`; not meant to be built by hand.

    Attributes
    ----------
    columns : ndarray of shape (c,)
        Indices of the landmark columns (int64, sorted when drawn).
    C : ndarray of shape (n, c)
        ``K[:, columns]``, in the oracle's dtype.
    U : ndarray of shape (c, c)
        The core matrix, symmetric, float64 (it is often ill-conditioned, so
        it is kept in double precision even for a float32 K).
    n_evaluated : int
        Entries of K the method evaluated (C included).
    method : str
        ``"nystrom"``, ``"fast"``, ``"faster"`` or ``"optimal"``.
    samples : tuple of (ndarray, ndarray)
        The row-sampling sketches used for the core, as ``(indices,
        weights)`` pairs: the sketch is ``S = diag(weights) I[indices, :]``
        (one pair for ``"fast"``, two (S1, S2) for ``"faster"``, none
        otherwise).

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> X = np.random.default_rng(0).standard_normal((100, 2))
    >>> approx = sketchlab.faster_spsd(sketchlab.RBFKernel(X, gamma=1.0), 10, 50, rng=0)
    >>> approx
    SPSDApproximation(method='faster', n=100, c=10, n_evaluated=3500)
    >>> approx.toarray().shape
    (100, 100)
    """

    def __init__(self, columns: NDArray[np.int64], C: NDArray[np.floating],
                 U: NDArray[np.float64], *, n_evaluated: int, method: str,
                 samples: Iterable[tuple[NDArray[np.int64], NDArray[np.float64]]] = (),
                 error_estimate: ErrorEstimate | None = None) -> None:
        self.columns = columns
        self.C = C
        self.U = U
        self.n_evaluated = int(n_evaluated)
        self.method = method
        self.samples = tuple(samples)
        self.error_estimate = error_estimate

    @property
    def shape(self) -> tuple[int, int]:
        """Shape ``(n, n)`` of the approximated matrix."""
        n = self.C.shape[0]
        return (n, n)

    def __repr__(self) -> str:
        n, c = self.C.shape
        return (
            f"SPSDApproximation(method={self.method!r}, n={n}, c={c}, "
            f"n_evaluated={self.n_evaluated})"
        )

    def toarray(self) -> NDArray[np.float64]:
        """The dense ``n x n`` matrix ``C U C^T`` (small n only)."""
        C = np.asarray(self.C, dtype=np.float64)
        return (C @ self.U) @ C.T

    def error(self, K: KernelLike, *, relative: bool = True,
              block_rows: int | None = None) -> float:
        """Frobenius error ``||K - C U C^T||_F`` (over ``||K||_F`` by default).

        Parameters
        ----------
        K : kernel oracle or ndarray of shape (n, n)
            The approximated matrix.  An oracle is read in blocks of whole
            rows, so ``n x n`` is never held at once (its ``n_evaluated``
            grows by ``n**2``).
        relative : bool, default True
            Divide by ``||K||_F`` (the paper's error ratio).
        block_rows : int, optional
            Rows of K per block (default: about 4M entries per block).

        Returns
        -------
        float
            0 for an exact approximation of an all-zero K.

        Raises
        ------
        ValueError
            If K is not ``(n, n)``.

        Notes
        -----
        Cost O(n^2 c) flops and ``n**2`` evaluations of K.

        Examples
        --------
        >>> import numpy as np, sketchlab
        >>> X = np.random.default_rng(0).standard_normal((200, 3))
        >>> K = sketchlab.RBFKernel(X, gamma=0.5)
        >>> opt = sketchlab.optimal_spsd(K, 20, rng=0)
        >>> nys = sketchlab.nystrom(K, None, columns=opt.columns)
        >>> bool(opt.error(K) < nys.error(K) < 1)
        True
        """
        K = as_kernel(K)
        if K.shape != self.shape:
            raise ValueError(f"K must have shape {self.shape}, got {K.shape}")
        C = np.asarray(self.C, dtype=np.float64)
        CU = C @ self.U
        resid = total = 0.0
        for i0, block in K.row_blocks(block_rows):
            block = np.asarray(block, dtype=np.float64)
            diff = block - CU[i0:i0 + block.shape[0]] @ C.T
            resid += float(np.einsum("ij,ij->", diff, diff))
            total += float(np.einsum("ij,ij->", block, block))
        if not relative:
            return float(np.sqrt(resid))
        if total == 0.0:
            return 0.0 if resid == 0.0 else float("inf")
        return float(np.sqrt(resid / total))

    def eigendecomposition(self,
                           k: int | None = None) -> tuple[NDArray[np.floating], NDArray[np.floating]]:
        """Top-k eigenpairs of ``C U C^T``.

        Parameters
        ----------
        k : int, optional
            Number of eigenpairs, ``1 <= k <= c`` (default c).

        Returns
        -------
        eigenvalues : ndarray of shape (k,)
            In decreasing order.
        eigenvectors : ndarray of shape (n, k)
            Orthonormal columns.

        Raises
        ------
        ValueError
            If k is not in [1, c].

        Notes
        -----
        Thin QR ``C = Q T``, then the eigendecomposition of the ``c x c``
        matrix ``T U T^T``: ``C U C^T = (Q Z) diag(w) (Q Z)^T``.  Cost
        O(n c^2).

        Examples
        --------
        >>> import numpy as np, sketchlab
        >>> X = np.random.default_rng(0).standard_normal((100, 2))
        >>> approx = sketchlab.nystrom(sketchlab.RBFKernel(X, gamma=1.0), 10, rng=0)
        >>> w, V = approx.eigendecomposition(3)
        >>> w.shape, V.shape
        ((3,), (100, 3))
        """
        c = self.C.shape[1]
        k = c if k is None else check_int(k, "k", 1, c)
        return factored_eigh(self.C, self.U, k)


# ---------------------------------------------------------------------------
# shared steps
# ---------------------------------------------------------------------------


def _given_columns(n, c, columns):
    """The landmark column indices given by the caller, checked."""
    cols = np.asarray(columns)
    if cols.ndim != 1 or cols.size == 0 or cols.dtype.kind not in "iu":
        raise ValueError(
            f"columns must be a non-empty 1-D array of ints, got dtype {cols.dtype} "
            f"and shape {cols.shape}"
        )
    cols = cols.astype(np.int64)
    if cols.min() < 0 or cols.max() >= n:
        raise ValueError(f"columns must lie in [0, {n - 1}], got values in "
                         f"[{cols.min()}, {cols.max()}]")
    if np.unique(cols).size != cols.size:
        raise ValueError("columns must not repeat an index")
    if c is not None:
        c = check_int(c, "c", 1, n)
        if c != cols.size:
            raise ValueError(f"c must equal len(columns) = {cols.size}, got {c}")
    return cols


class _Run:
    """One call of an SPSD method: the oracle, its generator, the landmarks
    and C, and the count of kernel entries it evaluated."""

    def __init__(self, K, c, columns, landmarks, rng, s=None):
        self.K = as_kernel(K)
        self.gen = as_generator(rng)
        n = self.K.shape[0]
        self.start = self.K.n_evaluated
        landmarks = check_choice(landmarks, "landmarks", LANDMARKS)
        if columns is not None:
            self.cols = _given_columns(n, c, columns)
            C = None
        else:
            if c is None:
                raise TypeError("c must be given when columns is not")
            c = check_int(c, "c", 1, n)
            self.cols, C = select_landmarks(self.K, c, landmarks, self.gen)
        self.s = None if s is None else check_int(s, "s", self.cols.size, n)
        self.C = self.K[:, self.cols] if C is None else C
        self.C64 = np.asarray(self.C, dtype=np.float64)

    def result(self, U, method, *, estimate_error=False, n_probes=None, samples=()):
        """The SPSDApproximation, with the error estimate when asked (its rows
        of K are evaluated last, from the same generator, and counted)."""
        approx = SPSDApproximation(self.cols, self.C, U, n_evaluated=0, method=method,
                                   samples=samples)
        if estimate_error:
            approx.error_estimate = kernel_estimate(self.K, approx.C, approx.U, n_probes,
                                                     self.gen)
        approx.n_evaluated = self.K.n_evaluated - self.start
        return approx


# The parameter landmarks, the same for the four methods (filled in at "{landmarks}")
_LANDMARKS_DOC = """landmarks : {"uniform", "rpcholesky", "ridge-leverage"}, default "uniform"
        How the c landmarks are chosen when ``columns`` is not given:
        uniformly without replacement, by randomly pivoted Cholesky (Chen,
        Epperly, Tropp & Webber 2022, computed by the accelerated algorithm
        of Epperly, Tropp & Webber 2024, blocks of candidates with rejection
        sampling, same distribution; its c pivot columns are C, so it costs
        no more kernel entries than C itself, plus the candidates' blocks of
        at most 100 x 100 and the diagonal where it is not known), or by
        recursive ridge leverage scores (Musco & Musco 2017; at most about c
        n more entries).  Every entry is counted in
        ``n_evaluated``."""

# The parameters estimate_error and n_probes, the same for the four methods
# (filled into their docstrings at "{estimate}" below).
_ESTIMATE_DOC = """estimate_error : bool, default False
        Attach an :class:`~sketchlab.ErrorEstimate` of ``||K - C U C^T||_F``
        as ``error_estimate``, drawn after everything else: the diagonal of
        the error exactly, and its off-diagonal part from one block of K of
        about ``n_probes * n`` entries whose rows and columns are drawn mostly
        where the approximation is large, with a Gamma interval from the
        block's own two-way variance (it assumes the block sees the rows that
        carry the error; 86-97% coverage per data set on the paper's kernels).  Its
        entries (and the diagonal of K, where not known) are counted in
        ``n_evaluated``.
    n_probes : int, optional
        Size of the estimate's block in rows of K (default 40: about 40 n
        entries)."""


def _row_leverage(C):
    """Row leverage scores of C; uniform when C is all zero (then every
    core is 0 whatever rows are drawn)."""
    return sampling_scores(C, axis=0)


def _sampled_block(K, idx1, w1, idx2, w2):
    """``S1 K S2^T = diag(w1) K[idx1, idx2] diag(w2)`` for row samplers."""
    M = np.asarray(K[idx1, idx2], dtype=np.float64)
    return w1[:, None] * M * w2[None, :]


# ---------------------------------------------------------------------------
# the four methods
# ---------------------------------------------------------------------------


def nystrom(K: KernelLike, c: int | None, *, columns: ArrayLike | None = None,
            landmarks: str = "uniform", rng: None | int | np.random.Generator = None,
            estimate_error: bool = False, n_probes: int | None = None) -> SPSDApproximation:
    """The Nystrom approximation ``K ~ C W^+ C^T``.

    Parameters
    ----------
    K : kernel oracle or ndarray of shape (n, n)
        SPSD matrix: a :class:`sketchlab.RBFKernel` (or another oracle), or a
        square symmetric array.
    c : int
        Number of landmark columns, ``1 <= c <= n`` (may be None when
        ``columns`` is given).
    columns : array_like of int, optional
        The landmark columns (distinct, in [0, n)); by default ``c`` are
        drawn uniformly without replacement.
    {landmarks}
    rng : None, int or numpy.random.Generator
        Seed of the landmark draw.
    {estimate}

    Returns
    -------
    SPSDApproximation
        ``U = W^+`` with ``W = K[columns, columns]``; ``n_evaluated = n c``.

    Raises
    ------
    ValueError
        If c is not in [1, n], columns are invalid, or K is not square and
        symmetric (as an array) or holds NaN/Inf.
    TypeError
        If K is neither an oracle nor a dense array.

    Notes
    -----
    Cost: ``n c`` kernel evaluations and O(c^3).  W is the block of C at the
    landmark rows, so no entry beyond C is needed.  Nystrom cannot reach a
    (1 + eps) bound relative to ``||K - K_k||_F`` unless
    ``c = Omega(sqrt(n k / eps))`` (Wang & Zhang 2013; the paper's Section 4).

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> X = np.random.default_rng(0).standard_normal((300, 3))
    >>> K = sketchlab.RBFKernel(X, gamma=0.5)
    >>> approx = sketchlab.nystrom(K, 30, rng=0)
    >>> approx.C.shape, approx.U.shape, approx.n_evaluated
    ((300, 30), (30, 30), 9000)
    """
    run = _Run(K, c, columns, landmarks, rng)
    U = nystrom_core(run.C64[run.cols])  # W^+ of the landmark block K[cols, cols], part of C
    return run.result(U, "nystrom", estimate_error=estimate_error, n_probes=n_probes)


FAST_SPSD_SAMPLING = ("uniform", "leverage")


def fast_spsd(K: KernelLike, c: int | None, s: int, *, columns: ArrayLike | None = None,
              landmarks: str = "uniform", rng: None | int | np.random.Generator = None,
              sampling: str = "uniform", replace: bool = False, include_columns: bool = False,
              scaled: bool = True, estimate_error: bool = False,
              n_probes: int | None = None) -> SPSDApproximation:
    """Fast SPSD approximation (Wang, Luo & Zhang 2016; the paper's eq. (4.1)).

    ``U = (S C)^+ (S K S^T) (C^T S^T)^+`` with ONE row-sampling sketch S
    (``s x n``) on both sides, so U is SPSD by construction.

    Parameters
    ----------
    K : kernel oracle or ndarray of shape (n, n)
    c : int
        Number of landmark columns, ``1 <= c <= n`` (None with ``columns``).
    s : int
        Rows of S, ``c <= s <= n``.
    columns : array_like of int, optional
        Landmark columns (default: ``c`` uniform without replacement).
    {landmarks}
    rng : None, int or numpy.random.Generator
        Seed of the landmarks and of S.
    sampling : {"uniform", "leverage"}, default "uniform"
        Distribution of the rows of S: uniform, or the row leverage scores
        of C.
    replace : bool, default False
        Draw the rows i.i.d. (True) or as a sample without replacement.
    include_columns : bool, default False
        Force the ``c`` landmark rows into S (then ``s - c`` rows are drawn,
        without replacement among the other rows, or i.i.d. over all rows
        with ``replace=True``).  With ``s = c`` this is exactly Nystrom.
    scaled : bool, default True
        Row ``i`` of S is ``e_i^T / sqrt(s p_i)`` (``p`` the sampling
        probabilities, also for forced rows); unscaled rows are ``e_i^T``.
        Irrelevant for uniform sampling (a constant scale cancels).
    {estimate}

    Returns
    -------
    SPSDApproximation
        ``n_evaluated = n c + s^2``; ``samples`` holds S.

    Raises
    ------
    ValueError
        For c outside [1, n], s outside [c, n], an unknown ``sampling``,
        invalid columns, a K that is not square and symmetric, or fewer than
        ``s`` rows with nonzero probability for leverage sampling without
        replacement.

    Notes
    -----
    The default (uniform rows without replacement, landmarks not forced)
    is the variant closest to the paper's Table 7 (c = 30, s = 8c..16c,
    mean of 10 seeds: within 4-12% on average of the table on dna, madelon
    and splice, 19% on mushrooms, where no variant matches).  Like the
    table, its errors stay above Nystrom's up to ``s = 16 c``; leverage-score
    sampling with replacement, or forcing the landmarks into S, gives errors
    near the optimal core's instead, far below the table.  Cost:
    ``n c + s^2`` kernel evaluations, O(n c^2) for leverage scores, O(s c^2)
    for the pseudo-inverse.  A (1 + eps) bound needs
    ``s = O(c sqrt(n / eps))``, i.e. O(n c^2 / eps) entries (the paper's
    Section 4.2).

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> X = np.random.default_rng(0).standard_normal((300, 3))
    >>> K = sketchlab.RBFKernel(X, gamma=0.5)
    >>> approx = sketchlab.fast_spsd(K, 20, 100, rng=0)
    >>> approx.n_evaluated == 300 * 20 + 100 ** 2
    True
    """
    sampling = check_choice(sampling, "sampling", FAST_SPSD_SAMPLING)
    run = _Run(K, c, columns, landmarks, rng, s)
    gen, cols, C64, s = run.gen, run.cols, run.C64, run.s
    n, c = C64.shape
    scores = None
    if sampling == "leverage":
        scores = _row_leverage(C64)
    idx, w = _draw_rows(n, s, cols if include_columns else None, scores, bool(replace), gen)
    if not scaled:
        w = np.ones_like(w)
    M = _sampled_block(run.K, idx, w, idx, w)  # S K S^T
    SC = w[:, None] * C64[idx]  # S C
    U = solve_sketched(SC, M, SC.T, structure="symmetric")  # (S C)^+ S K S^T (C^T S^T)^+
    return run.result(U, "fast", estimate_error=estimate_error, n_probes=n_probes,
                      samples=((idx, w),))


def _draw_rows(n, s, forced, scores, replace, gen):
    """Row sample of a fast-SPSD sketch: (indices, weights 1/sqrt(s p_i)),
    p uniform (scores None) or proportional to the scores."""
    m = s if forced is None else s - forced.size
    pool = None if forced is None or replace else np.setdiff1d(np.arange(n), forced)
    if m == 0:
        drawn = np.empty(0, dtype=np.int64)
    elif scores is None:
        if pool is None:
            drawn = UniformSampler(m, n, replace=replace, rng=gen).indices
        else:
            drawn = pool[UniformSampler(m, pool.size, replace=False, rng=gen).indices]
    elif replace:
        drawn = LeverageScoreSampler(m, n, scores=scores, rng=gen).indices
    else:
        pool = np.arange(n) if pool is None else pool
        q = scores[pool]
        if np.count_nonzero(q) < m:
            raise ValueError(
                f"leverage sampling without replacement needs at least {m} rows with a "
                f"nonzero leverage score, got {np.count_nonzero(q)}; use replace=True"
            )
        drawn = np.sort(gen.choice(pool, size=m, replace=False, p=q / q.sum()))
    idx = drawn.astype(np.int64) if forced is None else np.concatenate([forced, drawn])
    if scores is None:
        return idx, np.full(s, np.sqrt(n / s))
    p = (scores / scores.sum())[idx]
    # a forced landmark row may have zero leverage: give it the smallest weight in use
    p = np.where(p > 0, p, p.max() if p.max() > 0 else 1.0 / n)
    return idx, 1.0 / np.sqrt(s * p)


def faster_spsd(K: KernelLike, c: int | None, s: int | None = None, *,
                columns: ArrayLike | None = None,
                landmarks: str = "uniform", rng: None | int | np.random.Generator = None,
                estimate_error: bool = False, n_probes: int | None = None) -> SPSDApproximation:
    """Faster SPSD approximation (the paper's Algorithm 2).

    ``U = pi_+((S1 C)^+ (S1 K S2^T) (C^T S2^T)^+)`` with two INDEPENDENT
    leverage-score samplers S1, S2 (``s x n``) on the row leverage scores of
    C, and ``pi_+`` the projection onto the PSD cone.

    Parameters
    ----------
    K : kernel oracle or ndarray of shape (n, n)
    c : int
        Number of landmark columns, ``1 <= c <= n`` (None with ``columns``).
    s : int, optional
        Rows of S1 and S2, ``c <= s <= n``.  Default ``10 c`` capped at n:
        the paper's a = s / c = 10 (as :func:`~sketchlab.fast_gmr`'s
        default), where its SPSD experiments find the faster SPSD almost as
        good as the optimal core.
    columns : array_like of int, optional
        Landmark columns (default: ``c`` uniform without replacement).
    {landmarks}
    rng : None, int or numpy.random.Generator
        Seed of the landmarks, S1 and S2.
    {estimate}

    Returns
    -------
    SPSDApproximation
        ``n_evaluated = n c + s^2`` exactly; ``samples`` holds S1 and S2.

    Raises
    ------
    ValueError
        For c outside [1, n], s outside [c, n], invalid columns, or a K that
        is not square and symmetric.

    Notes
    -----
    ``S1 K S2^T`` is the ``s x s`` block ``K[S1.indices, S2.indices]`` times
    the sampling weights: the method evaluates ``n c`` entries for C and
    ``s^2`` for the core, nothing else (the PSD projection needs none).
    Cost beyond the evaluations: O(n c^2) for the leverage scores, O(s^2 c)
    for the core.  Theorem 3: with ``s = O(max(c / sqrt(eps),
    c / (eps rho^2)) + c log c)``, ``||K - C U C^T||_F <= (1 + eps)
    min_X ||K - C X C^T||_F`` with probability 0.95.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> X = np.random.default_rng(0).standard_normal((300, 3))
    >>> K = sketchlab.RBFKernel(X, gamma=0.5)
    >>> approx = sketchlab.faster_spsd(K, 20, 100, rng=0)
    >>> approx.n_evaluated == 300 * 20 + 100 ** 2
    True
    >>> bool(np.linalg.eigvalsh(approx.U).min() >= -1e-10)
    True
    """
    run = _Run(K, c, columns, landmarks, rng, s)
    n, c = run.C64.shape
    if run.s is None:
        run.s = min(n, 10 * c)  # the paper's a = 10
    scores = _row_leverage(run.C64)
    S1 = LeverageScoreSampler(run.s, n, scores=scores, rng=run.gen)
    S2 = LeverageScoreSampler(run.s, n, scores=scores, rng=run.gen)
    i1, w1, i2, w2 = S1.indices, S1.weights, S2.indices, S2.weights
    # Fast GMR (Algorithm 1) on K with R = C^T, projected onto the PSD cone
    # (Theorem 2): only the sampled block S1 K S2^T of K is evaluated
    M = _sampled_block(run.K, i1, w1, i2, w2)  # S1 K S2^T
    U = solve_sketched(S1.apply(run.C64), M, S2.apply(run.C64).T, structure="psd")
    return run.result(U, "faster", estimate_error=estimate_error, n_probes=n_probes,
                      samples=((i1, w1), (i2, w2)))


def optimal_spsd(K: KernelLike, c: int | None, *, columns: ArrayLike | None = None,
                 landmarks: str = "uniform", rng: None | int | np.random.Generator = None,
                 block_rows: int | None = None, estimate_error: bool = False,
                 n_probes: int | None = None) -> SPSDApproximation:
    """The optimal core ``U = C^+ K (C^+)^T = argmin_X ||K - C X C^T||_F``.

    Parameters
    ----------
    K : kernel oracle or ndarray of shape (n, n)
    c : int
        Number of landmark columns, ``1 <= c <= n`` (None with ``columns``).
    columns : array_like of int, optional
        Landmark columns (default: ``c`` uniform without replacement).
    {landmarks}
    rng : None, int or numpy.random.Generator
        Seed of the landmarks.
    block_rows : int, optional
        Rows of K evaluated at a time (default: about 4M entries), so that K
        is never held whole.
    {estimate}

    Returns
    -------
    SPSDApproximation
        ``n_evaluated = n c + n^2``.

    Raises
    ------
    ValueError
        For c outside [1, n], invalid columns, or a K that is not square and
        symmetric.

    Notes
    -----
    The exact GMR problem ``min_X ||K - C X C^T||_F`` (R = C^T): with the
    thin QR ``C = Q T``, ``U = T^+ (Q^T K Q) (T^T)^+`` (singular values of T,
    which are those of C, below ``max(n, c) eps sigma_1`` count as zero);
    ``K Q`` is accumulated over row blocks of K.  Cost ``n^2`` evaluations
    and O(n^2 c) flops.  This is the baseline of Theorems 2 and 3.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> X = np.random.default_rng(0).standard_normal((300, 3))
    >>> K = sketchlab.RBFKernel(X, gamma=0.5)
    >>> approx = sketchlab.optimal_spsd(K, 20, rng=0)
    >>> approx.n_evaluated == 300 * 20 + 300 ** 2
    True
    """
    if block_rows is not None:
        block_rows = check_int(block_rows, "block_rows", 1)
    run = _Run(K, c, columns, landmarks, rng)
    C64 = run.C64
    # exact GMR with R = C^T: C = Q T, U = T^+ (Q^T K Q) (T^T)^+, K Q
    # accumulated over row blocks of K
    Q, T = qr(C64)
    KQ = np.empty_like(Q)
    for i0, block in run.K.row_blocks(block_rows):
        KQ[i0:i0 + block.shape[0]] = block @ Q
    B = symmetrize(product(Q.T, KQ))
    U = symmetrize(exact_core(T, T, B, C64.shape, C64.shape))
    return run.result(U, "optimal", estimate_error=estimate_error, n_probes=n_probes)


# ---------------------------------------------------------------------------
# spectrum
# ---------------------------------------------------------------------------


def eta(K: KernelLike, k: int, *, rng: None | int | np.random.Generator = None, tol: float = 1e-10,
        max_iter: int = 100, block_rows: int | None = None) -> float:
    """Share of ``||K||_F^2`` in the top k eigenvalues: ``||K_k||_F^2 / ||K||_F^2``.

    The paper chooses the RBF scale so that this ``eta`` (with k = 15) is
    above 0.6 (its Table 6).

    Parameters
    ----------
    K : kernel oracle or ndarray of shape (n, n)
        Symmetric.
    k : int
        ``1 <= k <= n``.
    rng : None, int or numpy.random.Generator
        Seed of the starting block (the result does not depend on it beyond
        ``tol``).
    tol : float, default 1e-10
        Stop when ``sum_i theta_i^2`` over the top-k Ritz values changes by
        at most ``tol`` relative between two passes.
    max_iter : int, default 100
        Passes over K at most.
    block_rows : int, optional
        Rows of K evaluated at a time.

    Returns
    -------
    float
        In [0, 1]; 0 for an all-zero K.

    Raises
    ------
    ValueError
        If k is not in [1, n], tol <= 0, max_iter < 1, or K is not square
        and symmetric.

    Notes
    -----
    Block Lanczos with full reorthogonalization: blocks of ``b = k + 10``
    vectors, one pass over row blocks of K per block (``n^2`` evaluations
    and O(n^2 b) flops each), Rayleigh-Ritz on the whole Krylov basis, so K
    is never held whole.  About 10-15 passes reach ``tol = 1e-10`` on the
    paper's RBF kernels.  The eigenvalues of largest magnitude are found,
    which for an SPSD K are the largest.

    Examples
    --------
    >>> import numpy as np
    >>> from sketchlab import eta
    >>> K = np.diag([3.0, 2.0, 1.0, 0.0])
    >>> round(eta(K, 2, rng=0), 6)
    0.928571
    """
    K = as_kernel(K)
    n = K.shape[0]
    k = check_int(k, "k", 1, n)
    max_iter = check_int(max_iter, "max_iter", 1)
    tol = check_positive(tol, "tol")
    gen = as_generator(rng)
    Qj = orthonormal(gen.standard_normal((n, min(n, k + 10))))
    Qs, Zs = [], []
    # ||K||_F^2 = 2**(2 e) total, and the Ritz values are scaled by 2**-e
    # before they are squared: neither under- nor overflows at any scale of K
    total = None
    e = 0
    prev = None
    for _ in range(max_iter):
        Zj = np.empty_like(Qj)  # K Qj, one pass over K
        parts = []
        for i0, block in K.row_blocks(block_rows):
            block = np.asarray(block, dtype=np.float64)
            Zj[i0:i0 + block.shape[0]] = block @ Qj
            if total is None:
                parts.append(frobenius_parts(block))
        if total is None:
            e = max((pe for pe, ssq in parts if ssq > 0), default=0)
            total = math.fsum(math.ldexp(ssq, 2 * (pe - e)) for pe, ssq in parts)
            if total == 0.0:
                return 0.0
        Qs.append(Qj)
        Zs.append(Zj)
        Q = np.hstack(Qs)
        # Rayleigh-Ritz on the Krylov basis: K Q is known block by block
        theta = _eigvalsh(symmetrize(product(Q.T, np.hstack(Zs))))
        theta = theta[np.argsort(-np.abs(theta))][:k]
        share = float(np.sum(np.ldexp(theta, -e)**2))
        if prev is not None and abs(share - prev) <= tol * share:
            break
        prev = share
        # next block: the part of K Qj outside span(Q), orthogonalized twice
        R = Zj - product(Q, product(Q.T, Zj))
        R -= product(Q, product(Q.T, R))
        W, sv, _ = _svd(R)
        keep = sv > 1e-10 * max(sv[0] if sv.size else 0.0, np.abs(theta[0]))
        if not keep.any() or Q.shape[1] >= n:
            break  # the Krylov space is invariant: the Ritz values are exact
        Qj = W[:, keep][:, :n - Q.shape[1]]
    # total is set by the first pass, and max_iter >= 1
    return float(min(1.0, share / total))  # type: ignore[operator]


for _f in (nystrom, fast_spsd, faster_spsd, optimal_spsd):
    if _f.__doc__:  # None under python -OO
        _f.__doc__ = (_f.__doc__.replace("{estimate}", _ESTIMATE_DOC)
                      .replace("{landmarks}", _LANDMARKS_DOC))
del _f
