"""EASY backfilling with a reservation depth, with and without burst-buffer reservations.

Kopański 2020, Chapter 3.1:

* ``backfill-D`` (Algorithm 4): FCFS, then the first ``D`` waiting jobs get, in FIFO order,
  a reservation of compute nodes **and** burst buffers at their earliest date; the other
  jobs are then started greedily (Algorithm 2) wherever they do not touch a reservation.
* ``backfill-sjf-D`` (Algorithm 5): the same, the backfilled jobs taken by ascending
  walltime (ties: submission order); the FCFS phase and the reservations stay FIFO.
* ``no-future-D`` (Algorithm 3): the reservations hold compute nodes only, so backfilled
  jobs may take the burst buffers a reserved job will need (Slurm-like; can starve wide
  jobs, §4.2).

Depth ``D >= 0``; ``backfill-0`` is greedy filling (``filler``), ``backfill-sjf-0`` is
``filler-sjf`` (§4.7).  EASY backfilling of jobs without BB requests is ``backfill-1``.

Reservations are recomputed from scratch at every call (the algorithms' "remove
reservations" step), on :meth:`SchedulerState.mask_profile` (the availability profile as
bit masks: the same answers as the numpy profile, cheaper per query on ~100 nodes).  A reservation that begins now is a start.  With BB reservations, the
first reserved job (the head of the queue after the FCFS step) never starts later than the
reservation it was given (jobs end at the latest at their walltime); with ``D >= 2`` the
later reservations may slip when the rebuilt plan moves the jobs before them to other nodes
(tests/test_policies.py, tests/test_invariants_sim.py).
"""

from __future__ import annotations

from typing import ClassVar, Sequence

from coburst.core.decisions import Decisions
from coburst.core.state import Job, SchedulerState
from coburst.policies.base import Param, Policy, fill, reserve, start_in_order

__all__ = ["Backfill", "BackfillSJF", "NoFuture"]

DEPTH = Param("depth", int, 1, lambda d: d >= 0, "reservation depth, an integer >= 0")


class Backfill(Policy):
    """Kopański 2020, Alg. 4: EASY backfilling with compute and burst-buffer reservations
    for the first ``depth`` waiting jobs (FCFS order for backfilling)."""

    family = "backfill"
    source = "Kopański 2020, Alg. 4"
    params = (DEPTH,)
    reserve_storage: ClassVar[bool] = True

    @property
    def keeps_reservations(self) -> str:  # type: ignore[override]
        """One reservation is kept; with ``depth >= 2`` only the first (module doc)."""
        return "all" if self.depth <= 1 else "first"

    def backfill_order(self, jobs: Sequence[Job]) -> Sequence[Job]:
        """Order in which jobs behind the reserved ones are tried (FIFO here)."""
        return jobs

    def make_decisions(self, state: SchedulerState) -> Decisions:
        decisions = Decisions(state.now)
        queue = state.queue
        if not queue:  # nothing to start or reserve: no profile needed
            return decisions
        profile = self.availability(state)
        waiting = start_in_order(profile, queue, decisions)
        depth = self.depth
        for job in waiting[:depth]:
            reserve(profile, job, decisions, storage=self.reserve_storage)
        fill(profile, self.backfill_order(waiting[depth:]), decisions)
        return decisions


class BackfillSJF(Backfill):
    """Kopański 2020, Alg. 5: as :class:`Backfill`, backfilled jobs by ascending walltime."""

    family = "backfill-sjf"
    source = "Kopański 2020, Alg. 5"

    def backfill_order(self, jobs: Sequence[Job]) -> Sequence[Job]:
        return sorted(jobs, key=lambda j: j.walltime)  # stable: submission order on ties


class NoFuture(Backfill):
    """Kopański 2020, Alg. 3: as :class:`Backfill`, reservations without burst buffers."""

    family = "no-future"
    source = "Kopański 2020, Alg. 3"
    reserve_storage = False
    keeps_reservations = None  # backfilled jobs may take the burst buffers a reserved job needs
