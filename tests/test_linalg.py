"""_linalg's building blocks against numpy: the in-place BLAS updates and
the Gram products."""

import numpy as np
import pytest

from sketchlab import _linalg


@pytest.mark.parametrize("order", ["F", "C"])
def test_gemm_add_with_alpha_in_place(order):
    rng = np.random.default_rng(3)
    target = np.asarray(rng.standard_normal((30, 20)), order=order)
    Y, G = rng.standard_normal((30, 5)), rng.standard_normal((5, 20))
    want = target - 2.5 * Y @ G
    assert _linalg.gemm_add(target, Y, G, alpha=-2.5)
    np.testing.assert_allclose(target, want, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("lower,trans", [(True, True), (True, False), (False, False)])
def test_trmm_right_in_place_on_a_view(lower, trans):
    rng = np.random.default_rng(5)
    F = np.asfortranarray(rng.standard_normal((40, 12)))
    G = F[:, 3:9]  # a block of columns, as RPCholesky's
    T = rng.standard_normal((6, 6))
    T = np.tril(T) if lower else np.triu(T)
    want = G @ (T.T if trans else T)
    rest = F[:, :3].copy()
    _linalg.trmm_right(G, T, lower=lower, trans=trans)
    np.testing.assert_allclose(F[:, 3:9], want, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(F[:, :3], rest)


@pytest.mark.parametrize("c", [1, 7, 300, 1100])
@pytest.mark.parametrize("order", ["C", "F"])
def test_gram_t_is_exactly_symmetric(c, order):
    """``gram_t(A, A)`` by column blocks: A^T A to rounding, exactly
    symmetric, in either memory order (no copy needed for either)."""
    from sketchlab._linalg import gram_t

    A = np.asarray(np.random.default_rng(c).standard_normal((500, c)), order=order)
    G = gram_t(A, A)
    np.testing.assert_array_equal(G, G.T)
    np.testing.assert_allclose(G, A.T @ A, rtol=0, atol=1e-12 * np.abs(G).max())
    B = np.random.default_rng(1).standard_normal((500, 3))
    np.testing.assert_allclose(gram_t(A, B), A.T @ B, rtol=1e-13, atol=1e-12)
