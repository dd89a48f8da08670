"""The sketch kinds, by name, with what each can do: built from the classes.

One table for every place that takes a kind name: :func:`make_sketch`,
``fast_gmr(sketch=...)``, the ``range_sketch=`` / ``core_sketch=`` of the
single-pass SVDs, the estimators, the tests and the benchmarks.  A kind's
name, description and capabilities are attributes of its operator class
(``kind``, ``description``, ``one_pass``, ``open_dim``, ``needs_scores``,
``splittable``, ``svd``, ``gmr``: see :class:`sketchlab.SketchOperator`); a
new kind is its class, added to ``_CLASSES`` below (and, when its
constructor is not ``cls(size, dim, rng=rng, **params)``, a builder in
``_BUILDERS``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._operators import (
    OSNAP,
    SRHT,
    CountSketch,
    GaussianSketch,
    LeverageScoreSampler,
    OSNAPGaussian,
    SketchOperator,
    UniformSampler,
    compose,
)
from ._validation import check_int

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike

__all__ = ["SketchKind", "KINDS", "SKETCH_KINDS", "SVD_SKETCHES", "make_sketch", "kinds_with",
           "FLAGS", "GMR_DEFAULT_SKETCH", "operator_class"]

# "osnap-gaussian" is Gaussian(s, s0) after OSNAP(s0, d) (Algorithm 3, line 3).
# The paper asks for s0 = O((k/eps)^{1+gamma}) against s = O(k/eps); we use the
# fixed multiple s0 = 4 s (capped at d), which keeps the explicit block of a
# streamed update (w x s0, then w x s) small.
_INNER_FACTOR = 4

FLAGS = ("one_pass", "open_dim", "needs_scores", "splittable", "svd", "gmr")
"""The capability attributes of an operator class that the registry copies."""


@dataclass(frozen=True)
class SketchKind:
    """A sketch kind: its name, how to build it, and what it can do (the
    class attributes of ``cls``)."""

    name: str
    build: Callable[..., SketchOperator]  # (size, dim, rng, **params) -> SketchOperator
    description: str
    cls: type = SketchOperator
    one_pass: bool = False
    open_dim: bool = True
    needs_scores: bool = False
    splittable: bool = False
    svd: bool = True
    gmr: bool = True


def _osnap_gaussian(size, dim, rng, inner_size=None, nnz_per_col=4):
    """Gaussian(size, s0) after OSNAP(s0, dim) with ``nnz_per_col`` nonzeros
    per column (1: a CountSketch); s0 = ``inner_size``, default 4 size
    (capped at dim).  The inner operator's seed is drawn first."""
    inner_size = min(dim, _INNER_FACTOR * size) if inner_size is None else inner_size
    inner = OSNAP(inner_size, dim, nnz_per_col=min(nnz_per_col, inner_size), rng=rng)
    return compose(GaussianSketch(size, inner_size, rng=rng), inner)


def _leverage(size, dim, rng, scores=None):
    if scores is None:
        raise ValueError("kind='leverage' needs scores=")
    return LeverageScoreSampler(size, dim, scores=scores, rng=rng)


# the registered classes, in the order of the kind lists
_CLASSES = (CountSketch, OSNAP, GaussianSketch, SRHT, OSNAPGaussian, UniformSampler,
            LeverageScoreSampler)
# kinds whose constructor is not cls(size, dim, rng=rng, **params)
_BUILDERS = {"osnap-gaussian": _osnap_gaussian, "leverage": _leverage}


def _default_builder(cls):
    def build(size, dim, rng, **params):
        return cls(size, dim, rng=rng, **params)
    return build


def _kind_of(cls):
    return SketchKind(cls.kind, _BUILDERS.get(cls.kind) or _default_builder(cls),
                      cls.description, cls, **{flag: bool(getattr(cls, flag)) for flag in FLAGS})


KINDS = {cls.kind: _kind_of(cls) for cls in _CLASSES}
"""Kind name -> :class:`SketchKind`, in the order of the kind lists."""


GMR_DEFAULT_SKETCH = "countsketch"
"""The kind of ``fast_gmr``'s default ``sketch=`` (and of the fast core of
CUR, in memory and on dask): one pass over a sparse A."""


def operator_class(kind: str) -> type:
    """The operator class of a registered kind name."""
    return KINDS[kind].cls


def kinds_with(**flags: bool) -> tuple[str, ...]:
    """Names of the kinds whose capabilities match ``flags`` (e.g. ``svd=True``)."""
    return tuple(name for name, kind in KINDS.items()
                 if all(getattr(kind, flag) == value for flag, value in flags.items()))


SKETCH_KINDS = kinds_with(gmr=True)
"""Kind names of :func:`make_sketch` and ``fast_gmr(sketch=...)``."""

SVD_SKETCHES = kinds_with(svd=True)
"""Kind names accepted by ``range_sketch=`` and ``core_sketch=`` of the single-pass SVDs."""


def make_sketch(kind: str, sketch_size: int, input_dim: int, *,
                rng: None | int | np.random.Generator = None, scores: ArrayLike | None = None,
                **params: Any) -> SketchOperator:
    """Build an operator from its kind name.

    Parameters
    ----------
    kind : str
        A name of ``sketchlab.SKETCH_KINDS`` ("countsketch", "osnap",
        "gaussian", "srht", "uniform", "leverage") or "osnap-gaussian"
        (Gaussian after OSNAP, as Algorithm 3 uses).
    sketch_size, input_dim : int
    rng : None, int or numpy.random.Generator
        With a Generator, the seeds of composite kinds are drawn from it in a
        fixed order (inner operator first).
    scores : array_like, optional
        Required for ``"leverage"``.
    **params
        Passed to the operator (``nnz_per_col`` for OSNAP, ``replace`` for
        uniform sampling).

    Returns
    -------
    SketchOperator

    Raises
    ------
    ValueError
        An unknown kind, a missing ``scores`` for "leverage", bad sizes.
    TypeError
        A parameter the kind does not take.

    Examples
    --------
    >>> import sketchlab
    >>> sketchlab.make_sketch("osnap", 8, 100, rng=0)
    OSNAP(8, 100, nnz_per_col=4, rng=0)
    """
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"kind must be one of {list(KINDS)}, got {kind!r}")
    check_int(sketch_size, "sketch_size", 1)
    if KINDS[kind].needs_scores:
        params["scores"] = scores
    elif scores is not None:
        raise TypeError(f"scores= applies to kind 'leverage' only, got kind {kind!r}")
    try:
        return KINDS[kind].build(sketch_size, input_dim, rng, **params)
    except TypeError as exc:
        if params and "unexpected keyword" in str(exc):
            raise TypeError(f"kind {kind!r} does not take {sorted(params)}: {exc}") from None
        raise
