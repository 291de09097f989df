"""Import SimGrid's Python bindings, making ``libsimgrid.so`` findable first.

See :mod:`coburst._simgrid_finder` (also installed as a ``.pth`` hook so that a plain
``import simgrid`` works in a coburst environment).
"""

from __future__ import annotations

import coburst._simgrid_finder  # noqa: F401 - registers the preloader
import simgrid

__all__ = ["simgrid"]
