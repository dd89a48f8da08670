"""Sketching operators: random s x d matrices that are never stored densely.

Every operator is defined by (kind, sketch_size, input_dim, seed, parameters)
and is immutable.  Its random numbers come from the counter-based hash of
``sketchlab._hash`` so that any block of its columns can be regenerated on its
own: ``S.apply(A_block, axis=0, offset=j0)`` equals applying columns
``[j0, j0 + b)`` of the whole S, on any thread count, bit for bit for the
hashing and sampling kinds.

All kinds satisfy E[S^T S] = I.
"""

import numpy as np
import scipy.sparse as sp

from . import _hash
from ._config import TABLE_CACHE_MAX_DIM
from ._validation import (
    as_matrix,
    check_axis,
    check_int,
    check_random_state,
    result_dtype,
)

__all__ = [
    "SketchOperator",
    "CountSketch",
    "OSNAP",
    "GaussianSketch",
    "SRHT",
    "UniformSampler",
    "LeverageScoreSampler",
    "ComposedSketch",
    "compose",
    "sketch_both",
    "make_sketch",
    "SKETCH_KINDS",
]

# Dimensions are bounded so that buckets fit the 32-bit multiply-shift and
# the kernels' tables can use 32-bit row indices.
_MAX_DIM = 2**31 - 1
# Columns of a dense kind (Gaussian, SRHT block form) generated at a time:
# about 8 MB of float64 per block.
_DENSE_BLOCK_ENTRIES = 1 << 20


def _index_dtype(n):
    return np.int32 if n < 2**31 else np.int64


def _empty_out(shape, dtype):
    return np.empty(shape, dtype=dtype)


def _work(A):
    """Entries a kernel reads from ``A`` (stored entries of a sparse matrix)."""
    return A.nnz if sp.issparse(A) else A.size


class SketchOperator:
    """Base class of the sketching operators.

    An operator is an ``s x d`` matrix ``S`` (``s = sketch_size``,
    ``d = input_dim``).  ``S @ A`` is the left sketch S A, ``A @ S.T`` and
    ``S.apply(A, axis=1)`` the right sketch A S^T, and
    :func:`sketch_both` the two-sided sketch S1 A S2^T.
    """

    kind = None
    _table_kind = False  # True for the kinds applied through nonzero tables
    __array_ufunc__ = None  # let ``ndarray @ op`` defer to op.__rmatmul__

    def __init__(self, sketch_size, input_dim, *, rng=None):
        self._d = check_int(input_dim, "input_dim", 1, _MAX_DIM)
        self._s = check_int(sketch_size, "sketch_size", 1, _MAX_DIM)
        self._seed = check_random_state(rng)

    # -- description -------------------------------------------------------

    @property
    def sketch_size(self):
        """Number of rows ``s`` of the sketch."""
        return self._s

    @property
    def input_dim(self):
        """Number of columns ``d`` (the dimension being compressed)."""
        return self._d

    @property
    def shape(self):
        return (self._s, self._d)

    @property
    def seed(self):
        """The 64-bit seed that, with the parameters, defines the operator."""
        return self._seed

    ndim = 2
    dtype = np.dtype(np.float64)

    def _params(self):
        return ()

    def _identity(self):
        return (type(self).__name__, self._s, self._d, self._seed) + tuple(self._params())

    def __eq__(self, other):
        return type(other) is type(self) and other._identity() == self._identity()

    def __hash__(self):
        return hash(self._identity())

    def __repr__(self):
        extra = "".join(f", {k}={v!r}" for k, v in self._repr_params())
        return f"{type(self).__name__}({self._s}, {self._d}{extra}, rng={self._seed})"

    def _repr_params(self):
        return ()

    # -- application -------------------------------------------------------

    def __matmul__(self, A):
        if isinstance(A, SketchOperator):
            return compose(self, A)
        if isinstance(A, _TransposedSketch):
            return NotImplemented
        return self.apply(A, axis=0)

    @property
    def T(self):
        """The transpose ``S^T`` (for ``A @ S.T`` and ``S.T @ Y``)."""
        return _TransposedSketch(self)

    def apply(self, A, axis=0, offset=None, *, check_finite=True):
        """Apply the sketch to ``A``.

        Parameters
        ----------
        A : array_like or scipy.sparse matrix
            ``axis=0``: shape ``(d, n)`` (or ``(d,)``), returns ``S A`` of shape
            ``(s, n)``.  ``axis=1``: shape ``(m, d)``, returns ``A S^T`` of
            shape ``(m, s)``.  Dense (C or F order) or CSR/CSC; float32 stays
            float32, other real dtypes are computed in float64.
        axis : {0, 1}
            Which dimension of ``A`` the sketch compresses.
        offset : int, optional
            When given, ``A`` is a block: its ``b`` rows (``axis=0``) or
            columns (``axis=1``) are rows ``[offset, offset + b)`` of the full
            input, and only columns ``[offset, offset + b)`` of S are applied.
            Summing the block results gives the result for the whole input.
        check_finite : bool, default True
            Reject NaN and Inf in ``A`` (one pass over its values).

        Returns
        -------
        ndarray
            Dense result, float32 for float32 input, else float64.
        """
        axis = check_axis(axis)
        A = as_matrix(A, "A", allow_1d=True, finite=check_finite)
        vector = A.ndim == 1
        if vector:
            A = A.reshape(-1, 1) if axis == 0 else A.reshape(1, -1)
        b = A.shape[axis]
        offset = self._check_block(b, offset, f"A.shape[{axis}]")
        from ._jit import threads_for

        with threads_for(_work(A) + self._s * A.shape[1 - axis]):
            out = self._apply(A, axis, offset)
        return out.ravel() if vector else out

    def _apply_valid(self, A, axis, offset):
        """:meth:`apply` for a 2-D ``A`` that already passed ``as_matrix``
        (float32/float64, CSR/CSC or dense) and a block that fits: no checks,
        for algorithms that validated their input once."""
        from ._jit import threads_for

        if not sp.issparse(A) and not (A.flags.c_contiguous or A.flags.f_contiguous):
            A = np.ascontiguousarray(A)
        with threads_for(_work(A) + self._s * A.shape[1 - axis]):
            return self._apply(A, axis, offset)

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

    def _apply(self, A, axis, offset):  # pragma: no cover - abstract
        raise NotImplementedError

    def _factor(self):
        """(outer, inner) with self = outer @ inner and inner not composed."""
        return None, self

    # -- explicit forms ----------------------------------------------------

    def toarray(self):
        """The dense ``s x d`` matrix (for tests and small cases)."""
        return self._columns(0, self._d).T.copy()

    def _columns(self, j0, j1):
        """Columns ``[j0, j1)`` of S as a C-ordered ``(j1 - j0, s)`` array."""
        raise NotImplementedError  # pragma: no cover

    def _rmatmat(self, Y):
        """S^T Y for a dense ``(s, k)`` Y, block by block over columns of S."""
        Y = np.asarray(Y)
        out = np.empty((self._d, Y.shape[1]), dtype=result_dtype(Y.dtype))
        step = max(1, _DENSE_BLOCK_ENTRIES // max(self._s, 1))
        for j0 in range(0, self._d, step):
            j1 = min(self._d, j0 + step)
            out[j0:j1] = self._columns(j0, j1) @ Y
        return out

    def aslinearoperator(self):
        """A ``scipy.sparse.linalg.LinearOperator`` of shape ``(s, d)``."""
        from scipy.sparse.linalg import LinearOperator

        op = self

        def matvec(x):
            return op.apply(np.asarray(x).reshape(-1), axis=0)

        def matmat(X):
            return op.apply(np.asarray(X), axis=0)

        def rmatvec(y):
            return op._rmatmat(np.asarray(y, dtype=np.float64).reshape(-1, 1)).ravel()

        def rmatmat(Y):
            return op._rmatmat(np.asarray(Y, dtype=np.float64))

        return LinearOperator(
            self.shape, matvec=matvec, rmatvec=rmatvec, matmat=matmat, rmatmat=rmatmat,
            dtype=np.float64,
        )


class _TransposedSketch:
    """``S.T``: supports ``A @ S.T`` (= ``S.apply(A, axis=1)``) and ``S.T @ Y``."""

    __array_ufunc__ = None

    def __init__(self, op):
        self._op = op

    @property
    def shape(self):
        return (self._op.input_dim, self._op.sketch_size)

    @property
    def T(self):
        return self._op

    ndim = 2
    dtype = np.dtype(np.float64)

    def toarray(self):
        return self._op.toarray().T

    def __rmatmul__(self, A):
        if isinstance(A, (SketchOperator, _TransposedSketch)):
            return NotImplemented
        return self._op.apply(A, axis=1)

    def __matmul__(self, Y):
        Y = as_matrix(Y, "Y", allow_1d=True, sparse=False)
        vector = Y.ndim == 1
        Y2 = Y.reshape(-1, 1) if vector else Y
        if Y2.shape[0] != self._op.sketch_size:
            raise ValueError(
                f"Y.shape[0] must equal sketch_size {self._op.sketch_size}, got {Y2.shape[0]}"
            )
        out = self._op._rmatmat(Y2)
        return out.ravel() if vector else out

    def __repr__(self):
        return f"{self._op!r}.T"


# ---------------------------------------------------------------------------
# Table kinds: CountSketch, OSNAP, samplers
# ---------------------------------------------------------------------------


class _Tables:
    """The nonzeros of columns ``[j0, j1)`` of a table kind, in the forms the
    kernels take (see ``sketchlab._jit.apply``), each built on first use.

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
    left side, plus packed codes for the hashing kinds.  One kernel family
    applies them to every input format."""

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

    def _apply(self, A, axis, offset):
        b = A.shape[axis]
        tables = self._tables(offset, offset + b)
        dtype = result_dtype(A.dtype)
        sparse = sp.issparse(A)
        # S A on a CSR/C-ordered A and A S^T on a CSC/F-ordered A gather rows
        # of a row-major array (left kernels); the other two cases scatter
        # into rows of the output (right kernels).  The CSC arrays of A are
        # the CSR arrays of A^T, the transpose of an F-ordered array is C-ordered.
        row_major = (A.format == "csr") if sparse else A.flags.c_contiguous
        X = A if row_major else A.T  # row-major view, of shape (rows, cols)
        if (axis == 0) == row_major:
            out = _left(tables, X, dtype)  # (s, cols)
        else:
            out = _right(tables, X, dtype)  # (rows, s)
        return out if row_major else out.T

    def _add_right_csc(self, out, A, offset):
        """``out += A S[:, offset:offset + b]^T`` in place for a validated CSC
        ``A`` (h x b) and an F-ordered ``out`` (h x s), with no temporary of
        out's size: row t of ``out^T`` gathers the columns of A that row t
        of S touches (one owner per output row, so deterministic)."""
        from ._jit import apply as K
        from ._jit import threads_for

        tables = self._tables(offset, offset + A.shape[1])
        with threads_for(A.nnz + out.size):
            K.left_csr(*tables.csr, A.indptr, A.indices, A.data, out.T, False)

    def _columns(self, j0, j1):
        col_ptr, rows, vals = self._make_tables(j0, j1).csc
        out = np.zeros((j1 - j0, self._s))
        cols = np.repeat(np.arange(j1 - j0), np.diff(col_ptr))
        np.add.at(out, (cols, rows), vals)
        return out

    def tosparse(self, format="csr"):
        """S as a ``scipy.sparse.csr_array`` (or ``format``), built from its tables."""
        col_ptr, rows, vals = self._make_tables(0, self._d).csc
        S = sp.csc_array((vals, rows, col_ptr), shape=self.shape)
        return S.asformat(format)

    def _rmatmat(self, Y):
        return np.asarray(self.tosparse("csc").T @ np.asarray(Y, dtype=np.float64))


def _left(tables, X, dtype):
    """S X (s x cols) for a row-major X (CSR, or C-ordered dense) of ``rows``
    rows: a hashing kind streams the rows of X into per-chunk buffers when
    the output is small; otherwise each output row gathers its rows of X."""
    from ._jit import apply as K

    rows, cols = X.shape
    shape = (tables.nrows, cols)
    sparse = sp.issparse(X)
    out = _empty_out(shape, dtype)
    # streaming pays for its buffers with short CSR rows or p > 1 nonzeros per
    # column; a dense X under a CountSketch is read once by the gather kernel,
    # whose rows of X are long and contiguous (measured 1.2-9x faster)
    stream = tables.codes is not None and (sparse or tables.p > 1)
    nchunks = _stream_chunks(_work(X), shape, dtype) if stream else 0
    if nchunks:
        # one chunk streams straight into the output
        bufs = out[np.newaxis] if nchunks == 1 else np.empty((nchunks,) + shape, dtype=dtype)
        bounds = _chunk_bounds(X, nchunks)
        args = (tables.codes, tables.p, tables.scale)
        if sparse:
            K.left_csr_chunks_hash(*args, X.indptr, X.indices, X.data, bounds, bufs)
        else:
            K.left_dense_chunks_hash(*args, X, bounds, bufs)
        if nchunks > 1:
            K.sum_chunks(bufs, out)
    elif sparse:
        K.left_csr(*tables.csr, X.indptr, X.indices, X.data, out)
    else:
        K.left_dense(*tables.csr, X, out)
    return out


def _right(tables, X, dtype):
    """X S^T (rows x s) for a row-major X: each output row is its row of X
    scattered through the columns of S."""
    from ._jit import apply as K

    out = _empty_out((X.shape[0], tables.nrows), dtype)
    if tables.codes is not None:
        args = (tables.codes, tables.p, tables.scale, out)
        if sp.issparse(X):
            K.right_csr_hash(X.indptr, X.indices, X.data, *args)
        else:
            K.right_dense_hash(X, *args)
    elif sp.issparse(X):
        K.right_csr_table(X.indptr, X.indices, X.data, *tables.csc, out)
    else:
        K.right_dense(X, *tables.csc, out)
    return out


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
        Seed (SPEC 7).

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

    def __init__(self, sketch_size, input_dim, *, nnz_per_col=None, rng=None):
        super().__init__(sketch_size, input_dim, rng=rng)
        if nnz_per_col is None:
            nnz_per_col = min(4, self._s)
        self._p = check_int(nnz_per_col, "nnz_per_col", 1, self._s)
        self._key = np.uint64(_hash.derive_key(self._seed, _hash.STREAM_HASHING))

    @property
    def nnz_per_col(self):
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
        codes = np.empty(b * p, dtype=np.int32)
        with threads_for(b * p):
            hashing_codes(self._key, self._s, p, j0, b, codes)
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
        Seed (SPEC 7).

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

    def __init__(self, sketch_size, input_dim, *, rng=None):
        super().__init__(sketch_size, input_dim, nnz_per_col=1, rng=rng)

    def _repr_params(self):
        return ()


class _Sampler(_TableSketch):
    """Row sampling: row ``t`` of S is ``weights[t] * e_{indices[t]}^T``."""

    @property
    def indices(self):
        """Sampled input indices, one per row of S (read-only)."""
        return self._indices

    @property
    def weights(self):
        """Scale of each row of S (read-only)."""
        return self._weights

    def _finish(self, indices, weights):
        self._indices = np.ascontiguousarray(indices, dtype=np.int64)
        self._weights = np.ascontiguousarray(weights, dtype=np.float64)
        self._indices.flags.writeable = False
        self._weights.flags.writeable = False

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

    def __init__(self, sketch_size, input_dim, *, replace=True, rng=None):
        super().__init__(sketch_size, input_dim, rng=rng)
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
    def replace(self):
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

    def __init__(self, sketch_size, input_dim=None, *, scores, rng=None):
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
        total = scores.sum()
        if not total > 0:
            raise ValueError("scores must not all be zero")
        self._probabilities = scores / total
        self._probabilities.flags.writeable = False
        cdf = np.cumsum(scores)
        key = _hash.derive_key(self._seed, _hash.STREAM_SAMPLING)
        u = _hash.uniform_np(_hash.hash64_np(key, np.arange(self._s))) * cdf[-1]
        idx = np.searchsorted(cdf, u, side="right")
        last = np.flatnonzero(scores)[-1]
        idx = np.minimum(idx, last)
        self._finish(idx, 1.0 / np.sqrt(self._s * self._probabilities[idx]))
        self._scores_digest = hash(scores.tobytes())

    @property
    def probabilities(self):
        """Sampling probabilities ``p`` (read-only)."""
        return self._probabilities

    def _params(self):
        return (self._scores_digest,)

    @classmethod
    def from_matrix(cls, A, sketch_size, *, axis=0, rng=None):
        """Sampler on the exact leverage scores of ``A``.

        ``axis=0`` samples rows of ``A`` (row leverage scores, operator of
        shape ``(s, m)``); ``axis=1`` samples columns (shape ``(s, n)``).
        See :func:`sketchlab.leverage_scores`.
        """
        from ._leverage import leverage_scores

        scores = leverage_scores(A, axis=axis)
        return cls(sketch_size, scores.shape[0], scores=scores, rng=rng)


# ---------------------------------------------------------------------------
# Dense kinds: Gaussian, SRHT
# ---------------------------------------------------------------------------


class _DenseSketch(SketchOperator):
    """Kinds applied as dense blocks of columns times A (BLAS / scipy)."""

    def _apply_blocks(self, A, axis, offset):
        return self._apply_blocks_many([A], axis, offset)[0]

    def _apply_blocks_many(self, arrays, axis, offset=0):
        """``[S X for X in arrays]`` (or ``X S^T``) for validated 2-D arrays of
        the same ``shape[axis]``, generating each block of S's columns ONCE
        for all of them (an algorithm that sketches C and A with the same S
        pays the generation once).  Each result equals :meth:`_apply_blocks`
        of that array alone, bit for bit."""
        b = arrays[0].shape[axis]
        prepared, outs = [], []
        for A in arrays:
            if sp.issparse(A):
                want = "csr" if axis == 0 else "csc"
                if A.format != want:
                    A = A.asformat(want)
            other = A.shape[1 - axis]
            shape = (self._s, other) if axis == 0 else (other, self._s)
            prepared.append(A)
            outs.append(np.zeros(shape, dtype=result_dtype(A.dtype)))
        step = max(1, _DENSE_BLOCK_ENTRIES // self._s)
        for k0 in range(0, b, step):
            k1 = min(b, k0 + step)
            G64 = self._columns(offset + k0, offset + k1)
            for A, out in zip(prepared, outs):
                G = G64.astype(out.dtype, copy=False)
                if axis == 0:
                    block = A[k0:k1]
                    out += np.asarray(block.T @ G).T if sp.issparse(A) else G.T @ block
                else:
                    block = A[:, k0:k1]
                    out += np.asarray(block @ G)
        return outs

    def _apply(self, A, axis, offset):
        return self._apply_blocks(A, axis, offset)


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

    def __init__(self, sketch_size, input_dim, *, rng=None):
        super().__init__(sketch_size, input_dim, rng=rng)
        self._key = np.uint64(_hash.derive_key(self._seed, _hash.STREAM_GAUSSIAN))

    def _columns(self, j0, j1):
        from ._jit.gaussian import gaussian_columns

        out = np.empty((j1 - j0, self._s))
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

    def __init__(self, sketch_size, input_dim, *, rng=None):
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
        self._rows.flags.writeable = False
        self._scale = 1.0 / np.sqrt(self._s)

    @property
    def padded_dim(self):
        """Order ``d'`` of the Hadamard matrix."""
        return self._dpad

    @property
    def sampled_rows(self):
        """Rows of ``H`` kept by P (read-only)."""
        return self._rows

    def _signs(self, j0, j1):
        return _hash.sign_np(_hash.hash64_np(self._sign_key, np.arange(j0, j1)))

    def _columns(self, j0, j1):
        from ._jit.hadamard import srht_columns

        out = np.empty((j1 - j0, self._s))
        srht_columns(self._signs(j0, j1), self._rows, self._scale, j0, out)
        return out

    def _apply(self, A, axis, offset):
        if offset != 0 or A.shape[axis] != self._d:
            return self._apply_blocks(A, axis, offset)
        from ._jit import hadamard as H

        signs = self._signs(0, self._d)
        dtype = result_dtype(A.dtype)
        args = (signs, self._rows, self._scale, self._dpad)
        if sp.issparse(A):
            # the kernel transforms compressed vectors: columns for S A, rows for A S^T
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


class ComposedSketch(SketchOperator):
    """``outer @ inner``: apply ``inner`` (s0 x d), then ``outer`` (s x s0).

    E[S^T S] = E[inner^T E[outer^T outer] inner] = I.  Algorithm 3 uses
    ``compose(GaussianSketch(c, c0), OSNAP(c0, n))``: the input-sparsity cost
    of OSNAP with the compact size of a Gaussian.
    """

    kind = "composed"

    def __init__(self, outer, inner):
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
    def outer(self):
        return self._outer

    @property
    def inner(self):
        return self._inner

    def _identity(self):
        return ("compose", self._outer._identity(), self._inner._identity())

    def __repr__(self):
        return f"compose({self._outer!r}, {self._inner!r})"

    def _apply(self, A, axis, offset):
        X = self._inner._apply(A, axis, offset)
        return self._outer._apply(X, axis, 0)

    def _factor(self):
        outer_in, innermost = self._inner._factor()
        outer = self._outer if outer_in is None else ComposedSketch(self._outer, outer_in)
        return outer, innermost

    def _columns(self, j0, j1):
        # columns of outer @ inner = (inner columns) @ outer^T
        return self._outer.apply(self._inner._columns(j0, j1), axis=1)

    def _rmatmat(self, Y):
        return self._inner._rmatmat(self._outer._rmatmat(Y))


def compose(outer, inner):
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


def sketch_both(S1, A, S2, *, offsets=None, check_finite=True):
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
    check_finite : bool, default True

    Returns
    -------
    ndarray of shape (s1, s2)

    Notes
    -----
    Cost O(nnz(A) p1 p2) for OSNAP/CountSketch (p nonzeros per column), plus
    the output.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, sketchlab
    >>> A = sp.random(50, 40, density=0.1, format="csr", random_state=0)
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
    return _sketch_both_valid(S1, A, S2, i0, j0)


def _sketch_both_valid(S1, A, S2, i0=0, j0=0):
    """:func:`sketch_both` for an ``A`` that already passed ``as_matrix`` and
    blocks that fit: no checks (for algorithms that validated A once)."""
    from ._jit import threads_for

    if not sp.issparse(A) and not (A.flags.c_contiguous or A.flags.f_contiguous):
        A = np.ascontiguousarray(A)
    with threads_for(_work(A) + S1.sketch_size * S2.sketch_size):
        return _sketch_both(S1, A, S2, i0, j0)


def _sketch_both(S1, A, S2, i0, j0):
    outer1, inner1 = S1._factor()
    outer2, inner2 = S2._factor()
    if inner1._table_kind and inner2._table_kind:
        M = _both_tables(inner1, A, inner2, i0, j0)
    elif inner1._table_kind or not inner2._table_kind:
        M = inner2._apply(inner1._apply(A, 0, i0), 1, j0)
    else:
        M = inner1._apply(inner2._apply(A, 1, j0), 0, i0)
    if outer1 is not None:
        M = outer1._apply(M, 0, 0)
    if outer2 is not None:
        M = outer2._apply(M, 1, 0)
    return M


def _both_tables(S1, A, S2, i0, j0):
    from ._jit import apply as K

    m, n = A.shape
    t1 = S1._tables(i0, i0 + m)
    t2 = S2._tables(j0, j0 + n)
    dtype = result_dtype(A.dtype)
    s1, s2 = S1.sketch_size, S2.sketch_size
    if not sp.issparse(A):
        # one pass over A for the larger side, then the small intermediate
        # (s x n or m x s) through the other: cheaper than scattering every
        # entry of A through both tables (p1 p2 m n), as the nonzeros of a
        # sparse A are
        if A.flags.c_contiguous:
            return S2._apply(S1._apply(A, 0, i0), 1, j0)
        return S1._apply(S2._apply(A, 1, j0), 0, i0)
    # the CSC arrays of A are the CSR arrays of A^T: (S1 A S2^T)^T = S2 A^T S1^T
    transposed = A.format == "csc"
    left, right = (t2, t1) if transposed else (t1, t2)
    shape = (s2, s1) if transposed else (s1, s2)
    out = _empty_out(shape, dtype)
    nchunks = _stream_chunks(A.nnz, shape, dtype)
    if left.codes is None or right.codes is None or nchunks == 0:
        # samplers (or buffers too large): each output row gathers the rows
        # of A it needs, so a sampler reads only its sampled rows
        K.both_csr_rows(*left.csr, A.indptr, A.indices, A.data, *right.csc, out)
    else:
        # hashing kinds touch every row: stream A once in its row order
        bounds = _chunk_bounds(A.T if transposed else A, nchunks)
        bufs = out[np.newaxis] if nchunks == 1 else np.empty((nchunks,) + shape, dtype=dtype)
        K.both_csr_chunks_hash(
            left.codes, left.p, left.scale, A.indptr, A.indices, A.data,
            right.codes, right.p, right.scale, bounds, bufs,
        )
        if nchunks > 1:
            K.sum_chunks(bufs, out)
    return out.T if transposed else out


# Streaming kernels (one output buffer per input chunk): at most this many
# chunks, each of at least this many stored entries, and all buffers together
# at most this many bytes, so that they stay in cache and never cost much
# memory (a large output uses the kernels that own output rows instead).
_MAX_CHUNKS = 8
_MIN_CHUNK_NNZ = 1 << 16
_MAX_CHUNK_BYTES = 1 << 23


def _stream_chunks(work, shape, dtype):
    """Number of input chunks of a streaming kernel with one output buffer of
    ``shape`` per chunk, 0 when the buffers would not fit the budget with at
    least two chunks (or one for small work).  Depends only on the problem,
    never on the thread count, so results do not either."""
    per_buffer = shape[0] * shape[1] * np.dtype(dtype).itemsize
    wanted = min(_MAX_CHUNKS, max(1, work // _MIN_CHUNK_NNZ))
    fits = _MAX_CHUNK_BYTES // max(per_buffer, 1)
    nchunks = min(wanted, fits)
    return int(nchunks) if nchunks >= min(wanted, 2) else 0


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


SKETCH_KINDS = ("countsketch", "osnap", "gaussian", "srht", "uniform", "leverage")


def make_sketch(kind, sketch_size, input_dim, *, rng=None, scores=None, **params):
    """Build an operator from its kind name.

    Parameters
    ----------
    kind : {"countsketch", "osnap", "gaussian", "srht", "uniform", "leverage"}
    sketch_size, input_dim : int
    rng : None, int or numpy.random.Generator
    scores : array_like, optional
        Required for ``"leverage"``.
    **params
        Passed to the operator (e.g. ``nnz_per_col`` for OSNAP, ``replace``
        for uniform sampling).
    """
    classes = {
        "countsketch": CountSketch,
        "osnap": OSNAP,
        "gaussian": GaussianSketch,
        "srht": SRHT,
        "uniform": UniformSampler,
    }
    if kind == "leverage":
        if scores is None:
            raise ValueError("kind='leverage' needs scores=")
        return LeverageScoreSampler(sketch_size, input_dim, scores=scores, rng=rng, **params)
    if not isinstance(kind, str) or kind not in classes:
        raise ValueError(f"kind must be one of {list(SKETCH_KINDS)}, got {kind!r}")
    return classes[kind](sketch_size, input_dim, rng=rng, **params)
