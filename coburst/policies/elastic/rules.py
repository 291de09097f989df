"""Rules that several elastic policies share (:mod:`.equipartition`, :mod:`.malleable_easy`).

``targets`` maps a running job's id to the size it shrinks to at its next scheduling point
(a policy's own memory: a job not at a point now cannot be resized now).
"""

from __future__ import annotations

import math
from typing import Callable

from coburst.policies.elastic.base import Decisions, EJob, ElasticPolicy, ElasticState

__all__ = ["TargetPolicy", "grant_requests", "apply_targets", "expand_when_idle", "expected_end", "reservation",
           "may_backfill"]


class TargetPolicy(ElasticPolicy):
    """An elastic policy that remembers shrink targets (``self.targets``) between messages."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        #: job id -> size it shrinks to at its next scheduling point
        self.targets: dict[str, int] = {}

    def begin(self, state: ElasticState, d: Decisions) -> None:
        """The first steps of every message: reject the submitted jobs that never fit, forget the
        targets of ended jobs (all of them when nobody waits), grant the jobs' own requests and
        apply the targets of the jobs at a point."""
        for job in [j for j in state.submitted if self.never_fits(state, j)]:
            d.reject(job)
        self.targets = {jid: t for jid, t in self.targets.items() if jid in state.running}
        if not state.queue:
            self.targets.clear()
        grant_requests(state, d, self.targets, self.growth_room)
        apply_targets(state, d, self.targets)

    def never_fits(self, state: ElasticState, job: EJob) -> bool:
        """Whether ``job`` can never start on this platform (rejected when submitted)."""
        return state.wider_than_platform(job)

    def growth_room(self, state: ElasticState, job: EJob) -> int:
        """How many nodes ``job`` may grow by now (the free ones; a policy with other resources
        narrows it)."""
        return len(state.free)


def grant_requests(state: ElasticState, d: Decisions, targets: dict[str, int],
                   room: Callable[[ElasticState, EJob], int] | None = None) -> None:
    """An evolving or adaptive job asking to shrink is granted; asking to grow, it gets what is
    free (clipped; ``room``: how many nodes it may take, default the free ones) when no job
    waits, and is refused otherwise.  A job with a target is left to it."""
    for job in state.at_points():
        want = job.point.get("requested")
        if want is None or want == job.size or job.id in targets:
            continue
        if want < job.size:
            d.resize_to(job, want)
        elif not state.queue and state.free:
            extra = len(state.free) if room is None else room(state, job)
            if extra > 0:
                d.resize_to(job, min(want, job.size + extra))


def apply_targets(state: ElasticState, d: Decisions, targets: dict[str, int]) -> None:
    """The jobs at a scheduling point shrink to their targets (a target reached is dropped)."""
    for job in state.at_points():
        target = targets.get(job.id)
        if target is not None and target < job.size:
            d.resize_to(job, target)
        if target is not None and job.size <= target:
            del targets[job.id]


def expand_when_idle(state: ElasticState, d: Decisions) -> None:
    """The malleable and adaptive jobs at a scheduling point (not resized by this decision)
    share the free resources equally, up to their maximums."""
    growing = [j for j in state.at_points() if j.shrinkable and j.size < j.num_nodes_max and j.id not in d.resized]
    while growing and state.free:
        share = max(1, len(state.free) // len(growing))
        for job in list(growing):
            extra = min(share, job.num_nodes_max - job.size, len(state.free))
            if extra > 0:
                d.resize_to(job, job.size + extra)
            if job.size >= job.num_nodes_max or not state.free:
                growing.remove(job)


def expected_end(job: EJob) -> float:
    """A running job's end by its walltime (inf: it has none)."""
    return job.start + job.walltime if job.walltime >= 0 and job.start is not None else math.inf


def reservation(state: ElasticState, need: int, free: int) -> tuple[float, int]:
    """EASY's reservation of a job needing ``need`` resources with ``free`` free now: (the date,
    by the running jobs' walltimes, at which enough are free; the resources left beyond ``need``
    then).  (inf, 0): never, as far as the walltimes tell."""
    if free >= need:
        return state.now, free - need
    for end, size in sorted((expected_end(j), j.size) for j in state.running.values()):
        if math.isinf(end):
            break
        free += size
        if free >= need:
            return end, free - need
    return math.inf, 0


def may_backfill(state: ElasticState, job: EJob, size: int, shadow: float, extra: int) -> tuple[bool, int]:
    """EASY's test for a job behind the head: (it may start now on ``size``, the extra resources
    left): it ends by its walltime before the reservation ``shadow``, or it fits in ``extra``."""
    if job.walltime >= 0 and state.now + job.walltime <= shadow:
        return True, extra
    if size <= extra:
        return True, extra - size
    return False, extra
