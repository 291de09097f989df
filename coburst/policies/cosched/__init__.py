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
"""

from __future__ import annotations

from typing import Any

from coburst.errors import InputError
from coburst.policies.cosched.base import CoPolicy
from coburst.policies.cosched.easy_co import EASYCo, LAFCo, LJFCo, SJFCo
from coburst.policies.cosched.fcs import FCS
from coburst.policies.cosched.filler import Filler, PopFiller, SJFFiller
from coburst.policies.cosched.pair_greedy import PairGreedy
from coburst.policies.cosched.popularity import Popularity
from coburst.policies.cosched.traditional import EASY, FCFS, LJF, SJF, Conservative

__all__ = ["get", "resolve", "families", "CoPolicy", "FCFS", "EASY", "Conservative", "SJF", "LJF", "EASYCo",
           "SJFCo", "LJFCo", "LAFCo", "Popularity", "Filler", "SJFFiller", "PopFiller", "PairGreedy", "FCS",
           "LABELS"]

_FAMILIES: dict[str, type[CoPolicy]] = {cls.family: cls for cls in (
    FCFS, EASY, Conservative, SJF, LJF, EASYCo, SJFCo, LJFCo, LAFCo, Popularity, Filler, SJFFiller, PopFiller,
    PairGreedy, FCS)}

#: Kellari's labels (Tables 6.1-6.2) -> family
LABELS = {"FCFS": "fcfs", "EASY": "easy", "Conservative": "conservative", "SJF": "sjf", "LJF": "ljf",
          "EASY-Co": "easy-co", "SJF-Co": "sjf-co", "LJF-Co": "ljf-co", "LAF-Co": "laf-co",
          "Popularity": "popularity", "Filler": "filler", "SJF-Filler": "sjf-filler",
          "Pop-Filler": "pop-filler", "Pair-Greedy": "pair-greedy", "FCS": "fcs"}


def families() -> dict[str, type[CoPolicy]]:
    return dict(_FAMILIES)


def resolve(name: str) -> tuple[type[CoPolicy], dict[str, Any]]:
    """Policy class of a family name (``"easy-co"``) or a thesis label (``"EASY-Co"``)."""
    if not isinstance(name, str):
        raise InputError("policy", None, f"policy name must be a string, got {name!r}")
    cls = _FAMILIES.get(LABELS.get(name, name))
    if cls is None:
        raise InputError("policy", name, f"unknown co-scheduling policy (known: {', '.join(_FAMILIES)})")
    return cls, {}


def get(name: str, **params: Any) -> CoPolicy:
    cls, _ = resolve(name)
    return cls(**params)
