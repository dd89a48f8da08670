"""Reproduction of the experiments of Ye, Wang, Zhang & Zhang, "Fast Generalized
Matrix Regression with Applications in Machine Learning" (Section 7).

``python -m experiments reproduce --quick`` runs every sweep on the data sets
present in ``$SKETCHLAB_DATA`` and writes tidy CSV files, figures and
``results/REPORT.md``; see ``python -m experiments --help``.

Modules: :mod:`~experiments.datasets` (registry, readers, downloader), one
module per sweep (:mod:`~experiments.gmr`, :mod:`~experiments.kernel`,
:mod:`~experiments.spsd_table`, :mod:`~experiments.eta`,
:mod:`~experiments.svd`), :mod:`~experiments.runs` (seeds, CSV, run
records), :mod:`~experiments.analysis` (summaries), :mod:`~experiments.plotting`,
:mod:`~experiments.report` and :mod:`~experiments.paper` (the paper's numbers).
"""
