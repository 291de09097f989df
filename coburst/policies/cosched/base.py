"""The node-sharing policy interface and the steps every (co-)scheduler is made of.

The scheme of ELiSE's schedulers (ELiSE paper, §3.6, Alg. 1; Kellari 2025, Ch. 5): at every
decision the waiting queue is **reordered** (:meth:`CoPolicy.order`), jobs are **deployed** in
that order until one cannot be placed now (:func:`deploy`), then **EASY backfilling**
(:func:`easy_backfill`): the job holding the reservation gets the earliest date at which it
could be placed (running jobs end at their walltimes), and each of the next
``backfill_depth`` jobs starts now if it fits and does not delay that date.

Placement (:mod:`coburst.core.nodeshare`): traditional schedulers place jobs *compact*
(whole nodes, alone), co-schedulers *spread* (half of every socket on twice the nodes; a
spread job that finds a half-free node is co-located there).  A job too wide to run spread
(``2 m`` > nodes) runs compact.  Nodes are taken in index order ("serial", as ELiSE), or in
the order a policy gives (:meth:`CoPolicy.node_order`).

Policies are :class:`~coburst.policies.base.Policy` objects (validated parameters,
``get_params``) over a :class:`~coburst.core.nodeshare.NodeSharingState`, returning
:class:`~coburst.core.nodeshare.PlacementDecisions`; they never change the state.

Runtimes: a scheduler knows walltimes, not run times, so the size-based orders (SJF, LJF,
LAF) use walltimes.  With ELiSE's workloads (walltime = 1.4 x compact time) that is the order
of the compact times Kellari's runs used.
"""

from __future__ import annotations

import heapq
import itertools
from typing import Any, ClassVar, Sequence

import numpy as np

from coburst.core.nodeshare import COMPACT, SPREAD, Board, CoJob, NodeSharingState, Placement, PlacementDecisions
from coburst.errors import InputError
from coburst.policies.base import Param, Policy

__all__ = ["CoPolicy", "LazyOrder", "deploy", "easy_backfill",
           "BACKFILL_DEPTH", "BACKFILL_RULE", "HeatmapParam", "AppSpeeds", "load_heatmap_param"]

BACKFILL_DEPTH = Param("backfill_depth", int, 100, lambda v: v >= 0,
                       "number of waiting jobs after the reserved one tried for backfilling (>= 0; ELiSE: 100)")


#: EASY's rule (Lifka 1995; Kellari 2025, §5.1.2), or ELiSE's (module doc of :func:`easy_backfill`)
BACKFILL_RULES = ("easy", "elise")
BACKFILL_RULE = Param("backfill_rule", str, "easy", lambda v: v in BACKFILL_RULES,
                      "easy (a job starts if it ends by the reserved job's date or leaves it room) or elise (only "
                      "if it ends by that date: ELiSE's EASYScheduler.backfill / RanksCoscheduler.backfill)")


def _heatmap_ok(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


HeatmapParam = Param("heatmap", str, "aris-nas", _heatmap_ok,
                     "a heatmap file (CSV/JSON, coburst.models.heatmap) or a bundled heatmap name "
                     "(aris-nas, aris-spec, grvingt-nas, marconi-npb256-fig2)")


def load_heatmap_param(policy: str, value: str):
    """The :class:`~coburst.models.heatmap.Heatmap` a ``heatmap`` parameter names."""
    from pathlib import Path

    from coburst.models import heatmap as hm
    if Path(value).exists():
        try:
            return hm.load_heatmap(value)
        except InputError as err:  # keep the file's name and place in the option's message
            where = f"{err.where}: " if err.where else ""
            raise InputError(f"policy {policy!r}", "heatmap", f"{value}: {where}{err.problem}") from None
    try:
        return hm.bundled(value)
    except KeyError as err:
        raise InputError(f"policy {policy!r}", "heatmap",
                         f"{value!r} is neither a file nor a bundled heatmap ({err.args[0]})") from None


class AppSpeeds:
    """A heatmap as arrays over application indices (ELiSE's rules, vectorised).

    ``eff[a, b]``: speedup of ``a`` next to ``b`` as the hook applies it (measured, else
    ``a``'s row mean, else 1.0); ``alone[a]``: speed of a spread job with no neighbour
    (row best, as the hook by default).  Index ``-1`` (a job without a known application)
    has speedup 1.0 everywhere (the last row and column)."""

    def __init__(self, heatmap):
        apps = heatmap.apps
        n = len(apps)
        self.index = {a: i for i, a in enumerate(apps)}
        eff = np.ones((n + 1, n + 1))
        for i, a in enumerate(apps):
            for j, b in enumerate(apps):
                eff[i, j] = heatmap.effective(a, b)
        self.eff = eff
        alone = np.ones(n + 1)
        for i, a in enumerate(apps):
            best = heatmap.row_best(a)
            alone[i] = 1.0 if best is None else best
        self.alone = alone

    def of(self, job: CoJob) -> int:
        return self.index.get(job.app, -1) if job.app is not None else -1


class CoPolicy(Policy):
    """Base of the node-sharing schedulers (module doc).

    Subclasses set ``co`` (spread placements) and ``backfilling``, and override
    :meth:`order`, and if needed :meth:`mode`, :meth:`node_order`, :meth:`reservation_head`.
    """

    co: ClassVar[bool] = False
    backfilling: ClassVar[bool] = True
    params: ClassVar[tuple[Param, ...]] = (BACKFILL_DEPTH, BACKFILL_RULE)

    # ------------------------------------------------------------------ hooks
    def order(self, state: NodeSharingState, board: Board) -> list[CoJob] | "LazyOrder":
        """The waiting queue in the order jobs are deployed (default: submission order, read
        as the decision goes: :class:`LazyOrder`)."""
        if state.seq_ordered:
            return LazyOrder(state, state.iter_queue(), state.queue_len())
        return state.queue

    def mode(self, job: CoJob, state: NodeSharingState) -> str:
        """How ``job`` is placed: spread for co-schedulers (when it can ever run spread)."""
        if self.co and state.cluster.spread_possible(job.nodes):
            return SPREAD
        return COMPACT

    def node_order(self, job: CoJob, mode: str, board: Board, state: NodeSharingState) -> np.ndarray | None:
        """Node indices in order of preference (None: index order)."""
        return None

    def node_order_key(self, job: CoJob) -> Any:
        """What :meth:`node_order` depends on besides the board (None: nothing, serial order).
        Backfilling prunes by it: two jobs with the same key, mode and burst-buffer request
        get nested placements on the same board."""
        return None

    def reservation_head(self, rest: Sequence[CoJob], state: NodeSharingState) -> CoJob:
        """The job EASY backfilling protects, among the jobs not deployed."""
        return rest[0]

    # ------------------------------------------------------------------ decision
    def place(self, job: CoJob, board: Board, state: NodeSharingState) -> Placement | None:
        mode = self.mode(job, state)
        if not board.fits(mode, job.nodes, job.bb):
            return None
        return board.place(job.seq, mode, job.nodes, self.node_order(job, mode, board, state), job.bb)

    def make_decisions(self, state: NodeSharingState) -> PlacementDecisions:
        decisions = PlacementDecisions(state.now)
        board = state.board()
        queue = self.order(state, board)
        started: list[tuple[float, Placement]] = []
        rest = deploy(self, queue, board, state, decisions, started)
        if self.backfilling and self.backfill_depth > 0 and len(rest) > 1:
            easy_backfill(self, rest, board, state, decisions, started)
        return decisions


class LazyOrder:
    """A policy's order of the whole waiting queue, produced as it is read.

    A decision reads a prefix of the order: the jobs deployed, the first that does not fit,
    then at most ``backfill_depth`` candidates.  A policy whose order can be generated (the
    submission order; Filler's, a merge of per-``processes`` groups,
    :mod:`coburst.policies.cosched.filler`) returns one of these instead of copying or sorting
    the whole queue at every decision.  ``source`` yields the jobs in order; ``view[i:]`` is
    the order from its ``i``-th job (sharing what was produced), ``view[i]`` that job;
    :meth:`oldest` and :meth:`by_seq` read the jobs of the view in submission order (the
    state's queue without the jobs before the view), as EASY backfilling's reservation head and
    ELiSE's rule need.  Valid during one decision (the state does not change meanwhile)."""

    __slots__ = ("_state", "_source", "_made", "_start", "_n")

    def __init__(self, state: NodeSharingState, source, n: int):
        self._state = state
        self._source = source
        self._made: list[CoJob] = []
        self._start = 0
        self._n = n

    def __len__(self) -> int:
        return self._n - self._start

    def __iter__(self):
        made, i = self._made, self._start
        while True:
            if i < len(made):
                yield made[i]
                i += 1
                continue
            job = next(self._source, None)
            if job is None:
                return
            made.append(job)

    def __getitem__(self, item: int | slice) -> "CoJob | LazyOrder":
        if isinstance(item, int):  # the item-th job of the view
            if not 0 <= item < len(self):
                raise IndexError("LazyOrder index out of range")
            i = self._start + item
            while len(self._made) <= i:
                self._made.append(next(self._source))
            return self._made[i]
        if not isinstance(item, slice) or item.stop is not None or item.step is not None or (item.start or 0) < 0:
            raise TypeError("LazyOrder supports view[i:] only")
        view = LazyOrder.__new__(LazyOrder)
        view._state, view._source, view._made, view._n = self._state, self._source, self._made, self._n
        view._start = self._start + (item.start or 0)
        if view._start > len(self._made):
            raise IndexError("LazyOrder: a view past the jobs read")
        return view

    def by_seq(self):
        """The jobs of the view in submission order (the state's queue order)."""
        before = {j.seq for j in self._made[:self._start]}
        return (j for j in self._state.iter_queue() if j.seq not in before)

    def oldest(self) -> CoJob:
        """The job of lowest ``seq`` in the view."""
        return next(self.by_seq())


def deploy(policy: CoPolicy, queue: Sequence[CoJob] | LazyOrder, board: Board, state: NodeSharingState,
           decisions: PlacementDecisions, started: list) -> list[CoJob] | LazyOrder:
    """Start jobs in order until one cannot be placed now; return the others (ELiSE's
    ``deploy``; Kellari 2025, §5.1.1)."""
    for i, job in enumerate(queue):
        pl = policy.place(job, board, state)
        if pl is None:
            return queue[i:] if isinstance(queue, LazyOrder) else list(queue[i:])
        decisions.start(job, pl)
        started.append((state.now + job.walltime, pl))
    return []


def _shadow(policy: CoPolicy, head: CoJob, board: Board, state: NodeSharingState,
            started: list, elise: bool = False) -> tuple[float, Board] | None:
    """Earliest date at which ``head`` could be placed, running jobs (and those started in
    this decision) ending at their walltimes, and the board at that date.  ``elise``: as
    ELiSE's loop, which tests the head only after releasing a running job (a head that fits
    now gets the first walltime end; none without running jobs)."""
    mode = policy.mode(head, state)
    sb = board.copy()
    if not elise and sb.fits(mode, head.nodes, head.bb):
        return state.now, sb
    running = state.running
    mine = sorted(((end, -1 - i, pl) for i, (end, pl) in enumerate(started)), key=lambda e: (e[0], e[1]))
    others = ((end, seq, jid) for end, seq, jid in state.iter_ends())
    for end, _, what in heapq.merge(mine, others, key=lambda e: (e[0], e[1])):
        sb.give(what if isinstance(what, Placement) else running[what].placement)
        if sb.fits(mode, head.nodes, head.bb):
            return end, sb
    return None


def easy_backfill(policy: CoPolicy, rest: Sequence[CoJob], board: Board, state: NodeSharingState,
                  decisions: PlacementDecisions, started: list) -> None:
    """EASY backfilling (Kellari 2025, §5.1.2; Lifka 1995): the reservation head keeps its
    earliest date; each of the next ``backfill_depth`` jobs (in the policy's order) starts
    now when it fits and either ends by that date or leaves the head room at that date.

    ``backfill_rule = "elise"``: ELiSE's rule instead (``framework/realsim/scheduler/schedulers/
    easy.py``, ``EASYScheduler.backfill``; ``framework/realsim/scheduler/coschedulers/ranks/
    ranks.py``, ``RanksCoscheduler.backfill``): the head's date is found the same way (running
    jobs released at their walltime ends, earliest first, until the head fits), and a
    candidate starts only if its walltime ends by that date (``b_job.wall_time <=
    min_estimated_time``); a job that would end later never starts, even on nodes the head
    does not need.  ELiSE tests the head only after releasing a running job: a head that fits
    now (a reordering policy deployed others before it) is not started by the backfill and
    its date is the first walltime end (:func:`_shadow`).  ELiSE's backfill reads its real queue, not the policy's order: the head is
    the oldest waiting job and the candidates are the next ``backfill_depth`` waiting jobs in
    submission order (``waiting_queue[1:backfill_depth + 1]``), whatever order the policy
    deployed in (Filler, SJF...)."""
    elise = getattr(policy, "backfill_rule", "easy") == "elise"
    if elise:  # ELiSE's backfill reads its real queue: submission order, the oldest job reserved
        if isinstance(rest, LazyOrder):  # the jobs read below: the head and backfill_depth others
            rest = list(itertools.islice(rest.by_seq(), policy.backfill_depth + 1))
        else:
            rest = sorted(rest, key=lambda j: j.seq)
        head = rest[0]
    else:
        head = policy.reservation_head(rest, state)
    found = _shadow(policy, head, board, state, started, elise)
    if found is None:
        return
    shadow, sb = found
    head_mode = policy.mode(head, state)
    # A job ending after the shadow that would delay the head: with the boards unchanged since
    # (no job started in between), any later one of the same mode, burst-buffer request and
    # node-order key, and at least as many nodes, would take a superset of its units (the
    # first suitable nodes of the same order) and delay the head too: skip it (exact pruning,
    # same decisions).
    delaying: dict[tuple, int] = {}
    plain_place = type(policy).place is CoPolicy.place
    tried = 0
    for job in rest:
        if job is head:
            continue
        if tried >= policy.backfill_depth:
            break
        tried += 1
        end = state.now + job.walltime
        if end > shadow and elise:
            continue
        if end > shadow:
            mode = policy.mode(job, state)
            key = (mode, job.bb, policy.node_order_key(job))
            if job.nodes >= delaying.get(key, 1 << 62):
                continue
            if (plain_place and mode == COMPACT == head_mode and not job.bb and not head.bb
                    and board.fits(COMPACT, job.nodes) and sb.n_compact - job.nodes < head.nodes):
                # it would be placed, and on the shadow board its nodes (idle now, so idle
                # there) would leave too few idle nodes for the head: what placing it, taking
                # it on the shadow board and giving it back below finds, without doing it
                delaying[key] = min(job.nodes, delaying.get(key, 1 << 62))
                continue
        pl = policy.place(job, board, state)
        if pl is None:
            continue
        if end > shadow:
            # valid on the shadow board too: it holds a subset of the current board's jobs
            # (the running ones not released by the shadow date, and jobs started in this
            # decision), so units and nodes suitable now are suitable there
            sb.take(job.seq, pl, check=False)
            if not sb.fits(head_mode, head.nodes, head.bb):
                sb.give(pl)
                board.give(pl)
                key = (pl.mode, job.bb, policy.node_order_key(job))
                delaying[key] = min(job.nodes, delaying.get(key, 1 << 62))
                continue
        decisions.start(job, pl)
        started.append((end, pl))
        delaying.clear()
