"""``python -m experiments spectrum``: the verdicts on issue 37's targets,
the figure and the report section from rows alone, the config, and the graph
builder."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from experiments import spectrum
from experiments.runs import ConfigError


def row(task, method, n, k, seconds, peak=None, residual=None, accuracy=None, probe=None,
        data_mb=None, passes=None):
    return dict(task=task, method=method, n=n, k=k, seconds=seconds, peak_mb=peak,
                residual=residual, accuracy=accuracy, probe=probe, data_mb=data_mb,
                passes=passes, load=1.0)


ROWS = [
    row("graph", "sketchlab.eigsh", 20000, 10, 0.5, 2, 5e-9, passes=160),
    row("graph", "scipy eigsh", 20000, 10, 1.0, 1, 4e-9, 1e-15),
    row("graph", "scipy lobpcg", 20000, 10, 10.0, 3, 9e-9, 1e-15),
    row("pca-sparse", "PCA(arpack)", 52396, 10, 2.0, 20, data_mb=32.0),
    row("pca-sparse", "RandomizedPCA(krylov)", 52396, 10, 0.9, 50, accuracy=3e-8,
        data_mb=32.0, passes=18),
    row("pca-dense", "PCA(randomized)", 60000, 10, 3.0, 100, accuracy=1e-6),
    row("pca-dense", "RandomizedPCA", 60000, 10, 1.0, 100, accuracy=1e-8, passes=12),
    row("kpca", "KernelPCA(arpack)", 10000, 50, 40.0, 900, probe=0.8),
    row("kpca", "SketchedKernelPCA(exact)", 10000, 50, 15.0, 600, 1e-15, 2e-14, 0.8,
        passes=14),
    row("kpca-landmarks", "SketchedKernelPCA(rpcholesky, c=2000)", 60000, 50, 30.0, 1500,
        probe=0.798),
]


def test_claims_decide_the_targets():
    lines = dict(spectrum.claims(ROWS))
    text = "\n".join(lines)
    assert "graph k=10: eigsh 0.5 s against scipy eigsh 1 s (0.50x)" in text
    assert "eigsh against lobpcg 10 s (0.05x): meets" in text
    pca = [v for v in lines if v.startswith("pca-sparse")][0]
    assert "0.45x" in pca and "1.56x the CSR" in pca and lines[pca] is True
    dense = [v for v in lines if v.startswith("pca-dense")][0]
    assert "0.33x PCA(randomized)'s time" in dense and lines[dense] is True
    kpca = [v for v in lines if v.startswith("kpca n=")][0]
    assert "0.67x its peak memory" in kpca and lines[kpca] is False  # 600 / 900 > 1/5
    big = [v for v in lines if v.startswith("kpca on")][0]
    assert "79.80% against the exact method's 80.00%" in big and lines[big] is True
    assert spectrum.summary(ROWS) == list(lines)


def test_a_slow_or_unconverged_eigsh_misses():
    for key, value in (("seconds", 0.9), ("residual", 2e-8)):
        rows = [dict(r) for r in ROWS]
        rows[0][key] = value
        graph = [ok for line, ok in spectrum.claims(rows) if line.startswith("graph k=10: eigsh 0")]
        assert graph == [False]


def test_rows_read_back_from_csv_give_the_same_claims(tmp_path):
    from experiments.runs import read_csv, write_csv

    path = write_csv(tmp_path / "spectrum.csv", ROWS, spectrum.COLUMNS)
    back = read_csv(path)
    assert math.isnan(back[0]["accuracy"])
    assert spectrum.claims(back) == spectrum.claims(ROWS)


def test_figure_and_section_from_rows(tmp_path):
    (fig,) = spectrum.plot(ROWS, tmp_path / "figures")
    assert fig.stat().st_size > 0
    verdicts = []
    lines = spectrum.section(tmp_path, ROWS, verdicts, {})
    assert lines[0].startswith("## The spectrum of a matrix")
    assert len(verdicts) == len(spectrum.claims(ROWS))
    assert any("| task | method |" in line for line in lines)


def test_config():
    assert spectrum.make_config(task=["graph"]).tasks == ("graph",)
    assert spectrum.make_config(quick=True).plan is spectrum.QUICK
    with pytest.raises(ConfigError, match="fits each model once"):
        spectrum.make_config(reps=3)
    with pytest.raises(ConfigError, match="reads Fashion-MNIST"):
        spectrum.make_config(("mushrooms",))


def test_knn_adjacency_is_symmetric_and_normalized():
    X = np.random.default_rng(0).standard_normal((200, 5))
    A = spectrum.knn_adjacency(X, 5)
    assert sp.issparse(A) and abs(A - A.T).max() == 0
    top = np.linalg.eigvalsh(A.toarray())[-1]
    assert abs(top - 1.0) < 1e-12  # D^-1/2 W D^-1/2 of a connected graph: 1 is the largest
