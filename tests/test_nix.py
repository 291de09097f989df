"""nix/shell.nix (the real Batsim 4.2 + pybatsim + coburst shell) parses: ``nix-instantiate
--parse`` (Debian's ``nix-bin``, installed by ``./go test`` when it can).  Building it needs
the network (GitHub, framagit, PyPI), which CI does not have."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

SHELL = Path(__file__).resolve().parents[1] / "nix" / "shell.nix"
NIX = shutil.which("nix-instantiate")


@pytest.mark.skipif(NIX is None, reason="nix-instantiate not installed (Debian: apt-get install nix-bin)")
def test_shell_nix_parses():
    proc = subprocess.run([NIX, "--parse", str(SHELL)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    text = SHELL.read_text()
    # the pins the README promises
    assert 'rev = "v4.2.1"' in text and 'simgrid-332' in text and 'version = "3.2.1"' in text and "PYTHONPATH" in text


@pytest.mark.skipif(NIX is None, reason="nix-instantiate not installed (Debian: apt-get install nix-bin)")
def test_the_parse_check_fails_on_a_broken_file(tmp_path):
    broken = tmp_path / "shell.nix"
    broken.write_text(SHELL.read_text().replace("in\npkgs.mkShell", "in\npkgs.mkShell {"))
    proc = subprocess.run([NIX, "--parse", str(broken)], capture_output=True, text=True)
    assert proc.returncode != 0 and "syntax error" in proc.stderr
