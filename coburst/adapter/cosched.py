"""pybatsim adapter for the node-sharing (co-scheduling) policies.

:class:`CoschedScheduler` is :class:`~coburst.adapter.scheduler.CoburstScheduler` over a
:class:`~coburst.core.nodeshare.NodeSharingState`: at ``SIMULATION_BEGINS`` it reads the unit
grid from the compute resources' ``node`` / ``socket`` / ``unit`` properties (``coburst
platform cosched``); a submitted job becomes a :class:`~coburst.core.nodeshare.CoJob` with its
application (``app``), its ``processes`` and its submission rank, or is rejected at once when
it can never run (not a whole number of nodes, wider than the machine, a burst-buffer request
that never fits); started jobs get the Batsim ids of their units as allocation.  On a platform
with burst-buffer nodes (storage hosts with ``bb_capacity``), a job's ``bb`` field (bytes per
compact node) is placed by the policy and recorded, as by the burst-buffer adapter, as job
metadata ``bb=<bb id>:<bytes>/...``.

Options (pybatsim ``-o '<json>'``): ``policy`` (``easy-co``, ``EASY-Co``, ``cosched:fcfs``, a
co-scheduling plugin's name: :mod:`coburst.registry`), the policy's
parameters (``backfill_depth``, ``heatmap``, ``threshold``, ``sort_depth``...), and the
adapter's ``trace`` (JSONL, one line per decision that starts jobs: ``{"now", "start",
"placements": {job: {"mode", "units"}}}``).  The allocation in ``_jobs.csv`` says where
each job ran (compact or spread); the speedup hook appends ``speedup=<x>`` to the metadata.

The same entry files run on the real Batsim 4.2.1 (with ``--enable-compute-sharing`` only if
a policy shares resources: these never give a unit twice, so it is not needed).
"""

from __future__ import annotations

import json
import logging
from typing import Any, ClassVar, Sequence

from coburst.adapter.bb import bb_metadata, bb_request
from coburst.adapter.scheduler import CoburstScheduler
from coburst.core.decisions import Decisions, Start
from coburst.core.nodeshare import CoJob, NodeSharingCluster, NodeSharingState
from coburst import registry as policy_registry

__all__ = ["CoschedScheduler"]

log = logging.getLogger("coburst.adapter.cosched")


class CoschedScheduler(CoburstScheduler):
    """A pybatsim scheduler running a node-sharing policy (module doc)."""

    registry: ClassVar[Any] = policy_registry.scope("cosched")

    def onSimulationBegins(self):
        self.cluster = NodeSharingCluster.from_resources(*self.resources())
        self.state = NodeSharingState(self.cluster, self._now())
        self.io = None
        self._seq = 0
        self._decided_at: float | None = None
        log.info("coburst %s on %r", self.policy.name, self.cluster)

    def onNoMoreEvents(self):
        """One decision per date and event, as ELiSE (``framework/realsim/compengine.py``,
        ``ComputeEngine.sim_step``: one deploy + backfill per simulation step): a message that
        brings no submitted or ended job at the date of the last decision (Batsim's NOTIFY
        ``no_more_static_job_to_submit`` after the last submissions) is not a new decision; a
        second one would deploy again on the board the first left (Filler's order changes
        with the idle cores)."""
        if (self.state is not None and not self._incoming and not self._ended
                and self._decided_at is not None and self._now() == self._decided_at):
            return
        super().onNoMoreEvents()
        if self.state is not None and getattr(self.bs, "running_simulation", True):
            self._decided_at = self._now()

    def admit(self, job):
        state = self.state
        state.advance(self._now())
        res = int(job.requested_resources)
        bb = bb_request(job.json_dict or {})
        reason = f"malformed bb field {job.json_dict.get('bb')!r}" if bb is None else self.cluster.never_fits(res, bb)
        if reason is not None:
            log.warning("rejecting job %s: %s", job.id, reason)
            self.bs.reject_jobs([job])
            return
        info = job.json_dict or {}
        app = info.get("app")
        procs = info.get("processes")
        if isinstance(procs, bool) or not isinstance(procs, int) or procs <= 0:
            procs = res * self.cluster.cores_per_unit
        cjob = CoJob(id=job.id, subtime=float(job.submit_time), res=res, walltime=float(job.requested_time),
                     nodes=res // self.cluster.units_per_node, seq=self._seq,
                     app=app if isinstance(app, str) else None, processes=procs, bb=bb, extra=info)
        self._seq += 1
        state.submit(cjob)
        self._jobs[job.id] = job
        self._released.append(cjob)

    def _write_trace(self, decisions: Decisions) -> None:
        line = {"now": decisions.now, "start": decisions.started_ids, "reject": [r.job.id for r in decisions.rejects],
                "placements": {st.job.id: {"mode": st.alloc.mode, "units": str(st.alloc.ids(self.cluster))}
                               for st in decisions.starts}}
        self._trace.write(json.dumps(line, separators=(",", ":")) + "\n")
        self._trace.flush()

    def launch(self, starts: Sequence[Start]) -> None:
        jobs = []
        for st in starts:
            job = self._jobs[st.job.id]
            job.allocation = st.alloc.ids(self.cluster)
            jobs.append(job)
        self.bs.execute_jobs(jobs)
        for st in starts:
            if st.alloc.bb_nodes:
                self.bs.set_job_metadata(st.job.id, bb_metadata(st.alloc.bb_bytes(self.cluster)))
