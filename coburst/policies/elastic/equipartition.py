"""Equipartition for malleable jobs: shrink to admit, expand when idle.

Source: McCann, Vaswani & Zahorjan, "A dynamic processor allocation policy for
multiprogrammed shared-memory multiprocessors", ACM TOCS 11(2), 1993 (equipartition with
folding), as McCann & Zahorjan, "Processor allocation policies for message-passing parallel
computers", SIGMETRICS 1994, apply it to message-passing machines.  The rules below are this
first-come first-served reading of it ("shrink to admit, expand when idle"); the job model it
runs on is ElastiSim's (Özden et al., "ElastiSim: a batch-system simulator for malleable
workloads", ICPP 2022).

Rules (first-come first-served, no backfilling):

1. **requests**: an evolving or adaptive job asking to shrink is granted; asking to grow, it
   gets what is free (clipped), unless jobs wait (refused: the waiting jobs come first);
2. **start**: the head of the queue starts when its smallest size fits the free resources;
   a moldable, malleable or adaptive job takes ``min(max, free, max(min, share))`` where
   ``share`` is the equal part ``N // (running + 1)`` of the ``N`` compute resources;
3. **shrink to admit**: when the head does not fit, every malleable or adaptive running job
   gets a target, the equal share ``(free + their sizes) // (their number + 1)`` (at least its
   minimum; all minimums if that is not enough to admit the head), applied at its next
   scheduling point; the head starts once enough is free;
4. **expand when idle**: with no job waiting, the jobs at a scheduling point (not resized by
   this decision already) share the free resources equally, up to their maximums.
"""

from __future__ import annotations

from typing import ClassVar

from coburst.policies.elastic.base import Decisions, EJob, ElasticState
from coburst.policies.elastic.rules import TargetPolicy, apply_targets, expand_when_idle

__all__ = ["Equipartition"]


class Equipartition(TargetPolicy):
    """Equipartition: shrink malleable jobs to admit waiting ones, expand them when idle."""

    family: ClassVar[str] = "equipartition"
    source: ClassVar[str] = "McCann, Vaswani & Zahorjan 1993 (ACM TOCS 11(2)); McCann & Zahorjan 1994 (SIGMETRICS)"
    params = ()

    def schedule(self, state: ElasticState, d: Decisions) -> None:
        self.begin(state, d)
        n_total = len(state.compute)
        self._start(state, d, n_total)
        if state.queue:
            self._set_targets(state, state.queue[0])
            apply_targets(state, d, self.targets)
            self._start(state, d, n_total)
        if not state.queue:
            expand_when_idle(state, d)

    def _start(self, state: ElasticState, d: Decisions, n_total: int) -> None:
        while state.queue:
            head = state.queue[0]
            lo, hi = head.start_sizes()
            free = len(state.free)
            if free < lo:
                return
            share = n_total // (len(state.running) + 1)
            size = min(hi, free, max(lo, share))
            d.start(head, sorted(state.free)[:size])

    def _set_targets(self, state: ElasticState, head: EJob) -> None:
        lo = head.start_sizes()[0]
        movable = [j for j in state.running.values() if j.shrinkable]
        room = len(state.free) + sum(j.size - j.num_nodes_min for j in movable)
        if room < lo or not movable:
            return  # shrinking all of them would not admit the head: it waits for ends
        share = (len(state.free) + sum(j.size for j in movable)) // (len(movable) + 1)
        targets = {j.id: max(j.num_nodes_min, min(j.size, share)) for j in movable}
        if len(state.free) + sum(j.size - targets[j.id] for j in movable) < lo:
            targets = {j.id: j.num_nodes_min for j in movable}
        self.targets.update({jid: t for jid, t in targets.items() if t < state.running[jid].size})
