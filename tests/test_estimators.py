"""The estimators of sketchlab._estimators: SketchedNystroem (scikit-learn's
Nystroem drop-in) and SinglePassSVD (partial_fit over row batches), each
against scikit-learn's API (check_estimator) and the functions it runs."""

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
from sketchlab import SinglePassSVD, SketchedNystroem

from ._support import bad_sparse_index_output
from .reference import nystrom_dense, rbf_dense


# -- SketchedNystroem ----------------------------------------------------------


CORES = ["faster", "fast", "nystrom", "optimal"]


def points(n=120, d=4, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal((n, d)).astype(dtype)


@pytest.mark.parametrize("core", CORES)
def test_check_estimator_nystroem(core):
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
    ],
)
def test_bad_parameters(params, error, match):
    with pytest.raises(error, match=match):
        SketchedNystroem(**params).fit(points())


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
def test_sparse_indices_are_checked_before_scikit_learn_nystroem(call, index):
    """A CSR or CSC X with an index out of range is refused by name (it used to
    crash the interpreter); in a fresh interpreter, so a crash fails only this
    test."""
    out = bad_sparse_index_output("SketchedNystroem", call, index)
    assert "X has sparse indices outside [0, 40)" in out or \
        "X has sparse indices outside [0, 50)" in out  # a CSC X indexes rows


# -- SinglePassSVD ------------------------------------------------------------


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
def test_check_estimator_single_pass(estimator):
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
def test_sparse_indices_are_checked_before_scikit_learn_single_pass(call, index):
    """A CSR X with an index out of range is refused by name (it used to crash
    the interpreter); in a fresh interpreter, so a crash fails only this test."""
    out = bad_sparse_index_output("SinglePassSVD", call, index)
    assert "X has sparse indices outside [0, 40)" in out
