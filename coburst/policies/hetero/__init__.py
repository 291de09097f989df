"""Heterogeneous-cluster mapping policies and their registry (Sánchez Sousa 2023, Ch. 3-4).

>>> from coburst.policies import hetero
>>> hetero.get("duplex")
Duplex(mapping='queue')
>>> hetero.get("shortest_fastest")
Heuristic(job_selection='shortest', node_selection='high_gflops', seed=0, mapping='deferred')

Batch mapping (:mod:`.minmin`): ``min-min``, ``max-min``, ``duplex``; :mod:`.astar`:
``astar`` (``max_vertices``, default 128); :mod:`.heuristic`: ``heuristic``
(``job_selection`` x ``node_selection``, and IRMaSim's named combinations
``shortest_fastest``, ``longest_fastest``, ``mct``, ``first_first``, ``full_random``).
Every policy takes ``mapping`` = ``"queue"`` (per-node queues at submission, the thesis) or
``"deferred"`` (see :mod:`.base`).  They run on heterogeneous platforms (``coburst platform
hetero``) through :class:`coburst.adapter.hetero.HeteroScheduler` (entry files
``schedulers/hetero*.py``).

The registry names each family's module and class (:data:`MODULES`) and imports a policy's
module when its name is resolved; ``tests/test_startup.py`` checks the table (and
:data:`HEURISTIC_LABELS`) against the modules.

This is the heterogeneous-mapping family's table and its spellings; :mod:`coburst.registry`
puts the three families and the plugins under one naming rule (``hetero:NAME``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coburst.errors import InputError
from coburst.lazy import load_class, module_getattr

if TYPE_CHECKING:  # pragma: no cover - names for type checkers; loaded on first use at run time
    from coburst.policies.base import Policy
    from coburst.policies.hetero.astar import AStar
    from coburst.policies.hetero.base import HeteroPolicy
    from coburst.policies.hetero.heuristic import Heuristic
    from coburst.policies.hetero.minmin import Duplex, MaxMin, MinMin

__all__ = ["get", "resolve", "families", "known", "HeteroPolicy", "MinMin", "MaxMin", "Duplex", "AStar",
           "Heuristic"]

#: family -> (module of coburst.policies.hetero, class name), in registration order
MODULES: dict[str, tuple[str, str]] = {
    "min-min": ("minmin", "MinMin"),
    "max-min": ("minmin", "MaxMin"),
    "duplex": ("minmin", "Duplex"),
    "astar": ("astar", "AStar"),
    "heuristic": ("heuristic", "Heuristic"),
}
#: module-level names served on first use (PEP 562)
_LAZY = {cls: module for module, cls in MODULES.values()} | {"HeteroPolicy": "base"}
_FAMILIES: dict[str, type[Policy]] = {}

#: IRMaSim's named combinations (a copy of :data:`coburst.policies.hetero.heuristic.LABELS`,
#: kept here so that resolving a name imports no policy module; a test checks they agree)
HEURISTIC_LABELS = {"shortest_fastest": ("shortest", "high_gflops"), "longest_fastest": ("longest", "high_gflops"),
                    "mct": ("first", "high_gflops"), "first_first": ("first", "first"),
                    "full_random": ("random", "random")}
#: other spellings: IRMaSim's option names and A* without the star
ALIASES: dict[str, tuple[str, dict[str, Any]]] = {
    "min_min": ("min-min", {}), "max_min": ("max-min", {}), "a*": ("astar", {}), "a-star": ("astar", {}),
    **{label: ("heuristic", {"job_selection": j, "node_selection": n}) for label, (j, n) in HEURISTIC_LABELS.items()},
}


__getattr__ = module_getattr(__name__, _LAZY)


def _family(family: str) -> type[Policy]:
    return load_class(__name__, MODULES, _FAMILIES, family)


def families() -> dict[str, type[Policy]]:
    """Family name -> class (imports every heterogeneous-cluster policy module)."""
    return {family: _family(family) for family in MODULES}


def known(name: Any) -> bool:
    """Whether ``name`` is a heterogeneous-cluster policy name (any case)."""
    return isinstance(name, str) and (name.lower() in MODULES or name.lower() in ALIASES)


def resolve(name: str) -> tuple[type[Policy], dict[str, Any]]:
    """Policy class and label-implied parameters (``"shortest_fastest"`` -> ``(Heuristic,
    {"job_selection": "shortest", "node_selection": "high_gflops"})``)."""
    if not isinstance(name, str):
        raise InputError("policy", None, f"policy name must be a string, got {name!r}")
    key = name.lower()
    if key in MODULES:
        return _family(key), {}
    if key in ALIASES:
        family, implied = ALIASES[key]
        return _family(family), dict(implied)
    known_names = ", ".join(list(MODULES) + list(ALIASES))
    raise InputError("policy", name, f"unknown heterogeneous-cluster policy (known: {known_names})")


def get(name: str, **params: Any) -> Policy:
    cls, implied = resolve(name)
    for key, value in implied.items():
        if key in params and params[key] != value:
            raise InputError("policy", name, f"label says {key} {value!r} but {key}={params[key]!r} was given")
    return cls(**{**params, **implied})
