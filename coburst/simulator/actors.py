"""Batsim 4.2.1's actors as kernel processes (``job_submitter.cpp``, ``network.cpp``,
``jobs_execution.cpp``'s waiter and killer, ``server.cpp``'s loop).

* ``server`` (on the master host) owns the simulation state.  It receives internal
  messages on the ``server`` mailbox, turns them into protocol events and, whenever the
  scheduler is ready and no other internal message is pending, sends the pending events;
* one ``submitter`` per workload (on the master host) releases jobs at their submission
  times;
* a ``request-reply`` process performs one exchange with the scheduler (ZeroMQ, or memory
  for an in-process scheduler) and forwards every decision of the reply to the server,
  dated by its timestamp, then SCHED_READY at the reply's ``now``;
* ``waiter`` processes for ``CALL_ME_LATER`` and ``killer`` processes for ``KILL_JOB``.

Every internal message is a 1-byte SimGrid communication to the master host, exactly like
Batsim's ``mailbox->put(msg, 1)``: route latency, then 1 byte at the bottleneck bandwidth,
served one at a time (:meth:`BatsimActors.to_server`).

:class:`BatsimActors` is one part of :class:`coburst.simulator.engine.Simulator`.
"""

from __future__ import annotations

from time import perf_counter
from typing import Any, Generator

from coburst.errors import ProtocolError
from coburst.simulator.kernel import Get, Put, Sleep
from coburst.simulator.l07 import LOOPBACK_BANDWIDTH, Route, private_route
from coburst.simulator.platform import master_zone_routing
from coburst.simulator.output import to_ld
from coburst.simulator.workload import Job, Workload

#: the routings whose hosts without a route to themselves use SimGrid 3.32's loopback link
LOOPBACK_ZONES = ("Full", "Floyd", "Dijkstra", "DijkstraCache")
#: a route without link nor latency (a message over it is received at the next step)
NO_ROUTE = Route([], 0.0)
#: what a link's ``exchange`` returns when it answers later (``coburst.gym``): the process
#: ``request_reply`` yields it and the kernel pauses; the run resumes with the reply
DEFERRED = "deferred reply"


class BatsimActors:
    """The simulator's processes: server, submitters, request-reply, waiters, killers."""

    #: ``--events``: the external events' submitters and handlers (coburst.simulator.events)
    external = None
    #: ``-W``/``--WS``: the workflows' submitters and the server's side of them (coburst.simulator.workflow)
    workflows = None
    #: perf_counter date of the next call of ``config.on_progress``
    _progress_due = 0.0

    def message_route(self, src, dst) -> Route:
        """The route of a message from ``src`` to ``dst`` as SimGrid 3.32 gives it to Batsim's
        ``mailbox->put`` under ``ptask_L07``: the platform's links, shared with the parallel
        tasks and other messages crossing them (a message during a communicating job takes
        longer), and the routes SimGrid 4.1's binding cannot tell."""
        known = self.message_routes.get((id(src), id(dst)))  # (a host's name is a slow binding call)
        if known is not None:
            return known[2]
        key = (src.name, dst.name)
        by_name = self.message_routes.get(key)
        route = by_name[2] if by_name is not None else self._message_route(src, dst)
        # the hosts are kept with their route: their ids cannot be reused by other objects
        self.message_routes[key] = self.message_routes[(id(src), id(dst))] = (src, dst, route)
        return route

    def _message_route(self, src, dst) -> Route:
        master = self.machines.master
        zone = None
        if src is dst:
            zone = self.master_zone if src is master else master_zone_routing(self.config.platform, src.name)
            if src is master and self.master_in_empty_zone:
                return NO_ROUTE  # no route (and no latency) inside a routing="None" zone
            if zone == "Vivaldi":
                # SimGrid 4.1's Python route_to fails on a Vivaldi host to itself; SimGrid 3.32
                # routes it without any link (a coordinates-only host: no latency either)
                return NO_ROUTE
        try:
            route = self.kernel.network.route(src, dst)
        except Exception:  # noqa: BLE001 - SimGrid 4.1 cannot tell (e.g. a Vivaldi host to itself)
            return NO_ROUTE
        if not route.links and src is dst and zone in LOOPBACK_ZONES:
            # SimGrid 3.32 (Batsim 4.2.1's) gives a host of such a zone without a route to
            # itself the network model's loopback link (10 GBps, no latency, FATPIPE: a link
            # of the message's own; measured)
            return private_route(0.0, LOOPBACK_BANDWIDTH)
        return route

    #: the route of a message from the master host to itself (worked out at its first use)
    _master_route = None

    def to_server(self, message: tuple, host=None) -> Put:
        """A message to the server from a process on ``host`` (default: the master host)."""
        if host is None:
            route = self._master_route
            if route is None:
                master = self.machines.master
                route = self._master_route = self.message_route(master, master)
        else:
            route = self.message_route(host, self.machines.master)
        return Put(self.server_box, message, route=route)

    def submitter(self, wl: Workload) -> Generator:
        """Release the jobs of one static workload at their submission times
        (``job_submitter.cpp`` ``static_job_submitter_process``)."""
        yield self.to_server(("HELLO",))
        current = self.kernel.now
        batch: list[Job] = []
        first = True
        for job in wl.submission_order():  # a streamed file: read as the dates come
            if job.subtime > current:
                if batch:
                    yield self.to_server(("SUBMIT", batch))
                    batch = []
                yield Sleep(float(to_ld(job.subtime) - to_ld(current)))  # Batsim: long double dates
                current = self.kernel.now
            batch.append(job)
            if first:
                first = False
                if self.power is not None:  # Batsim: energy_first_job_submission
                    self.power.first_submission(self.kernel.now)
        if batch:
            yield self.to_server(("SUBMIT", batch))
        yield self.to_server(("BYE",))

    def request_reply(self, events: list[dict[str, Any]]) -> Generator:
        """One exchange with the scheduler, then each decision to the server at its date
        (``network.cpp`` ``request_reply_scheduler_process``, ``protocol.cpp``
        ``send_message_at_time``), then SCHED_READY at the reply's ``now``."""
        reply = self.exchange(events)
        if reply is DEFERRED:  # the link answers later (coburst.gym): the kernel pauses until it does
            reply = self._replied(self.kernel.now, (yield DEFERRED))
        kernel = self.kernel
        for event in reply["events"]:
            date = float(event["timestamp"])
            if date > kernel.now:
                yield Sleep(date - kernel.now)
            yield self.to_server(("DECISION", event))
        date = float(reply["now"])
        if date > kernel.now:
            yield Sleep(date - kernel.now)
        yield self.to_server(("READY",))

    def exchange(self, events: list[dict[str, Any]]) -> dict[str, Any]:
        now = self.kernel.now
        reply = self.link.exchange(now, events)
        return reply if reply is DEFERRED else self._replied(now, reply)

    def _replied(self, now: float, reply: dict[str, Any]) -> dict[str, Any]:
        if self.end_sent and reply["events"]:
            types = ", ".join(sorted({str(e.get("type")) for e in reply["events"]}))
            raise ProtocolError(f"the scheduler answered SIMULATION_ENDS with events ({types}); the reply to "
                                "SIMULATION_ENDS must contain no events")
        if self.config.on_progress is not None:
            wall = perf_counter()
            if wall >= self._progress_due:  # a progress bar needs no more than 20 updates a second
                self._progress_due = wall + 0.05
                self.config.on_progress(now, self.nb_completed, self.nb_submitted)
        return reply

    def waiter(self, target: float) -> Generator:
        """``CALL_ME_LATER`` (``jobs_execution.cpp`` ``waiter_process``)."""
        now = self.kernel.now
        if now < target:
            yield Sleep(max(target - now, 1e-5))
        if not self.end_sent:
            yield self.to_server(("WAITING_DONE", target))
        else:
            self.nb_waiters -= 1

    def killer(self, ids: list[str]) -> Generator:
        """``KILL_JOB`` (``jobs_execution.cpp`` ``killer_process``): record the progress of
        the running jobs, stop them, then tell the server."""
        progress: dict[str, Any] = {}
        now = self.kernel.now
        for jid in ids:
            sjob = self.jobs[jid]
            if sjob.state == "RUNNING":
                run = sjob.run
                progress[jid] = run.progress(now)
                proc = run.proc
                if proc.activity is not None:
                    # a running parallel task is cancelled: the job ends by itself (code -2)
                    self.kernel.cancel_activity(proc)
                else:
                    self.kernel.kill(proc)
                    sjob.state = "COMPLETED_KILLED"
                    sjob.return_code = -1
                    sjob.finish = now  # a null runtime becomes 1e-5 in the outputs (JobRecord.times)
                    self._end_job(sjob)
        yield self.to_server(("KILLING_DONE", ids, progress))

    def server(self) -> Generator:
        """The server loop (``server.cpp`` ``server_process``)."""
        self.append("SIMULATION_BEGINS", self.simulation_begins())
        self._call_scheduler()
        box = self.server_box
        get = Get(box)  # (the kernel only reads a request: one for every message)
        while not self.done:
            message = yield get
            if self.workflows is not None and message[0] == "COMPLETED":
                callback = self.workflows.callback(message[1].id)  # a workflow's job: its submitter first
                if callback is not None:
                    yield callback
            self.handle(message)
            if self.done:
                break
            if self.sched_ready and not self.end_sent and (not box.pending or (box.busy and len(box.pending) == 1)):
                # (box.empty())
                if self.events:
                    self._call_scheduler()
                elif self.is_finished():
                    self.end_sent = True
                    self.append("SIMULATION_ENDS", {})
                    self._call_scheduler()
                elif self.is_stalled():
                    raise ProtocolError(self.stall_message())
        self.kernel.stop()

    def _call_scheduler(self) -> None:
        events, self.events = self.events, []
        self.sched_ready = False
        if self.elastic is not None:
            self.elastic.sent()
        self.kernel.spawn(self.request_reply(events), "request_reply")
        for sjob in self.to_delete:  # Batsim's delete_jobs: forget them (memory stays flat)
            sjob.deleted = True
            if self.power is not None and sjob.run is not None and sjob.run.energy_zombie is not None:
                sjob.run.end_energy_zombie()  # (before SimGrid drops it: its hosts' load is read)
            if sjob.run is not None and sjob.run.proc is not None and sjob.run.proc.zombie is not None:
                self.kernel.end_zombie(sjob.run.proc)  # (stopped when its actor ended, normally)
            sjob.run = None
            self.jobs.pop(sjob.id, None)
            wl = self.workloads.get(sjob.job.workload)
            if sjob.job.dynamic or wl is None or wl.stream is None:
                self.deleted_ids.add(sjob.id)  # (a streamed file's job: see job_deleted)
            if not self.config.profile_reuse:
                self._collect_profile(sjob.job.workload, sjob.job.profile)
            if wl is not None and sjob.job.dynamic and hasattr(wl.profiles, "release"):
                wl.profiles.release(sjob.job.profile, not self.config.profile_reuse)  # (jobs.ProfileTable)
        self.to_delete = []

    def job_deleted(self, jid: str) -> bool:
        """Whether job ``jid`` finished and was forgotten (Batsim still knows its id).  The
        jobs of a streamed workload file are not listed: one the file holds, handed to the
        simulation already and no longer alive, is (the file is read again: error paths only)."""
        if jid in self.deleted_ids:
            return True
        wl = self.workloads.get(jid.partition("!")[0])
        if wl is None or wl.stream is None or jid in self.jobs:
            return False
        key = wl.has_job(jid)
        return key is not None and wl.released(key)

    def job_exists(self, jid: str) -> bool:
        """Batsim's ``Jobs::exists``: a live or finished job, or any job of a workload file
        (all loaded at the start, submitted or not)."""
        if jid in self.jobs or jid in self.deleted_ids:
            return True
        wl = self.workloads.get(jid.partition("!")[0])
        return wl is not None and wl.from_file and wl.has_job(jid) is not None

    def _collect_profile(self, wname: str, name: str) -> None:
        """``Profiles::remove_profile``: the profile, and the profiles of a composed one
        (its resolved ``profile_sequence``: none for one registered during the simulation),
        are no longer accessible by name."""
        key = (wname, name)
        if key in self.collected_profiles:
            return
        self.collected_profiles.add(key)
        prof = self.workloads[wname].profiles.get(name)
        if prof is not None and prof.type == "composed" and key not in self.late_profiles:
            for sub in prof.data["seq"]:
                self._collect_profile(wname, sub)

    def is_finished(self) -> bool:
        return (self.nb_submitters_done == self.nb_submitters
                and (self.external is None or self.external.done())
                and (not self.config.dynamic_jobs or self.registration_finished)
                and self.nb_completed == self.nb_submitted
                and self.nb_running == 0 and self.nb_waiters == 0 and self.nb_killers == 0
                and (self.power is None or self.power.nb_switching == 0))

    def is_stalled(self) -> bool:
        """Nothing can ever happen again: no process will send the server anything."""
        return (self.nb_submitters_done == self.nb_submitters and self.nb_running == 0
                and (self.external is None or self.external.done())
                and self.nb_waiters == 0 and self.nb_killers == 0
                and (self.power is None or self.power.nb_switching == 0))

    def stall_message(self) -> str:
        waiting = [j.id for j in self.jobs.values() if j.state == "SUBMITTED"]
        if waiting:
            shown = ", ".join(waiting[:5]) + (" ..." if len(waiting) > 5 else "")
            return (f"the simulation cannot progress: {len(waiting)} submitted job(s) ({shown}) were never "
                    f"executed nor rejected, no job is running and the scheduler asked for no callback "
                    f"(simulated time {self.now():.6f})")
        return ("the simulation cannot progress: dynamic job registration is enabled but the scheduler never "
                "sent NOTIFY registration_finished, and nothing else is pending "
                f"(simulated time {self.now():.6f})")
