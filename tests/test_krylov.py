"""krylov_svd: singular values and vectors against LAPACK's SVD, every input
kind, the tolerance mode against the smallest rank that meets it, the
orthogonality of the bases at flat and steep spectra, bad input, and
determinism across thread counts."""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import aslinearoperator

import sketchlab as sl
from sketchlab._krylov import run_krylov_svd

from ._support import on_one_and_two_threads


def with_spectrum(m, n, sv, seed=0):
    """An m x n matrix with singular values ``sv`` and random singular vectors."""
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.standard_normal((m, len(sv))))
    V, _ = np.linalg.qr(rng.standard_normal((n, len(sv))))
    return (U * sv) @ V.T


def minimal_rank(sv, tol):
    """Smallest r with sum_{j > r} sv_j^2 <= tol^2 sum sv_j^2 (the best rank-r error)."""
    e = np.asarray(sv, dtype=np.float64) ** 2
    tail = e.sum() - np.cumsum(e)
    return int(np.flatnonzero(tail <= tol * tol * e.sum())[0]) + 1


SPECTRA = {
    "exponential": lambda n: 0.95 ** np.arange(n),
    "polynomial": lambda n: 1.0 / np.arange(1, n + 1) ** 2,
}


def relerr(A, res):
    U, s, Vt = res
    return np.linalg.norm(A - (U * s) @ Vt) / np.linalg.norm(A)


# ---------------------------------------------------------------------------
# Against LAPACK
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("spectrum", ["exponential", "polynomial", "steep", "gapped"])
def test_singular_values_and_vectors_match_lapack(spectrum):
    n = 120
    sv = {"exponential": 0.8 ** np.arange(n), "polynomial": 1.0 / np.arange(1, n + 1) ** 2,
          "steep": 10.0 ** (-np.arange(n) / 4.0),
          "gapped": np.r_[np.linspace(10, 5, 8), 0.1 * 0.9 ** np.arange(n - 8)]}[spectrum]
    A = with_spectrum(200, 150, sv)
    k = 8
    res = sl.krylov_svd(A, k, passes=10, rng=1)
    U_ref, s_ref, Vt_ref = np.linalg.svd(A, full_matrices=False)
    np.testing.assert_allclose(res.s, s_ref[:k], rtol=1e-10)
    # the top singular vectors (simple, separated singular values) up to sign
    for i in range(k):
        assert abs(abs(res.U[:, i] @ U_ref[:, i]) - 1) < 1e-6
        assert abs(abs(res.Vt[i] @ Vt_ref[i]) - 1) < 1e-6
    assert res.converged and res.passes == 10
    # the default stopping rule: within a few 1e-5
    np.testing.assert_allclose(sl.krylov_svd(A, k, rng=1).s, s_ref[:k], rtol=1e-4)
    # the answer's error is the best rank-k error to rounding
    best = math.sqrt(np.sum(s_ref[k:] ** 2)) / np.linalg.norm(A)
    assert relerr(A, res) == pytest.approx(best, rel=1e-6)


@pytest.mark.parametrize("passes", [2, 3, 4, 6])
def test_passes_are_made_and_answers_improve(passes):
    """Each pass gives a better (or equal) answer, and the count is exact."""
    A = with_spectrum(150, 100, 1.0 / np.sqrt(np.arange(1, 101)))
    res = sl.krylov_svd(A, 5, passes=passes, block_size=6, rng=0)
    more = sl.krylov_svd(A, 5, passes=passes + 1, block_size=6, rng=0)
    assert res.passes == passes and more.passes == passes + 1
    s_ref = np.linalg.svd(A, compute_uv=False)[:5]
    # Ritz values are lower bounds of the singular values and rise pass by pass
    assert np.all(res.s <= s_ref * (1 + 1e-12))
    assert np.all(more.s >= res.s * (1 - 1e-12))


def test_two_passes_are_the_randomized_range_finder():
    """Pass 2 answers U U^T A with U = orth(A Omega): Halko et al.'s two-pass SVD."""
    A = with_spectrum(80, 60, 0.7 ** np.arange(60))
    res = sl.krylov_svd(A, 4, passes=2, block_size=6, rng=3)
    # its error is that of the projection on span(U) truncated to rank 4, at most
    # the error of the projection on the 6 dimensional span: check it is sensible
    best = np.sqrt(np.sum(np.linalg.svd(A, compute_uv=False)[4:] ** 2)) / np.linalg.norm(A)
    assert best <= relerr(A, res) < 10 * best


# ---------------------------------------------------------------------------
# Input kinds
# ---------------------------------------------------------------------------


def sparse_test_matrix(seed=0, m=300, n=200, density=0.05):
    rng = np.random.default_rng(seed)
    A = sp.random(m, n, density=density, format="csr", random_state=rng)
    return A


@pytest.mark.kernels
@pytest.mark.parametrize("kind", ["csr", "csc", "coo", "operator", "dense_f"])
def test_input_kinds_agree_with_dense(kind):
    A = sparse_test_matrix()
    dense = A.toarray()
    given = {"csr": A, "csc": A.tocsc(), "coo": A.tocoo(), "operator": aslinearoperator(A),
             "dense_f": np.asfortranarray(dense)}[kind]
    ref = sl.krylov_svd(dense, 6, rng=4, passes=8)
    res = sl.krylov_svd(given, 6, rng=4, passes=8)
    np.testing.assert_allclose(res.s, ref.s, rtol=1e-10)
    np.testing.assert_allclose(np.abs(res.U.T @ ref.U), np.eye(6), atol=1e-6)
    s_true = np.linalg.svd(dense, compute_uv=False)[:6]
    np.testing.assert_allclose(sl.krylov_svd(given, 6, rng=4).s, s_true, rtol=1e-4)


def test_float32_kept():
    A = sparse_test_matrix().astype(np.float32)
    res = sl.krylov_svd(A, 5, rng=0)
    assert res.U.dtype == res.s.dtype == res.Vt.dtype == np.float32
    s_true = np.linalg.svd(A.toarray().astype(np.float64), compute_uv=False)[:5]
    np.testing.assert_allclose(res.s, s_true, rtol=1e-4)
    assert np.abs(res.U.T @ res.U - np.eye(5)).max() < 1e-5
    dense = sl.krylov_svd(A.toarray(), 5, rng=0)
    assert dense.s.dtype == np.float32
    res_tol = sl.krylov_svd(A.toarray(), tol=0.5, rng=0)
    assert relerr(A.toarray().astype(np.float64), res_tol) <= 0.5


def test_integer_input_becomes_float64():
    A = np.arange(60).reshape(10, 6) % 7
    res = sl.krylov_svd(A, 2, rng=0)
    assert res.s.dtype == np.float64
    np.testing.assert_allclose(res.s, np.linalg.svd(A.astype(float), compute_uv=False)[:2],
                               rtol=1e-10)


def test_linear_operator_error_estimate_uses_one_more_pass():
    A = with_spectrum(200, 150, 0.9 ** np.arange(150))
    res = sl.krylov_svd(aslinearoperator(A), 5, passes=6, rng=0, estimate_error=True)
    assert res.passes == 7
    true = np.linalg.norm(A - (res.U * res.s) @ res.Vt)
    assert res.error_estimate.n_probes == 10
    assert 0.5 * true < res.error_estimate.value < 2 * true


def test_error_estimate_is_the_frobenius_identity():
    A = sparse_test_matrix(2)
    res = sl.krylov_svd(A, 5, passes=3, rng=0, estimate_error=True)
    true = np.linalg.norm(A.toarray() - (res.U * res.s) @ res.Vt)
    est = res.error_estimate
    assert est.contains(true) or est.value == pytest.approx(true, rel=1e-9)
    assert est.relative == pytest.approx(true / sp.linalg.norm(A), rel=1e-9)
    assert sl.krylov_svd(A, 5, rng=0).error_estimate is None


# ---------------------------------------------------------------------------
# Tolerance mode
# ---------------------------------------------------------------------------


def check_tol_mode(spectrum, tol, seed):
    sv = SPECTRA[spectrum](300)
    A = with_spectrum(400, 300, sv, seed=seed)
    res = sl.krylov_svd(A, tol=tol, rng=seed, estimate_error=True)
    rmin = minimal_rank(sv, tol)
    err = relerr(A, res)
    return err <= tol, len(res.s) <= max(1.2 * rmin, rmin + 1), (err, len(res.s), rmin)


@pytest.mark.parametrize("spectrum", sorted(SPECTRA))
@pytest.mark.parametrize("tol", [1e-1, 1e-2, 1e-3])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tol_mode_meets_tol_near_the_smallest_rank(spectrum, tol, seed):
    met, small, info = check_tol_mode(spectrum, tol, seed)
    assert met and small, info


@pytest.mark.slow
@pytest.mark.parametrize("spectrum", sorted(SPECTRA))
@pytest.mark.parametrize("tol", [1e-1, 1e-2, 1e-3])
def test_tol_mode_fifty_seeds(spectrum, tol):
    outcomes = [check_tol_mode(spectrum, tol, seed) for seed in range(50)]
    assert sum(met for met, _, _ in outcomes) >= 48, outcomes  # >= 95%
    assert all(small for _, small, _ in outcomes), outcomes


@pytest.mark.slow
@pytest.mark.parametrize("tol", [1e-1, 1e-2])
def test_tol_mode_madelon(load_libsvm, tol):
    X, _ = load_libsvm("madelon.xz")
    A = X.toarray() if sp.issparse(X) else np.asarray(X)
    sv = np.linalg.svd(A, compute_uv=False)
    rmin = minimal_rank(sv, tol)
    for seed in range(5):
        res = sl.krylov_svd(A, tol=tol, rng=seed)
        assert relerr(A, res) <= tol
        assert len(res.s) <= max(1.2 * rmin, rmin + 1)


def test_k_and_tol_stop_when_rank_k_meets_tol():
    sv = 0.7 ** np.arange(100)
    A = with_spectrum(150, 100, sv)
    full = sl.krylov_svd(A, 10, rng=0)
    quick = sl.krylov_svd(A, 10, tol=0.2, rng=0)
    assert len(quick.s) == 10 and relerr(A, quick) <= 0.2
    assert quick.passes <= full.passes


def test_unreachable_tol_warns():
    A = with_spectrum(100, 80, np.ones(80))
    with pytest.warns(UserWarning, match="not met"):
        res = sl.krylov_svd(A, tol=0.1, passes=3, rng=0)
    assert res.passes == 3 and not res.converged
    with pytest.warns(UserWarning, match="not met"):
        sl.krylov_svd(A, 5, tol=0.1, rng=0)


# ---------------------------------------------------------------------------
# Orthogonality at any spectrum
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("spectrum", ["flat", "steep", "rank-deficient"])
def test_bases_stay_orthonormal(spectrum):
    n = 150
    sv = {"flat": np.ones(n), "steep": 10.0 ** (-np.arange(n) / 3.0),
          "rank-deficient": np.r_[np.ones(5), np.zeros(n - 5)]}[spectrum]
    A = with_spectrum(250, 200, sv, seed=3)
    res = sl.krylov_svd(A, 40, passes=12, block_size=20, rng=0)
    r = len(res.s)
    assert np.abs(res.U.T @ res.U - np.eye(r)).max() < 1e-12
    assert np.abs(res.Vt @ res.Vt.T - np.eye(r)).max() < 1e-12
    np.testing.assert_allclose(res.s, sv[:r], atol=1e-12 * sv[0], rtol=1e-8)


def test_default_block_is_smaller_than_k_for_large_k():
    """From k = 21 the default block is about a third of k (at least 24): the
    default rule still reaches the top singular values to 1e-4 (against
    LAPACK) on a slowly decaying spectrum."""
    from sketchlab._krylov import default_block

    assert [default_block(k) for k in (5, 20, 21, 60, 100)] == [9, 24, 24, 24, 38]
    sv = 1.0 / np.arange(1, 301) ** 0.5
    A = with_spectrum(600, 400, sv, seed=2)
    res = sl.krylov_svd(A, 60, rng=0)
    assert res.converged
    np.testing.assert_allclose(res.s, sv[:60], rtol=1e-4)


def test_repeated_singular_value_beyond_the_block_restarts_with_k_plus_4():
    """60 equal singular values and k = 90: blocks of 34 (the default) find
    only 34 copies, and the iteration starts again with blocks of 94."""
    sv = np.r_[np.ones(60), np.linspace(0.5, 0.01, 340)]
    A = with_spectrum(400, 400, sv, seed=5)
    res = sl.krylov_svd(A, 90, rng=0)
    np.testing.assert_allclose(res.s, sv[:90], rtol=1e-6, atol=1e-10)
    with pytest.warns(UserWarning, match="34 equal singular values"):
        fixed = sl.krylov_svd(A, 90, rng=0, passes=8)  # a fixed number of passes: no restart
    assert np.sum(np.abs(fixed.s - 1) < 1e-6) == 34
    with warnings.catch_warnings():  # a block as wide as k: all copies found, no warning
        warnings.simplefilter("error")
        wide = sl.krylov_svd(A, 90, rng=0, passes=8, block_size=90)
    np.testing.assert_allclose(wide.s[:60], 1.0, rtol=1e-6)


def test_stopping_rule_extrapolates_the_rise():
    """The k mode stops when the last rise, and what its geometric tail
    leaves, are within rtol; a rise that is still growing never stops it."""
    from sketchlab._krylov import _settled

    s = np.array([1.0, 0.5])
    assert _settled(np.array([5e-5, 2e-5]), np.array([2e-4, 8e-5]), s, 1e-4)
    # ratio 0.9: 9 times the last rise still to come
    assert not _settled(np.array([5e-5, 2e-5]), np.array([5.5e-5, 2.2e-5]), s, 1e-4)
    assert not _settled(np.array([5e-5, 2e-5]), np.array([4e-5, 8e-5]), s, 1e-4)
    assert not _settled(np.array([5e-5, 2e-5]), None, s, 1e-4)
    assert not _settled(np.array([2e-4, 2e-5]), np.array([1e-3, 8e-5]), s, 1e-4)
    assert _settled(np.array([1e-9, 0.0]), np.array([1e-10, 0.0]), s, 1e-4)


def test_whole_space_is_exact():
    """A block as large as the matrix: the first answers span everything."""
    A = np.random.default_rng(0).standard_normal((12, 7))
    res = sl.krylov_svd(A, 7, rng=0)
    np.testing.assert_allclose((res.U * res.s) @ res.Vt, A, atol=1e-12)
    res = sl.krylov_svd(A, tol=0.05, block_size=2, rng=0)
    assert relerr(A, res) <= 0.05


def test_zero_matrix():
    res = sl.krylov_svd(np.zeros((20, 10)), 3, rng=0)
    assert np.all(res.s == 0)
    res = sl.krylov_svd(sp.csr_matrix((20, 10)), tol=0.1, rng=0)
    assert len(res.s) >= 1 and np.all(res.s == 0)


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(), ValueError, "give k"),
    (dict(k=0), ValueError, "k must be an int in \\[1, 20\\]"),
    (dict(k=21), ValueError, "k must be"),
    (dict(k=2.5), TypeError, "k must be an int"),
    (dict(k=True), TypeError, "k must be an int"),
    (dict(k=3, tol=0.0), ValueError, "tol must be"),
    (dict(k=3, tol=1.5), ValueError, "tol must be"),
    (dict(k=3, tol=float("nan")), ValueError, "tol must be"),
    (dict(k=3, passes=0), ValueError, "passes must be"),
    (dict(k=3, block_size=0), ValueError, "block_size must be"),
    (dict(k=3, block_size=21), ValueError, "block_size must be"),
    (dict(k=10, block_size=2, passes=3), ValueError, "fewer than k=10"),
    (dict(k=3, rng="seed"), TypeError, "rng must be"),
    (dict(k=3, estimate_error="yes"), TypeError, "estimate_error"),
])
def test_bad_arguments(kwargs, exc, match):
    A = np.ones((30, 20))
    with pytest.raises(exc, match=match):
        sl.krylov_svd(A, **kwargs)


@pytest.mark.parametrize("A, exc", [
    (np.array([[1.0, np.nan], [0.0, 1.0]]), ValueError),
    (np.ones(5), ValueError),
    (np.ones((0, 3)), ValueError),
    ("matrix", TypeError),
    (np.array([[1 + 1j, 0], [0, 1]]), TypeError),
])
def test_bad_matrices(A, exc):
    with pytest.raises(exc):
        sl.krylov_svd(A, 1)


def test_tol_with_a_linear_operator_is_refused():
    with pytest.raises(ValueError, match="LinearOperator"):
        sl.krylov_svd(aslinearoperator(np.eye(5)), tol=0.1)


def test_linear_operator_returning_wrong_shape():
    from scipy.sparse.linalg import LinearOperator

    op = LinearOperator((10, 8), matvec=lambda x: np.ones(10), rmatvec=lambda y: np.ones(8),
                        matmat=lambda X: np.ones((9, X.shape[1])), dtype=np.float64)
    with pytest.raises(ValueError, match="matmat returned"):
        sl.krylov_svd(op, 2)


# ---------------------------------------------------------------------------
# Determinism
# ---------------------------------------------------------------------------


def test_same_rng_same_result_and_generators_advance():
    A = sparse_test_matrix(5)
    a = sl.krylov_svd(A, 4, rng=7)
    b = sl.krylov_svd(A, 4, rng=7)
    np.testing.assert_array_equal(a.s, b.s)
    np.testing.assert_array_equal(a.U, b.U)
    gen = np.random.default_rng(7)
    c = sl.krylov_svd(A, 4, rng=gen, passes=2)
    d = sl.krylov_svd(A, 4, rng=gen, passes=2)
    assert not np.array_equal(c.U, d.U)


@pytest.mark.kernels  # the row loops of the products, bounds-checked in that run
@pytest.mark.parametrize("fmt,shape,k", [("csr", (3000, 400), 5), ("dense", (3000, 400), 5),
                                         ("csr", (20000, 300), 40)])
def test_same_result_for_one_and_two_threads(fmt, shape, k):
    """Numba's thread count and the caller's BLAS threads change nothing: the
    sparse products split output rows only, the large products with the
    bases (20,000 rows, 40 + 4 columns a block: several row chunks) sum their
    fixed row chunks in order, and BLAS runs on one thread inside
    krylov_svd.  Bitwise within one process (same BLAS kernels)."""
    A = sparse_test_matrix(6, m=shape[0], n=shape[1], density=0.05)
    if fmt == "dense":
        A = A.toarray()
    a, b = on_one_and_two_threads(lambda: sl.krylov_svd(A, k, rng=11, passes=6), blas=True)
    np.testing.assert_array_equal(a.s, b.s)
    np.testing.assert_array_equal(a.U, b.U)
    np.testing.assert_array_equal(a.Vt, b.Vt)


def test_result_pickles_and_unpacks():
    import pickle

    res = sl.krylov_svd(np.eye(6)[:, :5] * np.arange(1, 6), 2, rng=0, estimate_error=True)
    U, s, Vt = res
    back = pickle.loads(pickle.dumps(res))
    np.testing.assert_array_equal(back.s, s)
    assert back.passes == res.passes and back.converged == res.converged
    assert back.error_estimate == res.error_estimate


# ---------------------------------------------------------------------------
# The single-pass SVDs point to krylov_svd when they capture nothing
# ---------------------------------------------------------------------------


def flat_sparse(seed=0):
    # a random sparse matrix: a flat spectrum, where rank 10 leaves ~98% of ||A||_F
    return sp.random(2000, 1000, density=0.01, format="csr", random_state=seed)


@pytest.mark.parametrize("func", [sl.fast_sp_svd, sl.practical_sp_svd, sl.three_sketch_svd])
def test_single_pass_warns_when_its_estimate_is_near_the_norm(func):
    import warnings

    A = flat_sparse()
    with pytest.warns(sl.InaccurateSVDWarning, match="krylov_svd"):
        out = func(A, 10, rng=0, estimate_error=True)
    est = out[-1] if isinstance(out, tuple) and len(out) == 4 else out.error_estimate
    assert est.relative >= 0.9
    # the estimate is right to warn: the answer really is that far off
    U, s, Vt = out[:3]
    assert np.linalg.norm(A.toarray() - (U * s) @ Vt) >= 0.9 * sp.linalg.norm(A)
    with warnings.catch_warnings():
        warnings.simplefilter("error", sl.InaccurateSVDWarning)
        func(A, 10, rng=0)  # no estimate asked for: nothing computed, no warning
        # a matrix the sketches capture: no warning
        func(with_spectrum(300, 200, 0.5 ** np.arange(200)), 5, rng=0, estimate_error=True)


def test_an_unmet_tol_is_not_reported_as_converged():
    A = np.random.default_rng(0).standard_normal((200, 150))  # a flat spectrum
    with pytest.warns(sl.ConvergenceWarning, match="not met"):
        res = sl.krylov_svd(A, 5, tol=1e-3, passes=3, rng=0)
    assert res.converged is False


def test_unsettled_values_warn_and_say_so():
    A = np.random.default_rng(1).standard_normal((300, 300))
    with pytest.warns(sl.ConvergenceWarning, match="had not settled"):
        res = run_krylov_svd(A, 5, tol=None, passes=None, block_size=None, rng=0,
                             estimate_error=False, rtol=1e-12, max_passes=4)
    assert res.converged is False


def test_float32_settles_as_float64_does():
    """The k mode's rule knows the precision it runs in: rises within the
    rounding level of the values count as settled, so float32 makes the
    passes float64 makes (on this slowly decaying spectrum, as on
    debian-tfidf, it ran to the bound: 34 passes against 16 at k = 30)."""
    gen = np.random.default_rng(3)
    A = (sp.random(5000, 2000, density=0.01, format="csr", random_state=gen)
         @ sp.diags(np.arange(1, 2001) ** -0.35)).tocsr()
    r64 = sl.krylov_svd(A, 30, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ConvergenceWarning
        r32 = sl.krylov_svd(A.astype(np.float32), 30, rng=0)
    assert r32.s.dtype == np.float32 and r32.converged and r64.converged
    assert r32.passes <= r64.passes + 2
    np.testing.assert_allclose(r32.s, r64.s, rtol=1e-4)
