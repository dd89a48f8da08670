"""One linear map: A as its products, the object every iterative solver takes.

:func:`as_linear_map` turns whatever a user passed (a dense array, a CSR/CSC
matrix, a ``scipy.sparse.linalg.LinearOperator``, a kernel oracle such as
:class:`~sketchlab.RBFKernel`, a dask array) into a :class:`LinearMap`,
checking it once; the solvers below it never ask what A was
(scipy's ``make_system`` pattern).  A :class:`LinearMap` passed in is
already checked and is returned as it is: that is the one way to skip a
check.

What a map offers (pylops' ``LinearOperator`` vocabulary):

- ``shape``, ``dtype`` (float32 stays float32; every other real dtype
  computes in float64), ``symmetric``, ``psd`` (True, False or None:
  unknown);
- ``matmat(X, out=None)`` = ``A X`` and ``rmatmat(Y, out=None)`` = ``A^T Y``,
  written into ``out`` when given (any layout: a block of a Fortran-ordered
  basis); ``normal(Z)`` = ``A^T A Z`` (one pass over a CSR A);
- ``frobenius2()``: ``||A||_F^2`` (None where it is not known without n
  products); ``diagonal()`` where it is cheap (None otherwise);
- ``aslinearoperator()``: the one conversion to scipy's ``LinearOperator``;
- ``matvecs``: the vectors multiplied so far (a product with a block of b
  columns counts b, ``normal`` counts 2 b), so that a solver can report the
  products it used.

How the products run (and why their sums do not depend on the thread
count): a dense A by BLAS in fixed chunks of rows on all threads, one BLAS
thread each, summed in chunk order; a CSR A by the compiled row loops of
``sketchlab._engine.products`` (``A^T Y`` through the CSR of ``A^T``, a counting
sort built on the first use); a kernel oracle by stored tiles of its lower
block triangle where they fit a memory budget, recomputed row blocks where
not; a LinearOperator by its own ``matmat`` / ``rmatmat``, whose outputs
are checked (shape, finite values).
"""

from __future__ import annotations

import contextlib
import math
import numbers
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from ._config import safe_exponent, serial_blas
from ._engine.products import CSRNormal, csr_times_dense, csr_transpose
from ._engine.reductions import largest_magnitude, squared_frobenius
from ._engine.threads import map_on_threads, tall_mul, tall_tmul
from ._validation import as_matrix, result_dtype

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["LinearMap", "CenteredMap", "as_linear_map", "centered", "from_checked",
           "into_safe_range", "is_linear_operator", "KERNEL_CACHE_BYTES"]

# rows per chunk of a dense A's products (a fixed constant: the sums over rows
# are taken chunk by chunk and added in chunk order)
_DENSE_ROWS_PER_CHUNK = 8192
# rows per tile of a kernel operator's stored lower block triangle
_KERNEL_ROWS_PER_TILE = 2048
# default memory budget for stored kernel entries (KernelRidge users' 4 GB)
KERNEL_CACHE_BYTES = 4096 * 2**20


def is_linear_operator(A: Any) -> bool:
    """Whether A is a ``scipy.sparse.linalg.LinearOperator`` (without
    importing scipy.sparse.linalg when it was not imported)."""
    import sys

    module = sys.modules.get("scipy.sparse.linalg")
    return module is not None and isinstance(A, module.LinearOperator)


def _is_dask(A):
    return hasattr(A, "__dask_graph__") and hasattr(A, "chunks")


class LinearMap:
    """``A`` as its products (m x n).  Build one with :func:`as_linear_map`.

    Subclasses implement ``_matmat(X, out)`` and ``_rmatmat(Y, out)`` on a
    C-contiguous X / Y of the map's dtype; ``normal`` defaults to the two.
    """

    symmetric = False
    psd: bool | None = None
    entries: Any = None  # the matrix itself, where the map holds one (dense, sparse)
    # the products run with one BLAS thread (their large ones in fixed chunks on
    # all threads): False where a map's products are compute-bound BLAS calls
    # on the caller's threads (a kernel whose blocks are recomputed)
    blas_serial = True

    def __init__(self, shape: tuple[int, int], dtype: Any):
        self.shape = (int(shape[0]), int(shape[1]))
        self.dtype = np.dtype(dtype)
        self.matvecs = 0

    # -- products -----------------------------------------------------------

    def matmat(self, X: Any, out: Any = None) -> NDArray[np.floating]:
        """``A X`` for X of shape (n, k) (or (n,): then a vector back)."""
        return self._product(X, out, self.shape[1], self.shape[0], self._matmat)

    def rmatmat(self, Y: Any, out: Any = None) -> NDArray[np.floating]:
        """``A^T Y`` for Y of shape (m, k) (or (m,))."""
        return self._product(Y, out, self.shape[0], self.shape[1], self._rmatmat)

    matvec = matmat
    rmatvec = rmatmat

    def normal(self, Z: Any) -> NDArray[np.floating]:
        """``A^T A Z`` for Z of shape (n, k)."""
        vector = np.ndim(Z) == 1
        Z = self._block(Z, self.shape[1])
        self.matvecs += 2 * Z.shape[1]
        with serial_blas() if self.blas_serial else contextlib.nullcontext():
            out = self._normal(Z)
        return out[:, 0] if vector else out

    def _product(self, X, out, rows_in, rows_out, run):
        vector = np.ndim(X) == 1
        X = self._block(X, rows_in)
        if out is not None and (out.shape != (rows_out, X.shape[1]) or out.dtype != self.dtype):
            out = None  # not a block this map writes into: a fresh array
        self.matvecs += X.shape[1]
        with serial_blas() if self.blas_serial else contextlib.nullcontext():
            Y = run(X, out)  # into out where the map can write there
        if out is not None and Y is not out:
            out[...] = Y
            Y = out
        return Y[:, 0] if vector else Y

    def _block(self, X, rows):
        X = np.asarray(X)
        if X.ndim == 1:
            X = X.reshape(-1, 1)
        if X.ndim != 2 or X.shape[0] != rows:
            raise ValueError(f"expected a block of {rows} rows, got shape {X.shape}")
        return X.astype(self.dtype, copy=False)  # layout: each map's own concern

    def _matmat(self, X, out):  # pragma: no cover - abstract
        raise NotImplementedError

    def _rmatmat(self, Y, out):  # pragma: no cover - abstract
        raise NotImplementedError

    def _normal(self, Z):
        return self._rmatmat(self._matmat(Z, None), None)

    # -- what else is known ---------------------------------------------------

    def frobenius2(self) -> Any:
        """``||A||_F^2`` (float64), or None when it is not known."""
        return None

    def astype(self, dtype: Any) -> LinearMap:
        """The map of A's entries in ``dtype`` (self when it is A's dtype)."""
        if np.dtype(dtype) == self.dtype:
            return self
        if self.entries is None:
            raise TypeError(f"cannot change the dtype of {self!r}: it holds no entries")
        return from_checked(self.entries.astype(dtype))

    def scaled(self, e: int) -> LinearMap:
        """The map of ``2**e A``: a copy of the entries, scaled exactly, or, for
        a map known by its products, each product scaled after it is taken
        (exact unless the product itself over- or underflows)."""
        if self.entries is None:
            return _ScaledProducts(self, e)
        A = self.entries
        if sp.issparse(A):
            A = A.copy()
            A.data = np.ldexp(A.data, e).astype(A.dtype, copy=False)
        else:
            A = np.ldexp(A, e).astype(A.dtype, copy=False)
        return from_checked(A)

    def diagonal(self) -> NDArray[np.floating] | None:
        """The diagonal of a square A where it is cheap, else None."""
        return None

    @property
    def T(self) -> LinearMap:
        """The transpose, as a map (no copy)."""
        return _Transposed(self)

    def aslinearoperator(self) -> Any:
        """This map as a ``scipy.sparse.linalg.LinearOperator``."""
        from scipy.sparse.linalg import LinearOperator

        m, n = self.shape
        return LinearOperator(self.shape, matvec=lambda x: self.matmat(np.ravel(x)),
                              rmatvec=lambda y: self.rmatmat(np.ravel(y)),
                              matmat=self.matmat, rmatmat=self.rmatmat, dtype=self.dtype)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.shape[0]}x{self.shape[1]} {self.dtype}>"


class _Transposed(LinearMap):
    def __init__(self, inner):
        super().__init__(inner.shape[::-1], inner.dtype)
        self.inner = inner
        self.symmetric, self.psd = inner.symmetric, inner.psd

    def _matmat(self, X, out):
        return self.inner._rmatmat(X, out)

    def _rmatmat(self, Y, out):
        return self.inner._matmat(Y, out)

    def frobenius2(self):
        return self.inner.frobenius2()

    def diagonal(self):
        return self.inner.diagonal()

    @property
    def T(self):
        return self.inner


class _ScaledProducts(LinearMap):
    """``2**e A`` for a map without entries: its products scaled."""

    def __init__(self, inner, e):
        super().__init__(inner.shape, inner.dtype)
        self.inner, self.e = inner, int(e)
        self.symmetric, self.psd = inner.symmetric, inner.psd

    def _matmat(self, X, out):
        return np.ldexp(self.inner.matmat(X), self.e).astype(self.dtype, copy=False)

    def _rmatmat(self, Y, out):
        return np.ldexp(self.inner.rmatmat(Y), self.e).astype(self.dtype, copy=False)

    def _normal(self, Z):
        return np.ldexp(self.inner.normal(Z), 2 * self.e).astype(self.dtype, copy=False)

    def frobenius2(self):
        total = self.inner.frobenius2()
        if total is None or callable(total):
            return None
        return float(np.ldexp(float(total), 2 * self.e))


class _DenseMap(LinearMap):
    """A dense A (C or F order): BLAS in fixed row chunks."""

    def __init__(self, A):
        super().__init__(A.shape, A.dtype)
        self.entries = A

    def _matmat(self, X, out):
        A = self.entries
        return A @ X if A.shape[0] <= _DENSE_ROWS_PER_CHUNK else \
            tall_mul(A, X, _DENSE_ROWS_PER_CHUNK)

    def _rmatmat(self, Y, out):
        A = self.entries
        return A.T @ Y if A.shape[0] <= _DENSE_ROWS_PER_CHUNK else \
            tall_tmul(A, Y, _DENSE_ROWS_PER_CHUNK)

    def frobenius2(self):
        return squared_frobenius(self.entries)

    def diagonal(self):
        return np.ascontiguousarray(np.diagonal(self.entries)) \
            if self.shape[0] == self.shape[1] else None


class _SparseMap(LinearMap):
    """A CSR or CSC A: the compiled row loops (``A^T Y`` through the CSR of
    ``A^T``, built on first use: a CSC A is that CSR already)."""

    def __init__(self, A):
        super().__init__(A.shape, A.dtype)
        self.entries = A
        self._rows = A if A.format == "csr" else None  # the CSR of A
        self._cols = A.T if A.format == "csc" else None  # the CSR of A^T
        self._one_pass = None

    def rows(self):
        if self._rows is None:
            self._rows = csr_transpose(self._cols)
        return self._rows

    def cols(self):
        if self._cols is None:
            self._cols = csr_transpose(self._rows)
        return self._cols

    def _matmat(self, X, out):
        return csr_times_dense(self.rows(), np.ascontiguousarray(X), out)

    def _rmatmat(self, Y, out):
        return csr_times_dense(self.cols(), np.ascontiguousarray(Y), out)

    def _normal(self, Z):
        if self._one_pass is None:
            self._one_pass = CSRNormal(self.rows())
        return self._one_pass(np.ascontiguousarray(Z))

    def frobenius2(self):
        return squared_frobenius(self.entries)

    def diagonal(self):
        return np.asarray(self.entries.diagonal(), dtype=self.dtype) \
            if self.shape[0] == self.shape[1] else None


class _OperatorMap(LinearMap):
    """A scipy LinearOperator: its own matmat / rmatmat, outputs checked
    (and copied: callers overwrite what a product returns)."""

    def __init__(self, A, dtype):
        super().__init__(A.shape, dtype)
        self.operator = A

    def _checked(self, Y, shape, what, out):
        Y = np.asarray(Y)
        if Y.ndim == 1 and shape[1] == 1:
            Y = Y.reshape(-1, 1)
        if Y.shape != shape:
            raise ValueError(f"A.{what} returned an array of shape {Y.shape}, expected {shape}")
        if not np.isfinite(Y).all():
            raise ValueError(f"A.{what} returned values that are not finite")
        # a copy (callers overwrite what a product returns) unless it goes into out
        return Y if out is not None else np.array(Y, dtype=self.dtype)

    def _matmat(self, X, out):
        return self._checked(self.operator.matmat(X), (self.shape[0], X.shape[1]), "matmat",
                             out)

    def _rmatmat(self, Y, out):
        return self._checked(self.operator.rmatmat(Y), (self.shape[1], Y.shape[1]), "rmatmat",
                             out)

    def aslinearoperator(self):
        return self.operator


class _KernelMap(LinearMap):
    """``V -> K V`` for a kernel oracle K (n x n, symmetric; positive
    semidefinite where its formula says so: ``psd``), K evaluated once where
    it fits in ``cache_bytes``:

    - when its lower block triangle fits (about ``4 n (n + 2048)`` bytes),
      only that is stored, by row tiles ``K[r0:r1, :r1]`` of 2,048 rows (the
      diagonal blocks symmetrized: the map is exactly symmetric), and a
      product reads each tile twice: ``K[r0:r1, :r1] V[:r1]`` for its own
      rows and the transpose of its part left of the diagonal for the rows
      above.  Half the memory of the whole K, and half its evaluation;
    - otherwise the first ``cached`` rows of K are stored (float64) and the
      others recomputed by row blocks of at most ``BLOCK_ENTRIES`` entries at
      every product.

    The products with stored entries are memory-bound (a few columns): the
    tiles or row chunks run on all threads, one BLAS thread each, and are
    summed in a fixed order, so the result does not depend on the thread
    count.  ``recomputes``: whether some rows are evaluated at every product
    (compute-bound: the caller may let BLAS use all threads)."""

    symmetric = True

    def __init__(self, K, cache_bytes):
        from ._kernel_matrices import BLOCK_ENTRIES, kernel_is_psd

        n = K.shape[0]
        super().__init__((n, n), np.float64)
        self.oracle, self.n = K, n
        self.psd = kernel_is_psd(K)  # by the kernel's formula (sigmoid is not PSD)
        self.block = max(1, BLOCK_ENTRIES // n)
        step = _KERNEL_ROWS_PER_TILE
        edges = list(range(0, n, step)) + [n]
        self.spans = list(zip(edges[:-1], edges[1:]))
        if 8.0 * sum((r1 - r0) * r1 for r0, r1 in self.spans) <= cache_bytes:
            self.tiles = [self._tile(r0, r1) for r0, r1 in self.spans]
            self.cached, self.rows = n, None
        else:
            self.tiles = None
            self.cached = int(min(n, cache_bytes // (8 * n)))
            self.rows = np.asarray(K[:self.cached, :], dtype=np.float64) if self.cached else None
        self.recomputes = self.cached < n
        # recomputed kernel blocks are compute-bound: BLAS on the caller's threads
        self.blas_serial = not self.recomputes

    def _tile(self, r0, r1):
        T = np.asarray(self.oracle[r0:r1, :r1], dtype=np.float64)
        D = T[:, r0:r1]
        D[...] = (D + D.T) / 2  # exactly symmetric (rounding-level change)
        return T

    def _tile_products(self, V):
        def run(b):
            (r0, r1), T = self.spans[b], self.tiles[b]
            own = T @ V[:r1]
            above = T[:, :r0].T @ V[r0:r1] if r0 else None
            return own, above

        # the largest tiles first: the pool's threads share the work evenly
        order = list(range(len(self.spans)))[::-1]
        parts = dict(zip(order, map_on_threads(run, order)))
        out = np.empty_like(V)
        for b, (r0, r1) in enumerate(self.spans):
            out[r0:r1] = parts[b][0]
        for b, (r0, _) in enumerate(self.spans):
            if r0:
                out[:r0] += parts[b][1]
        return out

    def _matmat(self, V, out):
        if self.tiles is not None:
            Y = self._tile_products(V)
        else:
            Y = np.empty_like(V)
            if self.cached:
                # memory-bound (a few columns): row chunks on all threads, one
                # BLAS thread each, the same for any thread count
                with serial_blas():
                    Y[:self.cached] = tall_mul(self.rows, V, _KERNEL_ROWS_PER_TILE)
            for i0 in range(self.cached, self.n, self.block):
                i1 = min(self.n, i0 + self.block)
                Y[i0:i1] = np.asarray(self.oracle[i0:i1, :], dtype=np.float64) @ V
        return Y

    _rmatmat = _matmat

    def diagonal(self):
        return np.asarray(self.oracle.diagonal(), dtype=np.float64)


class CenteredMap(LinearMap):
    """``A - 1 mu^T`` (the columns of A centred by ``mu``, length n) as its
    products, never formed: ``A X - 1 (mu^T X)`` and ``A^T Y - mu (1^T Y)``
    (scikit-learn's ``_implicit_column_offset``).  A sparse A stays sparse.
    :meth:`frobenius2` is ``||A||_F^2 - m ||mu||^2`` for the column means
    (exact in exact arithmetic; its rounding is ``eps ||A||_F^2``, large
    beside a small result when the means dominate the data)."""

    def __init__(self, inner: LinearMap, mu: Any):
        super().__init__(inner.shape, inner.dtype)
        mu = np.asarray(mu, dtype=inner.dtype).reshape(-1)
        if mu.shape != (inner.shape[1],):
            raise ValueError(f"mu must have {inner.shape[1]} entries, got shape {mu.shape}")
        self.inner, self.mu = inner, mu

    def _matmat(self, X, out):
        Y = self.inner.matmat(X, out=out)
        Y -= self.mu @ X  # the same row (mu^T X) off every row
        return Y

    def _rmatmat(self, Y, out):
        Z = self.inner.rmatmat(Y, out=out)
        Z -= np.outer(self.mu, Y.sum(axis=0))
        return Z

    def frobenius2(self):
        total = self.inner.frobenius2()
        if total is None or callable(total):
            return None
        return max(float(total) - self.shape[0] * float(self.mu @ self.mu), 0.0)


def centered(A: LinearMap, mu: Any = None) -> CenteredMap:
    """The map of ``A - 1 mu^T``; ``mu`` default: A's column means (one
    product ``A^T 1 / m``)."""
    if mu is None:
        mu = A.rmatmat(np.ones(A.shape[0], dtype=A.dtype)) / A.shape[0]
    return CenteredMap(A, mu)


def into_safe_range(ops: LinearMap) -> tuple[LinearMap, int]:
    """``(map of 2**-e A, e)``: e = 0 unless the size of A lies outside the
    solvers' safe range (:func:`sketchlab._config.safe_exponent`), judged by
    its largest entry (a centred map's: its entries' and its centre's), or by
    one product with a fixed probe where A is known by its products only.
    Exact: a scaled copy of the entries, or the products scaled."""
    if isinstance(ops, CenteredMap) and ops.inner.entries is not None:
        top = max(largest_magnitude(ops.inner.entries), float(np.max(np.abs(ops.mu))))
        e = safe_exponent(top)
        if e:
            ops = CenteredMap(ops.inner.scaled(-e), np.ldexp(ops.mu, -e))
        return ops, e
    if ops.entries is not None:
        e = safe_exponent(largest_magnitude(ops.entries))
        return (ops.scaled(-e) if e else ops), e
    probe = np.random.default_rng(20240611).standard_normal((ops.shape[1], 1))
    top = float(np.max(np.abs(ops.matmat(probe.astype(ops.dtype))))) / math.sqrt(ops.shape[1])
    e = safe_exponent(top)
    return (ops.scaled(-e) if e else ops), e


def _check_operator(A, name):
    if len(A.shape) != 2:
        raise ValueError(f"{name} must be 2-D, got shape {A.shape}")
    given = np.dtype(A.dtype) if A.dtype is not None else np.dtype(np.float64)
    if given.kind not in "fiub":
        raise TypeError(f"{name} must be a real LinearOperator, got dtype {A.dtype}")
    return _OperatorMap(A, result_dtype(given))


def _check_cache(cache_bytes):
    if cache_bytes is None:
        return KERNEL_CACHE_BYTES
    if isinstance(cache_bytes, (bool, np.bool_)) or not isinstance(cache_bytes, numbers.Real) \
            or not cache_bytes >= 0:
        raise ValueError(f"cache_bytes must be a number >= 0, got {cache_bytes!r}")
    return float(cache_bytes)


# the dask front's builder of a dask array's map (``sketchlab.dask.chunk_map``),
# registered by the front when it is imported: this layer does not import it
_DASK_MAP: list[Any] = []


def register_dask_map(build: Any) -> None:
    """Set the builder of a dask array's map: ``build(A, scheduler)``."""
    _DASK_MAP[:] = [build]


def _dask_map(A, scheduler):
    """The map of a dask array, by the dask front (imported by name on first use)."""
    if not _DASK_MAP:
        import importlib

        importlib.import_module("sketchlab.dask")  # it registers its builder
    return _DASK_MAP[0](A, scheduler)


def from_checked(A: Any) -> LinearMap:
    """The map of a dense or sparse matrix that ``_validation.as_matrix``
    returned (no second check: the explicit form of "checked once")."""
    return _SparseMap(A) if sp.issparse(A) else _DenseMap(A)


def as_linear_map(A: Any, name: str = "A", *, cache_bytes: float | None = None,
                  scheduler: Any = None) -> LinearMap:
    """A, checked once, as a :class:`LinearMap`.

    Parameters
    ----------
    A : array_like, scipy.sparse matrix, LinearOperator, kernel oracle, dask array or LinearMap
        Dense (C or F order), CSR/CSC (other sparse formats become CSR),
        float32 kept, other real dtypes as float64; a LinearOperator (real
        dtype; its products are checked as they come); a kernel oracle
        (:class:`~sketchlab.RBFKernel`, :class:`~sketchlab.PairwiseKernel`):
        symmetric (PSD where its formula says so), its entries stored where
        they fit ``cache_bytes``;
        a dask array (one pass over its chunks per product); a LinearMap
        (returned as it is: already checked).
    name : str
        The parameter's name in error messages.
    cache_bytes : float, optional
        A kernel oracle's budget for stored entries (default 4 GiB).
    scheduler : optional
        A dask array's scheduler.
    """
    from ._kernel_matrices import is_kernel_oracle

    if isinstance(A, LinearMap):
        return A
    if is_linear_operator(A):
        return _check_operator(A, name)
    if is_kernel_oracle(A):
        return _KernelMap(A, _check_cache(cache_bytes))
    if _is_dask(A):
        return _dask_map(A, scheduler)
    return from_checked(as_matrix(A, name))
