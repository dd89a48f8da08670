"""Bit-for-bit stability of the iterative solvers across refactors, on one BLAS.

The round-three solvers (``krylov_svd``, ``lstsq``, ``sketch_preconditioner``,
the kernel ridge fits, ``RandomizedTruncatedSVD``) end in BLAS and LAPACK,
whose roundings depend on the kernels the BLAS library picks for the CPU
(OpenBLAS's Haswell, SkylakeX, ...).  Their digests are therefore recorded
together with the BLAS they were taken on (library, version, the kernels it
picked): on that configuration a changed bit fails here; on any other the
tests skip and say why.  They guard the redesign of issue 36 ("one linear
map, one engine": the products move, their sums must not).

Taken at commit e4d6ca4 (before the redesign).  Changed since, on purpose:
``lstsq`` of a C-ordered dense A (``lstsq/dense-c/*``, ``lstsq/dense-float32``):
its products moved from the compiled row loops to BLAS in fixed row chunks
(the linear map's; 1.5-3x faster): x moved by at most 3.5e-12 relative in
float64 (the forward-error bound of these problems is about 1e-10).
Regenerate, only for an intended change of the numbers with a note in the
CHANGELOG:
``python tests/test_digests_solvers.py``.
"""

import hashlib
import json
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import sketchlab as sl


def _blas():
    """The BLAS configuration the digests depend on (a string)."""
    import scipy.linalg  # noqa: F401  (loads the BLAS threadpoolctl reports)
    from threadpoolctl import threadpool_info

    libs = sorted({(i.get("internal_api"), i.get("version"), i.get("architecture"))
                   for i in threadpool_info() if i["user_api"] == "blas"}, key=str)
    return json.dumps(libs)


def _digest(*arrays):
    h = hashlib.sha256()
    for x in arrays:
        x = np.ascontiguousarray(x)
        h.update(x.dtype.str.encode() + repr(x.shape).encode() + x.tobytes())
    return h.hexdigest()


def _matrices():
    gen = np.random.default_rng(36)
    m, n = 700, 60
    D = (gen.standard_normal((m, n)) * np.logspace(0, -3, n)) @ gen.standard_normal((n, n))
    S = sp.random(m, n, density=0.08, format="csr", random_state=np.random.default_rng(1))
    S = (S + sp.eye(m, n, format="csr")).tocsr()
    W = sp.random(400, 900, density=0.02, format="csr", random_state=np.random.default_rng(2))
    b = gen.standard_normal(m)
    B = gen.standard_normal((m, 3))
    return D, S, W, b, B


def _krylov_cases(D, S, W):
    from scipy.sparse.linalg import aslinearoperator

    return {
        "krylov/dense-c": lambda: sl.krylov_svd(D, 5, rng=0),
        "krylov/dense-f": lambda: sl.krylov_svd(np.asfortranarray(D), 5, rng=0),
        "krylov/csr": lambda: sl.krylov_svd(W, 6, rng=1),
        "krylov/csc": lambda: sl.krylov_svd(W.tocsc(), 6, rng=1),
        "krylov/csr-float32": lambda: sl.krylov_svd(W.astype(np.float32), 6, rng=1),
        "krylov/operator": lambda: sl.krylov_svd(aslinearoperator(W), 4, rng=2),
        "krylov/tol": lambda: sl.krylov_svd(W, tol=0.5, rng=3),
        "krylov/passes": lambda: sl.krylov_svd(D, 3, passes=4, rng=4),
        "krylov/estimate": lambda: sl.krylov_svd(W, 3, rng=5, estimate_error=True),
    }


def _lstsq_cases(D, S, b, B):
    cases = {}
    inputs = {"dense-c": D, "dense-f": np.asfortranarray(D), "csr": S, "csc": S.tocsc()}
    for name, A in inputs.items():
        for method in ("fossils", "spir", "blendenpik", "sketch-and-solve"):
            cases[f"lstsq/{name}/{method}"] = (
                lambda A=A, method=method: sl.lstsq(A, b, method=method, rng=0))
    cases["lstsq/dense-c/damp"] = lambda: sl.lstsq(D, b, damp=0.3, rng=1)
    cases["lstsq/csr/multi"] = lambda: sl.lstsq(S, B, rng=2)
    cases["lstsq/dense-float32"] = lambda: sl.lstsq(D.astype(np.float32),
                                                    b.astype(np.float32), rng=3)

    def preconditioner():
        AP, P = sl.sketch_preconditioner(S, rng=4)
        return (AP.matvec(np.ones(AP.shape[1])), P.matvec(np.ones(P.shape[1])))

    cases["lstsq/preconditioner"] = preconditioner
    return cases


def _krr_cases():
    gen = np.random.default_rng(5)
    X = gen.standard_normal((600, 5))
    y = np.sin(X[:, 0]) + 0.1 * gen.standard_normal(600)
    cases = {}
    for solver in ("pcg", "restricted"):
        for landmarks in ("rpcholesky", "uniform"):
            def fit(solver=solver, landmarks=landmarks):
                model = sl.SketchedKernelRidge(alpha=1e-2, gamma=0.3, n_components=40,
                                               landmarks=landmarks, solver=solver,
                                               random_state=0).fit(X, y)
                return (model.dual_coef_, model.residual_history_)
            cases[f"krr/{solver}/{landmarks}"] = fit

    def small_cache():
        model = sl.SketchedKernelRidge(alpha=1e-2, gamma=0.3, n_components=30, solver="pcg",
                                       cache_size=1.0, random_state=1).fit(X, y)
        return (model.dual_coef_,)

    cases["krr/pcg/partly-stored"] = small_cache
    return cases


def _svd_estimator_cases(W):
    def fit():
        est = sl.RandomizedTruncatedSVD(n_components=5, random_state=0).fit(W)
        return (est.components_, est.singular_values_)

    return {"estimator/truncated-svd": fit}


def _outputs(result):
    if isinstance(result, tuple) and not hasattr(result, "_fields"):
        return result
    if hasattr(result, "_fields"):  # the named-tuple results
        return tuple(np.asarray(v) for v in result)
    return (result,)


def cases():
    D, S, W, b, B = _matrices()
    out = {}
    out.update(_krylov_cases(D, S, W))
    out.update(_lstsq_cases(D, S, b, B))
    out.update(_krr_cases())
    out.update(_svd_estimator_cases(W))
    return out


def compute_digests():
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, run in cases().items():
            results[name] = _digest(*_outputs(run()))
    return results


# taken at e4d6ca4 with `python tests/test_digests_solvers.py` (lstsq dense-c: after the
# linear map), on BLAS:
BLAS = '[["openblas", "0.3.30", "SkylakeX"], ["openblas", "0.3.31.188.0", "SkylakeX"]]'
EXPECTED = {
    "estimator/truncated-svd":
        "b8a0fb88862490f3099d43a27220f8f4f9e9a6ef116278ff329739328c308601",
    "krr/pcg/partly-stored":
        "2d94fd1c9116e1928317762b1e9b1690192db91914050929564c9edfddb9993f",
    "krr/pcg/rpcholesky":
        "adfa1d833a555f86622c60998d6464930b55c58d488c6ebdabea4eec40d205bf",
    "krr/pcg/uniform":
        "868aab1ab598b543f026b6743d2b6eaa0232f30a40f033097d6a2e296a6f2da8",
    "krr/restricted/rpcholesky":
        "8a1449e19bb507622728bdb5f3c93e2f9aadf52c72b443e70abc5e7001af6d9a",
    "krr/restricted/uniform":
        "2102243a357cd465901de770209a0016248467fb09bc22205d7cc32bfd2f8afc",
    "krylov/csc":
        "b25d28e3f5a36ca907667e91d6fb74c7f48b1cf499a470855f43fe50f574f9e2",
    "krylov/csr":
        "b25d28e3f5a36ca907667e91d6fb74c7f48b1cf499a470855f43fe50f574f9e2",
    "krylov/csr-float32":
        "fffe03be056a830c8fa27d63943784205b5c065b9417a0ee5a8ad86b31b50e28",
    "krylov/dense-c":
        "2278ef5a0ff34d01f9a757fb4201354420384458a5e917831f45d265c9243d52",
    "krylov/dense-f":
        "9e02a1644725f36c59db0697ca2615b1af8ea502f3d682bbd0ba6bac2de5d6ae",
    "krylov/estimate":
        "f5bf78748607d956d6895bcd0af625da4456c1b22ca966ed67a9bb9f7fba4208",
    "krylov/operator":
        "c0066909647aabcefe8eb12b84d251170df8b1f7ef3188b7f7783964275b67ac",
    "krylov/passes":
        "5f82bd60e7dd6273e653ca18e09c1c1b148278da02419ded768e04689d138d1b",
    "krylov/tol":
        "3972999ac64a20414a5f598c5ed1cb1761d820834f3c83f4ffb20b9cfbe8528a",
    "lstsq/csc/blendenpik":
        "fd5c201ffbbceab0f668064e202fc6e1bb42f3357673563957a3f79c8251ea58",
    "lstsq/csc/fossils":
        "f23df4aab59ef566d681dd21d8d99adf26c09d9a37f00a06e0ea6396cdc90cf8",
    "lstsq/csc/sketch-and-solve":
        "0390991a15704d148049cb4849eeb046cac61f8f3fd8d20200ade121ca8a2f04",
    "lstsq/csc/spir":
        "cdd1c079b6faf295fd1e937222833678c8b667b009e9678243d18fe63779c5ee",
    "lstsq/csr/blendenpik":
        "fd5c201ffbbceab0f668064e202fc6e1bb42f3357673563957a3f79c8251ea58",
    "lstsq/csr/fossils":
        "f23df4aab59ef566d681dd21d8d99adf26c09d9a37f00a06e0ea6396cdc90cf8",
    "lstsq/csr/multi":
        "ead9c0f82cfa8c7db0082bcccbaee7e936f9785d17966679ed59fe3d032cef47",
    "lstsq/csr/sketch-and-solve":
        "0390991a15704d148049cb4849eeb046cac61f8f3fd8d20200ade121ca8a2f04",
    "lstsq/csr/spir":
        "cdd1c079b6faf295fd1e937222833678c8b667b009e9678243d18fe63779c5ee",
    "lstsq/dense-c/blendenpik":
        "5f02e552930ce0525b60cbf93f14326475a40f9129f93da93f5dcb857d0fe1c8",
    "lstsq/dense-c/damp":
        "75ee3d43a46a26f65f84ee96860c68812d4eca314056534df5119a6051756762",
    "lstsq/dense-c/fossils":
        "a8adae175d60e23bd883624a9906ab632b929841f286f04fdad265df13c5fe31",
    "lstsq/dense-c/sketch-and-solve":
        "5e53569a9cf9afcbd8b5ad24d1fec3cfdd6a1810a0c50c1066192b8dcb7dbe40",
    "lstsq/dense-c/spir":
        "969dd7f6ed042c91cd711c8300f45746716cedda18d16ab6d9b091883024f82e",
    "lstsq/dense-f/blendenpik":
        "d6729c8a05f882b2eb1d734fe860567d76dd925f3cd77d86a8237db2f652379b",
    "lstsq/dense-f/fossils":
        "8eb9c7caf6128ee674fcb1e2abb2a0167ceeaafd00596d038bb3e3c70eac7d41",
    "lstsq/dense-f/sketch-and-solve":
        "bfcfe47f63b919640c5dc817c38435f24e16cf86981e2532237d90c489c1d712",
    "lstsq/dense-f/spir":
        "6818e1db275ea82d1e95d5e8d4f063506d2092af999e9d927cb77efcd7badb23",
    "lstsq/dense-float32":
        "ff46d12766d503bed86558634c38cc7a84fba9abe8f068572a014fb09c0f1b4b",
    "lstsq/preconditioner":
        "218d828f485b32a4b3b20946717f27538898c44a8ffd7d1c6892d8b4484a5273",
}

_CACHE: dict = {}


def _computed():
    if "all" not in _CACHE:
        _CACHE["all"] = compute_digests()
    return _CACHE["all"]


@pytest.mark.parametrize("case", sorted(EXPECTED) or ["<none>"])
def test_solver_results_are_bitwise_unchanged(case):
    if BLAS != _blas():
        pytest.skip(f"digests taken on BLAS {BLAS}, this is {_blas()}: roundings differ")
    got = _computed()[case]
    assert got == EXPECTED[case], f"{case}: the result changed"


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps({"BLAS": _blas(), "EXPECTED": compute_digests()}, indent=1,
                     sort_keys=True))
