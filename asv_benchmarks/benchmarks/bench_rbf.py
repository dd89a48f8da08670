"""The RBF kernel oracle: the blocks the SPSD methods ask for, against
scikit-learn's ``rbf_kernel`` on the same rows.

``K[:, columns]`` is the n x c landmark block (C of every SPSD method) and
``K[rows1, rows2]`` the s x s sampled block of fast/faster SPSD (c = 30,
s = 300 as in SPEC 7).  Building the oracle (squared norms of X) is part of
each timing, as ``rbf_kernel`` starts from X.
"""

import numpy as np

import sketchlab as sl

from . import common
from .bench_spsd import C_LANDMARKS, S_ROWS

if common.QUICK:
    DATA = ["onehot 2000x112", "dense 2000x500"]
else:
    DATA = ["csr mushrooms", "dense madelon", "csr debian-tfidf", "dense 16384x1000"]


class RBFOracle:
    params = [DATA]
    param_names = ["data"]
    timeout = 600

    def setup(self, data):
        from sklearn.metrics.pairwise import rbf_kernel

        common.require("RBFKernel")
        self.X = common.load(data)
        self.gamma = common.rbf_gamma(data, self.X.shape[1])
        n = self.X.shape[0]
        gen = np.random.default_rng(0)
        self.columns = np.sort(gen.choice(n, C_LANDMARKS, replace=False))
        self.rows1, self.rows2 = gen.integers(0, n, S_ROWS), gen.integers(0, n, S_ROWS)
        self.rbf_kernel = rbf_kernel
        self.time_columns(data), self.time_sampled_block(data)  # compiles or loads the kernels

    def time_columns(self, data):
        sl.RBFKernel(self.X, self.gamma)[:, self.columns]

    def time_sampled_block(self, data):
        sl.RBFKernel(self.X, self.gamma)[self.rows1, self.rows2]

    def peakmem_columns(self, data):
        sl.RBFKernel(self.X, self.gamma)[:, self.columns]

    def time_peer_sklearn_columns(self, data):
        self.rbf_kernel(self.X, self.X[self.columns], gamma=self.gamma)

    def time_peer_sklearn_sampled_block(self, data):
        self.rbf_kernel(self.X[self.rows1], self.X[self.rows2], gamma=self.gamma)
