"""Policies for jobs that change size (moldable, malleable, evolving, adaptive) and their registry.

>>> from coburst.policies import elastic
>>> elastic.get("equipartition")
Equipartition()

:mod:`.equipartition`: ``equipartition`` (shrink to admit, expand when idle);
:mod:`.malleable_easy`: ``malleable-easy`` (EASY backfilling, shrinking malleable jobs to start
the head and growing them when idle); :mod:`.moldable_ect`: ``moldable-ect`` (each job takes the
size that completes it first); :mod:`.agreements`: ``agreements`` and its nine named strategies
(``min-common-pool``, ``pref-steal-agreement``, ...: shrunk nodes promised to waiting jobs);
:mod:`.bb_malleable`: ``bb-malleable-easy`` (malleable EASY that shrinks jobs to admit a job
waiting for burst-buffer space).  They decide
through :class:`coburst.policies.elastic.base.ElasticPolicy` ``schedule`` and run in process
with the simulator's elastic mode (:func:`coburst.adapter.elastic.run_elastic`).

This is the elastic family's table; :mod:`coburst.registry` puts it under the naming rule
(``elastic:NAME``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coburst.errors import InputError
from coburst.lazy import load_class, module_getattr

if TYPE_CHECKING:  # pragma: no cover
    from coburst.policies.base import Policy
    from coburst.policies.elastic.base import ElasticPolicy
    from coburst.policies.elastic.equipartition import Equipartition
    from coburst.policies.elastic.malleable_easy import MalleableEasy
    from coburst.policies.elastic.agreements import Agreements
    from coburst.policies.elastic.bb_malleable import BurstBufferMalleableEasy
    from coburst.policies.elastic.moldable_ect import MoldableECT

__all__ = ["get", "resolve", "families", "known", "ElasticPolicy", "Equipartition", "MalleableEasy", "MoldableECT", "Agreements",
           "BurstBufferMalleableEasy"]

#: family -> (module of coburst.policies.elastic, class name), in registration order
MODULES: dict[str, tuple[str, str]] = {
    "equipartition": ("equipartition", "Equipartition"),
    "malleable-easy": ("malleable_easy", "MalleableEasy"),
    "moldable-ect": ("moldable_ect", "MoldableECT"),
    "agreements": ("agreements", "Agreements"),
    "bb-malleable-easy": ("bb_malleable", "BurstBufferMalleableEasy"),
}
_LAZY = {cls: module for module, cls in MODULES.values()} | {"ElasticPolicy": "base"}
_FAMILIES: dict[str, type["Policy"]] = {}
#: other spellings
ALIASES: dict[str, tuple[str, dict[str, Any]]] = {
    "shrink-expand": ("equipartition", {}),
    # the nine strategies of Posner et al. 2023 by their published names
    **{f"{size}-{name}": ("agreements", {"size": size, "handler": handler})
       for size in ("min", "pref", "average")
       for name, handler in (("agreement", "direct"), ("common-pool", "pool"), ("steal-agreement", "steal"))},
}

__getattr__ = module_getattr(__name__, _LAZY)


def _family(family: str) -> type["Policy"]:
    return load_class(__name__, MODULES, _FAMILIES, family)


def families() -> dict[str, type["Policy"]]:
    """Family name -> class (imports every elastic policy module)."""
    return {family: _family(family) for family in MODULES}


def known(name: Any) -> bool:
    """Whether ``name`` is an elastic policy name (any case)."""
    return isinstance(name, str) and (name.lower() in MODULES or name.lower() in ALIASES)


def resolve(name: str) -> tuple[type["Policy"], dict[str, Any]]:
    if not isinstance(name, str):
        raise InputError("policy", None, f"policy name must be a string, got {name!r}")
    key = name.lower()
    if key in MODULES:
        return _family(key), {}
    if key in ALIASES:
        family, implied = ALIASES[key]
        return _family(family), dict(implied)
    raise InputError("policy", name, f"unknown elastic policy (known: {', '.join(list(MODULES) + list(ALIASES))})")


def get(name: str, **params: Any) -> "Policy":
    cls, implied = resolve(name)
    return cls(**{**params, **implied})
