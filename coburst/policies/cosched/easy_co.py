"""The EASY co-scheduling family (Kellari 2025, §5.2.1-5.2.4; ELiSE paper, §3.6).

Jobs are placed **spread** (half of every socket on twice the nodes), so that a job finding a
half-free node is co-located with the job already there; nodes are taken in index order
("serial", as ELiSE: early on they are idle, as the machine fills up the half-free ones get
the next jobs).  Each policy reorders the waiting queue and backfills EASY-style behind its
head:

* EASY-Co: submission order;
* SJF-Co / LJF-Co: walltime, shortest / longest first;
* LAF-Co: largest area (requested cores x walltime) first.
"""

from __future__ import annotations

import numpy as np

from coburst.core.nodeshare import COMPACT, Board, CoJob, NodeSharingState
from coburst.policies.base import Param
from coburst.policies.cosched.base import BACKFILL_DEPTH, BACKFILL_RULE, CoPolicy
from coburst.policies.cosched.traditional import by_walltime

#: "serial": nodes in index order; "shared-first": half-free nodes (one job already there) in
#: index order, then idle ones (ELiSE's Random Ranks and Filler Co-Schedulers)
NODE_ORDERS = ("serial", "shared-first")
NODE_ORDER = Param("placement_order", str, "serial", lambda v: v in NODE_ORDERS,
                   "serial (nodes in index order) or shared-first (half-free nodes first, as ELiSE's "
                   "RandomRanksCoscheduler.host_alloc_condition)")


class EASYCo(CoPolicy):
    """EASY Co-schedule (Kellari 2025, §5.2.1; ELiSE's Random Ranks Co-Scheduler with
    backfilling): submission order, spread placements, EASY backfilling.

    ``placement_order = "shared-first"``: a spread job takes the half-free nodes first, then idle
    ones, each in index order, as ELiSE's co-schedulers do
    (``framework/realsim/scheduler/coschedulers/ranks/randomranks.py``,
    ``RandomRanksCoscheduler.host_alloc_condition`` = host not idle, hosts sorted by it,
    highest first, stably, in ``Scheduler.allocation``); "serial" (default): index order."""

    family = "easy-co"
    source = "Kellari 2025, §5.2.1"
    co = True
    params = (BACKFILL_DEPTH, BACKFILL_RULE, NODE_ORDER)

    def node_order(self, job: CoJob, mode: str, board: Board, state: NodeSharingState) -> np.ndarray | None:
        if mode == COMPACT or getattr(self, "placement_order", "serial") != "shared-first":
            return None
        return np.argsort(board.jobs_on == 0, kind="stable")


class SJFCo(EASYCo):
    """Shortest Job First Co-schedule (Kellari 2025, §5.2.2)."""

    family = "sjf-co"
    source = "Kellari 2025, §5.2.2"

    def order(self, state: NodeSharingState, board: Board) -> list[CoJob]:
        return by_walltime(state.queue)


class LJFCo(EASYCo):
    """Longest Job First Co-schedule (Kellari 2025, §5.2.3)."""

    family = "ljf-co"
    source = "Kellari 2025, §5.2.3"

    def order(self, state: NodeSharingState, board: Board) -> list[CoJob]:
        return by_walltime(state.queue, reverse=True)


class LAFCo(EASYCo):
    """Largest Area First Co-schedule (Kellari 2025, §5.2.4): requested cores x walltime,
    largest first (ties: submission order)."""

    family = "laf-co"
    source = "Kellari 2025, §5.2.4"

    def order(self, state: NodeSharingState, board: Board) -> list[CoJob]:
        return sorted(state.queue, key=lambda j: (-(j.res * j.walltime), j.seq))
