"""Names of a package loaded on first use (PEP 562), for start-up time.

A package lists which sub-module holds each public name; :func:`module_getattr` builds its
module-level ``__getattr__`` and :func:`load_class` its registry's family -> class lookup
(``coburst.core``, ``coburst.policies``, ``coburst.policies.cosched``,
``coburst.policies.hetero``)."""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Mapping, MutableMapping


def module_getattr(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving ``names`` (public name -> sub-module of ``package``):
    the sub-module is imported on the first use of one of its names, and the value kept in the
    package's namespace (later uses do not come back here)."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


def load_class(package: str, modules: Mapping[str, tuple[str, str]], cache: MutableMapping[str, type],
               family: str) -> type | None:
    """The class of a registry's ``family`` (``modules``: family -> (sub-module of ``package``,
    class name)), its module imported on first use and the class kept in ``cache``; None for
    a family neither cached nor listed."""
    cls = cache.get(family)
    if cls is None and family in modules:
        module, name = modules[family]
        cls = cache[family] = getattr(importlib.import_module(f"{package}.{module}"), name)
    return cls
