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


LSTSQ = kinds_with(gmr=True, needs_scores=False)
"""The kinds ``lstsq(sketch=...)`` takes (built from sizes alone)."""


def gmr_pair(kind, s_c, s_r, C, R, seed):
    """``(S_C, S_R)`` of a kind for the GMR problem with factors C (m x c) and
    R (r x n), drawn from one generator as fast_gmr draws them: the leverage
    kind samples on the row leverage scores of C and the column scores of R;
    "osnap-gaussian" has an inner OSNAP of twice the rows (small sketches)."""
    from sketchlab._validation import as_generator

    m, n = C.shape[0], R.shape[1]
    g = as_generator(seed)
    if REGISTRY[kind].needs_scores:
        from sketchlab import LeverageScoreSampler

        return (LeverageScoreSampler.from_matrix(C, s_c, axis=0, rng=g),
                LeverageScoreSampler.from_matrix(R, s_r, axis=1, rng=g))
    if kind == "osnap-gaussian":
        return (make_sketch(kind, s_c, m, rng=g, inner_size=min(m, 2 * s_c)),
                make_sketch(kind, s_r, n, rng=g, inner_size=min(n, 2 * s_r)))
    return make_sketch(kind, s_c, m, rng=g), make_sketch(kind, s_r, n, rng=g)
