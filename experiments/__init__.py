"""Reproduction of the experiments of Ye, Wang, Zhang & Zhang, "Fast Generalized
Matrix Regression with Applications in Machine Learning" (its Section 6:
Figures 1-3, Tables 6 and 7).

``python -m experiments reproduce --quick`` runs every sweep on the data sets
present in ``$SKETCHLAB_DATA`` and writes tidy CSV files, figures and
``results/REPORT.md``; see ``python -m experiments --help``.

Modules: :mod:`~experiments.sweeps` (the one table of the sweeps), one module per
sweep, each with the same few functions (config, run, summary, plot, report section:
:mod:`~experiments.gmr`, :mod:`~experiments.kernel`, :mod:`~experiments.spsd_table`,
:mod:`~experiments.eta`, :mod:`~experiments.svd`, :mod:`~experiments.svd_passes`,
:mod:`~experiments.estimate`, :mod:`~experiments.cur`, :mod:`~experiments.investigate`
(the studies behind the report's explanations), :mod:`~experiments.lstsq`,
:mod:`~experiments.krr`), ``tests/_data.py`` (where data sets are looked for),
:mod:`~experiments.datasets` (registry, readers, downloader), :mod:`~experiments.runs`
(seeds, CSV, run records, option types), :mod:`~experiments.analysis` (summaries),
:mod:`~experiments.plotting` and :mod:`~experiments.report` (what the sweeps' figures and
sections share) and :mod:`~experiments.paper` (the paper's numbers).
"""
