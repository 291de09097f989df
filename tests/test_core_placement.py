"""Cluster building, compute-node selection and burst-buffer placement."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coburst.core.cluster import ELSEWHERE, SAME_CHASSIS, SAME_GROUP, Cluster
from coburst.core.placement import bb_slots, place_bb, select_nodes
from coburst.errors import InputError
from coburst.testing.strategies import clusters


# ---------------------------------------------------------------- cluster
def test_dragonfly_platform():
    c = Cluster.dragonfly()
    assert (c.n_compute, c.n_bb) == (96, 12)
    assert c.total_bb_capacity == 12 * 40_000_000_000
    assert [n.name for n in c.bb][:3] == ["node_0", "node_9", "node_18"]
    # ids as Batsim 4 numbers them: compute hosts first, each role in lexicographic name order
    assert c.compute[0].name == "node_1" and c.compute[0].id == 0
    assert c.compute[8].name == "node_10" and c.compute[8].id == 1
    assert c.bb[0].id == 96 and c.bb[1].name == "node_9" and c.bb[1].id == 96 + 9
    assert sorted(c.compute_ids.tolist()) == list(range(96))
    for i, node in enumerate(c.compute):
        pref = c.bb_preference[i]
        assert c.bb[pref[0]].chassis == node.chassis  # own chassis first
        dist = [c.bb_distance[i, b] for b in pref]
        assert dist == sorted(dist)
        assert dist.count(SAME_CHASSIS) == 1 and dist.count(SAME_GROUP) == 3 and dist.count(ELSEWHERE) == 8
    # topology order: 8 compute nodes of a chassis are contiguous indices
    assert [n.chassis for n in c.compute] == sorted(n.chassis for n in c.compute)


def test_from_resources_roles_and_errors():
    compute = [{"id": i, "name": f"node_{i}", "properties": {"group": "0", "chassis": str(i // 2), "router": "0"}}
               for i in range(4)]
    storage = [{"id": 4, "name": "bb0", "properties": {"bb_capacity": "100", "group": "0", "chassis": "1", "router": "0"}},
               {"id": 5, "name": "pfs", "properties": {"role": "storage"}}]
    c = Cluster.from_resources(compute, storage)
    assert c.n_compute == 4 and c.n_bb == 1 and c.bb_ids.tolist() == [4]
    assert c.distance(2, 4) == SAME_CHASSIS and c.distance(0, 4) == SAME_GROUP
    # thesis style: storage hosts without capacity get the default, except the PFS
    storage2 = [{"id": 4, "name": "node_9", "properties": {}}, {"id": 5, "name": "pfs", "properties": {}}]
    c2 = Cluster.from_resources(compute, storage2, default_bb_capacity=7)
    assert c2.bb_ids.tolist() == [4] and c2.bb_capacity.tolist() == [7]
    # dragonfly topology derived from host numbers
    c3 = Cluster.from_resources([{"id": i, "name": f"node_{i}"} for i in range(1, 18) if i != 9],
                                [{"id": 0, "name": "node_0"}, {"id": 9, "name": "node_9"}],
                                default_bb_capacity=10, dragonfly="1,1;2,1;3,1;3")
    assert c3.distance(1, 0) == SAME_CHASSIS and c3.distance(10, 0) == SAME_GROUP
    with pytest.raises(InputError, match="bb_capacity"):
        Cluster.from_resources(compute, [{"id": 4, "name": "x", "properties": {"bb_capacity": "lots"}}])
    with pytest.raises(InputError, match="unique"):
        Cluster.from_resources(compute + compute[:1])
    with pytest.raises(InputError):
        Cluster.from_resources([], storage)


def test_never_fits():
    c = Cluster.build(4, [10, 10])
    assert c.never_fits(4, 5) is None
    assert "compute nodes" in c.never_fits(5, 0)
    assert "largest" in c.never_fits(1, 11)
    assert "packed" in c.never_fits(3, 6)  # 6 B per node: one per BB node only
    assert c.never_fits(2, 6) is None
    assert "no burst-buffer" in Cluster.build(2).never_fits(1, 1)


# ---------------------------------------------------------------- node selection
@settings(max_examples=200, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=40), st.integers(0, 40))
def test_select_nodes(mask, count):
    mask = np.array(mask)
    chosen = select_nodes(mask, count)
    if count > mask.sum():
        assert chosen is None
        return
    assert len(chosen) == count == len(set(chosen.tolist()))
    assert mask[chosen].all() and chosen.tolist() == sorted(chosen.tolist())
    # runs of free nodes
    runs, i = [], 0
    while i < len(mask):
        if mask[i]:
            j = i
            while j < len(mask) and mask[j]:
                j += 1
            runs.append((i, j - i))
            i = j
        else:
            i += 1
    fitting = [r for r in runs if r[1] >= count]
    if count and fitting:
        start, _ = min(fitting, key=lambda r: (r[1], r[0]))
        assert chosen.tolist() == list(range(start, start + count))


# ---------------------------------------------------------------- BB placement
@settings(max_examples=200, deadline=None)
@given(clusters(max_compute=16, max_bb=5, min_bb=1), st.data())
def test_place_bb_nearest_first(cluster, data):
    n = data.draw(st.integers(1, cluster.n_compute))
    nodes = np.array(sorted(data.draw(st.permutations(range(cluster.n_compute)))[:n]))
    bb = data.draw(st.integers(1, 8)) * 250
    avail = np.array([data.draw(st.integers(0, int(c))) for c in cluster.bb_capacity], dtype=np.int64)
    out = place_bb(cluster.bb_preference, nodes, bb, avail)
    if bb_slots(avail, bb) < n:
        assert out is None
        return
    assert out is not None and len(out) == n
    used = np.bincount(out, minlength=cluster.n_bb) * bb
    assert (used <= avail).all()  # whole per-node requests, within free capacity
    left = (avail - used) // bb
    for i, b in zip(nodes.tolist(), out.tolist()):
        pref = cluster.bb_preference[i]
        # every BB node this compute node prefers to the chosen one is full
        for better in pref[:pref.index(b)]:
            assert left[better] == 0


def test_place_bb_same_chassis_then_group():
    topo_c = [(0, 0, 0), (0, 0, 0), (0, 1, 0), (1, 2, 0)]
    topo_b = [(0, 0, 0), (0, 1, 0), (1, 2, 0)]
    c = Cluster.build(4, [200, 200, 200], compute_topology=topo_c, bb_topology=topo_b)
    out = place_bb(c.bb_preference, np.arange(4), 100, c.bb_capacity.copy())
    assert out.tolist() == [0, 0, 1, 2]
    avail = np.array([100, 200, 200])
    out = place_bb(c.bb_preference, np.arange(4), 100, avail)
    assert out.tolist() == [0, 1, 1, 2]  # node 1 spills to the other chassis of its group
    avail = np.array([0, 0, 400])
    assert place_bb(c.bb_preference, np.arange(4), 100, avail).tolist() == [2, 2, 2, 2]
    assert place_bb(c.bb_preference, np.arange(4), 100, np.array([0, 0, 300])) is None
    assert place_bb(c.bb_preference, np.arange(4), 0, np.array([0, 0, 0])).tolist() == []
