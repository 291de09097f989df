"""Fast execution plans and queue-permutation evaluation for the optimising policies
(Kopański 2020, §3.2-3.4; used by :mod:`coburst.policies.maxutil`,
:mod:`coburst.policies.window` and :mod:`coburst.policies.plan`).

The optimisers evaluate hundreds or thousands of job orders per decision.  Two evaluators
do it much faster than rebuilding a :class:`~coburst.core.profile.Profile` each time, and
give exactly the same answers (tests/test_opt_plan.py, tests/test_opt_maxutil.py):

* :class:`BitProfile` -- the availability profile with every segment's free compute nodes
  as one Python integer bit mask (bit i = compute index i) and every segment's free BB
  bytes as a tuple, with the node choice of :func:`~coburst.core.placement.select_nodes`
  (:func:`select_mask` over bit masks) and the BB placement of
  :func:`~coburst.core.placement.place_bb` (per chassis run of compute nodes), both
  memoised (:class:`_Cache`);
* :class:`PlanEvaluator` -- execution plan of a permutation (each job at its earliest start
  in order, compute and BB reserved, Kopański 2020 §3.4) in the compiled kernel
  :mod:`coburst.core.plan_kernel`, rebuilt only from the first position where the
  permutation differs from the last accepted one (snapshots of the profile before every
  8th position, the rest replayed in place), abandoned as soon as its partial score reaches a given bound (every
  objective is non-decreasing along the plan), each job's earliest-start search started
  at a breakpoint before which nothing can fit (two lower bounds, see the class doc);
* :class:`NowFiller` -- greedy filling (Alg. 2) of a permutation at ``now`` as the maxutil
  objective needs it: which jobs start, in the compiled kernel
  (:func:`~coburst.core.plan_kernel.now_fill`, node masks as 64-bit words); prefix states
  reused, and the old suffix result reused when the state after the swapped positions is
  unchanged.

:func:`candidate_orders` is the thesis' set of 9 initial permutations (end of §3.2).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from itertools import repeat
from operator import floordiv
from typing import Callable, Sequence

import numpy as np

from coburst.core.placement import Allocation, select_mask  # noqa: F401 - re-exported
from coburst.core.profile import Profile
from coburst.core.state import Job

__all__ = ["BitProfile", "PlanEvaluator", "warm_kernel", "NowFiller", "candidate_orders", "plan_objective",
           "OBJECTIVES", "mask_of", "bits_of", "select_mask", "place_list"]

INF = math.inf


def mask_of(nodes) -> int:
    """Bit mask of compute indices."""
    m = 0
    for i in nodes:
        m |= 1 << int(i)
    return m


def bits_of(mask: int) -> list[int]:
    """Indices of the set bits of ``mask``, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def place_list(preference, nodes: Sequence[int], bb: int, avail: Sequence[int]) -> list[int] | None:
    """:func:`~coburst.core.placement.place_bb` over lists (same placement)."""
    slots = [a // bb for a in avail]
    n = len(nodes)
    if sum(slots) < n:
        return None
    out = []
    pos = 0
    while pos < n:
        pref = preference[nodes[pos]]
        run_end = pos + 1
        while run_end < n and preference[nodes[run_end]] is pref:
            run_end += 1
        need = run_end - pos
        for b in pref:
            sb = slots[b]
            if sb:
                take = sb if sb < need else need
                out.extend([b] * take)
                slots[b] = sb - take
                pos += take
                need -= take
                if not need:
                    break
        if need:  # unreachable given the slot test above
            return None
    return out


class _Cache:
    """Memoised node choice and BB use of one cluster (shared by all copies)."""

    __slots__ = ("cluster", "n", "n_bb", "pref", "segs", "seg_of", "nodes", "bb")

    def __init__(self, cluster):
        self.cluster = cluster
        self.n = cluster.n_compute
        self.n_bb = cluster.n_bb
        self.pref = cluster.bb_preference
        # maximal runs of consecutive compute indices sharing one preference list, as
        # (bit mask, preference): place_bb serves the nodes in index order, each taking
        # the first BB node of its list with room, so serving a run's nodes together
        # gives the same placement
        segs: list = []
        for i, pr in enumerate(self.pref):
            if segs and segs[-1][1] is pr:
                segs[-1][0] |= 1 << i
            else:
                segs.append([1 << i, pr])
        self.segs = [tuple(x) for x in segs]
        self.seg_of = [k for k, (smask, _) in enumerate(self.segs) for _ in range(smask.bit_count())]
        self.nodes: dict = {}
        self.bb: dict = {}

    def select(self, mask: int, res: int) -> int:
        """Bit mask of the nodes :func:`select_nodes` chooses among ``mask``."""
        key = (mask, res)
        hit = self.nodes.get(key)
        if hit is None:
            hit = self.nodes[key] = select_mask(mask, res)
        return hit

    def place(self, nmask: int, bb: int, avail: tuple) -> tuple:
        """Bytes taken on every BB node when :func:`place_bb` places ``bb`` bytes for each
        node of ``nmask`` in ``avail`` (the caller checked that they fit)."""
        key = (nmask, bb, avail)
        hit = self.bb.get(key)
        if hit is None:
            slots = [a // bb for a in avail]
            use = [0] * self.n_bb
            segs, seg_of = self.segs, self.seg_of
            x = nmask
            while x:  # the runs holding chosen nodes, in index order
                smask, pref = segs[seg_of[(x & -x).bit_length() - 1]]
                need = (x & smask).bit_count()
                x &= ~smask
                for b in pref:
                    sb = slots[b]
                    if sb:
                        take = sb if sb < need else need
                        use[b] += take * bb
                        slots[b] = sb - take
                        need -= take
                        if not need:
                            break
            hit = self.bb[key] = tuple(use)
        return hit


def _slots(avail, bb: int) -> int:
    return sum(map(floordiv, avail, repeat(bb)))


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


# ---------------------------------------------------------------------- objectives
def _sum(score, wait, start):
    return score + wait


def _square(score, wait, start):
    return score + wait * wait


def _cube(score, wait, start):
    return score + wait * wait * wait


def _start(score, wait, start):
    return start if start > score else score


#: name -> (step(score, wait, start) -> new score, initial score); every step is
#: non-decreasing, so a partial score is a lower bound of the full one
OBJECTIVES: dict[str, Callable] = {"sum": _sum, "square": _square, "cube": _cube, "start": _start}


def plan_objective(name: str) -> Callable:
    return OBJECTIVES[name]


#: the plan kernel keeps the profile before every SNAPSHOT_EVERY-th position of the reference
#: plan (a re-plan from position k starts at the snapshot before it and replays the
#: reference's placements up to k, in place)
SNAPSHOT_EVERY = 8


def bb_segments(bb_preference, nbb: int) -> tuple:
    """The compiled kernels' view of the BB preference lists: runs of consecutive compute
    indices sharing one list, as (starts, ends, the lists (each of the ``nbb`` BB nodes), lengths)."""
    starts, ends, prefs = [], [], []
    for i, pr in enumerate(bb_preference):
        if prefs and prefs[-1] == pr and ends[-1] == i:
            ends[-1] = i + 1
        else:
            starts.append(i)
            ends.append(i + 1)
            prefs.append(pr)
    return (np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64),
            np.array([list(p) for p in prefs], dtype=np.int64).reshape(len(prefs), nbb),
            np.array([len(p) for p in prefs], dtype=np.int64))


class PlanEvaluator:
    """Execution plans of permutations of ``jobs`` over ``base`` (Kopański 2020, §3.4):
    each job, in order, at its earliest start with compute nodes and burst buffers
    reserved.  The plans run in the compiled kernel :mod:`coburst.core.plan_kernel`.

    ``evaluate(perm, bound)`` returns the plan's score, or ``inf`` as soon as a partial
    score reaches ``bound`` (every objective is non-decreasing along a plan; the plan is
    then not kept).  ``accept()`` makes the last fully evaluated permutation the reference:
    a later permutation is re-planned only from the first position where it differs from
    the reference (the profile before every ``SNAPSHOT_EVERY``-th position is kept, the
    reference's placements after it are replayed).  ``plan(perm)`` gives the
    whole plan, ``(start, allocation)`` per position.  ``plans`` counts evaluations (whole
    or abandoned), ``placed`` the jobs placed.

    Each earliest-start search starts at the latest of two lower bounds that hold in every
    plan (earliest starts only grow as occupations are added, and wherever a job fits,
    every job it dominates -- no more nodes, no longer walltime, no larger BB request per
    node -- fits too): the job's earliest start on the base profile, and the start of every
    job it dominates already placed in the same plan.  (A search returns the least
    breakpoint at which the job fits, so the bounds carry between profiles.)
    """

    def __init__(self, base: Profile, jobs: Sequence[Job], objective: str):
        from coburst.core import plan_kernel as K

        self._k = K
        self.jobs = list(jobs)
        self.objective = objective
        self._code = {"sum": K.SUM, "square": K.SQUARE, "cube": K.CUBE, "start": K.START}[objective]
        cluster = base.cluster
        self.cluster = cluster
        self.now = float(base.now)
        n = self.n = len(self.jobs)
        nc, nbb = cluster.n_compute, cluster.n_bb
        W = (nc + 63) // 64
        T0 = len(base._times)
        tmax = T0 + 2 * n + 1
        # base profile as kernel rows
        packed = np.packbits(np.asarray(base._free, dtype=bool), axis=1, bitorder="little")
        padded = np.zeros((T0, W * 8), dtype=np.uint8)
        padded[:, :packed.shape[1]] = packed
        nsnap = n // SNAPSHOT_EVERY + 1
        self.S_times = np.empty((2, nsnap, tmax))
        self.S_free = np.empty((2, nsnap, tmax, W), dtype=np.uint64)
        self.S_cnt = np.empty((2, nsnap, tmax), dtype=np.int64)
        self.S_bb = np.empty((2, nsnap, tmax, nbb), dtype=np.int64)
        self.S_tot = np.empty((2, nsnap, tmax), dtype=np.int64)
        self.S_T = np.zeros((2, nsnap), dtype=np.int64)
        self.work = (np.empty(tmax), np.empty((tmax, W), dtype=np.uint64), np.empty(tmax, dtype=np.int64),
                     np.empty((tmax, nbb), dtype=np.int64), np.empty(tmax, dtype=np.int64))
        self.S_times[0, 0, :T0] = base._times
        self.S_free[0, 0, :T0] = padded.view("<u8")
        self.S_cnt[0, 0, :T0] = base._rows
        self.S_bb[0, 0, :T0] = np.asarray(base._bb, dtype=np.int64).reshape(T0, nbb)
        self.S_tot[0, 0, :T0] = base._bbtot
        self.S_T[0, 0] = T0
        self.refslot = np.zeros(nsnap, dtype=np.int64)
        self.R_start = np.zeros(n)
        self.R_mask = np.zeros((n, W), dtype=np.uint64)
        self.R_use = np.zeros((n, nbb), dtype=np.int64)
        self.R_score = np.zeros(n + 1)
        self.C_start = np.zeros(n)
        self.C_score = np.zeros(n + 1)
        self.C_mask = np.zeros((n, W), dtype=np.uint64)
        self.C_avail = np.zeros((n, nbb), dtype=np.int64)
        self.C_use = np.zeros((n, nbb), dtype=np.int64)
        self.res = np.array([j.res for j in self.jobs], dtype=np.int64)
        self.wall = np.array([j.walltime for j in self.jobs], dtype=np.float64)
        self.bbq = np.array([j.bb for j in self.jobs], dtype=np.int64)
        self.sub = np.array([j.subtime for j in self.jobs], dtype=np.float64)
        self.seg = bb_segments(cluster.bb_preference, nbb)
        # jobs that job i dominates (no more nodes, walltime or BB per node)
        if n:
            r, w, b = self.res, self.wall, self.bbq
            dom = (r[None, :] <= r[:, None]) & (w[None, :] <= w[:, None]) & (b[None, :] <= b[:, None])
            np.fill_diagonal(dom, False)
            self.dom_ptr = np.concatenate([[0], np.cumsum(dom.sum(axis=1))]).astype(np.int64)
            self.dom_idx = np.nonzero(dom)[1].astype(np.int64)
            self.est0 = K.base_earliest(self.S_times[0, 0], self.S_free[0, 0], self.S_cnt[0, 0], self.S_bb[0, 0],
                                        self.S_tot[0, 0], T0, self.res, self.wall, self.bbq, nc, *self.seg)
        else:
            self.dom_ptr = np.zeros(1, dtype=np.int64)
            self.dom_idx = np.zeros(0, dtype=np.int64)
            self.est0 = np.zeros(0)
        self.ref_perm: list[int] | None = None
        self.ref_score = 0.0
        self.cand_perm: list[int] | None = None
        self.cand_k = 0
        self.cand_score = 0.0
        self.plans = 0
        self.placed = 0

    def _run(self, perm, k: int, bound: float, keep_going: bool) -> float:
        score, placed = self._k.evaluate(
            np.asarray(perm, dtype=np.int64), k, bound, self._code, self.now, self.cluster.n_compute,
            SNAPSHOT_EVERY, self.refslot, self.S_times, self.S_free, self.S_cnt, self.S_bb, self.S_tot, self.S_T,
            *self.work, self.R_start, self.R_mask, self.R_use, self.R_score, self.C_start, self.C_score,
            self.C_mask, self.C_avail, self.C_use, self.res, self.wall, self.bbq, self.sub, self.est0,
            self.dom_ptr, self.dom_idx, *self.seg, keep_going)
        self.placed += placed
        return score

    def evaluate(self, perm: Sequence[int], bound: float = INF) -> float:
        self.plans += 1
        n = self.n
        ref = self.ref_perm
        k = 0
        if ref is not None:
            while k < n and ref[k] == perm[k]:
                k += 1
            if k == n:
                if self.ref_score >= bound:
                    return INF
                self.cand_perm, self.cand_k, self.cand_score = ref, n, self.ref_score
                return self.ref_score
        self.cand_perm = None
        if n == 0:
            score = 0.0
        else:
            score = self._run(perm, k, bound, False)
            if score == INF:
                return INF
        self.cand_perm, self.cand_k, self.cand_score = list(perm), k, score
        return score

    def accept(self) -> None:
        """The last fully evaluated permutation becomes the reference."""
        if self.cand_perm is None:
            raise RuntimeError("accept() without a fully evaluated permutation")
        k = self.cand_k
        if k < self.n:
            self.refslot[k // SNAPSHOT_EVERY + 1:] ^= 1
            self.R_start[k:] = self.C_start[k:]
            self.R_mask[k:] = self.C_mask[k:]
            self.R_use[k:] = self.C_use[k:]
            self.R_score[k + 1:] = self.C_score[k + 1:]
        self.ref_perm, self.cand_perm = self.cand_perm, None
        self.ref_score = self.cand_score

    def plan(self, perm: Sequence[int]) -> list[tuple[float, Allocation]]:
        """The full plan of ``perm``: ``(start, allocation)`` per position (a job that never
        fits: ``(inf, None)``, the next ones still placed); the reference is unchanged."""
        self.cand_perm = None
        if not self.n:
            return []
        self._run(perm, 0, INF, True)
        cl = self.cluster
        out = []
        for pos, i in enumerate(perm):
            s = float(self.C_start[pos])
            if s == INF:
                out.append((INF, None))
                continue
            words = self.C_mask[pos].astype("<u8").view(np.uint8)
            nodes = np.nonzero(np.unpackbits(words, bitorder="little")[:cl.n_compute])[0].tolist()
            bb = int(self.bbq[i])
            bb_nodes = place_list(cl.bb_preference, nodes, bb, self.C_avail[pos].tolist()) if bb else None
            out.append((s, Allocation.make(cl.n_bb, nodes, bb_nodes, bb)))
        return out


def warm_kernel() -> None:
    """Compile (first use on a machine, ~20-30 s) or load (later, ~1 s) the plan kernel now,
    on a tiny plan with the argument types of real ones -- so that a simulation's first
    plan-based decision does not spend that time inside a scheduler time-out.  Once per
    process."""
    global _WARM
    if _WARM:
        return
    from coburst.core.cluster import Cluster

    cluster = Cluster.build(4, [1000])
    jobs = [Job("a", 0.0, 2, 10.0, 100), Job("b", 0.0, 3, 5.0, 0), Job("c", 1.0, 1, 7.0, 50)]
    ev = PlanEvaluator(Profile(cluster, 0.0), jobs, "square")
    ev.evaluate([0, 1, 2])
    ev.accept()
    ev.evaluate([2, 1, 0], 1.0)
    ev.plan([1, 0, 2])
    nf = NowFiller(Profile(cluster, 0.0), jobs)
    nf.evaluate([0, 1, 2])
    nf.accept()
    nf.evaluate([2, 1, 0])
    _WARM = True


_WARM = False


# ---------------------------------------------------------------------- filling at now
class NowFiller:
    """Greedy filling (Kopański 2020, Alg. 2) of permutations of ``jobs`` at ``now`` on
    ``base`` -- which jobs start and where -- as :func:`coburst.policies.base.fill` would
    decide on a copy of ``base`` (module doc), in the compiled kernel
    :func:`coburst.core.plan_kernel.now_fill` (node masks as 64-bit words: any number of
    nodes).

    ``evaluate(perm)`` returns the started job indices, in order; the filling of the last
    accepted permutation is reused up to the first changed position, and after the last
    changed position once the used nodes and BB bytes equal the reference's there (when
    the free BB never decreases from now).  ``accept()`` makes the last evaluated
    permutation the reference (buffers swapped, no copy).
    """

    def __init__(self, base: Profile, jobs: Sequence[Job]):
        from coburst.core import plan_kernel as K

        self._fill = K.now_fill
        self.jobs = list(jobs)
        cluster = base.cluster
        n = self.n = len(self.jobs)
        nc, nbb = cluster.n_compute, cluster.n_bb
        W = (nc + 63) // 64
        times = list(base._times)
        now = float(base.now)
        packed = np.packbits(np.asarray(base._free, dtype=bool), axis=1, bitorder="little")
        padded = np.zeros((len(times), W * 8), dtype=np.uint8)
        padded[:, :packed.shape[1]] = packed
        rows = padded.view("<u8").astype(np.uint64)
        cf = np.bitwise_and.accumulate(rows, axis=0)     # prefix AND of free words from now
        self.bbrows = np.ascontiguousarray(np.asarray(base._bb, dtype=np.int64).reshape(len(times), nbb))
        # BB free from now never decreases: every job sees row 0 minus the started jobs' use
        self.bb_monotone = bool(len(times) < 2 or (np.diff(self.bbrows, axis=0) >= 0).all())
        kr = np.zeros(n, dtype=np.int64)
        endr = np.zeros(n, dtype=np.int64)
        for i, j in enumerate(self.jobs):
            e = now + j.walltime
            r = (bisect_left(times, e) - 1) if e != INF else len(times) - 1
            kr[i] = r if r > 0 else 0
            endr[i] = bisect_left(times, e)
        self.kr, self.endr = kr, endr
        self.CF = np.ascontiguousarray(cf[kr]) if n else np.zeros((0, W), dtype=np.uint64)
        self.free_now = np.ascontiguousarray(cf[0])
        self.av0 = self.bbrows[0].copy()
        self.res = np.array([j.res for j in self.jobs], dtype=np.int64)
        self.bbq = np.array([j.bb for j in self.jobs], dtype=np.int64)
        self.min_res = min((j.res for j in self.jobs), default=0)
        self.seg = bb_segments(cluster.bb_preference, nbb)
        self.n_nodes = nc
        self.bufs = [self._buffers(n, W, nbb), self._buffers(n, W, nbb)]   # [reference, candidate]
        self.out = np.zeros(max(n, 1), dtype=np.int64)
        self.evals = 0
        self.ref_perm: np.ndarray | None = None
        self.ref_started: list[int] = []
        self.cand_perm: np.ndarray | None = None
        self.cand_started: list[int] = []
        self.cand_fresh = False

    @staticmethod
    def _buffers(n: int, W: int, nbb: int) -> tuple:
        return (np.zeros(n + 1, dtype=np.int64), np.zeros(max(n, 1), dtype=np.int64),
                np.zeros((n + 1, W), dtype=np.uint64), np.zeros((n + 1, nbb), dtype=np.int64),
                np.zeros((n + 1, nbb), dtype=np.int64), np.zeros(n + 1, dtype=np.int64),
                np.zeros((n + 1, nbb), dtype=np.int64))

    def evaluate(self, perm: Sequence[int]) -> list[int]:
        """Job indices started, in order."""
        self.evals += 1
        n = self.n
        p = np.array(perm, dtype=np.int64)
        ref = self.ref_perm
        if ref is None:
            k, m = 0, n + 1
        else:
            diff = np.flatnonzero(ref != p)
            if not diff.size:
                self.cand_perm, self.cand_started, self.cand_fresh = ref, self.ref_started, False
                return list(self.ref_started)
            k, m = int(diff[0]), int(diff[-1]) + 1
        t = self._fill(p, k, m, self.bb_monotone, self.CF, self.free_now, self.min_res, self.res, self.bbq,
                       self.kr, self.endr, self.bbrows, self.av0, self.n_nodes, *self.bufs[0], *self.bufs[1],
                       *self.seg, self.out)
        started = self.out[:t].tolist()
        self.cand_perm, self.cand_started, self.cand_fresh = p, started, True
        return list(started)

    def start(self, profile: Profile, perm: Sequence[int], decisions) -> None:
        """Start on ``profile`` (a copy of the base or the base itself) the jobs greedy
        filling of ``perm`` starts, with the nodes and BB placement of the filling --
        what :func:`coburst.policies.base.fill` decides, without its profile queries (on
        1000 nodes, rebuilding the profile's prefix after every start was most of a
        plan-based decision)."""
        self.evaluate(perm)
        self.accept()
        cnt, flag, mask, _, _, _, av = self.bufs[0]
        cl = profile.cluster
        now = profile.now
        nc = cl.n_compute
        prev = np.zeros(mask.shape[1], dtype=np.uint64)
        s = 0
        for pos in range(self.n):
            if not flag[pos]:
                continue
            s += 1
            job = self.jobs[perm[pos]]
            words = (mask[s] & ~prev).astype("<u8").view(np.uint8)
            prev = mask[s]
            nodes = np.nonzero(np.unpackbits(words, bitorder="little")[:nc])[0].tolist()
            bb = job.bb
            bb_nodes = place_list(cl.bb_preference, nodes, bb, av[s].tolist()) if bb else None
            alloc = Allocation.make(cl.n_bb, nodes, bb_nodes, bb)
            profile.occupy(now, now + job.walltime, alloc)
            decisions.start(job, alloc)

    def accept(self) -> None:
        """The last evaluated permutation becomes the reference."""
        if self.cand_perm is None:
            raise RuntimeError("accept() without an evaluated permutation")
        if self.cand_fresh:
            self.bufs.reverse()
            self.cand_fresh = False
        self.ref_perm, self.ref_started = self.cand_perm, self.cand_started


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
