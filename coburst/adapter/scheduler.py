"""pybatsim adapter: a ``BatsimScheduler`` that runs a coburst policy.

The adapter is the only place (with the simulator) that speaks the Batsim protocol.  It

* builds the :class:`~coburst.core.cluster.Cluster` at ``SIMULATION_BEGINS`` from pybatsim's
  ``bs.machines``: compute resources are the compute nodes; storage resources with a
  ``bb_capacity`` property are the BB nodes; the PFS (storage without capacity) is ignored;
* records events in a :class:`~coburst.core.state.SchedulerState`: submissions (a job that can
  never fit -- wider than the platform, per-node BB request larger than any BB node, or not
  packable -- is rejected at once), completions and kills (resources released);
* calls the policy once per Batsim message, after all its events (``onNoMoreEvents``, like
  batsched's ``make_decisions``), and applies the returned decisions with
  ``bs.execute_jobs`` (``job.allocation`` = ProcSet of compute resource ids),
  ``bs.reject_jobs`` and ``bs.wake_me_up_at`` (only dates in the future, once each).

BB placements stay on the scheduler side (as in the thesis' Alloc-Only runs):
:meth:`CoburstScheduler.placement` gives compute id -> BB id of a running job (of any started
job when ``placement_history`` is a dict: ended jobs' placements are kept there).

Memory stays flat on long logs: an ended or rejected job is forgotten by the adapter, the
scheduling core and pybatsim's own ``Batsim.jobs`` dict (the adapter never reads it again and
never sends KILL_JOB, so no later event of pybatsim looks the job up).  Batsim
only learns them as job metadata, for the record: every started job with a BB request gets
a ``SET_JOB_METADATA`` (sent with its ``EXECUTE_JOB``) ``bb=<BB id>:<bytes>/<BB id>:<bytes>``
(the bytes the job takes on each BB resource id, ascending ids; no commas, no double quotes),
which lands in the ``metadata`` column of ``_jobs.csv``.  Jobs without BB request get none.
The same file runs unchanged on the real ``batsim`` 4.2 binary and on ``coburst sim``.

Options (pybatsim ``-o '<json>'``):

``policy``
    policy label or family (``"backfill-sjf-1"``, ``"backfill-sjf"``, ``"fcfs"``, ``"bb:fcfs"``, a
    burst-buffer plugin's name...), looked up in :mod:`coburst.registry`;
``bb_capacity``
    capacity in bytes given to storage hosts without a ``bb_capacity`` property, except the
    one named ``pfs`` (the thesis' ``-r node_0,node_9,...:storage`` style);
``dragonfly``
    SimGrid ``topo_parameters`` (``"3,1;4,1;3,1;3"``) to derive group/chassis/router from
    host numbers when the platform has no such properties;
``trace``
    path of a JSONL decision trace written by the scheduler process (opt-in, for tests and
    studies): one line per policy call that starts, rejects or reserves something,
    ``{"now": t, "start": [job ids], "reject": [job ids], "reserve": [{"job": id,
    "start": t, "nodes": "<compute ids>", "bb": "<bb metadata>"}]}`` (job ids as pybatsim's,
    ``"w0!3"``; dates are the scheduler's decision dates);
``decision_log``
    path of a CSV decision-time profile written by the scheduler process: one row per
    policy call (date, queue, running, policy, wall_s, tried), see
    :mod:`coburst.adapter.profiler`;
``io_aware``
    ``true`` (default) or ``false``: run jobs carrying an ``io`` field through their phases
    as dynamic sub-jobs when Batsim runs with ``--enable-dynamic-jobs``
    (:mod:`coburst.adapter.io_aware`); with ``false``, or without dynamic jobs, they run
    their static profile;
any other key
    a parameter of the policy (``"depth": 1``); unknown keys are errors.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any, ClassVar, Mapping, Sequence

from batsim.batsim import BatsimScheduler

from coburst import registry as policy_registry
from coburst.core.cluster import Cluster
from coburst.core.decisions import Decisions, Start
from coburst.adapter.bb import bb_metadata, bb_request
from coburst.core.state import Job, SchedulerState
from coburst.errors import InputError
from coburst.policies.base import Policy

__all__ = ["CoburstScheduler", "parse_options", "bb_metadata", "ADAPTER_OPTIONS"]

log = logging.getLogger("coburst.adapter")

ADAPTER_OPTIONS = ("policy", "bb_capacity", "dragonfly", "trace", "io_aware", "decision_log")
_SOURCE = "scheduler options"


def parse_options(
    options: Mapping[str, Any] | None,
    *,
    default_policy: str | None = None,
    fixed_policy: str | None = None,
    registry: Any = None,
) -> tuple[Policy, dict[str, Any]]:
    """Validate pybatsim options; return ``(policy, adapter settings)``.

    ``registry`` is where policy names are looked up (an object with ``resolve(name)`` and
    ``get(name, **params)``): the burst-buffer family's view of :mod:`coburst.registry` by
    default (its names, ``bb:NAME``, and the plugins of the family), the node-sharing
    family's for the node-sharing adapter.

    Raises :class:`~coburst.errors.InputError` naming the faulty option.
    """
    if registry is None:
        registry = policy_registry.scope("bb")
    options = dict(options or {})
    if not all(isinstance(k, str) for k in options):
        raise InputError(_SOURCE, None, "option names must be strings")
    settings: dict[str, Any] = {"bb_capacity": None, "dragonfly": None, "trace": None}

    cap = options.pop("bb_capacity", None)
    if cap is not None:
        if isinstance(cap, bool) or not isinstance(cap, (int, float)) or cap <= 0 or cap != int(cap):
            raise InputError(_SOURCE, "bb_capacity", f"must be a positive integer number of bytes, got {cap!r}")
        settings["bb_capacity"] = int(cap)
    topo = options.pop("dragonfly", None)
    if topo is not None:
        from coburst.core.cluster import parse_dragonfly
        try:
            settings["dragonfly"] = parse_dragonfly(topo)
        except InputError as err:
            raise InputError(_SOURCE, "dragonfly", err.problem) from None
    trace = options.pop("trace", None)
    if trace is not None:
        if not isinstance(trace, str) or not trace:
            raise InputError(_SOURCE, "trace", f"must be a file path, got {trace!r}")
        settings["trace"] = trace
    dlog = options.pop("decision_log", None)  # absent from settings when not given
    if dlog is not None:
        if not isinstance(dlog, str) or not dlog:
            raise InputError(_SOURCE, "decision_log", f"must be a file path, got {dlog!r}")
        settings["decision_log"] = dlog
    if "io_aware" in options:  # absent from settings when not given (default true)
        io_aware = options.pop("io_aware")
        if not isinstance(io_aware, bool):
            raise InputError(_SOURCE, "io_aware", f"must be true or false, got {io_aware!r}")
        settings["io_aware"] = io_aware

    if fixed_policy is not None:
        if options:
            name = sorted(options)[0]
            raise InputError(_SOURCE, name, f"unknown option: this scheduler always runs {fixed_policy!r} "
                             f"(options: bb_capacity, dragonfly, trace, io_aware, decision_log); use schedulers/coburstBackfill.py "
                             f"to choose a policy")
        return registry.get(fixed_policy), settings

    name = options.pop("policy", default_policy)
    if name is None:
        raise InputError(_SOURCE, "policy", 'missing (e.g. "backfill-sjf-1")')
    try:
        cls, implied = registry.resolve(name)
    except InputError as err:
        raise InputError(_SOURCE, "policy", err.problem) from None
    known = [p.name for p in cls.params]
    for key in options:
        if key not in known:
            raise InputError(_SOURCE, key, f"unknown option (adapter options: {', '.join(ADAPTER_OPTIONS)}; "
                             f"parameters of {name!r}: {', '.join(known) or 'none'})")
    try:
        policy = registry.get(name, **options)
    except InputError as err:
        raise InputError(_SOURCE, err.where or "policy", err.problem) from None
    return policy, settings


def workload_order_key(job_id: str) -> tuple:
    """Sort key giving the workload's order of jobs submitted at the same date.

    ``"w0!10"`` -> by workload name (Batsim's order), then integer ids by value (``"2"`` before
    ``"10"``: the order in which coburst's generators, SWF logs and ELiSE number and list their
    jobs), then other ids as strings (Batsim's order, after the integer ones)."""
    workload, _, local = job_id.rpartition("!")
    if local.isdigit() or (local[:1] == "-" and local[1:].isdigit()):
        return (workload, 0, int(local), local)
    return (workload, 1, 0, local)


class CoburstScheduler(BatsimScheduler):
    """Base pybatsim scheduler running a coburst policy (module doc).

    Subclasses (the entry files in ``schedulers/``) set ``default_policy`` (used when the
    options name none) or ``fixed_policy`` (options cannot change it).
    """

    default_policy: ClassVar[str | None] = None
    fixed_policy: ClassVar[str | None] = None
    #: where policy names are looked up (parse_options): the family's view of coburst.registry
    registry: ClassVar[Any] = policy_registry.scope("bb")
    #: entry files of one policy of a family registry set this: the policy's parameters stay
    #: options, ``policy`` may not be given
    only_policy: ClassVar[str | None] = None

    @classmethod
    def check_options(cls, options: Mapping[str, Any] | None) -> tuple[Policy, dict[str, Any]]:
        """``(policy, adapter settings)`` from pybatsim options, by this entry file's rules; an
        InputError names a bad option.  ``coburst run`` calls it before anything starts."""
        options = dict(options or {})
        if cls.only_policy is not None:
            if "policy" in options:
                raise InputError(_SOURCE, "policy", f"this scheduler always runs {cls.only_policy!r}")
            options["policy"] = cls.only_policy
        return parse_options(options, default_policy=cls.default_policy, fixed_policy=cls.fixed_policy,
                             registry=cls.registry)

    def __init__(self, options: Mapping[str, Any] | None = None):
        options = dict(options or {})
        super().__init__(options)
        try:
            self.policy, self.settings = self.check_options(options)
        except InputError as err:
            # bad input: a message, no traceback (pybatsim instantiates us from its CLI)
            print(f"coburst: {err}", file=sys.stderr)
            raise SystemExit(2) from None
        self.cluster: Cluster | None = None
        self.state: SchedulerState | None = None
        self._jobs: dict[str, Any] = {}          # job id -> pybatsim Job
        self._placements: dict[str, dict[int, int]] = {}  # running jobs
        #: a dict to keep the placements of ended jobs in (tests, studies); None: forgotten
        self.placement_history: dict[str, dict[int, int]] | None = None
        self._wakeups: set[float] = set()
        self._incoming: list[Any] = []           # pybatsim jobs submitted in this message
        self._released: list[Job] = []
        self._ended: list[Job] = []
        self.nb_decisions = 0
        self.io = None  # IOAwareExecutor, from SIMULATION_BEGINS on (coburst.adapter.io_aware)
        self._trace = None
        if self.settings["trace"] is not None:
            self._trace = open(self.settings["trace"], "w", encoding="utf-8")  # noqa: SIM115 - closed at the end
        self._profiler = None
        if self.settings.get("decision_log") is not None:
            from coburst.adapter.profiler import DecisionProfiler
            self._profiler = DecisionProfiler(self.settings["decision_log"])

    # ------------------------------------------------------------------ helpers
    def placement(self, job_id: str) -> dict[int, int]:
        """compute resource id -> BB resource id of a running job (empty without BB; ended
        jobs: see ``placement_history``)."""
        place = self._placements.get(job_id)
        if place is None and self.placement_history is not None:
            place = self.placement_history.get(job_id)
        return dict(place or {})

    def _forget(self, job_id: str) -> None:
        """An ended or rejected job: pybatsim's ``Batsim.jobs`` and the placement let go."""
        jobs = getattr(self.bs, "jobs", None)
        if isinstance(jobs, dict):
            jobs.pop(job_id, None)
        place = self._placements.pop(job_id, None)
        if place is not None and self.placement_history is not None:
            self.placement_history[job_id] = place

    def _now(self) -> float:
        return float(self.bs.time())

    def resources(self) -> tuple[list, list]:
        """Batsim's compute and storage resource descriptions (``id``, ``name``, ``properties``)."""
        machines = getattr(self.bs, "machines", None) or {}
        compute = machines.get("compute")
        if compute is None:
            compute = list(self.bs.compute_resources.values())
        storage = machines.get("storage")
        if storage is None:
            storage = list(getattr(self.bs, "storage_resources", {}).values())
        return compute, storage

    # ------------------------------------------------------------------ events
    def onSimulationBegins(self):
        compute, storage = self.resources()
        self.cluster = Cluster.from_resources(
            compute, storage,
            default_bb_capacity=self.settings["bb_capacity"],
            dragonfly=self.settings["dragonfly"])
        self.state = SchedulerState(self.cluster, self._now())
        from coburst.adapter.io_aware import IOAwareExecutor
        self.io = IOAwareExecutor.create(self, self.settings.get("io_aware", True))
        log.info("coburst %s on %r", self.policy.name, self.cluster)

    def onJobSubmission(self, job):
        """Held until the message's last event: the submissions of one date then enter the
        queue in the workload's order (:meth:`admit_submissions`), not Batsim's."""
        self._incoming.append(job)

    def admit_submissions(self) -> None:
        """Admit the jobs submitted in this message in the workload's order
        (:func:`workload_order_key`).  Batsim 4.2.1 submits the jobs of one date ordered by their
        id as a string (``job_comparator_subtime_number``, src/jobs.cpp: "0", "1", "10", "100",
        "11", ...), and ``coburst sim`` does the same; a queue in arrival order would rank them
        so.  Every family's queue (and submission rank ``seq``) follows this order."""
        incoming, self._incoming = self._incoming, []
        if len(incoming) > 1:
            incoming.sort(key=lambda j: (float(j.submit_time), workload_order_key(j.id)))
        for job in incoming:
            self.admit(job)

    def admit(self, job):
        """One submitted job enters the scheduler's state (or is rejected at once)."""
        if self.io is not None and self.io.owns(job.id):
            return  # echo of a dynamic sub-job (--acknowledge-dynamic-jobs)
        state = self.state
        state.advance(self._now())
        bb = bb_request(job.json_dict or {})
        if bb is None:
            reason = f"malformed bb field {job.json_dict.get('bb')!r}"
        else:
            reason = self.cluster.never_fits(int(job.requested_resources), bb)
        if reason is not None:
            log.warning("rejecting job %s: %s", job.id, reason)
            self.bs.reject_jobs([job])
            self._forget(job.id)
            return
        cjob = Job(id=job.id, subtime=float(job.submit_time), res=int(job.requested_resources),
                   walltime=float(job.requested_time), bb=bb, profile=job.profile, extra=job.json_dict)
        state.submit(cjob)
        self._jobs[job.id] = job
        self._released.append(cjob)

    def _ended_job(self, job_id: str) -> None:
        if self.state is not None and job_id in self.state.running:
            self.state.advance(self._now())
            run = self.state.finish(job_id)
            self._jobs.pop(job_id, None)
            self._ended.append(run.job)
        self._forget(job_id)

    def onJobCompletion(self, job):
        if self.io is not None and self.io.on_job_completed(job):
            self._forget(job.id)  # a sub-job of an IO-Aware job
            return
        self._ended_job(job.id)

    def onJobsKilled(self, jobs):
        for job in jobs:
            self._ended_job(job.id)

    def onRequestedCall(self):
        now = self._now()
        self._wakeups = {t for t in self._wakeups if t > now}

    def onSimulationEnds(self):
        log.info("coburst %s: %d decisions", self.policy.name, self.nb_decisions)
        if self._trace is not None:
            self._trace.close()
            self._trace = None
        if self._profiler is not None:
            self._profiler.close()

    def onNoMoreEvents(self):
        state = self.state
        if state is None or not getattr(self.bs, "running_simulation", True):
            return  # before SIMULATION_BEGINS or after SIMULATION_ENDS: no reply events
        if self._incoming:
            self.admit_submissions()
        state.advance(self._now())
        if self._ended:
            ended, self._ended = self._ended, []
            self.policy.on_job_end(state, ended)
        if self._released:
            released, self._released = self._released, []
            self.policy.on_job_release(state, released)
        if self._profiler is None:
            decisions = self.policy.make_decisions(state)
        else:
            queue, running = len(state._queue), len(state.running)
            t0 = time.perf_counter()
            decisions = self.policy.make_decisions(state)
            wall = time.perf_counter() - t0
            self._profiler.record(state.now, queue, running, self.policy.name, wall,
                                  getattr(self.policy, "last_tried", None))
        self.nb_decisions += 1
        self.apply(decisions)
        if self.io is not None:
            self.io.after_decisions()

    # ------------------------------------------------------------------ decisions
    def apply(self, decisions: Decisions) -> None:
        """Apply ``decisions`` to the state and send them to Batsim."""
        state = self.state
        state.apply(decisions)
        if self._trace is not None and (decisions.starts or decisions.rejects or decisions.reservations):
            self._write_trace(decisions)
        if decisions.rejects:
            jobs = [self._jobs.pop(r.job.id) for r in decisions.rejects]
            self.bs.reject_jobs(jobs)
            for job in jobs:
                self._forget(job.id)
        if decisions.starts:
            self.launch(decisions.starts)
        now = state.now
        for date in sorted(set(decisions.wakeups)):
            if date > now and date not in self._wakeups:
                self._wakeups.add(date)
                self.bs.wake_me_up_at(date)

    def _write_trace(self, decisions: Decisions) -> None:
        cluster = self.cluster
        line = {"now": decisions.now, "start": decisions.started_ids, "reject": [r.job.id for r in decisions.rejects],
                "reserve": [{"job": r.job.id, "start": r.start, "nodes": str(r.alloc.compute_ids(cluster)),
                             "bb": bb_metadata(r.alloc.bb_bytes(cluster))} for r in decisions.reservations]}
        self._trace.write(json.dumps(line, separators=(",", ":")) + "\n")
        self._trace.flush()

    def launch(self, starts: Sequence[Start]) -> None:
        """Send the started jobs to Batsim (override for dynamic-job execution models),
        with their BB placement as job metadata (module doc)."""
        if self.io is not None:
            starts = self.io.launch(starts)  # IO-Aware jobs run as dynamic sub-jobs
        jobs = []
        for st in starts:
            job = self._jobs[st.job.id]
            job.allocation = st.alloc.compute_ids(self.cluster)
            self._placements[st.job.id] = st.alloc.storage_map(self.cluster)
            jobs.append(job)
        self.bs.execute_jobs(jobs)
        for st in starts:
            if st.alloc.bb_use is not None:
                self.bs.set_job_metadata(st.job.id, bb_metadata(st.alloc.bb_bytes(self.cluster)))
