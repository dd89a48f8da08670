"""The result pattern (SPEC section 10): a flag never changes how many values
a function returns; extra results are attributes (scipy's ``linregress``)."""

import pickle

import numpy as np
import pytest

import sketchlab as sl
from sketchlab._results import result_type

SVDS = [sl.fast_sp_svd, sl.practical_sp_svd, sl.three_sketch_svd]


def _low_rank(m=120, n=80, k=4, seed=0):
    gen = np.random.default_rng(seed)
    return gen.standard_normal((m, k)) @ gen.standard_normal((k, n))


@pytest.mark.parametrize("func", SVDS)
@pytest.mark.parametrize("options", [{}, {"estimate_error": True}, {"tol": 0.5}])
def test_svds_unpack_as_three_whatever_the_flags(func, options):
    A = _low_rank()
    res = func(A, 4, rng=0, **options)
    assert isinstance(res, sl.SVDResult) and len(res) == 3
    U, s, Vt = res
    assert (res.U is U) and (res.s is s) and (res.Vt is Vt)
    assert res.passes == 1
    asked = bool(options)
    assert (res.error_estimate is not None) == asked
    if asked:
        assert isinstance(res.error_estimate, sl.ErrorEstimate)
    # the estimate is drawn after the sketches: the factors do not depend on the flag
    if "estimate_error" in options:
        np.testing.assert_array_equal(s, func(A, 4, rng=0).s)


def test_fast_gmr_unpacks_as_one_whatever_the_flags():
    gen = np.random.default_rng(1)
    A = gen.standard_normal((90, 70))
    C, R = A @ gen.standard_normal((70, 3)), gen.standard_normal((4, 90)) @ A
    plain = sl.fast_gmr(A, C, R, sketch_size=(30, 25), rng=0)
    (X,) = plain
    assert isinstance(plain, sl.GMRResult) and len(plain) == 1 and plain.X is X
    assert X.shape == (3, 4) and plain.error_estimate is None
    assert plain.sketch_size == (30, 25)
    asked = sl.fast_gmr(A, C, R, sketch_size=(30, 25), rng=0, estimate_error=True)
    (X2,) = asked
    np.testing.assert_array_equal(X2, X)
    truth = sl.gmr_residual(A, C, X, R)
    assert isinstance(asked.error_estimate, sl.ErrorEstimate)
    assert asked.error_estimate.value == pytest.approx(truth, rel=0.5)
    by_tol = sl.fast_gmr(A, C, R, tol=0.5, rng=0)
    assert len(by_tol) == 1 and by_tol.error_estimate is not None
    s_c, s_r = by_tol.sketch_size
    assert 1 <= s_c <= A.shape[0] and 1 <= s_r <= A.shape[1]
    # operators given: their sizes
    ops = (sl.CountSketch(20, 90, rng=2), sl.CountSketch(18, 70, rng=3))
    assert sl.fast_gmr(A, C, R, sketch=ops).sketch_size == (20, 18)


def test_results_pickle_with_their_extras_and_compare_as_tuples():
    A = _low_rank()
    res = sl.fast_sp_svd(A, 4, rng=0, estimate_error=True)
    back = pickle.loads(pickle.dumps(res))
    assert type(back) is sl.SVDResult
    for a, b in zip(back, res):
        np.testing.assert_array_equal(a, b)
    assert back.passes == 1 and back.error_estimate == res.error_estimate
    X = np.arange(6.0).reshape(2, 3)
    g = sl.GMRResult(X, sketch_size=(4, 5))
    back = pickle.loads(pickle.dumps(g))
    assert back.sketch_size == (4, 5) and back.error_estimate is None
    np.testing.assert_array_equal(back.X, X)
    assert tuple(g) == (X,) and g[0] is X
    assert "sketch_size=(4, 5)" in repr(g) and repr(g).startswith("GMRResult(X=")
    assert set(g._asdict()) == {"X", "error_estimate", "sketch_size"}


def test_result_type_rejects_unknown_keywords():
    with pytest.raises(TypeError, match=r"unexpected keyword arguments \['rank'\]"):
        sl.SVDResult(1, 2, 3, rank=4)
    Pair = result_type("Pair", ("a", "b"), {"note": "none"}, "A pair.")
    p = Pair(1, b=2)
    assert tuple(p) == (1, 2) and p.note == "none" and Pair(1, 2, note="x").note == "x"


def test_a_result_passed_as_a_matrix_names_its_fields():
    # a caller migrating from ``X = fast_gmr(...)`` who passes the result on
    # gets a TypeError that says what to take, not a shape error
    gen = np.random.default_rng(0)
    A = gen.standard_normal((60, 40))
    C, R = A[:, :5], A[:6]
    res = sl.fast_gmr(A, C, R, rng=0)
    with pytest.raises(TypeError, match=r"got a GMRResult \(take its \.X\)"):
        sl.gmr_error_ratio(A, C, res, R)
    S = sl.CountSketch(10, 40, rng=0)
    with pytest.raises(TypeError, match=r"got a SVDResult \(take its \.U, \.s, \.Vt\)"):
        S @ sl.fast_sp_svd(A.T, 3, rng=0)
