"""Jobs that change size in the simulator (``SimulatorConfig(elastic=True)``).

Off by default: without it nothing here runs and the simulator is Batsim 4.2.1.  With it, a
job carrying an ``elastic`` field (:mod:`coburst.models.elastic`) runs its application
model instead of its profile: phases of iterations of tasks.  Delay and compute tasks take
the time the performance model gives for the job's current number of nodes (compute tasks run
at the slowest allocated host's speed, without contention); communication and PFS / burst-buffer
I/O tasks, compute tasks coupled with a communication, and the data redistribution of a
resize, are parallel tasks of SimGrid's ``ptask_L07`` model on the job's hosts (and the storage
host), sharing the platform's links with every other transfer, as a Batsim ``parallel`` or
``parallel_homogeneous_pfs`` profile would; gpu tasks run on the job's GPUs
(:mod:`coburst.simulator.elastic_gpu`).  A resized job first moves its data (when its application has a ``redistribution``),
then pays its reconfiguration cost.

**Handshake.**  In this mode ``SIMULATION_BEGINS``'s ``config`` has ``"elastic-jobs":
{"version": 1}``; a scheduler that takes part answers (first, in any reply before it starts an
elastic job) ``NOTIFY {"type": "elastic_jobs"}``.  Until it does, every job runs as Batsim runs
it (rigid on ``res``, its profile), and no event below is sent or accepted.

Protocol, in both directions, once both sides agreed:

* ``EXECUTE_JOB`` of a moldable, malleable or adaptive job may give any size in
  ``[num_nodes_min, num_nodes_max]``;
* at a **scheduling point** (the end of an iteration of a phase with ``scheduling_point``,
  except the last iteration of the job) a malleable, evolving or adaptive job stops and the
  simulator sends ``JOB_SCHEDULING_POINT`` ``{"job_id", "alloc", "num_nodes", "phase",
  "iteration", "requested"}`` (``requested``: the size an evolving or adaptive job asks for,
  clipped to its bounds; absent otherwise).  The job waits for the reply to the message that
  carried it;
* in that reply the scheduler may send ``RESIZE_JOB`` ``{"job_id", "alloc"}``: a new allocation
  in the job's bounds (an evolving job: between its current size and the size it asked for,
  i.e. granted or clipped; no ``RESIZE_JOB`` refuses).  Resources leave and join the job at
  once (later decisions of the same reply may use the freed ones).  Once the reply is applied,
  the simulator answers ``JOB_RESIZED`` ``{"job_id", "alloc", "old_alloc",
  "reconfiguration_time"}`` and the job resumes after its reconfiguration cost
  (``on_reconfiguration``, plus ``on_expansion`` when it grows), on its new allocation.  Several
  ``RESIZE_JOB`` of one job in one reply are one reconfiguration, from the allocation it had at
  the point to the last one (one ``JOB_RESIZED``, one cost; none if it ends where it was), as
  ElastiSim applies the assignment a scheduler leaves at a point;
* ``JOB_COMPLETED`` gives the last allocation; the ``_jobs.csv`` row gives the allocation the job
  started on (Batsim's columns, unchanged).  Every resize is a row of
  ``<prefix>_reconfigurations.csv`` (:data:`RECONF_COLUMNS`: ``reconfiguration_time`` is the
  cost of ``on_reconfiguration`` / ``on_expansion``; ``redistributed_bytes`` the data moved,
  whose time the network decides).

With ``-E`` (energy): a compute task loads the job's hosts fully while it runs (as a Batsim
parallel task of the same flops would: ``tests/test_elastic_energy.py`` checks it against the
real Batsim), delay tasks and costs leave them idle, transfers load them as SimGrid's parallel
tasks do; a job's ``consumed_energy`` sums its allocations over time; a pstate change does not
retime a running compute task.  Not combined with ``--heatmap`` nor ``--speed-hook``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generator

from procset import ProcSet

from coburst.errors import InputError, ProtocolError
from coburst.models.perf import ExpressionError
from coburst.simulator.allocation import parse_allocation
from coburst.simulator.kernel import Run, Suspend, Work
from coburst.models.elastic import IO_TASKS, ElasticJob, Task, parse_elastic
from coburst.models.patterns import communication_matrix, io_vector, redistribution_matrix
from coburst.simulator.elastic_gpu import (check_allocation, check_job, platform_gpus, run_coupled_task,
                                           run_gpu_task)

if TYPE_CHECKING:  # pragma: no cover
    from coburst.simulator.jobs import SimJob

__all__ = ["ElasticMode", "ElasticRun", "RECONF_COLUMNS"]

RECONF_COLUMNS = ("job_id,date,old_allocation,new_allocation,old_size,new_size,requested_size,phase,iteration,"
                  "reconfiguration_time,redistributed_bytes")
_SUSPEND = Suspend()


class ElasticRun:
    """One running elastic job; :meth:`process` is its kernel process body."""

    def __init__(self, sim, sjob: "SimJob", spec: ElasticJob):
        self.sim, self.job, self.spec = sim, sjob, spec
        self.proc = None
        self.start = 0.0
        self.energy_task = self.energy_zombie = None
        self.in_recv = False
        self.point: dict[str, Any] | None = None  # the scheduling point the job waits at
        self.point_alloc = None  # the allocation it had there
        self.pending_cost = 0.0
        #: the data redistribution to run after the point: (old ids, new ids, bytes)
        self.pending_move: tuple[list[int], list[int], float] | None = None
        self.iterations_done = 0
        self.total_iterations = sum(spec.iterations)
        #: (phase, iteration, num_nodes) of every iteration done (work checks)
        self.history: list[tuple[int, int, int]] = []
        self.reconfiguration_time = 0.0
        self.killed = False
        self.set_hosts()

    def set_hosts(self) -> None:
        res = self.sim.resources
        ids = self.ids = list(self.job.machine_ids())
        self.n = len(ids)
        self.speed = min(float(res[i].host.speed) for i in ids)
        self.first_host = res[ids[0]].host

    def _fail(self, exc: ExpressionError):
        raise InputError(self.sim.workloads[self.job.job.workload].path, f"job {self.job.id}",
                         f"its performance model cannot be evaluated: {exc}") from None

    def process(self) -> Generator:
        sim, sjob = self.sim, self.job
        self.start = sjob.start = sim.kernel.now
        sim.job_started(self)
        code = yield from self.body()
        sim.job_finished(self, code)
        if code != -2:  # a job killed during a transfer is reported by its killer
            yield sim.to_server(("COMPLETED", sjob), self.first_host)
        # as a Batsim job's actor: a transfer left running after the walltime stops once the
        # job's message is delivered (see JobRun.process)
        if self.proc is not None and self.proc.zombie is not None:
            sim.kernel.end_zombie(self.proc)

    def sleep(self, duration: float) -> Generator:
        """Sleep ``duration``; False if the walltime ends first (the job is then over)."""
        kernel = self.sim.kernel
        walltime = float(self.job.walltime)
        if walltime >= 0:
            left = walltime - (kernel.now - self.start)
            if duration >= left:
                kernel.countdown(self.proc, max(left, 0.0))
                yield _SUSPEND
                self._slept()
                return False
        kernel.countdown(self.proc, duration)
        yield _SUSPEND
        self._slept()
        return True

    def _slept(self) -> None:
        """-E: SimGrid's sleep is an action on the actor's host (the allocation's first machine):
        its end updates that host's energy (as JobRun.run_delay)."""
        power = self.sim.power
        if power is not None:
            power.meter.task_end([self.job.alloc.min], self.sim.kernel.now)

    def ptask(self, hosts: list, matrix: list[float], flops: list[float] | None = None) -> Generator:
        """Run a parallel task (transfers only, unless ``flops`` are given); False if the walltime
        ends first (or the job is killed: ``self.killed``)."""
        if flops is None:
            flops = [0.0] * len(hosts)
        if not any(matrix) and not any(flops):
            return True
        sim, kernel = self.sim, self.sim.kernel
        rate = sim.computed_rate(hosts, flops, matrix)
        run = Work(rate) if rate is not None else Run(hosts, flops, matrix)
        walltime = float(self.job.walltime)
        if walltime >= 0:
            run.timeout = max(walltime - (kernel.now - self.start), 0.0)
        power = sim.power
        if power is not None:  # (as JobRun.run_ptask accounts a parallel task)
            machines = power.machines_of(hosts)
            power.meter.task_start(machines, kernel.now)
            power.meter.start_load(machines, flops, rate)
        outcome = yield run
        if power is not None:
            if rate is None and outcome == "done":
                power.meter.end_sim_task(machines, kernel.now)
            else:
                power.meter.task_end(machines, kernel.now)
                power.meter.stop_load(machines, rate)
        if outcome == "cancelled":
            self.killed = True
        return outcome == "done"

    def compute(self, seconds: float) -> Generator:
        """-E: a compute task of ``seconds`` loads every host of the job fully while it runs (a
        parallel task of ``seconds x speed`` flops a host, at the rate ``1 / seconds``)."""
        power, kernel = self.sim.power, self.sim.kernel
        if seconds <= 0:
            return (yield from self.sleep(seconds))
        machines = power.machines_of([self.sim.resources[i].host for i in self.ids])
        flops, rate = [seconds * self.speed] * len(machines), 1.0 / seconds
        power.meter.task_start(machines, kernel.now)
        power.meter.start_load(machines, flops, rate)
        try:
            return (yield from self.sleep(seconds))
        finally:
            power.meter.task_end(machines, kernel.now)
            power.meter.stop_load(machines, rate)

    def storage_host(self, label: str):
        """The host of an I/O task's storage ``label`` (see :mod:`coburst.models.elastic`)."""
        sim = self.sim
        smap = self.job.storage_mapping
        if smap is not None and label in smap:
            return sim.resources[smap[label]].host
        storages = [r for r in sim.resources if r.role == "storage"]
        named = [r for r in storages if r.name == label]
        if named:
            return named[0].host
        if len(storages) == 1:
            return storages[0].host
        raise InputError(sim.workloads[self.job.job.workload].path, f"job {self.job.id}",
                         f"its I/O task's storage {label!r} is no storage host of the platform (storage hosts: "
                         f"{', '.join(r.name for r in storages) or 'none'})")

    def network(self, task: Task, size) -> Generator:
        """One communication or I/O task of ``size`` bytes on the job's hosts (a gpu task or a
        coupled compute task: ``size`` is its flops and bytes, :mod:`coburst.simulator.elastic_gpu`)."""
        if task.type == "gpu":
            return (yield from run_gpu_task(self, task, *size))
        if task.coupled:
            return (yield from run_coupled_task(self, task, *size))
        hosts = [self.sim.resources[i].host for i in self.ids]
        n = len(hosts)
        if task.type == "communication":
            return (yield from self.ptask(hosts, communication_matrix(task.model, n, size)))
        vector = io_vector(task.model, n, size)
        m = n + 1
        matrix = [0.0] * (m * m)
        reading = task.type.endswith("_read")
        for i, amount in enumerate(vector):
            matrix[n * m + i if reading else i * m + n] = amount
        return (yield from self.ptask(hosts + [self.storage_host(task.storage)], matrix))

    def redistribute(self, old: list[int], new: list[int], size: float) -> Generator:
        """Move the job's data from its old to its new nodes (directly, or through ``via``)."""
        res = self.sim.resources
        via = self.spec.app.redistribution.via
        if via is None:
            ids, matrix = redistribution_matrix(old, new, size)
            return (yield from self.ptask([res[i].host for i in ids], matrix))
        storage = self.storage_host(via)
        for ids, reading in ((old, False), (new, True)):
            n = len(ids)
            m = n + 1
            matrix = [0.0] * (m * m)
            for i in range(n):
                matrix[n * m + i if reading else i * m + n] = size / n
            if not (yield from self.ptask([res[i].host for i in ids] + [storage], matrix)):
                return False
        return True

    def body(self) -> Generator:
        spec = self.spec
        try:
            init = spec.cost(spec.app.on_init, self.n, self.n, self.speed)
        except ExpressionError as exc:
            self._fail(exc)
        if init > 0 and not (yield from self.sleep(init)):
            return -1
        last = (len(spec.iterations) - 1, spec.iterations[-1] - 1)
        for p, phase in enumerate(spec.app.phases):
            for it in range(spec.iterations[p]):
                try:
                    if self.sim.power is None:
                        segments = spec.segments(p, it, self.n, self.speed)
                    else:  # (task by task: the compute tasks load the hosts)
                        segments = spec.task_values(p, it, self.n, self.speed)
                    requested = spec.requested(p, it, self.n) if spec.resizable else None
                except ExpressionError as exc:
                    self._fail(exc)
                for seg in segments:
                    if not isinstance(seg, tuple):
                        done = yield from self.sleep(seg)
                    elif not seg[0].analytic:
                        done = yield from self.network(*seg)
                    elif seg[0].type == "compute":
                        done = yield from self.compute(seg[1])
                    else:
                        done = yield from self.sleep(seg[1])
                    if not done:
                        return -2 if self.killed else -1
                self.history.append((p, it, self.n))
                self.iterations_done += 1
                if phase.scheduling_point and spec.resizable and (p, it) != last:
                    if requested is not None:
                        requested = min(max(requested, spec.num_nodes_min), spec.num_nodes_max)
                    self.point = {"job_id": self.job.id, "alloc": str(self.job.alloc), "num_nodes": self.n,
                                  "phase": p, "iteration": it}
                    if requested is not None:
                        self.point["requested"] = requested
                    self.point_alloc = self.job.alloc
                    yield self.sim.to_server(("SCHED_POINT", self.job), self.first_host)
                    yield _SUSPEND  # woken once the scheduler answered (ElasticMode.resume)
                    self.point = self.point_alloc = None
                    cost, self.pending_cost = self.pending_cost, 0.0
                    move, self.pending_move = self.pending_move, None
                    if move is not None and not (yield from self.redistribute(*move)):
                        return -2 if self.killed else -1
                    if cost > 0 and not (yield from self.sleep(cost)):
                        return -1
        return int(self.sim.profile_of(self.job).data.get("ret", 0))

    def progress(self, now: float) -> dict[str, Any]:
        """Batsim's ``job_progress`` shape: the share of iterations done."""
        return {"profile_name": self.job.job.profile,
                "progress": self.iterations_done / self.total_iterations if self.total_iterations else 0.0}


class ElasticMode:
    """The simulator's side of elastic jobs (``sim.elastic``)."""

    def __init__(self, sim):
        self.sim = sim
        self.specs: dict[str, ElasticJob] = {}
        self.pending: list["SimJob"] = []  # at a scheduling point, event not sent yet
        self.in_exchange: list["SimJob"] = []  # event sent, waiting for the reply
        self.out = None  # the reconfigurations file
        #: jobs resized in the reply being applied (their reconfigurations are settled at its end)
        self.resized: dict[str, "SimJob"] = {}
        #: the scheduler announced the extension (NOTIFY elastic_jobs)
        self.agreed = False
        cfg = sim.config
        if cfg.speed_hook or cfg.heatmap:
            raise InputError("--elastic", None, "elastic jobs cannot be combined with --speed-hook or --heatmap")
        #: the compute resources' GPUs (coburst.simulator.elastic_gpu)
        self.gpus = platform_gpus(sim.resources, str(cfg.platform))
        for wl in sim.workloads.values():
            for i, job in enumerate(wl.jobs or ()):
                self.spec_of_job(job, wl, f"jobs[{i}]")

    def spec_of_job(self, job, wl=None, where: str | None = None) -> ElasticJob | None:
        if "elastic" not in job.json:  # (a plain job: nothing kept for it)
            return None
        spec = self.specs.get(job.id)
        if spec is None:
            wl = wl or self.sim.workloads[job.workload]
            where = where or f"job {job.json.get('id')!r}"
            profile = wl.profiles.get(job.profile)
            spec = parse_elastic({**job.json, "res": job.res}, profile.data if profile else None, wl.path, where,
                                 f"profiles.{job.profile}")
            check_job(spec, self.gpus, wl.path, where)
            self.specs[job.id] = spec
        return spec

    def spec(self, sjob: "SimJob") -> ElasticJob | None:
        """The job's elastic description (None: a plain job, or the scheduler did not agree)."""
        return self.spec_of_job(sjob.job) if self.agreed else None

    def announce(self, config: dict) -> dict:
        """``SIMULATION_BEGINS``'s ``config`` with the extension announced."""
        return {**config, "elastic-jobs": {"version": 1}}

    # --------------------------------------------------------------- decisions
    def _allocation(self, etype: str, sjob: "SimJob", alloc_str: Any) -> tuple[ProcSet, list[int]]:
        sim = self.sim
        try:
            alloc, _ = parse_allocation(alloc_str) if isinstance(alloc_str, str) else (None, False)
        except (ValueError, TypeError):
            alloc = None
        if not alloc:
            raise ProtocolError(f"{etype} {sjob.id}: invalid allocation {alloc_str!r} (expected an interval set "
                                "such as \"0-3 8\")")
        if alloc.min < 0 or alloc.max >= len(sim.resources):
            raise ProtocolError(f"{etype} {sjob.id}: allocation {alloc} is outside the platform "
                                f"(resource ids are 0-{len(sim.resources) - 1})")
        ids = [i for lo, hi in alloc.intervals() for i in range(lo, hi + 1)]
        for rid in ids:
            if sim.resources[rid].role != "compute":
                raise ProtocolError(f"{etype} {sjob.id}: resource {rid} is not a compute resource")
        return alloc, ids

    def _check_free(self, etype: str, sjob: "SimJob", ids: list[int], own: set[int]) -> None:
        sim = self.sim
        if sim.options["enable_compute_sharing"]:
            return
        for rid in ids:
            if rid not in own and sim.machine_busy[rid] > 0:
                raise ProtocolError(f"{etype} {sjob.id}: resource {rid} ({sim.resources[rid].name}) is already "
                                    "computing another job and compute sharing is disabled")

    def execute(self, sjob: "SimJob", data: dict) -> None:
        """``EXECUTE_JOB`` of an elastic job: any size its kind allows."""
        spec = self.spec(sjob)
        if set(data) != {"job_id", "alloc"}:
            raise ProtocolError(f"EXECUTE_JOB {sjob.id}: an elastic job takes 'job_id' and 'alloc' only, got "
                                f"{sorted(data)}")
        if sjob.state != "SUBMITTED":
            raise ProtocolError(f"EXECUTE_JOB: job {sjob.id!r} cannot be executed: its state is {sjob.state}")
        alloc, ids = self._allocation("EXECUTE_JOB", sjob, data["alloc"])
        lo, hi = spec.start_sizes()
        if not lo <= len(ids) <= hi:
            what = f"in [{lo}, {hi}]" if lo != hi else f"{lo}"
            raise ProtocolError(f"EXECUTE_JOB {sjob.id}: allocation {alloc} has {len(ids)} resources but the "
                                f"{spec.kind} job starts on {what}")
        self._check_free("EXECUTE_JOB", sjob, ids, set())
        check_allocation(self.sim, sjob, spec, ids, "EXECUTE_JOB")
        if self.sim.power is not None:
            self.sim.power.check_executable(sjob, ids)
        sjob.alloc = alloc
        sjob._ids, sjob._ids_of = ids, alloc
        sjob.state = "RUNNING"
        self.sim.nb_running += 1
        run = ElasticRun(self.sim, sjob, spec)
        sjob.run = run
        run.proc = self.sim.kernel.spawn(run.process(), sjob.id)

    def resize(self, data: dict) -> None:
        """``RESIZE_JOB``: applied at once to a job waiting at its scheduling point."""
        sim = self.sim
        sjob = sim._job(data, "RESIZE_JOB")
        spec = self.spec(sjob)
        if not self.agreed:
            raise ProtocolError("RESIZE_JOB: the scheduler did not announce the elastic jobs extension "
                                "(NOTIFY {\"type\": \"elastic_jobs\"})")
        if spec is None or not spec.resizable:
            kind = "not elastic" if spec is None else spec.kind
            raise ProtocolError(f"RESIZE_JOB {sjob.id}: the job cannot be resized (it is {kind})")
        run = sjob.run
        if (sjob.state != "RUNNING" or run is None or run.point is None
                or not any(j is sjob for j in self.in_exchange)):
            raise ProtocolError(f"RESIZE_JOB {sjob.id}: the job is not at a scheduling point (a job is resized "
                                "in the reply to its JOB_SCHEDULING_POINT)")
        if set(data) != {"job_id", "alloc"}:
            raise ProtocolError(f"RESIZE_JOB {sjob.id}: expected 'job_id' and 'alloc' only, got {sorted(data)}")
        alloc, ids = self._allocation("RESIZE_JOB", sjob, data["alloc"])
        n_old, n_new = run.point["num_nodes"], len(ids)
        if not spec.num_nodes_min <= n_new <= spec.num_nodes_max:
            raise ProtocolError(f"RESIZE_JOB {sjob.id}: {n_new} resources, outside the job's bounds "
                                f"[{spec.num_nodes_min}, {spec.num_nodes_max}]")
        requested = run.point.get("requested")
        if spec.kind == "evolving":
            if requested is None:
                raise ProtocolError(f"RESIZE_JOB {sjob.id}: an evolving job changes size only when it asks")
            if not min(n_old, requested) <= n_new <= max(n_old, requested):
                raise ProtocolError(f"RESIZE_JOB {sjob.id}: the evolving job asked for {requested} resources (it has "
                                    f"{n_old}): a grant or a clip is between the two, not {n_new}")
        old = sjob.alloc
        if alloc == old:
            return
        own = set(sjob.machine_ids())
        self._check_free("RESIZE_JOB", sjob, ids, own)
        check_allocation(sim, sjob, spec, ids, "RESIZE_JOB")
        new_set = set(ids)
        removed = [i for i in sjob.machine_ids() if i not in new_set]
        added = [i for i in ids if i not in own]
        now = sim.kernel.now
        power = sim.power
        if power is not None:  # (the energy of the allocation it leaves, kept: see job_start/job_end)
            power.check_executable(sjob, added)
            done = power.meter.machines_energy(sjob.machine_ids(), now) - sjob.energy
        sim.traces.job_ended(now, sjob.id, old, machines=sjob.machine_ids())
        if removed:
            sim._set_machines(removed, -1)
        if added:
            sim._set_machines(added, +1)
        if sjob.first_alloc is None:
            sjob.first_alloc = old
        sjob.alloc = alloc
        sjob._ids, sjob._ids_of, sjob._alloc_text = ids, alloc, None
        sim.traces.job_started(now, sjob.id, alloc, machines=ids)
        if power is not None:
            sjob.energy = power.meter.machines_energy(ids, now) - done
        run.set_hosts()
        self.resized[sjob.id] = sjob

    def _settle(self, sjob: "SimJob") -> None:
        """The reconfiguration of a job resized in the reply just applied: from its allocation at
        the point to the one it goes on with (its cost, ``JOB_RESIZED``, a row of the file)."""
        sim, run, spec = self.sim, sjob.run, self.spec(sjob)
        if sjob.state != "RUNNING" or run is None or run.point is None:
            return
        old, alloc = run.point_alloc, sjob.alloc
        if alloc == old:  # (back where it was: no reconfiguration)
            return
        n_old, n_new = run.point["num_nodes"], run.n
        try:
            cost = spec.cost(spec.app.on_reconfiguration, n_new, n_old, run.speed)
            if n_new > n_old:
                cost += spec.cost(spec.app.on_expansion, n_new, n_old, run.speed)
            moved = spec.redistributed_bytes(n_new, n_old)
        except ExpressionError as exc:
            run._fail(exc)
        run.pending_cost = cost
        run.reconfiguration_time += cost
        if moved > 0:
            run.pending_move = ([i for lo, hi in old.intervals() for i in range(lo, hi + 1)], list(run.ids), moved)
        point, requested = run.point, run.point.get("requested")
        if self.out is not None:
            self.out.write(",".join((sjob.id, f"{sim.kernel.now:.6f}", str(old), str(alloc), str(n_old), str(n_new),
                                     "" if requested is None else str(requested), str(point["phase"]),
                                     str(point["iteration"]), f"{cost:.6f}", f"{moved:.6f}")) + "\n")
        sim.append("JOB_RESIZED", {"job_id": sjob.id, "alloc": str(alloc), "old_alloc": str(old),
                                   "reconfiguration_time": cost})

    # --------------------------------------------------------------- server side
    def at_point(self, sjob: "SimJob") -> None:
        """The job reached a scheduling point: the scheduler is told in the next message."""
        run = sjob.run
        if sjob.state != "RUNNING" or run is None or run.point is None:
            return
        self.pending.append(sjob)
        self.sim.append("JOB_SCHEDULING_POINT", dict(run.point))

    def sent(self) -> None:
        """A message left for the scheduler: the points it told wait for its reply."""
        if self.pending:
            self.in_exchange.extend(self.pending)
            self.pending = []

    def resume(self) -> None:
        """The scheduler's reply was applied: the jobs waiting for it go on."""
        resized, self.resized = self.resized, {}
        for sjob in resized.values():
            self._settle(sjob)
        waiting, self.in_exchange = self.in_exchange, []
        kernel = self.sim.kernel
        for sjob in waiting:
            run = sjob.run
            if sjob.state == "RUNNING" and run is not None and run.proc is not None and run.proc.alive:
                kernel.wake(run.proc)
