"""Min-min and max-min batch mapping (Sánchez Sousa 2023, §3.3-3.4; Braun et al. 2001).

For every unmapped job its minimum completion time over the nodes is
``M(j) = min_n ct(j, n)`` with ``ct(j, n) = mat(n) + ETC(j, n)`` (§3.2; per core: the job
starts when its ``k`` first-free cores are free, :func:`coburst.core.hetero.place`).
*Min-min* maps the job with the smallest ``M`` to its best node, *max-min* the job with the
largest, then updates that node's availability and repeats until the batch is mapped.

The thesis' pseudocode (Alg. 1-2) instead sorts the batch by requested time and maps the jobs
in that order (max-min: backwards), each to its minimum-completion-time node.  With
consistent heterogeneity (``ETC = work / speed``) and jobs of equal width both are the same
mapping (``M`` grows with the work), which a test checks; on a general ETC matrix (Braun's
inconsistent ones) only the selection by ``M`` is min-min.  This module implements the
selection by ``M`` (the definitions §3.3.1 / §3.4.1).

Ties: the earlier job of the batch (submission order), the lower node index.

:func:`batch_map` is the vectorised implementation (numpy; after a mapping only the chosen
node's column of ``ct`` changes, and it only grows, so only the rows whose best node it was
are searched again); :func:`batch_map_reference` is the straightforward O(J^2 m) loop it is
tested and benchmarked against.
"""

from __future__ import annotations

import math
from typing import ClassVar, Sequence

import numpy as np

from coburst.core.hetero import HeteroState, HJob, place
from coburst.policies.base import Param
from coburst.policies.hetero.base import MAPPING, Assignment, HeteroPolicy

__all__ = ["batch_map", "batch_map_reference", "makespan", "MinMin", "MaxMin", "Duplex"]


def batch_map(etc: np.ndarray, k: np.ndarray, avail: np.ndarray, now: float,
              pick: str = "min", now_only: bool = False) -> list[Assignment]:
    """Min-min (``pick="min"``) or max-min (``"max"``) over the ETC matrix ``etc`` (jobs x
    nodes), job widths ``k`` and the sorted, inf-padded core availability ``avail`` (nodes x
    cores; updated in place).  Jobs that fit no node are left out.  ``now_only``: stop once
    no core is free at ``now`` (availability only grows, so no later assignment would start
    now: the plan's prefix, all a deferred decision uses)."""
    n_jobs, _ = etc.shape
    np.maximum(avail, now, out=avail)
    k = np.asarray(k, dtype=np.int64)
    rows = np.arange(n_jobs)
    ct = avail[:, k - 1].T + etc                       # (J, m)
    best = ct.argmin(axis=1)
    m_val = ct[rows, best]
    done = ~np.isfinite(m_val)                         # fits no node
    sign = 1.0 if pick == "min" else -1.0
    key = np.where(done, math.inf, sign * m_val)
    out: list[Assignment] = []
    for _ in range(int((~done).sum())):
        if now_only and avail[:, 0].min() > now:
            break
        j = int(key.argmin())
        n = int(best[j])
        start, end = place(avail[n], int(k[j]), float(etc[j, n]), now)
        out.append(Assignment(j, n, start, end))
        done[j] = True
        key[j] = math.inf
        ct[:, n] = avail[n, k - 1] + etc[:, n]
        stale = np.flatnonzero((best == n) & ~done)
        if stale.size:
            sub = ct[stale]
            b = sub.argmin(axis=1)
            best[stale] = b
            v = sub[np.arange(stale.size), b]
            key[stale] = sign * v
    return out


def batch_map_reference(etc: Sequence[Sequence[float]], k: Sequence[int], avail: list[list[float]], now: float,
                        pick: str = "min") -> list[Assignment]:
    """The straightforward min-min / max-min: at each step every remaining job's completion
    time on every node (pure Python, O(J^2 m)); same ties as :func:`batch_map`.  ``avail``:
    per node, its cores' availability dates (changed in place)."""
    avail = [sorted(max(t, now) for t in row) for row in avail]
    remaining = list(range(len(etc)))
    out = []
    while True:
        chosen = None
        for j in remaining:
            bn, bct = -1, math.inf
            for n, row in enumerate(avail):
                if k[j] > len(row):
                    continue
                c = max(row[k[j] - 1], now) + etc[j][n]
                if c < bct:
                    bn, bct = n, c
            if bn < 0:
                continue
            if chosen is None or (bct < chosen[2] if pick == "min" else bct > chosen[2]):
                chosen = (j, bn, bct)
        if chosen is None:
            return out
        j, n, _ = chosen
        row = avail[n]
        start = max(row[k[j] - 1], now)
        end = start + etc[j][n]
        row[:k[j]] = [end] * k[j]
        row.sort()
        out.append(Assignment(j, n, start, end))
        remaining.remove(j)


def makespan(avail: np.ndarray) -> float:
    """``ct(J, N) = max_n mat(n)`` (§3.5.1): the latest core availability."""
    finite = avail[np.isfinite(avail)]
    return float(finite.max()) if finite.size else 0.0


def _inputs(state: HeteroState, jobs: Sequence[HJob]) -> tuple[np.ndarray, np.ndarray]:
    return state.etc_matrix(list(jobs)), np.fromiter((j.res for j in jobs), dtype=np.int64, count=len(jobs))


class MinMin(HeteroPolicy):
    """Min-min (§3.3): the job with the minimum completion time first (module doc)."""

    family: ClassVar[str] = "min-min"
    source: ClassVar[str] = "Sánchez Sousa 2023, §3.3; Braun et al. 2001"
    pick: ClassVar[str] = "min"

    def plan(self, state, jobs, avail, now_only=False):
        etc, k = _inputs(state, jobs)
        return batch_map(etc, k, avail, state.now, self.pick, now_only)


class MaxMin(MinMin):
    """Max-min (§3.4): the job whose minimum completion time is the largest first."""

    family: ClassVar[str] = "max-min"
    source: ClassVar[str] = "Sánchez Sousa 2023, §3.4; Braun et al. 2001"
    pick: ClassVar[str] = "max"


class Duplex(HeteroPolicy):
    """Duplex (§3.5, Alg. 3): per batch, min-min and max-min are both computed and the one
    with the smaller ``ct(J, N) = max_n mat(n)`` (every node's machine availability time
    after the batch, earlier work included, §3.5.1) is used; a tie goes to min-min
    (Alg. 3: ``if ct(MinMin) <= ct(MaxMin)``).  IRMaSim's code compares the batch's own
    latest completion and gives ties to max-min; we follow the thesis' text.
    ``last_choice`` says which one the last batch used ("min-min" / "max-min")."""

    family: ClassVar[str] = "duplex"
    source: ClassVar[str] = "Sánchez Sousa 2023, §3.5, Alg. 3"
    params: ClassVar[tuple[Param, ...]] = (MAPPING,)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.last_choice: str | None = None
        self.choices: list[tuple[float, str]] = []

    def plan(self, state, jobs, avail, now_only=False):
        etc, k = _inputs(state, jobs)   # the choice needs both complete plans: now_only unused
        a_min, a_max = avail.copy(), avail.copy()
        p_min = batch_map(etc, k, a_min, state.now, "min")
        p_max = batch_map(etc, k, a_max, state.now, "max")
        use_min = makespan(a_min) <= makespan(a_max)
        self.last_choice = "min-min" if use_min else "max-min"
        self.choices.append((state.now, self.last_choice))
        avail[...] = a_min if use_min else a_max
        return p_min if use_min else p_max
