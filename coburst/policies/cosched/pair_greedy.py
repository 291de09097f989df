"""Heatmap-greedy pairing: each job next to the neighbour that maximises the pair's speed.

Kuchumov & Korkhov 2021 (§4.2, Listing 1) run, online, the *fastest combination* of the
active tasks (FCS).  Applied to pairs on a node-sharing machine: EASY-Co (submission order,
spread placements, EASY backfilling) whose node choice ranks the nodes a spread job could
take by the **combined speed** its placement gives there:

* a half-free node holding job ``b``: ``s(a, b) + s(b, a) - alone(b)`` (``a``'s speed next
  to ``b`` plus what ``b`` gains or loses by the company);
* an idle node: ``alone(a)``;

with ELiSE's values (``s``: measured, else the row mean; ``alone``: the best value of the
row, the speed the hook gives a spread job without neighbour).  Ties keep node order.  A job
runs at the minimum over its nodes (the hook's rule), so the greedy choice per node is a
heuristic, not an optimum.

**Not the paper's FCS** (that is :mod:`.fcs`, policy ``fcs``).  Listing 1 chooses the
combination of tasks with the largest total speed; Pair-Greedy chooses neither the jobs nor
their placement mode by speed:

* *which jobs start* is EASY-Co's (submission order, then EASY backfilling behind the head,
  by walltimes); FCS picks the jobs whose combination is fastest, ignoring order and walltimes;
* *how*: every job that can is spread (FCS also runs jobs compact, or spread without
  neighbour, when that is faster), and a job is co-located even when the pair's total
  falls below what the two would do apart (FCS leaves it waiting);
* the speed is scored *per node*, one job at a time, given the jobs already placed: each
  node is ranked by the pair it would hold, while the job runs at the minimum over all its
  nodes; FCS scores the whole set started in a decision at once, with the hook's minimum
  over neighbours, exactly (an integer program).
"""

from __future__ import annotations

import numpy as np

from coburst.core.nodeshare import COMPACT, Board, CoJob, NodeSharingState
from coburst.policies.cosched.base import BACKFILL_DEPTH, BACKFILL_RULE, AppSpeeds, HeatmapParam, load_heatmap_param
from coburst.policies.cosched.easy_co import EASYCo


class PairGreedy(EASYCo):
    """Heatmap-greedy pairing (after Kuchumov & Korkhov 2021, §4.2: EASY-Co with FCS's speed
    criterion for the node choice only; the paper's FCS is :class:`~.fcs.FCS`), module doc."""

    family = "pair-greedy"
    source = "Kuchumov & Korkhov 2021, §4.2 (FCS), on pairs"
    params = (BACKFILL_DEPTH, BACKFILL_RULE, HeatmapParam)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.speeds = AppSpeeds(load_heatmap_param(self.family, self.heatmap))
        self._app = np.full(1024, -1, dtype=np.int64)  # job seq -> application index

    def on_job_release(self, state: NodeSharingState, jobs) -> None:
        top = max(j.seq for j in jobs)
        if top >= len(self._app):
            grown = np.full(max(2 * len(self._app), top + 1), -1, dtype=np.int64)
            grown[: len(self._app)] = self._app
            self._app = grown
        for j in jobs:
            self._app[j.seq] = self.speeds.of(j)

    def node_order_key(self, job: CoJob):
        return self.speeds.of(job)  # the order depends on the job's application only

    def node_order(self, job: CoJob, mode: str, board: Board, state: NodeSharingState) -> np.ndarray | None:
        if mode == COMPACT:
            return None
        c = board.cluster
        a = self.speeds.of(job)
        resident = board.owner.reshape(c.n, -1).max(axis=1)  # a spread-suitable node holds <= 1 job
        b = np.where(resident >= 0, self._app[np.maximum(resident, 0)], -1)
        eff = self.speeds.eff
        shared = eff[a, b] + eff[b, a] - self.speeds.alone[b]
        score = np.where(resident >= 0, shared, self.speeds.alone[a])
        return np.argsort(-score, kind="stable")
