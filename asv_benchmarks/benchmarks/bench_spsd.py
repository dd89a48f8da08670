"""SPSD kernel approximation end to end: ``nystrom``, ``fast_spsd``,
``faster_spsd`` (Algorithm 2) and ``optimal_spsd`` on an RBF kernel oracle,
with scikit-learn's ``Nystroem`` (``fit_transform``) beside them.

SPEC 7's point: c = 30 landmark columns (uniform, shared by our four methods),
s = 10 c = 300 sampled rows.  Each timing includes building the oracle from X
(``RBFKernel``), as ``Nystroem`` starts from X too.  ``track_error`` is
``||K - C U C^T||_F / ||K||_F`` (``||K - F F^T||_F / ||K||_F`` for Nystroem's
features F) and ``track_kernel_entries`` the oracle's count of evaluated
entries (SPEC 7: ``n c + s^2`` for faster_spsd).

``NystroemFitTransform`` times the drop-in estimator, ``SketchedNystroem``
with the Nystrom core and with its default core, against scikit-learn's
``Nystroem``: ``fit_transform(X)`` at the same gamma and n_components
(30 and 100).
"""

import numpy as np
from asv_runner.benchmarks.mark import skip_for_params

import sketchlab as sl

from . import common

if common.QUICK:
    DATA = ["onehot 2000x112"]
else:
    DATA = ["onehot 8124x112", "csr mushrooms", "dense madelon"]
METHODS = ["nystrom", "fast_spsd", "faster_spsd", "optimal_spsd", "sklearn Nystroem"]
C_LANDMARKS = 30
S_ROWS = 300
ESTIMATOR_COMPONENTS = [30, 100]
ESTIMATORS = ["sklearn Nystroem", "SketchedNystroem nystrom", "SketchedNystroem faster"]


def approximation(name, c=C_LANDMARKS, s=S_ROWS):
    """A function ``(K, columns) -> SPSDApproximation`` for one of our methods."""
    if name == "nystrom":
        return lambda K, cols: sl.nystrom(K, c, columns=cols, rng=0)
    if name == "fast_spsd":
        return lambda K, cols: sl.fast_spsd(K, c, s, columns=cols, rng=0)
    if name == "faster_spsd":
        return lambda K, cols: sl.faster_spsd(K, c, s, columns=cols, rng=0)
    return lambda K, cols: sl.optimal_spsd(K, c, columns=cols, rng=0)


def features_error(K, F):
    """``||K - F F^T||_F / ||K||_F``, reading K in row blocks."""
    resid = total = 0.0
    for i0, block in K.row_blocks():
        diff = block - F[i0 : i0 + block.shape[0]] @ F.T
        resid += float(np.einsum("ij,ij->", diff, diff))
        total += float(np.einsum("ij,ij->", block, block))
    return float(np.sqrt(resid / total))


class SPSD:
    params = [DATA, METHODS]
    param_names = ["data", "method"]
    timeout = 900

    def setup(self, data, name):
        common.require("RBFKernel", "nystrom", "fast_spsd", "faster_spsd", "optimal_spsd")
        self.X = common.load(data)
        self.gamma = common.rbf_gamma(data, self.X.shape[1])
        n = self.X.shape[0]
        self.columns = sl.UniformSampler(C_LANDMARKS, n, replace=False, rng=0).indices
        if name == "sklearn Nystroem":
            from sklearn.kernel_approximation import Nystroem

            def run():
                model = Nystroem(gamma=self.gamma, n_components=C_LANDMARKS, random_state=0)
                return None, model.fit_transform(self.X)
        else:
            method = approximation(name)

            def run():
                K = sl.RBFKernel(self.X, self.gamma)
                return K, method(K, self.columns)

        self.run = run
        self.run()  # compiles or loads the kernels

    def time_approximate(self, data, name):
        self.run()

    def peakmem_approximate(self, data, name):
        self.run()

    def track_error(self, data, name):
        K, result = self.run()
        if K is None:  # Nystroem's features
            return features_error(sl.RBFKernel(self.X, self.gamma), result)
        return result.error(K)

    track_error.unit = "relative error"

    @skip_for_params([(d, "sklearn Nystroem") for d in DATA])
    def track_kernel_entries(self, data, name):
        K, _ = self.run()
        return K.n_evaluated

    track_kernel_entries.unit = "entries"


def estimator(name, gamma, n_components):
    """An unfitted feature map of ``ESTIMATORS``, seeded with 0."""
    if name == "sklearn Nystroem":
        from sklearn.kernel_approximation import Nystroem

        return Nystroem(gamma=gamma, n_components=n_components, random_state=0)
    core = name.split()[1]
    return sl.SketchedNystroem(n_components=n_components, core=core, gamma=gamma, random_state=0)


class NystroemFitTransform:
    params = [DATA, ESTIMATORS, ESTIMATOR_COMPONENTS]
    param_names = ["data", "estimator", "n_components"]
    timeout = 600

    def setup(self, data, name, n_components):
        common.require("SketchedNystroem")
        self.X = common.load(data)
        self.model = estimator(name, common.rbf_gamma(data, self.X.shape[1]), n_components)
        self.model.fit_transform(self.X)  # compiles or loads the kernels

    def time_fit_transform(self, data, name, n_components):
        self.model.fit_transform(self.X)

    def peakmem_fit_transform(self, data, name, n_components):
        self.model.fit_transform(self.X)
