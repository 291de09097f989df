"""The embedded Batsim-compatible simulator: Batsim 4.2.1's actors on coburst's kernel.

Structure (the same as Batsim 4.2.1, so that messages and dates match it; each actor is a
generator process of :mod:`coburst.simulator.kernel`, all run by one SimGrid actor):

* ``server`` (on the master host) owns the simulation state.  It receives internal
  messages on the ``server`` mailbox, turns them into protocol events and, whenever the
  scheduler is ready and no other internal message is pending, sends the pending events;
* one ``submitter`` per workload (on the master host) releases jobs at their submission
  times;
* a ``request-reply`` process performs one exchange with the scheduler (ZeroMQ, or memory
  for an in-process scheduler) and forwards every decision of the reply to the server,
  dated by its timestamp, then SCHED_READY at the reply's ``now``;
* one process per job, started when the server handles its EXECUTE_JOB (Batsim creates
  the job's actor directly on its first host), see :mod:`coburst.simulator.execution`;
* ``waiter`` processes for ``CALL_ME_LATER`` and ``killer`` processes for ``KILL_JOB``.

Every internal message is a 1-byte SimGrid communication to the master host, exactly like
Batsim's ``mailbox->put(msg, 1)``: route latency, then 1 byte at the bottleneck bandwidth,
served one at a time.  That is why a job's completion reaches the scheduler a little after
its end, and why decisions arrive one master-to-master message apart.
"""

from __future__ import annotations

import json
import os
import sys
import math
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Generator

from procset import ProcSet

from coburst import signals
from coburst.errors import CoburstError, InputError, Interrupted, ProtocolError
from coburst.simulator.allocation import parse_allocation
from coburst.simulator._simgrid import simgrid
from coburst.simulator.execution import JobRun
from coburst.simulator.kernel import Get, Kernel, Mailbox, Put, Sleep
from coburst.simulator.output import JOBS_COLUMNS, LD, SCHEDULE_KEYS, JobRecord, ScheduleStats, StagedFiles
from coburst.simulator.platform import Machines, assign_resources, check_xml, master_zone_routing, prevalidate
from coburst.simulator.protocol import RawJSON, SchedulerLink, encode_text, encode_value

_json_string = json.encoder.encode_basestring
from coburst.simulator.traces import TraceRecorder
from coburst.simulator.workload import (Job, Profile, Workload, job_from_json, load_workload, referenced_profiles,
                                       validate_profile)

_DEBUG = bool(os.environ.get("COBURST_DEBUG_SIM"))
#: SimGrid 3.32's ``network/loopback-bw`` default (bytes/s) and the routings that use it
LOOPBACK_BANDWIDTH = 10e9
LOOPBACK_ZONES = ("Full", "Floyd", "Dijkstra", "DijkstraCache")


@dataclass
class SimulatorConfig:
    platform: str
    workloads: list[str]
    export_prefix: str = "out"
    socket_endpoint: str = "tcp://localhost:28000"
    roles: dict[str, str] = field(default_factory=dict)
    master_host: str = "master_host"
    dynamic_jobs: bool = False
    ack_dynamic_jobs: bool = False
    profile_reuse: bool = False
    forward_unknown_events: bool = False
    timeout: float = 30.0
    #: ``"module:Class"`` of a speed hook (tests, experiments): ``Class(simulator)`` must
    #: provide ``on_job_start(sim_job)`` and ``on_job_end(sim_job)``; it may change a
    #: running job's speed with ``sim_job.run.set_rate(factor)`` (see execution.JobRun)
    speed_hook: str | None = None
    #: co-execution heatmap file (``--heatmap``): the speedup hook of coburst.simulator.speedup
    heatmap: str | None = None
    #: speed of a co-scheduled job with no neighbour: "best" (its heatmap row's best) or a factor
    heatmap_alone: str = "best"
    #: called regularly while waiting for the scheduler; returns a reason string if the
    #: scheduler process is known to be gone (used by ``coburst run``)
    peer_alive: Callable[[], str | None] | None = None
    #: called with the simulated time after each scheduler exchange (progress bars)
    on_progress: Callable[[float, int, int], None] | None = None
    #: the other Batsim 4.2.1 options (``coburst.cli.sim.batsim_options``; None: ``simulator.options.DEFAULTS``)
    batsim_options: dict | None = None


@dataclass
class SimJob:
    """A job in the simulator: its description plus its execution state."""

    job: Job
    state: str = "NOT_SUBMITTED"
    alloc: ProcSet | None = None
    start: float = -1.0
    finish: float = -1.0
    return_code: int = -1
    run: JobRun | None = None
    kill_requested: bool = False
    deleted: bool = False
    storage_mapping: dict[str, int] | None = None
    mapping: dict[int, int] | None = None
    energy: Any = None  # -E: the allocation's energy at the start, then the job's consumed energy

    _alloc_text: str | None = None

    @property
    def alloc_text(self) -> str:
        """The allocation as Batsim prints it (``0-3 8``)."""
        if self._alloc_text is None:
            self._alloc_text = str(self.alloc)
        return self._alloc_text

    @property
    def id(self) -> str:
        return self.job.id

    @property
    def walltime(self) -> float:
        return self.job.walltime


@dataclass
class SimResult:
    prefix: str
    jobs_csv: Path
    schedule_csv: Path
    schedule: dict[str, str]
    wall_seconds: float
    nb_compute: int = 0

    def summary(self) -> str:
        s = self.schedule
        return (f"coburst sim: {s['nb_jobs']} jobs ({s['nb_jobs_success']} succeeded, {s['nb_jobs_killed']} killed, "
                f"{s['nb_jobs_rejected']} rejected), makespan {float(s['makespan']):.3f} s, "
                f"mean waiting time {float(s['mean_waiting_time']):.3f} s; simulated in {self.wall_seconds:.2f} s "
                f"-> {self.jobs_csv}, {self.schedule_csv}")


def load_speed_hook(spec: str) -> type:
    """The class named by ``"package.module:Class"`` (``--speed-hook``)."""
    import importlib

    module_name, sep, class_name = spec.partition(":")
    if not sep or not module_name or not class_name:
        raise InputError("--speed-hook", spec, "expected MODULE:CLASS")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError("--speed-hook", spec, f"cannot import module {module_name!r}: {exc}") from None
    cls = getattr(module, class_name, None)
    if cls is None or not all(callable(getattr(cls, m, None)) for m in ("on_job_start", "on_job_end")):
        raise InputError("--speed-hook", spec, f"{module_name} has no class {class_name!r} with "
                                               "on_job_start() and on_job_end()")
    return cls


class Simulator:
    """One simulation run: ``Simulator(config).run()``."""

    def __init__(self, config: SimulatorConfig):
        self.config = config
        self.workloads: dict[str, Workload] = {}
        self.jobs: dict[str, SimJob] = {}
        self.events: list[RawJSON] = []  # encoded events for the next message
        self.stats = ScheduleStats()
        self.deleted_ids: set[str] = set()
        self.nb_records = 0
        self.failure: BaseException | None = None
        self.collected_profiles: set[tuple[str, str]] = set()
        # counters (Batsim's ServerData)
        self.nb_submitters = 0
        self.nb_submitters_done = 0
        self.nb_submitted = 0
        self.nb_completed = 0
        self.nb_running = 0
        self.nb_waiters = 0
        self.nb_killers = 0
        self.registration_finished = False
        self.sched_ready = True
        self.end_sent = False
        self.done = False
        self.to_delete: list[SimJob] = []
        # machine-time accounting (Batsim's time_spent_in_each_state)
        self.machine_busy: list[int] = []
        self.machine_last_change: list = []  # long double dates, per machine
        self.machine_computing: list = []  # long double seconds computing, per machine
        self.machine_idle: list = []
        self.speed_hook = None
        self.master_routes: dict[str, tuple[float, float]] = {}
        self.kernel = Kernel()
        self.server_box = Mailbox("server")
        self.link = None
        self.power = None  # -E: coburst.simulator.energy.PowerManager
        self._free_routes: dict[tuple[str, str], bool] = {}
        self._meter = None

    # ================================================================== set-up
    def load_inputs(self) -> None:
        """Load and validate workloads, then the platform (errors before anything runs)."""
        for i, path in enumerate(self.config.workloads):
            name = f"w{i}"
            self.workloads[name] = load_workload(path, name)
        check_xml(self.config.platform)
        if self.config.profile_reuse and not self.config.dynamic_jobs:
            raise InputError("--enable-profile-reuse", None, "profile reuse needs --enable-dynamic-jobs")
        from coburst.simulator.options import default_batsim_options, machine_limit, simulation_begins_config

        self._begins_config = simulation_begins_config

        self.options = opts = self.config.batsim_options or default_batsim_options()
        # Batsim: --sg-cfg options first, host/model:ptask_L07 forced, then --sg-log.  No SimGrid
        # clean-up at exit: after a SIGINT/SIGTERM at simulated time 0 (actors created, the run not
        # started yet) it aborts the process ("stop-before-start madness") instead of exiting 130/143.
        engine_args = ["coburst", "--cfg=debug/clean-atexit:no", *(f"--cfg={c}" for c in opts["sg_cfg"]),
                       "--cfg=host/model:ptask_L07",
                       "--log=root.thresh:critical", "--log=xbt_cfg.thresh:critical",
                       *(f"--log={c}" for c in opts["sg_log"])]
        max_compute = machine_limit(opts, [wl.nb_res for wl in self.workloads.values() if wl.nb_res is not None])
        # SimGrid aborts the process on some bad platforms: try them in a child process first
        # hosts without a route between them: a warning; as in Batsim (SimGrid 3.32), an undeclared
        # route is empty (no latency, no bandwidth limit) where a run uses it
        prevalidate(self.config.platform, self.config.master_host, self.config.roles, engine_args)
        self.engine = simgrid.Engine(engine_args)
        signals.reinstall()  # SimGrid replaced the SIGINT handler: Ctrl-C must stop cleanly
        try:
            self.engine.load_platform(str(Path(self.config.platform).resolve()))
        except Exception as exc:  # SimGrid raises on semantic errors of the platform
            raise InputError(self.config.platform, None, f"SimGrid cannot load the platform: {exc}") from None
        self.machines: Machines = assign_resources(self.engine, self.config.platform, self.config.master_host,
                                                   self.config.roles, max_compute)
        self.resources = self.machines.resources
        self.machine_busy = [0] * len(self.resources)
        zero = LD(0)
        self.machine_last_change = [zero] * len(self.resources)
        self.machine_computing = [zero] * len(self.resources)
        self.machine_idle = [zero] * len(self.resources)
        self.master_zone = master_zone_routing(self.config.platform, self.machines.master.name)
        self.master_in_empty_zone = self.master_zone == "None"
        # asked from inside the simulation (SimGrid 4.1 crashes on a host's route to itself
        # asked from outside any actor when the host sits in a nested Full zone)
        self.master_route = None
        self.traces = TraceRecorder.from_options([r.name for r in self.resources], len(self.machines.compute),
                                                 opts)
        if opts.get("energy"):
            from coburst.simulator.energy import PowerManager

            self._meter = PowerManager.read_meter(self, self.config.platform)
        if self.config.speed_hook and self.config.heatmap:
            raise InputError("--heatmap", self.config.heatmap, "cannot be combined with --speed-hook")
        if self.config.speed_hook:
            self.speed_hook = load_speed_hook(self.config.speed_hook)(self)
        elif self.config.heatmap:
            from coburst.simulator.speedup import make_hook

            self.speed_hook = make_hook(self)

    def run(self) -> SimResult:
        wall_start = time.perf_counter()
        self.load_inputs()
        prefix = self.config.export_prefix
        jobs_csv, sched_csv = Path(f"{prefix}_jobs.csv"), Path(f"{prefix}_schedule.csv")
        trace_path, states_path = TraceRecorder.paths(prefix)
        paths = [jobs_csv, sched_csv]
        if self.traces.schedule_trace:
            paths.append(trace_path)
        if self.traces.machine_states:
            paths.append(states_path)
        energy_paths = []
        if self._meter is not None:
            energy_paths = [Path(f"{prefix}_consumed_energy.csv"), Path(f"{prefix}_pstate_changes.csv")]
            paths.extend(energy_paths)
        try:
            # written as the simulation goes (memory stays flat), renamed at the end
            self.outputs = StagedFiles(paths)
        except OSError as exc:
            raise InputError(f"-e/--export {prefix}", None, f"cannot write the outputs: {exc}") from None
        handles = dict(zip(paths, self.outputs.handles))
        self._jobs_out = handles[jobs_csv]
        self._jobs_out.write(JOBS_COLUMNS + "\n")
        self._trace_out = (handles.get(trace_path), handles.get(states_path))
        try:
            if self._meter is not None:
                from coburst.simulator.energy import PowerManager

                self.power = PowerManager.start(self, self._meter, *(handles[p] for p in energy_paths))
            if self.link is None:
                self.link = SchedulerLink(self.config.socket_endpoint, self.config.timeout, self.config.peer_alive)
            try:
                kernel = self.kernel
                kernel.spawn(self.server(), "server")
                for name, wl in self.workloads.items():
                    self.nb_submitters += 1
                    kernel.spawn(self.submitter(wl), f"submitter_{name}")
                with warnings.catch_warnings():  # SimGrid 4.1's Engine.add_actor binding is unusable
                    warnings.simplefilter("ignore", DeprecationWarning)
                    simgrid.Actor.create("coburst", self.machines.master, self._guarded(kernel.main))
                self.engine.run()
            finally:
                if isinstance(self.failure, Interrupted) and hasattr(self.link, "interrupt"):
                    self.link.interrupt(self.kernel.now)  # SIGINT/SIGTERM: the scheduler is told
                self.link.close()
            if self.failure is not None:
                raise self.failure
            if not self.done:
                raise ProtocolError(self.stall_message() if self.is_stalled() else
                                    "the simulation stopped before its end (deadlock in the simulated platform)")
            wall = time.perf_counter() - wall_start
            time_computing, time_idle = LD(0), LD(0)
            for computing, idle in zip(self.machine_computing, self.machine_idle):  # Batsim: in machine order
                time_computing += computing
                time_idle += idle
            schedule = self.stats.row(len(self.resources), time_computing, time_idle,
                                      self.link.wall_time_waiting, wall)
            if self.power is not None:
                schedule.update(self.power.schedule_values())
            handles[sched_csv].write(",".join(SCHEDULE_KEYS) + "\n" + ",".join(schedule[k] for k in SCHEDULE_KEYS)
                                     + "\n")
            self.traces.finish(self.kernel.now)
            self.traces.drain(*self._trace_out)
            self.outputs.commit()
        except BaseException:
            self.outputs.abort()
            raise
        return SimResult(prefix, jobs_csv, sched_csv, schedule, wall, nb_compute=len(self.machines.compute))

    def abort_outputs(self) -> None:
        """Remove the partial outputs (a run ended from outside, e.g. a hung scheduler)."""
        outputs = getattr(self, "outputs", None)
        if outputs is not None:
            outputs.abort()

    def record(self, rec: JobRecord) -> None:
        """A job's row of ``_jobs.csv`` (written when Batsim writes it: at its end or rejection)."""
        self._jobs_out.write(rec.csv_row() + "\n")
        self.stats.add(rec)
        self.nb_records += 1
        if self.nb_records % 2000 == 0:
            self.traces.drain(*self._trace_out)

    def _guarded(self, body: Callable) -> Callable:
        """Run the kernel; on error record it and stop the simulation."""

        def actor(*args):
            try:
                body(*args)
            except BaseException as exc:  # noqa: BLE001 - re-raised by run()
                name = type(exc).__name__
                if isinstance(exc, simgrid.ActorKilled) or name == "ForcefulKillException":
                    raise
                self.failure = exc if isinstance(exc, (CoburstError, Interrupted)) else ProtocolError(
                    f"internal simulator error: {name}: {exc}")
                if not isinstance(exc, (CoburstError, Interrupted)):
                    import traceback

                    self.failure.__cause__ = exc
                    self.failure.traceback = traceback.format_exc()
                simgrid.Actor.kill_all()

        return actor

    # ================================================================== helpers
    def now(self) -> float:
        return self.kernel.now

    def route_to_master(self, host) -> tuple[float, float]:
        """(latency, bottleneck bandwidth) of the route from ``host`` to the master host, as
        Batsim's 1-byte ``mailbox->put(msg, 1)`` uses it under ``ptask_L07`` (bandwidth
        ``inf``: no link on the route)."""
        route = self.master_routes.get(host.name)
        if route is None:
            if host is self.machines.master and self.master_in_empty_zone:
                route = (0.0, math.inf)  # no route (and no latency) inside a routing="None" zone
            elif host is self.machines.master and self.master_zone == "Vivaldi":
                # SimGrid 4.1's Python route_to fails on a Vivaldi host to itself; SimGrid 3.32
                # routes it without any link (a coordinates-only host: no latency either)
                route = (0.0, math.inf)
            else:
                links, latency = host.route_to(self.machines.master)  # (links, total latency)
                if not links and host is self.machines.master and self.master_zone in LOOPBACK_ZONES:
                    # SimGrid 3.32 (Batsim 4.2.1's) gives a host of such a zone without a route to
                    # itself the network model's loopback link (10 GBps, no latency; measured)
                    route = (0.0, LOOPBACK_BANDWIDTH)
                else:
                    bandwidth = min((link.bandwidth for link in links), default=0.0)
                    route = (latency, bandwidth if bandwidth > 0 else math.inf)
            self.master_routes[host.name] = route
        return route

    def append(self, etype: str, data: dict[str, Any]) -> None:
        """Queue an event for the scheduler, encoded at once (Batsim's writer appends it to the
        message being built, dated now)."""
        out = ['{"timestamp":', "%6f" % self.kernel.now, ',"type":', _json_string(etype), ',"data":']
        encode_value(data, out)
        out.append("}")
        self.events.append(RawJSON("".join(out)))

    def profile_of(self, sjob: SimJob) -> Profile:
        return self.workloads[sjob.job.workload].profiles[sjob.job.profile]

    def profile_named(self, sjob: SimJob, name: str) -> Profile:
        return self.workloads[sjob.job.workload].profiles[name]

    def _set_machines(self, ids: ProcSet, delta: int) -> None:
        """A job starts (+1) or ends (-1) on machines ``ids``: account the time each machine
        spent in its previous state (Batsim's ``Machine::update_machine_state``, long double)."""
        now = LD(self.kernel.now)
        busy_list, last = self.machine_busy, self.machine_last_change
        for rid in ids:
            busy = busy_list[rid]
            new = busy + delta
            if (busy == 0) != (new == 0):
                span = now - last[rid]
                if busy == 0:
                    self.machine_idle[rid] += span
                else:
                    self.machine_computing[rid] += span
                last[rid] = now
            busy_list[rid] = new

    def to_server(self, message: tuple, host=None) -> Put:
        """A message to the server from a process on ``host`` (default: the master host)."""
        if host is None:
            if self.master_route is None:
                self.master_route = self.route_to_master(self.machines.master)
            latency, bandwidth = self.master_route
        else:
            latency, bandwidth = self.route_to_master(host)
        return Put(self.server_box, message, latency, bandwidth)

    # ================================================================== Batsim's actors
    def submitter(self, wl: Workload) -> Generator:
        """Release the jobs of one static workload at their submission times
        (``job_submitter.cpp`` ``static_job_submitter_process``)."""
        yield self.to_server(("HELLO",))
        current = self.kernel.now
        batch: list[Job] = []
        first = True
        for job in sorted(wl.jobs, key=lambda j: (j.subtime, j.id)):
            if job.subtime > current:
                if batch:
                    yield self.to_server(("SUBMIT", batch))
                    batch = []
                yield Sleep(float(LD(job.subtime) - LD(current)))  # Batsim: long double dates
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
        if self.end_sent and reply["events"]:
            types = ", ".join(sorted({str(e.get("type")) for e in reply["events"]}))
            raise ProtocolError(f"the scheduler answered SIMULATION_ENDS with events ({types}); the reply to "
                                "SIMULATION_ENDS must contain no events")
        if self.config.on_progress is not None:
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
        while not self.done:
            message = yield Get(box)
            self.handle(message)
            if self.done:
                break
            if self.sched_ready and not self.end_sent and box.empty():
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
        self.kernel.spawn(self.request_reply(events), "request_reply")
        for sjob in self.to_delete:  # Batsim's delete_jobs: forget them (memory stays flat)
            sjob.deleted = True
            if self.power is not None and sjob.run is not None and sjob.run.energy_zombie is not None:
                sjob.run.end_energy_zombie()  # (before SimGrid drops it: its hosts' load is read)
            if sjob.run is not None and sjob.run.proc is not None and sjob.run.proc.zombie is not None:
                self.kernel.end_zombie(sjob.run.proc)  # its timed-out parallel task stops now
            sjob.run = None
            self.jobs.pop(sjob.id, None)
            self.deleted_ids.add(sjob.id)
            if not self.config.profile_reuse:
                self.collected_profiles.add((sjob.job.workload, sjob.job.profile))
        self.to_delete = []

    def is_finished(self) -> bool:
        return (self.nb_submitters_done == self.nb_submitters
                and (not self.config.dynamic_jobs or self.registration_finished)
                and self.nb_completed == self.nb_submitted
                and self.nb_running == 0 and self.nb_waiters == 0 and self.nb_killers == 0
                and (self.power is None or self.power.nb_switching == 0))

    def is_stalled(self) -> bool:
        """Nothing can ever happen again: no process will send the server anything."""
        return (self.nb_submitters_done == self.nb_submitters and self.nb_running == 0
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

    # ================================================================== protocol: outgoing
    def simulation_begins(self) -> dict[str, Any]:
        cfg = self.config
        compute = [r for r in self.resources if r.role == "compute"]
        storage = [r for r in self.resources if r.role == "storage"]

        zone_props = self.zone_properties()

        def res_json(r):
            return {"id": r.id, "name": r.name, "state": "idle", "properties": dict(r.properties),
                    "zone_properties": zone_props.get(r.name, {})}

        return {
            "nb_resources": len(self.resources),
            "nb_compute_resources": len(compute),
            "nb_storage_resources": len(storage),
            "allow_compute_sharing": self.options["enable_compute_sharing"],
            "allow_storage_sharing": not self.options["disable_storage_sharing"],
            "config": self._begins_config(self.options, dynamic_jobs=cfg.dynamic_jobs,
                                               ack_dynamic_jobs=cfg.ack_dynamic_jobs,
                                               profile_reuse=cfg.profile_reuse),
            "compute_resources": [res_json(r) for r in compute],
            "storage_resources": [res_json(r) for r in storage],
            "workloads": {name: str(Path(wl.path).resolve()) for name, wl in sorted(self.workloads.items())},
            "profiles": {name: {p.name: p.data for p in wl.profiles.values() if p.name in kept}
                         for name, wl in sorted(self.workloads.items())
                         for kept in (referenced_profiles(wl),)},
        }

    # ================================================================== protocol: incoming
    def handle(self, message: tuple) -> None:
        kind = message[0]
        if _DEBUG:
            print(f"{self.kernel.now!r} {kind} {str(message[1:])[:100]}", file=sys.stderr)
        if kind == "SUBMIT":
            for job in message[1]:
                sjob = SimJob(job=job, state="SUBMITTED")
                self.jobs[job.id] = sjob
                self.nb_submitted += 1
                self.append("JOB_SUBMITTED", self.submitted_data(sjob))
        elif kind == "HELLO":
            pass
        elif kind == "SWITCHED":
            self.power.on_switched(message[1], message[2])
        elif kind == "BYE":
            self.nb_submitters_done += 1
            if self.nb_submitters_done == self.nb_submitters:
                self.append("NOTIFY", {"type": "no_more_static_job_to_submit"})
        elif kind == "DECISION":
            self.apply_decision(message[1])
        elif kind == "READY":
            self.sched_ready = True
            if self.end_sent:
                self.done = True
        elif kind == "COMPLETED":
            sjob: SimJob = message[1]
            self.nb_running -= 1
            self.nb_completed += 1
            self.append("JOB_COMPLETED", {"job_id": sjob.id, "job_state": sjob.state,
                                          "return_code": sjob.return_code, "alloc": sjob.alloc_text})
            self.job_row(sjob)
            self.to_delete.append(sjob)
        elif kind == "WAITING_DONE":
            self.nb_waiters -= 1
            if not self.end_sent:
                self.append("REQUESTED_CALL", {})
        elif kind == "KILLING_DONE":
            _, ids, progress = message
            self.nb_killers -= 1
            for jid in ids:
                if jid in progress:
                    sjob = self.jobs[jid]
                    self.nb_running -= 1
                    self.nb_completed += 1
                    self.append("JOB_COMPLETED", {"job_id": jid, "job_state": sjob.state,
                                                  "return_code": sjob.return_code, "alloc": sjob.alloc_text})
                    self.job_row(sjob)
                    self.to_delete.append(sjob)
            self.append("JOB_KILLED", {"job_ids": ids, "job_progress": progress})
        else:  # pragma: no cover - internal
            raise ProtocolError(f"internal: unknown message {kind}")

    def zone_properties(self) -> dict[str, dict[str, str]]:
        """Each host's ``zone_properties`` (``machines.cpp`` ``attach_zone_properties_to_machines``):
        the properties of the netzones from the root down to the host's own, deeper ones
        overriding."""
        out: dict[str, dict[str, str]] = {}

        def visit(zone, inherited: dict[str, str]) -> None:
            props = {**inherited, **dict(zone.get_properties())}
            for host in zone.all_hosts:
                out[host.name] = props
            for child in zone.get_children():
                visit(child, props)

        visit(self.engine.netzone_root, {})
        return out

    def submitted_data(self, sjob: SimJob) -> dict[str, Any]:
        """JOB_SUBMITTED's data (with the profile under --forward-profiles-on-submission)."""
        job = sjob.job
        text = job.json_text
        if text is None:
            text = job.json_text = encode_text(job.json)
        data = {"job_id": sjob.id, "job": text}
        if self.options["forward_profiles_on_submission"]:
            data["profile"] = self.profile_of(sjob).data
        return data

    def _job(self, data: dict, etype: str, key: str = "job_id") -> SimJob:
        jid = data.get(key)
        if not isinstance(jid, str):
            raise ProtocolError(f"{etype}: '{key}' must be a job id string like \"w0!1\", got {json.dumps(jid)}")
        sjob = self.jobs.get(jid)
        if sjob is None or sjob.deleted:
            what = "has already finished and been reported" if jid in self.deleted_ids else "does not exist"
            raise ProtocolError(f"{etype}: job {jid!r} {what}")
        return sjob

    def apply_decision(self, event: dict[str, Any]) -> None:
        etype = event["type"]
        data = event.get("data")
        if not isinstance(data, dict):
            raise ProtocolError(f"{etype} event without a 'data' object: {json.dumps(event)[:200]}")
        handler = {
            "EXECUTE_JOB": self.on_execute_job, "REJECT_JOB": self.on_reject_job, "KILL_JOB": self.on_kill_job,
            "CALL_ME_LATER": self.on_call_me_later, "REGISTER_JOB": self.on_register_job,
            "REGISTER_PROFILE": self.on_register_profile, "SET_JOB_METADATA": self.on_set_job_metadata,
            "CHANGE_JOB_STATE": self.on_change_job_state, "NOTIFY": self.on_notify,
        }.get(etype)
        if handler is None:
            if etype in ("SET_RESOURCE_STATE", "QUERY"):
                if self.power is None:
                    raise ProtocolError(f"{etype} received, but energy is not simulated: run the simulator with "
                                        "-E/--energy (Batsim 4.2.1 aborts too)")
                if etype == "QUERY":
                    self.on_query(data)
                else:
                    self.power.set_resource_state(data)
                return
            raise ProtocolError(f"unknown event type {etype!r} from the scheduler")
        handler(data)

    def on_query(self, data: dict) -> None:
        """``QUERY`` (``handle_query``): only ``consumed_energy`` (with an empty object) exists."""
        requests = data.get("requests")
        if len(data) != 1 or not isinstance(requests, dict) or not requests:
            raise ProtocolError("QUERY: 'data' must be {\"requests\": {\"consumed_energy\": {}}}")
        for key, value in requests.items():
            if key != "consumed_energy":
                raise ProtocolError(f"QUERY: unknown request {key!r} (Batsim 4.2.1 knows only consumed_energy)")
            if value != {}:
                raise ProtocolError("QUERY consumed_energy: its value must be an empty object")
            self.power.answer_energy()

    def pstate_changed(self, rid: int) -> None:
        """Machine ``rid`` changed computation pstate: the parallel tasks coburst computes on it
        get SimGrid's new rate (those SimGrid simulates follow its host's pstate by themselves)."""
        if not self.machine_busy[rid]:
            return
        for sjob in self.jobs.values():
            run = sjob.run
            if run is not None and sjob.state == "RUNNING" and run.energy_task is not None and rid in sjob.alloc:
                run.retune()

    def on_execute_job(self, data: dict) -> None:
        sjob = self._job(data, "EXECUTE_JOB")
        extra = set(data) - {"job_id", "alloc"}
        if len(extra) > 1 or not extra <= {"mapping", "storage_mapping", "additional_io_job"}:
            raise ProtocolError(f"EXECUTE_JOB {sjob.id}: unexpected fields {sorted(extra)} (Batsim 4 accepts at "
                                "most one of mapping, storage_mapping, additional_io_job)")
        if "additional_io_job" in data:
            raise ProtocolError(f"EXECUTE_JOB {sjob.id}: additional_io_job is not supported by coburst sim")
        if sjob.state != "SUBMITTED":
            raise ProtocolError(f"EXECUTE_JOB: job {sjob.id!r} cannot be executed: its state is {sjob.state} "
                                "(a job is executed at most once, and only after its submission)")
        alloc_str = data.get("alloc")
        try:
            alloc, canonical = parse_allocation(alloc_str) if isinstance(alloc_str, str) else (None, False)
        except (ValueError, TypeError):
            alloc = None
        if alloc is None or len(alloc) == 0:
            raise ProtocolError(f"EXECUTE_JOB {sjob.id}: invalid allocation {json.dumps(alloc_str)} "
                                "(expected an interval set such as \"0-3 8\")")
        nres = len(self.resources)
        if alloc.max >= nres or alloc.min < 0:
            raise ProtocolError(f"EXECUTE_JOB {sjob.id}: allocation {alloc} is outside the platform "
                                f"(resource ids are 0-{nres - 1})")
        mapping = None
        if "mapping" in data:
            mapping = self._mapping(sjob, data["mapping"], len(alloc))
        profile = self.profile_of(sjob)
        size = len(mapping) if mapping is not None else len(alloc)
        if size != sjob.job.res and not self._total_profile(sjob, profile):
            raise ProtocolError(f"EXECUTE_JOB {sjob.id}: allocation {alloc} has {len(alloc)} resources but the job "
                                f"requests {sjob.job.res}")
        share_compute = self.options["enable_compute_sharing"]
        share_storage = not self.options["disable_storage_sharing"]
        for rid in alloc:
            res = self.resources[rid]
            if self.machine_busy[rid] > 0 and not (share_compute if res.role == "compute" else share_storage):
                what = "compute" if res.role == "compute" else "storage"
                option = "--enable-compute-sharing" if res.role == "compute" else "no --disable-storage-sharing"
                raise ProtocolError(f"EXECUTE_JOB {sjob.id}: resource {rid} ({res.name}) is already computing "
                                    f"another job and {what} sharing is disabled (Batsim needs {option})")
        if "storage_mapping" in data:
            smap = data["storage_mapping"]
            if not isinstance(smap, dict) or not all(isinstance(v, int) and not isinstance(v, bool)
                                                     for v in smap.values()):
                raise ProtocolError(f"EXECUTE_JOB {sjob.id}: storage_mapping must map labels to resource ids")
            for label, rid in smap.items():
                if not 0 <= rid < nres or self.resources[rid].role != "storage":
                    raise ProtocolError(f"EXECUTE_JOB {sjob.id}: storage_mapping[{label!r}] = {rid} is not a "
                                        "storage resource")
            sjob.storage_mapping = dict(smap)
        sjob.alloc = alloc
        if canonical:
            sjob._alloc_text = alloc_str
        sjob.mapping = mapping
        ids = list(alloc)
        hosts = [self.resources[ids[mapping[i]]].host for i in range(len(mapping))] if mapping else \
            [self.resources[i].host for i in ids]
        # check the profile can run here before starting anything
        self._check_profile_executable(sjob, profile, hosts)
        if self.power is not None:
            self.power.check_executable(sjob, alloc)
        sjob.state = "RUNNING"
        self.nb_running += 1
        run = JobRun(sim=self, job=sjob, hosts=hosts, first_host=self.resources[alloc.min].host)
        sjob.run = run
        run.proc = self.kernel.spawn(run.process(), sjob.id)

    def _mapping(self, sjob: SimJob, mapping: Any, nalloc: int) -> dict[int, int]:
        if not isinstance(mapping, dict):
            raise ProtocolError(f"EXECUTE_JOB {sjob.id}: mapping must be an object executor -> index in alloc")
        try:
            parsed = {int(k): int(v) for k, v in mapping.items()}
        except (TypeError, ValueError):
            raise ProtocolError(f"EXECUTE_JOB {sjob.id}: mapping keys and values must be integers") from None
        for i in range(len(parsed)):
            if i not in parsed:
                raise ProtocolError(f"EXECUTE_JOB {sjob.id}: mapping has no resource for executor {i}")
        if any(not 0 <= v < nalloc for v in parsed.values()):
            raise ProtocolError(f"EXECUTE_JOB {sjob.id}: mapping refers outside the allocation (size {nalloc})")
        return parsed

    def _total_profile(self, sjob: SimJob, profile: Profile) -> bool:
        if profile.type == "parallel_homogeneous_total":
            return True
        if profile.type == "composed":
            return all(self._total_profile(sjob, self.profile_named(sjob, n)) for n in profile.data["seq"])
        return False

    def _check_profile_executable(self, sjob: SimJob, profile: Profile, hosts: list) -> None:
        if profile.type == "composed":
            for name in profile.data["seq"]:
                self._check_profile_executable(sjob, self.profile_named(sjob, name), hosts)
            return
        if profile.type == "parallel" and len(profile.data["cpu"]) != len(hosts):
            raise ProtocolError(f"EXECUTE_JOB {sjob.id}: profile {profile.name!r} has {len(profile.data['cpu'])} "
                                f"executors but the job runs on {len(hosts)} hosts")
        if profile.type == "parallel_homogeneous_pfs":
            self.storage_host(sjob, profile.data.get("storage", "pfs"))
        if profile.type == "data_staging":
            for key in ("from", "to"):
                self.storage_host(sjob, profile.data[key])
        if profile.type not in ("delay", "data_staging", "parallel_homogeneous_pfs"):
            for host in hosts:
                if host.speed <= 0:
                    raise ProtocolError(f"EXECUTE_JOB {sjob.id}: profile {profile.name!r} computes on host "
                                        f"{host.name!r} whose speed is 0 (a storage or master host?)")

    def computed_rate(self, hosts: list, flops: list[float], matrix: list[float]) -> float | None:
        """The rate (fraction of the task per second) SimGrid's ``ptask_L07`` solver gives a
        parallel task that only computes, on distinct single-core hosts no other task uses:
        ``min(speed / flops)`` over the hosts that compute (``inf``: nothing to do), so that
        the kernel counts it down itself, exactly as SimGrid would.  None when the task
        communicates or hosts may be shared: SimGrid simulates it then."""
        if self.options["enable_compute_sharing"] or len(set(map(id, hosts))) != len(hosts):
            return None
        if any(matrix) and not self._free_comm(hosts, matrix):
            return None
        rate = math.inf
        for host, amount in zip(hosts, flops):
            if amount > 0:
                if host.core_count != 1 or host.speed <= 0:
                    return None
                rate = min(rate, host.speed / amount)
        return rate

    def _free_comm(self, hosts: list, matrix: list[float]) -> bool:
        """Every communication of the task crosses no link and has no latency (hosts of a
        Vivaldi zone at the same coordinates, e.g. Batsim's ``*_no_net`` energy platforms):
        under ``ptask_L07`` it then constrains nothing and the task runs at its compute rate."""
        n = len(hosts)
        routes = self._free_routes
        for k, amount in enumerate(matrix):
            if amount > 0:
                a, b = hosts[k // n], hosts[k % n]
                key = (a.name, b.name)
                free = routes.get(key)
                if free is None:
                    try:
                        links, latency = a.route_to(b) if a is not b else ([None], 0.0)
                    except Exception:  # noqa: BLE001 - SimGrid: no usable route, let it simulate
                        links, latency = [None], 0.0
                    free = routes[key] = not links and latency == 0
                if not free:
                    return False
        return True

    def ptask_latency(self, hosts: list, matrix: list[float]) -> float:
        """``L07Action``'s latency: the largest route latency among the task's communications."""
        n = len(hosts)
        latency = 0.0
        for k, amount in enumerate(matrix):
            if amount > 0:
                a, b = hosts[k // n], hosts[k % n]
                try:
                    latency = max(latency, a.route_to(b)[1]) if a is not b else latency
                except Exception:  # noqa: BLE001 - no route SimGrid can tell
                    pass
        return latency

    def check_ptask_permission(self, sjob: SimJob, flops: list[float]) -> None:
        """Batsim's ``check_ptask_execution_permission``, when a parallel task starts: no
        computation on a storage machine (the i-th flops against the i-th machine of the
        allocation, mapping or not, as Batsim does)."""
        for rid, amount in zip(sjob.alloc, flops):
            if abs(amount) > 1e-10 and self.resources[rid].role == "storage":
                res = self.resources[rid]
                raise ProtocolError(f"job {sjob.id}: some computation ({amount:g}) is assigned to storage node "
                                    f"(id={rid}, name='{res.name}') (Batsim 4.2.1 aborts here too)")

    def storage_host(self, sjob: SimJob, label: str):
        smap = sjob.storage_mapping
        if smap is None:
            storages = [r for r in self.resources if r.role == "storage"]
            if len(storages) != 1:
                raise ProtocolError(f"job {sjob.id}: profile uses storage {label!r} but EXECUTE_JOB gave no "
                                    f"storage_mapping and the platform has {len(storages)} storage hosts")
            return storages[0].host
        if label not in smap:
            raise ProtocolError(f"job {sjob.id}: unknown storage label {label!r} (storage_mapping has "
                                f"{sorted(smap)})")
        return self.resources[smap[label]].host

    def build_ptask(self, sjob: SimJob, profile: Profile, hosts: list) -> tuple[list, list[float], list[float]]:
        """Hosts, flops vector and bytes matrix of a ptask leaf (Batsim's task_execution.cpp)."""
        d = profile.data
        n = len(hosts)
        ptype = profile.type
        if ptype == "parallel":
            return hosts, [float(x) for x in d["cpu"]], [float(x) for x in d["com"]]
        if ptype in ("parallel_homogeneous", "parallel_homogeneous_total"):
            cpu, com = float(d["cpu"]), float(d["com"])
            if ptype == "parallel_homogeneous_total":
                cpu, com = cpu / n, com / n
            matrix = [] if com == 0 else [0.0 if i == j else com for i in range(n) for j in range(n)]
            return hosts, [cpu] * n, matrix
        if ptype == "parallel_homogeneous_pfs":
            storage = self.storage_host(sjob, d.get("storage", "pfs"))
            read, write = float(d.get("bytes_to_read", 0)), float(d.get("bytes_to_write", 0))
            all_hosts = list(hosts) + [storage]
            m = n + 1
            matrix = [0.0] * (m * m)
            for i in range(n):
                matrix[n * m + i] = read  # storage -> host i
                matrix[i * m + n] = write  # host i -> storage
            return all_hosts, [0.0] * m, matrix
        if ptype == "data_staging":
            src, dst = self.storage_host(sjob, d["from"]), self.storage_host(sjob, d["to"])
            return [src, dst], [0.0, 0.0], [0.0, float(d["nb_bytes"]), 0.0, 0.0]
        raise ProtocolError(f"profile type {ptype!r} cannot run as a parallel task")  # pragma: no cover

    def job_started(self, run: JobRun) -> None:
        """The job's process starts (Batsim's ``update_machines_on_job_run``)."""
        if self.power is not None:
            self.power.job_start(run.job, self.kernel.now)
        self._set_machines(run.job.alloc, +1)
        self.traces.job_started(self.kernel.now, run.job.id, run.job.alloc)
        if self.speed_hook is not None:
            self.speed_hook.on_job_start(run.job)

    def job_finished(self, run: JobRun, code: int) -> None:
        """The job's process ends (before it reports to the server)."""
        sjob = run.job
        now = self.kernel.now
        if _DEBUG:
            print(f"job end {sjob.id} start {sjob.start!r} end {now!r}", file=sys.stderr)
        sjob.finish = now  # a null runtime becomes 1e-5 in the outputs (JobRecord.times)
        sjob.return_code = code
        sjob.state = ("COMPLETED_SUCCESSFULLY" if code == 0 else "COMPLETED_FAILED" if code > 0 else
                      "COMPLETED_WALLTIME_REACHED" if code == -1 else "COMPLETED_KILLED")
        # (a job whose running parallel task a KILL_JOB cancelled keeps its code -2; a job killed
        # in a delay keeps Batsim's default -1, see killer())
        self._end_job(sjob, kill_mark=code in (-1, -2))

    def _end_job(self, sjob: SimJob, kill_mark: bool = False) -> None:
        self._set_machines(sjob.alloc, -1)
        self.traces.job_ended(self.kernel.now, sjob.id, sjob.alloc, kill_mark=kill_mark)
        if self.power is not None:
            self.power.job_end(sjob, self.kernel.now)
        if self.speed_hook is not None:
            self.speed_hook.on_job_end(sjob)

    def job_row(self, sjob: SimJob) -> None:
        """The job's ``_jobs.csv`` row, written when the server learns of its end (Batsim's
        ``write_job`` in ``server_on_job_completed`` / ``server_on_killing_done``), not when it
        ends: a rejection or another completion handled in between comes first."""
        self.record(JobRecord(
            job_number=sjob.id.split("!", 1)[1], workload=sjob.job.workload, profile=sjob.job.profile,
            subtime=sjob.job.subtime, res=sjob.job.res, walltime=sjob.job.walltime, final_state=sjob.state,
            start=sjob.start, finish=sjob.finish, alloc=sjob.alloc, metadata=sjob.job.metadata,
            consumed_energy=sjob.energy))

    def on_reject_job(self, data: dict) -> None:
        sjob = self._job(data, "REJECT_JOB")
        if sjob.state != "SUBMITTED":
            raise ProtocolError(f"REJECT_JOB: job {sjob.id!r} cannot be rejected: its state is {sjob.state} "
                                "(only submitted, not yet executed jobs can be rejected)")
        sjob.state = "REJECTED"
        self.nb_completed += 1
        self.to_delete.append(sjob)  # Batsim forgets it once the current events are sent
        job = sjob.job
        self.record(JobRecord(job_number=job.id.split("!", 1)[1], workload=job.workload,
                                      profile=job.profile, subtime=job.subtime, res=job.res,
                                      walltime=job.walltime, final_state="REJECTED", metadata=job.metadata))

    def on_kill_job(self, data: dict) -> None:
        """``KILL_JOB``: a killer process stops the jobs not already being killed."""
        ids = data.get("job_ids")
        if not isinstance(ids, list) or not ids:
            raise ProtocolError("KILL_JOB: 'job_ids' must be a non-empty list of job ids")
        to_kill: list[str] = []
        for jid in ids:
            sjob = self._job({"job_id": jid}, "KILL_JOB")
            if sjob.kill_requested:
                continue
            if sjob.state in ("SUBMITTED", "REJECTED", "NOT_SUBMITTED"):
                raise ProtocolError(f"KILL_JOB: job {jid!r} is not running (state {sjob.state})")
            sjob.kill_requested = True
            to_kill.append(jid)
        if to_kill:
            self.nb_killers += 1
            self.kernel.spawn(self.killer(to_kill), "killer")

    def on_call_me_later(self, data: dict) -> None:
        target = data.get("timestamp")
        if isinstance(target, bool) or not isinstance(target, (int, float)):
            raise ProtocolError(f"CALL_ME_LATER: 'timestamp' must be a number, got {json.dumps(target)}")
        if not target > self.now():
            raise ProtocolError(f"CALL_ME_LATER: asked to be called at {target:f}, which is not after the "
                                f"current time {self.now():f} (Batsim rejects calls in the past or present)")
        self.nb_waiters += 1
        self.kernel.spawn(self.waiter(float(target)), "waiter")

    def _dynamic_check(self, etype: str) -> None:
        if not self.config.dynamic_jobs:
            raise ProtocolError(f"{etype} received but dynamic job registration is disabled "
                                "(run the simulator with --enable-dynamic-jobs)")
        if self.registration_finished:
            raise ProtocolError(f"{etype} received after NOTIFY registration_finished")

    def on_register_profile(self, data: dict) -> None:
        self._dynamic_check("REGISTER_PROFILE")
        wname, pname, prof = data.get("workload_name"), data.get("profile_name"), data.get("profile")
        if not isinstance(wname, str) or not wname or "!" in wname or not isinstance(pname, str) or not pname:
            raise ProtocolError("REGISTER_PROFILE: needs string 'workload_name' (without '!') and 'profile_name'")
        wl = self.workloads.setdefault(wname, Workload(name=wname, path="dynamic", nb_res=None))
        if pname in wl.profiles:
            raise ProtocolError(f"REGISTER_PROFILE: profile {pname!r} already exists in workload {wname!r}")
        try:
            profile = validate_profile(pname, prof, "REGISTER_PROFILE", f"{wname}/{pname}")
        except InputError as exc:
            raise ProtocolError(f"REGISTER_PROFILE: invalid profile: {exc}") from None
        if profile.type == "composed":
            for sub in profile.data["seq"]:
                if sub not in wl.profiles:
                    raise ProtocolError(f"REGISTER_PROFILE {pname!r}: unknown profile {sub!r} in seq")
        wl.profiles[pname] = profile

    def on_register_job(self, data: dict) -> None:
        self._dynamic_check("REGISTER_JOB")
        jid, job = data.get("job_id"), data.get("job")
        if not isinstance(jid, str) or jid.count("!") != 1:
            raise ProtocolError(f"REGISTER_JOB: job_id must look like \"workload!name\", got {json.dumps(jid)}")
        wname = jid.split("!")[0]
        wl = self.workloads.get(wname)
        if wl is None:
            raise ProtocolError(f"REGISTER_JOB {jid}: workload {wname!r} does not exist (register a profile in it "
                                "first)")
        if jid in self.jobs or jid in self.deleted_ids:
            raise ProtocolError(f"REGISTER_JOB: job {jid!r} already exists")
        if isinstance(job, dict) and (wname, job.get("profile")) in self.collected_profiles:
            raise ProtocolError(f"REGISTER_JOB {jid}: profile {job.get('profile')!r} existed but was discarded "
                                "after its last job ended (use --enable-profile-reuse)")
        try:
            job_obj = job_from_json({**job, "id": jid} if isinstance(job, dict) else job, wname,
                                    "REGISTER_JOB", jid, wl.profiles)
        except InputError as exc:
            raise ProtocolError(f"REGISTER_JOB: invalid job: {exc}") from None
        job_obj.dynamic = True
        sjob = SimJob(job=job_obj, state="SUBMITTED")
        self.jobs[jid] = sjob
        self.nb_submitted += 1
        if self.config.ack_dynamic_jobs:
            self.append("JOB_SUBMITTED", self.submitted_data(sjob))

    def on_set_job_metadata(self, data: dict) -> None:
        sjob = self._job(data, "SET_JOB_METADATA")
        meta = data.get("metadata")
        if not isinstance(meta, str) or '"' in meta:
            raise ProtocolError(f"SET_JOB_METADATA {sjob.id}: metadata must be a string without double quotes")
        sjob.job.metadata = meta

    def on_change_job_state(self, data: dict) -> None:
        sjob = self._job(data, "CHANGE_JOB_STATE")
        new = data.get("job_state")
        now = self.now()
        if sjob.state == "SUBMITTED" and new == "RUNNING":
            sjob.state, sjob.start = "RUNNING", now
        elif sjob.state == "SUBMITTED" and new == "REJECTED":
            self.on_reject_job({"job_id": sjob.id})
        elif sjob.state == "RUNNING" and sjob.run is None and new in (
                "COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED"):
            sjob.state, sjob.finish = new, now
            sjob.alloc = sjob.alloc or ProcSet()
            self.nb_completed += 1
            job = sjob.job
            self.record(JobRecord(job_number=job.id.split("!", 1)[1], workload=job.workload,
                                          profile=job.profile, subtime=job.subtime, res=job.res,
                                          walltime=job.walltime, final_state=new, start=sjob.start,
                                          finish=now, alloc=sjob.alloc, metadata=job.metadata))
        else:
            raise ProtocolError(f"CHANGE_JOB_STATE {sjob.id}: cannot go from {sjob.state} to {new}")

    def on_notify(self, data: dict) -> None:
        ntype = data.get("type")
        if ntype == "registration_finished":
            self._dynamic_check("NOTIFY registration_finished")
            self.registration_finished = True
        elif ntype == "continue_registration":
            self.registration_finished = False
        else:
            raise ProtocolError(f"NOTIFY: unknown type {ntype!r} (expected registration_finished or "
                                "continue_registration)")
