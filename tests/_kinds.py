"""The sketch kinds of the tests, read from the registry (one place).

``KINDS`` are the registered kind names (``sketchlab._registry.KINDS``, built
from the operator classes), ``VARIANTS`` the extra parameterizations the
operator tests also cover, and :func:`make` builds any of them with the
registry's ``make_sketch``.  A new kind in the registry is tested here without
an edit; asv_benchmarks reads the same registry.
"""

import numpy as np

from sketchlab._registry import KINDS as REGISTRY
from sketchlab._registry import kinds_with, make_sketch

KINDS = tuple(REGISTRY)
"""Every registered kind name."""

# name -> (registered kind, parameters given (s, d))
VARIANTS = {
    "uniform-noreplace": ("uniform", lambda s, d: {"replace": False}),
    "osnap-p3": ("osnap", lambda s, d: {"nnz_per_col": min(3, s)}),
}

ALL = KINDS + tuple(VARIANTS)
"""The registered kinds and their variants."""

SIZED = kinds_with(needs_scores=False)
"""The kinds built from sizes alone (no scores)."""

ONE_PASS = kinds_with(one_pass=True)
SVD = kinds_with(svd=True)
GMR = kinds_with(gmr=True)
SPLITTABLE = kinds_with(splittable=True, gmr=True)
"""The kinds of ``fast_gmr(tol=...)``."""


def scores(d, seed):
    """Sampling scores with a quarter of the indices never drawn."""
    values = np.abs(np.random.default_rng(seed).standard_normal(d)) + 0.05
    values[: d // 4] = 0.0
    return values


def make(kind, s, d, seed):
    """The operator of a kind name of ``ALL``, of shape ``(s, d)``, seeded."""
    base, params = VARIANTS.get(kind, (kind, lambda s, d: {}))
    params = params(s, d)
    if REGISTRY[base].needs_scores:
        params["scores"] = scores(d, seed)
    return make_sketch(base, s, d, rng=seed, **params)
