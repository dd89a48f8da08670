"""Sphinx configuration: ``python -m sphinx -W -b html docs docs/_build/html``.

The API reference (api.rst) is written here at build time from
``sketchlab.__all__``, grouped by job, so a new public name appears in it
without an edit; autosummary then writes one page per name from its
numpydoc docstring.  The gallery (sphinx-gallery) runs docs/examples/*.py.
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

JOBS = [
    ("Sketching operators", "Sketch a matrix from the left, the right or both sides.",
     ["SketchOperator", "CountSketch", "OSNAP", "GaussianSketch", "SRHT", "UniformSampler",
      "LeverageScoreSampler", "ComposedSketch", "IndexSelection", "compose", "sketch_both",
      "make_sketch", "SKETCH_KINDS", "SVD_SKETCHES", "leverage_scores", "SketchState"]),
    ("Generalized matrix regression", "min_X ||A - C X R||_F, exactly or sketched.",
     ["gmr", "fast_gmr", "project_symmetric", "project_psd", "gmr_residual", "gmr_error_ratio",
      "UnderdeterminedSketchWarning"]),
    ("CUR decomposition", "A ~ C U R from columns and rows of A.", ["cur", "CURDecomposition"]),
    ("Kernel approximation", "SPSD (kernel) matrices from a few of their columns.",
     ["RBFKernel", "PairwiseKernel", "nystrom", "fast_spsd", "faster_spsd", "optimal_spsd",
      "eta", "SPSDApproximation", "SketchedNystroem"]),
    ("Singular value decomposition", "Truncated SVDs in one pass over A.",
     ["fast_sp_svd", "practical_sp_svd", "three_sketch_svd", "practical_sp_svd_sizes",
      "three_sketch_svd_sizes", "lowrank_residual", "SinglePassSVD"]),
    ("Error estimates", "How good is the answer.", ["ErrorEstimate"]),
    ("Ridge regression", "min ||A x - b||^2 + alpha ||x||^2, one alpha or a path from one sketch.",
     ["ridge", "RidgeResult", "SketchedRidge", "SketchedRidgeClassifier", "SketchedRidgeCV"]),
]


def _write_api():
    names = list(dict.fromkeys(sketchlab.__all__))
    placed = {n for _, _, group in JOBS for n in group}
    jobs = [(title, blurb, [n for n in group if n in names]) for title, blurb, group in JOBS]
    rest = [n for n in names if n not in placed]
    if rest:
        jobs.append(("Other", "Further public names.", rest))
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
              *[f"   {n}" for n in ("sketch", "sketch_both", "sketch_state", "fast_sp_svd",
                                    "practical_sp_svd", "three_sketch_svd", "cur", "lstsq",
                                    "ridge")], ""]
    text = "\n".join(lines)
    path = HERE / "api.rst"
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


_write_api()
