"""Input checks shared by every public function.

Each check names the parameter, the constraint and the value received, and
runs before any kernel does.
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import numpy as np

from ._config import sparse as sp  # scipy.sparse, imported on first use
from ._engine.checks import entries_outside_or_nonfinite, nonfinite_count, pointers_valid

if TYPE_CHECKING:
    from typing import TypeAlias

    from numpy.typing import DTypeLike

    # What the public functions take as a matrix: an array_like (numpy.typing.ArrayLike)
    # or a scipy.sparse matrix or array.  scipy ships no type information, so to a type
    # checker its classes are Any, and a union with ArrayLike would reject every use of
    # the sparse branch: Any it is, named for the reader.
    MatrixLike: TypeAlias = Any
    # A dense ndarray or a scipy.sparse matrix or array, as as_matrix returns it.
    Matrix: TypeAlias = Any
    # The rng= of every public function (Scientific Python's SPEC 7); a legacy
    # RandomState is accepted too, for scikit-learn's random_state.
    RNGLike: TypeAlias = "None | int | np.random.Generator | np.random.RandomState"

_MAX_SEED = 2**64


def check_random_state(rng: RNGLike, name: str = "rng") -> int:
    """Return a 64-bit seed (Python int) drawn from ``rng``.

    ``rng`` follows Scientific Python's SPEC 7 (seeding): None (fresh
    entropy), a non-negative int, or a
    ``numpy.random.Generator``; a legacy ``RandomState`` is accepted too so
    that scikit-learn's ``random_state`` can be passed through.  A generator is
    advanced, so two operators built from one generator are independent.
    """
    if rng is None:
        return int(np.random.default_rng().integers(0, 2**63, dtype=np.int64))
    if isinstance(rng, (bool, np.bool_)):
        raise TypeError(f"{name} must be None, an int or a numpy.random.Generator, got {rng!r}")
    if isinstance(rng, numbers.Integral):
        rng = int(rng)
        if not 0 <= rng < _MAX_SEED:
            raise ValueError(f"{name} must be an int in [0, 2**64), got {rng!r}")
        return rng
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(0, 2**63, dtype=np.int64))
    if isinstance(rng, np.random.RandomState):
        return int(rng.randint(0, 2**63 - 1, dtype=np.int64))
    raise TypeError(
        f"{name} must be None, an int or a numpy.random.Generator, got {type(rng).__name__}"
    )


def as_generator(rng: RNGLike, name: str = "rng") -> np.random.Generator:
    """A ``numpy.random.Generator`` from None, an int, a Generator or a
    RandomState; errors name the parameter ``name``."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, np.random.RandomState):
        return np.random.default_rng(check_random_state(rng, name))
    if rng is not None:
        check_random_state(rng, name)
    return np.random.default_rng(rng)


def check_int(value: Any, name: str, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an int in ``[low, high]`` (bounds optional)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an int, got {value!r}")
    try:
        ivalue = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an int, got {value!r}") from None
    if (low is not None and ivalue < low) or (high is not None and ivalue > high):
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise ValueError(f"{name} must be an int in [{lo}, {hi}], got {value!r}")
    return ivalue


def check_positive(value: Any, name: str) -> float:
    """``value`` as a finite float > 0."""
    try:
        fvalue = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a positive number, got {value!r}") from None
    if not np.isfinite(fvalue) or fvalue <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return fvalue


def check_axis(axis: Any, name: str = "axis") -> int:
    if isinstance(axis, (bool, np.bool_)) or axis not in (0, 1):
        raise ValueError(f"{name} must be 0 or 1, got {axis!r}")
    return int(axis)


def check_choice(value: Any, name: str, choices: Collection[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {value!r}")
    return value


def result_dtype(dtype: DTypeLike) -> np.dtype:
    """float32 stays float32; every other real dtype computes in float64."""
    return np.dtype(np.float32) if dtype == np.float32 else np.dtype(np.float64)


def check_numeric_dtype(dtype: np.dtype, name: str) -> None:
    if dtype.kind not in "biuf":
        raise TypeError(f"{name} must have a real numeric dtype, got dtype {dtype}")


def all_finite(A: Matrix) -> bool:
    """True when every stored value of a dense or sparse ``A`` is finite."""
    data = A.data if sp.issparse(A) else A
    if data.size == 0 or data.dtype.kind in "biu":
        return True
    return nonfinite_count(data.ravel(order="K")) == 0


def check_finite(A: Matrix, name: str) -> None:
    if not all_finite(A):
        raise ValueError(f"{name} must not contain NaN or Inf")


def _index_array(arr, name, what):
    """A 1-D integer ndarray in native byte order (a big-endian array, as
    read from a file, is converted: the compiled loops need native ints)."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"{name}.{what} must be a numpy integer array, got {type(arr).__name__}")
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise TypeError(
            f"{name}.{what} must be a 1-D integer array, got dtype {arr.dtype} and shape "
            f"{arr.shape}"
        )
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return arr


def _check_pointers(indptr, indices, data_len, nvec, ncols, name, fmt, shape,
                    check_indices=True):
    """Check compressed index arrays: ``indptr`` of length nvec + 1 from 0,
    non-decreasing, within ``indices``; with ``check_indices``, ``indices`` in
    [0, ncols) (a caller that also reads the values checks both in one pass).
    Returns the number of stored entries (``indptr[-1]``)."""
    if indptr.shape[0] != nvec + 1:
        raise ValueError(
            f"{name}.indptr must have length {nvec + 1} for a {fmt.upper()} matrix of shape "
            f"{shape}, got {indptr.shape[0]}"
        )
    if indptr[0] != 0:
        raise ValueError(f"{name}.indptr must start at 0, got indptr[0] = {int(indptr[0])}")
    if indices.shape[0] != data_len:
        raise ValueError(
            f"{name}.indices and {name}.data must have the same length, got "
            f"{indices.shape[0]} and {data_len}"
        )
    if indptr.dtype.kind == "u" and indptr.shape[0] and int(indptr.max()) > np.iinfo(np.int64).max:
        raise ValueError(f"{name}.indptr holds values beyond the int64 range")
    indptr64 = indptr if indptr.dtype.kind == "i" else indptr.astype(np.int64)
    if not pointers_valid(indptr64, indices.shape[0]):
        raise ValueError(
            f"{name}.indptr must be non-decreasing and end at most at len({name}.indices) = "
            f"{indices.shape[0]}, got indptr[-1] = {int(indptr[-1])}"
        )
    nnz = int(indptr[-1])
    if check_indices:
        _check_entries(indices[:nnz], None, ncols, name)
    return nnz


def _check_entries(indices, data, ncols, name):
    """Indices in [0, ncols) and, when ``data`` is given (float32 or
    float64), finite values: one compiled pass over both arrays
    (:func:`sketchlab._engine.checks.entries_outside_or_nonfinite`)."""
    outside, nonfinite = entries_outside_or_nonfinite(indices, data, ncols)
    if outside:
        raise ValueError(f"{name} has sparse indices outside [0, {ncols})")
    if nonfinite:
        raise ValueError(f"{name} must not contain NaN or Inf")


def check_compressed(A: Any, name: str, finite: bool = True) -> Any:
    """Check the arrays of a CSR/CSC matrix that the compiled loops index with
    (pointers, index range) and, with ``finite``, its values, and return A
    in canonical array form: native-endian signed index arrays, no stored
    entries past ``indptr[-1]`` (scipy ignores them; they are trimmed, not
    copied, so that every computation sees exactly the matrix scipy sees).
    scipy's constructors do not check index ranges; a corrupt matrix must
    give an error, never a crash."""
    fmt = A.format
    ncols = A.shape[1] if fmt == "csr" else A.shape[0]
    nvec = A.shape[0] if fmt == "csr" else A.shape[1]
    indptr = _index_array(A.indptr, name, "indptr")
    indices = _index_array(A.indices, name, "indices")
    data = A.data
    if not isinstance(data, np.ndarray) or data.ndim != 1:
        raise ValueError(f"{name}.data must be a 1-D array, got {type(data).__name__}")
    check_numeric_dtype(data.dtype, name)
    fused = finite and data.dtype in (np.float32, np.float64)
    nnz = _check_pointers(indptr, indices, data.shape[0], nvec, ncols, name, fmt, A.shape,
                          check_indices=not fused)
    if fused:
        _check_entries(indices[:nnz], data[:nnz], ncols, name)
    elif finite and data.dtype.kind == "f" and not np.isfinite(data[:nnz]).all():
        raise ValueError(f"{name} must not contain NaN or Inf")
    if indptr.dtype.kind == "u":
        indptr = indptr.astype(np.int64)
    if indices.dtype.kind == "u":
        indices = indices.astype(np.int64)
    if (indptr is not A.indptr or indices is not A.indices or indices.shape[0] > nnz):
        cls = type(A)
        A = cls((data[:nnz], indices[:nnz], indptr), shape=A.shape, copy=False)
    return A


def check_sparse_structure(A: Any, name: str) -> Any:
    """Check the index arrays of a scipy.sparse ``A`` before anything (scipy's
    format conversions included) reads through them; dense input passes.

    CSR, CSC and BSR: pointers and index ranges; COO: row and column ranges;
    LIL: row lists against data lists and column ranges; DOK keeps checked
    keys; DIA only offsets, which scipy checks.  Values must be real numbers.
    Returns A, in canonical form for CSR/CSC (see :func:`check_compressed`).
    """
    if not sp.issparse(A):
        return A
    fmt = A.format
    if fmt in ("csr", "csc"):
        return check_compressed(A, name, finite=False)
    if fmt == "lil":
        rows, vals = A.rows, A.data
        if len(rows) != A.shape[0] or len(vals) != A.shape[0]:
            raise ValueError(f"{name} has LIL rows and data of the wrong length")
        lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
        if not np.array_equal(lengths, np.fromiter(map(len, vals), dtype=np.int64,
                                                   count=len(vals))):
            raise ValueError(f"{name} has LIL rows whose index and value lists differ in length")
        columns = [c for r in rows for c in r]
        if columns and (min(columns) < 0 or max(columns) >= A.shape[1]):
            raise ValueError(f"{name} has sparse indices outside [0, {A.shape[1]})")
        data = np.asarray([v for r in vals for v in r])
        if data.size:
            check_numeric_dtype(data.dtype, name)
        return A
    if fmt == "dok":
        return A
    data = A.data
    if isinstance(data, np.ndarray):
        check_numeric_dtype(data.dtype, name)
    if fmt == "bsr":
        R, C = A.blocksize
        indptr = _index_array(A.indptr, name, "indptr")
        indices = _index_array(A.indices, name, "indices")
        if not isinstance(data, np.ndarray) or data.ndim != 3 or data.shape[1:] != (R, C):
            raise ValueError(f"{name} has a BSR data array of the wrong shape {np.shape(data)}")
        _check_pointers(indptr, indices, data.shape[0], A.shape[0] // R, A.shape[1] // C,
                        f"{name} (BSR blocks)", "bsr", A.shape)
    elif fmt == "coo":
        for axis, coord in enumerate((A.row, A.col)):
            coord = _index_array(coord, name, "row" if axis == 0 else "col")
            if coord.shape != A.data.shape:
                raise ValueError(f"{name} has COO index and data arrays of different lengths")
            if coord.size and (coord.min() < 0 or coord.max() >= A.shape[axis]):
                raise ValueError(
                    f"{name} has COO {'row' if axis == 0 else 'column'} indices outside "
                    f"[0, {A.shape[axis]})"
                )
    return A


class Checked:
    """A matrix that :func:`as_matrix` returned, handed on explicitly: the one
    way to skip a check.  ``as_matrix(Checked(A))`` is ``A`` itself, without
    a second O(nnz) pass (index range, finite values): an algorithm that
    checked its input once at its entry wraps it (or a block, a row slice,
    a product of checked arrays) where it passes it on to an operator, a
    state or another function.  Private: a user cannot skip a check (scipy's
    and scikit-learn's public ``check_finite`` flags aside, which skip the
    finiteness check only)."""

    __slots__ = ("matrix",)
    matrix: Any

    def __init__(self, matrix: Any):
        self.matrix = matrix.matrix if isinstance(matrix, Checked) else matrix

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.matrix.shape)

    @property
    def dtype(self) -> np.dtype:
        return self.matrix.dtype

    @property
    def ndim(self) -> int:
        return int(self.matrix.ndim)

    def __repr__(self) -> str:
        return f"Checked({type(self.matrix).__name__} {self.shape})"


def check_shape(shape: Any, name: str = "shape") -> tuple[int, int]:
    """``(m, n)`` as two ints >= 1."""
    try:
        m, n = shape
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a pair of ints (m, n), got {shape!r}") from None
    return check_int(m, f"{name}[0]", 1), check_int(n, f"{name}[1]", 1)


MAX_DIM = 2**31 - 1
"""Largest dimension a sketching operator compresses."""


def check_sketchable(shape: Any, name: str = "A") -> Any:
    """A shape whose dimensions the operators can compress (at most 2**31 - 1)."""
    if max(shape) > MAX_DIM:
        raise ValueError(
            f"{name} must have at most 2**31 - 1 rows and columns to be sketched, got shape "
            f"{tuple(shape)}"
        )
    return shape


def check_rtol(rtol: Any, name: str = "rtol") -> float | None:
    """None, or a real number in [0, 1) (a relative singular-value cutoff)."""
    if rtol is None:
        return None
    if isinstance(rtol, (bool, np.bool_)) or not isinstance(rtol, numbers.Real):
        raise TypeError(f"{name} must be None or a real number in [0, 1), got {rtol!r}")
    value = float(rtol)
    if not (np.isfinite(value) and 0.0 <= value < 1.0):
        raise ValueError(f"{name} must be None or a real number in [0, 1), got {rtol!r}")
    return value


def check_tol(tol: Any, name: str = "tol") -> float | None:
    """None, or a number in (0, 1) (a target accuracy)."""
    if tol is None:
        return None
    if isinstance(tol, (bool, np.bool_)) or not isinstance(tol, numbers.Real):
        raise TypeError(f"{name} must be None or a number in (0, 1), got {tol!r}")
    value = float(tol)
    if not 0.0 < value < 1.0:  # False for NaN too
        raise ValueError(f"{name} must be None or a number in (0, 1), got {tol!r}")
    return value


def check_out(out: Any, shape: tuple[int, ...], dtype: DTypeLike, name: str = "out") -> np.ndarray:
    """A writable ndarray of exactly ``shape`` and ``dtype`` to write results into."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray, got {type(out).__name__}")
    if out.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {out.shape}")
    if out.dtype != dtype:
        raise ValueError(f"{name} must have dtype {np.dtype(dtype)}, got {out.dtype}")
    if not out.flags.writeable:
        raise ValueError(f"{name} must be writable")
    return out


def _only_products(A: Any) -> bool:
    """Whether A is an operator known by its products only (a scipy
    LinearOperator, a kernel oracle, a linear map), which numpy would turn
    into an array of one Python object."""
    return (hasattr(A, "shape") and not hasattr(A, "__array__")
            and any(hasattr(A, attr) for attr in ("matvec", "matmat", "rows_into")))


def as_matrix(A: MatrixLike, name: str, *, allow_1d: bool = False, sparse: bool = True,
              finite: bool = True, copy: bool = False) -> Any:
    """Validate a matrix argument and bring it to a canonical form.

    Returns a 2-D ndarray (C or F order kept) of float32/float64, or a
    ``scipy.sparse`` CSR/CSC matrix or array with float32/float64 data and
    its index arrays untouched.  Other sparse formats are converted to CSR.
    With ``allow_1d`` a 1-D array is accepted and returned as is (as float).
    ``finite`` rejects NaN and Inf; the index arrays of a sparse matrix are
    always checked (a corrupt one would make a kernel read out of bounds).
    """
    if isinstance(A, Checked):  # checked earlier in this call, handed on explicitly
        return A.matrix
    if sp.issparse(A):
        if not sparse:
            raise TypeError(f"{name} must be a dense array, got a scipy.sparse {A.format} matrix")
        if A.ndim != 2:
            raise ValueError(f"{name} must be 2-D, got {A.ndim}-D")
        if A.format not in ("csr", "csc"):
            check_sparse_structure(A, name)  # before scipy converts through its indices
            A = A.tocsr()
        check_numeric_dtype(A.dtype, name)
        dtype = result_dtype(A.dtype)
        if A.dtype == dtype:
            # one pass over indices and values together (a large A is read once)
            A = check_compressed(A, name, finite)
            return A.copy() if copy else A
        A = check_compressed(A, name, False).astype(dtype)
        if finite:
            check_finite(A, name)
        return A
    else:
        if isinstance(A, (str, bytes)) or A is None:
            raise TypeError(f"{name} must be an array or a scipy.sparse matrix, got {A!r}")
        if hasattr(A, "__dask_graph__"):
            raise TypeError(
                f"{name} is a dask array; use sketchlab.dask for out-of-core input"
            )
        if _only_products(A):
            raise TypeError(
                f"{name} must be a dense array or a scipy.sparse matrix: this function needs "
                f"its entries, got a {type(A).__name__}, which gives only products (the "
                "functions that need only products, such as krylov_svd, take one)")
        if isinstance(A, tuple) and hasattr(A, "_extras"):  # a result of sketchlab's
            fields = ", ".join(f".{field}" for field in getattr(A, "_fields", ()))
            raise TypeError(f"{name} must be a matrix, got a {type(A).__name__} (take its "
                            f"{fields})")
        arr = np.asarray(A)
        if arr.dtype == object:
            raise TypeError(f"{name} must be numeric, got an array of Python objects")
        check_numeric_dtype(arr.dtype, name)
        if arr.ndim != 2 and not (allow_1d and arr.ndim == 1):
            want = "1-D or 2-D" if allow_1d else "2-D"
            raise ValueError(f"{name} must be {want}, got an array of shape {arr.shape}")
        dtype = result_dtype(arr.dtype)
        if not (arr.flags.c_contiguous or arr.flags.f_contiguous):
            arr = np.ascontiguousarray(arr, dtype=dtype)
        elif arr.dtype != dtype:
            arr = arr.astype(dtype, order="K")
        elif copy:
            arr = arr.copy(order="K")
        A = arr
    if finite:
        check_finite(A, name)
    return A


def plain_indices(X: Any) -> Any:
    """A checked CSR/CSC X whose index arrays scipy's and scikit-learn's
    compiled products take (signed 32 or 64 bits, one dtype, contiguous
    data): the odd valid forms (int8 or unsigned indices, strided data) get
    copies, the usual ones pass through."""
    if not sp.issparse(X):
        return X
    plain = (X.indices.dtype == X.indptr.dtype and X.indices.dtype in (np.int32, np.int64)
             and X.data.flags.c_contiguous)
    if plain:
        return X
    X = X.copy()
    X.indices, X.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
    X.data = np.ascontiguousarray(X.data)
    return X
