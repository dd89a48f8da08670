"""The one conjugate-gradient routine (sketchlab._cg) against numpy's solve."""

import numpy as np
import pytest

from sketchlab._cg import ConjugateGradients, pcg


def _spd(n, cond, seed):
    gen = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(gen.standard_normal((n, n)))
    return (Q * np.logspace(0, -np.log10(cond), n)) @ Q.T


def test_block_right_hand_sides_converge_each_to_the_solution():
    A = _spd(60, 1e3, 0)
    B = np.random.default_rng(1).standard_normal((60, 3))
    B[:, 2] = 0.0  # a zero column is solved at once
    out = pcg(lambda V: A @ V, B, tol=1e-10, maxiter=500)
    assert out.converged
    np.testing.assert_allclose(out.X, np.linalg.solve(A, B), rtol=0, atol=1e-6)
    assert out.history.shape == (out.iterations + 1, 3)
    assert np.all(out.history[0, :2] == 1.0) and out.history[0, 2] == 0.0
    assert np.all(out.history[-1] <= 1e-10)
    # each column's residual history is its own (the zero column never moves)
    assert np.all(out.X[:, 2] == 0.0)


def test_a_preconditioner_cuts_the_iterations():
    A = _spd(80, 1e6, 2)
    b = np.random.default_rng(3).standard_normal((80, 1))
    plain = pcg(lambda V: A @ V, b, tol=1e-8, maxiter=2000)
    Ainv = np.linalg.inv(A)
    exact = pcg(lambda V: A @ V, b, tol=1e-8, maxiter=2000, precond=lambda V: Ainv @ V)
    assert exact.iterations <= 2 < plain.iterations
    np.testing.assert_allclose(exact.X, plain.X, rtol=1e-5)


def test_maxiter_stops_unconverged_and_says_so():
    A = _spd(50, 1e8, 4)
    b = np.ones((50, 1))
    out = pcg(lambda V: A @ V, b, tol=1e-12, maxiter=5)
    assert out.iterations == 5 and not out.converged
    assert out.history.shape == (6, 1)


@pytest.mark.parametrize("scale", [2.0 ** -900, 1e-300, 1e-100, 1.0, 1e100, 1e300, 2.0 ** 900])
def test_every_rule_is_relative(scale):
    """The same answer for A and b scaled together by any factor (the same
    bits, scaled, for a power of two whose products stay normal numbers;
    near the ends of the range some products of A's small entries round to
    subnormal numbers and the iteration takes a few more steps)."""
    A = _spd(40, 1e4, 5)
    b = np.random.default_rng(6).standard_normal((40, 2))
    ref = pcg(lambda V: A @ V, b, tol=1e-9, maxiter=400)
    As, bs = A * scale, b * scale
    got = pcg(lambda V: As @ V, bs, tol=1e-9, maxiter=400)
    assert got.converged
    assert abs(got.iterations - ref.iterations) <= 0.2 * ref.iterations
    np.testing.assert_allclose(got.X, ref.X, rtol=1e-6, atol=1e-7 * np.abs(ref.X).max())
    if scale in (2.0 ** -900, 2.0 ** 900):
        np.testing.assert_array_equal(got.X, ref.X)


def test_right_hand_sides_of_any_scale():
    A = _spd(30, 100, 9)
    b = np.random.default_rng(10).standard_normal((30, 3)) * np.array([1e-300, 1.0, 1e300])
    out = pcg(lambda V: A @ V, b, tol=1e-10, maxiter=200)
    assert out.converged and np.all(np.isfinite(out.X))
    np.testing.assert_allclose(out.X, np.linalg.solve(A, b), rtol=1e-7)


def test_steps_from_a_start_and_the_step_taken():
    A = _spd(30, 10, 7)
    b = np.random.default_rng(8).standard_normal((30, 2))
    x0 = np.linalg.solve(A, b) + 1e-3
    cg = ConjugateGradients(lambda V: A @ V, b, X0=x0)
    before = cg.X.copy()
    assert cg.step_once()
    np.testing.assert_allclose(cg.X - before, cg.step, atol=1e-15)
    for _ in range(60):
        if not cg.step_once():
            break
    np.testing.assert_allclose(cg.X, np.linalg.solve(A, b), rtol=1e-8)


def test_an_indefinite_direction_stops_its_column():
    A = np.diag([1.0, -1.0])
    b = np.array([[1.0], [1.0]])
    out = pcg(lambda V: A @ V, b, tol=1e-12, maxiter=10)
    assert not out.converged and out.iterations <= 2
    assert np.all(np.isfinite(out.X))
