"""maxutil-beta-D (Kopański 2020, Alg. 6): the fast filling simulation against the
straightforward one, exhaustive optimum, hill climbing equal to its straightforward run,
replays, labels."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coburst import policies
from coburst.core.decisions import Decisions
from coburst.core.plan import NowFiller, candidate_orders
from coburst.core.replay import replay
from coburst.errors import InputError
from coburst.policies.base import fill, fits_any_now
from coburst.policies.maxutil import compute_first, hill_climb, util_score
from coburst.policies.plan import reserve_head
from opt_support import reference_fill, states
from coburst.testing import check_invariants
from coburst.testing.strategies import clusters, workloads


@settings(max_examples=150, deadline=None)
@given(states(max_queue=12), st.integers(0, 2), st.randoms(use_true_random=False))
def test_now_filler_identical_to_fill(state, depth, rnd):
    """Which jobs a permutation starts now equals greedy filling on a profile copy (with
    the D reservations), also with prefix reuse across permutations."""
    prof = state.profile()
    rest = reserve_head(prof, state.queue, depth, Decisions(state.now))
    if not rest:
        return
    nf = NowFiller(prof, rest)
    for _ in range(6):
        perm = list(range(len(rest)))
        rnd.shuffle(perm)
        got = [rest[i].id for i in nf.evaluate(perm)]
        assert got == reference_fill(prof, rest, perm)
        if rnd.random() < 0.5:
            nf.accept()


def _straightforward(state, pol):
    """Alg. 6 with every permutation scored by greedy filling on a fresh profile copy."""
    prof = state.profile()
    queue = state.queue
    cfirst = compute_first(state.cluster, queue, float(pol.beta))
    d = Decisions(state.now)
    rest = reserve_head(prof, queue, pol.depth, d)
    if not rest:
        return d.started_ids
    ids = {j.id: i for i, j in enumerate(rest)}

    def score(perm):
        started = [ids[x] for x in reference_fill(prof, rest, perm)]
        return util_score(rest, started, state.now, cfirst), started

    n = len(rest)
    if n <= pol.exhaustive:
        best, arg = None, None
        for p in itertools.permutations(range(n)):
            s, _ = score(p)
            if best is None or s > best:
                best, arg = s, list(p)
    else:
        best, arg, st_ = None, None, None
        for c in candidate_orders(rest):
            s, started = score(c)
            if best is None or s > best:
                best, arg, st_ = s, list(c), started

        def last_of(perm, started):
            return max((p for p, i in enumerate(perm) if i in set(started)), default=-1)

        def ev(perm):
            s, started = score(perm)
            snap = list(perm)
            return s, lambda: last_of(snap, started)
        arg, best, _ = hill_climb(ev, n, arg, best, last_of(arg, st_), pol.steps)
    fill(prof, [rest[i] for i in arg], d)
    return d.started_ids


@settings(max_examples=40, deadline=None)
@given(states(max_queue=11), st.sampled_from([0.5, 1.0, 2.0]), st.integers(0, 2))
def test_decisions_equal_straightforward(state, beta, depth):
    pol = policies.get("maxutil", beta=beta, depth=depth, steps=300, exhaustive=4)
    assert pol.make_decisions(state).started_ids == _straightforward(state, pol)


@settings(max_examples=40, deadline=None)
@given(states(max_queue=6))
def test_exhaustive_is_the_optimum(state):
    pol = policies.get("maxutil-1.0-0")
    d = pol.make_decisions(state)
    cfirst = compute_first(state.cluster, state.queue, 1.0)
    jobs = state.queue
    idx = {j.id: i for i, j in enumerate(jobs)}
    best = max(util_score(jobs, [idx[x] for x in reference_fill(state.profile(), jobs, p)], state.now, cfirst)
               for p in itertools.permutations(range(len(jobs))))
    assert util_score(jobs, [idx[x] for x in d.started_ids], state.now, cfirst) == best
    # nothing fits now: every permutation starts nothing, the search is skipped (skip_unfit)
    tried = len(list(itertools.permutations(range(len(jobs))))) if fits_any_now(state.profile(), jobs) else 0
    assert pol.last_tried == tried
    former = policies.get("maxutil-1.0-0")
    former.skip_unfit = False  # the search at every call: every permutation tried
    assert former.make_decisions(state).started_ids == d.started_ids
    assert former.last_tried == len(list(itertools.permutations(range(len(jobs)))))


@st.composite
def cases(draw):
    cluster = draw(clusters(max_compute=8, max_bb=3))
    jobs, runtimes = draw(workloads(cluster, max_jobs=16))
    return cluster, jobs, runtimes


@settings(max_examples=60, deadline=None)
@given(cases(), st.sampled_from(["maxutil-1.0-1", "maxutil-0.5-0", "maxutil-2.0-2"]))
def test_replay_safety_and_liveness(case, name):
    cluster, jobs, runtimes = case
    check_invariants(cluster, jobs, replay(cluster, jobs, policies.get(name, exhaustive=3, steps=200), runtimes))


def test_labels():
    p = policies.get("maxutil-1.0-1")
    assert (p.beta, p.depth, p.steps, p.exhaustive, p.name) == (1.0, 1, 5000, 6, "maxutil-1.0-1")
    assert policies.get("maxutil-0.5-2").name == "maxutil-0.5-2"
    assert policies.get("maxutil-1").name == "maxutil-1.0-1"
    assert "Alg. 6" in type(p).__doc__
    with pytest.raises(InputError, match="beta"):
        policies.get("maxutil", beta=0)
    with pytest.raises(InputError, match="label says"):
        policies.get("maxutil-1.0-1", beta=2.0)
