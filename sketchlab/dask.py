"""The dask front: sketches, single-pass SVDs and CUR of ``dask.array`` inputs.

Plumbing over the in-memory plans.  The operators are defined by their seeds,
so each chunk ``A[i0:i0+h, j0:j0+w]`` applies on a worker the columns of S that
match its offsets and yields partial sketches, summed in fixed trees (fan-in
8): the rounding does not depend on the scheduler, the number of workers, the
order in which tasks finish or the loss of a worker, and only the sketches
reach the client.  :func:`sketch`, :func:`sketch_both` and :func:`sketch_state`
are the passes; :func:`fast_sp_svd`, :func:`practical_sp_svd`,
:func:`three_sketch_svd` and :func:`cur` run the plans of the in-memory
functions (their signatures, plus ``scheduler=``), each chunk read once per
pass.  Results equal the in-memory ones for the same ``rng`` up to the rounding
of the partial sums; input that is not a dask array runs in memory.

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

The same on a two-process cluster on this machine (skipped by the default
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

try:
    import dask.array as da
    from dask.base import tokenize
except ImportError as exc:  # pragma: no cover - dask is an optional extra
    raise ImportError(
        "sketchlab.dask needs dask: pip install 'sketchlab[dask]' (dask[array], distributed)"
    ) from exc

from . import _cur, _krylov, _svd
from ._dask_pass import Pass, as_block, bounds, check_array, check_operator, ops_chunk, state_chunk
from ._operators import SketchOperator
from ._operators import sketch_both as _sketch_both
from ._sketch_state import SketchState
from ._validation import check_axis, check_shape

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ._cur import CURDecomposition
    from ._results import SVDResult
    from ._validation import MatrixLike

__all__ = ["sketch", "sketch_both", "sketch_state", "cur", "fast_sp_svd", "practical_sp_svd",
           "three_sketch_svd", "krylov_svd"]

# -- the passes ----------------------------------------------------------------

_SCHEDULER_DOC = """scheduler : str, Client or executor, optional
        Passed to ``dask.compute``, or the address of a distributed scheduler
        (see the module); default the active scheduler."""


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
    axis : {{0, 1}}, default 0
        The dimension of A that S compresses.
    {scheduler}

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
        raise ValueError(
            f"A.shape[{axis}] must equal S.input_dim = {S.input_dim}, got A of shape "
            f"{A.shape if not vector else (A.shape[axis],)}"
        )
    name = "sketchlab-sketch-" + tokenize(A, axis, S)
    graph = Pass(A, name, ops_chunk, (S, None) if axis == 0 else (None, S), dtype)
    # the output block of chunk (bi, bj) is column block bj (axis 0) or row block bi (axis 1)
    lines = list(zip(*graph.grid)) if axis == 0 else graph.grid
    outs = [graph.tree_sum(list(line), f"out{t}") for t, line in enumerate(lines)]
    (blocks,) = graph.compute([outs], scheduler)
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
    {scheduler}

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
        raise ValueError(
            f"A.shape must be (S1.input_dim, S2.input_dim) = {(S1.input_dim, S2.input_dim)}, "
            f"got {A.shape}"
        )
    graph = Pass(A, "sketchlab-sketch-both-" + tokenize(A, S1, S2), ops_chunk, (S1, S2), dtype)
    (M,) = graph.compute([graph.tree_sum([key for line in graph.grid for key in line], "M")],
                         scheduler)
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
    {scheduler}

    Returns
    -------
    SketchState
        ``SketchState(A.shape, sketches).update(A)`` up to the rounding of the
        partial sums.

    Examples
    --------
    >>> import numpy as np, dask.array as da, sketchlab
    >>> X = np.random.default_rng(0).standard_normal((600, 40))
    >>> sketches = {{"range": (None, sketchlab.CountSketch(5, 40, rng=1)),
    ...             "co-range": (sketchlab.GaussianSketch(6, 600, rng=2), None)}}
    >>> A = da.from_array(X, chunks=(150, 20))
    >>> state = sketchlab.dask.sketch_state(A, sketches, scheduler="sync")
    >>> bool(np.allclose(state["co-range"], sketches["co-range"][0] @ X))
    True
    """
    if not isinstance(A, da.Array):
        raise TypeError(f"A must be a dask array, got {type(A).__name__}")
    dtype = check_array(A)
    template = SketchState(A.shape, sketches, dtype=dtype)  # checks the operators
    name = "sketchlab-sketch-state-" + tokenize(
        A, sorted((key, left, right) for key, (left, right) in sketches.items())
    )
    graph = Pass(A, name, state_chunk, template, dtype, outputs=template.share_keys)
    (m, n), grid = A.shape, graph.grid
    groups = {  # share axis -> [(offsets, block shape, the chunks whose shares add up)]
        0: [((i0, 0), (h, n), line) for (i0, h), line in zip(bounds(A.chunks[0]), grid)],
        1: [((0, j0), (m, w), line) for (j0, w), line in zip(bounds(A.chunks[1]), zip(*grid))],
        None: [((0, 0), (m, n), [parts for line in grid for parts in line])]}
    plan = [(key, offsets, block_shape, graph.tree_sum([parts[key] for parts in group],
                                                       f"{key}-{t}"))
            for key in template.share_keys
            for t, (offsets, block_shape, group) in enumerate(groups[template.share_axis(key)])]
    (parts,) = graph.compute([[entry[3] for entry in plan]], scheduler)
    state = template
    for (key, offsets, block_shape, _), part in zip(plan, parts):
        state.add_block_sketches({key: part}, offsets, block_shape)
    return state


for _f in (sketch, sketch_both, sketch_state):
    if _f.__doc__:  # None under python -OO
        _f.__doc__ = _f.__doc__.format(scheduler=_SCHEDULER_DOC)
del _f


# -- the fronts of the in-memory plans: their signatures, a dask A per pass -----


def _front(in_memory, run, doc):
    """``sketchlab.dask.<name>``: the signature of ``in_memory`` plus
    ``scheduler=``; a dask ``A`` goes to ``run(scheduler=..., **arguments)``
    (every argument bound, defaults applied), anything else to ``in_memory``
    with the arguments as given.  Nothing is re-declared: the parameters, their
    defaults and their checks are the in-memory function's."""
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
    front.__doc__ = doc
    return front


def _single_pass(method, *, A, k, axis, block_size, shape, scheduler, estimate_error, tol,
                 **params):
    """The single-pass SVD ``method`` of a dask A: the in-memory plan
    (:func:`~sketchlab._svd.svd_sketches`: same sizes, same ``rng``, same
    draws), one pass over the chunks, the in-memory recovery.  ``axis`` is
    checked, but the chunks are the blocks."""
    check_axis(axis)
    check_array(A)
    if block_size is not None:
        raise ValueError(
            "block_size applies to an in-memory A; the chunks of a dask array are its blocks "
            f"(rechunk A instead), got block_size={block_size!r}"
        )
    if shape is not None and tuple(check_shape(shape)) != A.shape:
        raise ValueError(f"shape={tuple(shape)!r} does not match A.shape={A.shape}")
    if min(A.shape) < 1:
        raise ValueError(f"A must have at least one row and one column, got shape {A.shape}")
    shape = A.shape
    tol = _svd.check_tol_or_rank(tol, params.get("rank"))
    _, rank, sketches = _svd.svd_sketches(method, shape, k, **params,
                                          estimate_error=bool(estimate_error) or tol is not None)
    state = sketch_state(A, sketches, scheduler=scheduler)
    return _svd.svd_recover(method, state, rank, overwrite=True, tol=tol)


def _cur_passes(*, A, c, r, k, select, core, sketch_size, rng, estimate_error, n_probes,
                scheduler):
    """:func:`sketchlab.cur` of a dask A: the in-memory plan
    (:func:`~sketchlab._cur.cur_plan`), each of its passes over the chunks."""
    check_array(A)
    plan = _cur.cur_plan(A.shape, c, r, k=k, select=select, core=core, sketch_size=sketch_size,
                         rng=rng, estimate_error=estimate_error, n_probes=n_probes)
    if plan.select == "leverage":
        raise ValueError("select='leverage' (exact scores) is not available for a dask array; "
                         "use 'approx-leverage', 'deim', 'pivoted-qr' or 'uniform'")
    if plan.core == "exact":
        raise ValueError("core='exact' would need a third pass over a dask array; use 'fast' "
                         "or 'cross'")
    first = plan.selection_sketches()
    arrays = None if first is None else sketch_state(A, first, scheduler=scheduler).finalize()
    columns, rows = plan.choose(arrays)
    state = sketch_state(A, plan.gather_sketches(columns, rows), scheduler=scheduler)
    parts = {name: np.asarray(part) for name, part in state.finalize().items()}
    return plan.recover(parts, columns, rows, norm=state.norm)


_SVD_DOC = """{summary} of a dask array, in one pass over its chunks.

The plan of :func:`sketchlab.{name}` (:func:`sketchlab._svd.svd_sketches`:
the same sizes and operators for the same ``rng``), one task per chunk adding
its shares of every sketch, the shares summed in fixed trees, the in-memory
recovery on the client: the in-memory result up to the rounding of the sums,
whatever the chunking, the scheduler or a lost worker.  Each task holds one
chunk and its shares (``h c`` of the range sketch, ``r w`` of the co-range
sketch, the core); the client the sketches.

Parameters
----------
A : dask.array.Array of shape (m, n)
    Dense or scipy.sparse chunks with known sizes, along either axis or both;
    anything else runs :func:`sketchlab.{name}`.
k, c, r, ..., n_probes
    As :func:`sketchlab.{name}` (the signature is its own).  With a dask A the
    chunks are the blocks: ``block_size`` is refused (rechunk A), ``shape``
    must equal ``A.shape``.
scheduler : str, Client or executor, optional
    As :func:`sketch`.

Returns
-------
SVDResult
    Unpacks as ``U, s, Vt``; ``error_estimate``, ``passes`` (1).

Examples
--------
>>> import numpy as np, dask.array as da, sketchlab
>>> gen = np.random.default_rng(0)
>>> X = gen.standard_normal((600, 8)) @ gen.standard_normal((8, 300))
>>> A = da.from_array(X, chunks=(200, 150))
>>> U, s, Vt = sketchlab.dask.{name}(A, 8, {example}rng=0, scheduler="sync")
>>> s0 = sketchlab.{name}(X, 8, {example}rng=0).s
>>> bool(np.allclose(s, s0, rtol=1e-10, atol=1e-10 * s0[0]))
True
"""

_SUMMARIES = {
    "fast": ("fast_sp_svd", "Fast single-pass SVD (Algorithm 3)", ""),
    "practical": ("practical_sp_svd", "Practical single-pass SVD (Tropp et al. 2017)",
                  "c=12, r=25, "),
    "three": ("three_sketch_svd", "Three-sketch single-pass SVD (Tropp et al. 2019)", ""),
}


def _svd_front(method):
    name, summary, example = _SUMMARIES[method]
    doc = _SVD_DOC.format(name=name, summary=summary, example=example)
    return _front(getattr(_svd, name), functools.partial(_single_pass, method),
                  doc if __doc__ else None)  # no docstrings under python -OO


fast_sp_svd: Callable[..., SVDResult] = _svd_front("fast")
practical_sp_svd: Callable[..., SVDResult] = _svd_front("practical")
three_sketch_svd: Callable[..., SVDResult] = _svd_front("three")

_CUR_DOC = """CUR decomposition of a dask array, in two passes over its chunks.

The plan of :func:`sketchlab.cur` (:func:`sketchlab._cur.cur_plan`), pass by
pass: the selection sketches (none for "uniform"), then the chosen columns
and rows, the core sketch of Fast GMR and the probe sketch of the estimate in
one task per chunk; the in-memory recovery.  The in-memory result for the same
``rng`` up to rounding.

Parameters
----------
A : dask.array.Array of shape (m, n)
    Dense or sparse chunks with known sizes; anything else runs
    :func:`sketchlab.cur`.
c, r, k, select, core, sketch_size, rng, estimate_error, n_probes
    As :func:`sketchlab.cur`; ``select="leverage"`` (exact scores) and
    ``core="exact"`` (a third pass) are refused.
scheduler : str, Client or executor, optional
    As :func:`sketch`.

Returns
-------
CURDecomposition
    C and R dense (gathered from the chunks).

Examples
--------
>>> import numpy as np, dask.array as da, sketchlab
>>> gen = np.random.default_rng(0)
>>> X = gen.standard_normal((400, 5)) @ gen.standard_normal((5, 300))
>>> d = sketchlab.dask.cur(da.from_array(X, chunks=(100, 150)), 10, rng=0, scheduler="sync")
>>> bool(np.allclose(d.toarray(), X))
True
"""

cur: Callable[..., CURDecomposition] = _front(_cur.cur, _cur_passes,
                                              _CUR_DOC if __doc__ else None)


# -- block Krylov: one pass over the chunks per product ------------------------


def _krylov_chunk(raw, where, offsets, shape, payload, dtype):
    """The chunk's share of ``A @ W`` (rows i0:i0+h, from ``X W[j0:j0+w]``)
    or of ``A^T @ Z`` (rows j0:j0+w, from ``X^T Z[i0:i0+h]``), and with
    ``squares`` its sum of squares (the first pass also gives ||A||_F^2)."""
    from ._config import serial_blas
    from ._linalg import squared_frobenius

    side, W, squares = payload
    block = as_block(raw, where, shape, dtype)
    (i0, j0), (h, w) = offsets, shape
    with serial_blas():  # the same sums whatever the worker's BLAS threads
        if side == "right":
            part = np.asarray(block @ W[j0:j0 + w], dtype=dtype)
        else:
            part = np.asarray(block.T @ W[i0:i0 + h], dtype=dtype)
    out = {"prod": part}
    if squares:
        out["sq"] = np.array(squared_frobenius(block))
    return out


class _KrylovChunks:
    """``A @ W`` and ``A.T @ Z`` of a dask A, each one pass over its chunks
    (partial products summed in fixed trees); the first pass also sums the
    squares of the entries, for ``||A||_F^2``."""

    def __init__(self, A, dtype, scheduler):
        self.A, self.dtype, self.scheduler = A, dtype, scheduler
        self.shape = A.shape
        self.norm2 = None
        self.count = 0

    def _run(self, side, W):
        squares = self.norm2 is None
        self.count += 1
        name = f"sketchlab-krylov-{side}-{tokenize(self.A, W, self.count)}"
        graph = Pass(self.A, name, _krylov_chunk, (side, W, squares), self.dtype,
                     outputs=("prod", "sq") if squares else ("prod",))
        lines = graph.grid if side == "right" else list(zip(*graph.grid))
        keys = [graph.tree_sum([part["prod"] for part in line], f"p{t}")
                for t, line in enumerate(lines)]
        outputs = [keys]
        if squares:
            outputs.append(graph.tree_sum([part["sq"] for line in graph.grid for part in line],
                                          "sq"))
        parts, *total = graph.compute(outputs, self.scheduler)
        if squares:
            self.norm2 = float(total[0])
        # owned and writable (results deserialized from a network buffer may be read-only)
        return np.concatenate([np.array(x) for x in parts], axis=0)

    def right(self, W):
        return self._run("right", np.ascontiguousarray(W, dtype=self.dtype))

    def left(self, Z):
        return self._run("left", np.ascontiguousarray(Z, dtype=self.dtype))


def _krylov_passes(*, A, k, tol, passes, block_size, rng, estimate_error, scheduler):
    """:func:`sketchlab.krylov_svd` of a dask A: each product one pass over the chunks."""
    from ._config import serial_blas
    from ._validation import as_generator

    dtype = check_array(A)
    k, tol, passes, block_size = _krylov.check_parameters(A.shape, k, tol, passes, block_size,
                                                          estimate_error)
    gen = as_generator(rng)
    ops = _KrylovChunks(A, dtype, scheduler)
    with serial_blas():
        out = _krylov.krylov_core(ops, A.shape, dtype, k=k, tol=tol, passes=passes,
                                  block_size=block_size, gen=gen, norm2=lambda: ops.norm2)
        return _krylov.finish(out, ops, tol, estimate_error, gen, dtype, stacklevel=4)


_KRYLOV_DOC = """Randomized block Krylov SVD of a dask array: each pass over A (one
product with A or A^T) is one pass over its chunks.

The parameters and the result of :func:`sketchlab.krylov_svd` (the same
answer for the same ``rng``, up to the rounding of the partial sums: 1e-10
and better), plus ``scheduler=`` as :func:`sketch`.  ``||A||_F^2`` is summed
in the first pass.  Input that is not a dask array runs in memory.

Examples
--------
>>> import numpy as np, dask.array as da, sketchlab
>>> X = np.random.default_rng(0).standard_normal((400, 60)) * 0.8 ** np.arange(60)
>>> res = sketchlab.dask.krylov_svd(da.from_array(X, chunks=(100, 30)), 4, rng=0,
...                                 scheduler="sync")
>>> bool(np.allclose(res.s, sketchlab.krylov_svd(X, 4, rng=0).s, rtol=1e-10))
True
"""

krylov_svd: Callable[..., SVDResult] = _front(_krylov.krylov_svd, _krylov_passes,
                                              _KRYLOV_DOC if __doc__ else None)
