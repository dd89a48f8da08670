"""_linalg's building blocks against numpy: the growing orthonormal bases of
block Krylov (in place, and in row chunks above the size where those pay),
and the in-place BLAS updates."""

import numba
import numpy as np
import pytest

from sketchlab import _linalg


def grow(dim, blocks, b, dtype=np.float64, seed=0, local=False):
    """A GrowingBasis fed ``blocks`` random blocks of b columns; the blocks and
    the (C, R) of each extend."""
    rng = np.random.default_rng(seed)
    basis = _linalg.GrowingBasis(dim, np.dtype(dtype), 2)  # small capacity: it must grow
    fed, factors = [], []
    for i in range(blocks):
        W = rng.standard_normal((dim, b)).astype(dtype)
        if i:  # a block with a large component along the basis, as Krylov's are
            W += basis.Q @ rng.standard_normal((basis.size, b)).astype(dtype) * 10
        fed.append(W.copy())
        into = basis.reserve(b)  # the product writes here (KrylovProducts.right(out=))
        into[...] = W
        factors.append(basis.extend(into, rng))
    return basis, fed, factors


@pytest.mark.parametrize("dim,blocks,b", [(500, 4, 7), (20000, 3, 40)])  # in place; in chunks
def test_growing_basis_is_orthonormal_and_reconstructs_the_blocks(dim, blocks, b):
    basis, fed, factors = grow(dim, blocks, b)
    Q = basis.Q
    assert Q.shape == (dim, blocks * b) and Q.flags.f_contiguous
    assert np.abs(Q.T @ Q - np.eye(Q.shape[1])).max() < 1e-13
    for i, (W, (C, R)) in enumerate(zip(fed, factors)):
        old, new = Q[:, :i * b], Q[:, i * b:(i + 1) * b]
        np.testing.assert_allclose(old @ C + new @ R, W, atol=1e-11 * np.abs(W).max())


def test_growing_basis_float32_and_a_copy_of_foreign_blocks():
    rng = np.random.default_rng(1)
    basis = _linalg.GrowingBasis(300, np.dtype(np.float32), 4)
    W = rng.standard_normal((300, 5)).astype(np.float32)
    C, R = basis.extend(W.copy(), rng)  # not the reserved view: copied in
    assert basis.Q.dtype == np.float32 and C.shape == (0, 5)
    np.testing.assert_allclose(basis.Q @ R, W, atol=1e-5)


def test_growing_basis_fills_a_rank_deficient_block_with_fresh_directions():
    rng = np.random.default_rng(2)
    basis = _linalg.GrowingBasis(200, np.dtype(np.float64), 8)
    W = rng.standard_normal((200, 6))
    basis.extend(W.copy(), rng)
    twice = np.hstack([W[:, :3], W[:, :3] @ rng.standard_normal((3, 3))])  # in the span already
    C, R = basis.extend(twice, rng)
    Q = basis.Q
    assert Q.shape[1] == 12 and np.abs(Q.T @ Q - np.eye(12)).max() < 1e-13
    np.testing.assert_allclose(Q[:, :6] @ C + Q[:, 6:] @ R, twice, atol=1e-12)


def test_chunked_products_do_not_depend_on_the_thread_count():
    previous = numba.get_num_threads()
    results = []
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            basis, _, factors = grow(20000, 3, 40, seed=4)
            results.append((basis.Q.copy(), factors[-1][0], _linalg.tall_mul(basis.Q, np.eye(120)[:, :7])))
    finally:
        numba.set_num_threads(previous)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(results[0][2], results[0][0][:, :7], rtol=0, atol=0)


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


@pytest.mark.parametrize("rows", [3000, (1 << 21) + 700])  # serial / on all threads
def test_fault_in_writes_one_entry_per_page(rows):
    from sketchlab._linalg import fault_in

    a = np.ones((rows, 4), order="F")
    fault_in(a[:, 1:3])
    flat = a[:, 1:3].reshape(-1, order="F")
    assert np.count_nonzero(flat == 0) == -(-flat.size // 512)
    assert flat[::512].max() == 0
    assert (a[:, [0, 3]] == 1).all()
    fault_in(a[::2])  # not contiguous: left as it is
    assert np.count_nonzero(a == 0) == -(-flat.size // 512)


@pytest.mark.parametrize("rows_per_chunk", [7, 2048])
def test_tall_products_in_chunks(rows_per_chunk):
    """tall_mul and tall_tmul: the products to rounding, the same bits for
    one thread and two."""
    rng = np.random.default_rng(9)
    Q = np.asfortranarray(rng.standard_normal((5000, 40)))
    M, Y = rng.standard_normal((40, 6)), rng.standard_normal((5000, 6))
    before = numba.get_num_threads()
    got = []
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            got.append((_linalg.tall_mul(Q, M, rows_per_chunk),
                        _linalg.tall_tmul(Q, Y, rows_per_chunk)))
    finally:
        numba.set_num_threads(before)
    for a, b in zip(*got):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(got[0][0], Q @ M, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(got[0][1], Q.T @ Y, rtol=1e-13, atol=1e-11)
