"""SketchedKernelRidge and SketchedKernelRidgeClassifier against scikit-learn's
KernelRidge and explicit solves; the tiled symmetric kernel blocks."""

import warnings

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.utils.estimator_checks import parametrize_with_checks

import sketchlab as sl
from sketchlab import SketchedKernelRidge, SketchedKernelRidgeClassifier
from sketchlab._selection import LANDMARKS


def data(n=400, d=5, seed=0):
    gen = np.random.default_rng(seed)
    X = gen.standard_normal((n, d))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * gen.standard_normal(n)
    return X, y, gen.standard_normal((80, d))


@pytest.mark.parametrize("landmarks", LANDMARKS)
@pytest.mark.parametrize("kernel, params", [("rbf", {"gamma": 0.2}),
                                            ("laplacian", {"gamma": 0.3}),
                                            ("polynomial", {"degree": 2, "coef0": 1.0})])
def test_pcg_matches_kernel_ridge(landmarks, kernel, params):
    X, y, Xt = data()
    ref = KernelRidge(alpha=0.1, kernel=kernel, **params).fit(X, y)
    model = SketchedKernelRidge(alpha=0.1, kernel=kernel, **params, n_components=50,
                                landmarks=landmarks, solver="pcg", tol=1e-11, max_iter=500,
                                random_state=0).fit(X, y)
    assert model.solver_ == "pcg" and model.X_fit_.shape == X.shape
    scale = np.abs(ref.predict(Xt)).max()
    np.testing.assert_allclose(model.predict(Xt), ref.predict(Xt), rtol=0, atol=1e-8 * scale)
    np.testing.assert_allclose(model.dual_coef_, ref.dual_coef_, rtol=0,
                               atol=1e-8 * np.abs(ref.dual_coef_).max())
    hist = model.residual_history_
    assert hist.shape == (model.n_iter_ + 1,) and hist[0] == pytest.approx(1.0)
    assert hist[-1] <= 1e-11 < hist[-2]


def test_preconditioner_makes_pcg_converge_fast():
    # the rbf kernel of clustered points: a fast decaying spectrum, so 60
    # landmarks capture it and CG needs few iterations, far fewer than without
    gen = np.random.default_rng(1)
    X = np.vstack([gen.standard_normal((150, 3)) * 0.3 + gen.standard_normal(3) * 3
                   for _ in range(4)])
    y = X[:, 0] + np.cos(X[:, 1])
    fast = SketchedKernelRidge(alpha=1e-3, gamma=0.5, n_components=100, solver="pcg",
                               tol=1e-8, max_iter=1000, random_state=0).fit(X, y)
    slow = SketchedKernelRidge(alpha=1e-3, gamma=0.5, n_components=1, solver="pcg",
                               tol=1e-8, max_iter=1000, random_state=0).fit(X, y)
    assert fast.n_iter_ <= 30
    assert slow.n_iter_ >= 3 * fast.n_iter_


def explicit_restricted(X, y, cols, alpha, gamma):
    C = rbf_kernel(X, X[cols], gamma=gamma)
    W = C[cols]
    return np.linalg.solve(C.T @ C + alpha * W, C.T @ y)


@pytest.mark.parametrize("gram", [True, False])  # C^T C formed once / C twice an iteration
@pytest.mark.parametrize("landmarks", LANDMARKS)
@pytest.mark.parametrize("n_components", [40, 150])  # without the Gram: a sketch / the matrix
def test_restricted_matches_explicit_restricted_solve(landmarks, n_components, gram,
                                                      monkeypatch):
    import sketchlab._krr

    if not gram:
        monkeypatch.setattr(sketchlab._krr, "_GRAM_MAX_LANDMARKS", 0)
    X, y, Xt = data()
    model = SketchedKernelRidge(alpha=0.1, gamma=0.2, n_components=n_components,
                                landmarks=landmarks, solver="restricted", tol=1e-12,
                                max_iter=500, random_state=0).fit(X, y)
    cols = model.landmark_indices_
    assert model.solver_ == "restricted" and np.unique(cols).size == n_components
    np.testing.assert_array_equal(model.X_fit_, X[cols])
    beta = explicit_restricted(X, y, cols, 0.1, 0.2)
    pred = rbf_kernel(Xt, X[cols], gamma=0.2) @ beta
    np.testing.assert_allclose(model.predict(Xt), pred, rtol=0, atol=1e-7 * np.abs(pred).max())
    if gram or n_components == 150:  # the preconditioner is the matrix's own factor
        assert model.n_iter_ <= 3


def test_restricted_rpcholesky_on_an_exhausted_kernel():
    """A kernel of rank 3 (linear, 3 features) and 10 landmarks: RPCholesky
    runs out of pivots and draws the rest uniformly; the restricted solver
    then works on the kernel columns, and predicts as the explicit solve."""
    X, y, Xt = data()
    X, Xt = X[:, :3], Xt[:, :3]
    model = SketchedKernelRidge(alpha=0.1, kernel="linear", n_components=10,
                                solver="restricted", tol=1e-12, max_iter=500,
                                random_state=0).fit(X, y)
    cols = model.landmark_indices_
    assert np.unique(cols).size == 10
    C = X @ X[cols].T
    beta = np.linalg.lstsq(C.T @ C + 0.1 * C[cols], C.T @ y, rcond=None)[0]
    pred = Xt @ X[cols].T @ beta
    np.testing.assert_allclose(model.predict(Xt), pred, rtol=0, atol=1e-6 * np.abs(pred).max())


def test_restricted_approaches_the_full_solution_with_more_landmarks():
    X, y, Xt = data(n=500)
    ref = KernelRidge(alpha=0.1, kernel="rbf", gamma=0.2).fit(X, y).predict(Xt)
    errors = [np.abs(SketchedKernelRidge(alpha=0.1, gamma=0.2, n_components=c,
                                         solver="restricted", random_state=0)
                     .fit(X, y).predict(Xt) - ref).max() for c in (20, 80, 320)]
    assert errors[2] < errors[1] < errors[0]
    assert errors[2] < 0.05 * np.abs(ref).max()


@pytest.mark.parametrize("solver", ["pcg", "restricted"])
def test_multi_output_equals_one_fit_per_target(solver):
    X, y, Xt = data()
    Y = np.column_stack([y, np.cos(X[:, 2]), np.zeros(len(y))])
    kw = dict(alpha=0.1, gamma=0.2, n_components=40, solver=solver, tol=1e-11, max_iter=500,
              random_state=3)
    model = SketchedKernelRidge(**kw).fit(X, Y)
    assert model.predict(Xt).shape == (80, 3) and model.dual_coef_.shape[1] == 3
    assert model.residual_history_.shape == (model.n_iter_ + 1, 3)
    for j in range(3):
        one = SketchedKernelRidge(**kw).fit(X, Y[:, j])
        np.testing.assert_allclose(model.predict(Xt)[:, j], one.predict(Xt), rtol=0,
                                   atol=1e-8 * max(1.0, np.abs(one.predict(Xt)).max()))
    assert not model.predict(Xt)[:, 2].any()  # a zero target has the zero solution


def one_vs_all(X, y, Xt, alpha, gamma):
    classes = np.unique(y)
    Y = np.where(y[:, None] == classes[None, :], 1.0, -1.0)
    if classes.size == 2:
        Y = Y[:, 1:]
    scores = KernelRidge(alpha=alpha, kernel="rbf", gamma=gamma).fit(X, Y).predict(Xt)
    if classes.size == 2:
        return scores[:, 0], classes[(scores[:, 0] > 0).astype(int)]
    return scores, classes[scores.argmax(axis=1)]


@pytest.mark.parametrize("n_classes", [2, 4])
def test_classifier_matches_explicit_one_vs_all_ridge(n_classes):
    X, y, Xt = data()
    labels = np.array(["a", "b", "c", "d"])[np.digitize(y, np.quantile(y, [0.3, 0.55, 0.8]))
                                            % n_classes]
    clf = SketchedKernelRidgeClassifier(alpha=0.1, gamma=0.2, n_components=50, solver="pcg",
                                        tol=1e-11, max_iter=500, random_state=0).fit(X, labels)
    scores, pred = one_vs_all(X, labels, Xt, 0.1, 0.2)
    np.testing.assert_array_equal(clf.classes_, np.unique(labels))
    np.testing.assert_allclose(clf.decision_function(Xt), scores, rtol=0, atol=1e-8)
    np.testing.assert_array_equal(clf.predict(Xt), pred)
    assert clf.score(X, labels) > 0.8


def test_convergence_warning_when_cg_stops_early():
    X, y, _ = data()
    with pytest.warns(ConvergenceWarning, match=r"stopped after 2 iterations.*tol=1e-12"):
        model = SketchedKernelRidge(alpha=0.01, gamma=0.2, n_components=5, tol=1e-12,
                                    max_iter=2, random_state=0).fit(X, y)
    assert model.n_iter_ == 2 and model.residual_history_[-1] > 1e-12
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SketchedKernelRidge(alpha=0.1, gamma=0.2, n_components=50, random_state=0).fit(X, y)


def test_auto_solver_and_kernel_cache():
    X, y, Xt = data()
    full = SketchedKernelRidge(alpha=0.1, gamma=0.2, n_components=30, tol=1e-11,
                               max_iter=500, random_state=0).fit(X, y)
    assert full.solver_ == "pcg"
    # 400 x 400 kernel = 1.28 MB: 0.5 MB stores only 163 rows, the others are
    # recomputed at every product; "auto" then picks the restricted problem
    part = SketchedKernelRidge(alpha=0.1, gamma=0.2, n_components=30, tol=1e-11, max_iter=500,
                               cache_size=0.5, solver="pcg", random_state=0).fit(X, y)
    np.testing.assert_allclose(part.predict(Xt), full.predict(Xt), rtol=0, atol=1e-8)
    with pytest.warns(UserWarning, match="fewer than the effective dimension"):
        auto = SketchedKernelRidge(alpha=0.1, gamma=0.2, n_components=30, cache_size=0.5,
                                   random_state=0).fit(X, y)
    assert auto.solver_ == "restricted"


def _effective_dimension(X, gamma, alpha):
    lam = np.linalg.eigvalsh(rbf_kernel(X, gamma=gamma))
    return float(np.sum(lam / (lam + alpha)))


def test_auto_solver_warns_only_when_it_gives_up_accuracy_unasked():
    X, y, _ = data()  # d_eff(K, 0.1) = 137
    kw = dict(alpha=0.1, gamma=0.2, cache_size=0.5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # asked for the restricted model, or enough landmarks for it: no warning
        SketchedKernelRidge(n_components=30, solver="restricted", **kw).fit(X, y)
        SketchedKernelRidge(n_components=300, **kw).fit(X, y)
        model = SketchedKernelRidge(n_components="auto", **kw).fit(X, y)
    assert model.solver_ == "restricted"
    assert model.n_components_ >= _effective_dimension(X, 0.2, 0.1)


@pytest.mark.parametrize("landmarks", LANDMARKS)
def test_auto_rank_comes_from_the_effective_dimension(landmarks):
    X, y, Xt = data(n=600)
    exact = _effective_dimension(X, 0.2, 0.1)  # 170
    model = SketchedKernelRidge(alpha=0.1, gamma=0.2, n_components="auto", solver="restricted",
                                landmarks=landmarks, random_state=0).fit(X, y)
    assert model.n_components_ == model.landmark_indices_.size == model.X_fit_.shape[0]
    assert exact <= model.n_components_ <= 2 * exact
    assert exact <= model.effective_dimension_ <= 2 * exact
    # "pcg": the eigenvalues above about 10 alpha; the solution is KernelRidge's
    pcg = SketchedKernelRidge(alpha=0.1, gamma=0.2, n_components="auto", landmarks=landmarks,
                              tol=1e-10, max_iter=500, random_state=0).fit(X, y)
    assert pcg.solver_ == "pcg"
    assert 50 <= pcg.n_components_ <= max(50, 2 * _effective_dimension(X, 0.2, 1.0))
    assert pcg.n_iter_ <= 40
    ref = KernelRidge(alpha=0.1, kernel="rbf", gamma=0.2).fit(X, y)
    np.testing.assert_allclose(pcg.predict(Xt), ref.predict(Xt), rtol=0, atol=1e-6)


def test_effective_dimension_is_shown_for_fixed_ranks():
    X, y, _ = data()
    exact = _effective_dimension(X, 0.2, 0.1)
    model = SketchedKernelRidge(alpha=0.1, gamma=0.2, n_components=350, random_state=0).fit(X, y)
    assert model.n_components_ == 350
    assert model.effective_dimension_ == pytest.approx(exact, rel=0.1)


def test_sparse_and_float32_input_give_the_dense_results():
    X, y, Xt = data()
    X[np.abs(X) < 0.8] = 0.0
    kw = dict(alpha=0.1, gamma=0.2, n_components=30, tol=1e-11, max_iter=500, random_state=0)
    dense = SketchedKernelRidge(**kw).fit(X, y).predict(Xt)
    np.testing.assert_allclose(SketchedKernelRidge(**kw).fit(sp.csr_matrix(X), y).predict(
        sp.csr_matrix(Xt)), dense, rtol=0, atol=1e-8)
    X32 = X.astype(np.float32)
    ref = KernelRidge(alpha=0.1, kernel="rbf", gamma=0.2).fit(X32.astype(np.float64), y)
    np.testing.assert_allclose(SketchedKernelRidge(**kw).fit(X32, y).predict(Xt),
                               ref.predict(Xt), rtol=0, atol=1e-8)


def test_same_seed_same_model():
    X, y, Xt = data()
    for solver in ("pcg", "restricted"):
        a = SketchedKernelRidge(gamma=0.2, n_components=30, solver=solver, random_state=5)
        b = SketchedKernelRidge(gamma=0.2, n_components=30, solver=solver,
                                random_state=np.random.default_rng(5))
        a.fit(X, y)
        b.fit(X, y)
        np.testing.assert_array_equal(a.landmark_indices_, b.landmark_indices_)
        np.testing.assert_allclose(a.predict(Xt), b.predict(Xt), rtol=1e-12, atol=1e-12)
        assert a.n_iter_ == b.n_iter_


@pytest.mark.parametrize("solver", ["pcg", "restricted"])
def test_same_model_for_any_thread_count(solver):
    """The kernel rows' and the preconditioner's products run in fixed row
    chunks on Numba's threads: the same bits on one thread and on two."""
    X, y, Xt = data(n=5000)
    before = numba.get_num_threads()
    fits = []
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            fits.append(SketchedKernelRidge(gamma=0.2, n_components=60, solver=solver,
                                            random_state=3).fit(X, y))
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(fits[0].dual_coef_, fits[1].dual_coef_)
    assert fits[0].n_iter_ == fits[1].n_iter_


@pytest.mark.parametrize("params, error, match", [
    ({"alpha": 0.0}, ValueError, "alpha"),
    ({"alpha": -1.0}, ValueError, "alpha"),
    ({"tol": 0.0}, ValueError, "tol"),
    ({"max_iter": 0}, ValueError, "max_iter"),
    ({"n_components": 0}, ValueError, "n_components"),
    ({"n_components": "most"}, ValueError, "n_components must be an int >= 1 or 'auto'"),
    ({"landmarks": "kmeans"}, ValueError, "landmarks must be one of"),
    ({"solver": "cholesky"}, ValueError, "solver must be one of"),
    ({"cache_size": -1}, ValueError, "cache_size"),
    ({"kernel": "nope"}, ValueError, "kernel must be one of"),
    ({"gamma": -1.0}, ValueError, "gamma"),
])
def test_bad_parameters_are_rejected(params, error, match):
    X, y, _ = data(n=50)
    with pytest.raises(error, match=match):
        SketchedKernelRidge(**params).fit(X, y)


def test_bad_data_is_rejected():
    X, y, _ = data(n=50)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SketchedKernelRidge().fit(Xn, y)
    with pytest.raises(ValueError):
        SketchedKernelRidge().fit(X, y[:-1])
    model = SketchedKernelRidge(n_components=10).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :3])
    with pytest.raises(ValueError, match="Unknown label type"):
        SketchedKernelRidgeClassifier().fit(X, y)


@parametrize_with_checks([SketchedKernelRidge(n_components=20, random_state=0),
                          SketchedKernelRidge(n_components=20, solver="restricted",
                                              random_state=0),
                          SketchedKernelRidgeClassifier(n_components=20, random_state=0),
                          SketchedKernelRidge(n_components="auto", random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_large_symmetric_kernel_block_is_tiled_and_symmetric():
    # K[:, :] of more than 2048 points is computed by tiles (no SYRK of more
    # than 2048 rows), exactly symmetric, and equal to the explicit kernel
    X = np.random.default_rng(0).standard_normal((2600, 6))
    K = sl.RBFKernel(X, gamma=0.1)[:, :]
    np.testing.assert_array_equal(K, K.T)
    np.testing.assert_allclose(K, rbf_kernel(X, gamma=0.1), rtol=0, atol=1e-13)
    P = sl.PairwiseKernel(X, "polynomial", degree=2)[:, :]
    np.testing.assert_allclose(P, (X @ X.T / 6 + 1) ** 2, rtol=0, atol=1e-12 * np.abs(P).max())


def test_more_components_than_samples_are_clipped_with_a_warning():
    X = np.random.default_rng(0).standard_normal((40, 3))
    y = X[:, 0]
    with pytest.warns(UserWarning, match=r"n_components \(500\) > n_samples \(40\)"):
        model = SketchedKernelRidge(alpha=0.1, random_state=0).fit(X, y)
    assert model.landmark_indices_.size == 40
