"""Single-pass SVD from sketches: Fast SP-SVD (Algorithm 3) and its two peers.

All three methods read A exactly once, as a matrix or as an iterable of column
blocks (``axis=1``, as in the paper) or row blocks (``axis=0``), and keep only
linear sketches of it in a :class:`~sketchlab.SketchState` (paper notation ->
name in the state):

- range sketch     C = A Omega~        (m x c)      ``"range"``
- co-range sketch  R = Psi~ A          (r x n)      ``"co-range"``
- core sketch      M = S_C A S_R^T     (s_c x s_r)  ``"core"``

then recover a low-rank SVD from them (:func:`svd_recover`):

- :func:`fast_sp_svd` (Algorithm 3): U_C = qr(C), V_R = qr(R^T),
  N = (S_C U_C)^+ M (V_R^T S_R^T)^+, svd(N).
- :func:`practical_sp_svd` (the paper's appendix algorithm; Tropp, Yurtsever,
  Udell & Cevher 2017): N = (Psi~ U_C)^+ R V_R, no core sketch.
- :func:`three_sketch_svd` (Tropp, Yurtsever, Udell & Cevher 2019): the same
  core formula as Algorithm 3, with their sketch sizes and kinds.

The in-memory functions, block streams, ``SinglePassSVD.partial_fit`` and
``sketchlab.dask`` share the two entry points :func:`svd_sketches` (sizes and
operators of a method) and :func:`svd_recover` (the SVD from a filled state).
"""

from __future__ import annotations

import collections.abc
import math
import warnings
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from ._errors import check_probes, from_probe_sketch, probe_left, probe_operator, rank_for_tol
from ._linalg import sketch_basis as _qr
from ._linalg import product, solve_core, svd
from ._operators import UniformSampler
from ._registry import SVD_SKETCHES, make_sketch
from ._results import SVDResult
from ._sketch_state import SketchState
from ._validation import (
    Checked,
    as_generator,
    as_matrix,
    check_axis,
    check_choice,
    check_int,
    check_shape,
    check_sketchable,
    check_tol,
    result_dtype,
)

if TYPE_CHECKING:
    from ._validation import MatrixLike


__all__ = [
    "fast_sp_svd",
    "practical_sp_svd",
    "three_sketch_svd",
    "practical_sp_svd_sizes",
    "three_sketch_svd_sizes",
    "svd_sketches",
    "svd_recover",
    "METHODS",
]

METHODS = ("fast", "practical", "three")
"""Method names of :func:`svd_sketches` and :func:`svd_recover`."""


# ---------------------------------------------------------------------------
# The sketches of a method
# ---------------------------------------------------------------------------


def _operator(kind, size, dim, gen):
    """The operator of ``kind`` with shape (size, dim), seeded from ``gen``.

    A sketch as large as its dimension compresses nothing: it is the identity
    (a sampler keeping every row), which is exact, where a square random
    sketch may be singular (a square OSNAP leaves rows empty) and lose part
    of A."""
    if size == dim:
        return UniformSampler(dim, dim, replace=False, rng=gen)
    return make_sketch(kind, size, dim, rng=gen)


def _check_kinds(range_sketch, core_sketch=None):
    check_choice(range_sketch, "range_sketch", SVD_SKETCHES)
    if core_sketch is not None:
        check_choice(core_sketch, "core_sketch", SVD_SKETCHES)


def svd_sketches(method, shape, k, *, c=None, r=None, s_c=None, s_r=None,
                 range_sketch="gaussian", core_sketch=None, rank=None, rng=None,
                 estimate_error=False, n_probes=None):
    """Sizes and operators of a single-pass SVD: ``(k, rank, sketches)``.

    ``sketches`` maps ``"range"``, ``"co-range"`` (and ``"core"`` for "fast"
    and "three") to the ``(left, right)`` operators of a
    :class:`~sketchlab.SketchState` for A of ``shape``; the operators are
    drawn from ``as_generator(rng)`` in the order Omega, Psi, S_C, S_R, and
    with ``estimate_error`` the test sketch ``"test"``, ``Phi A Theta^T``:
    Theta of ``n_probes`` rows, a CountSketch whose Gaussian probes are
    formed at recovery (see :func:`~sketchlab._errors.from_probe_sketch`),
    and Phi a CountSketch of ``16 n_probes`` rows
    (:func:`~sketchlab._errors.probe_left`; None for A of no more rows,
    whose ``A Theta^T`` is as small).  Drawn last, so the answer is the same
    with or without it.  ``rank`` is the number of components returned
    (default k).
    """
    method = check_choice(method, "method", METHODS)
    _check_kinds(range_sketch, core_sketch if method != "practical" else None)
    shape = check_sketchable(check_shape(shape))
    k = check_int(k, "k", 1, min(shape))
    if method == "practical":
        c, r = _practical_sizes(k, shape, c, r)
    else:
        sizes = _fast_sizes if method == "fast" else _three_sizes
        c, r, s_c, s_r = sizes(k, shape, c, r, s_c, s_r)
    rank = k if rank is None else check_int(rank, "rank", 1, min(c, r))
    q = check_probes(n_probes)
    m, n = shape
    gen = as_generator(rng)
    sketches = {
        "range": (None, _operator(range_sketch, c, n, gen)),
        "co-range": (_operator(range_sketch, r, m, gen), None),
    }
    if method != "practical":
        S_C = _operator(core_sketch, s_c, m, gen)
        sketches["core"] = (S_C, _operator(core_sketch, s_r, n, gen))
    if estimate_error:
        theta = probe_operator(q, n, gen)
        sketches["test"] = (probe_left(q, m, gen), theta)
    return k, rank, sketches


# ---------------------------------------------------------------------------
# Recovery from the sketches
# ---------------------------------------------------------------------------



def svd_recover(method, state, rank, *, overwrite=False, tol=None):
    """The :class:`~sketchlab.SVDResult` of ``method`` from a filled
    :class:`~sketchlab.SketchState` (``passes=1``).

    Its ``error_estimate`` is the :class:`~sketchlab.ErrorEstimate` of
    ``||A - U diag(s) Vt||_F`` when the state holds a ``"test"`` sketch,
    else None.  ``tol``
    (needs the test sketch) returns the smallest rank whose estimated
    relative error is at most tol, or (with a warning) the rank with the
    smallest estimated error.
    ``overwrite=True`` lets the QRs and the final products reuse the memory
    of the range and co-range sketches (the state is spent); otherwise it
    stays usable (an estimator recovers after every batch).
    """
    sketches = state.finalize()
    C, R = sketches["range"], sketches["co-range"]
    eps = np.finfo(state.dtype).eps
    norm = state.norm
    test = "test" in sketches
    # The thin QRs, small solves and products run on one BLAS thread (the
    # policy of _linalg's entry points): next to the Numba loops, spinning
    # OpenBLAS threads made them several times slower (QR of a 52396 x 20 C:
    # 0.07 s with one thread, 0.5 s with two).
    U_C, _ = _qr(C, overwrite, norm)  # (m, q_c); Q of a copy of C unless overwrite
    if method == "practical":
        psi = state.operators("co-range")[0]
        V_R, T_R = _qr(R.T, overwrite, norm)  # R^T = V_R T_R, so R V_R = T_R^T
        PU = U_C.rows(psi)  # Psi~ U_C, (r, q_c)
        N = solve_core(PU, T_R.T, eps=eps)  # (Psi~ U_C)^+ R V_R
    else:
        V_R, _ = _qr(R.T, overwrite, norm)  # (n, q_r)
        S_C, S_R = state.operators("core")
        SU = U_C.rows(S_C)  # S_C U_C, (s_c, q_c)
        SV = V_R.rows(S_R)  # S_R V_R = (V_R^T S_R^T)^T, (s_r, q_r)
        # N = (S_C U_C)^+ M (V_R^T S_R^T)^+: Fast GMR on the bases (eq. (5.3))
        N = solve_core(SU, sketches["core"], SV.T, eps=eps)
    U_N, s, Vt_N = svd(N)
    if test:
        phi, theta = state.operators("test")
        Z = np.asarray(sketches["test"], dtype=np.float64)  # Phi A Theta^T, (p, q)
        TV_R = V_R.rows(theta)  # Theta V_R, before V_R is overwritten by the lift
        # Phi U_C (U_C itself without Phi: A has at most 16 q rows), before the lift
        LU_C = (U_C.times(np.asarray(U_C.Q1, dtype=np.float64)) if phi is None
                else U_C.rows(phi))
        LU = product(LU_C, U_N)  # Phi U, (p, min(c, r))
    if tol is not None:
        found, best = rank_for_tol(tol, s, Z, LU, product(TV_R, Vt_N.T), norm, theta)
        if found is None:
            warnings.warn(
                f"no rank up to the sketch rank {s.shape[0]} reaches the estimated relative "
                f"error tol={tol}; returning rank {best}, the one with the smallest estimated "
                "error (larger sketches, c and r, can go further)",
                stacklevel=3,
            )
            found = best
        rank = found
    t = min(rank, s.shape[0])
    U = U_C.lift(U_N[:, :t])
    Vt = V_R.lift(Vt_N[:t].T).T
    estimate = None
    if test:
        # Phi (A - U S Vt) Theta^T = Z - (Phi U) (Theta V S)^T: small products
        Y = product(TV_R, Vt_N[:t].T) * s[:t]  # Theta V S, (q, t)
        estimate = from_probe_sketch(Z - product(LU[:, :t], Y.T), theta, norm=norm,
                                     left_size=None if phi is None else phi.sketch_size)
        from ._errors import warn_if_inaccurate  # names krylov_svd when ~ ||A||_F off

        warn_if_inaccurate(estimate, stacklevel=4)
    dtype = state.dtype
    return SVDResult(U.astype(dtype, copy=False), s[:t].astype(dtype),
                     Vt.astype(dtype, copy=False), error_estimate=estimate, passes=1)


# ---------------------------------------------------------------------------
# Input: a matrix or an iterable of blocks
# ---------------------------------------------------------------------------


def _is_matrix(A):
    return sp.issparse(A) or isinstance(A, np.ndarray)


class BlockSource:
    """Validated blocks ``(X, (i0, j0))`` of A, read once, one at a time.

    ``A`` is a matrix (read in blocks of ``block_size`` along ``axis``) or an
    iterable of blocks along ``axis`` that must add up to ``shape``.
    """

    def __init__(self, A, axis, block_size, shape):
        self.axis = check_axis(axis)
        if shape is None:
            if isinstance(A, collections.abc.Iterator) or (
                isinstance(A, (list, tuple)) and A and _is_matrix(A[0]) and A[0].ndim == 2
            ):
                raise ValueError("shape=(m, n) is required when A is an iterable of blocks")
            A = as_matrix(A, "A")
            self.shape = A.shape
        else:
            self.shape = check_shape(shape)
            if _is_matrix(A):
                if A.shape != self.shape:
                    raise ValueError(f"shape={tuple(shape)!r} does not match A.shape={A.shape}")
                A = as_matrix(A, "A")
        if _is_matrix(A):
            self._matrix = A
            self._iterable = None
            if block_size is not None:
                block_size = check_int(block_size, "block_size", 1)
            self.block_size = block_size
        else:
            if block_size is not None:
                raise ValueError(
                    "block_size applies to a matrix A; an iterable brings its own blocks, "
                    f"got block_size={block_size!r}"
                )
            try:
                self._iterable = iter(A)
            except TypeError:
                raise TypeError(
                    "A must be an array, a scipy.sparse matrix or an iterable of blocks, "
                    f"got {type(A).__name__}"
                ) from None
            self._matrix = None
        if min(self.shape) < 1:
            raise ValueError(f"A must have at least one row and one column, got shape {self.shape}")

    def __iter__(self):
        if self._matrix is not None:
            yield from self._matrix_blocks()
        else:
            yield from self._stream_blocks()

    def _matrix_blocks(self):
        A = self._matrix
        dim = self.shape[self.axis]
        if self.block_size is None or self.block_size >= dim:
            yield A, (0, 0)
            return
        if sp.issparse(A):  # slice along the cheap axis
            want = "csc" if self.axis == 1 else "csr"
            if A.format != want:
                A = A.asformat(want)
        for p0 in range(0, dim, self.block_size):
            p1 = min(dim, p0 + self.block_size)
            if self.axis == 1:
                X, offsets = A[:, p0:p1], (0, p0)
            else:
                X, offsets = A[p0:p1], (p0, 0)
            if not sp.issparse(X) and not (X.flags.c_contiguous or X.flags.f_contiguous):
                X = np.ascontiguousarray(X)
            yield X, offsets
            del X

    def _stream_blocks(self):
        axis = self.axis
        full = self.shape[1 - axis]
        dim = self.shape[axis]
        pos = 0
        count = 0
        for raw in self._iterable:
            X = as_matrix(raw, f"block {count}")
            del raw
            if X.shape[1 - axis] != full:
                which = "rows" if axis == 1 else "columns"
                raise ValueError(
                    f"block {count} has {X.shape[1 - axis]} {which}, expected shape[{1 - axis}] = "
                    f"{full} for {'column' if axis == 1 else 'row'} blocks (axis={axis})"
                )
            width = X.shape[axis]
            if pos + width > dim:
                raise ValueError(
                    f"the blocks hold more than shape[{axis}] = {dim} "
                    f"{'columns' if axis == 1 else 'rows'} (block {count} ends at {pos + width})"
                )
            count += 1
            if width:
                yield X, ((0, pos) if axis == 1 else (pos, 0))
            del X
            pos += width
        if count == 0:
            raise ValueError("A is an empty iterable: no block was read")
        if pos != dim:
            raise ValueError(
                f"the blocks hold {pos} {'columns' if axis == 1 else 'rows'} in total, "
                f"but shape[{axis}] = {dim}"
            )


def run_pass(source, sketches):
    """One pass over the blocks of ``source`` into a new
    :class:`~sketchlab.SketchState` of ``sketches``; the state takes the
    dtype of the first block (float32 blocks keep float32 sketches)."""
    state = None
    for X, offsets in source:
        if state is None:
            state = SketchState(source.shape, sketches, dtype=result_dtype(X.dtype))
        state.update(Checked(X), offsets)  # validated by the source
        del X
    return state


# ---------------------------------------------------------------------------
# Sizes
# ---------------------------------------------------------------------------


def _size(value, name, low, high, default):
    if value is None:
        return default
    return check_int(value, name, low, high)


def _check_range_sizes(k, c, r):
    if k > min(c, r):
        raise ValueError(f"k must be <= the sketch sizes c = {c} and r = {r}, got k = {k}")


def _check_core_sizes(c, r, s_c, s_r, shape):
    m, n = shape
    if not c <= s_c <= m:
        raise ValueError(
            f"s_c must be an int in [c, m] = [{c}, {m}] (S_C U_C needs full column rank), "
            f"got {s_c}"
        )
    if not r <= s_r <= n:
        raise ValueError(
            f"s_r must be an int in [r, n] = [{r}, {n}] (S_R V_R needs full column rank), "
            f"got {s_r}"
        )


def _fast_sizes(k, shape, c, r, s_c, s_r):
    m, n = shape
    dim = min(m, n)
    c = _size(c, "c", 1, dim, min(2 * k, dim))
    r = _size(r, "r", 1, dim, min(2 * k, dim))
    _check_range_sizes(k, c, r)
    x = (c + r) / k
    s_c = _size(s_c, "s_c", 1, None, max(c, min(m, math.ceil(3 * c * math.sqrt(x)))))
    s_r = _size(s_r, "s_r", 1, None, max(r, min(n, math.ceil(3 * r * math.sqrt(x)))))
    _check_core_sizes(c, r, s_c, s_r, shape)
    return c, r, s_c, s_r


def _three_sizes(k, shape, c, r, s_c, s_r):
    m, n = shape
    dim = min(m, n)
    c = _size(c, "c", 1, dim, min(4 * k + 1, dim))
    r = _size(r, "r", 1, dim, min(4 * k + 1, dim))
    _check_range_sizes(k, c, r)
    s_c = _size(s_c, "s_c", 1, None, max(c, min(2 * c + 1, m)))
    s_r = _size(s_r, "s_r", 1, None, max(r, min(2 * r + 1, n)))
    _check_core_sizes(c, r, s_c, s_r, shape)
    return c, r, s_c, s_r


def _practical_sizes(k, shape, c, r):
    m, n = shape
    dim = min(m, n)
    c = _size(c, "c", 1, dim, min(2 * k + 1, dim))
    r = _size(r, "r", 1, m, max(c, min(2 * c + 1, m)))
    _check_range_sizes(k, c, r)
    if r < c:
        raise ValueError(
            f"practical_sp_svd needs r >= c (Psi~ U_C must have full column rank), got c = {c}, "
            f"r = {r}"
        )
    return c, r


def practical_sp_svd_sizes(total: int, k: int) -> tuple[int, int]:
    """Split of a budget ``c + r = total`` for :func:`practical_sp_svd`.

    Tropp, Yurtsever, Udell & Cevher (2017) recommend a co-range sketch about
    twice the range sketch, r ~ 2c + 1, for a fixed budget; here
    ``c = floor((total - 1) / 3)`` and ``r = total - c``, with c raised to at
    least k and lowered to at most ``total // 2`` so that the algorithm can
    use it (k <= c <= r).

    Parameters
    ----------
    total : int
        ``c + r``, at least ``2 k``.
    k : int
        Target rank.

    Returns
    -------
    (c, r) : tuple of int

    Raises
    ------
    ValueError
        When ``total < 2 k``.

    Examples
    --------
    >>> from sketchlab import practical_sp_svd_sizes
    >>> practical_sp_svd_sizes(40, 10)
    (13, 27)
    >>> practical_sp_svd_sizes(20, 10)
    (10, 10)
    """
    k = check_int(k, "k", 1)
    total = check_int(total, "total", 2 * k)
    c = min(max(k, (total - 1) // 3), total // 2)
    return c, total - c


def three_sketch_svd_sizes(storage: int, shape: tuple[int, int],
                           k: int) -> tuple[int, int, int, int]:
    """Sizes for :func:`three_sketch_svd` within a storage budget.

    Tropp, Yurtsever, Udell & Cevher (2019, eqs. 5.5-5.6) spend a budget of
    ``T = k'(m + n) + s^2`` numbers on range and co-range sketches of size k'
    and an s x s core sketch with ``s = 2k' + 1`` (real field):
    ``k' = floor((sqrt((m+n+4)^2 + 16(T-1)) - (m+n+4)) / 8)``, then
    ``s = floor(sqrt(T - k'(m + n)))``, capped at min(m, n).

    Parameters
    ----------
    storage : int
        T, numbers of the three sketches together (e.g. the
        ``m c + n r + s_c s_r`` of a Fast SP-SVD to compare with).
    shape : (int, int)
        (m, n).
    k : int
        Target rank; the budget must allow ``k' >= k``.

    Returns
    -------
    (c, r, s_c, s_r) : tuple of int
        ``c = r = k'`` and ``s_c = s_r = s``.

    Raises
    ------
    ValueError
        When the budget gives ``k' < k``.

    Examples
    --------
    >>> from sketchlab import three_sketch_svd_sizes
    >>> three_sketch_svd_sizes(10 * 2500 + 42 * 42, (2000, 500), 10)
    (10, 10, 42, 42)
    """
    m, n = check_shape(shape)
    k = check_int(k, "k", 1, min(m, n))
    storage = check_int(storage, "storage", 1)
    a = m + n + 4
    kk = int((math.isqrt(a * a + 16 * (storage - 1)) - a) // 8)
    if kk < k:
        raise ValueError(
            f"storage = {storage} allows range sketches of size {kk} only, below k = {k}"
        )
    s = min(min(m, n), math.isqrt(storage - kk * (m + n)))
    kk = min(kk, s)
    return kk, kk, s, s


# ---------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------

_INPUT_DOC = """A : array_like, scipy.sparse matrix, or iterable of blocks
        The matrix (m x n), dense or CSR/CSC, or an iterable of its column
        blocks (``axis=1``: each of shape (m, w), in order) or row blocks
        (``axis=0``: each (h, n)), dense or sparse, with ``shape=(m, n)``.
        A is read exactly once and at most one block is held at a time; a
        matrix is itself read in blocks of ``block_size``."""


def _single_pass(method, A, k, *, axis, block_size, shape, **params):
    """One pass over the blocks of an in-memory A or a stream of blocks."""
    source = BlockSource(A, axis, block_size, shape)
    return single_pass(method, source.shape, k, lambda sketches: run_pass(source, sketches),
                       **params)


def single_pass(method, shape, k, sketch_pass, *, estimate_error, tol, **params):
    """The plan of the single-pass SVD ``method`` of an A of ``shape``: its
    sketches (:func:`svd_sketches`), one pass over A by
    ``sketch_pass(sketches)`` (a filled :class:`~sketchlab.SketchState`: in
    memory, from a stream, or over the chunks of a dask array), its recovery
    (:func:`svd_recover`)."""
    tol = check_tol_or_rank(tol, params.get("rank"))
    _, rank, sketches = svd_sketches(method, shape, k, **params,
                                     estimate_error=bool(estimate_error) or tol is not None)
    return svd_recover(method, sketch_pass(sketches), rank, overwrite=True, tol=tol)


def check_tol_or_rank(tol, rank):
    """``tol`` of the single-pass SVDs, checked, and not together with rank."""
    tol = check_tol(tol)
    if tol is not None and rank is not None:
        raise ValueError(f"give rank= or tol=, not both (got rank={rank!r}, tol={tol!r})")
    return tol




def fast_sp_svd(A: MatrixLike | Iterable[MatrixLike], k: int, *, c: int | None = None,
                r: int | None = None, s_c: int | None = None, s_r: int | None = None,
                range_sketch: str = "osnap-gaussian", core_sketch: str = "osnap", axis: int = 1,
                block_size: int | None = None, rank: int | None = None,
                rng: None | int | np.random.Generator = None,
                shape: tuple[int, int] | None = None, estimate_error: bool = False,
                tol: float | None = None, n_probes: int | None = None
               ) -> SVDResult:
    """Fast single-pass SVD (Algorithm 3), reading A once.

    Sketches ``C = A Omega~`` (m x c), ``R = Psi~ A`` (r x n) and
    ``M = S_C A S_R^T`` (s_c x s_r) are accumulated block by block; then
    ``U_C = qr(C)``, ``V_R = qr(R^T)``, ``N = (S_C U_C)^+ M (V_R^T S_R^T)^+``
    (Fast GMR, Algorithm 1, on the bases) and ``N = U_N diag(s) V_N^T`` give
    ``U = U_C U_N``, ``Vt = (V_R V_N)^T``.

    Parameters
    ----------
    {input}
    k : int
        Target rank, ``1 <= k <= min(m, n)`` and ``k <= min(c, r)``.
    c, r : int, optional
        Range and co-range sketch sizes, ``k <= c, r <= min(m, n)``.  Default
        ``2k`` each (capped at min(m, n)), the paper's x = (c + r)/k = 4 point.
    s_c, s_r : int, optional
        Core sketch sizes, ``c <= s_c <= m``, ``r <= s_r <= n``.  A size equal
        to its dimension makes that sketch the identity (exact; a square
        random sketch could be singular).  Default the
        experiments' rule ``ceil(3 c sqrt(x))`` and ``ceil(3 r sqrt(x))``
        with ``x = (c + r)/k`` (capped at m and n, never below c and r).
    range_sketch : str, default "osnap-gaussian"
        Kind of Omega (c x n) and Psi (r x m): "osnap-gaussian"
        (Gaussian(c, c0) after OSNAP(c0, n), ``c0 = 4c`` capped at n; the
        paper's choice), "gaussian", "countsketch", "osnap" or "srht".
    core_sketch : str, default "osnap"
        Kind of S_C (s_c x m) and S_R (s_r x n), same names.
    axis : {{0, 1}}, default 1
        Column blocks (1, as in the paper) or row blocks (0).  The result does
        not depend on it (same operators), up to rounding.
    block_size : int, optional
        For a matrix A: columns (or rows) per block; default all at once.
    rank : int, optional
        Number of components returned, ``1 <= rank <= min(c, r)``; default
        k.  ``rank=min(c, r)`` returns the whole sketch rank (the paper's
        experiments compare methods at that rank).
    rng : None, int or numpy.random.Generator
        Seeds the four operators.
    shape : (int, int), optional
        ``(m, n)``; required when A is an iterable of blocks.
    estimate_error : bool, default False
        Attach an :class:`~sketchlab.ErrorEstimate` of
        ``||A - U diag(s) Vt||_F`` as ``error_estimate``, from a test sketch of ``n_probes``
        Gaussian probes gathered in the same pass (Tropp, Yurtsever, Udell &
        Cevher 2019, Section 6): no second pass over A.  The test sketch is
        ``Phi A Theta^T``, 16 n_probes x n_probes whatever the size of A
        (Theta a CountSketch whose probes are mixed afterwards, Phi a
        CountSketch of ``16 n_probes`` rows); the interval counts the
        variance of both.  The probes are drawn after the other sketches,
        so U, s, Vt do not change.
    tol : float in (0, 1), optional
        Fixed accuracy: return the smallest rank (up to the sketch rank
        ``min(c, r)``) whose estimated ``||A - U diag(s) Vt||_F / ||A||_F``
        is at most ``tol``; when none is, the rank with the smallest
        estimated error, with a warning.  Not with ``rank``.
    n_probes : int, optional
        Probes of the test sketch, default 10 (at least 2).

    Returns
    -------
    SVDResult
        Unpacks as ``U, s, Vt`` whatever the flags:

        U : ndarray of shape (m, q)
            Orthonormal columns.
        s : ndarray of shape (q,)
            Non-negative, non-increasing.
        Vt : ndarray of shape (q, n)
            Orthonormal rows.  ``q = rank`` (default k, or chosen by
            ``tol``).  float32 for float32 input, else float64.

        and carries ``error_estimate`` (an :class:`~sketchlab.ErrorEstimate`
        with ``estimate_error=True`` or ``tol``, else None) and ``passes``
        (1).

    Raises
    ------
    ValueError
        Bad sizes (k > min(c, r), s_c < c, s_r < r), unknown sketch kinds, NaN
        or Inf in A, blocks that do not add up to ``shape``, an empty iterable.
    TypeError
        Non-numeric input, a bad ``shape``.

    Notes
    -----
    Theorem 4: with c, r = O(k/eps), c0, r0 = O((k/eps)^{{1+gamma}}) and
    s_c, s_r = O(max(k/eps^{{3/2}}, k/(eps^2 rho^2)) + (k/eps)^{{1+gamma}}),
    ``||A - U diag(s) Vt||_F <= (1 + eps) ||A - A_k||_F`` with probability
    0.9.  Cost: O(nnz(A) p) for the hash kinds (O(nnz(A) c) for the dense
    and composed kinds, whose test-matrix block is formed explicitly) plus
    O((m + n) c^2 + s_c s_r c) at the end.  Memory: the sketches
    ((m c + r n + s_c s_r) numbers), the tables of the hash operators on
    the full side of the blocks, one block, and temporaries of at most about
    a quarter of the sketches (hash range sketches add CSC column blocks into
    C, and CSR row blocks into R, in place); the QRs and the products
    U_C U_N, V_R V_N reuse the memory of C and R.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> gen = np.random.default_rng(0)
    >>> A = gen.standard_normal((300, 8)) @ gen.standard_normal((8, 200))
    >>> U, s, Vt = sketchlab.fast_sp_svd(A, 8, rng=0)
    >>> U.shape, s.shape, Vt.shape
    ((300, 8), (8,), (8, 200))
    >>> bool(np.allclose((U * s) @ Vt, A))
    True

    The same from column blocks that are read once:

    >>> blocks = (A[:, j:j + 64] for j in range(0, 200, 64))
    >>> U2, s2, Vt2 = sketchlab.fast_sp_svd(blocks, 8, shape=A.shape, rng=0)
    >>> bool(np.allclose(s2, s))
    True

    The error estimate, when asked for, is an attribute of the result; the
    unpacking does not change:

    >>> res = sketchlab.fast_sp_svd(A, 8, rng=0, estimate_error=True)
    >>> U3, s3, Vt3 = res
    >>> bool(res.error_estimate.value < 1e-8 * np.linalg.norm(A)), res.passes
    (True, 1)
    """
    return _single_pass("fast", A, k, axis=axis, block_size=block_size, shape=shape, c=c, r=r,
                        s_c=s_c, s_r=s_r, range_sketch=range_sketch, core_sketch=core_sketch,
                        rank=rank, rng=rng, estimate_error=estimate_error, tol=tol,
                        n_probes=n_probes)




def practical_sp_svd(A: MatrixLike | Iterable[MatrixLike], k: int, *, c: int | None = None,
                     r: int | None = None, range_sketch: str = "gaussian", axis: int = 1,
                     block_size: int | None = None, rank: int | None = None,
                     rng: None | int | np.random.Generator = None,
                     shape: tuple[int, int] | None = None, estimate_error: bool = False,
                     tol: float | None = None, n_probes: int | None = None
                    ) -> SVDResult:
    """Practical single-pass SVD (Tropp et al. 2017; the paper's appendix algorithm).

    Range and co-range sketches ``C = A Omega~`` (m x c) and ``R = Psi~ A``
    (r x n) are accumulated block by block; then ``U_C = qr(C)``,
    ``R^T = V_R T_R``, ``N = (Psi~ U_C)^+ R V_R = (Psi~ U_C)^+ T_R^T`` and the
    SVD of N.  ``U diag(s) Vt = U_C (Psi~ U_C)^+ R`` is Tropp et al.'s
    ``Q X`` with ``X = (Psi Q)^+ W``.

    Parameters
    ----------
    {input}
    k : int
        Target rank, ``k <= c``.
    c, r : int, optional
        Range and co-range sketch sizes, ``r >= c`` (Psi~ U_C, r x c, must
        have full column rank).  Default ``c = 2k + 1``, ``r = 2c + 1`` (the
        proportions Tropp et al. recommend; capped at the dimensions).  For a
        fixed budget ``c + r`` see :func:`practical_sp_svd_sizes`.
    range_sketch : str, default "gaussian"
        Kind of Omega (c x n) and Psi (r x m): "gaussian", "countsketch",
        "osnap", "osnap-gaussian" or "srht".
    axis, block_size, rank, rng, shape, estimate_error, tol, n_probes
        As in :func:`fast_sp_svd`.

    Returns
    -------
    SVDResult
        ``U`` (m, q), ``s`` (q,), ``Vt`` (q, n) with ``q = rank`` (default
        k, at most c); ``error_estimate`` and ``passes`` as in
        :func:`fast_sp_svd`.

    Raises
    ------
    ValueError
        ``r < c``, ``k > c``, and the input errors of :func:`fast_sp_svd`.
    TypeError
        Non-numeric input, a bad ``shape``.

    Notes
    -----
    Tropp et al. (2017) bound the error by ``(1 + c/(r - c - 1))`` times
    the range-finder error, which itself is at most ``(1 + k/(c - k - 1))``
    times ``||A - A_k||_F^2`` in expectation for Gaussian sketches: reaching
    ``(1 + eps)`` takes ``r = O(k/eps^2)`` against Algorithm 3's O(k/eps)
    (Section "Comparison with Previous Work").  Cost O(nnz(A) c + nnz(A) r)
    with Gaussian sketches, O(nnz(A)) with the hash kinds, plus
    O((m + n) r^2) at the end; memory m c + r n numbers and one block.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> gen = np.random.default_rng(0)
    >>> A = gen.standard_normal((300, 8)) @ gen.standard_normal((8, 200))
    >>> U, s, Vt = sketchlab.practical_sp_svd(A, 8, c=12, r=25, rng=0)
    >>> s.shape
    (8,)
    >>> bool(np.allclose((U * s) @ Vt, A))
    True
    """
    return _single_pass("practical", A, k, axis=axis, block_size=block_size, shape=shape, c=c,
                        r=r, range_sketch=range_sketch, rank=rank, rng=rng,
                        estimate_error=estimate_error, tol=tol, n_probes=n_probes)




def three_sketch_svd(A: MatrixLike | Iterable[MatrixLike], k: int, *, c: int | None = None,
                     r: int | None = None, s_c: int | None = None, s_r: int | None = None,
                     range_sketch: str = "gaussian", core_sketch: str = "gaussian", axis: int = 1,
                     block_size: int | None = None, rank: int | None = None,
                     rng: None | int | np.random.Generator = None,
                     shape: tuple[int, int] | None = None, estimate_error: bool = False,
                     tol: float | None = None, n_probes: int | None = None
                    ) -> SVDResult:
    """Three-sketch single-pass SVD (Tropp, Yurtsever, Udell & Cevher 2019).

    "Streaming low-rank matrix approximation with an application to
    scientific simulation": range sketch ``Y = A Omega^T`` (m x c), co-range
    sketch ``W = Psi A`` (r x n) and core sketch ``Z = Phi A Theta^T``
    (s_c x s_r), accumulated block by block; then ``Q = orth(Y)``,
    ``P = orth(W^T)``, ``Phi Q = U_1 T_1``, ``Theta P = U_2 T_2`` and the core
    ``T_1^{{-1}} U_1^T Z U_2 T_2^{{-T}} = (Phi Q)^+ Z ((Theta P)^+)^T``, whose SVD
    gives ``A ~ Q C P^T``.  The sizes map as ``c, r`` -> range/co-range and
    ``s_c, s_r`` -> core (their k and s).

    The recovery is the same algebra as Algorithm 3 (Fast SP-SVD): the two
    differ in the sizes and kinds of the sketches, not in the formula.

    Parameters
    ----------
    {input}
    k : int
        Target rank, ``k <= min(c, r)``.
    c, r : int, optional
        Range and co-range sizes; default ``4k + 1`` each (their eq. 5.3,
        real field), capped at min(m, n).
    s_c, s_r : int, optional
        Core sizes, ``>= c`` and ``>= r``; default ``2c + 1`` and ``2r + 1``
        (eq. 5.3), capped at m and n.  For a storage budget see
        :func:`three_sketch_svd_sizes`.
    range_sketch, core_sketch : str, default "gaussian"
        Kinds of Omega, Psi and of Phi, Theta (their default test matrices
        are Gaussian); same names as :func:`fast_sp_svd`.
    axis, block_size, rank, rng, shape, estimate_error, tol, n_probes
        As in :func:`fast_sp_svd`.

    Returns
    -------
    SVDResult
        ``U`` (m, q), ``s`` (q,), ``Vt`` (q, n) with ``q = rank`` (default
        k, at most min(c, r)); ``error_estimate`` and ``passes`` as in
        :func:`fast_sp_svd`.

    Raises
    ------
    ValueError
        ``s_c < c``, ``s_r < r``, ``k > min(c, r)``, and the input errors of
        :func:`fast_sp_svd`.
    TypeError
        Non-numeric input, a bad ``shape``.

    Notes
    -----
    Their Theorem 5.1 (Gaussian maps, s >= 2k' + 1): the expected squared
    error is at most ``s/(s - k' - 1)`` times the range-finder error,
    ``min_(rho < k'-1) (1 + rho/(k' - rho - 1)) tau_(rho+1)^2(A)``.  Cost and
    memory as :func:`fast_sp_svd` with the same kinds and sizes.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> gen = np.random.default_rng(0)
    >>> A = gen.standard_normal((300, 8)) @ gen.standard_normal((8, 200))
    >>> U, s, Vt = sketchlab.three_sketch_svd(A, 8, rng=0)
    >>> s.shape
    (8,)
    >>> bool(np.allclose((U * s) @ Vt, A))
    True
    """
    return _single_pass("three", A, k, axis=axis, block_size=block_size, shape=shape, c=c, r=r,
                        s_c=s_c, s_r=s_r, range_sketch=range_sketch, core_sketch=core_sketch,
                        rank=rank, rng=rng, estimate_error=estimate_error, tol=tol,
                        n_probes=n_probes)


for _f in (fast_sp_svd, practical_sp_svd, three_sketch_svd):
    if _f.__doc__:  # None under python -OO
        _f.__doc__ = _f.__doc__.format(input=_INPUT_DOC)
del _f
