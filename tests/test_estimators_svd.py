"""SinglePassSVD: scikit-learn API (check_estimator), partial_fit over row
batches against the one-pass functions on the stacked rows, transform."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import check_estimator

import sketchlab as sl
from sketchlab import SinglePassSVD

from ._support import bad_sparse_index_output


def data(m=240, n=30, seed=0):
    gen = np.random.default_rng(seed)
    X = (gen.standard_normal((m, 6)) * [9, 7, 5, 4, 3, 2]) @ gen.standard_normal((6, n))
    return X + 0.05 * gen.standard_normal((m, n))


@pytest.mark.parametrize(
    "estimator",
    [
        SinglePassSVD(n_components=1, random_state=0),
        SinglePassSVD(n_components=2, algorithm="practical", random_state=0),
        SinglePassSVD(n_components=2, algorithm="three-sketch", random_state=0),
    ],
    ids=["fast", "practical", "three-sketch"],
)
def test_check_estimator(estimator):
    check_estimator(estimator)


FUNCTIONS = {
    "fast": (sl.fast_sp_svd, dict(c=8, r=10, s_c=24, s_r=30)),
    "practical": (sl.practical_sp_svd, dict(c=8, r=17)),
    "three-sketch": (sl.three_sketch_svd, dict(c=8, r=10, s_c=24, s_r=30)),
}


@pytest.mark.parametrize("algorithm", list(FUNCTIONS))
@pytest.mark.parametrize("sparse", [False, True])
def test_batches_equal_one_pass_function(algorithm, sparse):
    """Batches of rows give what the function gives on the stacked rows (same
    seeds, same sizes: the row-side operators regenerate the same columns)."""
    func, sizes = FUNCTIONS[algorithm]
    X = data()
    if sparse:
        X = sp.random(240, 30, density=0.3, format="csr", random_state=1) + sp.csr_matrix(X > 8)
    kinds = dict(range_sketch="osnap-gaussian")
    if algorithm != "practical":
        kinds["core_sketch"] = "osnap"
    est = SinglePassSVD(n_components=4, algorithm=algorithm, random_state=3, **sizes, **kinds)
    for i0, i1 in [(0, 50), (50, 51), (51, 200), (200, 240)]:
        est.partial_fit(X[i0:i1])
    U, s, Vt = func(X, 4, rng=3, axis=0, rank=4, **sizes, **kinds)
    assert est.n_samples_seen_ == 240 and est.n_features_in_ == 30
    np.testing.assert_allclose(est.singular_values_, s, rtol=1e-10)
    np.testing.assert_allclose(est.components_.T @ np.diag(est.singular_values_) @ est.components_,
                               Vt.T @ np.diag(s) @ Vt, atol=1e-10 * s[0])
    # fit = one batch, and refits start over
    est2 = SinglePassSVD(n_components=4, algorithm=algorithm, random_state=3, **sizes, **kinds)
    est2.fit(X[:10]).fit(X)
    np.testing.assert_allclose(est2.singular_values_, s, rtol=1e-10)


def test_transform_projects_on_right_singular_vectors():
    gen = np.random.default_rng(5)
    X = gen.standard_normal((200, 3)) @ gen.standard_normal((3, 25))  # rank 3 exactly
    est = SinglePassSVD(n_components=3, random_state=0).fit(X)
    np.testing.assert_allclose(est.transform(X), X @ est.components_.T, rtol=1e-12)
    np.testing.assert_allclose(est.transform(sp.csr_matrix(X)), X @ est.components_.T,
                               rtol=1e-12)
    _, s, Vt = np.linalg.svd(X, full_matrices=False)
    np.testing.assert_allclose(est.singular_values_, s[:3], rtol=1e-10)
    # X V V^T = X: the components span the row space
    np.testing.assert_allclose(est.transform(X) @ est.components_, X, atol=1e-10 * s[0])


def test_bad_parameters_and_batches():
    X = data()
    with pytest.raises(ValueError, match="n_features=30"):
        SinglePassSVD(n_components=31).fit(X)
    with pytest.raises(ValueError, match="n_samples=3"):
        SinglePassSVD(n_components=4).fit(X[:3])
    with pytest.raises(ValueError, match="algorithm must be one of"):
        SinglePassSVD(algorithm="exact").fit(X)
    with pytest.raises(ValueError, match="range_sketch must be one of"):
        SinglePassSVD(range_sketch="srht").fit(X)
    with pytest.raises(ValueError, match="needs r >= c"):
        SinglePassSVD(n_components=2, algorithm="practical", c=6, r=5).fit(X)
    est = SinglePassSVD(n_components=2, random_state=0).partial_fit(X[:20])
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(X[20:, :10])
    with pytest.raises(ValueError, match="NaN|infinity"):
        est.partial_fit(np.full((3, 30), np.nan))


@pytest.mark.parametrize("sparse", [False, True])
def test_attributes_follow_truncated_svd(sparse):
    from sklearn.decomposition import TruncatedSVD

    gen = np.random.default_rng(3)
    X = gen.standard_normal((400, 6)) @ gen.standard_normal((6, 50)) + 2.0
    X = sp.csr_matrix(X) if sparse else X
    ours = SinglePassSVD(n_components=5, random_state=0)
    Z = ours.fit_transform(X)
    ref = TruncatedSVD(n_components=5, algorithm="arpack").fit(X)
    np.testing.assert_allclose(ours.singular_values_, ref.singular_values_, rtol=1e-6)
    # TruncatedSVD's definitions, applied to our components
    XV = np.asarray(X @ ours.components_.T)
    np.testing.assert_allclose(Z, XV, rtol=1e-6, atol=1e-8 * np.abs(XV).max())
    np.testing.assert_allclose(ours.explained_variance_, np.var(XV, axis=0), rtol=1e-6)
    Xd = X.toarray() if sparse else X
    np.testing.assert_allclose(ours.explained_variance_ratio_,
                               np.var(XV, axis=0) / np.var(Xd, axis=0).sum(), rtol=1e-6)
    np.testing.assert_allclose(ours.explained_variance_ratio_, ref.explained_variance_ratio_,
                               rtol=1e-5)
    np.testing.assert_allclose(ours.inverse_transform(ours.transform(X)),
                               ref.inverse_transform(ref.transform(X)), rtol=1e-6, atol=1e-6)
    # in batches: the same totals
    batched = SinglePassSVD(n_components=5, random_state=0)
    for lo in range(0, 400, 150):
        batched.partial_fit(X[lo:lo + 150])
    np.testing.assert_allclose(batched.explained_variance_ratio_, ours.explained_variance_ratio_,
                               rtol=1e-8)
    true_error = np.linalg.norm(Xd - (Z @ ours.components_))  # rank 7 data, 5 components
    est = ours.error_estimate_
    assert est.n_probes == 10 and est.low <= est.value <= est.high
    assert 0.5 < est.value / true_error < 2
    assert est.relative == pytest.approx(est.value / np.linalg.norm(Xd))


@pytest.mark.kernels  # reaches the compiled loops in a fresh interpreter
@pytest.mark.parametrize("call", [
    "SinglePassSVD(n_components=3, random_state=0).partial_fit(X)",
    "SinglePassSVD(n_components=3, random_state=0).fit(good).transform(X)",
])
@pytest.mark.parametrize("index", ["10**9", "-3"])
def test_sparse_indices_are_checked_before_scikit_learn(call, index):
    """A CSR X with an index out of range is refused by name (it used to crash
    the interpreter); in a fresh interpreter, so a crash fails only this test."""
    out = bad_sparse_index_output("SinglePassSVD", call, index)
    assert "X has sparse indices outside [0, 40)" in out
