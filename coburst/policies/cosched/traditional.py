"""Traditional (compact, exclusive) scheduling on a node-sharing machine (Kellari 2025, §5.1).

Every job runs **compact**: whole nodes, alone on them (the baselines of the co-scheduling
study).  FCFS deploys in submission order and stops at the first job that does not fit;
EASY adds EASY backfilling; SJF and LJF reorder the queue by walltime (shortest / longest
first) and backfill like EASY; Conservative gives every waiting job a reservation.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from coburst.core.nodeshare import COMPACT, Board, CoJob, NodeSharingState, PlacementDecisions
from coburst.policies.cosched.base import CoPolicy


class FCFS(CoPolicy):
    """First Come First Serve, compact (Kellari 2025, §5.1.1): submission order, no backfilling."""

    family = "fcfs"
    source = "Kellari 2025, §5.1.1"
    backfilling = False
    params = ()
    backfill_depth = 0


class EASY(CoPolicy):
    """EASY backfilling, compact (Kellari 2025, §5.1.2): FCFS, then each of the next
    ``backfill_depth`` jobs starts if it does not delay the first waiting job."""

    family = "easy"
    source = "Kellari 2025, §5.1.2"


def by_walltime(queue: list[CoJob], reverse: bool = False) -> list[CoJob]:
    """Stable sort by walltime (ties: submission order)."""
    return sorted(queue, key=(lambda j: (-j.walltime, j.seq)) if reverse else (lambda j: (j.walltime, j.seq)))


class SJF(CoPolicy):
    """Shortest Job First, compact (Kellari 2025, §5.1.4): queue by walltime, shortest
    first, EASY backfilling behind its head."""

    family = "sjf"
    source = "Kellari 2025, §5.1.4"

    def order(self, state: NodeSharingState, board: Board) -> list[CoJob]:
        return by_walltime(state.queue)


class LJF(CoPolicy):
    """Longest Job First, compact (Kellari 2025, §5.1.5): queue by walltime, longest first,
    EASY backfilling behind its head."""

    family = "ljf"
    source = "Kellari 2025, §5.1.5"

    def order(self, state: NodeSharingState, board: Board) -> list[CoJob]:
        return by_walltime(state.queue, reverse=True)


class Conservative(CoPolicy):
    """Conservative backfilling, compact (Kellari 2025, §5.1.3; Mu'alem & Feitelson 2001).

    At every decision each waiting job, in submission order, has a reservation at the
    earliest date its nodes are free for its whole walltime, given the running jobs (ending
    at their walltimes) and the reservations of the jobs before it; the jobs whose
    reservation is now start.  Compact jobs need any ``m`` idle nodes, so the plan is a step
    function of idle-node counts (exact for whole-node allocations).  Burst buffers are not
    planned: a job whose reservation is now starts when its burst-buffer request fits too.

    The plan is kept between decisions, as batsched's conservative backfilling keeps its
    schedule: while every job ends at its walltime and the queue only grows at its tail, the
    reservations made stay the earliest ones (the profile from the new date on is the same
    step function), so a decision only starts the jobs whose reservation has come and plans
    the new jobs.  Anything else (an early end, a job still running past its walltime, a job
    leaving the queue otherwise, a burst buffer that did not fit) makes the next decision
    plan again from the running jobs: the same reservations as planning every decision from
    scratch (the decisions of the former implementation; a hypothesis test compares both).
    Batsched instead compresses its schedule on an early end, which can give other decisions
    (the later reservations still hold nodes when an earlier job is moved), so it is not
    followed there.  Planning stops at the first job from which no later one could start now
    (fewer idle nodes now than any of them needs); the jobs after it are planned when a later
    decision reaches them.  Reservations of a long queue are made by a numba kernel (the same
    floats), and the running jobs' profile counts a compact job's nodes without a board copy."""

    family = "conservative"
    source = "Kellari 2025, §5.1.3"
    params = ()
    backfill_depth = 0

    _plan: "_Plan | None" = None

    def make_decisions(self, state: NodeSharingState) -> PlacementDecisions:
        decisions = PlacementDecisions(state.now)
        queue = state.queue
        if not queue:
            self._plan = None
            return decisions
        board = state.board()
        now = state.now
        plan = self._plan
        if plan is None or not plan.still_valid(state, queue, board.n_compact):
            plan = _Plan.fresh(state, board)
        self._plan = plan
        # reservations that have come, in submission order (popped from the plan's heap of
        # (date, seq) by still_valid)
        due, plan.due = plan.due, []
        k = len(plan.heap) + len(due)  # the planned jobs are the queue's first k
        for _, _, job in due:
            pl = board.place(job.seq, COMPACT, job.nodes, bb=job.bb)
            if pl is not None:
                decisions.start(job, pl)
            else:  # its burst buffer does not fit now: plan again at the next decision
                plan.poisoned = True
        t, f = plan.t, plan.f
        rest = queue[k:]
        if rest:
            # the smallest node count among the jobs from i on: once fewer nodes are idle now, no
            # later job can start now (reservations made further on never touch the present)
            least = np.minimum.accumulate(np.fromiter((j.nodes for j in reversed(rest)), dtype=np.int64,
                                                      count=len(rest)))[::-1]
            reserve = _reserve_compiled() if len(rest) >= COMPILED_FROM else _reserve
            nodes = walls = None
            for i, job in enumerate(rest):
                if f[0] < least[i]:
                    break
                if i % CHECK_EVERY == CHECK_EVERY - 1:
                    # none of the jobs left fits now for its whole walltime on the plan so far:
                    # reservations only take nodes, so none of them can start now
                    if nodes is None:
                        nodes = np.fromiter((j.nodes for j in rest), dtype=np.int64, count=len(rest))
                        walls = np.fromiter((j.walltime for j in rest), dtype=float, count=len(rest))
                    idle = np.minimum.accumulate(f)[np.searchsorted(t, now + walls[i:], side="left") - 1]
                    if not (nodes[i:] <= idle).any():
                        break
                start, t, f = reserve(t, f, job.nodes, float(job.walltime))
                start = float(start)
                plan.last_seq = job.seq
                if start == now:
                    pl = board.place(job.seq, COMPACT, job.nodes, bb=job.bb)
                    if pl is not None:  # None only when its burst buffer does not fit now
                        decisions.start(job, pl)
                    else:
                        plan.poisoned = True
                        heapq.heappush(plan.heap, (start, job.seq, job))
                else:
                    heapq.heappush(plan.heap, (start, job.seq, job))
        plan.t, plan.f = t, f
        plan.record(state, queue, decisions)
        return decisions


class _Plan:
    """The kept plan of :class:`Conservative`: idle-node counts ``f`` over the dates ``t``
    (running jobs and reservations), the reservations of the waiting jobs planned so far
    (a heap of ``(date, seq, job)``: the first ``len(heap)`` jobs of the queue), and what the next
    decision must find for the plan to still hold."""

    __slots__ = ("t", "f", "heap", "due", "last_seq", "poisoned", "ends", "queue_len", "queue_last", "date")

    def __init__(self, t: np.ndarray, f: np.ndarray):
        self.t, self.f = t, f
        self.heap: list[tuple[float, int, CoJob]] = []  # (date, seq, job): seq decides ties
        self.due: list[tuple[float, int, CoJob]] = []  # popped from the heap: their date is now
        self.last_seq = -1
        self.poisoned = False
        self.ends: dict[str, float] = {}
        self.queue_len = 0
        self.queue_last: str | None = None
        self.date = -math.inf

    @classmethod
    def fresh(cls, state: NodeSharingState, board: Board) -> "_Plan":
        """Idle-node counts over time from the running jobs alone (released at their
        expected ends; one already past it counts as ending now)."""
        sb = None  # a board copy, only once a job not alone on its nodes is released
        idle = board.n_compact
        times, free = [state.now], [idle]
        for end, _, jid in state.iter_ends():
            pl = state.running[jid].placement
            if sb is None and pl.mode == COMPACT:
                idle += len(pl.nodes)  # a compact job is alone on its nodes: they become idle
            else:
                if sb is None:
                    sb = board.copy()
                    for _, _, done in state.iter_ends():
                        if done == jid:
                            break
                        sb.give(state.running[done].placement)
                sb.give(pl)
                idle = sb.n_compact
            if end == times[-1]:
                free[-1] = idle
            else:
                times.append(end)
                free.append(idle)
        return cls(np.asarray(times, dtype=float), np.asarray(free, dtype=np.int64))

    def record(self, state: NodeSharingState, queue: list[CoJob], decisions: PlacementDecisions) -> None:
        """What the next decision must find: the running jobs and their ends, the queue
        without the jobs started now."""
        now = state.now
        ends = {jid: run.expected_end for jid, run in state.running.items()}
        started = set()
        for st in decisions.starts:
            ends[st.job.id] = now + st.job.walltime
            started.add(st.job.id)
        self.ends = ends
        self.queue_len = len(queue) - len(started)
        last = None
        for job in reversed(queue):
            if job.id not in started:
                last = job.id
                break
        self.queue_last = last
        self.date = now

    def still_valid(self, state: NodeSharingState, queue: list[CoJob], idle_now: int) -> bool:
        """True when every job ended at its walltime, none runs past it, the queue is the
        expected one plus new jobs at its tail, and the idle nodes now are the plan's."""
        now = state.now
        if self.poisoned or now < self.date or (self.heap and self.heap[0][0] < now):
            return False
        running = state.running
        alive = 0
        for jid, end in self.ends.items():
            if end > now:
                if jid not in running:
                    return False  # ended early
                alive += 1
            elif jid in running:
                return False  # still running at (or past) its walltime
        if alive != len(running):
            return False
        n = self.queue_len
        if len(queue) < n or (n and queue[n - 1].id != self.queue_last):
            return False
        if len(self.heap) > n or any(job.seq <= self.last_seq for job in queue[n:n + 1]):
            return False
        # the profile from now on
        i = int(np.searchsorted(self.t, now, side="right")) - 1
        if i < 0:
            return False
        t = self.t[i:].copy()
        t[0] = now
        f = self.f[i:]
        # the idle nodes now: the plan's, plus the nodes of the reservations starting now
        heap = self.heap
        due = []
        while heap and heap[0][0] == now:
            due.append(heapq.heappop(heap))
        if f[0] + sum(job.nodes for _, _, job in due) != idle_now:
            return False
        self.due = due
        self.t, self.f = t, f
        return True


def _reserve(t: np.ndarray, f: np.ndarray, m: int, w: float) -> tuple[float, np.ndarray, np.ndarray]:
    """Earliest segment start with >= ``m`` idle nodes for ``w`` seconds; the counts with
    that reservation taken off."""
    ok = f >= m
    n = len(t)
    bad = np.flatnonzero(~ok)
    next_bad = np.append(bad, n)[np.searchsorted(bad, np.arange(n))]  # first index >= i not ok
    window_end = np.searchsorted(t, t + w, side="left")
    feasible = ok & (next_bad >= window_end)
    i = int(np.argmax(feasible))
    if not feasible[i]:  # cannot happen: the last segment has every node idle
        raise AssertionError("no reservation found")
    start = float(t[i])
    end = start + w
    j = int(window_end[i])
    if np.isfinite(end) and (j >= n or t[j] != end):
        t = np.insert(t, j, end)
        f = np.insert(f, j, f[j - 1])
    f = f.copy()
    f[i:j] -= m
    return start, t, f


#: from this many jobs to plan in one decision on, reservations are made by the compiled
#: :func:`_reserve` (numba: the same floats and counts, ~50x faster; numba is imported and the
#: kernel compiled, or read from its cache, on first use only)
COMPILED_FROM = 64
#: every this many reservations of one decision, :class:`Conservative` checks whether any job
#: left could still start now
CHECK_EVERY = 32
_compiled = None


def _reserve_compiled():
    """The numba twin of :func:`_reserve` (same arguments and results): imported on first use
    (numba's import and the cached kernel cost ~0.5 s)."""
    global _compiled
    if _compiled is None:
        from coburst.policies.cosched._reserve_kernel import reserve

        _compiled = reserve
    return _compiled
