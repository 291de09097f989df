"""Scheduling policies, one module per algorithm family, and their registry.

>>> from coburst import policies
>>> policies.get("backfill-sjf-1")            # thesis label: family + depth
BackfillSJF(depth=1)
>>> policies.get("backfill-sjf", depth=1)      # family + parameters
BackfillSJF(depth=1)

Families: ``fcfs`` (Kopański 2020 Alg. 1), ``filler`` (Alg. 2), ``filler-sjf`` (§4.7),
``no-future-D`` (Alg. 3), ``backfill-D`` (Alg. 4), ``backfill-sjf-D`` (Alg. 5),
``conservative`` (conservative backfilling with BB reservations), and the optimisers
``maxutil-beta-D`` (Alg. 6; label with the balance factor: ``maxutil-1.0-1``), ``window-D``
(Alg. 7) and ``plan-{sum,square,cube,start}-D`` (Alg. 8).  EASY backfilling is
``backfill-1`` (alias ``easy``; ``easy-sjf`` is ``backfill-sjf-1``).

The registry names each family's module and class (:data:`MODULES`) and imports a policy's
module when its name is resolved (a run of one policy, or of a pybatsim scheduler, does not
import them all: start-up time); ``tests/test_startup.py`` checks the table against
the classes.

This is the burst-buffer family's table and its spellings; :mod:`coburst.registry` puts the
three families and the plugins under one naming rule (``bb:NAME``) and is what the commands,
the adapters and the entry files look names up in.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from coburst.errors import InputError
from coburst.lazy import load_class, module_getattr

if TYPE_CHECKING:  # pragma: no cover - names for type checkers; loaded on first use at run time
    from coburst.policies.backfill import Backfill, BackfillSJF, NoFuture
    from coburst.policies.base import Param, Policy
    from coburst.policies.conservative import Conservative
    from coburst.policies.fcfs import FCFS
    from coburst.policies.filler import Filler, FillerSJF
    from coburst.policies.maxutil import MaxUtil
    from coburst.policies.plan import PlanCube, PlanSquare, PlanStart, PlanSum
    from coburst.policies.window import Window

__all__ = ["get", "resolve", "families", "register", "known", "Policy", "Param", "FCFS", "Filler", "FillerSJF",
           "Backfill", "BackfillSJF", "NoFuture", "Conservative", "MaxUtil", "Window", "PlanSum", "PlanSquare",
           "PlanCube", "PlanStart"]

#: family -> (module of coburst.policies, class name), in registration order
MODULES: dict[str, tuple[str, str]] = {
    "fcfs": ("fcfs", "FCFS"),
    "filler": ("filler", "Filler"),
    "filler-sjf": ("filler", "FillerSJF"),
    "backfill": ("backfill", "Backfill"),
    "backfill-sjf": ("backfill", "BackfillSJF"),
    "no-future": ("backfill", "NoFuture"),
    "conservative": ("conservative", "Conservative"),
    "maxutil": ("maxutil", "MaxUtil"),
    "window": ("window", "Window"),
    "plan-sum": ("plan", "PlanSum"),
    "plan-square": ("plan", "PlanSquare"),
    "plan-cube": ("plan", "PlanCube"),
    "plan-start": ("plan", "PlanStart"),
}
#: module-level names served on first use (PEP 562): the classes above and base's Param/Policy
_LAZY = {cls: module for module, cls in MODULES.values()} | {"Param": "base", "Policy": "base"}

#: classes registered by :func:`register` (and the table's, once imported)
_FAMILIES: dict[str, type[Policy]] = {}

#: other names: EASY backfilling is backfill-1 (Kopański 2020, Alg. 4 with D = 1)
ALIASES: dict[str, tuple[str, dict[str, Any]]] = {
    "easy": ("backfill", {"depth": 1}),
    "easy-sjf": ("backfill-sjf", {"depth": 1}),
}


__getattr__ = module_getattr(__name__, _LAZY)


def register(cls: type[Policy]) -> type[Policy]:
    """Add a policy class to the registry under ``cls.family`` (usable as a decorator)."""
    if not cls.family:
        raise ValueError(f"{cls.__name__} has no family name")
    _FAMILIES[cls.family] = cls
    return cls


def _family(family: str) -> type[Policy] | None:
    """The class of a registered family name (its module imported on first use), else None."""
    return load_class(__name__, MODULES, _FAMILIES, family)


def _names() -> list[str]:
    return list(dict.fromkeys([*MODULES, *_FAMILIES]))


def families() -> dict[str, type[Policy]]:
    """Registered family name -> class (imports every policy module)."""
    return {family: _family(family) for family in _names()}


def _takes(cls: type[Policy], name: str) -> bool:
    return any(p.name == name for p in cls.params)


def _takes_depth(cls: type[Policy]) -> bool:
    return _takes(cls, "depth")


def _label(family: str, cls: type[Policy]) -> str:
    if _takes(cls, "beta") and cls.family == "maxutil":
        return f"{family}-beta-D"
    return f"{family}-D" if _takes_depth(cls) else family


def _lookup(name: str) -> tuple[type[Policy], dict[str, Any]] | None:
    cls = _family(name)
    if cls is not None:
        return cls, {}
    if name in ALIASES:
        family, implied = ALIASES[name]
        return _family(family), dict(implied)
    m = re.fullmatch(r"(.+)-(\d+)", name)
    if m and m.group(1) in _names() and _takes_depth(_family(m.group(1))):
        return _family(m.group(1)), {"depth": int(m.group(2))}
    m = re.fullmatch(r"(.+)-(\d+(?:\.\d*)?|\.\d+)-(\d+)", name)  # family-beta-depth (maxutil-1.0-1)
    if m and m.group(1) in _names():
        cls = _family(m.group(1))
        if _takes(cls, "beta") and _takes_depth(cls):
            return cls, {"beta": float(m.group(2)), "depth": int(m.group(3))}
    return None


def known(name: Any) -> bool:
    """Whether ``name`` is a policy name :func:`resolve` accepts (imports only its module)."""
    return isinstance(name, str) and _lookup(name) is not None


def resolve(name: str) -> tuple[type[Policy], dict[str, Any]]:
    """Policy class and label-implied parameters of a name: ``"backfill-sjf-1"`` ->
    ``(BackfillSJF, {"depth": 1})``, ``"fcfs"`` -> ``(FCFS, {})``, ``"maxutil-1.0-1"`` ->
    ``(MaxUtil, {"beta": 1.0, "depth": 1})``."""
    if not isinstance(name, str):
        raise InputError("policy", None, f"policy name must be a string, got {name!r}")
    found = _lookup(name)
    if found is not None:
        return found
    known_names = ", ".join([_label(f, c) for f, c in sorted(families().items())] + list(ALIASES))
    raise InputError("policy", name, f"unknown policy (known: {known_names})")


def get(name: str, **params: Any) -> Policy:
    """Policy instance from a family name (``"backfill-sjf"``) or a thesis label whose last
    field is the reservation depth (``"backfill-sjf-1"``), plus parameters."""
    cls, implied = resolve(name)
    for key, value in implied.items():
        if key in params and params[key] != value:
            raise InputError("policy", name, f"label says {key} {value} but {key}={params[key]!r} was given")
    return cls(**{**params, **implied})
