"""Private Numba code: raw arrays and scalars in, a preallocated ``out`` written.

No validation and no allocation of results happen here; the layers above
(``sketchlab._operators``, ``sketchlab._kernel_matrices``, ``sketchlab._validation``)
check inputs and allocate.  Every call of a parallel loop from those layers goes
through :func:`threads_for`, the one door to Numba's thread pool.
"""

import threading
from contextlib import contextmanager, nullcontext

import numba

from ..._config import PARALLEL_MIN_WORK

# Numba's "workqueue" threading layer (used when neither OpenMP nor TBB is
# available) aborts the whole process when two Python threads launch parallel
# loops at once.  Under that layer, and before the first launch has chosen a
# layer, launches are serialized by this lock; the omp and tbb layers are
# thread-safe and take no lock.
_LAUNCH_LOCK = threading.RLock()
_SAFE_LAYERS = ("omp", "tbb")
_layer_is_safe = False


def _launch_guard():
    global _layer_is_safe
    if _layer_is_safe:
        return nullcontext()
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel loop launched yet in this process
        layer = None
    if layer in _SAFE_LAYERS:
        _layer_is_safe = True
        return nullcontext()
    return _LAUNCH_LOCK


@contextmanager
def threads_for(work):
    """Context for launching parallel loops.

    Runs the enclosed loops on one thread when ``work`` (about one unit per
    stored entry read or output entry written) is too small to repay waking
    the other threads, and serializes launches from several Python threads
    under Numba's workqueue layer, which is not thread-safe.  Results never
    depend on the thread count, only the time does.
    """
    with _launch_guard():
        previous = numba.get_num_threads()
        if work >= PARALLEL_MIN_WORK or previous == 1:
            yield
            return
        numba.set_num_threads(1)
        try:
            yield
        finally:
            numba.set_num_threads(previous)
