"""The availability profile over Python integers: :class:`MaskProfile`.

The same step function as :class:`~coburst.core.profile.Profile` (Kopański 2020, §2.2 and
§3.1: the profile EASY backfilling reserves and fills against), with the same breakpoints
and the same answers, held differently:

* every segment's free compute nodes are one Python integer bit mask (bit i: compute index
  i), its free-node count a list entry; its free BB bytes a row of a numpy array as in
  :class:`Profile` (none without BB nodes: a cluster of a hundred BB nodes is cheaper
  in numpy);
* the prefix accumulations of :meth:`alloc_now` (``AND`` of the masks, ``min`` of the BB
  rows over segments 0..k) are computed once after each change;
* node choice is :func:`~coburst.core.placement.select_mask` (the same choice as
  :func:`~coburst.core.placement.select_nodes`), BB placement
  :func:`~coburst.core.placement.place_bb` itself.

On the clusters of the thesis (~100 compute nodes) a profile of a few dozen segments is
cheaper as integers than as numpy rows: a decision of EASY touches each row a handful of
times, where numpy's per-call overhead is larger than the work.  It is built from what
:class:`~coburst.core.state.RunningJobs` keeps as jobs start and end (each expected end's
node mask), so a decision does not scan the running jobs either.  The equivalence with
:class:`Profile` (every query, every occupation, conflicts included) is pinned by
tests/test_policy_fastpaths.py.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Iterable, Mapping

import numpy as np

from coburst.core.cluster import Cluster
from coburst.core.placement import Allocation, bb_slots, mask_indices, node_mask, place_bb, select_mask
from coburst.core.profile import INF, OVERDUE, JobQueries, Profile, ProfileConflict, _bb_rows, _dup_row

__all__ = ["MaskProfile"]


def _alloc(n_bb: int, mask: int, bb_nodes: np.ndarray | None = None, bb: int = 0) -> Allocation:
    """``Allocation.make`` of the nodes of ``mask``, the mask kept on the allocation."""
    alloc = Allocation.make(n_bb, mask_indices(mask), bb_nodes, bb)
    object.__setattr__(alloc, "mask", mask)
    return alloc


class MaskProfile(JobQueries):
    """Availability profile over bit masks (module doc); the query and occupation interface
    of :class:`~coburst.core.profile.Profile` that the steps of
    :mod:`coburst.policies.base` use."""

    __slots__ = ("cluster", "now", "_times", "_free", "_rows", "_bb", "_bbtot", "_acc", "_accbb")

    def __init__(self, cluster: Cluster, now: float):
        self.cluster = cluster
        self.now = float(now)
        self._times: list[float] = [self.now]
        self._free: list[int] = [(1 << cluster.n_compute) - 1]
        self._rows: list[int] = [cluster.n_compute]
        self._bb = cluster.bb_capacity[None, :].copy() if cluster.n_bb else None  # (T, n_bb) or None
        self._bbtot: list[int] = [cluster.total_bb_capacity]
        self._acc = None    # (AND of the masks over rows 0..k, their counts)
        self._accbb = None  # min of the BB rows over rows 0..k

    # ------------------------------------------------------------------ building
    @classmethod
    def from_end_masks(cls, cluster: Cluster, now: float, end_masks: Mapping[float, int], busy: int,
                       bb_jobs: Iterable[tuple[float, np.ndarray]],
                       sorted_ends: list[float] | None = None) -> "MaskProfile":
        """The profile :meth:`Profile.from_node_ends` builds, from ``end_masks`` (every
        running job's expected end -> the nodes of the jobs ending then; a key for every
        running job, node-less ones included), ``busy`` (their union; one job per node)
        and ``bb_jobs`` (``(expected_end, bb_use)`` of the jobs using BB); ``sorted_ends``:
        the keys of ``end_masks`` ascending, if known."""
        if not end_masks:
            return cls(cluster, now)
        prof = cls.__new__(cls)
        prof.cluster = cluster
        prof.now = now = float(now)
        prof._acc = prof._accbb = None
        over = now + OVERDUE
        keys = sorted(end_masks) if sorted_ends is None else sorted_ends
        i = bisect_right(keys, now)  # keys[:i]: overdue, free at now + OVERDUE
        j = len(keys)
        if keys[j - 1] == INF:
            j -= 1
        if not i:
            times = [now]
            times += keys[:j]
            masks = [end_masks[e] for e in times[1:]]
        elif i == j or keys[i] > over:
            od = 0
            for e in keys[:i]:
                od |= end_masks[e]
            times = [now, over]
            times += keys[i:j]
            masks = [od]
            masks += [end_masks[e] for e in keys[i:j]]
        else:  # an end within OVERDUE of now: the overdue nodes join it or come after it
            at: dict[float, int] = {}
            for e in keys[:j]:
                t = e if e > now else over
                at[t] = at.get(t, 0) | end_masks[e]
            times = [now]
            times += sorted(at)
            masks = [at[t] for t in times[1:]]
        cur = ((1 << cluster.n_compute) - 1) & ~busy
        free = [cur]
        for m in masks:
            cur |= m
            free.append(cur)
        prof._times = times
        prof._free = free
        prof._rows = [f.bit_count() for f in free]
        T = len(times)
        bb_jobs = list(bb_jobs) if cluster.n_bb else []
        if bb_jobs:
            e = np.array([end for end, _ in bb_jobs])
            e[e <= now] = over
            # (np.array of the equal-length int64 rows: np.stack's array, ~5x cheaper here)
            prof._bb = _bb_rows(cluster, np.array(times), e, np.array([u for _, u in bb_jobs]))
            prof._bbtot = prof._bb.sum(axis=1).tolist()
        else:
            prof._bb = np.repeat(cluster.bb_capacity[None, :], T, axis=0) if cluster.n_bb else None
            prof._bbtot = [cluster.total_bb_capacity] * T
        return prof

    @classmethod
    def from_profile(cls, prof: Profile) -> "MaskProfile":
        """The same profile as ``prof`` (any :class:`Profile`)."""
        new = cls.__new__(cls)
        new.cluster = prof.cluster
        new.now = prof.now
        new._times = list(prof._times)
        packed = np.packbits(prof._free, axis=1, bitorder="little")
        new._free = [int.from_bytes(row.tobytes(), "little") for row in packed]
        new._rows = list(prof._rows)
        new._bb = prof._bb.copy() if prof.cluster.n_bb else None
        new._bbtot = list(prof._bbtot)
        new._acc = new._accbb = None
        return new

    def to_profile(self) -> Profile:
        """The same profile as a numpy :class:`Profile` (tests, inspection)."""
        n = self.cluster.n_compute
        prof = Profile(self.cluster, self.now)
        prof._times = list(self._times)
        prof._free = np.array([[(m >> i) & 1 for i in range(n)] for m in self._free], dtype=bool).reshape(
            len(self._free), n)
        prof._rows = list(self._rows)
        prof._bb = self._bb.copy() if self._bb is not None else np.zeros((len(self._times), 0), dtype=np.int64)
        prof._bbtot = list(self._bbtot)
        return prof

    def copy(self) -> "MaskProfile":
        new = MaskProfile.__new__(MaskProfile)
        new.cluster = self.cluster
        new.now = self.now
        new._times = self._times[:]
        new._free = self._free[:]
        new._rows = self._rows[:]
        new._bb = self._bb.copy() if self._bb is not None else None
        new._bbtot = self._bbtot[:]
        new._acc = self._acc
        new._accbb = self._accbb
        return new

    def _split(self, t: float) -> int:
        """Row index of the segment starting at ``t`` (inserting a breakpoint)."""
        times = self._times
        i = bisect_left(times, t)
        if i < len(times) and times[i] == t:
            return i
        if i == 0:
            raise ValueError(f"time {t} is before the profile start {self.now}")
        times.insert(i, t)
        for lst in (self._free, self._rows, self._bbtot):
            lst.insert(i, lst[i - 1])
        if self._bb is not None:
            self._bb = _dup_row(self._bb, i)
        return i

    def occupy(self, start: float, end: float, alloc: Allocation) -> None:
        """Take ``alloc`` during ``[start, end)`` (a started job or a reservation)."""
        if not end > start:
            raise ValueError(f"empty interval [{start}, {end})")
        ks = self._split(max(float(start), self.now))
        ke = self._split(float(end)) if end != INF else len(self._times)
        self._acc = self._accbb = None  # rows may have been inserted, even if the checks fail
        m = node_mask(alloc)
        free = self._free
        for r in range(ks, ke):
            if free[r] & m != m:
                raise ProfileConflict(f"compute nodes {alloc.nodes.tolist()} not free during [{start}, {end})")
        use = alloc.bb_use
        if use is not None and (self._bb[ks:ke] < use).any():
            raise ProfileConflict(f"burst buffers over capacity during [{start}, {end})")
        n = len(alloc.nodes)
        rows = self._rows
        keep = ~m
        for r in range(ks, ke):
            free[r] &= keep
            rows[r] -= n
        if use is not None:
            self._bb[ks:ke] -= use
            tot, u = self._bbtot, int(use.sum())
            for r in range(ks, ke):
                tot[r] -= u

    # ------------------------------------------------------------------ queries
    def _prefix(self) -> tuple[list[int], list[int]]:
        acc = self._acc
        if acc is None:
            cf, counts = [], []
            cur = -1
            for f in self._free:
                cur &= f
                cf.append(cur)
                counts.append(cur.bit_count())
            acc = self._acc = (cf, counts)
        return acc

    def _prefix_bb(self) -> np.ndarray:
        acc = self._accbb
        if acc is None:
            acc = self._accbb = np.minimum.accumulate(self._bb, axis=0)
        return acc

    def _last_row(self, end: float, lo: int = 0) -> int:
        """Index of the last segment starting before ``end``."""
        if end == INF:
            return len(self._times) - 1
        k = bisect_left(self._times, end, lo) - 1
        return k if k > lo else lo

    def idle_now(self) -> int:
        """Compute nodes free in the first segment (:meth:`Profile.idle_now`)."""
        return self._rows[0]

    def fits_now(self, res: int, walltime: float, bb: int = 0, storage: bool = True) -> bool:
        """:meth:`Profile.fits_now`."""
        _, counts = self._prefix()
        k = self._last_row(self.now + walltime)
        if counts[k] < res:
            return False
        return not (storage and bb > 0) or bb_slots(self._prefix_bb()[k], bb) >= res

    def alloc_now(self, res: int, walltime: float, bb: int = 0, storage: bool = True) -> Allocation | None:
        """:meth:`Profile.alloc_now`."""
        cf, counts = self._prefix()
        k = self._last_row(self.now + walltime)
        if counts[k] < res:
            return None
        n_bb = self.cluster.n_bb
        if storage and bb > 0:
            avail = self._prefix_bb()[k]
            if bb_slots(avail, bb) < res:
                return None
            m = select_mask(cf[k], res)
            nodes = mask_indices(m)
            alloc = Allocation.make(n_bb, nodes, place_bb(self.cluster.bb_preference, nodes, bb, avail), bb)
            object.__setattr__(alloc, "mask", m)
            return alloc
        return _alloc(n_bb, select_mask(cf[k], res))

    def first_fit_jobs(self, jobs, start: int = 0) -> int:
        """Index of the first job ``i >= start`` of ``jobs`` that can start now (its nodes
        and BB for its whole walltime: :meth:`fits_now`), or -1 (greedy filling's screen,
        :meth:`Profile.first_fit` job by job)."""
        cf, counts = self._prefix()
        times, now = self._times, self.now
        last = len(times) - 1
        bbacc = None
        for i in range(start, len(jobs)):
            job = jobs[i]
            res = job.res
            if res > counts[0]:
                continue
            end = now + job.walltime
            if end == INF:
                k = last
            else:
                k = bisect_left(times, end) - 1
                if k < 0:
                    k = 0
            if counts[k] < res:
                continue
            bb = job.bb
            if bb > 0:
                if bbacc is None:
                    bbacc = self._prefix_bb()
                if bb_slots(bbacc[k], bb) < res:
                    continue
            return i
        return -1

    def earliest(self, res: int, walltime: float, bb: int = 0, storage: bool = True,
                 not_before: float | None = None) -> tuple[float, Allocation] | None:
        """:meth:`Profile.earliest` (the same scan of the breakpoints)."""
        times = self._times
        T = len(times)
        t0 = self.now if not_before is None else max(float(not_before), self.now)
        k = bisect_right(times, t0) - 1
        need_bb = storage and bb > 0
        free, bbf = self._free, self._bb
        rows, tot = self._rows, self._bbtot
        need = res * bb if need_bb else 0
        n_bb = self.cluster.n_bb
        while k < T:
            s = times[k] if times[k] > t0 else t0
            last = self._last_row(s + walltime, k)
            j = last
            while j >= k and rows[j] >= res and tot[j] >= need:
                j -= 1
            if j >= k:
                k = j + 1
                continue
            mask = free[k]
            for r in range(k + 1, last + 1):
                mask &= free[r]
            if mask.bit_count() >= res:
                if not need_bb:
                    return s, _alloc(n_bb, select_mask(mask, res))
                avail = bbf[k] if last == k else bbf[k:last + 1].min(axis=0)
                if bb_slots(avail, bb) >= res:
                    m = select_mask(mask, res)
                    nodes = mask_indices(m)
                    alloc = Allocation.make(n_bb, nodes, place_bb(self.cluster.bb_preference, nodes, bb, avail), bb)
                    object.__setattr__(alloc, "mask", m)
                    return s, alloc
            k += 1
        return None

    def __repr__(self) -> str:
        return f"MaskProfile(now={self.now}, {len(self._times)} segments)"
