"""Availability profile: which compute nodes and how many BB bytes are free, over time.

:class:`Profile` is a step function from ``now`` on.  Breakpoints ``t_0 = now < t_1 < ...``
split time into segments ``[t_k, t_{k+1})`` (the last one unbounded).  Two numpy arrays hold
the state of every segment:

* ``free``: bool ``(T, n_compute)`` -- compute node free during the segment;
* ``bbfree``: int64 ``(T, n_bb)`` -- free bytes of every BB node during the segment.

It is fed with running jobs (busy until ``start + walltime``, :meth:`Profile.from_running`)
and with reservations / new starts (:meth:`Profile.occupy`).  Queries:

* :meth:`Profile.alloc_now` / :meth:`Profile.fits_now` -- can a job start now (for its whole
  walltime, respecting every reservation)?  Answered from prefix accumulations
  (``AND`` of masks, ``min`` of capacities over segments 0..k), computed once after each
  change, so a failing test costs one ``bisect`` and an integer compare;
  :meth:`Profile.first_fit` runs the same test over a whole batch of jobs at once;
* :meth:`Profile.earliest` -- earliest start (not before a date) with the compute nodes and
  BB placement it would get: scan of the breakpoints, skipping every start whose window
  contains a segment that alone has too few free nodes or free BB bytes (per-segment
  counts kept up to date by :meth:`Profile.occupy`);
* :meth:`Profile.earliest_start` / :meth:`Profile.allocation_now` -- the same for a
  :class:`~coburst.core.job.Job`.

:meth:`Profile.copy` is cheap (a few microseconds): optimisers try plans on copies.

Node choice and BB placement are :func:`~coburst.core.placement.select_nodes` and
:func:`~coburst.core.placement.place_bb`; BB feasibility is checked first with the exact
slot count (:func:`~coburst.core.placement.bb_slots`).

:class:`ReferenceProfile` answers the same queries by brute force over a plain list of
reservations.  It is the oracle of the tests and the naive baseline of the benchmark.

Walltimes must be > 0; ``math.inf`` means "never ends".  A running job already past its
expected end (Batsim starts jobs a little after the decision) is taken to end
``OVERDUE`` seconds after now.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from typing import Iterable, Iterator

import numpy as np

from coburst.core.cluster import Cluster
from coburst.core.placement import Allocation, bb_slots, place_bb, select_nodes

__all__ = ["Profile", "ReferenceProfile", "OVERDUE", "ProfileConflict"]

OVERDUE = 1e-6
INF = math.inf



def _bb_rows(cluster: Cluster, tarr: np.ndarray, ends: np.ndarray, use: np.ndarray) -> np.ndarray:
    """Free BB bytes per segment (rows of ``tarr``, nodes in columns) while jobs holding
    ``use`` (one row per job) run until ``ends`` (already moved past now when overdue; INF:
    never released)."""
    T = len(tarr)
    rows = np.searchsorted(tarr, ends)  # T for never-ending jobs
    release = np.zeros((T + 1, cluster.n_bb), dtype=np.int64)
    np.add.at(release, rows, use)
    release[0] -= use.sum(axis=0)
    bb = cluster.bb_capacity[None, :] + np.cumsum(release[:T], axis=0)
    if (bb[0] < 0).any():
        raise ProfileConflict("running jobs exceed a burst-buffer node's capacity")
    return bb

class ProfileConflict(ValueError):
    """An occupation would take a resource that is not free."""


def _dup_row(a: np.ndarray, i: int) -> np.ndarray:
    """``a`` with a copy of row ``i - 1`` inserted at ``i``."""
    out = np.empty((a.shape[0] + 1,) + a.shape[1:], dtype=a.dtype)
    out[:i] = a[:i]
    out[i] = a[i - 1]
    out[i + 1:] = a[i:]
    return out


class JobQueries:
    """What both availability profiles (:class:`Profile`, :class:`~coburst.core.maskprofile.
    MaskProfile`) answer alike: the queries by :class:`~coburst.core.job.Job` and the
    breakpoints."""

    __slots__ = ()

    def earliest_start(self, job, not_before: float | None = None,
                       storage: bool = True) -> tuple[float, Allocation] | None:
        """:meth:`earliest` for a :class:`~coburst.core.job.Job`."""
        return self.earliest(job.res, job.walltime, job.bb, storage, not_before)

    def allocation_now(self, job, storage: bool = True) -> Allocation | None:
        """:meth:`alloc_now` for a :class:`~coburst.core.job.Job`."""
        return self.alloc_now(job.res, job.walltime, job.bb, storage)

    @property
    def breakpoints(self) -> list[float]:
        return list(self._times)


class Profile(JobQueries):
    """Numpy-backed availability profile (see module doc)."""

    __slots__ = ("cluster", "now", "_times", "_free", "_bb", "_acc", "_rows", "_bbtot")

    def __init__(self, cluster: Cluster, now: float):
        self.cluster = cluster
        self.now = float(now)
        self._times: list[float] = [self.now]
        self._free = np.ones((1, cluster.n_compute), dtype=bool)
        self._bb = cluster.bb_capacity[None, :].copy()
        self._acc = None   # prefix accumulations from now (see _prefix)
        self._rows = [cluster.n_compute]  # free-node count of every segment
        self._bbtot = [cluster.total_bb_capacity]  # free BB bytes (all nodes) of every segment

    # ------------------------------------------------------------------ building
    @classmethod
    def from_running(cls, cluster: Cluster, now: float,
                     running: Iterable[tuple[float, Allocation]]) -> "Profile":
        """Profile of a cluster whose running jobs are ``(expected_end, allocation)``."""
        prof = cls(cluster, now)
        now = prof.now
        ends, allocs = [], []
        for end, alloc in running:
            ends.append(float(end))
            allocs.append(alloc)
        if not allocs:
            return prof
        e = np.array(ends)
        e[e <= now] = now + OVERDUE
        times = [now] + sorted(set(e[e != INF].tolist()))
        tarr = np.array(times)
        T, B = len(times), cluster.n_bb
        lens = [len(a.nodes) for a in allocs]
        nodes = np.concatenate([a.nodes for a in allocs])
        if len(nodes) and np.bincount(nodes, minlength=cluster.n_compute).max() > 1:
            raise ProfileConflict("two running jobs share a compute node")
        free_from = np.full(cluster.n_compute, now)
        free_from[nodes] = np.repeat(e, lens)
        prof._times = times
        prof._free = free_from[None, :] <= tarr[:, None]
        prof._rows = np.count_nonzero(prof._free, axis=1).tolist()
        with_bb = [i for i, a in enumerate(allocs) if a.bb_use is not None]
        if B and with_bb:
            prof._bb = _bb_rows(cluster, tarr, e[with_bb], np.stack([allocs[i].bb_use for i in with_bb]))
        else:
            prof._bb = np.repeat(cluster.bb_capacity[None, :], T, axis=0)
        prof._bbtot = prof._bb.sum(axis=1).tolist()
        return prof

    @classmethod
    def from_node_ends(cls, cluster: Cluster, now: float, node_end: np.ndarray, ends: Iterable[float],
                       bb_jobs: Iterable[tuple[float, np.ndarray]]) -> "Profile":
        """:meth:`from_running` from what :class:`~coburst.core.state.RunningJobs` keeps as
        jobs start and end: ``node_end`` (each compute node's expected end, ``-inf`` when
        free, one job per node), ``ends`` (every running job's expected end; a multiset's
        keys) and ``bb_jobs`` (``(expected_end, bb_use)`` of the jobs using BB).  The same
        profile (breakpoints, masks, BB rows) without a pass over the running jobs."""
        if not ends:
            return cls(cluster, now)
        prof = cls.__new__(cls)
        prof.cluster = cluster
        prof.now = now = float(now)
        prof._acc = None
        over = now + OVERDUE
        times = [now] + sorted({e if e > now else over for e in ends if e != INF})
        tarr = np.array(times)
        T, B = len(times), cluster.n_bb
        if T > 1 and times[1] < over:  # an end within OVERDUE of now: overdue nodes free at over
            free_from = np.where(node_end > now, node_end, over)
            free_from[node_end == -INF] = now
            free = free_from[None, :] <= tarr[:, None]
        else:  # every later breakpoint is >= over: an overdue node is busy in row 0 only
            free = node_end[None, :] <= tarr[:, None]
            free[0] = node_end == -INF
        prof._times = times
        prof._free = free
        prof._rows = np.count_nonzero(free, axis=1).tolist()
        bb_jobs = list(bb_jobs) if B else []
        if bb_jobs:
            e = np.array([end for end, _ in bb_jobs])
            e[e <= now] = over
            prof._bb = _bb_rows(cluster, tarr, e, np.stack([u for _, u in bb_jobs]))
            prof._bbtot = prof._bb.sum(axis=1).tolist()
        else:
            prof._bb = np.repeat(cluster.bb_capacity[None, :], T, axis=0)
            prof._bbtot = [cluster.total_bb_capacity] * T
        return prof

    def copy(self) -> "Profile":
        new = Profile.__new__(Profile)
        new.cluster = self.cluster
        new.now = self.now
        new._times = list(self._times)
        new._free = self._free.copy()
        new._bb = self._bb.copy()
        new._acc = self._acc
        new._rows = list(self._rows)
        new._bbtot = list(self._bbtot)
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
        self._rows.insert(i, self._rows[i - 1])
        self._bbtot.insert(i, self._bbtot[i - 1])
        self._free = _dup_row(self._free, i)
        self._bb = _dup_row(self._bb, i)
        return i

    def occupy(self, start: float, end: float, alloc: Allocation) -> None:
        """Take ``alloc`` during ``[start, end)`` (a started job or a reservation)."""
        if not end > start:
            raise ValueError(f"empty interval [{start}, {end})")
        ks = self._split(max(float(start), self.now))
        ke = self._split(float(end)) if end != INF else len(self._times)
        self._acc = None  # rows may have been inserted, even if the checks below fail
        nodes = alloc.nodes
        if not self._free[ks:ke, nodes].all():
            raise ProfileConflict(f"compute nodes {nodes.tolist()} not free during [{start}, {end})")
        use = alloc.bb_use
        if use is not None and (self._bb[ks:ke] < use).any():
            raise ProfileConflict(f"burst buffers over capacity during [{start}, {end})")
        self._free[ks:ke, nodes] = False
        if use is not None:
            self._bb[ks:ke] -= use
        rows, n = self._rows, len(nodes)
        for r in range(ks, ke):
            rows[r] -= n
        if use is not None:
            tot, u = self._bbtot, int(use.sum())
            for r in range(ks, ke):
                tot[r] -= u

    # ------------------------------------------------------------------ queries
    def _prefix(self):
        acc = self._acc
        if acc is None:
            cf = np.logical_and.accumulate(self._free, axis=0)
            counts = np.count_nonzero(cf, axis=1)
            acc = self._acc = (cf, counts.tolist(), np.minimum.accumulate(self._bb, axis=0),
                               counts, np.array(self._times))
        return acc

    def _last_row(self, end: float, lo: int = 0) -> int:
        """Index of the last segment starting before ``end``."""
        if end == INF:
            return len(self._times) - 1
        k = bisect_left(self._times, end, lo) - 1
        return k if k > lo else lo

    def idle_now(self) -> int:
        """Compute nodes free in the first segment: a request of more nodes cannot start
        now whatever its walltime (the screen of :func:`coburst.policies.base.try_start`)."""
        return self._rows[0]

    def fits_now(self, res: int, walltime: float, bb: int = 0, storage: bool = True) -> bool:
        """Can ``res`` nodes (and ``bb`` bytes each if ``storage``) be held from now for
        ``walltime``?"""
        cf, counts, cb, _, _ = self._prefix()
        k = self._last_row(self.now + walltime)
        if counts[k] < res:
            return False
        return not (storage and bb > 0) or bb_slots(cb[k], bb) >= res

    def alloc_now(self, res: int, walltime: float, bb: int = 0, storage: bool = True) -> Allocation | None:
        """The allocation a job would get if started now, or None if it cannot start."""
        cf, counts, cb, _, _ = self._prefix()
        k = self._last_row(self.now + walltime)
        if counts[k] < res:
            return None
        if storage and bb > 0:
            avail = cb[k]
            if bb_slots(avail, bb) < res:
                return None
            nodes = select_nodes(cf[k], res)
            return Allocation.make(self.cluster.n_bb, nodes,
                                   place_bb(self.cluster.bb_preference, nodes, bb, avail), bb)
        return Allocation.make(self.cluster.n_bb, select_nodes(cf[k], res))

    def first_fit(self, res: np.ndarray, end: np.ndarray, bb: np.ndarray, start: int = 0) -> int:
        """Index of the first request ``i >= start`` that can start now -- ``res[i]`` nodes
        until ``end[i]`` with ``bb[i]`` bytes each (0: no BB) -- or -1.  Vectorised
        :meth:`fits_now` over a batch (greedy filling of long queues)."""
        if start >= len(res):
            return -1
        cf, _, cb, counts, tarr = self._prefix()
        r, e, b = res[start:], end[start:], bb[start:]
        k = np.searchsorted(tarr, e, "left") - 1
        np.maximum(k, 0, out=k)
        ok = counts[k] >= r
        need = ok & (b > 0)
        if need.any():
            idx = np.flatnonzero(need)
            ok[idx] = (cb[k[idx]] // b[idx, None]).sum(axis=1) >= r[idx]
        hits = np.flatnonzero(ok)
        return start + int(hits[0]) if len(hits) else -1

    def earliest(self, res: int, walltime: float, bb: int = 0, storage: bool = True,
                 not_before: float | None = None) -> tuple[float, Allocation] | None:
        """Earliest ``(start, allocation)`` with ``start >= not_before`` (default now), or
        None if the request never fits (only possible with never-ending occupations)."""
        times = self._times
        T = len(times)
        t0 = self.now if not_before is None else max(float(not_before), self.now)
        k = bisect_right(times, t0) - 1
        need_bb = storage and bb > 0
        free, bbf = self._free, self._bb
        rows, tot = self._rows, self._bbtot
        need = res * bb if need_bb else 0
        while k < T:
            s = times[k] if times[k] > t0 else t0
            last = self._last_row(s + walltime, k)
            # skip every start whose window holds a segment that alone has too few free
            # nodes or too few free BB bytes
            j = last
            while j >= k and rows[j] >= res and tot[j] >= need:
                j -= 1
            if j >= k:
                k = j + 1
                continue
            mask = free[k] if last == k else np.logical_and.reduce(free[k:last + 1], axis=0)
            if np.count_nonzero(mask) >= res:
                if not need_bb:
                    return s, Allocation.make(self.cluster.n_bb, select_nodes(mask, res))
                avail = bbf[k] if last == k else bbf[k:last + 1].min(axis=0)
                if bb_slots(avail, bb) >= res:
                    nodes = select_nodes(mask, res)
                    return s, Allocation.make(self.cluster.n_bb, nodes,
                                              place_bb(self.cluster.bb_preference, nodes, bb, avail), bb)
            k += 1
        return None

    # ------------------------------------------------------------------ inspection
    def segments(self) -> Iterator[tuple[float, float, np.ndarray, np.ndarray]]:
        """``(start, end, free_mask, bb_free)`` of every segment (end of the last: inf)."""
        times = self._times
        for k, t in enumerate(times):
            yield t, times[k + 1] if k + 1 < len(times) else INF, self._free[k], self._bb[k]

    def free_at(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """``(free compute mask, free BB bytes)`` at date ``t >= now``."""
        k = bisect_right(self._times, t) - 1
        if k < 0:
            raise ValueError(f"time {t} is before the profile start {self.now}")
        return self._free[k].copy(), self._bb[k].copy()

    def __repr__(self) -> str:
        return f"Profile(now={self.now}, {len(self._times)} segments)"


class ReferenceProfile:
    """Brute-force profile over a plain list of occupations (pure Python sets and dicts).

    Same queries and same answers as :class:`Profile` -- it shares node selection and BB
    placement -- but every query rescans all occupations.  Used as the test oracle and as
    the naive baseline of ``benchmarks/bench_decisions.py``.
    """

    def __init__(self, cluster: Cluster, now: float):
        self.cluster = cluster
        self.now = float(now)
        self.items: list[tuple[float, float, frozenset[int], dict[int, int]]] = []

    @classmethod
    def from_running(cls, cluster: Cluster, now: float,
                     running: Iterable[tuple[float, Allocation]]) -> "ReferenceProfile":
        prof = cls(cluster, now)
        for end, alloc in running:
            end = float(end)
            if end <= prof.now:
                end = prof.now + OVERDUE
            prof.items.append((prof.now, end, frozenset(alloc.nodes.tolist()), prof._use(alloc)))
        return prof

    def copy(self) -> "ReferenceProfile":
        new = ReferenceProfile(self.cluster, self.now)
        new.items = list(self.items)
        return new

    @staticmethod
    def _use(alloc: Allocation) -> dict[int, int]:
        if alloc.bb_use is None:
            return {}
        return {b: int(v) for b, v in enumerate(alloc.bb_use.tolist()) if v}

    def _window(self, s: float, e: float) -> tuple[np.ndarray, np.ndarray]:
        busy: set[int] = set()
        points = {s}
        over = [it for it in self.items if it[0] < e and it[1] > s]
        for a, b, nodes, use in over:
            busy |= nodes
            if a > s:
                points.add(a)
        caps = self.cluster.bb_capacity.tolist()
        worst = [0] * len(caps)
        for p in points:
            used = [0] * len(caps)
            for a, b, nodes, use in over:
                if a <= p < b:
                    for j, v in use.items():
                        used[j] += v
            worst = [max(x, y) for x, y in zip(worst, used)]
        mask = np.array([i not in busy for i in range(self.cluster.n_compute)], dtype=bool)
        return mask, np.array([c - w for c, w in zip(caps, worst)], dtype=np.int64)

    def occupy(self, start: float, end: float, alloc: Allocation) -> None:
        start = max(float(start), self.now)
        mask, avail = self._window(start, end)
        if not mask[alloc.nodes].all():
            raise ProfileConflict("compute nodes not free")
        use = self._use(alloc)
        if any(avail[j] < v for j, v in use.items()):
            raise ProfileConflict("burst buffers over capacity")
        self.items.append((start, float(end), frozenset(alloc.nodes.tolist()), use))

    def _try(self, s: float, res: int, walltime: float, bb: int, storage: bool) -> Allocation | None:
        mask, avail = self._window(s, s + walltime)
        if int(mask.sum()) < res:
            return None
        if storage and bb > 0:
            if bb_slots(avail, bb) < res:
                return None
            nodes = select_nodes(mask, res)
            return Allocation.make(self.cluster.n_bb, nodes,
                                   place_bb(self.cluster.bb_preference, nodes, bb, avail), bb)
        return Allocation.make(self.cluster.n_bb, select_nodes(mask, res))

    def fits_now(self, res: int, walltime: float, bb: int = 0, storage: bool = True) -> bool:
        return self._try(self.now, res, walltime, bb, storage) is not None

    def alloc_now(self, res: int, walltime: float, bb: int = 0, storage: bool = True) -> Allocation | None:
        return self._try(self.now, res, walltime, bb, storage)

    def earliest(self, res: int, walltime: float, bb: int = 0, storage: bool = True,
                 not_before: float | None = None) -> tuple[float, Allocation] | None:
        t0 = self.now if not_before is None else max(float(not_before), self.now)
        candidates = sorted({t0} | {b for _, b, _, _ in self.items if t0 < b < INF})
        for s in candidates:
            alloc = self._try(s, res, walltime, bb, storage)
            if alloc is not None:
                return s, alloc
        return None
