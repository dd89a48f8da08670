"""RandomizedTruncatedSVD: scikit-learn API (check_estimator), TruncatedSVD's
transform and attributes (ARPACK as the reference), n_components as a
fraction, the single-pass algorithm, bad parameters."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.decomposition import TruncatedSVD
from sklearn.utils.estimator_checks import check_estimator

import sketchlab as sl
from sketchlab import RandomizedTruncatedSVD

from ._support import rel_err


def data(m=300, n=60, seed=0, sparse=False):
    gen = np.random.default_rng(seed)
    X = (gen.standard_normal((m, 8)) * [12, 9, 7, 5, 4, 3, 2, 1.5]) @ gen.standard_normal((8, n))
    X = X + 0.1 * gen.standard_normal((m, n))
    return sp.csr_matrix(X) if sparse else X


@pytest.mark.parametrize(
    "estimator",
    [RandomizedTruncatedSVD(random_state=0),
     RandomizedTruncatedSVD(n_components=1, algorithm="single-pass", random_state=0)],
    ids=["krylov", "single-pass"],
)
def test_check_estimator(estimator):
    check_estimator(estimator)


@pytest.mark.parametrize("sparse", [False, True])
def test_same_as_truncated_svd_arpack(sparse):
    X = data(sparse=sparse)
    ref = TruncatedSVD(n_components=5, algorithm="arpack", random_state=0)
    T_ref = ref.fit_transform(X)
    est = RandomizedTruncatedSVD(n_components=5, random_state=0, tol=1e-12)
    T = est.fit_transform(X)
    # same sign convention: equal without flipping
    assert rel_err(T, T_ref) < 1e-6
    assert rel_err(est.transform(X), ref.transform(X)) < 1e-6
    np.testing.assert_allclose(est.singular_values_, ref.singular_values_, rtol=1e-10)
    np.testing.assert_allclose(est.explained_variance_, ref.explained_variance_, rtol=1e-8)
    np.testing.assert_allclose(est.explained_variance_ratio_, ref.explained_variance_ratio_,
                               rtol=1e-8)
    assert rel_err(est.components_, ref.components_) < 1e-6
    np.testing.assert_allclose(est.inverse_transform(T), ref.inverse_transform(T_ref),
                               atol=1e-6 * np.abs(ref.inverse_transform(T_ref)).max())
    assert est.n_components_ == 5 and est.n_passes_ >= 2
    assert est.get_feature_names_out().tolist() == [f"randomizedtruncatedsvd{i}" for i in range(5)]


def test_default_rule_is_close_and_n_iter_sets_the_passes():
    X = data(seed=1)
    ref = TruncatedSVD(n_components=3, algorithm="arpack").fit(X)
    est = RandomizedTruncatedSVD(n_components=3, random_state=0).fit(X)
    np.testing.assert_allclose(est.singular_values_, ref.singular_values_, rtol=1e-4)
    est = RandomizedTruncatedSVD(n_components=3, n_iter=2, random_state=0).fit(X)
    assert est.n_passes_ == 6


@pytest.mark.parametrize("fraction", [0.5, 0.9, 0.99])
def test_fraction_of_the_squared_norm(fraction):
    X = data(seed=2)
    est = RandomizedTruncatedSVD(n_components=fraction, random_state=0).fit(X)
    s = np.linalg.svd(X, compute_uv=False)
    captured = np.cumsum(s ** 2) / np.sum(s ** 2)
    smallest = int(np.flatnonzero(captured >= fraction)[0]) + 1
    assert est.n_components_ == smallest
    assert est.components_.shape == (smallest, X.shape[1])
    V = est.components_.T
    assert np.linalg.norm(X @ V) ** 2 >= fraction * np.linalg.norm(X) ** 2


def test_single_pass_algorithm_is_fast_sp_svd():
    X = data(seed=3)
    est = RandomizedTruncatedSVD(n_components=4, algorithm="single-pass", random_state=5).fit(X)
    U, s, Vt = sl.fast_sp_svd(X, 4, rng=np.random.default_rng(5))[:3]
    np.testing.assert_allclose(est.singular_values_, s, rtol=1e-10)
    assert est.n_passes_ == 1 and est.error_estimate_ is not None


@pytest.mark.parametrize("params, match", [
    (dict(n_components=0), "n_components"),
    (dict(n_components=1.5), "n_components"),
    (dict(n_components=61), "n_components"),
    (dict(n_components=0.5, algorithm="single-pass"), "needs algorithm='krylov'"),
    (dict(algorithm="arpack"), "algorithm"),
    (dict(tol=-1.0), "tol"),
    (dict(n_iter=-1), "n_iter"),
])
def test_bad_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        RandomizedTruncatedSVD(**params).fit(data())


@pytest.mark.slow
def test_debian_tfidf_same_transform_as_arpack(load_libsvm):
    X, _ = load_libsvm("debian-tfidf.svm.xz")
    X = sp.csr_matrix(X)
    ref = TruncatedSVD(n_components=10, algorithm="arpack", random_state=0)
    T_ref = ref.fit_transform(X)
    est = RandomizedTruncatedSVD(n_components=10, random_state=0, tol=1e-13)
    T = est.fit_transform(X)
    assert rel_err(T, T_ref) < 1e-6
    np.testing.assert_allclose(est.singular_values_, ref.singular_values_, rtol=1e-10)


def test_a_linear_operator_and_a_dask_array_fit_as_the_matrix_does():
    """X given only by its products (a LinearOperator, e.g. a centring
    operator) or out of core (a dask array: each pass over X is one over its
    chunks, never the whole array in memory) fits as the matrix does."""
    import dask.array as da
    from scipy.sparse.linalg import aslinearoperator

    X = sp.random(300, 80, density=0.1, format="csr", random_state=0)
    ref = RandomizedTruncatedSVD(5, random_state=0).fit(X)
    for form in (aslinearoperator(X), da.from_array(X.toarray(), chunks=(100, 80))):
        est = RandomizedTruncatedSVD(5, random_state=0).fit(form)
        np.testing.assert_allclose(est.singular_values_, ref.singular_values_, rtol=1e-12)
        np.testing.assert_allclose(est.explained_variance_ratio_,
                                   ref.explained_variance_ratio_, rtol=1e-9)
        np.testing.assert_allclose(np.abs(est.transform(form)), np.abs(ref.transform(X)),
                                   rtol=1e-9, atol=1e-12)
        assert est.n_features_in_ == 80
    with pytest.raises(TypeError, match="needs the entries"):
        RandomizedTruncatedSVD(5, algorithm="single-pass").fit(aslinearoperator(X))
