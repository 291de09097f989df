"""Shared test set-up: coburst's caches (platform scans, pre-checks, platform descriptions) go to
a temporary folder of this test session (each xdist worker its own), never to the user's
``~/.cache/coburst``; ``COBURST_CACHE=off`` given to the test run is kept."""

import os
import shutil
import tempfile

if os.environ.get("COBURST_CACHE") != "off":
    _CACHE = tempfile.mkdtemp(prefix="coburst-test-cache-")
    os.environ["COBURST_CACHE"] = _CACHE  # (inherited by the coburst processes the tests start)

    def pytest_unconfigure(config):
        shutil.rmtree(_CACHE, ignore_errors=True)


import batsim_recorded  # noqa: E402  (tests/ is on sys.path: the harness modules live there)


def pytest_configure(config):
    config.addinivalue_line("markers", "crossengine: compares coburst with the real Batsim 4.2.1 (live, or "
                                       "its recorded runs)")
    config.addinivalue_line("markers", "batsim_live: a cross-engine test whose inputs are random: it runs "
                                       "the real Batsim live only (skipped, saying so, without a binary)")


def pytest_runtest_setup(item):
    """Tell the Batsim door whether this test's inputs are random (hypothesis, or marked
    ``batsim_live``): such runs are never recorded, and replayed never."""
    fn = getattr(item, "obj", None)
    batsim_recorded.LIVE_ONLY["value"] = bool(item.get_closest_marker("batsim_live")) or bool(
        getattr(fn, "is_hypothesis_test", False))
