"""Filler and the Two-Factors co-schedulers (ELiSE paper, Alg. 2; Kellari 2025, §5.2.6-5.2.7).

**Filler** (Stratos Karapanagiotis; ELiSE's Filler Co-Scheduler, Alg. 2) sorts the waiting
queue, highest first, by ``factor0 / factor1``:

* ``factor0`` (the gap a job leaves): with ``F`` idle cores and a job of ``p`` processes,
  ``1 - (F - p) / F`` if ``p <= F``, ``-1`` if it does not fit, ``1`` when ``F = 0``;
* ``factor1`` (arrival order): ``(id + 1) / L``, ``id`` the job's submission rank (0, 1, ...)
  and ``L`` the waiting-queue length (Kellari's wording; ELiSE writes ``maxId``: a positive
  constant either way, so the order is the same);

deploys jobs in that order until one cannot be placed, then backfills as EASY-Co does, the
reservation going to the **oldest** waiting job (Alg. 2 sorts a copy of the queue; the
inherited backfill protects the head of the real queue).

**Two Factors** (Kellari 2025, §5.2.7) keeps ``factor0`` and adds a second factor from a copy
of the queue sorted by another criterion: SJF-Filler (§5.2.7.1, shortest walltime first) and
Pop-Filler (§5.2.7.2, popularity rank, highest first).  Choices the thesis leaves open:

* the second factor is ``1 - position / L`` (position 0 = first of the criterion's order), so
  that, as ``factor0``, higher is better and the sum ``factor0 + factor1`` is sorted highest
  first (the two factors with the same weight, as the thesis says);
* ties keep submission order;
* ``p`` is the job's ``processes`` field (``coburst workload elise``), else the cores of the
  units it requests.

**Partial-queue variants** (§5.2.7, "only a part of the waiting queue is sorted"):
``sort_depth = k`` reorders only the ``k`` oldest waiting jobs; the others follow in
submission order (``null``: the whole queue).
"""

from __future__ import annotations

import heapq
from typing import Iterable, Iterator

import numpy as np

from coburst.core.nodeshare import Board, CoJob, NodeSharingState
from coburst.policies.base import Param
from coburst.policies.cosched.base import (BACKFILL_DEPTH, BACKFILL_RULE, AppSpeeds, HeatmapParam, LazyOrder,
                                           load_heatmap_param)
from coburst.policies.cosched.easy_co import NODE_ORDER, EASYCo
from coburst.policies.cosched.popularity import THRESHOLD, PopularityRanks

SORT_DEPTH = Param("sort_depth", (int, type(None)), None, lambda v: v is None or v >= 1,
                   "reorder only this many of the oldest waiting jobs (an integer >= 1, or null: all)")


def gap_factor(jobs: list[CoJob], free_cores: int) -> np.ndarray:
    """``factor0`` of Filler for each job (module doc)."""
    p = np.fromiter((j.processes for j in jobs), dtype=float, count=len(jobs))
    if free_cores <= 0:
        return np.ones(len(jobs))
    diff = free_cores - p
    return np.where(diff >= 0, 1.0 - diff / free_cores, -1.0)


class Filler(EASYCo):
    """Filler Co-Scheduler (ELiSE paper, Alg. 2; Kellari 2025, §5.2.6), module doc."""

    family = "filler"
    source = "ELiSE paper, Alg. 2; Kellari 2025, §5.2.6"
    params = (BACKFILL_DEPTH, BACKFILL_RULE, NODE_ORDER, SORT_DEPTH)

    def scores(self, jobs: list[CoJob], board: Board, state: NodeSharingState) -> np.ndarray:
        f0 = gap_factor(jobs, board.free_cores())
        seq = np.fromiter((j.seq for j in jobs), dtype=float, count=len(jobs))
        f1 = (seq + 1) / max(state.queue_len(), 1)
        return f0 / f1

    def order(self, state: NodeSharingState, board: Board) -> list[CoJob] | LazyOrder:
        if (type(self).scores is Filler.scores and state.seq_ordered and state.queue_len() >= 2
                and (self.sort_depth is None or self.sort_depth >= state.queue_len())):
            return LazyOrder(state, _merged_order(state, board.free_cores()), state.queue_len())
        queue = state.queue
        k = len(queue) if self.sort_depth is None else min(self.sort_depth, len(queue))
        head = queue[:k]
        if len(head) < 2:
            return queue
        idx = np.argsort(-self.scores(head, board, state), kind="stable")
        return [head[i] for i in idx] + queue[k:]

    def reservation_head(self, rest, state: NodeSharingState) -> CoJob:
        if isinstance(rest, LazyOrder):
            return rest.oldest()
        return min(rest, key=lambda j: j.seq)


def _group_keys(jobs: Iterable[CoJob], f0: float, length: int) -> Iterator[tuple[float, int, CoJob]]:
    """``(-score, seq, job)`` of one ``processes`` group, ``f0`` its gap factor (module doc)."""
    for j in jobs:
        yield -(f0 / ((j.seq + 1) / length)), j.seq, j


def _merged_order(state: NodeSharingState, free_cores: int) -> Iterator[CoJob]:
    """Filler's order of the whole waiting queue (:meth:`Filler.order` over every job),
    generated: the jobs of one ``processes`` value share ``factor0``, so within that group the
    score ``factor0 / ((seq + 1) / L)`` falls as ``seq`` grows when ``factor0 >= 0`` (rises
    when the job does not fit, ``factor0 = -1``); the groups, each read in that order, are
    merged on ``(-score, seq)`` -- the key of the stable sort by descending score over the
    queue in submission order, with the same floating-point values (``gap_factor`` and
    :meth:`Filler.scores` per job).  Costs the jobs read, not the queue's length."""
    length = max(state.queue_len(), 1)
    streams = []
    for p, group in state.waiting_by_processes().items():
        if free_cores <= 0:
            f0 = 1.0
        else:
            diff = free_cores - float(p)
            f0 = 1.0 - diff / free_cores if diff >= 0 else -1.0
        streams.append(_group_keys(group.values() if f0 >= 0 else reversed(group.values()), f0, length))
    return (key[2] for key in heapq.merge(*streams))


def position_factor(order: np.ndarray) -> np.ndarray:
    """``1 - position / L`` for each job, given the jobs' indices in the criterion's order."""
    n = len(order)
    pos = np.empty(n)
    pos[order] = np.arange(n)
    return 1.0 - pos / n


class SJFFiller(Filler):
    """SJF-Filler, Two Factors with the shortest-walltime criterion (Kellari 2025, §5.2.7.1)."""

    family = "sjf-filler"
    source = "Kellari 2025, §5.2.7.1"

    def scores(self, jobs: list[CoJob], board: Board, state: NodeSharingState) -> np.ndarray:
        wall = np.fromiter((min(j.walltime, 1e300) for j in jobs), dtype=float, count=len(jobs))
        return gap_factor(jobs, board.free_cores()) + position_factor(np.argsort(wall, kind="stable"))


class PopFiller(Filler):
    """Pop-Filler, Two Factors with the popularity criterion (Kellari 2025, §5.2.7.2)."""

    family = "pop-filler"
    source = "Kellari 2025, §5.2.7.2"
    params = (BACKFILL_DEPTH, BACKFILL_RULE, NODE_ORDER, SORT_DEPTH, HeatmapParam, THRESHOLD)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._ranks = PopularityRanks(AppSpeeds(load_heatmap_param(self.family, self.heatmap)), self.threshold)

    def scores(self, jobs: list[CoJob], board: Board, state: NodeSharingState) -> np.ndarray:
        ranks = self._ranks.ranks(state.queue)[: len(jobs)]  # ranks among the whole waiting queue
        return gap_factor(jobs, board.free_cores()) + position_factor(np.argsort(-ranks, kind="stable"))
