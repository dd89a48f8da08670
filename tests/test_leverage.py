"""leverage_scores: the exact method against NumPy SVD references (full rank,
rank deficient, rank k, both axes, dense and sparse), the sketched method
(Drineas, Magdon-Ismail, Mahoney & Woodruff 2012) within a constant factor
of the exact scores on random and real data, and bad input."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import svds
from threadpoolctl import threadpool_limits

import sketchlab._leverage as leverage
import sketchlab as sl
from sketchlab import leverage_scores

EPS64 = np.finfo(np.float64).eps
FORMS = {
    "dense-C": np.ascontiguousarray,
    "dense-F": np.asfortranarray,
    "csr": sp.csr_matrix,
    "csc": sp.csc_array,
    "coo": sp.coo_matrix,
}


def reference_scores(A, axis=0, k=None, rtol=None):
    """Squared row norms of the left singular vectors of the numerical rank
    (at most k) from numpy.linalg.svd of the dense A (A^T for axis 1)."""
    A = np.asarray(A.toarray() if sp.issparse(A) else A, dtype=np.float64)
    if axis == 1:
        A = A.T
    U, s, _ = np.linalg.svd(A, full_matrices=False)
    tol = (max(A.shape) * EPS64 if rtol is None else rtol) * s[0]
    rank = int(np.sum(s > tol)) if s[0] > 0 else 0
    if k is not None:
        rank = min(rank, k)
    return np.sum(U[:, :rank] ** 2, axis=1)


def spectrum_matrix(m, n, singular_values, seed, coherent=True):
    """U diag(s) V^T with random orthonormal U, V; ``coherent`` makes U's rows
    of very different norms (scores from ~0 to ~1)."""
    g = np.random.default_rng(seed)
    q = len(singular_values)
    G = g.standard_normal((m, q))
    if coherent:
        G *= np.exp(2.0 * g.standard_normal((m, 1)))
    U = np.linalg.qr(G)[0]
    V = np.linalg.qr(g.standard_normal((n, q)))[0]
    return (U * np.asarray(singular_values, dtype=np.float64)) @ V.T


def ratios(approx, exact, floor=1e-3):
    """approx / exact on the entries whose exact score is not negligible
    (above ``floor`` times the mean score)."""
    keep = exact > floor * exact.sum() / exact.shape[0]
    return approx[keep] / exact[keep]


# ---- exact -----------------------------------------------------------------------


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("shape", [(40, 9), (9, 40), (25, 25)])
def test_exact_full_rank_matches_numpy(shape, axis, form):
    A = np.random.default_rng(1).standard_normal(shape)
    got = leverage_scores(FORMS[form](A), axis=axis)
    want = reference_scores(A, axis)
    assert got.dtype == np.float64 and got.shape == (shape[axis],)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert got.sum() == pytest.approx(min(shape), rel=1e-12)
    # the same scores as the diagonal of the projection A A^+ onto the range
    B = A if axis == 0 else A.T
    np.testing.assert_allclose(got, np.diag(B @ np.linalg.pinv(B)), rtol=0, atol=1e-10)


@pytest.mark.parametrize("form", ["dense-C", "csr", "csc"])
@pytest.mark.parametrize("axis", [0, 1])
def test_exact_rank_deficient(axis, form):
    A = spectrum_matrix(50, 30, [5.0, 3.0, 2.0, 1.0], seed=2)  # rank 4
    got = leverage_scores(FORMS[form](A), axis=axis)
    np.testing.assert_allclose(got, reference_scores(A, axis), rtol=0, atol=1e-10)
    assert got.sum() == pytest.approx(4.0, rel=1e-10)
    # rtol decides the rank: 0.3 sigma_max keeps sigma = 5, 3 and 2
    got = leverage_scores(FORMS[form](A), axis=axis, rtol=0.3)
    np.testing.assert_allclose(got, reference_scores(A, axis, rtol=0.3), rtol=0, atol=1e-10)
    assert got.sum() == pytest.approx(3.0, rel=1e-10)


@pytest.mark.parametrize("form", ["dense-C", "dense-F", "csr", "csc"])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("k", [1, 3, 6, 9])
def test_exact_rank_k(k, axis, form):
    # rank 6 with distinct singular values: the top-k subspace is unique
    A = spectrum_matrix(40, 30, [8.0, 5.0, 3.0, 2.0, 1.5, 1.0], seed=3)
    got = leverage_scores(FORMS[form](A), axis=axis, k=k)
    np.testing.assert_allclose(got, reference_scores(A, axis, k=k), rtol=0, atol=1e-10)
    assert got.sum() == pytest.approx(min(k, 6), rel=1e-10)
    assert got.min() >= 0 and got.max() <= 1 + 1e-12


def test_exact_rank_k_equals_full_rank_at_k_min_dimension():
    A = np.random.default_rng(4).standard_normal((30, 7))
    for axis in (0, 1):
        np.testing.assert_array_equal(leverage_scores(A, axis=axis, k=7),
                                      leverage_scores(A, axis=axis))


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("form", ["csr", "csc"])
def test_exact_rank_k_of_a_large_sparse_matrix_uses_arpack(form, axis, monkeypatch):
    monkeypatch.setattr(leverage, "_DENSE_SVD_ENTRIES", 0)  # every sparse A counts as large
    calls = []
    original = leverage._exact_top_k_sparse
    monkeypatch.setattr(leverage, "_exact_top_k_sparse",
                        lambda *a: calls.append(1) or original(*a))
    A = sp.random(300, 200, density=0.05, format=form, random_state=5)
    A = A + sp.diags(np.linspace(3.0, 0.5, 200), shape=(300, 200), format=form)
    for k in (1, 4, 10):
        got = leverage_scores(A, axis=axis, k=k)
        np.testing.assert_allclose(got, reference_scores(A, axis, k=k), rtol=0, atol=1e-8)
        assert got.sum() == pytest.approx(k, rel=1e-10)
    assert len(calls) == 3
    # rank 3 < k: the zero singular values ARPACK returns are dropped
    low = sp.csr_matrix(spectrum_matrix(300, 200, [4.0, 2.0, 1.0], seed=6, coherent=False))
    got = leverage_scores(low, axis=axis, k=6)
    np.testing.assert_allclose(got, reference_scores(low, axis, k=6), rtol=0, atol=1e-8)
    assert got.sum() == pytest.approx(3.0, rel=1e-8)


@pytest.mark.parametrize("method", ["exact", "sketch", "krylov"])
@pytest.mark.parametrize("form", ["dense-C", "csr", "csc"])
def test_zero_matrix_gives_zero_scores(form, method):
    Z = FORMS[form](np.zeros((12, 5)))
    for axis, length in ((0, 12), (1, 5)):
        for k in (None, 1, 5) if method != "krylov" else (1, 5):
            got = leverage_scores(Z, axis=axis, k=k, method=method, rng=0)
            np.testing.assert_array_equal(got, np.zeros(length))
    # an explicitly stored zero is still a zero matrix
    stored = sp.csr_matrix((np.zeros(3), np.array([0, 1, 2]), np.array([0, 1, 2, 3] + [3] * 9)),
                           shape=(12, 5))
    np.testing.assert_array_equal(leverage_scores(stored, k=2, method=method, rng=0),
                                  np.zeros(12))


def test_empty_matrix_gives_empty_or_zero_scores():
    np.testing.assert_array_equal(leverage_scores(np.zeros((0, 3))), np.zeros(0))
    np.testing.assert_array_equal(leverage_scores(np.zeros((0, 3)), axis=1), np.zeros(3))
    np.testing.assert_array_equal(leverage_scores(np.zeros((0, 3)), method="sketch"),
                                  np.zeros(0))


def test_float32_input_gives_float64_scores():
    A = np.random.default_rng(7).standard_normal((30, 6)).astype(np.float32)
    for method in ("exact", "sketch"):
        got = leverage_scores(A, k=3, method=method, rng=0)
        assert got.dtype == np.float64
    np.testing.assert_allclose(leverage_scores(A, k=3), reference_scores(A, k=3), atol=1e-10)


# ---- sketched: full rank (Drineas et al. 2012, Algorithm 1) -----------------------------
# Pi1 an OSNAP with 8 d rows, Pi2 Gaussian with ceil(8 ln m) columns.  Observed
# over seeds 0..4: ratios sketched / exact in [0.74, 1.39] on the 4000 x 40
# matrix below, in [0.78, 1.25] on the rank-5 one.


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sketch_full_rank_within_a_constant_factor(seed):
    A = spectrum_matrix(4000, 40, np.linspace(1.0, 10.0, 40), seed=8)
    exact = leverage_scores(A)
    got = leverage_scores(A, method="sketch", rng=seed)
    r = ratios(got, exact)
    assert r.size > 2000
    assert np.mean((r >= 0.5) & (r <= 2.0)) >= 0.99
    assert 0.25 <= r.min() and r.max() <= 4.0
    assert 0.9 <= np.median(r) <= 1.1
    assert got.sum() == pytest.approx(40, rel=0.02)
    assert got.min() >= 0 and got.max() <= 1.0
    # sparse A gives the same sketch, the same scores
    np.testing.assert_allclose(leverage_scores(sp.csr_matrix(A), method="sketch", rng=seed),
                               got, rtol=1e-9, atol=1e-14)


def test_sketch_full_rank_of_a_rank_deficient_matrix():
    A = spectrum_matrix(3000, 30, [5.0, 4.0, 3.0, 2.0, 1.0], seed=9)  # rank 5
    A[:100] = 0.0  # rows with exact score 0
    exact = leverage_scores(A)
    got = leverage_scores(sp.csr_matrix(A), method="sketch", rng=0)
    assert got.sum() == pytest.approx(5.0, rel=0.02)
    np.testing.assert_array_equal(got[:100], 0.0)
    r = ratios(got, exact)
    assert np.mean((r >= 0.5) & (r <= 2.0)) >= 0.99


@pytest.mark.parametrize("rank", [30, 12])
def test_sketch_full_rank_of_a_wide_matrix_keeps_its_column_space(rank):
    # n > 8 m: the columns are compressed by an embedding, which leaves the
    # column space and so the row scores unchanged; the rest is exact
    A = spectrum_matrix(30, 400, np.linspace(1.0, 3.0, rank), seed=10)
    got = leverage_scores(sp.csc_matrix(A), method="sketch", rng=0)
    np.testing.assert_allclose(got, leverage_scores(A), rtol=0, atol=1e-8)


def test_sketch_on_axis_1_is_the_sketch_of_the_transpose():
    A = sp.random(500, 40, density=0.2, format="csr", random_state=11)
    for k in (None, 5):
        np.testing.assert_array_equal(
            leverage_scores(A.T, axis=1, k=k, method="sketch", rng=3),
            leverage_scores(A, axis=0, k=k, method="sketch", rng=3),
        )


# ---- sketched: rank k -------------------------------------------------------------


@pytest.mark.parametrize("decay", [0.5, 0.8])
@pytest.mark.parametrize("k", [1, 5, 10])
@pytest.mark.parametrize("axis", [0, 1])
def test_sketch_rank_k_with_a_spectral_gap(axis, k, decay):
    # sigma_{k+1} / sigma_k = decay: subspace iteration converges fast; the
    # observed ratios lie in [0.99, 1.01]
    A = spectrum_matrix(3000, 60, decay ** np.arange(60), seed=12)
    exact = leverage_scores(A, axis=axis, k=k)
    for form in ("dense-C", "csr"):
        got = leverage_scores(FORMS[form](A), axis=axis, k=k, method="sketch", rng=1)
        r = ratios(got, exact)
        assert 0.9 <= r.min() and r.max() <= 1.1
        assert got.sum() == pytest.approx(k, rel=1e-10)


@pytest.mark.parametrize("k", [5, 10])
def test_sketch_rank_k_with_a_slowly_decaying_spectrum(k):
    # sigma_{k+1} / sigma_k = 0.95: observed 99.6% of the ratios in [0.5, 2]
    A = spectrum_matrix(3000, 60, 0.95 ** np.arange(60), seed=12)
    for axis in (0, 1):
        exact = leverage_scores(A, axis=axis, k=k)
        r = ratios(leverage_scores(A, axis=axis, k=k, method="sketch", rng=1), exact)
        assert np.mean((r >= 0.5) & (r <= 2.0)) >= 0.95


def test_sketch_rank_k_of_a_rank_deficient_matrix():
    A = spectrum_matrix(2000, 50, [6.0, 3.0, 1.0], seed=13)  # rank 3 < k
    got = leverage_scores(sp.csr_matrix(A), k=8, method="sketch", rng=0)
    assert got.sum() == pytest.approx(3.0, rel=1e-10)
    r = ratios(got, leverage_scores(A, k=8))
    assert 0.99 <= r.min() and r.max() <= 1.01


def test_sketch_is_reproducible_and_seeded():
    A = sp.random(800, 60, density=0.1, format="csr", random_state=14)
    for k in (None, 4):
        a = leverage_scores(A, k=k, method="sketch", rng=5)
        np.testing.assert_array_equal(a, leverage_scores(A, k=k, method="sketch", rng=5))
        # an int seed is the Generator default_rng(seed)
        np.testing.assert_array_equal(
            a, leverage_scores(A, k=k, method="sketch", rng=np.random.default_rng(5)))
        assert not np.array_equal(a, leverage_scores(A, k=k, method="sketch", rng=6))
    g1, g2 = np.random.default_rng(7), np.random.default_rng(7)
    first = leverage_scores(A, k=4, method="sketch", rng=g1)
    np.testing.assert_array_equal(first, leverage_scores(A, k=4, method="sketch", rng=g2))
    # a Generator is advanced: the next call draws other sketches
    assert not np.array_equal(first, leverage_scores(A, k=4, method="sketch", rng=g1))


def test_sketch_never_densifies_a_large_sparse_matrix():
    # 200000 x 100000 (160 GB dense) with 1.2M nonzeros, and a tall 200000 x 30
    m, n = 200_000, 100_000
    g = np.random.default_rng(15)
    nnz = 1_200_000
    A = sp.csr_matrix((g.standard_normal(nnz), (g.integers(0, m, nnz), g.integers(0, n, nnz))),
                      shape=(m, n))
    tall = sp.random(m, 30, density=0.1, format="csr", random_state=16)
    # (its time is the benchmarks' to judge, bench_trace: a timed assertion here failed
    # under load)
    for M, k, width in ((A, 10, 20), (tall, None, 30)):
        tracemalloc.start()
        scores = leverage_scores(M, k=k, method="sketch", rng=0)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert scores.shape == (m,) and np.isfinite(scores).all()
        # a few dense m x width blocks and copies of A's arrays, nothing m x n
        assert peak < 12 * 8 * m * width + 3 * 12 * M.nnz, peak


# ---- sketched on real data ----------------------------------------------------------


def test_sketch_on_mushrooms(load_libsvm):
    # 8124 x 112 one-hot data of rank 84.  Observed (seed 0): full rank ratios
    # in [0.52, 1.62]; rank 5 and 20 at least 94% of the ratios in [0.5, 2]
    X, _ = load_libsvm("mushrooms.xz")
    X = X.tocsr()
    with threadpool_limits(1, user_api="blas"):  # 10x faster dense SVDs on a busy machine
        exact = reference_scores(X)
    assert exact.sum() == pytest.approx(84, rel=1e-10)
    got = leverage_scores(X, method="sketch", rng=0)
    r = ratios(got, exact)
    assert np.mean((r >= 0.5) & (r <= 2.0)) >= 0.99
    assert got.sum() == pytest.approx(84, rel=0.02)
    for k in (5, 20):
        for axis in (0, 1):
            with threadpool_limits(1, user_api="blas"):
                exact = reference_scores(X, axis=axis, k=k)
            got = leverage_scores(X, axis=axis, k=k, method="sketch", rng=0)
            r = ratios(got, exact)
            assert np.mean((r >= 0.5) & (r <= 2.0)) >= 0.9
            assert 0.8 <= np.median(r) <= 1.25
            assert got.sum() == pytest.approx(k, rel=1e-10)


@pytest.mark.slow
@pytest.mark.parametrize("axis", [0, 1])
def test_sketch_rank_10_on_debian_tfidf(load_libsvm, axis):
    # 52396 x 25252, nnz 2.07M; sigma_11 / sigma_10 = 0.98, so the exact
    # rank-10 scores are ill-conditioned.  Observed over seeds 0..4: axis 0
    # median ratio 1.03, 91% in [0.5, 2]; axis 1 median 1.17, 83% in [0.5, 2]
    X, _ = load_libsvm("debian-tfidf.svm.xz")
    X = X.tocsr()
    M = X if axis == 0 else X.T
    U, s, Vt = svds(M, k=10, v0=np.random.default_rng(0).standard_normal(min(M.shape)))
    exact = np.sum(U**2, axis=1)
    got = leverage_scores(X, axis=axis, k=10, method="sketch", rng=0)
    assert got.sum() == pytest.approx(10, rel=1e-10)
    r = ratios(got, exact, floor=0.1)
    assert np.mean((r >= 0.5) & (r <= 2.0)) >= (0.85 if axis == 0 else 0.7)
    assert 0.8 <= np.median(r) <= 1.5


# ---- krylov: rank k ---------------------------------------------------------------


def _median_relative_error(got, exact):
    keep = exact > 0
    return float(np.median(np.abs(got[keep] - exact[keep]) / exact[keep]))


@pytest.mark.parametrize("axis", [0, 1])
def test_krylov_rank_k_on_a_slowly_decaying_spectrum(axis):
    # sigma_{k+1} / sigma_k = 0.97: block Krylov's truncation gives the
    # scores to within a few percent, closer than the subspace iteration
    A = spectrum_matrix(3000, 80, 0.97 ** np.arange(80), seed=12)
    exact = leverage_scores(A, axis=axis, k=20)
    got = leverage_scores(sp.csr_matrix(A), axis=axis, k=20, method="krylov", rng=1)
    assert got.sum() == pytest.approx(20, rel=1e-10)
    krylov = _median_relative_error(got, exact)
    sketch = _median_relative_error(
        leverage_scores(A, axis=axis, k=20, method="sketch", rng=1), exact)
    assert krylov <= 0.02 and krylov <= sketch


def test_krylov_needs_k_and_is_reproducible():
    A = sp.random(500, 40, density=0.2, format="csr", random_state=3)
    with pytest.raises(ValueError, match="method='krylov' needs k"):
        leverage_scores(A, method="krylov")
    a = leverage_scores(A, k=5, method="krylov", rng=4)
    np.testing.assert_array_equal(a, leverage_scores(A, k=5, method="krylov", rng=4))


@pytest.mark.slow
def test_krylov_rank_50_on_debian_tfidf(load_libsvm):
    # the target: median relative error <= 0.1 against the exact
    # rank-50 row scores (measured 3e-4; "sketch" 0.10).  Its cost against
    # "sketch" is the compare.py row "leverage k=50 debian-tfidf".
    X, _ = load_libsvm("debian-tfidf.svm.xz")
    X = X.tocsr()
    exact = leverage_scores(X, k=50)
    got = leverage_scores(X, k=50, method="krylov", rng=0)
    assert _median_relative_error(got, exact) <= 0.1


# ---- bad input ----------------------------------------------------------------------

A_BAD = np.random.default_rng(17).standard_normal((6, 4))
BAD = [
    (dict(k=0), ValueError, r"k must be an int in \[1, 4\], got 0"),
    (dict(k=5), ValueError, r"k must be an int in \[1, 4\], got 5"),
    (dict(k=-1), ValueError, r"k must be an int in \[1, 4\], got -1"),
    (dict(k=2.5), TypeError, "k must be an int, got 2.5"),
    (dict(k=True), TypeError, "k must be an int, got True"),
    (dict(k="3"), TypeError, "k must be an int, got '3'"),
    (dict(method="fast"), ValueError,
     r"method must be one of \['exact', 'krylov', 'sketch'\], got 'fast'"),
    (dict(method=None), ValueError, "method must be one of .* got None"),
    (dict(rtol=-1), ValueError, r"rtol must be None or a real number in \[0, 1\), got -1"),
    (dict(rtol=float("nan")), ValueError, r"rtol must be .* got nan"),
    (dict(rtol=2.0), ValueError, r"rtol must be .* got 2.0"),
    (dict(rtol=1.0), ValueError, r"rtol must be .* got 1.0"),
    (dict(rtol=float("inf")), ValueError, r"rtol must be .* got inf"),
    (dict(rtol=True), TypeError, r"rtol must be None or a real number in \[0, 1\), got True"),
    (dict(rtol=np.bool_(False)), TypeError, "rtol must be .* got .*False"),
    (dict(rtol="0.1"), TypeError, "rtol must be .* got '0.1'"),
    (dict(rtol=1j), TypeError, r"rtol must be .* got 1j"),
    (dict(rng="seed"), TypeError, "rng must be None, an int or a numpy.random.Generator"),
    (dict(rng=-1), ValueError, r"rng must be an int in \[0, 2\*\*64\)"),
    (dict(axis=2), ValueError, "axis must be 0 or 1, got 2"),
]


@pytest.mark.parametrize("method", ["exact", "sketch", "krylov"])
@pytest.mark.parametrize("kwargs, exc, match", BAD)
def test_bad_input(kwargs, exc, match, method):
    kwargs = {"method": method, **kwargs}
    with pytest.raises(exc, match=match):
        leverage_scores(A_BAD, **kwargs)


def test_bad_matrix():
    with pytest.raises(ValueError, match="A must not contain NaN or Inf"):
        leverage_scores(np.array([[1.0, np.nan]]), method="sketch")
    with pytest.raises(TypeError, match="A must be numeric"):
        leverage_scores(np.array([["a"]], dtype=object))


def test_valid_rtol_values_are_accepted():
    A = spectrum_matrix(20, 6, [4.0, 2.0, 1.0], seed=18)
    for rtol in (0, 0.0, np.float32(0.1), 0.5, np.float64(0.9)):
        got = leverage_scores(A, rtol=rtol)
        np.testing.assert_allclose(got, reference_scores(A, rtol=float(rtol)), atol=1e-10)


@pytest.mark.parametrize("scores", [[1.5e308, 1e308, 0.0, 5e307], [1.7e308] * 3 + [1e-300]])
def test_leverage_sampler_with_scores_whose_sum_overflows(scores):
    # sum(scores) is inf in float64 while each score is finite: the
    # probabilities are still scores / sum(scores), computed exactly
    from fractions import Fraction

    with np.errstate(over="ignore"):
        assert np.sum(scores) == np.inf
    S = sl.LeverageScoreSampler(4, scores=scores, rng=0)
    total = sum(Fraction(s) for s in scores)
    want = np.array([float(Fraction(s) / total) for s in scores])
    np.testing.assert_allclose(S.probabilities, want, rtol=1e-15, atol=0)
    assert np.isfinite(S.weights).all() and np.all(S.weights > 0)
    assert set(S.indices) <= set(np.flatnonzero(want))
    np.testing.assert_allclose(S.weights, 1 / np.sqrt(4 * want[S.indices]), rtol=1e-15)


def test_rtol_is_checked():
    for bad, exc in ((-1, ValueError), (float("nan"), ValueError), (2.0, ValueError),
                     (True, TypeError)):
        with pytest.raises(exc, match="rtol must be None or a real number"):
            sl.leverage_scores(np.eye(3), rtol=bad)
