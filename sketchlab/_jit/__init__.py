"""Private Numba kernels: raw arrays and scalars in, a preallocated ``out`` written.

No validation and no allocation of results happen here; the public layer
(``sketchlab._operators`` and the algorithms) checks inputs and allocates.
"""

from contextlib import contextmanager

import numba

from .._config import PARALLEL_MIN_WORK


@contextmanager
def threads_for(work):
    """Run the enclosed kernels on one thread when ``work`` (about one unit
    per stored entry read or output entry written) is too small to repay
    waking the other threads.  Results never depend on the thread count, only
    the time does."""
    previous = numba.get_num_threads()
    if work >= PARALLEL_MIN_WORK or previous == 1:
        yield
        return
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(previous)
