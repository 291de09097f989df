"""Conservative backfilling with burst-buffer reservations.

Every waiting job, in submission order, is given a reservation of compute nodes and
burst buffers at the earliest date that does not disturb the reservations of the jobs
before it (Mu'alem & Feitelson 2001; Kopański 2020 §1.7.2 and the execution plan of §3.4
in FCFS order).  Jobs whose reservation begins now are started.  The plan is rebuilt at
every call, so it compresses when jobs end early.
"""

from __future__ import annotations

from coburst.core.decisions import Decisions
from coburst.core.state import SchedulerState
from coburst.policies.base import Policy, reserve

__all__ = ["Conservative"]


class Conservative(Policy):
    """Mu'alem & Feitelson 2001 conservative backfilling, with BB reservations (Kopański
    2020 §1.7.2, §3.4): a reservation for every waiting job, in submission order."""

    family = "conservative"
    source = "Mu'alem & Feitelson 2001; Kopański 2020 §1.7.2"
    keeps_reservations = "first"  # the plan is rebuilt at every call: later reservations may slip

    def make_decisions(self, state: SchedulerState) -> Decisions:
        decisions = Decisions(state.now)
        profile = self.availability(state)
        for job in state.queue:
            reserve(profile, job, decisions)
        return decisions
