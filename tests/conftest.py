"""Shared fixtures: real data sets (skipped when absent) and hypothesis profiles."""

import lzma
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# the data directories of the experiments, in the same order (see experiments.datasets.data_dirs)
from experiments.datasets import describe_dirs, find_file

settings.register_profile(
    "default", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(scope="session")
def load_libsvm():
    """Loader of a real LIBSVM data set by file name, looked for in
    ``experiments.datasets.data_dirs()``; skips the test when the file is not
    present (data sets are never committed)."""
    cache = {}

    def load(filename, n_features=None):
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
