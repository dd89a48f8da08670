"""Traces, diagonals and effective dimensions from products (sketchlab._trace)
against dense references: exact on the cases where the methods are exact,
the XTrace paper's six spectra, the error estimates' coverage, d_eff of RBF
kernels against eigh, bad input, scale, dtype and thread counts."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import aslinearoperator

import sketchlab
from sketchlab import ConvergenceWarning, effective_dimension, estimate_diagonal, estimate_trace
from sketchlab._linear_map import as_linear_map
from sketchlab._trace import DIAGONAL_METHODS, TRACE_METHODS, factor_effective_dimension

from ._support import run_isolated


def _with_spectrum(values, seed):
    """``Q diag(values) Q^T`` for a random orthogonal Q (the paper's
    ``rand_with_evals``)."""
    n = len(values)
    Q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((n, n)))
    A = (Q * np.asarray(values, dtype=np.float64)) @ Q.T
    return (A + A.T) / 2


def spectra(n):
    """The six test spectra of Epperly, Tropp and Webber (tests/basic_tests.m)."""
    top = math.ceil(n / 20)
    return {"flat": np.linspace(1, 3, n), "poly": np.arange(1, n + 1) ** -2.0,
            "slowexp": 0.9 ** np.arange(n), "fastexp": 0.7 ** np.arange(n),
            "smallstep": np.r_[np.ones(top), np.full(n - top, 1e-3)],
            "bigstep": np.r_[np.ones(top), np.full(n - top, 1e-8)]}


def _low_rank(n, rank, seed, psd=True):
    gen = np.random.default_rng(seed)
    U = gen.standard_normal((n, rank))
    return U @ U.T if psd else U @ gen.standard_normal((rank, n))


def _trials(A, method, matvecs, seeds):
    """(relative errors, covered) over seeds."""
    exact = np.trace(A)
    errs, covered = [], []
    for seed in seeds:
        res = estimate_trace(A, method=method, matvecs=matvecs, rng=seed)
        err = abs(float(res.trace) - exact)
        errs.append(err / abs(exact))
        covered.append(err <= res.error_estimate)
    return np.array(errs), np.array(covered)


# ---- exactness ----------------------------------------------------------------------


@pytest.mark.parametrize("method", TRACE_METHODS)
def test_a_budget_of_n_products_gives_the_exact_trace(method):
    A = np.random.default_rng(0).standard_normal((40, 40))
    A = A @ A.T if method == "xnystrace" else A
    res = estimate_trace(A, method=method, matvecs=40, rng=0)
    assert res.matvecs == 40 and res.error_estimate == 0.0 and res.method == method
    assert float(res.trace) == pytest.approx(np.trace(A), rel=1e-12)
    trace, = res  # unpacks as the estimate
    assert trace == res.trace


@pytest.mark.parametrize("method", ["xtrace", "xnystrace", "hutch++"])
def test_exact_on_a_matrix_of_rank_below_the_sketch(method):
    # xtrace: any square A of rank < m - 1; xnystrace: PSD of rank < m;
    # hutch++: rank < matvecs / 3
    psd = method != "xtrace"
    A = _low_rank(200, 8, 1, psd=psd)
    res = estimate_trace(A, method=method, matvecs=40, rng=2)
    assert float(res.trace) == pytest.approx(np.trace(A), rel=1e-9)
    assert res.error_estimate <= 1e-8 * abs(np.trace(A))
    assert res.matvecs <= 40


def test_xdiag_is_exact_on_a_matrix_of_rank_below_the_sketch():
    A = _low_rank(150, 6, 3, psd=False)
    res = estimate_diagonal(A, matvecs=30, rng=0)
    np.testing.assert_allclose(res.diagonal, np.diag(A), rtol=0, atol=1e-9 * np.abs(A).max())
    assert res.matvecs <= 30 and res.error_estimate <= 1e-8 * np.linalg.norm(np.diag(A))


def test_a_zero_matrix_has_trace_and_diagonal_zero():
    Z = np.zeros((30, 30))
    for method in TRACE_METHODS:
        res = estimate_trace(Z, method=method, matvecs=10, rng=0)
        assert res.trace == 0.0 and res.error_estimate == 0.0
    res = estimate_diagonal(Z, matvecs=10, rng=0)
    assert np.all(res.diagonal == 0) and res.error_estimate == 0.0


# ---- the six spectra (reduced: n = 500, the claims' shape) ---------------------------


@pytest.fixture(scope="module")
def six():
    return {name: _with_spectrum(values, i) for i, (name, values) in
            enumerate(spectra(500).items())}


def test_xnystrace_is_more_accurate_than_hutchpp_on_decaying_spectra(six):
    # the paper's claim at equal budgets (the products each needs for 1e-2 at
    # n = 1,000, 200 trials, are the slow tests')
    for name in ("poly", "slowexp", "smallstep", "bigstep"):
        ours, _ = _trials(six[name], "xnystrace", 60, range(12))
        peer, _ = _trials(six[name], "hutch++", 60, range(12))
        assert ours.mean() <= 0.5 * peer.mean(), name


def test_on_a_flat_spectrum_xnystrace_is_about_hutchpp(six):
    # deflation gains nothing there: XNysTrace with 40 products at least as
    # accurate as Hutch++ with 48 (the claim: at most 1.2x the products)
    ours, _ = _trials(six["flat"], "xnystrace", 40, range(40))
    peer, _ = _trials(six["flat"], "hutch++", 48, range(40))
    assert ours.mean() <= peer.mean()


@pytest.mark.parametrize("method", TRACE_METHODS)
def test_the_error_estimate_covers_the_error_in_most_trials(six, method):
    # a 90% estimate (calibrated on the 200-trial sweep): at least 24 of 30
    # here on every spectrum (P < 1e-2 each for a true coverage of 90%)
    for name, A in six.items():
        _, covered = _trials(A, method, 60, range(30))
        assert covered.sum() >= 24, (name, covered.sum())


def test_the_error_estimate_is_not_vacuous(six):
    # the estimate shrinks with the error: within 30x of it on average
    for name in ("flat", "poly", "smallstep"):
        A = six[name]
        ratios = []
        for seed in range(10):
            res = estimate_trace(A, matvecs=80, rng=seed)
            ratios.append(res.error_estimate / max(abs(float(res.trace) - np.trace(A)), 1e-300))
        assert np.median(ratios) < 30, name


def test_xdiag_beats_hutchinson_on_a_decaying_spectrum_and_its_estimate_covers(six):
    A = six["poly"]
    d = np.diag(A)
    errs = {}
    for method in DIAGONAL_METHODS:
        res = estimate_diagonal(A, method=method, matvecs=100, rng=0)
        errs[method] = np.linalg.norm(res.diagonal - d)
        assert errs[method] <= res.error_estimate
        assert res.entry_errors.shape == d.shape
    assert errs["xdiag"] < 0.1 * errs["hutchinson"]


# ---- the tolerance -------------------------------------------------------------------


def test_tol_grows_the_sample_until_the_estimate_meets_it(six):
    A = six["poly"]
    res = estimate_trace(A, tol=1e-3, rng=0)
    assert res.converged and res.error_estimate <= 1e-3 * abs(res.trace)
    assert abs(float(res.trace) - np.trace(A)) <= 1e-3 * np.trace(A)
    assert res.matvecs < 500
    # a tighter tolerance takes more products, reusing the earlier ones
    tighter = estimate_trace(A, tol=1e-5, rng=0)
    assert tighter.matvecs > res.matvecs


def test_tol_with_a_cap_warns_when_the_budget_runs_out(six):
    with pytest.warns(ConvergenceWarning, match="budget of 40"):
        res = estimate_trace(six["flat"], tol=1e-6, matvecs=40, rng=0)
    assert not res.converged and res.matvecs <= 40


def test_tol_computes_the_exact_trace_when_the_rounds_would_reach_n():
    A = np.random.default_rng(0).standard_normal((60, 60))  # trace ~ 0: no relative tol
    res = estimate_trace(A, tol=1e-8, rng=0)
    assert res.error_estimate == 0.0 and float(res.trace) == pytest.approx(np.trace(A))
    res = estimate_diagonal(A, tol=1e-8, rng=0)
    np.testing.assert_allclose(res.diagonal, np.diag(A), rtol=1e-12)


def test_defaults_give_an_answer_within_one_percent(six):
    for name in ("poly", "slowexp"):
        res = estimate_trace(six[name], rng=1)
        assert abs(float(res.trace) / np.trace(six[name]) - 1) <= 1e-2
        assert res.converged


# ---- input forms, dtype, scale, reproducibility --------------------------------------


def _forms(A):
    return {"dense": A, "fortran": np.asfortranarray(A), "csr": sp.csr_matrix(A),
            "csc": sp.csc_matrix(A), "operator": aslinearoperator(A),
            "map": as_linear_map(A)}


@pytest.mark.parametrize("method", TRACE_METHODS)
def test_every_input_form_gives_the_same_estimate(method):
    A = _with_spectrum(0.8 ** np.arange(80), 5)
    A[np.abs(A) < 1e-3] = 0.0  # some sparsity
    want = estimate_trace(A, method=method, matvecs=24, rng=7)
    for name, form in _forms(A).items():
        got = estimate_trace(form, method=method, matvecs=24, rng=7)
        assert float(got.trace) == pytest.approx(float(want.trace), rel=1e-10), name
        assert got.matvecs == want.matvecs
    got = estimate_diagonal(sp.csr_matrix(A), matvecs=24, rng=7)
    np.testing.assert_allclose(got.diagonal, estimate_diagonal(A, matvecs=24, rng=7).diagonal,
                               rtol=1e-9, atol=1e-12)


def test_a_kernel_oracle_and_its_matrix_agree():
    X = np.random.default_rng(0).standard_normal((300, 3))
    K = sketchlab.RBFKernel(X, gamma=0.3)
    D = K.toarray()
    for method in ("xtrace", "xnystrace"):
        a = estimate_trace(K, method=method, matvecs=40, rng=1)
        b = estimate_trace(D, method=method, matvecs=40, rng=1)
        assert float(a.trace) == pytest.approx(float(b.trace), rel=1e-9)
        assert float(a.trace) == pytest.approx(300.0, rel=1e-2)


def test_products_are_counted_on_the_map():
    A = _with_spectrum(np.linspace(1, 2, 100), 0)
    op = as_linear_map(A)
    res = estimate_trace(op, method="xtrace", matvecs=30, rng=0)
    assert op.matvecs == res.matvecs == 30
    res = estimate_diagonal(op, matvecs=20, rng=0)  # continues the count
    assert op.matvecs == 30 + res.matvecs and res.matvecs == 20


def test_float32_stays_float32():
    A = _with_spectrum(0.9 ** np.arange(120), 1).astype(np.float32)
    A64 = A.astype(np.float64)
    for method in TRACE_METHODS:
        res = estimate_trace(A, method=method, matvecs=60, rng=0)
        assert isinstance(res.trace, np.float32)
        want = estimate_trace(A64, method=method, matvecs=60, rng=0)  # the same test vectors
        assert isinstance(want.trace, np.float64)
        assert float(res.trace) == pytest.approx(float(want.trace), rel=1e-5)
    d = estimate_diagonal(A, matvecs=60, rng=0)
    assert d.diagonal.dtype == np.float32
    np.testing.assert_allclose(d.diagonal, estimate_diagonal(A64, matvecs=60, rng=0).diagonal,
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("scale", [2.0 ** -900, 1e-300, 1e300, 2.0 ** 900])
@pytest.mark.parametrize("method", TRACE_METHODS)
def test_the_same_answer_at_any_scale(method, scale):
    A = _with_spectrum(0.8 ** np.arange(60), 2)
    base = estimate_trace(A, method=method, matvecs=20, rng=3)
    res = estimate_trace(A * scale, method=method, matvecs=20, rng=3)
    assert float(res.trace) == pytest.approx(scale * float(base.trace), rel=1e-12)
    assert res.error_estimate == pytest.approx(scale * base.error_estimate, rel=1e-6)
    tol = estimate_trace(A * scale, method=method, tol=1e-3, rng=3)
    assert tol.matvecs == estimate_trace(A, method=method, tol=1e-3, rng=3).matvecs


def test_the_same_rng_gives_the_same_estimate():
    A = _with_spectrum(0.9 ** np.arange(90), 3)
    for method in TRACE_METHODS:
        a = estimate_trace(A, method=method, matvecs=30, rng=11)
        b = estimate_trace(A, method=method, matvecs=30, rng=np.random.default_rng(11))
        assert a == b and a.error_estimate == b.error_estimate


def test_the_same_estimates_for_any_thread_count():
    code = """
        import numpy as np, scipy.sparse as sp, sketchlab
        gen = np.random.default_rng(0)
        A = sp.random(3000, 3000, density=0.002, random_state=1, format="csr")
        A = (A + A.T + 10 * sp.eye(3000)).tocsr()
        K = sketchlab.RBFKernel(gen.standard_normal((2500, 4)), gamma=0.5)
        out = [sketchlab.estimate_trace(A, matvecs=60, rng=0).trace,
               sketchlab.estimate_trace(K, method="xnystrace", matvecs=60, rng=0).trace,
               sketchlab.estimate_diagonal(A, matvecs=40, rng=0).diagonal.sum(),
               sketchlab.effective_dimension(K, 0.1, rng=0).effective_dimension]
        print([float(v).hex() for v in out])
    """
    outs = []
    for threads in ("1", "2"):
        code_, out, err = run_isolated(code, env={"NUMBA_NUM_THREADS": threads,
                                                  "OMP_NUM_THREADS": threads})
        assert code_ == 0, err[-2000:]
        outs.append(out)
    assert outs[0] == outs[1]


# ---- bad input -----------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(method="xdiag"), ValueError, "method must be one of"),
    (dict(matvecs=0), ValueError, "matvecs must be an int in"),
    (dict(matvecs=2.5), TypeError, "matvecs must be an int"),
    (dict(matvecs=True), TypeError, "matvecs must be an int"),
    (dict(method="xtrace", matvecs=3), ValueError, "matvecs must be an int >= 4"),
    (dict(tol=0.0), ValueError, "tol must be None or a number in"),
    (dict(tol=float("nan")), ValueError, "tol must be None or a number in"),
    (dict(test_vectors="sobol"), ValueError, "test_vectors must be one of"),
    (dict(method="hutchinson", test_vectors="improved"), ValueError, "improved"),
    (dict(rng="seed"), TypeError, "rng must be"),
])
def test_bad_parameters_are_refused_by_name(kwargs, error, match):
    with pytest.raises(error, match=match):
        estimate_trace(np.eye(10), **kwargs)


def test_bad_matrices_are_refused():
    with pytest.raises(ValueError, match="A must be square"):
        estimate_trace(np.ones((5, 4)))
    with pytest.raises(ValueError, match="A must be square"):
        estimate_diagonal(np.ones((5, 4)))
    bad = np.eye(5)
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or Inf|finite"):
        estimate_trace(bad, matvecs=4)
    with pytest.raises(ValueError, match="positive semidefinite"):
        estimate_trace(-np.eye(6), method="xnystrace", matvecs=4)
    with pytest.raises(ValueError, match="not finite"):
        estimate_trace(aslinearoperator(bad), matvecs=4)
    with pytest.raises(ValueError, match="method must be one of"):
        estimate_diagonal(np.eye(4), method="xtrace")
    with pytest.raises(ValueError, match="test_vectors must be one of"):
        estimate_diagonal(np.eye(4), test_vectors="improved")


def test_an_indefinite_matrix_is_refused_by_xnystrace():
    A = _with_spectrum(np.r_[np.ones(20), -np.ones(20)], 0) + 0.0 * np.eye(40)
    np.fill_diagonal(A, np.abs(np.diag(A)))  # a positive diagonal does not make it PSD
    with pytest.raises(ValueError, match="positive semidefinite"):
        estimate_trace(A, method="xnystrace", matvecs=30, rng=0)


# ---- the effective dimension ---------------------------------------------------------


def _deff(lam, alpha):
    return float(np.sum(lam / (lam + alpha)))


def _alpha_for(lam, target):
    lo, hi = 1e-12, 1e12
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if _deff(lam, mid) > target else (lo, mid)
    return mid


@pytest.fixture(scope="module")
def rbf():
    gen = np.random.default_rng(0)
    X = gen.standard_normal((1500, 6)) * np.linspace(1.0, 0.3, 6)
    K = sketchlab.RBFKernel(X, gamma=0.4)
    return K, np.clip(np.linalg.eigvalsh(K.toarray()), 0, None)


@pytest.mark.parametrize("target", [30, 120, 400])
def test_effective_dimension_within_ten_percent_with_four_deff_products(rbf, target):
    K, lam = rbf
    alpha = _alpha_for(lam, target)
    exact = _deff(lam, alpha)
    res = effective_dimension(K, alpha, rng=0)
    assert abs(res.effective_dimension - exact) <= 0.1 * exact
    assert res.matvecs <= 4 * exact
    assert res.bounds[0] <= exact <= res.bounds[1]
    assert abs(res.effective_dimension - exact) <= 2 * res.error_estimate + 0.01 * exact
    value, = res
    assert value == res.effective_dimension and res.converged


def test_effective_dimension_of_a_gram_matrix():
    gen = np.random.default_rng(1)
    A = (gen.standard_normal((400, 120)) * 0.9 ** np.arange(120)) @ \
        np.linalg.qr(gen.standard_normal((120, 120)))[0]
    lam = np.linalg.eigvalsh(A.T @ A)
    res = effective_dimension(sp.csr_matrix(A), 0.05, gram=True, rng=0)
    assert res.effective_dimension == pytest.approx(_deff(lam, 0.05), rel=0.05)
    assert res.matvecs % 2 == 0  # A and A^T per vector
    dense = effective_dimension(A.T @ A, 0.05, rng=0)
    assert dense.effective_dimension == pytest.approx(_deff(lam, 0.05), rel=0.05)


def test_effective_dimension_is_exact_for_a_low_rank_kernel():
    A = _low_rank(300, 10, 2)
    lam = np.linalg.eigvalsh(A)
    res = effective_dimension(A, 1.0, rng=0)
    assert res.effective_dimension == pytest.approx(_deff(lam.clip(0), 1.0), rel=1e-8)
    assert res.error_estimate == 0.0 and res.rank == 10


def test_effective_dimension_with_a_cap_warns(rbf):
    K, lam = rbf
    with pytest.warns(ConvergenceWarning, match="budget of 20"):
        res = effective_dimension(K, _alpha_for(lam, 200), matvecs=20, rng=0)
    assert not res.converged and res.matvecs <= 20
    assert res.bounds[0] <= _deff(lam, _alpha_for(lam, 200)) <= res.bounds[1]


def test_effective_dimension_is_scale_invariant():
    A = _with_spectrum(0.95 ** np.arange(200), 4)
    base = effective_dimension(A, 0.01, rng=0)
    for scale in (2.0 ** -1000, 2.0 ** 1000):
        res = effective_dimension(A * scale, 0.01 * scale, rng=0)
        assert res.effective_dimension == pytest.approx(base.effective_dimension, rel=1e-10)
        assert res.matvecs == base.matvecs


def test_effective_dimension_bad_input():
    with pytest.raises(ValueError, match="alpha must be a finite number > 0"):
        effective_dimension(np.eye(5), 0.0)
    with pytest.raises(ValueError, match="K must be square"):
        effective_dimension(np.ones((4, 5)), 1.0)
    with pytest.raises(ValueError, match="positive semidefinite"):
        effective_dimension(-np.eye(5), 1.0)
    with pytest.raises(ValueError, match="tol must be None or a number in"):
        effective_dimension(np.eye(5), 1.0, tol=2.0)


def test_factor_effective_dimension_brackets_the_exact_value(rbf):
    from sketchlab._rpcholesky import block_rpcholesky

    K, lam = rbf
    _, _, F = block_rpcholesky(K, 200, np.random.default_rng(0), columns=False)
    for target in (20, 100, 300):
        alpha = _alpha_for(lam, target)
        est = factor_effective_dimension(F.T @ F, 1500.0, alpha)
        assert est.lower <= _deff(lam, alpha) <= est.upper
        assert est.lower <= est.estimate <= est.upper


# ---- the long profiles ----------------------------------------------------------------


@pytest.fixture(scope="module")
def paper():
    """The paper's six matrices at n = 1,000."""
    return {name: _with_spectrum(values, i) for i, (name, values) in
            enumerate(spectra(1000).items())}


_MEANS: dict = {}


def _mean_error(paper, name, method, budget, trials=100):
    """The mean relative error over ``trials`` seeds, computed once per
    session (the tests below share their sweeps)."""
    key = (name, method, budget, trials)
    if key not in _MEANS:
        _MEANS[key] = _trials(paper[name], method, budget, range(trials))[0].mean()
    return _MEANS[key]


def _products_for(paper, name, method, target, budgets):
    """The smallest budget of the sweep whose mean error is <= target (inf if
    none), found by bisection: the mean error falls as the budget grows."""
    if _mean_error(paper, name, method, budgets[-1]) > target:
        return math.inf
    lo, hi = -1, len(budgets) - 1  # budgets[hi] meets the target, budgets[lo] does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _mean_error(paper, name, method, budgets[mid]) <= target:
            hi = mid
        else:
            lo = mid
    return budgets[hi]


def _products_to_1e_2(paper, name, method):
    # 100 trials a budget, budgets 2 products apart up to 160
    return _products_for(paper, name, method, 1e-2, list(range(4, 161, 2)))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["poly", "slowexp", "smallstep", "bigstep"])
def test_paper_xnystrace_needs_fewer_products_than_hutchpp_for_1e_2(paper, name):
    # measured (100 trials): poly 16 against 24, slowexp 36 / 68, smallstep
    # 53 / 125, bigstep 51 / 128 (ratios 0.67, 0.53, 0.42, 0.40)
    ours = _products_to_1e_2(paper, name, "xnystrace")
    peer = _products_to_1e_2(paper, name, "hutch++")
    assert ours <= 0.75 * peer, (name, ours, peer)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="issue 38's target (at most a third of Hutch++'s "
                   "products for 1e-2) is missed: the measured ratios are 0.67 (poly), 0.53 "
                   "(slowexp), 0.42 (smallstep), 0.40 (bigstep); XNysTrace needs about the "
                   "step's rank + 1 test vectors, Hutch++'s Hutchinson part reaches 1e-2 "
                   "before its basis holds the step (at 3 x rank)")
def test_paper_xnystrace_needs_a_third_of_hutchpp_products_for_1e_2(paper):
    for name in ("poly", "slowexp", "smallstep", "bigstep"):
        ours = _products_to_1e_2(paper, name, "xnystrace")
        peer = _products_to_1e_2(paper, name, "hutch++")
        assert 3 * ours <= peer, (name, ours, peer)


@pytest.mark.slow
def test_paper_flat_spectrum_xnystrace_within_1_2x_of_hutchpp(paper):
    # the flat spectrum reaches 1e-2 at once: compare at the error of the
    # smallest budgets, 4e-3 to 1e-3
    budgets = list(range(4, 301, 4))
    for target in (4e-3, 2e-3, 1e-3):
        ours = _products_for(paper, "flat", "xnystrace", target, budgets)
        peer = _products_for(paper, "flat", "hutch++", target, budgets)
        assert ours <= 1.2 * peer, (target, ours, peer)


@pytest.mark.slow
@pytest.mark.parametrize("method", TRACE_METHODS)
def test_paper_error_estimate_covers_ninety_percent(paper, method):
    # a small and a large budget, 100 trials each (the experiment sweeps them all:
    # python -m experiments trace)
    for name, A in paper.items():
        for budget in (20, 120):
            _, covered = _trials(A, method, budget, range(100))
            assert covered.mean() >= 0.9, (name, budget, covered.mean())


@pytest.mark.slow
def test_fashion_mnist_effective_dimension():
    from ._data import find_file

    path = next((p for p in (find_file("train-images-idx3-ubyte.gz"),
                             "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")
                 if p is not None and __import__("os").path.exists(p)), None)
    if path is None:
        pytest.skip("Fashion-MNIST not found")
    import gzip

    with gzip.open(path, "rb") as fh:
        data = fh.read()
    X = np.frombuffer(data, dtype=np.uint8, offset=16).reshape(-1, 784)[:5000] / 255.0
    K = sketchlab.RBFKernel(X, gamma=1 / 133)
    lam = np.clip(np.linalg.eigvalsh(K.toarray()), 0, None)
    for target in (50, 300, 1500):
        alpha = _alpha_for(lam, target)
        exact = _deff(lam, alpha)
        res = effective_dimension(K, alpha, rng=0)
        assert abs(res.effective_dimension - exact) <= 0.1 * exact, (target, res)
        assert res.matvecs <= 4 * exact, (target, res.matvecs)
