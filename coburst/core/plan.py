"""Fast execution plans and queue-permutation evaluation for the optimising policies
(Kopański 2020, §3.2-3.4; used by :mod:`coburst.policies.maxutil`,
:mod:`coburst.policies.window` and :mod:`coburst.policies.plan`).

The optimisers evaluate hundreds or thousands of job orders per decision.  Two evaluators
do it much faster than rebuilding a :class:`~coburst.core.profile.Profile` each time, and
give exactly the same answers (tests/test_opt_plan.py, tests/test_opt_maxutil.py):

* :class:`BitProfile` -- the availability profile with every segment's free compute nodes
  as one Python integer bit mask (bit i = compute index i) and every segment's free BB
  bytes as a tuple.  A copy is a handful of shallow list copies (immutable rows), so a plan
  keeps a snapshot after every job; :meth:`BitProfile.earliest` / :meth:`BitProfile.occupy`
  answer as :meth:`Profile.earliest` / :meth:`Profile.occupy` (same node choice
  :func:`~coburst.core.placement.select_nodes`, same BB placement
  :func:`~coburst.core.placement.place_bb`, memoised per profile family);
* :class:`PlanEvaluator` -- execution plan of a permutation (each job at its earliest start
  in order, compute and BB reserved, Kopański 2020 §3.4), rebuilt only from the first
  position where the permutation differs from the last accepted one (snapshots of the
  prefix), and abandoned as soon as its partial score reaches a given bound (every
  objective is non-decreasing along the plan);
* :class:`NowFiller` -- greedy filling (Alg. 2) of a permutation at ``now`` as the maxutil
  objective needs it: which jobs start, with the started compute nodes as one bit mask;
  prefix states reused, and the old suffix result reused when the state after the swapped
  positions is unchanged.

:func:`candidate_orders` is the thesis' set of 9 initial permutations (end of §3.2).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from operator import add, sub
from typing import Callable, Sequence

import numpy as np

from coburst.core.placement import Allocation, place_bb, select_nodes
from coburst.core.profile import Profile
from coburst.core.state import Job

__all__ = ["BitProfile", "PlanEvaluator", "NowFiller", "candidate_orders", "plan_objective",
           "OBJECTIVES", "mask_of"]

INF = math.inf
_VEC = 48  # profiles with more segments screen start candidates with numpy


def mask_of(nodes) -> int:
    """Bit mask of compute indices."""
    m = 0
    for i in nodes:
        m |= 1 << int(i)
    return m


class _Cache:
    """Memoised node choice and BB placement of one cluster (shared by all copies)."""

    __slots__ = ("cluster", "n", "nbytes", "nodes", "bb")

    def __init__(self, cluster):
        self.cluster = cluster
        self.n = cluster.n_compute
        self.nbytes = (self.n + 7) // 8
        self.nodes: dict = {}
        self.bb: dict = {}

    def select(self, mask: int, res: int):
        """``(nodes array, nodes bit mask)`` chosen by :func:`select_nodes`."""
        key = (mask, res)
        hit = self.nodes.get(key)
        if hit is None:
            arr = np.unpackbits(np.frombuffer(mask.to_bytes(self.nbytes, "little"), np.uint8),
                                bitorder="little", count=self.n).astype(bool)
            nodes = select_nodes(arr, res)
            hit = self.nodes[key] = (nodes, mask_of(nodes.tolist()))
        return hit

    def place(self, nodes: np.ndarray, nmask: int, bb: int, avail: tuple):
        """``(bb_nodes array, use tuple)`` chosen by :func:`place_bb`."""
        key = (nmask, bb, avail)
        hit = self.bb.get(key)
        if hit is None:
            bb_nodes = place_bb(self.cluster.bb_preference, nodes, bb, np.array(avail, dtype=np.int64))
            use = np.bincount(bb_nodes, minlength=self.cluster.n_bb) * bb
            hit = self.bb[key] = (bb_nodes, tuple(use.tolist()))
        return hit


def _slots(avail, bb: int) -> int:
    s = 0
    for a in avail:
        s += a // bb
    return s


class BitProfile:
    """Availability profile over bit masks and tuples (module doc)."""

    __slots__ = ("cache", "now", "times", "free", "cnt", "bb", "tot")

    @classmethod
    def from_profile(cls, prof: Profile, cache: _Cache | None = None) -> "BitProfile":
        new = cls.__new__(cls)
        new.cache = cache or _Cache(prof.cluster)
        new.now = prof.now
        new.times = list(prof._times)
        packed = np.packbits(prof._free, axis=1, bitorder="little")
        new.free = [int.from_bytes(row.tobytes(), "little") for row in packed]
        new.cnt = list(prof._rows)
        new.bb = [tuple(r) for r in prof._bb.tolist()]
        new.tot = list(prof._bbtot)
        return new

    def copy(self) -> "BitProfile":
        new = BitProfile.__new__(BitProfile)
        new.cache = self.cache
        new.now = self.now
        new.times = self.times[:]
        new.free = self.free[:]
        new.cnt = self.cnt[:]
        new.bb = self.bb[:]
        new.tot = self.tot[:]
        return new

    def _split(self, t: float) -> int:
        times = self.times
        i = bisect_left(times, t)
        if i < len(times) and times[i] == t:
            return i
        times.insert(i, t)
        self.free.insert(i, self.free[i - 1])
        self.cnt.insert(i, self.cnt[i - 1])
        self.bb.insert(i, self.bb[i - 1])
        self.tot.insert(i, self.tot[i - 1])
        return i

    def earliest(self, res: int, walltime: float, bb: int = 0):
        """Earliest ``(start, nodes, nodes mask, bb_nodes, use)`` from now (``use``: bytes
        per BB node or None), as :meth:`Profile.earliest` with ``storage=True``; None if
        the request never fits."""
        times, free, cnt, tot = self.times, self.free, self.cnt, self.tot
        T = len(times)
        need = res * bb
        if T > _VEC:
            return self._earliest_vec(res, walltime, bb, need)
        k = 0
        while k < T:
            s = times[k]
            e = s + walltime
            last = (bisect_left(times, e, k) - 1) if e != INF else T - 1
            if last < k:
                last = k
            j = last
            while j >= k and cnt[j] >= res and tot[j] >= need:
                j -= 1
            if j >= k:
                k = j + 1
                continue
            m = free[k]
            for r in range(k + 1, last + 1):
                m &= free[r]
            if m.bit_count() >= res:
                if not bb:
                    nodes, nmask = self.cache.select(m, res)
                    return s, nodes, nmask, None, None
                rows = self.bb
                avail = rows[k] if last == k else tuple(map(min, *rows[k:last + 1]))
                if _slots(avail, bb) >= res:
                    nodes, nmask = self.cache.select(m, res)
                    bb_nodes, use = self.cache.place(nodes, nmask, bb, avail)
                    return s, nodes, nmask, bb_nodes, use
            k += 1
        return None

    def _earliest_vec(self, res: int, walltime: float, bb: int, need: int):
        """:meth:`earliest` with the candidate starts screened by numpy: a start row
        ``k`` is kept only if every segment of its window has enough free nodes and free
        BB bytes in total; candidates are then checked exactly in order."""
        times, free = self.times, self.free
        T = len(times)
        ta = np.array(times)
        ok = np.array(self.cnt) >= res
        if need:
            ok &= np.array(self.tot) >= need
        if walltime == INF:
            last = np.full(T, T - 1)
        else:
            last = np.searchsorted(ta, ta + walltime, "left") - 1
            np.maximum(last, np.arange(T), out=last)
        bad = np.empty(T + 1, dtype=np.int64)
        bad[0] = 0
        np.cumsum(~ok, out=bad[1:])
        cands = np.flatnonzero(bad[last + 1] == bad[:T])
        last = last.tolist()
        rows = self.bb
        for k in cands.tolist():
            lk = last[k]
            m = free[k]
            for r in range(k + 1, lk + 1):
                m &= free[r]
            if m.bit_count() >= res:
                if not bb:
                    nodes, nmask = self.cache.select(m, res)
                    return times[k], nodes, nmask, None, None
                avail = rows[k] if lk == k else tuple(map(min, *rows[k:lk + 1]))
                if _slots(avail, bb) >= res:
                    nodes, nmask = self.cache.select(m, res)
                    bb_nodes, use = self.cache.place(nodes, nmask, bb, avail)
                    return times[k], nodes, nmask, bb_nodes, use
        return None

    def occupy(self, start: float, end: float, nmask: int, n: int, use: tuple | None) -> None:
        """Take the nodes of ``nmask`` (``n`` of them) and ``use`` bytes per BB node
        during ``[start, end)`` (no conflict check: callers place what :meth:`earliest`
        found)."""
        ks = self._split(start)
        ke = self._split(end) if end != INF else len(self.times)
        free, cnt = self.free, self.cnt
        inv = ~nmask
        for r in range(ks, ke):
            free[r] &= inv
            cnt[r] -= n
        if use is not None:
            rows, tot = self.bb, self.tot
            u = sum(use)
            for r in range(ks, ke):
                rows[r] = tuple(map(sub, rows[r], use))
                tot[r] -= u


# ---------------------------------------------------------------------- objectives
def _sum(alpha):
    def f(score, wait, start):
        return score + wait ** alpha if alpha != 1 else score + wait
    return f


def _start(score, wait, start):
    return start if start > score else score


#: name -> (step(score, wait, start) -> new score, initial score); every step is
#: non-decreasing, so a partial score is a lower bound of the full one
OBJECTIVES: dict[str, Callable] = {"sum": _sum(1), "square": _sum(2), "cube": _sum(3), "start": _start}


def plan_objective(name: str) -> Callable:
    return OBJECTIVES[name]


class PlanEvaluator:
    """Execution plans of permutations of ``jobs`` over ``base`` (module doc).

    ``evaluate(perm, bound)`` returns the plan's score, or ``inf`` as soon as a partial
    score reaches ``bound`` (then the plan is not kept).  ``accept()`` makes the last fully
    evaluated permutation the reference whose prefix later calls reuse.  ``plans`` counts
    evaluations (whole or abandoned), ``placed`` the jobs placed.
    """

    def __init__(self, base: Profile, jobs: Sequence[Job], objective: str):
        self.jobs = list(jobs)
        self.step = OBJECTIVES[objective]
        root = BitProfile.from_profile(base)
        self.now = root.now
        self.req = [(j.res, j.walltime, j.bb, j.subtime) for j in self.jobs]
        n = len(self.jobs)
        self.ref_perm: list[int] | None = None
        self.ref_snaps: list = [(root, 0.0)] + [None] * n   # state before position i
        self.cand_perm: list[int] | None = None
        self.cand_snaps: list = [None] * (n + 1)
        self.plans = 0
        self.placed = 0

    def _place(self, prof: BitProfile, i: int):
        res, wall, bb, sub_ = self.req[i]
        found = prof.earliest(res, wall, bb)
        if found is None:
            return None
        s, nodes, nmask, bb_nodes, use = found
        prof.occupy(s, s + wall, nmask, res, use)
        return s

    def evaluate(self, perm: Sequence[int], bound: float = INF) -> float:
        self.plans += 1
        n = len(perm)
        ref = self.ref_perm
        k = 0
        if ref is not None:
            while k < n and ref[k] == perm[k]:
                k += 1
            if k == n:
                if self.ref_score >= bound:
                    return INF
                self.cand_perm, self.cand_snaps, self.cand_score = ref, self.ref_snaps, self.ref_score
                return self.ref_score
        self.cand_perm = None
        if self.cand_snaps is self.ref_snaps:
            self.cand_snaps = [None] * (n + 1)
        snaps = self.cand_snaps
        ref_snaps = self.ref_snaps
        for i in range(k + 1):
            snaps[i] = ref_snaps[i]
        prof, score = snaps[k]
        prof = prof.copy()
        step, req, now = self.step, self.req, self.now
        for pos in range(k, n):
            i = perm[pos]
            s = self._place(prof, i)
            self.placed += 1
            if s is None:
                return INF
            score = step(score, s - req[i][3], s)
            if score >= bound:
                return INF
            if pos + 1 < n:
                snaps[pos + 1] = (prof, score)
                prof = prof.copy()
        self.cand_perm = list(perm)
        self.cand_score = score
        return score

    def accept(self) -> None:
        """The last fully evaluated permutation becomes the reference."""
        if self.cand_perm is None:
            raise RuntimeError("accept() without a fully evaluated permutation")
        if self.cand_snaps is not self.ref_snaps:
            self.ref_snaps, self.cand_snaps = self.cand_snaps, [None] * len(self.cand_snaps)
        self.ref_perm, self.cand_perm = self.cand_perm, None
        self.ref_score = self.cand_score

    def plan(self, perm: Sequence[int]) -> list[tuple[float, Allocation]]:
        """The full plan of ``perm``: ``(start, allocation)`` per position (no reuse)."""
        prof = self.ref_snaps[0][0].copy()
        n_bb = prof.cache.cluster.n_bb
        out = []
        for i in perm:
            res, wall, bb, _ = self.req[i]
            found = prof.earliest(res, wall, bb)
            if found is None:
                out.append((INF, None))
                continue
            s, nodes, nmask, bb_nodes, use = found
            prof.occupy(s, s + wall, nmask, res, use)
            out.append((s, Allocation.make(n_bb, nodes, bb_nodes, bb if use is not None else 0)))
        return out


# ---------------------------------------------------------------------- filling at now
class NowFiller:
    """Greedy filling (Kopański 2020, Alg. 2) of permutations of ``jobs`` at ``now`` on
    ``base`` -- which jobs start and where -- as :func:`coburst.policies.base.fill` would
    decide on a copy of ``base`` (module doc).

    ``evaluate(perm)`` returns ``(started positions, started job indices)``; the per-position
    states of the last accepted permutation are reused from the first changed position on.
    """

    def __init__(self, base: Profile, jobs: Sequence[Job]):
        self.jobs = list(jobs)
        self.cache = _Cache(base.cluster)
        bp = BitProfile.from_profile(base, self.cache)
        times = bp.times
        now = bp.now
        self.n_bb = base.cluster.n_bb
        # prefix AND of free masks / prefix min of BB rows from now
        cf, cb = [], []
        m, b = -1, None
        for r in range(len(times)):
            m &= bp.free[r]
            b = bp.bb[r] if b is None else tuple(map(min, b, bp.bb[r]))
            cf.append(m)
            cb.append(b)
        self.times = times
        self.bbrows = np.array(bp.bb, dtype=np.int64).reshape(len(times), self.n_bb)
        # BB free from now never decreases: the per-row minimum is row 0 (common case)
        self.bb_monotone = bool(len(times) < 2 or (np.diff(self.bbrows, axis=0) >= 0).all())
        self.req = []
        for j in self.jobs:
            e = now + j.walltime
            k = (bisect_left(times, e) - 1) if e != INF else len(times) - 1
            if k < 0:
                k = 0
            self.req.append((j.res, j.bb, cf[k], cb[k], k, j.walltime))
        self.free_now = cf[0]
        self.min_res = min((j.res for j in self.jobs), default=0)
        self.evals = 0
        self.ref_perm: list[int] | None = None
        self.ref_states: list = []
        self.cand_states: list = []
        self.cand_perm = None

    def _bb_avail(self, k: int, cb: tuple, used: tuple, ends: tuple):
        """Free BB bytes per node over rows 0..k given the jobs started so far (their
        ``use`` and end rows in ``ends``)."""
        if self.bb_monotone or not ends:
            return tuple(map(sub, cb, used)) if ends else cb
        rows = self.bbrows[:k + 1].copy()
        for use, end in ends:
            r = bisect_left(self.times, end)
            if r > 0:
                rows[:min(r, k + 1)] -= np.array(use, dtype=np.int64)
        return tuple(rows.min(axis=0).tolist())

    def evaluate(self, perm: Sequence[int]) -> list[int]:
        """Job indices started, in order."""
        self.evals += 1
        n = len(perm)
        ref = self.ref_perm
        k = 0
        states = self.cand_states = [None] * (n + 1)
        if ref is not None:
            while k < n and ref[k] == perm[k]:
                k += 1
            if k == n:
                self.cand_perm = list(perm)
                self.cand_states = self.ref_states
                return list(self.ref_states[n][3])
            for i in range(k + 1):
                states[i] = self.ref_states[i]
            state = self.ref_states[k]
        else:
            state = (0, None, (), ())
            states[0] = state
        used_mask, used, ends, started = state
        req, cache, free_now, min_res = self.req, self.cache, self.free_now, self.min_res
        now = self.times[0]
        full = (free_now & ~used_mask).bit_count() < min_res
        for pos in range(k, n):
            if full:
                for p in range(pos, n):
                    states[p + 1] = state
                break
            i = perm[pos]
            res, bb, cf, cb, kr, wall = req[i]
            avail = cf & ~used_mask
            if avail.bit_count() >= res:
                if bb:
                    av = cb if used is None else self._bb_avail(kr, cb, used, ends)
                    if _slots(av, bb) >= res:
                        nodes, nmask = cache.select(avail, res)
                        bb_nodes, use = cache.place(nodes, nmask, bb, av)
                        used_mask |= nmask
                        used = use if used is None else tuple(map(add, used, use))
                        ends = ends + ((use, now + wall),)
                        started = started + (i,)
                        state = (used_mask, used, ends, started)
                        full = (free_now & ~used_mask).bit_count() < min_res
                else:
                    nodes, nmask = cache.select(avail, res)
                    used_mask |= nmask
                    started = started + (i,)
                    state = (used_mask, used, ends, started)
                    full = (free_now & ~used_mask).bit_count() < min_res
            states[pos + 1] = state
        self.cand_perm = list(perm)
        return list(states[n][3])

    def accept(self) -> None:
        self.ref_perm, self.ref_states = self.cand_perm, self.cand_states


# ---------------------------------------------------------------------- candidates
def candidate_orders(jobs: Sequence[Job]) -> list[list[int]]:
    """The 9 initial permutations of Kopański 2020 (end of §3.2), as index lists: queue
    order; ascending / descending requested nodes; ascending / descending BB per node;
    ascending / descending BB-per-node / nodes ratio; ascending / descending walltime.
    Sorts are stable (queue order on ties, also for the descending ones)."""
    idx = list(range(len(jobs)))
    keys = [lambda i: jobs[i].res, lambda i: jobs[i].bb, lambda i: jobs[i].bb / jobs[i].res,
            lambda i: jobs[i].walltime]
    out = [idx]
    for key in keys:
        out.append(sorted(idx, key=key))
        out.append(sorted(idx, key=key, reverse=True))
    return out
