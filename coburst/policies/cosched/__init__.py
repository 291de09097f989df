"""Node-sharing (co-)scheduling policies and their registry (Kellari 2025, Ch. 5; ELiSE).

>>> from coburst.policies import cosched
>>> cosched.get("easy-co")
EASYCo(backfill_depth=100, backfill_rule='easy', placement_order='serial')

Traditional, compact (:mod:`.traditional`): ``fcfs``, ``easy``, ``conservative``, ``sjf``,
``ljf``.  Co-scheduling, spread (:mod:`.easy_co`): ``easy-co``, ``sjf-co``, ``ljf-co``,
``laf-co``; :mod:`.popularity`: ``popularity``; :mod:`.filler`: ``filler``, ``sjf-filler``,
``pop-filler`` (``sort_depth``: partial-queue variants); :mod:`.pair_greedy`:
``pair-greedy``; :mod:`.fcs`: ``fcs`` (Kuchumov & Korkhov 2021, §4.2, Listing 1, on the
cluster).  They run on node-sharing platforms (``coburst platform cosched``) through
:class:`coburst.adapter.cosched.CoschedScheduler` (entry files ``schedulers/cosched*.py``).

The registry names each family's module and class (:data:`MODULES`) and imports a policy's
module when its name is resolved (start-up time of a run of one policy);
``tests/test_startup.py`` checks the table against the classes.

This is the co-scheduling family's table and its spellings; :mod:`coburst.registry` puts the
three families and the plugins under one naming rule (``cosched:NAME``: ``cosched:fcfs`` is
the compact FCFS above, bare ``fcfs`` the burst-buffer one unless the platform shares nodes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coburst.errors import InputError
from coburst.lazy import load_class, module_getattr

if TYPE_CHECKING:  # pragma: no cover - names for type checkers; loaded on first use at run time
    from coburst.policies.cosched.base import CoPolicy
    from coburst.policies.cosched.easy_co import EASYCo, LAFCo, LJFCo, SJFCo
    from coburst.policies.cosched.fcs import FCS
    from coburst.policies.cosched.filler import Filler, PopFiller, SJFFiller
    from coburst.policies.cosched.pair_greedy import PairGreedy
    from coburst.policies.cosched.popularity import Popularity
    from coburst.policies.cosched.traditional import EASY, FCFS, LJF, SJF, Conservative

__all__ = ["get", "resolve", "families", "known", "CoPolicy", "FCFS", "EASY", "Conservative", "SJF", "LJF",
           "EASYCo", "SJFCo", "LJFCo", "LAFCo", "Popularity", "Filler", "SJFFiller", "PopFiller", "PairGreedy",
           "FCS", "LABELS"]

#: family -> (module of coburst.policies.cosched, class name), in registration order
MODULES: dict[str, tuple[str, str]] = {
    "fcfs": ("traditional", "FCFS"),
    "easy": ("traditional", "EASY"),
    "conservative": ("traditional", "Conservative"),
    "sjf": ("traditional", "SJF"),
    "ljf": ("traditional", "LJF"),
    "easy-co": ("easy_co", "EASYCo"),
    "sjf-co": ("easy_co", "SJFCo"),
    "ljf-co": ("easy_co", "LJFCo"),
    "laf-co": ("easy_co", "LAFCo"),
    "popularity": ("popularity", "Popularity"),
    "filler": ("filler", "Filler"),
    "sjf-filler": ("filler", "SJFFiller"),
    "pop-filler": ("filler", "PopFiller"),
    "pair-greedy": ("pair_greedy", "PairGreedy"),
    "fcs": ("fcs", "FCS"),
}
#: module-level names served on first use (PEP 562)
_LAZY = {cls: module for module, cls in MODULES.values()} | {"CoPolicy": "base"}
_FAMILIES: dict[str, type[CoPolicy]] = {}

#: Kellari's labels (Tables 6.1-6.2) -> family
LABELS = {"FCFS": "fcfs", "EASY": "easy", "Conservative": "conservative", "SJF": "sjf", "LJF": "ljf",
          "EASY-Co": "easy-co", "SJF-Co": "sjf-co", "LJF-Co": "ljf-co", "LAF-Co": "laf-co",
          "Popularity": "popularity", "Filler": "filler", "SJF-Filler": "sjf-filler",
          "Pop-Filler": "pop-filler", "Pair-Greedy": "pair-greedy", "FCS": "fcs"}


__getattr__ = module_getattr(__name__, _LAZY)


def _family(family: str) -> type[CoPolicy] | None:
    return load_class(__name__, MODULES, _FAMILIES, family)


def families() -> dict[str, type[CoPolicy]]:
    """Family name -> class (imports every co-scheduling policy module)."""
    return {family: _family(family) for family in MODULES}


def known(name: Any) -> bool:
    """Whether ``name`` is a co-scheduling policy name (family or Kellari's label)."""
    return isinstance(name, str) and LABELS.get(name, name) in MODULES


def resolve(name: str) -> tuple[type[CoPolicy], dict[str, Any]]:
    """Policy class of a family name (``"easy-co"``) or a thesis label (``"EASY-Co"``)."""
    if not isinstance(name, str):
        raise InputError("policy", None, f"policy name must be a string, got {name!r}")
    cls = _family(LABELS.get(name, name))
    if cls is None:
        raise InputError("policy", name, f"unknown co-scheduling policy (known: {', '.join(MODULES)})")
    return cls, {}


def get(name: str, **params: Any) -> CoPolicy:
    cls, _ = resolve(name)
    return cls(**params)
