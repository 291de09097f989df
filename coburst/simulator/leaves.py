"""Batsim 4.2.1's ``usage_trace``, ``send`` and ``recv`` profiles (``jobs_execution.cpp``
``execute_task``, ``usage_trace_replayer``, ``usage_trace_replayer_process``), as methods of
the job's :class:`~coburst.simulator.execution.JobRun`.

* ``usage_trace``: one process per rank replays its trace file (SimGrid 3.32's
  ``xbt::replay_runner``, see :func:`coburst.simulator.workload.read_usage_trace`): each
  ``m_usage`` line is a compute-only parallel task of ``max(round(usage x cores), 1)`` copies
  of the rank's host; then the rank sends its number in 4 bytes to the job, which waits for
  every rank (each wait bounded by the walltime left).
* ``send``: a message to the scheduler (``FROM_JOB_MSG``), then a short delay.
* ``recv``: waits (polling) for a ``TO_JOB_MSG`` message, then runs the profile the message
  chooses.

Batsim follows the progress of none of them: a killed job reports
``{"profile_name": ..., "current_task_index": -1}`` for such a leaf.

Also EXECUTE_JOB's ``additional_io_job`` (``protocol.cpp`` ``handle_execute_job``,
``initialize_sequential_tasks``, ``execute_parallel_task``): :func:`additional_io`,
:func:`check_io_start`, :func:`merge_io`.
"""

from __future__ import annotations

import math
from collections import deque
from typing import TYPE_CHECKING, Generator

from coburst.errors import ProtocolError
from coburst.simulator.kernel import Get, Mailbox, Process, Put, Run, Sleep, Work

if TYPE_CHECKING:  # pragma: no cover
    from procset import ProcSet

    from coburst.simulator.workload import Profile


class OtherLeaves:
    """The leaves of :data:`OTHER_LEAVES`, mixed into ``JobRun`` (which provides ``sim``,
    ``job``, ``hosts``, ``first_host``, ``proc``, ``remaining``, ``run_delay`` and
    ``run_profile``)."""

    #: usage_trace: host index (in ``hosts``) of each rank, fixed by the first trace the job
    #: replays (Batsim's ``smpi_ranks_to_hosts_mapping``)
    rank_hosts: list | None = None
    #: how many recv profiles are running the profile they chose (Batsim cannot report the
    #: progress of such a job: see ``JobRun.progress``)
    in_recv: int = 0
    #: EXECUTE_JOB's additional_io_job: the I/O profile of the profile being run (its element
    #: of the same index in a composed profile), None for none, and the I/O allocation
    io: "Profile | None" = None
    io_alloc: "ProcSet | None" = None

    #: ids of the hosts of the running parallel task when coburst computes it itself
    #: (:class:`~coburst.simulator.kernel.Work`), of the hosts of a usage trace's ranks when
    #: they run so: another job's merged I/O task on one of them must share it (see
    #: :meth:`io_shared`)
    work_hosts: "set | None" = None
    trace_hosts: "set | None" = None

    def io_child(self, io: "Profile | None", index: int) -> "Profile | None":
        """The I/O profile of the ``index``-th profile (in its sequence, whatever the repeat)
        of the composed profile whose I/O profile is ``io`` (``initialize_sequential_tasks``:
        ``io_data->profile_sequence[i]``; :func:`check_io_start` checked it exists)."""
        if io is None:
            return None
        return self.sim.profile_named(self.job, io.data["seq"][index])

    def io_shared(self, ids: set) -> None:
        """Hosts ``ids`` now also run another job's merged I/O task (SimGrid shares them): a
        parallel task coburst computes itself on one of them goes on as a kernel L07 action,
        from the work it has done (as a speed change does)."""
        if self.trace_hosts and ids & self.trace_hosts:
            raise ProtocolError(f"job {self.job.id}: another job's additional I/O task runs on a host where this "
                                "job replays a usage trace: not supported by coburst sim")
        proc = self.proc
        if self.work_hosts and ids & self.work_hosts and proc is not None and proc.activity is not None:
            leaf = self.leaf
            leaf.work_done = leaf.fraction_done(self.sim.kernel.now)
            self._rate_cancel = True
            self.sim.kernel.cancel_activity(proc)

    def run_send(self, profile: "Profile") -> Generator:
        """``send`` (``execute_task``, SCHEDULER_SEND): a 1-byte message to the server from the
        job's first host, which becomes ``FROM_JOB_MSG`` ``{"job_id", "msg"}``, then a delay
        of ``sleeptime`` (default 1e-7 s) against the walltime."""
        yield self.sim.to_server(("FROM_JOB", self.job, profile.data["msg"]), self.first_host)
        outcome = yield from self.run_delay(float(profile.data.get("sleeptime", 0.0000001)))
        return -1 if outcome == "timeout" else profile.ret

    def run_recv(self, profile: "Profile") -> Generator:
        """``recv`` (``execute_task``, SCHEDULER_RECV).  With no message waiting: the
        ``timeout`` profile at once if one is named, else a delay of ``polltime`` (default
        0.005 s) against the walltime until a message (``TO_JOB_MSG``) is there.  The first
        message then chooses ``success`` (it matches ``regex``, default ``.*``, as a whole:
        ``std::regex_match``) or ``failure``; the chosen profile (none: nothing) runs as a
        sub-task whose non-zero return code is the recv's."""
        data = profile.data
        if self.job.messages is None:
            self.job.messages = deque()
        buffer = self.job.messages
        follow = ""
        if not buffer:
            if data.get("timeout", ""):
                follow = data["timeout"]
            else:
                while not buffer:
                    outcome = yield from self.run_delay(float(data.get("polltime", 0.005)))
                    if outcome == "timeout":
                        return -1
        if buffer:
            message = buffer.popleft()
            follow = data.get("success", "") if _regex_match(data.get("regex", ".*"), message, self.job.id,
                                                             profile.name) else data.get("failure", "")
        if follow:
            sub = _recv_target(self.sim, self.job, profile.name, follow)
            self.in_recv += 1
            io, self.io = self.io, None  # a new BatTask, without I/O profile
            code = yield from self.run_profile(sub)
            self.io = io
            self.in_recv -= 1
            if code != 0:
                return code
        return profile.ret

    def run_usage_trace(self, profile: "Profile") -> Generator:
        """``usage_trace`` (``execute_task``): one process per rank on its host (ranks go
        round-robin over the job's first ``res`` hosts unless the job gives
        ``smpi_ranks_to_hosts_mapping``), each replaying its trace
        (``usage_trace_replayer_process``) and then putting a 4-byte message in the job's
        termination mailbox; the job takes them one by one, each ``get`` bounded by the
        walltime left.  At the walltime the ranks still running are killed (-1)."""
        from coburst.simulator.workload import read_usage_trace

        sim, kernel = self.sim, self.sim.kernel
        if profile.rank_actions is None:
            profile.rank_actions = [read_usage_trace(path, rank, f"profile {profile.name!r}")
                                    for rank, path in enumerate(profile.trace_files)]
        ranks = profile.rank_actions
        if self.rank_hosts is None:
            given = self.job.job.json.get("smpi_ranks_to_hosts_mapping") or []
            self.rank_hosts = list(given) or [rank % self.job.job.res for rank in range(len(ranks))]
        if len(self.rank_hosts) != len(ranks):
            raise ProtocolError(f"job {self.job.id}: profile {profile.name!r} has {len(ranks)} ranks but the job's "
                                f"ranks-to-hosts mapping has {len(self.rank_hosts)} (Batsim 4.2.1 aborts: 'SMPI "
                                "ranks_to_host mapping has an invalid size')")
        hosts = [self.hosts[i] for i in self.rank_hosts]
        io_hit = any(id(h) in sim.io_hosts for h in hosts)
        if io_hit and sim.power is not None:
            raise ProtocolError(f"job {self.job.id}: replays a usage trace on a host another job's additional I/O "
                                "task used: with -E, not supported by coburst sim")
        shared = sim.options["enable_compute_sharing"] or len(set(map(id, hosts))) != len(hosts) or io_hit
        if not shared:
            self.trace_hosts = {id(h) for h in hosts}
        box = Mailbox(f"{self.job.id}_smpi_termination")
        has_walltime = self.remaining >= 0
        timer = kernel.spawn(self._receive_timeout(box, self.remaining), "timeout") if has_walltime else None
        children = {rank: kernel.spawn(self._usage_rank(rank, host, actions, box, shared), f"{self.job.id}_{rank}")
                    for rank, (host, actions) in enumerate(zip(hosts, ranks))}
        try:
            while children:
                before = kernel.now
                if has_walltime and timer is None:
                    timer = kernel.spawn(self._receive_timeout(box, self.remaining), "timeout")
                rank = yield Get(box)
                self._sleep_ended()  # the get's timeout detector (a sleep) ends
                if rank is _TIMED_OUT:
                    timer = None
                    return -1
                if timer is not None:
                    kernel.kill(timer)
                    timer = None
                del children[rank]
                if has_walltime:
                    self.remaining = self.remaining - (kernel.now - before)
        finally:  # the walltime, or a kill of the job: its ranks go too
            self.trace_hosts = None
            for proc in children.values():
                kernel.kill(proc)
            if timer is not None:
                kernel.kill(timer)
        return profile.ret

    def _sleep_ended(self) -> None:
        """-E: a sleep of the job's actor ended or was cancelled: SimGrid updates its host's
        energy (``CpuAction::on_state_change``), as at the end of a delay."""
        if self.sim.power is not None and self.remaining >= 0:
            self.sim.power.meter.task_end([self.job.alloc.min], self.sim.kernel.now)

    def _receive_timeout(self, box: Mailbox, duration: float) -> Generator:
        """The timeout of the job's ``get(remaining_time)``: a sleep; if the job still waits
        when it ends (its message may be on the way), the get fails (``TimeoutException``)."""
        yield Sleep(max(duration, 0.0))
        if box.receiver is self.proc:
            box.receiver = _NOBODY  # a message still on its way is delivered to nobody
            self.sim.kernel.wake(self.proc, _TIMED_OUT)

    def _usage_rank(self, rank: int, host, actions: list, box: Mailbox, shared: bool) -> Generator:
        """One rank (``usage_trace_replayer``): each ``(usage, flops)`` action is a parallel
        task of ``max(round(usage x cores), 1)`` copies of the rank's host, each computing
        ``flops``; then the rank's number goes to the job in 4 bytes."""
        cores = host.core_count
        for usage, flops in actions:
            copies = max(_round_half_away(usage * cores), 1)
            yield from self._usage_exec(host, copies, flops, shared)
        yield Put(box, rank, route=self.sim.message_route(host, self.first_host), size=4)
        power = self.sim.power
        if power is not None:  # the message's L07Action ends: SimGrid updates both hosts' energy
            power.meter.task_end(power.machines_of([host, self.first_host]), self.sim.kernel.now)

    def _usage_exec(self, host, copies: int, flops: float, shared: bool) -> Generator:
        """One ``m_usage`` parallel task, waited for without timeout.  Alone on its host, its
        rate is what SimGrid 3.32's ``FairBottleneck`` gives one variable with ``copies``
        elements of weight ``flops`` on the host's CPU constraint (bound cores x speed) and the
        L07 bound ``speed / flops``; otherwise the kernel simulates it."""
        if shared:
            yield Run([host] * copies, [flops] * copies, [])
            return
        if flops > 0:
            speed = host.speed
            rate = min(host.core_count * speed / copies / flops, speed / flops)
        else:
            rate = math.inf  # nothing to compute: over at once (L07Action: remains 0)
        power = self.sim.power
        if power is None:
            yield Work(rate)
            return
        machines = power.machines_of([host] * copies)
        load = 0.0
        if flops > 0:
            for _ in range(copies):  # Constraint::get_usage: one element per copy
                load += flops * rate
        power.meter.task_start(machines, self.sim.kernel.now)
        power.meter.start_load(machines[:1], [load], 1.0)
        try:
            yield Work(rate)
        finally:
            power.meter.task_end(machines, self.sim.kernel.now)
            power.meter.stop_load(machines[:1], 1.0)


#: leaf profile types run by a JobRun method of their own
OTHER_LEAVES = {"usage_trace": "run_usage_trace", "send": "run_send", "recv": "run_recv"}

#: what the job's get receives when its timeout ends first
_TIMED_OUT = object()
#: the receiver of a message nobody waits for any more (a get that timed out)
_NOBODY = Process(iter(()), "nobody")
_NOBODY.alive = False


def _round_half_away(x: float) -> int:
    """C's ``round``: halves away from zero (Python's ``round`` goes to even)."""
    whole = math.floor(x)
    return int(whole) + (1 if x - whole >= 0.5 else 0)


def _recv_target(sim, sjob, recv_name: str, name: str) -> "Profile":
    """The profile a recv chose, looked up by name when it runs (``Profiles::at``)."""
    why = _unreachable_profile(sim, sjob, name)
    if why:
        raise ProtocolError(f"job {sjob.id}: recv profile {recv_name!r} chose profile {name!r}, but {why} (Batsim "
                            "4.2.1 aborts: 'Cannot get profile')")
    return sim.workloads[sjob.job.workload].profiles[name]


def _unreachable_profile(sim, sjob, name: str) -> str:
    """Why Batsim 4.2.1 cannot get profile ``name`` of ``sjob``'s workload by name ("" if it
    can): it does not exist, was dropped at load (no job nor composed profile uses it:
    ``remove_unreferenced_profiles``), or was garbage-collected with a finished job."""
    wname = sjob.job.workload
    wl = sim.workloads[wname]
    if name not in wl.profiles:
        return "it does not exist"
    if wl.path != "dynamic" and (wname, name) not in sim.late_profiles and name not in _kept_at_load(sim, wname):
        return "no job nor composed profile uses it, so Batsim dropped it after loading the workload"
    if (sjob.job.workload, name) in sim.collected_profiles:
        return "Batsim discarded it when the last job using it ended (use --enable-profile-reuse)"
    return ""


def _kept_at_load(sim, wname: str) -> set:
    """The profiles of static workload ``wname`` Batsim kept after loading it
    (:func:`~coburst.simulator.workload.referenced_profiles` of its load-time profiles; cached:
    its jobs do not change, and profiles added later are in ``sim.late_profiles``)."""
    from coburst.simulator.workload import Workload, referenced_profiles

    cache = sim.__dict__.setdefault("_kept_at_load", {})
    kept = cache.get(wname)
    if kept is None:
        wl = sim.workloads[wname]
        if wl.kept is not None:  # a streamed file: computed when it was read
            kept = cache[wname] = wl.kept
            return kept
        loaded = {k: p for k, p in wl.profiles.items() if (wname, k) not in sim.late_profiles}
        kept = cache[wname] = referenced_profiles(Workload(name=wname, path=wl.path, nb_res=wl.nb_res, jobs=wl.jobs,
                                                           profiles=loaded))
    return kept


# ------------------------------------------------------------------------------ additional_io_job
#: I/O profile types Batsim 4.2.1 can merge into a parallel task (``generate_matrices_from_
#: profile`` without storage mapping: the storage types abort, the others are "not reached")
IO_TYPES = ("parallel", "parallel_homogeneous", "parallel_homogeneous_total")


def additional_io(sim, sjob, spec) -> tuple:
    """EXECUTE_JOB's ``additional_io_job`` ``{"alloc", "profile_name", "profile"?}`` as
    ``protocol.cpp`` ``handle_execute_job`` reads it: the I/O profile (``profile`` given: a new
    profile of that name added to the job's workload, which must not have one, even a dropped
    one) and the I/O allocation (a non-empty interval set, not checked against the platform:
    Batsim only looks at its machines when a parallel task merges it, see :func:`merge_io`).
    An I/O sequence needs a job sequence of the same size.  Inputs on which Batsim 4.2.1
    aborts, or reads outside its data, are refused naming why."""
    from coburst.errors import InputError
    from coburst.simulator.allocation import parse_allocation
    from coburst.simulator.workload import validate_profile

    where = f"EXECUTE_JOB {sjob.id}: additional_io_job"
    if not isinstance(spec, dict):
        raise ProtocolError(f"{where} must be an object")
    name = spec.get("profile_name")
    if not isinstance(name, str):
        raise ProtocolError(f"{where}: 'profile_name' is mandatory and must be a string (Batsim 4.2.1 aborts too)")
    wname = sjob.job.workload
    wl = sim.workloads[wname]
    if "profile" in spec:
        if name in wl.profiles:
            raise ProtocolError(f"{where}: the given profile name {name!r} already exists in workload {wname!r} "
                                "(Batsim 4.2.1 aborts: 'The given profile name ... already exists!')")
        if not isinstance(spec["profile"], dict):
            raise ProtocolError(f"{where}: 'profile' must be an object (Batsim 4.2.1 aborts too)")
        try:
            profile = validate_profile(name, spec["profile"], "EXECUTE_JOB", f"additional_io_job {name}")
        except InputError as exc:
            raise ProtocolError(f"{where}: invalid profile: {exc}") from None
        if profile.type == "composed":
            raise ProtocolError(f"{where}: a composed I/O profile given in EXECUTE_JOB is never resolved by Batsim "
                                "4.2.1 (it reads its empty profile_sequence and crashes): give the name of a "
                                "composed profile of the workload file instead")
        wl.profiles[name] = profile
        sim.late_profiles.add((wname, name))
    why = _unreachable_profile(sim, sjob, name)
    if why:
        raise ProtocolError(f"{where}: cannot use profile {name!r}: {why} (Batsim 4.2.1 aborts: 'Cannot get "
                            "profile' / 'does not exists')")
    io = wl.profiles[name]
    if io.type == "composed":
        job_profile = sim.profile_of(sjob)
        if job_profile.type != "composed":
            raise ProtocolError(f"{where}: the I/O profile {name!r} is a sequence but the job's profile "
                                f"{job_profile.name!r} is of type {job_profile.type!r} (Batsim 4.2.1 aborts: 'they "
                                "must have compatible profile in order to be merged')")
        if len(io.data["seq"]) != len(job_profile.data["seq"]):
            raise ProtocolError(f"{where}: the I/O sequence {name!r} has {len(io.data['seq'])} profiles but the "
                                f"job's sequence {job_profile.name!r} has {len(job_profile.data['seq'])} (Batsim "
                                "4.2.1 aborts: they should be the same)")
    alloc_text = spec.get("alloc")
    if not isinstance(alloc_text, str):
        raise ProtocolError(f"{where}: 'alloc' is mandatory and must be a string (Batsim 4.2.1 aborts too)")
    try:
        alloc, _ = parse_allocation(alloc_text)
    except (ValueError, TypeError):
        alloc = None
    if alloc is None or len(alloc) == 0:
        raise ProtocolError(f"{where}: invalid 'alloc' {alloc_text!r}: expected a non-empty interval set such as "
                            "\"0-3 8\" (Batsim 4.2.1 aborts: 'bad IO allocation')")
    return io, alloc


def check_io_start(sim, sjob, io, io_alloc) -> None:
    """At the job's start (``execute_job_process``): ``initialize_sequential_tasks`` gives
    each element of a job sequence the I/O profile of the same index in the I/O profile of
    that place, read as a sequence whatever its type (refused where that reads outside the
    data: a non-sequence, a shorter sequence, a sequence never resolved); then the I/O hosts
    are machines 0..n-1 of the platform, n the size of the I/O allocation."""
    where = f"job {sjob.id}: additional_io_job"

    def walk(profile, io_here) -> None:
        if profile.type != "composed" or io_here is None:
            return
        if io_here.type != "composed":
            raise ProtocolError(f"{where}: the job's sequence {profile.name!r} gets I/O profile {io_here.name!r} of "
                                f"type {io_here.type!r}, which Batsim 4.2.1 reads as a sequence (it crashes): "
                                "a job sequence needs an I/O sequence")
        if (sjob.job.workload, io_here.name) in sim.late_profiles:
            raise ProtocolError(f"{where}: the I/O sequence {io_here.name!r} was registered during the simulation: "
                                "Batsim 4.2.1 never resolves its profiles (it reads an empty profile_sequence "
                                "and crashes)")
        seq, io_seq = profile.data["seq"], io_here.data["seq"]
        if len(io_seq) < len(seq):
            raise ProtocolError(f"{where}: the I/O sequence {io_here.name!r} has {len(io_seq)} profiles but the "
                                f"job's sequence {profile.name!r} has {len(seq)} (Batsim 4.2.1 reads past its end)")
        for i, child in enumerate(seq):
            walk(sim.profile_named(sjob, child), sim.profile_named(sjob, io_seq[i]))

    walk(sim.profile_of(sjob), io)
    nres = len(sim.resources)
    if len(io_alloc) > nres:
        raise ProtocolError(f"{where}: the I/O allocation {io_alloc} has {len(io_alloc)} machines, the platform "
                            f"{nres} (Batsim 4.2.1 takes machines 0..{len(io_alloc) - 1} as I/O hosts and aborts: "
                            f"'Cannot get machine {nres}: it does not exist')")


def merge_io(run, io, hosts: list, flops: list, matrix: list) -> tuple[list, list, list]:
    """The leaf's parallel task merged with its I/O profile ``io``, as ``execute_parallel_task``
    does it (``task_execution.cpp``), quirks included: the I/O matrices are generated for as
    many hosts as the I/O allocation has; the merged task runs on the union of both
    allocations in machine order, where a machine of both computes the sum and each matrix
    is read in order as its machines come (the job's for as many machines as its
    allocation has, whatever its profile added, e.g. a PFS host); then no storage machine may
    compute.  Cases where Batsim aborts or reads outside its data are refused."""
    sim, sjob = run.sim, run.job
    where = f"job {sjob.id}: additional_io_job"
    io_alloc = run.io_alloc
    job_ids, io_ids = list(sjob.alloc), list(io_alloc)
    if io.type not in IO_TYPES:
        why = ("aborts: 'storage mapping is null but the code uses it!'"
               if io.type in ("parallel_homogeneous_pfs", "data_staging") else "aborts: 'Should not be reached.'")
        raise ProtocolError(f"{where}: I/O profile {io.name!r} of type {io.type!r} cannot be merged into the parallel "
                            f"task of profile {run.leaf.profile_name!r} (Batsim 4.2.1 merges "
                            f"{', '.join(IO_TYPES)}; it {why})")
    if io.type == "parallel" and len(io.data["cpu"]) != len(io_ids):
        raise ProtocolError(f"{where}: I/O profile {io.name!r} has {len(io.data['cpu'])} executors but the I/O "
                            f"allocation has {len(io_ids)} machines (Batsim 4.2.1 aborts: 'the number of resources "
                            "given by the allocation ... is different')")
    _, io_flops, io_com = sim.build_ptask(sjob, io, [sim.resources[i].host for i in range(len(io_ids))])
    nres = len(sim.resources)
    for rid in sorted(set(io_ids)):
        if rid >= nres:
            raise ProtocolError(f"{where}: the I/O allocation {io_alloc} names machine {rid} but the platform has "
                                f"machines 0-{nres - 1} (Batsim 4.2.1 aborts: 'Cannot get machine {rid}: it does "
                                "not exist')")
    if not io_com:
        raise ProtocolError(f"{where}: I/O profile {io.name!r} communicates nothing (com 0): Batsim 4.2.1 then "
                            "reads its empty communication matrix while merging it (it crashes)")
    job_set, io_set = set(job_ids), set(io_ids)
    new_alloc = sorted(job_set | io_set)
    n = len(new_alloc)
    comp = [0.0] * n
    com = [0.0] * (n * n)
    k = 0
    col_job = col_io = row_job = row_io = 0
    for col in range(n):
        machine = new_alloc[col]
        only_job = only_io = False
        if machine in job_set and machine in io_set:
            comp[col] = flops[col_job] + io_flops[col_io]
            col_job += 1
            col_io += 1
        elif machine in job_set:
            comp[col] = flops[col_job]
            col_job += 1
            only_job = True
        else:
            comp[col] = io_flops[col_io]
            col_io += 1
            only_io = True
        for row in range(n):
            other = new_alloc[row]
            if other in job_set and other in io_set:
                if only_job:
                    if matrix:
                        com[k] = matrix[row_job]
                        row_job += 1
                elif only_io:
                    com[k] = io_com[row_io]
                    row_io += 1
                elif matrix:
                    com[k] = matrix[row_job] + io_com[row_io]
                    row_job += 1
                    row_io += 1
                else:
                    com[k] = io_com[row_io]
                    row_io += 1
            elif other in job_set:
                if not (only_io or not matrix):
                    com[k] = matrix[row_job]
                    row_job += 1
            elif not only_job:
                com[k] = io_com[row_io]
                row_io += 1
            k += 1
    for rid, amount in zip(new_alloc, comp):  # check_ptask_execution_permission(new_alloc, ...)
        if abs(amount) > 1e-10 and sim.resources[rid].role == "storage":
            res = sim.resources[rid]
            raise ProtocolError(f"job {sjob.id}: some computation ({amount:g}) is assigned to storage node "
                                f"(id={rid}, name='{res.name}') by its additional I/O job (Batsim 4.2.1 aborts "
                                "here too)")
    new_hosts = [sim.resources[rid].host for rid in new_alloc]
    sim.io_touched([sim.resources[rid].host for rid in new_alloc if rid not in job_set], sjob)
    return new_hosts, comp, com


def _regex_match(pattern: str, text: str, job_id: str, profile_name: str) -> bool:
    """``std::regex_match(text, std::regex(pattern))`` (ECMAScript grammar, whole string),
    with Python's ``re`` (the same for the usual patterns)."""
    import re

    try:
        return re.fullmatch(pattern, text) is not None
    except re.error as exc:
        raise ProtocolError(f"job {job_id}: recv profile {profile_name!r} has an invalid regex {pattern!r}: {exc} "
                            "(Batsim 4.2.1 dies in std::regex)") from None


def to_job_message(sjob, data: dict) -> None:
    """``TO_JOB_MSG`` ``{"job_id", "msg"}``: ``msg`` (a string) joins the job's incoming
    messages (``incoming_message_buffer``), taken by its recv profiles, even before it runs."""
    if not isinstance(data.get("msg"), str):
        raise ProtocolError(f"TO_JOB_MSG {sjob.id}: ['data']['msg'] must be a string (Batsim 4.2.1 aborts too)")
    if sjob.messages is None:
        sjob.messages = deque()
    sjob.messages.append(data["msg"])
