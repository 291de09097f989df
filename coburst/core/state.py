"""The explicit scheduler state a policy sees.

:class:`SchedulerState` holds the date, the waiting queue (submission order), the running
jobs (allocation, BB placement, start, expected end) and the cluster, and builds the
availability profile of the running jobs.  It is changed only by events
(:meth:`~SchedulerState.submit`, :meth:`~SchedulerState.finish`) and by applying decisions
(:meth:`~SchedulerState.apply`) -- the adapter and the reference replay both drive it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from coburst.core.cluster import Cluster
from coburst.core.job import Job
from coburst.core.placement import Allocation
from coburst.core.profile import Profile

if TYPE_CHECKING:
    from coburst.core.decisions import Decisions

__all__ = ["Job", "RunningJob", "SchedulerState"]


@dataclass(slots=True)
class RunningJob:
    job: Job
    start: float
    alloc: Allocation

    @property
    def expected_end(self) -> float:
        return self.start + self.job.walltime


class SchedulerState:
    """Date, queue, running jobs and cluster (module doc)."""

    def __init__(self, cluster: Cluster, now: float = 0.0):
        self.cluster = cluster
        self.now = float(now)
        self._queue: dict[str, Job] = {}  # insertion (= submission) order
        self.running: dict[str, RunningJob] = {}
        self._profile: Profile | None = None
        self._profile_now: float | None = None

    # ------------------------------------------------------------------ views
    @property
    def queue(self) -> list[Job]:
        """Waiting jobs in submission order."""
        return list(self._queue.values())

    def __contains__(self, job_id: str) -> bool:
        return job_id in self._queue or job_id in self.running

    def queued(self, job_id: str) -> Job | None:
        return self._queue.get(job_id)

    def profile(self) -> Profile:
        """A fresh profile of the running jobs (the caller may modify it)."""
        if self._profile is None or self._profile_now != self.now:
            self._profile = Profile.from_running(
                self.cluster, self.now, ((r.expected_end, r.alloc) for r in self.running.values()))
            self._profile_now = self.now
        return self._profile.copy()

    # ------------------------------------------------------------------ events
    def advance(self, now: float) -> None:
        if now < self.now:
            raise ValueError(f"time goes backwards: {now} < {self.now}")
        self.now = float(now)

    def submit(self, job: Job) -> None:
        if job.id in self:
            raise ValueError(f"job {job.id!r} submitted twice")
        self._queue[job.id] = job

    def finish(self, job_id: str) -> RunningJob:
        """A running job ended (completed or killed): release its resources."""
        run = self.running.pop(job_id)
        self._profile = None
        return run

    def drop(self, job_id: str) -> Job:
        """Remove a waiting job (rejected)."""
        return self._queue.pop(job_id)

    def apply(self, decisions: "Decisions") -> None:
        """Record started jobs as running and drop rejected ones (validated)."""
        for rej in decisions.rejects:
            if rej.job.id not in self._queue:
                raise ValueError(f"rejecting job {rej.job.id!r} which is not waiting")
            del self._queue[rej.job.id]
        if decisions.starts:
            for st in decisions.starts:
                if st.job.id not in self._queue:
                    raise ValueError(f"starting job {st.job.id!r} which is not waiting")
            # validates the whole batch against running jobs and each other
            prof = self.profile()
            for st in decisions.starts:
                prof.occupy(self.now, self.now + st.job.walltime, st.alloc)
            for st in decisions.starts:
                del self._queue[st.job.id]
                self.running[st.job.id] = RunningJob(st.job, self.now, st.alloc)
            self._profile = None

    def __repr__(self) -> str:
        return f"SchedulerState(now={self.now}, queue={len(self._queue)}, running={len(self.running)})"
