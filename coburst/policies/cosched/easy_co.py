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

from coburst.core.nodeshare import Board, CoJob, NodeSharingState
from coburst.policies.cosched.base import CoPolicy
from coburst.policies.cosched.traditional import by_walltime


class EASYCo(CoPolicy):
    """EASY Co-schedule (Kellari 2025, §5.2.1; ELiSE's EASY Co-Scheduler): submission order,
    spread placements, EASY backfilling."""

    family = "easy-co"
    source = "Kellari 2025, §5.2.1"
    co = True


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
