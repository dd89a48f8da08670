"""Large work arrays that a repeated call reuses instead of faulting them in again.

The first write to fresh memory faults its pages in, one by one: on the
virtual machines measured, 1-2 ms per MB when memory is fragmented, as much
as the products that fill it.  numpy's large arrays come from ``mmap`` and go
back to the system when freed, so a solver called again and again (a
benchmark's turns, a parameter sweep, an estimator fitted per fold) would
fault its work arrays in on every call.  The workspace keeps the buffers a
call gives back (the growing Krylov bases) and hands them to the next call
that asks for as much or less, already faulted in.

Bounded: it holds at most :data:`LIMIT` bytes (the largest buffers are kept
first); :func:`release` empties it (``sketchlab.release_workspace()``), and
an allocation that fails for lack of memory empties it and tries again.
A buffer is owned by one caller at a time: taken out, then given back.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

__all__ = ["take", "give", "release", "held_bytes", "LIMIT"]

LIMIT = 1 << 30
"""Bytes the workspace holds at most between calls (1 GiB)."""

_LOCK = threading.Lock()
_FREE: list[np.ndarray] = []  # flat uint8 buffers, faulted in, owned by nobody


def held_bytes() -> int:
    """Bytes the workspace holds now (between calls)."""
    with _LOCK:
        return sum(b.nbytes for b in _FREE)


def release() -> int:
    """Give the work arrays sketchlab keeps between calls back to the system.

    The solvers keep their large work arrays (the bases of ``krylov_svd``,
    at most 1 GiB in all) for the next call, which then does not fault
    fresh memory in again; this frees them now.

    Returns
    -------
    int
        The bytes released.

    Examples
    --------
    >>> import numpy as np, sketchlab
    >>> _ = sketchlab.krylov_svd(np.random.default_rng(0).standard_normal((300, 200)), 5, rng=0)
    >>> sketchlab.release_workspace() > 0
    True
    >>> sketchlab.release_workspace()
    0
    """
    with _LOCK:
        freed = sum(b.nbytes for b in _FREE)
        _FREE.clear()
    return freed


def take(shape: tuple[int, int], dtype: Any) -> tuple[np.ndarray, bool]:
    """A Fortran-ordered array of ``shape`` and ``dtype`` (contents
    undefined), and whether it is recycled (its pages faulted in already)."""
    dtype = np.dtype(dtype)
    need = int(shape[0]) * int(shape[1]) * dtype.itemsize
    with _LOCK:
        fits = [i for i, b in enumerate(_FREE) if b.nbytes >= need]
        # the smallest that fits: the large ones stay for the large requests
        best = min(fits, key=lambda i: _FREE[i].nbytes) if fits else None
        raw = _FREE.pop(best) if best is not None else None
    if raw is not None:
        return _view(raw, shape, dtype), True
    try:
        raw = np.empty(max(need, 1), dtype=np.uint8)
    except MemoryError:
        release()
        raw = np.empty(max(need, 1), dtype=np.uint8)
    return _view(raw, shape, dtype), False


def _view(raw, shape, dtype):
    need = int(shape[0]) * int(shape[1]) * dtype.itemsize
    flat = raw[:need].view(dtype)
    return flat.reshape(shape, order="F")


def give(array: np.ndarray) -> None:
    """Hand back an array :func:`take` gave (the caller keeps no view of
    it); kept while the workspace stays within :data:`LIMIT`, the largest
    first."""
    raw = array
    while raw.base is not None and isinstance(raw.base, np.ndarray):
        raw = raw.base
    if raw.dtype != np.uint8 or raw.ndim != 1:
        return  # not one of ours
    with _LOCK:
        if any(b is raw for b in _FREE):
            return
        _FREE.append(raw)
        _FREE.sort(key=lambda b: b.nbytes, reverse=True)
        total = 0
        keep = []
        for b in _FREE:
            if total + b.nbytes <= LIMIT:
                keep.append(b)
                total += b.nbytes
        _FREE[:] = keep
