"""``python -m experiments krr``: verdicts, figure, missing data, and the
quick run on Fashion-MNIST where it is installed."""

import numpy as np
import pytest

from experiments import datasets as ds
from experiments import krr


def row(method, solver, landmarks, n, c, accuracy, seconds, peak, n_iter="", residual=""):
    return {k: str(v) for k, v in dict(
        method=method, solver=solver, landmarks=landmarks, n=n, c=c, accuracy=accuracy,
        fit_seconds=seconds, peak_mb=peak, n_iter=n_iter, residual=residual).items()}


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
    lines = krr.verdicts(ROWS)
    assert any("n=20000" in v and "meets the target" in v and "5.0x faster" in v for v in lines)
    # the best Nystroem fit no slower than the restricted one: rank 1000 (20 s < 80 s),
    # not rank 3000 (90 s)
    assert any("rank 1000" in v and "+2.20 points" in v for v in lines)
    assert any("at most 40 iterations" in v and "reached" in v for v in lines)
    slow = [dict(r) for r in ROWS]
    slow[3]["fit_seconds"] = "200.0"  # 1.5x: misses the 3x target
    assert any("misses the target" in v for v in krr.verdicts(slow))
    slow[4]["residual"] = "2e-6"
    assert any("did NOT reach" in v for v in krr.verdicts(slow))


def test_figure_and_report_are_written(tmp_path):
    fig = krr.plot(ROWS, tmp_path / "figures" / "krr.png")
    assert fig.stat().st_size > 1000
    text = krr.write_report(ROWS, tmp_path / "REPORT.md", quick=False).read_text()
    assert "gamma = 0.0075188" in text and "alpha = 0.1" in text
    assert text.count("\n| SketchedKernelRidgeClassifier") == 2


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
    assert krr.main(tmp_path, quick=True) == 0
    rows = krr.read_csv(tmp_path / "krr" / "krr.csv")
    assert len(rows) == 10
    acc = {(r["method"], r["solver"], r["landmarks"], r["n"], r["c"]): float(r["accuracy"])
           for r in rows}
    exact = acc[("KernelRidge (1 BLAS thread)", "cholesky", "", "3000", "3000")]
    for lm in ("uniform", "rpcholesky"):  # pcg solves KernelRidge's problem
        assert abs(acc[("SketchedKernelRidgeClassifier", "pcg", lm, "3000", "200")] - exact) <= 2e-3
    assert all(float(r["residual"]) <= 1e-6 for r in rows if r["residual"])
    assert np.all([0.7 < a < 0.95 for a in acc.values()])
