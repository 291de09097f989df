"""The co-scheduling Conservative keeps its plan between decisions:
the same decisions as planning every decision from scratch (the implementation before, kept
here as the reference), on random workloads with exact and early ends, burst buffers that
fit or not, jobs submitted together or apart (hypothesis, tests/cosched_replay.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cosched_replay import replay
from coburst.core.nodeshare import COMPACT, CoJob, NodeSharingCluster, NodeSharingState, PlacementDecisions
from coburst.policies import cosched
from coburst.policies.cosched import traditional
from coburst.policies.cosched.traditional import Conservative, _reserve


class FromScratch(Conservative):
    """Conservative as it was: every decision plans every waiting job again."""

    def make_decisions(self, state: NodeSharingState) -> PlacementDecisions:
        decisions = PlacementDecisions(state.now)
        queue = state.queue
        if not queue:
            return decisions
        board = state.board()
        now = state.now
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
        least = np.minimum.accumulate(np.fromiter((j.nodes for j in reversed(queue)), dtype=np.int64,
                                                  count=len(queue)))[::-1]
        for i, job in enumerate(queue):
            if f[0] < least[i]:
                break
            start, t, f = _reserve(t, f, job.nodes, job.walltime)
            if start == now:
                pl = board.place(job.seq, COMPACT, job.nodes, bb=job.bb)
                if pl is not None:
                    decisions.start(job, pl)
        return decisions


@st.composite
def workloads(draw):
    nodes = draw(st.integers(2, 10))
    bb_nodes = draw(st.sampled_from([0, 0, 1, 2]))
    n = draw(st.integers(1, 40))
    together = draw(st.booleans())
    jobs, runtimes = [], {}
    for i in range(n):
        m = draw(st.integers(1, nodes))
        wall = draw(st.sampled_from([1, 2, 5, 10, 30, 100, 250])) if together else draw(st.integers(1, 300))
        sub = 0 if together else draw(st.integers(0, 200))
        bb = draw(st.sampled_from([0, 0, 10, 30])) if bb_nodes else 0
        jobs.append((m, wall, sub, bb))
        early = draw(st.sampled_from(["exact", "exact", "early"]))
        runtimes[i] = wall if early == "exact" else draw(st.integers(1, wall))
    order = sorted(range(n), key=lambda i: (jobs[i][2], i))
    cojobs = [CoJob(f"j{k}", float(jobs[i][2]), jobs[i][0] * 4, float(jobs[i][1]), jobs[i][0], k, bb=jobs[i][3])
              for k, i in enumerate(order)]
    rts = {f"j{k}": float(runtimes[i]) for k, i in enumerate(order)}
    cluster = NodeSharingCluster.build(nodes)
    if bb_nodes:
        cluster = NodeSharingCluster.build(nodes, bb_capacity=[50] * bb_nodes)
    return cluster, cojobs, rts


def _records(out):
    return [(k, r.start, r.end, r.units) for k, r in sorted(out.records.items())]


@pytest.mark.parametrize("compiled_from,check_every", [(0, 1), (10**9, 3), (0, 32)],
                         ids=["numba-check1", "numpy-check3", "numba-check32"])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(wl=workloads())
def test_same_decisions_as_planning_from_scratch(monkeypatch, compiled_from, check_every, wl):
    """Every decision (date, jobs started, their units) and every job's start and end equal;
    the reservations made by the numba kernel (``compiled_from=0``) or by numpy, the test
    "can any job left start now" made every ``check_every`` reservations."""
    monkeypatch.setattr(traditional, "COMPILED_FROM", compiled_from)
    monkeypatch.setattr(traditional, "CHECK_EVERY", check_every)
    cluster, jobs, runtimes = wl
    kept, scratch = cosched.get("conservative"), FromScratch()
    decisions: list = []

    def log(state, d):
        decisions.append((state.now, [(s.job.id, tuple(s.alloc.units)) for s in d.starts]))

    a = replay(cluster, jobs, kept, runtimes, after=log)
    mine = decisions
    decisions = []
    b = replay(cluster, jobs, scratch, runtimes, after=log)
    assert mine == decisions
    assert _records(a) == _records(b)
    assert a.stalled == b.stalled


def test_the_plan_is_kept_when_every_job_ends_at_its_walltime():
    """1000 jobs at t = 0 on 20 nodes, exact walltimes: after the first decision no decision
    plans again from the running jobs (the kept plan only starts jobs)."""
    rng = np.random.default_rng(0)
    jobs = [CoJob(f"j{i}", 0.0, 4 * m, float(w), int(m), i)
            for i, (m, w) in enumerate(zip(rng.integers(1, 8, 1000), rng.integers(10, 500, 1000)))]
    pol = cosched.get("conservative")
    fresh_calls = []
    original = traditional._Plan.fresh

    def counting(state, board):
        fresh_calls.append(state.now)
        return original(state, board)

    traditional._Plan.fresh = staticmethod(counting)
    try:
        out = replay(NodeSharingCluster.build(20), jobs, pol, None, check=False)
    finally:
        traditional._Plan.fresh = original
    assert not out.stalled and len(out.records) == 1000
    assert fresh_calls == [0.0]
    ref = replay(NodeSharingCluster.build(20), jobs, FromScratch(), None, check=False)
    assert _records(out) == _records(ref)
