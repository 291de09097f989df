"""A minimal event loop driving a node-sharing policy without a simulator (tests only).

Jobs run exactly their ``runtime`` (default: walltime, capped at it); simultaneous events form
one batch (ends, then submissions), the policy is called once per batch, every decision is
validated by :meth:`NodeSharingState.apply`, and after each batch the board is checked
against the invariants of the co-scheduling model.  The engine-level tests drive the same
policies through the real simulator; this loop makes hypothesis fast.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import numpy as np

from coburst.core.nodeshare import COMPACT, MAX_PER_NODE, CoJob, NodeSharingCluster, NodeSharingState


@dataclass
class Record:
    job: CoJob
    start: float | None = None
    end: float | None = None
    mode: str | None = None
    nodes: tuple = ()
    units: tuple = ()


@dataclass
class ReplayOut:
    records: dict[str, Record] = field(default_factory=dict)
    rejected: list[str] = field(default_factory=list)
    stalled: list[str] = field(default_factory=list)
    decisions: int = 0


def check_board(state: NodeSharingState) -> None:
    """Invariants: no unit twice, compact jobs alone, <= MAX_PER_NODE jobs per node, counts right."""
    c = state.cluster
    owner = np.full(c.n * c.units_per_node, -1)
    per_node: dict[int, list] = {}
    for run in state.running.values():
        u = np.asarray(run.placement.units)
        assert (owner[u] == -1).all(), "a unit given twice"
        owner[u] = run.job.seq
        for node in run.placement.nodes:
            per_node.setdefault(node, []).append(run)
    for node, runs in per_node.items():
        assert len(runs) <= MAX_PER_NODE, f"node {node} holds {len(runs)} jobs"
        if any(r.placement.mode == COMPACT for r in runs):
            assert len(runs) == 1, f"compact job not alone on node {node}"
    b = state._board
    assert (b.owner == owner).all()
    assert b.n_compact == int(b.compact_mask().sum()) and b.n_spread == int(b.spread_mask().sum())
    assert (b.compact_ok == b.compact_mask()).all() and (b.spread_ok == b.spread_mask()).all()


def replay(cluster: NodeSharingCluster, jobs: list[CoJob], policy, runtimes: dict[str, float] | None = None,
           check: bool = True, after=None) -> ReplayOut:
    """Run ``jobs`` under ``policy``; ``after(state, decisions)`` is called after each batch."""
    state = NodeSharingState(cluster, 0.0)
    out = ReplayOut()
    events: list = []
    for j in jobs:
        heapq.heappush(events, (j.subtime, 1, j.seq, j))
    while events:
        now = events[0][0]
        state.advance(now)
        ended, released = [], []
        while events and events[0][0] == now:
            _, kind, _, job = heapq.heappop(events)
            if kind == 0:
                state.finish(job.id)
                out.records[job.id].end = now
                ended.append(job)
            elif cluster.never_fits(job.res):
                out.rejected.append(job.id)
            else:
                state.submit(job)
                released.append(job)
        if ended:
            policy.on_job_end(state, ended)
        if released:
            policy.on_job_release(state, released)
        d = policy.make_decisions(state)
        out.decisions += 1
        state.apply(d)
        for st in d.starts:
            rt = min((runtimes or {}).get(st.job.id, st.job.walltime), st.job.walltime)
            out.records[st.job.id] = Record(st.job, now, None, st.alloc.mode, st.alloc.nodes, st.alloc.units)
            heapq.heappush(events, (now + rt, 0, st.job.seq, st.job))
        if check:
            check_board(state)
        if after is not None:
            after(state, d)
    out.stalled = [j.id for j in state.queue]
    return out
