"""Packaging metadata: what a wheel installs and how the project is cited."""

from pathlib import Path

import pytest

import sketchlab

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
