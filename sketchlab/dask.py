"""The dask front: sketches, single-pass SVDs and CUR of ``dask.array`` inputs.

Plumbing over the in-memory plans.  The operators are defined by their seeds,
so each chunk ``A[i0:i0+h, j0:j0+w]`` applies on a worker the columns of S that
match its offsets; the partial results are summed in fixed trees (fan-in 8),
whatever the scheduler, the workers, the order of the tasks or the loss of a
worker.  :func:`sketch`, :func:`sketch_both` and :func:`sketch_state` are the
passes; :func:`cur`, :func:`fast_sp_svd`, :func:`practical_sp_svd`,
:func:`three_sketch_svd` and :func:`krylov_svd` are the in-memory functions
(and signatures) with each pass over A one over the chunks.

``scheduler=`` is passed to ``dask.compute`` ("threads", "processes", "sync", a
``distributed.Client``) or is the address of a distributed scheduler
(``"tcp://host:8786"``); default the active one (a current ``Client``,
``dask.config``).

Examples
--------
A CountSketch of a matrix held in four chunks, on dask's default (threaded)
scheduler:

>>> import numpy as np, dask.array as da, sketchlab
>>> A = da.from_array(np.random.default_rng(0).standard_normal((1000, 300)), chunks=(250, 300))
>>> S = sketchlab.CountSketch(50, 1000, rng=0)
>>> SA = sketchlab.dask.sketch(S, A)
>>> bool(np.allclose(SA, S @ A.compute()))
True

The same on a local cluster of two worker processes (skipped by the default
doctest run; the tests' long profile runs it):

>>> from dask.distributed import Client, LocalCluster  # doctest: +SKIP
>>> with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
...                   host="127.0.0.1", dashboard_address=None) as cluster, \\
...         Client(cluster):  # doctest: +SKIP
...     SA = sketchlab.dask.sketch(S, A)
>>> bool(np.allclose(SA, S @ A.compute()))
True
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.sparse import issparse

try:
    import dask
    import dask.array as da
    from dask.base import tokenize
except ImportError as exc:  # pragma: no cover - dask is an optional extra
    raise ImportError(
        "sketchlab.dask needs dask: pip install 'sketchlab[dask]' (dask[array], distributed)"
    ) from exc

from . import _cur, _eigsh, _krylov, _lstsq, _ridge, _svd
from ._config import serial_blas
from ._linear_map import LinearMap, as_linear_map, register_dask_map
from ._dask_pass import Pass, as_block, bounds, check_array, check_operator, ops_chunk, state_chunk
from ._operators import SketchOperator
from ._operators import sketch_both as _sketch_both
from ._sketch_state import SketchState
from ._validation import Checked, check_axis, check_shape

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ._cur import CURDecomposition
    from ._results import SVDResult
    from ._validation import MatrixLike

__all__ = ["sketch", "sketch_both", "sketch_state", "cur", "fast_sp_svd", "practical_sp_svd",
           "three_sketch_svd", "krylov_svd", "eigsh", "lstsq", "ridge"]

# -- the passes ----------------------------------------------------------------

def sketch(S: SketchOperator, A: da.Array | MatrixLike, axis: int = 0, *,
           scheduler: Any = None) -> NDArray[np.floating]:
    """Sketch of a dask array: ``S A`` (``axis=0``) or ``A S^T`` (``axis=1``).

    Each chunk ``A[i0:i0+h, j0:j0+w]`` applies columns ``[i0, i0+h)`` (axis
    0) or ``[j0, j0+w)`` (axis 1) of S on a worker (``S.apply(chunk, axis,
    offset=)``), and the partial sketches of an output block are summed in a
    fixed tree: the in-memory ``S.apply(A, axis)`` up to the rounding of the
    sums.  Work: the operator's on each chunk; memory per task: one chunk and
    its partial sketch; communication: one partial sketch per chunk.

    Parameters
    ----------
    S : SketchOperator of shape (s, d)
    A : dask.array.Array of shape (d, n) (``axis=0``) or (m, d) (``axis=1``)
        Dense or scipy.sparse chunks, chunked along either axis or both; 1-D
        A is a vector of length d.  Anything else runs ``S.apply(A, axis)``.
    axis : {0, 1}, default 0
        The dimension of A that S compresses.
    scheduler : str, Client or executor, optional
        See the module; default the active scheduler.

    Returns
    -------
    ndarray of shape (s, n) (``axis=0``), (m, s) (``axis=1``), or (s,)
        float32 when A is float32, else float64.

    Raises
    ------
    TypeError
        ``S`` is not an operator, A has a non-numeric dtype.
    ValueError
        ``A.shape[axis] != S.input_dim``, A not 1-D or 2-D, unknown chunk
        sizes (before any task runs); a chunk with NaN or Inf or of the wrong
        shape (raised by its task).

    Examples
    --------
    >>> import numpy as np, dask.array as da, sketchlab
    >>> X = np.random.default_rng(0).standard_normal((600, 40))
    >>> S = sketchlab.CountSketch(30, 600, rng=0)
    >>> SA = sketchlab.dask.sketch(S, da.from_array(X, chunks=(150, 25)), scheduler="sync")
    >>> SA.shape, bool(np.allclose(SA, S @ X))
    ((30, 40), True)
    """
    check_operator(S, "S")
    axis = check_axis(axis)
    if not isinstance(A, da.Array):
        return S.apply(A, axis=axis)
    vector = A.ndim == 1
    if vector:
        A = A[:, None] if axis == 0 else A[None, :]
    dtype = check_array(A)
    if A.shape[axis] != S.input_dim:
        raise ValueError(f"A.shape[{axis}] must equal S.input_dim = {S.input_dim}, got A of "
                         f"shape {A.shape if not vector else (A.shape[axis],)}")
    name = "sketchlab-sketch-" + tokenize(A, axis, S)
    graph = Pass(A, name, ops_chunk, (S, None) if axis == 0 else (None, S), dtype)
    # the output block of chunk (bi, bj) is column block bj (axis 0) or row block bi (axis 1)
    (blocks,) = graph.compute([graph.sums(axis, "out")], scheduler)
    out = np.concatenate(blocks, axis=1 - axis)
    return out.ravel() if vector else out


def sketch_both(S1: SketchOperator, A: da.Array | MatrixLike, S2: SketchOperator, *,
                scheduler: Any = None) -> NDArray[np.floating]:
    """Two-sided sketch ``S1 A S2^T`` of a dask array (the sketching step of
    Fast GMR, Algorithm 1).

    Each chunk gives ``S1[:, i0:i0+h] X S2[:, j0:j0+w]^T`` on a worker
    (:func:`sketchlab.sketch_both` with the chunk's offsets: one pass over its
    nonzeros for the hashing and sampling kinds); the s1 x s2 partials are
    summed in a fixed tree: the in-memory ``sketchlab.sketch_both(S1, A, S2)``
    up to the rounding of the sums.

    Parameters
    ----------
    S1 : SketchOperator of shape (s1, m)
    A : dask.array.Array of shape (m, n)
        As in :func:`sketch`; anything else runs ``sketchlab.sketch_both``.
    S2 : SketchOperator of shape (s2, n)
    scheduler : str, Client or executor, optional
        See the module; default the active scheduler.

    Returns
    -------
    ndarray of shape (s1, s2)
        float32 when A is float32, else float64.

    Raises
    ------
    TypeError, ValueError
        As :func:`sketch`, with ``A.shape != (S1.input_dim, S2.input_dim)``.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, dask.array as da, sketchlab
    >>> X = sp.random(500, 400, density=0.02, format="csr", random_state=0)
    >>> A = da.from_array(X, chunks=(100, 200), asarray=False)
    >>> S1, S2 = sketchlab.CountSketch(20, 500, rng=0), sketchlab.CountSketch(15, 400, rng=1)
    >>> M = sketchlab.dask.sketch_both(S1, A, S2, scheduler="sync")
    >>> bool(np.allclose(M, sketchlab.sketch_both(S1, X, S2), rtol=1e-12, atol=1e-14))
    True
    """
    check_operator(S1, "S1")
    check_operator(S2, "S2")
    if not isinstance(A, da.Array):
        return _sketch_both(S1, A, S2)
    dtype = check_array(A)
    if A.shape != (S1.input_dim, S2.input_dim):
        raise ValueError("A.shape must be (S1.input_dim, S2.input_dim) = "
                         f"{(S1.input_dim, S2.input_dim)}, got {A.shape}")
    graph = Pass(A, "sketchlab-sketch-both-" + tokenize(A, S1, S2), ops_chunk, (S1, S2), dtype)
    ((M,),) = graph.compute([graph.sums(None, "M")], scheduler)
    # owned and writable (results deserialized from a network buffer may be read-only)
    return M if M.flags.writeable else M.copy()


def sketch_state(A: da.Array,
                 sketches: dict[str, tuple[SketchOperator | None, SketchOperator | None]], *,
                 scheduler: Any = None) -> SketchState:
    """One pass over the chunks of a dask array into a filled
    :class:`~sketchlab.SketchState` of ``sketches``: what the plans run.

    Each chunk is read once, by one task that computes its shares of every
    sketch (``SketchState.block_sketches``); the shares are summed in fixed
    trees: a range sketch ``(None, R)`` per row block of chunks, a co-range
    sketch ``(L, None)`` per column block, a core sketch over all chunks.

    Parameters
    ----------
    A : dask.array.Array of shape (m, n)
        Dense or scipy.sparse chunks with known sizes.
    sketches : dict of str -> (SketchOperator or None, SketchOperator or None)
        As for :class:`~sketchlab.SketchState`.
    scheduler : str, Client or executor, optional
        See the module; default the active scheduler.

    Returns
    -------
    SketchState
        ``SketchState(A.shape, sketches).update(A)`` up to the rounding of the
        partial sums.

    Examples
    --------
    >>> import numpy as np, dask.array as da, sketchlab
    >>> X = np.random.default_rng(0).standard_normal((600, 40))
    >>> sketches = {"range": (None, sketchlab.CountSketch(5, 40, rng=1)),
    ...             "co-range": (sketchlab.GaussianSketch(6, 600, rng=2), None)}
    >>> A = da.from_array(X, chunks=(150, 20))
    >>> state = sketchlab.dask.sketch_state(A, sketches, scheduler="sync")
    >>> bool(np.allclose(state["co-range"], sketches["co-range"][0] @ X))
    True
    """
    if not isinstance(A, da.Array):
        raise TypeError(f"A must be a dask array, got {type(A).__name__}")
    dtype = check_array(A)
    template = SketchState(A.shape, sketches, dtype=dtype)  # checks the operators
    name = "sketchlab-sketch-state-" + tokenize(A, sorted((key, *ops) for key, ops in
                                                         sketches.items()))
    graph = Pass(A, name, state_chunk, template, dtype, outputs=template.share_keys)
    (m, n) = A.shape
    blocks = {  # share axis -> [(offsets, block shape)] of the sums, in the order of graph.sums
        0: [((i0, 0), (h, n)) for i0, h in bounds(A.chunks[0])],  # range: per row block
        1: [((0, j0), (m, w)) for j0, w in bounds(A.chunks[1])],  # co-range: per column block
        None: [((0, 0), (m, n))]}
    axes = [template.share_axis(key) for key in template.share_keys]
    # a row block's shares (axis 0) are summed over its column chunks (over=1), and so on
    (parts,) = graph.compute([[graph.sums(None if axis is None else 1 - axis, key, key)
                               for key, axis in zip(template.share_keys, axes)]], scheduler)
    for key, axis, sums in zip(template.share_keys, axes, parts):
        for (offsets, block_shape), part in zip(blocks[axis], sums):
            template.add_block_sketches({key: part}, offsets, block_shape)
    return template


# -- the fronts of the in-memory plans: their signatures, a dask A per pass -----

_FRONT_DOC = """{summary}

:func:`sketchlab.{name}` of a dask array: its plan (the same operators and
draws for the same ``rng``), a task per chunk, the partial results summed in
fixed trees, the in-memory finish on the client; the in-memory result up to
the rounding of the partial sums, whatever the chunking, the scheduler or a
lost worker.

{passes}

Parameters
----------
A : dask.array.Array of shape (m, n)
    Dense or scipy.sparse chunks with known sizes, along either axis or both;
    anything else runs :func:`sketchlab.{name}`.
{others}
    As :func:`sketchlab.{name}` (the signature is its own).
scheduler : str, Client or executor, optional
    See the module; default the active scheduler.

Returns
-------
{returns}
    As :func:`sketchlab.{name}`.

Examples
--------
>>> import numpy as np, dask.array as da, sketchlab
>>> gen = np.random.default_rng(0)
>>> X = gen.standard_normal((600, 8)) @ gen.standard_normal((8, 300))
>>> A = da.from_array(X, chunks=(200, 150))
>>> got = sketchlab.dask.{name}(A, {args}rng=0, scheduler="sync")
>>> want = sketchlab.{name}(X, {args}rng=0)
>>> bool(np.allclose(got.{compare}, want.{compare}, rtol=1e-10, atol=1e-10 * np.abs(X).max()))
True
"""


_SOLVER_DOC = """{summary}

:func:`sketchlab.{name}` of a dask array A (row-chunked, or chunked along both
axes; dense or scipy.sparse chunks) and an in-memory b: the same checks,
operators and draws for the same ``rng``, each product with A one pass over
the chunks (a task per chunk, the partial results summed in fixed trees, so
the same whatever the scheduler, the order of the tasks or a lost worker),
the small dense steps on the client: the in-memory result to the rounding of
the partial sums.

{passes}

Parameters
----------
A : dask.array.Array of shape (m, n)
    Dense or scipy.sparse chunks with known sizes; anything else runs
    :func:`sketchlab.{name}`.
{others}
    As :func:`sketchlab.{name}` (the signature is its own).
scheduler : str, Client or executor, optional
    See the module; default the active scheduler.

Returns
-------
{returns}
    As :func:`sketchlab.{name}`.

Examples
--------
>>> import numpy as np, dask.array as da, sketchlab
>>> gen = np.random.default_rng(0)
>>> X = gen.standard_normal((3000, 40)) * np.logspace(0, 3, 40)
>>> y = gen.standard_normal(3000)
>>> A = da.from_array(X, chunks=(1000, 20))
>>> got = sketchlab.dask.{name}(A, y, {args}rng=0, scheduler="sync")
>>> want = sketchlab.{name}(X, y, {args}rng=0)
>>> bool(np.allclose(got.x, want.x, rtol=1e-10, atol=1e-12 * np.abs(want.x).max()))
True
"""


def _front(in_memory, run, passes, args, compare, example=None, template=_FRONT_DOC):
    """``in_memory``'s signature plus ``scheduler=``; a dask ``A`` goes to
    ``run(scheduler=..., **arguments)`` (defaults applied), anything else to
    ``in_memory``.  Nothing is re-declared: parameters, defaults and checks are
    ``in_memory``'s, the docstring ``template`` (:data:`_FRONT_DOC`, or
    :data:`_SOLVER_DOC` for the solvers of A x = b) filled from its own (its
    Examples replaced by ``example`` where the template's matrix does not
    fit: a square symmetric one for eigsh)."""
    signature = inspect.signature(in_memory)
    scheduler = inspect.Parameter("scheduler", inspect.Parameter.KEYWORD_ONLY, default=None,
                                  annotation="Any")

    def front(*args, scheduler=None, **kwargs):
        bound = signature.bind(*args, **kwargs)  # a TypeError for what in_memory would refuse
        if not isinstance(next(iter(bound.arguments.values())), da.Array):
            return in_memory(*args, **kwargs)
        bound.apply_defaults()
        return run(scheduler=scheduler, **bound.arguments)

    front.__name__ = front.__qualname__ = in_memory.__name__
    first, *rest = signature.parameters.values()
    first = first.replace(annotation=f"da.Array | {first.annotation}")
    front.__signature__ = signature.replace(parameters=[first, *rest, scheduler])
    if in_memory.__doc__ and __doc__:  # none under python -OO
        lines = inspect.getdoc(in_memory).splitlines()
        front.__doc__ = template.format(
            summary=lines[0], name=in_memory.__name__, passes=passes,
            others=", ".join(parameter.name for parameter in rest),
            returns=lines[lines.index("Returns") + 2].strip(), args=args, compare=compare)
        if example is not None:
            front.__doc__ = front.__doc__[:front.__doc__.index("Examples\n--------")] + example
    return front


def _single_pass(method, *, A, axis, block_size, shape, scheduler, **arguments):
    """The single-pass SVD ``method`` of a dask A (:func:`~sketchlab._svd.single_pass`)."""
    check_axis(axis)
    check_array(A)
    if block_size is not None:
        raise ValueError("block_size applies to an in-memory A; the chunks of a dask array are "
                         f"its blocks (rechunk A instead), got block_size={block_size!r}")
    if shape is not None and tuple(check_shape(shape)) != A.shape:
        raise ValueError(f"shape={tuple(shape)!r} does not match A.shape={A.shape}")
    if min(A.shape) < 1:
        raise ValueError(f"A must have at least one row and one column, got shape {A.shape}")
    return _svd.single_pass(method, A.shape, sketch_pass=functools.partial(
        sketch_state, A, scheduler=scheduler), **arguments)


def _svd_front(in_memory, method, args):
    return _front(in_memory, functools.partial(_single_pass, method),
                  "One pass over the chunks, which are the blocks: ``block_size`` is refused\n"
                  "(rechunk A), ``shape`` must equal ``A.shape``.", args, "s")


fast_sp_svd: Callable[..., SVDResult] = _svd_front(_svd.fast_sp_svd, "fast", "8, ")
practical_sp_svd: Callable[..., SVDResult] = _svd_front(_svd.practical_sp_svd, "practical",
                                                        "8, c=12, r=25, ")
three_sketch_svd: Callable[..., SVDResult] = _svd_front(_svd.three_sketch_svd, "three", "8, ")


def _cur_passes(*, A, scheduler, **arguments):
    """:func:`sketchlab.cur` of a dask A: each pass of its plan over the chunks."""
    check_array(A)
    passes = functools.partial(sketch_state, A, scheduler=scheduler)
    return _cur.cur_plan(A.shape, **arguments).by_passes(passes)


cur: Callable[..., CURDecomposition] = _front(
    _cur.cur, _cur_passes, "Two passes over the chunks (one for \"uniform\"); "
    "``select=\"leverage\"``\n(exact scores) and ``core=\"exact\"`` (a third pass) are refused.",
    "10, ", "toarray()")


# -- block Krylov: one pass over the chunks per product ------------------------


def _product_chunk(raw, where, offsets, shape, payload, dtype):
    """The chunk's share of ``A @ W`` (``X W[j0:j0+w]``) or ``A^T @ Z`` (``X^T
    Z[i0:i0+h]``) by the in-memory linear map of the block, and with
    ``squares`` its ``||X||_F^2`` and its stored entries."""
    side, W, squares = payload
    (_, j0), (h, w) = offsets, shape
    # checked by as_block; its values only in the map's first pass (squares)
    block = as_linear_map(Checked(as_block(raw, where, shape, dtype, finite=squares)))
    with serial_blas():  # the same sums whatever the worker's BLAS threads
        # right: W is all of the small operand; left: the rows of this row block
        part = block.matmat(W[j0:j0 + w]) if side == "right" else block.rmatmat(W)
    stored = block.entries.nnz if issparse(block.entries) else h * w
    return {"prod": np.asarray(part, dtype=dtype),
            "sq": np.array([block.frobenius2(), float(stored)]) if squares else None}


def _transposed_chunk(raw, where, offsets, shape, Y, dtype):
    """The chunk's share of ``A^T Y`` given its row block's rows of Y
    (``X^T Y_i``: the second half of ``A^T A Z``)."""
    # the first stage of this graph read (and, in a first pass, checked) it
    block = as_linear_map(Checked(as_block(raw, where, shape, dtype, finite=False)))
    with serial_blas():
        return np.asarray(block.rmatmat(Y), dtype=dtype)


class ChunkMap(LinearMap):
    """The linear map of a dask A: ``A @ W``, ``A.T @ Z`` and ``A.T @ A @ Z``,
    one pass over the chunks each (the last a graph of two stages: each row
    block's ``A_i Z``, then each chunk's share of ``A_i^T (A_i Z)``; a chunk
    is read once), summed in fixed trees; the first pass also sums
    ``||A||_F^2`` (:meth:`frobenius2` gives a function that returns it after
    that pass)."""

    def __init__(self, A, dtype, scheduler):
        super().__init__(A.shape, dtype)
        self.array, self.scheduler = A, scheduler
        self.norm2, self.count = None, 0
        # what the chunks hold (their meta), and how many entries (after the first pass)
        self.sparse, self.stored = issparse(getattr(A, "_meta", None)), None

    def _run(self, side, W, out):
        W = np.ascontiguousarray(W, dtype=self.dtype)
        squares, self.count = self.norm2 is None, self.count + 1
        name = f"sketchlab-product-{side}-{tokenize(self.array, W, self.count)}"
        if side == "right":
            graph = Pass(self.array, name, _product_chunk, (side, W, squares), self.dtype,
                         outputs=("prod", "sq"))
        else:  # a tall W: each row block's tasks receive its rows only
            graph = Pass(self.array, name, _product_chunk, None, self.dtype,
                         outputs=("prod", "sq"),
                         row_payloads=lambda i0, h: (side, W[i0:i0 + h], squares))
        parts, total = graph.compute([graph.sums(1 if side == "right" else 0, "p", "prod"),
                                      graph.sums(None, "sq", "sq") if squares else []],
                                     self.scheduler)
        if squares:
            self.norm2, self.stored = float(total[0][0]), int(total[0][1])
        return np.concatenate(parts, axis=0)  # a new array: owned and writable

    def _normal(self, Z):
        Z = np.ascontiguousarray(Z, dtype=self.dtype)
        squares, self.count = self.norm2 is None, self.count + 1
        graph = Pass(self.array, f"sketchlab-normal-{tokenize(self.array, Z, self.count)}",
                     _product_chunk, ("right", Z, squares), self.dtype, outputs=("prod", "sq"))
        rows = graph.sums(1, "p", "prod")  # A_i Z, one key per row block
        second = graph.then("t", _transposed_chunk, lambda bi, bj: rows[bi])
        parts, total = graph.compute([graph.sums(0, "q", grid=second),
                                      graph.sums(None, "sq", "sq") if squares else []],
                                     self.scheduler)
        if squares:
            self.norm2, self.stored = float(total[0][0]), int(total[0][1])
        return np.concatenate(parts, axis=0)

    def _matmat(self, X, out):
        return self._run("right", X, out)

    def _rmatmat(self, Y, out):
        return self._run("left", Y, out)

    def frobenius2(self):
        return lambda: self.norm2  # summed in the first pass

    def stored_entries(self):
        """``("sparse" or "dense", entries stored)`` once the first pass has
        counted them (None before): the cost model of ``rank="auto"``."""
        if self.stored is None:
            return None
        return ("sparse" if self.sparse else "dense"), self.stored


def chunk_map(A: da.Array, scheduler: Any = None) -> ChunkMap:
    """The :class:`ChunkMap` of a dask array (its dtype and chunks checked)."""
    return ChunkMap(A, check_array(A), scheduler)


register_dask_map(chunk_map)  # as_linear_map of a dask array


def _krylov_passes(*, A, k, tol, passes, block_size, rng, estimate_error, scheduler):
    """:func:`sketchlab.krylov_svd` of a dask A: the in-memory run over its :class:`ChunkMap`."""
    ops = chunk_map(A, scheduler)
    return _krylov.krylov_run(ops, A.shape, ops.dtype, k=k, tol=tol,
                              passes=passes, block_size=block_size, rng=rng,
                              estimate_error=estimate_error, stacklevel=4)


krylov_svd: Callable[..., SVDResult] = _front(
    _krylov.krylov_svd, _krylov_passes, "Each pass over A (a product with A or A^T) is one "
    "pass over the\nchunks; the first also sums ``||A||_F^2``.", "4, ", "s")


# -- least squares and ridge regression: one pass over the chunks per product ---


# sketchlab.dask.lstsq's default sketch: 50 n rows (at most m), where the
# in-memory default is 12 n (FOSSILS on a dense 200,000 x 100 A: 22 iterations
# at 12 n, 13 at 50 n; the sketch pass costs the same, its QR ~4x more but
# small beside a pass)
_DASK_SKETCH_FACTOR = 50


def _lstsq_passes(*, A, b, damp, method, sketch, sketch_size, tol, maxiter, rng, scheduler):
    """:func:`sketchlab.lstsq` of a dask A: ``S A`` in one pass (``S b`` in
    memory), the iterations' products over its :class:`ChunkMap`."""
    ops = chunk_map(A, scheduler)
    if sketch_size is None and not isinstance(sketch, SketchOperator):
        # passes over the chunks, not rows of the sketch, are what costs here:
        # the heavy ball's rate sqrt(n / d) takes fewer of them for a larger d
        m, n = A.shape
        sketch_size = max(n, min(m, _DASK_SKETCH_FACTOR * n))

    def sketch_pass(S, B):
        with serial_blas():
            SB = S.apply(B, axis=0)
        return np.hstack([globals()["sketch"](S, A, scheduler=scheduler), SB])

    return _lstsq.lstsq_by_passes(ops, b, sketch_pass, damp=damp, method=method, sketch=sketch,
                                  sketch_size=sketch_size, tol=tol, maxiter=maxiter, rng=rng)


lstsq: Callable[..., Any] = _front(
    _lstsq.lstsq, _lstsq_passes, "The sketch ``S A`` is one pass over the chunks (``S b`` is "
    "taken in memory), and\neach product of the iterations another (``A^T A z`` one pass of "
    "two stages).\nThe default ``sketch_size`` is ``min(m, 50 n)``, not the in-memory "
    "``12 n``: a\npass over the chunks costs more than rows of the sketch, and a larger "
    "sketch\ntakes fewer (22 iterations against 13 on a dense 200,000 x 100 A); it counts "
    "A\nas dense (its stored entries are not known before a pass): pass ``sketch_size``\n"
    "for the in-memory operator and answer.", "", "x", template=_SOLVER_DOC)


def _ridge_passes(*, A, b, alpha, method, rank, tol, maxiter, rng, scheduler):
    """:func:`sketchlab.ridge` of a dask A: the in-memory solve on its
    :class:`ChunkMap` (the sketch ``A^T A Omega`` one pass over the chunks,
    each step another)."""
    return _ridge.ridge_on_map(chunk_map(A, scheduler), b, alpha, method=method, rank=rank,
                               tol=tol, maxiter=maxiter, rng=rng)


ridge: Callable[..., Any] = _front(
    _ridge.ridge, _ridge_passes, "The sketch ``A^T A Omega`` is one pass over the chunks, and "
    "so is each step\nof conjugate gradients (``A^T A z``: a graph of two stages, each chunk "
    "read\nonce).", "1e-3, tol=1e-12, ", "x", template=_SOLVER_DOC)


# -- eigsh: one pass over the chunks per product ---------------------------------


def _sparse_chunks(A):
    """Whether the chunks of A are scipy.sparse matrices (its meta says so)."""
    import scipy.sparse as sp

    return sp.issparse(getattr(A, "_meta", None))


def _eigsh_passes(*, A, k, which, tol, passes, block_size, psd, rng, scheduler):
    """:func:`sketchlab.eigsh` of a dask A: the in-memory run over its
    :class:`ChunkMap` (sparse chunks: the defaults of a sparse A in memory)."""
    ops = chunk_map(A, scheduler)
    ops.sparse_entries = _sparse_chunks(A)
    return _eigsh.eigsh_run(ops, k, which=which, tol=tol, passes=passes,
                            block_size=block_size, psd=psd, rng=rng)


_EIGSH_EXAMPLE = """Examples
--------
>>> import numpy as np, dask.array as da, sketchlab
>>> B = np.random.default_rng(0).standard_normal((300, 300))
>>> X = B + B.T
>>> A = da.from_array(X, chunks=(100, 300))
>>> got = sketchlab.dask.eigsh(A, 3, rng=0, scheduler="sync")
>>> want = sketchlab.eigsh(X, 3, rng=0)
>>> bool(np.allclose(got.w, want.w, rtol=1e-10)), got.passes == want.passes
(True, True)
"""

eigsh: Callable[..., _eigsh.EigshResult] = _front(
    _eigsh.eigsh, _eigsh_passes, "Each pass over A (a product with a block) is one pass over the\n"
    "chunks.  A must be square and symmetric: its first block of products is\nchecked.",
    "3, ", "w", example=_EIGSH_EXAMPLE)
