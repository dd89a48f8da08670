"""``python -m experiments ridge``: the effective-dimension estimate, the
solvers' rows, the summary and the figure, on a small synthetic problem."""

import numpy as np
import scipy.sparse as sp

from experiments import ridge


def problem(m=2000, d=150, seed=0):
    A = sp.random(m, d, density=0.05, format="csr", random_state=seed,
                  data_rvs=np.random.default_rng(seed).standard_normal)
    return (A @ sp.diags(1.0 / np.arange(1, d + 1))).tocsr()


def test_effective_dimensions_estimate_the_trace():
    A = problem()
    w = np.linalg.eigvalsh((A.T @ A).toarray())
    alphas = np.array([1e-3, 1e-1])
    got = ridge.effective_dimensions(A, alphas, seed=0, probes=64)
    want = [np.sum(w / (w + a)) for a in alphas]
    # 64 Rademacher probes: a few percent (the estimator's standard deviation
    # is at most sqrt(2 d_eff / 64))
    np.testing.assert_allclose(got, want, rtol=0.15)


def test_every_solver_reaches_the_residual_and_rows_summarize(tmp_path):
    A = problem(seed=1)
    b = ridge.planted(A, 2)
    rows = []
    for name in ridge.SOLVERS:
        x, seconds, steps, rank, method = ridge.solve(name, A, b, 1e-2, seed=0)
        assert ridge.normal_residual(A, b, 1e-2, x) <= 5e-8, name
        if name == "sklearn sparse_cg":
            steps = ridge.sparse_cg_steps(A, b, 1e-2)
            assert steps > 0
        rows.append({"alpha": "0.01", "d_eff": "42.0", "solver": name, "seconds": str(seconds),
                     "steps": str(steps), "rank": str(rank), "method": method,
                     "residual": "1e-9"})
    lines = ridge.summary(rows)
    assert len(lines) == 1 and "d_eff    42.0" in lines[0] and "its time" in lines[0]
    (path,) = ridge.plot(rows, tmp_path)
    assert path.is_file() and path.stat().st_size > 1000
    verdicts = []
    section = ridge.section(tmp_path, rows, verdicts, {})
    assert section[0].startswith("## Ridge regression") and len(verdicts) == 1


def test_config():
    import pytest

    from experiments.runs import ConfigError

    assert ridge.make_config(quick=True).plan is ridge.QUICK
    with pytest.raises(ConfigError):
        ridge.make_config(("mushrooms",))
