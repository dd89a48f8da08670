"""Numba JIT options, in one place.

Every kernel is compiled lazily (on first call) and cached on disk, so that
``import sketchlab`` stays cheap and a second process pays no recompilation.
"""

from __future__ import annotations

import contextlib
import functools
import math
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

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
_BLAS_LOCAL = threading.local()  # per thread: open serial_blas contexts, the outermost's limit


@contextlib.contextmanager
def serial_blas() -> Iterator[None]:
    """Context limiting BLAS/LAPACK to one thread.

    For the small dense calls (thin QRs, SVDs of sketched factors, Gram
    products) that sit between Numba kernels: idle OpenBLAS threads keep
    spinning after a call and fight Numba's threads, which can make such a
    call many times slower on a machine with few cores (measured by the
    fast_gmr and fast_sp_svd rows of asv_benchmarks/compare.py).

    Re-entrant: the outermost context of a thread sets the limit and
    restores it (about 10 microseconds), nested ones cost a counter, so that
    every entry point of ``_linalg`` can apply the policy itself.  (Setting
    and restoring stay in the same thread: OpenBLAS ignores a thread that
    raises the count another thread lowered.)
    """
    global _BLAS_CONTROLLER
    local = _BLAS_LOCAL
    depth = getattr(local, "depth", 0)
    if depth == 0:
        if _BLAS_CONTROLLER is None:
            from threadpoolctl import ThreadpoolController

            _BLAS_CONTROLLER = ThreadpoolController()
        local.limiter = _BLAS_CONTROLLER.limit(limits=1, user_api="blas")
    local.depth = depth + 1
    try:
        yield
    finally:
        local.depth = depth
        if depth == 0:
            local.limiter.restore_original_limits()
            local.limiter = None


def one_blas_thread(func: F) -> F:
    """Decorator: ``func`` runs under :func:`serial_blas` (the BLAS-thread
    policy of ``_linalg``'s entry points)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with serial_blas():
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


class _LazySparse:
    """``scipy.sparse``, imported on first use (it is most of what ``import
    scipy.sparse`` costs ``import sketchlab``): the modules that import
    sketchlab's operators write ``from ._config import sparse as sp`` and
    use ``sp`` as the module.  ``sp.issparse(A)`` needs no import at all: an
    A cannot be a scipy sparse matrix while scipy.sparse was never imported."""

    @staticmethod
    def issparse(A: Any) -> bool:
        import sys

        module = sys.modules.get("scipy.sparse")
        return module is not None and module.issparse(A)

    def __getattr__(self, name: str) -> Any:
        import scipy.sparse

        return getattr(scipy.sparse, name)


sparse = _LazySparse()


SAFE_EXPONENT = 100
"""Operands whose largest magnitude lies in [2**-100, 2**100] are used as
they are by the iterative solvers: no square or product of squares they form
over- or underflows."""


def safe_exponent(top: float) -> int:
    """0 when ``top`` (a largest magnitude) lies in [2**-SAFE_EXPONENT,
    2**SAFE_EXPONENT], is zero or is not finite; else its binary exponent e
    (``top * 2**-e`` in [0.5, 1), exactly).  The solvers' one rule for
    bringing an operand into the safe range by a power of two (exact), and
    their answers back by its inverse."""
    if top == 0.0 or not math.isfinite(top) or \
            2.0 ** -SAFE_EXPONENT <= top <= 2.0 ** SAFE_EXPONENT:
        return 0
    return math.frexp(top)[1]
