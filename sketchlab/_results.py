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
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["result_type", "SVDResult", "GMRResult", "convergence_warning", "warn_unconverged"]


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


if TYPE_CHECKING:
    # What type checkers see: the fields as a NamedTuple (so that unpacking
    # and indexing are typed), the extras as attributes of a subclass; at run
    # time the classes come from result_type below.  error_estimate is an
    # ErrorEstimate or None, typed Any: this module sits below _errors (layer
    # 0, no sketchlab imports), so that every algorithm may import it.
    class _SVDFields(NamedTuple):
        U: NDArray[np.floating]
        s: NDArray[np.floating]
        Vt: NDArray[np.floating]

    class SVDResult(_SVDFields):
        error_estimate: Any
        passes: int | None
        converged: bool | None

        def __new__(cls, U: NDArray[np.floating], s: NDArray[np.floating],
                    Vt: NDArray[np.floating], *, error_estimate: Any = None,
                    passes: int | None = None,
                    converged: bool | None = None) -> SVDResult: ...

    class _GMRFields(NamedTuple):
        X: NDArray[np.floating]

    class GMRResult(_GMRFields):
        error_estimate: Any
        sketch_size: tuple[int, int] | None

        def __new__(cls, X: NDArray[np.floating], *,
                    error_estimate: Any = None,
                    sketch_size: tuple[int, int] | None = None) -> GMRResult: ...

else:
    SVDResult = result_type(
        "SVDResult", ("U", "s", "Vt"),
        {"error_estimate": None, "passes": None, "converged": None},
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


_WARNING_CLASS: list[type] = []


def convergence_warning() -> type:
    """The class an iterative solver warns with when it stops unconverged:
    scikit-learn's ``ConvergenceWarning`` where scikit-learn is installed
    (so that one filter serves both libraries), else a ``UserWarning``
    subclass of the same name.  Imported on the first warning, not with
    sketchlab."""
    if not _WARNING_CLASS:
        try:
            from sklearn.exceptions import ConvergenceWarning
        except ImportError:
            class ConvergenceWarning(UserWarning):  # type: ignore[no-redef]
                """An iterative solver stopped before its stopping rule was met."""

            ConvergenceWarning.__module__ = "sketchlab"
        _WARNING_CLASS.append(ConvergenceWarning)
    return _WARNING_CLASS[0]


def outside_stacklevel() -> int:
    """The ``stacklevel`` of ``warnings.warn`` (called by the caller of this
    function) that points at the first frame outside sketchlab: the user's
    line, however deep inside the package the warning is raised (Python
    3.12's ``skip_file_prefixes``)."""
    frame = sys._getframe(1)  # the frame that calls warnings.warn: stacklevel 1
    level = 1
    while frame is not None and \
            frame.f_globals.get("__name__", "").split(".")[0] == "sketchlab":
        frame = frame.f_back
        level += 1
    return level


def warn_unconverged(message: str, stacklevel: int | None = None) -> None:
    """Warn with :func:`convergence_warning`'s class, pointing at the user's
    line (the first frame outside sketchlab) unless ``stacklevel`` says."""
    import warnings

    warnings.warn(message, convergence_warning(),
                  stacklevel=outside_stacklevel() if stacklevel is None else stacklevel)
