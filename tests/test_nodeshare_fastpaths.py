"""Node-sharing board fast paths (issue 20, deliverable 5): same boards, same refusals.

:meth:`NodeSharingState.apply` validates a decision's placements with
:meth:`Board.validate` (nothing changed) and takes them unchecked, where it used to take them
checked (``np.subtract.at`` on the unit counts, then the geometry); :meth:`Board.place` picks
unit indices from the cluster's precomputed ``unit_grid`` instead of building them with
``arange``s.  Checked here against the former code (``_former_take`` / ``_former_place``,
copied from the commit before) on random boards: random valid placements (both modes, both
node orders, burst buffers) and corrupted ones (a unit taken, moved, doubled, a node not
suitable, a burst-buffer overdraft).  The former checked ``take`` let some malformed
placements through (units doubled or not on the placement's nodes, with the right counts,
leaving the board's counts wrong); ``validate`` refuses every placement not of the form
``place`` gives: the only difference, tested as such.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coburst.core.nodeshare import (COMPACT, SPREAD, Board, CoJob, NodeSharingCluster, NodeSharingState, Placement,
                                    PlacementDecisions)

FIELDS = ("free", "per_socket", "jobs_on", "owner", "bb_free", "compact_ok", "spread_ok")


def _former_take(self: Board, handle: int, pl: Placement) -> None:
    """``Board.take(handle, pl, check=True)`` before the fast path (verbatim)."""
    c = self.cluster
    nodes, units = pl.arrays()
    if not self.free.reshape(-1)[units].all():
        raise ValueError("placement takes a unit that is not free")
    if pl.mode == COMPACT:
        if not self.compact_mask(nodes).all():
            raise ValueError("compact placement on a node that is not idle")
        if len(units) != len(nodes) * c.units_per_node:
            raise ValueError("compact placement must take every unit of its nodes")
    else:
        if not self.spread_mask(nodes).all():
            raise ValueError("spread placement on a node that cannot take one more spread job")
        if len(units) != len(nodes) * c.sockets * c.half:
            raise ValueError("spread placement must take half of every socket of its nodes")
    if pl.bb_nodes:
        use = np.bincount(np.asarray(pl.bb_nodes), minlength=len(self.bb_free)) * pl.bb
        if (use > self.bb_free).any():
            raise ValueError("placement over a burst-buffer node's free capacity")
        self.bb_free -= use
    self.free.reshape(-1)[units] = False
    self.owner[units] = handle
    np.subtract.at(self.per_socket.reshape(-1), units // c.k, 1)
    if pl.mode == SPREAD and (self.per_socket[nodes] != c.k - c.half * (self.jobs_on[nodes] + 1)[:, None]).any():
        raise ValueError("spread placement must take exactly half of every socket")
    if pl.mode == COMPACT:
        self.n_compact -= len(nodes)
        if c.can_spread:
            self.n_spread -= len(nodes)
        self.spread_ok[nodes] = False
    else:
        was_idle = self.jobs_on[nodes] == 0
        idle = int(np.count_nonzero(was_idle))
        self.n_compact -= idle
        self.n_spread -= len(nodes) - idle
        self.spread_ok[nodes] = was_idle
    self.compact_ok[nodes] = False
    self.jobs_on[nodes] += 1


def _former_units(c: NodeSharingCluster, chosen: np.ndarray) -> np.ndarray:
    """The unit grid of ``chosen`` nodes as ``Board.place`` built it before."""
    return (chosen[:, None, None] * c.sockets + np.arange(c.sockets)[None, :, None]) * c.k \
        + np.arange(c.k)[None, None, :]


def _same(a: Board, b: Board) -> None:
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        assert x.dtype == y.dtype and np.array_equal(x, y), f
    assert (a.n_compact, a.n_spread) == (b.n_compact, b.n_spread)


def _corrupt(draw, board: Board, pl: Placement) -> Placement:
    c = board.cluster
    nodes, units = list(pl.nodes), list(pl.units)
    how = draw(st.sampled_from(["move", "double", "drop", "node", "bb", "swap-node", "lopsided"]))
    total = c.n * c.units_per_node
    if how == "move" and units:
        units[draw(st.integers(0, len(units) - 1))] = draw(st.integers(0, total - 1))
    elif how == "double" and len(units) > 1:
        i = draw(st.integers(1, len(units) - 1))
        units[i] = units[i - 1]
    elif how == "drop" and units:
        units.pop(draw(st.integers(0, len(units) - 1)))
    elif how == "node" and nodes:
        nodes[draw(st.integers(0, len(nodes) - 1))] = draw(st.integers(0, c.n - 1))
    elif how == "bb" and len(c.bb_capacity):
        return Placement(pl.mode, tuple(nodes), tuple(units), tuple([0] * max(1, len(nodes))),
                         int(c.bb_capacity.max()) + 1)
    elif how == "swap-node" and nodes:
        # the units of another node, the node list unchanged (a compact placement the former
        # check accepted when that node was idle too)
        other = draw(st.integers(0, c.n - 1))
        i = draw(st.integers(0, len(nodes) - 1))
        start = other * c.units_per_node
        if pl.mode == COMPACT:
            units = [u for u in units if u // c.units_per_node != nodes[i]] + list(range(start, start + c.units_per_node))
            units.sort()
    elif how == "lopsided" and nodes and pl.mode == SPREAD:
        # one node's share taken from its first units (ascending, on the node, the right
        # count: only the per-socket geometry is wrong when a socket holds more than half)
        node = nodes[draw(st.integers(0, len(nodes) - 1))]
        start = node * c.units_per_node
        mine = [u for u in units if u // c.units_per_node == node]
        units = sorted([u for u in units if u // c.units_per_node != node]
                       + list(range(start, start + len(mine))))
    return Placement(pl.mode, tuple(nodes), tuple(units), pl.bb_nodes, pl.bb)


@st.composite
def boards_and_placements(draw):
    nodes = draw(st.integers(1, 10))
    sockets = draw(st.integers(1, 3))
    k = draw(st.sampled_from([1, 2, 4]))
    bb = draw(st.lists(st.integers(1, 5), max_size=3))
    cluster = NodeSharingCluster.build(nodes, sockets, k, 2, bb)
    board = Board(cluster)
    steps = []
    handle = 0
    for _ in range(draw(st.integers(0, 12))):
        mode = draw(st.sampled_from([COMPACT, SPREAD] if cluster.can_spread else [COMPACT]))
        m = draw(st.integers(1, nodes))
        want_bb = draw(st.integers(0, 3)) if len(bb) else 0
        order = None
        if draw(st.booleans()):
            order = np.asarray(draw(st.permutations(range(nodes))), dtype=np.int64)
        trial = board.copy()
        pl = trial.place(handle, mode, m, order, want_bb)
        if pl is None:
            continue
        if draw(st.integers(0, 3)) == 0:
            pl = _corrupt(draw, board, pl)
        steps.append((board.copy(), handle, pl))
        handle += 1
        if draw(st.booleans()):  # keep the board moving: take it for real when valid
            try:
                board.copy().validate(pl)
            except ValueError:
                continue
            board.take(handle, pl, check=False)
            if draw(st.integers(0, 4)) == 0:
                board.give(pl)
    return steps


def _well_formed(board: Board, pl: Placement) -> bool:
    """The form :meth:`Board.place` gives: nodes and units ascending without repeats, every
    unit on one of the nodes (a compact placement: exactly their units)."""
    c = board.cluster
    nodes, units = pl.arrays()
    if not (len(nodes) and (np.diff(nodes) > 0).all() and (np.diff(units) > 0).all()):
        return False
    if not set((units // c.units_per_node).tolist()) <= set(nodes.tolist()):
        return False
    return pl.mode != COMPACT or len(units) == len(nodes) * c.units_per_node


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=boards_and_placements())
def test_validate_then_unchecked_take_is_the_former_checked_take(data):
    for board, handle, pl in data:  # each placement on the board it was made for
        former, new = board.copy(), board.copy()
        try:
            _former_take(former, handle, pl)
            former_error = None
        except ValueError as err:
            former_error = str(err)
        try:
            new.validate(pl)
            _same(new, board)  # validate changes nothing
            new.take(handle, pl, check=False)
            new_error = None
        except ValueError as err:
            new_error = str(err)
            _same(new, board)
        if not _well_formed(board, pl):
            # the former counting checks let some malformed placements through (leaving the
            # counts wrong); validate refuses every one
            assert new_error is not None
            continue
        assert new_error == former_error
        if former_error is None:
            _same(new, former)


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
