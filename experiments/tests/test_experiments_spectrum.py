"""``python -m experiments spectrum``: the verdicts on issue 37's targets,
the figure and the report from rows alone, and the graph builder."""

import numpy as np
import scipy.sparse as sp

from experiments import spectrum


def row(task, method, n, k, seconds, peak="", residual="", accuracy="", passes="", note=""):
    return {key: str(value) for key, value in dict(
        task=task, method=method, n=n, k=k, seconds=seconds, peak_mb=peak, residual=residual,
        accuracy=accuracy, passes=passes, note=note).items()}


ROWS = [
    row("graph", "sketchlab.eigsh", 20000, 10, 0.5, 2, 5e-9, "", 160),
    row("graph", "scipy eigsh", 20000, 10, 1.0, 1, 4e-9, 1e-15),
    row("graph", "scipy lobpcg", 20000, 10, 10.0, 3, 9e-9, 1e-15),
    row("pca-sparse", "PCA(arpack)", 52396, 10, 2.0, 20, note="CSR 32.0 MB"),
    row("pca-sparse", "RandomizedPCA(krylov)", 52396, 10, 0.9, 50, "", 3e-8, 18,
        "CSR 32.0 MB"),
    row("pca-dense", "PCA(randomized)", 60000, 10, 3.0, 100, "", 1e-6),
    row("pca-dense", "RandomizedPCA", 60000, 10, 1.0, 100, "", 1e-8, 12),
    row("kpca", "KernelPCA(arpack)", 10000, 50, 40.0, 900, note="probe 0.8000"),
    row("kpca", "SketchedKernelPCA(exact)", 10000, 50, 15.0, 600, 1e-15, 2e-14, 14,
        "probe 0.8000"),
    row("kpca-landmarks", "SketchedKernelPCA(rpcholesky, c=2000)", 60000, 50, 30.0, 1500,
        note="probe 0.7980"),
]


def test_verdicts_decide_the_targets():
    lines = spectrum.verdicts(ROWS)
    text = "\n".join(lines)
    assert "graph k=10: eigsh 0.5 s against scipy eigsh 1 s (0.50x)" in text
    assert "(0.50x), max residual 5e-09 ||A||: meets" in text
    assert "eigsh against lobpcg 10 s (0.05x): meets" in text
    assert "pca-sparse k=10 RandomizedPCA(krylov): 0.45x" in text and "1.56x the CSR" in text
    assert "pca-dense k=10: 0.33x PCA(randomized)'s time" in text and "meets" in text
    kpca = [v for v in lines if v.startswith("kpca n=")][0]
    assert "0.67x its peak memory" in kpca and "misses" in kpca  # 600 / 900 > 1/5
    big = [v for v in lines if v.startswith("kpca on")][0]
    assert "79.80% against the exact method's 80.00%" in big and "meets" in big


def test_a_slow_or_unconverged_eigsh_misses():
    slow = [dict(r) for r in ROWS]
    slow[0]["seconds"] = "0.9"
    assert any("graph k=10" in v and "misses" in v for v in spectrum.verdicts(slow))
    loose = [dict(r) for r in ROWS]
    loose[0]["residual"] = "2e-8"
    assert any("graph k=10" in v and "misses" in v for v in spectrum.verdicts(loose))


def test_figure_and_report_from_rows(tmp_path):
    fig = spectrum.plot(ROWS, tmp_path / "figures" / "spectrum.png")
    assert fig.stat().st_size > 0
    text = spectrum.write_report(ROWS, tmp_path / "spectrum" / "REPORT.md", quick=False)
    assert "## Verdicts" in text.read_text() and "| task | method |" in text.read_text()
    path = spectrum.write_csv(ROWS, tmp_path / "rows.csv")
    assert spectrum.read_csv(path) == ROWS


def test_knn_adjacency_is_symmetric_and_normalized():
    X = np.random.default_rng(0).standard_normal((200, 5))
    A = spectrum.knn_adjacency(X, 5)
    assert sp.issparse(A) and abs(A - A.T).max() == 0
    top = np.linalg.eigvalsh(A.toarray())[-1]
    assert abs(top - 1.0) < 1e-12  # D^-1/2 W D^-1/2 of a connected graph: 1 is the largest
