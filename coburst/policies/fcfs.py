"""First-Come-First-Served without backfilling (Kopański 2020, Algorithm 1)."""

from __future__ import annotations

from coburst.core.decisions import Decisions
from coburst.core.state import SchedulerState
from coburst.policies.base import Policy, start_in_order

__all__ = ["FCFS"]


class FCFS(Policy):
    """Kopański 2020, Alg. 1: start waiting jobs in submission order while both their
    compute nodes and their burst buffers are available now; stop at the first job that
    cannot start.  Jobs start in submission order."""

    family = "fcfs"
    source = "Kopański 2020, Alg. 1"

    def make_decisions(self, state: SchedulerState) -> Decisions:
        decisions = Decisions(state.now)
        start_in_order(self.availability(state), state.queue, decisions)
        return decisions
