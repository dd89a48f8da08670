"""sketchlab: randomized sketching on Numba kernels.

Sketching operators (CountSketch, OSNAP, Gaussian, SRHT, uniform and
leverage-score sampling) that work directly on dense arrays and
scipy.sparse CSR/CSC, and the algorithms of Ye, Wang, Zhang & Zhang, "Fast
Generalized Matrix Regression with Applications in Machine Learning":
Fast GMR (Algorithm 1), the faster SPSD kernel approximation (Algorithm 2)
and the fast single-pass SVD (Algorithm 3), each beside its baselines.

The operators are imported eagerly; the algorithms, estimators and the dask
front are imported on first use, so that ``import sketchlab`` stays cheap.
"""

import importlib

# gmr is imported eagerly: the function gmr shares its name with the module
# sketchlab.gmr, and a lazy attribute would be replaced by the module as soon
# as another module imports from it
from .gmr import UnderdeterminedSketchWarning, fast_gmr, gmr, project_psd, project_symmetric
from .leverage import leverage_scores
from .operators import (
    OSNAP,
    SKETCH_KINDS,
    SRHT,
    ComposedSketch,
    CountSketch,
    GaussianSketch,
    LeverageScoreSampler,
    SketchOperator,
    UniformSampler,
    compose,
    make_sketch,
    sketch_both,
)

__version__ = "0.1.0.dev0"

# public name -> module that defines it (imported lazily)
_LAZY = {
    "gmr_residual": "residuals",
    "gmr_error_ratio": "residuals",
    "lowrank_residual": "residuals",
    "RBFKernel": "rbf",
    "SPSDApproximation": "spsd",
    "nystrom": "spsd",
    "fast_spsd": "spsd",
    "faster_spsd": "spsd",
    "optimal_spsd": "spsd",
    "eta": "spsd",
    "fast_sp_svd": "svd",
    "practical_sp_svd": "svd",
    "three_sketch_svd": "svd",
    "practical_sp_svd_sizes": "svd",
    "three_sketch_svd_sizes": "svd",
    "SketchedNystroem": "estimators",
    "SinglePassSVD": "estimators",
}

__all__ = [
    "SketchOperator",
    "CountSketch",
    "OSNAP",
    "GaussianSketch",
    "SRHT",
    "UniformSampler",
    "LeverageScoreSampler",
    "ComposedSketch",
    "compose",
    "sketch_both",
    "make_sketch",
    "SKETCH_KINDS",
    "leverage_scores",
    "gmr",
    "fast_gmr",
    "project_symmetric",
    "project_psd",
    "UnderdeterminedSketchWarning",
    *_LAZY,
]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    if name == "dask":
        return importlib.import_module(".dask", __name__)
    raise AttributeError(f"module 'sketchlab' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
