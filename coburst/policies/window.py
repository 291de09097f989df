"""Window-based combinatorial scheduling (Kopański 2020, Alg. 7, §3.3).

``window-D``: over the first ``N`` waiting jobs (the window), find the combination of jobs
that can all start now and maximises the objective of Alg. 6 (compute, storage, mean wait
or storage, compute, mean wait, chosen by the queue's loads and ``beta``); jobs that spent
more than ``M`` calls in the window and are among its first ``D`` are mandatory.  A
combination fits when its nodes fit the free compute nodes and its burst-buffer requests
fit the free BB nodes as the integer program (3.1)-(3.3).  The best combination is
started, then SJF backfilling (Alg. 5) runs on the rest of the queue (depth 0; depth ``D``
when no combination was found).

Every decision runs within a deterministic work budget (``budget`` search steps, see
:class:`StepPool`): the search is anytime -- past the budget it returns the best fitting
combination found so far -- and the burst-buffer placement found by the check of a
combination is cached with it and is the one :func:`launch` falls back to, never solved
again.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from coburst.core.decisions import Decisions
from coburst.core.placement import Allocation
from coburst.core.profile import Profile
from coburst.core.state import Job, SchedulerState
from coburst.policies.base import Param, Policy, fill, reserve, start_in_order
from coburst.policies.maxutil import compute_first, util_score

__all__ = ["Window", "BBFit", "StepPool", "bb_fits", "bb_assign", "bb_counts", "search_window",
           "search_window_literal", "backfill_sjf", "launch", "bb_key", "DEFAULT_BUDGET"]


def backfill_sjf(profile: Profile, jobs: Sequence[Job], depth: int, decisions: Decisions) -> None:
    """Kopański 2020, Alg. 5 (BACKFILL-SJF(queue, D)) on ``profile``."""
    waiting = start_in_order(profile, jobs, decisions)
    for job in waiting[:depth]:
        reserve(profile, job, decisions)
    fill(profile, sorted(waiting[depth:], key=lambda j: j.walltime), decisions)


class _Budget(Exception):
    """An exact method gave up (step or resource budget reached)."""


#: search steps per window decision by default (``budget``): at most ~0.5-1 s of CPU on the
#: development machine (0.3-0.7 M steps/s, by load and instance); the whole KTH log replayed
#: on the thesis' dragonfly (56,152 decisions) used at most 150,226 (benchmarks/bench_window_scale.py)
DEFAULT_BUDGET = 300_000


class StepPool:
    """A deterministic work budget shared by the searches of one decision: ``limit`` steps,
    ``left`` of them not yet spent.  A step is one node of the combination search
    (:func:`search_window`), one node of the fillings search or of the pattern generation
    (:func:`bb_assign`, :func:`patterns_lp_infeasible`), or one LP column.  Counting steps
    instead of seconds keeps decisions independent of the machine and its load (same inputs,
    same decisions)."""

    __slots__ = ("limit", "left")

    def __init__(self, limit: int):
        self.limit = int(limit)
        self.left = int(limit)

    @property
    def used(self) -> int:
        return self.limit - max(self.left, 0)

    @property
    def exhausted(self) -> bool:
        return self.left <= 0

    def __repr__(self) -> str:
        return f"StepPool(limit={self.limit}, used={self.used})"


def ilp_counts(counts: Sequence[int], sizes: Sequence[int], avail: Sequence[int], rlimit: int | None = None):
    """The integer program (3.1)-(3.3) of Kopański 2020 §3.3 with Z3: ``x[i][j]`` requests
    of job ``i`` (``counts[i]`` nodes, ``sizes[i]`` bytes each) on BB node ``j`` (free
    ``avail[j]``); ``0 <= x <= counts[i]``, ``sum_j x = counts[i]``, ``sum_i size x <=
    avail[j]``.  Returns the matrix, or None when infeasible.  ``rlimit``: Z3's
    deterministic resource limit; past it, raises :class:`_Budget`."""
    import z3

    nb = len(avail)
    if not counts:
        return []
    if nb == 0:
        return None if any(counts) else [[] for _ in counts]
    solver = z3.Solver()
    if rlimit is not None:
        solver.set("rlimit", rlimit)
    xs = []
    for i, (c, b) in enumerate(zip(counts, sizes)):
        row = [z3.Int(f"x_{i}_{j}") for j in range(nb)]
        for x in row:
            solver.add(x >= 0, x <= c)
        solver.add(z3.Sum(row) == c)
        xs.append(row)
    for j in range(nb):
        solver.add(z3.Sum([sizes[i] * xs[i][j] for i in range(len(xs))]) <= int(avail[j]))
    verdict = solver.check()
    if verdict == z3.unknown and rlimit is not None:
        raise _Budget
    if verdict != z3.sat:
        return None
    model = solver.model()
    return [[model.eval(x, model_completion=True).as_long() for x in row] for row in xs]


def patterns_lp_infeasible(sizes: Sequence[int], counts: Sequence[int], caps: Sequence[int],
                           limit: int = 20_000, steps: list | None = None) -> bool:
    """True when the configuration LP proves that the requests (``counts[t]`` of
    ``sizes[t]`` bytes) cannot fit BB nodes of free capacities ``caps``: variables = how
    many nodes of each capacity take each maximal filling (pattern), covering every
    request, at most the number of nodes of each capacity.  Every feasible assignment gives
    a solution (complete each node's filling to a maximal one), so an infeasible LP means
    an infeasible integer program.  Its matrix holds only small counts, so HiGHS's verdict
    is not at the mercy of byte-sized coefficients.  False when it proves nothing or there
    are more than ``limit`` patterns.  ``steps``: a one-item list of steps left (each
    generation node and each LP column costs one); past zero, raises :class:`_Budget`."""
    from scipy.optimize import linprog

    m = len(sizes)
    cols: list = []
    steps = steps if steps is not None else [1 << 62]
    for cap in sorted(set(caps)):
        cur = [0] * m

        def gen(t: int, left: int) -> None:
            steps[0] -= 1
            if steps[0] < 0:
                raise _Budget
            if len(cols) > limit:
                return
            if t == m:
                if not any(cur[u] < counts[u] and sizes[u] <= left for u in range(m)):
                    cols.append((cap, tuple(cur)))
                return
            for v in range(min(counts[t], left // sizes[t]), -1, -1):
                cur[t] = v
                gen(t + 1, left - v * sizes[t])
            cur[t] = 0

        gen(0, cap)
    if not cols or len(cols) > limit:
        return False
    steps[0] -= len(cols)
    if steps[0] < 0:
        raise _Budget
    kinds = sorted(set(caps))
    a_ub = np.zeros((m + len(kinds), len(cols)))
    for k, (cap, pat) in enumerate(cols):
        a_ub[:m, k] = [-v for v in pat]
        a_ub[m + kinds.index(cap), k] = 1.0
    b_ub = np.array([-c for c in counts] + [sum(1 for a in caps if a == c) for c in kinds], dtype=float)
    res = linprog(np.zeros(len(cols)), A_ub=a_ub, b_ub=b_ub, bounds=(0, None), method="highs")
    return res.status == 2


def bb_assign(reqs: Sequence[tuple[int, int]], avail: Sequence[int], budget: int = 1_000_000,
              pool: StepPool | None = None):
    """Exact solution of the integer program (3.1)-(3.3) for ``reqs`` = ``((count, size),
    ...)`` on BB nodes with ``avail`` free bytes: the matrix ``x[i][j]`` (requests of
    ``reqs[i]`` on BB node ``j``) or None when infeasible, as :func:`ilp_counts` (possibly
    another matrix).  Raises :class:`_Budget` after ``budget`` search steps (or the steps
    left in ``pool``, if fewer; the steps spent are taken from ``pool``).

    Search by whole BB-node fillings: the nodes are filled one at a time, largest free
    capacity first; a node takes a *maximal* filling (a count of each request size, no
    request left that still fits in its leftover -- any feasible assignment can be turned
    into one where every node's filling is maximal for the requests of the nodes after it,
    by moving requests forward), least leftover first.  The states (node, requests left)
    that failed are remembered (this also cuts the permutations of equal nodes).  Cuts: the
    bytes left exceed the capacity of the nodes left (equivalently the leftovers so far
    exceed the slack), or the requests of size >= s left outnumber the slots of size s of
    the nodes left.  A tight KTH instance (479.5 of 480 GB on 12 nodes) is proved
    infeasible in ~0.1 s, a loose one (88 requests, 463 of 480 GB, where one request at a
    time and Z3 both ran for minutes) solved in ms."""
    if pool is None:
        return _bb_assign(reqs, avail, [budget])
    steps = [min(budget, pool.left)]
    start = steps[0]
    try:
        return _bb_assign(reqs, avail, steps)
    finally:
        pool.left -= start - max(steps[0], 0)


def _bb_assign(reqs: Sequence[tuple[int, int]], avail: Sequence[int], steps: list):
    """:func:`bb_assign` with ``steps`` = a one-item list of the steps left."""
    nb = len(avail)
    x = [[0] * nb for _ in reqs]
    order = sorted((i for i, (c, _) in enumerate(reqs) if c > 0), key=lambda i: (-reqs[i][1], i))
    m = len(order)
    if not m:
        return x
    sizes = [int(reqs[i][1]) for i in order]
    bins = sorted((j for j in range(nb) if avail[j] >= sizes[-1]), key=lambda j: (-avail[j], j))
    caps = [int(avail[j]) for j in bins]
    B = len(caps)
    capsuf = [0] * (B + 1)
    for bi in range(B - 1, -1, -1):
        capsuf[bi] = capsuf[bi + 1] + caps[bi]
    slots = [[0] * (B + 1) for _ in range(m)]   # slots[t][bi]: requests of size t the nodes bi.. take
    for t in range(m):
        for bi in range(B - 1, -1, -1):
            slots[t][bi] = slots[t][bi + 1] + caps[bi] // sizes[t]
    if capsuf[0] < sum(int(reqs[i][0]) * s for i, s in zip(order, sizes)):
        return None
    if patterns_lp_infeasible(sizes, [int(reqs[i][0]) for i in order], caps, steps=steps):
        return None
    failed: set = set()
    chosen: list = [None] * B

    def fillings(bi: int, rem: tuple, slack: int) -> list:
        """Maximal fillings of node ``bi`` leaving at most ``slack`` bytes, least leftover
        first (largest counts of the largest sizes first on ties)."""
        out: list = []
        cur = [0] * m
        after = [0] * (m + 1)   # bytes of the requests left of sizes t..
        for t in range(m - 1, -1, -1):
            after[t] = after[t + 1] + rem[t] * sizes[t]

        def gen(t: int, left: int) -> None:
            steps[0] -= 1
            if steps[0] < 0:
                raise _Budget
            if left - after[t] > slack:  # even all the rest would leave too much room
                return
            if t == m:
                if left <= slack and not any(rem[u] > cur[u] and sizes[u] <= left for u in range(m)):
                    out.append((left, tuple(cur)))
                return
            s = sizes[t]
            for v in range(min(rem[t], left // s), -1, -1):
                cur[t] = v
                gen(t + 1, left - v * s)
            cur[t] = 0

        gen(0, caps[bi])
        out.sort(key=lambda w: w[0])
        return out

    def rec(bi: int, rem: tuple) -> bool:
        if not any(rem):
            return True
        if bi == B or (bi, rem) in failed:
            return False
        slack = capsuf[bi] - sum(r * s for r, s in zip(rem, sizes))
        ok = slack >= 0
        acc = 0
        for t in range(m if ok else 0):
            acc += rem[t]
            if acc > slots[t][bi]:
                ok = False
                break
        if ok:
            for _, fill_ in fillings(bi, rem, slack):
                chosen[bi] = fill_
                if rec(bi + 1, tuple(r - v for r, v in zip(rem, fill_))):
                    return True
        chosen[bi] = None
        failed.add((bi, rem))
        return False

    if not rec(0, tuple(int(reqs[i][0]) for i in order)):
        return None
    for bi, fill_ in enumerate(chosen):
        for t, v in enumerate(fill_ or ()):
            x[order[t]][bins[bi]] = v
    return x


def bb_fits(reqs: Sequence[tuple[int, int]], avail: Sequence[int], budget: int = 1_000_000) -> bool | None:
    """Does the integer program (3.1)-(3.3) have a solution (:func:`bb_assign`)?  None
    (unknown) when the search gives up after ``budget`` steps."""
    try:
        return bb_assign(reqs, avail, budget) is not None
    except _Budget:
        return None


def bb_counts(reqs: Sequence[tuple[int, int]], avail: Sequence[int], budget: int = 1_000_000):
    """A solution matrix of the integer program (:func:`bb_assign` within ``budget`` steps),
    or None when infeasible or undecided.  The policy does not call it: :func:`launch` takes
    the matrix its check found (:meth:`BBFit.placement`)."""
    try:
        return bb_assign(reqs, avail, budget)
    except _Budget:
        return None


def bb_key(jobs: Sequence[Job]) -> tuple:
    """The key of a set of jobs for :class:`BBFit`: the ``(nodes, bytes per node)`` of the
    jobs with a BB request, sorted (jobs with equal requests are interchangeable)."""
    return tuple(sorted((j.res, j.bb) for j in jobs if j.bb))


def first_fit_decreasing(reqs: Sequence[tuple[int, int]], avail: Sequence[int]):
    """A solution matrix of the integer program found by first-fit decreasing (requests of
    the largest size first, each on the BB nodes in index order), or None when it does not
    find one (which proves nothing)."""
    rem = list(avail)
    x = [[0] * len(rem) for _ in reqs]
    for i in sorted(range(len(reqs)), key=lambda i: (-reqs[i][1], i)):
        c, b = reqs[i]
        row = x[i]
        for j in range(len(rem)):
            if c == 0:
                break
            take = min(c, rem[j] // b)
            if take:
                rem[j] -= take * b
                row[j] = take
                c -= take
        if c:
            return None
    return x


#: the share of a decision's budget one exact check may use (1/4): a check left undecided
#: counts as not fitting and the search goes on with the other combinations
CHECK_SHARE = 4


class BBFit:
    """Do a set of BB requests fit the free BB bytes now, and where?  The integer program
    (3.1)-(3.3), answered by :func:`bb_assign` (exact), with two cheap shortcuts that never
    change the answer: total bytes (necessary) and first-fit decreasing (sufficient).

    The answer is a *placement*, cached per set: the matrix ``x[i][j]`` (requests of
    ``reqs[i]`` on BB node ``j``), or None when the set does not fit.  :func:`launch` takes
    it from here: the placement the check found is the one launched, never solved again.

    ``pool``: the decision's :class:`StepPool` (None: 10^6 steps per check, no pool).  A
    check may spend at most ``pool.limit // CHECK_SHARE`` steps; a check that gives up, or
    that finds the pool empty after the shortcuts, counts as not fitting (never
    over-commits; counted in ``undecided``).  No solver without a step bound runs here (the
    former Z3 fallback took 40-120 s per check on a 30-BB-node platform)."""

    def __init__(self, avail: Sequence[int], pool: StepPool | None = None):
        self.avail = [int(a) for a in avail]
        self.total = sum(self.avail)
        self.pool = pool
        self.cache: dict = {}
        self.solver_calls = 0
        self.undecided = 0

    def __call__(self, reqs: tuple) -> bool:
        """``reqs``: ``((count, size), ...)`` of the jobs with a BB request (:func:`bb_key`)."""
        return self.placement(reqs) is not None

    def placement(self, reqs: tuple):
        """The cached placement of ``reqs`` (checked on first use): a matrix or None."""
        try:
            return self.cache[reqs]
        except KeyError:
            pass
        x = self._check(reqs)
        self.cache[reqs] = x
        return x

    def _check(self, reqs):
        if not reqs:
            return []
        if sum(c * b for c, b in reqs) > self.total:
            return None
        x = first_fit_decreasing(reqs, self.avail)
        if x is not None:
            return x
        pool = self.pool
        if pool is not None and pool.exhausted:
            self.undecided += 1
            return None
        self.solver_calls += 1
        try:
            if pool is None:
                return bb_assign(reqs, self.avail)
            return bb_assign(reqs, self.avail, max(1, pool.limit // CHECK_SHARE), pool=pool)
        except _Budget:
            self.undecided += 1
            return None


def _score(jobs, members, now, cfirst):
    return util_score(jobs, members, now, cfirst)


class _Stop(Exception):
    """The decision's step pool is empty: the search returns what it has."""


def search_window(jobs: Sequence[Job], mandatory: Sequence[int], free: int, avail: Sequence[int],
                  now: float, cfirst: bool, fit: BBFit | None = None) -> tuple[list[int], int]:
    """Best combination of Alg. 7 (positions in ``jobs``, ascending) and the number of
    combinations checked, by depth-first search over the combinations that fit.

    It returns what :func:`search_window_literal` (the algorithm as written) returns: the
    literal search scores combinations level by level (decreasing size, each level in
    lexicographic order) keeping the first strictly better, and every combination that
    fits is strictly worse than any fitting superset (one more job adds nodes), so its
    answer is the fitting combination with the highest score, then the largest, then the
    lexicographically first -- found here directly, pruning branches that cannot fit
    (supersets of a misfit misfit) or cannot reach the best score's first two fields.

    Anytime: with ``fit.pool`` (a :class:`StepPool`), every search node costs a step and
    the BB checks draw from the same pool; once it is empty the search stops and returns the
    best fitting combination found so far.  The first leaf the search reaches is the greedy
    one (each job taken when it fits with the ones before), so one is found early; if the
    pool ran out before any leaf, that greedy combination is completed with the cheap
    checks only (:class:`BBFit` after the pool is empty: cached answers, first-fit
    decreasing).  Every combination returned was accepted by ``fit``, whose cached placement
    :func:`launch` uses.  Without a pool (``fit`` None or poolless) the search is exact as
    long as no check gives up (10^6 steps each; a check that gives up counts as a misfit)."""
    n = len(jobs)
    fit = fit or BBFit(avail)
    pool = fit.pool
    res = [j.res for j in jobs]
    reqs = [(j.res, j.bb) if j.bb else None for j in jobs]
    prim = [j.res if cfirst else j.res * j.bb for j in jobs]
    sec = [j.res * j.bb if cfirst else j.res for j in jobs]
    rem_p = [0] * (n + 1)
    rem_s = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        rem_p[i] = rem_p[i + 1] + prim[i]
        rem_s[i] = rem_s[i + 1] + sec[i]
    mand = set(mandatory)
    best = [None, None]   # (key, members)
    checks = [0]

    def fits(members_bb, used):
        checks[0] += 1
        return used <= free and fit(tuple(sorted(members_bb)))

    def rec(i, members, members_bb, used, p, s):
        if pool is not None:
            pool.left -= 1
            if pool.left < 0:
                raise _Stop
        if best[0] is not None and (p + rem_p[i], s + rem_s[i]) < best[0][0][:2]:
            return
        if i == n:
            key = (_score(jobs, members, now, cfirst), len(members))
            if best[0] is None or key > best[0]:
                best[0], best[1] = key, list(members)
            return
        nb = members_bb + ((reqs[i],) if reqs[i] else ())
        if fits(nb, used + res[i]):
            members.append(i)
            rec(i + 1, members, nb, used + res[i], p + prim[i], s + sec[i])
            members.pop()
        if i not in mand:
            rec(i + 1, members, members_bb, used, p, s)

    try:
        rec(0, [], (), 0, 0, 0)
    except _Stop:
        pool.left = 0
        if best[0] is None:  # no leaf reached: the greedy combination, cheap checks only
            members, members_bb, used = [], (), 0
            for i in range(n):
                nb = members_bb + ((reqs[i],) if reqs[i] else ())
                if fits(nb, used + res[i]):
                    members.append(i)
                    members_bb, used = nb, used + res[i]
            if mand.issubset(members):
                best[1] = members
    if not best[1]:
        return [], checks[0]
    return best[1], checks[0]


def search_window_literal(jobs: Sequence[Job], mandatory: Sequence[int], free: int, avail: Sequence[int],
                          now: float, cfirst: bool) -> tuple[list[int], int]:
    """Kopański 2020, Alg. 7 lines 11-28 as written (the straightforward reference): open
    combinations level by level from the whole window, each checked with a node count and
    the integer program (Z3, no shortcut, no cache); a fitting combination is scored and
    not split further, a misfit is split into its subsets one job smaller that keep every
    mandatory job.  Returns ``(best combination, combinations checked)``."""
    n = len(jobs)
    mand = set(mandatory)
    best, s_best = [], (0, 0, 0)
    g_open = [tuple(range(n))]
    checks = 0
    while g_open:
        unsat = []
        for comb in g_open:
            checks += 1
            bbreq = [(jobs[i].res, jobs[i].bb) for i in comb if jobs[i].bb]
            ok = sum(jobs[i].res for i in comb) <= free and \
                ilp_counts([c for c, _ in bbreq], [b for _, b in bbreq], avail) is not None
            if ok:
                s = util_score(jobs, comb, now, cfirst)
                if s > s_best:
                    s_best, best = s, list(comb)
            else:
                unsat.append(comb)
        children = set()
        for comb in unsat:
            for k in range(len(comb)):
                if comb[k] not in mand:
                    children.add(comb[:k] + comb[k + 1:])
        g_open = sorted(children)
    return best, checks


def launch(profile: Profile, jobs: Sequence[Job], decisions: Decisions, placement=None) -> str:
    """Start a combination that fits now, in window order.

    First the thesis' placement (:meth:`Profile.alloc_now`: nodes by the resource filter,
    each node's request on the nearest BB node with room), job after job on a trial copy;
    when it places every job it is used (it is valid by construction: the profile checks
    each node's bytes).  Otherwise the placement the fit check found for this set is used:
    ``placement`` = the matrix of :meth:`BBFit.placement` for :func:`bb_key` ``(jobs)``
    (rows in key order; jobs with equal requests are interchangeable); each job's compute
    nodes come from the resource filter and each node's share goes to the nearest BB node
    with a count of that job left.  Nothing is solved here: the check's answer is the one
    launched.  Returns ``"thesis"`` or ``"checked"`` (the placement used).

    ``placement`` None (callers outside the policy): the check is run here, with its own
    :class:`BBFit` (step-bounded; :class:`ValueError` when the set does not fit or the check
    gives up)."""
    trial = profile.copy()
    allocs = []
    for job in jobs:
        alloc = trial.alloc_now(job.res, job.walltime, job.bb)
        if alloc is None:
            break
        trial.occupy(trial.now, trial.now + job.walltime, alloc)
        allocs.append(alloc)
    else:
        for job, alloc in zip(jobs, allocs):
            profile.occupy(profile.now, profile.now + job.walltime, alloc)
            decisions.start(job, alloc)
        return "thesis"
    cluster = profile.cluster
    key = bb_key(jobs)
    if placement is None:
        _, avail = profile.free_at(profile.now)
        placement = BBFit(avail.tolist()).placement(key)
        if placement is None:
            raise ValueError("window: launch of a combination whose burst-buffer requests do not fit")
    rows: dict = {}
    for req, row in zip(key, placement):
        rows.setdefault(req, []).append(row)
    for job in jobs:
        nodes = profile.alloc_now(job.res, job.walltime, 0).nodes
        if job.bb:
            left = list(rows[(job.res, job.bb)].pop(0))
            bb_nodes = np.empty(len(nodes), dtype=np.int64)
            for k, node in enumerate(nodes.tolist()):
                b = next(b for b in cluster.bb_preference[node] if left[b] > 0)
                left[b] -= 1
                bb_nodes[k] = b
            alloc = Allocation.make(cluster.n_bb, nodes, bb_nodes, job.bb)
        else:
            alloc = Allocation.make(cluster.n_bb, nodes)
        profile.occupy(profile.now, profile.now + job.walltime, alloc)
        decisions.start(job, alloc)
    return "checked"


class Window(Policy):
    """Kopański 2020, Alg. 7, §3.3: ``window-D`` (window ``N``, max age ``M``, balance
    factor ``beta``).

    Choices left open by the text:

    * age = number of calls a job has spent in the window (counted when the window is
      formed, line 9); mandatory jobs = those among the window's first ``D`` whose age
      exceeds ``M``; the thesis gives no value of ``M``: default 5;
    * "enough resources to run all jobs in C" = their nodes fit the compute nodes free now
      and their BB requests fit the BB space free now as the integer program (3.1)-(3.3)
      with ``0 <= x <= C_i``; nothing else is reserved at that point and running jobs only
      release resources, so "free now" is free for every walltime;
    * combinations of a level are taken in lexicographic order of window positions; the
      first strictly better score wins (so: best score, then largest, then
      lexicographically first);
    * the thesis' 1 s timeout per check becomes a deterministic budget per *decision*:
      ``budget`` search steps (default :data:`DEFAULT_BUDGET` = 300,000; :class:`StepPool`),
      so the answer never depends on the machine's speed or load.  Within it the search is
      exact (:func:`search_window`, same answer as the literal
      :func:`search_window_literal`, tests/test_opt_window.py); past it, the best fitting
      combination found so far is started (anytime; a check that used its share of the
      budget, :data:`CHECK_SHARE`, without an answer counts as not fitting).  The whole
      KTH log replayed on the thesis' dragonfly (56,152 decisions) never reaches the
      budget; 4 of its checks give up their share (counted as misfits);
    * the best combination starts in window order (:func:`launch`): the thesis' placement
      when it places every job, else the placement the fit check found for that set
      (cached by :class:`BBFit`, never solved again); then BACKFILL-SJF with depth 0 on the
      rest of the queue (depth ``D`` when no combination is found).

    After each decision: ``last_tried`` = combinations checked, ``last_steps`` = steps
    spent, ``last_exhausted`` = the budget ran out (the answer may not be the exact
    optimum), ``last_undecided`` = checks that gave up, ``last_placement`` = ``"thesis"``,
    ``"checked"`` or None (nothing launched), ``last_chosen`` = ids of the combination
    started, ``last_checked`` = ``(key, matrix)`` of its check.
    """

    family = "window"
    source = "Kopański 2020, Alg. 7"
    params = (
        Param("depth", int, 1, lambda d: d >= 0, "reservation depth D, an integer >= 0"),
        Param("window", int, 10, lambda n: 1 <= n <= 64, "window size N, an integer in 1..64"),
        Param("max_age", int, 5, lambda m: m >= 0, "max age M, an integer >= 0"),
        Param("beta", (int, float), 1.0, lambda b: b > 0 and math.isfinite(b), "balance factor beta, > 0"),
        Param("budget", int, DEFAULT_BUDGET, lambda b: 1_000 <= b <= 10**9,
              "search steps per decision, an integer in 1000..10^9"),
    )

    last_tried: int = 0
    last_steps: int = 0
    last_exhausted: bool = False
    last_undecided: int = 0
    last_placement: str | None = None
    last_checked: tuple | None = None
    last_chosen: list | None = None

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._ages: dict[str, int] = {}

    def make_decisions(self, state: SchedulerState) -> Decisions:
        decisions = Decisions(state.now)
        profile = state.profile()
        queue = state.queue
        ids = {j.id for j in queue}
        self._ages = {k: v for k, v in self._ages.items() if k in ids}
        self.last_tried = self.last_steps = self.last_undecided = 0
        self.last_exhausted, self.last_placement, self.last_checked, self.last_chosen = False, None, None, None
        if not queue:
            return decisions
        cfirst = compute_first(state.cluster, queue, float(self.beta))
        win = queue[:self.window]
        for j in win:
            self._ages[j.id] = self._ages.get(j.id, 0) + 1
        mandatory = [i for i in range(min(self.depth, len(win))) if self._ages[win[i].id] > self.max_age]
        free_mask, avail = profile.free_at(state.now)
        pool = StepPool(self.budget)
        fit = BBFit(avail.tolist(), pool)
        best, self.last_tried = search_window(win, mandatory, int(free_mask.sum()), fit.avail,
                                              state.now, cfirst, fit)
        self.last_steps, self.last_exhausted, self.last_undecided = pool.used, pool.exhausted, fit.undecided
        if not best:
            backfill_sjf(profile, queue, self.depth, decisions)
            return decisions
        chosen = [win[i] for i in best]
        self.last_chosen = [j.id for j in chosen]
        key = bb_key(chosen)
        self.last_checked = (key, fit.cache[key])  # the search checked this very set
        self.last_placement = launch(profile, chosen, decisions, fit.cache[key])
        taken = {j.id for j in chosen}
        backfill_sjf(profile, [j for j in queue if j.id not in taken], 0, decisions)
        return decisions
