"""The library's test fixtures: real data sets (skipped when absent, and
long-profile work) and the ``kernels`` mark of the modules that drive the
compiled loops.  The switch of the long profiles and the hypothesis profiles
are in the repository's conftest.py (they apply to experiments/tests/ too).
"""

import lzma
from pathlib import Path

import pytest

from ._data import describe_dirs, find_file
from ._switch import XSLOW_ENV

# the test modules that drive the compiled loops (sketchlab/_engine/_jit) directly:
# marked "kernels", the selection of the bounds-checked run
# (NUMBA_BOUNDSCHECK=1 ... python -m pytest -m kernels; see README.md)
KERNEL_MODULES = ("test_operators", "test_sketch_state", "test_hash", "test_gaussian_generator",
                  "test_rbf", "test_kernel_matrices", "test_digests", "test_fuzz")
# (a test elsewhere that reaches the loops carries @pytest.mark.kernels itself)
HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.parent == HERE and item.path.stem in KERNEL_MODULES:
            item.add_marker(pytest.mark.kernels)


@pytest.fixture(scope="session")
def load_libsvm(xslow):
    """Loader of a real LIBSVM data set by file name, looked for in
    ``tests._data.data_dirs()`` (the one rule of the tests, the experiments and the
    benchmarks); skips the test when the file is not
    present (data sets are never committed) and, real data being long-profile
    work, unless the long profiles run."""
    cache = {}
    long = xslow

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
