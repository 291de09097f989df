"""Where the other projects' files that tests, benchmarks and scripts read lie.  They are not
in this repository: they sit beside a checkout, in ``../shared/data/``.

* ``COBURST_BATSIM_DATA``: Batsim 4.2.1's own ``platforms/``, ``workloads/``, ``events/`` and
  ``LICENSE`` (tag v4.2.1); default ``<checkout>/../shared/data/batsim-4.2.1``;
* ``COBURST_SWF_DIR``: the folder of SWF logs (the Parallel Workloads Archive's KTH-SP2 log,
  ``KTH-SP2-1996-2.1-cln.swf``, among them); default ``<checkout>/../shared/data/swf``.

Nothing here reads a file: a test asks for one with :func:`need_swf` / :func:`need_batsim_data`
(skip, naming the file and the variable, when it is absent) or marks itself with
:func:`needs_swf` / :func:`needs_batsim_data`; a script or benchmark calls :func:`missing`
and stops with its message.  Benchmarks and scripts put this folder on ``sys.path``.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BATSIM_VAR = "COBURST_BATSIM_DATA"
SWF_VAR = "COBURST_SWF_DIR"
#: the KTH-SP2 log's file name (in the SWF folder)
KTH = "KTH-SP2-1996-2.1-cln.swf"
#: the Lublin-model logs of RLScheduler's experiments (256 nodes, 10000 jobs each)
LUBLIN_256 = "lublin_256.swf"
LUBLIN_256_NEW2 = "lublin_256_new2.swf"
#: what each SWF log is, for the messages naming a missing one
SWF_LOGS = {KTH: "the Parallel Workloads Archive's KTH-SP2 log",
            LUBLIN_256: "RLScheduler's Lublin-256 log", LUBLIN_256_NEW2: "RLScheduler's second Lublin-256 log"}


def _folder(var: str, default: Path) -> Path:
    value = os.environ.get(var, "")
    return Path(os.path.abspath(Path(value).expanduser())) if value else default


def batsim_data() -> Path:
    """Batsim 4.2.1's corpus folder: ``$COBURST_BATSIM_DATA``, else ``../shared/data/batsim-4.2.1``."""
    return _folder(BATSIM_VAR, REPO.parent / "shared" / "data" / "batsim-4.2.1")


def swf_dir() -> Path:
    """The SWF logs' folder: ``$COBURST_SWF_DIR``, else ``../shared/data/swf``."""
    return _folder(SWF_VAR, REPO.parent / "shared" / "data" / "swf")


def swf_log(name: str = KTH) -> Path:
    """The path of the SWF log ``name`` (which may be absent)."""
    return swf_dir() / name


def missing(path: Path | str) -> str | None:
    """None when ``path`` (a file or folder of the SWF or Batsim folder) exists, else a message
    naming it, what it is and the variable that moves its folder."""
    path = Path(path)
    if path.exists():
        return None
    if path.parent == swf_dir():
        what = SWF_LOGS.get(path.name, "an SWF log")
        return f"needs {path} ({what}; set {SWF_VAR} to the folder of SWF logs)"
    return f"needs {path} (Batsim 4.2.1's own test files; set {BATSIM_VAR} to that folder)"


def need_swf(name: str = KTH) -> Path:
    """The SWF log ``name``; the test is skipped, with a message, when it is absent."""
    return _need(swf_log(name))


def need_batsim_data(*parts: str) -> Path:
    """Batsim's corpus folder (or ``parts`` under it); the test is skipped when it is absent."""
    return _need(batsim_data().joinpath(*parts))


def batsim_file(tmp: Path, name: str) -> Path:
    """A copy in ``tmp`` of the corpus file ``name`` (``platforms/small_platform.xml``, ...),
    leading blank lines dropped (SimGrid skips them, coburst's XML pre-check does not); the
    test is skipped when the file is absent."""
    text = need_batsim_data(name).read_text()
    path = tmp / Path(name).name
    path.write_text(text.lstrip("\n"))
    return path


def batsim_tree(tmp: Path, *names: str) -> Path:
    """Copies of the corpus files and folders ``names`` under ``tmp``, their relative layout
    kept (a usage_trace profile names its trace relative to the workload's folder); the test
    is skipped when one is absent."""
    import shutil

    for name in names:
        src, dst = need_batsim_data(name), tmp / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            shutil.copy2(src, dst)
    return tmp


def needs_swf(name: str = KTH):
    """A mark skipping the test when the SWF log ``name`` is absent."""
    import pytest

    reason = missing(swf_log(name))
    return pytest.mark.skipif(reason is not None, reason=reason or "")


def needs_batsim_data():
    """A mark skipping the test when Batsim's corpus folder is absent."""
    import pytest

    reason = missing(batsim_data())
    return pytest.mark.skipif(reason is not None, reason=reason or "")


def _need(path: Path) -> Path:
    reason = missing(path)
    if reason is not None:
        import pytest

        pytest.skip(reason)
    return path
