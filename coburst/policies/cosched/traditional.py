"""Traditional (compact, exclusive) scheduling on a node-sharing machine (Kellari 2025, §5.1).

Every job runs **compact**: whole nodes, alone on them (the baselines of the co-scheduling
study).  FCFS deploys in submission order and stops at the first job that does not fit;
EASY adds EASY backfilling; SJF and LJF reorder the queue by walltime (shortest / longest
first) and backfill like EASY; Conservative gives every waiting job a reservation.
"""

from __future__ import annotations

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

    At every decision each waiting job, in submission order, gets a reservation at the
    earliest date its nodes are free for its whole walltime, given the running jobs (ending
    at their walltimes) and the reservations of the jobs before it; the jobs whose
    reservation is now start.  Compact jobs need any ``m`` idle nodes, so the plan is a step
    function of idle-node counts (exact for whole-node allocations).  Only the starts are sent,
    so the plan stops at the first job from which no later one could start now (fewer idle
    nodes now than any of them needs): the same starts as the whole plan.  Burst buffers are not
    planned: a job whose reservation is now starts when its burst-buffer request fits too."""

    family = "conservative"
    source = "Kellari 2025, §5.1.3"
    params = ()
    backfill_depth = 0

    def make_decisions(self, state: NodeSharingState) -> PlacementDecisions:
        decisions = PlacementDecisions(state.now)
        queue = state.queue
        if not queue:
            return decisions
        board = state.board()
        now = state.now
        # idle-node counts over time: release running jobs at their expected ends
        sb = board.copy()
        times, free = [now], [sb.n_compact]
        for end, _, jid in state.ends():
            sb.give(state.running[jid].placement)
            if end == times[-1]:
                free[-1] = sb.n_compact
            else:
                times.append(end)
                free.append(sb.n_compact)
        t = np.asarray(times, dtype=float)
        f = np.asarray(free, dtype=np.int64)
        # the smallest node count among the jobs from i on: once fewer nodes are idle now, no
        # later job can start now (reservations made further on never touch the present)
        least = np.minimum.accumulate(np.fromiter((j.nodes for j in reversed(queue)), dtype=np.int64,
                                                  count=len(queue)))[::-1]
        for i, job in enumerate(queue):
            if f[0] < least[i]:
                break
            start, t, f = _reserve(t, f, job.nodes, job.walltime)
            if start == now:
                pl = board.place(job.seq, COMPACT, job.nodes, bb=job.bb)
                if pl is not None:  # None only when its burst buffer does not fit now
                    decisions.start(job, pl)
        return decisions


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
