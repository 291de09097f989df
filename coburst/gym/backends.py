"""What "a job fits now" and "start it there" mean on each kind of platform.

:class:`BBBackend` (flat clusters and dragonflies, with or without burst buffers; the
burst-buffer adapter): a job fits when its compute nodes (and its burst buffers, per node)
are free for its whole walltime given the running jobs and those started in this decision
(:meth:`~coburst.core.profile.Profile.fits_now`); placed by
:meth:`~coburst.core.profile.Profile.alloc_now`.

:class:`CoschedBackend` (node-sharing platforms of ``coburst platform cosched``; the
node-sharing adapter): a job of ``m`` whole nodes fits when it can be placed now *compact*
(``m`` idle nodes) or *spread* (half of every socket of ``2 m`` nodes, sharing a node with at
most one other spread job), and its burst buffers; placed in the first of ``modes`` that
fits (:meth:`~coburst.core.nodeshare.Board.place`, nodes in index order).  Its co-run
partners (``actions="partner"``) are offered in one of :data:`PARTNER_ORDERS`:
``"submission"`` -- the running spread jobs holding shareable nodes, by submission order, the
same for every job; ``"speed"`` -- for each job, ranked by the pair's combined speed on the
heatmap (:class:`~coburst.policies.cosched.base.AppSpeeds`), as Pair-Greedy
(:mod:`coburst.policies.cosched.pair_greedy`) ranks nodes: a half-free node holding job ``b``
scores ``s(a, b) + s(b, a) - alone(b)``, an idle node ``alone(a)``, ties in node order.  With
``"speed"`` every spread placement of the job takes its nodes in that ranking (*spread*:
Pair-Greedy's placement; *beside partner i*: that partner's nodes first, then the ranking).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from coburst.core.decisions import Decisions
from coburst.core.nodeshare import PlacementDecisions

__all__ = ["BBBackend", "CoschedBackend", "backend_for", "PLACEMENT_MODES", "PARTNER_ORDERS"]

#: the placement modes of ``actions="placement"`` (node sharing), in action order
PLACEMENT_MODES = ("compact", "spread")
#: how co-run partners are offered (``partner_order=``, module doc)
PARTNER_ORDERS = ("submission", "speed")


class BBBackend:
    family = "bb"
    decisions = Decisions

    def __init__(self, state: Any, cluster: Any):
        self.state = state
        self.cluster = cluster
        self.profile = state.mask_profile()
        self.total_units = cluster.n_compute
        self.total_bb = cluster.total_bb_capacity or 0

    @staticmethod
    def units(job: Any) -> int:
        return job.res

    @staticmethod
    def bb_bytes(job: Any) -> int:
        return job.bb_total

    def any_fits(self, jobs: Sequence[Any]) -> bool:
        from coburst.policies.base import fits_any_now

        return fits_any_now(self.profile, jobs)

    def fits(self, job: Any) -> bool:
        return self.profile.fits_now(job.res, job.walltime, job.bb)

    def start(self, job: Any, alloc: Any = None) -> Any:
        """Occupy ``alloc`` (None: the default placement) for the job's walltime; returns it."""
        profile = self.profile
        if alloc is None:
            alloc = profile.alloc_now(job.res, job.walltime, job.bb)
            if alloc is None:
                raise RuntimeError(f"no place for job {job.id}, which fits now")
        profile.occupy(profile.now, profile.now + job.walltime, alloc)
        return alloc

    def size(self, job: Any) -> float:
        return job.res / self.cluster.n_compute

    def bb(self, job: Any) -> float:
        cap = self.cluster.max_bb_capacity
        return min(job.bb / cap, 1.0) if cap else 0.0

    def free(self, running: Sequence[tuple]) -> tuple[float, float]:
        c = self.cluster
        busy = sum(job.res for job, _, _ in running)
        free_bb = 1.0
        if c.total_bb_capacity:
            used = sum(job.bb_total for job, _, _ in running)
            free_bb = max(c.total_bb_capacity - used, 0) / c.total_bb_capacity
        return max(c.n_compute - busy, 0) / c.n_compute, free_bb


class CoschedBackend:
    family = "cosched"
    decisions = PlacementDecisions

    def __init__(self, state: Any, cluster: Any, modes: Sequence[str] = ("compact", "spread"), partners: int = 0,
                 speeds: Any = None):
        self.state = state
        self.cluster = cluster
        self.modes = tuple(modes)
        self.board = state.board()
        self.n_partners = partners
        #: ``partner_order="speed"``: the heatmap's :class:`~coburst.policies.cosched.base.AppSpeeds`
        self.speeds = speeds
        self._partners: list | None = None
        self._ranked: dict[int, tuple] = {}  # application index -> (node ranking, partners), this board
        self.total_units = cluster.n * cluster.units_per_node
        self.total_bb = int(cluster.bb_capacity.sum()) if len(cluster.bb_capacity) else 0

    @staticmethod
    def units(job: Any) -> int:
        return job.res

    @staticmethod
    def bb_bytes(job: Any) -> int:
        return job.bb * job.nodes if job.bb > 0 else 0

    def fits_mode(self, job: Any, mode: str) -> bool:
        """The job can be placed now in ``mode`` (``placement`` actions)."""
        if mode == "spread" and not self.cluster.spread_possible(job.nodes):
            return False
        return self.board.fits(mode, job.nodes, job.bb)

    def _groups(self) -> dict[int, list[int]]:
        """Board handle -> the nodes of that running spread job a spread job could share."""
        board, c = self.board, self.cluster
        resident = board.owner.reshape(c.n, -1).max(axis=1)
        groups: dict[int, list[int]] = {}
        for n in np.flatnonzero(board.spread_ok & (board.jobs_on == 1)).tolist():
            groups.setdefault(int(resident[n]), []).append(n)
        return groups

    def partners(self, job: Any = None) -> list[tuple[int, list[int]]]:
        """The co-run partners now, at most ``n_partners``: ``(board handle, nodes)`` of the
        running spread jobs (and those started in this decision) holding nodes a spread job
        could share (one job, half of every socket free) -- by handle (submission order), or
        with ``speeds``, ranked for ``job`` (module doc)."""
        if self.speeds is not None:
            return self._ranking(job)[1]
        if self._partners is None:
            self._partners = sorted(self._groups().items())[:self.n_partners]
        return self._partners

    def _ranking(self, job: Any) -> tuple[np.ndarray, list]:
        """``(node ranking, partners)`` of ``job`` by the pair's speed (``speeds``; module doc)."""
        speeds = self.speeds
        a = speeds.of(job)
        found = self._ranked.get(a)
        if found is None:
            board, c = self.board, self.cluster
            by_handle = self.state.by_handle
            resident = board.owner.reshape(c.n, -1).max(axis=1)
            apps = {h: speeds.of(by_handle[h]) for h in set(resident.tolist()) if h >= 0}
            b = np.array([apps.get(int(h), -1) for h in resident], dtype=np.int64)
            eff = speeds.eff
            score = np.where(resident >= 0, eff[a, b] + eff[b, a] - speeds.alone[b], speeds.alone[a])
            order = np.argsort(-score, kind="stable")
            groups = sorted(self._groups().items(), key=lambda g: (-score[g[1][0]], g[1][0]))
            found = self._ranked[a] = (order, groups[:self.n_partners])
        return found

    def fits_choice(self, job: Any, i: int) -> bool:
        """Choice ``i`` of ``actions="placement"`` / ``"partner"``: compact, spread, then
        spread beside partner ``i - 2``."""
        if i < len(PLACEMENT_MODES):
            mode = PLACEMENT_MODES[i]
            return mode in self.modes and self.fits_mode(job, mode)
        return "spread" in self.modes and i - 2 < len(self.partners(job)) and self.fits_mode(job, "spread")

    def start_choice(self, job: Any, i: int) -> Any:
        alloc = self._place(self.board, job, i)
        if alloc is None:
            what = PLACEMENT_MODES[i] if i < len(PLACEMENT_MODES) else f"spread place beside partner {i - 2}"
            raise RuntimeError(f"no {what} for job {job.id}, which fits now")
        self._changed()
        return alloc

    def _changed(self) -> None:
        self._partners = None
        self._ranked = {}

    def _order(self, job: Any, i: int) -> np.ndarray | None:
        """The node order of choice ``i`` for ``job`` (None: index order)."""
        if i == 0:
            return None
        ranking = None if self.speeds is None else self._ranking(job)[0]
        if i == 1:
            return ranking
        first = np.asarray(self.partners(job)[i - 2][1], dtype=np.int64)
        rest = np.arange(self.cluster.n) if ranking is None else ranking
        return np.concatenate([first, rest[~np.isin(rest, first)]])

    def _place(self, board: Any, job: Any, i: int) -> Any:
        mode = PLACEMENT_MODES[min(i, 1)]
        return board.place(job.seq, mode, job.nodes, self._order(job, i), job.bb)

    def choice_of(self, job: Any, alloc: Any, n_choices: int) -> int:
        """The first choice whose placement is ``alloc`` (ValueError: none is)."""
        for i in range(n_choices):
            if self.fits_choice(job, i):
                trial = self._place(self.board.copy(), job, i)
                if trial is not None and trial.mode == alloc.mode and trial.units == alloc.units:
                    return i
        raise ValueError(f"no placement action puts job {job.id} on the units {list(alloc.units)} ({alloc.mode})")

    def start_mode(self, job: Any, mode: str) -> Any:
        alloc = self.board.place(job.seq, mode, job.nodes, None, job.bb)
        if alloc is None:
            raise RuntimeError(f"no {mode} place for job {job.id}, which fits now")
        self._changed()
        return alloc

    def corun(self, job: Any) -> tuple[float, float, float]:
        """``(fits compact, fits spread, co-run share)`` (:mod:`coburst.gym.observe`)."""
        board = self.board
        compact, spread = self.fits_mode(job, "compact"), self.fits_mode(job, "spread")
        share = 0.0
        if spread:
            chosen = np.flatnonzero(board.spread_ok)[:2 * job.nodes]
            share = float((board.jobs_on[chosen] == 1).mean()) if len(chosen) else 0.0
        return float(compact), float(spread), share

    @staticmethod
    def _mode(board: Any, cluster: Any, job: Any, modes: Sequence[str]) -> str | None:
        for mode in modes:
            if mode == "spread" and not cluster.spread_possible(job.nodes):
                continue
            if board.fits(mode, job.nodes, job.bb):
                return mode
        return None

    def any_fits(self, jobs: Sequence[Any]) -> bool:
        board, cluster, modes = self.board, self.cluster, self.modes
        return any(CoschedBackend._mode(board, cluster, job, modes) is not None for job in jobs)

    def fits(self, job: Any) -> bool:
        return self._mode(self.board, self.cluster, job, self.modes) is not None

    def start(self, job: Any, alloc: Any = None) -> Any:
        board = self.board
        if alloc is None:
            mode = self._mode(board, self.cluster, job, self.modes)
            alloc = None if mode is None else board.place(job.seq, mode, job.nodes, None, job.bb)
            if alloc is None:
                raise RuntimeError(f"no place for job {job.id}, which fits now")
        else:
            board.take(job.seq, alloc)
        self._changed()
        return alloc

    def size(self, job: Any) -> float:
        return job.nodes / self.cluster.n

    def bb(self, job: Any) -> float:
        caps = self.cluster.bb_capacity
        return min(job.bb / int(caps.max()), 1.0) if len(caps) and job.bb else 0.0

    def free(self, running: Sequence[tuple]) -> tuple[float, float]:
        c = self.cluster
        board = self.board
        total = c.n * c.units_per_node * c.cores_per_unit
        free_bb = float(board.bb_free.sum() / c.bb_capacity.sum()) if len(c.bb_capacity) and c.bb_capacity.sum() else 1.0
        return board.free_cores() / total, free_bb


def backend_for(platform: str) -> type:
    """The backend of a platform file: node-sharing platforms (``platform=cosched`` root-zone
    property) get :class:`CoschedBackend`, every other :class:`BBBackend`."""
    import re

    from coburst.errors import InputError

    try:
        with open(platform, encoding="utf-8", errors="replace") as fh:
            head = fh.read(8192).split("<host", 1)[0]
    except OSError:
        return BBBackend  # (the simulator reports unreadable platforms)
    kind = dict(re.findall(r'<prop id="([^"]+)" value="([^"]*)"/>', head)).get("platform")
    if kind == "cosched":
        return CoschedBackend
    if kind == "hetero":
        from coburst.gym.hetero import HeteroBackend

        return HeteroBackend
    return BBBackend
