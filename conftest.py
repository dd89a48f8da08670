"""The test configuration shared by the library's tests (tests/), the
experiments' tests (experiments/tests/) and the doctests: hypothesis profiles
and the one switch of the long profiles (tests/_switch.py).

The default run (``pytest``) is the fast one.  The long profiles (tests marked
``slow`` or ``fuzz_long``) run only with the switch, as scipy's ``xslow``::

    SKETCHLAB_XSLOW=1 python -m pytest      # or: python -m pytest --runslow

Without it they are reported as skipped, whatever ``-m`` a command line gives
(``-m`` is not in addopts, so a command line's own ``-m`` replaces nothing).
It lives here, at the root, so that it applies to whichever test folder a
command line names.
"""

import os

import pytest
from hypothesis import HealthCheck, settings

from tests._switch import LONG_MARKERS, XSLOW_ENV, xslow_enabled

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


def pytest_addoption(parser):
    parser.addoption(
        "--runslow", action="store_true", default=False,
        help=f"run the long profiles too (tests marked {' or '.join(LONG_MARKERS)}); "
             f"the same as {XSLOW_ENV}=1",
    )


def pytest_configure(config):
    default = "xslow" if xslow_enabled(config) else "default"
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", default))


def pytest_collection_modifyitems(config, items):
    if xslow_enabled(config):
        return
    skip = pytest.mark.skip(
        reason=f"long profile: run with {XSLOW_ENV}=1 (or --runslow)")
    for item in items:
        if any(item.get_closest_marker(name) is not None for name in LONG_MARKERS):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def xslow(pytestconfig):
    """True when the long profiles run."""
    return xslow_enabled(pytestconfig)
