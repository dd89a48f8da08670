"""The table engine: the kinds whose nonzeros are listed in tables
(CountSketch, OSNAP, the samplers), and how a table kind is applied to every
input form and into every output layout (the loops themselves run in
``_engine``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._config import sparse as sp  # scipy.sparse, imported on first use
from .._config import TABLE_CACHE_MAX_DIM
from .._validation import result_dtype
from .._engine import operators as _engine
from ._base import (
    _PIECE_ENTRIES,
    SketchOperator,
    _columns_contiguous,
    _deliver,
    _rows,
    _rows_contiguous,
    _touched,
    _transpose,
)


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
            self._csr = _engine.table_rows(*self.csc, self.nrows)
        return self._csr


class _TableSketch(SketchOperator):
    """Kinds whose nonzeros are listed in tables: CSC (column j -> rows,
    values) for the right side and CSR (row t -> columns, values) for the
    left side, plus packed codes for the hashing kinds.  One family of
    compiled loops applies them to every input format, and ``sketch_both``
    with one on each side reads a sparse A once."""

    one_pass = True
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
    apply_loop = _engine.left if left else _engine.right
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
