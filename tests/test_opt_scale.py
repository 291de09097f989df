"""The optimisers on large random platforms: up to 1000 compute nodes (node masks
of many 64-bit words), BB capacities drawn tight or loose, random topologies.

* the compiled evaluators decide as the straightforward references: greedy filling of
  permutations at now (maxutil's ``NowFiller``, with reservations in front: free BB that
  decreases later) and execution plans (``PlanEvaluator``) against the numpy ``Profile``;
* replays of window-1, maxutil-1.0-1, plan-square-0 (both readings of Alg. 8 line 32) and
  plan-square-1 keep the invariants: no compute node shared, no BB node over capacity,
  every job that can ever fit runs, reservations honoured (maxutil and plan-based; small
  queues and few examples: fast).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from coburst import policies
from coburst.core.cluster import Cluster
from coburst.core.decisions import Decisions
from coburst.core.plan import NowFiller, PlanEvaluator
from coburst.core.profile import Profile
from coburst.core.replay import replay
from coburst.core.state import Job, RunningJob, SchedulerState
from coburst.policies.plan import reserve_head
from opt_support import reference_fill
from coburst.testing import check_invariants, check_reservations_kept
from coburst.testing.strategies import UNIT

NOW = 100.0


@st.composite
def big_clusters(draw, max_compute: int = 1000) -> Cluster:
    """1..``max_compute`` compute nodes (often > 64), 1..40 BB nodes of tight (1-3 units)
    or loose (20-200 units) capacities, compute and BB nodes spread over random chassis."""
    n = draw(st.one_of(st.integers(1, max_compute), st.integers(60, 200)))
    nb = draw(st.integers(1, 40))
    tight = draw(st.booleans())
    caps = draw(st.lists(st.integers(1, 3) if tight else st.integers(20, 200), min_size=nb, max_size=nb))
    groups = draw(st.integers(1, 3))
    chassis = draw(st.integers(1, 5))
    cells = [(g, c, 0) for g in range(groups) for c in range(chassis)]
    run = draw(st.integers(1, 40))   # consecutive compute nodes per chassis (runs of one preference list)
    ctopo = [cells[(i // run) % len(cells)] for i in range(n)]
    btopo = [cells[draw(st.integers(0, len(cells) - 1))] for _ in range(nb)]
    return Cluster.build(n, [c * UNIT for c in caps], compute_topology=ctopo, bb_topology=btopo)


def _job(draw, cluster: Cluster, name: str, subtime: float) -> Job:
    n = cluster.n_compute
    res = draw(st.one_of(st.integers(1, min(n, 8)), st.integers(1, n)))
    wall = float(draw(st.integers(1, 40)))
    bb = 0
    if draw(st.booleans()):
        bb = draw(st.integers(1, 2 * cluster.max_bb_capacity // UNIT)) * UNIT // 2
        if cluster.never_fits(res, bb):
            bb = 0
    return Job(name, subtime, res, wall, bb)


@st.composite
def big_states(draw, max_queue: int = 10):
    """A busy state at ``NOW`` on a large cluster: running jobs packed greedily, a queue."""
    cluster = draw(big_clusters())
    state = SchedulerState(cluster, NOW)
    prof = Profile(cluster, NOW)
    for k in range(draw(st.integers(0, 12))):
        job = _job(draw, cluster, f"r{k}", 0.0)
        end = NOW + draw(st.integers(1, 40))
        alloc = prof.alloc_now(job.res, end - NOW, job.bb)
        if alloc is None:
            continue
        prof.occupy(NOW, end, alloc)
        state.running[job.id] = RunningJob(Job(job.id, 0.0, job.res, end - 10.0, job.bb), 10.0, alloc)
    for i in range(draw(st.integers(1, max_queue))):
        state.submit(_job(draw, cluster, f"q{i}", float(draw(st.integers(0, int(NOW))))))
    return state


@settings(max_examples=60, deadline=None)
@given(big_states(), st.integers(0, 3), st.randoms(use_true_random=False))
def test_now_filler_large_platforms(state, depth, rnd):
    """maxutil's compiled filling = greedy filling on a profile copy, with the D reservations
    (free BB then decreases later: the general path) and prefix/suffix reuse."""
    prof = state.profile()
    rest = reserve_head(prof, state.queue, depth, Decisions(state.now))
    if not rest:
        return
    nf = NowFiller(prof, rest)
    perm = list(range(len(rest)))
    for _ in range(8):
        if rnd.random() < 0.5 and len(perm) > 1:   # a swap, as the hill climbing does
            i, j = rnd.sample(range(len(perm)), 2)
            perm[i], perm[j] = perm[j], perm[i]
        else:
            rnd.shuffle(perm)
        got = [rest[i].id for i in nf.evaluate(perm)]
        assert got == reference_fill(prof, rest, perm)
        if rnd.random() < 0.5:
            nf.accept()


@settings(max_examples=40, deadline=None)
@given(big_states(max_queue=8), st.randoms(use_true_random=False))
def test_execution_plans_large_platforms(state, rnd):
    """Execution plans of the kernel = earliest/occupy on the numpy profile, job by job."""
    prof = state.profile()
    jobs = state.queue
    ev = PlanEvaluator(prof, jobs, "square")
    for _ in range(3):
        perm = list(range(len(jobs)))
        rnd.shuffle(perm)
        ref = prof.copy()
        want = []
        for i in perm:
            j = jobs[i]
            s, a = ref.earliest(j.res, j.walltime, j.bb)
            ref.occupy(s, s + j.walltime, a)
            want.append((s, a.nodes.tolist(), None if a.bb_use is None else a.bb_use.tolist()))
        got = [(s, a.nodes.tolist(), None if a.bb_use is None else a.bb_use.tolist()) for s, a in ev.plan(perm)]
        assert got == want


@st.composite
def big_cases(draw):
    cluster = draw(big_clusters())
    jobs, runtimes = [], {}
    t = 0
    for i in range(draw(st.integers(1, 10))):
        t += draw(st.integers(0, 8))
        job = _job(draw, cluster, f"j{i}", float(t))
        jobs.append(job)
        runtimes[job.id] = float(draw(st.integers(1, int(job.walltime))))
    return cluster, jobs, runtimes


POLICIES = {
    "window-1": {},
    "maxutil-1.0-1": {"steps": 200, "exhaustive": 3},
    "plan-square-0": {"cooling_steps": 5, "exhaustive": 3},
    "plan-square-0-plan": {"cooling_steps": 5, "exhaustive": 3, "execute": "plan"},
    "plan-square-1": {"cooling_steps": 5, "exhaustive": 3},
}


@settings(max_examples=25, deadline=None)
@given(big_cases(), st.sampled_from(sorted(POLICIES)))
def test_replay_invariants_large_platforms(case, name):
    cluster, jobs, runtimes = case
    label = name.removesuffix("-plan")
    result = replay(cluster, jobs, policies.get(label, **POLICIES[name]), runtimes)
    check_invariants(cluster, jobs, result)
    if not name.startswith("window"):
        # window-D's first D jobs are only mandatory once aged (max_age, Alg. 7): its
        # fallback reservations are not promises
        check_reservations_kept(result)


def test_execute_option():
    """``execute`` is validated and documented; 'plan' starts only the jobs planned at now."""
    import pytest

    from coburst.errors import InputError

    assert policies.get("plan-square-0").execute == "fill"
    with pytest.raises(InputError, match="execute"):
        policies.get("plan-square-0", execute="now")
    # one 2-node cluster, a running job on node 0 until 10; queue: a 2-node job (planned at
    # 10 whatever the order) and a 1-node job of walltime 20 that fits now on node 1 but
    # would delay the wide one if it were planned after it (planned first: it starts now)
    cluster = Cluster.build(2)
    state = SchedulerState(cluster, 0.0)
    prof = Profile(cluster, 0.0)
    alloc = prof.alloc_now(1, 10.0, 0)
    state.running["r"] = RunningJob(Job("r", 0.0, 1, 10.0, 0), 0.0, alloc)
    state.submit(Job("wide", 0.0, 2, 5.0, 0))
    state.submit(Job("long", 0.0, 1, 20.0, 0))
    fill_ids = policies.get("plan-sum-0").make_decisions(state).started_ids
    plan_ids = policies.get("plan-sum-0", execute="plan").make_decisions(state).started_ids
    # sum of waits: wide first = 10 + 15 (long after wide) = 25; long first = 0 + 20 = 20
    assert fill_ids == ["long"] and plan_ids == ["long"]
    state2 = SchedulerState(cluster, 0.0)
    state2.running["r"] = RunningJob(Job("r", 0.0, 1, 10.0, 0), 0.0, alloc)
    state2.submit(Job("wide", 0.0, 2, 5.0, 0))
    state2.submit(Job("short", 0.0, 1, 30.0, 0))
    # long job of 30 s: wide first = 10 + 15 = 25 waits; short first = 0 + 30 = 30: the best
    # plan starts the wide one at 10 and the 1-node one after it; FILLER still starts it now
    assert policies.get("plan-sum-0").make_decisions(state2).started_ids == ["short"]
    assert policies.get("plan-sum-0", execute="plan").make_decisions(state2).started_ids == []


@settings(max_examples=60, deadline=None)
@given(big_states(), st.integers(0, 3), st.randoms(use_true_random=False))
def test_now_filler_start_is_fill(state, depth, rnd):
    """``NowFiller.start`` makes fill()'s decisions: same jobs, nodes and BB placement, and
    leaves the profile as fill() does."""
    prof = state.profile()
    d0 = Decisions(state.now)
    rest = reserve_head(prof, state.queue, depth, d0)
    if not rest:
        return
    perm = list(range(len(rest)))
    rnd.shuffle(perm)
    want, got = Decisions(state.now), Decisions(state.now)
    p_want, p_got = prof.copy(), prof.copy()
    from coburst.policies.base import fill
    fill(p_want, [rest[i] for i in perm], want)
    nf = NowFiller(prof, rest)
    nf.evaluate(list(reversed(perm)))   # some other reference first
    nf.accept()
    nf.start(p_got, perm, got)

    def sig(d):
        return [(s.job.id, s.alloc.nodes.tolist(), s.alloc.bb_nodes.tolist()) for s in d.starts]
    assert sig(got) == sig(want)
    assert p_got._times == p_want._times
    assert (p_got._free == p_want._free).all() and (p_got._bb == p_want._bb).all()
