"""The sketch kinds, by name, with what each can do.

One table for every place that takes a kind name: :func:`make_sketch`,
``fast_gmr(sketch=...)``, the ``range_sketch=`` / ``core_sketch=`` of the
single-pass SVDs, the estimators and the benchmarks.  A new kind is one entry
here (and its operator class in ``sketchlab._operators``).

Capabilities:

- ``one_pass``: ``sketch_both`` with this kind on both sides reads a sparse A
  once, through its nonzeros, with no intermediate (hashing and sampling
  kinds); otherwise it goes through ``S1 A`` (generated dense blocks times A),
  and an algorithm that applies the same operator to several arrays should
  use ``apply_many`` so that the random entries are generated once.
- ``open_dim``: the operator can be built with an input dimension not known
  in advance (2**31 - 1 for row batches of unknown number) at no O(d) cost
  (not SRHT, whose row sample depends on d).
- ``needs_scores``: built from sampling scores, not from sizes alone.
- ``svd``: allowed as ``range_sketch=`` / ``core_sketch=`` of the
  single-pass SVDs; ``gmr``: allowed as ``fast_gmr(sketch=...)``.
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
    SketchOperator,
    UniformSampler,
    compose,
)
from ._validation import check_int

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike

__all__ = ["SketchKind", "KINDS", "SKETCH_KINDS", "SVD_SKETCHES", "make_sketch", "kinds_with"]

# "osnap-gaussian" is Gaussian(s, s0) after OSNAP(s0, d) (Algorithm 3, line 3).
# The paper asks for s0 = O((k/eps)^{1+gamma}) against s = O(k/eps); we use the
# fixed multiple s0 = 4 s (capped at d), which keeps the explicit block of a
# streamed update (w x s0, then w x s) small.
_INNER_FACTOR = 4


@dataclass(frozen=True)
class SketchKind:
    """A sketch kind: its name, how to build it, and what it can do."""

    name: str
    build: Callable[..., SketchOperator]  # (size, dim, rng, **params) -> SketchOperator
    description: str
    one_pass: bool = False
    open_dim: bool = True
    needs_scores: bool = False
    svd: bool = True
    gmr: bool = True


def _osnap(size, dim, rng, nnz_per_col=None):
    return OSNAP(size, dim, nnz_per_col=nnz_per_col, rng=rng)


def _osnap_gaussian(size, dim, rng):
    inner_size = min(dim, _INNER_FACTOR * size)
    inner = OSNAP(inner_size, dim, nnz_per_col=min(4, inner_size), rng=rng)
    return compose(GaussianSketch(size, inner_size, rng=rng), inner)


def _uniform(size, dim, rng, replace=True):
    return UniformSampler(size, dim, replace=replace, rng=rng)


def _leverage(size, dim, rng, scores=None):
    if scores is None:
        raise ValueError("kind='leverage' needs scores=")
    return LeverageScoreSampler(size, dim, scores=scores, rng=rng)


KINDS = {
    kind.name: kind
    for kind in (
        SketchKind("countsketch", lambda s, d, rng: CountSketch(s, d, rng=rng),
                   "CountSketch: one +-1 per column", one_pass=True),
        SketchKind("osnap", _osnap, "OSNAP: p = min(4, s) entries +-1/sqrt(p) per column",
                   one_pass=True),
        SketchKind("gaussian", lambda s, d, rng: GaussianSketch(s, d, rng=rng),
                   "i.i.d. N(0, 1/s) entries"),
        SketchKind("srht", lambda s, d, rng: SRHT(s, d, rng=rng),
                   "subsampled randomized Hadamard transform", open_dim=False),
        SketchKind("osnap-gaussian", _osnap_gaussian,
                   "Gaussian(s, 4s) after OSNAP(4s, d) (Algorithm 3)", gmr=False),
        SketchKind("uniform", _uniform, "uniform row sampling with replacement",
                   one_pass=True, svd=False),
        SketchKind("leverage", _leverage, "leverage-score row sampling", one_pass=True,
                   needs_scores=True, svd=False),
    )
}


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
    if kind == "leverage":
        params["scores"] = scores
    elif scores is not None:
        raise TypeError(f"scores= applies to kind 'leverage' only, got kind {kind!r}")
    try:
        return KINDS[kind].build(sketch_size, input_dim, rng, **params)
    except TypeError as exc:
        if params and "unexpected keyword" in str(exc):
            raise TypeError(f"kind {kind!r} does not take {sorted(params)}: {exc}") from None
        raise
