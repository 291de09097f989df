"""Rules that several elastic policies share (:mod:`.equipartition`, :mod:`.malleable_easy`).

``targets`` maps a running job's id to the size it shrinks to at its next scheduling point
(a policy's own memory: a job not at a point now cannot be resized now).
"""

from __future__ import annotations

from coburst.policies.elastic.base import Decisions, ElasticPolicy, ElasticState

__all__ = ["TargetPolicy", "grant_requests", "apply_targets", "expand_when_idle"]


class TargetPolicy(ElasticPolicy):
    """An elastic policy that remembers shrink targets (``self.targets``) between messages."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        #: job id -> size it shrinks to at its next scheduling point
        self.targets: dict[str, int] = {}

    def begin(self, state: ElasticState, d: Decisions) -> None:
        """The first steps of every message: reject the jobs bigger than the platform, forget the
        targets of ended jobs (all of them when nobody waits), grant the jobs' own requests and
        apply the targets of the jobs at a point."""
        n_total = len(state.compute)
        for job in list(state.queue):  # never fits the platform
            if job.start_sizes()[0] > n_total:
                d.reject(job)
        self.targets = {jid: t for jid, t in self.targets.items() if jid in state.running}
        if not state.queue:
            self.targets.clear()
        grant_requests(state, d, self.targets)
        apply_targets(state, d, self.targets)


def grant_requests(state: ElasticState, d: Decisions, targets: dict[str, int]) -> None:
    """An evolving or adaptive job asking to shrink is granted; asking to grow, it gets what is
    free (clipped) when no job waits, and is refused otherwise.  A job with a target is left to
    it."""
    for job in state.at_points():
        want = job.point.get("requested")
        if want is None or want == job.size or job.id in targets:
            continue
        if want < job.size:
            d.resize_to(job, want)
        elif not state.queue and state.free:
            d.resize_to(job, min(want, job.size + len(state.free)))


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
