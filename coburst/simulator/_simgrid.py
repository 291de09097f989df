"""Import SimGrid's Python bindings, making ``libsimgrid.so`` findable first.

See :mod:`coburst._simgrid_finder` (also installed as a ``.pth`` hook so that a plain
``import simgrid`` works in a coburst environment).  SimGrid prints an INFO line
("Configuration change: Set 'contexts/factory' to 'thread'") when its module is imported,
before any logging option can apply; stderr is muted for the duration of the import only.
"""

from __future__ import annotations

import os
import sys

import coburst._simgrid_finder  # noqa: F401 - registers the preloader


def _quiet_import():
    if "simgrid" in sys.modules:
        return sys.modules["simgrid"]
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        import simgrid as module
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)
    return module


simgrid = _quiet_import()

__all__ = ["simgrid"]
