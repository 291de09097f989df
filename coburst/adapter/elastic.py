"""In-process runs of elastic policies (:mod:`coburst.policies.elastic`) on the simulator's
elastic mode (:mod:`coburst.simulator.elastic`).

:class:`ElasticLink` stands where a scheduler link stands (``Simulator.link``): it reads the
events of each message (the exact text a socket would carry), keeps the policy's
:class:`~coburst.policies.elastic.base.ElasticState`, calls the policy and answers with its
decisions as Batsim events (``EXECUTE_JOB``, ``REJECT_JOB``, ``RESIZE_JOB``).

:func:`serve` runs the same link behind a ZeroMQ REP socket, as an external scheduler
(``python -m coburst.adapter.elastic POLICY -s ENDPOINT``; ``coburst run POLICY --transport zmq``
starts it); the extension is agreed at the start (:mod:`coburst.simulator.elastic`).

>>> from coburst.adapter.elastic import run_elastic          # doctest: +SKIP
>>> result = run_elastic("platforms/cluster16.xml", ["workloads/malleable_small.json"],
...                      "equipartition", "out/mall")         # doctest: +SKIP
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from coburst.policies.elastic.base import Decisions, EJob, ElasticPolicy, ElasticState
from coburst.simulator.protocol import check_reply, encode_message

__all__ = ["ElasticLink", "run_elastic", "forward_profiles", "job_of", "serve", "main"]


def job_of(jid: str, job: dict[str, Any]) -> EJob:
    """The policy's view of a Batsim job object (its ``elastic`` field; none: rigid)."""
    spec = job.get("elastic") or {}
    res = int(job["res"])
    bb = job.get("bb", 0)
    return EJob(id=jid, subtime=float(job.get("subtime", 0.0)), res=res, walltime=float(job.get("walltime", -1)),
                kind=spec.get("type", "rigid"), num_nodes_min=int(spec.get("num_nodes_min", res)),
                num_nodes_max=int(spec.get("num_nodes_max", res)),
                bb=float(bb) if isinstance(bb, (int, float)) and not isinstance(bb, bool) and bb > 0 else 0.0)


def _capacity(resource: dict[str, Any]) -> float:
    """A storage resource's ``bb_capacity`` property in bytes (0 without one)."""
    try:
        value = float((resource.get("properties") or {}).get("bb_capacity", 0))
    except (TypeError, ValueError):
        return 0.0
    return value if value > 0 and value != float("inf") else 0.0


def _models(job: EJob, data: dict[str, Any]) -> None:
    """What the policy may know of a job's time: its elastic model (its own ``application``, or
    its profile's ``elastic`` when the profile is forwarded on submission) and a forwarded
    ``delay`` profile's delay.  (The simulator checked them before the run.)"""
    from coburst.models.elastic import parse_elastic

    profile = data.get("profile")
    if isinstance(profile, dict) and profile.get("type") == "delay":
        job.delay = float(profile["delay"])
    spec = data["job"].get("elastic")
    if isinstance(spec, dict) and ("application" in spec or isinstance(profile, dict) and "elastic" in profile):
        job.model = parse_elastic(data["job"], profile, "JOB_SUBMITTED", job.id)


class ElasticLink:
    """A scheduler link running an elastic policy in the simulator's process.

    It announces the extension (``NOTIFY elastic_jobs``) in its first reply when the simulator
    offered it (``SIMULATION_BEGINS``'s ``config["elastic-jobs"]``); ``announce=False`` never
    does (the simulator then runs every job as Batsim does)."""

    endpoint = "in-process (elastic)"

    def __init__(self, policy: ElasticPolicy, announce: bool = True):
        self.policy = policy
        self.announce = announce
        self.state = ElasticState()
        self.wall_time_waiting = 0.0
        self.nb_exchanges = 0
        self.ended = False
        #: both sides take part in the extension (known at SIMULATION_BEGINS)
        self.agreed = False
        #: every decision sent: (date, type, data) (tests)
        self.trace: list[tuple[float, str, dict]] = []

    def exchange(self, now: float, events: list) -> dict[str, Any]:
        wall = time.perf_counter()
        reply = self.respond(json.loads(encode_message(now, events)))
        self.nb_exchanges += 1
        self.wall_time_waiting += time.perf_counter() - wall
        return check_reply(reply)

    def respond(self, msg: dict[str, Any]) -> dict[str, Any]:
        """The reply to one decoded simulator message."""
        st = self.state
        now = st.now = float(msg["now"])
        out: list[dict[str, Any]] = []
        for ev in msg["events"]:
            etype, data = ev["type"], ev.get("data") or {}
            if etype == "SIMULATION_BEGINS":
                st.compute = sorted(r["id"] for r in data["compute_resources"])
                st.free = set(st.compute)
                st.bb_capacity = sum(_capacity(r) for r in data.get("storage_resources", []))
                self.agreed = self.announce and "elastic-jobs" in data.get("config", {})
                if self.agreed:
                    out.append({"timestamp": now, "type": "NOTIFY", "data": {"type": "elastic_jobs"}})
            elif etype == "JOB_SUBMITTED":
                job = job_of(data["job_id"], data["job"])
                if not self.agreed:  # (the simulator runs it rigid)
                    job.kind, job.num_nodes_min, job.num_nodes_max = "rigid", job.res, job.res
                else:
                    _models(job, data)
                st.queue.append(job)
            elif etype == "JOB_COMPLETED":
                job = st.running.pop(data["job_id"], None)
                if job is not None:
                    st.free.update(job.alloc)
            elif etype == "JOB_SCHEDULING_POINT":
                job = st.running.get(data["job_id"])
                if job is not None:
                    job.point = data
            elif etype == "SIMULATION_ENDS":
                self.ended = True
        if not self.ended:
            decisions = Decisions(st)
            self.policy.schedule(st, decisions)
            for etype, data in decisions.events:
                out.append({"timestamp": now, "type": etype, "data": data})
                self.trace.append((now, etype, data))
        for job in st.running.values():
            job.point = None  # a point is answered in the reply to its message only
        return {"now": now, "events": out}

    def close(self) -> None:
        pass


def serve(endpoint: str, policy: ElasticPolicy) -> int:
    """Run ``policy`` as an external scheduler: a ZeroMQ REP socket bound at ``endpoint``, as
    pybatsim binds it, answering the simulator's messages until ``SIMULATION_ENDS``."""
    import zmq

    link = ElasticLink(policy)
    context = zmq.Context()
    socket = context.socket(zmq.REP)
    socket.bind(endpoint)
    try:
        while not link.ended:
            reply = link.respond(json.loads(socket.recv()))
            socket.send(json.dumps(reply, separators=(",", ":")).encode())
    finally:
        socket.close(linger=1000)
        context.term()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m coburst.adapter.elastic POLICY [-o JSON] [-s ENDPOINT]``: an elastic policy as
    an external scheduler (``coburst run POLICY --transport zmq`` starts it)."""
    import argparse

    from coburst import registry
    from coburst.errors import CoburstError

    parser = argparse.ArgumentParser(prog="python -m coburst.adapter.elastic")
    parser.add_argument("policy")
    parser.add_argument("-o", "--options", default="{}")
    parser.add_argument("-s", "--socket-endpoint", default="tcp://*:28000")
    args = parser.parse_args(argv)
    try:
        name = args.policy if ":" in args.policy else f"elastic:{args.policy}"
        policy = registry.get(name, **json.loads(args.options))
    except (CoburstError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return serve(args.socket_endpoint, policy)


def forward_profiles(config, policy: ElasticPolicy) -> None:
    """A policy that reads the jobs' models (``needs_profiles``) has the profiles forwarded on
    submission (Batsim's ``--forward-profiles-on-submission``)."""
    if getattr(policy, "needs_profiles", False):
        from coburst.simulator.options import DEFAULTS

        config.batsim_options = {**(config.batsim_options or DEFAULTS), "forward_profiles_on_submission": True}


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
    forward_profiles(cfg, policy)
    sim = Simulator(cfg)
    sim.link = ElasticLink(policy)
    result = sim.run()
    result.link = sim.link
    result.simulator = sim
    return result


if __name__ == "__main__":  # pragma: no cover - run as a process
    sys.exit(main())
