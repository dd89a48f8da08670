"""The thread pool of the engine, for compiled loops and BLAS calls alike.

- :func:`threads_for`: the one door of the compiled loops to Numba's thread
  pool (one thread for small work; launches serialized under the workqueue
  layer, which is not thread-safe);
- :func:`map_on_threads` / :func:`map_chunks`: BLAS calls on fixed chunks
  of rows run on Numba's thread count by one pool of Python threads, each
  on one BLAS thread (the caller holds ``serial_blas``), summed in chunk
  order where they are sums: :func:`tall_mul` (``Q M``), :func:`tall_tmul`
  (``B^T Y``), :func:`sub_mul` (``Y -= B D``).  Results depend on the chunks,
  which depend on the shapes alone, never on the number of threads;
- :func:`fault_in`: the first write to fresh pages, on all threads for
  large arrays, before a threaded product fills them.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import TypeAlias

    from numpy.typing import NDArray

    Array: TypeAlias = NDArray[np.floating]

__all__ = ["threads_for", "map_on_threads", "map_chunks", "tall_mul", "tall_tmul", "sub_mul",
           "fault_in", "ROW_CHUNK"]


@contextmanager
def threads_for(work: float) -> Iterator[None]:
    """:func:`sketchlab._engine._jit.threads_for` (imported on first use, so
    that importing the engine does not import Numba)."""
    from ._jit import threads_for as door

    with door(work):
        yield


# Rows per task of the large products with a tall matrix: sums over rows are
# taken chunk by chunk and added in chunk order, so a result depends on this
# constant and on the problem's size, never on the number of threads.
ROW_CHUNK = 8192
_pool_state: dict[str, Any] = {}


def map_chunks(fn: Any, dim: int, step: int = ROW_CHUNK) -> list[Any]:
    """``[fn(rows) for rows in the fixed row chunks of range(dim)]`` (``step``
    rows each), run on Numba's thread count (the BLAS call in each on one
    thread)."""
    return map_on_threads(fn, [slice(i, min(i + step, dim)) for i in range(0, dim, step)])


def map_on_threads(fn: Any, items: list[Any]) -> list[Any]:
    """``[fn(item) for item in items]``, run on Numba's thread count by one
    pool of Python threads (BLAS calls inside release the GIL; the caller
    holds ``serial_blas`` so that each runs on one BLAS thread)."""
    import numba

    threads = min(numba.get_num_threads(), len(items))
    if threads <= 1:
        return [fn(item) for item in items]
    if _pool_state.get("threads") != threads:
        from concurrent.futures import ThreadPoolExecutor

        if "pool" in _pool_state:
            _pool_state["pool"].shutdown()
        _pool_state["pool"] = ThreadPoolExecutor(threads, "sketchlab-basis")
        _pool_state["threads"] = threads
    return list(_pool_state["pool"].map(fn, items))


def tall_tmul(B: Array, Y: Array, rows_per_chunk: int = ROW_CHUNK) -> Array:
    """``B.T @ Y`` for tall B and Y: the products of the fixed row chunks on
    Numba's threads (under ``serial_blas``: one BLAS thread each), summed in
    chunk order, so the same for any thread count."""
    parts = map_chunks(lambda rows: B[rows].T @ Y[rows], B.shape[0], rows_per_chunk)
    out = parts[0]
    for part in parts[1:]:
        out += part
    return out


def sub_mul(Y: Array, B: Array, D: Array) -> None:
    """``Y -= B @ D`` in place, row chunk by row chunk."""
    D = np.ascontiguousarray(D, dtype=Y.dtype)

    def run(rows):
        Y[rows] -= B[rows] @ D

    map_chunks(run, Y.shape[0])


def tall_mul(Q: Array, M: Array, rows_per_chunk: int = ROW_CHUNK) -> Array:
    """``Q @ M`` for a tall Q, row chunk by row chunk on Numba's threads
    (under ``serial_blas``: one BLAS thread each).  Each entry comes from
    one chunk's product, so the result depends on the chunks, never on the
    threads; for a thin M this is also about twice as fast as one threaded
    BLAS call, which streams Q at a fraction of the memory bandwidth
    (20,000 x 20,000 times 10 columns: 0.37 s in chunks of 2,048 rows, 0.53
    s on two BLAS threads, 0.77 s on one)."""
    M = np.ascontiguousarray(M, dtype=Q.dtype)
    out = np.empty((Q.shape[0], M.shape[1]), dtype=Q.dtype)

    def run(rows):
        np.matmul(Q[rows], M, out=out[rows])

    map_chunks(run, Q.shape[0], rows_per_chunk)
    return out


# entries per (4 KiB) memory page, of any dtype at most 8 bytes
_PAGE_ENTRIES = 512
# fault_in: from this many entries (32 MiB of float64) on all threads
_PARALLEL_FAULT_ENTRIES = 1 << 22


def fault_in(a: Array) -> None:
    """Write 0 to one entry per memory page of the contiguous array ``a``
    (whose values are about to be overwritten).  The first write to the
    fresh memory of np.empty / np.zeros faults its pages in; inside a
    threaded BLAS call or compiled loop, whose threads write all over the
    same pages, those faults cost several times more than here, on the VMs
    measured (6 blocks of 52,396 x 14 filled by the sparse product: 72 ms
    with the faults inside, 6 + 39 ms faulted first).  From 32 MiB on the
    pages are split into one contiguous range per Numba thread (960 MB on
    a fragmented machine: 1.2 s on two threads, 2.2 s on one)."""
    from ._jit.reductions import touch_pages

    if not (a.flags.c_contiguous or a.flags.f_contiguous):
        return  # a reshape would copy: nothing of a would be touched
    flat = a.reshape(-1, order="F" if a.flags.f_contiguous else "C")
    if flat.size < _PARALLEL_FAULT_ENTRIES:
        flat[::_PAGE_ENTRIES] = 0
        return
    with threads_for(flat.size):
        touch_pages(flat, _PAGE_ENTRIES)
