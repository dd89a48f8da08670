"""Sketches and single-pass SVDs of ``dask.array`` inputs, in one pass over the chunks.

The operators are defined by their seeds, so every chunk ``A[i0:i0+h, j0:j0+w]``
applies on its own the columns of S that match its offsets (the operators'
block application) and yields a partial sketch; partial sketches are summed
in a fixed tree (fan-in 8), so the rounding does not depend on the scheduler,
the number of workers or the order in which tasks finish.  Only the sketches
travel to the client; A never does.

- :func:`sketch` (``S A`` or ``A S^T``) and :func:`sketch_both`
  (``S1 A S2^T``, the sketching step of Fast GMR, Algorithm 1);
- :func:`fast_sp_svd` (Algorithm 3), :func:`practical_sp_svd` and
  :func:`three_sketch_svd`: each chunk adds to ALL the sketches (range C,
  co-range R and core M) in ONE task, so each chunk is read exactly once; the
  client then recovers the SVD from the sketches exactly as
  :mod:`sketchlab` does.

Results equal the in-memory functions' for the same ``rng`` up to the
rounding of the partial sums (about 1e-14 relative in float64).

The computation runs on whatever dask scheduler is active: a
``dask.distributed.Client`` created before the call, ``dask.config.set(
scheduler=...)``, or the ``scheduler=`` argument, which is passed to
``dask.compute`` ("threads", "processes", "sync", a ``Client``) or may be the
address of a running distributed scheduler (``"tcp://host:8786"``).  Input
that is not a dask array is handed to the in-memory functions.

Examples
--------
A CountSketch of a matrix held in four chunks, on a two-process cluster on
this machine:

>>> import numpy as np, dask.array as da, sketchlab
>>> from dask.distributed import Client, LocalCluster
>>> A = da.from_array(np.random.default_rng(0).standard_normal((1000, 300)), chunks=(250, 300))
>>> S = sketchlab.CountSketch(50, 1000, rng=0)
>>> with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
...                   host="127.0.0.1", dashboard_address=None) as cluster, \\
...         Client(cluster):
...     SA = sketchlab.dask.sketch(S, A)
>>> bool(np.allclose(SA, S @ A.compute()))
True
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

try:
    import dask
    import dask.array as da
    from dask.base import tokenize
    from dask.delayed import Delayed
    from dask.highlevelgraph import HighLevelGraph
except ImportError as exc:  # pragma: no cover - dask is an optional extra
    raise ImportError(
        "sketchlab.dask needs dask: pip install 'sketchlab[dask]' (dask[array], distributed)"
    ) from exc

from . import _svd
from ._operators import SketchOperator
from ._operators import apply_validated, sketch_both_validated
from ._operators import sketch_both as _sketch_both
from ._sketch_state import SketchState
from ._validation import as_matrix, check_axis, check_numeric_dtype, check_shape, result_dtype
from ._validation import trusted

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ._cur import CURDecomposition
    from ._svd import SVDFactors, SVDFactorsWithError
    from ._validation import MatrixLike

__all__ = ["sketch", "sketch_both", "sketch_state", "cur", "fast_sp_svd", "practical_sp_svd",
           "three_sketch_svd"]

# Partial sketches summed by one reduction task: a tree of depth
# log_8(chunks), and at most 9 partials in a worker's memory per task.
_FAN_IN = 8


# ---------------------------------------------------------------------------
# Checks (all before any task runs)
# ---------------------------------------------------------------------------


def _is_dask_array(A):
    return isinstance(A, da.Array)


def _check_operator(S, name):
    if not isinstance(S, SketchOperator):
        raise TypeError(f"{name} must be a SketchOperator, got {type(S).__name__}")


def _check_array(A, name="A"):
    """Result dtype of a 2-D dask array with known chunks and a numeric dtype."""
    if A.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got a dask array of shape {A.shape}")
    if any(np.isnan(size) for sizes in A.chunks for size in sizes):
        raise ValueError(
            f"{name} has unknown chunk sizes (shape {A.shape}); call {name}.compute_chunk_sizes() "
            "first: each chunk needs its offsets"
        )
    check_numeric_dtype(np.dtype(A.dtype), name)
    return result_dtype(A.dtype)


def _check_svd_input(A, axis, block_size, shape):
    """The shape of a dask A for the SVDs; ``axis`` is checked but the
    chunks are the blocks."""
    check_axis(axis)
    _check_array(A)
    if block_size is not None:
        raise ValueError(
            "block_size applies to an in-memory A; the chunks of a dask array are its blocks "
            f"(rechunk A instead), got block_size={block_size!r}"
        )
    if shape is not None and tuple(check_shape(shape)) != A.shape:
        raise ValueError(f"shape={tuple(shape)!r} does not match A.shape={A.shape}")
    if min(A.shape) < 1:
        raise ValueError(f"A must have at least one row and one column, got shape {A.shape}")
    return A.shape


# ---------------------------------------------------------------------------
# Tasks (run on the workers)
# ---------------------------------------------------------------------------

def _as_block(raw, where, shape, dtype):
    """The chunk at grid position ``where`` checked (finite values, valid
    sparse arrays, the shape that A.chunks promise) and cast to ``dtype``."""
    name = f"A chunk {where}"
    block = as_matrix(raw, name)
    if block.shape != shape:
        raise ValueError(f"{name} has shape {block.shape}, but the chunks of A say {shape}")
    return block if block.dtype == dtype else block.astype(dtype)


def _sketch_chunk(raw, where, offsets, shape, payload, dtype):
    """``S[:, i0:i0+h] X`` (axis 0) or ``X S[:, j0:j0+w]^T`` (axis 1)."""
    S, axis = payload
    block = _as_block(raw, where, shape, dtype)
    if 0 in shape:  # an empty chunk adds nothing
        out_shape = (S.sketch_size, shape[1]) if axis == 0 else (shape[0], S.sketch_size)
        return np.zeros(out_shape, dtype)
    return apply_validated(S, block, axis, offset=offsets[axis])  # checked by _as_block


def _both_chunk(raw, where, offsets, shape, ops, dtype):
    """``S1[:, i0:i0+h] X S2[:, j0:j0+w]^T``."""
    S1, S2 = ops
    block = _as_block(raw, where, shape, dtype)
    if 0 in shape:
        return np.zeros((S1.sketch_size, S2.sketch_size), dtype)
    return sketch_both_validated(S1, block, S2, offsets=offsets)  # checked by _as_block


def _state_chunk(raw, where, offsets, shape, state, dtype):
    """The chunk's shares of every sketch of ``state`` (a SketchState with
    no arrays yet), from one read of the chunk: rows [i0, i0+h) of the range
    sketches, columns [j0, j0+w) of the co-range sketches, all of the core
    sketches (``SketchState.block_sketches``)."""
    block = _as_block(raw, where, shape, dtype)
    with trusted(block):  # checked by _as_block
        return state.block_sketches(block, offsets)


def _add(*parts):
    """Sum of partial sketches in the order given (inputs are not modified:
    a worker may still hold them for another task)."""
    out = parts[0].copy()
    for part in parts[1:]:
        out += part
    return out


# ---------------------------------------------------------------------------
# Graph: one task per chunk, fixed reduction trees
# ---------------------------------------------------------------------------


def _bounds(chunks):
    """[(start, size)] of the chunks along one axis."""
    starts = np.concatenate(([0], np.cumsum(chunks)[:-1]))
    return [(int(start), int(size)) for start, size in zip(starts, chunks)]


class _Pass:
    """The graph of one pass over A, in one layer: a task per chunk,
    ``func(chunk, (bi, bj), (i0, j0), (h, w), payload, dtype)``, and sums in
    fixed trees.  ``payload`` (the operators) is one node of the graph, so a
    worker receives it once.  (One layer for all tasks: a Delayed object per
    task made a layer per task, and culling those cost time quadratic in the
    number of chunks: 48 s of graph work for 5,000 chunks.)"""

    def __init__(self, A, name, func, payload, dtype, outputs=None):
        self.name = name
        self.blocks = A.to_delayed()  # keys of the (optimized) chunks, one shared graph
        self.payload = dask.delayed(payload, name=f"{name}-operators", traverse=False)
        self.dsk = {}
        self.grid = []
        for bi, (i0, h) in enumerate(_bounds(A.chunks[0])):
            line = []
            for bj, (j0, w) in enumerate(_bounds(A.chunks[1])):
                key = (f"{name}-chunk", bi, bj)
                self.dsk[key] = (func, self.blocks[bi, bj].key, (bi, bj), (i0, j0), (h, w),
                                 self.payload.key, dtype)
                if outputs is not None:  # one key per named output of the chunk's task
                    parts = {out: (f"{name}-{out}", bi, bj) for out in outputs}
                    for out, part in parts.items():
                        self.dsk[part] = (operator.getitem, key, out)
                    key = parts
                line.append(key)
            self.grid.append(line)

    def tree_sum(self, keys, tag):
        """Key of the sum of ``keys`` by a tree of fixed shape and order
        (fan-in ``_FAN_IN``), so that the result is the same on every scheduler."""
        level = 0
        while len(keys) > 1:
            sums = []
            for t in range(0, len(keys), _FAN_IN):
                key = (f"{self.name}-{tag}-sum{level}", t // _FAN_IN)
                self.dsk[key] = (_add, *keys[t:t + _FAN_IN])
                sums.append(key)
            keys = sums
            level += 1
        return keys[0]

    def compute(self, outputs, scheduler):
        """Values of ``outputs`` (keys, in nested lists; None stays None)."""
        graph = HighLevelGraph.from_collections(
            self.name, self.dsk, dependencies=[self.blocks.flat[0], self.payload]
        )

        def wrap(x):
            if isinstance(x, list):
                return [wrap(y) for y in x]
            return None if x is None else Delayed(x, graph, layer=self.name)

        collections = [wrap(x) for x in outputs]
        if isinstance(scheduler, str) and "://" in scheduler:
            from distributed import Client

            with Client(scheduler, set_as_default=False) as client:
                return dask.compute(*collections, scheduler=client)
        return dask.compute(*collections, scheduler=scheduler)


def _writable(X):
    """X owned and writable (results deserialized from a network buffer may be read-only)."""
    return X if X.flags.writeable else X.copy()


# ---------------------------------------------------------------------------
# Sketches
# ---------------------------------------------------------------------------


def sketch(S: SketchOperator, A: da.Array | MatrixLike, axis: int = 0, *,
           scheduler: Any = None) -> NDArray[np.floating]:
    """Sketch of a dask array: ``S A`` (``axis=0``) or ``A S^T`` (``axis=1``).

    Each chunk ``A[i0:i0+h, j0:j0+w]`` applies columns ``[i0, i0+h)``
    (``axis=0``) or ``[j0, j0+w)`` (``axis=1``) of S on a worker
    (``S.apply(chunk, axis, offset=)``); the partial sketches of the chunks
    that share an output block are summed in a fixed tree, and only the
    sketch comes back.

    Parameters
    ----------
    S : SketchOperator of shape (s, d)
    A : dask.array.Array of shape (d, n) (``axis=0``) or (m, d) (``axis=1``)
        Chunks dense (numpy) or scipy.sparse (CSR/CSC; other formats are
        converted), chunked along either axis or both; 1-D A is a vector of
        length d.  Anything else (ndarray, scipy.sparse) runs in memory:
        ``S.apply(A, axis=axis)``.
    axis : {0, 1}, default 0
        The dimension of A that S compresses.
    scheduler : str, Client or executor, optional
        Passed to ``dask.compute`` ("threads", "processes", "sync", a
        ``distributed.Client``); a ``"tcp://..."`` address connects to that
        distributed scheduler for the call.  Default: the active scheduler
        (a current ``Client``, ``dask.config``), else threads.

    Returns
    -------
    ndarray of shape (s, n) (``axis=0``), (m, s) (``axis=1``), or (s,)
        float32 when A is float32, else float64.

    Raises
    ------
    TypeError
        ``S`` is not an operator, A has a non-numeric dtype.
    ValueError
        ``A.shape[axis] != S.input_dim``, A is not 1-D or 2-D or has unknown
        chunk sizes (before any task runs); a chunk with NaN or Inf, or whose
        shape differs from ``A.chunks`` (raised by its task).

    Notes
    -----
    The block application gives exactly the corresponding columns of S, so
    the result is the in-memory ``S.apply(A, axis)`` up to the rounding of
    the partial sums.  Work: that of the operator on each chunk (O(nnz)
    for CountSketch, OSNAP (times p) and the samplers); memory per task:
    one chunk and its partial sketch (s x w or h x s); communication: one
    partial sketch per chunk, and the result to the client.

    Examples
    --------
    >>> import numpy as np, dask.array as da, sketchlab
    >>> X = np.random.default_rng(0).standard_normal((600, 40))
    >>> A = da.from_array(X, chunks=(150, 25))
    >>> S = sketchlab.CountSketch(30, 600, rng=0)
    >>> SA = sketchlab.dask.sketch(S, A, axis=0, scheduler="sync")
    >>> SA.shape
    (30, 40)
    >>> bool(np.allclose(SA, S @ X))
    True
    """
    _check_operator(S, "S")
    axis = check_axis(axis)
    if not _is_dask_array(A):
        return S.apply(A, axis=axis)
    vector = A.ndim == 1
    if vector:
        A = A[:, None] if axis == 0 else A[None, :]
    dtype = _check_array(A)
    if A.shape[axis] != S.input_dim:
        raise ValueError(
            f"A.shape[{axis}] must equal S.input_dim = {S.input_dim}, got A of shape "
            f"{A.shape if not vector else (A.shape[axis],)}"
        )
    name = "sketchlab-sketch-" + tokenize(A, axis, S)
    graph = _Pass(A, name, _sketch_chunk, (S, axis), dtype)
    # the output block of chunk (bi, bj) is column block bj (axis 0) or row block bi (axis 1)
    lines = list(zip(*graph.grid)) if axis == 0 else graph.grid
    outs = [graph.tree_sum(list(line), f"out{t}") for t, line in enumerate(lines)]
    (blocks,) = graph.compute([outs], scheduler)
    out = np.concatenate(blocks, axis=1 - axis)
    return out.ravel() if vector else out


def sketch_both(S1: SketchOperator, A: da.Array | MatrixLike, S2: SketchOperator, *,
                scheduler: Any = None) -> NDArray[np.floating]:
    """Two-sided sketch ``S1 A S2^T`` of a dask array.

    Each chunk ``A[i0:i0+h, j0:j0+w]`` gives
    ``S1[:, i0:i0+h] X S2[:, j0:j0+w]^T`` on a worker with
    ``sketchlab.sketch_both(S1, chunk, S2, offsets=(i0, j0))`` (one pass over
    the chunk's nonzeros for the hashing and sampling kinds); the s1 x s2
    partial sketches are summed in a fixed tree and only the sum comes back.
    This is the sketching step of Fast GMR (Algorithm 1): with
    ``M = sketch_both(S_C, A, S_R)``, ``X~ = (S_C C)^+ M (R S_R^T)^+``.

    Parameters
    ----------
    S1 : SketchOperator of shape (s1, m)
    A : dask.array.Array of shape (m, n)
        Dense or scipy.sparse chunks, chunked along either axis or both.
        Anything else runs in memory (``sketchlab.sketch_both``).
    S2 : SketchOperator of shape (s2, n)
    scheduler : str, Client or executor, optional
        As in :func:`sketch`.

    Returns
    -------
    ndarray of shape (s1, s2)
        float32 when A is float32, else float64.

    Raises
    ------
    TypeError
        ``S1`` or ``S2`` is not an operator, A has a non-numeric dtype.
    ValueError
        ``A.shape != (S1.input_dim, S2.input_dim)``, A not 2-D, unknown chunk
        sizes (before any task runs); a chunk with NaN or Inf or of the
        wrong shape (raised by its task).

    Notes
    -----
    Equals the in-memory ``sketchlab.sketch_both(S1, A, S2)`` up to the
    rounding of the partial sums.  Work O(nnz(A) p1 p2) for OSNAP and
    CountSketch (p nonzeros per column); memory per task one chunk and one
    s1 x s2 buffer; communication one s1 x s2 partial per chunk.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, dask.array as da, sketchlab
    >>> gen = np.random.default_rng(0)
    >>> X = sp.random(500, 400, density=0.02, format="csr", random_state=gen)
    >>> A = da.from_array(X, chunks=(100, 200), asarray=False)
    >>> S1 = sketchlab.CountSketch(20, 500, rng=0)
    >>> S2 = sketchlab.CountSketch(15, 400, rng=1)
    >>> M = sketchlab.dask.sketch_both(S1, A, S2, scheduler="sync")
    >>> bool(np.allclose(M, sketchlab.sketch_both(S1, X, S2), rtol=1e-12, atol=1e-14))
    True
    """
    _check_operator(S1, "S1")
    _check_operator(S2, "S2")
    if not _is_dask_array(A):
        return _sketch_both(S1, A, S2)
    dtype = _check_array(A)
    if A.shape != (S1.input_dim, S2.input_dim):
        raise ValueError(
            f"A.shape must be (S1.input_dim, S2.input_dim) = {(S1.input_dim, S2.input_dim)}, "
            f"got {A.shape}"
        )
    ops = (S1, S2)
    name = "sketchlab-sketch-both-" + tokenize(A, S1, S2)
    graph = _Pass(A, name, _both_chunk, ops, dtype)
    total = graph.tree_sum([key for line in graph.grid for key in line], "M")
    (M,) = graph.compute([total], scheduler)
    return _writable(M)


# ---------------------------------------------------------------------------
# Single-pass SVDs
# ---------------------------------------------------------------------------


def sketch_state(A: da.Array | MatrixLike,
                 sketches: dict[str, tuple[SketchOperator | None, SketchOperator | None]], *,
                 scheduler: Any = None) -> SketchState:
    """One pass over the chunks of a dask array into a filled
    :class:`~sketchlab.SketchState` of ``sketches``.

    Each chunk is read once, by one task that computes its shares of every
    sketch (``SketchState.block_sketches``); the shares are summed in fixed
    trees (fan-in 8): a range sketch ``(None, R)`` per row block of chunks, a
    co-range sketch ``(L, None)`` per column block, a core sketch over all
    chunks.  Only the sketches reach the client.

    Parameters
    ----------
    A : dask.array.Array of shape (m, n)
        Dense or scipy.sparse chunks with known sizes.
    sketches : dict of str -> (SketchOperator or None, SketchOperator or None)
        As for :class:`~sketchlab.SketchState`.
    scheduler : str, Client or executor, optional
        As in :func:`sketch`.

    Returns
    -------
    SketchState
        The same sketches as ``SketchState(A.shape, sketches).update(A)`` in
        memory, up to the rounding of the partial sums.

    Examples
    --------
    >>> import numpy as np, dask.array as da, sketchlab
    >>> X = np.random.default_rng(0).standard_normal((600, 40))
    >>> A = da.from_array(X, chunks=(150, 20))
    >>> sketches = {"range": (None, sketchlab.CountSketch(5, 40, rng=1)),
    ...             "co-range": (sketchlab.GaussianSketch(6, 600, rng=2), None)}
    >>> state = sketchlab.dask.sketch_state(A, sketches, scheduler="sync")
    >>> bool(np.allclose(state["co-range"], sketches["co-range"][0] @ X))
    True
    """
    if not _is_dask_array(A):
        raise TypeError(f"A must be a dask array, got {type(A).__name__}")
    dtype = _check_array(A)
    template = SketchState(A.shape, sketches, dtype=dtype)  # checks the operators
    name = "sketchlab-sketch-state-" + tokenize(
        A, sorted((key, left, right) for key, (left, right) in sketches.items())
    )
    graph = _Pass(A, name, _state_chunk, template, dtype, outputs=template.share_keys)
    row_bounds, col_bounds = _bounds(A.chunks[0]), _bounds(A.chunks[1])
    plan = []  # (name, offsets, block shape, key of the summed shares)
    for key in template.share_keys:
        axis = template.share_axis(key)
        if axis == 0:
            for bi, line in enumerate(graph.grid):
                (i0, h) = row_bounds[bi]
                plan.append((key, (i0, 0), (h, A.shape[1]),
                             graph.tree_sum([parts[key] for parts in line], f"{key}-{bi}")))
        elif axis == 1:
            for bj, line in enumerate(zip(*graph.grid)):
                (j0, w) = col_bounds[bj]
                plan.append((key, (0, j0), (A.shape[0], w),
                             graph.tree_sum([parts[key] for parts in line], f"{key}-{bj}")))
        else:
            everything = [parts[key] for line in graph.grid for parts in line]
            plan.append((key, (0, 0), A.shape, graph.tree_sum(everything, "sum-" + key)))
    (parts,) = graph.compute([[entry[3] for entry in plan]], scheduler)
    state = template
    for (key, offsets, block_shape, _), part in zip(plan, parts):
        state.add_block_sketches({key: part}, offsets, block_shape)
    return state


def _single_pass(method, A, k, *, axis, block_size, shape, scheduler, estimate_error, tol,
                 **params):
    """The single-pass SVD ``method`` of a dask A: the in-memory sizes and
    operators (same ``rng``, same draws), one pass over the chunks, the
    in-memory recovery."""
    shape = _check_svd_input(A, axis, block_size, shape)
    tol = _svd.check_tol_or_rank(tol, params.get("rank"))
    _, rank, sketches = _svd.svd_sketches(method, shape, k, **params,
                                          estimate_error=bool(estimate_error) or tol is not None)
    state = sketch_state(A, sketches, scheduler=scheduler)
    return _svd.finish(_svd.svd_recover(method, state, rank, overwrite=True, tol=tol),
                       estimate_error)


_DASK_INPUT_DOC = """A : dask.array.Array of shape (m, n)
        Dense (numpy) or scipy.sparse (CSR/CSC) chunks, chunked along either
        axis or both; each chunk is read once, by one task that adds to all
        the sketches.  Anything else (a matrix, an iterable of blocks) runs
        in memory with :mod:`sketchlab`, all parameters passed on."""

_DASK_COMMON_DOC = """axis : {0, 1}, default 1
        For in-memory input; with a dask A the chunks are the blocks (the
        result does not depend on how A is chunked, up to rounding).
    block_size : int, optional
        For in-memory input only (rechunk a dask A instead).
    rank : int, optional
        Number of components returned, up to ``min(c, r)``; default k.
    estimate_error, tol, n_probes
        As in :func:`sketchlab.fast_sp_svd`: the test sketch of the error
        estimate is one more sketch of each chunk's task.
    rng : None, int or numpy.random.Generator
        Seeds the operators, drawn in the same order as in memory, so the
        result equals the in-memory one for the same ``rng``.
    shape : (int, int), optional
        Must equal ``A.shape`` when given with a dask A.
    scheduler : str, Client or executor, optional
        As in :func:`sketch`: passed to ``dask.compute``, or the address
        of a distributed scheduler; default the active scheduler."""

_DASK_RAISES_DOC = """Raises
    ------
    ValueError
        Bad sizes or kinds (as in memory), ``block_size`` with a dask A,
        a ``shape`` that differs from ``A.shape``, unknown chunk sizes, A
        not 2-D (all before any task runs); a chunk with NaN or Inf or of
        the wrong shape (raised by its task).
    TypeError
        A non-numeric dtype, a bad ``shape``."""

_DASK_MEMORY_NOTE = """Each task holds one chunk (h x w) and its
    shares of the sketches: ``h c`` of C, ``r w`` of R and the core; a
    reduction task at most 9 such shares.  Chunks that span the short
    dimension of A (row chunks of a tall A) keep the shares of C and R
    small.  The client holds the sketches (``m c + r n + s_c s_r``
    numbers) while the reduced blocks arrive (at most twice that), then
    finishes as in memory: QRs of C and R^T, the small core, its SVD."""


@overload
def fast_sp_svd(A: da.Array | MatrixLike, k: int, *, c: int | None = ..., r: int | None = ...,
                s_c: int | None = ..., s_r: int | None = ..., range_sketch: str = ...,
                core_sketch: str = ..., axis: int = ..., block_size: int | None = ...,
                rank: int | None = ..., rng: None | int | np.random.Generator = ...,
                shape: tuple[int, int] | None = ..., scheduler: Any = ...,
                estimate_error: Literal[False] = ..., tol: float | None = ...,
                n_probes: int | None = ...) -> SVDFactors: ...
@overload
def fast_sp_svd(A: da.Array | MatrixLike, k: int, *, c: int | None = ..., r: int | None = ...,
                s_c: int | None = ..., s_r: int | None = ..., range_sketch: str = ...,
                core_sketch: str = ..., axis: int = ..., block_size: int | None = ...,
                rank: int | None = ..., rng: None | int | np.random.Generator = ...,
                shape: tuple[int, int] | None = ..., scheduler: Any = ...,
                estimate_error: Literal[True], tol: float | None = ..., n_probes: int | None = ...
               ) -> SVDFactorsWithError: ...
@overload
def fast_sp_svd(A: da.Array | MatrixLike, k: int, *, c: int | None = ..., r: int | None = ...,
                s_c: int | None = ..., s_r: int | None = ..., range_sketch: str = ...,
                core_sketch: str = ..., axis: int = ..., block_size: int | None = ...,
                rank: int | None = ..., rng: None | int | np.random.Generator = ...,
                shape: tuple[int, int] | None = ..., scheduler: Any = ...,
                estimate_error: bool = ..., tol: float | None = ..., n_probes: int | None = ...
               ) -> SVDFactors | SVDFactorsWithError: ...


def fast_sp_svd(A: da.Array | MatrixLike, k: int, *, c: int | None = None, r: int | None = None,
                s_c: int | None = None, s_r: int | None = None,
                range_sketch: str = "osnap-gaussian", core_sketch: str = "osnap", axis: int = 1,
                block_size: int | None = None, rank: int | None = None,
                rng: None | int | np.random.Generator = None,
                shape: tuple[int, int] | None = None, scheduler: Any = None,
                estimate_error: bool = False, tol: float | None = None,
                n_probes: int | None = None) -> SVDFactors | SVDFactorsWithError:
    """Fast single-pass SVD (Algorithm 3) of a dask array.

    Each chunk adds its shares of ``C = A Omega~`` (m x c), ``R = Psi~ A``
    (r x n) and ``M = S_C A S_R^T`` (s_c x s_r) in one task; the shares are
    summed in fixed trees (C per row block, R per column block, M over all
    chunks), and the client recovers ``U_C = qr(C)``, ``V_R = qr(R^T)``,
    ``N = (S_C U_C)^+ M (V_R^T S_R^T)^+`` and the SVD of N as
    :func:`sketchlab.fast_sp_svd` does.

    Parameters
    ----------
    {input}
    k : int
        Target rank, ``1 <= k <= min(m, n)`` and ``k <= min(c, r)``.
    c, r, s_c, s_r : int, optional
        Sketch sizes, defaults as :func:`sketchlab.fast_sp_svd` (``c = r =
        2k``, ``s_c = ceil(3 c sqrt(x))``, ``s_r = ceil(3 r sqrt(x))``,
        ``x = (c + r) / k``).
    range_sketch : str, default "osnap-gaussian"
        Kind of Omega~ and Psi~ (``sketchlab.SVD_SKETCHES``).
    core_sketch : str, default "osnap"
        Kind of S_C and S_R.
    {common}

    Returns
    -------
    U : ndarray of shape (m, q)
    s : ndarray of shape (q,)
    Vt : ndarray of shape (q, n)
        As :func:`sketchlab.fast_sp_svd`: ``q = rank`` (default k);
        float32 for float32 A, else float64.

    {raises}

    Notes
    -----
    Theorem 4 (as in memory): with c, r = O(k/eps) and the core sizes of
    the theorem, ``||A - U diag(s) Vt||_F <= (1 + eps) ||A - A_k||_F``
    with probability 0.9.  Work O(nnz(A) p) for the hash kinds (O(nnz(A)
    c) for the dense and composed kinds) spread over the workers, plus
    O((m + n) c^2 + s_c s_r c) on the client.  {memory}

    Examples
    --------
    >>> import numpy as np, dask.array as da, sketchlab
    >>> gen = np.random.default_rng(0)
    >>> X = gen.standard_normal((600, 8)) @ gen.standard_normal((8, 300))
    >>> A = da.from_array(X, chunks=(200, 150))
    >>> U, s, Vt = sketchlab.dask.fast_sp_svd(A, 8, rng=0, scheduler="sync")
    >>> U0, s0, Vt0 = sketchlab.fast_sp_svd(X, 8, rng=0)
    >>> bool(np.allclose(s, s0, rtol=1e-10, atol=1e-10 * s0[0]))
    True
    >>> bool(np.allclose((U * s) @ Vt, X))
    True
    """
    if not _is_dask_array(A):
        return _svd.fast_sp_svd(A, k, c=c, r=r, s_c=s_c, s_r=s_r, range_sketch=range_sketch,
                                core_sketch=core_sketch, axis=axis, block_size=block_size,
                                rank=rank, rng=rng, shape=shape,
                                estimate_error=estimate_error, tol=tol, n_probes=n_probes)
    return _single_pass("fast", A, k, axis=axis, block_size=block_size, shape=shape,
                        scheduler=scheduler, c=c, r=r, s_c=s_c, s_r=s_r,
                        range_sketch=range_sketch, core_sketch=core_sketch, rank=rank, rng=rng,
                        estimate_error=estimate_error, tol=tol, n_probes=n_probes)


@overload
def practical_sp_svd(A: da.Array | MatrixLike, k: int, *, c: int | None = ...,
                     r: int | None = ..., range_sketch: str = ..., axis: int = ...,
                     block_size: int | None = ..., rank: int | None = ...,
                     rng: None | int | np.random.Generator = ...,
                     shape: tuple[int, int] | None = ..., scheduler: Any = ...,
                     estimate_error: Literal[False] = ..., tol: float | None = ...,
                     n_probes: int | None = ...) -> SVDFactors: ...
@overload
def practical_sp_svd(A: da.Array | MatrixLike, k: int, *, c: int | None = ...,
                     r: int | None = ..., range_sketch: str = ..., axis: int = ...,
                     block_size: int | None = ..., rank: int | None = ...,
                     rng: None | int | np.random.Generator = ...,
                     shape: tuple[int, int] | None = ..., scheduler: Any = ...,
                     estimate_error: Literal[True], tol: float | None = ...,
                     n_probes: int | None = ...) -> SVDFactorsWithError: ...
@overload
def practical_sp_svd(A: da.Array | MatrixLike, k: int, *, c: int | None = ...,
                     r: int | None = ..., range_sketch: str = ..., axis: int = ...,
                     block_size: int | None = ..., rank: int | None = ...,
                     rng: None | int | np.random.Generator = ...,
                     shape: tuple[int, int] | None = ..., scheduler: Any = ...,
                     estimate_error: bool = ..., tol: float | None = ...,
                     n_probes: int | None = ...) -> SVDFactors | SVDFactorsWithError: ...


def practical_sp_svd(A: da.Array | MatrixLike, k: int, *, c: int | None = None,
                     r: int | None = None, range_sketch: str = "gaussian", axis: int = 1,
                     block_size: int | None = None, rank: int | None = None,
                     rng: None | int | np.random.Generator = None,
                     shape: tuple[int, int] | None = None, scheduler: Any = None,
                     estimate_error: bool = False, tol: float | None = None,
                     n_probes: int | None = None) -> SVDFactors | SVDFactorsWithError:
    """Practical single-pass SVD (Tropp et al. 2017; the paper's appendix) of a dask array.

    Each chunk adds its shares of ``C = A Omega~`` (m x c) and
    ``R = Psi~ A`` (r x n) in one task; the client recovers
    ``N = (Psi~ U_C)^+ R V_R`` and its SVD as
    :func:`sketchlab.practical_sp_svd` does.

    Parameters
    ----------
    {input}
    k : int
        Target rank, ``k <= c``.
    c, r : int, optional
        Range and co-range sizes, ``r >= c``; defaults as
        :func:`sketchlab.practical_sp_svd` (``c = 2k + 1``, ``r = 2c + 1``).
    range_sketch : str, default "gaussian"
        Kind of Omega~ and Psi~.
    {common}

    Returns
    -------
    U : ndarray of shape (m, q)
    s : ndarray of shape (q,)
    Vt : ndarray of shape (q, n)
        ``q = min(c, m, n)`` or ``rank``.

    {raises}

    Notes
    -----
    Tropp et al. (2017): the error is at most ``(1 + c/(r - c - 1))``
    times the range-finder error (Gaussian maps), so ``(1 + eps)`` needs
    ``r = O(k/eps^2)`` against Algorithm 3's O(k/eps).  Work
    O(nnz(A) (c + r)) with Gaussian maps over the workers, O((m + n) r^2)
    on the client.  {memory}

    Examples
    --------
    >>> import numpy as np, dask.array as da, sketchlab
    >>> gen = np.random.default_rng(0)
    >>> X = gen.standard_normal((600, 8)) @ gen.standard_normal((8, 300))
    >>> A = da.from_array(X, chunks=(200, 300))
    >>> U, s, Vt = sketchlab.dask.practical_sp_svd(A, 8, c=12, r=25, rng=0, scheduler="sync")
    >>> s.shape
    (8,)
    >>> bool(np.allclose((U * s) @ Vt, X))
    True
    """
    if not _is_dask_array(A):
        return _svd.practical_sp_svd(A, k, c=c, r=r, range_sketch=range_sketch, axis=axis,
                                     block_size=block_size, rank=rank, rng=rng, shape=shape,
                                estimate_error=estimate_error, tol=tol, n_probes=n_probes)
    return _single_pass("practical", A, k, axis=axis, block_size=block_size, shape=shape,
                        scheduler=scheduler, c=c, r=r, range_sketch=range_sketch, rank=rank,
                        rng=rng, estimate_error=estimate_error, tol=tol, n_probes=n_probes)


@overload
def three_sketch_svd(A: da.Array | MatrixLike, k: int, *, c: int | None = ...,
                     r: int | None = ..., s_c: int | None = ..., s_r: int | None = ...,
                     range_sketch: str = ..., core_sketch: str = ..., axis: int = ...,
                     block_size: int | None = ..., rank: int | None = ...,
                     rng: None | int | np.random.Generator = ...,
                     shape: tuple[int, int] | None = ..., scheduler: Any = ...,
                     estimate_error: Literal[False] = ..., tol: float | None = ...,
                     n_probes: int | None = ...) -> SVDFactors: ...
@overload
def three_sketch_svd(A: da.Array | MatrixLike, k: int, *, c: int | None = ...,
                     r: int | None = ..., s_c: int | None = ..., s_r: int | None = ...,
                     range_sketch: str = ..., core_sketch: str = ..., axis: int = ...,
                     block_size: int | None = ..., rank: int | None = ...,
                     rng: None | int | np.random.Generator = ...,
                     shape: tuple[int, int] | None = ..., scheduler: Any = ...,
                     estimate_error: Literal[True], tol: float | None = ...,
                     n_probes: int | None = ...) -> SVDFactorsWithError: ...
@overload
def three_sketch_svd(A: da.Array | MatrixLike, k: int, *, c: int | None = ...,
                     r: int | None = ..., s_c: int | None = ..., s_r: int | None = ...,
                     range_sketch: str = ..., core_sketch: str = ..., axis: int = ...,
                     block_size: int | None = ..., rank: int | None = ...,
                     rng: None | int | np.random.Generator = ...,
                     shape: tuple[int, int] | None = ..., scheduler: Any = ...,
                     estimate_error: bool = ..., tol: float | None = ...,
                     n_probes: int | None = ...) -> SVDFactors | SVDFactorsWithError: ...


def three_sketch_svd(A: da.Array | MatrixLike, k: int, *, c: int | None = None,
                     r: int | None = None, s_c: int | None = None, s_r: int | None = None,
                     range_sketch: str = "gaussian", core_sketch: str = "gaussian", axis: int = 1,
                     block_size: int | None = None, rank: int | None = None,
                     rng: None | int | np.random.Generator = None,
                     shape: tuple[int, int] | None = None, scheduler: Any = None,
                     estimate_error: bool = False, tol: float | None = None,
                     n_probes: int | None = None) -> SVDFactors | SVDFactorsWithError:
    """Three-sketch single-pass SVD (Tropp, Yurtsever, Udell & Cevher 2019) of a dask array.

    Each chunk adds its shares of the range sketch ``A Omega^T`` (m x c),
    the co-range sketch ``Psi A`` (r x n) and the core sketch
    ``Phi A Theta^T`` (s_c x s_r) in one task; the client recovers the
    low-rank SVD as :func:`sketchlab.three_sketch_svd` does.

    Parameters
    ----------
    {input}
    k : int
        Target rank, ``k <= min(c, r)``.
    c, r, s_c, s_r : int, optional
        Range, co-range and core sizes; defaults as
        :func:`sketchlab.three_sketch_svd` (``c = r = 4k + 1``,
        ``s_c = 2c + 1``, ``s_r = 2r + 1``).
    range_sketch, core_sketch : str, default "gaussian"
        Kinds of the range/co-range and core test matrices.
    {common}

    Returns
    -------
    U : ndarray of shape (m, q)
    s : ndarray of shape (q,)
    Vt : ndarray of shape (q, n)
        ``q = min(c, r, m, n)`` or ``rank``.

    {raises}

    Notes
    -----
    Their Theorem 5.1 (Gaussian maps, s >= 2k' + 1): expected squared
    error at most ``s/(s - k' - 1)`` times the range-finder error.  Work
    and memory as :func:`fast_sp_svd` with the same kinds and sizes.
    {memory}

    Examples
    --------
    >>> import numpy as np, dask.array as da, sketchlab
    >>> gen = np.random.default_rng(0)
    >>> X = gen.standard_normal((600, 8)) @ gen.standard_normal((8, 300))
    >>> A = da.from_array(X, chunks=(150, 300))
    >>> U, s, Vt = sketchlab.dask.three_sketch_svd(A, 8, rng=0, scheduler="sync")
    >>> s.shape
    (8,)
    >>> bool(np.allclose((U * s) @ Vt, X))
    True
    """
    if not _is_dask_array(A):
        return _svd.three_sketch_svd(A, k, c=c, r=r, s_c=s_c, s_r=s_r, range_sketch=range_sketch,
                                     core_sketch=core_sketch, axis=axis, block_size=block_size,
                                     rank=rank, rng=rng, shape=shape,
                                estimate_error=estimate_error, tol=tol, n_probes=n_probes)
    return _single_pass("three", A, k, axis=axis, block_size=block_size, shape=shape,
                        scheduler=scheduler, c=c, r=r, s_c=s_c, s_r=s_r,
                        range_sketch=range_sketch, core_sketch=core_sketch, rank=rank, rng=rng,
                        estimate_error=estimate_error, tol=tol, n_probes=n_probes)


for _f in (fast_sp_svd, practical_sp_svd, three_sketch_svd):
    if _f.__doc__:  # None under python -OO
        _f.__doc__ = _f.__doc__.format(input=_DASK_INPUT_DOC, common=_DASK_COMMON_DOC,
                                       raises=_DASK_RAISES_DOC, memory=_DASK_MEMORY_NOTE)
del _f


# ---------------------------------------------------------------------------
# CUR
# ---------------------------------------------------------------------------


def cur(A: da.Array | MatrixLike, c: int, r: int | None = None, *, k: int | None = None,
        select: str = "approx-leverage", core: str = "fast",
        sketch_size: int | tuple[int, int] | None = None,
        rng: None | int | np.random.Generator = None, estimate_error: bool = False,
        n_probes: int | None = None,
        scheduler: Any = None) -> CURDecomposition:
    """CUR decomposition of a dask array in two passes over the chunks.

    Pass 1 sketches A on both sides for the selection (a row sketch and a
    column sketch, :func:`sketch_state`); pass 2 gathers the chosen columns
    C and rows R (``A IndexSelection^T`` and ``IndexSelection A``), the core
    sketch ``S_C A S_R^T`` of Fast GMR and, with ``estimate_error``, the test
    sketch, all in one task per chunk.  The client finishes as
    :func:`sketchlab.cur` does; with the same ``rng`` the result equals the
    in-memory one up to rounding.

    Parameters
    ----------
    A : dask.array.Array of shape (m, n)
        Dense or sparse chunks.  Anything else runs :func:`sketchlab.cur`.
    c, r, k, sketch_size, rng, estimate_error, n_probes
        As in :func:`sketchlab.cur`.
    select : {"approx-leverage", "uniform", "deim", "pivoted-qr"}
        As in :func:`sketchlab.cur`; "leverage" (exact scores) needs the
        singular vectors of A itself and is not offered here.
    core : {"fast", "cross"}, default "fast"
        "exact" (``C^+ A R^+``) would need a third pass.
    scheduler : str, Client or executor, optional
        As in :func:`sketch`.

    Returns
    -------
    CURDecomposition
        C and R dense (gathered from the chunks).

    Examples
    --------
    >>> import numpy as np, dask.array as da, sketchlab
    >>> gen = np.random.default_rng(0)
    >>> X = gen.standard_normal((400, 5)) @ gen.standard_normal((5, 300))
    >>> d = sketchlab.dask.cur(da.from_array(X, chunks=(100, 150)), 10, rng=0,
    ...                        scheduler="sync")
    >>> bool(np.allclose(d.toarray(), X))
    True
    """
    from ._cur import CURDecomposition, check_cur_args, cross_core
    from ._cur import cur as cur_in_memory
    from ._errors import probe_left, probe_operator
    from ._gmr import ResidualProbe, solve_sketched
    from ._operators import IndexSelection
    from ._registry import GMR_DEFAULT_SKETCH, make_sketch
    from ._selection import select_from_sketches, selection_sketches
    from ._validation import as_generator

    if not _is_dask_array(A):
        return cur_in_memory(A, c, r, k=k, select=select, core=core, sketch_size=sketch_size,
                             rng=rng, estimate_error=estimate_error, n_probes=n_probes)
    _check_array(A)
    c, r, k, select, core, q, sketch_size = check_cur_args(A.shape, c, r, k, select, core,
                                                           n_probes, sketch_size)
    if select == "leverage":
        raise ValueError("select='leverage' (exact scores) is not available for a dask array; "
                         "use 'approx-leverage', 'deim', 'pivoted-qr' or 'uniform'")
    if core == "exact":
        raise ValueError("core='exact' would need a third pass over a dask array; use 'fast' "
                         "or 'cross'")
    m, n = A.shape
    gen = as_generator(rng)
    if select == "uniform":
        columns = np.sort(gen.choice(n, size=c, replace=False).astype(np.int64))
        rows = np.sort(gen.choice(m, size=r, replace=False).astype(np.int64))
    else:
        first = sketch_state(A, selection_sketches(A.shape, c, r, k, select, gen),
                             scheduler=scheduler)
        columns, rows = select_from_sketches(first.finalize(), c, r, k, select, gen)
    sketches: dict[str, tuple[Any, Any]] = {"C": (None, IndexSelection(columns, n)),
                                            "R": (IndexSelection(rows, m), None)}
    if core == "fast":
        s_c, s_r = (sketch_size, sketch_size) if np.ndim(sketch_size) == 0 else sketch_size
        S_C = make_sketch(GMR_DEFAULT_SKETCH, int(s_c), m, rng=gen)
        sketches["core"] = (S_C, make_sketch(GMR_DEFAULT_SKETCH, int(s_r), n, rng=gen))
    theta = probe_operator(q, n, gen) if estimate_error else None
    phi = probe_left(q, m, gen) if estimate_error else None
    if theta is not None:
        sketches["probe"] = (phi, theta)
    state = sketch_state(A, sketches, scheduler=scheduler)
    C, R = state["C"], state["R"]
    if core == "fast":
        S_C, S_R = sketches["core"]
        U = solve_sketched(S_C.apply(C), state["core"], S_R.apply(R, axis=1))
    else:
        U = cross_core(R, columns, k)
    estimate = None
    if theta is not None:
        estimate = ResidualProbe(phi, theta, state["probe"], C, R, state.norm).estimate(U)
    return CURDecomposition(columns, rows, np.asarray(C), U, np.asarray(R), select=select,
                            core=core, error_estimate=estimate)
