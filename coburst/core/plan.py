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
  answer as :meth:`Profile.earliest` / :meth:`Profile.occupy` (same node choice as
  :func:`~coburst.core.placement.select_nodes`, :func:`select_mask` over bit masks; same
  BB placement as :func:`~coburst.core.placement.place_bb`, per chassis run of compute
  nodes; both memoised per profile family);
* :class:`PlanEvaluator` -- execution plan of a permutation (each job at its earliest start
  in order, compute and BB reserved, Kopański 2020 §3.4), rebuilt only from the first
  position where the permutation differs from the last accepted one (snapshots of the
  prefix), abandoned as soon as its partial score reaches a given bound (every
  objective is non-decreasing along the plan), each job's earliest-start search started
  at a breakpoint before which nothing can fit (three lower bounds, see the class doc);
* :class:`NowFiller` -- greedy filling (Alg. 2) of a permutation at ``now`` as the maxutil
  objective needs it: which jobs start, with the started compute nodes as one bit mask;
  prefix states reused, and the old suffix result reused when the state after the swapped
  positions is unchanged.

:func:`candidate_orders` is the thesis' set of 9 initial permutations (end of §3.2).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from itertools import repeat
from operator import add, floordiv, sub
from typing import Callable, Sequence

import numpy as np

from coburst.core.placement import Allocation
from coburst.core.profile import Profile
from coburst.core.state import Job

__all__ = ["BitProfile", "PlanEvaluator", "NowFiller", "candidate_orders", "plan_objective",
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


def select_mask(mask: int, count: int) -> int | None:
    """:func:`~coburst.core.placement.select_nodes` over a bit mask: the chosen nodes as a
    bit mask (same choice: the smallest run of consecutive free indices that fits, lowest
    index first; else the longest runs first, lowest index on ties, the last one cut), or
    None when fewer than ``count`` are free."""
    c = mask.bit_count()
    if c < count:
        return None
    if c == count:
        return mask
    runs = []   # (start, length) in index order
    x = mask
    best_s = best_l = -1
    while x:
        low = x & -x
        y = x + low                  # clears the lowest run of ones
        ln = (x & ~y).bit_count()
        s = low.bit_length() - 1
        runs.append((s, ln))
        if ln >= count and (best_l < 0 or ln < best_l):
            best_s, best_l = s, ln
        x &= y
    if best_l >= 0:
        return ((1 << count) - 1) << best_s
    runs.sort(key=lambda r: (-r[1], r[0]))
    out, left = 0, count
    for s, ln in runs:
        take = ln if ln < left else left
        out |= ((1 << take) - 1) << s
        left -= take
        if not left:
            break
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

    def earliest(self, res: int, walltime: float, bb: int = 0, k: int = 0):
        """Earliest ``(start, nodes mask, avail, use)`` from now (``avail``: free bytes of
        every BB node over the window, ``use``: bytes taken on each; both None without BB), as :meth:`Profile.earliest` with
        ``storage=True``; None if the request never fits.  ``k``: index of the first
        breakpoint to try (the caller knows every earlier start fails)."""
        times, free, cnt, tot = self.times, self.free, self.cnt, self.tot
        T = len(times)
        need = res * bb
        cache = self.cache
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
                    return s, cache.select(m, res), None, None
                rows = self.bb
                avail = rows[k] if last == k else tuple(map(min, *rows[k:last + 1]))
                if _slots(avail, bb) >= res:
                    nmask = cache.select(m, res)
                    return s, nmask, avail, cache.place(nmask, bb, avail)
            k += 1
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


def _first_after(times: list, wall: float, h: float) -> int:
    """Index of the first breakpoint ``t`` with ``t + wall > h`` (exactly as the scan adds)."""
    k = bisect_right(times, h - wall)
    while k > 0 and times[k - 1] + wall > h:
        k -= 1
    T = len(times)
    while k < T and times[k] + wall <= h:
        k += 1
    return k


class PlanEvaluator:
    """Execution plans of permutations of ``jobs`` over ``base`` (module doc).

    ``evaluate(perm, bound)`` returns the plan's score, or ``inf`` as soon as a partial
    score reaches ``bound`` (then the plan is not kept).  ``accept()`` makes the last fully
    evaluated permutation the reference whose prefix later calls reuse.  ``plans`` counts
    evaluations (whole or abandoned), ``placed`` the jobs placed.

    Earliest-start searches do not start from now when the reference plan tells where they
    cannot succeed.  Let ``P_c`` be the candidate's profile before position ``p`` (job
    ``z``) and ``P_r`` the reference's profile before the position ``q`` of ``z`` in the
    reference plan, where ``z`` got its earliest start ``s_r``.  Every occupation of
    ``P_r`` that ``P_c`` lacks (same job, same start, nodes and BB use) starts at or after
    some date ``h``; before ``h``, ``P_c`` has at most the free resources of ``P_r``.  Any
    start ``t < s_r`` with ``t + walltime <= h`` fails in ``P_r``, hence in ``P_c`` (the
    feasibility of a window only grows with free nodes and free BB bytes), so the search
    starts at the first breakpoint with ``t >= s_r`` or ``t + walltime > h``, and it
    returns what a search from now returns.  ``h`` is known when ``q == p`` (tracked along
    the plan from the first changed position ``k``: the earliest start among the reference
    occupations not in the candidate), when ``q <= k`` (``P_r``'s occupations are all in
    ``P_c``: ``h = inf``) and when ``p == k`` (the starts of reference positions
    ``k..q-1``); otherwise this bound does not apply.

    Two more lower bounds hold in every plan (earliest starts only grow as occupations are
    added, and wherever a job fits, every job it dominates -- no more nodes, no longer
    walltime, no larger BB request per node -- fits too): the job's earliest start on the
    base profile, and the start of every job it dominates already placed in the same plan.
    The search starts at the latest of the bounds.  (A search returns the least date at
    which the job fits, always a breakpoint, so the bounds carry between profiles whose
    breakpoints differ.)
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
        self.ref_place: list = [None] * n                   # (start, nodes mask, use) per position
        self.ref_pos: list = [0] * n                        # job -> position
        self.cand_perm: list[int] | None = None
        self.cand_snaps: list = [None] * (n + 1)
        self.cand_place: list = [None] * n
        self.plans = 0
        self.placed = 0
        self.est0: list = [None] * n   # earliest start of each job on the base profile
        # jobs that job i dominates (no more nodes, walltime or BB per node): i cannot
        # start before any of them already placed in the same plan
        req = self.req
        self.dom = [[y for y in range(n) if y != x and req[y][0] <= req[x][0] and req[y][1] <= req[x][1]
                     and req[y][2] <= req[x][2]] for x in range(n)]

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
                self.cand_place = self.ref_place
                return self.ref_score
        self.cand_perm = None
        if self.cand_snaps is self.ref_snaps:
            self.cand_snaps = [None] * (n + 1)
            self.cand_place = [None] * n
        snaps, place = self.cand_snaps, self.cand_place
        ref_snaps, ref_place = self.ref_snaps, self.ref_place
        snaps[:k + 1] = ref_snaps[:k + 1]
        place[:k] = ref_place[:k]
        prof, score = snaps[k]
        prof = prof.copy()
        step, req, now = self.step, self.req, self.now
        ref_pos, est0, root, dom = self.ref_pos, self.est0, ref_snaps[0][0], self.dom
        cst = [-INF] * n     # start of every job placed so far in this plan
        for p in range(k):
            cst[perm[p]] = place[p][0]
        cpos = {}            # job -> candidate position, for positions >= k
        dfree = {}           # reference occupations (job -> start) the candidate lacks
        h = INF              # min(dfree.values())
        have_ref = ref is not None
        for pos in range(k, n):
            i = perm[pos]
            res, wall, bb, sub_ = req[i]
            e0 = est0[i]
            if e0 is None:
                found = root.earliest(res, wall, bb)
                e0 = est0[i] = found[0] if found is not None else INF
            for y in dom[i]:
                sy = cst[y]
                if sy > e0:
                    e0 = sy
            lo = bisect_left(prof.times, e0) if e0 > now else 0
            if have_ref:
                q = ref_pos[i]
                if q == pos:
                    hq = h
                elif q <= k:
                    hq = INF
                elif pos == k:
                    hq = min(ref_place[r][0] for r in range(k, q))
                else:
                    hq = None
                if hq is not None:
                    times = prof.times
                    s_r = ref_place[q][0]
                    lr = bisect_left(times, s_r)
                    if hq != INF and lr > lo:
                        kb = _first_after(times, wall, hq)
                        if kb < lr:
                            lr = kb
                    if lr > lo:
                        lo = lr
            found = prof.earliest(res, wall, bb, lo)
            self.placed += 1
            if found is None:
                return INF
            s, nmask, _, use = found
            prof.occupy(s, s + wall, nmask, res, use)
            pl = (s, nmask, use)
            place[pos] = pl
            cst[i] = s
            score = step(score, s - sub_, s)
            if score >= bound:
                return INF
            if have_ref:
                # the candidate gains (i, pl); the reference gains its position pos
                cpos[i] = pos
                r = ref[pos]
                if r != i:
                    cr = cpos.get(r)
                    if cr is None or place[cr] != ref_place[pos]:
                        v = ref_place[pos][0]
                        dfree[r] = v
                        if v < h:
                            h = v
                    q = ref_pos[i]
                    if q < pos and i in dfree and ref_place[q] == pl:
                        v = dfree.pop(i)
                        if v == h:
                            h = min(dfree.values(), default=INF)
                elif ref_place[pos] != pl:
                    v = ref_place[pos][0]
                    dfree[r] = v
                    if v < h:
                        h = v
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
            n = len(self.cand_place)
            self.ref_snaps, self.cand_snaps = self.cand_snaps, [None] * (n + 1)
            self.ref_place, self.cand_place = self.cand_place, [None] * n
        self.ref_perm, self.cand_perm = self.cand_perm, None
        self.ref_score = self.cand_score
        pos = self.ref_pos
        for p, i in enumerate(self.ref_perm):
            pos[i] = p

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
            s, nmask, avail, use = found
            prof.occupy(s, s + wall, nmask, res, use)
            nodes = bits_of(nmask)
            bb_nodes = place_list(prof.cache.pref, nodes, bb, avail) if use is not None else None
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
                        nmask = cache.select(avail, res)
                        use = cache.place(nmask, bb, av)
                        used_mask |= nmask
                        used = use if used is None else tuple(map(add, used, use))
                        ends = ends + ((use, now + wall),)
                        started = started + (i,)
                        state = (used_mask, used, ends, started)
                        full = (free_now & ~used_mask).bit_count() < min_res
                else:
                    nmask = cache.select(avail, res)
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
