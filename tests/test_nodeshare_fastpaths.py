"""Node-sharing board fast path: :meth:`Board.place` picks unit
indices from the cluster's precomputed ``unit_grid`` instead of building them with
``arange``s at every placement: the same indices (``_former_units``, copied from the commit
before) on random grids.  (A ``Board.validate`` replacing the checked ``take`` of
:meth:`NodeSharingState.apply` was tried and measured no faster: numpy's per-call cost.)
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from coburst.core.nodeshare import COMPACT, Board, CoJob, NodeSharingCluster, NodeSharingState, PlacementDecisions

FIELDS = ("free", "per_socket", "jobs_on", "owner", "bb_free", "compact_ok", "spread_ok")


def _former_units(c: NodeSharingCluster, chosen: np.ndarray) -> np.ndarray:
    """The unit grid of ``chosen`` nodes as ``Board.place`` built it before."""
    return (chosen[:, None, None] * c.sockets + np.arange(c.sockets)[None, :, None]) * c.k \
        + np.arange(c.k)[None, None, :]


def _same(a: Board, b: Board) -> None:
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        assert x.dtype == y.dtype and np.array_equal(x, y), f
    assert (a.n_compact, a.n_spread) == (b.n_compact, b.n_spread)


@settings(max_examples=300, deadline=None)
@given(nodes=st.integers(1, 30), sockets=st.integers(1, 4), k=st.integers(1, 6), data=st.data())
def test_unit_grid_is_the_former_arange_grid(nodes, sockets, k, data):
    c = NodeSharingCluster.build(nodes, sockets, k, 1)
    chosen = np.sort(np.asarray(data.draw(st.lists(st.integers(0, nodes - 1), min_size=1, max_size=nodes,
                                                   unique=True)), dtype=np.int64))
    got, want = c.unit_grid[chosen], _former_units(c, chosen)
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_apply_refuses_a_conflicting_decision_and_keeps_the_board():
    cluster = NodeSharingCluster.build(4, 2, 2, 8)
    state = NodeSharingState(cluster)
    a = CoJob("a", 0.0, 8, 10.0, 2, 0)
    b = CoJob("b", 0.0, 8, 10.0, 2, 1)
    state.submit(a)
    state.submit(b)
    board = state.board()
    pa = board.place(0, COMPACT, 2)
    d = PlacementDecisions(0.0)
    d.start(a, pa)
    d.start(b, pa)  # the same units twice
    before = state.board()
    try:
        state.apply(d)
    except ValueError as err:
        assert "not free" in str(err)
    else:
        raise AssertionError("a unit given twice was accepted")
    _same(state.board(), before)
    assert state.queue_len() == 2 and not state.running
    d = PlacementDecisions(0.0)
    d.start(a, pa)
    state.apply(d)
    assert set(state.running) == {"a"}
