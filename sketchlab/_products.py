"""Products with A for the iterative solvers (least squares, block Krylov).

:func:`csr_times_dense`: ``X @ W`` for a CSR X, a compiled loop over the rows
of the result.  :class:`Products`: ``A X``, ``A^T Y`` and ``A^T A Z`` (the
last in one pass over A) through the
compiled loops of ``sketchlab._jit.products`` for a C-ordered dense or a CSR
A, with row ranges fixed by A alone so that the sums do not depend on the
thread count; through scipy's and numpy's products otherwise (the caller
keeps BLAS on one thread).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["Products", "csr_times_dense", "csr_transpose", "transpose_arrays"]

# Row ranges of the compiled products: at most this many (each writes its own
# n x k partial result, added in order), sized from A alone.
_MAX_RANGES = 64
_ROWS_PER_RANGE = 4096  # dense: at least this many rows per range
_NNZ_PER_RANGE = 1 << 16  # CSR: at least this many stored entries per range
_PART_ENTRIES = 1 << 22  # the partial results together: at most this many entries


class Products:
    """``A X``, ``A^T Y`` and ``A^T A Z`` for one A.

    A C-contiguous dense A and a CSR A go through the compiled loops of
    ``sketchlab._jit.products`` (``A^T A Z`` in one pass; row ranges fixed by
    A, so the sums do not depend on the thread count); any other A (CSC,
    F-ordered) through scipy's / numpy's products under one BLAS thread.
    """

    def __init__(self, A):
        self.A = A
        m, n = A.shape
        self.kind = None
        if sp.issparse(A) and A.format == "csr":
            self.kind = "csr"
            self.work = int(A.nnz)
            nranges = max(1, min(_MAX_RANGES, self.work // _NNZ_PER_RANGE))
            targets = np.linspace(0, self.work, nranges + 1)
            bounds = np.searchsorted(A.indptr, targets, side="left")
            bounds[0], bounds[-1] = 0, m
            self.bounds = np.unique(bounds).astype(np.int64)
        elif isinstance(A, np.ndarray) and A.flags.c_contiguous:
            self.kind = "dense"
            self.work = m * n
            nranges = max(1, min(_MAX_RANGES, m // _ROWS_PER_RANGE))
            self.bounds = np.linspace(0, m, nranges + 1).astype(np.int64)
        self._parts = {}

    def _parts_for(self, k):
        nranges = self.bounds.shape[0] - 1
        n = self.A.shape[1]
        use = max(1, min(nranges, _PART_ENTRIES // max(1, n * k)))
        if use < nranges:  # fewer, longer ranges (still fixed by A and k)
            bounds = self.bounds[np.linspace(0, nranges, use + 1).astype(np.int64)]
        else:
            bounds = self.bounds
        key = (k, bounds.shape[0])
        if key not in self._parts:  # dense: k x n partials (rows of A^T), CSR: n x k
            shape = (n, k) if self.kind == "csr" else (k, n)
            self._parts[key] = np.empty((bounds.shape[0] - 1, *shape), dtype=self.A.dtype)
        return bounds, self._parts[key]

    def matmul(self, X):
        """``A X`` for an n x k block X."""
        from ._jit import products, threads_for

        A = self.A
        X = np.ascontiguousarray(X, dtype=A.dtype)
        k = X.shape[1]
        if self.kind is None:
            return (A @ X[:, 0]).reshape(-1, 1) if k == 1 else np.asarray(A @ X)
        if self.kind == "csr":
            return csr_times_dense(A, X)
        out = np.empty((A.shape[0], k), dtype=A.dtype)
        with threads_for(self.work * k):
            products.dense_matmul(A, np.ascontiguousarray(X.T), self.bounds, out)
        return out

    def rmatmul(self, Y):
        """``A^T Y`` for an m x k block Y."""
        from ._jit import products, threads_for

        A = self.A
        Y = np.ascontiguousarray(Y, dtype=A.dtype)
        k = Y.shape[1]
        if self.kind is None:
            return (A.T @ Y[:, 0]).reshape(-1, 1) if k == 1 else np.asarray(A.T @ Y)
        bounds, parts = self._parts_for(k)
        with threads_for(self.work * k):
            if self.kind == "csr":
                products.csr_rmatmul(A.data, A.indices, A.indptr, Y, bounds, parts)
            else:
                products.dense_rmatmul(A, Y, bounds, parts)
        return self._reduce(parts)

    def normal(self, Z):
        """``A^T A Z`` (one pass over a dense C-ordered or CSR A)."""
        from ._jit import products, threads_for

        A = self.A
        if self.kind is None:
            return self.rmatmul(self.matmul(Z))
        Z = np.ascontiguousarray(Z, dtype=A.dtype)
        k = Z.shape[1]
        bounds, parts = self._parts_for(k)
        with threads_for(2 * self.work * k):
            if self.kind == "csr" and k == 1:
                products.csr_normal_vec(A.data, A.indices, A.indptr, Z[:, 0], bounds,
                                        parts[:, :, 0])
            elif self.kind == "csr":
                products.csr_normal(A.data, A.indices, A.indptr, Z, bounds, parts)
            else:
                products.dense_normal(A, np.ascontiguousarray(Z.T), bounds, parts)
        return self._reduce(parts)

    def _reduce(self, parts):
        from ._jit import products

        out = np.empty(parts.shape[1:], dtype=parts.dtype)
        products.reduce_parts(parts, out)
        return out if self.kind == "csr" else np.ascontiguousarray(out.T)


def csr_times_dense(X: Any, W: Any, out: Any = None) -> Any:
    """``X @ W`` for a CSR X and a dense W of a few columns, in W's dtype: a
    compiled loop over the rows of the result (each written by one thread, so
    the same for any thread count; about twice as fast as scipy's serial
    product on two threads).  ``out``: a C-ordered array of the result's
    shape and dtype to write it into (a caller that multiplies again and
    again saves the page faults of fresh memory), or of any layout (a block
    of a Fortran-ordered basis, written in row blocks)."""
    from ._jit import apply as kernels
    from ._jit import threads_for

    W = np.ascontiguousarray(W)
    if out is None:
        out = np.empty((X.shape[0], W.shape[1]), dtype=W.dtype)
    with threads_for(X.nnz * W.shape[1]):
        if out.flags.c_contiguous:
            kernels.right_csr_dense(X.indptr, X.indices, X.data, W, out, False)
        else:
            kernels.right_csr_dense_blocked(X.indptr, X.indices, X.data, W, out)
    return out


# csr_transpose: row ranges of at least this many stored entries, at most
# _MAX_RANGES of them, and their per-column counters at most as many entries
# as X stores
_TRANSPOSE_NNZ_PER_RANGE = 1 << 17


def transpose_arrays(ptr: Any, idx: Any, val: Any, n_out: int, ptr_dtype: Any = None,
                     idx_dtype: Any = None) -> tuple[Any, Any, Any]:
    """``(t_ptr, t_idx, t_val)``: the compressed arrays of the transpose of
    the compressed arrays ``(ptr, idx, val)`` (CSR of X -> CSR of X^T, or a
    CSC table -> its CSR), ``n_out`` the length of the other axis.  A
    counting sort in two compiled passes over fixed ranges of the input's
    rows, on all threads; each output row lists its entries in increasing
    input row, so the result is the canonical one and does not depend on
    the ranges or the threads.  Index dtypes: int32 where the sizes allow,
    unless given."""
    from ._jit import products as kernels
    from ._jit import threads_for

    m = ptr.shape[0] - 1
    nnz = int(ptr[m])
    small = np.int32 if max(m, nnz) < np.iinfo(np.int32).max else np.int64
    ranges = max(1, min(_MAX_RANGES, nnz // _TRANSPOSE_NNZ_PER_RANGE, nnz // max(n_out, 1)))
    cuts = np.searchsorted(ptr, np.linspace(0, nnz, ranges + 1)[1:-1])
    bounds = np.unique(np.concatenate([[0], cuts, [m]])).astype(np.int64)
    counts = np.zeros((bounds.size - 1, n_out), dtype=np.int64)
    t_ptr = np.empty(n_out + 1, dtype=ptr_dtype or small)
    t_idx = np.empty(nnz, dtype=idx_dtype or small)
    t_val = np.empty(nnz, dtype=val.dtype)
    with threads_for(nnz):
        kernels.csr_transpose_counts(ptr, idx, bounds, counts)
        kernels.csr_transpose_offsets(counts, t_ptr)
        kernels.csr_transpose_fill(ptr, idx, val, bounds, counts, t_idx, t_val)
    return t_ptr, t_idx, t_val


def csr_transpose(X: Any) -> sp.csr_matrix:
    """The CSR of ``X.T`` for a CSR X, the same arrays as scipy's
    ``X.T.tocsr()`` (:func:`transpose_arrays`; scipy's is serial, this about
    twice as fast on two threads)."""
    m, n = X.shape
    t_ptr, t_idx, t_val = transpose_arrays(X.indptr, X.indices, X.data, n)
    return sp.csr_matrix((t_val, t_idx, t_ptr), shape=(n, m), copy=False)
