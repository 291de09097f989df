"""pybatsim adapter for the heterogeneous-cluster policies (:mod:`coburst.policies.hetero`).

:class:`HeteroScheduler` is :class:`~coburst.adapter.scheduler.CoburstScheduler` over a
:class:`~coburst.core.hetero.HeteroState`: at ``SIMULATION_BEGINS`` it reads the nodes from
the compute resources' properties (``node``, ``core``, ``speed`` -- flops/s of one core,
which Batsim does not otherwise tell a scheduler -- and optionally ``type``, ``mem``,
``mem_bw``, ``static_power``, ``dynamic_power``; ``coburst platform hetero``).  A submitted
job becomes an :class:`~coburst.core.hetero.HJob` whose work per task is its ``req_ops``
field, else its ``parallel_homogeneous`` profile's ``cpu``, else its requested time on the
slowest node (:func:`coburst.core.hetero.job_work`); it is rejected at once when it is wider
than every node (a job runs on one node, Sánchez Sousa 2023 §3.1) or when nothing gives its
work.  Started jobs get the Batsim ids of their cores as allocation.

The policy decides once per Batsim message (``onNoMoreEvents``); its decisions leave as
:class:`~coburst.core.hetero.HeteroDecisions` (maps to node queues, starts, rejects), applied
to the state here and sent with ``bs.execute_jobs`` / ``bs.reject_jobs``.

Options (pybatsim ``-o '<json>'``): ``policy`` (entry files fix it; any heterogeneous-mapping
name of :mod:`coburst.registry`, plugins too, in ``schedulers/heteroPolicy.py``), the policy's parameters
(``mapping``, ``max_vertices``, ``job_selection``, ``node_selection``, ``seed``) and the
adapter's ``trace`` (JSONL, one line per decision that maps, starts or rejects: ``{"now",
"map": {job: node}, "start": {job: "<core ids>"}, "reject": [...]}``).  Unknown options are
errors (exit 2, a message naming the option).  The same entry files run on the real
Batsim 4.2.1.
"""

from __future__ import annotations

import json
import logging
import math
from typing import Any, ClassVar, Mapping, Sequence

from coburst.adapter.scheduler import CoburstScheduler
from coburst.core.decisions import Start
from coburst.core.hetero import HeteroCluster, HeteroDecisions, HeteroState, HJob, job_work, nonneg_number
from coburst.core.placement import procset_of
from coburst import registry as policy_registry

__all__ = ["HeteroScheduler"]

log = logging.getLogger("coburst.adapter.hetero")


def _num(info: Mapping[str, Any], key: str) -> float:
    """A job's optional numeric field (``req_time``, ``mem``, ``mem_vol``); 0 when absent or bad."""
    value = nonneg_number(info.get(key, 0))
    return 0.0 if value is None else value


class HeteroScheduler(CoburstScheduler):
    """A pybatsim scheduler running a heterogeneous-cluster policy (module doc)."""

    registry: ClassVar[Any] = policy_registry.scope("hetero")

    def onSimulationBegins(self):
        compute, _ = self.resources()
        # a platform without the properties: InputError (coburst run: exit 2, the message)
        self.cluster = HeteroCluster.from_resources(compute)
        self.state = HeteroState(self.cluster, self._now())
        self.io = None
        self._seq = 0
        log.info("coburst %s on %r", self.policy.name, self.cluster)

    def admit(self, job):
        state = self.state
        state.advance(self._now())
        info = job.json_dict or {}
        res = int(job.requested_resources)
        walltime = float(job.requested_time)
        walltime = walltime if walltime > 0 else math.inf
        work = job_work(info, job.profile_dict, walltime, self.cluster.min_speed)
        reason = None
        if res > self.cluster.max_cores:
            reason = f"{res} tasks but the widest node has {self.cluster.max_cores} cores (a job runs on one node)"
        elif work is None:
            reason = "no work estimate (no req_ops, no parallel_homogeneous cpu, no req_time, no walltime)"
        if reason is not None:
            log.warning("rejecting job %s: %s", job.id, reason)
            self.bs.reject_jobs([job])
            return
        hjob = HJob(id=job.id, subtime=float(job.submit_time), res=res, work=work, seq=self._seq,
                    walltime=walltime, req_time=_num(info, "req_time"), mem=_num(info, "mem"),
                    mem_vol=_num(info, "mem_vol"), extra=info)
        self._seq += 1
        state.submit(hjob)
        self._jobs[job.id] = job
        self._released.append(hjob)

    def _write_trace(self, decisions: HeteroDecisions) -> None:
        line = {"now": decisions.now, "map": {j.id: n for j, n in decisions.maps},
                "start": {st.job.id: str(procset_of(list(st.alloc.ids))) for st in decisions.starts},
                "reject": [r.job.id for r in decisions.rejects]}
        self._trace.write(json.dumps(line, separators=(",", ":")) + "\n")
        self._trace.flush()

    def apply(self, decisions: HeteroDecisions) -> None:
        if self._trace is not None and decisions.maps and not (decisions.starts or decisions.rejects):
            self.state.apply(decisions)
            self._write_trace(decisions)
            return
        super().apply(decisions)

    def launch(self, starts: Sequence[Start]) -> None:
        jobs = []
        for st in starts:
            job = self._jobs[st.job.id]
            job.allocation = procset_of(list(st.alloc.ids))  # ProcSet(*ids), built by runs
            jobs.append(job)
        self.bs.execute_jobs(jobs)
