"""Smallest-area-first backfilling: an example coburst policy plugin.

The waiting queue is ordered by *area* -- requested nodes x walltime, node-seconds -- minus an
optional ageing credit, smallest first (a size-based priority).  Jobs start in that order
while they fit now (compute nodes and burst buffers, with coburst's placement); the first
``depth`` that do not fit get a reservation at their earliest date, as in EASY backfilling
(Lifka 1995); every later job is then started wherever it fits without touching a
reservation.  Ties: submission order.

The class only uses the steps of :mod:`coburst.policies.base` and returns
:class:`~coburst.core.decisions.Decisions`: the adapter, the simulator and the real Batsim
are coburst's.
"""

from __future__ import annotations

from coburst.core.decisions import Decisions
from coburst.core.state import SchedulerState
from coburst.policies.base import Param, Policy, fill, reserve, start_in_order

__all__ = ["SmallestAreaFirst"]


class SmallestAreaFirst(Policy):
    """Smallest area first with ``depth`` EASY-style reservations (Lifka 1995) and
    backfilling.  The reserved job is the smallest that does not fit now, so a reservation is
    not a promise across decisions: a smaller job arriving later takes the head (``ageing`` > 0
    lets waiting jobs catch up)."""

    family = "smallest-area-first"
    source = "smallest area first (nodes x walltime) with EASY reservations (Lifka 1995)"
    params = (
        Param("depth", int, 1, lambda d: d >= 0, "jobs given a reservation (an integer >= 0)"),
        Param("ageing", (int, float), 0.0, lambda a: a >= 0,
              "nodes of area credit per second of waiting (>= 0; 0: area alone)"),
    )

    def priority(self, job, now: float) -> float:
        """The job's area (node-seconds) minus its ageing credit; smaller runs first."""
        return job.res * job.walltime - self.ageing * job.res * (now - job.subtime)

    def make_decisions(self, state: SchedulerState) -> Decisions:
        decisions = Decisions(state.now)
        queue = state.queue
        if not queue:
            return decisions
        now = state.now
        order = sorted(queue, key=lambda j: self.priority(j, now))  # stable: submission order on ties
        profile = self.availability(state)
        waiting = start_in_order(profile, order, decisions)
        for job in waiting[:self.depth]:
            reserve(profile, job, decisions)
        fill(profile, waiting[self.depth:], decisions)
        return decisions
