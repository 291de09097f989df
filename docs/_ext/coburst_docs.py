"""Set-up shared by the executed pages of coburst's documentation (the tutorials).

Each tutorial's first, hidden cell calls :func:`workspace`: the kernel moves to a scratch
folder that sees the repository's bundled data under their usual names (``platforms/``,
``workloads/``, ``models/``, ``schedulers/``, ``scripts/``, ``examples/`` as symbolic links), so
the commands on the page are the ones a reader types at the repository root, while what they
write (``out/...``) lands in the scratch folder and never in the checkout.  The ``coburst``
command of the environment running the kernel comes first on ``PATH``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

LINKED = ("platforms", "workloads", "models", "schedulers", "scripts", "examples", "benchmarks")


def repository() -> Path:
    """The checkout holding this documentation (the folder with ``pyproject.toml``)."""
    here = Path(__file__).resolve()
    for folder in here.parents:
        if (folder / "pyproject.toml").is_file() and (folder / "coburst").is_dir():
            return folder
    raise RuntimeError(f"no coburst checkout above {here}")


def workspace(name: str) -> Path:
    """Create (or empty) the scratch folder of page ``name`` and move there; returns it.

    The folder is ``$COBURST_DOCS_WORK/<name>`` when that variable is set (the docs test sets
    it to its temporary folder), else a new temporary folder.
    """
    root = repository()
    base = os.environ.get("COBURST_DOCS_WORK")
    if base:
        work = Path(base) / name
        if work.exists():
            shutil.rmtree(work)
        work.mkdir(parents=True)
    else:
        work = Path(tempfile.mkdtemp(prefix=f"coburst-docs-{name}-"))
    for entry in LINKED:
        if (root / entry).exists():
            (work / entry).symlink_to(root / entry)
    os.chdir(work)
    bin_dir = str(Path(sys.executable).parent)
    os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # the commands' output as plain text: the kernel (ipykernel) asks its children for colours
    os.environ.update(NO_COLOR="1", TERM="dumb")
    for name in ("FORCE_COLOR", "CLICOLOR_FORCE", "CLICOLOR"):
        os.environ.pop(name, None)
    os.environ["COBURST_REPO"] = str(root)
    return work
