"""Single-pass SVD end to end: ``fast_sp_svd`` (Algorithm 3) against
``practical_sp_svd`` and ``three_sketch_svd`` with the same storage, and
scikit-learn's ``randomized_svd`` (``n_iter=0``, a two-pass method, and its
default power iterations) with the same range sketch size.

k = 10 and the paper's point x = (c + r)/k = 4: c = r = 20, s_c = s_r =
3 c sqrt(x) = 120 (SPEC 5); the sketch kind is Gaussian for dense data and
CountSketch for sparse data.  Every method returns a rank-k factorization
(``rank=k``), so ``track_error_ratio`` = ``||A - U S V^T||_F / ||A - A_k||_F - 1``
compares like with like.  ``SinglePassSVDStream`` feeds the single-pass
methods A as a stream of column blocks; ``ErrorEstimateOverhead`` times
``fast_sp_svd`` with and without ``estimate_error=True`` (its test sketch
gathered in the same pass).
"""

import math

import scipy.sparse as sp

import sketchlab as sl

from . import common

if common.QUICK:
    DATA = ["dense 2000x500", "csr 20000x10000"]
else:
    DATA = ["dense madelon", "dense 16384x1000", "csr 52396x25252", "csr debian-tfidf"]
# a range sketch of m x 20 = 2.4M (quick) or 8M entries: beyond 2**21, CholeskyQR2's
TALL = "dense 120000x60" if common.QUICK else "dense 400000x100"
METHODS = [
    "fast_sp_svd",
    "practical_sp_svd",
    "three_sketch_svd",
    "randomized_svd n_iter=0",
    "randomized_svd",
]
SINGLE_PASS = METHODS[:3]
K = 10
X_POINT = 4  # (c + r) / k
BLOCK_COLUMNS = 2048


def sizes(shape, k=K, x=X_POINT):
    """(c, r, s_c, s_r) of Fast SP-SVD at x (capped at the dimensions)."""
    m, n = shape
    c = r = min(x * k // 2, m, n)
    return c, r, min(m, math.ceil(3 * c * math.sqrt(x))), min(n, math.ceil(3 * r * math.sqrt(x)))


def decomposer(name, A, k=K, rank=K):
    """A function ``A -> (U, s, Vt)`` for a method name, with the sizes above;
    ``rank=None`` asks for the method's sketch rank min(c, r)."""
    from sketchlab import practical_sp_svd_sizes, three_sketch_svd_sizes

    m, n = A.shape
    kind = "countsketch" if sp.issparse(A) else "gaussian"
    c, r, s_c, s_r = sizes(A.shape, k)
    if name == "fast_sp_svd":
        kw = dict(c=c, r=r, s_c=s_c, s_r=s_r, range_sketch=kind, core_sketch=kind)
        rank = min(c, r) if rank is None else rank
        return lambda X, **more: sl.fast_sp_svd(X, k, rank=rank, rng=0, **kw, **more)
    if name == "practical_sp_svd":
        c_p, r_p = practical_sp_svd_sizes(c + r, k)
        kw = dict(c=c_p, r=r_p, range_sketch=kind)
        rank = c_p if rank is None else rank
        return lambda X, **more: sl.practical_sp_svd(X, k, rank=rank, rng=0, **kw, **more)
    if name == "three_sketch_svd":
        c_t, r_t, sc_t, sr_t = three_sketch_svd_sizes(m * c + n * r + s_c * s_r, (m, n), k)
        kw = dict(c=c_t, r=r_t, s_c=sc_t, s_r=sr_t, range_sketch=kind, core_sketch=kind)
        rank = min(c_t, r_t) if rank is None else rank
        return lambda X, **more: sl.three_sketch_svd(X, k, rank=rank, rng=0, **kw, **more)
    from sklearn.utils.extmath import randomized_svd

    n_iter = 0 if name.endswith("n_iter=0") else "auto"
    return lambda X: randomized_svd(X, k, n_oversamples=c - k, n_iter=n_iter, random_state=0)


def column_blocks(A, width=BLOCK_COLUMNS):
    """A generator of A's column blocks, made one at a time (CSC slices when A is CSC)."""
    for j0 in range(0, A.shape[1], width):
        yield A[:, j0 : j0 + width]


class SinglePassSVD:
    params = [DATA, METHODS]
    param_names = ["data", "method"]
    timeout = 900

    def setup(self, data, name):
        common.require("fast_sp_svd", "practical_sp_svd", "three_sketch_svd")
        self.A = common.load(data)
        self.decompose = decomposer(name, self.A)
        self.decompose(self.A)  # compiles or loads the kernels

    def time_decompose(self, data, name):
        self.decompose(self.A)

    def peakmem_decompose(self, data, name):
        self.decompose(self.A)

    def track_error_ratio(self, data, name):
        common.require("lowrank_residual")
        U, s, Vt = self.decompose(self.A)
        best = common.best_rank_k_residual(data, self.A, K)
        return sl.lowrank_residual(self.A, U, s, Vt) / best - 1.0

    track_error_ratio.unit = "ratio"


class TallSinglePassSVD(SinglePassSVD):
    """A tall matrix whose range sketch (m x 2k) outgrows the last-level cache,
    where the single-pass SVDs take CholeskyQR2 for its thin QR (Householder's
    sweeps it once per column): the single-pass methods beside sklearn's
    randomized_svd without power iterations, the one-pass peer."""

    params = [[TALL], SINGLE_PASS + ["randomized_svd n_iter=0"]]


class SinglePassSVDStream:
    """The single-pass methods reading A as a stream of column blocks
    (``BLOCK_COLUMNS`` wide; CSC slices for sparse A), one block at a time."""

    params = [DATA, SINGLE_PASS]
    param_names = ["data", "method"]
    timeout = 900

    def setup(self, data, name):
        common.require("fast_sp_svd", "practical_sp_svd", "three_sketch_svd")
        A = common.load(data)
        self.A = A.tocsc() if sp.issparse(A) else A
        self.decompose = decomposer(name, self.A)
        self.time_column_blocks(data, name)  # compiles or loads the kernels

    def time_column_blocks(self, data, name):
        self.decompose(column_blocks(self.A), shape=self.A.shape)

    def peakmem_column_blocks(self, data, name):
        self.decompose(column_blocks(self.A), shape=self.A.shape)


class ErrorEstimateOverhead:
    """``fast_sp_svd`` with ``estimate_error`` off and on, same sizes and seed:
    the price of the error estimate's test sketch."""

    params = [DATA, [False, True]]
    param_names = ["data", "estimate_error"]
    timeout = 900

    def setup(self, data, estimate_error):
        common.require("fast_sp_svd", "ErrorEstimate")
        self.A = common.load(data)
        self.decompose = decomposer("fast_sp_svd", self.A)
        self.time_decompose(data, estimate_error)  # compiles or loads the kernels

    def time_decompose(self, data, estimate_error):
        self.decompose(self.A, estimate_error=estimate_error)

    def peakmem_decompose(self, data, estimate_error):
        self.decompose(self.A, estimate_error=estimate_error)
