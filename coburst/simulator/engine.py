"""The embedded Batsim-compatible simulator: Batsim 4.2.1's actors on coburst's kernel.

``Simulator(config).run()`` loads the inputs (workloads, then the platform through SimGrid),
runs Batsim's actors as processes of :mod:`coburst.simulator.kernel` (all run by one SimGrid
actor) and writes Batsim's outputs.  The simulator is made of parts, one concern each:

* :mod:`~coburst.simulator.actors` — Batsim's actors: server loop, submitters,
  request-reply, waiters, killers, and the 1-byte internal messages between them;
* :mod:`~coburst.simulator.handlers` — the server's handlers: events to the scheduler, the
  scheduler's decisions checked and applied;
* :mod:`~coburst.simulator.ptasks` — parallel tasks as Batsim builds them;
* :mod:`~coburst.simulator.accounting` — job starts, ends and rows of the outputs;
* :mod:`~coburst.simulator.execution` — one process per job (Batsim's ``execute_task``).
* :mod:`~coburst.simulator.elastic` — jobs that change size (``SimulatorConfig(elastic=True)``
  only; off, the run is Batsim 4.2.1's).

This module holds the configuration, the set-up and the run.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from coburst import signals
from coburst.errors import CoburstError, InputError, Interrupted, ProtocolError
from coburst.simulator.accounting import JobAccounting
from coburst.simulator.actors import BatsimActors
from coburst.simulator.handlers import ProtocolHandlers
from coburst.simulator.jobs import CompactIds, ProfileKeys, SimJob
from coburst.simulator.kernel import Kernel, Mailbox
from coburst.simulator.output import JOBS_COLUMNS, LD, SCHEDULE_KEYS, ScheduleStats, StagedFiles
from coburst.simulator.platform import (Machines, _missing, assign_resources, check_xml, master_zone_routing,
                                        prevalidate)
from coburst.simulator.protocol import RawJSON, scheduler_link
from coburst.simulator.ptasks import ParallelTasks
from coburst.simulator.traces import TraceRecorder
from coburst.simulator.workload import Profile, Workload, load_workload

__all__ = ["SimJob", "SimResult", "Simulator", "SimulatorConfig", "load_speed_hook"]



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
    #: ``--events`` files (Batsim's external events, see coburst.simulator.events)
    events: list[str] = field(default_factory=list)
    #: ``-W`` workflow (DAX) files and ``--WS`` (file, start time) pairs (coburst.simulator.workflow)
    workflows: list[str] = field(default_factory=list)
    cut_workflows: list[tuple[str, float]] = field(default_factory=list)
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
    #: called with the simulated time after a scheduler exchange, at most every 50 ms (progress bars)
    on_progress: Callable[[float, int, int], None] | None = None
    #: the other Batsim 4.2.1 options (``coburst.simulator.arguments.batsim_options``; None: ``simulator.options.DEFAULTS``)
    batsim_options: dict | None = None
    #: the ``workloads`` already loaded and checked, in order (``coburst run`` checks them before a
    #: scheduler starts, :func:`coburst.runner.preflight`): used once instead of reading the files again
    loaded_workloads: list[Workload] | None = None
    #: jobs that change size (coburst.simulator.elastic): jobs with an ``elastic`` field run their
    #: application model, the scheduler may start them on other sizes and resize them at their
    #: scheduling points, and ``<prefix>_reconfigurations.csv`` logs the resizes.  Off: Batsim 4.2.1
    elastic: bool = False


@dataclass
class SimResult:
    prefix: str
    jobs_csv: Path
    schedule_csv: Path
    schedule: dict[str, str]
    wall_seconds: float
    nb_compute: int = 0
    #: the scheduler's options as used (set by :func:`coburst.runner.run_args`)
    scheduler_options: dict = field(default_factory=dict)

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


class Simulator(BatsimActors, ProtocolHandlers, ParallelTasks, JobAccounting):
    """One simulation run: ``Simulator(config).run()``."""

    def __init__(self, config: SimulatorConfig):
        self.config = config
        self.workloads: dict[str, Workload] = {}
        self.jobs: dict[str, SimJob] = {}
        self.events: list[RawJSON] = []  # encoded events for the next message
        self.stats = ScheduleStats()
        #: ids of the finished jobs not found otherwise (see BatsimActors.job_deleted)
        self.deleted_ids = CompactIds()
        self.nb_records = 0
        self.failure: BaseException | None = None
        self.collected_profiles = ProfileKeys()  # (workload, profile) pairs, 8 bytes each
        #: (workload, profile) added after the workloads were loaded (REGISTER_PROFILE, an
        #: inline additional_io_job profile): Batsim never drops them as unreferenced, and
        #: never resolves the sequence of such a composed profile
        self.late_profiles = ProfileKeys()
        #: ids of the hosts merged I/O tasks used outside their job's allocation (see
        #: ParallelTasks.io_touched)
        self.io_hosts: set[int] = set()
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
        #: (source, destination) host names or ids -> (source, destination, route): see BatsimActors.message_route
        self.message_routes: dict[tuple, tuple] = {}
        self.kernel = Kernel()
        self.server_box = Mailbox("server")
        self.link = None
        self.power = None  # -E: coburst.simulator.energy.PowerManager
        self._free_routes: dict[tuple[str, str], bool] = {}
        self._meter = None

    # ================================================================== set-up
    def load_inputs(self) -> None:
        """Load and validate workloads, then the platform (errors before anything runs)."""
        loaded, self.config.loaded_workloads = self.config.loaded_workloads, None  # used by one run only
        for i, path in enumerate(self.config.workloads):
            name = f"w{i}"
            if loaded is not None and i < len(loaded) and loaded[i].name == name and loaded[i].path == str(path):
                self.workloads[name] = loaded[i]
            else:
                self.workloads[name] = load_workload(path, name, stream="auto")
        workflow_list = None
        if self.config.workflows or self.config.cut_workflows:
            from coburst.simulator.workflow import Workflows

            workflow_list = Workflows.load(self.config.workflows, self.config.cut_workflows)
        event_lists = None
        if self.config.events:
            from coburst.simulator.events import ExternalEvents

            event_lists = ExternalEvents.load(self.config.events, self.config.forward_unknown_events)
        check_xml(self.config.platform)
        if self.config.profile_reuse and not self.config.dynamic_jobs:
            raise InputError("--enable-profile-reuse", None, "profile reuse needs --enable-dynamic-jobs")
        from coburst.simulator.options import default_batsim_options, machine_limit, simulation_begins_config

        self._begins_config = simulation_begins_config

        self.options = opts = self.config.batsim_options or default_batsim_options()
        # Batsim reads --forward-unknown-events only when there are --events files
        self.options = opts = {**opts, "forward_unknown_events": bool(event_lists and
                                                                      self.config.forward_unknown_events)}
        if workflow_list:
            self.workflows = Workflows(self, workflow_list, opts["workflow_jobs_limit"],
                                       opts["ignore_beyond_last_workflow"])
            self.workloads.update((wl.name, wl) for wl in self.workflows.workloads())
        # Batsim: --sg-cfg options first, host/model:ptask_L07 forced, then --sg-log.  No SimGrid
        # clean-up at exit: after a SIGINT/SIGTERM at simulated time 0 (actors created, the run not
        # started yet) it aborts the process ("stop-before-start madness") instead of exiting 130/143.
        engine_args = ["coburst", "--cfg=debug/clean-atexit:no", *(f"--cfg={c}" for c in opts["sg_cfg"]),
                       "--cfg=host/model:ptask_L07",
                       "--log=root.thresh:critical", "--log=xbt_cfg.thresh:critical",
                       *(f"--log={c}" for c in opts["sg_log"])]
        max_compute = machine_limit(opts, [wl.nb_res for wl in self.workloads.values() if wl.nb_res is not None])
        # a platform seen before, for a run that needs only the routes the entry holds:
        # taken from the cache (coburst.simulator.platform_cache), SimGrid is neither imported nor loaded
        from coburst.simulator import platform_cache

        record = platform_cache.entry_path(self.config.platform, self.config.master_host, self.config.roles,
                                           engine_args)
        wanted = record is not None and platform_cache.usable(self.config, self.workloads, opts)
        doc, force = platform_cache.lookup(record, wanted)
        if doc is not None:
            self.engine = platform_cache.CachedPlatform(doc, self.config.platform, engine_args)
            _missing(str(self.config.platform), self.engine.missing)  # the pre-check's warning, again
        else:
            # SimGrid aborts the process on some bad platforms: try them in a child process first
            # hosts without a route between them: a warning; as in Batsim (SimGrid 3.32), an undeclared
            # route is empty (no latency, no bandwidth limit) where a run uses it
            prevalidate(self.config.platform, self.config.master_host, self.config.roles, engine_args,
                        describe_to=record, force=force)
            from coburst.simulator._simgrid import simgrid

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
        if event_lists:
            self.external = ExternalEvents(self, event_lists)
            self.external.check_platform()
        self.master_zone = master_zone_routing(self.config.platform, self.machines.master.name)
        self.master_in_empty_zone = self.master_zone == "None"
        # routes are asked from inside the simulation (SimGrid 4.1 crashes on a host's route
        # to itself asked from outside any actor when the host sits in a nested Full zone)
        self.traces = TraceRecorder.from_options([r.name for r in self.resources], len(self.machines.compute),
                                                 opts)
        if opts.get("energy"):
            from coburst.simulator.energy import PowerManager

            self._meter = PowerManager.read_meter(self, self.config.platform)
        if self.config.speed_hook and self.config.heatmap:
            raise InputError("--heatmap", self.config.heatmap, "cannot be combined with --speed-hook")
        if self.config.elastic:
            from coburst.simulator.elastic import ElasticMode

            self.elastic = ElasticMode(self)
        if self.config.speed_hook:
            self.speed_hook = load_speed_hook(self.config.speed_hook)(self)
        elif self.config.heatmap:
            from coburst.simulator.speedup import make_hook

            self.speed_hook = make_hook(self)

    def run(self) -> SimResult:
        steps = self.run_steps()
        while True:
            try:
                next(steps)
            except StopIteration as stop:
                return stop.value

    def run_steps(self):
        """The run as a generator: it yields ``"loaded"`` once the inputs are read (the
        platform's origin, ``cached_platform``, is then known) and ``"paused"`` whenever the
        kernel pauses, outside SimGrid, for a link that answers later (``coburst.gym``:
        :data:`~coburst.simulator.actors.DEFERRED`); its value is the :class:`SimResult`.
        Closing it abandons the run (no outputs).  :meth:`run` drives it to the end."""
        wall_start = time.perf_counter()
        self.load_inputs()
        yield "loaded"
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
        if self.elastic is not None:
            reconf_path = Path(f"{prefix}_reconfigurations.csv")
            paths.append(reconf_path)
        try:
            # written as the simulation goes (memory stays flat), renamed at the end
            self.outputs = StagedFiles(paths)
        except OSError as exc:
            raise InputError(f"-e/--export {prefix}", None, f"cannot write the outputs: {exc}") from None
        handles = dict(zip(paths, self.outputs.handles))
        self._jobs_out = handles[jobs_csv]
        self._jobs_out.write(JOBS_COLUMNS + "\n")
        self._trace_out = (handles.get(trace_path), handles.get(states_path))
        if self.elastic is not None:
            from coburst.simulator.elastic import RECONF_COLUMNS

            self.elastic.out = handles[reconf_path]
            self.elastic.out.write(RECONF_COLUMNS + "\n")
        try:
            if self._meter is not None:
                from coburst.simulator.energy import PowerManager

                self.power = PowerManager.start(self, self._meter, *(handles[p] for p in energy_paths))
            if self.link is None:
                self.link = scheduler_link(self.config.socket_endpoint, self.config.timeout, self.config.peer_alive)
            try:
                kernel = self.kernel
                kernel.spawn(self.server(), "server")
                for name, wl in self.workloads.items():
                    self.nb_submitters += 1
                    workflow = self.workflows.by_name.get(name) if self.workflows is not None else None
                    kernel.spawn(self.submitter(wl) if workflow is None else self.workflows.submitter(workflow),
                                 f"submitter_{name}")
                if self.external is not None:  # Batsim creates them after the job submitters
                    for elist in self.external.lists:
                        kernel.spawn(self.external.submitter(elist), f"event_submitter_{elist.name}")
                if self.cached_platform:  # no SimGrid: the kernel runs here, as the one actor would
                    while True:
                        with signals.deferred():  # (signals seen where an actor thread sees them)
                            self._guarded(kernel.main)()
                        if self.failure is not None or not getattr(kernel, "paused", False):
                            break
                        yield "paused"
                    if os.environ.get("COBURST_DEBUG_PLATFORM_CACHE"):  # (tests)
                        print(f"coburst: platform from the cache, {self.engine.simgrid_routes} route(s) asked "
                              "from SimGrid", file=sys.stderr)
                else:
                    from coburst.simulator._simgrid import simgrid

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
            if self.external is not None:
                schedule.update(self.external.schedule_values())
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


    def _guarded(self, body: Callable) -> Callable:
        """Run the kernel; on error record it and stop the simulation."""

        def actor(*args):
            try:
                body(*args)
            except BaseException as exc:  # noqa: BLE001 - re-raised by run()
                name = type(exc).__name__
                cached = self.cached_platform
                if not cached and (isinstance(exc, sys.modules["simgrid"].ActorKilled)
                                   or name == "ForcefulKillException"):
                    raise
                self.failure = exc if isinstance(exc, (CoburstError, Interrupted)) else ProtocolError(
                    f"internal simulator error: {name}: {exc}")
                if not isinstance(exc, (CoburstError, Interrupted)):
                    import traceback

                    self.failure.__cause__ = exc
                    self.failure.traceback = traceback.format_exc()
                if not cached:
                    sys.modules["simgrid"].Actor.kill_all()

        return actor

    # ================================================================== helpers
    @property
    def cached_platform(self) -> bool:
        """The platform came from :mod:`coburst.simulator.platform_cache` (no SimGrid engine)."""
        from coburst.simulator.platform_cache import CachedPlatform

        return isinstance(getattr(self, "engine", None), CachedPlatform)

    def now(self) -> float:
        return self.kernel.now

    def profile_of(self, sjob: SimJob) -> Profile:
        return self.workloads[sjob.job.workload].profiles[sjob.job.profile]

    def profile_named(self, sjob: SimJob, name: str) -> Profile:
        return self.workloads[sjob.job.workload].profiles[name]
