"""Results of the public functions: one shape whatever the flags.

The pattern is scipy's (``scipy.stats.linregress``, ``_lib._bunch``): a result
is a named tuple whose unpacking is fixed (``U, s, Vt = fast_sp_svd(A, k)``)
and whose extra results are attributes (``res.error_estimate``, ``None``
unless asked for; ``res.passes``; ``res.iterations``).  A flag never changes
how many values a function returns.

:func:`result_type` makes such a class from the names of its fields and of
its extras with their defaults.  The classes pickle (dask ships them between
processes) and compare as the tuples they are.
"""

from __future__ import annotations

import collections
import sys
from typing import Any

__all__ = ["result_type", "SVDResult", "GMRResult"]


def result_type(name: str, fields: tuple[str, ...], extras: dict[str, Any], doc: str) -> type:
    """A named-tuple class ``name`` that unpacks as ``fields`` and carries ``extras``.

    ``extras`` maps each extra attribute to its default; the constructor takes
    the fields positionally or by name and the extras by keyword only.  The
    class belongs to the calling module, which must bind it to ``name`` (so
    that pickle finds it).
    """
    module = sys._getframe(1).f_globals["__name__"]
    base = collections.namedtuple(f"_{name}Fields", fields)  # type: ignore[misc]
    extra_names = tuple(extras)

    def __new__(cls, *args, **kwargs):
        values = {key: kwargs.pop(key) for key in list(kwargs) if key in extra_names}
        unknown = set(kwargs) - set(fields)
        if unknown:
            raise TypeError(f"{name}() got unexpected keyword arguments {sorted(unknown)}")
        self = base.__new__(cls, *args, **kwargs)
        for key in extra_names:
            setattr(self, key, values.get(key, extras[key]))
        return self

    def __repr__(self):
        parts = [f"{key}={getattr(self, key)!r}" for key in fields + extra_names]
        return f"{name}({', '.join(parts)})"

    def __reduce__(self):
        # the fields positionally, the extras as state: both survive pickling
        return (_rebuild, (type(self), tuple(self), {k: getattr(self, k) for k in extra_names}))

    def _asdict(self):
        return {key: getattr(self, key) for key in fields + extra_names}

    namespace = {"__new__": __new__, "__repr__": __repr__, "__reduce__": __reduce__,
                 "_asdict": _asdict, "__doc__": doc, "__module__": module,
                 "_extras": extra_names}
    return type(name, (base,), namespace)


def _rebuild(cls, values, extras):
    return cls(*values, **extras)


SVDResult = result_type(
    "SVDResult", ("U", "s", "Vt"), {"error_estimate": None, "passes": None, "converged": None},
    """A truncated SVD ``A ~ U diag(s) Vt``: unpacks as ``U, s, Vt``.

    Attributes
    ----------
    U : ndarray of shape (m, k)
        Left singular vectors (orthonormal columns).
    s : ndarray of shape (k,)
        Singular values, non-increasing.
    Vt : ndarray of shape (k, n)
        Right singular vectors (orthonormal rows).
    error_estimate : ErrorEstimate or None
        Of ``||A - U diag(s) Vt||_F``, when the function was asked for it
        (``estimate_error=True`` or ``tol=``); ``None`` otherwise.
    passes : int or None
        The passes made over A (1 for the single-pass methods).
    converged : bool or None
        Whether an iterative method's stopping rule was met within its
        passes (:func:`~sketchlab.krylov_svd`); None for the others.
    """)

GMRResult = result_type(
    "GMRResult", ("X",), {"error_estimate": None, "sketch_size": None},
    """The solution of a generalized matrix regression: unpacks as ``X,``.

    Attributes
    ----------
    X : ndarray of shape (c, r)
        The solution ``X~`` (``res.X``, or ``X, = res``).
    error_estimate : ErrorEstimate or None
        Of ``||A - C X R||_F``, when asked for (``estimate_error=True`` or
        ``tol=``); ``None`` otherwise.
    sketch_size : (int, int) or None
        ``(s_c, s_r)``, the sketch sizes used.
    """)
