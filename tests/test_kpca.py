"""SketchedKernelPCA against scikit-learn's KernelPCA (kernels, transform of
new points, the inverse transform, None components), the RPCholesky
landmarks against their own approximation, the centred kernel map against
the dense centred kernel, bad input and check_estimator."""

import numpy as np
import pytest
from sklearn.decomposition import KernelPCA
from sklearn.utils.estimator_checks import check_estimator

import sketchlab as sl
from sketchlab._kpca import CentredKernelMap
from sketchlab._linear_map import as_linear_map

GEN = np.random.default_rng(0)
X = GEN.standard_normal((250, 6))
NEW = GEN.standard_normal((15, 6))


@pytest.mark.parametrize("kernel, params", [("rbf", dict(gamma=0.2)), ("linear", {}),
                                            ("poly", dict(gamma=0.1)), ("cosine", {}),
                                            ("sigmoid", dict(gamma=0.01, coef0=0.1))])
def test_exact_against_sklearn(kernel, params):
    ours = sl.SketchedKernelPCA(5, kernel=kernel, method="exact", random_state=0, **params)
    ours.fit(X)
    ref = KernelPCA(5, kernel=kernel, eigen_solver="dense", **params).fit(X)
    np.testing.assert_allclose(ours.eigenvalues_, ref.eigenvalues_, rtol=1e-10)
    np.testing.assert_allclose(ours.eigenvectors_, ref.eigenvectors_, atol=1e-8)
    np.testing.assert_allclose(ours.transform(NEW), ref.transform(NEW), atol=1e-8)
    np.testing.assert_allclose(ours.fit_transform(X), ref.fit_transform(X), atol=1e-8)
    assert ours.method_ == "exact" and ours.residuals_.shape == (5,)
    assert np.all(ours.residuals_ <= 1.5e-8 * ours.eigenvalues_[0])


def test_centred_kernel_map_is_the_centred_matrix():
    K = sl.RBFKernel(X, gamma=0.3)
    Kd = K.toarray()
    H = np.eye(250) - 1 / 250
    V = GEN.standard_normal((250, 3))
    ops = CentredKernelMap(as_linear_map(K), psd=True)
    np.testing.assert_allclose(ops.matmat(V), H @ Kd @ H @ V, atol=1e-10)


def test_rpcholesky_on_every_point_is_exact():
    ours = sl.SketchedKernelPCA(5, kernel="rbf", gamma=0.2, method="rpcholesky",
                                n_landmarks=250, random_state=0).fit(X)
    ref = KernelPCA(5, kernel="rbf", gamma=0.2, eigen_solver="dense").fit(X)
    np.testing.assert_allclose(ours.eigenvalues_, ref.eigenvalues_, rtol=1e-8)
    np.testing.assert_allclose(ours.transform(NEW), ref.transform(NEW), atol=1e-6)
    assert ours.landmark_indices_.shape == (250,)


def test_rpcholesky_landmarks_are_their_approximation():
    """On c < n landmarks: the eigenpairs of the centred Nystrom
    approximation C W^+ C^T, and transform consistent with fit_transform."""
    c = 60
    ours = sl.SketchedKernelPCA(4, kernel="rbf", gamma=0.2, method="rpcholesky",
                                n_landmarks=c, random_state=1)
    Z = ours.fit_transform(X)
    K = sl.RBFKernel(X, gamma=0.2).toarray()
    cols = ours.landmark_indices_
    approx = K[:, cols] @ np.linalg.pinv(K[np.ix_(cols, cols)]) @ K[cols]
    H = np.eye(250) - 1 / 250
    top = np.linalg.eigvalsh(H @ approx @ H)[::-1][:4]
    np.testing.assert_allclose(ours.eigenvalues_, top, rtol=1e-6)
    np.testing.assert_allclose(ours.transform(X), Z, atol=1e-6)


def test_inverse_transform_against_sklearn():
    ours = sl.SketchedKernelPCA(3, kernel="rbf", gamma=0.2, fit_inverse_transform=True)
    ref = KernelPCA(3, kernel="rbf", gamma=0.2, fit_inverse_transform=True,
                    eigen_solver="dense")
    ours.fit(X)
    ref.fit(X)
    np.testing.assert_allclose(ours.inverse_transform(ours.transform(NEW)),
                               ref.inverse_transform(ref.transform(NEW)), atol=1e-8)


def test_none_keeps_the_positive_eigenvalues():
    ours = sl.SketchedKernelPCA(kernel="rbf", gamma=0.2).fit(X[:50])
    ref = KernelPCA(kernel="rbf", gamma=0.2).fit(X[:50])
    assert ours.eigenvalues_.size == ref.eigenvalues_.size
    np.testing.assert_allclose(ours.eigenvalues_, ref.eigenvalues_, rtol=1e-8, atol=1e-10)


def test_auto_takes_landmarks_beyond_the_cache():
    small = sl.SketchedKernelPCA(3, kernel="rbf", gamma=0.2, cache_size=0.1,
                                 n_landmarks=40, random_state=0).fit(X)
    assert small.method_ == "rpcholesky"
    assert sl.SketchedKernelPCA(3, kernel="rbf", gamma=0.2).fit(X).method_ == "exact"


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(n_components=0), ValueError, "n_components must be"),
    (dict(method="dense"), ValueError, "method must be one of"),
    (dict(eigen_solver="lobpcg"), ValueError, "eigen_solver must be one of"),
    (dict(tol=-1), ValueError, "tol must be"),
    (dict(n_landmarks=0), ValueError, "n_landmarks must be"),
    (dict(cache_size=0), ValueError, "cache_size must be"),
    (dict(kernel="sigmoid", method="rpcholesky"), ValueError, "positive semidefinite"),
    (dict(kernel="nope"), ValueError, "kernel must be"),
])
def test_bad_parameters(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        sl.SketchedKernelPCA(**kwargs).fit(X)


def test_inverse_transform_needs_the_fit():
    from sklearn.exceptions import NotFittedError

    model = sl.SketchedKernelPCA(2).fit(X)
    with pytest.raises(NotFittedError, match="fit_inverse_transform"):
        model.inverse_transform(np.zeros((1, 2)))


@pytest.mark.parametrize("params", [{}, dict(kernel="rbf", method="rpcholesky",
                                             n_landmarks=20, n_components=3)])
def test_check_estimator(params):
    check_estimator(sl.SketchedKernelPCA(random_state=0, **params))
