"""SketchedRidge, SketchedRidgeClassifier, SketchedRidgeCV: scikit-learn's API
(check_estimator), and the answers of Ridge(solver="cholesky"), RidgeClassifier
and RidgeCV."""


import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import Ridge, RidgeClassifier, RidgeCV
from sklearn.utils.estimator_checks import check_estimator

import sketchlab
from sketchlab import SketchedRidge, SketchedRidgeClassifier, SketchedRidgeCV

from ._support import bad_sparse_index_output


@pytest.mark.parametrize("estimator", [
    SketchedRidge(random_state=0), SketchedRidge(solver="nystrom-pcg", random_state=0),
    SketchedRidgeClassifier(random_state=0), SketchedRidgeCV(random_state=0),
    SketchedRidgeCV(solver="nystrom-pcg", cv=0.25, random_state=0),
], ids=["ridge", "ridge-pcg", "classifier", "cv", "cv-holdout-pcg"])
def test_check_estimator(estimator):
    check_estimator(estimator)


def data(m=600, d=40, sparse=False, targets=1, seed=0):
    """X with column means far from zero (the intercept matters) and a
    decaying spectrum; y from a planted model."""
    gen = np.random.default_rng(seed)
    if sparse:
        X = sp.random(m, d, density=0.1, format="csr", random_state=seed,
                      data_rvs=lambda k: gen.uniform(1, 3, k))
        X = (X @ sp.diags(1.0 / np.sqrt(np.arange(1, d + 1)))).tocsr()
    else:
        X = gen.standard_normal((m, d)) / np.arange(1, d + 1) + 2.0
    W = gen.standard_normal((d, targets))
    Y = np.asarray(X @ W) + 0.1 * gen.standard_normal((m, targets)) + 5.0
    return X, (Y[:, 0] if targets == 1 else Y)


@pytest.mark.parametrize("solver", ["auto", "direct", "nystrom-pcg", "cg"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("targets", [1, 3])
def test_equals_ridge_cholesky(solver, sparse, targets):
    """Small dense and sparse data with an intercept (sparse: centred
    implicitly) against Ridge(solver="cholesky") on the dense centred data."""
    X, y = data(sparse=sparse, targets=targets)
    tol = 1e-4 if solver in ("auto", "direct") else 1e-13
    model = SketchedRidge(alpha=0.3, solver=solver, tol=tol, random_state=0).fit(X, y)
    ref = Ridge(alpha=0.3, solver="cholesky").fit(X.toarray() if sparse else X, y)
    assert model.coef_.shape == ref.coef_.shape
    np.testing.assert_allclose(model.coef_, ref.coef_, rtol=0, atol=1e-8 * np.abs(ref.coef_).max())
    np.testing.assert_allclose(model.intercept_, ref.intercept_, rtol=1e-8)
    Xt = X[:50]
    np.testing.assert_allclose(model.predict(Xt), ref.predict(Xt.toarray() if sparse else Xt),
                               rtol=1e-8)
    if solver != "auto":
        assert model.solver_ == ("cg" if solver == "nystrom-pcg" and model.rank_ == 0
                                 else solver)


@pytest.mark.parametrize("sparse", [False, True])
def test_sample_weights_and_no_intercept(sparse):
    X, y = data(sparse=sparse, seed=3)
    w = np.random.default_rng(4).uniform(0.1, 3.0, X.shape[0])
    dense = X.toarray() if sparse else X
    for fit_intercept in (True, False):
        for solver in ("direct", "nystrom-pcg"):
            model = SketchedRidge(alpha=0.5, fit_intercept=fit_intercept, solver=solver,
                                  tol=1e-13, random_state=0).fit(X, y, sample_weight=w)
            ref = Ridge(alpha=0.5, fit_intercept=fit_intercept, solver="cholesky").fit(
                dense, y, sample_weight=w)
            np.testing.assert_allclose(model.coef_, ref.coef_, atol=1e-8 * np.abs(ref.coef_).max())
            np.testing.assert_allclose(model.intercept_, ref.intercept_, atol=1e-8)


def test_alpha_per_target_and_float32():
    X, Y = data(targets=2, seed=5)
    model = SketchedRidge(alpha=[0.1, 10.0], solver="nystrom-pcg", tol=1e-12,
                          random_state=0).fit(X, Y)
    ref = Ridge(alpha=np.array([0.1, 10.0]), solver="cholesky").fit(X, Y)
    np.testing.assert_allclose(model.coef_, ref.coef_, atol=1e-8 * np.abs(ref.coef_).max())
    with pytest.raises(ValueError, match="one value per target"):
        SketchedRidge(alpha=[0.1, 1.0, 2.0]).fit(X, Y)
    m32 = SketchedRidge(alpha=1.0, random_state=0).fit(X.astype(np.float32), Y[:, 0])
    assert m32.coef_.dtype == np.float32
    assert m32.predict(X.astype(np.float32)).dtype == np.float32


def test_a_large_sparse_problem_runs_the_preconditioned_solver():
    gen = np.random.default_rng(0)
    m, d = 2500, 2100  # above 2,048 features: solver="auto" takes the iteration
    X = sp.random(m, d, density=0.01, format="csr", random_state=1,
                  data_rvs=gen.standard_normal)
    X = (X @ sp.diags(1.0 / np.arange(1, d + 1))).tocsr()
    y = X @ gen.standard_normal(d) + 0.01 * gen.standard_normal(m)
    model = SketchedRidge(alpha=1e-4, tol=1e-10, random_state=0).fit(X, y)
    assert model.solver_ == "nystrom-pcg" and model.rank_ >= 16
    plain = SketchedRidge(alpha=1e-4, solver="cg", tol=1e-10).fit(X, y)
    assert model.n_iter_[0] < plain.n_iter_[0]
    assert np.linalg.norm(model.coef_ - plain.coef_) <= 1e-5 * np.linalg.norm(plain.coef_)


def test_classifier_equals_ridge_classifier():
    gen = np.random.default_rng(0)
    X = gen.standard_normal((400, 8))
    y = np.array(["a", "b", "c"])[np.argmax(X[:, :3] + 0.3 * gen.standard_normal((400, 3)), 1)]
    for class_weight in (None, "balanced"):
        clf = SketchedRidgeClassifier(alpha=2.0, class_weight=class_weight).fit(X, y)
        ref = RidgeClassifier(alpha=2.0, solver="cholesky", class_weight=class_weight).fit(X, y)
        np.testing.assert_allclose(clf.decision_function(X), ref.decision_function(X),
                                   rtol=1e-8, atol=1e-10)
        assert (clf.predict(X) == ref.predict(X)).all()
    binary = SketchedRidgeClassifier().fit(X, y == "a")
    assert binary.decision_function(X).shape == (400,)
    assert list(binary.classes_) == [False, True]


@pytest.mark.parametrize("seed", range(4))
def test_cv_picks_ridgecv_alpha(seed):
    """Exact leave-one-out on data where RidgeCV runs: the same alpha."""
    gen = np.random.default_rng(seed)
    m, d = 300, 25
    X = gen.standard_normal((m, d)) * np.geomspace(3, 0.1, d) + 1.0
    y = X @ gen.standard_normal(d) + gen.uniform(0.2, 2.0) * gen.standard_normal(m)
    alphas = np.logspace(-3, 3, 19)
    ref = RidgeCV(alphas=alphas).fit(X, y)
    model = SketchedRidgeCV(alphas=alphas, random_state=0).fit(X, y)
    assert model.alpha_ == ref.alpha_
    np.testing.assert_allclose(model.best_score_, ref.best_score_, rtol=1e-6)
    np.testing.assert_allclose(model.coef_, ref.coef_, rtol=1e-8, atol=1e-10)
    sparse = SketchedRidgeCV(alphas=alphas, random_state=0).fit(sp.csr_matrix(X), y)
    assert sparse.alpha_ == ref.alpha_


def test_cv_by_generalized_cross_validation_and_held_out_splits():
    """The iterative solvers: generalized cross-validation from one path
    (probes for the trace) lands next to the exact criterion's alpha; a
    held-out split and K folds pick a value within a step of RidgeCV's."""
    X, y = data(m=2000, d=60, seed=7)
    alphas = np.logspace(-3, 3, 13)
    exact = SketchedRidgeCV(alphas=alphas).fit(X, y)
    gcv = SketchedRidgeCV(alphas=alphas, solver="nystrom-pcg", random_state=0).fit(X, y)
    steps = abs(np.log10(gcv.alpha_ / exact.alpha_)) / 0.5
    assert steps <= 1.0 + 1e-9
    assert gcv.cv_scores_.shape == (13,) and gcv.best_score_ == gcv.cv_scores_.max()
    for cv in (0.3, 5):
        held = SketchedRidgeCV(alphas=alphas, cv=cv, solver="cg", tol=1e-10,
                               random_state=0).fit(X, y)
        assert abs(np.log10(held.alpha_ / exact.alpha_)) <= 1.0 + 1e-9
        ref = Ridge(alpha=held.alpha_).fit(X, y)
        np.testing.assert_allclose(held.coef_, ref.coef_, rtol=1e-3, atol=1e-4)


def test_bad_parameters():
    X, y = data()
    for params, match in [({"alpha": -1.0}, "alpha"), ({"solver": "lsqr"}, "solver"),
                          ({"tol": 0.0}, "tol"), ({"tol": 2.0}, "tol"),
                          ({"max_iter": 0}, "max_iter"), ({"rank": 0}, "rank")]:
        with pytest.raises((ValueError, TypeError), match=match):
            SketchedRidge(**params).fit(X, y)
    with pytest.raises(ValueError, match="cv must be"):
        SketchedRidgeCV(cv=1.5).fit(X, y)
    with pytest.raises(ValueError, match="alphas"):
        SketchedRidgeCV(alphas=[-1.0, 1.0]).fit(X, y)
    with pytest.raises(ValueError, match="sample_weight"):
        SketchedRidge().fit(X, y, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="zero"):
        SketchedRidge().fit(X, y, sample_weight=np.zeros(X.shape[0]))


def test_unconverged_warns():
    X, y = data(seed=8)
    with pytest.warns(sketchlab.ConvergenceWarning):
        SketchedRidge(alpha=1e-8, solver="cg", tol=1e-14, max_iter=2).fit(X, y)


def test_bad_sparse_indices_are_refused_without_a_crash():
    for call in ("SketchedRidge().fit(X, X[:, 0].toarray().ravel())",
                 "SketchedRidge().fit(Xc, Xc[:, 0].toarray().ravel())"):
        out = bad_sparse_index_output("SketchedRidge", call, 10**9)
        assert "ValueError" in out
