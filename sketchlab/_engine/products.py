"""Products with a sparse A for the iterative solvers (``sketchlab._linear_map``).

:func:`csr_times_dense`: ``X @ W`` for a CSR X, a compiled loop over the rows
of the result (each written by one thread).  :class:`CSRNormal`: ``A^T A Z``
in ONE pass over a CSR A (each row used twice while it sits in cache), over
row ranges fixed by A alone, each range writing its own partial result,
added in range order: the sums do not depend on the thread count.
:func:`transpose_arrays` / :func:`csr_transpose`: the counting-sort transpose.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from . import workspace
from .threads import threads_for

__all__ = ["CSRNormal", "csr_times_dense", "csr_transpose", "transpose_arrays"]

# Row ranges of the one-pass normal product: at most this many (each writes
# its own n x k partial result, added in order), sized from A alone.
_MAX_RANGES = 64
_NNZ_PER_RANGE = 1 << 16  # at least this many stored entries per range
_PART_ENTRIES = 1 << 22  # the partial results together: at most this many entries


class CSRNormal:
    """``Z -> A^T A Z`` for one CSR A, in one pass over A."""

    def __init__(self, A: Any):
        self.A = A
        m = A.shape[0]
        self.work = int(A.nnz)
        nranges = max(1, min(_MAX_RANGES, self.work // _NNZ_PER_RANGE))
        targets = np.linspace(0, self.work, nranges + 1)
        bounds = np.searchsorted(A.indptr, targets, side="left")
        bounds[0], bounds[-1] = 0, m
        self.bounds = np.unique(bounds).astype(np.int64)

    def _parts_for(self, k):
        nranges = self.bounds.shape[0] - 1
        n = self.A.shape[1]
        use = max(1, min(nranges, _PART_ENTRIES // max(1, n * k)))
        if use < nranges:  # fewer, longer ranges (still fixed by A and k)
            bounds = self.bounds[np.linspace(0, nranges, use + 1).astype(np.int64)]
        else:
            bounds = self.bounds
        return bounds, (bounds.shape[0] - 1, n, k)

    def __call__(self, Z: Any) -> Any:
        """``A^T A Z`` for a C-contiguous n x k Z of A's dtype."""
        from ._jit import products

        A = self.A
        k = Z.shape[1]
        bounds, shape = self._parts_for(k)
        # the partial results (tens of MB) from the workspace: a CG makes this
        # product at every step, with a new width as its columns converge
        raw, _ = workspace.take((1, shape[0] * shape[1] * shape[2]), A.dtype)
        parts = raw.reshape(shape)
        with threads_for(2 * self.work * k):
            if k == 1:
                products.csr_normal_vec(A.data, A.indices, A.indptr, Z[:, 0], bounds,
                                        parts[:, :, 0])
            else:
                products.csr_normal(A.data, A.indices, A.indptr, Z, bounds, parts)
        out = np.empty(shape[1:], dtype=A.dtype)
        products.reduce_parts(parts, out)
        workspace.give(raw)
        return out


def csr_times_dense(X: Any, W: Any, out: Any = None) -> Any:
    """``X @ W`` for a CSR X and a dense W of a few columns, in W's dtype: a
    compiled loop over the rows of the result (each written by one thread, so
    the same for any thread count; about twice as fast as scipy's serial
    product on two threads).  ``out``: a C-ordered array of the result's
    shape and dtype to write it into (a caller that multiplies again and
    again saves the page faults of fresh memory), or of any layout (a block
    of a Fortran-ordered basis, written in row blocks)."""
    from ._jit import apply as kernels

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
