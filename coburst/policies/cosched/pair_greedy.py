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
"""

from __future__ import annotations

import numpy as np

from coburst.core.nodeshare import COMPACT, Board, CoJob, NodeSharingState
from coburst.policies.cosched.base import BACKFILL_DEPTH, AppSpeeds, HeatmapParam, load_heatmap_param
from coburst.policies.cosched.easy_co import EASYCo


class PairGreedy(EASYCo):
    """Heatmap-greedy pairing (Kuchumov & Korkhov 2021, §4.2, FCS applied to pairs), module doc."""

    family = "pair-greedy"
    source = "Kuchumov & Korkhov 2021, §4.2 (FCS), on pairs"
    params = (BACKFILL_DEPTH, HeatmapParam)

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
