"""Popularity (Kellari 2025, §5.2.5): co-schedule the jobs most waiting jobs are friendly with.

At every decision each waiting job gets a **rank**: the number of other waiting jobs it pairs
well with, a pair being friendly when the mean of its two heatmap speedups
(``(s(a, b) + s(b, a)) / 2``, ELiSE's effective values: a missing pair counts as the row mean)
is above ``threshold``.  The queue is sorted by rank, highest first (ties: submission order),
deployed, then EASY-backfilled; the **least friendly jobs run compact**.

Choices the thesis leaves open (documented here):

* pairs are unordered pairs of distinct waiting jobs, two jobs of the same application
  included (two for loops over the queue);
* "the last jobs run compact" = a job whose rank is below ``min_rank`` (default 1: no friendly
  partner among the waiting jobs) is placed compact, every other job spread;
* ``threshold`` defaults to 1.0 (the pair gains on average);
* a job without an application known to the heatmap pairs at speedup 1.0 with everyone.

Ranks cost O(queue x applications) (counts per application), not O(queue^2).
"""

from __future__ import annotations

import math

import numpy as np

from coburst.core.nodeshare import COMPACT, SPREAD, Board, CoJob, NodeSharingState
from coburst.policies.base import Param
from coburst.policies.cosched.base import BACKFILL_DEPTH, BACKFILL_RULE, AppSpeeds, CoPolicy, HeatmapParam, load_heatmap_param


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


THRESHOLD = Param("threshold", (int, float), 1.0, _finite,
                  "mean pair speedup above which two jobs are friendly (a positive number)")


class PopularityRanks:
    """Friendly-pair counts of waiting jobs (module doc), shared by Popularity and Pop-Filler."""

    def __init__(self, speeds: AppSpeeds, threshold: float):
        self.speeds = speeds
        eff = speeds.eff
        self.friendly = ((eff + eff.T) / 2 > threshold).astype(np.int64)

    def ranks(self, queue: list[CoJob]) -> np.ndarray:
        if not queue:
            return np.zeros(0, dtype=np.int64)
        a = np.fromiter((self.speeds.of(j) for j in queue), dtype=np.int64, count=len(queue))
        counts = np.bincount(a % len(self.speeds.alone), minlength=len(self.speeds.alone))
        rows = self.friendly[a]
        return rows @ counts - self.friendly[a, a]


class Popularity(CoPolicy):
    """Popularity (Kellari 2025, §5.2.5): queue by rank, least friendly jobs compact (module doc)."""

    family = "popularity"
    source = "Kellari 2025, §5.2.5"
    co = True
    params = (BACKFILL_DEPTH, BACKFILL_RULE, HeatmapParam, THRESHOLD,
              Param("min_rank", int, 1, lambda v: v >= 0, "jobs ranked below this run compact (>= 0)"))

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._ranks = PopularityRanks(AppSpeeds(load_heatmap_param(self.family, self.heatmap)), self.threshold)
        self._rank: dict[str, int] = {}

    def order(self, state: NodeSharingState, board: Board) -> list[CoJob]:
        queue = state.queue
        ranks = self._ranks.ranks(queue)
        self._rank = {j.id: int(r) for j, r in zip(queue, ranks)}
        idx = np.argsort(-ranks, kind="stable")
        return [queue[i] for i in idx]

    def mode(self, job: CoJob, state: NodeSharingState) -> str:
        if self._rank.get(job.id, 0) < self.min_rank or not state.cluster.spread_possible(job.nodes):
            return COMPACT
        return SPREAD
