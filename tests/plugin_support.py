"""Test support for policy plugins: distributions made on disk as an installer lays them out.

:func:`make_dist` writes ``<name>-<version>.dist-info`` (``METADATA``, ``entry_points.txt``,
``RECORD``) and the distribution's modules into a folder: with the folder on ``sys.path`` (or
``PYTHONPATH``), ``importlib.metadata`` finds the distribution and its entry points.
:func:`install_project` does it for a project folder from its ``pyproject.toml`` (the name,
version and entry points of ``[project]``, the packages of ``src/``): what ``pip install
--no-deps --target DIR PROJECT`` leaves, without pip, a build backend or the network (coburst's
uv environment has neither pip nor setuptools, and tests run offline).
"""

from __future__ import annotations

import os
import shutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the example plugin project
EXAMPLE = ROOT / "examples" / "policy-plugin"


def make_dist(root: Path, name: str, entry_points: dict[str, str], modules: dict[str, str] | None = None,
              version: str = "0.1") -> Path:
    """A distribution ``name`` in ``root`` whose group ``coburst.policies`` holds
    ``entry_points`` (entry-point name -> ``module[:attr]``), with ``modules`` (module file
    name -> source) beside it."""
    root.mkdir(parents=True, exist_ok=True)
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = ["[coburst.policies]", *(f"{k} = {v}" for k, v in entry_points.items()), ""]
    (info / "entry_points.txt").write_text("\n".join(lines))
    (info / "INSTALLER").write_text("coburst-tests\n")
    for fname, source in (modules or {}).items():
        path = root / fname
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    (info / "RECORD").write_text("")
    return info


def install_project(project: Path, target: Path) -> Path:
    """Lay a project (``pyproject.toml`` with ``[project]``, packages in ``src/``) out in
    ``target`` as an installed distribution; returns its ``.dist-info`` folder."""
    meta = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    target.mkdir(parents=True, exist_ok=True)
    for package in sorted((project / "src").iterdir()):
        if (package / "__init__.py").is_file():
            shutil.copytree(package, target / package.name, ignore=shutil.ignore_patterns("__pycache__"))
    groups = meta.get("entry-points", {})
    info = make_dist(target, meta["name"], groups.get("coburst.policies", {}), version=meta["version"])
    others = {g: eps for g, eps in groups.items() if g != "coburst.policies"}
    if others:
        with open(info / "entry_points.txt", "a") as fh:
            for group, eps in others.items():
                fh.write(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()))
    return info


def install_example(target: Path) -> Path:
    """The example plugin laid out in ``target`` (returned)."""
    info = install_project(EXAMPLE, target)
    assert (info / "entry_points.txt").read_text().startswith("[coburst.policies]\n")
    return target


def plugin_env(site: Path, monkeypatch) -> dict[str, str]:
    """``site`` (and the checkout) on the PYTHONPATH of every process the test starts (set
    in the test's environment too: the scheduler processes of tests/simharness.py inherit it);
    returns that environment."""
    path = os.pathsep.join([str(site), str(ROOT)])
    monkeypatch.setenv("PYTHONPATH", path)
    return {**os.environ, "PYTHONPATH": path}
