"""Plan-based scheduling (Kopański 2020, Alg. 8): the fast execution plans against the
straightforward reference, capacities, exhaustive optimum, determinism, replays."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coburst import policies
from coburst.core.cluster import Cluster
from coburst.core.decisions import Decisions
from coburst.core.plan import PlanEvaluator, candidate_orders
from coburst.core.replay import replay
from coburst.core.state import Job
from coburst.policies.plan import anneal, decision_rng, reserve_head
from opt_support import NOW, brute_force_best, plan_score, reference_plan_brute, states
from coburst.testing import check_invariants
from coburst.testing.strategies import clusters, workloads

OBJ = ["sum", "square", "cube", "start"]


def _same(plan_a, plan_b):
    for (sa, aa), (sb, ab) in zip(plan_a, plan_b):
        assert sa == sb
        if aa is None or ab is None:
            assert aa is None and ab is None
            continue
        assert aa.nodes.tolist() == ab.nodes.tolist()
        assert aa.bb_nodes.tolist() == ab.bb_nodes.tolist() and aa.bb == ab.bb


@settings(max_examples=150, deadline=None)
@given(states(), st.sampled_from(OBJ), st.randoms(use_true_random=False))
def test_plan_identical_to_reference(state, objective, rnd):
    """For any permutation, the plan (starts, nodes, BB placement) and its score equal
    the brute-force reference; prefix reuse and abandoned plans change nothing."""
    jobs = state.queue
    ev = PlanEvaluator(state.profile(), jobs, objective)
    for _ in range(4):
        perm = list(range(len(jobs)))
        rnd.shuffle(perm)
        ref = reference_plan_brute(state, jobs, perm)
        _same(ev.plan(perm), ref)
        expect = plan_score(objective, jobs, perm, ref)
        bound = expect if rnd.random() < 0.3 else math.inf
        got = ev.evaluate(perm, bound)
        if bound == math.inf:
            assert got == expect or (math.isinf(got) and math.isinf(expect))
            if math.isfinite(got):
                ev.accept()
        else:
            assert got == math.inf  # the plan reached its bound: abandoned


@settings(max_examples=100, deadline=None)
@given(states(), st.randoms(use_true_random=False))
def test_plan_respects_capacities_and_now(state, rnd):
    """Every plan keeps every compute node to one job and every BB node within capacity at
    every instant, with the running jobs; nothing starts before now."""
    jobs = state.queue
    perm = list(range(len(jobs)))
    rnd.shuffle(perm)
    plan = PlanEvaluator(state.profile(), jobs, "sum").plan(perm)
    items = [(NOW, r.expected_end if r.expected_end > NOW else NOW + 1e-6, r.alloc) for r in state.running.values()]
    for i, (s, a) in zip(perm, plan):
        assert s >= NOW
        if a is not None:
            items.append((s, s + jobs[i].walltime, a))
    for t in sorted({it[0] for it in items}):
        nodes, bb = set(), defaultdict(int)
        for s, e, a in items:
            if s <= t < e:
                assert not nodes & set(a.nodes.tolist())
                nodes |= set(a.nodes.tolist())
                if a.bb_use is not None:
                    for b, v in enumerate(a.bb_use.tolist()):
                        bb[b] += v
        for b, v in bb.items():
            assert v <= state.cluster.bb_capacity[b]


@settings(max_examples=60, deadline=None)
@given(states(max_queue=5), st.sampled_from(OBJ))
def test_exhaustive_finds_the_optimum(state, objective):
    jobs = state.queue
    ev = PlanEvaluator(state.profile(), jobs, objective)
    got = anneal(ev, len(jobs), np.random.default_rng(0), exhaustive=5, cooling_steps=30,
                 temperature_steps=6, cooling_rate=0.9)
    arg, best = brute_force_best(lambda p: plan_score(objective, jobs, p, reference_plan_brute(state, jobs, p)),
                                 len(jobs))
    assert got == arg


@settings(max_examples=40, deadline=None)
@given(states(max_queue=9), st.sampled_from(OBJ), st.integers(0, 3))
def test_head_reservations_are_kept(state, objective, depth):
    """The D reserved jobs keep the reservation FCFS gave them; the plan is built around."""
    pol = policies.get(f"plan-{objective}-{depth}", exhaustive=3)
    d = pol.make_decisions(state)
    alone = Decisions(state.now)
    reserve_head(state.profile(), state.queue, depth, alone)
    assert [(r.job.id, r.start, r.alloc.nodes.tolist()) for r in d.reservations] == \
        [(r.job.id, r.start, r.alloc.nodes.tolist()) for r in alone.reservations]
    assert d.started_ids[:len(alone.starts)] == alone.started_ids


@settings(max_examples=25, deadline=None)
@given(states(max_queue=12), st.sampled_from(OBJ), st.integers(0, 50))
def test_annealing_is_deterministic(state, objective, seed):
    a = policies.get(f"plan-{objective}-0", seed=seed, exhaustive=3).make_decisions(state)
    b = policies.get(f"plan-{objective}-0", seed=seed, exhaustive=3).make_decisions(state)
    assert [(s.job.id, s.alloc.nodes.tolist(), s.alloc.bb_nodes.tolist()) for s in a.starts] == \
        [(s.job.id, s.alloc.nodes.tolist(), s.alloc.bb_nodes.tolist()) for s in b.starts]


def test_annealing_equals_straightforward_annealing():
    """Alg. 8 with the fast evaluator takes the same path as with a plan rebuilt from
    scratch on the brute-force profile (same seed), on a 12-job queue."""
    rng = np.random.default_rng(4)
    cluster = Cluster.build(8, [4000, 4000])
    from coburst.core.state import SchedulerState
    state = SchedulerState(cluster, NOW)
    for i in range(12):
        state.submit(Job(f"q{i}", float(rng.integers(0, 100)), int(rng.integers(1, 7)),
                         float(rng.integers(1, 40)), int(rng.integers(0, 3)) * 1000))

    class Slow:
        plans = 0

        def evaluate(self, perm, bound=math.inf):
            self.plans += 1
            return plan_score("square", state.queue, perm, reference_plan_brute(state, state.queue, perm))

        def accept(self):
            pass

    kw = dict(exhaustive=5, cooling_steps=30, temperature_steps=6, cooling_rate=0.9,
              candidates=candidate_orders(state.queue))
    fast = anneal(PlanEvaluator(state.profile(), state.queue, "square"), 12, decision_rng(7, state), **kw)
    slow = anneal(Slow(), 12, decision_rng(7, state), **kw)
    assert fast == slow


@st.composite
def cases(draw):
    cluster = draw(clusters(max_compute=8, max_bb=3))
    jobs, runtimes = draw(workloads(cluster, max_jobs=14))
    return cluster, jobs, runtimes


@settings(max_examples=60, deadline=None)
@given(cases(), st.sampled_from(["plan-sum-0", "plan-square-0", "plan-cube-1", "plan-start-1"]))
def test_replay_safety_and_liveness(case, name):
    cluster, jobs, runtimes = case
    check_invariants(cluster, jobs, replay(cluster, jobs, policies.get(name, exhaustive=3), runtimes))


def test_labels_and_parameters():
    p = policies.get("plan-square-0")
    assert p.name == "plan-square-0" and p.depth == 0 and p.cooling_steps == 30 and p.temperature_steps == 6
    assert p.cooling_rate == 0.9 and p.exhaustive == 5 and p.time_cap == 0.0
    assert policies.get("plan-cube-2").objective == "cube" and policies.get("plan-start-1").objective == "start"
    assert "Alg. 8" in type(p).__doc__
    from coburst.errors import InputError
    with pytest.raises(InputError, match="cooling_rate"):
        policies.get("plan-sum-0", cooling_rate=1.5)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 130).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, (1 << n) - 1), st.integers(0, n))))
def test_select_mask_is_select_nodes(case):
    """The bit-mask node choice is :func:`select_nodes` on the same free set."""
    from coburst.core.placement import select_nodes
    from coburst.core.plan import bits_of, select_mask
    n, mask, count = case
    arr = np.array([(mask >> i) & 1 for i in range(n)], dtype=bool)
    want = select_nodes(arr, count)
    got = select_mask(mask, count)
    if want is None:
        assert got is None
    else:
        assert bits_of(got) == want.tolist()


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_place_list_is_place_bb(data):
    """The list BB placement (and the evaluators' memoised ``use``) is :func:`place_bb`."""
    from coburst.core.placement import place_bb, select_nodes
    from coburst.core.plan import _Cache, bits_of, mask_of
    cluster = data.draw(clusters(max_compute=12, max_bb=4, min_bb=1))
    free = data.draw(st.lists(st.booleans(), min_size=cluster.n_compute, max_size=cluster.n_compute))
    count = data.draw(st.integers(1, max(1, sum(free))))
    nodes = select_nodes(np.array(free, dtype=bool), count)
    if nodes is None:
        return
    bb = data.draw(st.integers(1, int(cluster.bb_capacity.max())))
    avail = tuple(data.draw(st.integers(0, int(c))) for c in cluster.bb_capacity)
    want = place_bb(cluster.bb_preference, nodes, bb, np.array(avail, dtype=np.int64))
    cache = _Cache(cluster)
    if want is None:
        from coburst.core.plan import place_list
        assert place_list(cluster.bb_preference, nodes.tolist(), bb, avail) is None
        return
    from coburst.core.plan import place_list
    assert place_list(cluster.bb_preference, nodes.tolist(), bb, avail) == want.tolist()
    use = cache.place(mask_of(nodes.tolist()), bb, avail)
    assert list(use) == (np.bincount(want, minlength=cluster.n_bb) * bb).tolist()
    assert bits_of(mask_of(nodes.tolist())) == nodes.tolist()


def _numpy_plan_score(profile, jobs, objective, perm):
    """Straightforward plan score: earliest/occupy job after job on a copy of the numpy
    :class:`Profile` (no reuse, no bound)."""
    from coburst.core.plan import OBJECTIVES
    prof, step, score = profile.copy(), OBJECTIVES[objective], 0.0
    for i in perm:
        j = jobs[i]
        found = prof.earliest(j.res, j.walltime, j.bb)
        if found is None:
            return math.inf
        s, a = found
        prof.occupy(s, s + j.walltime, a)
        score = step(score, s - j.subtime, s)
    return score


@pytest.mark.parametrize("objective, seed", [("square", 0), ("sum", 1), ("start", 2), ("cube", 3)])
def test_annealing_on_a_busy_dragonfly_equals_plans_from_scratch(objective, seed):
    """On a 40-job queue of the thesis' dragonfly (busy, every job with a BB request), the
    annealing with the fast evaluator (prefix reuse, bounded plans, searches started where
    the reference plan shows nothing fits earlier) scores every permutation as plans rebuilt
    from scratch on the numpy profile, and takes the same path."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_decisions import random_state
    state = random_state(np.random.default_rng(seed), Cluster.dragonfly(), 40)
    jobs, prof = state.queue, state.profile()

    class Slow:
        def evaluate(self, perm, bound=math.inf):
            return _numpy_plan_score(prof, jobs, objective, perm)

        def accept(self):
            pass

    class Checked(PlanEvaluator):
        def evaluate(self, perm, bound=math.inf):
            got = super().evaluate(perm, bound)
            want = _numpy_plan_score(prof, jobs, objective, perm)
            assert got == want or (got == math.inf and want >= bound)
            return got

    kw = dict(exhaustive=5, cooling_steps=6, temperature_steps=5, cooling_rate=0.5,
              candidates=candidate_orders(jobs))
    fast = anneal(Checked(prof, jobs, objective), len(jobs), decision_rng(seed, state), **kw)
    slow = anneal(Slow(), len(jobs), decision_rng(seed, state), **kw)
    assert fast == slow


@settings(max_examples=80, deadline=None)
@given(states(max_queue=9, max_running=8), st.sampled_from(OBJ), st.randoms(use_true_random=False))
def test_swap_walks_score_as_the_reference(state, objective, rnd):
    """Random walks of swaps, moves and shuffles with accepts (the annealing's use, where the
    searches start late) score every plan as the brute-force reference."""
    jobs = state.queue
    n = len(jobs)
    ev = PlanEvaluator(state.profile(), jobs, objective)
    cur = list(range(n))
    for _ in range(10):
        cand = cur[:]
        kind = rnd.random()
        if n > 1 and kind < 0.6:
            i, j = rnd.sample(range(n), 2)
            cand[i], cand[j] = cand[j], cand[i]
        elif n > 1 and kind < 0.8:
            cand.insert(rnd.randrange(n), cand.pop(rnd.randrange(n)))
        else:
            rnd.shuffle(cand)
        expect = plan_score(objective, jobs, cand, reference_plan_brute(state, jobs, cand))
        got = ev.evaluate(cand)
        assert got == expect or (math.isinf(got) and math.isinf(expect))
        if math.isfinite(got) and rnd.random() < 0.8:
            ev.accept()
            cur = cand
