"""Filler's order generated lazily: the same order and decisions as
sorting the whole waiting queue at every decision.

:func:`coburst.policies.cosched.filler._merged_order` merges per-``processes`` groups instead
of sorting every waiting job by its score; :class:`~coburst.policies.cosched.base.LazyOrder`
hands the decision only the jobs it reads.  Checked here against the former implementation
(the full stable sort of :meth:`Filler.scores`, still what a subclass overriding ``scores``
or a partial ``sort_depth`` runs) on random queues and boards -- free cores from none to all,
few ``processes`` values so that scores tie across groups -- and on whole random workloads
through the reference event loop, with both backfill rules and both node orders.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cosched_replay import replay
from coburst.core.nodeshare import SPREAD, CoJob, NodeSharingCluster, NodeSharingState, PlacementDecisions
from coburst.policies import cosched
from coburst.policies.cosched.base import LazyOrder
from coburst.policies.cosched.filler import Filler
from test_cosched_policies import workloads


class SortedFiller(Filler):
    """Filler as before the lazy order: ``scores`` overridden (same values), so ``order``
    sorts the whole queue."""

    def scores(self, jobs, board, state):
        return Filler.scores(self, jobs, board, state)


@st.composite
def states(draw):
    nodes = draw(st.integers(2, 12))
    cluster = NodeSharingCluster.build(nodes)
    state = NodeSharingState(cluster)
    n = draw(st.integers(0, 40))
    procs = draw(st.lists(st.integers(1, 4 * nodes * 5), min_size=1, max_size=4))
    jobs = []
    for i in range(n):
        m = draw(st.integers(1, nodes))
        p = draw(st.sampled_from(procs + [m * 20]))
        jobs.append(CoJob(f"j{i}", 0.0, m * 4, float(draw(st.integers(1, 100))), m, i, processes=p))
    for j in jobs:
        state.submit(j)
    # start a prefix that fits (spread or compact), so that the free cores vary, down to none
    board = state.board()
    d = PlacementDecisions(0.0)
    for j in jobs[:draw(st.integers(0, n))]:
        mode = SPREAD if draw(st.booleans()) and cluster.spread_possible(j.nodes) else "compact"
        pl = board.place(j.seq, mode, j.nodes)
        if pl is not None:
            d.start(j, pl)
    state.apply(d)
    return state


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(state=states(), cut=st.integers(0, 45))
def test_lazy_order_is_the_full_sort(state, cut):
    board = state.board()
    fast = Filler().order(state, board)
    slow = SortedFiller().order(state, board)
    assert [j.id for j in fast] == [j.id for j in slow]
    if isinstance(fast, LazyOrder):
        assert len(fast) == len(slow)
        cut = min(cut, len(slow))
        rest = fast[cut:]
        assert [j.id for j in rest] == [j.id for j in slow[cut:]]
        assert len(rest) == len(slow) - cut
        assert [j.id for j in rest.by_seq()] == [j.id for j in sorted(slow[cut:], key=lambda j: j.seq)]
        if cut < len(slow):
            assert rest.oldest() is min(slow[cut:], key=lambda j: j.seq)
    else:
        assert state.queue_len() < 2


def test_lazy_order_only_where_it_is_exact():
    """A partial sort_depth, a subclass with its own scores, or a queue not in seq order
    take the full sort."""
    c = NodeSharingCluster.build(4)
    s = NodeSharingState(c)
    for i in (4, 5, 6):
        s.submit(CoJob(f"j{i}", 0.0, 4, 10.0, 1, i, processes=20 * (i - 3)))
    assert isinstance(Filler().order(s, s.board()), LazyOrder)
    assert isinstance(Filler(sort_depth=3).order(s, s.board()), LazyOrder)
    assert isinstance(Filler(sort_depth=2).order(s, s.board()), list)
    assert isinstance(SortedFiller().order(s, s.board()), list)
    s.submit(CoJob("late", 0.0, 4, 10.0, 1, 2, processes=20))
    assert not s.seq_ordered and isinstance(Filler().order(s, s.board()), list)


@pytest.mark.parametrize("options", [{}, {"backfill_rule": "elise"}, {"placement_order": "shared-first"},
                                     {"backfill_rule": "elise", "placement_order": "shared-first"},
                                     {"backfill_depth": 1}])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wl=workloads())
def test_same_decisions_as_the_full_sort(options, wl):
    cluster, jobs, runtimes = wl
    fast = replay(cluster, jobs, Filler(**options), runtimes)
    slow = replay(cluster, jobs, SortedFiller(**options), runtimes)
    assert [(k, r.start, r.units) for k, r in fast.records.items()] == \
        [(k, r.start, r.units) for k, r in slow.records.items()]
    assert fast.decisions == slow.decisions


def test_same_decisions_on_a_long_queue():
    """400 jobs at t = 0 on 40 nodes, NAS-like processes (few values, many ties of factor0)."""
    rng = np.random.default_rng(7)
    cluster = NodeSharingCluster.build(40, units_per_socket=2, cores_per_unit=8)
    jobs = []
    for i in range(400):
        m = int(rng.choice([1, 2, 4, 8]))
        jobs.append(CoJob(f"j{i}", 0.0, m * 4, float(rng.integers(10, 500)), m, i, processes=m * 32))
    runtimes = {j.id: float(rng.integers(1, int(j.walltime) + 1)) for j in jobs}
    for options in ({}, {"backfill_rule": "elise", "placement_order": "shared-first"}):
        fast = replay(cluster, jobs, Filler(**options), runtimes)
        slow = replay(cluster, jobs, SortedFiller(**options), runtimes)
        assert [(k, r.start, r.units) for k, r in fast.records.items()] == \
            [(k, r.start, r.units) for k, r in slow.records.items()]


@pytest.mark.parametrize("name", ["fcfs", "easy", "sjf", "easy-co", "pair-greedy"])
@pytest.mark.parametrize("rule", ["easy", "elise"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wl=workloads())
def test_submission_order_read_lazily_decides_as_the_queue_list(name, rule, wl):
    """The default order (submission order as a LazyOrder) and EASY backfilling's count-only
    test of a compact candidate against the order as a list and every candidate placed (a
    ``place`` of its own turns that test off)."""
    cls = cosched.resolve(name)[0]
    listed = type("Listed", (cls,), {"order": lambda self, state, board: list(cls.order(self, state, board)),
                                     "place": lambda self, job, board, state: cls.place(self, job, board, state)})
    kw = {"heatmap": "aris-nas"} if name == "pair-greedy" else {}
    if any(p.name == "backfill_rule" for p in cls.params):
        kw["backfill_rule"] = rule
    cluster, jobs, runtimes = wl
    fast = replay(cluster, jobs, cls(**kw), runtimes)
    slow = replay(cluster, jobs, listed(**kw), runtimes)
    assert [(k, r.start, r.units) for k, r in fast.records.items()] == \
        [(k, r.start, r.units) for k, r in slow.records.items()]
