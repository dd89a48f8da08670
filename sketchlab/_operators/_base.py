"""The base class of the sketching operators, its transpose view, and the
views of a validated sparse matrix that the other operator modules share
(transposes and row slices on the same arrays, without scipy's checks)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from .._config import sparse as sp  # scipy.sparse, imported on first use
from .._engine.views import rows as _rows
from .._engine.views import transpose as _transpose
from .._validation import (
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

    from .._validation import MatrixLike


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
# toarray() refuses to materialize more entries than this (16 GiB of float64).
_MAX_DENSE_ENTRIES = 1 << 31


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

    What a kind can do is said by class attributes (``sketchlab._registry``
    builds its table of kinds from them; algorithms read them from the
    operator they are given, never from a list of names):

    - ``kind``: the name under which ``make_sketch`` builds it (None: not
      built by name); ``description``: one line for the registry.
    - ``one_pass``: :func:`sketch_both` with this kind on both sides reads a
      sparse A once, through its nonzeros, with no intermediate (the hashing
      and sampling kinds); otherwise it goes through ``S1 A``, and an
      algorithm that applies the operator to several arrays should use
      :meth:`apply_many` so that the random entries are generated once.
    - ``open_dim``: it can be built with an input dimension not known in
      advance (2**31 - 1 for row batches of unknown number) at no O(d) cost.
    - ``needs_scores``: built from sampling scores, not from sizes alone.
    - ``splittable``: a sketch of size 2s of the kind is two independent
      sketches of size s, its first and last s rows (``fast_gmr(tol=)``).
    - ``svd``: usable as ``range_sketch=`` / ``core_sketch=`` of the
      single-pass SVDs; ``gmr``: usable as ``fast_gmr(sketch=...)``.

    and by class methods, where it depends on sizes: :meth:`max_sketch_size`
    (the largest sketch of an input dimension), :meth:`halves` (the
    ``splittable`` kinds' pair of independent sketches in one operator),
    :meth:`embedding_params` (the parameters of a subspace embedding for
    the least-squares solvers).
    """

    kind: str | None = None
    description: str = ""
    one_pass: bool = False
    open_dim: bool = True
    needs_scores: bool = False
    splittable: bool = False
    svd: bool = True
    gmr: bool = True
    _table_kind = False  # True for the kinds applied through nonzero tables
    __array_ufunc__ = None  # let ``ndarray @ op`` defer to op.__rmatmul__

    _seed: int | tuple[Any, ...]  # a tuple of the operands' seeds for a composition

    def __init__(self, sketch_size: int, input_dim: int, *,
                 rng: None | int | np.random.Generator = None) -> None:
        self._d = check_int(input_dim, "input_dim", 1, _MAX_DIM)
        self._s = check_int(sketch_size, "sketch_size", 1, _MAX_DIM)
        self._seed = check_random_state(rng)

    # -- what the kind can do, by size ----------------------------------------

    @classmethod
    def max_sketch_size(cls, input_dim: int) -> int:
        """The largest sketch size that makes sense for ``input_dim`` (a
        sketch as large as its input compresses nothing)."""
        return int(input_dim)

    @classmethod
    def halves(cls, half: int, input_dim: int, rng: Any) -> SketchOperator:
        """For a ``splittable`` kind: an operator of ``2 * half`` rows whose
        first and last ``half`` rows are two independent sketches of the
        kind (each scaled by 1/sqrt(2)).  Rows drawn i.i.d. by default."""
        if not cls.splittable or cls.needs_scores:
            raise TypeError(f"{cls.__name__} has no halves built from sizes alone")
        return cls(2 * half, input_dim, rng=rng)

    @classmethod
    def embedding_params(cls, sketch_size: int) -> dict[str, Any]:
        """The parameters (beyond the sizes) of the kind as a subspace
        embedding for the least-squares solvers (``lstsq``)."""
        return {}

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
    def __matmul__(self, A: SketchOperator) -> SketchOperator: ...  # their composition
    @overload
    def __matmul__(self, A: ArrayLike) -> NDArray[np.floating]: ...  # or a sparse matrix

    def __matmul__(self, A: MatrixLike) -> SketchOperator | NDArray[np.floating]:
        if isinstance(A, SketchOperator):
            return _COMPOSE[0](self, A)
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
        A = as_matrix(A, "A", allow_1d=True, finite=check_finite)
        return self._apply_validated(A, check_axis(axis), offset, out, accumulate)

    def _apply_validated(self, A, axis, offset, out, accumulate):
        """:meth:`apply` of an ``A`` that ``as_matrix`` returned (no O(nnz) check)."""
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
        return self._apply_many_validated(checked, axis, offset)

    def _apply_many_validated(self, checked, axis, offset):
        """:meth:`apply_many` of arrays that ``as_matrix`` returned."""
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
            return [self._apply_validated(A, axis, offset, None, False) for A in checked]
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



def _empty_apply(shape, dtype, out, accumulate):
    """``S A`` of an ``A`` without entries: every kind gives the same zeros."""
    if out is None:
        return np.zeros(shape, dtype=dtype)
    if not accumulate:
        out[...] = 0
    return out


# ``compose``, set by ``_compose`` (which the package imports with this
# module): ``S @ T`` of two operators is their composition, and the base
# class does not import the module of the composite classes built on it
_COMPOSE: list[Any] = []


def register_compose(compose: Any) -> None:
    """Set the function behind ``S @ T`` of two operators (``_compose.compose``)."""
    _COMPOSE[:] = [compose]


def _read_only(*arrays):
    for arr in arrays:
        arr.flags.writeable = False
