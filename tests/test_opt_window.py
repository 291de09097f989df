"""window-D (Kopański 2020, Alg. 7): the fast combination search against the algorithm as
written (Z3 on every combination), the integer program, ages, replays, window 16."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from coburst import policies
from coburst.core.cluster import Cluster
from coburst.core.replay import replay
from coburst.core.state import Job
from coburst.policies.maxutil import compute_first
from coburst.policies.window import BBFit, ilp_counts, search_window, search_window_literal
from opt_support import NOW, states
from coburst.testing import check_invariants
from coburst.testing.strategies import clusters, workloads


@settings(max_examples=80, deadline=None)
@given(states(max_queue=7), st.integers(0, 3), st.data())
def test_search_equals_literal_algorithm(state, depth, data):
    jobs = state.queue
    mand = [i for i in range(min(depth, len(jobs))) if data.draw(st.booleans())]
    free, avail = state.profile().free_at(NOW)
    cfirst = compute_first(state.cluster, jobs, 1.0)
    fast, _ = search_window(jobs, mand, int(free.sum()), avail.tolist(), NOW, cfirst)
    lit, _ = search_window_literal(jobs, mand, int(free.sum()), avail.tolist(), NOW, cfirst)
    assert fast == lit


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(1, 9)), max_size=5),
       st.lists(st.integers(0, 30), min_size=1, max_size=4))
def test_bb_fit_is_the_integer_program(reqs, avail):
    reqs = tuple(sorted(reqs))
    x = ilp_counts([c for c, _ in reqs], [b for _, b in reqs], avail)
    assert BBFit(avail)(reqs) == (x is not None)
    if x is not None:
        for (c, b), row in zip(reqs, x):
            assert sum(row) == c and min(row) >= 0
        for j, a in enumerate(avail):
            assert sum(b * row[j] for (c, b), row in zip(reqs, x)) <= a


def test_aged_head_job_becomes_mandatory():
    """A wide head job that never fits a better combination starts once its age exceeds M
    (it waits for it: the rest is only backfilled around its reservation)."""
    c = Cluster.build(4)
    jobs = [Job("run", 0, 1, 10.0), Job("big", 1, 4, 100.0), Job("a", 1, 1, 100.0), Job("b", 1, 1, 100.0),
            Job("c", 1, 1, 100.0)]
    r = replay(c, jobs, policies.get("window-1", max_age=0))
    assert r.jobs["big"].start == 10.0 and r.jobs["a"].start == 110.0
    r2 = replay(c, jobs, policies.get("window-1"))  # age 1 <= M = 5: the best combination wins
    assert r2.jobs["big"].start == 101.0 and r2.jobs["a"].start == 1.0


@st.composite
def cases(draw):
    cluster = draw(clusters(max_compute=8, max_bb=3))
    jobs, runtimes = draw(workloads(cluster, max_jobs=16))
    return cluster, jobs, runtimes


@settings(max_examples=60, deadline=None)
@given(cases(), st.sampled_from(["window-1", "window-0", "window-2"]), st.integers(0, 3), st.integers(1, 8))
def test_replay_safety_and_liveness(case, name, max_age, window):
    cluster, jobs, runtimes = case
    pol = policies.get(name, max_age=max_age, window=window)
    check_invariants(cluster, jobs, replay(cluster, jobs, pol, runtimes))


def test_window_16_on_the_thesis_platform():
    """A 16-job window decides on the dragonfly, checking at most the 2^16 - 1 non-empty
    combinations (its speed is measured in benchmarks/bench_optimisers.py, not here)."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_decisions import random_state
    rng = np.random.default_rng(0)
    cluster = Cluster.dragonfly()
    pol = policies.get("window-1", window=16)
    for _ in range(3):
        state = random_state(rng, cluster, 50)
        decisions = pol.make_decisions(state)
        assert 0 < pol.last_tried < 2 ** 16
        assert decisions.starts or decisions.reservations or not state.queue


def test_labels():
    p = policies.get("window-1")
    assert (p.depth, p.window, p.max_age, p.beta, p.name) == (1, 10, 5, 1.0, "window-1")
    assert "Alg. 7" in type(p).__doc__


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 8), st.integers(1, 12)), min_size=1, max_size=5),
       st.lists(st.integers(5, 24), min_size=1, max_size=5), st.integers(0, 3))
def test_bb_fits_on_tight_instances(reqs, avail, slack):
    """The search answers as the integer program when the requests fill the BB nodes to
    within a few bytes (the hard case: packing, not totals, decides)."""
    from coburst.policies.window import bb_fits
    total = sum(c * b for c, b in reqs)
    cap = sum(avail)
    if total > cap:  # scale the capacities to the requests, keeping their shape
        avail = [a * total // cap + 1 for a in avail]
    avail[0] += max(0, total + slack - sum(avail))
    x = ilp_counts([c for c, _ in reqs], [b for _, b in reqs], avail)
    assert bb_fits(reqs, avail) == (x is not None)
    _check_assignment(reqs, avail, x is not None)


def _check_assignment(reqs, avail, feasible):
    """bb_assign's matrix is a solution of the integer program exactly when one exists."""
    from coburst.policies.window import bb_assign
    got = bb_assign(reqs, avail)
    assert (got is not None) == feasible
    if got is not None:
        assert [sum(row) for row in got] == [c for c, _ in reqs]
        for j, a in enumerate(avail):
            assert sum(row[j] * b for row, (_, b) in zip(got, reqs)) <= a
        assert all(v >= 0 for row in got for v in row)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(1, 30)), min_size=1, max_size=6),
       st.lists(st.integers(0, 60), min_size=0, max_size=6))
def test_bb_assign_solves_the_integer_program(reqs, avail):
    """Random instances, loose or infeasible, any BB node count (also none): the matrix
    found satisfies (3.1)-(3.3) exactly when Z3 finds the program feasible."""
    x = ilp_counts([c for c, _ in reqs], [b for _, b in reqs], avail)
    _check_assignment(reqs, avail, x is not None)


def test_bb_assign_a_loose_kth_instance_quickly():
    """A combination met on KTH part 2 (Alloc-Only, window-1): 88 requests, 463 of 480 GB
    on 12 empty BB nodes.  One request at a time (the former search) gave up and Z3 ran
    for minutes (window-1 stalled there); by whole node fillings it is found at once."""
    reqs = ((5, 5031977463), (8, 4760956513), (9, 11157804843), (12, 4345702035), (54, 4583559933))
    _check_assignment(reqs, [40_000_000_000] * 12, True)
    from coburst.policies.window import bb_assign
    assert bb_assign(reqs, [40_000_000_000] * 12, budget=5000) is not None


def test_bb_fits_a_tight_kth_instance_quickly():
    """A combination met on KTH part 1 (Alloc-Only, window-1): 479.5 of 480 GB requested on
    12 empty BB nodes; Z3 did not prove it infeasible within minutes.  Both answers come
    from the exact search within a small step budget (None would mean it gave up)."""
    from coburst.policies.window import bb_fits
    reqs = ((3, 8098814083), (6, 374705985), (6, 18713103043), (7, 2961702529), (16, 20000000000))
    assert bb_fits(reqs, [40_000_000_000] * 12, budget=20_000) is False
    assert bb_fits(reqs[:4] + ((15, 20000000000),), [40_000_000_000] * 12, budget=20_000) is True


KTH_PART1_NODES = [40_000_000_000] * 8 + [14500241] * 3 + [451608324]


def test_bb_assign_kth_part1_instances():
    """Combinations met by window-1 on KTH part 1 (Alloc-Only, 8 free BB nodes and 4 almost
    full): a feasible one filled to within 4 MB of 40 GB on several nodes (found; HiGHS's
    MILP, with byte-sized coefficients, calls it infeasible), and a 318.8-of-320 GB one
    that the configuration LP proves infeasible at once (the search alone gave up after
    10^6 steps, and Z3 ran for minutes)."""
    from coburst.policies.window import bb_assign, patterns_lp_infeasible
    feasible = ((1, 3525857706), (2, 6896684630), (2, 10497687413), (6, 374705985), (6, 18713103043),
                (7, 2961702529), (8, 12365002085), (12, 3683447146))
    _check_assignment(feasible, KTH_PART1_NODES, True)
    tight = ((2, 6896684630), (2, 10497687413), (6, 18713103043), (7, 2961702529), (8, 12365002085),
             (9, 874497122), (12, 3683447146))
    assert bb_assign(tight, KTH_PART1_NODES, budget=20_000) is None
    sizes = [b for _, b in sorted(tight, key=lambda r: -r[1])]
    counts = [c for c, _ in sorted(tight, key=lambda r: -r[1])]
    assert patterns_lp_infeasible(sizes, counts, [a for a in KTH_PART1_NODES if a >= min(sizes)])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 8), st.integers(1, 30)), min_size=1, max_size=5),
       st.lists(st.integers(1, 60), min_size=1, max_size=5))
def test_the_pattern_lp_never_refutes_a_feasible_instance(reqs, avail):
    """The LP is a relaxation: whenever Z3 finds the integer program feasible, the LP does
    not claim infeasibility (and bb_assign agrees with Z3 either way)."""
    from coburst.policies.window import patterns_lp_infeasible
    items = sorted(reqs, key=lambda r: -r[1])
    sizes, counts = [b for _, b in items], [c for c, _ in items]
    x = ilp_counts([c for c, _ in reqs], [b for _, b in reqs], avail)
    caps = [a for a in avail if a >= min(sizes)]
    if x is not None and caps:
        assert not patterns_lp_infeasible(sizes, counts, caps)
    _check_assignment(reqs, avail, x is not None)
