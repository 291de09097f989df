"""Filling coburst's platform cache from a child process, for test modules that run simulations
in the test process: their runs then take the platform from the cache and load no SimGrid engine
there (SimGrid allows one engine a process: a second one, or the platform pre-check's fork of a
process that holds one, aborts)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: one 1-second delay job: the smallest run that makes the pre-check describe a platform
_DOC = {"jobs": [{"id": 1, "subtime": 0, "walltime": -1, "res": 1, "profile": "d"}],
        "profiles": {"d": {"type": "delay", "delay": 1}}}


def fill_platform_cache(platform: Path | str, nb_res: int = 16) -> None:
    """A run of the elastic mode on ``platform`` in a child process (its description, resource
    pairs included, goes to the cache)."""
    with tempfile.TemporaryDirectory() as tmp:
        w = Path(tmp) / "w.json"
        w.write_text(json.dumps({"nb_res": nb_res, **_DOC}))
        subprocess.run([sys.executable, "-m", "coburst", "run", "equipartition", "-q", "-p", str(platform), "-w",
                        str(w), "-e", str(Path(tmp) / "o")], check=True, cwd=REPO, capture_output=True, timeout=120)
