"""What a policy decides in one call: the only way decisions leave a policy.

A policy returns a :class:`Decisions`; only the pybatsim adapter (or the reference replay)
applies it.  Reservations are recorded for inspection (tests, traces); they are not sent
to Batsim -- like batsched, a policy recomputes its plan at every call.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from coburst.core.placement import Allocation
from coburst.core.job import Job

__all__ = ["Decisions", "Start", "Reject", "Reservation"]


@dataclass(frozen=True, slots=True)
class Start:
    """Start ``job`` now on ``alloc`` (compute nodes and BB placement)."""

    job: Job
    alloc: Allocation


@dataclass(frozen=True, slots=True)
class Reject:
    job: Job
    reason: str


@dataclass(frozen=True, slots=True)
class Reservation:
    """Planned start of a queued job (informational)."""

    job: Job
    start: float
    alloc: Allocation


@dataclass(slots=True)
class Decisions:
    """Decisions taken at date ``now``."""

    now: float
    starts: list[Start] = field(default_factory=list)
    rejects: list[Reject] = field(default_factory=list)
    wakeups: list[float] = field(default_factory=list)
    reservations: list[Reservation] = field(default_factory=list)

    def start(self, job: Job, alloc: Allocation) -> None:
        if len(alloc.nodes) != job.res:
            raise ValueError(f"job {job.id}: allocation of {len(alloc.nodes)} nodes for res={job.res}")
        if job.bb and (alloc.bb != job.bb or len(alloc.bb_nodes) != job.res):
            raise ValueError(f"job {job.id}: started without its burst-buffer placement")
        self.starts.append(Start(job, alloc))

    def reject(self, job: Job, reason: str) -> None:
        self.rejects.append(Reject(job, reason))

    def call_me_later(self, date: float) -> None:
        """Ask to be called at ``date`` (> now)."""
        if not date > self.now:
            raise ValueError(f"call-me-later at {date} is not after now ({self.now})")
        self.wakeups.append(float(date))

    def reserve(self, job: Job, start: float, alloc: Allocation) -> None:
        self.reservations.append(Reservation(job, float(start), alloc))

    @property
    def started_ids(self) -> list[str]:
        return [s.job.id for s in self.starts]

    def __bool__(self) -> bool:
        return bool(self.starts or self.rejects or self.wakeups)

    def __repr__(self) -> str:
        return (f"Decisions(now={self.now}, start={self.started_ids}, "
                f"reject={[r.job.id for r in self.rejects]}, wakeups={self.wakeups})")
