"""Packaging metadata: what a wheel installs and how the project is cited."""

from pathlib import Path

import pytest

import sketchlab

from ._support import run_isolated

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

ROOT = Path(__file__).resolve().parents[1]


def test_only_sketchlab_is_installed_as_a_top_level_package():
    # a top-level "experiments" package in the wheel would shadow a user's own;
    # the experiments run from a checkout (python -m experiments)
    find = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"]["find"]
    assert all(p == "sketchlab" or p.startswith("sketchlab.") for p in find["include"])


def test_metadata_has_classifiers_and_urls():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert any(c.startswith("Programming Language :: Python :: 3") for c in project["classifiers"])
    assert project["urls"]


def test_citation_names_the_paper_completely():
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["date-released"]
    paper = cff["references"][0]
    assert paper["title"].startswith("Fast Generalized Matrix Regression")
    assert paper["year"] == 2019 and paper["journal"]
    assert any(i["value"] == "arXiv:1912.12008" for i in paper["identifiers"])


def test_module_docstring_does_not_repeat_the_name():
    # help(sketchlab) prints "sketchlab - <first line>"
    first = sketchlab.__doc__.strip().splitlines()[0]
    assert not first.lower().startswith("sketchlab")


def test_an_estimator_without_scikit_learn_names_the_extra():
    """Without scikit-learn, an estimator's import says what to install (the
    dask front already does), instead of a bare 'No module named sklearn'."""
    code, out, err = run_isolated("""
        import sys
        sys.modules["sklearn"] = None  # as if scikit-learn were not installed
        import sketchlab
        try:
            sketchlab.SketchedKernelRidge
        except ImportError as exc:
            print(exc)
        print(callable(sketchlab.krylov_svd))
    """)
    assert code == 0, err
    assert "pip install 'sketchlab[sklearn]'" in out and "scikit-learn" in out
    assert out.strip().endswith("True")


def test_import_loads_neither_scipy_linalg_nor_scikit_learn_nor_dask():
    code, out, err = run_isolated("""
        import sys, time
        t = time.perf_counter()
        import sketchlab
        elapsed = time.perf_counter() - t
        heavy = [m for m in ("scipy.linalg", "sklearn", "dask", "numba") if m in sys.modules]
        print(heavy, elapsed)
    """)
    assert code == 0, err
    heavy, _ = out.strip().rsplit("]", 1)
    assert heavy == "[", f"import sketchlab loaded {heavy}]"
