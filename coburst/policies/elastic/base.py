"""The interface of policies for jobs that change size (family ``elastic``).

A policy sees an :class:`ElasticState` at every scheduler message of an elastic run
(:func:`coburst.adapter.elastic.run_elastic`): the compute resources, the free ones, the
waiting jobs in submission order and the running ones, each with its kind (``rigid``,
``moldable``, ``malleable``, ``evolving``, ``adaptive``; a job without ``elastic`` field is
rigid) and bounds, and, for a running job stopped at a scheduling point *in this message*,
``job.point`` (``phase``, ``iteration``, ``num_nodes`` and, for an evolving or adaptive job,
``requested``).  It decides through :class:`Decisions`: start a job on chosen resources, resize
a job at its scheduling point, reject a job.  Each decision updates the state at once (a shrink
frees resources a later start of the same decision may take).

A job not at a scheduling point now cannot be resized now: a policy remembers its intention
and applies it at the job's next point (see :mod:`.equipartition`).
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass, field
from typing import Any

from coburst.errors import ProtocolError
from coburst.policies.base import Policy

__all__ = ["EJob", "ElasticState", "Decisions", "ElasticPolicy"]

_MOLDABLE_START = ("moldable", "malleable", "adaptive")


@dataclass
class EJob:
    """A job as an elastic policy sees it."""

    id: str
    subtime: float
    res: int
    walltime: float
    kind: str = "rigid"
    num_nodes_min: int = 0
    num_nodes_max: int = 0
    alloc: list[int] | None = None
    start: float | None = None
    #: the scheduling point the job waits at in this message (None: not at a point now)
    point: dict[str, Any] | None = None
    #: its elastic model (:class:`coburst.models.elastic.ElasticJob`) when the simulator told it:
    #: a job-level ``application``, or the profile forwarded on submission
    model: Any = None
    #: the ``delay`` of its profile, when forwarded (a plain job's run time)
    delay: float | None = None
    #: its burst-buffer request in bytes per compute node (the job's ``bb`` field: a job on
    #: ``n`` nodes holds ``n`` times this)
    bb: float = 0.0

    @property
    def size(self) -> int:
        return len(self.alloc) if self.alloc else 0

    def start_sizes(self) -> tuple[int, int]:
        if self.kind in _MOLDABLE_START:
            return self.num_nodes_min, self.num_nodes_max
        return self.res, self.res

    @property
    def shrinkable(self) -> bool:
        """The scheduler may resize it at its own initiative (malleable, adaptive)."""
        return self.kind in ("malleable", "adaptive")


@dataclass
class ElasticState:
    now: float = 0.0
    compute: list[int] = field(default_factory=list)
    free: set[int] = field(default_factory=set)
    queue: list[EJob] = field(default_factory=list)
    running: dict[str, EJob] = field(default_factory=dict)
    #: the platform's burst-buffer capacity in bytes: the storage resources' ``bb_capacity``
    bb_capacity: float = 0.0
    #: the jobs this message submitted, in the queue's order: a policy checks whether a job can
    #: ever start once, here, not at every message (the queue can hold thousands)
    submitted: list[EJob] = field(default_factory=list)

    def wider_than_platform(self, job: EJob) -> bool:
        """Whether ``job``'s smallest size is more than the platform's compute resources: it
        can never start."""
        return job.start_sizes()[0] > len(self.compute)

    def too_wide(self) -> list[EJob]:
        """The jobs this message submitted that are wider than the platform
        (:meth:`wider_than_platform`): a policy rejects them at once."""
        return [j for j in self.submitted if self.wider_than_platform(j)]

    def at_points(self) -> list[EJob]:
        """The running jobs stopped at a scheduling point now, in start order."""
        return [j for j in self.running.values() if j.point is not None]


class Decisions:
    """The decisions of one message, applied to the state as they are taken."""

    def __init__(self, state: ElasticState):
        self.state = state
        self.events: list[tuple[str, dict[str, Any]]] = []
        #: ids of the jobs resized by this decision
        self.resized: set[str] = set()

    def start(self, job: EJob, ids: list[int]) -> None:
        st = self.state
        lo, hi = job.start_sizes()
        ids = sorted(ids)
        if not lo <= len(ids) <= hi or not set(ids) <= st.free or len(set(ids)) != len(ids):
            raise ProtocolError(f"policy: cannot start {job.id} on {ids} (sizes [{lo}, {hi}], free {sorted(st.free)})")
        st.free.difference_update(ids)
        st.queue.remove(job)
        job.alloc, job.start = ids, st.now
        st.running[job.id] = job
        self.events.append(("EXECUTE_JOB", {"job_id": job.id, "alloc": _text(ids)}))

    def resize(self, job: EJob, ids: list[int]) -> None:
        st = self.state
        ids = sorted(ids)
        new = set(ids) - set(job.alloc)
        if job.point is None or not new <= st.free or not job.num_nodes_min <= len(ids) <= job.num_nodes_max:
            raise ProtocolError(f"policy: cannot resize {job.id} to {ids}")
        st.free.difference_update(new)
        st.free.update(set(job.alloc) - set(ids))
        job.alloc = ids
        self.resized.add(job.id)
        self.events.append(("RESIZE_JOB", {"job_id": job.id, "alloc": _text(ids)}))

    def resize_to(self, job: EJob, size: int) -> None:
        """Resize to ``size``: a shrink gives back the highest ids, a growth takes the lowest free ones."""
        if size == job.size:
            return
        if size < job.size:
            self.resize(job, job.alloc[:size])
        else:
            self.resize(job, job.alloc + sorted(self.state.free)[:size - job.size])

    def reject(self, job: EJob) -> None:
        self.state.queue.remove(job)
        self.events.append(("REJECT_JOB", {"job_id": job.id}))


def _text(ids: list[int]) -> str:
    """``"0-3 8"`` of sorted ids."""
    parts, i = [], 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        parts.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return " ".join(parts)


class ElasticPolicy(Policy):
    """Base class of the ``elastic`` family: :meth:`schedule` decides for one message."""

    @abstractmethod
    def schedule(self, state: ElasticState, decisions: Decisions) -> None:
        """Take this message's decisions (through ``decisions``)."""

    def make_decisions(self, state):  # (the rigid families' entry point)
        raise NotImplementedError("an elastic policy decides through schedule(state, decisions), run by "
                                  "coburst.adapter.elastic")
