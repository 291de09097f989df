"""Fast paths of the scheduler side (policies, core, pybatsim adapter), each against the code
it replaced: same decisions, same allocations, same ProcSets."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from coburst import policies
from coburst.core.cluster import Cluster
from coburst.core.placement import Allocation, procset_of
from coburst.core.profile import Profile
from coburst.core.replay import replay
from coburst.core.state import Job, RunningJob, SchedulerState
from coburst.policies.base import fits_any_now
from opt_support import states
from coburst.testing.strategies import clusters, workloads

PLAN_FAMILIES = ["plan-sum", "plan-square", "plan-cube", "plan-start"]
SMALL = dict(cooling_steps=3, temperature_steps=2)  # a short search: same code paths


# ----------------------------------------------------------------------------- ProcSet
@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 70), max_size=40))
@example([])
@example([5])
@example([3, 3])
@example([2, 1, 0])
@example([0, 1, 2, 4, 5, 9])
def test_procset_of_is_procset_union(ids):
    """procset_of(ids) is ProcSet(*ids): same intervals (ProcInt), same text."""
    fast, ref = procset_of(list(ids)), ProcSet(*ids)
    assert fast == ref
    assert fast._itvs == ref._itvs and all(type(a) is type(b) for a, b in zip(fast._itvs, ref._itvs))
    assert str(fast) == str(ref) and len(fast) == len(ref) and list(fast) == list(ref)


def test_procset_of_refuses_negative_ids_as_procset_does():
    with pytest.raises(ValueError):
        ProcSet(-1)
    with pytest.raises(ValueError):
        procset_of([-1, 0])


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_compute_ids_equal_former_procset(data):
    """Allocation.compute_ids (runs of ids) gives the ProcSet the former id-by-id union gave,
    whatever the order of compute ids in the cluster."""
    n = data.draw(st.integers(1, 40))
    ids = data.draw(st.lists(st.integers(0, 200), min_size=n, max_size=n, unique=True))
    cluster = Cluster.build(n, [])
    cluster.compute_ids = np.array(ids, dtype=np.int64)
    nodes = sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1)))
    alloc = Allocation.make(0, np.array(nodes))
    former = ProcSet(*(int(i) for i in cluster.compute_ids[alloc.nodes]))
    got = alloc.compute_ids(cluster)
    assert got == former and str(got) == str(former)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_storage_map_and_bb_bytes_equal_former(data):
    """``Allocation.storage_map`` and ``bb_bytes`` read numpy's lists
    (``tolist``) instead of converting numpy scalars one by one: the same dicts, same order,
    Python ints."""
    cluster = data.draw(clusters(max_compute=12, max_bb=5, min_bb=1))
    cluster.compute_ids = np.array(data.draw(st.lists(st.integers(0, 500), min_size=cluster.n_compute,
                                                      max_size=cluster.n_compute, unique=True)), dtype=np.int64)
    cluster.bb_ids = np.array(data.draw(st.lists(st.integers(501, 900), min_size=cluster.n_bb,
                                                 max_size=cluster.n_bb, unique=True)), dtype=np.int64)
    nodes = sorted(data.draw(st.sets(st.integers(0, cluster.n_compute - 1), min_size=1)))
    bb_nodes = data.draw(st.lists(st.integers(0, cluster.n_bb - 1), min_size=len(nodes), max_size=len(nodes)))
    bb = data.draw(st.sampled_from([0, 1, 10**9, 3 * 10**10]))
    alloc = Allocation.make(cluster.n_bb, np.array(nodes), np.array(bb_nodes), bb)
    former_map = ({} if not len(alloc.bb_nodes) else
                  {int(c): int(b) for c, b in zip(cluster.compute_ids[alloc.nodes], cluster.bb_ids[alloc.bb_nodes])})
    former_bytes = ({} if alloc.bb_use is None else
                    {int(cluster.bb_ids[b]): int(v) for b, v in enumerate(alloc.bb_use) if v})
    got_map, got_bytes = alloc.storage_map(cluster), alloc.bb_bytes(cluster)
    assert list(got_map.items()) == list(former_map.items())
    assert list(got_bytes.items()) == list(former_bytes.items())
    assert all(type(x) is int for pair in [*got_map.items(), *got_bytes.items()] for x in pair)


def _former_bb_slots(avail, bb):
    """The former ``placement.bb_slots`` (numpy): the reference."""
    if bb <= 0:
        return 1 << 62
    return int((avail // bb).sum())


def _former_place_bb(preference, nodes, bb, avail):
    """The former ``placement.place_bb`` (numpy slots and output): the reference."""
    if bb <= 0:
        return np.zeros(0, dtype=np.int64)
    slots = (avail // bb).tolist()
    if sum(slots) < len(nodes):
        return None
    out = np.empty(len(nodes), dtype=np.int64)
    pos = 0
    n = len(nodes)
    node_list = nodes.tolist()
    while pos < n:
        pref = preference[node_list[pos]]
        run_end = pos + 1
        while run_end < n and preference[node_list[run_end]] is pref:
            run_end += 1
        need = run_end - pos
        for b in pref:
            s = slots[b]
            if s:
                take = s if s < need else need
                out[pos:pos + take] = b
                slots[b] = s - take
                pos += take
                need -= take
                if not need:
                    break
        if need:
            return None
    return out


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_bb_slots_and_place_bb_equal_former(data):
    """``bb_slots`` and ``place_bb`` divide up to 32 BB nodes' capacities in
    Python and build the placement as a list: the same counts and placements (values,
    dtype) as the former numpy forms, on few and many BB nodes (shared preference lists
    included)."""
    from coburst.core.placement import bb_slots, place_bb

    n_bb = data.draw(st.sampled_from([1, 2, 5, 12, 32, 33, 40]))
    unit = 10**9
    avail = np.array(data.draw(st.lists(st.integers(0, 9 * unit), min_size=n_bb, max_size=n_bb)), dtype=np.int64)
    bb = data.draw(st.sampled_from([-1, 0, 1, unit, 3 * unit, 4 * unit + 7, 10 * unit]))
    n_compute = data.draw(st.integers(1, 12))
    lists = [tuple(data.draw(st.permutations(range(n_bb)))) for _ in range(data.draw(st.integers(1, 3)))]
    preference = tuple(lists[data.draw(st.integers(0, len(lists) - 1))] for _ in range(n_compute))
    nodes = np.array(sorted(data.draw(st.sets(st.integers(0, n_compute - 1), min_size=1))), dtype=np.int64)
    assert bb_slots(avail, bb) == _former_bb_slots(avail, bb)
    assert type(bb_slots(avail, bb)) is int
    got, former = place_bb(preference, nodes, bb, avail), _former_place_bb(preference, nodes, bb, avail)
    assert (got is None) == (former is None)
    if got is not None:
        assert got.dtype == former.dtype and got.tolist() == former.tolist()


# ----------------------------------------------------------------------------- plan-based
def _same_decisions(a, b):
    assert a.now == b.now
    assert [s.job.id for s in a.starts] == [s.job.id for s in b.starts]
    for x, y in zip(a.starts, b.starts):
        assert x.alloc.nodes.tolist() == y.alloc.nodes.tolist()
        assert x.alloc.bb_nodes.tolist() == y.alloc.bb_nodes.tolist() and x.alloc.bb == y.alloc.bb
    assert [(r.job.id, r.start, r.alloc.nodes.tolist(), r.alloc.bb_nodes.tolist()) for r in a.reservations] == \
        [(r.job.id, r.start, r.alloc.nodes.tolist(), r.alloc.bb_nodes.tolist()) for r in b.reservations]
    assert [r.job.id for r in a.rejects] == [r.job.id for r in b.rejects]
    assert a.wakeups == b.wakeups


def _former(policy):
    """The same policy taking the former path (the search at every call: plan-based and
    maxutil)."""
    policy.skip_unfit = False
    return policy


def _full_machine_state() -> SchedulerState:
    """Every node busy until 150, a queue that cannot start now."""
    cluster = Cluster.build(4, [])
    state = SchedulerState(cluster, 100.0)
    alloc = Profile(cluster, 100.0).alloc_now(4, 50.0)
    state.running["r"] = RunningJob(Job("r", 0.0, 4, 140.0), 10.0, alloc)
    for i in range(7):
        state.submit(Job(f"q{i}", float(i), 1 + i % 4, 10.0 + i))
    return state


@pytest.mark.parametrize("execute", ["fill", "plan"])
def test_plan_skips_search_when_nothing_fits(execute):
    """A full machine: the fast path evaluates no plan, the former path searches, both decide
    nothing."""
    state = _full_machine_state()
    fast = policies.get("plan-square-0", execute=execute)
    former = _former(policies.get("plan-square-0", execute=execute))
    a, b = fast.make_decisions(state), former.make_decisions(state)
    _same_decisions(a, b)
    assert not a.starts and fast.last_tried == 0 and former.last_tried > 0


@settings(max_examples=200, deadline=None)
@given(states(max_queue=12), st.sampled_from(PLAN_FAMILIES), st.integers(0, 2),
       st.sampled_from(["fill", "plan"]), st.integers(0, 3))
def test_plan_decision_equals_former(state, family, depth, execute, seed):
    """One decision on a random state (BB, reservations): the same starts, allocations and
    reservations as the former path, whether the search is skipped or not."""
    kw = dict(SMALL, depth=depth, execute=execute, seed=seed)
    fast = policies.get(family, **kw)
    former = _former(policies.get(family, **kw))
    _same_decisions(fast.make_decisions(state), former.make_decisions(state))


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from(PLAN_FAMILIES), st.integers(0, 1), st.sampled_from(["fill", "plan"]))
def test_plan_replay_equals_former(data, family, depth, execute):
    """Whole replays (submissions, early ends, kills): every decision of the run equal."""
    cluster = data.draw(clusters(max_compute=8, max_bb=3))
    jobs, runtimes = data.draw(workloads(cluster, max_jobs=16))
    kw = dict(SMALL, depth=depth, execute=execute, exhaustive=3)
    fast = replay(cluster, jobs, policies.get(family, **kw), runtimes)
    former = replay(cluster, jobs, _former(policies.get(family, **kw)), runtimes)
    assert len(fast.decisions) == len(former.decisions)
    for a, b in zip(fast.decisions, former.decisions):
        _same_decisions(a.decisions, b.decisions)


def test_maxutil_skips_search_when_nothing_fits():
    """A full machine: maxutil's fast path fills no permutation, the former path tries them
    all, both decide nothing."""
    state = _full_machine_state()
    fast = policies.get("maxutil-1.0-0")
    former = _former(policies.get("maxutil-1.0-0"))
    a, b = fast.make_decisions(state), former.make_decisions(state)
    _same_decisions(a, b)
    assert not a.starts and fast.last_tried == 0 and former.last_tried > 0


@settings(max_examples=150, deadline=None)
@given(states(max_queue=12), st.sampled_from([0.5, 1.0, 2.0]), st.integers(0, 2), st.integers(0, 6))
def test_maxutil_decision_equals_former(state, beta, depth, exhaustive):
    """One maxutil decision on a random state: the same starts, allocations and reservations
    as the former path (the search at every call), whether it is skipped or not."""
    kw = dict(beta=beta, depth=depth, steps=200, exhaustive=exhaustive)
    _same_decisions(policies.get("maxutil", **kw).make_decisions(state),
                    _former(policies.get("maxutil", **kw)).make_decisions(state))


@settings(max_examples=40, deadline=None)
@given(st.data(), st.integers(0, 1))
def test_maxutil_replay_equals_former(data, depth):
    """Whole maxutil replays: every decision of the run equal to the former path's."""
    cluster = data.draw(clusters(max_compute=8, max_bb=3))
    jobs, runtimes = data.draw(workloads(cluster, max_jobs=16))
    kw = dict(depth=depth, steps=200, exhaustive=3)
    fast = replay(cluster, jobs, policies.get("maxutil", **kw), runtimes)
    former = replay(cluster, jobs, _former(policies.get("maxutil", **kw)), runtimes)
    assert len(fast.decisions) == len(former.decisions)
    for a, b in zip(fast.decisions, former.decisions):
        _same_decisions(a.decisions, b.decisions)


@settings(max_examples=200, deadline=None)
@given(states(max_queue=14))
def test_fits_any_now_is_some_fits_now(state):
    """fits_any_now (batched for long lists; job by job on the bit-mask profile) answers as
    Profile.fits_now job by job."""
    prof = state.profile()
    queue = state.queue
    want = any(prof.fits_now(j.res, j.walltime, j.bb) for j in queue)
    assert fits_any_now(prof, queue) == want
    assert fits_any_now(state.mask_profile(), queue) == want


# ----------------------------------------------------------------------------- state profile
def _profile_arrays(prof):
    return (list(prof._times), prof._free.tolist(), prof._bb.tolist(), list(prof._rows), list(prof._bbtot))


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_state_profile_equals_from_running(data):
    """The profile SchedulerState builds from the node ends RunningJobs keeps equals
    Profile.from_running over the running jobs (breakpoints, masks, BB rows, counts) after
    any sequence of starts, ends (early, on time, overdue), direct assignments and dates;
    the same for the bit-mask profile, and for node_end when its writes were deferred over
    several changes or rebuilt from the masks."""
    from coburst.core.state import RunningJobs

    cluster = data.draw(clusters(max_compute=10, max_bb=3))
    state = SchedulerState(cluster, 0.0)
    default = RunningJobs.DEFER_SLACK
    slack = data.draw(st.sampled_from([default, 0, -3]))  # small: node_end rebuilt from the masks
    RunningJobs.DEFER_SLACK = slack
    try:
        _state_profile_ops(data, cluster, state, slack != default)
    finally:
        RunningJobs.DEFER_SLACK = default


def _state_profile_ops(data, cluster, state, skip_reads):
    from coburst.core.decisions import Decisions

    k = 0
    for _ in range(data.draw(st.integers(1, 25))):
        op = data.draw(st.sampled_from(["start", "start", "finish", "advance", "advance", "assign", "pop"]))
        if op == "start":
            res = data.draw(st.integers(1, cluster.n_compute))
            wall = data.draw(st.sampled_from([float(data.draw(st.integers(1, 30))), 0.5, float("inf")]))
            bb = data.draw(st.integers(0, 2)) * (cluster.max_bb_capacity // 4) if cluster.n_bb else 0
            prof = state.mask_profile() if skip_reads else state.profile()  # the former reads node_end
            alloc = prof.alloc_now(res, wall, bb)
            if alloc is None:
                continue
            job = Job(f"j{k}", state.now, res, wall, bb if alloc.bb_use is not None else 0)
            k += 1
            state.submit(job)
            dec = Decisions(state.now)
            dec.start(job, alloc)
            state.apply(dec)
        elif op in ("finish", "pop") and state.running:
            jid = data.draw(st.sampled_from(sorted(state.running)))
            if op == "finish":
                state.finish(jid)
            else:
                state.running.pop(jid)
                state._profile = None
        elif op == "assign" and state.running:
            jid = data.draw(st.sampled_from(sorted(state.running)))
            run = state.running[jid]
            state.running[jid] = RunningJob(run.job, run.start, run.alloc)  # same job again
            state._profile = None
        elif op == "advance":
            state.advance(state.now + data.draw(st.sampled_from([0.0, 0.25, 1.0, 5.0, 40.0, 0.9999995, 1e-7])))
        run = state.running
        if skip_reads and data.draw(st.booleans()):
            continue  # node_end not read: its writes pile up (or a rebuild is due)
        assert run.in_step()
        ref = Profile.from_running(cluster, state.now, ((r.expected_end, r.alloc) for r in run.values()))
        assert _profile_arrays(state.profile()) == _profile_arrays(ref)
        assert run.masks_in_step() and _profile_arrays(state.mask_profile().to_profile()) == _profile_arrays(ref)


def test_state_profile_falls_back_when_untracked():
    """An untracked change (update) or a node held twice: the profile is built from the
    running jobs (from_running, which refuses two jobs on one node)."""
    from coburst.core.profile import ProfileConflict

    cluster = Cluster.build(4, [])
    state = SchedulerState(cluster, 0.0)
    alloc = Profile(cluster, 0.0).alloc_now(2, 10.0)
    state.running.update({"a": RunningJob(Job("a", 0.0, 2, 10.0), 0.0, alloc)})
    assert not state.running.in_step()
    assert state.profile()._rows == [2, 4]
    state2 = SchedulerState(cluster, 0.0)
    state2.running["a"] = RunningJob(Job("a", 0.0, 2, 10.0), 0.0, alloc)
    state2.running["b"] = RunningJob(Job("b", 0.0, 2, 20.0), 0.0, alloc)
    assert not state2.running.in_step()
    with pytest.raises(ProfileConflict):
        state2.profile()


# ----------------------------------------------------------------------------- node choice
@settings(max_examples=400, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=140), st.integers(0, 141))
@example([True, False, True, True, False, True, True, True], 2)
@example([True, False, True, True, False, True, True, False, True], 5)
def test_select_nodes_equals_numpy_form(mask, count):
    """select_nodes (runs chosen in Python) picks the nodes the former all-numpy form
    picked: the smallest fitting run, or the longest runs first."""
    from coburst.core.placement import select_nodes, select_nodes_numpy

    mask = np.array(mask, dtype=bool)
    got, want = select_nodes(mask, count), select_nodes_numpy(mask, count)
    assert (got is None) == (want is None)
    if got is not None:
        assert got.dtype == want.dtype and got.tolist() == want.tolist()


def test_state_profile_overdue_next_to_an_end():
    """A job past its expected end (busy until now + OVERDUE) while another ends within
    OVERDUE of now: the breakpoints and masks of from_running."""
    from coburst.core.decisions import Decisions

    cluster = Cluster.build(4, [])
    state = SchedulerState(cluster, 0.0)
    for name, at in (("a", 0.0), ("b", 5e-7)):
        state.advance(at)
        job = Job(name, at, 2, 1.0)
        state.submit(job)
        dec = Decisions(state.now)
        dec.start(job, state.profile().alloc_now(2, 1.0))
        state.apply(dec)
    state.advance(1.0)
    ref = Profile.from_running(cluster, 1.0, ((r.expected_end, r.alloc) for r in state.running.values()))
    got = state.profile()
    assert got._times[1] < 1.0 + 1e-6 and len(got._times) == 3
    assert _profile_arrays(got) == _profile_arrays(ref)


# ----------------------------------------------------------------------------- width screen
class _Unscreened(Profile):
    """A Profile the policies' width screen does not recognise (the former path)."""

    __slots__ = ()


def _unscreened(prof: Profile) -> Profile:
    other = prof.copy()
    other.__class__ = _Unscreened
    return other


@settings(max_examples=200, deadline=None)
@given(states(max_queue=14), st.booleans())
def test_width_screen_same_starts(state, reserve_head):
    """try_start / fill / start_in_order with the screen (jobs wider than the idle nodes
    refused before alloc_now) start the same jobs on the same nodes as without it."""
    from coburst.core.decisions import Decisions
    from coburst.policies.base import fill, reserve, start_in_order

    out = []
    for prof in (state.profile(), _unscreened(state.profile())):
        dec = Decisions(state.now)
        waiting = start_in_order(prof, state.queue, dec)
        if reserve_head and waiting:
            reserve(prof, waiting[0], dec)
            waiting = waiting[1:]
        left = fill(prof, waiting, dec)
        out.append((dec, [j.id for j in left], fits_any_now(prof, left)))
    (a, left_a, fit_a), (b, left_b, fit_b) = out
    _same_decisions(a, b)
    assert left_a == left_b and fit_a == fit_b is False


# ----------------------------------------------------------------------------- bit-mask profile
MASK_POLICIES = ["fcfs", "filler", "filler-sjf", "conservative"] + \
    [f"{f}-{d}" for f in ("backfill", "backfill-sjf", "no-future") for d in (1, 2)]


def _alloc_key(alloc):
    if alloc is None:
        return None
    use = None if alloc.bb_use is None else alloc.bb_use.tolist()
    return (alloc.nodes.dtype.str, alloc.nodes.tolist(), alloc.bb_nodes.tolist(), alloc.bb, use)


def _found_key(found):
    return None if found is None else (found[0], _alloc_key(found[1]))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 1 << 140))
def test_node_mask_and_indices_round_trip(mask):
    """mask_indices gives the set bits ascending; node_mask of an allocation of those nodes
    gives the mask back (one run or not)."""
    from coburst.core.placement import mask_indices, node_mask

    idx = mask_indices(mask)
    assert idx.dtype == np.int64 and idx.tolist() == [i for i in range(mask.bit_length()) if mask >> i & 1]
    assert node_mask(Allocation.make(0, idx)) == mask


@settings(max_examples=300, deadline=None)
@given(states(max_queue=6, min_bb=0), st.data())
def test_mask_profile_equals_profile(state, data):
    """MaskProfile answers every query as Profile and follows every occupation (conflicts
    included) into the same breakpoints, masks and BB rows, on a random state."""
    from coburst.core.maskprofile import MaskProfile
    from coburst.core.profile import ProfileConflict

    cluster = state.cluster
    ref = state.profile()
    fast = state.mask_profile()
    assert type(fast) is MaskProfile
    assert _profile_arrays(fast.to_profile()) == _profile_arrays(ref)
    assert _profile_arrays(MaskProfile.from_profile(ref).to_profile()) == _profile_arrays(ref)
    now, cap = state.now, cluster.max_bb_capacity
    for _ in range(data.draw(st.integers(1, 12))):
        op = data.draw(st.sampled_from(["alloc", "fits", "earliest", "earliest", "occupy", "conflict", "copy"]))
        res = data.draw(st.integers(0, cluster.n_compute + 1))
        wall = data.draw(st.sampled_from([1.0, 2.5, 7.0, 19.0, 40.0, 1e-7, math.inf]))
        bb = data.draw(st.integers(0, 3)) * (cap // 4) if cluster.n_bb else 0
        storage = data.draw(st.booleans())
        if op == "alloc":
            assert _alloc_key(fast.alloc_now(res, wall, bb, storage)) == _alloc_key(ref.alloc_now(res, wall, bb, storage))
        elif op == "fits":
            assert fast.fits_now(res, wall, bb, storage) == ref.fits_now(res, wall, bb, storage)
            assert fast.idle_now() == ref.idle_now()
        elif op == "earliest":
            nb = data.draw(st.sampled_from([None, now - 1.0, now + 3.0, now + 11.5]))
            a, b = fast.earliest(res, wall, bb, storage, nb), ref.earliest(res, wall, bb, storage, nb)
            assert _found_key(a) == _found_key(b)
            if a is not None and data.draw(st.booleans()):
                fast.occupy(a[0], a[0] + wall, a[1])
                ref.occupy(b[0], b[0] + wall, b[1])
        elif op in ("occupy", "conflict"):
            nodes = sorted(data.draw(st.sets(st.integers(0, cluster.n_compute - 1), max_size=cluster.n_compute)))
            bb_nodes = [data.draw(st.integers(0, cluster.n_bb - 1)) for _ in nodes] if cluster.n_bb and bb else None
            alloc = Allocation.make(cluster.n_bb, np.array(nodes, dtype=np.int64),
                                    None if bb_nodes is None else np.array(bb_nodes), bb)
            start = data.draw(st.sampled_from([now - 2.0, now, now + 1.0, now + 5.5, now + 30.0]))
            end = start + data.draw(st.sampled_from([0.0, 1.0, 4.0, 25.0, math.inf]))
            out = []
            for prof in (fast, ref):
                try:
                    prof.occupy(start, end, alloc)
                    out.append("ok")
                except ProfileConflict:
                    out.append("conflict")
                except ValueError:
                    out.append("value")
            assert out[0] == out[1]
        else:  # a copy is independent of its original
            before = _profile_arrays(ref)
            fcopy, rcopy = fast.copy(), ref.copy()
            a = fcopy.earliest(max(res, 1), wall, bb, storage)
            if a is not None:
                fcopy.occupy(a[0], a[0] + wall, a[1])
                b = rcopy.earliest(max(res, 1), wall, bb, storage)
                rcopy.occupy(b[0], b[0] + wall, b[1])
                assert _profile_arrays(fcopy.to_profile()) == _profile_arrays(rcopy)
            assert _profile_arrays(fast.to_profile()) == before == _profile_arrays(ref)
        assert _profile_arrays(fast.to_profile()) == _profile_arrays(ref)


def _numpy_path(policy):
    """The same policy on the numpy Profile (the former path)."""
    policy.bit_masks = False
    return policy


@settings(max_examples=250, deadline=None)
@given(states(max_queue=14, min_bb=0), st.sampled_from(MASK_POLICIES))
def test_mask_policies_decision_equals_numpy(state, name):
    """One decision of FCFS / filling / EASY / conservative backfilling on a random state:
    the same starts, allocations and reservations on the bit-mask profile as on numpy's."""
    _same_decisions(policies.get(name).make_decisions(state), _numpy_path(policies.get(name)).make_decisions(state))


@settings(max_examples=80, deadline=None)
@given(st.data(), st.sampled_from(MASK_POLICIES))
def test_mask_policies_replay_equals_numpy(data, name):
    """Whole replays (submissions, early ends, kills): every decision of the run equal."""
    cluster = data.draw(clusters(max_compute=12, max_bb=3))
    jobs, runtimes = data.draw(workloads(cluster, max_jobs=24))
    fast = replay(cluster, jobs, policies.get(name), runtimes)
    former = replay(cluster, jobs, _numpy_path(policies.get(name)), runtimes)
    assert len(fast.decisions) == len(former.decisions)
    for a, b in zip(fast.decisions, former.decisions):
        _same_decisions(a.decisions, b.decisions)


def test_mask_profile_falls_back_when_untracked():
    """Untracked changes (update), a plain dict of running jobs or a state whose profile()
    is overridden: mask_profile is that profile (converted), not the kept masks."""
    from coburst.core.maskprofile import MaskProfile
    from coburst.core.profile import ReferenceProfile

    cluster = Cluster.build(4, [])
    state = SchedulerState(cluster, 0.0)
    alloc = Profile(cluster, 0.0).alloc_now(2, 10.0)
    state.running.update({"a": RunningJob(Job("a", 0.0, 2, 10.0), 0.0, alloc)})
    assert not state.running.masks_in_step()
    assert state.mask_profile()._rows == [2, 4]
    state.running = {"a": RunningJob(Job("a", 0.0, 2, 10.0), 0.0, alloc)}
    state._profile = None
    got = state.mask_profile()
    assert type(got) is MaskProfile and got._rows == [2, 4]

    class Naive(SchedulerState):
        def profile(self):
            return ReferenceProfile(self.cluster, self.now)

    assert type(Naive(cluster, 0.0).mask_profile()) is ReferenceProfile
