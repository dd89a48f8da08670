"""SketchedNystroem: scikit-learn's estimator checks, the feature map against
C U C^T, agreement with the functions, pipelines and bad input."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import RidgeClassifier
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import check_estimator

import sketchlab as sl
from sketchlab import SketchedNystroem

from ._support import bad_sparse_index_output
from .reference import nystrom_dense, rbf_dense

CORES = ["faster", "fast", "nystrom", "optimal"]


def points(n=120, d=4, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal((n, d)).astype(dtype)


@pytest.mark.parametrize("core", CORES)
def test_check_estimator(core):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the checks' tiny data clip n_components
        check_estimator(SketchedNystroem(gamma=0.5, n_components=5, core=core, random_state=0))


@pytest.mark.parametrize("core", CORES)
@pytest.mark.parametrize("form", ["dense", "csr", "float32"])
def test_features_reproduce_the_approximation(core, form):
    X = points()
    Xin = {"dense": X, "csr": sp.csr_matrix(X * (X > 0)), "float32": X.astype(np.float32)}[form]
    Xd = Xin.toarray() if sp.issparse(Xin) else Xin
    est = SketchedNystroem(gamma=0.3, n_components=15, sketch_size=60, core=core,
                           random_state=0)
    Z = est.fit_transform(Xin)
    assert Z.shape == (120, 15)
    assert Z.dtype == (np.float32 if form == "float32" else np.float64)
    K = rbf_dense(Xd, 0.3)
    C = K[:, est.component_indices_]
    atol = 1e-5 if form == "float32" else 1e-10
    np.testing.assert_allclose(Z.astype(np.float64) @ Z.T, C @ est.core_ @ C.T, atol=atol)
    # same landmarks and core as the function with the same seed
    fn = {"faster": sl.faster_spsd, "fast": sl.fast_spsd, "nystrom": sl.nystrom,
          "optimal": sl.optimal_spsd}[core]
    args = (60,) if core in ("faster", "fast") else ()
    res = fn(sl.RBFKernel(Xin, 0.3), 15, *args, rng=0)
    np.testing.assert_array_equal(est.component_indices_, res.columns)
    np.testing.assert_allclose(est.core_, res.U, rtol=1e-12, atol=1e-12)
    if sp.issparse(Xin):
        np.testing.assert_array_equal(est.components_.toarray(), Xd[res.columns])
    else:
        np.testing.assert_array_equal(est.components_, Xin[res.columns])


def test_transform_of_new_points():
    X, Y = points(), points(n=7, seed=1)
    est = SketchedNystroem(gamma=0.3, n_components=10, random_state=2).fit(X)
    Zx, Zy = est.transform(X), est.transform(Y)
    # phi(y) . phi(x) = k(y, L) U k(L, x)
    kyl = rbf_kernel(Y, est.components_, gamma=0.3)
    kxl = rbf_kernel(X, est.components_, gamma=0.3)
    np.testing.assert_allclose(Zy @ Zx.T, kyl @ est.core_ @ kxl.T, atol=1e-10)
    assert est.get_feature_names_out()[0] == "sketchednystroem0"


def test_nystrom_core_matches_the_nystrom_formula_and_sklearn():
    X = points(n=200)
    est = SketchedNystroem(gamma=0.3, n_components=20, core="nystrom", random_state=0).fit(X)
    K = rbf_dense(X, 0.3)
    cols = est.component_indices_
    np.testing.assert_allclose(est.core_, nystrom_dense(K, cols), rtol=1e-9, atol=1e-9)
    # sklearn's Nystroem with the same landmarks gives the same kernel approximation
    ref = Nystroem(gamma=0.3, n_components=20).fit(X)
    ref.components_ = X[cols]
    W = rbf_kernel(X[cols], gamma=0.3)
    U, S, Vt = np.linalg.svd(W)
    ref.normalization_ = U / np.sqrt(S) @ Vt
    Z, Zr = est.transform(X), ref.transform(X)
    np.testing.assert_allclose(Z @ Z.T, Zr @ Zr.T, atol=1e-8)


def test_faster_core_approximates_better_than_nystrom():
    X = points(n=400, d=6, seed=3)
    K = rbf_dense(X, 0.2)
    errs = {}
    for core in ("nystrom", "faster", "optimal"):
        est = SketchedNystroem(gamma=0.2, n_components=20, sketch_size=200, core=core,
                               random_state=4)
        Z = est.fit_transform(X)
        errs[core] = np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K)
    assert errs["optimal"] <= errs["faster"] <= 1.05 * errs["optimal"]
    assert errs["faster"] < errs["nystrom"]


def test_in_a_pipeline_and_clone():
    X = points(n=300, d=2, seed=5)
    y = (np.linalg.norm(X, axis=1) > 1.2).astype(int)  # not linearly separable
    pipe = make_pipeline(SketchedNystroem(gamma=1.0, n_components=40, random_state=0),
                         RidgeClassifier(alpha=1e-3))
    assert pipe.fit(X, y).score(X, y) > 0.9
    est = SketchedNystroem(gamma=0.1, core="optimal")
    twin = clone(est).set_params(n_components=7)
    assert twin.get_params()["n_components"] == 7 and est.n_components == 100
    assert twin.get_params()["core"] == "optimal"


def test_defaults_and_clipping():
    X = points(n=30)
    with pytest.warns(UserWarning, match=r"n_components \(100\) > n_samples \(30\)"):
        est = SketchedNystroem().fit(X)
    assert est.transform(X).shape == (30, 30)
    assert est.n_evaluated_ == 30 * 30 + 30 * 30  # C is all of K, s = n
    est = SketchedNystroem(n_components=10, random_state=0).fit(X)
    assert est.n_evaluated_ == 30 * 10 + 30 * 30  # s = min(10 c, n) = n
    with pytest.warns(UserWarning, match=r"sketch_size \(50\) > n_samples \(30\)"):
        SketchedNystroem(n_components=10, sketch_size=50).fit(X)
    g_none = SketchedNystroem(gamma=None, n_components=5, random_state=0).fit(X)
    g_val = SketchedNystroem(gamma=1 / 4, n_components=5, random_state=0).fit(X)
    np.testing.assert_array_equal(g_none.transform(X), g_val.transform(X))


def test_repeated_points_give_finite_features():
    X = np.repeat(points(n=5), 6, axis=0)  # 30 rows, 5 distinct points
    est = SketchedNystroem(gamma=0.5, n_components=12, core="nystrom", random_state=0)
    Z = est.fit_transform(X)
    assert np.all(np.isfinite(Z))
    K = rbf_dense(X, 0.5)
    assert np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K) < 1e-8


@pytest.mark.parametrize(
    "params, error, match",
    [
        ({"gamma": -1.0}, ValueError, "gamma must be a finite number >= 0"),
        ({"gamma": np.inf}, ValueError, "gamma must be a finite number >= 0"),
        ({"kernel": "gaussian"}, ValueError, "kernel must be"),
        ({"landmarks": "kmeans"}, ValueError, "landmarks must be one of"),
        ({"core": "exact"}, ValueError, "core must be one of"),
        ({"n_components": 0}, ValueError, "n_components must be an int in"),
        ({"n_components": 2.5}, TypeError, "n_components must be an int"),
        ({"n_components": 10, "sketch_size": 5}, ValueError,
         r"sketch_size must be >= n_components \(10\)"),
        ({"n_components": "many"}, ValueError, "n_components must be an int >= 1 or 'auto'"),
        ({"n_components": "auto", "alpha": 0.0}, ValueError, "alpha must be a finite number"),
    ],
)
def test_bad_parameters(params, error, match):
    with pytest.raises(error, match=match):
        SketchedNystroem(**params).fit(points())


@pytest.mark.parametrize("landmarks", ["uniform", "rpcholesky"])
def test_auto_rank_is_the_effective_dimension(landmarks):
    X = points(n=500, d=3, seed=1)
    lam = np.linalg.eigvalsh(rbf_kernel(X, gamma=0.5))
    for alpha in (1.0, 0.01):
        exact = float(np.sum(lam / (lam + alpha)))
        est = SketchedNystroem(gamma=0.5, n_components="auto", alpha=alpha, landmarks=landmarks,
                               random_state=0)
        Z = est.fit_transform(X)
        assert Z.shape == (500, est.n_components_)
        assert max(50, exact) <= est.n_components_ <= max(50, 2 * exact)
        assert exact <= est.effective_dimension_ <= 2 * exact
    assert SketchedNystroem(n_components=7, random_state=0).fit(X).effective_dimension_ is None


def test_check_estimator_with_auto_rank():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(SketchedNystroem(gamma=0.5, n_components="auto", random_state=0))


def test_bad_data():
    with pytest.raises(ValueError, match="NaN"):
        SketchedNystroem(n_components=3).fit(np.full((5, 2), np.nan))
    est = SketchedNystroem(n_components=3, random_state=0).fit(points())
    with pytest.raises(ValueError, match="features"):
        est.transform(np.ones((2, 3)))


@pytest.mark.parametrize("name", ["dna.scale.xz", "splice.xz"])
def test_default_pipeline_matches_nystroem_on_real_data(load_libsvm, name):
    """A drop-in: with every parameter at its default, the same pipeline with
    SketchedNystroem or scikit-learn's Nystroem scores within one point."""
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = load_libsvm(name)
    X_train, X_test, y_train, y_test = train_test_split(X.toarray(), y, test_size=0.3,
                                                        random_state=0, stratify=y)
    scores = {}
    for features in (SketchedNystroem(random_state=0), Nystroem(random_state=0)):
        model = make_pipeline(StandardScaler(), features, LogisticRegression(max_iter=2000))
        scores[type(features).__name__] = model.fit(X_train, y_train).score(X_test, y_test)
    assert scores["SketchedNystroem"] >= scores["Nystroem"] - 0.01, scores


@pytest.mark.kernels  # reaches the compiled loops in a fresh interpreter
@pytest.mark.parametrize("call", [
    "SketchedNystroem(n_components=5, random_state=0).fit(Xc)",
    "SketchedNystroem(n_components=5, random_state=0).fit(good).transform(X)",
])
@pytest.mark.parametrize("index", ["10**9", "-3"])
def test_sparse_indices_are_checked_before_scikit_learn(call, index):
    """A CSR or CSC X with an index out of range is refused by name (it used to
    crash the interpreter); in a fresh interpreter, so a crash fails only this
    test."""
    out = bad_sparse_index_output("SketchedNystroem", call, index)
    assert "X has sparse indices outside [0, 40)" in out or \
        "X has sparse indices outside [0, 50)" in out  # a CSC X indexes rows
