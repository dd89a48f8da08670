"""Randomized sketching on Numba-compiled loops.

Sketching operators (CountSketch, OSNAP, Gaussian, SRHT, uniform and
leverage-score sampling) that work directly on dense arrays and
scipy.sparse CSR/CSC, and the algorithms of Ye, Wang, Zhang & Zhang, "Fast
Generalized Matrix Regression with Applications in Machine Learning":
Fast GMR (Algorithm 1), the faster SPSD kernel approximation (Algorithm 2)
and the fast single-pass SVD (Algorithm 3), each beside its baselines.

Every public name is imported from here; the modules that define them are
private (``sketchlab._operators``, ``sketchlab._gmr``, ...), see
docs/architecture.md.  The operators are imported eagerly; the algorithms,
estimators and the dask front on first use, so that ``import sketchlab``
stays cheap (no scipy.linalg, no scikit-learn, no dask).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._operators import (
    OSNAP,
    SRHT,
    ComposedSketch,
    CountSketch,
    GaussianSketch,
    IndexSelection,
    LeverageScoreSampler,
    SketchOperator,
    UniformSampler,
    compose,
    sketch_both,
)
from ._registry import SKETCH_KINDS, SVD_SKETCHES, make_sketch

if TYPE_CHECKING:  # the names of _LAZY, so that type checkers see what they are
    from ._cur import CURDecomposition, cur
    from ._eigsh import EigshResult, eigsh
    from ._errors import ErrorEstimate
    from ._estimators import SinglePassSVD, SketchedNystroem
    from ._estimators_svd import RandomizedTruncatedSVD
    from ._pca import RandomizedPCA
    from ._kpca import SketchedKernelPCA
    from ._krr import SketchedKernelRidge, SketchedKernelRidgeClassifier
    from ._gmr import UnderdeterminedSketchWarning, fast_gmr, gmr, project_psd, project_symmetric
    from ._kernel_matrices import PairwiseKernel, RBFKernel
    from ._errors import InaccurateSVDWarning
    from ._krylov import krylov_svd
    from ._leverage import leverage_scores
    from ._lstsq import LstsqResult, SketchPreconditioner, lstsq, sketch_preconditioner
    from ._residuals import gmr_error_ratio, gmr_residual, lowrank_residual
    from ._ridge import RidgeResult, ridge
    from ._estimators_ridge import SketchedRidge, SketchedRidgeClassifier, SketchedRidgeCV
    from ._results import GMRResult, SVDResult
    from ._sketch_state import SketchState
    from ._spsd import SPSDApproximation, eta, fast_spsd, faster_spsd, nystrom, optimal_spsd
    from ._trace import (
        DiagonalResult,
        EffectiveDimensionResult,
        TraceResult,
        effective_dimension,
        estimate_diagonal,
        estimate_trace,
    )
    from ._svd import (
        fast_sp_svd,
        practical_sp_svd,
        practical_sp_svd_sizes,
        three_sketch_svd,
        three_sketch_svd_sizes,
    )

__version__ = "0.2.0.dev0"

# public name -> private module that defines it (imported on first use)
_LAZY = {
    "leverage_scores": "_leverage",
    "gmr": "_gmr",
    "fast_gmr": "_gmr",
    "project_symmetric": "_gmr",
    "project_psd": "_gmr",
    "UnderdeterminedSketchWarning": "_gmr",
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
    "SketchState": "_sketch_state",
    "cur": "_cur",
    "CURDecomposition": "_cur",
    "ErrorEstimate": "_errors",
    "fast_sp_svd": "_svd",
    "practical_sp_svd": "_svd",
    "three_sketch_svd": "_svd",
    "practical_sp_svd_sizes": "_svd",
    "three_sketch_svd_sizes": "_svd",
    "SketchedNystroem": "_estimators",
    "SketchedKernelRidge": "_krr",
    "SketchedKernelRidgeClassifier": "_krr",
    "SinglePassSVD": "_estimators",
    "krylov_svd": "_krylov",
    "eigsh": "_eigsh",
    "EigshResult": "_eigsh",
    "InaccurateSVDWarning": "_errors",
    "RandomizedTruncatedSVD": "_estimators_svd",
    "RandomizedPCA": "_pca",
    "SketchedKernelPCA": "_kpca",
    "lstsq": "_lstsq",
    "sketch_preconditioner": "_lstsq",
    "LstsqResult": "_lstsq",
    "SketchPreconditioner": "_lstsq",
    "SVDResult": "_results",
    "GMRResult": "_results",
    "estimate_trace": "_trace",
    "estimate_diagonal": "_trace",
    "effective_dimension": "_trace",
    "TraceResult": "_trace",
    "DiagonalResult": "_trace",
    "EffectiveDimensionResult": "_trace",
    "ridge": "_ridge",
    "RidgeResult": "_ridge",
    "SketchedRidge": "_estimators_ridge",
    "SketchedRidgeClassifier": "_estimators_ridge",
    "SketchedRidgeCV": "_estimators_ridge",
}

# the optional dependencies a lazily imported name may need: module -> (name, extra)
_EXTRAS = {"sklearn": ("scikit-learn", "sklearn"), "dask": ("dask", "dask"),
           "distributed": ("dask.distributed", "dask")}

__all__ = [
    "SketchOperator",
    "CountSketch",
    "OSNAP",
    "GaussianSketch",
    "SRHT",
    "UniformSampler",
    "LeverageScoreSampler",
    "ComposedSketch",
    "IndexSelection",
    "compose",
    "sketch_both",
    "make_sketch",
    "SKETCH_KINDS",
    "SVD_SKETCHES",
    "ConvergenceWarning",
    "release_workspace",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        try:
            module = importlib.import_module(f".{_LAZY[name]}", __name__)
        except ModuleNotFoundError as exc:  # an optional extra that is not installed
            extra = _EXTRAS.get((exc.name or "").split(".")[0])
            if extra is None:
                raise
            raise ImportError(
                f"sketchlab.{name} needs {extra[0]}, which is not installed: "
                f"pip install 'sketchlab[{extra[1]}]'") from exc
        value = getattr(module, name)
        globals()[name] = value
        return value
    if name == "release_workspace":
        from ._engine.workspace import release

        return release
    if name == "ConvergenceWarning":  # scikit-learn's where it is installed
        from ._results import convergence_warning

        return convergence_warning()
    if name == "dask":
        return importlib.import_module(".dask", __name__)
    raise AttributeError(f"module 'sketchlab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
