"""The sweeps of ``python -m experiments``: one table.

Every sweep is a module with the same few names (experiments/README.md, "Adding a sweep"):

``NAME``
    The sub-command, and the folder ``OUT/<NAME>/`` of its CSV and ``run.json``.
``COLUMNS``
    The CSV's columns, in order.
``DEFAULT_DATASETS``
    Registry names run when no ``--dataset`` is given; empty for a sweep that needs none
    (it makes its problems, or finds its own files), which then takes no ``--dataset``.
``add_options(parser)``
    Its own command-line options, beyond the common ones (``--reps``, ``--seed``,
    ``--quick``, ``--out``, progress; ``--dataset`` and ``--download`` when it reads data sets).
``make_config(datasets, *, quick=False, reps=None, seed=0, **options)``
    A frozen dataclass; ``options`` are its own options' names (None: not given).
``load_all(config)``
    The data sets it runs on (``experiments.datasets.Data``, recorded in ``run.json``).
``run(config, *, show_progress=True)``
    The measurements: a list of dicts with the keys of ``COLUMNS``, a pure function of the
    config (every random call seeded through ``runs.derive_seed``).
``summary(rows)``
    The lines printed after the run.
``plot(rows, folder)``
    Its figures under ``folder`` from the rows of its CSV alone; returns the paths.
``section(out, rows, verdicts, runs)``
    Its section of ``OUT/REPORT.md`` (markdown lines) from the rows of its CSV; each claim
    judged is appended to ``verdicts`` (``report.Verdict``); ``runs`` holds every sweep's
    ``(rows, run record)`` under ``OUT``, for sections that cite another sweep.

Optional: ``EXPLAIN``, ``{claim: function(verdict, runs) -> lines}``, the explanation printed
under a disagreeing verdict of that claim (the investigate sweep's).

The table's order is the order in which ``reproduce`` runs the sweeps and in which the report
shows them (the paper's).
"""

from dataclasses import dataclass
from types import ModuleType

from . import (
    cur,
    estimate,
    eta,
    gmr,
    investigate,
    kernel,
    krr,
    lstsq,
    ridge,
    spectrum,
    spsd_table,
    svd,
    svd_passes,
    trace,
)


@dataclass(frozen=True)
class Sweep:
    """One row of the table.

    ``title`` heads the report's section (and names the sweep where it was not run);
    ``help`` is the sub-command's line in ``--help``; ``reproduce``: run by ``reproduce``
    (and listed as not run in its report when absent); ``then``: sweeps that the
    sub-command runs after its own, on the same data and options.
    """

    module: ModuleType
    title: str
    help: str
    reproduce: bool = True
    then: tuple = ()

    @property
    def name(self):
        return self.module.NAME


TABLE = (
    Sweep(gmr, "Fast GMR error ratio (Figure 1)",
          "Figure 1 (Section 6.1): Fast GMR error ratio against a"),
    Sweep(kernel, "SPSD kernel approximation (Figure 2)",
          "Figure 2 (Section 6.2): SPSD kernel approximations against a = s / c"),
    Sweep(spsd_table, "Table 7: the fast SPSD baseline",
          "Table 7: the fast SPSD baseline of Wang et al., every sampling variant"),
    Sweep(eta, "Table 6: eta", "Table 6: eta = ||K_k||^2 / ||K||^2"),
    Sweep(svd, "Single-pass SVD (Figure 3)",
          "Figure 3 (Section 6.3): single-pass SVDs against (c + r) / k (then svd-passes)",
          then=("svd-passes",)),
    Sweep(svd_passes, "Error against passes over A",
          "error and time against passes over A: single-pass SVDs, randomized_svd, "
          "krylov_svd (also run by svd)"),
    Sweep(estimate, "Error estimates and fixed accuracy",
          "sketchlab's error estimates against the true errors, fast_gmr(tol), and what the "
          "estimate costs (not a figure of the paper)"),
    Sweep(cur, "CUR decomposition",
          "CUR decompositions: every selection and core against c = r (Section 1's "
          "application)"),
    Sweep(investigate, "Investigations",
          "the studies behind the report's explanations: the kernel scale against Table 6's "
          "eta, Table 7's attempts, Practical SP-SVD with c = r"),
    Sweep(lstsq, "Least squares from a sketch",
          "sketched least squares (sketch-and-solve, sketch-and-precondition, SPIR, FOSSILS) "
          "against scipy.linalg.lstsq: forward, residual and backward error against the "
          "condition number; no data set", reproduce=False),
    Sweep(krr, "Kernel ridge regression on Fashion-MNIST",
          "kernel ridge classification of Fashion-MNIST: test accuracy against fit time "
          "(KernelRidge, Nystroem + RidgeClassifier, SketchedKernelRidgeClassifier); not part "
          "of reproduce", reproduce=False),
    Sweep(spectrum, "The spectrum of a matrix (issue 37)",
          "eigsh against scipy's eigsh and lobpcg on a nearest-neighbour graph (residual and "
          "time against k), RandomizedPCA against PCA, SketchedKernelPCA against KernelPCA; "
          "not part of reproduce", reproduce=False),
    Sweep(trace, "Trace estimation (the XTrace paper's comparison, issue 38)",
          "stochastic trace estimation (Hutchinson, Hutch++, XTrace, XNysTrace) on the XTrace "
          "paper's six spectra: mean relative error against products, coverage of the error "
          "estimates; no data set, not part of reproduce", reproduce=False),
    Sweep(ridge, "Ridge regression on debian-tfidf (issue 39)",
          "ridge regression on debian-tfidf: steps and time against the effective dimension "
          "(Nystrom-preconditioned and plain CG, scikit-learn's sparse_cg and lsqr); not part "
          "of reproduce", reproduce=False),
)
SWEEPS = {sweep.name: sweep for sweep in TABLE}
