"""The ``trace`` experiment: a tiny sweep end to end (CSV, figure, report, verdicts)."""

import math

import numpy as np

from experiments import trace as sweep
from experiments.__main__ import main
from experiments.runs import read_csv


def test_paper_matrices_have_their_spectra():
    for name in sweep.SPECTRA:
        A, exact = sweep.paper_matrix(name, 60, seed=0)
        assert np.allclose(A, A.T)
        assert exact == math.fsum(sweep.spectrum(name, 60))
        np.testing.assert_allclose(np.sort(np.linalg.eigvalsh(A)),
                                   np.sort(sweep.spectrum(name, 60)), atol=1e-12)


def test_products_for_interpolates_and_bounds():
    errors = {20: 1e-1, 40: 1e-3}
    assert sweep.products_for(errors, 1e-2) == 30.0
    assert sweep.products_for({20: 1e-3}, 1e-2) == 20.0  # already there: a bound
    assert math.isinf(sweep.products_for({20: 1.0, 40: 0.5}, 1e-2))


def test_cli_quick_run(tmp_path):
    out = tmp_path / "res"
    status = main(["trace", "--quick", "--n", "60", "--reps", "3", "--out", str(out),
                   "--no-progress"])
    assert status == 0
    rows = read_csv(out / "trace" / "trace.csv")
    assert {r["method"] for r in rows} == set(sweep.METHODS)
    assert {r["spectrum"] for r in rows} == set(sweep.SPECTRA)
    assert len(rows) == 6 * 4 * 3 * len([b for b in sweep.TraceConfig.quick().budgets if b < 60])
    assert sweep._at_most(math.inf, 1 / 3, math.inf, 8) is None
    assert all(r["matvecs"] <= r["budget"] for r in rows)
    assert (out / "figures" / "trace.png").stat().st_size > 0
    report = (out / "REPORT.md").read_text()
    assert "## Trace estimation" in report and "XNysTrace" in report and "Coverage" in report
    assert "- flat: XTrace at least as accurate as Hutch++" in report


def test_verdicts_detect_failures():
    rows = []
    for budget, ours, peer in ((20, 1e-1, 1e-1), (40, 5e-3, 2e-2), (60, 1e-3, 5e-3)):
        for method, err in (("xnystrace", ours), ("hutch++", peer)):
            rows.append({"spectrum": "poly", "n": 100, "method": method, "budget": budget,
                         "trial": 0, "rel_error": err, "covered": method == "hutch++"})
    found = {c: ok for c, ok, _ in sweep.claims(rows)}
    # XNysTrace reaches 1e-2 at about 35 products, Hutch++ at about 50: not a third
    assert found["poly: XNysTrace reaches a mean relative error of 0.01 with at most 1/3 of "
                 "Hutch++'s products"] is False
    assert sweep._at_most(10, 1 / 3, 40, 8) is True
    assert sweep._at_most(8, 1 / 3, 12, 8) is None  # at the first budget: not judged
    assert sweep._at_most(math.inf, 1 / 3, 40, 8) is False
    assert found["poly: XNysTrace more accurate than Hutch++ at every budget >= 20"] is True
    assert found["XNysTrace: the error estimate covers the true error in >= 90% of the trials "
                 "on every spectrum"] is False
