"""A* batch mapping with a pruning limit (Sánchez Sousa 2023, §3.6, Alg. 4; Braun et al. 2001).

A vertex ``v`` at depth ``d`` maps the batch's first ``d`` jobs (batch order = submission
order: §3.6 maps the jobs "in random order", and the batch arrives in random order); its
children map job ``d`` to every node that can hold it.  The leaf with the smallest

    f(v) = g(v) + h(v)

is expanded next, until the chosen leaf maps the whole batch.

* ``g(v) = ct({j_0..j_{d-1}}, N) = max_n mat(n)`` after the partial mapping (§3.6.1; earlier
  work on the nodes included, as in :mod:`.minmin`'s ``makespan``);
* ``h1(v) = max(0, mmct(v) - g(v))``, ``mmct(v)`` the largest, over the unmapped jobs, of
  their minimum completion time given ``v``'s availability (max-min's ``M``);
* ``h2(v) = max(0, (smet(v) - sdma(v)) / mu)``, ``smet`` the unmapped work at its best
  (sum over jobs of ``k_j x min_n ETC(j, n)``), ``sdma = sum over cores of (g(v) - mat(c))``
  the idle time below ``g``, ``mu`` the number of cores.  The thesis counts nodes (its nodes
  are single-core in §5.1.1); per core is the same there and stays a lower bound on
  multi-core nodes.
* ``h(v) = max(h1(v), h2(v))`` -- the thesis says h is "defined with the use of" h1 and h2;
  Braun et al. take the maximum.  Both are lower bounds on the remaining increase of the
  makespan, so ``f`` never overestimates and, without pruning, the first complete leaf
  chosen is an optimal mapping (over the mappings in batch order, each job on the cores
  that free first); tested against brute force.

Pruning (§3.6.1, Alg. 4 lines 12-14: "pruning will be performed when adding a new vertex by
selecting the leave node with the maximum f(v) and deactivating it"): once the tree holds
``max_vertices`` vertices (default 128; every vertex ever added counts, as Alg. 4's
``tree_nodes``, which is never decremented), adding a vertex deactivates the leaf of largest
``f`` among the active leaves *and the new vertex* (then shallowest, then newest), and the
last active leaf is never pruned.  The thesis leaves both points open; read with the new
vertex left out, once the active leaves run out each child would prune its elder sibling,
leaving only the last node's child (every later job on the last node that can hold it).  With this reading the active leaves shrink by one per
expansion after the limit, so the search is best-first among ~``max_vertices`` leaves and
then goes greedily down (the best child by ``f``): O(jobs + max_vertices) expansions, more
time for a larger limit (the thesis' remark in Ch. 6).  ``max_vertices=0``: no pruning
(exhaustive A*).

Incumbent (our addition, not in the thesis): min-min's mapping of the batch is computed first; a vertex whose ``f`` reaches its
makespan cannot lead to a better mapping and is discarded, and if every vertex is discarded
the min-min mapping is used.  So A* is never worse than min-min on a batch (tested), and with
``max_vertices=0`` it is optimal over the mappings in batch order (on single-core nodes: over
all mappings; on multi-core nodes min-min, which maps in its own order, can be better still
and is then used).  Ties between leaves: smaller ``f``, then deeper, then older.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
from sortedcontainers import SortedList

from coburst.core.hetero import place
from coburst.policies.base import Param
from coburst.policies.hetero.base import MAPPING, Assignment, HeteroPolicy
from coburst.policies.hetero.minmin import _inputs, batch_map, makespan

__all__ = ["astar_map", "AStar", "MAX_VERTICES"]

MAX_VERTICES = Param("max_vertices", int, 128, lambda v: v >= 0,
                     "pruning limit: tree vertices after which every new vertex prunes a leaf (>= 0; 0 = no "
                     "pruning; thesis: 128)")


def astar_map(etc: np.ndarray, k: np.ndarray, avail: np.ndarray, now: float, max_vertices: int = 128,
              stats: dict | None = None) -> list[Assignment]:
    """A* mapping of the batch (module doc).  ``avail`` (nodes x cores, sorted, inf-padded)
    is updated to the availability after the chosen mapping.  Jobs that fit no node are left
    out.  ``stats`` (optional) receives ``expanded``, ``generated``, ``used`` ("astar" or
    "min-min")."""
    np.maximum(avail, now, out=avail)
    k = np.asarray(k, dtype=np.int64)
    m, width = avail.shape
    real = np.isfinite(avail)
    cores = real.sum(axis=1)
    mu = int(cores.sum())
    fits = k[:, None] <= cores[None, :]
    order = np.flatnonzero(fits.any(axis=1))          # jobs that fit somewhere, batch order
    etc = etc[order]
    k = k[order]
    fits = fits[order]
    n_jobs = len(order)

    # incumbent: min-min
    inc_avail = avail.copy()
    inc_plan = batch_map(etc.copy(), k, inc_avail, now, "min")
    ub = makespan(inc_avail)

    best_etc = np.where(fits, etc, math.inf).min(axis=1)
    smet_suffix = np.zeros(n_jobs + 1)
    smet_suffix[:-1] = np.cumsum((k * best_etc)[::-1])[::-1]
    nodes_ok = [np.flatnonzero(fits[j]) for j in range(n_jobs)]

    # vertex store: id -> (parent id, node, depth); open leaves: id -> (avail, g, sum of avail)
    parent = [-1]
    vnode = [-1]
    open_data: dict[int, tuple[np.ndarray, float, float]] = {}
    g0 = makespan(avail)
    open_data[0] = (avail.copy(), g0, float(avail[real].sum()))
    leaves = SortedList([(0.0, 0, 0)])                 # (f, -depth, id)
    expanded = 0
    found = -1
    while leaves:
        f, negd, vid = leaves.pop(0)
        d = -negd
        if d == n_jobs:
            found = vid
            break
        p_avail, g, s_avail = open_data.pop(vid)
        expanded += 1
        kj = int(k[d])
        cand = nodes_ok[d]
        # children's rows: node n's row after placing job d there
        new_rows = p_avail[cand].copy()
        start = np.maximum(new_rows[:, kj - 1], now)
        end = start + etc[d, cand]
        new_rows[:, :kj] = end[:, None]
        new_rows.sort(axis=1)
        g_child = np.maximum(g, end)
        row_sum_old = np.where(real[cand], p_avail[cand], 0.0).sum(axis=1)
        row_sum_new = np.where(real[cand], new_rows, 0.0).sum(axis=1)
        s_child = s_avail - row_sum_old + row_sum_new
        if d + 1 < n_jobs:
            kr = k[d + 1:]
            etc_r = etc[d + 1:]
            ct = p_avail[:, kr - 1].T + etc_r                  # (R, m) under the parent
            a1 = ct.argmin(axis=1)
            b1 = ct[np.arange(len(kr)), a1]
            ct2 = ct.copy()
            ct2[np.arange(len(kr)), a1] = math.inf
            b2 = ct2.min(axis=1)
            col_new = new_rows[:, kr - 1].T + etc_r[:, cand]    # (R, children)
            excl = np.where(a1[:, None] == cand[None, :], b2[:, None], b1[:, None])
            mmct = np.minimum(excl, col_new).max(axis=0)
            h1 = np.maximum(0.0, mmct - g_child)
            h2 = np.maximum(0.0, (smet_suffix[d + 1] - (mu * g_child - s_child)) / mu)
            f_child = g_child + np.maximum(h1, h2)
        else:
            f_child = g_child
        for i, n in enumerate(cand):
            fc = float(f_child[i])
            if fc >= ub:
                continue                                   # cannot beat the incumbent
            key = (fc, -(d + 1), len(parent))
            if max_vertices and len(parent) >= max_vertices and leaves:
                if key >= leaves[-1]:
                    continue                               # the new vertex is the worst leaf: pruned
                worst = leaves.pop(-1)
                open_data.pop(worst[2], None)
            cid = len(parent)
            parent.append(vid)
            vnode.append(int(n))
            row = p_avail.copy()
            row[n] = new_rows[i]
            open_data[cid] = (row, float(g_child[i]), float(s_child[i]))
            leaves.add(key)
    if stats is not None:
        stats.update(expanded=expanded, generated=len(parent), used="astar" if found >= 0 else "min-min")
    if found < 0:
        avail[...] = inc_avail
        return [Assignment(int(order[a.job]), a.node, a.start, a.end) for a in inc_plan]
    chain = []
    v = found
    while parent[v] >= 0:
        chain.append(vnode[v])
        v = parent[v]
    chain.reverse()
    out = []
    for j, n in enumerate(chain):
        start, end = place(avail[n], int(k[j]), float(etc[j, n]), now)
        out.append(Assignment(int(order[j]), n, start, end))
    return out


class AStar(HeteroPolicy):
    """A* with f = g + h and a pruning limit (module doc)."""

    family: ClassVar[str] = "astar"
    source: ClassVar[str] = "Sánchez Sousa 2023, §3.6, Alg. 4; Braun et al. 2001"
    params: ClassVar[tuple[Param, ...]] = (MAPPING, MAX_VERTICES)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.last_stats: dict = {}

    def plan(self, state, jobs, avail, now_only=False):
        etc, k = _inputs(state, jobs)   # A* needs the whole batch: now_only unused
        self.last_stats = {}
        return astar_map(etc, k, avail, state.now, self.max_vertices, self.last_stats)
