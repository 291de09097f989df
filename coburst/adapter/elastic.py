"""In-process runs of elastic policies (:mod:`coburst.policies.elastic`) on the simulator's
elastic mode (:mod:`coburst.simulator.elastic`).

:class:`ElasticLink` stands where a scheduler link stands (``Simulator.link``): it reads the
events of each message (the exact text a socket would carry), keeps the policy's
:class:`~coburst.policies.elastic.base.ElasticState`, calls the policy and answers with its
decisions as Batsim events (``EXECUTE_JOB``, ``REJECT_JOB``, ``RESIZE_JOB``).

>>> from coburst.adapter.elastic import run_elastic          # doctest: +SKIP
>>> result = run_elastic("platforms/cluster16.xml", ["workloads/malleable_small.json"],
...                      "equipartition", "out/mall")         # doctest: +SKIP
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Sequence

from coburst.policies.elastic.base import Decisions, EJob, ElasticPolicy, ElasticState
from coburst.simulator.protocol import check_reply, encode_message

__all__ = ["ElasticLink", "run_elastic", "job_of"]


def job_of(jid: str, job: dict[str, Any]) -> EJob:
    """The policy's view of a Batsim job object (its ``elastic`` field; none: rigid)."""
    spec = job.get("elastic") or {}
    res = int(job["res"])
    return EJob(id=jid, subtime=float(job.get("subtime", 0.0)), res=res, walltime=float(job.get("walltime", -1)),
                kind=spec.get("type", "rigid"), num_nodes_min=int(spec.get("num_nodes_min", res)),
                num_nodes_max=int(spec.get("num_nodes_max", res)))


class ElasticLink:
    """A scheduler link running an elastic policy in the simulator's process."""

    endpoint = "in-process (elastic)"

    def __init__(self, policy: ElasticPolicy):
        self.policy = policy
        self.state = ElasticState()
        self.wall_time_waiting = 0.0
        self.nb_exchanges = 0
        #: every decision sent: (date, type, data) (tests)
        self.trace: list[tuple[float, str, dict]] = []

    def exchange(self, now: float, events: list) -> dict[str, Any]:
        wall = time.perf_counter()
        msg = json.loads(encode_message(now, events))
        st = self.state
        st.now = now
        ended = False
        for ev in msg["events"]:
            etype, data = ev["type"], ev.get("data") or {}
            if etype == "SIMULATION_BEGINS":
                st.compute = sorted(r["id"] for r in data["compute_resources"])
                st.free = set(st.compute)
            elif etype == "JOB_SUBMITTED":
                st.queue.append(job_of(data["job_id"], data["job"]))
            elif etype == "JOB_COMPLETED":
                job = st.running.pop(data["job_id"], None)
                if job is not None:
                    st.free.update(job.alloc)
            elif etype == "JOB_SCHEDULING_POINT":
                job = st.running.get(data["job_id"])
                if job is not None:
                    job.point = data
            elif etype == "SIMULATION_ENDS":
                ended = True
        out: list[dict[str, Any]] = []
        if not ended:
            decisions = Decisions(st)
            self.policy.schedule(st, decisions)
            for etype, data in decisions.events:
                out.append({"timestamp": now, "type": etype, "data": data})
                self.trace.append((now, etype, data))
        for job in st.running.values():
            job.point = None  # a point is answered in the reply to its message only
        self.nb_exchanges += 1
        self.wall_time_waiting += time.perf_counter() - wall
        return check_reply({"now": now, "events": out})

    def close(self) -> None:
        pass


def run_elastic(platform: str | Path, workloads: Sequence[str | Path], policy: str | ElasticPolicy,
                export_prefix: str | Path, **config: Any):
    """Simulate ``workloads`` on ``platform`` in the elastic mode with ``policy`` (a registered
    name such as ``"equipartition"``, or an instance); returns the
    :class:`~coburst.simulator.engine.SimResult`.  ``config``: more
    :class:`~coburst.simulator.engine.SimulatorConfig` fields."""
    from coburst import registry
    from coburst.simulator.engine import Simulator, SimulatorConfig

    if isinstance(policy, str):
        policy = registry.get(policy if ":" in policy else f"elastic:{policy}")
    Path(export_prefix).parent.mkdir(parents=True, exist_ok=True)
    cfg = SimulatorConfig(platform=str(platform), workloads=[str(w) for w in workloads],
                          export_prefix=str(export_prefix), elastic=True, **config)
    sim = Simulator(cfg)
    sim.link = ElasticLink(policy)
    result = sim.run()
    result.link = sim.link
    result.simulator = sim
    return result
