"""Single-pass SVD from sketches: Fast SP-SVD (Algorithm 3) and its two peers.

All three methods read A exactly once, as a matrix or as an iterable of column
blocks (``axis=1``, as in the paper) or row blocks (``axis=0``), and keep only
sketches of it (paper notation -> code):

- range sketch     C = A Omega~        (m x c)      ``_SketchState.C``
- co-range sketch  R = Psi~ A          (r x n)      ``_SketchState.R``
- core sketch      M = S_C A S_R^T     (s_c x s_r)  ``_SketchState.M``

then recover a low-rank SVD from them:

- :func:`fast_sp_svd` (Algorithm 3): U_C = qr(C), V_R = qr(R^T),
  N = (S_C U_C)^+ M (V_R^T S_R^T)^+, svd(N).
- :func:`practical_sp_svd` (the paper's appendix algorithm; Tropp, Yurtsever,
  Udell & Cevher 2017): N = (Psi~ U_C)^+ R V_R, no core sketch.
- :func:`three_sketch_svd` (Tropp, Yurtsever, Udell & Cevher 2019): core
  (Phi Q)^+ Z ((Theta P)^+)^T from QRs of Phi Q and Theta P.

The sketches of a block ``A[i0:i0+h, j0:j0+w]`` are added to the running state
by :class:`_SketchState` with the operators' block application, so that column
blocks, row blocks and the chunks of a 2-D grid (``sketchlab.dask``) all use
the same code, and states of disjoint blocks built from the same seeds add up.
"""

import collections.abc
import math

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ._config import serial_blas
from ._validation import (
    as_generator,
    as_matrix,
    check_axis,
    check_choice,
    check_int,
    result_dtype,
)
from ._operators import OSNAP, SRHT, CountSketch, GaussianSketch, _sketch_both_valid, compose

__all__ = [
    "fast_sp_svd",
    "practical_sp_svd",
    "three_sketch_svd",
    "practical_sp_svd_sizes",
    "three_sketch_svd_sizes",
    "SVD_SKETCHES",
]

SVD_SKETCHES = ("osnap-gaussian", "gaussian", "countsketch", "osnap", "srht")
"""Kind names accepted by ``range_sketch=`` and ``core_sketch=``."""

# "osnap-gaussian" is Gaussian(s, s0) after OSNAP(s0, d) (Algorithm 3, line 3).
# The paper asks for s0 = O((k/eps)^{1+gamma}) against s = O(k/eps); we use the
# fixed multiple s0 = 4 s (capped at d), which keeps the explicit test-matrix
# block of a streamed update (w x s0, then w x s) small.
_INNER_FACTOR = 4
# A block update whose temporary (a slice of C or R) would exceed a quarter of
# the sketches' memory (at least _MIN_BUDGET bytes) is cut into pieces, so that
# the peak memory stays close to the sketches themselves; each piece is one
# more kernel call, hence no finer cut than needed.
_MIN_BUDGET = 1 << 18
# Row chunks of the in-place products at the end.
_CHUNKS = 8
# Rows of U_C, V_R sketched per call in the final step: block application with
# offsets, so no O(m) table of a hash sketch is built at the end.
_FINAL_STEP = 1 << 16


# ---------------------------------------------------------------------------
# Sketch construction and block updates
# ---------------------------------------------------------------------------


def _make_sketch(kind, size, dim, gen):
    """The operator of ``kind`` with shape (size, dim), seeded from ``gen``."""
    if kind == "osnap-gaussian":
        inner_size = min(dim, _INNER_FACTOR * size)
        inner = OSNAP(inner_size, dim, nnz_per_col=min(4, inner_size), rng=gen)
        return compose(GaussianSketch(size, inner_size, rng=gen), inner)
    if kind == "osnap":
        return OSNAP(size, dim, nnz_per_col=min(4, size), rng=gen)
    if kind == "countsketch":
        return CountSketch(size, dim, rng=gen)
    if kind == "gaussian":
        return GaussianSketch(size, dim, rng=gen)
    return SRHT(size, dim, rng=gen)


def _make_operators(gen, shape, c, r, range_sketch, s_c=None, s_r=None, core_sketch=None):
    """(Omega, Psi, S_C, S_R) of shapes (c, n), (r, m), (s_c, m), (s_r, n),
    drawn from ``gen`` in this fixed order (S_C, S_R are None without a core)."""
    m, n = shape
    omega = _make_sketch(range_sketch, c, n, gen)
    psi = _make_sketch(range_sketch, r, m, gen)
    if core_sketch is None:
        return omega, psi, None, None
    s_c = _make_sketch(core_sketch, s_c, m, gen)
    return omega, psi, s_c, _make_sketch(core_sketch, s_r, n, gen)


def _chunks(n, pieces=_CHUNKS):
    """``pieces`` (at most n) nearly equal ranges covering [0, n)."""
    step = -(-n // max(1, min(n, pieces)))
    return [(i, min(n, i + step)) for i in range(0, n, step)]


def _pieces(nbytes, budget):
    return -(-nbytes // budget)


def _gemm_inplace(out, X, W):
    """out += X @ W by BLAS with beta = 1 when ``out`` can be written in place."""
    if not out.flags.f_contiguous or out.dtype not in (np.float32, np.float64):
        return False
    if X.dtype != out.dtype or W.dtype != out.dtype:
        return False
    gemm = sla.blas.get_blas_funcs("gemm", (out,))
    a, trans_a = (X, 0) if X.flags.f_contiguous else (X.T, 1)
    b, trans_b = (W, 0) if W.flags.f_contiguous else (W.T, 1)
    res = gemm(1.0, a, b, beta=1.0, c=out, trans_a=trans_a, trans_b=trans_b, overwrite_c=1)
    if not np.shares_memory(res, out):  # pragma: no cover - f2py copied after all
        out[...] = res
    return True


def _rows(X, r0, r1):
    """Rows [r0, r1) of a dense or CSR X without copying its values."""
    if not sp.issparse(X):
        return X[r0:r1]
    lo, hi = X.indptr[r0], X.indptr[r1]
    return sp.csr_matrix((X.data[lo:hi], X.indices[lo:hi], X.indptr[r0:r1 + 1] - lo),
                         shape=(r1 - r0, X.shape[1]), copy=False)


def _add_right(out, X, op, offset, budget):
    """``out += X op[:, offset:offset + w]^T`` for X of shape (h, w), with
    temporaries of about ``budget`` bytes at most.

    Hash kinds on a CSC block add into an F-ordered ``out`` in place.  Other
    hash cases, and any kind when the block is wider than tall, go through
    ``op.apply(..., offset=)`` (O(nnz(X) p) for the hash kinds), in row
    pieces where rows are cheap to slice.  Otherwise dense and composed kinds
    form the explicit block of the test matrix (w x s, no larger than X) and
    multiply: with BLAS in place for dense X, in column pieces for sparse X.
    """
    h, w = X.shape
    pieces = _pieces(out.size * 8, budget)  # the temporary is a float64 (or float32) slice
    if op._table_kind and sp.issparse(X) and X.format == "csc" and out.flags.f_contiguous:
        op._add_right_csc(out, X, offset)  # in place, no temporary
        return
    if op._table_kind or w > h:
        if pieces == 1 or (sp.issparse(X) and X.format == "csc"):
            out += op._apply_valid(X, 1, offset)
            return
        for r0, r1 in _chunks(h, pieces):
            out[r0:r1] += op._apply_valid(_rows(X, r0, r1), 1, offset)
        return
    W = op._columns(offset, offset + w).astype(out.dtype, copy=False)  # (w, s)
    if sp.issparse(X):
        for t0, t1 in _chunks(W.shape[1], pieces):
            out[:, t0:t1] += X @ W[:, t0:t1]
        return
    if not _gemm_inplace(out, X, W):
        for r0, r1 in _chunks(h, pieces):
            out[r0:r1] += X[r0:r1] @ W


def _add_left(out, X, op, offset, budget):
    """``out += op[:, offset:offset + h] X`` for X of shape (h, w)."""
    _add_right(out.T, X.T, op, offset, budget)


class _SketchState:
    """Running sketches of one pass over A (m x n), updated block by block.

    A block ``X = A[i0:i0+h, j0:j0+w]`` given with its offsets updates
    (Algorithm 3, lines 7-8, for any block shape)::

        C[i0:i0+h]     += X Omega[:, j0:j0+w]^T
        R[:, j0:j0+w]  += Psi[:, i0:i0+h] X
        M              += S_C[:, i0:i0+h] X S_R[:, j0:j0+w]^T

    The operators are defined by their seeds only, so states of disjoint
    blocks computed elsewhere with the same operators add up (:meth:`merge`).
    With ``shape[0] = None`` the number of rows is open (row batches of an
    estimator): C then grows by row blocks, which must come in order, and
    Psi, S_C need an ``input_dim`` at least the number of rows.

    C is kept in Fortran order and R in C order, so that ``qr(C)`` and
    ``qr(R^T)`` can run in place at the end.
    """

    def __init__(self, shape, omega, psi, s_c=None, s_r=None, dtype=np.float64):
        m, n = shape
        self.shape = (m, n)
        self.omega, self.psi, self.s_c, self.s_r = omega, psi, s_c, s_r
        self.dtype = np.dtype(dtype)
        self.rows_seen = 0
        self._row_blocks = []
        self.C = None if m is None else np.zeros((m, omega.sketch_size), self.dtype, order="F")
        self.R = np.zeros((psi.sketch_size, n), self.dtype)
        self.M = None
        if s_c is not None:
            self.M = np.zeros((s_c.sketch_size, s_r.sketch_size), self.dtype)
        self._budget = max(_MIN_BUDGET, self.nbytes // 4)

    def update(self, block, offsets=(0, 0)):
        """Add the sketches of ``block`` (dense or CSR/CSC, already validated)
        holding ``A[i0:i0+h, j0:j0+w]`` with ``offsets = (i0, j0)``."""
        i0, j0 = offsets
        h, w = block.shape
        if self.C is None:
            if i0 != self.rows_seen or w != self.shape[1]:
                raise ValueError("an open-ended state takes full row blocks, in order")
            part = np.zeros((h, self.omega.sketch_size), self.dtype, order="F")
            _add_right(part, block, self.omega, j0, part.nbytes)
            self._row_blocks.append(part)
        else:
            _add_right(self.C[i0:i0 + h], block, self.omega, j0, self._budget)
        self.rows_seen = max(self.rows_seen, i0 + h)
        _add_left(self.R[:, j0:j0 + w], block, self.psi, i0, self._budget)
        if self.M is not None:
            self.M += _sketch_both_valid(self.s_c, block, self.s_r, i0, j0)

    def merge(self, other):
        """Add the state of other blocks of the same matrix (same operators)."""
        if self.C is None or other.C is None:
            raise ValueError("only states of a known shape can be merged")
        self.C += other.C
        self.R += other.R
        if self.M is not None:
            self.M += other.M
        return self

    def range_sketch(self):
        """C (m x c), Fortran order (for an open state, its row blocks joined)."""
        if self.C is not None:
            return self.C
        if not self._row_blocks:
            return np.zeros((0, self.omega.sketch_size), self.dtype, order="F")
        if len(self._row_blocks) > 1:
            self._row_blocks = [np.asfortranarray(np.vstack(self._row_blocks))]
        return self._row_blocks[0]

    @property
    def nbytes(self):
        """Bytes held by the sketches C, R, M (not the operators)."""
        c_bytes = self.C.nbytes if self.C is not None else sum(b.nbytes for b in self._row_blocks)
        return c_bytes + self.R.nbytes + (self.M.nbytes if self.M is not None else 0)

    def finalize(self, method, *, rank=None, overwrite=False):
        """(U, s, Vt) of ``method`` in {"fast", "practical", "three"}.

        ``overwrite=True`` lets the QRs and the final products reuse the
        memory of C and R (the state is spent); otherwise it stays usable.
        """
        C = self.range_sketch()
        # One BLAS thread for these thin QRs and small solves: next to the
        # Numba kernels, spinning OpenBLAS threads made them several times
        # slower (QR of a 52396 x 20 C: 0.07 s with one thread, 0.5 s with two).
        with serial_blas():
            if method == "practical":
                return _finalize_practical(C, self.R, self.psi, rank, overwrite, self.dtype)
            core = _core_fast if method == "fast" else _core_three
            return _finalize_core(C, self.R, self.M, self.s_c, self.s_r, core, rank, overwrite,
                                  self.dtype)


# ---------------------------------------------------------------------------
# Recovery from the sketches
# ---------------------------------------------------------------------------


def _qr(X, overwrite):
    """Economic Householder QR of a tall-or-wide X: (Q, T), Q orthonormal."""
    return sla.qr(X, mode="economic", overwrite_a=overwrite, check_finite=False)


def _sketch_rows(op, Q):
    """``op @ Q`` in float64, applied in row blocks of Q with offsets."""
    Q = Q if Q.dtype == np.float64 else Q.astype(np.float64)
    out = np.zeros((op.sketch_size, Q.shape[1]))
    for i0 in range(0, Q.shape[0], _FINAL_STEP):
        i1 = min(Q.shape[0], i0 + _FINAL_STEP)
        out += op._apply_valid(Q[i0:i1], 0, i0)
    return out


def _lift(Q, Z):
    """``Q @ Z`` (Q of shape (p, q), Z of shape (q, t), t <= q), written into
    the first t columns of Q one row chunk at a time (Q is spent)."""
    Z = Z.astype(Q.dtype, copy=False)
    t = Z.shape[1]
    for r0, r1 in _chunks(Q.shape[0]):
        Q[r0:r1, :t] = Q[r0:r1] @ Z
    return Q[:, :t]


def _lstsq(A, B):
    return sla.lstsq(A, B, check_finite=False)[0]


def _core_fast(M, SU, SV):
    """N = (S_C U_C)^+ M (V_R^T S_R^T)^+ by two least-squares solves."""
    Y = _lstsq(SU, M)  # (q_c, s_r)
    return _lstsq(SV, Y.T).T  # Y (SV^T)^+ = ((SV)^+ Y^T)^T


def _core_three(M, SU, SV):
    """(Phi Q)^+ Z ((Theta P)^+)^T through QRs of Phi Q and Theta P (TYUC 2019)."""
    U1, T1 = sla.qr(SU, mode="economic", check_finite=False)
    U2, T2 = sla.qr(SV, mode="economic", check_finite=False)
    W = U1.T @ M @ U2
    try:
        W = sla.solve_triangular(T1, W, check_finite=False)
        return sla.solve_triangular(T2, W.T, check_finite=False).T
    except sla.LinAlgError:  # a singular core sketch: pseudo-inverse semantics
        return _lstsq(T2, _lstsq(T1, W).T).T


def _svd_and_lift(U_C, N, V_R, rank, dtype):
    U_N, s, Vt_N = sla.svd(N, full_matrices=False, check_finite=False, lapack_driver="gesdd")
    t = s.shape[0] if rank is None else min(rank, s.shape[0])
    U = _lift(U_C, U_N[:, :t])
    V = _lift(V_R, Vt_N[:t].T)
    return U.astype(dtype, copy=False), s[:t].astype(dtype), V.T.astype(dtype, copy=False)


def _finalize_core(C, R, M, s_c, s_r, core, rank, overwrite, dtype):
    U_C, _ = _qr(C, overwrite)  # (m, q_c); Q of a copy of C unless overwrite
    V_R, _ = _qr(R.T, overwrite)  # (n, q_r)
    SU = _sketch_rows(s_c, U_C)  # S_C U_C, (s_c, q_c)
    SV = _sketch_rows(s_r, V_R)  # S_R V_R = (V_R^T S_R^T)^T, (s_r, q_r)
    N = core(np.asarray(M, dtype=np.float64), SU, SV)
    return _svd_and_lift(U_C, N, V_R, rank, dtype)


def _finalize_practical(C, R, psi, rank, overwrite, dtype):
    U_C, _ = _qr(C, overwrite)
    V_R, T_R = _qr(R.T, overwrite)  # R^T = V_R T_R, so R V_R = T_R^T
    PU = _sketch_rows(psi, U_C)  # Psi~ U_C, (r, q_c)
    N = _lstsq(PU, np.asarray(T_R.T, dtype=np.float64))  # (Psi~ U_C)^+ R V_R
    return _svd_and_lift(U_C, N, V_R, rank, dtype)


# ---------------------------------------------------------------------------
# Input: a matrix or an iterable of blocks
# ---------------------------------------------------------------------------


def _check_shape(shape):
    try:
        m, n = shape
    except (TypeError, ValueError):
        raise TypeError(f"shape must be a pair of ints (m, n), got {shape!r}") from None
    return check_int(m, "shape[0]", 1), check_int(n, "shape[1]", 1)


def _is_matrix(A):
    return sp.issparse(A) or isinstance(A, np.ndarray)


class _BlockSource:
    """Validated blocks ``(X, (i0, j0))`` of A, read once, one at a time."""

    def __init__(self, A, axis, block_size, shape):
        self.axis = axis
        if shape is None:
            if isinstance(A, collections.abc.Iterator) or (
                isinstance(A, (list, tuple)) and A and _is_matrix(A[0]) and A[0].ndim == 2
            ):
                raise ValueError("shape=(m, n) is required when A is an iterable of blocks")
            A = as_matrix(A, "A")
            self.shape = A.shape
        else:
            self.shape = _check_shape(shape)
            if _is_matrix(A):
                if A.shape != self.shape:
                    raise ValueError(f"shape={tuple(shape)!r} does not match A.shape={A.shape}")
                A = as_matrix(A, "A")
        if _is_matrix(A):
            self._matrix = A
            self._iterable = None
            if block_size is not None:
                block_size = check_int(block_size, "block_size", 1)
            self.block_size = block_size
        else:
            if block_size is not None:
                raise ValueError(
                    "block_size applies to a matrix A; an iterable brings its own blocks, "
                    f"got block_size={block_size!r}"
                )
            try:
                self._iterable = iter(A)
            except TypeError:
                raise TypeError(
                    "A must be an array, a scipy.sparse matrix or an iterable of blocks, "
                    f"got {type(A).__name__}"
                ) from None
            self._matrix = None
        if min(self.shape) < 1:
            raise ValueError(f"A must have at least one row and one column, got shape {self.shape}")

    def __iter__(self):
        if self._matrix is not None:
            yield from self._matrix_blocks()
        else:
            yield from self._stream_blocks()

    def _matrix_blocks(self):
        A = self._matrix
        dim = self.shape[self.axis]
        if self.block_size is None or self.block_size >= dim:
            yield A, (0, 0)
            return
        if sp.issparse(A):  # slice along the cheap axis
            want = "csc" if self.axis == 1 else "csr"
            if A.format != want:
                A = A.asformat(want)
        for p0 in range(0, dim, self.block_size):
            p1 = min(dim, p0 + self.block_size)
            if self.axis == 1:
                X, offsets = A[:, p0:p1], (0, p0)
            else:
                X, offsets = A[p0:p1], (p0, 0)
            if not sp.issparse(X) and not (X.flags.c_contiguous or X.flags.f_contiguous):
                X = np.ascontiguousarray(X)
            yield X, offsets
            del X

    def _stream_blocks(self):
        axis = self.axis
        full = self.shape[1 - axis]
        dim = self.shape[axis]
        pos = 0
        count = 0
        for raw in self._iterable:
            X = as_matrix(raw, f"block {count}")
            del raw
            if X.shape[1 - axis] != full:
                which = "rows" if axis == 1 else "columns"
                raise ValueError(
                    f"block {count} has {X.shape[1 - axis]} {which}, expected shape[{1 - axis}] = "
                    f"{full} for {'column' if axis == 1 else 'row'} blocks (axis={axis})"
                )
            width = X.shape[axis]
            if pos + width > dim:
                raise ValueError(
                    f"the blocks hold more than shape[{axis}] = {dim} "
                    f"{'columns' if axis == 1 else 'rows'} (block {count} ends at {pos + width})"
                )
            count += 1
            if width:
                yield X, ((0, pos) if axis == 1 else (pos, 0))
            del X
            pos += width
        if count == 0:
            raise ValueError("A is an empty iterable: no block was read")
        if pos != dim:
            raise ValueError(
                f"the blocks hold {pos} {'columns' if axis == 1 else 'rows'} in total, "
                f"but shape[{axis}] = {dim}"
            )


def _run(source, make_state):
    """One pass over the blocks; ``make_state(dtype)`` builds the state at the
    first block (float32 blocks keep float32 sketches)."""
    state = None
    for X, offsets in source:
        if state is None:
            state = make_state(result_dtype(X.dtype))
        state.update(X, offsets)
        del X
    return state


# ---------------------------------------------------------------------------
# Sizes
# ---------------------------------------------------------------------------


def _size(value, name, low, default):
    if value is None:
        return default
    return check_int(value, name, low)


def _check_k(k, shape):
    return check_int(k, "k", 1, min(shape))


def _check_rank(rank, c, r):
    if rank is None:
        return None
    return check_int(rank, "rank", 1, min(c, r))


def _check_range_sizes(k, c, r):
    if k > min(c, r):
        raise ValueError(f"k must be <= the sketch sizes c = {c} and r = {r}, got k = {k}")


def _fast_sizes(k, shape, c, r, s_c, s_r):
    m, n = shape
    dim = min(m, n)
    c = _size(c, "c", 1, min(2 * k, dim))
    r = _size(r, "r", 1, min(2 * k, dim))
    _check_range_sizes(k, c, r)
    x = (c + r) / k
    s_c = _size(s_c, "s_c", 1, max(c, min(m, math.ceil(3 * c * math.sqrt(x)))))
    s_r = _size(s_r, "s_r", 1, max(r, min(n, math.ceil(3 * r * math.sqrt(x)))))
    _check_core_sizes(c, r, s_c, s_r)
    return c, r, s_c, s_r


def _check_core_sizes(c, r, s_c, s_r):
    if s_c < c:
        raise ValueError(f"s_c must be >= c = {c} (S_C U_C needs full column rank), got {s_c}")
    if s_r < r:
        raise ValueError(f"s_r must be >= r = {r} (S_R V_R needs full column rank), got {s_r}")


def _three_sizes(k, shape, c, r, s_c, s_r):
    m, n = shape
    dim = min(m, n)
    c = _size(c, "c", 1, min(4 * k + 1, dim))
    r = _size(r, "r", 1, min(4 * k + 1, dim))
    _check_range_sizes(k, c, r)
    s_c = _size(s_c, "s_c", 1, max(c, min(2 * c + 1, m)))
    s_r = _size(s_r, "s_r", 1, max(r, min(2 * r + 1, n)))
    _check_core_sizes(c, r, s_c, s_r)
    return c, r, s_c, s_r


def _practical_sizes(k, shape, c, r):
    m, n = shape
    c = _size(c, "c", 1, min(2 * k + 1, min(m, n)))
    r = _size(r, "r", 1, max(c, min(2 * c + 1, m)))
    _check_range_sizes(k, c, r)
    if r < c:
        raise ValueError(
            f"practical_sp_svd needs r >= c (Psi~ U_C must have full column rank), got c = {c}, "
            f"r = {r}"
        )
    return c, r


def practical_sp_svd_sizes(total, k):
    """Split of a budget ``c + r = total`` for :func:`practical_sp_svd`.

    Tropp, Yurtsever, Udell & Cevher (2017) recommend a co-range sketch about
    twice the range sketch, r ~ 2c + 1, for a fixed budget; here
    ``c = floor((total - 1) / 3)`` and ``r = total - c``, with c raised to at
    least k and lowered to at most ``total // 2`` so that the algorithm can
    use it (k <= c <= r).

    Parameters
    ----------
    total : int
        ``c + r``, at least ``2 k``.
    k : int
        Target rank.

    Returns
    -------
    (c, r) : tuple of int

    Raises
    ------
    ValueError
        When ``total < 2 k``.

    Examples
    --------
    >>> from sketchlab import practical_sp_svd_sizes
    >>> practical_sp_svd_sizes(40, 10)
    (13, 27)
    >>> practical_sp_svd_sizes(20, 10)
    (10, 10)
    """
    k = check_int(k, "k", 1)
    total = check_int(total, "total", 2 * k)
    c = min(max(k, (total - 1) // 3), total // 2)
    return c, total - c


def three_sketch_svd_sizes(storage, shape, k):
    """Sizes for :func:`three_sketch_svd` within a storage budget.

    Tropp, Yurtsever, Udell & Cevher (2019, eqs. 5.5-5.6) spend a budget of
    ``T = k'(m + n) + s^2`` numbers on range and co-range sketches of size k'
    and an s x s core sketch with ``s = 2k' + 1`` (real field):
    ``k' = floor((sqrt((m+n+4)^2 + 16(T-1)) - (m+n+4)) / 8)``, then
    ``s = floor(sqrt(T - k'(m + n)))``, capped at min(m, n).

    Parameters
    ----------
    storage : int
        T, numbers of the three sketches together (e.g. the
        ``m c + n r + s_c s_r`` of a Fast SP-SVD to compare with).
    shape : (int, int)
        (m, n).
    k : int
        Target rank; the budget must allow ``k' >= k``.

    Returns
    -------
    (c, r, s_c, s_r) : tuple of int
        ``c = r = k'`` and ``s_c = s_r = s``.

    Raises
    ------
    ValueError
        When the budget gives ``k' < k``.

    Examples
    --------
    >>> from sketchlab import three_sketch_svd_sizes
    >>> three_sketch_svd_sizes(10 * 2500 + 42 * 42, (2000, 500), 10)
    (10, 10, 42, 42)
    """
    m, n = _check_shape(shape)
    k = check_int(k, "k", 1, min(m, n))
    storage = check_int(storage, "storage", 1)
    a = m + n + 4
    kk = int((math.isqrt(a * a + 16 * (storage - 1)) - a) // 8)
    if kk < k:
        raise ValueError(
            f"storage = {storage} allows range sketches of size {kk} only, below k = {k}"
        )
    s = min(min(m, n), math.isqrt(storage - kk * (m + n)))
    kk = min(kk, s)
    return kk, kk, s, s


# ---------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------

_INPUT_DOC = """A : array_like, scipy.sparse matrix, or iterable of blocks
        The matrix (m x n), dense or CSR/CSC, or an iterable of its column
        blocks (``axis=1``: each of shape (m, w), in order) or row blocks
        (``axis=0``: each (h, n)), dense or sparse, with ``shape=(m, n)``.
        A is read exactly once and at most one block is held at a time; a
        matrix is itself read in blocks of ``block_size``."""


def _check_kinds(range_sketch, core_sketch=None):
    check_choice(range_sketch, "range_sketch", SVD_SKETCHES)
    if core_sketch is not None:
        check_choice(core_sketch, "core_sketch", SVD_SKETCHES)


def _core_setup(method, shape, k, c, r, s_c, s_r, range_sketch, core_sketch, rank, rng):
    """``(rank, (Omega, Psi, S_C, S_R))`` of :func:`fast_sp_svd` (``method``
    "fast") or :func:`three_sketch_svd` ("three"): the two differ only in
    their default sizes and their core.  Kinds are checked by the caller."""
    k = _check_k(k, shape)
    sizes = _fast_sizes if method == "fast" else _three_sizes
    c, r, s_c, s_r = sizes(k, shape, c, r, s_c, s_r)
    rank = _check_rank(rank, c, r)
    return rank, _make_operators(as_generator(rng), shape, c, r, range_sketch, s_c, s_r,
                                 core_sketch)


def _core_svd(method, A, k, c, r, s_c, s_r, range_sketch, core_sketch, axis, block_size, rank,
              rng, shape):
    """One pass over A, then the core of ``method`` ("fast" or "three")."""
    axis = check_axis(axis)
    _check_kinds(range_sketch, core_sketch)
    source = _BlockSource(A, axis, block_size, shape)
    rank, ops = _core_setup(method, source.shape, k, c, r, s_c, s_r, range_sketch, core_sketch,
                            rank, rng)
    state = _run(source, lambda dtype: _SketchState(source.shape, *ops, dtype=dtype))
    return state.finalize(method, rank=rank, overwrite=True)


def fast_sp_svd(A, k, *, c=None, r=None, s_c=None, s_r=None, range_sketch="osnap-gaussian",
                core_sketch="osnap", axis=1, block_size=None, rank=None, rng=None, shape=None):
    """Fast single-pass SVD (Algorithm 3), reading A once.

    Sketches ``C = A Omega~`` (m x c), ``R = Psi~ A`` (r x n) and
    ``M = S_C A S_R^T`` (s_c x s_r) are accumulated block by block; then
    ``U_C = qr(C)``, ``V_R = qr(R^T)``, ``N = (S_C U_C)^+ M (V_R^T S_R^T)^+``
    (Fast GMR, Algorithm 1, on the bases) and ``N = U_N diag(s) V_N^T`` give
    ``U = U_C U_N``, ``Vt = (V_R V_N)^T``.

    Parameters
    ----------
    {input}
    k : int
        Target rank, ``1 <= k <= min(m, n)`` and ``k <= min(c, r)``.
    c, r : int, optional
        Range and co-range sketch sizes.  Default ``2k`` each (capped at
        min(m, n)), the paper's x = (c + r)/k = 4 point.
    s_c, s_r : int, optional
        Core sketch sizes, ``s_c >= c``, ``s_r >= r``.  Default the
        experiments' rule ``ceil(3 c sqrt(x))`` and ``ceil(3 r sqrt(x))``
        with ``x = (c + r)/k`` (capped at m and n, never below c and r).
    range_sketch : str, default "osnap-gaussian"
        Kind of Omega (c x n) and Psi (r x m): "osnap-gaussian"
        (Gaussian(c, c0) after OSNAP(c0, n), ``c0 = 4c`` capped at n; the
        paper's choice), "gaussian", "countsketch", "osnap" or "srht".
    core_sketch : str, default "osnap"
        Kind of S_C (s_c x m) and S_R (s_r x n), same names.
    axis : {{0, 1}}, default 1
        Column blocks (1, as in the paper) or row blocks (0).  The result does
        not depend on it (same operators), up to rounding.
    block_size : int, optional
        For a matrix A: columns (or rows) per block; default all at once.
    rank : int, optional
        Truncate the output to this rank (fixed-rank output); default the
        sketch rank ``min(c, r, m, n)``.
    rng : None, int or numpy.random.Generator
        Seeds the four operators (SPEC 7).
    shape : (int, int), optional
        ``(m, n)``; required when A is an iterable of blocks.

    Returns
    -------
    U : ndarray of shape (m, q)
        Orthonormal columns.
    s : ndarray of shape (q,)
        Non-negative, non-increasing.
    Vt : ndarray of shape (q, n)
        Orthonormal rows.  ``q`` is the sketch rank or ``rank``.  float32
        for float32 input, else float64.

    Raises
    ------
    ValueError
        Bad sizes (k > min(c, r), s_c < c, s_r < r), unknown sketch kinds, NaN
        or Inf in A, blocks that do not add up to ``shape``, an empty iterable.
    TypeError
        Non-numeric input, a bad ``shape``.

    Notes
    -----
    Theorem 4: with c, r = O(k/eps), c0, r0 = O((k/eps)^{{1+gamma}}) and
    s_c, s_r = O(max(k/eps^{{3/2}}, k/(eps^2 rho^2)) + (k/eps)^{{1+gamma}}),
    ``||A - U diag(s) Vt||_F <= (1 + eps) ||A - A_k||_F`` with probability
    0.9.  Cost: O(nnz(A) p) for the hash kinds (O(nnz(A) c) for the dense
    and composed kinds, whose test-matrix block is formed explicitly) plus
    O((m + n) c^2 + s_c s_r c) at the end.  Memory: the sketches
    ((m c + r n + s_c s_r) numbers), the tables of the hash operators on
    the full side of the blocks, one block, and temporaries of at most about
    a quarter of the sketches (hash range sketches add CSC column blocks into
    C, and CSR row blocks into R, in place); the QRs and the products
    U_C U_N, V_R V_N reuse the memory of C and R.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> gen = np.random.default_rng(0)
    >>> A = gen.standard_normal((300, 8)) @ gen.standard_normal((8, 200))
    >>> U, s, Vt = sketchlab.fast_sp_svd(A, 8, rng=0)
    >>> U.shape, s.shape, Vt.shape
    ((300, 16), (16,), (16, 200))
    >>> bool(np.allclose((U * s) @ Vt, A))
    True

    The same from column blocks that are read once:

    >>> blocks = (A[:, j:j + 64] for j in range(0, 200, 64))
    >>> U2, s2, Vt2 = sketchlab.fast_sp_svd(blocks, 8, shape=A.shape, rng=0)
    >>> bool(np.allclose(s2, s))
    True
    """
    return _core_svd("fast", A, k, c, r, s_c, s_r, range_sketch, core_sketch, axis, block_size, rank, rng, shape)


def practical_sp_svd(A, k, *, c=None, r=None, range_sketch="gaussian", axis=1, block_size=None,
                     rank=None, rng=None, shape=None):
    """Practical single-pass SVD (Tropp et al. 2017; the paper's appendix algorithm).

    Range and co-range sketches ``C = A Omega~`` (m x c) and ``R = Psi~ A``
    (r x n) are accumulated block by block; then ``U_C = qr(C)``,
    ``R^T = V_R T_R``, ``N = (Psi~ U_C)^+ R V_R = (Psi~ U_C)^+ T_R^T`` and the
    SVD of N.  ``U diag(s) Vt = U_C (Psi~ U_C)^+ R`` is Tropp et al.'s
    ``Q X`` with ``X = (Psi Q)^+ W``.

    Parameters
    ----------
    {input}
    k : int
        Target rank, ``k <= c``.
    c, r : int, optional
        Range and co-range sketch sizes, ``r >= c`` (Psi~ U_C, r x c, must
        have full column rank).  Default ``c = 2k + 1``, ``r = 2c + 1`` (the
        proportions Tropp et al. recommend; capped at the dimensions).  For a
        fixed budget ``c + r`` see :func:`practical_sp_svd_sizes`.
    range_sketch : str, default "gaussian"
        Kind of Omega (c x n) and Psi (r x m): "gaussian", "countsketch",
        "osnap", "osnap-gaussian" or "srht".
    axis, block_size, rank, rng, shape
        As in :func:`fast_sp_svd`.

    Returns
    -------
    U : ndarray of shape (m, q)
    s : ndarray of shape (q,)
    Vt : ndarray of shape (q, n)
        ``q = min(c, m, n)`` or ``rank``.

    Raises
    ------
    ValueError
        ``r < c``, ``k > c``, and the input errors of :func:`fast_sp_svd`.
    TypeError
        Non-numeric input, a bad ``shape``.

    Notes
    -----
    Tropp et al. (2017) bound the error by ``(1 + c/(r - c - 1))`` times
    the range-finder error, which itself is at most ``(1 + k/(c - k - 1))``
    times ``||A - A_k||_F^2`` in expectation for Gaussian sketches: reaching
    ``(1 + eps)`` takes ``r = O(k/eps^2)`` against Algorithm 3's O(k/eps)
    (Section "Comparison with Previous Work").  Cost O(nnz(A) c + nnz(A) r)
    with Gaussian sketches, O(nnz(A)) with the hash kinds, plus
    O((m + n) r^2) at the end; memory m c + r n numbers and one block.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> gen = np.random.default_rng(0)
    >>> A = gen.standard_normal((300, 8)) @ gen.standard_normal((8, 200))
    >>> U, s, Vt = sketchlab.practical_sp_svd(A, 8, c=12, r=25, rng=0)
    >>> s.shape
    (12,)
    >>> bool(np.allclose((U * s) @ Vt, A))
    True
    """
    axis = check_axis(axis)
    _check_kinds(range_sketch)
    source = _BlockSource(A, axis, block_size, shape)
    shape_ = source.shape
    k = _check_k(k, shape_)
    c, r = _practical_sizes(k, shape_, c, r)
    rank = _check_rank(rank, c, r)
    ops = _make_operators(as_generator(rng), shape_, c, r, range_sketch)
    state = _run(source, lambda dtype: _SketchState(shape_, *ops, dtype=dtype))
    return state.finalize("practical", rank=rank, overwrite=True)


def three_sketch_svd(A, k, *, c=None, r=None, s_c=None, s_r=None, range_sketch="gaussian",
                     core_sketch="gaussian", axis=1, block_size=None, rank=None, rng=None,
                     shape=None):
    """Three-sketch single-pass SVD (Tropp, Yurtsever, Udell & Cevher 2019).

    "Streaming low-rank matrix approximation with an application to
    scientific simulation": range sketch ``Y = A Omega^T`` (m x c), co-range
    sketch ``W = Psi A`` (r x n) and core sketch ``Z = Phi A Theta^T``
    (s_c x s_r), accumulated block by block; then ``Q = orth(Y)``,
    ``P = orth(W^T)``, ``Phi Q = U_1 T_1``, ``Theta P = U_2 T_2`` and the core
    ``T_1^{{-1}} U_1^T Z U_2 T_2^{{-T}} = (Phi Q)^+ Z ((Theta P)^+)^T``, whose SVD
    gives ``A ~ Q C P^T``.  The sizes map as ``c, r`` -> range/co-range and
    ``s_c, s_r`` -> core (their k and s).

    The recovery is the same algebra as Algorithm 3 (Fast SP-SVD): the two
    differ in the sizes and kinds of the sketches, not in the formula.

    Parameters
    ----------
    {input}
    k : int
        Target rank, ``k <= min(c, r)``.
    c, r : int, optional
        Range and co-range sizes; default ``4k + 1`` each (their eq. 5.3,
        real field), capped at min(m, n).
    s_c, s_r : int, optional
        Core sizes, ``>= c`` and ``>= r``; default ``2c + 1`` and ``2r + 1``
        (eq. 5.3), capped at m and n.  For a storage budget see
        :func:`three_sketch_svd_sizes`.
    range_sketch, core_sketch : str, default "gaussian"
        Kinds of Omega, Psi and of Phi, Theta (their default test matrices
        are Gaussian); same names as :func:`fast_sp_svd`.
    axis, block_size, rank, rng, shape
        As in :func:`fast_sp_svd`.

    Returns
    -------
    U : ndarray of shape (m, q)
    s : ndarray of shape (q,)
    Vt : ndarray of shape (q, n)
        ``q = min(c, r, m, n)`` or ``rank``.

    Raises
    ------
    ValueError
        ``s_c < c``, ``s_r < r``, ``k > min(c, r)``, and the input errors of
        :func:`fast_sp_svd`.
    TypeError
        Non-numeric input, a bad ``shape``.

    Notes
    -----
    Their Theorem 5.1 (Gaussian maps, s >= 2k' + 1): the expected squared
    error is at most ``s/(s - k' - 1)`` times the range-finder error,
    ``min_(rho < k'-1) (1 + rho/(k' - rho - 1)) tau_(rho+1)^2(A)``.  Cost and
    memory as :func:`fast_sp_svd` with the same kinds and sizes.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> gen = np.random.default_rng(0)
    >>> A = gen.standard_normal((300, 8)) @ gen.standard_normal((8, 200))
    >>> U, s, Vt = sketchlab.three_sketch_svd(A, 8, rng=0)
    >>> s.shape
    (33,)
    >>> bool(np.allclose((U * s) @ Vt, A))
    True
    """
    return _core_svd("three", A, k, c, r, s_c, s_r, range_sketch, core_sketch, axis, block_size, rank, rng, shape)


for _f in (fast_sp_svd, practical_sp_svd, three_sketch_svd):
    if _f.__doc__:  # None under python -OO
        _f.__doc__ = _f.__doc__.format(input=_INPUT_DOC)
del _f
