"""Views of a validated dense or sparse matrix that the loops read: its
transpose and row slices on the same arrays, made without scipy's checks
(which read the index arrays through on every view), and the work a loop
does on it."""

from __future__ import annotations

from typing import Any

from .._config import sparse as sp  # scipy.sparse, imported on first use

__all__ = ["work", "compressed", "transpose", "rows"]


def work(A: Any) -> int:
    """Entries a loop reads from ``A`` (stored entries of a sparse matrix)."""
    return A.nnz if sp.issparse(A) else A.size


def compressed(like: Any, fmt: str, data: Any, indices: Any, indptr: Any,
               shape: tuple[int, int]) -> Any:
    """A CSR or CSC (``fmt``) matrix, or array, as ``like`` is, on the given
    arrays of a validated matrix, without scipy's constructor checks: with
    int64 index arrays those read them through and copy them down to int32
    where they fit, on every transpose or row slice of a pass (the operator
    benchmarks of asv_benchmarks/bench_operators.py measure the passes)."""
    name = type(like).__name__
    kind = name[3:] if name in ("csr_matrix", "csc_matrix", "csr_array", "csc_array") else "_matrix"
    M = getattr(sp, fmt + kind)(shape, dtype=data.dtype)  # empty: nothing to check
    M.data, M.indices, M.indptr = data, indices, indptr
    return M


def transpose(X: Any) -> Any:
    """``X.T``: for a sparse X, the CSC (CSR) view of a CSR (CSC) X on the
    same arrays, made without scipy's checks (:func:`compressed`)."""
    if not sp.issparse(X) or X.format not in ("csr", "csc"):
        return X.T
    return compressed(X, "csc" if X.format == "csr" else "csr", X.data, X.indices, X.indptr,
                       X.shape[::-1])


def rows(X: Any, r0: int, r1: int) -> Any:
    """Rows [r0, r1) of a dense or CSR X, without copying its values."""
    if not sp.issparse(X):
        return X[r0:r1]
    lo, hi = X.indptr[r0], X.indptr[r1]
    return compressed(X, "csr", X.data[lo:hi], X.indices[lo:hi], X.indptr[r0:r1 + 1] - lo,
                       (r1 - r0, X.shape[1]))
