"""Trace estimation: ``estimate_trace`` (Hutchinson, Hutch++, XTrace, XNysTrace)
and ``effective_dimension`` on a sparse and a kernel operator.

Operators (built once per process; their products are what the estimators
cost, the rest is dense work on n x m blocks):

- ``laplacian N``: the graph Laplacian ``D - W`` (CSR, positive
  semidefinite) of a random graph on N nodes with about 10 edges a node.
- ``rbf N``: ``RBFKernel`` on N points of 10 Gaussian clusters in 20
  dimensions (gamma 0.05), as a linear map: its lower block triangle stored
  (the products then read memory, as a kernel ridge fit's do).

``track_products_per_second`` is the products (vectors) an estimate used over
its wall time: the estimators' throughput, products and dense work together.
"""

import time

import numpy as np
import scipy.sparse as sp

from . import common

if common.QUICK:
    OPERATORS = ["laplacian 20000", "rbf 3000"]
else:
    OPERATORS = ["laplacian 200000", "rbf 10000"]
METHODS = ["hutchinson", "hutch++", "xtrace", "xnystrace"]
BUDGET = 100
KERNEL_GAMMA = 0.05

_OPERATORS = {}


def laplacian(n, degree=10, seed=0):
    """``D - W`` of a random graph (CSR, float64): positive semidefinite."""
    gen = np.random.default_rng(seed)
    rows = gen.integers(0, n, n * degree // 2)
    cols = gen.integers(0, n, n * degree // 2)
    W = sp.csr_array((gen.random(rows.size), (rows, cols)), shape=(n, n))
    W = (W + W.T).tocsr()
    W.setdiag(0)
    W.eliminate_zeros()
    L = sp.diags_array(np.asarray(W.sum(axis=1)).ravel()) - W
    return sp.csr_array(L)


def kernel_points(n, d=20, seed=0):
    gen = np.random.default_rng(seed)
    centers = gen.standard_normal((10, d)) * 2
    return centers[gen.integers(0, 10, n)] + gen.standard_normal((n, d))


def operator(label):
    """The linear map of an operator label (built once per process)."""
    import sketchlab as sl
    from sketchlab._linear_map import as_linear_map

    if label not in _OPERATORS:
        kind, size = label.split()
        n = int(size)
        if kind == "laplacian":
            _OPERATORS[label] = as_linear_map(laplacian(n))
        else:
            _OPERATORS[label] = as_linear_map(sl.RBFKernel(kernel_points(n), KERNEL_GAMMA))
    return _OPERATORS[label]


class TraceEstimators:
    params = [OPERATORS, METHODS]
    param_names = ["operator", "method"]
    timeout = 600

    def setup(self, label, method):
        common.require("estimate_trace")
        import sketchlab as sl

        self.estimate = sl.estimate_trace
        self.A = operator(label)
        self.estimate(self.A, method=method, matvecs=8, rng=0)  # compiles or loads the loops

    def time_estimate(self, label, method):
        self.estimate(self.A, method=method, matvecs=BUDGET, rng=0)

    def track_products_per_second(self, label, method):
        start = time.perf_counter()
        res = self.estimate(self.A, method=method, matvecs=BUDGET, rng=0)
        return res.matvecs / (time.perf_counter() - start)

    track_products_per_second.unit = "products/s"


class EffectiveDimension:
    params = [[label for label in OPERATORS if label.startswith("rbf")], [0.1, 1.0]]
    param_names = ["operator", "alpha"]
    timeout = 600

    def setup(self, label, alpha):
        common.require("effective_dimension")
        import sketchlab as sl

        self.deff = sl.effective_dimension
        self.A = operator(label)
        self.deff(self.A, 10.0, rng=0)

    def time_effective_dimension(self, label, alpha):
        self.deff(self.A, alpha, rng=0)

    def track_products_per_deff(self, label, alpha):
        res = self.deff(self.A, alpha, rng=0)
        return res.matvecs / res.effective_dimension

    track_products_per_deff.unit = "products / d_eff"
