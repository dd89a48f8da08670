"""Where the tests look for real data sets.

The rule is the experiments' (``experiments.datasets.data_dirs``), kept here
so that the library's tests do not import the experiments package;
experiments/tests/test_datasets.py checks that the two agree:

1. ``$SKETCHLAB_DATA``, when it is set, and then only that directory;
2. otherwise ``~/.cache/sketchlab`` (where ``python -m experiments download``
   puts files), then ``../shared/datasets`` next to the checkout.
"""

import os
from pathlib import Path

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets"


def data_dirs():
    """The directories searched for data files, in order."""
    env = os.environ.get("SKETCHLAB_DATA")
    if env:
        return [Path(env).expanduser()]
    return [Path.home() / ".cache" / "sketchlab", SHARED_DATA]


def find_file(name):
    """Path of the file ``name`` in the first of :func:`data_dirs` that holds it, or None."""
    for folder in data_dirs():
        if (folder / name).is_file():
            return folder / name
    return None


def describe_dirs():
    """The search order as a sentence, for messages."""
    dirs = ", ".join(str(d) for d in data_dirs())
    if os.environ.get("SKETCHLAB_DATA"):
        return f"{dirs} ($SKETCHLAB_DATA)"
    return f"{dirs} ($SKETCHLAB_DATA is not set)"
