"""The graph of one pass of ``sketchlab.dask`` over the chunks of a dask array.

A task per chunk ``A[i0:i0+h, j0:j0+w]`` (:class:`Pass`) computes the chunk's
partial sketches with the operators' block application (the columns of S at
the chunk's offsets); partial sketches are summed in trees of fixed shape and
order (fan-in :data:`FAN_IN`), so the rounding does not depend on the
scheduler, the number of workers, the order in which tasks finish or the loss
of a worker (its tasks run again and give the same partials).  The public
front (:mod:`sketchlab.dask`) builds its passes from these pieces.
"""

from __future__ import annotations

import operator

import dask
import numpy as np
from dask.delayed import Delayed
from dask.highlevelgraph import HighLevelGraph

try:  # dask >= 2024.12: tasks name the keys they read (TaskRef)
    from dask import task_spec as _task_spec
except ImportError:  # pragma: no cover - older dask: tuples, keys found in the graph
    _task_spec = None  # type: ignore[assignment]

from ._operators import SketchOperator, sketch_both
from ._validation import Checked, as_matrix, check_numeric_dtype, result_dtype

__all__ = ["FAN_IN", "Pass", "Ref", "add", "as_block", "bounds", "check_array",
           "check_operator", "column_moments", "compute", "data", "ops_chunk", "state_chunk",
           "task"]

# Partial sketches summed by one reduction task: a tree of depth
# log_8(chunks), and at most 9 partials in a worker's memory per task.
FAN_IN = 8


# -- checks (all before any task runs) and tasks (on the workers) --------------


def check_operator(S, name):
    if not isinstance(S, SketchOperator):
        raise TypeError(f"{name} must be a SketchOperator, got {type(S).__name__}")


def check_array(A, name="A"):
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


def as_block(raw, where, shape, dtype, finite=True):
    """The chunk at grid position ``where`` checked (finite values, valid
    sparse arrays, the shape that A.chunks promise) and cast to ``dtype``.
    ``finite=False``: its values not checked again (a later pass of a map
    whose first pass checked them; a sparse chunk's index arrays are checked
    every time, as they guard the compiled loops' reads)."""
    name = f"A chunk {where}"
    block = as_matrix(raw, name, finite=finite)
    if block.shape != shape:
        raise ValueError(f"{name} has shape {block.shape}, but the chunks of A say {shape}")
    return block if block.dtype == dtype else block.astype(dtype)


def ops_chunk(raw, where, offsets, shape, ops, dtype):
    """``S1[:, i0:i0+h] X`` (``ops = (S1, None)``), ``X S2[:, j0:j0+w]^T``
    (``(None, S2)``) or ``S1[:, i0:i0+h] X S2[:, j0:j0+w]^T``."""
    S1, S2 = ops
    block = as_block(raw, where, shape, dtype)
    if 0 in shape:  # an empty chunk adds nothing
        return np.zeros((shape[0] if S1 is None else S1.sketch_size,
                         shape[1] if S2 is None else S2.sketch_size), dtype)
    block = Checked(block)  # checked by as_block: no second O(nnz) pass
    if S2 is None:
        return S1.apply(block, 0, offset=offsets[0])
    if S1 is None:
        return S2.apply(block, 1, offset=offsets[1])
    return sketch_both(S1, block, S2, offsets=offsets)


def state_chunk(raw, where, offsets, shape, state, dtype):
    """The chunk's shares of every sketch of ``state`` (a SketchState with no
    arrays yet) from one read of it (``SketchState.block_sketches``)."""
    block = as_block(raw, where, shape, dtype)
    return state.block_sketches(Checked(block), offsets)  # checked by as_block


def add(*parts):
    """Sum of partial sketches in the order given (inputs are not modified:
    a worker may still hold them for another task)."""
    out = parts[0].copy()
    for part in parts[1:]:
        out += part
    return out


# -- the graph of a pass: one task per chunk, fixed reduction trees ------------


class Ref:
    """A key that a task reads (a chunk, an operator, another task's result)."""

    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key


def data(key, value):
    """``value`` itself as the graph's node ``key`` (not a task to run)."""
    if _task_spec is None:  # pragma: no cover - older dask
        return value
    return _task_spec.DataNode(key, value)


def task(key, func, *args):
    """The task ``func(*args)`` under ``key``, ``Ref(k)`` among ``args`` the
    results it reads.  Through dask's ``Task`` and ``TaskRef`` where dask has
    them: a chunk of a persisted array is a key outside the graph (its data
    on the workers), which a plain tuple would hand to the function as the
    key itself (the task of a distributed ``Client`` received the chunk's
    key string)."""
    if _task_spec is None:  # pragma: no cover - older dask
        return (func, *(a.key if isinstance(a, Ref) else a for a in args))
    ref = _task_spec.TaskRef
    return _task_spec.Task(key, func, *(ref(a.key) if isinstance(a, Ref) else a for a in args))


def bounds(chunks):
    """[(start, size)] of the chunks along one axis."""
    starts = np.concatenate(([0], np.cumsum(chunks)[:-1]))
    return [(int(start), int(size)) for start, size in zip(starts, chunks)]


class Pass:
    """The graph of one pass over A, in one layer: a task per chunk,
    ``func(chunk, (bi, bj), (i0, j0), (h, w), payload, dtype)``, and sums in
    fixed trees.  ``payload`` (the operators) is one node of the graph, so a
    worker receives it once.  (One layer for all tasks: a Delayed object per
    task made a layer per task, and culling those cost time quadratic in the
    number of chunks.)"""

    def __init__(self, A, name, func, payload, dtype, outputs=None, row_payloads=None):
        self.name = name
        self.blocks = A.to_delayed()  # keys of the (optimized) chunks, one shared graph
        self.payload = dask.delayed(payload, name=f"{name}-operators", traverse=False)
        self.dsk = {}
        # with row_payloads(i0, h): each row block's own payload (a slice of a
        # tall operand: a worker receives the rows its chunks need, not all)
        rows = {}
        if row_payloads is not None:
            for bi, (i0, h) in enumerate(bounds(A.chunks[0])):
                rows[bi] = (f"{name}-rows", bi)
                self.dsk[rows[bi]] = data(rows[bi], row_payloads(i0, h))
        self.grid = []
        self.dtype = dtype
        self.places = [[((i0, j0), (h, w)) for j0, w in bounds(A.chunks[1])]
                       for i0, h in bounds(A.chunks[0])]
        for bi, (i0, h) in enumerate(bounds(A.chunks[0])):
            line = []
            for bj, (j0, w) in enumerate(bounds(A.chunks[1])):
                key = (f"{name}-chunk", bi, bj)
                given = rows.get(bi, self.payload.key)
                self.dsk[key] = task(key, func, Ref(self.blocks[bi, bj].key), (bi, bj),
                                     (i0, j0), (h, w), Ref(given), dtype)
                if outputs is not None:  # one key per named output of the chunk's task
                    parts = {out: (f"{name}-{out}", bi, bj) for out in outputs}
                    for out, part in parts.items():
                        self.dsk[part] = task(part, operator.getitem, Ref(key), out)
                    key = parts
                line.append(key)
            self.grid.append(line)

    def then(self, tag, func, inputs):
        """A second task per chunk in the same graph, ``func(chunk, (bi, bj),
        (i0, j0), (h, w), inputs(bi, bj), dtype)``, ``inputs(bi, bj)`` the key
        of a result of the first (a sum of a row block's partials, say): the
        chunk is read once for both.  Returns the grid of the new keys (to
        hand to :meth:`sums` as ``grid``)."""
        grid = []
        for bi, line in enumerate(self.grid):
            row = []
            for bj in range(len(line)):
                key = (f"{self.name}-{tag}", bi, bj)
                (i0, j0), (h, w) = self.places[bi][bj]
                self.dsk[key] = task(key, func, Ref(self.blocks[bi, bj].key), (bi, bj),
                                     (i0, j0), (h, w), Ref(inputs(bi, bj)), self.dtype)
                row.append(key)
            grid.append(row)
        return grid

    def sums(self, over, tag, output=None, grid=None):
        """Keys of the sums of the chunks' partials (their ``output``, for a
        pass with named outputs; of the tasks of ``grid``, from :meth:`then`,
        when given): over the column chunks of each row block (``over=1``:
        one key per row block), over the row chunks of each column block
        (``over=0``), or over every chunk (None: one key)."""
        grid = self.grid if grid is None else grid
        lines = {1: grid, 0: list(zip(*grid)),
                 None: [[key for line in grid for key in line]]}[over]
        return [self.tree_sum([key if output is None else key[output] for key in line],
                              f"{tag}{t}") for t, line in enumerate(lines)]

    def tree_sum(self, keys, tag):
        """Key of the sum of ``keys`` by a tree of fixed shape and order
        (fan-in ``FAN_IN``), so that the result is the same on every scheduler."""
        level = 0
        while len(keys) > 1:
            sums = []
            for t in range(0, len(keys), FAN_IN):
                key = (f"{self.name}-{tag}-sum{level}", t // FAN_IN)
                self.dsk[key] = task(key, add, *(Ref(k) for k in keys[t:t + FAN_IN]))
                sums.append(key)
            keys = sums
            level += 1
        return keys[0]

    def compute(self, outputs, scheduler):
        """Values of ``outputs`` (keys, in nested lists)."""
        graph = HighLevelGraph.from_collections(
            self.name, self.dsk, dependencies=[self.blocks.flat[0], self.payload]
        )

        def wrap(x):
            return [wrap(y) for y in x] if isinstance(x, list) else Delayed(x, graph,
                                                                            layer=self.name)

        collections = [wrap(x) for x in outputs]
        if isinstance(scheduler, str) and "://" in scheduler:
            from distributed import Client

            with Client(scheduler, set_as_default=False) as client:
                return dask.compute(*collections, scheduler=client)
        return dask.compute(*collections, scheduler=scheduler)


# -- the columns' means and variances in one pass (RandomizedPCA) ---------------


def _moments_chunk(raw, where, shape, dtype):
    """``(rows, column means, column sums of squared deviations)`` of a chunk
    (a sparse one from its stored values: ``sum (v - mean)^2`` over them plus
    ``mean^2`` for each zero, no cancellation)."""
    block = as_block(raw, where, shape, dtype)
    h, w = block.shape
    if h == 0:
        return 0, np.zeros(w), np.zeros(w)
    if hasattr(block, "tocsr"):  # scipy.sparse (as_block gives CSR or CSC)
        csr = block.tocsr()
        cols, vals = csr.indices, np.asarray(csr.data, dtype=np.float64)
        mean = np.bincount(cols, weights=vals, minlength=w) / h
        stored = np.bincount(cols, minlength=w)
        dev = np.bincount(cols, weights=(vals - mean[cols]) ** 2, minlength=w)
        return h, mean, dev + (h - stored) * mean * mean
    X = np.asarray(block, dtype=np.float64)
    mean = X.mean(axis=0)
    return h, mean, ((X - mean) ** 2).sum(axis=0)


def compute(collections, scheduler):
    """``dask.compute`` on ``scheduler`` (an address: a client for the call)."""
    if isinstance(scheduler, str) and "://" in scheduler:
        from distributed import Client

        with Client(scheduler, set_as_default=False) as client:
            return dask.compute(*collections, scheduler=client)
    return dask.compute(*collections, scheduler=scheduler)


def column_moments(A, scheduler=None):
    """``(mean, total variance)`` of the columns of a dask A (the variances
    with ``n - 1``) in one pass over its chunks: each chunk's count, means
    and squared deviations, combined in chunk order on the client (the
    pairwise update of Chan, Golub and LeVeque: no cancellation when the
    means dominate the spread), whatever the scheduler."""
    dtype = check_array(A)
    blocks = A.to_delayed()
    rows, cols = bounds(A.chunks[0]), bounds(A.chunks[1])
    tasks = [[dask.delayed(_moments_chunk, pure=True)(blocks[bi, bj], (bi, bj), (h, w), dtype)
              for bj, (_, w) in enumerate(cols)] for bi, (_, h) in enumerate(rows)]
    (parts,) = compute([tasks], scheduler)
    means, devs = [], []
    for bj, (_, w) in enumerate(cols):
        count, mean, dev = 0, np.zeros(w), np.zeros(w)
        for bi in range(len(rows)):
            h, mu, sq = parts[bi][bj]
            if h == 0:
                continue
            total = count + h
            delta = mu - mean
            mean = mean + delta * (h / total)
            dev = dev + sq + delta * delta * (count * h / total)
            count = total
        means.append(mean)
        devs.append(dev)
    n = A.shape[0]
    return np.concatenate(means), float(np.sum(np.concatenate(devs))) / max(n - 1, 1)
