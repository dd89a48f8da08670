"""The fused entry check of a CSR/CSC matrix (index range and finite values,
one compiled pass of integer reductions) against numpy's own checks."""

import numpy as np
import pytest
import scipy.sparse as sp

from sketchlab._validation import as_matrix


def _matrix(nnz, ncols, dtype, index_dtype, seed=0):
    gen = np.random.default_rng(seed)
    m = 50
    indptr = np.sort(gen.integers(0, nnz + 1, m + 1))
    indptr[0], indptr[-1] = 0, nnz
    indices = gen.integers(0, ncols, nnz).astype(index_dtype)
    data = gen.standard_normal(nnz).astype(dtype)
    return sp.csr_matrix((data, indices, indptr.astype(index_dtype)), shape=(m, ncols))


def _numpy_verdict(A, finite):
    if A.indices.size and (A.indices.min() < 0 or A.indices.max() >= A.shape[1]):
        return "outside"
    if finite and not np.isfinite(A.data).all():
        return "NaN or Inf"
    return None


# 200003 entries: four chunks of the compiled pass, the last one short
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("where", [0, 65535, 65536, 131071, 200002])
@pytest.mark.parametrize("fault", [None, "nan", "inf", "-inf", "index-high", "index-negative",
                                   "max-finite", "subnormal", "-0"])
def test_entry_check_matches_numpy(dtype, index_dtype, where, fault):
    A = _matrix(200003, 777, dtype, index_dtype)
    value = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf, "max-finite": np.finfo(dtype).max,
             "subnormal": np.finfo(dtype).smallest_subnormal, "-0": -0.0}.get(fault)
    if value is not None:
        A.data[where] = value
    elif fault == "index-high":
        A.indices[where] = 777
    elif fault == "index-negative":
        A.indices[where] = -1
    for finite in (True, False):
        verdict = _numpy_verdict(A, finite)
        if verdict is None:
            assert as_matrix(A, "A", finite=finite) is not None
        else:
            with pytest.raises(ValueError, match=verdict):
                as_matrix(A, "A", finite=finite)
    # the CSC view of the same arrays is checked the same way
    T = sp.csc_matrix((A.data, A.indices, A.indptr), shape=A.shape[::-1])
    verdict = _numpy_verdict(A, True)
    if verdict is None:
        as_matrix(T, "A")
    else:
        with pytest.raises(ValueError, match=verdict):
            as_matrix(T, "A")


def test_an_algorithm_checks_its_input_once(monkeypatch):
    """fast_gmr, a SketchState update with several sketches and a sketched
    SVD read the entries of a sparse A for the check once per call, then
    hand it to the operators on the explicit validated path."""
    import sketchlab as sl
    from sketchlab import _validation

    seen = []
    check = _validation._check_entries
    monkeypatch.setattr(_validation, "_check_entries",
                        lambda indices, data, ncols, name: seen.append(indices.size) or
                        check(indices, data, ncols, name))
    A = sp.random(300, 200, density=0.05, format="csr", random_state=1)
    gen = np.random.default_rng(0)
    C, R = np.asarray(A @ gen.standard_normal((200, 4))), gen.standard_normal((3, 300)) @ A

    def checks_of_A(call):
        seen.clear()
        call()
        return seen.count(A.nnz)

    assert checks_of_A(lambda: sl.fast_gmr(A, C, R, sketch_size=(30, 25), rng=0)) == 1
    assert checks_of_A(lambda: sl.fast_gmr(A, C, R, sketch_size=(30, 25), sketch="gaussian",
                                           rng=0)) == 1
    state = sl.SketchState(A.shape, {"range": (None, sl.OSNAP(8, 200, rng=1)),
                                     "co-range": (sl.CountSketch(9, 300, rng=2), None),
                                     "core": (sl.CountSketch(10, 300, rng=3),
                                              sl.CountSketch(11, 200, rng=4))})
    assert checks_of_A(lambda: state.update(A)) == 1
    assert checks_of_A(lambda: sl.sketch_both(sl.CountSketch(5, 300, rng=0), A,
                                              sl.CountSketch(4, 200, rng=1))) == 1
