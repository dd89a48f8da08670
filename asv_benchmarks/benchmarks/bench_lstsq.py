"""Least squares: ``sketchlab.lstsq`` beside scipy's direct and iterative solvers.

Dense: ``lstsq`` (FOSSILS, SPIR, the warm-started sketch-and-precondition,
sketch-and-solve) beside ``scipy.linalg.lstsq`` with the gelsd and gelsy
drivers, on ``A = G D Q^T`` (Gaussian G, D log-spaced from 1 to 1/kappa,
Haar Q: condition number about kappa) and ``b = A x + noise``.
``track_backward_error`` is the Karlson-Walden estimate relative to
``||A||_F``, computed the same way for every solver with the SVD of an
independent sketch in place of A's (see :func:`kw_estimate`).

Sparse: ``lstsq`` beside ``scipy.sparse.linalg.lsqr`` and ``lsmr`` without a
preconditioner, on a CSR matrix with a fixed number of nonzeros per row at
random columns, columns scaled by ``logspace(0, log10 kappa, n)``;
``track_normal_residual`` is ``||A^T r|| / (||A||_F ||r||)``.

The problem builders are shared with ``asv_benchmarks/compare.py``.
"""

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from . import common

if common.QUICK:
    DENSE = [(30000, 250)]
    SPARSE = [(100000, 100, 10)]
else:
    DENSE = [(30000, 250), (200000, 500)]
    SPARSE = [(100000, 100, 10), (1000000, 1000, 10)]
DENSE_KAPPA = 1e8
SPARSE_KAPPA = 1e6
DENSE_SOLVERS = ["fossils", "spir", "blendenpik", "sketch-and-solve", "scipy gelsd",
                 "scipy gelsy"]
SPARSE_SOLVERS = ["fossils", "spir", "lsqr", "lsmr"]
# the unpreconditioned iterative peers stop at the normal-equation target or here
ITERATIVE_LIMIT = 2000
NORMAL_TARGET = 1e-12


def dense_problem(m, n, kappa=DENSE_KAPPA, seed=0):
    """``(A, b)``: C-ordered ``A = G D Q^T`` (condition number about kappa)
    and ``b = A x + 0.01 ||A x|| / sqrt(m) noise``."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n))
    A *= np.logspace(0, -np.log10(kappa), n)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    A = np.ascontiguousarray(A @ Q.T)
    x = rng.standard_normal(n)
    Ax = A @ x
    b = Ax + 0.01 * np.linalg.norm(Ax) / np.sqrt(m) * rng.standard_normal(m)
    return A, b


def sparse_problem(m, n, per_row, kappa=SPARSE_KAPPA, seed=0):
    """``(A, b)``: CSR, ``per_row`` nonzeros per row at random distinct-ish
    columns (duplicates summed), values N(0, 1), columns scaled to condition
    number about kappa; ``b`` standard normal (a large residual)."""
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, n, size=m * per_row, dtype=np.int32)
    data = rng.standard_normal(m * per_row)
    indptr = np.arange(0, m * per_row + 1, per_row, dtype=np.int64)
    A = sp.csr_matrix((data, indices, indptr), shape=(m, n))
    A.sum_duplicates()
    A = A @ sp.diags(np.logspace(0, np.log10(kappa), n))
    A = A.tocsr()
    return A, rng.standard_normal(m)


def matrix_bytes(A):
    if sp.issparse(A):
        return A.data.nbytes + A.indices.nbytes + A.indptr.nbytes
    return A.nbytes


class SketchSVD:
    """``(V, s, ||A||_F)`` from the SVD of an OSNAP sketch of A with its own
    seed (4 n rows), for backward-error estimates of any solver's answer."""

    def __init__(self, A, seed=12345):
        import sketchlab

        m, n = A.shape
        S = sketchlab.OSNAP(4 * n, m, nnz_per_col=8, rng=seed)
        _, s, Vt = np.linalg.svd(S @ A, full_matrices=False)
        self.V, self.s = Vt.T, s
        self.normF = float(np.linalg.norm(A.data) if sp.issparse(A) else np.linalg.norm(s))

    def kw_estimate(self, A, b, x):
        """Karlson-Walden estimate of the backward error of x, relative to ||A||_F."""
        r = b - A @ x
        rn, xn = np.linalg.norm(r), np.linalg.norm(x)
        if rn == 0:
            return 0.0
        omega = rn / xn
        g = self.V.T @ (A.T @ r)
        return float(np.linalg.norm(g / np.sqrt(self.s**2 + omega**2)) / xn / self.normF)


def normal_residual(A, b, x):
    """``||A^T r|| / (||A||_F ||r||)``."""
    r = b - A @ x
    normF = np.linalg.norm(A.data) if sp.issparse(A) else np.linalg.norm(A)
    return float(np.linalg.norm(A.T @ r) / (normF * np.linalg.norm(r)))


def dense_solver(name):
    """``(A, b) -> x``."""
    import sketchlab

    if name.startswith("scipy"):
        driver = name.split()[1]
        return lambda A, b: sla.lstsq(A, b, lapack_driver=driver, check_finite=False)[0]
    return lambda A, b: sketchlab.lstsq(A, b, method=name, rng=0).x


def sparse_solver(name, limit=ITERATIVE_LIMIT):
    """``(A, b) -> x``: ours at its defaults; lsqr / lsmr stop at the normal-
    equation target (their ``atol`` test) or after ``limit`` iterations."""
    import sketchlab
    from scipy.sparse.linalg import lsmr, lsqr

    if name == "lsqr":
        return lambda A, b: lsqr(A, b, atol=NORMAL_TARGET, btol=0, iter_lim=limit)[0]
    if name == "lsmr":
        return lambda A, b: lsmr(A, b, atol=NORMAL_TARGET, btol=0, maxiter=limit)[0]
    return lambda A, b: sketchlab.lstsq(A, b, method=name, rng=0).x


class LstsqDense:
    params = [[f"{m}x{n}" for m, n in DENSE], DENSE_SOLVERS]
    param_names = ["shape", "solver"]
    timeout = 900

    def setup(self, shape, name):
        common.require("lstsq")
        m, n = map(int, shape.split("x"))
        self.A, self.b = dense_problem(m, n)
        self.solve = dense_solver(name)
        self.x = self.solve(self.A, self.b)  # warm-up (compilation) and the answer

    def time_solve(self, shape, name):
        self.solve(self.A, self.b)

    def peakmem_solve(self, shape, name):
        self.solve(self.A, self.b)

    def track_backward_error(self, shape, name):
        return SketchSVD(self.A).kw_estimate(self.A, self.b, self.x)


class LstsqSparse:
    params = [[f"{m}x{n}x{p}" for m, n, p in SPARSE], SPARSE_SOLVERS]
    param_names = ["shape", "solver"]
    timeout = 900

    def setup(self, shape, name):
        common.require("lstsq")
        m, n, p = map(int, shape.split("x"))
        self.A, self.b = sparse_problem(m, n, p)
        self.solve = sparse_solver(name)
        self.x = self.solve(self.A, self.b)

    def time_solve(self, shape, name):
        self.solve(self.A, self.b)

    def peakmem_solve(self, shape, name):
        self.solve(self.A, self.b)

    def track_normal_residual(self, shape, name):
        return normal_residual(self.A, self.b, self.x)


# ---- compare.py's rows (section "lstsq": the dense problem; the CSR rows, whose peers stop
# at a time limit, are in compare.py) --------------------------------------------------------

_SHAPE = "{}x{}".format(*DENSE[-1])


def _dense(solver, call="time_solve"):
    return common.Call(LstsqDense, (_SHAPE, solver), call)


_PEERS = [_dense("scipy gelsy"), _dense("scipy gelsd")]
TARGETS = [
    common.Target(
        "lstsq", f"lstsq fossils dense {_SHAPE} kappa 1e8 vs", [_dense("fossils"), *_PEERS],
        "ratio", 3.0, "lstsq gelsy/gelsd (faster)", combine=lambda t, _: (t[0], min(t[1:])),
        why="sketchlab.lstsq (FOSSILS, default settings) against the faster of "
        "scipy.linalg.lstsq's gelsy and gelsd drivers on a dense C-ordered A = G D Q^T of "
        "condition number ~1e8: a sketch, a small QR and a few dozen passes over A instead of "
        "an O(m n^2) factorization; at least 3x faster."),
    common.Target(
        "lstsq", "  lstsq spir vs", [_dense("spir"), *_PEERS], "ratio", None,
        "lstsq gelsy/gelsd (faster)", combine=lambda t, _: (t[0], min(t[1:]))),
    common.Target(
        "lstsq", "  fossils backward error / scipy's",
        [_dense("fossils", "track_backward_error"), _dense("scipy gelsy", "track_backward_error"),
         _dense("scipy gelsd", "track_backward_error")], "value", 10.0,
        combine=lambda v, _: v[0] / max(min(v[1:]), 1e-300),
        why="Karlson-Walden backward-error estimates (the SVD of an independent sketch in place "
        "of A's, the same for every answer), relative to ||A||_F: FOSSILS is backward stable, "
        "within 10x of the better of the two LAPACK drivers' answers."),
]
