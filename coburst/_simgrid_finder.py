"""Make a plain ``import simgrid`` work in a coburst environment.

SimGrid 4.1's wheel installs ``libsimgrid.so.4.1`` next to its extension module without an
rpath.  The ``coburst-simgrid.pth`` file installed with coburst imports this module at
interpreter start-up; it registers a meta-path finder that, the first time ``simgrid`` is
imported, loads ``libsimgrid.so*`` from the extension's folder (RTLD_GLOBAL) so the
extension's dependency resolves.  Nothing heavy happens at start-up.
"""

from __future__ import annotations

import sys


class _SimgridPreloader:
    def find_spec(self, name, path=None, target=None):
        if name != "simgrid":
            return None
        sys.meta_path.remove(self)
        import ctypes
        import glob
        import importlib.util
        import os

        spec = importlib.util.find_spec("simgrid")
        if spec is not None and spec.origin:
            for lib in sorted(glob.glob(os.path.join(os.path.dirname(spec.origin), "libsimgrid.so*"))):
                try:
                    ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
                    break
                except OSError:
                    continue
        return spec


def install() -> None:
    if not any(isinstance(f, _SimgridPreloader) for f in sys.meta_path) and "simgrid" not in sys.modules:
        sys.meta_path.insert(0, _SimgridPreloader())


install()
