"""Sketching operators: random s x d matrices that are never stored densely.

Every operator is defined by (kind, sketch_size, input_dim, seed, parameters)
and is immutable.  Its random numbers come from the counter-based hash of
``sketchlab._hash`` so that any block of its columns can be regenerated on its
own: ``S.apply(A_block, axis=0, offset=j0)`` equals applying columns
``[j0, j0 + b)`` of the whole S, on any thread count, bit for bit for the
hashing and sampling kinds.

The operators own every way of applying them (the algorithms call nothing
else): :meth:`SketchOperator.apply` (left or right, whole or block, into a new
array, into a given one, or added to a given one), :meth:`SketchOperator.apply_many`
(one operator, several arrays, its random numbers generated once) and
:func:`sketch_both` (two-sided, one pass over the nonzeros).

All kinds satisfy E[S^T S] = I.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, overload

import numpy as np
import scipy.sparse as sp

from . import _hash
from ._config import TABLE_CACHE_MAX_DIM
from ._validation import (
    MAX_DIM,
    as_matrix,
    check_axis,
    check_int,
    check_out,
    check_random_state,
    result_dtype,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray
    from scipy.sparse.linalg import LinearOperator

    from ._validation import MatrixLike

__all__ = [
    "SketchOperator",
    "CountSketch",
    "OSNAP",
    "GaussianSketch",
    "SRHT",
    "UniformSampler",
    "LeverageScoreSampler",
    "ComposedSketch",
    "IndexSelection",
    "compose",
    "sketch_both",
]

# Dimensions are bounded so that buckets fit the 32-bit multiply-shift and
# the tables can use 32-bit indices.
_MAX_DIM = MAX_DIM
# The hashing kinds pack a nonzero as ``row << 1 | sign_bit`` in 4 bytes.
_MAX_HASH_ROWS = 2**30
# Columns of a dense kind (Gaussian, SRHT block form) generated at a time:
# about 32 MB of float64 per block (one block, one GEMM, for most sketches:
# each block costs a slice and an accumulation of the output besides its
# product).
_DENSE_BLOCK_ENTRIES = 1 << 22
# Temporaries of an application into a given ``out`` whose layout the
# compiled loops cannot write directly: at most this many entries at a time
# (2 MB of float64), so that a running sketch is updated in bounded memory.
_PIECE_ENTRIES = 1 << 18
# dense rows at most this long are streamed by the hashing kinds (see _left)
_SHORT_DENSE_ROW = 64
# toarray() refuses to materialize more entries than this (16 GiB of float64).
_MAX_DENSE_ENTRIES = 1 << 31


def _index_dtype(n):
    return np.int32 if n < 2**31 else np.int64


def _work(A):
    """Entries a loop reads from ``A`` (stored entries of a sparse matrix)."""
    return A.nnz if sp.issparse(A) else A.size


def _compressed(like, fmt, data, indices, indptr, shape):
    """A CSR or CSC (``fmt``) matrix, or array, as ``like`` is, on the given
    arrays of a validated matrix, without scipy's constructor checks: with
    int64 index arrays those read them through and copy them down to int32
    where they fit (6 ms for the 2.07M entries of debian-tfidf, on every
    transpose or row slice of a pass)."""
    name = type(like).__name__
    kind = name[3:] if name in ("csr_matrix", "csc_matrix", "csr_array", "csc_array") else "_matrix"
    M = getattr(sp, fmt + kind)(shape, dtype=data.dtype)  # empty: nothing to check
    M.data, M.indices, M.indptr = data, indices, indptr
    return M


def _transpose(X):
    """``X.T``: for a sparse X, the CSC (CSR) view of a CSR (CSC) X on the
    same arrays, made without scipy's checks (:func:`_compressed`)."""
    if not sp.issparse(X) or X.format not in ("csr", "csc"):
        return X.T
    return _compressed(X, "csc" if X.format == "csr" else "csr", X.data, X.indices, X.indptr,
                       X.shape[::-1])


def _rows(X, r0, r1):
    """Rows [r0, r1) of a dense or CSR X, without copying its values."""
    if not sp.issparse(X):
        return X[r0:r1]
    lo, hi = X.indptr[r0], X.indptr[r1]
    return _compressed(X, "csr", X.data[lo:hi], X.indices[lo:hi], X.indptr[r0:r1 + 1] - lo,
                       (r1 - r0, X.shape[1]))


def _free_slice(X, axis, lo, hi):
    """Indices [lo, hi) of the dimension of X that a sketch along ``axis``
    does not compress: rows for ``axis=1``, columns for ``axis=0``."""
    if axis == 1:
        return _rows(X, lo, hi) if sp.issparse(X) else X[lo:hi]
    return _transpose(_rows(_transpose(X), lo, hi)) if sp.issparse(X) else X[:, lo:hi]


def _cheap_free_slices(A, axis):
    """True when :func:`_free_slice` of A is a contiguous view (CSR or C-ordered
    rows for ``axis=1``; CSC or F-ordered columns for ``axis=0``)."""
    if sp.issparse(A):
        return A.format == ("csr" if axis == 1 else "csc")
    return A.flags.c_contiguous if axis == 1 else A.flags.f_contiguous


# A sparse input whose sketched dimension is above this size and 8 times its
# stored entries is applied through tables of the indices it touches only
# (O(nnz) memory instead of O(input_dim)).
_COMPACT_MIN_DIM = 1 << 22


def _touched(A, axis):
    """``(A with its sketched dimension compacted to the indices it touches,
    those indices)`` for a sparse A whose sketched dimension (``axis``) is
    huge and stored in its ``indices`` (CSC rows, CSR columns); else None."""
    if not sp.issparse(A):
        return None
    dim = A.shape[axis]
    if dim <= _COMPACT_MIN_DIM or dim <= 8 * A.nnz or A.format != ("csc" if axis == 0 else "csr"):
        return None
    positions, local = np.unique(A.indices, return_inverse=True)
    shape = (positions.size, A.shape[1]) if axis == 0 else (A.shape[0], positions.size)
    compact = type(A)((A.data, local.astype(np.int64).ravel(), A.indptr), shape=shape,
                      copy=False)
    return compact, positions.astype(np.int64)


def _rows_contiguous(out):
    """True when the loops can write ``out`` in place: each row contiguous."""
    return out.shape[1] <= 1 or out.strides[1] == out.itemsize


def _columns_contiguous(out):
    """True when each column of ``out`` is contiguous (F order)."""
    return out.shape[0] <= 1 or out.strides[0] == out.itemsize


def _deliver(out, result, accumulate):
    """``out = result`` or ``out += result``; returns out."""
    if accumulate:
        out += result
    else:
        out[...] = result
    return out


class SketchOperator:
    """Base class of the sketching operators.

    An operator is an ``s x d`` matrix ``S`` (``s = sketch_size``,
    ``d = input_dim``).  ``S @ A`` is the left sketch S A, ``A @ S.T`` and
    ``S.apply(A, axis=1)`` the right sketch A S^T, and
    :func:`sketch_both` the two-sided sketch S1 A S2^T.

    Subclasses implement ``_apply(A, axis, offset, out, accumulate)`` for a
    validated 2-D ``A`` (float32/float64, CSR/CSC or C/F-contiguous dense)
    and ``_columns(j0, j1)``.
    """

    kind: str | None = None
    _table_kind = False  # True for the kinds applied through nonzero tables
    __array_ufunc__ = None  # let ``ndarray @ op`` defer to op.__rmatmul__

    _seed: int | tuple[Any, ...]  # a tuple of the operands' seeds for a composition

    def __init__(self, sketch_size: int, input_dim: int, *,
                 rng: None | int | np.random.Generator = None) -> None:
        self._d = check_int(input_dim, "input_dim", 1, _MAX_DIM)
        self._s = check_int(sketch_size, "sketch_size", 1, _MAX_DIM)
        self._seed = check_random_state(rng)

    # -- description -------------------------------------------------------

    @property
    def sketch_size(self) -> int:
        """Number of rows ``s`` of the sketch."""
        return self._s

    @property
    def input_dim(self) -> int:
        """Number of columns ``d`` (the dimension being compressed)."""
        return self._d

    @property
    def shape(self) -> tuple[int, int]:
        return (self._s, self._d)

    @property
    def seed(self) -> int | tuple[Any, ...]:
        """The 64-bit seed that, with the parameters, defines the operator."""
        return self._seed

    ndim = 2
    dtype = np.dtype(np.float64)

    def _params(self):
        return ()

    def _identity(self):
        return (type(self).__name__, self._s, self._d, self._seed) + tuple(self._params())

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and other._identity() == self._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def __dask_tokenize__(self):
        return self._identity()

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self._repr_params())
        return f"{type(self).__name__}({self._s}, {self._d}{extra}, rng={self._seed})"

    def _repr_params(self):
        return ()

    # -- application -------------------------------------------------------

    @overload
    def __matmul__(self, A: SketchOperator) -> ComposedSketch: ...
    @overload
    def __matmul__(self, A: ArrayLike) -> NDArray[np.floating]: ...  # or a sparse matrix

    def __matmul__(self, A: MatrixLike) -> ComposedSketch | NDArray[np.floating]:
        if isinstance(A, SketchOperator):
            return compose(self, A)
        if isinstance(A, _TransposedSketch):
            raise TypeError(
                "S @ T.T of two operators is not supported; use S.toarray() @ T.toarray().T "
                "(small cases) or apply them to your data one after the other"
            )
        return self.apply(A, axis=0)

    @property
    def T(self) -> _TransposedSketch:
        """The transpose ``S^T`` (for ``A @ S.T`` and ``S.T @ Y``)."""
        return _TransposedSketch(self)

    def apply(self, A: MatrixLike, axis: int = 0, offset: int | None = None, *,
              out: NDArray[np.floating] | None = None, accumulate: bool = False,
              check_finite: bool = True) -> NDArray[np.floating]:
        """Apply the sketch to ``A``: ``S A`` (``axis=0``) or ``A S^T`` (``axis=1``).

        Parameters
        ----------
        A : array_like or scipy.sparse matrix
            ``axis=0``: shape ``(d, n)`` (or ``(d,)``), gives ``S A`` of shape
            ``(s, n)``.  ``axis=1``: shape ``(m, d)``, gives ``A S^T`` of
            shape ``(m, s)``.  Dense (C or F order) or CSR/CSC (other sparse
            formats are converted); float32 stays float32, other real dtypes
            are computed in float64.
        axis : {0, 1}
            Which dimension of ``A`` the sketch compresses.
        offset : int, optional
            When given, ``A`` is a block: its ``b`` rows (``axis=0``) or
            columns (``axis=1``) are rows ``[offset, offset + b)`` of the full
            input, and only columns ``[offset, offset + b)`` of S are applied.
            Summing the block results gives the result for the whole input.
        out : ndarray, optional
            Where to write the result: a writable array of the result's shape
            and dtype, of any memory layout (a row or column slice of a larger
            array included).  Layouts the compiled loops cannot write directly
            go through temporaries of at most 2 MB.
        accumulate : bool, default False
            With ``out``: add the result to ``out`` instead of overwriting it
            (``out += S A``), the update of a running sketch by a block.
        check_finite : bool, default True
            Reject NaN and Inf in ``A`` (one pass over its values).  The index
            arrays of a sparse ``A`` are always checked.

        Returns
        -------
        ndarray
            The result (``out`` itself when given), float32 for float32
            input, else float64.

        Raises
        ------
        ValueError
            If the dimension does not match ``input_dim`` (or the block does
            not fit), A holds NaN or Inf, or ``out`` has the wrong shape or
            dtype.
        TypeError
            If A is not numeric or ``out`` is not an ndarray.

        Examples
        --------
        >>> import numpy as np, sketchlab
        >>> S = sketchlab.CountSketch(3, 6, rng=0)
        >>> A = np.arange(12.0).reshape(6, 2)
        >>> sketch = S.apply(A[:4], offset=0) + S.apply(A[4:], offset=4)
        >>> bool(np.allclose(sketch, S @ A))
        True
        >>> out = np.zeros((3, 2))
        >>> _ = S.apply(A[:4], offset=0, out=out, accumulate=True)
        >>> _ = S.apply(A[4:], offset=4, out=out, accumulate=True)
        >>> bool(np.allclose(out, S @ A))
        True
        """
        axis = check_axis(axis)
        A = as_matrix(A, "A", allow_1d=True, finite=check_finite)
        vector = A.ndim == 1
        if vector:
            A = A.reshape(-1, 1) if axis == 0 else A.reshape(1, -1)
        offset = self._check_block(A.shape[axis], offset, f"A.shape[{axis}]")
        shape = self._result_shape(A, axis)
        if out is not None:
            want = (shape[0] * shape[1],) if vector else shape
            out = check_out(out, want, result_dtype(A.dtype))
            target = out.reshape(shape) if vector else out
            if vector and not np.shares_memory(target, out):  # pragma: no cover
                raise ValueError("out must be contiguous for a 1-D A")
        else:
            target = None
        if A.size == 0:  # nothing to read: S A is empty, or zero for an empty block
            res = _empty_apply(shape, result_dtype(A.dtype), target, bool(accumulate))
        else:
            res = self._apply(A, axis, offset, target, bool(accumulate))
        if out is not None:
            return out
        return res.ravel() if vector else res

    def apply_many(self, arrays: Sequence[MatrixLike], axis: int = 0, offset: int | None = None,
                   *, check_finite: bool = True) -> list[NDArray[np.floating]]:
        """``[S.apply(A, axis, offset) for A in arrays]``, generating S once.

        For the dense kinds the random entries are generated once for all
        arrays (an algorithm that sketches C and A with the same S pays the
        generation once), for the table kinds the tables are built once.
        Each result equals ``S.apply`` of that array alone, bit for bit.

        Parameters
        ----------
        arrays : sequence of array_like or scipy.sparse matrix
            2-D, all with the same ``shape[axis]``.
        axis, offset, check_finite
            As in :meth:`apply`.

        Returns
        -------
        list of ndarray

        Examples
        --------
        >>> import numpy as np, sketchlab
        >>> S = sketchlab.GaussianSketch(4, 10, rng=0)
        >>> A, B = np.ones((10, 3)), np.eye(10)
        >>> SA, SB = S.apply_many([A, B])
        >>> bool(np.array_equal(SB, S.apply(B)))
        True
        """
        axis = check_axis(axis)
        if isinstance(arrays, (np.ndarray, str, bytes)) or sp.issparse(arrays):
            raise TypeError("arrays must be a sequence of matrices (a list or a tuple)")
        checked = [as_matrix(A, f"arrays[{i}]", finite=check_finite)
                   for i, A in enumerate(arrays)]
        if not checked:
            return []
        b = checked[0].shape[axis]
        for i, A in enumerate(checked):
            if A.shape[axis] != b:
                raise ValueError(
                    f"arrays[{i}].shape[{axis}] = {A.shape[axis]} differs from "
                    f"arrays[0].shape[{axis}] = {b}"
                )
        offset = self._check_block(b, offset, f"arrays[0].shape[{axis}]")
        if any(A.size == 0 for A in checked):
            return [self.apply(A, axis, offset, check_finite=False) for A in checked]
        return self._apply_many(checked, axis, offset)

    def _result_shape(self, A, axis):
        return (self._s, A.shape[1]) if axis == 0 else (A.shape[0], self._s)

    def _apply_many(self, arrays, axis, offset):
        return [self._apply(A, axis, offset, None, False) for A in arrays]

    def _check_block(self, b, offset, what):
        if offset is None:
            if b != self._d:
                raise ValueError(
                    f"{what} must equal the operator's input_dim {self._d}, got {b} "
                    "(pass offset= to apply the sketch to a block)"
                )
            return 0
        offset = check_int(offset, "offset", 0, self._d)
        if offset + b > self._d:
            raise ValueError(
                f"block [offset, offset + {what}) = [{offset}, {offset + b}) exceeds "
                f"input_dim {self._d}"
            )
        return offset

    def _apply(self, A, axis, offset, out, accumulate):  # pragma: no cover - abstract
        raise NotImplementedError

    def _factor(self):
        """(outer, inner) with self = outer @ inner and inner not composed."""
        return None, self

    # -- explicit forms ----------------------------------------------------

    def toarray(self) -> NDArray[np.float64]:
        """The dense ``s x d`` matrix (for tests and small cases).

        Raises
        ------
        ValueError
            If ``s * d`` exceeds 2**31 entries (16 GiB), before any work.
        """
        if self._s * self._d > _MAX_DENSE_ENTRIES:
            raise ValueError(
                f"toarray() would materialize {self._s} x {self._d} = {self._s * self._d} "
                f"entries (more than {_MAX_DENSE_ENTRIES}); apply the operator instead"
            )
        out = np.empty((self._s, self._d))  # fails fast when memory is short
        step = max(1, _DENSE_BLOCK_ENTRIES // max(self._s, 1))
        for j0 in range(0, self._d, step):
            j1 = min(self._d, j0 + step)
            out[:, j0:j1] = self._columns(j0, j1).T
        return out

    def _columns(self, j0, j1, serial=False):
        """Columns ``[j0, j1)`` of S as a C-ordered ``(j1 - j0, s)`` float64
        array (``serial``: generated on one thread)."""
        raise NotImplementedError  # pragma: no cover

    def _rmatmat(self, Y):
        """S^T Y for a validated dense ``(s, k)`` Y, block by block over columns of S."""
        dtype = result_dtype(Y.dtype)
        out = np.empty((self._d, Y.shape[1]), dtype=dtype)
        step = max(1, _DENSE_BLOCK_ENTRIES // max(self._s, 1))
        for j0 in range(0, self._d, step):
            j1 = min(self._d, j0 + step)
            out[j0:j1] = self._columns(j0, j1).astype(dtype, copy=False) @ Y
        return out

    def aslinearoperator(self) -> LinearOperator:
        """A ``scipy.sparse.linalg.LinearOperator`` of shape ``(s, d)``."""
        from scipy.sparse.linalg import LinearOperator

        op = self

        def matvec(x):
            return op.apply(np.asarray(x).reshape(-1), axis=0)

        def matmat(X):
            return op.apply(np.asarray(X), axis=0)

        def rmatvec(y):
            return op.T @ np.asarray(y, dtype=np.float64).reshape(-1)

        def rmatmat(Y):
            return op.T @ np.asarray(Y, dtype=np.float64)

        return LinearOperator(
            self.shape, matvec=matvec, rmatvec=rmatvec, matmat=matmat, rmatmat=rmatmat,
            dtype=np.float64,
        )


class _TransposedSketch:
    """``S.T``: supports ``A @ S.T`` (= ``S.apply(A, axis=1)``) and ``S.T @ Y``."""

    __array_ufunc__ = None

    def __init__(self, op: SketchOperator) -> None:
        self._op = op

    @property
    def shape(self) -> tuple[int, int]:
        return (self._op.input_dim, self._op.sketch_size)

    @property
    def T(self) -> SketchOperator:
        return self._op

    ndim = 2
    dtype = np.dtype(np.float64)

    def toarray(self) -> NDArray[np.float64]:
        return self._op.toarray().T

    def __rmatmul__(self, A: MatrixLike) -> NDArray[np.floating]:
        if isinstance(A, (SketchOperator, _TransposedSketch)):
            return NotImplemented
        return self._op.apply(A, axis=1)

    def __matmul__(self, Y: ArrayLike) -> NDArray[np.floating]:
        if isinstance(Y, (SketchOperator, _TransposedSketch)):
            raise TypeError(
                "S.T @ T of two operators is not supported; use S.toarray().T @ T.toarray() "
                "(small cases)"
            )
        Y = as_matrix(Y, "Y", allow_1d=True, sparse=False)
        vector = Y.ndim == 1
        Y2 = Y.reshape(-1, 1) if vector else Y
        if Y2.shape[0] != self._op.sketch_size:
            raise ValueError(
                f"Y.shape[0] must equal sketch_size {self._op.sketch_size}, got {Y2.shape[0]}"
            )
        out = self._op._rmatmat(Y2)
        return out.ravel() if vector else out

    def __repr__(self) -> str:
        return f"{self._op!r}.T"


# ---------------------------------------------------------------------------
# Table kinds: CountSketch, OSNAP, samplers
# ---------------------------------------------------------------------------


class _Tables:
    """The nonzeros of columns ``[j0, j1)`` of a table kind, in the forms the
    loops take (see ``sketchlab._jit.apply``), each built on first use.

    ``codes`` (hashing kinds only): ``p`` packed codes ``row << 1 | sign_bit``
    per column, of magnitude ``scale``.  ``csc``: ``(col_ptr, row_idx, val)``,
    column j of S -> its rows.  ``csr``: ``(row_ptr, col_idx, val)``, row t of
    S -> its columns (a counting sort of ``csc``).
    """

    __slots__ = ("_csc", "_csr", "codes", "p", "scale", "nrows")

    def __init__(self, nrows, csc=None, codes=None, p=0, scale=1.0):
        self.nrows = nrows
        self._csc = csc
        self._csr = None
        self.codes = codes
        self.p = p
        self.scale = scale

    @property
    def csc(self):
        if self._csc is None:  # from the codes
            codes, p = self.codes, self.p
            vals = np.where(codes & 1, -self.scale, self.scale)
            col_ptr = np.arange(0, codes.shape[0] + 1, p, dtype=np.int64)
            self._csc = (col_ptr, codes >> 1, vals)
        return self._csc

    @property
    def csr(self):
        if self._csr is None:
            from ._jit.hashing import transpose_table

            col_ptr, rows, vals = self.csc
            ncols = col_ptr.shape[0] - 1
            row_ptr = np.zeros(self.nrows + 1, dtype=np.int64)
            row_idx = np.empty(rows.shape[0], dtype=_index_dtype(ncols))
            row_val = np.empty(rows.shape[0], dtype=np.float64)
            cursor = np.empty(self.nrows, dtype=np.int64)
            transpose_table(col_ptr, rows, vals, row_ptr, row_idx, row_val, cursor)
            self._csr = (row_ptr, row_idx, row_val)
        return self._csr


class _TableSketch(SketchOperator):
    """Kinds whose nonzeros are listed in tables: CSC (column j -> rows,
    values) for the right side and CSR (row t -> columns, values) for the
    left side, plus packed codes for the hashing kinds.  One family of
    compiled loops applies them to every input format."""

    _table_kind = True

    def __getstate__(self):
        # the cached tables are O(d): never ship them (to dask workers, to
        # disk); they are recomputed from the seed where needed
        state = self.__dict__.copy()
        state.pop("_cache", None)
        return state

    def _make_tables(self, j0, j1):
        """:class:`_Tables` of columns [j0, j1) (computed, not cached)."""
        raise NotImplementedError  # pragma: no cover

    def _tables(self, j0, j1):
        """:class:`_Tables` of columns [j0, j1), cached for the full range."""
        full = j0 == 0 and j1 == self._d
        if full and getattr(self, "_cache", None) is not None:
            return self._cache
        tables = self._make_tables(j0, j1)
        if full and self._d <= TABLE_CACHE_MAX_DIM:
            self._cache = tables
        return tables

    def _apply(self, A, axis, offset, out, accumulate):
        touched = _touched(A, axis)
        if touched is not None:  # a huge, very sparse dimension: tables of its nonzeros only
            A, positions = touched
            return _apply_tables(self._tables_at(offset + positions), A, axis, out, accumulate)
        return _apply_tables(self._tables(offset, offset + A.shape[axis]), A, axis, out,
                             accumulate)

    def _tables_at(self, columns):
        """:class:`_Tables` of the given sorted global columns (not cached)."""
        raise NotImplementedError  # pragma: no cover

    def _apply_many(self, arrays, axis, offset):
        tables = self._tables(offset, offset + arrays[0].shape[axis])
        return [_apply_tables(tables, A, axis, None, False) for A in arrays]

    def _columns(self, j0, j1, serial=False):
        col_ptr, rows, vals = self._make_tables(j0, j1).csc
        out = np.zeros((j1 - j0, self._s))
        cols = np.repeat(np.arange(j1 - j0), np.diff(col_ptr))
        np.add.at(out, (cols, rows), vals)
        return out

    def tosparse(self, format: str = "csr") -> Any:
        """S as a ``scipy.sparse.csr_array`` (or ``format``), built from its tables."""
        col_ptr, rows, vals = self._make_tables(0, self._d).csc
        S = sp.csc_array((vals, rows, col_ptr), shape=self.shape)
        return S.asformat(format)

    def _rmatmat(self, Y):
        dtype = result_dtype(Y.dtype)
        return np.asarray(self.tosparse("csc").T @ Y).astype(dtype, copy=False)


def _empty_apply(shape, dtype, out, accumulate):
    """``S A`` of an ``A`` without entries: every kind gives the same zeros."""
    if out is None:
        return np.zeros(shape, dtype=dtype)
    if not accumulate:
        out[...] = 0
    return out


def _apply_tables(tables, A, axis, out, accumulate):
    """S A (``axis=0``) or A S^T (``axis=1``) for a table kind given by its
    tables, into a new array or into (onto) ``out``.

    S A on a CSR/C-ordered A and A S^T on a CSC/F-ordered A gather rows of a
    row-major array (left loops); the other two cases scatter into rows of
    the output (right loops).  The CSC arrays of A are the CSR arrays of A^T,
    and the transpose of an F-ordered array is C-ordered, so the loops see
    only row-major inputs and write row-major outputs.
    """
    sparse = sp.issparse(A)
    row_major = (A.format == "csr") if sparse else A.flags.c_contiguous
    X = A if row_major else _transpose(A)  # row-major view, of shape (rows, cols)
    left = (axis == 0) == row_major
    apply_loop = _left if left else _right
    shape = (tables.nrows, X.shape[1]) if left else (X.shape[0], tables.nrows)
    if out is None:
        res = np.empty(shape, dtype=result_dtype(A.dtype))
        apply_loop(tables, X, res, False)
        return res if row_major else res.T
    target = out if row_major else out.T  # what the loop writes, of shape `shape`
    if _rows_contiguous(target) or (sparse and not left and _columns_contiguous(target)):
        # a sparse X's rows scatter into an F-ordered output in place as
        # well: its s columns are written as s sequential streams (debian-
        # tfidf, CountSketch s = 13-40: 3-7 ms, against 8-11 ms through
        # row pieces and a transposing copy)
        apply_loop(tables, X, target, accumulate)
    elif left:  # output rows gather from all of X: one temporary
        res = np.empty(shape, dtype=out.dtype)
        apply_loop(tables, X, res, False)
        _deliver(target, res, accumulate)
    else:  # output rows are rows of X: pieces of bounded size
        step = max(1, _PIECE_ENTRIES // max(1, tables.nrows))
        for r0 in range(0, X.shape[0], step):
            r1 = min(X.shape[0], r0 + step)
            res = np.empty((r1 - r0, tables.nrows), dtype=out.dtype)
            apply_loop(tables, _rows(X, r0, r1), res, False)
            _deliver(target[r0:r1], res, accumulate)
    return out


def _left(tables, X, out, accumulate):
    """out (+)= S X (s x cols) for a row-major X (CSR, or C-ordered dense): a
    hashing kind streams the rows of X into per-chunk buffers when the output
    is small; otherwise each output row gathers its rows of X."""
    from ._jit import threads_for

    with threads_for(_work(X) + out.size):
        _left_loops(tables, X, out, accumulate)


def _left_loops(tables, X, out, accumulate):
    from ._jit import apply as K

    sparse = sp.issparse(X)
    # streaming pays for its buffers with short CSR rows, p > 1 nonzeros per
    # column, or short dense rows (a thin factor such as C of fast_gmr: the
    # gather loop reads its rows in hash order, one cache miss each, and
    # needs the row table); a long dense row under a CountSketch is read once
    # by the gather loop (measured 1.2-9x faster than streaming for 1000
    # columns)
    stream = tables.codes is not None and (
        sparse or tables.p > 1 or X.shape[1] <= _SHORT_DENSE_ROW)
    # a sparse X streams only into buffers small enough for four or more
    # (about 2 MB each at most): with fewer, larger ones each scatter misses
    # the inner caches, and the gather loop (which prefetches its rows) was
    # faster: debian-tfidf, CountSketch s = 13 and 20 (3 and 2 chunks), 0.75x
    # and 0.65x the streaming time; 200000 x 5000 at 20 per row, s = 80,
    # 0.49x; 1M x 2000 at 3 per row, s = 200, 0.83x (s = 100, five chunks,
    # stays streaming: gather took 1.85x)
    least = _LEAST_SPARSE_LEFT_CHUNKS if sparse else _LEAST_CHUNKS
    nchunks = _stream_chunks(_work(X), out.shape, out.dtype, least) if stream else 0
    if nchunks:
        bounds = _chunk_bounds(X, nchunks)
        args = (tables.codes, tables.p, tables.scale)
        # one chunk streams straight into the output
        single = nchunks == 1
        bufs = out[np.newaxis] if single else np.empty((nchunks,) + out.shape, dtype=out.dtype)
        if sparse:
            K.left_csr_chunks_hash(*args, X.indptr, X.indices, X.data, bounds, bufs,
                                   single and accumulate)
        else:
            K.left_dense_chunks_hash(*args, X, bounds, bufs, single and accumulate)
        if not single:
            K.sum_chunks(bufs, out, accumulate)
    elif sparse:
        K.left_csr(*tables.csr, X.indptr, X.indices, X.data, out, accumulate)
    else:
        K.left_dense(*tables.csr, X, out, accumulate)


def _right(tables, X, out, accumulate):
    """out (+)= X S^T (rows x s) for a row-major X: each output row is its
    row of X scattered through the columns of S."""
    from ._jit import threads_for

    with threads_for(_work(X) + out.size):
        _right_loops(tables, X, out, accumulate)


def _right_loops(tables, X, out, accumulate):
    from ._jit import apply as K

    if tables.codes is not None:
        args = (tables.codes, tables.p, tables.scale, out, accumulate)
        if sp.issparse(X):
            K.right_csr_hash(X.indptr, X.indices, X.data, *args)
        else:
            K.right_dense_hash(X, *args)
    elif sp.issparse(X):
        K.right_csr_table(X.indptr, X.indices, X.data, *tables.csc, out, accumulate)
    else:
        K.right_dense(X, *tables.csc, out, accumulate)


class OSNAP(_TableSketch):
    """OSNAP sparse embedding (Nelson & Nguyen, 2013).

    Column ``j`` has ``nnz_per_col = p`` nonzeros ``+-1/sqrt(p)`` in ``p``
    distinct rows, one in each block ``[floor(b s/p), floor((b+1) s/p))`` of
    rows, at a position and with a sign given by the hash of ``(seed, j p + b)``.

    Parameters
    ----------
    sketch_size : int
        Number of rows ``s``.
    input_dim : int
        Number of columns ``d``.
    nnz_per_col : int, optional
        Nonzeros per column ``p``, ``1 <= p <= sketch_size``; default
        ``min(4, sketch_size)``.
    rng : None, int or numpy.random.Generator
        Seed.

    Notes
    -----
    Applying it costs O(p nnz(A)) and it needs no O(d) memory to exist.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> S = sketchlab.OSNAP(8, 100, nnz_per_col=2, rng=0)
    >>> bool((np.count_nonzero(S.toarray(), axis=0) == 2).all())
    True
    """

    kind = "osnap"

    def __init__(self, sketch_size: int, input_dim: int, *, nnz_per_col: int | None = None,
                 rng: None | int | np.random.Generator = None) -> None:
        super().__init__(sketch_size, input_dim, rng=rng)
        if self._s > _MAX_HASH_ROWS:
            raise ValueError(
                f"sketch_size must be <= 2**30 for the hashing kinds, got {self._s}"
            )
        if nnz_per_col is None:
            nnz_per_col = min(4, self._s)
        self._p = check_int(nnz_per_col, "nnz_per_col", 1, self._s)
        self._key = np.uint64(_hash.derive_key(self._seed, _hash.STREAM_HASHING))

    @property
    def nnz_per_col(self) -> int:
        return self._p

    def _params(self):
        return (self._p,)

    def _repr_params(self):
        return (("nnz_per_col", self._p),)

    def _make_tables(self, j0, j1):
        from ._jit import threads_for
        from ._jit.hashing import hashing_codes

        b = j1 - j0
        p = self._p
        codes = np.empty(b * p, dtype=np.int32)  # fails fast when memory is short
        with threads_for(b * p):
            hashing_codes(self._key, self._s, p, j0, b, codes)
        return _Tables(self._s, codes=codes, p=p, scale=1.0 / np.sqrt(p))

    def _tables_at(self, columns):
        from ._jit import threads_for
        from ._jit.hashing import hashing_codes_at

        p = self._p
        codes = np.empty(columns.shape[0] * p, dtype=np.int32)
        with threads_for(codes.shape[0]):
            hashing_codes_at(self._key, self._s, p, np.ascontiguousarray(columns, np.int64),
                             codes)
        return _Tables(self._s, codes=codes, p=p, scale=1.0 / np.sqrt(p))


class CountSketch(OSNAP):
    """CountSketch (Clarkson & Woodruff, 2013): one ``+-1`` per column.

    Column ``j`` has its nonzero in row ``bucket(hash(seed, j), s)`` with sign
    ``sign(hash(seed, j))`` (see ``sketchlab._hash``); it is OSNAP with one
    nonzero per column.

    Parameters
    ----------
    sketch_size : int
        Number of rows ``s``.
    input_dim : int
        Number of columns ``d``.
    rng : None, int or numpy.random.Generator
        Seed.

    Notes
    -----
    ``S @ A``, ``A @ S.T`` and :func:`sketch_both` cost O(nnz(A)) plus the
    output, in one pass over the nonzeros of A.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> S = sketchlab.CountSketch(3, 5, rng=0)
    >>> S.shape
    (3, 5)
    >>> bool(np.allclose(S @ np.eye(5), S.toarray()))
    True
    """

    kind = "countsketch"

    def __init__(self, sketch_size: int, input_dim: int, *,
                 rng: None | int | np.random.Generator = None) -> None:
        super().__init__(sketch_size, input_dim, nnz_per_col=1, rng=rng)

    def _repr_params(self):
        return ()


def _read_only(*arrays):
    for arr in arrays:
        arr.flags.writeable = False


class _Sampler(_TableSketch):
    """Row sampling: row ``t`` of S is ``weights[t] * e_{indices[t]}^T``."""

    _read_only_attrs: tuple[str, ...] = ("_indices", "_weights")

    def __setstate__(self, state):
        # unpickled arrays come back writable: an operator stays immutable
        self.__dict__.update(state)
        _read_only(*(getattr(self, name) for name in self._read_only_attrs))

    @property
    def indices(self) -> NDArray[np.int64]:
        """Sampled input indices, one per row of S (read-only)."""
        return self._indices

    @property
    def weights(self) -> NDArray[np.float64]:
        """Scale of each row of S (read-only)."""
        return self._weights

    def _finish(self, indices, weights):
        self._indices = np.ascontiguousarray(indices, dtype=np.int64)
        self._weights = np.ascontiguousarray(weights, dtype=np.float64)
        _read_only(self._indices, self._weights)

    def _make_tables(self, j0, j1):
        idx = self._indices
        sel = np.flatnonzero((idx >= j0) & (idx < j1))
        cols = idx[sel] - j0
        order = np.argsort(cols, kind="stable")
        counts = np.bincount(cols, minlength=j1 - j0)
        col_ptr = np.zeros(j1 - j0 + 1, dtype=np.int64)
        np.cumsum(counts, out=col_ptr[1:])
        rows = sel[order].astype(np.int32)
        vals = self._weights[sel[order]]
        return _Tables(self._s, csc=(col_ptr, rows, vals))

    def _tables_at(self, columns):
        idx = self._indices
        sel = np.flatnonzero(np.isin(idx, columns))
        cols = np.searchsorted(columns, idx[sel])
        order = np.argsort(cols, kind="stable")
        col_ptr = np.zeros(columns.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(cols, minlength=columns.shape[0]), out=col_ptr[1:])
        return _Tables(self._s, csc=(col_ptr, sel[order].astype(np.int32),
                                     self._weights[sel[order]]))


class UniformSampler(_Sampler):
    """Uniform row sampling, ``S[t] = sqrt(d/s) e_{i_t}^T``.

    Parameters
    ----------
    sketch_size : int
        Number of samples ``s`` (``<= d`` when ``replace=False``).
    input_dim : int
        Size ``d`` of the population.
    replace : bool, default True
        i.i.d. draws (index ``t`` from the hash of ``(seed, t)``) or a sample
        without replacement (sorted; drawn with ``numpy.random.Generator``
        seeded by the operator's seed).
    rng : None, int or numpy.random.Generator

    Examples
    --------
    >>> import sketchlab
    >>> S = sketchlab.UniformSampler(3, 10, replace=False, rng=0)
    >>> len(set(S.indices.tolist()))
    3
    """

    kind = "uniform"

    def __init__(self, sketch_size: int, input_dim: int, *, replace: bool = True,
                 rng: None | int | np.random.Generator = None) -> None:
        super().__init__(sketch_size, input_dim, rng=rng)
        if not isinstance(replace, (bool, np.bool_)):
            raise TypeError(f"replace must be a bool, got {replace!r}")
        self._replace = bool(replace)
        if not self._replace and self._s > self._d:
            raise ValueError(
                f"sketch_size must be <= input_dim {self._d} when replace=False, got {self._s}"
            )
        if self._replace:
            key = _hash.derive_key(self._seed, _hash.STREAM_SAMPLING)
            idx = _hash.bucket_np(_hash.hash64_np(key, np.arange(self._s)), self._d)
        else:
            gen = np.random.default_rng(self._seed)
            idx = np.sort(gen.choice(self._d, size=self._s, replace=False))
        self._finish(idx, np.full(self._s, np.sqrt(self._d / self._s)))

    @property
    def replace(self) -> bool:
        return self._replace

    def _params(self):
        return (self._replace,)

    def _repr_params(self):
        return (("replace", self._replace),)


class LeverageScoreSampler(_Sampler):
    """i.i.d. sampling with probabilities proportional to given scores.

    Row ``t`` of S is ``e_{i_t}^T / sqrt(s p_{i_t})`` with ``p = scores /
    sum(scores)``; index ``t`` is drawn by inverting the cumulative
    distribution at the uniform number ``hash(seed, t)``.

    Parameters
    ----------
    sketch_size : int
        Number of samples ``s``.
    input_dim : int or None
        Length of ``scores`` (checked; None takes it from ``scores``).
    scores : array_like of shape (d,)
        Non-negative, finite, not all zero (e.g. :func:`leverage_scores`).
    rng : None, int or numpy.random.Generator

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> S = sketchlab.LeverageScoreSampler(4, scores=[0.0, 1.0, 1.0, 0.0], rng=0)
    >>> sorted(set(S.indices.tolist())) in ([1], [2], [1, 2])
    True
    """

    kind = "leverage"
    _read_only_attrs = ("_indices", "_weights", "_probabilities")

    def __init__(self, sketch_size: int, input_dim: int | None = None, *, scores: ArrayLike,
                 rng: None | int | np.random.Generator = None) -> None:
        scores = np.asarray(scores)
        if scores.dtype == object or scores.dtype.kind not in "biuf":
            raise TypeError(f"scores must be a real numeric array, got dtype {scores.dtype}")
        scores = scores.astype(np.float64)
        if scores.ndim != 1 or scores.shape[0] == 0:
            raise ValueError(f"scores must be a non-empty 1-D array, got shape {scores.shape}")
        if input_dim is None:
            input_dim = scores.shape[0]
        super().__init__(sketch_size, input_dim, rng=rng)
        if scores.shape[0] != self._d:
            raise ValueError(
                f"scores must have length input_dim={self._d}, got {scores.shape[0]}"
            )
        if not np.isfinite(scores).all() or (scores < 0).any():
            raise ValueError("scores must be finite and non-negative")
        peak = scores.max()
        if not peak > 0:
            raise ValueError("scores must not all be zero")
        # scale by a power of two (exact) so that the sum cannot overflow
        scores = np.ldexp(scores, -np.frexp(peak)[1])
        total = scores.sum()
        self._probabilities = scores / total
        cdf = np.cumsum(scores)
        key = _hash.derive_key(self._seed, _hash.STREAM_SAMPLING)
        u = _hash.uniform_np(_hash.hash64_np(key, np.arange(self._s))) * cdf[-1]
        idx = np.searchsorted(cdf, u, side="right")
        last = np.flatnonzero(scores)[-1]
        idx = np.minimum(idx, last)
        self._finish(idx, 1.0 / np.sqrt(self._s * self._probabilities[idx]))
        _read_only(self._probabilities)
        # a digest, not hash(): the same scores give equal operators in any process
        self._scores_digest = hashlib.sha256(self._probabilities.tobytes()).hexdigest()

    @property
    def probabilities(self) -> NDArray[np.float64]:
        """Sampling probabilities ``p`` (read-only)."""
        return self._probabilities

    def _params(self):
        return (self._scores_digest,)

    @classmethod
    def from_matrix(cls, A: MatrixLike, sketch_size: int, *, axis: int = 0, k: int | None = None,
                    method: str = "exact",
                    rng: None | int | np.random.Generator = None) -> LeverageScoreSampler:
        """Sampler on the leverage scores of ``A``.

        ``axis=0`` samples rows of ``A`` (row leverage scores, operator of
        shape ``(s, m)``); ``axis=1`` samples columns (shape ``(s, n)``).
        ``k`` asks for rank-k scores and ``method="sketch"`` for the fast
        approximation; see :func:`sketchlab.leverage_scores`.  ``rng`` seeds
        the approximation (when used) and then the sampler.

        Examples
        --------
        >>> import numpy as np, sketchlab
        >>> A = np.random.default_rng(0).standard_normal((100, 5))
        >>> S = sketchlab.LeverageScoreSampler.from_matrix(A, 20, rng=0)
        >>> S.shape
        (20, 100)
        """
        from ._leverage import leverage_scores
        from ._validation import as_generator

        if method == "exact":  # no randomness in the scores: rng seeds the sampler alone
            scores, gen = leverage_scores(A, axis=axis, k=k, method=method), rng
        else:
            gen = as_generator(rng)
            scores = leverage_scores(A, axis=axis, k=k, method=method, rng=gen)
        if not scores.sum() > 0:
            raise ValueError("A is all zero: it has no leverage scores to sample by")
        return cls(sketch_size, scores.shape[0], scores=scores, rng=gen)


class IndexSelection(_Sampler):
    """Selection of given indices: row t of S is ``e_{indices[t]}^T``.

    ``S @ A`` is ``A[indices]`` and ``A @ S.T`` is ``A[:, indices]`` (weights
    1, no randomness): the linear map that gathers the rows or columns a CUR
    decomposition keeps, as an operator, so that a single pass (in blocks, or
    over the chunks of a dask array) can gather them beside other sketches.

    Parameters
    ----------
    indices : array_like of int, shape (s,)
        In ``[0, input_dim)``; repeats allowed.
    input_dim : int

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> P = sketchlab.IndexSelection([2, 0], 4)
    >>> P @ np.arange(8.0).reshape(4, 2)
    array([[4., 5.],
           [0., 1.]])
    """

    kind = "selection"

    def __init__(self, indices: ArrayLike, input_dim: int) -> None:
        idx = np.asarray(indices)
        if idx.ndim != 1 or idx.size == 0 or (idx.dtype.kind not in "iu"):
            raise ValueError(
                f"indices must be a non-empty 1-D array of ints, got dtype {idx.dtype} and "
                f"shape {idx.shape}"
            )
        super().__init__(idx.size, input_dim, rng=0)
        if idx.min() < 0 or idx.max() >= self._d:
            raise ValueError(
                f"indices must lie in [0, {self._d}), got values in [{idx.min()}, {idx.max()}]"
            )
        self._finish(idx, np.ones(idx.size))
        self._digest = hashlib.sha256(self._indices.tobytes()).hexdigest()

    def _params(self):
        return (self._digest,)

    def __repr__(self) -> str:
        return f"IndexSelection(<{self._s} indices>, {self._d})"


# ---------------------------------------------------------------------------
# Dense kinds: Gaussian, SRHT
# ---------------------------------------------------------------------------


def gemm_add(target, Y, G):
    """target += Y @ G in place by BLAS (beta = 1) when ``target`` is C- or
    F-contiguous and the dtypes agree; False otherwise."""
    import scipy.linalg as sla

    if target.flags.c_contiguous and not target.flags.f_contiguous:
        return gemm_add(target.T, G.T, Y.T)
    if not target.flags.f_contiguous or not (Y.dtype == G.dtype == target.dtype):
        return False
    gemm = sla.blas.get_blas_funcs("gemm", (target,))
    a, trans_a = (Y, 0) if Y.flags.f_contiguous else (Y.T, 1)
    b, trans_b = (G, 0) if G.flags.f_contiguous else (G.T, 1)
    if not (a.flags.f_contiguous and b.flags.f_contiguous):
        return False
    res = gemm(1.0, a, b, beta=1.0, c=target, trans_a=trans_a, trans_b=trans_b, overwrite_c=1)
    if not np.shares_memory(res, target):  # pragma: no cover - f2py copied after all
        target[...] = res
    return True


def _add_product(target, Y, G, budget=_PIECE_ENTRIES):
    """target += Y @ G (Y of shape (h, w), dense or sparse; G dense (w, s))
    with temporaries of at most ``budget`` entries."""
    h, s = target.shape
    if not sp.issparse(Y):
        if gemm_add(target, Y, G):
            return
        step = max(1, budget // max(1, s))
        for r0 in range(0, h, step):
            target[r0:r0 + step] += Y[r0:r0 + step] @ G
        return
    step = max(1, budget // max(1, h))  # columns of G (rows of the sketch) per piece
    for t0 in range(0, s, step):
        target[:, t0:t0 + step] += np.asarray(Y @ G[:, t0:t0 + step])


class _DenseSketch(SketchOperator):
    """Kinds applied as dense blocks of columns times A (BLAS / scipy)."""

    def _apply(self, A, axis, offset, out, accumulate):
        return self._apply_blocks([A], axis, offset, [out], accumulate)[0]

    def _apply_many(self, arrays, axis, offset):
        return self._apply_blocks(arrays, axis, offset, [None] * len(arrays), False)

    def _apply_blocks(self, arrays, axis, offset, outs, accumulate):
        """``S X`` (or ``X S^T``) for validated 2-D arrays of the same
        ``shape[axis]``, written into (onto) ``outs``, generating each block
        of about 8 MB of S's columns ONCE for all of them.  In the form
        ``target += Y @ G`` with ``G`` a block of columns of S (as rows):
        ``target = out, Y = X`` (axis 1), or ``target = out^T, Y = X^T``."""
        jobs = []
        for A, out in zip(arrays, outs):
            if sp.issparse(A):  # slices of the block dimension stay cheap
                want = "csr" if axis == 0 else "csc"
                if A.format != want:
                    A = A.asformat(want)
            if out is None:
                out = np.zeros(self._result_shape(A, axis), dtype=result_dtype(A.dtype))
            elif not accumulate:
                out[...] = 0
            jobs.append((_transpose(A) if axis == 0 else A, out.T if axis == 0 else out,
                         out))
        b = arrays[0].shape[axis]
        step = max(1, _DENSE_BLOCK_ENTRIES // self._s)
        for k0 in range(0, b, step):
            k1 = min(b, k0 + step)
            # generated on one thread: BLAS multiplies on all of them, and a
            # Numba pool woken between BLAS calls only competes with it
            G64 = self._columns(offset + k0, offset + k1, serial=True)
            for Y, target, _ in jobs:
                _add_product(target, Y[:, k0:k1], G64.astype(target.dtype, copy=False))
        return [out for _, _, out in jobs]


class GaussianSketch(_DenseSketch):
    """Gaussian projection with i.i.d. N(0, 1/s) entries.

    Entry ``(t, j)`` is a normal number of the hash stream (see
    ``sketchlab._jit.gaussian``), so any block of columns is regenerated on
    its own; application multiplies blocks of about 8 MB of S by A (BLAS, or
    scipy's sparse-dense product).

    Parameters
    ----------
    sketch_size, input_dim : int
    rng : None, int or numpy.random.Generator

    Notes
    -----
    Costs O(s nnz(A)) plus O(s d) to generate the entries.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> S = sketchlab.GaussianSketch(2000, 3, rng=0)
    >>> bool(np.allclose(S.toarray().T @ S.toarray(), np.eye(3), atol=0.1))
    True
    """

    kind = "gaussian"

    def __init__(self, sketch_size: int, input_dim: int, *,
                 rng: None | int | np.random.Generator = None) -> None:
        super().__init__(sketch_size, input_dim, rng=rng)
        self._key = np.uint64(_hash.derive_key(self._seed, _hash.STREAM_GAUSSIAN))

    def _columns(self, j0, j1, serial=False):
        from ._jit import threads_for
        from ._jit.gaussian import gaussian_columns

        out = np.empty((j1 - j0, self._s))
        with threads_for(0 if serial else out.size):
            gaussian_columns(self._key, self._s, j0, out)
        return out


class SRHT(_DenseSketch):
    """Subsampled randomized Hadamard transform ``S = P H D / sqrt(s)``.

    D holds random signs (hash of ``(seed, j)``), H is the unnormalised
    Walsh-Hadamard matrix of order ``d' = 2**ceil(log2 d)`` (the input is
    zero-padded implicitly) and P keeps ``s`` distinct rows of ``H`` drawn
    uniformly (without replacement, sorted) with a generator seeded by the
    operator's seed.

    Parameters
    ----------
    sketch_size : int
        ``s <= d'``.
    input_dim : int
    rng : None, int or numpy.random.Generator

    Notes
    -----
    Applied to the whole input with an in-place fast Walsh-Hadamard transform:
    O(n d' log d') for a d x n input.  A block (``offset=``) is applied with
    its explicit columns.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> S = sketchlab.SRHT(4, 6, rng=0)
    >>> bool(np.allclose(S @ np.eye(6), S.toarray()))
    True
    """

    kind = "srht"

    def __init__(self, sketch_size: int, input_dim: int, *,
                 rng: None | int | np.random.Generator = None) -> None:
        super().__init__(sketch_size, input_dim, rng=rng)
        self._dpad = 1 << max(0, int(self._d - 1).bit_length())
        if self._s > self._dpad:
            raise ValueError(
                f"sketch_size must be <= {self._dpad} (input_dim rounded up to a power of "
                f"two) for an SRHT, got {self._s}"
            )
        self._sign_key = _hash.derive_key(self._seed, _hash.STREAM_SIGNS)
        gen = np.random.default_rng(self._seed)
        self._rows = np.sort(gen.choice(self._dpad, size=self._s, replace=False)).astype(np.int64)
        _read_only(self._rows)
        self._scale = 1.0 / np.sqrt(self._s)

    def __setstate__(self, state):
        self.__dict__.update(state)
        _read_only(self._rows)

    @property
    def padded_dim(self) -> int:
        """Order ``d'`` of the Hadamard matrix."""
        return self._dpad

    @property
    def sampled_rows(self) -> NDArray[np.int64]:
        """Rows of ``H`` kept by P (read-only)."""
        return self._rows

    def _signs(self, j0, j1):
        return _hash.sign_np(_hash.hash64_np(self._sign_key, np.arange(j0, j1)))

    def _columns(self, j0, j1, serial=False):
        from ._jit import threads_for
        from ._jit.hadamard import srht_columns

        out = np.empty((j1 - j0, self._s))
        with threads_for(0 if serial else out.size):
            srht_columns(self._signs(j0, j1), self._rows, self._scale, j0, out)
        return out

    def _apply(self, A, axis, offset, out, accumulate):
        if offset != 0 or A.shape[axis] != self._d:
            return super()._apply(A, axis, offset, out, accumulate)
        res = self._transform(A, axis)
        return res if out is None else _deliver(out, res, accumulate)

    def _apply_many(self, arrays, axis, offset):
        if offset != 0 or arrays[0].shape[axis] != self._d:
            return super()._apply_many(arrays, axis, offset)
        return [self._transform(A, axis) for A in arrays]

    def _transform(self, A, axis):
        """S A or A S^T of the whole input by the fast Walsh-Hadamard transform."""
        from ._jit import threads_for

        with threads_for(_work(A) + self._s * A.shape[1 - axis]):
            return self._transform_loops(A, axis)

    def _transform_loops(self, A, axis):
        from ._jit import hadamard as H

        signs = self._signs(0, self._d)
        dtype = result_dtype(A.dtype)
        args = (signs, self._rows, self._scale, self._dpad)
        if sp.issparse(A):
            # the loop transforms compressed vectors: columns for S A, rows for A S^T
            want = "csc" if axis == 0 else "csr"
            A = A.asformat(want)
            out = np.empty((A.shape[1 - axis], self._s), dtype=dtype)
            H.srht_sparse_vectors(A.indptr, A.indices, A.data, *args, out)
            return out.T if axis == 0 else out
        # a C-ordered matrix has its rows contiguous: transform rows (A S^T, or
        # S A for F order through A^T) or gathered columns (S A for C order)
        rows_contiguous = A.flags.c_contiguous
        if axis == 0 and rows_contiguous:
            out = np.empty((self._s, A.shape[1]), dtype=dtype)
            H.srht_dense_cols(A, *args, out)
            return out
        if axis == 0:
            out = np.empty((A.shape[1], self._s), dtype=dtype)
            H.srht_dense_rows(A.T, *args, out)
            return out.T
        if rows_contiguous:
            out = np.empty((A.shape[0], self._s), dtype=dtype)
            H.srht_dense_rows(A, *args, out)
            return out
        out = np.empty((self._s, A.shape[0]), dtype=dtype)
        H.srht_dense_cols(A.T, *args, out)
        return out.T


# ---------------------------------------------------------------------------
# Composition and two-sided application
# ---------------------------------------------------------------------------


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
            from ._config import serial_blas

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
        ns each).  Measured on debian-tfidf (2.07M nonzeros): the probes, 10
        x 40 over a CountSketch, 8 ms in pieces against 15 ms in one pass;
        fast_sp_svd's range sketch, 20 x 80 over an OSNAP with p = 4, 39 ms
        against 23 ms.  (56 ms in pieces for the probes with BLAS threads
        fighting Numba's between them: hence one BLAS thread.)"""
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
        from ._jit import apply as K
        from ._jit import threads_for

        cols = X.shape[1] if along_rows else X.shape[0]  # rows of what the loop writes
        target = out.T if axis == 0 else out  # (cols, s)
        if along_rows:
            nchunks = _stream_chunks(X.nnz, (cols, s), np.float64)
            if not nchunks:
                return None
            gt = outer._columns(0, outer.input_dim)  # (s0, s): G^T
            bounds = _chunk_bounds(X, nchunks)
            bufs = np.empty((nchunks, cols, s))
            with threads_for(X.nnz * s):
                K.left_csr_chunks_hash_dense(tables.codes, tables.p, tables.scale, gt, X.indptr,
                                             X.indices, X.data, bounds, bufs)
                K.sum_chunks(bufs, target, accumulate)
            return out
        gt = outer._columns(0, outer.input_dim)
        W = np.empty((hashed, s))  # the explicit columns of G H, p rows of G^T each
        res = target if _rows_contiguous(target) else np.empty((cols, s))
        with threads_for(X.nnz * s):
            K.hash_dense_rows(tables.codes, tables.p, tables.scale, gt, W)
            K.right_csr_dense(X.indptr, X.indices, X.data, W, res, accumulate and res is target)
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


def compose(outer: SketchOperator, inner: SketchOperator) -> ComposedSketch:
    """The operator ``outer @ inner`` (first ``inner``, then ``outer``).

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> S = sketchlab.compose(sketchlab.GaussianSketch(5, 40, rng=1),
    ...                       sketchlab.OSNAP(40, 1000, rng=2))
    >>> S.shape
    (5, 1000)
    """
    return ComposedSketch(outer, inner)


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
    from ._jit import threads_for

    with threads_for(A.nnz + target.size):
        _both_loops(left, A, right, target, into, transposed)
    if in_place:
        return out
    result = target.T if transposed else target
    return result if out is None else _deliver(out, result, accumulate)


def _both_loops(left, A, right, target, into, transposed):
    from ._jit import apply as K

    shape, dtype = target.shape, target.dtype
    nchunks = _stream_chunks(A.nnz, shape, dtype)
    if right.codes is not None and (left.codes is None or nchunks == 0):
        # buffers too large (or a sampler on the left): each output row
        # gathers the rows of A it needs, through S2's 4-byte codes
        K.both_csr_rows_hash(*left.csr, A.indptr, A.indices, A.data, right.codes, right.p,
                             right.scale, target, into)
    elif left.codes is None or right.codes is None or nchunks == 0:
        # samplers: each output row gathers the rows of A it needs, so a
        # sampler reads only its sampled rows
        K.both_csr_rows(*left.csr, A.indptr, A.indices, A.data, *right.csc, target, into)
    else:
        # hashing kinds touch every row: stream A once in its row order
        bounds = _chunk_bounds(_transpose(A) if transposed else A, nchunks)
        single = nchunks == 1
        bufs = target[np.newaxis] if single else np.empty((nchunks,) + shape, dtype=dtype)
        K.both_csr_chunks_hash(
            left.codes, left.p, left.scale, A.indptr, A.indices, A.data,
            right.codes, right.p, right.scale, bounds, bufs, single and into,
        )
        if not single:
            K.sum_chunks(bufs, target, into)


# Streaming loops (one output buffer per input chunk): at most this many
# chunks, each of at least this many stored entries, and all buffers together
# at most this many bytes, so that they stay in cache and never cost much
# memory (a large output uses the loops that own output rows instead).
_MAX_CHUNKS = 8
_MIN_CHUNK_NNZ = 1 << 16
_MAX_CHUNK_BYTES = 1 << 23
_LEAST_CHUNKS = 2  # fewer (large) buffers than this: the gathering loops
_LEAST_SPARSE_LEFT_CHUNKS = 4  # see _left_loops


def _stream_chunks(work, shape, dtype, least=_LEAST_CHUNKS):
    """Number of input chunks of a streaming loop with one output buffer of
    ``shape`` per chunk, 0 when the buffers would not fit the budget with at
    least ``least`` chunks (or all the chunks small work wants).  Depends
    only on the problem, never on the thread count, so results do not
    either."""
    per_buffer = shape[0] * shape[1] * np.dtype(dtype).itemsize
    wanted = min(_MAX_CHUNKS, max(1, work // _MIN_CHUNK_NNZ))
    fits = _MAX_CHUNK_BYTES // max(per_buffer, 1)
    nchunks = min(wanted, fits)
    return int(nchunks) if nchunks >= min(wanted, least) else 0


def _chunk_bounds(X, nchunks):
    """Row boundaries of ``nchunks`` chunks of a row-major X with about equal
    numbers of stored entries."""
    rows = X.shape[0]
    if sp.issparse(X):
        bounds = np.searchsorted(X.indptr, np.linspace(0, X.indptr[-1], nchunks + 1))
    else:
        bounds = np.linspace(0, rows, nchunks + 1).astype(np.int64)
    bounds[0], bounds[-1] = 0, rows
    return bounds.astype(np.int64)
