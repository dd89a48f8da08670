"""Accelerated (block, rejection-sampling) RPCholesky against the sequential
algorithm and against the exact pivot distribution."""

import itertools

import numpy as np
import pytest
from scipy import stats

import sketchlab as sl
from sketchlab._kernel_matrices import as_kernel
from sketchlab._rpcholesky import block_rpcholesky, sequential_rpcholesky
from sketchlab._selection import select_landmarks

# a p-value below this rejects "same distribution"; under the null hypothesis
# the p-value is uniform, so a correct sampler fails with this probability
# for a random seed (the seeds are fixed: the tests are deterministic)
P_MIN = 1e-3


def small_kernel():
    """A 6 x 6 RBF kernel of points on a line at uneven spacing: the
    residuals after a pivot differ a lot between points."""
    x = np.array([0.0, 0.3, 0.9, 1.6, 2.6, 2.8])
    return np.exp(-(x[:, None] - x[None, :]) ** 2)


def exact_set_probabilities(K, c):
    """P(the c pivots of sequential RPCholesky are the set S), for every S,
    by summing over the orders of S: pivot i is drawn with probability
    d_i / sum(d), d the residual diagonal, then eliminated (Schur
    complement)."""
    n = K.shape[0]
    probs = {}
    for order in itertools.permutations(range(n), c):
        R, p = K.copy(), 1.0
        for i in order:
            d = np.maximum(np.diag(R), 0.0)
            p *= d[i] / d.sum()
            R = R - np.outer(R[:, i], R[i, :]) / R[i, i]
        key = tuple(sorted(order))
        probs[key] = probs.get(key, 0.0) + p
    return probs


def pvalue(sampler, c, trials, seed):
    K = small_kernel()
    probs = exact_set_probabilities(K, c)
    keys = sorted(probs)
    assert abs(sum(probs.values()) - 1) < 1e-12
    counts = dict.fromkeys(keys, 0)
    oracle, gen = as_kernel(K), np.random.default_rng(seed)
    for _ in range(trials):
        counts[tuple(sorted(sampler(oracle, c, gen).tolist()))] += 1
    observed = np.array([counts[k] for k in keys])
    expected = np.array([probs[k] for k in keys]) * trials
    assert expected.min() >= 5  # the chi-square approximation holds
    return stats.chisquare(observed, expected).pvalue


@pytest.mark.parametrize("c, block_size", [(2, 2), (3, 2), (3, 100)])
def test_block_rpcholesky_has_the_sequential_distribution(c, block_size):
    # the frequencies of the landmark sets against the exact probabilities of
    # the sequential algorithm; block_size=2 forces rejections and several
    # blocks
    p = pvalue(lambda K, c, gen: block_rpcholesky(K, c, gen, block_size=block_size)[0],
               c, 2500, seed=c)
    assert p > P_MIN


def test_the_distribution_test_has_power():
    # the sequential reference passes the same test; uniform landmarks fail it
    assert pvalue(lambda K, c, gen: sequential_rpcholesky(K, c, gen)[0], 3, 2500, 0) > P_MIN
    assert pvalue(lambda K, c, gen: gen.choice(6, c, replace=False), 3, 2500, 0) < 1e-6


def trace_error(K, F):
    return float(np.trace(K) - np.einsum("ij,ij->", F, F))


@pytest.mark.parametrize("block_size", [1, 7, 100])
def test_factor_is_the_nystrom_approximation_on_the_pivots(block_size):
    X = np.random.default_rng(0).standard_normal((300, 4))
    oracle = sl.RBFKernel(X, gamma=0.3)
    K = oracle.toarray()
    pivots, C, F = block_rpcholesky(oracle, 40, np.random.default_rng(1), block_size=block_size)
    assert np.unique(pivots).size == 40
    np.testing.assert_allclose(C, K[:, pivots], rtol=0, atol=1e-14)
    W = K[np.ix_(pivots, pivots)]
    nystrom = C @ np.linalg.solve(W, C.T)
    np.testing.assert_allclose(F @ F.T, nystrom, rtol=0, atol=1e-8)


def _continued(K, c, gen, block_size=100):
    """A run of c - 1 landmarks, then one more by ``start=``."""
    pivots, _, F = block_rpcholesky(K, c - 1, gen, block_size=block_size, columns=False)
    return block_rpcholesky(K, c, gen, block_size=block_size, columns=False,
                            start=(pivots, F))


def test_a_continued_run_has_the_sequential_distribution():
    p = pvalue(lambda K, c, gen: _continued(K, c, gen)[0], 3, 2500, seed=7)
    assert p > P_MIN


def test_a_continued_run_is_the_nystrom_approximation_on_its_pivots():
    X = np.random.default_rng(0).standard_normal((300, 4))
    oracle = sl.RBFKernel(X, gamma=0.3)
    K = oracle.toarray()
    gen = np.random.default_rng(2)
    first, _, F0 = block_rpcholesky(oracle, 15, gen, columns=False)
    pivots, C, F = block_rpcholesky(oracle, 40, gen, columns=False, start=(first, F0))
    assert C is None and np.unique(pivots).size == 40
    np.testing.assert_array_equal(pivots[:15], first)
    np.testing.assert_array_equal(F[:, :15], F0)
    W = K[np.ix_(pivots, pivots)]
    nystrom = K[:, pivots] @ np.linalg.solve(W, K[:, pivots].T)
    np.testing.assert_allclose(F @ F.T, nystrom, rtol=0, atol=1e-8)


def test_trace_error_matches_the_sequential_algorithm():
    # same distribution, so the same mean trace error (over 30 seeds each;
    # its standard deviation is about 15% of the mean, so a 10% tolerance on
    # the ratio of the means is about 2.5 standard errors of their difference)
    gen = np.random.default_rng(2)
    X = np.vstack([gen.standard_normal((340, 2)), gen.standard_normal((60, 2)) * 0.5 + 6])
    oracle = sl.RBFKernel(X, gamma=0.5)
    K = oracle.toarray()
    block = [trace_error(K, block_rpcholesky(oracle, 30, np.random.default_rng(s))[2])
             for s in range(30)]
    seq = [trace_error(K, sequential_rpcholesky(oracle, 30, np.random.default_rng(100 + s))[2])
           for s in range(30)]
    assert abs(np.mean(block) / np.mean(seq) - 1) < 0.1
    uniform = [trace_error(K, _nystrom_factor(K, np.random.default_rng(s).choice(400, 30, False)))
               for s in range(10)]
    assert np.mean(block) < 0.8 * np.mean(uniform)


def _nystrom_factor(K, cols):
    w, V = np.linalg.eigh(K[np.ix_(cols, cols)])
    keep = w > 1e-12 * w.max()
    return K[:, cols] @ V[:, keep] / np.sqrt(w[keep])


def test_rank_deficient_kernel_completes_with_uniform_landmarks():
    # rank 3 (three distinct points, repeated): 3 pivots reproduce K, the
    # other landmarks are distinct points drawn uniformly, with F = 0
    X = np.repeat(np.array([[0.0], [1.0], [3.0]]), [20, 5, 5], axis=0)
    oracle = sl.RBFKernel(X, gamma=1.0)
    K = oracle.toarray()
    for seed in range(5):
        pivots, C, F = block_rpcholesky(oracle, 8, np.random.default_rng(seed))
        assert np.unique(pivots).size == 8
        np.testing.assert_allclose(C, K[:, pivots], rtol=0, atol=1e-14)
        np.testing.assert_allclose(F @ F.T, K, rtol=0, atol=1e-10)
        assert np.unique(X[pivots[:3], 0]).size == 3


def test_zero_kernel_draws_uniform_landmarks():
    pivots, C, F = block_rpcholesky(as_kernel(np.zeros((10, 10))), 4, np.random.default_rng(0))
    assert np.unique(pivots).size == 4 and not F.any() and not C.any()


def test_landmarks_are_reproducible_and_sorted():
    X = np.random.default_rng(3).standard_normal((200, 5))
    a = select_landmarks(sl.RBFKernel(X, 0.2), 25, "rpcholesky", np.random.default_rng(7))
    b = select_landmarks(sl.RBFKernel(X, 0.2), 25, "rpcholesky", np.random.default_rng(7))
    np.testing.assert_array_equal(a[0], b[0])
    assert np.all(np.diff(a[0]) > 0)
    np.testing.assert_allclose(a[1], sl.RBFKernel(X, 0.2)[:, a[0]], rtol=0, atol=1e-14)


def test_a_kernel_given_as_an_array_is_left_unchanged():
    X = np.random.default_rng(4).standard_normal((120, 3))
    K = sl.RBFKernel(X, 0.5).toarray()
    before = K.copy()
    approx = sl.nystrom(K, 20, landmarks="rpcholesky", rng=0)
    np.testing.assert_array_equal(K, before)
    np.testing.assert_allclose(approx.C, K[:, approx.columns], rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernel_columns_of_the_rbf_oracle_and_of_an_array(dtype):
    # the RBF oracle's columns are read as rows (symmetric by its formula):
    # equal to K[:, pivots] up to rounding, in the oracle's dtype; an array
    # kernel's columns are read as they are
    X = np.random.default_rng(4).standard_normal((250, 6)).astype(dtype)
    oracle = sl.RBFKernel(X, 0.3)
    K = oracle.toarray()
    pivots, C, F = block_rpcholesky(oracle, 30, np.random.default_rng(0), block_size=7)
    assert C.dtype == dtype and F.dtype == np.float64 and np.unique(pivots).size == 30
    np.testing.assert_allclose(C, K[:, pivots], rtol=0, atol=10 * np.finfo(dtype).eps)
    pivots, C, F = block_rpcholesky(as_kernel(K), 30, np.random.default_rng(0), block_size=7)
    np.testing.assert_array_equal(C, K[:, pivots])


def test_factor_alone_is_the_same_factor():
    """columns=False stores no kernel columns and gives the same pivots and
    the same F, bit for bit (the same draws, the same arithmetic)."""
    from sketchlab._kernel_matrices import kernel_oracle

    X = np.random.default_rng(3).standard_normal((700, 5))
    K = kernel_oracle(X, "rbf", gamma=0.3)
    piv, C, F = block_rpcholesky(K, 60, np.random.default_rng(4), block_size=16)
    piv2, C2, F2 = block_rpcholesky(K, 60, np.random.default_rng(4), block_size=16,
                                    columns=False)
    assert C2 is None
    np.testing.assert_array_equal(piv, piv2)
    np.testing.assert_array_equal(F, F2)
    np.testing.assert_allclose(C, K[:, piv], rtol=0, atol=1e-15)
