"""``python -m experiments krr``: verdicts, figure, missing data, and the
quick run on Fashion-MNIST where it is installed, and CG's iteration bound there."""

import math
import warnings

import numpy as np
import pytest

from experiments import datasets as ds
from experiments import krr
from experiments.__main__ import main
from experiments.runs import read_csv


def row(method, solver, landmarks, n, c, accuracy, seconds, peak, n_iter=math.nan,
        residual=math.nan):
    """A row as the CSV reads back (runs.read_csv: numbers parsed, blanks as NaN)."""
    return dict(method=method, solver=solver, landmarks=landmarks or math.nan, n=n, c=c,
                accuracy=accuracy, fit_seconds=seconds, peak_mb=peak, n_iter=n_iter,
                residual=residual, load=0.5)


def claim_lines(rows):
    return [line for line, _ in krr.claims(rows)]


ROWS = [
    row("KernelRidge (1 BLAS thread)", "cholesky", "", 20000, 20000, 0.880, 300.0, 9000.0),
    row("Nystroem + RidgeClassifier", "", "uniform", 60000, 1000, 0.850, 20.0, 1500.0),
    row("Nystroem + RidgeClassifier", "", "uniform", 60000, 3000, 0.860, 90.0, 4000.0),
    row("SketchedKernelRidgeClassifier", "pcg", "rpcholesky", 20000, 1000, 0.879, 60.0, 3600.0,
        40, 9e-7),
    row("SketchedKernelRidgeClassifier", "restricted", "rpcholesky", 60000, 2000, 0.872, 80.0,
        2000.0, 30, 8e-7),
]


def test_verdicts_decide_the_targets():
    lines = claim_lines(ROWS)
    assert any("n=20000" in v and "meets the target" in v and "5.0x faster" in v for v in lines)
    # rank 1000 (20 s): none of ours is that fast; rank 3000 (90 s): our slowest fit,
    # c = 2000 in 80 s, 87.2% against 86.0%
    assert any("rank 1000" in v and "none of ours is that fast" in v for v in lines)
    assert any("rank 3000" in v and "+1.20 points" in v and "less time" in v for v in lines)
    assert any("gains +1.20 points" in v and "meets the target" in v for v in lines)
    assert any("at most 40 iterations" in v and "reached" in v and "meets" in v for v in lines)
    slow = [dict(r) for r in ROWS]
    slow[3]["fit_seconds"] = 200.0  # 1.5x: misses the 3x target
    assert any("misses the target" in v for v in claim_lines(slow))
    slow[4]["residual"] = 2e-6
    assert any("did NOT reach" in v and "misses" in v for v in claim_lines(slow))
    slow[4]["residual"], slow[4]["n_iter"] = 9e-7, 101
    assert any("at most 101 iterations" in v and "misses" in v for v in claim_lines(slow))


def test_equal_fit_time_interpolates_along_our_curve():
    # Nystroem rank 1000 takes 20 s: ours at 20 s lies between c = 1000 (15 s,
    # 85.5%) and c = 2000 (80 s, 87.2%): 85.5 + (5 / 65) 1.7 = 85.63%, +0.63
    # points over 85.0% (the largest c no slower, c = 1000: +0.50)
    rows = ROWS + [row("SketchedKernelRidgeClassifier", "restricted", "rpcholesky", 60000,
                       1000, 0.855, 15.0, 900.0, 20, 9e-7)]
    lines = claim_lines(rows)
    assert any("rank 1000" in v and "between c=1000 (15.0 s) and c=2000 (80.0 s)" in v
               and "+0.63 points" in v and "c=1000: +0.50 points" in v for v in lines)
    assert any("gains +0.63, +1.20 points" in v and "misses the target" in v for v in lines)
    # over 4 GB of peak memory misses the target whatever the accuracy
    big = [dict(r) for r in ROWS]
    big[4]["peak_mb"] = 3900.0
    assert any("gains +1.20" in v and "misses the target" in v for v in claim_lines(big))


def test_figure_and_report_are_written(tmp_path):
    (fig,) = krr.plot(ROWS, tmp_path / "figures")
    assert fig == tmp_path / "figures" / "krr.png" and fig.stat().st_size > 1000
    verdicts = []
    text = "\n".join(krr.section(tmp_path, ROWS, verdicts, {}))
    assert "gamma = 0.0075188" in text and "alpha = 0.1" in text
    assert text.count("\n| SketchedKernelRidgeClassifier") == 2
    assert "| KernelRidge (1 BLAS thread) | cholesky |  | 20000 |" in text  # blanks stay blank
    judged = {v.ok for v in verdicts}
    assert judged == {True, None}  # every target met on ROWS; the comparisons inform


def test_missing_data_is_reported(monkeypatch, tmp_path):
    monkeypatch.setattr(ds, "SYSTEM_FASHION_DIR", tmp_path)
    monkeypatch.setattr(ds, "find_file", lambda name: None)
    with pytest.raises(ds.NoDataError, match="dataset-fashion-mnist"):
        krr.load_fashion()


@pytest.mark.slow
def test_quick_run_on_fashion_mnist(tmp_path):
    try:
        krr.load_fashion()
    except ds.NoDataError as exc:
        pytest.skip(str(exc))
    assert main(["krr", "--quick", "--out", str(tmp_path), "--no-progress"]) == 0
    rows = read_csv(tmp_path / "krr" / "krr.csv")
    assert len(rows) == 10
    acc = {(r["method"], r["solver"], krr._cell(r["landmarks"]), r["n"], r["c"]): r["accuracy"]
           for r in rows}
    exact = acc[("KernelRidge (1 BLAS thread)", "cholesky", "", 3000, 3000)]
    for lm in ("uniform", "rpcholesky"):  # pcg solves KernelRidge's problem
        assert abs(acc[("SketchedKernelRidgeClassifier", "pcg", lm, 3000, 200)] - exact) <= 2e-3
    assert all(r["residual"] <= 1e-6 for r in rows if krr._given(r["residual"]))
    assert all(krr._given(r["load"]) for r in rows)
    assert np.all([0.7 < a < 0.95 for a in acc.values()])


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["pcg", "restricted"])
def test_cg_reaches_1e6_within_100_iterations_at_the_chosen_alpha(solver):
    # issue 31: conjugate gradients reach a relative residual of 1e-6 in at
    # most 100 iterations in both solvers at the experiment's gamma and alpha
    # (5,000 training images, 500 RPCholesky landmarks, one target per class);
    # max_iter = 100 and the ConvergenceWarning as an error make it fail otherwise
    from sklearn.exceptions import ConvergenceWarning

    from sketchlab import SketchedKernelRidgeClassifier

    try:
        Xtr, ytr, _, _ = krr.load_fashion()
    except ds.NoDataError as exc:
        pytest.skip(str(exc))
    idx = np.random.default_rng(0).permutation(len(Xtr))[:5000]
    model = SketchedKernelRidgeClassifier(alpha=krr.ALPHA, gamma=krr.GAMMA, n_components=500,
                                          solver=solver, tol=1e-6, max_iter=krr.CG_MAX_ITER,
                                          random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model.fit(Xtr[idx], ytr[idx])
    assert model.residual_history_.shape == (model.n_iter_ + 1, 10)
    assert model.n_iter_ <= krr.CG_MAX_ITER
    assert model.residual_history_[-1].max() <= 1e-6 < model.residual_history_[0].max()
