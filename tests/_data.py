"""Where real data sets are looked for: the one rule of the tests, the experiments and the
benchmarks.

1. ``$SKETCHLAB_DATA``, when it is set, and then only that directory (a run never picks up
   files from elsewhere);
2. otherwise ``~/.cache/sketchlab`` (where ``python -m experiments download`` puts files),
   then ``../shared/datasets`` next to the checkout (the project's shared copies).

It lives here, in the tests' package, because the library's tests may not import the
experiments (``tests/test_architecture.py``) while the experiments may import a module of
the standard library only (``experiments.datasets`` does, as the repository's conftest.py
imports ``tests._switch``); the asv suites (``asv_benchmarks/benchmarks/common.py``) load
this file by its path, without putting the checkout on ``sys.path`` (which would shadow the
sketchlab that asv installed).
"""

import os
from pathlib import Path

ENV = "SKETCHLAB_DATA"
# ../shared/datasets next to the checkout: the project's shared copies of the data sets.
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets"


def data_dirs():
    """The directories searched for data files, in order.

    Directories are listed whether or not they exist (error messages show them all).
    """
    env = os.environ.get(ENV)
    if env:
        return [Path(env).expanduser()]
    return [Path.home() / ".cache" / "sketchlab", SHARED_DATA]


def data_home():
    """Where downloads go: the first of :func:`data_dirs`."""
    return data_dirs()[0]


def find_file(name):
    """Path of the file ``name`` in the first of :func:`data_dirs` that holds it, or None."""
    for folder in data_dirs():
        if (folder / name).is_file():
            return folder / name
    return None


def describe_dirs():
    """The search order as a sentence, for messages."""
    dirs = ", ".join(str(d) for d in data_dirs())
    if os.environ.get(ENV):
        return f"{dirs} (${ENV})"
    return f"{dirs} (${ENV} is not set)"
