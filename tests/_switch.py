"""The one switch of the long profiles, read by the repository's conftest.py
and by tests that decide at collection time (tests/test_fuzz.py).

The long profiles (tests marked ``slow`` or ``fuzz_long``: the whole
corruption grid of tests/test_fuzz.py and its properties with many more
examples, clusters and subprocesses, real data sets, full statistical sweeps)
run only with the switch, as scipy's ``xslow``::

    SKETCHLAB_XSLOW=1 python -m pytest      # or: python -m pytest --runslow
"""

import os

XSLOW_ENV = "SKETCHLAB_XSLOW"
LONG_MARKERS = ("slow", "fuzz_long")


def _env_switch():
    return os.environ.get(XSLOW_ENV, "").strip().lower() not in ("", "0", "false", "no")


def xslow_enabled(config):
    """True when the long profiles run (``SKETCHLAB_XSLOW=1`` or ``--runslow``)."""
    return _env_switch() or bool(config.getoption("--runslow", default=False))
