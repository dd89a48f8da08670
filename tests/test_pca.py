"""RandomizedPCA against scikit-learn's PCA (dense, sparse centred
implicitly, whitened, a fraction of the variance, None), both solvers, the
probabilistic model (covariance, precision, score), float32, bad input,
check_estimator, and the fit of a dask array against the in-memory fit."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.decomposition import PCA
from sklearn.utils.estimator_checks import check_estimator

import sketchlab as sl


def dense_data(seed=0, n=200, d=30):
    gen = np.random.default_rng(seed)
    return gen.standard_normal((n, d)) @ gen.standard_normal((d, d)) + 5.0


def sparse_data(seed=0):
    return sp.random(300, 60, density=0.1, format="csr", random_state=seed)


def assert_same_fit(ours, ref, X, rtol=1e-8):
    assert ours.n_components_ == ref.n_components_
    np.testing.assert_allclose(ours.explained_variance_, ref.explained_variance_, rtol=rtol)
    np.testing.assert_allclose(ours.explained_variance_ratio_, ref.explained_variance_ratio_,
                               rtol=rtol)
    np.testing.assert_allclose(ours.singular_values_, ref.singular_values_, rtol=rtol)
    np.testing.assert_allclose(ours.mean_, ref.mean_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours.noise_variance_, ref.noise_variance_, rtol=1e-6,
                               atol=1e-12)
    # the same signs (svd_flip on the components)
    np.testing.assert_allclose(ours.components_, ref.components_, atol=1e-6)
    dense = X.toarray() if sp.issparse(X) else X
    np.testing.assert_allclose(ours.transform(X), ref.transform(dense), atol=1e-6)
    Z = ours.transform(X[:5])
    np.testing.assert_allclose(ours.inverse_transform(Z), ref.inverse_transform(Z), atol=1e-6)


@pytest.mark.parametrize("whiten", [False, True])
@pytest.mark.parametrize("n_components", [5, 0.8, None])
def test_dense_against_sklearn(whiten, n_components):
    X = dense_data()
    ours = sl.RandomizedPCA(n_components, whiten=whiten, random_state=0).fit(X)
    ref = PCA(n_components, whiten=whiten, svd_solver="full").fit(X)
    assert_same_fit(ours, ref, X)
    np.testing.assert_allclose(ours.fit_transform(X), ref.fit_transform(X), atol=1e-6)
    np.testing.assert_allclose(ours.get_covariance(), ref.get_covariance(), rtol=1e-6,
                               atol=1e-10)
    if n_components is not None:  # a singular covariance otherwise
        np.testing.assert_allclose(ours.get_precision(), ref.get_precision(), rtol=1e-6,
                                   atol=1e-10)
        np.testing.assert_allclose(ours.score_samples(X), ref.score_samples(X), rtol=1e-8)
        assert ours.score(X) == pytest.approx(ref.score(X), rel=1e-8)


@pytest.mark.parametrize("solver", ["krylov", "lanczos"])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_centred_implicitly_against_arpack(solver, fmt):
    X = sparse_data().asformat(fmt)
    ours = sl.RandomizedPCA(6, svd_solver=solver, random_state=0).fit(X)
    ref = PCA(6, svd_solver="arpack", random_state=0).fit(X)
    assert_same_fit(ours, ref, X)
    # the score from the components: no dense copy, the same values
    np.testing.assert_allclose(ours.score_samples(X), ref.score_samples(X.toarray()), rtol=1e-8,
                               atol=1e-6)


def test_sparse_input_is_never_densified(monkeypatch):
    X = sparse_data(1)

    def refuse(*args, **kwargs):
        raise AssertionError("densified")

    monkeypatch.setattr(sp.csr_matrix, "toarray", refuse)
    monkeypatch.setattr(sp.csr_matrix, "todense", refuse)
    model = sl.RandomizedPCA(4, random_state=0).fit(X)
    model.transform(X)
    model.score_samples(X)


def test_default_rule_reaches_variances_within_1e_7():
    """A flat spectrum (sparse random data), where krylov_svd's own rule
    leaves a few 1e-5: the estimator's rule (1e-7) is within 1e-6."""
    X = sp.random(2000, 400, density=0.02, format="csr", random_state=3)
    ours = sl.RandomizedPCA(10, random_state=0).fit(X)
    exact = np.linalg.svd(X.toarray() - np.asarray(X.mean(axis=0)), compute_uv=False)[:10]
    np.testing.assert_allclose(ours.explained_variance_, exact ** 2 / 1999, rtol=1e-6)


def test_float32_kept():
    X = dense_data().astype(np.float32)
    model = sl.RandomizedPCA(3, random_state=0).fit(X)
    assert model.components_.dtype == np.float32
    assert model.transform(X).dtype == np.float32


def test_constant_data():
    model = sl.RandomizedPCA(2).fit(np.ones((10, 4)))
    np.testing.assert_array_equal(model.explained_variance_, 0.0)
    assert model.noise_variance_ == 0.0


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(n_components=0), ValueError, "n_components must be an int in"),
    (dict(n_components=31), ValueError, "n_components must be <="),
    (dict(n_components=1.5), ValueError, "n_components must be"),
    (dict(n_components="mle"), ValueError, "mle"),
    (dict(svd_solver="arpack"), ValueError, "svd_solver must be one of"),
    (dict(tol=-1.0), ValueError, "tol must be"),
    (dict(iterated_power=-1), ValueError, "iterated_power must be"),
    (dict(power_iteration_normalizer="x"), ValueError, "power_iteration_normalizer"),
    (dict(svd_solver="lanczos", n_components=0.5), ValueError, "lanczos"),
])
def test_bad_parameters(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        sl.RandomizedPCA(**kwargs).fit(dense_data())


def test_one_sample_is_refused():
    with pytest.raises(ValueError, match="n_samples=1"):
        sl.RandomizedPCA(1).fit(np.ones((1, 3)))


def test_check_estimator():
    check_estimator(sl.RandomizedPCA(random_state=0))


# ---------------------------------------------------------------------------
# dask
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("solver", ["krylov", "lanczos"])
def test_dask_fit_is_the_in_memory_fit(fmt, solver):
    da = pytest.importorskip("dask.array")
    X = dense_data(2, n=500, d=40) if fmt == "dense" else sparse_data(2)
    A = da.from_array(X, chunks=(120, X.shape[1]), asarray=False)
    got = sl.RandomizedPCA(5, svd_solver=solver, random_state=0, scheduler="sync").fit(A)
    want = sl.RandomizedPCA(5, svd_solver=solver, random_state=0).fit(X)
    assert got.n_passes_ == want.n_passes_
    np.testing.assert_allclose(got.explained_variance_, want.explained_variance_, rtol=1e-10)
    np.testing.assert_allclose(got.components_, want.components_, atol=1e-10)
    np.testing.assert_allclose(got.mean_, want.mean_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got.transform(A).compute(), want.transform(X), atol=1e-10)


def test_dask_moments_do_not_cancel():
    """Means 1e8 times the spread: the chunks' moments combined pairwise."""
    da = pytest.importorskip("dask.array")
    X = dense_data(4, n=400, d=10) * 1e-8 + 1.0
    A = da.from_array(X, chunks=(70, 10))
    got = sl.RandomizedPCA(3, random_state=0, scheduler="sync").fit(A)
    want = PCA(3, svd_solver="full").fit(X)
    np.testing.assert_allclose(got.explained_variance_ratio_, want.explained_variance_ratio_,
                               rtol=1e-6)
