"""The reliability cases reported against the first round, one test each:
inputs that crashed the interpreter, answers that were silently wrong, and
failures that were unhelpful or slow.  Crashes run in a subprocess."""

import os
import pickle
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import scipy.sparse as sp

import sketchlab as sl


def run_isolated(code, timeout=300, env=None):
    """Run ``code`` in a fresh interpreter; its return code and output."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, env=dict(os.environ, **(env or {})))
    return proc.returncode, proc.stdout, proc.stderr


# ---- crashes ------------------------------------------------------------------------


@pytest.mark.parametrize("call", [
    "SinglePassSVD(n_components=3, random_state=0).partial_fit(X)",
    "SinglePassSVD(n_components=3, random_state=0).fit(good).transform(X)",
    "SketchedNystroem(n_components=5, random_state=0).fit(Xc)",
    "SketchedNystroem(n_components=5, random_state=0).fit(good).transform(X)",
])
@pytest.mark.parametrize("index", ["10**9", "-3"])
def test_estimators_check_sparse_indices_before_scikit_learn(call, index):
    code, out, err = run_isolated(f"""
        import scipy.sparse as sp
        from sketchlab import SinglePassSVD, SketchedNystroem
        good = sp.random(50, 40, density=0.3, format="csr", random_state=1)
        X = good.copy()
        X.indices[5] = {index}
        Xc = good.tocsc()
        Xc.indices[5] = {index} if {index} < 0 else 10**9
        try:
            {call}
        except ValueError as exc:
            print("ValueError:", exc)
    """)
    assert code == 0, err[-2000:]
    assert "X has sparse indices outside [0, 40)" in out or \
        "X has sparse indices outside [0, 50)" in out  # a CSC X indexes rows


def test_indptr_must_start_at_zero():
    X = sp.random(30, 40, density=0.2, format="csr", random_state=0)
    bad = X.copy()
    bad.indptr[0] = 2
    with pytest.raises(ValueError, match=r"A.indptr must start at 0, got indptr\[0\] = 2"):
        bad @ sl.SRHT(5, 40, rng=0).T
    with pytest.raises(ValueError, match="must start at 0"):
        sl.SRHT(5, 30, rng=0) @ bad
    csc = X.tocsc()
    csc.indptr[0] = 1
    with pytest.raises(ValueError, match="must start at 0"):
        sl.GaussianSketch(5, 30, rng=0) @ csc


def test_hashing_sketch_sizes_fit_the_packed_codes():
    with pytest.raises(ValueError, match=r"sketch_size must be <= 2\*\*30"):
        sl.CountSketch(2**31 - 1, 64, rng=0)
    S = sl.CountSketch(2**30, 64, rng=0)  # the largest: rows stay non-negative
    rows = S.tosparse("coo").row
    assert rows.min() >= 0 and rows.max() < 2**30


def test_workqueue_layer_guard_is_in_the_launch_door():
    # the concurrent-call test itself is in test_determinism.py; here, every
    # parallel loop of the package is launched through threads_for
    import ast
    from pathlib import Path

    root = Path(sl.__file__).parent
    parallel = set()
    for path in (root / "_jit").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and any(
                    isinstance(d, ast.Call) and any(
                        isinstance(a, ast.Starred) and getattr(a.value, "id", "") == "PJIT"
                        for a in d.args) or
                    isinstance(d, ast.Call) and any(
                        isinstance(k.value, ast.Name) and k.value.id == "PJIT" for k in d.keywords
                        if k.arg is None)
                    for d in node.decorator_list):
                parallel.add(node.name)
    assert {"left_csr", "both_csr_chunks_hash", "count_nonfinite"} <= parallel
    for path in root.rglob("*.py"):  # the operators' package included
        if "_jit" in path.relative_to(root).parts:
            continue  # compiled code calling compiled code
        tree = ast.parse(path.read_text())
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef):
                continue
            guarded = any(isinstance(w, ast.With) and "threads_for" in ast.unparse(w)
                          for w in ast.walk(func))
            for call in ast.walk(func):
                if isinstance(call, ast.Call):
                    name = ast.unparse(call.func).split(".")[-1]
                    if name in parallel and not name.startswith("_"):
                        assert guarded or func.name.endswith("_loops"), (
                            f"{path.name}:{call.lineno}: {name} launched outside threads_for")


# ---- silently wrong -------------------------------------------------------------------


def test_rbf_kernel_far_from_the_origin():
    X = np.array([[1e9], [1e9 + 0.5], [1e9 + 1]])
    K = sl.RBFKernel(X, gamma=1.0).toarray()
    np.testing.assert_allclose(K[0], [1.0, np.exp(-0.25), np.exp(-1.0)], rtol=1e-14)
    K = sl.RBFKernel(np.array([[1e160], [2e160]]), gamma=1e-320).toarray()
    assert np.isfinite(K).all()


@pytest.mark.parametrize("scale", [1e-170, 1e160])
def test_residuals_do_not_depend_on_the_scale(scale):
    gen = np.random.default_rng(0)
    A, C, R = gen.standard_normal((40, 30)), gen.standard_normal((40, 3)), \
        gen.standard_normal((2, 30))
    X = sl.gmr(A, C, R) + 0.01
    base = sl.gmr_residual(A, C, X, R)
    assert sl.gmr_residual(A * scale, C, X * scale, R) == pytest.approx(base * scale, rel=1e-12)
    assert sl.gmr_error_ratio(A * scale, C, X * scale, R) == pytest.approx(
        sl.gmr_error_ratio(A, C, X, R), rel=1e-10)
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    assert sl.lowrank_residual(A * scale, U[:, :3], s[:3] * scale, Vt[:3]) == pytest.approx(
        sl.lowrank_residual(A, U[:, :3], s[:3], Vt[:3]) * scale, rel=1e-12)


def test_fast_sp_svd_with_square_sketches_is_exact():
    A = np.random.default_rng(1).standard_normal((50, 40))
    for func in (sl.fast_sp_svd, sl.practical_sp_svd, sl.three_sketch_svd):
        for seed in range(5):
            U, s, Vt = func(A, 40, rng=seed)
            assert np.linalg.norm(A - (U * s) @ Vt) <= 1e-10 * np.linalg.norm(A)


def test_leverage_sampler_with_huge_scores_and_checked_rtol():
    S = sl.LeverageScoreSampler(5, scores=np.full(10, 1e308), rng=0)
    assert np.isfinite(S.weights).all() and np.allclose(S.probabilities, 0.1)
    for bad, exc in ((-1, ValueError), (float("nan"), ValueError), (2.0, ValueError),
                     (True, TypeError)):
        with pytest.raises(exc, match="rtol must be None or a real number"):
            sl.leverage_scores(np.eye(3), rtol=bad)


def test_operators_compare_equal_across_processes_and_stay_read_only():
    code = """
        import pickle, sys, numpy as np, sketchlab as sl
        S = sl.LeverageScoreSampler(4, scores=np.arange(1.0, 9.0), rng=3)
        sys.stdout.write(pickle.dumps(S).hex())
    """
    _, out, err = run_isolated(code)
    other = pickle.loads(bytes.fromhex(out))
    here = sl.LeverageScoreSampler(4, scores=np.arange(1.0, 9.0), rng=3)
    assert other == here and hash(other) == hash(here)
    for obj in (other, pickle.loads(pickle.dumps(sl.UniformSampler(3, 9, rng=0))),
                pickle.loads(pickle.dumps(sl.SRHT(4, 9, rng=0)))):
        arrays = [getattr(obj, name) for name in ("indices", "weights", "probabilities",
                                                  "sampled_rows") if hasattr(obj, name)]
        assert arrays and not any(a.flags.writeable for a in arrays)


@pytest.mark.parametrize("kind", ["countsketch", "osnap", "uniform", "gaussian", "srht"])
def test_transpose_products_keep_float32(kind):
    S = sl.make_sketch(kind, 4, 16, rng=0)
    y = np.ones(4, dtype=np.float32)
    assert (S.T @ y).dtype == np.float32
    assert (S.T @ np.ones((4, 2), dtype=np.float32)).dtype == np.float32


# ---- unhelpful or slow failures -------------------------------------------------------


def test_clear_errors_fast():
    X = sp.random(20, 10, density=0.3, format="csr", random_state=0)
    bad = X.copy()
    bad.indices = bad.indices.astype(np.float64)
    with pytest.raises(TypeError, match="A.indices must be a 1-D integer array"):
        sl.CountSketch(4, 20, rng=0) @ bad
    A, C, R = np.ones((30, 20)), np.ones((30, 2)), np.ones((2, 20))
    X1 = sl.fast_gmr(A, C, R, sketch_size=np.array(20), rng=0).X
    assert X1.shape == (2, 2)
    S = sl.CountSketch(4, 20, rng=0)
    with pytest.raises(TypeError, match="S.T @ T of two operators is not supported"):
        S.T @ S
    start = time.perf_counter()
    with pytest.raises(ValueError, match="toarray"):
        sl.CountSketch(8, 2**31 - 1, rng=0).toarray()
    assert time.perf_counter() - start < 1.0  # before any hashing
    with pytest.raises(ValueError, match=r"c must be an int in \[1, 40\]"):
        sl.practical_sp_svd(np.ones((50, 40)), 2, c=10**7, r=10**7)
    with pytest.raises(ValueError, match=r"sketch_size\[0\] \(s_c\) must be an int in \[1, 30\]"):
        sl.fast_gmr(A, C, R, sketch_size=10**9)
