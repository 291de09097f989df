"""Node-sharing core and co-scheduling policies, on the reference event loop (tests/cosched_replay.py).

Hand-computed placements and orders, then hypothesis over random workloads: no unit given
twice, compact jobs alone, at most two jobs per node, every job finishes, EASY's reservation
honoured, determinism.  The same policies on the real engine: tests/test_cosched_engine.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cosched_replay import replay
from coburst.core.nodeshare import COMPACT, SPREAD, Board, CoJob, NodeSharingCluster, NodeSharingState
from coburst.errors import InputError
from coburst.models.heatmap import Heatmap
from coburst.policies import cosched
from coburst.policies.cosched.base import _shadow
from coburst.policies.cosched.filler import gap_factor, position_factor
from coburst.policies.cosched.popularity import PopularityRanks
from coburst.policies.cosched.base import AppSpeeds

HEATMAP_POLICIES = ("popularity", "pop-filler", "pair-greedy")
APPS = ["bt.D.256", "cg.D.256", "lu.D.256", "sp.D.256", None]


def job(i, nodes, wall, sub=0.0, app=None, units=4, cores=5):
    return CoJob(f"j{i}", float(sub), nodes * units, float(wall), nodes, i, app=app, processes=nodes * units * cores)


def policy(name, **kw):
    if name in HEATMAP_POLICIES:
        kw.setdefault("heatmap", "aris-nas")
    return cosched.get(name, **kw)


# ---------------------------------------------------------------------- the board
def test_spread_colocates_on_half_free_nodes_in_node_order():
    c = NodeSharingCluster.build(4)          # 4 nodes x 2 sockets x 2 half-sockets
    b = Board(c)
    a = b.place(0, SPREAD, 1)
    assert a.nodes == (0, 1) and a.units == (0, 2, 4, 6)   # first half of each socket
    assert b.n_compact == 2 and b.n_spread == 4
    bb = b.place(1, SPREAD, 1)
    assert bb.nodes == (0, 1) and bb.units == (1, 3, 5, 7)  # co-located: the other halves
    assert b.n_spread == 2 and b.n_compact == 2
    assert b.place(2, COMPACT, 3) is None and b.place(3, SPREAD, 2) is None
    cpt = b.place(4, COMPACT, 2)
    assert cpt.nodes == (2, 3) and len(cpt.units) == 8 and b.n_compact == 0 and b.n_spread == 0
    b.give(a)
    assert b.n_spread == 2 and b.residents(0) == [1]
    with pytest.raises(ValueError):
        b.take(9, cpt)                        # units not free


def test_cluster_from_resources_and_errors():
    res = [{"id": i, "name": f"u{i}", "properties": {"node": str(i // 4), "socket": str(i // 2 % 2),
                                                     "unit": str(i % 2), "cores": "5"}} for i in range(8)]
    c = NodeSharingCluster.from_resources(res)
    assert (c.n, c.sockets, c.k, c.cores_per_unit) == (2, 2, 2, 5)
    assert c.never_fits(4) is None and "whole number" in c.never_fits(6) and "platform has 2" in c.never_fits(12)
    with pytest.raises(InputError, match="'node'"):
        NodeSharingCluster.from_resources([{"id": 0, "name": "x", "properties": {}}])
    with pytest.raises(InputError, match="regular"):
        NodeSharingCluster.from_resources(res[:7])


def test_apply_validates_placements():
    c = NodeSharingCluster.build(2)
    s = NodeSharingState(c)
    s.submit(job(0, 1, 10))
    s.submit(job(1, 1, 10))
    d = cosched.get("easy-co").make_decisions(s)
    assert [st.alloc.mode for st in d.starts] == [SPREAD, SPREAD]
    s.apply(d)
    assert s.neighbours("j0") == [s.running["j1"].job]
    s2 = NodeSharingState(c)
    s2.submit(job(0, 1, 10))
    s2.submit(job(1, 1, 10))
    d0 = cosched.get("easy-co").make_decisions(s2)
    d0.starts[1] = type(d0.starts[1])(d0.starts[1].job, d0.starts[0].alloc)  # same units twice
    with pytest.raises(ValueError):
        s2.apply(d0)


# ---------------------------------------------------------------------- orders
def test_filler_factors_hand_computed():
    jobs = [job(0, 1, 10), job(1, 2, 10), job(2, 4, 10)]   # 20, 40, 80 processes
    # 60 idle cores: gaps 40, 20, -20 -> 1 - 40/60, 1 - 20/60, -1
    assert np.allclose(gap_factor(jobs, 60), [1 / 3, 2 / 3, -1])
    assert np.allclose(gap_factor(jobs, 0), [1, 1, 1])
    assert np.allclose(position_factor(np.array([2, 0, 1])), [1 - 1 / 3, 1 - 2 / 3, 1.0])
    c = NodeSharingCluster.build(3)                       # 3 nodes x 20 cores = 60 idle cores
    s = NodeSharingState(c)
    for j in jobs:
        s.submit(j)
    # scores f0 / ((seq + 1) / 3): 1/3 / (1/3) = 1, 2/3 / (2/3) = 1, -1 / 1 = -1 -> j0, j1, j2
    assert [j.id for j in cosched.get("filler").order(s, s.board())] == ["j0", "j1", "j2"]
    # SJF-Filler: f0 + (1 - pos/3) with walltimes 30, 20, 10 -> positions 2, 1, 0
    s3 = NodeSharingState(c)
    for j in (job(0, 1, 30), job(1, 2, 20), job(2, 4, 10)):
        s3.submit(j)
    # j0: 1/3 + 1/3; j1: 2/3 + 2/3; j2: -1 + 1
    assert [j.id for j in cosched.get("sjf-filler").order(s3, s3.board())] == ["j1", "j0", "j2"]
    # partial queue: only the 2 oldest are reordered
    assert [j.id for j in cosched.get("sjf-filler", sort_depth=2).order(s3, s3.board())] == ["j1", "j0", "j2"]
    assert [j.id for j in cosched.get("sjf-filler", sort_depth=1).order(s3, s3.board())] == ["j0", "j1", "j2"]


def tiny_heatmap():
    # x is friendly with y (mean (1.3 + 1.1) / 2 = 1.2), nobody else; z slows everyone
    v = {("x", "y"): 1.3, ("y", "x"): 1.1, ("x", "x"): 0.9, ("y", "y"): 0.95, ("x", "z"): 0.8, ("z", "x"): 0.9,
         ("y", "z"): 0.7, ("z", "y"): 0.9, ("z", "z"): 0.8}
    return Heatmap(["x", "y", "z"], v)


def test_popularity_ranks_hand_computed(tmp_path):
    from coburst.models.heatmap import write_heatmap
    path = tmp_path / "tiny.heatmap.csv"
    write_heatmap(tiny_heatmap(), path)
    ranks = PopularityRanks(AppSpeeds(tiny_heatmap()), 1.0)
    q = [CoJob("a", 0, 4, 10, 1, 0, "x"), CoJob("b", 0, 4, 10, 1, 1, "y"), CoJob("c", 0, 4, 10, 1, 2, "y"),
         CoJob("d", 0, 4, 10, 1, 3, "z")]
    # a (x) is friendly with b and c; b, c with a only; d with nobody
    assert ranks.ranks(q).tolist() == [2, 1, 1, 0]
    c = NodeSharingCluster.build(8)
    s = NodeSharingState(c)
    for j in q:
        s.submit(j)
    pol = cosched.get("popularity", heatmap=str(path))
    d = pol.make_decisions(s)
    assert [st.job.id for st in d.starts] == ["a", "b", "c", "d"]
    assert [st.alloc.mode for st in d.starts] == [SPREAD, SPREAD, SPREAD, COMPACT]  # d: rank 0
    # pair-greedy: b goes next to a (gain 1.1 + 1.3 - alone(x)=1.3 -> 1.1) rather than alone
    # (alone(y) = 1.1: a tie kept in node order, the shared node first)
    pg = cosched.get("pair-greedy", heatmap=str(path))
    s2 = NodeSharingState(c)
    for j in q[:2] + q[3:]:
        s2.submit(j)
    pg.on_job_release(s2, s2.queue)
    d2 = pg.make_decisions(s2)
    nodes = {st.job.id: st.alloc.nodes for st in d2.starts}
    assert nodes["a"] == (0, 1) and nodes["b"] == (0, 1)
    # d (z) scores: next to a/b (x, y): 0.9+0.8-... all < alone(z)=0.9 -> idle nodes
    assert set(nodes["d"]).isdisjoint({0, 1})


def test_unknown_policy_and_parameters():
    with pytest.raises(InputError, match="unknown co-scheduling policy"):
        cosched.get("nope")
    with pytest.raises(InputError, match="backfill_depth"):
        cosched.get("easy-co", backfill_depth=-1)
    with pytest.raises(InputError, match="heatmap"):
        cosched.get("popularity", heatmap="no-such-heatmap")
    assert cosched.resolve("EASY-Co")[0] is cosched.EASYCo


def test_easy_backfills_without_delaying_the_head():
    c = NodeSharingCluster.build(4)
    s = NodeSharingState(c)
    # running: j0 on 3 nodes until 100; head j1 needs 4 nodes (shadow 100)
    s.submit(job(0, 3, 100))
    s.apply(cosched.get("easy").make_decisions(s))
    for j in (job(1, 4, 50), job(2, 1, 100), job(3, 1, 200)):
        s.submit(j)
    d = cosched.get("easy").make_decisions(s)
    assert [st.job.id for st in d.starts] == ["j2"]   # ends at 100 = shadow; j3 would delay j1
    assert _shadow(cosched.get("easy"), s.queue[0], s.board(), s, [])[0] == 100


def test_conservative_reserves_every_job():
    c = NodeSharingCluster.build(4)
    s = NodeSharingState(c)
    s.submit(job(0, 2, 100))
    s.apply(cosched.get("conservative").make_decisions(s))
    # j1 (4 nodes) reserved at 100; j2 (2 nodes, 150 s) would delay it; j3 (2 nodes, 100 s) fits before
    for j in (job(1, 4, 50), job(2, 2, 150), job(3, 2, 100)):
        s.submit(j)
    assert [st.job.id for st in cosched.get("conservative").make_decisions(s).starts] == ["j3"]
    assert [st.job.id for st in cosched.get("easy").make_decisions(s).starts] == ["j3"]


# ---------------------------------------------------------------------- properties
@st.composite
def workloads(draw):
    nodes = draw(st.integers(2, 8))
    n = draw(st.integers(1, 25))
    jobs, runtimes = [], {}
    for i in range(n):
        m = draw(st.integers(1, max(1, nodes // 2 + 1)))
        wall = draw(st.integers(1, 200))
        sub = draw(st.integers(0, 100))
        jobs.append(job(i, m, wall, sub, draw(st.sampled_from(APPS))))
        runtimes[f"j{i}"] = draw(st.integers(1, wall))
    jobs.sort(key=lambda j: (j.subtime, j.seq))
    jobs = [CoJob(j.id, j.subtime, j.res, j.walltime, j.nodes, k, j.app, j.processes) for k, j in enumerate(jobs)]
    runtimes = {j.id: runtimes[j.id] for j in jobs}
    return NodeSharingCluster.build(nodes), jobs, runtimes


@pytest.mark.parametrize("name", sorted(cosched.families()))
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wl=workloads())
def test_invariants_on_random_workloads(name, wl):
    """No unit twice, compact alone, <= 2 jobs per node (checked after every batch), every
    job finishes, same decisions twice."""
    cluster, jobs, runtimes = wl
    out = replay(cluster, jobs, policy(name), runtimes)
    assert not out.stalled
    assert set(out.records) | set(out.rejected) == {j.id for j in jobs}
    assert all(r.end is not None for r in out.records.values())
    if not cosched.families()[name].co:
        assert all(r.mode == COMPACT for r in out.records.values())
    again = replay(cluster, jobs, policy(name), runtimes)
    assert [(k, r.start, r.units) for k, r in out.records.items()] == \
        [(k, r.start, r.units) for k, r in again.records.items()]


@pytest.mark.parametrize("name", ["easy", "easy-co", "conservative"])
@settings(max_examples=40, deadline=None)
@given(wl=workloads())
def test_first_waiting_job_never_delayed(name, wl):
    """Submission-order policies with exact walltimes: once a job is first in the queue, it
    starts no later than the earliest date computed for it then (EASY's reservation)."""
    cluster, jobs, _ = wl
    pol = policy(name)
    promised: dict[str, float] = {}

    def after(state, d):
        if state.queue:
            head = state.queue[0]
            date = _shadow(pol, head, state.board(), state, [])[0]
            promised.setdefault(head.id, date)

    out = replay(cluster, jobs, pol, None, after=after)
    for jid, date in promised.items():
        assert out.records[jid].start <= date + 1e-9, (jid, out.records[jid].start, date)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 400), min_size=1, max_size=120, unique=True))
def test_placement_ids_are_the_procset_of_its_units(units):
    from procset import ProcSet
    from coburst.core.nodeshare import Placement
    c = NodeSharingCluster.build(101)
    pl = Placement(SPREAD, (), tuple(sorted(units)))
    ps = pl.ids(c)
    assert ps == ProcSet(*units) and str(ps) == str(ProcSet(*units))
    assert ps | ProcSet(500) == ProcSet(*units, 500) and len(ps) == len(units)
