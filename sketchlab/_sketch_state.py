"""Named linear sketches of one matrix, accumulated block by block.

A :class:`SketchState` holds the sketches a single-pass method keeps of a
matrix ``A`` (m x n) that it reads once, block by block: in-memory, from a
stream of blocks, by an estimator's ``partial_fit`` or, chunk by chunk, on the
workers of ``sketchlab.dask``.  Each sketch is ``L A R^T`` for a left operator
L (on A's rows) and a right operator R (on A's columns), either of which may
be the identity.  Because the operators are defined by their seeds, the
sketches of disjoint blocks computed anywhere add up.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from ._engine.reductions import frobenius_parts
from ._operators import SketchOperator, sketch_both
from ._validation import Checked, as_matrix, check_int, result_dtype

if TYPE_CHECKING:
    from numpy.typing import DTypeLike, NDArray

    from ._validation import MatrixLike

__all__ = ["SketchState"]

_uninitialized = np.empty
"""Allocation of sketch arrays that an update overwrites whole (the tests
fill them with NaN to show that no entry is left unwritten)."""


def _sketch_into(left, right, block, offsets, out, accumulate):
    """``out`` (+)= the share of ``block`` (at ``offsets`` in A) of the
    sketch ``L A R^T`` with operators ``(left, right)`` (one may be None)."""
    i0, j0 = offsets
    # the block was checked once, by SketchState._check_block: no O(nnz) pass per sketch
    block = Checked(block)
    if left is None:
        right.apply(block, axis=1, offset=j0, out=out, accumulate=accumulate)
    elif right is None:
        left.apply(block, axis=0, offset=i0, out=out, accumulate=accumulate)
    else:
        sketch_both(left, block, right, offsets=offsets, out=out, accumulate=accumulate)


class SketchState:
    """Running linear sketches ``L A R^T`` of one matrix, updated block by block.

    Parameters
    ----------
    shape : (int or None, int)
        ``(m, n)`` of A.  ``m = None``: the number of rows is open (rows
        arrive in batches of unknown number, as in ``partial_fit``): the
        sketches without a left operator then grow by row blocks, which must
        come in order and span all columns, and the left operators need an
        ``input_dim`` at least the number of rows.
    sketches : dict of str -> (SketchOperator or None, SketchOperator or None)
        Name -> ``(left, right)``.  ``(None, R)`` is the range sketch
        ``A R^T`` (m x s, kept in Fortran order so that its QR runs in
        place), ``(L, None)`` the co-range sketch ``L A`` (s x n, C order),
        ``(L, R)`` a core sketch ``L A R^T`` (s1 x s2).  At least one side
        must be an operator.
    dtype : {float64, float32}, default float64
        Of the sketches (float32 blocks keep float32 sketches).

    Attributes
    ----------
    shape : (int or None, int)
    dtype : numpy.dtype
    names : tuple of str
    rows_seen : int
        One past the last row of A a block has covered so far.
    norm : float
        ``||A||_F`` of the blocks seen so far (exact, a byproduct of the
        pass; for relative errors), finite at any scale of A.
    squared_norm : float
        ``norm ** 2`` (inf or 0 beyond the range of float64).
    nbytes : int
        Memory held by the sketches (not by the operators).

    Notes
    -----
    A block ``X = A[i0:i0+h, j0:j0+w]`` (dense or sparse) updates::

        (None, R):  S[i0:i0+h]      += X R[:, j0:j0+w]^T
        (L, None):  S[:, j0:j0+w]   += L[:, i0:i0+h] X
        (L, R):     S               += L[:, i0:i0+h] X R[:, j0:j0+w]^T

    with the operators' block application (``apply(..., offset=, out=,
    accumulate=True)`` and ``sketch_both(..., offsets=, out=,
    accumulate=True)``), in place, with temporaries of at most 2 MB.  The
    share of a block (:meth:`block_sketches`) covers only rows
    ``[i0, i0 + h)`` of a range sketch and columns ``[j0, j0 + w)`` of a
    co-range sketch, so a distributed pass ships small pieces.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> A = np.random.default_rng(0).standard_normal((40, 30))
    >>> Omega = sketchlab.GaussianSketch(5, 30, rng=1)
    >>> Psi = sketchlab.CountSketch(6, 40, rng=2)
    >>> state = sketchlab.SketchState(A.shape, {"range": (None, Omega), "co-range": (Psi, None)})
    >>> for j0 in range(0, 30, 10):
    ...     _ = state.update(A[:, j0:j0 + 10], (0, j0))
    >>> bool(np.allclose(state["range"], A @ Omega.T)), bool(np.allclose(state["co-range"], Psi @ A))
    (True, True)
    """

    # (left, right) per name: a SketchOperator or None each, never both None
    _specs: dict[str, tuple[Any, Any]]
    # name -> array (a list of row blocks while the rows are open); None until
    # the first update or merge allocates them
    _arrays: Any

    def __init__(self, shape: tuple[int | None, int],
                 sketches: dict[str, tuple[SketchOperator | None, SketchOperator | None]], *,
                 dtype: DTypeLike = np.float64) -> None:
        m, n = shape
        self.shape = (None if m is None else check_int(m, "shape[0]", 1),
                      check_int(n, "shape[1]", 1))
        if not isinstance(sketches, dict) or not sketches:
            raise TypeError("sketches must be a non-empty dict name -> (left, right)")
        self._specs = {}
        for name, pair in sketches.items():
            try:
                left, right = pair
            except (TypeError, ValueError):
                raise TypeError(
                    f"sketches[{name!r}] must be a pair (left, right) of operators or None"
                ) from None
            for side, op, dim in (("left", left, self.shape[0]), ("right", right, n)):
                if op is None:
                    continue
                if not isinstance(op, SketchOperator):
                    raise TypeError(
                        f"sketches[{name!r}] {side} must be a SketchOperator or None, got "
                        f"{type(op).__name__}"
                    )
                if dim is not None and op.input_dim != dim:
                    raise ValueError(
                        f"sketches[{name!r}] {side} operator has input_dim {op.input_dim}, "
                        f"expected {dim}"
                    )
            if left is None and right is None:
                raise ValueError(f"sketches[{name!r}] needs at least one operator")
            if name == self.NORM_KEY:
                raise ValueError(f"the sketch name {name!r} is reserved")
            self._specs[name] = (left, right)
        self.dtype = result_dtype(np.dtype(dtype))
        self.rows_seen = 0
        # ||A||_F^2 = sum_b _norm_sums[b] 2**(2 _NORM_STEP (b - _NORM_MID)): a block's
        # squares go to the bucket of its largest magnitude's exponent, so that
        # sums of blocks (and of the shares dask adds in trees) stay in range
        self._norm_sums = np.zeros(_NORM_BUCKETS)
        self._arrays = None  # allocated at the first update (or merge)

    # -- description -------------------------------------------------------

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._specs)

    def operators(self, name: str) -> tuple[SketchOperator | None, SketchOperator | None]:
        """``(left, right)`` of the sketch ``name``."""
        return self._specs[name]

    @overload
    def sketch_shape(self, name: str, block_shape: tuple[int, int]) -> tuple[int, int]: ...
    @overload
    def sketch_shape(self, name: str, block_shape: None = None) -> tuple[int | None, int]: ...

    def sketch_shape(self, name: str,
                     block_shape: tuple[int, int] | None = None) -> tuple[int | None, int]:
        """Shape of the sketch ``name`` (of a block's share for ``block_shape``)."""
        left, right = self._specs[name]
        h, w = self.shape if block_shape is None else block_shape
        return (h if left is None else left.sketch_size,
                w if right is None else right.sketch_size)

    NORM_KEY = "__squared_norm__"
    """Key of the squared norm in the shares of :meth:`block_sketches` (an
    array of sums by exponent range, added like the sketches)."""

    @property
    def norm(self) -> float:
        """``||A||_F`` of the blocks seen so far."""
        total, e = self._norm_total()
        with np.errstate(over="ignore"):
            return float(np.ldexp(math.sqrt(total), e))

    @property
    def squared_norm(self) -> float:
        """``||A||_F^2`` of the blocks seen so far (inf or 0 where it leaves
        the range of float64; :attr:`norm` does not)."""
        total, e = self._norm_total()
        with np.errstate(over="ignore"):
            return float(np.ldexp(total, 2 * e))

    def _norm_total(self):
        """``(total, e)`` with ``||A||_F^2 = total 2**(2 e)``, total in range:
        the buckets summed in units of the largest one used."""
        used = np.flatnonzero(self._norm_sums)
        if used.size == 0:
            return 0.0, 0
        top = int(used[-1])
        weights = np.ldexp(1.0, 2 * _NORM_STEP * (np.arange(top + 1) - top))
        return float(self._norm_sums[:top + 1] @ weights), _NORM_STEP * (top - _NORM_MID)

    @property
    def share_keys(self) -> tuple[str, ...]:
        """Keys of :meth:`block_sketches`: the sketches and :attr:`NORM_KEY`."""
        return self.names + (self.NORM_KEY,)

    def share_axis(self, name: str) -> int | None:
        """Axis of A along which blocks own disjoint parts of the sketch: 0 for
        a range sketch (row blocks of A own its rows), 1 for a co-range sketch
        (column blocks own its columns), None for a core sketch (every block
        adds to all of it)."""
        if name == self.NORM_KEY:
            return None
        left, right = self._specs[name]
        return 0 if left is None else (1 if right is None else None)

    @property
    def nbytes(self) -> int:
        if self._arrays is None:
            return 0
        total = 0
        for value in self._arrays.values():
            total += sum(b.nbytes for b in value) if isinstance(value, list) else value.nbytes
        return total

    def __repr__(self) -> str:
        parts = ", ".join(f"{name}: {self.sketch_shape(name) if self.shape[0] else '?'}"
                          for name in self._specs)
        return f"SketchState(shape={self.shape}, {{{parts}}}, rows_seen={self.rows_seen})"

    # -- arrays ------------------------------------------------------------

    def _allocate(self, filled=False):
        """The sketches' arrays, zeros; ``filled=True`` for an update that
        writes every entry (a first block that is all of A): no zeros then,
        the loops overwrite (and fault in) the memory themselves."""
        if self._arrays is not None:
            return
        arrays = {}
        new = _uninitialized if filled else np.zeros
        for name in self._specs:
            axis = self.share_axis(name)
            if axis == 0 and self.shape[0] is None:
                arrays[name] = []  # row blocks of an open-ended state
            else:
                order = "F" if axis == 0 else "C"
                arrays[name] = new(self.sketch_shape(name), self.dtype, order=order)
        self._arrays = arrays

    def _window(self, name, offsets, block_shape):
        """The part of sketch ``name`` that a block at ``offsets`` of
        ``block_shape`` owns (a view): its rows of a range sketch, its columns
        of a co-range sketch, all of a core sketch."""
        target = self._arrays[name]
        axis = self.share_axis(name)
        if axis == 0:
            return target[offsets[0]:offsets[0] + block_shape[0]]
        if axis == 1:
            return target[:, offsets[1]:offsets[1] + block_shape[1]]
        return target

    def __getitem__(self, name: str) -> NDArray[np.floating]:
        """The sketch ``name`` (a view of the state's array; for an open-ended
        state, its row blocks joined, in Fortran order)."""
        if name not in self._specs:
            raise KeyError(name)
        self._allocate()
        value = self._arrays[name]
        if isinstance(value, list):
            if not value:
                return np.zeros((0, self.sketch_shape(name, (0, 0))[1]), self.dtype, order="F")
            if len(value) > 1:
                self._arrays[name] = value = [np.asfortranarray(np.vstack(value))]
            return value[0]
        return value

    # -- updates -----------------------------------------------------------

    def _check_block(self, block, offsets):
        block = as_matrix(block, "block")
        try:
            i0, j0 = (int(v) for v in offsets)
        except (TypeError, ValueError):
            raise TypeError(f"offsets must be a pair of ints (i0, j0), got {offsets!r}") from None
        h, w = block.shape
        m, n = self.shape
        if i0 < 0 or j0 < 0 or j0 + w > n or (m is not None and i0 + h > m):
            raise ValueError(
                f"block of shape {block.shape} at offsets {(i0, j0)} does not fit in A of "
                f"shape {self.shape}"
            )
        if m is None and (i0 != self.rows_seen or w != n):
            raise ValueError(
                "an open-ended state takes row blocks spanning all columns, in order: expected "
                f"offsets ({self.rows_seen}, 0) and {n} columns, got {(i0, j0)} and {w}"
            )
        return block, i0, j0

    def update(self, block: MatrixLike, offsets: tuple[int, int] = (0, 0)) -> SketchState:
        """Add the sketches of ``block`` = ``A[i0:i0+h, j0:j0+w]``.

        Parameters
        ----------
        block : array_like or scipy.sparse matrix of shape (h, w)
            Validated once (finite values, sparse index arrays), then read by
            every sketch.
        offsets : (int, int), default (0, 0)
            ``(i0, j0)``, where the block sits in A.

        Returns
        -------
        self
        """
        block, i0, j0 = self._check_block(block, offsets)
        if block.dtype != self.dtype:
            block = block.astype(self.dtype)
        h, w = block.shape
        # a first block that is all of A writes every entry of every sketch:
        # no zeroed arrays to add into (memory the loops fault in themselves)
        add = not (self._arrays is None and block.shape == self.shape)
        self._allocate(filled=not add)
        if 0 in block.shape:
            return self
        self._norm_sums += _norm_share(block)
        for name, (left, right) in self._specs.items():
            target = self._arrays[name]
            if left is None and isinstance(target, list):
                part = _uninitialized((h, right.sketch_size), self.dtype, order="F")
                _sketch_into(left, right, block, (i0, j0), part, False)
                target.append(part)
            else:
                window = self._window(name, (i0, j0), (h, w))
                _sketch_into(left, right, block, (i0, j0), window, add)
        self.rows_seen = max(self.rows_seen, i0 + h)
        return self

    def block_sketches(self, block: MatrixLike,
                       offsets: tuple[int, int] = (0, 0)) -> dict[str, NDArray[np.floating]]:
        """The block's shares of the sketches, without touching the state.

        Returns a dict name -> array: rows ``[i0, i0 + h)`` of a range sketch
        (h x s), columns ``[j0, j0 + w)`` of a co-range sketch (s x w), a
        whole core sketch, and the block's ``||X||_F^2`` under
        :attr:`NORM_KEY` (a 1 x 1 array).  :meth:`add_block_sketches` adds them (on another
        machine, in any order).  What a distributed pass computes per chunk.
        """
        block, i0, j0 = self._check_block(block, offsets)
        if block.dtype != self.dtype:
            block = block.astype(self.dtype)
        shares = {}
        h, w = block.shape
        for name, (left, right) in self._specs.items():
            axis = self.share_axis(name)
            order: Literal["C", "F"] = "F" if axis == 0 else "C"
            shape = self.sketch_shape(name, (h, w))
            if 0 in block.shape:
                part = np.zeros(shape, self.dtype, order=order)
            else:  # written whole by the loops
                part = _uninitialized(shape, self.dtype, order=order)
                _sketch_into(left, right, block, (i0, j0), part, False)
            shares[name] = part
        shares[self.NORM_KEY] = _norm_share(block)[None, :]
        return shares

    def add_block_sketches(self, shares: Mapping[str, NDArray[np.floating]],
                           offsets: tuple[int, int],
                           block_shape: tuple[int, int]) -> SketchState:
        """Add the shares of a block (from :meth:`block_sketches`, possibly
        summed over blocks with the same rows (range) or columns (co-range))
        at ``offsets`` = ``(i0, j0)`` of a block of ``block_shape`` = ``(h, w)``."""
        if self.shape[0] is None:
            raise ValueError("shares can only be added to a state of known shape")
        self._allocate()
        i0, j0 = offsets
        h, w = block_shape
        for name, part in shares.items():
            if name == self.NORM_KEY:
                self._norm_sums += np.asarray(part, dtype=np.float64).reshape(-1)
                continue
            want = self.sketch_shape(name, (h, w))
            if part.shape != want:
                raise ValueError(f"share of {name!r} has shape {part.shape}, expected {want}")
            self._window(name, (i0, j0), (h, w))[...] += part
        self.rows_seen = max(self.rows_seen, i0 + h)
        return self

    def merge(self, other: SketchState) -> SketchState:
        """Add the sketches of ``other``, a state of other blocks of the same
        matrix with the same operators; returns self."""
        if not isinstance(other, SketchState):
            raise TypeError(f"other must be a SketchState, got {type(other).__name__}")
        if self.shape[0] is None or other.shape[0] is None:
            raise ValueError("only states of a known shape can be merged")
        if other.shape != self.shape or other._specs.keys() != self._specs.keys() or any(
            other._specs[k] != self._specs[k] for k in self._specs
        ):
            raise ValueError("states must have the same shape and the same operators to merge")
        self._allocate()
        if other._arrays is not None:
            for name in self._specs:
                self._arrays[name] += other._arrays[name]
        self._norm_sums += other._norm_sums
        self.rows_seen = max(self.rows_seen, other.rows_seen)
        return self

    def finalize(self) -> dict[str, NDArray[np.floating]]:
        """The sketches as a dict name -> array (for an open-ended state, row
        blocks joined).  The arrays are the state's own: a caller that
        factors them in place spends the state."""
        self._allocate()
        return {name: self[name] for name in self._specs}


# Exponent buckets of SketchState's norm: bucket b holds squares in units of
# 2**(2 _NORM_STEP (b - _NORM_MID)); a block's sum of squares scaled by 2**-e
# (e the exponent of its largest entry, frobenius_parts) lands in the bucket
# nearest e, times at most 2**_NORM_STEP: every bucket stays in range.
_NORM_STEP = 64
_NORM_MID = 18
_NORM_BUCKETS = 2 * _NORM_MID + 1  # exponents -1152 .. 1152


def _norm_share(block):
    """The bucket array of one block's ``||X||_F^2 = 2**(2 e) ssq``."""
    e, ssq = frobenius_parts(block)
    out = np.zeros(_NORM_BUCKETS)
    if ssq > 0:
        b = min(max(round(e / _NORM_STEP), -_NORM_MID), _NORM_MID)
        out[b + _NORM_MID] = math.ldexp(ssq, 2 * (e - b * _NORM_STEP))
    elif ssq != 0:  # inf or NaN: keep it visible
        out[_NORM_MID] = ssq
    return out
