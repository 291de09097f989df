"""The example policy plugin's own tests (examples/policy-plugin/tests, written with
coburst.testing) pass with the plugin laid out as installed (tests/plugin_support.py)."""

from __future__ import annotations

import subprocess
import sys

from plugin_support import EXAMPLE, install_example, plugin_env


def test_the_plugins_own_tests(tmp_path, monkeypatch):
    env = plugin_env(install_example(tmp_path / "site"), monkeypatch)
    env["HYPOTHESIS_STORAGE_DIRECTORY"] = str(tmp_path / "hypothesis")  # nothing written in the source tree
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", str(EXAMPLE / "tests"),
                           "--basetemp", str(tmp_path / "t")], capture_output=True, text=True, env=env, cwd=EXAMPLE,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "5 passed" in proc.stdout
