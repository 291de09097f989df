"""Malleable scheduling by agreements: nodes shrunk from running jobs are promised to a waiting one.

Source: Posner, Hupfeld & Finnerty, "Enhancing supercomputer performance with malleable job
scheduling strategies", Euro-Par 2023 workshops (PECS), and its strategies published for
ElastiSim (projectwagomu/MalleableJobScheduling): nine policies, a **size rule** (``min``,
``pref``, ``average``) crossed with an **agreement handler** (``direct`` -- "agreement",
``pool`` -- "common pool", ``steal`` -- "steal agreement").  This is coburst's reading of their
descriptions on its elastic model, where a running job gives nodes back at its next scheduling
point.  At every scheduler message:

1. **shrinks promised earlier** are applied to the jobs at a scheduling point now;
2. **agreements are resolved**, first come first served: a waiting job holding an agreement for
   ``k`` nodes starts when -- ``direct``: all its promised nodes are free (on them); ``steal``:
   ``k`` promised nodes are free, its own or other agreements' (it takes them, the others'
   promises move to its nodes still busy); ``pool``: ``k`` nodes are free, promised ones first
   (promises are one common pool: the nodes it takes leave it, and as many of the pool's busy
   nodes as it took unpromised ones);
3. **start**: the other waiting jobs start in order on free unpromised nodes, EASY style (a job
   behind the head starts only if it ends, by its walltime, before the head's reservation or
   fits in what the head leaves), on ``num_nodes_min`` (``min``, ``average``) or on ``pref``
   nodes, or what is free if less but at least the minimum (``pref``);
4. **shrink to start**: for each job still waiting, in order, nodes of running malleable jobs
   above what they keep are promised to it, when enough of them are: ``min`` takes from the jobs
   with the most nodes above their minimum, for the job's minimum; ``pref`` first asks the
   job's ``pref`` nodes keeping every job at its ``pref``, then its minimum keeping ``pref``,
   then its minimum keeping the minimums; ``average`` takes node by node from the job with the
   highest share of its range ``(size - min) / (max - min)``;
5. **expand**: free unpromised nodes go to the malleable jobs at a scheduling point: ``min``
   fewest nodes above their minimum first, up to their maximum; ``pref`` up to ``pref`` first
   (furthest below it first), then up to the maximum; ``average`` node by node to the lowest
   share of its range.

A job's ``pref`` is its argument ``num_nodes_pref`` when it has one, else ``(min + max) // 2``.
Where the published code departs from its own descriptions, the descriptions are followed:
its backfilling test compares a date with a run time, and its start loop removes jobs from the
list it walks (skipping the job after each start).
"""

from __future__ import annotations

import math
from typing import ClassVar

from coburst.policies.base import Param
from coburst.policies.elastic.base import Decisions, EJob, ElasticPolicy, ElasticState
from coburst.policies.elastic.rules import may_backfill, reservation

__all__ = ["Agreements", "SIZE_RULES", "HANDLERS"]

SIZE_RULES = ("min", "pref", "average")
HANDLERS = ("direct", "pool", "steal")


def pref(job: EJob) -> int:
    """The job's preferred size."""
    value = (job.model.arguments.get("num_nodes_pref") if job.model is not None else None)
    n = int(value) if value is not None else (job.num_nodes_min + job.num_nodes_max) // 2
    return min(max(n, job.num_nodes_min), job.num_nodes_max)


def _share(job: EJob, size: int) -> float:
    span = job.num_nodes_max - job.num_nodes_min
    return (size - job.num_nodes_min) / span if span else 1.0


class Agreements(ElasticPolicy):
    """Shrink malleable jobs for waiting ones by agreements (Posner et al. 2023)."""

    family: ClassVar[str] = "agreements"
    source: ClassVar[str] = ("Posner, Hupfeld & Finnerty 2023 (Euro-Par workshops, PECS), "
                             "projectwagomu/MalleableJobScheduling")
    params = (Param("size", str, "min", lambda v: v in SIZE_RULES, "the size rule: min, pref or average"),
              Param("handler", str, "pool", lambda v: v in HANDLERS, "the agreement handler: direct, pool or steal"))
    #: pref reads a job's num_nodes_pref argument from its model
    needs_profiles: ClassVar[bool] = True

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        #: waiting job -> the nodes promised to it
        self.promised: dict[str, set[int]] = {}
        #: running job -> the nodes it gives back at its next point
        self.release: dict[str, set[int]] = {}
        #: waiting job -> how many nodes it was promised (a ``pool`` job's set may lose nodes
        #: to others' starts; its count stays)
        self.count: dict[str, int] = {}

    # ------------------------------------------------------------------ the message
    def schedule(self, state: ElasticState, d: Decisions) -> None:
        for job in state.too_wide():
            d.reject(job)
        waiting = {j.id for j in state.queue}
        self.promised = {jid: nodes for jid, nodes in self.promised.items() if jid in waiting}
        self.count = {jid: k for jid, k in self.count.items() if jid in self.promised}
        self.release = {jid: nodes & set(state.running[jid].alloc) for jid, nodes in self.release.items()
                        if jid in state.running}
        for job in state.at_points():  # 1. promised shrinks
            give = self.release.pop(job.id, set())
            if give:
                d.resize(job, [r for r in job.alloc if r not in give])
        self._resolve(state, d)  # 2.
        self._start(state, d)  # 3.
        for job in [j for j in state.queue if j.id not in self.promised]:  # 4.
            self._shrink_for(state, job)
        self._expand(state, d)  # 5.

    # ------------------------------------------------------------------ 2. agreements
    def _owner(self) -> dict[int, str]:
        return {r: jid for jid, nodes in self.promised.items() for r in nodes}

    def _resolve(self, state: ElasticState, d: Decisions) -> None:
        for job in [j for j in state.queue if j.id in self.promised]:
            mine = self.promised[job.id]
            k = self.count[job.id]
            if self.handler == "direct":
                if mine <= state.free:
                    self._drop(job.id)
                    d.start(job, sorted(mine))
                continue
            owner = self._owner()
            promised_free = sorted(r for r in state.free if r in owner)
            if self.handler == "steal":
                if len(promised_free) < k:
                    continue
                take = sorted(r for r in promised_free if r in mine)
                take += [r for r in promised_free if r not in mine][:k - len(take)]
                busy_mine = [r for r in mine if r not in state.free]
                for r_taken, r_busy in zip([r for r in take if r not in mine], busy_mine):
                    other = self._owner()[r_taken]  # (its promise moves to this job's busy node)
                    self.promised[other] = (self.promised[other] - {r_taken}) | {r_busy}
                self._drop(job.id)
                d.start(job, take)
                continue
            if len(state.free) < k:  # pool
                continue
            take = promised_free[:k]
            take += sorted(r for r in state.free if r not in set(promised_free))[:k - len(take)]
            self._drop(job.id)
            pool = {r for nodes in self.promised.values() for r in nodes}
            for r in take:  # (what it took leaves the pool; unpromised ones free busy pool nodes)
                if r in pool:
                    self._unpromise(r)
                else:
                    busy = sorted(r2 for r2 in pool if r2 not in state.free and r2 not in take)
                    if busy:
                        self._unpromise(busy[-1])
                        pool.discard(busy[-1])
            d.start(job, take)

    def _drop(self, jid: str) -> None:
        del self.promised[jid]
        del self.count[jid]

    def _unpromise(self, r: int) -> None:
        for jid, nodes in self.promised.items():
            if r in nodes:
                nodes.discard(r)
                return

    # ------------------------------------------------------------------ 3. start
    def _start_size(self, job: EJob, free: int) -> int:
        lo, hi = job.start_sizes()
        want = lo if self.size != "pref" or lo == hi else pref(job)
        return min(want, free) if free >= lo else 0

    def _start(self, state: ElasticState, d: Decisions) -> None:
        owner = self._owner()
        free = lambda: sorted(r for r in state.free if r not in owner)  # noqa: E731
        head, shadow, extra = None, math.inf, 0
        for job in [j for j in state.queue if j.id not in self.promised]:
            size = self._start_size(job, len(free()))
            if head is None:
                if size:
                    d.start(job, free()[:size])
                    continue
                head = job
                shadow, extra = reservation(state, job.start_sizes()[0], len(free()))
                continue
            if not size:
                continue
            ok, extra = may_backfill(state, job, size, shadow, extra)
            if ok:
                d.start(job, free()[:size])

    # ------------------------------------------------------------------ 4. shrink
    def _keep(self, job: EJob, rule: str) -> int:
        return pref(job) if rule == "pref" else job.num_nodes_min

    def _givable(self, job: EJob, keep: int, taken: set[int], owner: dict[int, str]) -> list[int]:
        """Nodes of ``job`` it can give beyond ``keep`` (its highest ids), not promised yet
        (``owner``: the promised nodes)."""
        left = [r for r in job.alloc if r not in self.release.get(job.id, set()) and r not in taken]
        return [r for r in left[keep:] if r not in owner][::-1]

    def _shrink_for(self, state: ElasticState, job: EJob) -> None:
        movable = [j for j in state.running.values() if j.shrinkable]
        if not movable:
            return
        lo = job.start_sizes()[0]
        if self.size == "pref":
            tries = [(pref(job) if job.start_sizes()[1] > lo else lo, "pref"), (lo, "pref"), (lo, "min")]
        else:
            tries = [(lo, "min")]
        for need, keep_rule in tries:
            chosen = self._choose(movable, need, keep_rule)
            if chosen:
                break
        else:
            return
        self.promised[job.id] = set()
        self.count[job.id] = sum(len(nodes) for nodes in chosen.values())
        for jid, nodes in chosen.items():
            self.release.setdefault(jid, set()).update(nodes)
            self.promised[job.id].update(nodes)

    def _choose(self, movable: list[EJob], need: int, keep_rule: str) -> dict[str, list[int]]:
        """Running job id -> the nodes it gives (empty: not enough)."""
        taken: dict[str, set[int]] = {j.id: set() for j in movable}
        chosen: dict[str, list[int]] = {}
        owner = self._owner()  # (no promise changes while choosing)
        if self.size == "average":
            for _ in range(need):
                best = None
                for j in movable:
                    if self._givable(j, j.num_nodes_min, taken[j.id], owner):
                        size = len(j.alloc) - len(self.release.get(j.id, ())) - len(taken[j.id])
                        key = (_share(j, size), j.id)
                        if best is None or key > best[0]:
                            best = (key, j)
                if best is None:
                    return {}
                j = best[1]
                r = self._givable(j, j.num_nodes_min, taken[j.id], owner)[0]
                taken[j.id].add(r)
                chosen.setdefault(j.id, []).append(r)
            return chosen

        def above(j: EJob) -> int:
            return len(j.alloc) - len(self.release.get(j.id, ())) - self._keep(j, "pref" if self.size == "pref"
                                                                                 else "min")
        for j in sorted(movable, key=lambda j: (-above(j), j.id)):
            if need <= 0:
                break
            nodes = self._givable(j, self._keep(j, keep_rule), set(), owner)[:need]
            if nodes:
                chosen[j.id] = nodes
                need -= len(nodes)
        return chosen if need <= 0 else {}

    # ------------------------------------------------------------------ 5. expand
    def _expand(self, state: ElasticState, d: Decisions) -> None:
        owner = self._owner()
        free = sorted(r for r in state.free if r not in owner)
        growing = [j for j in state.at_points() if j.shrinkable and j.id not in d.resized
                   and j.id not in self.release and j.size < j.num_nodes_max]
        if not free or not growing:
            return
        extra = {j.id: 0 for j in growing}
        if self.size == "average":
            for _ in range(len(free)):
                open_jobs = [j for j in growing if j.size + extra[j.id] < j.num_nodes_max]
                if not open_jobs:
                    break
                j = min(open_jobs, key=lambda j: (_share(j, j.size + extra[j.id]), j.id))
                extra[j.id] += 1
        else:
            left = len(free)
            caps = ([pref, lambda j: j.num_nodes_max] if self.size == "pref" else [lambda j: j.num_nodes_max])
            for cap in caps:
                order = sorted(growing, key=lambda j: ((j.size - pref(j)) if self.size == "pref"
                                                       else (j.size - j.num_nodes_min), j.id))
                for j in order:
                    add = min(max(cap(j) - j.size - extra[j.id], 0), left)
                    extra[j.id] += add
                    left -= add
        for j in growing:
            if extra[j.id]:
                d.resize(j, j.alloc + free[:extra[j.id]])
                free = free[extra[j.id]:]
