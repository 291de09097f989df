"""IRMaSim's Heuristic workload manager: job selection x node selection (Sánchez Sousa 2023,
§2.2, Table 1).

A job order and a node order make a scheduler: ``first`` x ``high_gflops`` is MCT (§2.2),
``shortest`` x ``high_gflops`` is *shortest_fastest*, ``longest`` x ``high_gflops``
*longest_fastest*, ``random`` x ``random`` *full random*, ``first`` x ``first`` first-first.

Job selection (ascending key, ties by submission): ``random`` (a seeded draw per job at
submission), ``first`` (submission), ``shortest`` / ``longest`` (requested time: the job's
``req_time``, else its walltime, else its work on the slowest node), ``smallest`` (tasks),
``low_mem`` (``mem``), ``low_mem_bw`` (``mem_vol``, IRMaSim's memory volume: its
``low_mem_ops`` key).  A missing field counts as 0.

Node selection (ties by node index): ``random`` (seeded shuffle), ``first`` (index),
``high_gflops`` (core speed), ``high_cores`` / ``low_cores`` (most / fewest idle cores),
``high_mem`` (``mem``), ``high_mem_bw`` (``mem_bw``), ``low_power`` (power at full load:
cores x (``static_power`` + ``dynamic_power``), IRMaSim's ``max_power_consumption``).

``mapping``:

``"deferred"`` (default: IRMaSim's ``Heuristic.py``)
    at every event, the first job of the ordered waiting list goes to the first node (in node
    order) with enough idle cores, repeatedly; when it fits no node, nothing more starts
    (no backfilling, as IRMaSim's ``schedule_next_job``).
``"queue"`` (§2.2's description of shortest_fastest)
    every batch is mapped at submission, jobs in job order: each job goes to the first node,
    in node order, not yet used in this round that can hold it; when none is left the list of
    nodes is refilled (a new round).  Rounds start afresh with every batch; dynamic node keys
    (idle cores) are read once per batch.

A job runs on the cores of one node (§3.1); the random choices come from one
``numpy.random.Generator`` seeded with ``seed``, drawn in event order, so runs repeat
exactly.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from coburst.core.hetero import CoreAlloc, HeteroDecisions, HeteroState, HJob
from coburst.policies.base import Param, Policy
from coburst.policies.hetero.base import dispatch_queues, mapping_param

__all__ = ["Heuristic", "JOB_SELECTIONS", "NODE_SELECTIONS", "LABELS"]

JOB_SELECTIONS = ("random", "first", "shortest", "longest", "smallest", "low_mem", "low_mem_bw")
NODE_SELECTIONS = ("random", "first", "high_gflops", "high_cores", "low_cores", "high_mem", "high_mem_bw",
                   "low_power")

#: IRMaSim / thesis names of job x node combinations
LABELS = {"shortest_fastest": ("shortest", "high_gflops"), "longest_fastest": ("longest", "high_gflops"),
          "mct": ("first", "high_gflops"), "first_first": ("first", "first"), "full_random": ("random", "random")}


def requested_time(job: HJob, min_speed: float) -> float:
    if job.req_time > 0:
        return job.req_time
    if job.walltime < float("inf"):
        return job.walltime
    return job.work / min_speed


class Heuristic(Policy):
    """Job selection x node selection (module doc)."""

    family: ClassVar[str] = "heuristic"
    source: ClassVar[str] = "Sánchez Sousa 2023, §2.2, Table 1 (IRMaSim Heuristic)"
    params: ClassVar[tuple[Param, ...]] = (
        Param("job_selection", str, "first", lambda v: v in JOB_SELECTIONS,
              f"job order, one of {', '.join(JOB_SELECTIONS)}"),
        Param("node_selection", str, "first", lambda v: v in NODE_SELECTIONS,
              f"node order, one of {', '.join(NODE_SELECTIONS)}"),
        Param("seed", int, 0, lambda v: v >= 0, "seed of the random job / node choices (integer >= 0)"),
        mapping_param("deferred"),
    )

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._rng = np.random.default_rng(self.seed)
        self._rand: dict[str, float] = {}

    @property
    def name(self) -> str:
        return f"{self.job_selection}-{self.node_selection}"

    # ------------------------------------------------------------------ orders
    def on_job_release(self, state: HeteroState, jobs) -> None:
        if self.job_selection == "random":
            for job in jobs:
                self._rand[job.id] = float(self._rng.random())

    def job_key(self, job: HJob, state: HeteroState):
        sel = self.job_selection
        if sel == "random":
            v = self._rand.get(job.id, 0.0)
        elif sel == "first":
            v = job.subtime
        elif sel == "shortest":
            v = requested_time(job, state.cluster.min_speed)
        elif sel == "longest":
            v = -requested_time(job, state.cluster.min_speed)
        elif sel == "smallest":
            v = job.res
        elif sel == "low_mem":
            v = job.mem
        else:
            v = job.mem_vol
        return (v, job.seq)

    def node_order(self, state: HeteroState, free: list[list[int]]) -> list[int]:
        """Node indices in the order of preference (ties: lower index)."""
        cl = state.cluster
        m = len(cl)
        sel = self.node_selection
        if sel == "random":
            return [int(i) for i in self._rng.permutation(m)]
        if sel == "first":
            return list(range(m))
        nodes = cl.nodes
        keys = {"high_gflops": lambda i: -nodes[i].speed, "high_cores": lambda i: -len(free[i]),
                "low_cores": lambda i: len(free[i]), "high_mem": lambda i: -nodes[i].mem,
                "high_mem_bw": lambda i: -nodes[i].mem_bw, "low_power": lambda i: nodes[i].power}[sel]
        return sorted(range(m), key=lambda i: (keys(i), i))

    # ------------------------------------------------------------------ decisions
    def make_decisions(self, state: HeteroState) -> HeteroDecisions:
        decisions = HeteroDecisions(state.now)
        free = [list(f) for f in state.free]
        pending = sorted(state.queue, key=lambda j: self.job_key(j, state))
        if self.mapping == "queue":
            queues = [list(q) for q in state.node_queues]
            if pending:
                order = self.node_order(state, free)
                cores = state.cluster.cores
                used: set[int] = set()
                for job in pending:
                    pick = next((n for n in order if n not in used and cores[n] >= job.res), None)
                    if pick is None:  # round over: refill the node list
                        used.clear()
                        if self.node_selection == "random":
                            order = self.node_order(state, free)
                        pick = next(n for n in order if cores[n] >= job.res)
                    used.add(pick)
                    decisions.map(job, pick)
                    queues[pick].append(job)
            dispatch_queues(state, decisions, queues, free)
            return decisions
        for job in pending:
            viable = [n for n in self.node_order(state, free) if len(free[n]) >= job.res]
            if not viable:
                break
            n = viable[0]
            decisions.start(job, CoreAlloc(n, tuple(free[n][:job.res])))
            del free[n][:job.res]
        return decisions
