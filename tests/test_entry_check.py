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
