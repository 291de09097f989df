"""Batsim-portable resizes: kill a running job, run what is left of it as a new job.

Batsim 4.2.1 knows only rigid jobs.  A pybatsim scheduler can still resize one the way the
malleability literature emulates it on Batsim: kill the job, read how far it got (the
``job_progress`` of ``JOB_KILLED``), and register what is left as a dynamic job
(``--enable-dynamic-jobs``) on the new allocation.  :class:`Resubmitter` does that
bookkeeping for any pybatsim scheduler, on the real Batsim and on coburst alike (the same
messages, so the same outputs: ``tests/test_elastic_resubmit.py``)::

    from coburst.adapter.resubmit import Resubmitter

    class MyScheduler(BatsimScheduler):
        def onSimulationBegins(self):
            self.resizer = Resubmitter(self.bs)
        def onJobsKilled(self, jobs):
            self.resizer.killed(jobs)        # remainders registered and started
        ...
            self.resizer.resize(job, ProcSet((0, 7)))   # at any decision point

Which jobs it resizes: jobs whose profile is a ``delay`` (the workload's own jobs, and the
remainders it registers).  The work left is the unfinished fraction of that delay; on ``n``
nodes it lasts ``seconds_left x t(n) / t(old)``, where ``t`` is the job's elastic model
(:mod:`coburst.models.elastic`: the time of all its iterations at that size) when the job
carries one, else the job's ``speedup`` callable (default: linear, ``old / n``), plus the
model's ``on_reconfiguration`` cost.  Remainders are jobs ``resized!<job>-r<k>`` (workload
``resized``) with a delay profile of the same name.  Batsim waits for dynamic jobs until the
scheduler says no more will come: call :meth:`finish` (it sends ``registration_finished``)
once no resize can follow, e.g. when every static job was submitted and none runs.

How this differs from coburst's native elastic mode (:mod:`coburst.simulator.elastic`): the
native mode resizes at the job's scheduling points (the end of an iteration), keeps its id
and its work exact, and logs each reconfiguration; here a resize takes effect at once, the
partial iteration's work is kept as a fraction of the delay (``job_progress`` rounded to
1e-6 by Batsim's messages), each resize ends one job (``COMPLETED_KILLED`` in
``_jobs.csv``) and starts another, and the kill and registration cost the messages' delays
of Batsim's protocol.
"""

from __future__ import annotations

from typing import Any, Callable

from procset import ProcSet

__all__ = ["Resubmitter"]

#: the workload remainders are registered in
WORKLOAD = "resized"


def linear(old: int, new: int) -> float:
    """A job's time on ``new`` nodes over its time on ``old`` (perfect speed-up)."""
    return old / new


class Resubmitter:
    """Kill-and-resubmit resizes for a pybatsim scheduler (see the module's text).

    ``bs``: the scheduler's :class:`batsim.batsim.Batsim`; ``speedup(old, new)``: a job's time
    on ``new`` nodes over its time on ``old`` for jobs without an elastic model; ``speed``: a
    node's flop/s, for elastic models whose tasks count flops."""

    def __init__(self, bs: Any, speedup: Callable[[int, int], float] = linear, speed: float = 1e9):
        self.bs = bs
        self.speedup = speedup
        self.speed = float(speed)
        self.pending: dict[str, ProcSet] = {}  # job id -> the allocation it resizes to
        self.origin: dict[str, Any] = {}  # job id (a remainder's or the job's own) -> the workload's job
        self.count: dict[str, int] = {}  # workload job id -> remainders made
        self.registered = False  # a profile was registered in WORKLOAD
        self.finished = False

    # ------------------------------------------------------------------ queries
    def original(self, job: Any) -> Any:
        """The workload's job ``job`` is (a remainder of)."""
        return self.origin.get(job.id, job)

    def resizing(self, job: Any) -> bool:
        """A resize of ``job`` was asked and its kill not yet reported."""
        return job.id in self.pending

    def is_remainder(self, job: Any) -> bool:
        return job.id in self.origin and self.origin[job.id] is not job

    # ------------------------------------------------------------------ decisions
    def resize(self, job: Any, alloc: ProcSet) -> None:
        """Kill the running ``job`` now and run what is left of it on ``alloc`` (once its kill is
        reported, from :meth:`killed`)."""
        if self.finished:
            raise ValueError("Resubmitter.resize after finish(): Batsim takes no more dynamic jobs")
        if job.id in self.pending:
            raise ValueError(f"job {job.id} is already being resized")
        profile = job.profile_dict
        if not isinstance(profile, dict) or profile.get("type") != "delay":
            raise ValueError(f"job {job.id}: only jobs of a delay profile can be resized by kill and resubmit "
                             f"(its profile is {profile.get('type') if isinstance(profile, dict) else profile!r}); "
                             "run Batsim with --forward-profiles-on-submission so that pybatsim knows it")
        alloc = ProcSet(alloc)
        if len(alloc) < 1:
            raise ValueError(f"job {job.id}: an empty allocation")
        self.pending[job.id] = alloc
        self.bs.kill_jobs([job])

    def killed(self, jobs: list) -> list:
        """From ``onJobsKilled``: each job killed for a resize is replaced by its remainder,
        registered and started on the allocation asked; the remainders, in ``jobs``' order
        (jobs killed for another reason are left to the caller)."""
        made = []
        for job in jobs:
            alloc = self.pending.pop(job.id, None)
            if alloc is None:
                continue
            made.append(self._resubmit(job, alloc))
        if made:
            self.bs.execute_jobs(made)
        return made

    def forget(self, job: Any) -> ProcSet | None:
        """``job`` completed before the kill of its resize reached it (Batsim then reports no
        kill): the resize is dropped; the allocation it was to have, or None."""
        return self.pending.pop(job.id, None)

    def finish(self) -> None:
        """Tell Batsim no more dynamic job will come (``registration_finished``; once)."""
        if not self.finished:
            self.finished = True
            self.bs.notify_registration_finished()

    # ------------------------------------------------------------------ the remainder
    def _resubmit(self, job: Any, alloc: ProcSet) -> Any:
        origin = self.original(job)
        old, new = len(job.allocation), len(alloc)
        done = _fraction_done(job.progress)
        left = float(job.profile_dict["delay"]) * (1.0 - done)
        model = self._model(origin)
        seconds = left * self._ratio(model, old, new) + self._cost(model, old, new)
        k = self.count.get(origin.id, 0) + 1
        self.count[origin.id] = k
        name = f"{origin.id.split('!', 1)[-1]}-r{k}"
        self.bs.register_profiles(WORKLOAD, {name: {"type": "delay", "delay": seconds}})
        remainder = self.bs.register_job(f"{WORKLOAD}!{name}", new, -1, name)
        remainder.allocation = alloc
        self.origin[remainder.id] = origin
        return remainder

    def _model(self, origin: Any):
        from coburst.models.elastic import parse_elastic

        spec = getattr(origin, "json_dict", None) or {}
        profile = getattr(origin, "profile_dict", None)
        elastic = spec.get("elastic")
        if not isinstance(elastic, dict) or ("application" not in elastic
                                             and not (isinstance(profile, dict) and "elastic" in profile)):
            return None  # (no application model: the speed-up function)
        return parse_elastic(spec, profile, "workload", f"job {origin.id}")

    def _ratio(self, model: Any, old: int, new: int) -> float:
        if model is None:
            return self.speedup(old, new)

        def total(n: int) -> float:
            return sum(model.iteration_time(p, i, n, self.speed) for p, count in enumerate(model.iterations)
                       for i in range(count))
        return total(new) / total(old)

    def _cost(self, model: Any, old: int, new: int) -> float:
        if model is None:
            return 0.0
        cost = model.cost(model.app.on_reconfiguration, new, old, self.speed)
        if new > old:
            cost += model.cost(model.app.on_expansion, new, old, self.speed)
        return cost


def _fraction_done(progress: Any) -> float:
    """The fraction of a delay job done, from its ``job_progress`` (a leaf: ``progress``)."""
    if isinstance(progress, dict) and isinstance(progress.get("progress"), (int, float)):
        return min(max(float(progress["progress"]), 0.0), 1.0)
    return 0.0
