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
"""

from __future__ import annotations

from typing import Any

from coburst.errors import InputError
from coburst.policies.base import Policy
from coburst.policies.hetero.astar import AStar
from coburst.policies.hetero.base import HeteroPolicy
from coburst.policies.hetero.heuristic import LABELS as HEURISTIC_LABELS
from coburst.policies.hetero.heuristic import Heuristic
from coburst.policies.hetero.minmin import Duplex, MaxMin, MinMin

__all__ = ["get", "resolve", "families", "HeteroPolicy", "MinMin", "MaxMin", "Duplex", "AStar", "Heuristic"]

_FAMILIES: dict[str, type[Policy]] = {cls.family: cls for cls in (MinMin, MaxMin, Duplex, AStar, Heuristic)}
#: other spellings: IRMaSim's option names and A* without the star
ALIASES: dict[str, tuple[str, dict[str, Any]]] = {
    "min_min": ("min-min", {}), "max_min": ("max-min", {}), "a*": ("astar", {}), "a-star": ("astar", {}),
    **{label: ("heuristic", {"job_selection": j, "node_selection": n}) for label, (j, n) in HEURISTIC_LABELS.items()},
}


def families() -> dict[str, type[Policy]]:
    return dict(_FAMILIES)


def resolve(name: str) -> tuple[type[Policy], dict[str, Any]]:
    """Policy class and label-implied parameters (``"shortest_fastest"`` -> ``(Heuristic,
    {"job_selection": "shortest", "node_selection": "high_gflops"})``)."""
    if not isinstance(name, str):
        raise InputError("policy", None, f"policy name must be a string, got {name!r}")
    key = name.lower()
    if key in _FAMILIES:
        return _FAMILIES[key], {}
    if key in ALIASES:
        family, implied = ALIASES[key]
        return _FAMILIES[family], dict(implied)
    known = ", ".join(list(_FAMILIES) + list(ALIASES))
    raise InputError("policy", name, f"unknown heterogeneous-cluster policy (known: {known})")


def get(name: str, **params: Any) -> Policy:
    cls, implied = resolve(name)
    for key, value in implied.items():
        if key in params and params[key] != value:
            raise InputError("policy", name, f"label says {key} {value!r} but {key}={params[key]!r} was given")
    return cls(**{**params, **implied})
