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

from ._gmr import UnderdeterminedSketchWarning, fast_gmr, gmr, project_psd, project_symmetric
from ._leverage import leverage_scores
from ._operators import (
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
    "gmr_residual": "_residuals",
    "gmr_error_ratio": "_residuals",
    "lowrank_residual": "_residuals",
    "RBFKernel": "_kernel_matrices",
    "PairwiseKernel": "_kernel_matrices",
    "SPSDApproximation": "_spsd",
    "nystrom": "_spsd",
    "fast_spsd": "_spsd",
    "faster_spsd": "_spsd",
    "optimal_spsd": "_spsd",
    "eta": "_spsd",
    "fast_sp_svd": "_svd",
    "practical_sp_svd": "_svd",
    "three_sketch_svd": "_svd",
    "practical_sp_svd_sizes": "_svd",
    "three_sketch_svd_sizes": "_svd",
    "SVD_SKETCHES": "_svd",
    "SketchedNystroem": "_estimators",
    "SinglePassSVD": "_estimators",
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
