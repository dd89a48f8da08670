"""Numba JIT options, in one place.

Every kernel is compiled lazily (on first call) and cached on disk, so that
``import sketchlab`` stays cheap and a second process pays no recompilation.
"""

from __future__ import annotations

from typing import Any

JIT = dict(cache=True, nogil=True, fastmath=False, error_model="numpy")
"""Options of serial kernels."""

PJIT = dict(JIT, parallel=True)
"""Options of parallel kernels (``prange`` over outputs that no other
iteration writes, so results do not depend on the thread count)."""

# Largest input dimension for which an operator keeps its hash-derived
# bucket/sign tables after the first application (8 bytes + 4 bytes per
# nonzero of S); larger operators recompute them for every call.
TABLE_CACHE_MAX_DIM = 1 << 23

# Kernels whose work (stored entries read plus output entries written) is
# below this run on one thread: waking the thread pool costs tens of
# microseconds, and far more on a machine with more runnable threads than
# cores.
PARALLEL_MIN_WORK = 1 << 15

_BLAS_CONTROLLER = None


def serial_blas() -> Any:  # a threadpoolctl context manager
    """Context limiting BLAS/LAPACK to one thread.

    For the small dense calls (thin QRs, SVDs of sketched factors, Gram
    products) that sit between Numba kernels: idle OpenBLAS threads keep
    spinning after a call and fight Numba's threads, which can make such a
    call many times slower on a machine with few cores (measured by the
    fast_gmr and fast_sp_svd rows of asv_benchmarks/compare.py).
    """
    global _BLAS_CONTROLLER
    if _BLAS_CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _BLAS_CONTROLLER = ThreadpoolController()
    return _BLAS_CONTROLLER.limit(limits=1, user_api="blas")
