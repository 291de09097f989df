"""The explicit scheduler state a policy sees.

:class:`SchedulerState` holds the date, the waiting queue (submission order), the running
jobs (allocation, BB placement, start, expected end) and the cluster, and builds the
availability profile of the running jobs.  It is changed only by events
(:meth:`~SchedulerState.submit`, :meth:`~SchedulerState.finish`) and by applying decisions
(:meth:`~SchedulerState.apply`) -- the adapter and the reference replay both drive it.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from coburst.core.cluster import Cluster
from coburst.core.job import Job
from coburst.core.maskprofile import MaskProfile
from coburst.core.placement import Allocation, mask_indices, node_mask
from coburst.core.profile import Profile

if TYPE_CHECKING:
    from coburst.core.decisions import Decisions

__all__ = ["Job", "RunningJob", "RunningJobs", "SchedulerState"]


@dataclass(slots=True)
class RunningJob:
    job: Job
    start: float
    alloc: Allocation

    @property
    def expected_end(self) -> float:
        return self.start + self.job.walltime


class RunningJobs(dict):
    """The running jobs (job id -> :class:`RunningJob`) that also keep, as they change, what
    :meth:`Profile.from_node_ends` builds the profile from: each compute node's expected end
    (``-inf``: free), the multiset of expected ends and the BB use of the jobs with one; and
    what :meth:`MaskProfile.from_end_masks` builds it from: the nodes of the jobs ending at
    every expected end and their union, as bit masks.

    Only item assignment, ``del`` and ``pop`` are followed; any other change (and two jobs
    on one node) sets ``exact`` to False for good, and the profile is then built from the
    jobs themselves (:meth:`Profile.from_running`), as before."""

    __slots__ = ("_node_end", "_pending", "ends", "bb", "nbusy", "exact", "end_masks", "busy", "version",
                 "sorted_ends")

    #: node_end writes kept beyond one per expected end before a rebuild is cheaper
    DEFER_SLACK = 16

    def __init__(self, n_compute: int):
        super().__init__()
        self._node_end = np.full(n_compute, -math.inf)
        self._pending: list | None = []  # node_end writes not done yet (None: rebuild it)
        self.ends: dict[float, int] = {}
        self.bb: dict[str, tuple[float, np.ndarray]] = {}
        self.nbusy = 0
        self.exact = True
        self.end_masks: dict[float, int] = {}
        self.sorted_ends: list[float] = []  # the keys of ends, ascending
        self.busy = 0
        self.version = 0  # counts the followed changes (the mask profile's cache key)

    @property
    def node_end(self) -> np.ndarray:
        """Each compute node's expected end (``-inf``: free), brought up to date when read:
        the writes of the starts and ends since the last read, or, when there were more of
        them than expected ends, rebuilt from ``end_masks`` (the same array while ``exact``;
        policies on :meth:`SchedulerState.mask_profile` never read it)."""
        ne = self._node_end
        pending = self._pending
        if pending is None:
            ne.fill(-math.inf)
            for end, m in self.end_masks.items():
                if m:
                    ne[mask_indices(m)] = end
            self._pending = []
        elif pending:
            for nodes, value in pending:
                ne[nodes] = value
            pending.clear()
        return ne

    def _defer(self, nodes: np.ndarray, value: float) -> None:
        pending = self._pending
        if pending is not None:
            if len(pending) > len(self.end_masks) + self.DEFER_SLACK:
                self._pending = None  # a rebuild costs less than these writes
            else:
                pending.append((nodes, value))

    def _add(self, key: str, run: RunningJob) -> None:
        alloc = run.alloc
        end = float(run.expected_end)
        self.version += 1
        m = node_mask(alloc)
        if self.busy & m:  # a node held twice (while exact: a node whose end is not -inf)
            self.exact = False
        self.busy |= m
        self.nbusy += len(alloc.nodes)
        ends = self.ends
        count = ends.get(end, 0)
        ends[end] = count + 1
        em = self.end_masks
        if count:
            em[end] |= m
        else:
            em[end] = m
            insort(self.sorted_ends, end)
        self._defer(alloc.nodes, end)
        if alloc.bb_use is not None:
            self.bb[key] = (end, alloc.bb_use)

    def _remove(self, key: str, run: RunningJob) -> None:
        alloc = run.alloc
        end = float(run.expected_end)
        self.version += 1
        m = node_mask(alloc)
        self.busy &= ~m
        self.nbusy -= len(alloc.nodes)
        left = self.ends[end] - 1
        if left:
            self.ends[end] = left
            self.end_masks[end] &= ~m
        else:
            del self.ends[end]
            del self.end_masks[end]
            se = self.sorted_ends
            del se[bisect_left(se, end)]
        self._defer(alloc.nodes, -math.inf)
        self.bb.pop(key, None)

    def __setitem__(self, key, run) -> None:
        old = dict.get(self, key)
        if old is not None:
            self._remove(key, old)
        dict.__setitem__(self, key, run)
        self._add(key, run)

    def __delitem__(self, key) -> None:
        run = dict.pop(self, key)
        self._remove(key, run)

    _MISSING = object()

    def pop(self, key, default=_MISSING):
        if key in self:
            run = dict.pop(self, key)
            self._remove(key, run)
            return run
        if default is RunningJobs._MISSING:
            raise KeyError(key)
        return default

    def _untracked(name):  # noqa: N805 - builds the methods below
        def method(self, *args, **kwargs):
            self.exact = False
            return getattr(dict, name)(self, *args, **kwargs)
        method.__name__ = name
        return method

    popitem = _untracked("popitem")
    clear = _untracked("clear")
    update = _untracked("update")
    setdefault = _untracked("setdefault")
    __ior__ = _untracked("__ior__")
    del _untracked

    def in_step(self) -> bool:
        """Whether the kept node ends are those of the jobs (no untracked change, no node
        held twice)."""
        return self.exact and self.nbusy == int(np.count_nonzero(self.node_end != -math.inf))

    def masks_in_step(self) -> bool:
        """:meth:`in_step` for the bit masks (the same answer, without numpy)."""
        return self.exact and self.nbusy == self.busy.bit_count()


class SchedulerState:
    """Date, queue, running jobs and cluster (module doc)."""

    def __init__(self, cluster: Cluster, now: float = 0.0):
        self.cluster = cluster
        self.now = float(now)
        self._queue: dict[str, Job] = {}  # insertion (= submission) order
        self.running: dict[str, RunningJob] = RunningJobs(cluster.n_compute)
        self._profile: Profile | None = None
        self._profile_now: float | None = None
        self._mprofile: MaskProfile | None = None
        self._mprofile_key: tuple | None = None

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
            run = self.running
            if type(run) is RunningJobs and run.in_step():
                self._profile = Profile.from_node_ends(self.cluster, self.now, run.node_end, run.ends,
                                                       run.bb.values())
            else:
                self._profile = Profile.from_running(
                    self.cluster, self.now, ((r.expected_end, r.alloc) for r in run.values()))
            self._profile_now = self.now
        return self._profile.copy()

    def mask_profile(self) -> "MaskProfile | Profile":
        """:meth:`profile` as a :class:`MaskProfile` (the same profile, cheaper to query
        on a few hundred nodes), built from the running jobs' node masks when they are in
        step, else converted from :meth:`profile`.  A subclass that overrides
        :meth:`profile` gets its own profile (the policy then sees that one)."""
        if type(self).profile is not SchedulerState.profile:
            return self.profile()
        run = self.running
        if type(run) is not RunningJobs or not run.masks_in_step():
            return MaskProfile.from_profile(self.profile())
        key = (self.now, run.version, id(run))
        if self._mprofile is None or self._mprofile_key != key:
            self._mprofile = MaskProfile.from_end_masks(self.cluster, self.now, run.end_masks, run.busy,
                                                        run.bb.values(), run.sorted_ends)
            self._mprofile_key = key
        return self._mprofile.copy()

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
        self._profile = self._mprofile = None
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
            prof = self.mask_profile()
            for st in decisions.starts:
                prof.occupy(self.now, self.now + st.job.walltime, st.alloc)
            for st in decisions.starts:
                del self._queue[st.job.id]
                self.running[st.job.id] = RunningJob(st.job, self.now, st.alloc)
            self._profile = self._mprofile = None

    def __repr__(self) -> str:
        return f"SchedulerState(now={self.now}, queue={len(self._queue)}, running={len(self.running)})"
