"""The growing orthonormal bases of block Krylov (sketchlab._krylov_basis)
against numpy: in place, and in row chunks above the size where those pay."""

import numba
import numpy as np
import pytest

from sketchlab._engine.threads import tall_mul
from sketchlab._krylov_basis import GrowingBasis


def grow(dim, blocks, b, dtype=np.float64, seed=0, local=False):
    """A GrowingBasis fed ``blocks`` random blocks of b columns; the blocks and
    the (C, R) of each extend."""
    rng = np.random.default_rng(seed)
    basis = GrowingBasis(dim, np.dtype(dtype), 2)  # small capacity: it must grow
    fed, factors = [], []
    for i in range(blocks):
        W = rng.standard_normal((dim, b)).astype(dtype)
        if i:  # a block with a large component along the basis, as Krylov's are
            W += basis.Q @ rng.standard_normal((basis.size, b)).astype(dtype) * 10
        fed.append(W.copy())
        into = basis.reserve(b)  # the product writes here (the linear map's matmat(out=))
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
    basis = GrowingBasis(300, np.dtype(np.float32), 4)
    W = rng.standard_normal((300, 5)).astype(np.float32)
    C, R = basis.extend(W.copy(), rng)  # not the reserved view: copied in
    assert basis.Q.dtype == np.float32 and C.shape == (0, 5)
    np.testing.assert_allclose(basis.Q @ R, W, atol=1e-5)


def test_growing_basis_fills_a_rank_deficient_block_with_fresh_directions():
    rng = np.random.default_rng(2)
    basis = GrowingBasis(200, np.dtype(np.float64), 8)
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
            results.append((basis.Q.copy(), factors[-1][0], tall_mul(basis.Q, np.eye(120)[:, :7])))
    finally:
        numba.set_num_threads(previous)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(results[0][2], results[0][0][:, :7], rtol=0, atol=0)
