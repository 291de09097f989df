"""Availability profile: numpy Profile against the brute-force ReferenceProfile."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coburst.core.cluster import Cluster
from coburst.core.placement import Allocation
from coburst.core.profile import OVERDUE, Profile, ProfileConflict, ReferenceProfile
from coburst.testing.strategies import UNIT, clusters


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, tuple):
        return a[0] == b[0] and same(a[1], b[1])
    return (a.nodes.tolist() == b.nodes.tolist() and a.bb_nodes.tolist() == b.bb_nodes.tolist()
            and a.bb == b.bb)


@st.composite
def profile_cases(draw):
    cluster = draw(clusters(max_compute=10, max_bb=3))
    now = float(draw(st.integers(0, 5)))
    running = []
    free = list(range(cluster.n_compute))
    bb_left = cluster.bb_capacity.tolist()
    for _ in range(draw(st.integers(0, 5))):
        if not free:
            break
        k = draw(st.integers(1, len(free)))
        nodes = sorted(draw(st.permutations(free))[:k])
        free = [x for x in free if x not in nodes]
        end = float(draw(st.integers(0, 20)))  # may be overdue (<= now)
        bb_nodes = None
        bb = 0
        if cluster.n_bb and draw(st.booleans()):
            bb = UNIT // 2
            choice = []
            for _n in nodes:
                options = [b for b in range(cluster.n_bb) if bb_left[b] >= bb]
                if not options:
                    break
                b = draw(st.sampled_from(options))
                bb_left[b] -= bb
                choice.append(b)
            if len(choice) == len(nodes):
                bb_nodes = np.array(choice)
            else:
                bb = 0
        running.append((end, Allocation.make(cluster.n_bb, np.array(nodes), bb_nodes, bb)))
    requests = draw(st.lists(st.tuples(
        st.integers(1, cluster.n_compute),                  # res
        st.integers(1, 15),                                  # walltime
        st.integers(0, 6).map(lambda u: u * UNIT // 2),      # bb per node
        st.booleans(),                                       # storage
        st.integers(0, 25),                                  # not_before offset
        st.sampled_from(["earliest", "now", "reserve"]),
    ), min_size=1, max_size=12))
    return cluster, now, running, requests


@settings(max_examples=300, deadline=None)
@given(profile_cases())
def test_profile_matches_reference(case):
    cluster, now, running, requests = case
    fast = Profile.from_running(cluster, now, running)
    ref = ReferenceProfile.from_running(cluster, now, running)
    for res, wall, bb, storage, offset, op in requests:
        if op == "now":
            assert fast.fits_now(res, wall, bb, storage) == ref.fits_now(res, wall, bb, storage)
            a, b = fast.alloc_now(res, wall, bb, storage), ref.alloc_now(res, wall, bb, storage)
            assert same(a, b)
            if a is not None and offset % 2:
                fast.occupy(now, now + wall, a)
                ref.occupy(now, now + wall, b)
        else:
            nb = now + offset if op == "earliest" else None
            a = fast.earliest(res, wall, bb, storage, not_before=nb)
            b = ref.earliest(res, wall, bb, storage, not_before=nb)
            assert same(a, b), (a, b)
            if op == "reserve" and a is not None:
                fast.occupy(a[0], a[0] + wall, a[1])
                ref.occupy(b[0], b[0] + wall, b[1])
    # the incremental per-segment free counts stay exact
    assert fast._rows == np.count_nonzero(fast._free, axis=1).tolist()
    assert fast._bbtot == fast._bb.sum(axis=1).tolist()
    # the segment view agrees with the reference everywhere
    for start, end, mask, bbfree in fast.segments():
        probe = start if math.isinf(end) else (start + end) / 2
        m, avail = ref._window(probe, np.nextafter(probe, math.inf))
        assert mask.tolist() == m.tolist()
        assert bbfree.tolist() == avail.tolist()


@settings(max_examples=150, deadline=None)
@given(profile_cases())
def test_earliest_is_feasible_and_minimal(case):
    cluster, now, running, requests = case
    prof = Profile.from_running(cluster, now, running)
    for res, wall, bb, storage, offset, _ in requests:
        found = prof.earliest(res, wall, bb, storage)
        if found is None:
            assert cluster.never_fits(res, bb if storage else 0)
            continue
        start, alloc = found
        assert start >= now
        # feasible: occupying it on a copy succeeds
        prof.copy().occupy(start, start + wall, alloc)
        # minimal: no breakpoint before it works
        for t in prof.breakpoints:
            if t >= start:
                break
            assert not _fits_at(prof, t, res, wall, bb, storage)


def _fits_at(prof, t, res, wall, bb, storage):
    mask = np.ones(prof.cluster.n_compute, bool)
    avail = prof.cluster.bb_capacity.copy()
    for s, e, m, b in prof.segments():
        if e > t and s < t + wall:
            mask &= m
            avail = np.minimum(avail, b)
    if mask.sum() < res:
        return False
    return not (storage and bb) or int((avail // bb).sum()) >= res


def test_running_jobs_and_overdue():
    c = Cluster.build(4, [10 * UNIT])
    a = Allocation.make(1, np.array([0, 1]), np.array([0, 0]), 3 * UNIT)
    b = Allocation.make(1, np.array([2]))
    prof = Profile.from_running(c, 10.0, [(20.0, a), (5.0, b)])  # b is overdue
    assert prof.breakpoints == [10.0, 10.0 + OVERDUE, 20.0]
    mask, bb = prof.free_at(10.0)
    assert mask.tolist() == [False, False, False, True]
    assert bb.tolist() == [4 * UNIT]
    mask, bb = prof.free_at(20.0)
    assert mask.all() and bb.tolist() == [10 * UNIT]
    assert prof.fits_now(1, 100.0)
    assert not prof.fits_now(2, 100.0)
    start, alloc = prof.earliest(2, 5.0, 2 * UNIT)
    assert start == 10.0 + OVERDUE and alloc.nodes.tolist() == [2, 3]
    assert alloc.bb_nodes.tolist() == [0, 0]
    # BB: 4 units free before 20, so 2 x 3 units only from 20 on
    start, alloc = prof.earliest(2, 5.0, 3 * UNIT)
    assert start == 20.0
    start, alloc = prof.earliest(2, 5.0, 3 * UNIT, storage=False, not_before=11.0)
    assert start == 11.0 and alloc.bb_use is None


def test_infinite_walltime_and_conflicts():
    c = Cluster.build(2, [4 * UNIT])
    forever = Allocation.make(1, np.array([0]), np.array([0]), 3 * UNIT)
    prof = Profile.from_running(c, 0.0, [(math.inf, forever)])
    assert prof.breakpoints == [0.0]
    assert prof.earliest(2, 1.0) is None
    assert prof.earliest(1, 1.0, 2 * UNIT) is None          # 1 unit left forever
    s, a = prof.earliest(1, math.inf, UNIT)
    assert s == 0.0 and a.nodes.tolist() == [1]
    prof.occupy(0.0, math.inf, a)
    with pytest.raises(ProfileConflict):
        prof.occupy(5.0, 6.0, a)
    with pytest.raises(ProfileConflict):
        Profile.from_running(c, 0.0, [(3.0, forever), (4.0, forever)])
    with pytest.raises(ValueError):
        prof.occupy(3.0, 3.0, a)


def test_occupy_rolls_back_bb_on_conflict():
    c = Cluster.build(3, [4 * UNIT])
    prof = Profile(c, 0.0)
    prof.occupy(0.0, 10.0, Allocation.make(1, np.array([0]), np.array([0]), 3 * UNIT))
    with pytest.raises(ProfileConflict):
        prof.occupy(5.0, 8.0, Allocation.make(1, np.array([1]), np.array([0]), 2 * UNIT))
    # the failed occupation left node 1 and the BB capacity untouched
    for _, _, mask, bb in prof.segments():
        assert mask[1] and bb[0] in (UNIT, 4 * UNIT)
    assert prof.fits_now(2, 20.0)
