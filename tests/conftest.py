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
