"""Make a plain ``import simgrid`` work in a coburst environment.

coburst runs on either of two SimGrid Python bindings:

* the environment's own ``simgrid`` module: SimGrid 4.1's wheel (the ``simgrid`` extra, built
  from its sdist), which installs ``libsimgrid.so.4.1`` next to its extension module without
  an rpath: that library is loaded first (RTLD_GLOBAL) so the extension's dependency resolves;
* otherwise the distribution's: Debian's ``python3-simgrid`` (SimGrid 3.32, the library the
  real Batsim 4.2.1 runs on), whose extension module sits in ``/usr/lib/python3/dist-packages``.
  Only that one file is imported from there (the folder is not put on ``sys.path``), when it
  was built for this interpreter (same extension suffix); :mod:`coburst._simgrid_compat` then
  adds what coburst uses of SimGrid 4.1's binding.

The ``coburst-simgrid.pth`` file installed with coburst imports this module at interpreter
start-up; it registers a meta-path finder that does the above when ``simgrid`` is
imported.  Nothing heavy happens at start-up.
"""

from __future__ import annotations

import os
import sys

#: folders where a distribution installs its Python 3 extension modules (Debian, Ubuntu)
SYSTEM_FOLDERS = ("/usr/lib/python3/dist-packages",)


def _suffix() -> str:
    import importlib.machinery

    return importlib.machinery.EXTENSION_SUFFIXES[0]  # e.g. ".cpython-311-x86_64-linux-gnu.so"


def system_extension() -> str | None:
    """The distribution's SimGrid extension module built for this interpreter, if any."""
    name = "simgrid" + _suffix()
    for folder in SYSTEM_FOLDERS:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    return None


def extension_path() -> str | None:
    """The SimGrid extension module ``import simgrid`` loads here, without importing it."""
    module = sys.modules.get("simgrid")
    if module is not None and getattr(module, "__file__", None):
        return module.__file__
    import importlib.machinery

    spec = importlib.machinery.PathFinder.find_spec("simgrid")
    if spec is not None and spec.origin:
        return spec.origin
    return system_extension()


def _loader_class():
    import importlib.machinery

    class _Loader(importlib.machinery.ExtensionFileLoader):
        """Loads the extension, then adds what coburst uses of SimGrid 4.1's binding."""

        def exec_module(self, module):
            super().exec_module(module)
            from coburst._simgrid_compat import patch

            patch(module)

    return _Loader


class _SimgridPreloader:
    """Stays on ``sys.meta_path``: a ``find_spec`` that is not followed by an import (e.g.
    ``importlib.util.find_spec("simgrid")`` to test for the binding) must not take away the next
    real import's way to the module.  The library is preloaded once."""

    def __init__(self):
        self._preloaded = False

    def find_spec(self, name, path=None, target=None):
        if name != "simgrid":
            return None
        import ctypes
        import glob
        import importlib.machinery
        import importlib.util

        spec = importlib.machinery.PathFinder.find_spec("simgrid")
        if spec is not None and spec.origin:
            if not self._preloaded:
                self._preloaded = True
                for lib in sorted(glob.glob(os.path.join(os.path.dirname(spec.origin), "libsimgrid.so*"))):
                    try:
                        ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
                        break
                    except OSError:
                        continue
            if not spec.origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
                return spec
            origin = spec.origin
        else:
            origin = system_extension()
            if origin is None:
                return None
        return importlib.util.spec_from_file_location("simgrid", origin, loader=_loader_class()("simgrid", origin))


def install() -> None:
    if not any(isinstance(f, _SimgridPreloader) for f in sys.meta_path) and "simgrid" not in sys.modules:
        sys.meta_path.insert(0, _SimgridPreloader())


install()
