"""IO-Aware job execution with Batsim 4.2 dynamic jobs (Kopański 2020, §2.4).

A static job whose JSON carries an ``io`` field (schema: :mod:`coburst.workloads.jobmodels`)
is not executed as one Batsim job.  When the policy starts it, the adapter hands it to
:class:`IOAwareExecutor`, which runs it through its phases as *dynamic sub-jobs* with
standard Batsim profiles, while the policy keeps seeing one running job that holds its
compute nodes and burst buffers (BB) from its start to the end of its last sub-job.

Phases and the Batsim jobs they become (``J`` = the static job ``w0!7``, ``c`` = one of
its compute resource ids, ``b(c)`` = the BB resource id holding ``c``'s space, ``P`` =
the PFS resource id; sub-jobs live in the dynamic workload ``io``; every I/O sub-job has
``storage_mapping = {"pfs": P, "bb": b(c)}``):

=============  =========================================  =========  ======================
phase          sub-jobs (``io!`` + name)                  res/alloc  profile (from ``io``)
=============  =========================================  =========  ======================
stage-in       ``w0.7.in.<c>``, one per compute node      2: {P, b}  ``stage_in``
                                                                     (data_staging PFS->BB)
compute k      ``w0.7.c<k>``, one job on all the nodes    res(J)     ``compute``
checkpoint k   ``w0.7.ck<k>.<c>``, one per compute node   1: {c}     ``checkpoint``
                                                                     (parallel_homogeneous_
                                                                     pfs, c -> BB)
flush k        ``w0.7.fl<k>.<c>``, one per compute node   2: {P, b}  ``flush``
                                                                     (data_staging BB->PFS)
stage-out      ``w0.7.out.<c>``, one per compute node     2: {P, b}  ``stage_out``
=============  =========================================  =========  ======================

Order: all stage-ins, then compute 1; after compute k (k <= ``checkpoints``, k < ``phases``)
the checkpoints of every node, the job being blocked until all have finished; then compute
k+1 and the flushes of checkpoint k start together, the flushes overlapping the compute
phase (and whatever follows); after the last compute phase, the stage-outs.  ``J`` is over
when every stage-out *and* every flush has finished.  A phase whose byte amount is 0 is
skipped, and so is every BB phase of a job without BB request.

Batsim 4.2 legality.  Data-staging sub-jobs are allocated the two storage hosts they move
data between (as pybatsim's own storage controller and the thesis did): storage hosts may
be shared (Batsim's default), so the flushes never occupy a compute node and can overlap
the next compute phase although compute sharing is disabled.  A compute node runs at most
one sub-job at a time (compute phase or its checkpoint).  Profiles are registered with
unique names per job and phase (``w0.7.in``, ``w0.7.c1``, ``w0.7.ck1``, ``w0.7.fl1``...),
all sub-jobs of a phase sharing its profile, registered and executed in the same message
-- so the run needs only ``--enable-dynamic-jobs``: without ``--enable-profile-reuse``
Batsim forgets a profile once a job using it has ended, but the other sub-jobs of the phase
are already registered and keep it; with it the behaviour is the same.  With
``--acknowledge-dynamic-jobs`` the ``JOB_SUBMITTED`` echoes of sub-jobs are ignored.

What Batsim records: the static job is *rejected*.  Batsim 4.2.1 only writes a job's row
when it ends, and a job moved to ``RUNNING`` by ``CHANGE_JOB_STATE`` cannot be moved to a
final state (the real binary aborts with "export.cpp: Job N did not complete").  So, as the
thesis did, when the policy starts ``J`` the adapter sends, in this order and in the same
message: ``SET_JOB_METADATA`` ``J`` -> ``[bb=<BB id>:<bytes>/...;]alloc=<compute ids>;io=<phases>``
(``bb=`` as for statically run jobs, absent without BB; ``alloc`` an interval set such as
``0-3 8``), then ``REJECT_JOB`` ``J``, then the profiles, registrations, executions and
metadata of the first sub-jobs.  Batsim writes ``J``'s row at once: ``REJECTED``, with that
metadata (checked on the real Batsim 4.2.1: ``SET_JOB_METADATA`` on a rejected job only
shows if it comes *before* the rejection, which writes the row; after it in the same
message Batsim ignores it, and in a later message aborts with "Cannot get job 'w0!7': it
does not exist").  Every sub-job gets, right after its
``EXECUTE_JOB``, the metadata ``of=<J's id>;step=<phase tag>`` (``w0!7``; ``in``, ``c<k>``,
``ck<k>``, ``fl<k>``, ``out``), plus ``;last`` on the sub-jobs of the job's final phase (the
stage-out, or the last compute phase when there is no stage-out).  The policy's state is
unaffected: ``J`` is running there from the decision to the end of its last sub-job.

Fold-back (:func:`coburst.analysis.metrics.fold_io_jobs`, used by ``read_jobs`` and so by
``coburst run``/``demo`` metrics): the ``REJECTED`` row of ``J`` with an ``io=`` metadata and
the sub-job rows whose ``of=`` names ``J`` become one row for ``J``: start = first sub-job
start, finish = last sub-job finish, allocated resources = ``alloc``, final state =
``COMPLETED_WALLTIME_REACHED`` if a sub-job reached its walltime, else ``COMPLETED_KILLED``
if a sub-job ended otherwise than successfully, else ``COMPLETED_SUCCESSFULLY`` if a
``last`` sub-job exists, else ``COMPLETED_WALLTIME_REACHED`` (the adapter started no further
phase because ``J``'s walltime was used up) -- exactly the state the adapter itself gives
``J`` (:func:`final_state`); metadata ``[bb=...;]alloc=...;phases=<successful
compute phases>/<phases>``.  The row sits where ``J``'s last sub-job's row is (rows are in
end order).  Batsim's own ``_schedule.csv`` counts ``J`` as rejected and each sub-job as a
job: use the folded rows for metrics.

Walltime.  ``J``'s walltime counts from the policy's decision (the date the policy's state
uses): each sub-job gets what remains of it as its own walltime (flushes included, unlike
the thesis), so Batsim cuts whatever runs at ``J``'s deadline (up to the delays of the
messages between Batsim's actors, a fraction of a millisecond).  When a sub-job
ends otherwise than successfully no new phase starts, and none starts either when less
than :data:`MIN_WALLTIME` is left; ``J`` ends once its running sub-jobs have ended, in the
state given by the fold-back rule above.  A job whose walltime is below
:data:`MIN_WALLTIME` runs its static profile.

Resources.  Compute nodes and BB space stay held by ``J`` in the policy's state until its
end (after the last flush and stage-out), then are released together: the core has no
notion of a BB held longer than compute nodes, and BB are released only after the last
flush as required.

Selection (adapter option ``io_aware``, default ``true``): IO-Aware execution is used for
every job with a valid ``io`` field when Batsim runs with ``--enable-dynamic-jobs``, storage
sharing is allowed and the platform has a PFS (storage host ``pfs``, or the only storage
host without ``bb_capacity``).  Otherwise such jobs run their static profile (one
``parallel_homogeneous`` phase, also in the workload) and a warning is logged once.  With
``io_aware: false`` static profiles are always used.  Whenever dynamic jobs are enabled,
the executor sends ``NOTIFY registration_finished`` once every static job has been
submitted and has ended (or was rejected), without which Batsim would never end.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence

from procset import ProcSet

from coburst.adapter.bb import bb_metadata
from coburst.core.decisions import Start
from coburst.core.placement import procset_of



class Driver(Protocol):
    """What the executor uses of the scheduler that drives it
    (:class:`coburst.adapter.scheduler.CoburstScheduler`): its Batsim link, cluster, state,
    job tables and end-of-job hook."""

    bs: Any
    cluster: Any
    state: Any
    _jobs: dict
    _placements: dict

    def _ended_job(self, job_id: str) -> None: ...

__all__ = ["IOAwareExecutor", "IOSpec", "parse_io", "IO_WORKLOAD", "static_metadata", "subjob_metadata",
           "final_state"]

log = logging.getLogger("coburst.adapter.io")

#: name of the dynamic workload holding the sub-jobs and their profiles
IO_WORKLOAD = "io"
#: below this many seconds of walltime left, no new phase is started
MIN_WALLTIME = 1e-6

_STAGING = ("stage_in", "flush", "stage_out")
#: metadata keys (read back by coburst.analysis.metrics.fold_io_jobs)
KEY_PHASES, KEY_OF, KEY_STEP, FLAG_LAST = "io", "of", "step", "last"
_LABELS = ("pfs", "bb")
_COMPUTE_TYPES = ("parallel_homogeneous", "parallel_homogeneous_total", "delay")


@dataclass(frozen=True)
class IOSpec:
    """A validated ``io`` job field."""

    phases: int
    checkpoints: int
    profiles: dict[str, dict]  # stage_in, compute, checkpoint, flush, stage_out

    def bytes_of(self, step: str) -> float:
        prof = self.profiles[step]
        if step == "checkpoint":
            return float(prof.get("bytes_to_read", 0)) + float(prof.get("bytes_to_write", 0))
        return float(prof["nb_bytes"])


def _number(x: Any) -> bool:
    return not isinstance(x, bool) and isinstance(x, (int, float)) and math.isfinite(x) and x >= 0


def parse_io(io: Any) -> IOSpec | str:
    """Validate an ``io`` job field; an :class:`IOSpec`, or the problem as a string."""
    if not isinstance(io, Mapping):
        return "the io field is not an object"
    phases, ckpts = io.get("phases"), io.get("checkpoints", None)
    if isinstance(phases, bool) or not isinstance(phases, int) or phases < 1:
        return f"io.phases must be an integer >= 1, got {phases!r}"
    if ckpts is None:
        ckpts = phases - 1
    if isinstance(ckpts, bool) or not isinstance(ckpts, int) or not 0 <= ckpts <= phases - 1:
        return f"io.checkpoints must be an integer in [0, phases - 1], got {ckpts!r}"
    profiles = {}
    for step in ("stage_in", "compute", "checkpoint", "flush", "stage_out"):
        prof = io.get(step)
        if not isinstance(prof, Mapping) or not isinstance(prof.get("type"), str):
            return f"io.{step} must be a Batsim profile object"
        ptype = prof["type"]
        if step in _STAGING:
            if ptype != "data_staging" or not _number(prof.get("nb_bytes")) \
                    or prof.get("from") not in _LABELS or prof.get("to") not in _LABELS:
                return f"io.{step} must be a data_staging profile between the labels 'pfs' and 'bb'"
        elif step == "checkpoint":
            if ptype != "parallel_homogeneous_pfs" or prof.get("storage", "pfs") not in _LABELS \
                    or not all(_number(prof.get(k, 0)) for k in ("bytes_to_read", "bytes_to_write")):
                return "io.checkpoint must be a parallel_homogeneous_pfs profile on the label 'bb' or 'pfs'"
        elif ptype not in _COMPUTE_TYPES:
            return f"io.compute must be one of {', '.join(_COMPUTE_TYPES)}, got {ptype!r}"
        profiles[step] = dict(prof)
    return IOSpec(phases, ckpts, profiles)


@dataclass
class _Run:
    """One static job being executed through its phases."""

    job: Any  # pybatsim Job of the static job
    prefix: str  # "w0.7": unique per static job, for sub-job and profile names
    spec: IOSpec
    nodes: list[int]  # compute resource ids, ascending
    bbmap: dict[int, int]  # compute id -> BB id (empty without BB)
    deadline: float
    metadata_bb: str | None
    phase: int = 0  # current (or last started) compute phase, 1-based
    done: int = 0  # compute phases completed
    blocking: set[str] = field(default_factory=set)  # sub-jobs the next phase waits for
    flushes: set[str] = field(default_factory=set)  # running flushes
    states: list[str] = field(default_factory=list)  # final states of the ended sub-jobs
    stopped: bool = False  # no further phase is started (a sub-job failed, or no walltime left)
    last_sent: bool = False  # the sub-jobs of the final phase were started
    next_step: str = "stage_in"


def static_metadata(bb: str | None, nodes: Sequence[int], phases: int) -> str:
    """Metadata of a rejected IO-Aware static job: ``[bb=...;]alloc=<ids>;io=<phases>``."""
    parts = [bb] if bb else []
    return ";".join(parts + [f"alloc={procset_of(list(nodes))}", f"{KEY_PHASES}={phases}"])


def subjob_metadata(static_id: str, step: str, last: bool) -> str:
    """Metadata of a sub-job: ``of=<static job id>;step=<tag>[;last]``."""
    return f"{KEY_OF}={static_id};{KEY_STEP}={step}" + (f";{FLAG_LAST}" if last else "")


def final_state(states: Sequence[str], last_sent: bool) -> str:
    """Final state of an IO-Aware job from its sub-jobs' final states (module doc): a
    walltime reached wins over any other failure; with no failure, the job succeeded iff its
    final phase was started (otherwise its walltime was used up before)."""
    if "COMPLETED_WALLTIME_REACHED" in states:
        return "COMPLETED_WALLTIME_REACHED"
    if any(s != "COMPLETED_SUCCESSFULLY" for s in states):
        return "COMPLETED_KILLED"
    return "COMPLETED_SUCCESSFULLY" if last_sent else "COMPLETED_WALLTIME_REACHED"


class IOAwareExecutor:
    """Runs IO-Aware static jobs as dynamic sub-jobs (module doc).

    Created by :meth:`create` at ``SIMULATION_BEGINS``; the adapter calls :meth:`launch`,
    :meth:`owns`, :meth:`on_job_completed` and :meth:`after_decisions`.
    """

    def __init__(self, sched: Driver, pfs: int | None, reason: str | None):
        self.sched = sched
        self.bs = sched.bs
        self.pfs = pfs
        self.disabled_reason = reason  # why IO-Aware execution is off (None: it is on)
        self.runs: dict[str, _Run] = {}  # static job id -> run
        self.owner: dict[str, _Run] = {}  # running sub-job id -> run
        self.registration_finished = False
        #: how many IO-Aware jobs ended in each final state (fold-back rule; the ended jobs
        #: themselves are not kept: memory follows the live jobs)
        self.finished: dict[str, int] = {}
        #: registered profile name -> live sub-jobs using it (pybatsim's ``Batsim.profiles``
        #: lets go of a profile with its last sub-job, as ``coburst sim`` and Batsim do)
        self._profile_users: dict[str, int] = {}
        self._warned = False
        self.nb_subjobs = 0

    # ------------------------------------------------------------------ set-up
    @classmethod
    def create(cls, sched: Driver, enabled: bool = True) -> "IOAwareExecutor":
        """The executor for this simulation (IO-Aware execution off when it cannot run)."""
        bs = sched.bs
        pfs, reason = None, None
        if not enabled:
            reason = "the scheduler option io_aware is false"
        elif not getattr(bs, "dynamic_job_registration_enabled", False):
            reason = "the simulator runs without --enable-dynamic-jobs"
        elif not getattr(bs, "allow_storage_sharing", True):
            reason = "storage sharing is disabled (flushes share the burst-buffer hosts)"
        else:
            pfs = find_pfs(bs.machines.get("storage") or [], sched.cluster)
            if pfs is None:
                reason = "the platform has no PFS storage host (named 'pfs', or the only storage host " \
                         "without bb_capacity)"
        return cls(sched, pfs, reason)

    @property
    def active(self) -> bool:
        return self.disabled_reason is None

    # ------------------------------------------------------------------ adapter hooks
    def owns(self, job_id: str) -> bool:
        """True for the id of a sub-job (its echo with ``--acknowledge-dynamic-jobs``)."""
        return job_id.split("!", 1)[0] == IO_WORKLOAD

    def launch(self, starts: Sequence[Start]) -> list[Start]:
        """Start the IO-Aware jobs among ``starts``; return the others (run statically)."""
        rest = []
        for st in starts:
            job = self.sched._jobs[st.job.id]
            io = (job.json_dict or {}).get("io")
            if io is None:
                rest.append(st)
                continue
            if not self.active:
                if not self._warned:
                    log.warning("IO-Aware jobs (%s, ...) run their static profile: %s", st.job.id,
                                self.disabled_reason)
                    self._warned = True
                rest.append(st)
                continue
            spec = parse_io(io)
            if isinstance(spec, str):
                log.warning("job %s runs its static profile: %s", st.job.id, spec)
                rest.append(st)
                continue
            if 0 <= st.job.walltime <= MIN_WALLTIME:
                log.warning("job %s runs its static profile: walltime %g s is too short for phases", st.job.id,
                            st.job.walltime)
                rest.append(st)
                continue
            self._start(st, job, spec)
        return rest

    def on_job_completed(self, job) -> bool:
        """A job ended: True if it was a sub-job (then handled here)."""
        run = self.owner.pop(job.id, None)
        if run is None:
            return self.owns(job.id)
        self._release_profile(job.profile)
        state = job.job_state.name if job.job_state is not None else "UNKNOWN"
        run.states.append(state)
        if state != "COMPLETED_SUCCESSFULLY":
            run.stopped = True
        run.blocking.discard(job.id)
        run.flushes.discard(job.id)
        if not run.blocking:
            self._advance(run)
        return True

    def after_decisions(self) -> None:
        """End of a scheduler call: tell Batsim no job will be registered any more once
        every static job has been submitted and has ended."""
        if self.registration_finished or not getattr(self.bs, "dynamic_job_registration_enabled", False) \
                or not getattr(self.bs, "no_more_static_jobs", False):
            return
        state = self.sched.state
        if state.queue or state.running or self.runs:
            return
        self.bs.notify_registration_finished()
        self.registration_finished = True

    # ------------------------------------------------------------------ phases
    def _start(self, st: Start, job, spec: IOSpec) -> None:
        sched, cluster = self.sched, self.sched.cluster
        now = float(self.bs.time())
        nodes = sorted(int(i) for i in st.alloc.compute_ids(cluster))
        bbmap = st.alloc.storage_map(cluster)
        sched._placements[st.job.id] = dict(bbmap)
        wl, _, name = job.id.partition("!")
        run = _Run(job=job, prefix=f"{wl}.{name}", spec=spec, nodes=nodes, bbmap=bbmap,
                   deadline=now + st.job.walltime,
                   metadata_bb=bb_metadata(st.alloc.bb_bytes(cluster)) if st.alloc.bb_use is not None else None)
        self.runs[job.id] = run
        # the metadata first: the rejection writes the row, and the job is gone afterwards
        self.bs.set_job_metadata(job.id, static_metadata(run.metadata_bb, nodes, spec.phases))
        self.bs.reject_jobs([job])
        self._advance(run)

    def _bb_step(self, run: _Run, step: str) -> bool:
        """Whether a BB phase runs for this job (BB placement and a non-zero amount)."""
        return bool(run.bbmap) and run.spec.bytes_of(step) > 0

    def _advance(self, run: _Run) -> None:
        """The blocking sub-jobs are all done: start the next phase, or end the job."""
        spec = run.spec
        while not run.blocking:
            if run.stopped or run.next_step == "end":
                if not run.flushes:
                    self._finish(run)
                return
            step = run.next_step
            if step == "stage_in":
                run.next_step = "compute"
                if self._bb_step(run, "stage_in"):
                    self._staging(run, "stage_in", "in")
            elif step == "compute":
                if run.phase > run.done:  # the compute phase just finished
                    run.done = run.phase
                    if run.done == spec.phases:
                        run.next_step = "stage_out"
                    elif run.done <= spec.checkpoints and self._bb_step(run, "checkpoint"):
                        run.next_step = "checkpoint"
                    continue
                if self._out_of_time(run):
                    continue
                run.phase += 1
                pname = self._profile(run, f"c{run.phase}", spec.profiles["compute"])
                last = run.phase == spec.phases and not self._bb_step(run, "stage_out")
                self._submit(run, f"c{run.phase}", pname, len(run.nodes), procset_of(run.nodes), None, blocking=True,
                             last=last)
            elif step == "checkpoint":
                if self._out_of_time(run):
                    continue
                k = run.done
                pname = self._profile(run, f"ck{k}", spec.profiles["checkpoint"])
                for c in run.nodes:
                    self._submit(run, f"ck{k}.{c}", pname, 1, ProcSet(c), self._smap(run, c), blocking=True)
                run.next_step = "flush"
            elif step == "flush":
                # checkpoint k is in the BB: flush it while compute k+1 runs
                k = run.done
                run.next_step = "compute"
                if self._bb_step(run, "flush") and not self._out_of_time(run):
                    pname = self._profile(run, f"fl{k}", spec.profiles["flush"])
                    for c in run.nodes:
                        self._submit(run, f"fl{k}.{c}", pname, 2, procset_of([self.pfs, run.bbmap[c]]),
                                     self._smap(run, c), blocking=False)
            elif step == "stage_out":
                run.next_step = "end"
                if self._bb_step(run, "stage_out"):
                    self._staging(run, "stage_out", "out", last=True)

    def _out_of_time(self, run: _Run) -> bool:
        """No walltime left for another phase: the job ends as walltime reached."""
        if run.deadline - float(self.bs.time()) <= MIN_WALLTIME:
            run.stopped = True
            return True
        return False

    def _staging(self, run: _Run, step: str, tag: str, last: bool = False) -> None:
        if self._out_of_time(run):
            return
        pname = self._profile(run, tag, run.spec.profiles[step])
        for c in run.nodes:
            self._submit(run, f"{tag}.{c}", pname, 2, procset_of([self.pfs, run.bbmap[c]]), self._smap(run, c),
                         blocking=True, last=last)

    def _smap(self, run: _Run, c: int) -> dict[str, int]:
        return {"pfs": int(self.pfs), "bb": int(run.bbmap[c])}

    def _profile(self, run: _Run, tag: str, profile: dict) -> str:
        name = f"{run.prefix}.{tag}"
        self.bs.register_profiles(IO_WORKLOAD, {name: dict(profile)})
        return name

    def _submit(self, run: _Run, tag: str, profile: str, res: int, alloc: ProcSet,
                smap: dict[str, int] | None, *, blocking: bool, last: bool = False) -> None:
        jid = f"{IO_WORKLOAD}!{run.prefix}.{tag}"
        left = run.deadline - float(self.bs.time())
        walltime = left if math.isfinite(left) else -1
        job = self.bs.register_job(jid, res, walltime, profile)
        job.allocation = alloc
        if smap is not None:
            job.storage_mapping = smap
        self.bs.execute_job(job)
        self.bs.set_job_metadata(jid, subjob_metadata(run.job.id, tag.split(".", 1)[0], last))
        run.last_sent = run.last_sent or last
        self.owner[jid] = run
        self._profile_users[profile] = self._profile_users.get(profile, 0) + 1
        (run.blocking if blocking else run.flushes).add(jid)
        self.nb_subjobs += 1

    def _release_profile(self, name: str) -> None:
        """A sub-job using profile ``name`` ended: the last one lets pybatsim's copy go
        (every sub-job of the profile was registered in the same call, so none comes later)."""
        n = self._profile_users.get(name, 0) - 1
        if n > 0:
            self._profile_users[name] = n
            return
        self._profile_users.pop(name, None)
        profiles = getattr(self.bs, "profiles", None)
        if isinstance(profiles, dict) and isinstance(profiles.get(IO_WORKLOAD), dict):
            profiles[IO_WORKLOAD].pop(name, None)

    def _finish(self, run: _Run) -> None:
        """Every sub-job of ``run`` has ended: release its resources in the policy's state
        (nothing is sent: Batsim's row of the static job was written at its rejection)."""
        job = run.job
        state = final_state(run.states, run.last_sent)
        self.finished[state] = self.finished.get(state, 0) + 1
        log.debug("IO-Aware job %s ended: %s, %d/%d phases", job.id, state, run.done, run.spec.phases)
        del self.runs[job.id]
        self.sched._ended_job(job.id)


def find_pfs(storage: Sequence[Mapping[str, Any]], cluster) -> int | None:
    """Resource id of the PFS: the storage host named ``pfs``, else the only storage host
    that is not a BB node."""
    bb_ids = {int(i) for i in cluster.bb_ids.tolist()}
    others = []
    for res in storage:
        rid = int(res["id"])
        if str(res.get("name")) == str((res.get("zone_properties") or {}).get("pfs", "pfs")):
            return rid
        if rid not in bb_ids:
            others.append(rid)
    return others[0] if len(others) == 1 else None
