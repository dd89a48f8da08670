"""Shared fixtures (real data sets, skipped when absent), hypothesis profiles
and the one switch of the long profiles.

The default run (``pytest``) is the fast one.  The long profiles (tests marked
``slow`` or ``fuzz_long``: the whole corruption grid of tests/test_fuzz.py and
its properties with many more examples, clusters and subprocesses, real data
sets, full statistical sweeps) run only with the switch, as scipy's ``xslow``::

    SKETCHLAB_XSLOW=1 python -m pytest      # or: python -m pytest --runslow

Without it they are reported as skipped, whatever ``-m`` a command line gives
(``-m`` is not in addopts, so a command line's own ``-m`` replaces nothing).
"""

import lzma
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# the data directories of the experiments, in the same order (see experiments.datasets.data_dirs)
from experiments.datasets import describe_dirs, find_file

XSLOW_ENV = "SKETCHLAB_XSLOW"
LONG_MARKERS = ("slow", "fuzz_long")
# the test modules that drive the compiled loops (sketchlab/_jit) directly:
# marked "kernels", the selection of the bounds-checked run
# (NUMBA_BOUNDSCHECK=1 ... python -m pytest -m kernels; see README.md)
KERNEL_MODULES = ("test_operators", "test_sketch_state", "test_hash", "test_gaussian_generator",
                  "test_rbf", "test_kernel_matrices", "test_digests", "test_edge_cases",
                  "test_fuzz")

settings.register_profile(
    "default", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# the long profiles' examples: HYPOTHESIS_PROFILE, when set, decides
settings.register_profile(
    "xslow", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _env_switch():
    return os.environ.get(XSLOW_ENV, "").strip().lower() not in ("", "0", "false", "no")


def xslow_enabled(config):
    """True when the long profiles run (``SKETCHLAB_XSLOW=1`` or ``--runslow``)."""
    return _env_switch() or bool(config.getoption("--runslow", default=False))


def pytest_addoption(parser):
    parser.addoption(
        "--runslow", action="store_true", default=False,
        help=f"run the long profiles too (tests marked {' or '.join(LONG_MARKERS)}); "
             f"the same as {XSLOW_ENV}=1",
    )


def pytest_configure(config):
    default = "xslow" if xslow_enabled(config) else "default"
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", default))


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.parent.name == "tests" and item.path.stem in KERNEL_MODULES:
            item.add_marker(pytest.mark.kernels)
    if xslow_enabled(config):
        return
    skip = pytest.mark.skip(
        reason=f"long profile: run with {XSLOW_ENV}=1 (or --runslow)")
    for item in items:
        if any(item.get_closest_marker(name) is not None for name in LONG_MARKERS):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def load_libsvm(pytestconfig):
    """Loader of a real LIBSVM data set by file name, looked for in
    ``experiments.datasets.data_dirs()``; skips the test when the file is not
    present (data sets are never committed) and, real data being long-profile
    work, unless the long profiles run."""
    cache = {}
    long = xslow_enabled(pytestconfig)

    def load(filename, n_features=None):
        if not long:
            pytest.skip(f"real data set {filename}: long profile, run with {XSLOW_ENV}=1 "
                        f"(or --runslow)")
        path = find_file(filename)
        if path is None:
            pytest.skip(f"data set {filename} not found in {describe_dirs()}")
        if filename not in cache:
            from sklearn.datasets import load_svmlight_file

            opener = lzma.open if filename.endswith(".xz") else open
            with opener(path, "rb") as fh:
                X, y = load_svmlight_file(fh, n_features=n_features)
            cache[filename] = (X, y)
        return cache[filename]

    return load


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
