"""The heterogeneous-cluster policy interface: batch mapping, node queues, deferred mapping.

Sánchez Sousa 2023, §4.1 (IRMaSim's workload managers): at every submission the batch of
jobs that just arrived is mapped (``scheduler``) to the nodes; each mapped job joins its
node's queue (``self.scheduling[n]``) and starts when it reaches the head and the node has
enough idle cores (``schedule_next_job``).  A queued job is never mapped again (§4.1,
"to prevent starvation ... queued jobs can not be scheduled again").

``mapping`` (a parameter of every policy here):

``"queue"``
    as the thesis: the batch is mapped at once; mapped jobs wait for their node.  The
    machine availability time of a node (§3.2) counts its running jobs (until their
    expected ends, ``work / speed``) and its queue.
``"deferred"``
    what Batsim users expect of a batch scheduler: nothing is committed in advance.  At
    every decision the algorithm maps *all* waiting jobs against the running jobs only;
    the jobs it would start now (planned start = now, on free cores) start, the others stay
    unmapped and are mapped again at the next decision (a job end or an arrival).  This is
    the batch mode with re-mapping of Maheswaran et al. 1999.  Min-min / max-min stop
    planning once no core is free now; duplex and A* plan the whole waiting set at every
    decision (they need it for their choice), which costs one such plan per event.

Decisions taken where the text is silent (tested in tests/test_hetero_policies.py):

* **batch** = the jobs submitted since the previous decision.  A decision is taken once per
  Batsim message (after all its events), so jobs submitted at the same date in one message
  form one batch; jobs of a later message at the same date form the next batch.
* **multi-task jobs** run on ``res`` cores of one node (§3.1, "each job must be executed by
  a single node"); a job wider than every node is rejected at submission (adapter).  Its
  tasks take the cores that free first and it starts when the last of them frees
  (:func:`coburst.core.hetero.place`); its completion time is that start plus its ETC (the
  max over its tasks, §3.3.2).  IRMaSim's code takes the max over all cores of the node;
  both are the same on single-core nodes.
* **node queues are strict FIFO**: the head waits for enough idle cores and blocks the jobs
  behind it.  Planned starts are non-decreasing along a node's queue (each job takes the
  cores that free first), so FIFO execution follows the plan.  (IRMaSim's ``schedule``
  starts any queued job that fits; the same on single-core nodes.)
* **ties**: between jobs, the earlier submitted; between nodes, the lower node index.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Sequence

import numpy as np

from coburst.core.hetero import CoreAlloc, HeteroDecisions, HeteroState, HJob
from coburst.policies.base import Param, Policy

__all__ = ["HeteroPolicy", "Assignment", "MAPPING", "dispatch_queues"]

MAPPINGS = ("queue", "deferred")


def mapping_param(default: str) -> Param:
    return Param("mapping", str, default, lambda v: v in MAPPINGS,
                 'when jobs are mapped: "queue" (at submission, to per-node queues, as the thesis) or '
                 '"deferred" (only jobs that start now are committed; the others are mapped again later)')


MAPPING = mapping_param("queue")


@dataclass(frozen=True, slots=True)
class Assignment:
    """One planned mapping: ``job`` (index into the batch) on ``node`` from ``start`` to ``end``."""

    job: int
    node: int
    start: float
    end: float


def dispatch_queues(state: HeteroState, decisions: HeteroDecisions, queues: list[list[HJob]],
                    free: list[list[int]]) -> None:
    """Start the head of every node queue while it fits the node's idle cores (§4.1,
    ``schedule_next_job``; strict FIFO, module doc).  ``queues`` and ``free`` are copies the
    function consumes."""
    for n, q in enumerate(queues):
        idle = free[n]
        i = 0
        while i < len(q) and q[i].res <= len(idle):
            job = q[i]
            decisions.start(job, CoreAlloc(n, tuple(idle[:job.res])))
            del idle[:job.res]
            i += 1


class HeteroPolicy(Policy):
    """Base of the batch-mapping policies (module doc).  Subclasses implement :meth:`plan`."""

    params: ClassVar[tuple[Param, ...]] = (MAPPING,)

    @abstractmethod
    def plan(self, state: HeteroState, jobs: Sequence[HJob], avail: np.ndarray,
             now_only: bool = False) -> list[Assignment]:
        """Map ``jobs`` (submission order) given the core availability ``avail`` (sorted rows,
        inf-padded; the callee may change it): assignments in mapping order.  ``now_only``
        (deferred mapping): only the assignments that start now are used; a policy may stop
        early."""

    def make_decisions(self, state: HeteroState) -> HeteroDecisions:
        decisions = HeteroDecisions(state.now)
        jobs = state.queue
        queues = [list(q) for q in state.node_queues]
        free = [list(f) for f in state.free]
        if self.mapping == "queue":
            if jobs:
                for a in self.plan(state, jobs, state.availability(queues=True)):
                    decisions.map(jobs[a.job], a.node)
                    queues[a.node].append(jobs[a.job])
            dispatch_queues(state, decisions, queues, free)
            return decisions
        # deferred: nothing is ever queued; start what the plan starts now on free cores
        if jobs:
            now = state.now
            for a in self.plan(state, jobs, state.availability(queues=False), now_only=True):
                job = jobs[a.job]
                idle = free[a.node]
                if a.start <= now and job.res <= len(idle):
                    decisions.start(job, CoreAlloc(a.node, tuple(idle[:job.res])))
                    del idle[:job.res]
        return decisions
