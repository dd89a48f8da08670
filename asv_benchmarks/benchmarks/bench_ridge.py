"""Ridge regression: ``sketchlab.ridge`` beside scikit-learn's ``Ridge`` solvers.

Problems (issue 39's), each with a planted response ``b = A x* + noise``:

- ``decaying``: CSR, 1% density, standard normal values, column j scaled by
  1/j (``A^T A``'s eigenvalues fall off about as 1/j^2), at the alphas where
  the effective dimension ``d_eff(alpha) = sum lam / (lam + alpha)`` is about
  200 and 2,000 (computed from the columns' squared norms: the columns are
  nearly orthogonal, and this diagonal approximation is within 1% of the
  exact value at these sizes);
- ``debian-tfidf``: the TF-IDF matrix, alpha at d_eff about 200 and 2,000
  (Girard-Hutchinson estimates of the trace from probes solved along a path,
  :func:`alpha_for_effective_dimension`);
- ``flat``: as ``decaying`` with column j scaled by ``sqrt(1 - (j - 1) / d)``
  (eigenvalues spread evenly: no rank short of d pays), alpha 1.

Solvers: ``nystrom-pcg`` (``rank="auto"``), plain ``cg`` (ours), scikit-learn's
``Ridge(solver="sparse_cg")`` and ``"lsqr"`` (``fit_intercept=False``), each
run to a relative residual of the normal equations of 1e-8
(``track_normal_residual`` is the achieved one, computed afresh).  The
builders are shared with ``asv_benchmarks/compare.py``.
"""

import math

import numpy as np
import scipy.sparse as sp

from . import common

TOL = 1e-8
if common.QUICK:
    DECAYING = (20000, 1000)
    DEFFS = (50, 400)
else:
    DECAYING = (100000, 5000)
    DEFFS = (200, 2000)
FLAT_ALPHA = 1.0
PATH_ALPHAS = 20
SOLVERS = ["nystrom-pcg", "cg", "sklearn sparse_cg", "sklearn lsqr"]


def decaying_csr(m, d, density=0.01, seed=0, power=1.0):
    """CSR m x d, ``density`` nonzeros N(0, 1), column j scaled by j**-power."""
    gen = np.random.default_rng(seed)
    A = sp.random(m, d, density=density, format="csr", random_state=gen,
                  data_rvs=gen.standard_normal)
    return (A @ sp.diags(np.arange(1, d + 1, dtype=np.float64) ** -power)).tocsr()


def flat_csr(m, d, density=0.01, seed=0):
    """CSR m x d, column j scaled by ``sqrt(1 - (j - 1) / d)``: the eigenvalues
    of ``A^T A`` spread evenly from about ``density m`` down to ``density m / d``."""
    gen = np.random.default_rng(seed)
    A = sp.random(m, d, density=density, format="csr", random_state=gen,
                  data_rvs=gen.standard_normal)
    return (A @ sp.diags(np.sqrt(1.0 - np.arange(d) / d))).tocsr()


def planted(A, seed=1, noise=0.1):
    """``b = A x* + noise``, x* standard normal, the noise ``noise`` times the
    root mean square of ``A x*``."""
    gen = np.random.default_rng(seed)
    Ax = A @ gen.standard_normal(A.shape[1])
    return Ax + noise * np.sqrt(np.mean(Ax ** 2)) * gen.standard_normal(A.shape[0])


def effective_dimension_diag(A, alpha):
    """``sum c / (c + alpha)`` over the columns' squared norms c."""
    c = np.asarray(A.multiply(A).sum(axis=0)).ravel()
    return float(np.sum(c / (c + alpha)))


def alpha_by_bisection(deff, target, lo=1e-12, hi=1e12):
    """The alpha where the decreasing function ``deff(alpha)`` is ``target``
    (bisection in log alpha, 60 steps)."""
    a, b = math.log(lo), math.log(hi)
    for _ in range(60):
        mid = (a + b) / 2
        if deff(math.exp(mid)) > target:
            a = mid
        else:
            b = mid
    return math.exp((a + b) / 2)


def alpha_for_effective_dimension(A, targets, seed=0):
    """Alphas where the effective dimension of A is about each target, from
    Girard-Hutchinson estimates (8 Rademacher probes solved along a path of
    12 alphas from 1,000 times the mean eigenvalue of ``A^T A`` down to half
    of it, ``sketchlab._ridge.ridge_run(trace="probes")``), interpolated in
    log alpha / log d_eff; a target outside the range gets its end."""
    from sketchlab._linear_map import as_linear_map
    from sketchlab._ridge import ridge_run

    ops = as_linear_map(A)
    d = A.shape[1]
    mean = float(A.multiply(A).sum()) / d  # the mean eigenvalue of A^T A
    # d_eff falls from about d / 2 at the mean eigenvalue towards 0 above it;
    # a smaller alpha is a slow solve, and not wanted for targets below d / 2
    alphas = np.geomspace(mean * 1e3, mean * 0.5, 12)
    res = ridge_run(ops, np.zeros((A.shape[0], 1)), alphas, tol=1e-6, maxiter=2000,
                    gen=np.random.default_rng(seed), trace="probes")
    deff = np.maximum(np.asarray(res.effective_dimension, dtype=float), 1e-3)
    out = []
    for target in targets:
        # d_eff decreases with alpha: interpolate log alpha against log d_eff
        order = np.argsort(deff)
        out.append(float(np.exp(np.interp(np.log(target), np.log(deff[order]),
                                           np.log(alphas[order])))))
    return out


def normal_residual(A, b, alpha, x):
    """``||A^T b - (A^T A + alpha I) x|| / ||A^T b||`` (float64)."""
    g = A.T @ b
    return float(np.linalg.norm(A.T @ (A @ x) + alpha * x - g) / np.linalg.norm(g))


def solver(name, tol=TOL):
    """``(A, b, alpha) -> x`` to a relative normal-equation residual ``tol``."""
    import warnings

    import sketchlab

    if name.startswith("sklearn"):
        from sklearn.linear_model import Ridge

        kind = name.split()[1]

        def run(A, b, alpha):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = Ridge(alpha=alpha, solver=kind, tol=tol, fit_intercept=False,
                              max_iter=100000).fit(A, b)
            return model.coef_
        return run
    method = name
    return lambda A, b, alpha: sketchlab.ridge(A, b, alpha, method=method, tol=tol, rng=0).x


def path_alphas(alpha, count=PATH_ALPHAS, decades=2.0):
    """``count`` alphas log-spaced from ``alpha`` up to ``10**decades alpha``."""
    return np.geomspace(alpha, alpha * 10 ** decades, count)


class RidgeDecaying:
    params = [list(DEFFS), SOLVERS]
    param_names = ["d_eff", "solver"]
    timeout = 1200

    def setup(self, deff, name):
        common.require("ridge")
        self.A = decaying_csr(*DECAYING)
        self.b = planted(self.A)
        self.alpha = alpha_by_bisection(lambda a: effective_dimension_diag(self.A, a), deff)
        self.solve = solver(name)
        self.x = self.solve(self.A, self.b, self.alpha)  # compiles, and the answer

    def time_solve(self, deff, name):
        self.solve(self.A, self.b, self.alpha)

    def track_normal_residual(self, deff, name):
        return normal_residual(self.A, self.b, self.alpha, self.x)


class RidgePath:
    """A path of 20 alphas from one sketch (from d_eff's alpha up two
    decades) beside one solve at its smallest alpha and 20 separate solves."""

    params = [list(DEFFS), ["path", "one solve", "separate solves"]]
    param_names = ["d_eff", "how"]
    timeout = 1200

    def setup(self, deff, how):
        common.require("ridge")
        import sketchlab

        self.A = decaying_csr(*DECAYING)
        self.b = planted(self.A)
        alpha = alpha_by_bisection(lambda a: effective_dimension_diag(self.A, a), deff)
        alphas = path_alphas(alpha)
        A, b = self.A, self.b
        self.run = {
            "path": lambda: sketchlab.ridge(A, b, alphas, tol=TOL, rng=0),
            "one solve": lambda: sketchlab.ridge(A, b, alpha, tol=TOL, rng=0),
            "separate solves": lambda: [sketchlab.ridge(A, b, a, tol=TOL, rng=0)
                                        for a in alphas],
        }[how]
        sketchlab.ridge(A[:2000], b[:2000], alpha, tol=TOL, rng=0)  # compile

    def time_solve(self, deff, how):
        self.run()


class RidgeFlat:
    """The negative case: a flat spectrum, the preconditioner does not pay."""

    params = [["nystrom-pcg", "cg", "sklearn sparse_cg"]]
    param_names = ["solver"]
    timeout = 1200

    def setup(self, name):
        common.require("ridge")
        self.A = flat_csr(*DECAYING)
        self.b = planted(self.A)
        self.solve = solver(name)
        self.x = self.solve(self.A, self.b, FLAT_ALPHA)

    def time_solve(self, name):
        self.solve(self.A, self.b, FLAT_ALPHA)

    def track_normal_residual(self, name):
        return normal_residual(self.A, self.b, FLAT_ALPHA, self.x)
