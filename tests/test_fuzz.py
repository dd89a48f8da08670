"""Fuzzing the public API: nothing crashes, nothing is silently wrong.

Every call either raises a clear error (ValueError or TypeError whose
message names the offending parameter) or returns what a dense reference
says: NumPy on the densified, uncorrupted input, or the operator built
densely from its definition (tests/reference.py).

Two halves:

- Corrupt sparse structures, huge dimensions and bad sizes or seeds, which
  could crash the interpreter, run in a child process
  (tests/fuzz_cases.py): one child for all selected cases, printing one
  JSON line per case, and a new child after a case that kills its own.
- Readable but odd inputs (every scipy format and class, unsorted and
  duplicate indices, float16 ... uint64 and bool, values near 1e+-300,
  NaN, empty dimensions) are drawn by hypothesis in this process.

The default profile is derandomized and small: every call of the grid
against the representative corruptions (CORE_CORRUPTIONS), the huge
dimensions and the bad sizes and seeds.  The long profile
(``SKETCHLAB_XSLOW=1`` or ``--runslow``, see tests/_switch.py) runs the
whole corruption grid (every corruption, both sparse classes, random
positions) and the properties with many more, and larger, examples.  Known bugs are kept as
``xfail(strict=True)`` cases, so that fixing one makes its case pass and
fail the suite until the mark is removed.
"""

import fnmatch
import os
import pickle
import warnings

import numpy as np
import pytest
import scipy
import scipy.sparse as sp
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

import sketchlab as sl

from . import fuzz_cases as fc
from ._switch import xslow_enabled
from .reference import eta_dense, nystrom_dense, optimal_spsd_dense, rbf_dense

# The expected outcomes encode how scipy reads (or refuses) corrupt COO, DOK
# and DIA structures and unsorted float16 CSR, which changed across versions:
# scipy 1.10, the declared minimum, reads a COO with float row indices and a
# DOK with out-of-range keys where 1.17 refuses them, and its own errors
# (IndexError, "row index exceeds matrix dimensions") do not name the
# argument.  Verified on scipy 1.17 only; older versions skip the suite.
_SCIPY = tuple(int(part) for part in scipy.__version__.split(".")[:2])
pytestmark = pytest.mark.skipif(_SCIPY < (1, 17), reason=(
    f"the fuzz suite's expected outcomes follow scipy >= 1.17's reading of corrupt sparse "
    f"structures (found scipy {scipy.__version__})"))

# ---------------------------------------------------------------------------
# Known bugs (each case below fails today; strict: a fix flips it to XPASS)
# ---------------------------------------------------------------------------

# The grid's bugs found by the first runs of this suite (attribute errors on
# list/None index arrays, big-endian and uint64 index arrays, corrupt BSR and
# LIL, data/indices length mismatches, norms over the slack of the arrays,
# estimator dtypes and names, the LIL segfault of SinglePassSVD.transform,
# O(input_dim) tables for huge dimensions, misnamed errors) are fixed: every
# grid case passes, and the rules below say which outcome each must have.

# (call globs separated by '|', corruption glob, reason or None): the first
# rule that matches decides
KNOWN_CORRUPT = [
    ("transpose", "*", None),  # S.T @ Y refuses a sparse Y first, by name
]


def known_bug(case_id):
    """The reason a case is expected to fail today, or None."""
    family, *rest = case_id.split("|")
    if family == "corrupt":
        call, corruption = rest[0], rest[1]
        for calls, corruptions, reason in KNOWN_CORRUPT:
            if any(fnmatch.fnmatchcase(call, g) for g in calls.split("|")) and \
                    fnmatch.fnmatchcase(corruption, corruptions):
                return reason
        return None
    return KNOWN_OTHER.get(case_id)


KNOWN_OTHER: dict[str, str] = {}


def _param(case_id, long=False):
    marks = [pytest.mark.fuzz_long] if long else []
    reason = known_bug(case_id)
    if reason:
        marks.append(pytest.mark.xfail(strict=True, reason=reason))
    return pytest.param(case_id, marks=marks, id=case_id)


# ---------------------------------------------------------------------------
# Child-process cases
# ---------------------------------------------------------------------------

GRID_CALLS = [name for name in fc.calls()
              # scipy's LinearOperator refuses sparse operands itself; fast_gmr(tol=)
              # has its own tests below
              if name not in ("aslinearoperator", "fast_gmr_tol")]
CORE_CALLS = ["left:countsketch", "right:osnap", "sketch_both_offsets_out", "apply_many",
              "fast_gmr", "lowrank_residual", "fast_sp_svd_stream", "sketch_state",
              "single_pass_svd_partial_fit", "single_pass_svd_transform",
              "sketched_nystroem_transform", "dask_sketch_both"]
CORE_CORRUPTIONS = ["csr:index_huge", "csc:index_negative", "csr:indptr_decreasing",
                    "csc:indptr_short", "csr:indices_float", "csc:data_nan", "csr:unsorted",
                    "csc:duplicates", "csr:arrays_long", "csc:all_zero", "coo_row_huge",
                    "bsr_index_huge", "lil_index_huge", "dia_offset_huge"]
# corruptions whose effect depends on where they hit: random positions in the long run
POSITIONAL = ["csr:index_huge", "csc:index_negative", "csr:index_at_dim", "csc:indptr_past_end",
              "csr:data_nan", "csc:data_inf", "coo_row_huge", "coo_col_negative",
              "bsr_index_huge"]


def _alternate_classes(ids):
    """Matrix class for even, array class for odd positions (the default run
    covers both without doubling)."""
    out = []
    for k, case_id in enumerate(ids):
        out.append(case_id[:-1] + ("m" if k % 2 == 0 else "a"))
    return out


def _default_ids():
    """The core slice: every call against the representative corruptions."""
    ids = list(dict.fromkeys(_alternate_classes(fc.corrupt_ids(GRID_CALLS, CORE_CORRUPTIONS))))
    ids += [f"huge|{what}" for what in fc.HUGE_CASES]
    ids += fc.size_ids() + fc.seed_ids()
    return ids


def _long_ids():
    """The rest of the grid: the core calls against every corruption (the
    default slice of earlier versions), every call against every corruption
    in both classes, and the positional corruptions at random positions."""
    default = set(_default_ids())
    ids = list(dict.fromkeys(_alternate_classes(fc.corrupt_ids(CORE_CALLS,
                                                               list(fc.CORRUPTIONS)))))
    ids += fc.corrupt_ids(GRID_CALLS, list(fc.CORRUPTIONS), classes=("m", "a"))
    ids += fc.corrupt_ids(GRID_CALLS, POSITIONAL, classes=("m",), seeds=range(1, 6))
    return [i for i in dict.fromkeys(ids) if i not in default]


DEFAULT_IDS = _default_ids()


def long_enabled(config):
    """The long profile runs with the switch of the long profiles
    (``SKETCHLAB_XSLOW=1`` or ``--runslow``), whatever ``-m`` says."""
    return xslow_enabled(config)


@pytest.fixture
def long_profile(request):
    if not long_enabled(request.config):
        pytest.skip("the long fuzz profile runs with SKETCHLAB_XSLOW=1 (or --runslow)")


@pytest.fixture(scope="session")
def child_outcomes(request):
    """Outcomes of every child case selected in this session, from one child
    process (a new one after a case that kills its child)."""
    long = long_enabled(request.config)
    ids = []
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "child_case" in callspec.params:
            if long or item.get_closest_marker("fuzz_long") is None:
                ids.append(callspec.params["child_case"])
    # the long grid (some 15,000 cases) runs in one child per core at a time
    workers = (os.cpu_count() or 1) if long else 1
    return fc.run_cases(ids, timeout=3600 * (4 if long else 1), workers=workers)


def _check_child(child_case, child_outcomes):
    problem = fc.judge(fc.build_case(child_case), child_outcomes[child_case])
    assert problem is None, f"{child_case}: {problem}"


@pytest.mark.parametrize("child_case", [_param(i) for i in DEFAULT_IDS])
def test_child_case(child_case, child_outcomes):
    _check_child(child_case, child_outcomes)


def pytest_generate_tests(metafunc):
    # the long grid (some 13,000 cases) is collected only when it will run
    if metafunc.function.__name__ == "test_child_case_long":
        ids = _long_ids() if long_enabled(metafunc.config) else ["corrupt|long|profile|m"]
        metafunc.parametrize("child_case", [_param(i, long=True) for i in ids])


def test_child_case_long(child_case, long_profile, child_outcomes):
    _check_child(child_case, child_outcomes)


# ---------------------------------------------------------------------------
# In-process properties: readable but odd inputs against dense references
# ---------------------------------------------------------------------------

PROFILES = [pytest.param("default", id="default"),
            pytest.param("long", id="long", marks=pytest.mark.fuzz_long)]


def run_property(check, profile, request, *, default, long, max_dim=(6, 24)):
    """Run ``check(data, max_dim)`` under hypothesis: ``default`` examples
    (derandomized, so CI sees the same ones every time) or, in the long
    profile, ``long`` examples of larger matrices."""
    if profile == "long" and not long_enabled(request.config):
        pytest.skip("the long fuzz profile runs with SKETCHLAB_XSLOW=1 (or --runslow)")
    dim = max_dim[profile == "long"]

    @settings(max_examples=default if profile == "default" else long, deadline=None,
              derandomize=True, database=None, print_blob=True,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def prop(data):
        with warnings.catch_warnings():
            # UnderdeterminedSketchWarning, clipping warnings, scipy's efficiency warnings
            warnings.simplefilter("ignore")
            check(data, dim)

    prop()


# -- drawing matrices ---------------------------------------------------------

SPARSE = fc.FORMATS
DENSE = ("C", "F", "strided")
DTYPES = ("float64", "float32", "float16", "int8", "int64", "uint64", "bool")
SCALES = {"1": 1.0, "2**-1000": 2.0**-1000, "2**1000": 2.0**1000}


def draw_values(data, shape, *, dtypes=DTYPES, scales=tuple(SCALES), zeros=True):
    """A dense array of ``shape`` in a drawn dtype, and its values as float64."""
    dtype = np.dtype(data.draw(st.sampled_from(dtypes), label="dtype"))
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    density = data.draw(st.sampled_from([1.0, 0.5, 0.15] + ([0.0] if zeros else [])),
                        label="density")
    gen = np.random.default_rng(seed)
    V = gen.standard_normal(shape) * (gen.random(shape) < density)
    if dtype.kind == "f" and dtype.itemsize == 8:
        V = V * SCALES[data.draw(st.sampled_from(scales), label="scale")]
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        big = data.draw(st.booleans(), label="extreme ints")  # up to a quarter of the range
        V = np.round(np.clip(V / 4, -1, 1) * (info.max / 4) if big else V * 3)
        V = np.clip(np.abs(V) if dtype.kind == "u" else V, info.min / 2, info.max / 2)
    X = (V != 0) if dtype == np.bool_ else V.astype(dtype)
    return X, np.asarray(X, dtype=np.float64)


def draw_matrix(data, shape, *, formats=DENSE + SPARSE, mutate=True, **kw):
    """(X, D): X in a drawn format (dense layouts, every scipy format, matrix
    or array class, unsorted or duplicate or over-long index arrays) and D the
    dense float64 matrix it stands for."""
    V, D = draw_values(data, shape, **kw)
    fmt = data.draw(st.sampled_from(formats), label="format")
    if fmt in ("C", "F"):
        return np.array(V, order=fmt), D
    if fmt == "strided":
        big = np.zeros((shape[0], 2 * shape[1]), dtype=V.dtype)
        big[:, ::2] = V
        return big[:, ::2], D
    cls = data.draw(st.sampled_from(["m", "a"]), label="class")
    base = V if V.dtype != np.float16 else V.astype(np.float32)
    if fmt in ("lil", "dok", "dia") and base.dtype == np.bool_:
        base = base.astype(np.int8)
    X = fc.as_format(base, fmt, cls)
    if fmt in ("csr", "csc") and mutate:
        how = data.draw(st.sampled_from(["none", "unsorted", "duplicates", "arrays_long"]),
                        label="structure")
        if how == "unsorted":
            X = fc._unsorted(X, None)
        elif how == "duplicates" and X.dtype.kind == "f":
            X = fc._duplicates(X, None)
        elif how == "arrays_long" and X.nnz:
            X.indices = np.append(X.indices, np.zeros(2, X.indices.dtype))
            X.data = np.append(X.data, np.ones(2, X.data.dtype))
    if V.dtype == np.float16 and fmt in ("csr", "csc"):
        X.data = X.data.astype(np.float16)
    if fmt in ("csr", "csc"):  # what the final arrays hold (duplicates rounded apart, ...)
        nnz = X.indptr[-1]
        D = type(X)((X.data[:nnz].astype(np.float64), X.indices[:nnz], X.indptr),
                    shape=X.shape).toarray()
    return X, D


def out_dtype(D_dtype):
    return np.float32 if D_dtype == np.float32 else np.float64


def input_dtype(X):
    return np.dtype(X.dtype)


def assert_close(got, want, bound, dtype):
    """|got - want| <= tolerance * bound entrywise, bound the product of the
    absolute values (so that a value of 2**-1000 is checked to its own
    scale), and got of the dtype the inputs ask for."""
    got = np.asarray(got)
    assert got.dtype == dtype, f"dtype {got.dtype}, want {dtype}"
    assert got.shape == want.shape, f"shape {got.shape}, want {want.shape}"
    eps = np.finfo(dtype).eps
    tol = 64 * eps * max(1, max(want.shape, default=1)) * bound + np.finfo(dtype).tiny
    err = np.abs(got.astype(np.float64) - want)
    assert (err <= tol).all(), f"max error {err.max()} (bound {bound.max()})"


# -- operators ----------------------------------------------------------------

def draw_operator(data, kind, s, d):
    rng = data.draw(st.one_of(st.integers(0, 2**64 - 1), st.just(None)), label="rng")
    rng = 0 if rng is None else rng
    if kind == "srht":
        s = min(s, 1 << max(0, (d - 1).bit_length()))
    if kind == "uniform_noreplace":
        s = min(s, d)
    if kind == "leverage":
        scores = data.draw(st.lists(st.floats(0.0, 1e300), min_size=d, max_size=d),
                           label="scores")
        if not any(scores):
            scores[0] = 1.0
        return sl.LeverageScoreSampler(s, d, scores=scores, rng=rng)
    if kind == "selection":
        idx = data.draw(st.lists(st.integers(0, d - 1), min_size=1, max_size=s),
                        label="indices")
        return sl.IndexSelection(np.array(idx, dtype=np.int64), d)
    if kind == "osnap":
        p = data.draw(st.integers(1, s), label="nnz_per_col")
        return sl.OSNAP(s, d, nnz_per_col=p, rng=rng)
    return fc.make_op(kind, s, d, rng % 2**62)


def check_operator(data, dim):
    kind = data.draw(st.sampled_from(fc.KINDS), label="kind")
    how = data.draw(st.sampled_from(["left", "right", "left_block_out", "right_block_out",
                                     "both", "many", "pickled"]), label="how")
    right = how in ("right", "right_block_out")
    # the dimension a sketch compresses is >= 1; the other may be empty
    m = data.draw(st.integers(0 if right else 1, dim), label="m")
    n = data.draw(st.integers(1 if right or how == "both" else 0, dim), label="n")
    s = data.draw(st.integers(1, dim), label="s")
    X, D = draw_matrix(data, (m, n))
    want_dtype = out_dtype(input_dtype(X))
    if how in ("left", "pickled", "many"):
        S = draw_operator(data, kind, s, m)
        Sd = dense_op(S)
        if how == "pickled":
            T = pickle.loads(pickle.dumps(S))
            assert T == S and hash(T) == hash(S)
            got = T @ X
            assert np.array_equal(got, S @ X)
        elif how == "many":
            got = S.apply_many([X, D])[0]
        else:
            got = S @ X
        assert_close(got, Sd @ D, abs_op(S) @ np.abs(D), want_dtype)
    elif how == "right":
        T = draw_operator(data, kind, s, n)
        Td = dense_op(T)
        assert_close(X @ T.T, D @ Td.T, np.abs(D) @ abs_op(T).T, want_dtype)
    elif how == "left_block_out":
        offset = data.draw(st.integers(0, 3), label="offset")
        S = draw_operator(data, kind, s, m + offset + 1)
        Sd = dense_op(S)[:, offset:offset + m]
        start = np.asarray(data.draw(st.lists(st.floats(-2, 2), min_size=S.sketch_size * n,
                                              max_size=S.sketch_size * n)),
                           dtype=want_dtype).reshape(S.sketch_size, n)
        order = data.draw(st.sampled_from(["C", "F", "slice"]), label="out layout")
        if order == "slice":
            big = np.zeros((S.sketch_size, n + 3), dtype=want_dtype)
            out = big[:, 1:1 + n]
        else:
            out = np.empty((S.sketch_size, n), dtype=want_dtype, order=order)
        out[...] = start
        accumulate = data.draw(st.booleans(), label="accumulate")
        got = S.apply(X, axis=0, offset=offset, out=out, accumulate=accumulate)
        assert got is out
        want = Sd @ D + (start if accumulate else 0)
        assert_close(got, want, abs_op(S)[:, offset:offset + m] @ np.abs(D) + np.abs(start),
                     want_dtype)
    elif how == "right_block_out":
        offset = data.draw(st.integers(0, 3), label="offset")
        T = draw_operator(data, kind, s, n + offset)
        Td = dense_op(T)[:, offset:offset + n]
        out = np.ones((m, T.sketch_size), dtype=want_dtype,
                      order=data.draw(st.sampled_from(["C", "F"]), label="out order"))
        got = T.apply(X, axis=1, offset=offset, out=out, accumulate=True)
        assert_close(got, 1.0 + D @ Td.T, 1.0 + np.abs(D) @ abs_op(T)[:, offset:offset + n].T,
                     want_dtype)
    else:  # both
        S1 = draw_operator(data, kind, s, m + 1)
        kind2 = data.draw(st.sampled_from(fc.KINDS), label="kind2")
        S2 = draw_operator(data, kind2, data.draw(st.integers(1, dim), label="s2"), n + 2)
        S1d, S2d = dense_op(S1)[:, 1:1 + m], dense_op(S2)[:, 2:2 + n]
        into = data.draw(st.sampled_from(["new", "out", "accumulate"]), label="into")
        if into == "new":
            got = sl.sketch_both(S1, X, S2, offsets=(1, 2))
            start = 0.0
        else:
            start = np.full((S1.sketch_size, S2.sketch_size), 0.5, dtype=want_dtype)
            out = start.copy(order=data.draw(st.sampled_from("CF"), label="out order"))
            got = sl.sketch_both(S1, X, S2, offsets=(1, 2), out=out,
                                 accumulate=into == "accumulate")
            assert got is out
            start = start if into == "accumulate" else 0.0
        assert_close(got, start + S1d @ D @ S2d.T,
                     np.abs(start) + abs_op(S1)[:, 1:1 + m] @ np.abs(D) @ abs_op(S2)[:, 2:2 + n].T,
                     want_dtype)


dense_op = fc.dense_op
abs_op = fc.abs_op

@pytest.mark.parametrize("profile", PROFILES)
def test_operators_on_odd_inputs(profile, request):
    run_property(check_operator, profile, request, default=120, long=2000)


def check_explicit_forms(data, dim):
    """toarray, tosparse, S.T @ Y and aslinearoperator against the definition."""
    kind = data.draw(st.sampled_from(fc.KINDS), label="kind")
    d = data.draw(st.integers(1, dim), label="d")
    S = draw_operator(data, kind, data.draw(st.integers(1, dim), label="s"), d)
    Sd = dense_op(S)
    assert np.allclose(S.toarray(), Sd, rtol=1e-13, atol=1e-15)
    assert np.allclose(S.T.toarray(), Sd.T, rtol=1e-13, atol=1e-15)
    if hasattr(S, "tosparse"):
        fmt = data.draw(st.sampled_from(["csr", "csc", "coo"]), label="format")
        T = S.tosparse(fmt)
        assert T.format == fmt and np.allclose(T.toarray(), Sd, rtol=1e-13, atol=1e-15)
    k = data.draw(st.integers(0, 3), label="k")
    Y, Yd = draw_values(data, (S.sketch_size, k), dtypes=("float64", "float32", "int8"))
    Y = np.asfortranarray(Y) if data.draw(st.booleans(), label="F") else Y
    assert_close(S.T @ Y, Sd.T @ Yd, np.abs(Sd).T @ np.abs(Yd), out_dtype(Y.dtype))
    L = S.aslinearoperator()
    x = np.arange(1.0, d + 1)
    y = np.arange(1.0, S.sketch_size + 1)
    assert np.allclose(L.matvec(x), Sd @ x, rtol=1e-12)
    assert np.allclose(L.rmatvec(y), Sd.T @ y, rtol=1e-12)
    assert np.allclose(L @ np.eye(d), Sd, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("profile", PROFILES)
def test_explicit_forms(profile, request):
    run_property(check_explicit_forms, profile, request, default=40, long=500)


# -- values that must be refused ----------------------------------------------

def _entry_points():
    """name -> (parameter, f(X) for X in that parameter's place, shape of X)."""
    import dask.array as da
    import sketchlab.dask as sld

    m, n = 7, 5
    A = fc.base_dense((m, n))
    C, R = fc.base_dense((m, 2), 1), fc.base_dense((2, n), 2)
    U = np.linalg.qr(fc.base_dense((m, 2), 3))[0]
    Vt = np.linalg.qr(fc.base_dense((n, 2), 4))[0].T
    return {
        "left": ("A", lambda X: sl.CountSketch(3, m, rng=0) @ X, (m, n)),
        "right": ("A", lambda X: X @ sl.GaussianSketch(3, n, rng=0).T, (m, n)),
        "apply_out": ("A", lambda X: sl.SRHT(3, m, rng=0).apply(X, out=np.zeros((3, n))),
                      (m, n)),
        "apply_many": ("arrays[1]", lambda X: sl.OSNAP(3, m, rng=0).apply_many([A, X]), (m, n)),
        "sketch_both": ("A", lambda X: sl.sketch_both(sl.CountSketch(3, m, rng=0), X,
                                                      sl.UniformSampler(2, n, rng=1)), (m, n)),
        "transpose": ("Y", lambda X: sl.CountSketch(m, 9, rng=0).T @ X, (m, n)),
        "leverage_scores": ("A", lambda X: sl.leverage_scores(X, k=2), (m, n)),
        "leverage_sampler_scores": ("scores", lambda X: sl.LeverageScoreSampler(
            3, scores=X.ravel() if isinstance(X, np.ndarray) and X.ndim == 2 else X), (m, n)),
        "gmr": ("A", lambda X: sl.gmr(X, C, R), (m, n)),
        "gmr_C": ("C", lambda X: sl.gmr(A, X, R), (m, 2)),
        "fast_gmr": ("A", lambda X: sl.fast_gmr(X, C, R, sketch_size=5, rng=0).X, (m, n)),
        "fast_gmr_R": ("R", lambda X: sl.fast_gmr(A, C, X, sketch_size=5, rng=0).X, (2, n)),
        "gmr_residual_X": ("X", lambda X: sl.gmr_residual(A, C, X, R), (2, 2)),
        "gmr_error_ratio": ("A", lambda X: sl.gmr_error_ratio(X, C, np.eye(2), R), (m, n)),
        "lowrank_residual": ("A", lambda X: sl.lowrank_residual(X, U, np.ones(2), Vt), (m, n)),
        "lowrank_residual_U": ("U", lambda X: sl.lowrank_residual(A, X, np.ones(2), Vt),
                               (m, 2)),
        "project_psd": ("X", lambda X: sl.project_psd(X), (4, 4)),
        "fast_sp_svd": ("A", lambda X: sl.fast_sp_svd(X, 2, rng=0), (m, n)),
        "three_sketch_svd_stream": ("block 1", lambda X: sl.three_sketch_svd(
            iter([A[:3], X]), 1, axis=0, shape=(m, n), rng=0), (m - 3, n)),
        "cur": ("A", lambda X: sl.cur(X, 2, rng=0), (m, n)),
        "rbf": ("X", lambda X: sl.RBFKernel(X, 0.5), (m, n)),
        "rbf_cross": ("Y", lambda X: sl.RBFKernel(A, 0.5).cross(X), (3, n)),
        "nystrom_K": ("K", lambda X: sl.nystrom(X, 2, rng=0), (m, m)),
        "eta_K": ("K", lambda X: sl.eta(X, 2, rng=0), (m, m)),
        "sketch_state": ("block", lambda X: fc._state((m, n)).update(X), (m, n)),
        "nystroem_fit": ("X|sklearn", lambda X: sl.SketchedNystroem(n_components=2, random_state=0)
                         .fit(X), (m, n)),
        "single_pass_fit": ("X|sklearn", lambda X: sl.SinglePassSVD(2, random_state=0).fit(X),
                            (m, n)),
        "single_pass_transform": ("X|sklearn", lambda X: sl.SinglePassSVD(2, random_state=0)
                                  .fit(A).transform(X), (m, n)),
        "dask_sketch": ("A chunk", lambda X: sld.sketch(
            sl.CountSketch(3, m, rng=0), fc._dask_array(A[:3], X), scheduler="sync"),
            (m - 3, n)),
        "dask_in_memory": ("A", lambda X: sl.CountSketch(3, m, rng=0) @ da.from_array(
            np.asarray(X.toarray() if sp.issparse(X) else X)), (m, n)),
    }


BAD_VALUES = ("nan", "inf", "-inf", "complex", "object", "str", "datetime", "3d", "0d", "none",
              "string", "nested_list_nan")
SPARSE_BAD = ("nan", "inf", "-inf", "complex")
ESTIMATOR_POINTS = ("nystroem_fit", "single_pass_fit", "single_pass_transform")


def bad_input(data, bad, shape):
    """An input of ``shape`` made bad in the way ``bad`` names."""
    D = fc.base_dense(shape, data.draw(st.integers(0, 9), label="seed"))
    pos = (data.draw(st.integers(0, shape[0] - 1), label="i"),
           data.draw(st.integers(0, shape[1] - 1), label="j"))
    if bad in ("nan", "inf", "-inf"):
        D[pos] = float(bad)
    if bad == "complex":
        D = D + 1j * (data.draw(st.booleans(), label="imag") * D)
    if bad in SPARSE_BAD and data.draw(st.booleans(), label="sparse"):
        fmt = data.draw(st.sampled_from(["csr", "csc", "coo", "bsr", "lil", "dok"]),
                        label="format")
        return fc.as_format(D, fmt, data.draw(st.sampled_from("ma"), label="class"))
    if bad == "object":
        return D.astype(object)
    if bad == "str":
        return D.astype(str)
    if bad == "datetime":
        return np.zeros(shape, dtype="datetime64[s]")
    if bad == "3d":
        return D[:, :, None]
    if bad == "0d":
        return np.float64(1.0)
    if bad == "none":
        return None
    if bad == "string":
        return "A"
    if bad == "nested_list_nan":
        rows = D.tolist()
        rows[pos[0]][pos[1]] = float("nan")
        return rows
    return D


def check_bad_values(data, dim):
    points = _entry_points()
    name = data.draw(st.sampled_from(sorted(points)), label="entry point")
    bad = data.draw(st.sampled_from(BAD_VALUES), label="bad value")
    param, fn, shape = points[name]
    if name == "leverage_sampler_scores" and bad in ("nan", "inf", "-inf"):
        param = "scores"
    X = bad_input(data, bad, shape)
    if name in ESTIMATOR_POINTS and bad in ("object", "str", "nested_list_nan", "datetime"):
        reject()  # scikit-learn converts these to numbers (as its own estimators do)
    if name.startswith("dask") and bad in ("0d", "none", "string", "nested_list_nan"):
        reject()  # not a chunk of an array
    if name == "dask_in_memory" and bad in ("object", "str", "datetime", "3d", "complex"):
        reject()
    with pytest.raises((ValueError, TypeError)) as info:
        fn(X)
    message = str(info.value)
    assert fc.names(message, param), f"{name} with {bad}: {message!r} does not name {param!r}"


@pytest.mark.parametrize("profile", PROFILES)
def test_bad_values_are_refused_by_name(profile, request):
    run_property(check_bad_values, profile, request, default=150, long=2000)


# -- algorithms: any format and dtype gives the dense float64 answer -----------

def _svd(res):
    return fc._svd_product(res)


def _algorithm(data, name, shape):
    """f(X) -> list of arrays for algorithm ``name`` with its other inputs and
    options drawn here (the same for X and for its dense reference)."""
    m, n = shape
    C, R = fc.base_dense((m, 2), 71), fc.base_dense((2, n), 72)
    draw = data.draw
    if name == "leverage_scores":
        axis = draw(st.sampled_from([0, 1]), label="axis")
        k = draw(st.sampled_from([None, 1, 2]), label="k")
        method = draw(st.sampled_from(["exact", "sketch"]), label="method")
        return lambda X: [sl.leverage_scores(X, axis=axis, k=k, method=method, rng=3)]
    if name == "gmr":
        return lambda X: [sl.gmr(X, C, R)]
    if name == "fast_gmr":
        kind = draw(st.sampled_from(sl.SKETCH_KINDS), label="sketch")
        # above min(m, n): test_known_bug_fast_gmr_sketch_size_above_dimension
        size = draw(st.integers(1, min(m, n)), label="sketch_size")
        estimate = draw(st.booleans(), label="estimate_error")
        return lambda X: fc._arrays(sl.fast_gmr(X, C, R, sketch_size=size, sketch=kind, rng=5,
                                                estimate_error=estimate))
    if name == "fast_gmr_psd":  # square A, C = R^T (Theorem 2)
        Kc = fc.base_dense((m, 2), 73)
        return lambda X: [sl.fast_gmr(X, Kc, Kc.T, sketch_size=m - 1, structure="psd", rng=6).X]
    if name == "gmr_residual":
        Xc = fc.base_dense((2, 2), 74)
        return lambda X: [np.array([sl.gmr_residual(X, C, Xc, R),
                                    sl.gmr_error_ratio(X, C, Xc, R)])]
    if name == "lowrank_residual":
        U = np.linalg.qr(fc.base_dense((m, 2), 75))[0]
        Vt = np.linalg.qr(fc.base_dense((n, 2), 76))[0].T
        return lambda X: [np.array(sl.lowrank_residual(X, U, np.array([3.0, 1.0]), Vt))]
    if name in ("fast_sp_svd", "practical_sp_svd", "three_sketch_svd"):
        f = getattr(sl, name)
        k = draw(st.integers(1, 2), label="k")
        axis = draw(st.sampled_from([0, 1]), label="axis")
        block = draw(st.sampled_from([None, 1, 3]), label="block_size")
        estimate = draw(st.booleans(), label="estimate_error")
        tol = draw(st.sampled_from([None, 0.5]), label="tol")
        return lambda X: _svd(f(X, k, axis=axis, block_size=block, rng=7, tol=tol,
                                estimate_error=estimate))
    if name == "cur":
        select = draw(st.sampled_from(["approx-leverage", "leverage", "uniform", "deim",
                                       "pivoted-qr"]), label="select")
        core = draw(st.sampled_from(["fast", "exact", "cross"]), label="core")
        return lambda X: [sl.cur(X, 2, select=select, core=core, rng=8).toarray()]
    if name == "spsd":
        method = draw(st.sampled_from(["nystrom", "fast_spsd", "faster_spsd", "optimal_spsd"]),
                      label="method")
        landmarks = draw(st.sampled_from(["uniform", "rpcholesky", "ridge-leverage"]),
                         label="landmarks")
        estimate = draw(st.booleans(), label="estimate_error")
        f = getattr(sl, method)
        args = (2, 4) if method in ("fast_spsd", "faster_spsd") else (2,)
        return lambda X: fc._arrays(_spsd_result(f(sl.RBFKernel(X, 0.2), *args,
                                                   landmarks=landmarks, rng=9,
                                                   estimate_error=estimate)))
    if name == "single_pass_svd":
        algorithm = draw(st.sampled_from(["fast", "practical", "three-sketch"]),
                         label="algorithm")

        def f(X):
            est = sl.SinglePassSVD(2, algorithm=algorithm, random_state=0).fit(X)
            return [est.singular_values_, est.components_.T @ est.components_,
                    est.transform(X)[:, :1] ** 2]
        return f
    if name == "sketched_nystroem":
        core = draw(st.sampled_from(["faster", "fast", "nystrom", "optimal"]), label="core")

        def f(X):
            est = sl.SketchedNystroem(gamma=0.2, n_components=2, sketch_size=4, core=core,
                                      random_state=0).fit(X)
            Z = est.transform(X)
            return [Z @ Z.T]
        return f
    raise KeyError(name)


def _spsd_result(approx):
    out = [approx.toarray()]
    if approx.error_estimate is not None:
        out.append(np.array([approx.error_estimate.value]))
    return out


ALGORITHMS = ("leverage_scores", "gmr", "fast_gmr", "fast_gmr_psd", "gmr_residual",
              "lowrank_residual", "fast_sp_svd", "practical_sp_svd", "three_sketch_svd", "cur",
              "spsd", "single_pass_svd", "sketched_nystroem")
# results of float32 input that are float32 (the others are float64 scalars,
# scores or decompositions kept in float64, or, for gmr and fast_gmr, results
# of a float32 A with float64 C and R)
FLOAT32_KEPT = ("fast_sp_svd", "practical_sp_svd", "three_sketch_svd")


def check_algorithm_formats(data, dim):
    name = data.draw(st.sampled_from(ALGORITHMS), label="algorithm")
    m = data.draw(st.integers(6, 6 + dim), label="m")
    n = m if name == "fast_gmr_psd" else data.draw(st.integers(5, min(m, 5 + dim)), label="n")
    X, D = draw_matrix(data, (m, n), scales=("1",), zeros=False,
                       dtypes=("float64", "float32", "float16", "int8", "uint64", "bool"))
    f = _algorithm(data, name, (m, n))
    got = f(X)
    float32 = input_dtype(X) == np.float32
    want = f(D.astype(np.float32) if float32 else D)
    if float32 and name in FLOAT32_KEPT:
        assert got[0].dtype == np.float32, f"{name}: {got[0].dtype} for float32 input"
    diff, why = fc.compare(got, want)
    assert diff <= (1e-4 if float32 else 1e-8), f"{name}: difference {diff} {why}"


@pytest.mark.parametrize("profile", PROFILES)
def test_algorithms_on_odd_inputs(profile, request):
    run_property(check_algorithm_formats, profile, request, default=60, long=1000)


# -- extreme scales: 2**+-1000 A gives 2**+-1000 times the answer --------------

def _scaled_algorithm(data, name, shape):
    """(f(A, lam) -> list of arrays, powers: output i scales like lam**p_i)."""
    m, n = shape
    C, R = fc.base_dense((m, 2), 81), fc.base_dense((2, n), 82)
    Xc = fc.base_dense((2, 2), 83)
    U = np.linalg.qr(fc.base_dense((m, 2), 84))[0]
    Vt = np.linalg.qr(fc.base_dense((n, 2), 85))[0].T
    if name == "fast_gmr":
        kind = data.draw(st.sampled_from(sl.SKETCH_KINDS), label="sketch")
        return (lambda A, lam: fc._arrays(sl.fast_gmr(lam * A, C, R, sketch_size=4, sketch=kind,
                                                       rng=1, estimate_error=True)),
                [1, 1])  # X, then the estimate (value, low, high)
    if name == "gmr":
        return lambda A, lam: [sl.gmr(lam * A, C, R)], [1]
    if name == "leverage_scores":
        return lambda A, lam: [sl.leverage_scores(lam * A, k=2, method="sketch", rng=2)], [0]
    if name == "gmr_residual":
        return (lambda A, lam: [np.array([sl.gmr_residual(lam * A, C, lam * Xc, R)]),
                                np.array([sl.gmr_error_ratio(lam * A, C, lam * Xc, R)])],
                [1, 0])
    if name == "lowrank_residual":
        s = np.array([2.0, 1.0])
        return lambda A, lam: [np.array([sl.lowrank_residual(lam * A, U, lam * s, Vt)])], [1]
    if name in ("fast_sp_svd", "practical_sp_svd", "three_sketch_svd"):
        f = getattr(sl, name)
        tol = data.draw(st.sampled_from([None, 0.3]), label="tol")

        def svd(A, lam):
            return _svd(f(lam * A, 2, rng=3, tol=tol, estimate_error=True))
        svd.tol = tol
        return svd, [1, 1, 1]  # U s Vt, s, then the estimate (value, low, high)
    if name == "cur":
        return lambda A, lam: [sl.cur(lam * A, 2, core="fast", rng=4).toarray()], [1]
    if name == "nystrom_dense_K":
        K = rbf_dense(fc.base_dense(shape, 86), 0.2)
        method = data.draw(st.sampled_from(["nystrom", "fast_spsd", "faster_spsd",
                                            "optimal_spsd"]), label="method")
        f = getattr(sl, method)
        args = (2, 4) if method in ("fast_spsd", "faster_spsd") else (2,)
        return lambda A, lam: [f(lam * K, *args, rng=5).toarray()], [1]
    if name == "eta":
        K = rbf_dense(fc.base_dense(shape, 87), 0.2)
        return lambda A, lam: [np.array([sl.eta(lam * K, 2, rng=6)])], [0]
    if name == "sketch_state":
        def f(A, lam):
            state = fc._state(A.shape).update(lam * A)
            return [state["range"], state["co-range"], state["core"],
                    np.array([state.squared_norm])]
        return f, [1, 1, 1, 2]
    if name == "single_pass_svd":
        return (lambda A, lam: [sl.SinglePassSVD(2, random_state=0).fit(lam * A)
                                .singular_values_], [1])
    raise KeyError(name)


SCALED = ("fast_gmr", "gmr", "leverage_scores", "gmr_residual", "lowrank_residual", "fast_sp_svd",
          "practical_sp_svd", "three_sketch_svd", "cur", "nystrom_dense_K", "eta", "sketch_state",
          "single_pass_svd")


# what squares of entries (norms, Gram matrices) survive: 2**+-300 does,
# 2**+-600 and 2**+-1000 (about 1e+-180, 1e+-301) do not
SAFE_EXPONENTS = (-300, 300)
# known to go wrong where squares over/underflow (test_known_bug_extreme_scale_*)
SQUARES_FAIL = ("cur", "eta", "sketch_state", "tol")


def check_scale(data, dim):
    name = data.draw(st.sampled_from(SCALED), label="algorithm")
    m = data.draw(st.integers(6, 6 + dim), label="m")
    n = data.draw(st.integers(5, min(m, 5 + dim)), label="n")
    e = data.draw(st.sampled_from([-1000, -600, -300, 300, 600, 1000]), label="exponent")
    fmt = data.draw(st.sampled_from(["C", "F", "csr", "csc"]), label="format")
    A = fc.as_format(fc.base_dense((m, n), data.draw(st.integers(0, 99), label="seed")), fmt)
    f, powers = _scaled_algorithm(data, name, (m, n))
    tol = getattr(f, "tol", None)
    if (name in SQUARES_FAIL or tol is not None) and e not in SAFE_EXPONENTS:
        reject()
    if name == "fast_sp_svd" and e == -1000:
        reject()  # test_known_bug_fast_sp_svd_precision_near_underflow
    lam = 2.0**e
    got, want = f(A, lam), f(A, 1.0)
    assert len(got) == len(powers)
    for g, w, p in zip(got, want, powers):
        w = np.asarray(w, dtype=np.float64)
        g = np.asarray(g, dtype=np.float64)
        assert np.isfinite(g).all(), f"{name} at 2**{e}: non-finite result"
        unscaled = np.ldexp(g, -e * p)  # exact: a power of two
        scale = np.abs(w).max(initial=0.0)
        assert np.abs(unscaled - w).max(initial=0.0) <= 1e-8 * scale + 1e-300, \
            f"{name} at 2**{e}: {unscaled} != {w}"


@pytest.mark.parametrize("profile", PROFILES)
def test_extreme_scales(profile, request):
    run_property(check_scale, profile, request, default=40, long=600)


# -- kernels: an oracle on odd X, a dense K, and the formulas agree ------------

def check_spsd(data, dim):
    n = data.draw(st.integers(3, 6 + dim), label="n")
    d = data.draw(st.integers(1, 4), label="features")
    X, Xd = draw_matrix(data, (n, d), scales=("1",), dtypes=("float64", "int8", "bool"))
    gamma = data.draw(st.sampled_from([1e-3, 0.5, 30.0]), label="gamma")
    K = rbf_dense(Xd, gamma)
    method = data.draw(st.sampled_from(["nystrom", "fast_spsd", "faster_spsd", "optimal_spsd"]),
                       label="method")
    c = data.draw(st.integers(1, n), label="c")
    s = data.draw(st.integers(c, n), label="s")
    given = data.draw(st.booleans(), label="columns given")
    opts = dict(rng=data.draw(st.integers(0, 2**64 - 1), label="rng"),
                estimate_error=data.draw(st.booleans(), label="estimate_error"))
    if given:
        opts["columns"] = np.sort(np.random.default_rng(c).choice(n, c, replace=False))
    else:
        opts["landmarks"] = data.draw(st.sampled_from(["uniform", "rpcholesky",
                                                       "ridge-leverage"]), label="landmarks")
    f = getattr(sl, method)
    args = (c, s) if method in ("fast_spsd", "faster_spsd") else (c,)
    oracle = sl.RBFKernel(X, gamma)
    assert np.allclose(oracle.toarray(), K, rtol=1e-12, atol=1e-14)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from_oracle = f(oracle, *args, **opts)
        from_array = f(K, *args, **opts)
    assert np.array_equal(from_oracle.columns, from_array.columns)
    if not np.isfinite(from_array.U).all():
        # the sampled rows of C nearly zero (an RBF kernel of far-apart points
        # is nearly the identity): the core overflows in both computations alike,
        # and the user is told so by name
        assert any("U overflowed" in str(w.message) for w in caught)
        a, b = from_oracle.toarray(), from_array.toarray()
        assert np.array_equal(np.isnan(a), np.isnan(b)) and np.array_equal(np.isinf(a), np.isinf(b))
        return
    cols = from_oracle.columns
    # rounding in K is amplified by the condition number of the landmark block
    # (an RBF kernel of close points is nearly singular) and, for the fast
    # methods, of the sampled rows of C they solve with (S^T C: a landmark
    # column whose own row was not sampled is nearly lost)
    conds = [np.linalg.cond(K[np.ix_(cols, cols)])]
    conds += [np.linalg.cond(from_array.C[idx] * w[:, None]) for idx, w in from_array.samples]
    tol = max(1e-7, 1e3 * np.finfo(np.float64).eps * max(conds))
    if tol > 1e-3:
        reject()  # too ill-conditioned for any two computations to agree
    approx = from_oracle.toarray()
    diff, _ = fc.compare([approx], [from_array.toarray()])
    assert diff <= tol
    if method == "nystrom":
        want = nystrom_dense(K, cols)
    elif method == "optimal_spsd":
        want = optimal_spsd_dense(K, cols)
    else:
        want = None
    if want is not None:
        C = K[:, cols]
        diff, _ = fc.compare([approx], [C @ want @ C.T])
        assert diff <= tol, method
    if method in ("faster_spsd", "optimal_spsd", "nystrom"):  # PSD cores
        assert np.linalg.eigvalsh((from_oracle.U + from_oracle.U.T) / 2).min() >= \
            -1e-8 * max(1.0, np.abs(from_oracle.U).max())
    k = data.draw(st.integers(1, n), label="k")
    assert np.isclose(sl.eta(K, k, rng=0), eta_dense(K, k), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("profile", PROFILES)
def test_kernel_approximations(profile, request):
    run_property(check_spsd, profile, request, default=40, long=600)


# -- single pass: blocks of any format, in any order of formats -----------------

def _blocks(data, X, axis, dim):
    """X cut along ``axis`` into blocks, each in a drawn format (possibly
    empty blocks in between)."""
    size = X.shape[axis]
    cuts = sorted(data.draw(st.lists(st.integers(0, size), max_size=4), label="cuts"))
    edges = [0] + cuts + [size]
    out = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        piece = X[:, lo:hi] if axis == 1 else X[lo:hi]
        if piece.shape[axis] and min(piece.shape):
            fmt = data.draw(st.sampled_from(("C", "F") + SPARSE), label="block format")
            piece = fc.as_format(piece, fmt, data.draw(st.sampled_from("ma"), label="class"))
        out.append(piece)
    return out


def check_svd_streams(data, dim):
    m = data.draw(st.integers(4, 6 + dim), label="m")
    n = data.draw(st.integers(4, 6 + dim), label="n")
    _, D = draw_matrix(data, (m, n), scales=("1",), zeros=False, dtypes=("float64",))
    name = data.draw(st.sampled_from(["fast_sp_svd", "practical_sp_svd", "three_sketch_svd"]),
                     label="method")
    f = getattr(sl, name)
    axis = data.draw(st.sampled_from([0, 1]), label="axis")
    opts = dict(axis=axis, rng=data.draw(st.integers(0, 2**64 - 1), label="rng"),
                estimate_error=data.draw(st.booleans(), label="estimate_error"))
    k = data.draw(st.integers(1, 2), label="k")
    which = data.draw(st.sampled_from(["rank", "tol", "none"]), label="rank or tol")
    if which == "rank":
        opts["rank"] = k
    elif which == "tol":
        opts["tol"] = data.draw(st.sampled_from([0.05, 0.5, 0.99]), label="tol")
    got = f(iter(_blocks(data, D, axis, dim)), k, shape=(m, n), **opts)
    want = f(D, k, **opts)
    diff, why = fc.compare(fc._svd_product(got), fc._svd_product(want))
    assert diff <= 1e-8, f"{name}: {diff} {why}"
    U, s, Vt = got
    q = s.shape[0]
    assert np.allclose(U.T @ U, np.eye(q), atol=1e-8) and np.allclose(Vt @ Vt.T, np.eye(q),
                                                                       atol=1e-8)
    assert (s >= 0).all() and (np.diff(s) <= 1e-12 * max(1.0, s.max(initial=0))).all()


@pytest.mark.parametrize("profile", PROFILES)
def test_single_pass_svd_block_streams(profile, request):
    run_property(check_svd_streams, profile, request, default=40, long=600)


def check_sketch_state(data, dim):
    """Blocks of a grid, in drawn formats and order, through update,
    block_sketches + add_block_sketches, and merge: the dense sketches."""
    m = data.draw(st.integers(1, 4 + dim), label="m")
    n = data.draw(st.integers(1, 4 + dim), label="n")
    X, D = draw_matrix(data, (m, n), scales=("1", "2**-1000"), dtypes=("float64", "float32"))
    float32 = X.dtype == np.float32
    kinds = [data.draw(st.sampled_from(fc.KINDS), label=f"kind {i}") for i in range(4)]
    ops = [draw_operator(data, kinds[0], 3, n), draw_operator(data, kinds[1], 4, m),
           draw_operator(data, kinds[2], 3, m), draw_operator(data, kinds[3], 2, n)]
    spec = {"range": (None, ops[0]), "co-range": (ops[1], None), "core": (ops[2], ops[3])}
    Dcast = D.astype(np.float32).astype(np.float64) if float32 else D
    want = {"range": Dcast @ dense_op(ops[0]).T, "co-range": dense_op(ops[1]) @ Dcast,
            "core": dense_op(ops[2]) @ Dcast @ dense_op(ops[3]).T}
    rows = sorted(set(data.draw(st.lists(st.integers(1, m - 1), max_size=2), label="rows")
                      if m > 1 else []))
    cols = sorted(set(data.draw(st.lists(st.integers(1, n - 1), max_size=2), label="cols")
                      if n > 1 else []))
    Xd = np.asarray(X.toarray() if sp.issparse(X) else X)
    blocks = []
    for i0, i1 in zip([0] + rows, rows + [m]):
        for j0, j1 in zip([0] + cols, cols + [n]):
            fmt = data.draw(st.sampled_from(("C", "F") + SPARSE), label="block format")
            blocks.append((fc.as_format(Xd[i0:i1, j0:j1], fmt), (i0, j0)))
    order = data.draw(st.permutations(range(len(blocks))), label="order")
    dtype = np.float32 if float32 else np.float64
    how = data.draw(st.sampled_from(["update", "shares", "merge"]), label="how")
    state = sl.SketchState((m, n), spec, dtype=dtype)
    if how == "update":
        for b in order:
            state.update(*blocks[b])
    elif how == "shares":
        for b in order:
            block, offsets = blocks[b]
            shares = sl.SketchState((m, n), spec, dtype=dtype).block_sketches(block, offsets)
            state.add_block_sketches(shares, offsets, block.shape)
    else:
        for b in order:
            state.merge(sl.SketchState((m, n), spec, dtype=dtype).update(*blocks[b]))
    tol = 1e-4 if float32 else 1e-10
    for name, w in want.items():
        got = state[name]
        assert got.dtype == dtype, name
        scale = max(np.abs(w).max(initial=0.0), np.abs(Dcast).max(initial=0.0), 1e-300)
        assert np.abs(got - w).max(initial=0.0) <= tol * scale * max(m, n), name
    norm = np.linalg.norm(Dcast)  # numpy scales its own sum of squares
    assert np.isclose(state.norm, norm, rtol=1e-5 if float32 else 1e-10)


@pytest.mark.parametrize("profile", PROFILES)
def test_sketch_state_blocks(profile, request):
    run_property(check_sketch_state, profile, request, default=40, long=600)


# -- estimators: batches of any format -----------------------------------------

def check_estimators(data, dim):
    m = data.draw(st.integers(6, 10 + dim), label="m")
    n = data.draw(st.integers(3, 4 + dim), label="n")
    _, D = draw_matrix(data, (m, n), scales=("1",), zeros=False, dtypes=("float64",))
    which = data.draw(st.sampled_from(["SinglePassSVD", "SketchedNystroem"]), label="estimator")
    formats = ("C", "F", "strided") + SPARSE
    if which == "SinglePassSVD":
        algorithm = data.draw(st.sampled_from(["fast", "practical", "three-sketch"]),
                              label="algorithm")
        make = lambda: sl.SinglePassSVD(2, algorithm=algorithm, random_state=3)  # noqa: E731
        batches = [b for b in _blocks(data, D, 0, dim) if b.shape[0]]
        if batches[0].shape[0] < 2:  # partial_fit needs n_components rows at first
            reject()
        est = make()
        for b in batches:
            est.partial_fit(b)
        ref = make().fit(D)
        assert np.allclose(est.singular_values_, ref.singular_values_, rtol=1e-8, atol=1e-12)
        P, Q = est.components_.T @ est.components_, ref.components_.T @ ref.components_
        assert np.allclose(P, Q, atol=1e-7)
        X, _ = draw_matrix(data, (m, n), formats=formats)
        Y = est.transform(X)
        Dx = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
        assert np.allclose(Y, Dx @ est.components_.T, rtol=1e-6,
                           atol=1e-9 * max(1.0, np.abs(Dx).max()))
    else:
        core = data.draw(st.sampled_from(["faster", "fast", "nystrom", "optimal"]), label="core")
        make = lambda: sl.SketchedNystroem(gamma=0.3, n_components=3, sketch_size=5,  # noqa
                                           core=core, random_state=4)
        X, _ = draw_matrix(data, (m, n), formats=formats, dtypes=("float64", "int8", "bool"),
                           scales=("1",))
        Dx = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
        est, ref = make().fit(X), make().fit(Dx)
        assert np.array_equal(est.component_indices_, ref.component_indices_)
        Z, W = est.transform(X), ref.transform(Dx)
        assert np.allclose(Z @ Z.T, W @ W.T, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("profile", PROFILES)
def test_estimators_on_odd_batches(profile, request):
    run_property(check_estimators, profile, request, default=25, long=400)


# -- the dask front: chunks of any format ---------------------------------------

def check_dask_chunks(data, dim):
    import dask.array as da
    import sketchlab.dask as sld

    m = data.draw(st.integers(3, 6 + dim), label="m")
    n = data.draw(st.integers(3, 6 + dim), label="n")
    _, D = draw_matrix(data, (m, n), scales=("1", "2**1000"), zeros=False,
                       dtypes=("float64",))
    rows = sorted(set(data.draw(st.lists(st.integers(1, m - 1), max_size=2), label="rows")))
    cols = sorted(set(data.draw(st.lists(st.integers(1, n - 1), max_size=2), label="cols")))
    rb = list(zip([0] + rows, rows + [m]))
    cb = list(zip([0] + cols, cols + [n]))
    fmts = {}
    for a in range(len(rb)):
        for b in range(len(cb)):
            fmts[a, b] = (data.draw(st.sampled_from(("C", "F") + SPARSE), label="chunk format"),
                          data.draw(st.sampled_from("ma"), label="class"))

    def load(block_info=None):
        a, b = block_info[None]["chunk-location"]
        (i0, i1), (j0, j1) = rb[a], cb[b]
        return fc.as_format(D[i0:i1, j0:j1], *fmts[a, b])

    A = da.map_blocks(load, chunks=(tuple(i1 - i0 for i0, i1 in rb),
                                    tuple(j1 - j0 for j0, j1 in cb)),
                      dtype=np.float64, meta=np.empty((0, 0)))
    what = data.draw(st.sampled_from(["sketch0", "sketch1", "sketch_both", "sketch_state",
                                      "fast_sp_svd"]), label="call")
    S = draw_operator(data, data.draw(st.sampled_from(fc.KINDS), label="kind"), 3, m)
    T = draw_operator(data, data.draw(st.sampled_from(fc.KINDS), label="kind2"), 2, n)
    if what == "sketch0":
        got, want = sld.sketch(S, A, scheduler="sync"), S @ D
    elif what == "sketch1":
        got, want = sld.sketch(T, A, axis=1, scheduler="sync"), D @ T.T
    elif what == "sketch_both":
        got, want = sld.sketch_both(S, A, T, scheduler="sync"), sl.sketch_both(S, D, T)
    elif what == "sketch_state":
        spec = {"range": (None, T), "co-range": (S, None), "core": (S, T)}
        state = sld.sketch_state(A, spec, scheduler="sync")
        ref = sl.SketchState((m, n), spec).update(D)
        got = np.concatenate([state[k].ravel() for k in spec])
        want = np.concatenate([ref[k].ravel() for k in spec])
    else:
        k = min(2, m, n)
        got = fc._svd_product(sld.fast_sp_svd(A, k, rng=5, scheduler="sync"))
        want = fc._svd_product(sl.fast_sp_svd(D, k, rng=5))
    diff, why = fc.compare(fc._arrays(got), fc._arrays(want))
    assert diff <= 1e-10, f"{what}: {diff} {why}"


@pytest.mark.parametrize("profile", PROFILES)
def test_dask_chunks_of_any_format(profile, request):
    run_property(check_dask_chunks, profile, request, default=25, long=400)


# The bugs the properties found, fixed, stay as regression tests in the test
# modules of what they test (test_operators.py, test_sketch_state.py,
# test_svd.py, test_gmr.py, test_cur.py, test_spsd.py)

# ---------------------------------------------------------------------------
# The reported crash, and the child runner itself
# ---------------------------------------------------------------------------

def test_reported_partial_fit_crash_is_a_named_error():
    """The report this suite started from (it used to segfault), in a child."""
    case = fc.build_case("corrupt|single_pass_svd_partial_fit|csr:index_huge|m")
    outcome = fc.run_cases([case.id])[case.id]
    assert outcome["outcome"] == "error" and fc.judge(case, outcome) is None, outcome


def test_runner_reports_a_crash_and_goes_on():
    """A case that kills its child is reported as a crash, and the cases
    after it still run (in a new child)."""
    ids = ["size|CountSketch.sketch_size|zero", "crash|segfault",
           "size|CountSketch.sketch_size|negative"]
    outcomes = fc.run_cases(ids)
    assert outcomes["crash|segfault"]["outcome"] == "crash"
    assert "-11" in outcomes["crash|segfault"]["detail"]
    for case_id in (ids[0], ids[2]):
        assert outcomes[case_id]["outcome"] == "error", outcomes[case_id]


