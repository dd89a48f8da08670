"""Composition of operators and the two-sided sketch ``S1 A S2^T``: how a
product of operators is applied (two steps, in pieces, or one fused pass)
and which loops a two-sided sketch takes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._config import sparse as sp  # scipy.sparse, imported on first use
from .._config import serial_blas
from .._validation import as_matrix, check_out, result_dtype
from .._engine import operators as _engine
from ._base import (
    SketchOperator,
    register_compose,
    _cheap_free_slices,
    _deliver,
    _free_slice,
    _rows_contiguous,
    _touched,
    _transpose,
)
from ._dense import GaussianSketch, _add_product, _DenseSketch
from ._sparse import OSNAP
from ._tables import _TableSketch

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from .._validation import MatrixLike


# ComposedSketch's one-pass product takes outer sketches of at most this many
# rows (s multiply-adds per nonzero of A); larger ones go through the inner
# sketch and a GEMM
_FUSED_MAX_ROWS = 32


class ComposedSketch(SketchOperator):
    """``outer @ inner``: apply ``inner`` (s0 x d), then ``outer`` (s x s0).

    E[S^T S] = E[inner^T E[outer^T outer] inner] = I.  Algorithm 3 uses
    ``compose(GaussianSketch(c, c0), OSNAP(c0, n))``: the input-sparsity cost
    of OSNAP with the compact size of a Gaussian.  Like scipy's product of
    linear operators, it applies its two operands one after the other; into a
    running sketch with no room for the inner sketch's output (a
    :class:`SketchState` over sparse A), it does so in pieces of A's rows
    (``A S^T`` of a CSR A), or a small dense outer sketch over a hashing one
    runs as one pass over A's nonzeros, whichever is cheaper.
    """

    kind = "composed"
    description = "outer @ inner"
    gmr = False
    svd = False

    def __init__(self, outer: SketchOperator, inner: SketchOperator) -> None:
        if not isinstance(outer, SketchOperator) or not isinstance(inner, SketchOperator):
            raise TypeError("compose() takes two sketching operators")
        if outer.input_dim != inner.sketch_size:
            raise ValueError(
                f"outer.input_dim ({outer.input_dim}) must equal inner.sketch_size "
                f"({inner.sketch_size})"
            )
        self._outer = outer
        self._inner = inner
        self._s = outer.sketch_size
        self._d = inner.input_dim
        self._seed = (outer.seed, inner.seed)

    @property
    def outer(self) -> SketchOperator:
        return self._outer

    @property
    def inner(self) -> SketchOperator:
        return self._inner

    def _identity(self):
        return ("compose", self._outer._identity(), self._inner._identity())

    def __eq__(self, other: object) -> bool:
        # a composition equals any composition of equal operands (its class,
        # OSNAPGaussian or not, only names the kind)
        return isinstance(other, ComposedSketch) and other._identity() == self._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def __repr__(self) -> str:
        return f"compose({self._outer!r}, {self._inner!r})"

    def _apply(self, A, axis, offset, out, accumulate):
        s0 = self._inner.sketch_size
        free = A.shape[1 - axis]  # the dimension the sketch does not compress
        # Into a given out (a running sketch), the intermediate inner(A) (free
        # x s0, s0 > s) must not outgrow out.  Where A slices cheaply along
        # the free dimension (the rows of a CSR A for A S^T), the two steps
        # run piece by piece (a row-local pass over the nonzeros per piece,
        # then a small GEMM on one BLAS thread), unless one compiled pass
        # through the explicit columns of G H is cheaper (_pieces_pay).
        # Along stored rows, a small dense outer sketch over a hashing one
        # runs in one pass (:meth:`_apply_fused`); else multiply A by the
        # explicit block of S's columns when that block is the smaller one.
        # (With room for it, the two steps are as fast or faster: the hashing
        # pass is one multiply-add per nonzero, the GEMM runs at BLAS speed.)
        budget = max(1 << 14, (out.size // 2) if out is not None else 0)
        if out is None or free * s0 <= budget:
            X = self._inner._apply(A, axis, offset, None, False)
            return self._outer._apply(X, axis, 0, out, accumulate)
        b = A.shape[axis]
        cheap = _cheap_free_slices(A, axis)
        if not (cheap and sp.issparse(A) and self._pieces_pay()):
            fused = self._apply_fused(A, axis, offset, out, accumulate)
            if fused is not None:
                return fused
        if cheap and (sp.issparse(A) or b > free):
            step = max(1, budget // s0)
            with serial_blas():
                for lo in range(0, free, step):
                    hi = min(free, lo + step)
                    X = self._inner._apply(_free_slice(A, axis, lo, hi), axis, offset, None,
                                           False)
                    self._outer._apply(X, axis, 0, _free_slice(out, axis, lo, hi), accumulate)
            return out
        if b <= free:
            target, Y = (out, A) if axis == 1 else (out.T, _transpose(A))
            if not accumulate:
                target[...] = 0
            W = self._columns(offset, offset + b).astype(out.dtype, copy=False)  # (b, s)
            _add_product(target, Y, W, budget)
            return out
        X = self._inner._apply(A, axis, offset, None, False)
        return self._outer._apply(X, axis, 0, out, accumulate)

    def _pieces_pay(self):
        """Whether the two steps in pieces beat the one pass across A's rows
        of :meth:`_apply_fused`: per stored entry the pieces scatter p times
        (about 4 ns each with their share of the GEMM), the one pass does s
        multiply-adds with a row of the explicit columns of G H (about 0.7
        ns each), so the pieces pay when the outer sketch is at least 6 p
        rows; with BLAS threads fighting Numba's between the two steps the
        pieces lose, hence one BLAS thread (compare.py's estimate rows and
        bench_operators' composed kinds measure both paths)."""
        p = getattr(self._inner, "nnz_per_col", 1)
        return 6 * p <= self._outer.sketch_size

    def _apply_fused(self, A, axis, offset, out, accumulate):
        """``S A`` (``A S^T``) of a sparse A for a small dense outer sketch G
        over a hashing inner one H, in one compiled pass that pushes each
        stored entry through its column of ``G H`` (the error estimates'
        probes: Gaussian through a CountSketch; fast_sp_svd's default range
        sketch: Gaussian through an OSNAP).  Without the inner sketch's
        intermediate, which is several times the output: along stored rows
        (CSR with axis 0, CSC with axis 1) each row of A goes into the rows of
        per-chunk buffers its nonzeros name; across them (CSR with axis 1,
        CSC with axis 0) every output row is one row of A times the explicit
        columns of ``G H`` (cols x s, built from the hash codes), in place.  None
        where it does not apply (the two-step product then runs).  Into a given
        ``out`` only: see :meth:`_apply`."""
        inner, outer = self._inner, self._outer
        s = outer.sketch_size
        if not (out is not None and sp.issparse(A) and A.format in ("csr", "csc")
                and isinstance(inner, _TableSketch) and isinstance(outer, _DenseSketch)
                and s <= _FUSED_MAX_ROWS and A.dtype == np.float64
                and _touched(A, axis) is None):
            return None
        X = A if A.format == "csr" else _transpose(A)  # CSR arrays
        along_rows = (axis == 0) == (A.format == "csr")  # the hashed index: X's rows
        hashed = X.shape[0] if along_rows else X.shape[1]
        tables = inner._tables(offset, offset + hashed)
        if tables.codes is None:
            return None
        cols = X.shape[1] if along_rows else X.shape[0]  # rows of what the loop writes
        target = out.T if axis == 0 else out  # (cols, s)
        gt = outer._columns(0, outer.input_dim)  # (s0, s): G^T
        if along_rows:
            if not _engine.fused_along_rows(tables, gt, X, target, accumulate):
                return None
            return out
        res = target if _rows_contiguous(target) else np.empty((cols, s))
        _engine.fused_across_rows(tables, gt, X, hashed, res, accumulate and res is target)
        if res is not target:
            _deliver(target, res, accumulate)
        return out

    def _apply_many(self, arrays, axis, offset):
        return self._outer._apply_many(self._inner._apply_many(arrays, axis, offset), axis, 0)

    def _factor(self):
        outer_in, innermost = self._inner._factor()
        outer = self._outer if outer_in is None else ComposedSketch(self._outer, outer_in)
        return outer, innermost

    def _columns(self, j0, j1, serial=False):
        # columns of outer @ inner = (inner columns) @ outer^T
        cols = self._inner._columns(j0, j1, serial)
        return self._outer._apply(cols, 1, 0, None, False)

    def _rmatmat(self, Y):
        return self._inner._rmatmat(self._outer._rmatmat(Y))


class OSNAPGaussian(ComposedSketch):
    """A Gaussian sketch after an OSNAP (or CountSketch): the registry's
    ``"osnap-gaussian"`` (Algorithm 3, line 3), as :func:`compose` returns it
    for such a pair."""

    kind = "osnap-gaussian"
    description = "Gaussian(s, 4s) after OSNAP(4s, d) (Algorithm 3)"
    svd = True
    gmr = False


def compose(outer: SketchOperator, inner: SketchOperator) -> ComposedSketch:
    """The operator ``outer @ inner`` (first ``inner``, then ``outer``).

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> S = sketchlab.compose(sketchlab.GaussianSketch(5, 40, rng=1),
    ...                       sketchlab.OSNAP(40, 1000, rng=2))
    >>> S.shape
    (5, 1000)
    >>> S.kind
    'osnap-gaussian'
    """
    if isinstance(outer, GaussianSketch) and isinstance(inner, OSNAP):
        return OSNAPGaussian(outer, inner)
    return ComposedSketch(outer, inner)


register_compose(compose)  # S @ T of two operators (SketchOperator.__matmul__)


def sketch_both(S1: SketchOperator, A: MatrixLike, S2: SketchOperator, *,
                offsets: tuple[int, int] | None = None, out: NDArray[np.floating] | None = None,
                accumulate: bool = False, check_finite: bool = True) -> NDArray[np.floating]:
    """Two-sided sketch ``S1 A S2^T``.

    For the hashing and sampling kinds (and compositions whose innermost
    operators are of those kinds) and a sparse A, the product is formed in
    ONE pass over the nonzeros of A, without the intermediate ``S1 A``: each
    nonzero ``a_ij`` is added to ``out[t, u]`` for the nonzeros ``(t, i)``
    of S1 and ``(u, j)`` of S2.  A dense A is also read once, through the
    small intermediate ``S1 A`` (C order) or ``A S2^T`` (F order).  Other
    kinds apply the cheaper side first.

    Parameters
    ----------
    S1 : SketchOperator of shape (s1, m)
    A : array_like or scipy.sparse matrix of shape (m, n)
        Or a block of the full matrix when ``offsets`` is given.
    S2 : SketchOperator of shape (s2, n)
    offsets : (int, int), optional
        ``(i0, j0)``: ``A`` holds rows ``[i0, i0 + m_b)`` and columns
        ``[j0, j0 + n_b)`` of the full matrix (streaming, distributed sums).
    out : ndarray of shape (s1, s2), optional
        Where to write the result (its dtype: float32 for float32 A, else
        float64).
    accumulate : bool, default False
        With ``out``: add the result to it (``out += S1 A S2^T``).
    check_finite : bool, default True

    Returns
    -------
    ndarray of shape (s1, s2)
        ``out`` itself when given.

    Notes
    -----
    Cost O(nnz(A) p1 p2) for OSNAP/CountSketch (p nonzeros per column), plus
    the output.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, sketchlab
    >>> gen = np.random.default_rng(0)
    >>> A = sp.random(50, 40, density=0.1, format="csr", random_state=gen)
    >>> S1, S2 = sketchlab.CountSketch(6, 50, rng=1), sketchlab.CountSketch(5, 40, rng=2)
    >>> M = sketchlab.sketch_both(S1, A, S2)
    >>> bool(np.allclose(M, S1.toarray() @ A.toarray() @ S2.toarray().T))
    True
    """
    for name, S in (("S1", S1), ("S2", S2)):
        if not isinstance(S, SketchOperator):
            raise TypeError(f"{name} must be a SketchOperator, got {type(S).__name__}")
    A = as_matrix(A, "A", finite=check_finite)
    return _sketch_both_validated(S1, A, S2, offsets, out, accumulate)


def _sketch_both_validated(S1, A, S2, offsets, out, accumulate):
    if offsets is None:
        i0 = S1._check_block(A.shape[0], None, "A.shape[0]")
        j0 = S2._check_block(A.shape[1], None, "A.shape[1]")
    else:
        try:
            i0, j0 = offsets
        except (TypeError, ValueError):
            raise TypeError(f"offsets must be a pair of ints, got {offsets!r}") from None
        i0 = S1._check_block(A.shape[0], i0, "A.shape[0]")
        j0 = S2._check_block(A.shape[1], j0, "A.shape[1]")
    if out is not None:
        out = check_out(out, (S1.sketch_size, S2.sketch_size), result_dtype(A.dtype))
    return _sketch_both(S1, A, S2, i0, j0, out, bool(accumulate))


def _sketch_both(S1, A, S2, i0, j0, out, accumulate):
    outer1, inner1 = S1._factor()
    outer2, inner2 = S2._factor()
    # the last step writes into (onto) out
    last = (out, accumulate)
    none = (None, False)
    core = last if outer1 is None and outer2 is None else none
    if inner1._table_kind and inner2._table_kind:
        M = _both_tables(inner1, A, inner2, i0, j0, *core)
    elif inner1._table_kind or not inner2._table_kind:
        M = inner2._apply(inner1._apply(A, 0, i0, None, False), 1, j0, *core)
    else:
        M = inner1._apply(inner2._apply(A, 1, j0, None, False), 0, i0, *core)
    if outer1 is not None:
        M = outer1._apply(M, 0, 0, *(last if outer2 is None else none))
    if outer2 is not None:
        M = outer2._apply(M, 1, 0, *last)
    return M


def _both_tables(S1, A, S2, i0, j0, out, accumulate):
    m, n = A.shape
    if not sp.issparse(A):
        # one pass over A for the larger side, then the small intermediate
        # (s x n or m x s) through the other: cheaper than scattering every
        # entry of A through both tables (p1 p2 m n), as the nonzeros of a
        # sparse A are
        if A.flags.c_contiguous:
            return S2._apply(S1._apply(A, 0, i0, None, False), 1, j0, out, accumulate)
        return S1._apply(S2._apply(A, 1, j0, None, False), 0, i0, out, accumulate)
    t1 = t2 = None
    touched = _touched(A, 1 if A.format == "csr" else 0)
    if touched is not None:  # a huge, very sparse dimension: tables of its nonzeros only
        A, positions = touched
        if A.format == "csr":
            t2 = S2._tables_at(j0 + positions)
        else:
            t1 = S1._tables_at(i0 + positions)
    t1 = S1._tables(i0, i0 + m) if t1 is None else t1
    t2 = S2._tables(j0, j0 + n) if t2 is None else t2
    dtype = result_dtype(A.dtype)
    s1, s2 = S1.sketch_size, S2.sketch_size
    # the CSC arrays of A are the CSR arrays of A^T: (S1 A S2^T)^T = S2 A^T S1^T
    transposed = A.format == "csc"
    left, right = (t2, t1) if transposed else (t1, t2)
    shape = (s2, s1) if transposed else (s1, s2)
    in_place = out is not None and _rows_contiguous(out.T if transposed else out)
    if in_place:
        target, into = (out.T if transposed else out), accumulate
    else:
        target, into = np.empty(shape, dtype=dtype), False
    _engine.both(left, A, right, target, into, transposed)
    if in_place:
        return out
    result = target.T if transposed else target
    return result if out is None else _deliver(out, result, accumulate)
