"""Malleable EASY backfilling: EASY with malleable jobs shrunk to start the queue's head and
grown into idle nodes.

Sources: EASY backfilling (Lifka, "The ANL/IBM SP scheduling system", JSSPP 1995; Mu'alem &
Feitelson, IEEE TPDS 12(6), 2001); its malleable variant follows the shrink-to-start and
expand-when-idle rules of Prabhakaran et al., "A batch system with efficient adaptive
scheduling for malleable and evolving applications", IPDPS 2015.  The rules below are this
reading of them on ElastiSim's job model (resizes take effect at the jobs' scheduling points):

1. **requests**: an evolving or adaptive job asking to shrink is granted; asking to grow, it
   gets what is free (clipped) when no job waits, and is refused otherwise;
2. **start in order**: the head of the queue starts when its smallest size fits the free
   resources, on its requested size (``res``, within its bounds) or, for a moldable, malleable
   or adaptive job, on what is free if that is less;
3. **shrink to start the head**: when the head does not fit, running malleable or adaptive jobs
   get targets that free just what it lacks, taken from the jobs with the most resources above
   their minimum first (applied at their next scheduling point), when shrinking them to their
   minimums would be enough;
4. **reservation and backfilling**: the head's reservation is the earliest date at which the
   free resources and those of running jobs ending by their walltimes (``start + walltime``; a
   job without walltime never ends, for this estimate) reach its smallest size; a later job
   starts now, on its requested size or less, if it fits the free resources and either ends
   (by its walltime) before the reservation or takes no more than the resources the head
   leaves at that date (the *extra* ones);
5. **expand when idle**: with no job waiting, the malleable and adaptive jobs at a scheduling
   point (and not resized by this decision) share the free resources equally, up to their
   maximums.
"""

from __future__ import annotations

from typing import ClassVar

from coburst.policies.elastic.base import Decisions, EJob, ElasticState
from coburst.policies.elastic.rules import (TargetPolicy, apply_targets, expand_when_idle, may_backfill,
                                            reservation)

__all__ = ["MalleableEasy"]


def _start_size(job: EJob, free: int) -> int:
    """The size ``job`` starts on with ``free`` resources free (0: it does not fit)."""
    lo, hi = job.start_sizes()
    want = min(max(job.res, lo), hi)
    if free >= want:
        return want
    return free if free >= lo and lo < want else 0


class MalleableEasy(TargetPolicy):
    """EASY backfilling that shrinks malleable jobs to start the head and grows them when idle."""

    family: ClassVar[str] = "malleable-easy"
    source: ClassVar[str] = ("Lifka 1995 (EASY, JSSPP); Mu'alem & Feitelson 2001 (IEEE TPDS 12(6)); "
                             "Prabhakaran et al. 2015 (IPDPS, malleable shrink and expand)")
    params = ()

    def schedule(self, state: ElasticState, d: Decisions) -> None:
        self.begin(state, d)
        self._start_in_order(state, d)
        if state.queue:
            self._set_targets(state, state.queue[0])
            apply_targets(state, d, self.targets)
            self._start_in_order(state, d)
        if state.queue:
            self._backfill(state, d)
        else:
            self._expand(state, d)

    def _expand(self, state: ElasticState, d: Decisions) -> None:
        expand_when_idle(state, d)

    def _start_in_order(self, state: ElasticState, d: Decisions) -> None:
        while state.queue:
            head = state.queue[0]
            size = _start_size(head, len(state.free))
            if not size:
                return
            d.start(head, sorted(state.free)[:size])

    def _set_targets(self, state: ElasticState, head: EJob) -> None:
        lacking = head.start_sizes()[0] - len(state.free)
        lacking -= sum(state.running[jid].size - t for jid, t in self.targets.items())
        if lacking <= 0:
            return  # (the shrinks already asked for will do)
        movable = sorted((j for j in state.running.values() if j.shrinkable),
                         key=lambda j: (-(self.targets.get(j.id, j.size) - j.num_nodes_min), j.start, j.id))
        room = sum(self.targets.get(j.id, j.size) - j.num_nodes_min for j in movable)
        if room < lacking:
            return  # shrinking all of them would not start the head: it waits for ends
        for job in movable:
            current = self.targets.get(job.id, job.size)
            take = min(current - job.num_nodes_min, lacking)
            if take > 0:
                self.targets[job.id] = current - take
                lacking -= take
            if lacking <= 0:
                return

    def _backfill(self, state: ElasticState, d: Decisions) -> None:
        head = state.queue[0]
        shadow, extra = reservation(state, head.start_sizes()[0], len(state.free))
        for job in list(state.queue[1:]):
            if not state.free:
                return
            size = _start_size(job, len(state.free))
            if not size:
                continue
            ok, extra = may_backfill(state, job, size, shadow, extra)
            if ok:
                d.start(job, sorted(state.free)[:size])
