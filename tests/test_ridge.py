"""sketchlab.ridge against numpy's solve of the normal equations.

Small problems, the solution of ``(A^T A + alpha I) x = A^T b`` by
``numpy.linalg.solve`` of the explicitly formed matrix; the bounds are
multiples of tol times the condition number where the answer is iterative.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import aslinearoperator

import sketchlab
from sketchlab import ridge
from sketchlab._config import serial_blas
from sketchlab._linear_map import as_linear_map, centered
from sketchlab._ridge import NystromPreconditioner, _Spectrum, check_alphas

from ._support import as_form, on_one_and_two_threads


def decaying(m=1500, d=200, density=0.05, seed=0, dtype=np.float64):
    """A sparse A whose column j is scaled by 1/j (A^T A's eigenvalues fall
    off about as 1/j^2), and a right-hand side."""
    A = sp.random(m, d, density=density, format="csr", random_state=seed,
                  data_rvs=np.random.default_rng(seed).standard_normal)
    A = (A @ sp.diags(1.0 / np.arange(1, d + 1))).tocsr().astype(dtype)
    b = np.random.default_rng(seed + 1).standard_normal(m).astype(dtype)
    return A, b


def with_spectrum(m, d, singular_values, seed):
    """A dense m x d ``U diag(singular_values) V^T`` (Haar U, V), formed on one
    BLAS thread (threads spinning on a loaded machine slow BLAS down a lot)."""
    gen = np.random.default_rng(seed)
    with serial_blas():
        U, _ = np.linalg.qr(gen.standard_normal((m, d)))
        V, _ = np.linalg.qr(gen.standard_normal((d, d)))
        return (U * singular_values) @ V.T, gen.standard_normal(m)


def flat(m=3000, d=150, seed=0):
    """A dense A whose singular values are spread evenly over [0.5, 1]."""
    return with_spectrum(m, d, np.linspace(1.0, 0.5, d), seed)


def exact(A, b, alpha):
    D = A.toarray() if sp.issparse(A) else np.asarray(A)
    D = D.astype(np.float64)
    return np.linalg.solve(D.T @ D + alpha * np.eye(D.shape[1]), D.T @ np.asarray(b, float))


def normal_residual(A, b, alpha, x):
    D = A.toarray() if sp.issparse(A) else np.asarray(A, dtype=np.float64)
    g = D.T @ b
    return np.linalg.norm(D.T @ (D @ x) + alpha * x - g, axis=0) / np.linalg.norm(g, axis=0)


@pytest.mark.parametrize("method", ["nystrom-pcg", "cg", "direct"])
@pytest.mark.parametrize("form", ["dense-C", "dense-F", "csr", "csc", "csr-unsorted-dup"])
def test_every_method_and_form_solves_the_normal_equations(method, form):
    A, b = decaying()
    x_ref = exact(A, b, 1e-3)
    res = ridge(as_form(A.toarray(), form), b, 1e-3, method=method, tol=1e-12, rng=0)
    assert res.converged and res.residual <= 1e-12
    assert res.x.shape == (200,) and res.x.dtype == np.float64
    np.testing.assert_allclose(res.x, x_ref, rtol=1e-7, atol=1e-9 * np.abs(x_ref).max())
    assert normal_residual(A, b, 1e-3, res.x) <= 1e-11


def test_a_linear_operator_and_a_linear_map():
    A, b = decaying(seed=3)
    x_ref = exact(A, b, 1e-2)
    for given in (aslinearoperator(A), as_linear_map(A)):
        res = ridge(given, b, 1e-2, tol=1e-12, rng=0)
        np.testing.assert_allclose(res.x, x_ref, rtol=1e-7, atol=1e-9 * np.abs(x_ref).max())
    # a centred map: the columns of A centred implicitly
    mu = np.asarray(A.mean(axis=0)).ravel()
    res = ridge(centered(as_linear_map(A)), b, 1e-2, tol=1e-12, rng=0)
    np.testing.assert_allclose(res.x, exact(A.toarray() - mu, b, 1e-2), rtol=1e-7,
                               atol=1e-9 * np.abs(x_ref).max())


def test_the_preconditioner_cuts_the_steps_where_the_spectrum_decays():
    A, b = decaying(m=2000, d=300, density=0.03)
    plain = ridge(A, b, 1e-4, method="cg", tol=1e-10)
    pre = ridge(A, b, 1e-4, tol=1e-10, rng=0)
    assert pre.method == "nystrom-pcg" and not pre.fell_back and pre.rank >= 16
    assert pre.iterations < 0.5 * plain.iterations
    np.testing.assert_allclose(pre.x, plain.x, rtol=1e-6, atol=1e-8 * np.abs(plain.x).max())
    # a given rank, and a rank of d: the preconditioner is then exact
    fixed = ridge(A, b, 1e-4, rank=64, tol=1e-10, rng=0)
    assert fixed.rank == 64 and fixed.iterations < plain.iterations
    full = ridge(A, b, 1e-4, rank=300, tol=1e-10, rng=0)
    assert full.rank == 300 and full.iterations <= 5


def test_a_flat_spectrum_falls_back_to_plain_cg_and_says_so():
    A, b = flat()
    res = ridge(A, b, 1e-3, tol=1e-10, rng=0)
    plain = ridge(A, b, 1e-3, method="cg", tol=1e-10)
    assert res.converged and res.method == "cg"
    # either the probe finished the solve, or the sketch was found not to pay
    assert res.rank == 0
    assert res.iterations <= plain.iterations + 2
    x_ref = exact(A, b, 1e-3)
    np.testing.assert_allclose(res.x, x_ref, rtol=1e-8, atol=1e-8 * np.abs(x_ref).max())


def test_flat_spectrum_with_many_steps_sketches_then_falls_back():
    """Evenly spread eigenvalues from 1 down to 1e-4 (alpha 1e-6): plain CG
    needs many steps, and no rank short of d would cut them."""
    A, b = with_spectrum(2000, 300, np.sqrt(np.linspace(1.0, 1e-4, 300)), 5)
    res = ridge(A, b, 1e-6, tol=1e-8, rng=0)
    assert res.fell_back and res.method == "cg" and res.rank == 0
    assert res.converged
    np.testing.assert_allclose(normal_residual(A, b, 1e-6, res.x), res.residual, rtol=1e-3)


def test_a_path_equals_separate_solves():
    A, b = decaying(seed=7)
    alphas = np.logspace(-4, 1, 6)
    path = ridge(A, b, alphas, tol=1e-12, rng=0)
    assert path.x.shape == (200, 6) and path.residual.shape == (6,)
    assert path.effective_dimension.shape == (6,)
    assert np.all(np.diff(path.effective_dimension) < 0)
    for j, alpha in enumerate(alphas):
        x_ref = exact(A, b, alpha)
        np.testing.assert_allclose(path.x[:, j], x_ref, rtol=1e-7,
                                   atol=1e-9 * np.abs(x_ref).max())
        alone = ridge(A, b, alpha, tol=1e-12, rng=0)
        np.testing.assert_allclose(path.x[:, j], alone.x, rtol=1e-7,
                                   atol=1e-9 * np.abs(x_ref).max())


def test_several_right_hand_sides_with_a_path():
    A, b = decaying(seed=11)
    B = np.column_stack([b, np.random.default_rng(2).standard_normal(b.size), np.zeros(b.size)])
    alphas = [1e-3, 1.0]
    res = ridge(A, B, alphas, tol=1e-12, rng=0)
    assert res.x.shape == (200, 3, 2) and res.residual.shape == (3, 2)
    assert res.history.shape[1] == 6
    for j in range(2):
        for a, alpha in enumerate(alphas):
            x_ref = exact(A, B[:, j], alpha)
            np.testing.assert_allclose(res.x[:, j, a], x_ref, rtol=1e-7,
                                       atol=1e-9 * np.abs(x_ref).max())
    assert np.all(res.x[:, 2] == 0) and np.all(res.residual[2] == 0)
    one = ridge(A, B, 0.5, method="direct")
    assert one.x.shape == (200, 3) and one.residual.shape == (3,)


def test_alpha_zero_is_least_squares_and_minimum_norm_when_rank_deficient():
    A, b = decaying(m=800, d=60, density=0.2, seed=2)
    D = A.toarray()
    res = ridge(A, b, 0.0, tol=1e-12, rng=0)
    np.testing.assert_allclose(res.x, np.linalg.lstsq(D, b, rcond=None)[0], rtol=1e-6)
    # two equal columns: the minimum-norm solution splits their weight
    D2 = np.hstack([D, D[:, :1]])
    for method in ("nystrom-pcg", "cg"):
        res = ridge(D2, b, 0.0, method=method, tol=1e-10, rng=0)
        x_ref = np.linalg.lstsq(D2, b, rcond=None)[0]
        np.testing.assert_allclose(res.x, x_ref, rtol=1e-5, atol=1e-8 * np.abs(x_ref).max())


@pytest.mark.parametrize("e", [-996, -500, 500, 996])
def test_every_rule_is_relative(e):
    """A scaled by 2**e with alpha by 2**(2e) (where it is a float), b by
    2**e: the same iterates, so the same bits; b alone by 1e-300 or 1e300."""
    A, b = decaying(seed=4)
    ref = ridge(A, b, 1e-3, tol=1e-10, rng=0)
    As = A.copy()
    As.data = np.ldexp(As.data, e)
    if abs(e) <= 500:
        got = ridge(As, np.ldexp(b, e), np.ldexp(1e-3, 2 * e), tol=1e-10, rng=0)
        np.testing.assert_array_equal(got.x, ref.x)
        assert got.iterations == ref.iterations and got.rank == ref.rank
    else:  # alpha * 2**(2e) is no float: least squares, A far from 1
        tall = ridge(A, b, 0.0, tol=1e-10, rng=0)
        got = ridge(As, b, 0.0, tol=1e-10, rng=0)
        np.testing.assert_allclose(np.ldexp(got.x, e), tall.x, rtol=1e-12)
        assert got.converged
    for s in (1e-300, 1e300):  # not a power of two: b * s rounds, x agrees to tol
        got = ridge(A, b * s, 1e-3, tol=1e-10, rng=0)
        assert got.converged and got.residual <= 1e-10
        assert normal_residual(A, b, 1e-3, got.x / s) <= 2e-10
        np.testing.assert_allclose(got.x / s, ref.x, rtol=1e-6, atol=1e-8 * np.abs(ref.x).max())


def test_float32_stays_float32():
    A, b = decaying(dtype=np.float32, seed=6)
    res = ridge(A, b, 1e-2, rng=0)
    assert res.x.dtype == np.float32 and res.converged
    assert res.residual <= np.sqrt(np.finfo(np.float32).eps)
    x_ref = exact(A, b, 1e-2)
    assert np.linalg.norm(res.x - x_ref) <= 1e-2 * np.linalg.norm(x_ref)
    # float32 A with float64 b: float64
    assert ridge(A, b.astype(np.float64), 1e-2, rng=0).x.dtype == np.float64


def test_the_same_bits_for_one_and_two_threads():
    A, b = decaying(m=4000, d=300, density=0.05, seed=8)
    D = A.toarray()
    out = on_one_and_two_threads(
        lambda: [ridge(X, b, [1e-5, 1e-2], tol=1e-10, rng=0).x for X in (A, D)])
    for one, many in zip(*out):
        np.testing.assert_array_equal(one, many)


def test_unconverged_warns_and_says_so():
    A, b = decaying(seed=9)
    with pytest.warns(sketchlab.ConvergenceWarning, match="ridge"):
        res = ridge(A, b, 1e-6, method="cg", tol=1e-12, maxiter=5)
    assert not res.converged and res.iterations == 5
    assert res.history.shape == (6, 1)
    assert res.residual > 1e-12


def test_history_and_counts():
    A, b = decaying(seed=10)
    res = ridge(A, b, 1e-2, tol=1e-10, rng=0)
    assert res.history.shape == (res.iterations + 1, 1)
    assert res.history[0, 0] == 1.0 and res.history[-1, 0] <= 1e-10
    assert res.matvecs > 2 * res.iterations
    x, = res
    assert x is res.x


def test_effective_dimension_of_a_rich_sketch():
    """With a rank of d the sketch is exact, and so is its estimate."""
    A, b = decaying(m=1000, d=80, density=0.2, seed=12)
    w = np.linalg.eigvalsh((A.T @ A).toarray())
    res = ridge(A, b, [1e-3, 1e-1], rank=80, rng=0)
    want = [np.sum(w / (w + a)) for a in (1e-3, 1e-1)]
    np.testing.assert_allclose(res.effective_dimension, want, rtol=1e-6)


def test_the_preconditioner_of_an_exact_factorization():
    """With the eigenpairs of H itself, ``P^-1 (H + alpha I)`` has the
    eigenvalues ``lam_l + alpha`` (captured) and ``lam_j + alpha`` (rest)."""
    gen = np.random.default_rng(0)
    d, l = 40, 10
    with serial_blas():
        V, _ = np.linalg.qr(gen.standard_normal((d, d)))
    lam = np.geomspace(100, 1e-3, d)
    H = (V * lam) @ V.T
    alphas = np.array([1e-2, 0.0])
    P = NystromPreconditioner(lam[:l], V[:, :l], alphas, np.float64)
    for c, alpha in enumerate(alphas):
        M = P(H + alpha * np.eye(d), np.full(d, c))
        got = np.sort(np.linalg.eigvals(M).real)
        want = np.sort(np.concatenate([np.full(l, lam[l - 1] + alpha), lam[l:] + alpha]))
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-12)


def test_the_spectrum_model_extrapolates_a_power_law():
    lam = 1.0 / np.arange(1, 65) ** 2
    model = _Spectrum(lam, 1000)
    assert model.power == pytest.approx(2.0, rel=0.05)
    np.testing.assert_allclose(model.at(np.array([1, 32, 64, 128])),
                               [1.0, 1 / 32**2, 1 / 64**2, 1 / 128**2], rtol=0.1)
    assert model.at(np.array([1001]))[0] == 0.0


@pytest.mark.parametrize("alpha, match", [
    (-1.0, "alpha must be finite and >= 0"), (np.nan, "alpha must be finite"),
    ([[1.0]], "non-empty 1-D"), ([], "non-empty 1-D"), ("x", "alpha must be a number"),
    (True, "alpha must be a number"),
])
def test_bad_alpha(alpha, match):
    A, b = decaying()
    with pytest.raises((ValueError, TypeError), match=match):
        ridge(A, b, alpha)


@pytest.mark.parametrize("kwargs, match", [
    ({"method": "lsqr"}, "method"), ({"rank": 0}, "rank"), ({"rank": "big"}, "rank"),
    ({"rank": 1.5}, "rank"), ({"tol": 0.0}, "tol"), ({"tol": 1.0}, "tol"),
    ({"maxiter": 0}, "maxiter"), ({"rng": -1}, "rng"),
])
def test_bad_parameters(kwargs, match):
    A, b = decaying()
    with pytest.raises((ValueError, TypeError), match=match):
        ridge(A, b, 1.0, **kwargs)


def test_bad_matrices_and_right_hand_sides():
    A, b = decaying()
    with pytest.raises(ValueError, match="b must have 1500 rows"):
        ridge(A, b[:-1], 1.0)
    with pytest.raises(ValueError, match="at least one column"):
        ridge(A, np.zeros((1500, 0)), 1.0)
    bad = b.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match="b"):
        ridge(A, bad, 1.0)
    D = A.toarray()
    D[0, 0] = np.inf
    with pytest.raises(ValueError, match="A"):
        ridge(D, b, 1.0)
    with pytest.raises(ValueError, match="at least one row and one column"):
        ridge(np.zeros((5, 0)), np.zeros(5), 1.0)
    with pytest.raises(TypeError):
        ridge(np.array([["a", "b"]]), np.zeros(1), 1.0)


def test_direct_refuses_a_huge_d(monkeypatch):
    import sketchlab._ridge as module

    monkeypatch.setattr(module, "_DIRECT_MAX_COLUMNS", 100)
    A, b = decaying()
    with pytest.raises(ValueError, match="at most 100 columns"):
        ridge(A, b, 1.0, method="direct")


def test_check_alphas():
    assert check_alphas(2)[1] is False and check_alphas([1, 2])[1] is True
    np.testing.assert_array_equal(check_alphas(np.float32(0.5))[0], [0.5])


def test_zero_right_hand_side_and_zero_matrix():
    A, b = decaying()
    res = ridge(A, np.zeros_like(b), 1.0, rng=0)
    assert np.all(res.x == 0) and res.converged and res.residual == 0
    res = ridge(sp.csr_matrix(A.shape), b, 1.0, rng=0)
    assert np.all(res.x == 0) and res.converged
