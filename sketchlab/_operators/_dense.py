"""The dense kinds (Gaussian, SRHT): applied as generated blocks of their
columns times A, by BLAS (or scipy's sparse-dense product), and the SRHT of a
whole input by the fast Walsh-Hadamard transform."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._config import sparse as sp  # scipy.sparse, imported on first use
from .. import _hash
from .._validation import result_dtype
from .._engine import operators as _engine
from ._base import (
    _DENSE_BLOCK_ENTRIES,
    _PIECE_ENTRIES,
    SketchOperator,
    _deliver,
    _read_only,
    _transpose,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray


def _add_product(target, Y, G, budget=_PIECE_ENTRIES):
    """target += Y @ G (Y of shape (h, w), dense or sparse; G dense (w, s))
    with temporaries of at most ``budget`` entries."""
    from .._linalg import gemm_add  # on first use: importing sketchlab loads no scipy.linalg

    h, s = target.shape
    if not sp.issparse(Y):
        if gemm_add(target, Y, G):
            return
        step = max(1, budget // max(1, s))
        for r0 in range(0, h, step):
            target[r0:r0 + step] += Y[r0:r0 + step] @ G
        return
    step = max(1, budget // max(1, h))  # columns of G (rows of the sketch) per piece
    for t0 in range(0, s, step):
        target[:, t0:t0 + step] += np.asarray(Y @ G[:, t0:t0 + step])


class _DenseSketch(SketchOperator):
    """Kinds applied as dense blocks of columns times A (BLAS / scipy)."""

    def _apply(self, A, axis, offset, out, accumulate):
        return self._apply_blocks([A], axis, offset, [out], accumulate)[0]

    def _apply_many(self, arrays, axis, offset):
        return self._apply_blocks(arrays, axis, offset, [None] * len(arrays), False)

    def _apply_blocks(self, arrays, axis, offset, outs, accumulate):
        """``S X`` (or ``X S^T``) for validated 2-D arrays of the same
        ``shape[axis]``, written into (onto) ``outs``, generating each block
        of about 8 MB of S's columns ONCE for all of them.  In the form
        ``target += Y @ G`` with ``G`` a block of columns of S (as rows):
        ``target = out, Y = X`` (axis 1), or ``target = out^T, Y = X^T``."""
        jobs = []
        for A, out in zip(arrays, outs):
            if sp.issparse(A):  # slices of the block dimension stay cheap
                want = "csr" if axis == 0 else "csc"
                if A.format != want:
                    A = A.asformat(want)
            if out is None:
                out = np.zeros(self._result_shape(A, axis), dtype=result_dtype(A.dtype))
            elif not accumulate:
                out[...] = 0
            jobs.append((_transpose(A) if axis == 0 else A, out.T if axis == 0 else out,
                         out))
        b = arrays[0].shape[axis]
        step = max(1, _DENSE_BLOCK_ENTRIES // self._s)
        for k0 in range(0, b, step):
            k1 = min(b, k0 + step)
            # generated on one thread: BLAS multiplies on all of them, and a
            # Numba pool woken between BLAS calls only competes with it
            G64 = self._columns(offset + k0, offset + k1, serial=True)
            for Y, target, _ in jobs:
                _add_product(target, Y[:, k0:k1], G64.astype(target.dtype, copy=False))
        return [out for _, _, out in jobs]


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
    description = "i.i.d. N(0, 1/s) entries"
    splittable = True  # i.i.d. rows

    def __init__(self, sketch_size: int, input_dim: int, *,
                 rng: None | int | np.random.Generator = None) -> None:
        super().__init__(sketch_size, input_dim, rng=rng)
        self._key = np.uint64(_hash.derive_key(self._seed, _hash.STREAM_GAUSSIAN))

    def _columns(self, j0, j1, serial=False):
        return _engine.gaussian_block(self._key, self._s, j0, j1, serial)


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
    description = "subsampled randomized Hadamard transform"
    open_dim = False  # its row sample depends on d

    @classmethod
    def max_sketch_size(cls, input_dim: int) -> int:
        """The padded dimension (the next power of two): the rows it samples from."""
        return 1 << max(0, int(input_dim - 1).bit_length())

    def __init__(self, sketch_size: int, input_dim: int, *,
                 rng: None | int | np.random.Generator = None) -> None:
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
        _read_only(self._rows)
        self._scale = 1.0 / np.sqrt(self._s)

    def __setstate__(self, state):
        self.__dict__.update(state)
        _read_only(self._rows)

    @property
    def padded_dim(self) -> int:
        """Order ``d'`` of the Hadamard matrix."""
        return self._dpad

    @property
    def sampled_rows(self) -> NDArray[np.int64]:
        """Rows of ``H`` kept by P (read-only)."""
        return self._rows

    def _signs(self, j0, j1):
        return _hash.sign_np(_hash.hash64_np(self._sign_key, np.arange(j0, j1)))

    def _columns(self, j0, j1, serial=False):
        return _engine.srht_block(self._signs(j0, j1), self._rows, self._scale, j0, j1, serial)

    def _apply(self, A, axis, offset, out, accumulate):
        if offset != 0 or A.shape[axis] != self._d:
            return super()._apply(A, axis, offset, out, accumulate)
        res = self._transform(A, axis)
        return res if out is None else _deliver(out, res, accumulate)

    def _apply_many(self, arrays, axis, offset):
        if offset != 0 or arrays[0].shape[axis] != self._d:
            return super()._apply_many(arrays, axis, offset)
        return [self._transform(A, axis) for A in arrays]

    def _transform(self, A, axis):
        """S A or A S^T of the whole input by the fast Walsh-Hadamard transform."""
        return _engine.srht_transform(A, axis, self._signs(0, self._d), self._rows, self._scale,
                                      self._dpad, result_dtype(A.dtype))
