"""The ``lstsq`` experiment: a tiny sweep end to end (CSV, figure, report, verdicts)."""

import math

import numpy as np

from experiments import lstsq as sweep
from experiments.__main__ import main
from experiments.runs import read_csv


def test_random_problem_has_prescribed_condition_and_residual():
    A, b, x, (s, Vt) = sweep.random_problem(300, 10, 1e6, 1e-3, seed=0)
    sv = np.linalg.svd(A, compute_uv=False)
    assert abs(sv[0] / sv[-1] / 1e6 - 1) < 1e-6
    assert abs(np.linalg.norm(b - A @ x) - 1e-3) < 1e-12
    assert abs(np.linalg.norm(A.T @ (b - A @ x))) < 1e-12
    assert np.allclose(sv, np.sort(s)[::-1], rtol=1e-8)


def test_kw_estimate_zero_for_exact_solution_and_positive_otherwise():
    A, b, x, svd = sweep.random_problem(200, 8, 10.0, 0.0, seed=1)
    assert sweep.kw_backward_error(A, b, np.linalg.lstsq(A, b)[0], svd) < 1e-14
    assert sweep.kw_backward_error(A, b, x + 1e-3, svd) > 1e-6


def test_cli_quick_run(tmp_path):
    out = tmp_path / "res"
    status = main(["lstsq", "--quick", "--m", "120", "--n", "6", "--out", str(out),
                   "--no-progress"])
    assert status == 0
    rows = read_csv(out / "lstsq" / "lstsq.csv")
    assert {r["method"] for r in rows} == set(sweep.METHODS)
    assert len(rows) == len(sweep.LstsqConfig.quick().kappas) * len(sweep.METHODS)
    assert all(math.isfinite(r["backward_error"]) for r in rows)
    assert (out / "figures" / "lstsq.png").stat().st_size > 0
    report = (out / "REPORT.md").read_text()
    assert "## Least squares from a sketch" in report and "FOSSILS" in report
    claims = sweep.claims(rows)
    assert any(c.startswith("fossils") for c, _, _ in claims)
    assert "- fossils: backward error within" in report


def test_verdicts_detect_failures():
    rows = []
    for kappa in (1.0, 1e12):
        for method, be in (("scipy", 1e-16), ("fossils", 1e-13), ("sketch-and-solve", 1e-16)):
            rows.append({"kappa": kappa, "residual": 1e-6, "rep": 0, "method": method,
                         "backward_error": be})
    found = {c.split(":")[0]: ok for c, ok, _ in sweep.claims(rows)}
    assert found == {"fossils": False, "sketch-and-solve": False}
