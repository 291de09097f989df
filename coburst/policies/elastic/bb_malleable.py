"""Malleable EASY with burst buffers: shrink malleable jobs to admit a job waiting for burst-buffer
space as well as for nodes.

Sources: the burst-buffer job model and its capacity-only ("Alloc-Only") reading of Kopański,
*Scheduling with burst buffers* (MSc thesis, 2020, §2.4-2.5: a job asks for ``bb`` bytes, held
from its start to its end); the rules of :mod:`.malleable_easy`.  A job's ``bb`` field is bytes
**per compute node** (coburst's workloads: ``docs/reference/file-formats.md``), so a malleable job
on ``n`` nodes holds ``n x bb``: shrunk, it gives back burst-buffer space with its nodes, grown,
it takes more.  The platform's space is one pool: the storage
resources' ``bb_capacity`` summed (no placement on particular burst-buffer nodes, no I/O: the
simulator moves no data for it).

Rules, at every scheduler message (``need(job, n) = n x bb``):

1. as :mod:`.malleable_easy` 1: requests of evolving and adaptive jobs (a growth as far as the
   free space allows), and the shrinks decided before, applied at the jobs' points;
2. **start in order**: the head starts when its size (requested, or less for a moldable job)
   fits the free nodes and its burst-buffer need fits the free space;
3. **shrink to admit**: when the head lacks nodes or space, running malleable jobs get targets
   that free both (the jobs with the most nodes above their minimum first), when shrinking them
   to their minimums would be enough;
4. **reservation and backfilling**: the head's reservation is the earliest date at which, by
   the running jobs' walltimes, both the nodes and the space it needs are free; a later job
   starts now if it fits both now and ends before the reservation or fits in both extras;
5. **expand when idle**: with no job waiting, jobs at a point grow into the free nodes as far
   as the free space allows.

A job whose burst-buffer need on its smallest size exceeds the platform's space is rejected.
"""

from __future__ import annotations

import math
from typing import ClassVar

from coburst.policies.elastic.base import Decisions, EJob, ElasticState
from coburst.policies.elastic.malleable_easy import MalleableEasy
from coburst.policies.elastic.rules import expected_end

__all__ = ["BurstBufferMalleableEasy", "held"]

#: bytes of slack on comparisons of burst-buffer sums (their per-node shares are floats)
_EPS = 1e-6


def held(state: ElasticState) -> float:
    """Burst-buffer bytes the running jobs hold on their current allocations."""
    return sum(j.bb * j.size for j in state.running.values())


class BurstBufferMalleableEasy(MalleableEasy):
    """Malleable EASY that admits a job by shrinking others for its nodes and its burst buffers."""

    family: ClassVar[str] = "bb-malleable-easy"
    source: ClassVar[str] = ("Kopański 2020 (burst-buffer job model, Alloc-Only); Lifka 1995 / Mu'alem & Feitelson "
                             "2001 (EASY); Prabhakaran et al. 2015 (malleable shrink and expand)")
    params = ()

    def begin(self, state: ElasticState, d: Decisions) -> None:
        for job in list(state.queue):  # never fits the platform's nodes or burst buffers
            lo = job.start_sizes()[0]
            if lo > len(state.compute) or job.bb * lo > state.bb_capacity + _EPS:
                d.reject(job)
        super().begin(state, d)

    def growth_room(self, state: ElasticState, job: EJob) -> int:
        """Free nodes, as far as the free burst-buffer space allows ``job`` to hold more."""
        if job.bb <= 0:
            return len(state.free)
        return min(len(state.free), math.floor((state.bb_capacity - held(state) + _EPS) / job.bb))

    # ------------------------------------------------------------------ sizes
    @staticmethod
    def _size(job: EJob, nodes: int, space: float) -> int:
        """The size ``job`` starts on with ``nodes`` free nodes and ``space`` free bytes (0: none)."""
        lo, hi = job.start_sizes()
        want = min(max(job.res, lo), hi)
        per = job.bb
        fit = min(nodes, math.floor((space + _EPS) / per) if per > 0 else nodes)
        if fit >= want:
            return want
        return fit if fit >= lo and lo < want else 0

    def _start_in_order(self, state: ElasticState, d: Decisions) -> None:
        while state.queue:
            head = state.queue[0]
            size = self._size(head, len(state.free), state.bb_capacity - held(state))
            if not size:
                return
            d.start(head, sorted(state.free)[:size])

    # ------------------------------------------------------------------ shrink to admit
    def _set_targets(self, state: ElasticState, head: EJob) -> None:
        lo = head.start_sizes()[0]
        after = {j.id: self.targets.get(j.id, j.size) for j in state.running.values()}
        freed_nodes = sum(state.running[jid].size - t for jid, t in after.items())
        freed_space = sum(state.running[jid].bb * (state.running[jid].size - t) for jid, t in after.items())
        lack_nodes = lo - len(state.free) - freed_nodes
        lack_space = head.bb * lo - (state.bb_capacity - held(state)) - freed_space
        if lack_nodes <= 0 and lack_space <= _EPS:
            return
        movable = sorted((j for j in state.running.values() if j.shrinkable),
                         key=lambda j: (-(after[j.id] - j.num_nodes_min), j.start, j.id))
        room_nodes = sum(after[j.id] - j.num_nodes_min for j in movable)
        room_space = sum(j.bb * (after[j.id] - j.num_nodes_min) for j in movable)
        if room_nodes < lack_nodes or room_space + _EPS < lack_space:
            return  # shrinking all of them would not admit the head: it waits for ends
        plan = dict(after)
        for job in movable:
            while plan[job.id] > job.num_nodes_min and (lack_nodes > 0 or lack_space > _EPS):
                plan[job.id] -= 1
                lack_nodes -= 1
                lack_space -= job.bb
        if lack_nodes > 0 or lack_space > _EPS:
            return
        self.targets.update({jid: t for jid, t in plan.items() if t < state.running[jid].size})

    # ------------------------------------------------------------------ reservation and backfilling
    def _reservation(self, state: ElasticState, head: EJob) -> tuple[float, int, float]:
        """(the head's reservation date, the nodes and the space left beyond its need then)."""
        lo = head.start_sizes()[0]
        nodes, space = len(state.free), state.bb_capacity - held(state)
        need = head.bb * lo
        if nodes >= lo and space + _EPS >= need:
            return state.now, nodes - lo, space - need
        for end, job in sorted(((expected_end(j), j) for j in state.running.values()), key=lambda p: (p[0], p[1].id)):
            if math.isinf(end):
                break
            nodes += job.size
            space += job.bb * job.size
            if nodes >= lo and space + _EPS >= need:
                return end, nodes - lo, space - need
        return math.inf, 0, 0.0

    def _backfill(self, state: ElasticState, d: Decisions) -> None:
        shadow, extra_nodes, extra_space = self._reservation(state, state.queue[0])
        for job in list(state.queue[1:]):
            if not state.free:
                return
            size = self._size(job, len(state.free), state.bb_capacity - held(state))
            if not size:
                continue
            need = job.bb * size
            if job.walltime >= 0 and state.now + job.walltime <= shadow:
                d.start(job, sorted(state.free)[:size])
            elif size <= extra_nodes and need <= extra_space + _EPS:
                extra_nodes -= size
                extra_space -= need
                d.start(job, sorted(state.free)[:size])

    # ------------------------------------------------------------------ expand when idle
    def _expand(self, state: ElasticState, d: Decisions) -> None:
        growing = [j for j in state.at_points()
                   if j.shrinkable and j.size < j.num_nodes_max and j.id not in d.resized]
        while growing and state.free:
            share = max(1, len(state.free) // len(growing))
            for job in list(growing):
                space = state.bb_capacity - held(state)
                room = math.floor((space + _EPS) / job.bb) if job.bb > 0 else len(state.free)
                extra = min(share, job.num_nodes_max - job.size, len(state.free), room)
                if extra > 0:
                    d.resize_to(job, job.size + extra)
                if extra <= 0 or job.size >= job.num_nodes_max or not state.free:
                    growing.remove(job)
