"""Sphinx configuration: ``python -m sphinx -W -b html docs docs/_build/html``.

The API reference (api.rst) is written here at build time from ``sketchlab.__all__``,
grouped by job as the README's "Which function for which job" table (``JOBS`` below: a new
public name goes into its job's group, and the build stops, naming it, until it has one);
autosummary then writes one page per name from its numpydoc docstring.  The gallery
(sphinx-gallery) runs docs/examples/*.py.
"""

import os
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the checkout's sketchlab, before any installed one

import sketchlab  # noqa: E402

project = "sketchlab"
author = "The sketchlab developers"
copyright = "the sketchlab developers"
version = release = sketchlab.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "examples/README.rst", "**/GALLERY_HEADER.rst"]
templates_path = []
html_theme = "alabaster"
html_static_path = []
html_theme_options = {"description": "Randomized sketching on Numba-compiled loops"}

autosummary_generate = True
autosummary_imported_members = True
# scikit-learn's metadata-routing setters (set_score_request, ...) are generated
# per class; their docstrings link to scikit-learn's glossary, which is not here
autodoc_default_options = {
    "members": True, "inherited-members": False,
    "exclude-members": ",".join(f"set_{m}_request" for m in (
        "fit", "partial_fit", "predict", "score", "transform", "inverse_transform",
        "fit_transform", "split")),
}
autodoc_typehints = "none"  # the numpydoc sections say the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
myst_heading_anchors = 3

intersphinx_mapping = {}  # no network needed at build time
nitpicky = False
# docstrings cross-reference names in backquotes that are not all documented
# objects here (scipy's, numpy's): those stay plain text
default_role = "obj"
suppress_warnings = ["ref.obj", "ref.ref", "myst.xref_missing"]

sphinx_gallery_conf = {
    "examples_dirs": str(HERE / "examples"),
    "gallery_dirs": str(HERE / "auto_examples"),
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "within_subsection_order": "FileNameSortKey",
}

os.environ.setdefault("MPLBACKEND", "Agg")
warnings.filterwarnings("ignore", message="Matplotlib is currently using agg")

# ---- the API reference, written from sketchlab.__all__ ----------------------------

# One group per job, in the order of the README's "Which function for which job" table.
# Names listed in PLANNED (this round's, SPEC section 11) may be absent from sketchlab.__all__
# until they land; a group shows the names that exist, and is left out while it has none.
# Every other name must exist, and every public name must have a job (the build stops with
# a message otherwise), so that no public name lands in a catch-all group.
JOBS = [
    ("Sketch a matrix", "Sketching operators from the left, the right or both sides, in one "
     "pass over the nonzeros; blocks and streams.",
     ["SketchOperator", "CountSketch", "OSNAP", "GaussianSketch", "SRHT", "UniformSampler",
      "LeverageScoreSampler", "ComposedSketch", "IndexSelection", "compose", "sketch_both",
      "make_sketch", "SKETCH_KINDS", "SVD_SKETCHES", "leverage_scores", "SketchState"]),
    ("Generalized matrix regression", "min_X ||A - C X R||_F, exactly or sketched.",
     ["gmr", "fast_gmr", "GMRResult", "project_symmetric", "project_psd", "gmr_residual",
      "gmr_error_ratio", "UnderdeterminedSketchWarning"]),
    ("Least squares", "min_x ||A x - b||_2 to full accuracy, or a preconditioner for scipy's "
     "iterative solvers.",
     ["lstsq", "LstsqResult", "sketch_preconditioner", "SketchPreconditioner"]),
    ("Ridge regression", "min_x ||A x - b||^2 + alpha ||x||^2, and the scikit-learn drop-ins.",
     ["ridge", "RidgeResult", "SketchedRidge", "SketchedRidgeClassifier", "SketchedRidgeCV"]),
    ("CUR decomposition", "A ~ C U R from columns and rows of A.", ["cur", "CURDecomposition"]),
    ("Kernel (SPSD) approximation", "SPSD (kernel) matrices from a few of their columns.",
     ["RBFKernel", "PairwiseKernel", "nystrom", "fast_spsd", "faster_spsd", "optimal_spsd",
      "eta", "SPSDApproximation", "SketchedNystroem"]),
    ("Kernel ridge regression", "Kernel ridge by conjugate gradients preconditioned with "
     "landmarks; the n x n kernel is never stored.",
     ["SketchedKernelRidge", "SketchedKernelRidgeClassifier"]),
    ("Truncated SVD, several passes", "Block Krylov SVD, accurate on flat spectra.",
     ["krylov_svd", "SVDResult", "RandomizedTruncatedSVD"]),
    ("Symmetric eigenproblems and PCA", "A few eigenpairs of a symmetric matrix; PCA of dense "
     "or sparse data, and kernel PCA.",
     ["eigsh", "EigshResult", "RandomizedPCA", "SketchedKernelPCA"]),
    ("Truncated SVD, one pass", "Truncated SVDs from sketches gathered in a single pass over "
     "A (streams, data read once).",
     ["fast_sp_svd", "practical_sp_svd", "three_sketch_svd", "practical_sp_svd_sizes",
      "three_sketch_svd_sizes", "lowrank_residual", "SinglePassSVD", "InaccurateSVDWarning"]),
    ("Traces, diagonals, effective dimension", "Estimates from matrix-vector products.",
     ["estimate_trace", "estimate_diagonal", "effective_dimension", "TraceResult",
      "DiagonalResult", "EffectiveDimensionResult"]),
    ("Error estimates and convergence", "How good is the answer, and when an iterative "
     "solver stopped short of it.", ["ErrorEstimate", "ConvergenceWarning"]),
    ("Memory", "The work buffers the iterative solvers keep for their next call.",
     ["release_workspace"]),
]
PLANNED = {"ridge", "SketchedRidge", "SketchedRidgeClassifier", "SketchedRidgeCV", "eigsh",
           "RandomizedPCA", "SketchedKernelPCA", "estimate_trace", "estimate_diagonal",
           "effective_dimension"}
# the dask front (sketchlab.dask), the last group; this round adds eigsh, lstsq and ridge
DASK = ["sketch", "sketch_both", "sketch_state", "fast_sp_svd", "practical_sp_svd",
        "three_sketch_svd", "krylov_svd", "cur", "eigsh", "lstsq", "ridge"]


def _write_api():
    import sketchlab.dask as dask_front

    names = list(dict.fromkeys(sketchlab.__all__))
    placed = [n for _, _, group in JOBS for n in group]
    unknown = [n for n in placed if n not in names and n not in PLANNED]
    homeless = [n for n in names if n not in placed]
    front = list(getattr(dask_front, "__all__", ()))
    unknown += [f"dask.{n}" for n in DASK if n not in front and n not in PLANNED | {"lstsq"}]
    homeless += [f"dask.{n}" for n in front if n not in DASK]
    if unknown or homeless:
        raise RuntimeError(
            "docs/conf.py JOBS and sketchlab.__all__ disagree: "
            + (f"not public names: {unknown}; " if unknown else "")
            + (f"public names without a job (add each to its group of JOBS): {homeless}"
               if homeless else ""))
    jobs = [(title, blurb, [n for n in group if n in names]) for title, blurb, group in JOBS]
    dask_names = [n for n in DASK if n in front]
    lines = ["API reference", "=============", "",
             "Every public name is imported from :mod:`sketchlab`; the dask front is",
             ":mod:`sketchlab.dask`.", "", ".. currentmodule:: sketchlab", ""]
    for title, blurb, group in jobs:
        if not group:
            continue
        lines += [title, "-" * len(title), "", blurb, "", ".. autosummary::",
                  "   :toctree: generated", "", *[f"   {n}" for n in group], ""]
    lines += ["The dask front", "--------------", "",
              ".. automodule:: sketchlab.dask", "   :no-members:", "",
              ".. currentmodule:: sketchlab.dask", "", ".. autosummary::",
              "   :toctree: generated", "",
              *[f"   {n}" for n in dask_names], ""]
    text = "\n".join(lines)
    path = HERE / "api.rst"
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


_write_api()
