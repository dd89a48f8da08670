"""sketchlab.lstsq and sketch_preconditioner against scipy's dense solvers.

Test problems are Epperly, Meier and Nakatsukasa's: A = U diag(s) V^T with
Haar U, V and singular values log-spaced from 1/kappa to 1, x of norm 1, and
b = A x + r with r orthogonal to range(A) of a prescribed norm.  The backward
error is the Karlson-Walden estimate computed with A's own SVD (within a
factor sqrt(2) of the exact backward error); bounds are multiples of the
unit roundoff u and of kappa.
"""

import pickle

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.sparse.linalg import lsqr

import sketchlab
from sketchlab import lstsq, sketch_preconditioner

from ._kinds import LSTSQ

EPS = np.finfo(np.float64).eps


def ls_problem(m, n, cond, res, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.standard_normal((m, n + 1)))
    V, _ = np.linalg.qr(rng.standard_normal((n, n)))
    s = np.logspace(-np.log10(cond), 0, n)
    A = (U[:, :n] * s) @ V.T
    x = rng.standard_normal(n)
    x /= np.linalg.norm(x)
    b = A @ x + res * U[:, n]
    return A.astype(dtype), b.astype(dtype), x


def kw_backward_error(A, b, x):
    """Karlson-Walden estimate with A's SVD, relative to ||A||_F (float64)."""
    A = A.toarray() if sp.issparse(A) else np.asarray(A, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    _, s, Vt = np.linalg.svd(A, full_matrices=False)
    r = b - A @ x
    if np.linalg.norm(r) == 0:
        return 0.0
    omega = np.linalg.norm(r) / np.linalg.norm(x)
    g = Vt @ (A.T @ r)
    return float(np.linalg.norm(g / np.sqrt(s**2 + omega**2)) / np.linalg.norm(x)
                 / np.linalg.norm(s))


CONDS = [1.0, 1e4, 1e8, 1e12]


@pytest.mark.parametrize("method", ["fossils", "spir"])
@pytest.mark.parametrize("cond", CONDS)
@pytest.mark.parametrize("res", [1e-6, 1.0])
def test_stable_methods_match_scipy(method, cond, res):
    A, b, _ = ls_problem(800, 30, cond, res)
    x_ref = sla.lstsq(A, b)[0]
    sol = lstsq(A, b, method=method, rng=1)
    x, rnorm = sol
    be_ref = kw_backward_error(A, b, x_ref)
    be = kw_backward_error(A, b, x)
    # backward error within 10x of scipy's (floored at the unit roundoff)
    assert be <= 10 * max(be_ref, EPS)
    # forward error: the perturbation bound for a backward error u
    normA = np.linalg.norm(A, 2)
    xn = np.linalg.norm(x_ref)
    bound = 10 * EPS * (cond + cond**2 * res / (normA * xn))
    assert np.linalg.norm(x - x_ref) <= bound * xn
    # residual: the optimal one up to u (||A|| ||x|| + kappa ||r||)
    assert abs(rnorm - np.linalg.norm(b - A @ x_ref)) <= 100 * EPS * (normA * xn + cond * res)
    # ... and the norm of b - A x up to the rounding of that difference
    assert abs(rnorm - np.linalg.norm(b - A @ x)) <= 10 * EPS * (normA * xn + np.linalg.norm(b))
    assert sol.converged and sol.backward_error <= EPS
    assert 0 < sol.iterations < 100
    assert sol.method == method and sol.sketch_size == 12 * 30 and sol.rank == 30


def test_default_sketch_size():
    from sketchlab._lstsq import default_sketch_size

    assert default_sketch_size(200000 * 500, 500) == 12 * 500
    assert default_sketch_size(10**7, 1000) == 4 * 1000  # a sparse A: the sketch stays small
    assert default_sketch_size(4 * 10**6, 1000) == 4 * 1000
    assert default_sketch_size(24000, 30) == 12 * 30  # small sketches: always 12 n


def test_sketch_and_solve_is_worse_at_high_condition_number():
    A, b, _ = ls_problem(800, 30, 1e12, 1e-6)
    be_ref = kw_backward_error(A, b, sla.lstsq(A, b)[0])
    res = lstsq(A, b, method="sketch-and-solve", rng=1)
    assert res.iterations == 0 and not res.converged
    assert kw_backward_error(A, b, res.x) > 1e3 * max(be_ref, EPS)


@pytest.mark.parametrize("method", ["blendenpik", "sketch-and-solve"])
def test_fast_methods_are_accurate_on_well_conditioned_problems(method):
    A, b, _ = ls_problem(800, 30, 10.0, 1e-3)
    x_ref = sla.lstsq(A, b)[0]
    x, _ = lstsq(A, b, method=method, rng=2)
    # sketch-and-solve: residual within (1 + O(sqrt(n/d))) of the optimum
    rtol = 1e-10 if method == "blendenpik" else 0.5
    r_ref = np.linalg.norm(b - A @ x_ref)
    assert np.linalg.norm(b - A @ x) <= (1 + rtol) * r_ref


def test_backward_error_estimate_tracks_reference():
    A, b, _ = ls_problem(600, 20, 1e6, 1e-2)
    for method in ("sketch-and-solve", "fossils"):
        res = lstsq(A, b, method=method, rng=3)
        ref = kw_backward_error(A, b, res.x)
        # the sketch's singular values stand in for A's: a small constant factor
        assert ref / 3 <= res.backward_error <= 3 * ref


@pytest.mark.parametrize("method", ["fossils", "spir", "blendenpik"])
def test_several_right_hand_sides(method):
    A, b, _ = ls_problem(700, 25, 1e6, 1e-4)
    rng = np.random.default_rng(5)
    B = np.column_stack([b, rng.standard_normal(700), A @ rng.standard_normal(25)])
    res = lstsq(A, B, method=method, rng=4)
    X, rnorm = res
    assert X.shape == (25, 3) and rnorm.shape == (3,)
    X_ref = sla.lstsq(A, B)[0]
    for j in range(3):
        be = kw_backward_error(A, B[:, j], X[:, j])
        assert be <= 10 * max(kw_backward_error(A, B[:, j], X_ref[:, j]), EPS)
    scale = np.linalg.norm(A, 2) * np.linalg.norm(X, axis=0) + np.linalg.norm(B, axis=0)
    assert np.all(abs(rnorm - np.linalg.norm(B - A @ X, axis=0)) <= 10 * EPS * scale)
    # a column alone gives the same answer up to rounding
    x0 = lstsq(A, B[:, 1], method=method, rng=4).x
    assert np.linalg.norm(x0 - X[:, 1]) <= 1e-8 * np.linalg.norm(X[:, 1])


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc"])
@pytest.mark.parametrize("method", ["fossils", "spir", "blendenpik", "sketch-and-solve"])
def test_damp_matches_augmented_solve(fmt, method):
    A, b, _ = ls_problem(500, 20, 1e8, 1e-3, seed=6)
    damp = 1e-3
    n = A.shape[1]
    x_ref = sla.lstsq(np.vstack([A, damp * np.eye(n)]), np.concatenate([b, np.zeros(n)]))[0]
    A_in = A if fmt == "dense" else getattr(sp, f"{fmt}_matrix")(A)
    res = lstsq(A_in, b, damp=damp, method=method, rng=7)
    # the damped problem has condition number <= 1 / damp = 1e3
    tol = 0.3 if method == "sketch-and-solve" else 1e-10
    assert np.linalg.norm(res.x - x_ref) <= tol * np.linalg.norm(x_ref)
    scale = np.linalg.norm(A, 2) * np.linalg.norm(res.x) + np.linalg.norm(b)
    assert abs(res.residual_norm - np.linalg.norm(b - A @ res.x)) <= 10 * EPS * scale


@pytest.mark.parametrize("fmt", ["C", "F", "csr", "csc", "coo"])
def test_formats(fmt):
    A, b, _ = ls_problem(600, 20, 1e10, 1e-5, seed=8)
    if fmt in ("C", "F"):
        A_in = np.asarray(A, order=fmt)
    else:
        A_in = getattr(sp, f"{fmt}_matrix")(A)
    x_ref = sla.lstsq(A, b)[0]
    x, _ = lstsq(A_in, b, rng=9)
    assert x.dtype == np.float64 and x.shape == (20,)
    assert kw_backward_error(A, b, x) <= 10 * max(kw_backward_error(A, b, x_ref), EPS)


def test_sparse_with_empty_rows_and_columns_scaled():
    rng = np.random.default_rng(10)
    A = sp.random(4000, 40, density=0.05, format="csr", random_state=11)
    A = (A @ sp.diags(np.logspace(0, 6, 40))).tocsr()
    A = sp.vstack([A, sp.csr_matrix((100, 40))]).tocsr()  # empty rows
    b = rng.standard_normal(A.shape[0])

    def normal_residual(x):
        r = b - A @ x
        return np.linalg.norm(A.T @ r) / (sp.linalg.norm(A) * np.linalg.norm(r))

    reference = normal_residual(sla.lstsq(A.toarray(), b)[0])
    # backward stable (the default tol): as good as a dense QR-based solve
    assert normal_residual(lstsq(A, b, rng=12).x) <= 10 * max(reference, EPS)
    # a smaller tol keeps iterating: here A^T r gets to its rounding floor
    assert normal_residual(lstsq(A, b, tol=1e-20, rng=12).x) <= 1e-14


def test_float32_policy():
    A, b, _ = ls_problem(600, 15, 1e3, 1e-2, dtype=np.float32)
    res = lstsq(A, b, rng=13)
    eps32 = np.finfo(np.float32).eps
    assert res.x.dtype == np.float32
    # backward stable at float32's roundoff (the problem itself is float32)
    assert kw_backward_error(A, b, res.x) <= 10 * eps32
    assert res.converged and res.backward_error <= eps32
    # float32 A with float64 b: computed in float64
    res64 = lstsq(A, b.astype(np.float64), rng=13)
    assert res64.x.dtype == np.float64
    assert kw_backward_error(A, b.astype(np.float64), res64.x) <= 10 * EPS


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc"])
@pytest.mark.parametrize("method", ["fossils", "spir", "blendenpik"])
@pytest.mark.parametrize("k", [1, 2])
def test_bit_identical_across_thread_counts(fmt, method, k):
    import numba
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(14)
    if fmt == "dense":
        A = rng.standard_normal((20000, 20)) * np.logspace(0, 6, 20)
    else:
        A = sp.random(200000, 20, density=0.05, format=fmt, random_state=15)
        A = A @ sp.diags(np.logspace(0, 6, 20))
        A = A.asformat(fmt)
    b = rng.standard_normal((A.shape[0], k)) if k > 1 else rng.standard_normal(A.shape[0])
    before = numba.get_num_threads()
    results = []
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            with threadpool_limits(limits=threads):
                results.append(lstsq(A, b, method=method, rng=16).x)
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(results[0], results[1])


def test_rank_deficient_gives_minimum_norm_solution():
    rng = np.random.default_rng(17)
    A = rng.standard_normal((700, 12)) @ rng.standard_normal((12, 30))  # rank 12
    b = rng.standard_normal(700)
    x_ref = sla.lstsq(A, b)[0]  # gelsd: the minimum-norm solution
    for method in ("fossils", "spir", "blendenpik"):
        res = lstsq(A, b, method=method, rng=18)
        assert res.rank == 12
        assert np.linalg.norm(res.x - x_ref) <= 1e-8 * np.linalg.norm(x_ref)
    # a zero column leaves x zero there
    A2 = np.hstack([A[:, :11], np.zeros((700, 1))])
    res = lstsq(A2, b, rng=19)
    assert res.rank == 11 and abs(res.x[-1]) <= 1e-12 * np.linalg.norm(res.x)


def test_zero_right_hand_side_and_exact_fit():
    A, _, x = ls_problem(300, 10, 1e3, 0.0)
    res = lstsq(A, np.zeros(300), rng=20)
    assert np.all(res.x == 0) and res.residual_norm == 0 and res.converged
    res = lstsq(A, A @ x, rng=20)
    assert np.linalg.norm(res.x - x) <= 1e-10


def test_result_type():
    A, b, _ = ls_problem(300, 10, 10.0, 0.1)
    res = lstsq(A, b, rng=21)
    assert isinstance(res, sketchlab.LstsqResult) and len(res) == 2
    x, rnorm = res
    assert x is res.x and rnorm == res.residual_norm
    back = pickle.loads(pickle.dumps(res))
    assert np.array_equal(back.x, res.x) and back.iterations == res.iterations
    assert back.backward_error == res.backward_error
    # seeded: the same x twice
    assert np.array_equal(lstsq(A, b, rng=21).x, x)


@pytest.mark.parametrize("sketch", LSTSQ)
def test_other_sketches(sketch):
    A, b, _ = ls_problem(500, 15, 1e8, 1e-4)
    x_ref = sla.lstsq(A, b)[0]
    res = lstsq(A, b, sketch=sketch, sketch_size=100, rng=22)
    assert res.sketch_size == 100
    assert kw_backward_error(A, b, res.x) <= 10 * max(kw_backward_error(A, b, x_ref), EPS)


def test_operator_as_sketch():
    A, b, _ = ls_problem(500, 15, 1e4, 1e-4)
    S = sketchlab.OSNAP(90, 500, nnz_per_col=4, rng=0)
    res = lstsq(A, b, sketch=S)
    assert res.sketch_size == 90 and res.converged
    with pytest.raises(ValueError, match="input_dim 500"):
        lstsq(A, b, sketch=sketchlab.OSNAP(90, 499, rng=0))
    with pytest.raises(ValueError, match="disagrees"):
        lstsq(A, b, sketch=S, sketch_size=91)


def test_maxiter_limits_iterations():
    A, b, _ = ls_problem(500, 15, 1e8, 1e-4)
    with pytest.warns(sketchlab.ConvergenceWarning, match="stopped after 3 iterations"):
        res = lstsq(A, b, maxiter=3, rng=23)
    assert res.iterations <= 3 and not res.converged
    loose = lstsq(A, b, tol=1e-8, rng=23)
    tight = lstsq(A, b, rng=23)
    assert loose.converged and loose.backward_error <= 1e-8
    assert loose.iterations < tight.iterations


@pytest.mark.parametrize("kwargs, error, match", [
    ({"A": np.ones((3, 5))}, ValueError, "must be tall"),
    ({"A": np.zeros((0, 3))}, ValueError, "at least one row"),
    ({"A": np.ones(5)}, ValueError, "2-D"),
    ({"A": np.array([[1.0, np.nan]] * 4)}, ValueError, "NaN or Inf"),
    ({"A": "abc"}, TypeError, "must be"),
    ({"A": np.array([[object()]] * 3)}, TypeError, "numeric"),
    ({"b": np.ones(7)}, ValueError, "b must have 6 rows"),
    ({"b": np.ones((6, 0))}, ValueError, "at least one column"),
    ({"b": np.ones((6, 2, 2))}, ValueError, "1-D or 2-D"),
    ({"b": np.array([np.inf] + [1.0] * 5)}, ValueError, "NaN or Inf"),
    ({"b": sp.csr_matrix(np.ones((6, 1)))}, TypeError, "dense"),
    ({"method": "qr"}, ValueError, "method must be one of"),
    ({"damp": -1.0}, ValueError, "damp must be"),
    ({"damp": np.nan}, ValueError, "damp must be"),
    ({"damp": True}, TypeError, "damp must be"),
    ({"damp": "1"}, TypeError, "damp must be"),
    ({"sketch_size": 1}, ValueError, "sketch_size must be an int in \\[2,"),
    ({"sketch_size": 2.5}, TypeError, "sketch_size must be an int"),
    ({"sketch": "leverage"}, ValueError, "sketch must be one of"),
    ({"sketch": 3}, ValueError, "sketch must be one of"),
    ({"tol": 0.0}, ValueError, "tol must be"),
    ({"tol": 2.0}, ValueError, "tol must be"),
    ({"maxiter": 0}, ValueError, "maxiter must be an int in \\[1,"),
    ({"rng": -1}, ValueError, "rng must be"),
])
def test_bad_input(kwargs, error, match):
    rng = np.random.default_rng(24)
    args = {"A": rng.standard_normal((6, 2)), "b": rng.standard_normal(6)}
    args.update(kwargs)
    A, b = args.pop("A"), args.pop("b")
    with pytest.raises(error, match=match):
        lstsq(A, b, **args)


def test_zero_matrix_rejected():
    with pytest.raises(ValueError, match="A is zero"):
        lstsq(np.zeros((10, 2)), np.ones(10), rng=0)


def test_preconditioner_with_lsqr_and_lsmr():
    from scipy.sparse.linalg import lsmr

    # LSQR on A P is not backward stable (Meier et al. 2024): a moderate kappa
    A, b, _ = ls_problem(2000, 40, 1e5, 1e-3, seed=25)
    x_ref = sla.lstsq(A, b)[0]  # forward error bound ~u (kappa + kappa^2 1e-3) = 2e-9
    pre = sketch_preconditioner(A, rng=26)
    AP, P = pre
    assert AP.shape == (2000, 40) and P.shape == (40, 40)
    assert pre.rank == 40 and pre.sketch_size == 480  # 12 n
    y, istop, itn = lsqr(AP, b, atol=1e-14, btol=1e-14, iter_lim=200)[:3]
    assert itn < 40
    x = P @ y
    assert np.linalg.norm(x - x_ref) <= 1e-6 * np.linalg.norm(x_ref)
    y2, _, itn2 = lsmr(AP, b, atol=1e-14, btol=1e-14, maxiter=200)[:3]
    assert itn2 < 40 and np.linalg.norm(P @ y2 - x_ref) <= 1e-6 * np.linalg.norm(x_ref)
    # without it LSQR does not get close in as many iterations
    x_plain = lsqr(A, b, atol=1e-14, btol=1e-14, iter_lim=itn)[0]
    assert np.linalg.norm(x_plain - x_ref) > 1e3 * np.linalg.norm(x - x_ref)
    # the preconditioned operator is close to orthonormal columns
    M = AP @ np.eye(40)
    s = np.linalg.svd(M, compute_uv=False)
    assert s[0] / s[-1] < 3


def test_preconditioner_damped_and_sparse():
    A, b, _ = ls_problem(1500, 30, 1e10, 1e-3, seed=27)
    damp = 1e-4
    A = sp.csr_matrix(A)
    AP, P = sketch_preconditioner(A, damp=damp, rng=28)
    assert AP.shape == (1530, 30)
    y = lsqr(AP, np.concatenate([b, np.zeros(30)]), atol=1e-14, btol=1e-14)[0]
    aug = np.vstack([A.toarray(), damp * np.eye(30)])
    x_ref = sla.lstsq(aug, np.concatenate([b, np.zeros(30)]))[0]
    assert np.linalg.norm(P @ y - x_ref) <= 1e-9 * np.linalg.norm(x_ref)
    # adjoint consistency of the operators
    rng = np.random.default_rng(29)
    u, v = rng.standard_normal(1530), rng.standard_normal(30)
    scale = np.linalg.norm(AP @ v) * np.linalg.norm(u)
    assert abs(np.dot(AP @ v, u) - np.dot(v, AP.rmatvec(u))) <= 1e-12 * scale


def test_preconditioner_bad_input():
    with pytest.raises(ValueError, match="must be tall"):
        sketch_preconditioner(np.ones((2, 3)))
    with pytest.raises(ValueError, match="damp must be"):
        sketch_preconditioner(np.ones((5, 3)), damp=-2)


@pytest.mark.slow
@pytest.mark.parametrize("cond", [1e13, 1e14, 1e15])
def test_extreme_condition_numbers(cond):
    A, b, _ = ls_problem(4000, 50, cond, 1e-3)
    be_ref = kw_backward_error(A, b, sla.lstsq(A, b)[0])
    for method in ("fossils", "spir"):
        x, _ = lstsq(A, b, method=method, rng=30)
        assert kw_backward_error(A, b, x) <= 10 * max(be_ref, EPS)


@pytest.mark.slow
def test_large_sparse_normal_equation_residual():
    rng = np.random.default_rng(31)
    A = sp.random(200000, 200, density=0.01, format="csr", random_state=32)
    A = (A @ sp.diags(np.logspace(0, 6, 200))).tocsr()
    b = rng.standard_normal(200000)
    x, _ = lstsq(A, b, rng=33)
    r = b - A @ x
    assert np.linalg.norm(A.T @ r) / (sp.linalg.norm(A) * np.linalg.norm(r)) <= 1e-12


def _conditioned(m, n, cond, seed):
    gen = np.random.default_rng(seed)
    U, _ = np.linalg.qr(gen.standard_normal((m, n)))
    V, _ = np.linalg.qr(gen.standard_normal((n, n)))
    return (U * np.logspace(0, -np.log10(cond), n)) @ V.T, gen.standard_normal(m)


@pytest.mark.parametrize("scale", [2.0 ** -1022, 1e-300, 2.0 ** -900, 1e-100, 1e-10, 1.0, 1e10,
                                   1e100, 1e300])
@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_the_answer_does_not_depend_on_the_scale_of_the_problem(scale, fmt):
    """Every stopping rule and tolerance is relative: A and b scaled by any
    factor from the smallest normal number to 1e300 give scipy's x (a 300 x
    12 problem of condition number 1e2 once returned x 137% away with
    converged=True and 0 iterations at 1e-100)."""
    A, b = _conditioned(300, 12, 1e2, 0)
    x_ref = sla.lstsq(A, b)[0]
    form = sp.csr_matrix if fmt == "csr" else np.asarray
    ref = lstsq(form(A), b, rng=0)
    As = form(A * scale)
    res = lstsq(As, b * scale, rng=0)
    assert res.converged and res.iterations > 0
    assert 0 < res.backward_error <= np.finfo(float).eps
    # forward error of a backward-stable solve with a large residual: about
    # cond^2 eps ||r|| / (||A|| ||x||), some 1e-13 here (the smallest scale
    # makes A's entries subnormal numbers, which keep fewer digits)
    rtol = 1e-8 if scale < 1e-300 else 1e-10
    np.testing.assert_allclose(res.x, x_ref, rtol=rtol, atol=0)
    np.testing.assert_allclose(res.residual_norm / scale, ref.residual_norm, rtol=rtol)
    if scale == 2.0 ** -900:  # an exact power of two, all entries normal: the same bits
        np.testing.assert_array_equal(res.x, ref.x)


def test_an_unconverged_solve_warns():
    """A sketch of n + 1 rows is a poor embedding: the iteration stops at
    maxiter far from the answer, and says so."""
    A, b = _conditioned(300, 12, 1e2, 0)
    with pytest.warns(sketchlab.ConvergenceWarning, match="backward error"):
        res = lstsq(A, b, sketch_size=13, rng=0)
    assert not res.converged
