"""Reproduction of the experiments of Ye, Wang, Zhang & Zhang, "Fast Generalized
Matrix Regression with Applications in Machine Learning" (its Section 6:
Figures 1-3, Tables 6 and 7).

``python -m experiments reproduce --quick`` runs every sweep on the data sets
present in ``$SKETCHLAB_DATA`` and writes tidy CSV files, figures and
``results/REPORT.md``; see ``python -m experiments --help``.

Modules: :mod:`~experiments.datasets` (registry, readers, downloader), one
module per sweep (:mod:`~experiments.gmr`, :mod:`~experiments.kernel`,
:mod:`~experiments.spsd_table`, :mod:`~experiments.eta`,
:mod:`~experiments.svd`, and :mod:`~experiments.investigate`, the studies
behind the report's explanations), :mod:`~experiments.runs` (seeds, CSV, run
records), :mod:`~experiments.analysis` (summaries), :mod:`~experiments.plotting`,
:mod:`~experiments.report` and :mod:`~experiments.paper` (the paper's numbers).
"""
