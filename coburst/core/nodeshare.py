"""Node-sharing state for co-scheduling: nodes x sockets x units, compact and spread placements.

The co-scheduling policies (:mod:`coburst.policies.cosched`; Kellari 2025, Ch. 3 and 5;
ELiSE, §3.6) place a job in one of two ways (Kellari 2025, Fig. 3.1):

* **compact** (:data:`COMPACT`): every unit of ``m`` whole nodes, alone on them;
* **spread** (:data:`SPREAD`): half of the units of every socket on ``2 m`` nodes.  A spread
  job is *co-located* when the other half of its nodes holds another spread job; a node holds
  at most two jobs (the heatmaps are pairwise).

``m`` is the job's compact node count: a job requests ``res = m x units_per_node`` Batsim
resources (``coburst workload elise``), the same count in both placements.

Resources are the allocatable units of ``coburst platform cosched`` (half sockets or cores): a
Batsim resource whose properties name its ``node``, ``socket`` and ``unit``.

* :class:`NodeSharingCluster` -- the unit grid from Batsim's resource list;
* :class:`Board` -- which unit is free at one instant, with per-node counts kept up to date,
  so that "can this job be placed now" costs O(1) and a placement O(nodes) in numpy; the
  policies place jobs on a copy while they decide;
* :class:`NodeSharingState` -- date, waiting queue, running jobs and their placements, the
  board; changed only by events and by applying decisions (validated: no unit given twice,
  compact jobs alone, at most two jobs per node, exact half-socket geometry of spread jobs);
* burst buffers (optional): storage nodes with a capacity; a job's ``bb`` bytes per compact
  node are placed as ``m`` requests, each on one BB node (never split), lowest BB index
  first -- accounting on the scheduler side, as the thesis' Alloc-Only model does;
* :class:`PlacementDecisions` -- what a policy decides (the :class:`~coburst.core.decisions.
  Decisions` of the burst-buffer family, with :class:`Placement` allocations).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
from procset import ProcSet
from sortedcontainers import SortedList

from coburst.core.decisions import Decisions, Start
from coburst.core.placement import procset_of
from coburst.core.resources import indexed_resources
from coburst.errors import InputError

__all__ = ["COMPACT", "SPREAD", "MAX_PER_NODE", "CoJob", "Placement", "NodeSharingCluster", "Board",
           "NodeSharingState", "PlacementDecisions", "RunningCoJob"]

COMPACT = "compact"
SPREAD = "spread"
#: jobs a node may hold at once (pairwise co-location, as the heatmaps measure)
MAX_PER_NODE = 2


@dataclass(frozen=True, slots=True)
class CoJob:
    """A job of a node-sharing workload.

    ``res`` units (a multiple of the units per node: ``nodes`` compact nodes), ``walltime``
    (inf when Batsim's "none"), ``app`` (its heatmap application, or None), ``processes``
    (the workload's ``processes`` field, else the cores of its units), ``seq`` its submission
    rank (0, 1, ...: ELiSE's job id), ``bb`` its burst-buffer request in bytes per compact
    node (the ``bb`` field of burst-buffer workloads; 0 = none)."""

    id: str
    subtime: float
    res: int
    walltime: float
    nodes: int
    seq: int
    app: str | None = None
    processes: int = 0
    bb: int = 0
    extra: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if not self.walltime > 0:
            object.__setattr__(self, "walltime", math.inf)


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a job runs: ``mode``, its node indices and its flat unit indices
    (``(node * sockets + socket) * units_per_socket + unit``, ascending)."""

    mode: str
    nodes: tuple[int, ...]
    units: tuple[int, ...]
    bb_nodes: tuple[int, ...] = ()   # burst-buffer node index of each compact node's request
    bb: int = 0                      # bytes of each request
    #: ``nodes`` and ``units`` as int64 arrays, made once (by :meth:`Board.place` or :meth:`arrays`)
    _arrays: Any = field(default=None, compare=False, repr=False)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(nodes, units)`` as int64 arrays (cached: a placement never changes)."""
        arr = self._arrays
        if arr is None:
            arr = (np.asarray(self.nodes, dtype=np.int64), np.asarray(self.units, dtype=np.int64))
            object.__setattr__(self, "_arrays", arr)
        return arr

    def ids(self, cluster: "NodeSharingCluster") -> ProcSet:
        """Batsim resource ids of the units (a ProcSet, as ``job.allocation``), built from
        their runs of consecutive ids (:func:`~coburst.core.placement.procset_of`)."""
        return procset_of(np.sort(cluster.unit_ids[self.arrays()[1]]).tolist())

    def bb_bytes(self, cluster: "NodeSharingCluster") -> dict[int, int]:
        """Burst-buffer resource id -> bytes taken there."""
        out: dict[int, int] = {}
        for b in self.bb_nodes:
            rid = int(cluster.bb_ids[b])
            out[rid] = out.get(rid, 0) + self.bb
        return out


@dataclass(slots=True)
class RunningCoJob:
    job: CoJob
    start: float
    placement: Placement

    @property
    def expected_end(self) -> float:
        return self.start + self.job.walltime


class NodeSharingCluster:
    """The unit grid of a node-sharing platform (module doc).

    ``n`` nodes (indices in the order of their ``node`` property), ``sockets`` per node,
    ``k`` units per socket (``units_per_node = sockets x k``), ``cores_per_unit``;
    ``unit_ids``: flat unit index -> Batsim resource id; ``node_names``: node index -> the
    ``node`` property."""

    def __init__(self, unit_ids: np.ndarray, node_names: Sequence[str], cores_per_unit: int = 1,
                 bb_ids: Sequence[int] = (), bb_capacity: Sequence[int] = ()):
        unit_ids = np.asarray(unit_ids, dtype=np.int64)
        if unit_ids.ndim != 3 or 0 in unit_ids.shape:
            raise ValueError("unit_ids must be a non-empty (nodes, sockets, units) array")
        self.n, self.sockets, self.k = unit_ids.shape
        self.units_per_node = self.sockets * self.k
        self.half = self.k // 2
        self.can_spread = self.k % 2 == 0
        self.cores_per_unit = int(cores_per_unit)
        self.unit_ids = unit_ids.reshape(-1)
        #: flat unit index of (node, socket, unit): what :meth:`Board.place` picks from
        self.unit_grid = np.arange(self.n * self.units_per_node, dtype=np.int64).reshape(self.n, self.sockets, self.k)
        self.node_names = tuple(str(x) for x in node_names)
        self.bb_ids = np.asarray(bb_ids, dtype=np.int64)
        self.bb_capacity = np.asarray(bb_capacity, dtype=np.int64)
        if len(self.bb_ids) != len(self.bb_capacity):
            raise ValueError("bb_ids and bb_capacity differ in length")

    @classmethod
    def build(cls, nodes: int, sockets: int = 2, units_per_socket: int = 2, cores_per_unit: int = 5,
              bb_capacity: Sequence[int] = ()) -> "NodeSharingCluster":
        """The grid of ``coburst platform cosched`` (resource id = flat unit index; BB nodes
        after the units)."""
        total = nodes * sockets * units_per_socket
        ids = np.arange(total).reshape(nodes, sockets, units_per_socket)
        return cls(ids, [str(i) for i in range(nodes)], cores_per_unit,
                   list(range(total, total + len(bb_capacity))), list(bb_capacity))

    @classmethod
    def from_resources(cls, compute: Iterable[Mapping[str, Any]], storage: Iterable[Mapping[str, Any]] = (),
                       source: str = "platform") -> "NodeSharingCluster":
        """From Batsim compute resource dicts (``id``, ``name``, ``properties`` with ``node``,
        ``socket``, ``unit`` and optionally ``cores``).  Every node must have the same
        sockets and units, each unit exactly once.  Storage resources with a ``bb_capacity``
        property (bytes) are the burst-buffer nodes; others (the PFS) are ignored."""
        cells: dict[tuple[int, int, int], int] = {}
        cores = set()
        needs = ("a co-scheduling policy needs a node-sharing platform whose hosts carry 'node', 'socket' and "
                 "'unit' properties (coburst platform cosched)")
        for rid, name, props, key in indexed_resources(compute, ("node", "socket", "unit"), source, needs):
            where = f"host {name!r}"
            if key in cells:
                raise InputError(source, where, f"node {key[0]} socket {key[1]} unit {key[2]} appears twice")
            cells[key] = rid
            try:
                cores.add(int(str(props.get("cores", 1)).strip()))
            except ValueError:
                raise InputError(source, where, f"property 'cores' must be an integer, got {props['cores']!r}") from None
        if not cells:
            raise InputError(source, None, "no compute resources")
        nodes = sorted({k[0] for k in cells})
        sockets = sorted({k[1] for k in cells})
        units = sorted({k[2] for k in cells})
        if sockets != list(range(len(sockets))) or units != list(range(len(units))) \
                or len(cells) != len(nodes) * len(sockets) * len(units):
            raise InputError(source, None, "every node must have the same sockets 0..S-1 and units 0..K-1 "
                             "(a regular nodes x sockets x units grid)")
        if len(cores) != 1:
            raise InputError(source, None, f"units of different core counts {sorted(cores)}")
        ids = np.empty((len(nodes), len(sockets), len(units)), dtype=np.int64)
        index = {nd: i for i, nd in enumerate(nodes)}
        for (nd, s, u), rid in cells.items():
            ids[index[nd], s, u] = rid
        bb_ids, bb_cap = [], []
        for res in storage:
            props = res.get("properties") or {}
            if "bb_capacity" not in props:
                continue
            try:
                cap = int(str(props["bb_capacity"]).strip())
            except ValueError:
                cap = -1
            if cap <= 0:
                raise InputError(source, f"host {res.get('name')!r}",
                                 f"property 'bb_capacity' must be a positive integer, got {props['bb_capacity']!r}")
            bb_ids.append(int(res["id"]))
            bb_cap.append(cap)
        order = np.argsort(bb_ids, kind="stable")
        return cls(ids, [str(x) for x in nodes], cores.pop(), [bb_ids[i] for i in order], [bb_cap[i] for i in order])

    # ------------------------------------------------------------------ jobs
    def never_fits(self, res: int, bb: int = 0) -> str | None:
        """Why a job of ``res`` units (``bb`` bytes per compact node) can never run here, or None."""
        if res <= 0:
            return f"requests {res} resources"
        if res % self.units_per_node:
            return (f"requests {res} resources, not a whole number of nodes ({self.units_per_node} units "
                    f"per node): co-scheduling policies place whole nodes (compact) or half sockets (spread)")
        if res // self.units_per_node > self.n:
            return f"needs {res // self.units_per_node} nodes, the platform has {self.n}"
        if bb > 0:
            slots = int((self.bb_capacity // bb).sum()) if len(self.bb_capacity) else 0
            if slots < res // self.units_per_node:
                return (f"burst-buffer request of {bb} bytes per node for {res // self.units_per_node} nodes does "
                        f"not fit the burst-buffer nodes ({len(self.bb_capacity)} nodes)")
        return None

    def spread_possible(self, nodes: int) -> bool:
        """Can a job of ``nodes`` compact nodes ever run spread (on ``2 x nodes`` nodes)?"""
        return self.can_spread and 2 * nodes <= self.n

    def __repr__(self) -> str:
        return (f"NodeSharingCluster({self.n} nodes x {self.sockets} sockets x {self.k} units, "
                f"{self.cores_per_unit} cores/unit)")


class Board:
    """Unit occupancy at one instant (module doc).

    ``free``: bool ``(n, sockets, k)``; ``per_socket``: free units per socket ``(n, sockets)``;
    ``jobs_on``: jobs per node; ``owner``: job handle per unit (-1 = free), so that a policy
    can see its neighbours.  ``n_compact`` / ``n_spread`` count the nodes a compact / spread
    job could take now, and ``compact_ok`` / ``spread_ok`` are those nodes (what
    :meth:`compact_mask` / :meth:`spread_mask` compute from ``per_socket``), kept up to date by
    :meth:`take` and :meth:`give` on the touched nodes only: with valid placements a node is
    compact-suitable when it holds no job, spread-suitable when it holds none or one spread job."""

    __slots__ = ("cluster", "free", "per_socket", "jobs_on", "owner", "n_compact", "n_spread", "bb_free",
                 "compact_ok", "spread_ok")

    def __init__(self, cluster: NodeSharingCluster):
        c = cluster
        self.cluster = c
        self.free = np.ones((c.n, c.sockets, c.k), dtype=bool)
        self.per_socket = np.full((c.n, c.sockets), c.k, dtype=np.int32)
        self.jobs_on = np.zeros(c.n, dtype=np.int32)
        self.owner = np.full(c.n * c.sockets * c.k, -1, dtype=np.int64)
        self.n_compact = c.n
        self.n_spread = c.n if c.can_spread else 0
        self.bb_free = c.bb_capacity.copy()
        self.compact_ok = np.ones(c.n, dtype=bool)
        self.spread_ok = np.full(c.n, c.can_spread, dtype=bool)

    def copy(self) -> "Board":
        b = Board.__new__(Board)
        b.cluster = self.cluster
        b.free = self.free.copy()
        b.per_socket = self.per_socket.copy()
        b.jobs_on = self.jobs_on.copy()
        b.owner = self.owner.copy()
        b.n_compact = self.n_compact
        b.n_spread = self.n_spread
        b.bb_free = self.bb_free.copy()
        b.compact_ok = self.compact_ok.copy()
        b.spread_ok = self.spread_ok.copy()
        return b

    # ------------------------------------------------------------------ queries
    def compact_mask(self, nodes: np.ndarray | slice = slice(None)) -> np.ndarray:
        return self.per_socket[nodes].min(axis=-1) == self.cluster.k

    def spread_mask(self, nodes: np.ndarray | slice = slice(None)) -> np.ndarray:
        if not self.cluster.can_spread:
            return np.zeros(len(self.jobs_on[nodes]), dtype=bool)
        return (self.per_socket[nodes].min(axis=-1) >= self.cluster.half) & (self.jobs_on[nodes] < MAX_PER_NODE)

    def fits(self, mode: str, nodes: int, bb: int = 0) -> bool:
        """Could a job of ``nodes`` compact nodes (``bb`` bytes of burst buffer each) be
        placed now in ``mode``? (O(1) without burst buffers)"""
        ok = self.n_compact >= nodes if mode == COMPACT else self.n_spread >= 2 * nodes
        if ok and bb > 0:
            ok = int((self.bb_free // bb).sum()) >= nodes
        return ok

    def bb_place(self, nodes: int, bb: int) -> tuple[int, ...]:
        """Burst-buffer node of each of ``nodes`` requests of ``bb`` bytes: lowest BB index
        first, as many requests on a BB node as fit (a node's request is never split)."""
        if bb <= 0:
            return ()
        slots = self.bb_free // bb
        out: list[int] = []
        for b in np.flatnonzero(slots):
            out.extend([int(b)] * int(min(slots[b], nodes - len(out))))
            if len(out) == nodes:
                return tuple(out)
        raise AssertionError("burst-buffer slots out of step")

    def residents(self, node: int) -> list[int]:
        """Job handles on a node."""
        c = self.cluster
        own = self.owner[node * c.units_per_node:(node + 1) * c.units_per_node]
        return sorted(set(int(h) for h in own if h >= 0))

    # ------------------------------------------------------------------ changes
    def place(self, handle: int, mode: str, nodes: int, order: np.ndarray | None = None, bb: int = 0
              ) -> Placement | None:
        """Place a job of ``nodes`` compact nodes in ``mode`` and take its units; None when
        it does not fit.  Nodes are taken in index order ("serial", ELiSE) or, with
        ``order``, in that order of node indices (only suitable ones are used)."""
        if not self.fits(mode, nodes, bb):
            return None
        mask = self.compact_ok if mode == COMPACT else self.spread_ok
        need = nodes if mode == COMPACT else 2 * nodes
        if order is None:
            chosen = np.flatnonzero(mask)[:need]
        else:
            chosen = order[mask[order]][:need]
        if len(chosen) < need:  # counts and masks disagree: cannot happen
            raise AssertionError("board counts out of step")
        chosen = np.sort(chosen).astype(np.int64, copy=False)
        c = self.cluster
        # unit indices of the chosen nodes, ascending (nodes ascending, then socket, then unit)
        base = c.unit_grid[chosen]
        if mode == COMPACT:
            units = base.reshape(-1)
        else:
            sub = self.free[chosen]
            units = base[sub & (np.cumsum(sub, axis=2) <= c.half)]
        pl = Placement(mode, tuple(chosen.tolist()), tuple(units.tolist()), self.bb_place(nodes, bb), max(bb, 0),
                       (chosen, units))
        self.take(handle, pl, check=False)
        return pl

    def take(self, handle: int, pl: Placement, check: bool = True) -> None:
        """Occupy a placement's units, validated (free units, node limits, geometry, burst
        buffers) unless ``check`` is false (placements :meth:`place` computed itself)."""
        c = self.cluster
        nodes, units = pl.arrays()
        if check:
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
            if check and (use > self.bb_free).any():
                raise ValueError("placement over a burst-buffer node's free capacity")
            self.bb_free -= use
        self.free.reshape(-1)[units] = False
        self.owner[units] = handle
        if check:
            np.subtract.at(self.per_socket.reshape(-1), units // c.k, 1)
            if pl.mode == SPREAD and \
                    (self.per_socket[nodes] != c.k - c.half * (self.jobs_on[nodes] + 1)[:, None]).any():
                raise ValueError("spread placement must take exactly half of every socket")
        else:  # a valid placement takes every unit (compact) or half (spread) of each socket of its nodes
            self.per_socket[nodes] -= c.k if pl.mode == COMPACT else c.half
        # suitability counts (the placement is valid): a compact job turns idle nodes busy; a
        # spread job turns an idle node half-free (still spread-suitable) and a half-free one full
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

    def give(self, pl: Placement) -> None:
        """Free a placement's units."""
        c = self.cluster
        nodes, units = pl.arrays()
        if pl.bb_nodes:
            self.bb_free += np.bincount(np.asarray(pl.bb_nodes), minlength=len(self.bb_free)) * pl.bb
        self.free.reshape(-1)[units] = True
        self.owner[units] = -1
        # placements given back were taken (valid): every unit (compact) or half (spread) of
        # each socket of their nodes
        self.per_socket[nodes] += c.k if pl.mode == COMPACT else c.half
        self.jobs_on[nodes] -= 1
        if pl.mode == COMPACT:
            self.n_compact += len(nodes)
            if c.can_spread:
                self.n_spread += len(nodes)
            self.compact_ok[nodes] = True
            self.spread_ok[nodes] = c.can_spread
        else:
            now_idle = self.jobs_on[nodes] == 0
            idle = int(np.count_nonzero(now_idle))
            self.n_compact += idle
            self.n_spread += len(nodes) - idle
            self.compact_ok[nodes] = now_idle
            self.spread_ok[nodes] = True

    def free_cores(self) -> int:
        return int(self.per_socket.sum()) * self.cluster.cores_per_unit


class PlacementDecisions(Decisions):
    """:class:`~coburst.core.decisions.Decisions` whose allocations are :class:`Placement`."""

    def start(self, job: CoJob, alloc: Placement) -> None:  # type: ignore[override]
        if len(alloc.units) != job.res:
            raise ValueError(f"job {job.id}: placement of {len(alloc.units)} units for res={job.res}")
        if job.bb and (alloc.bb != job.bb or len(alloc.bb_nodes) != job.nodes):
            raise ValueError(f"job {job.id}: started without its burst-buffer placement")
        self.starts.append(Start(job, alloc))  # type: ignore[arg-type]


class NodeSharingState:
    """Date, waiting queue (submission order), running jobs and the board (module doc)."""

    def __init__(self, cluster: NodeSharingCluster, now: float = 0.0):
        self.cluster = cluster
        self.now = float(now)
        self._queue: dict[str, CoJob] = {}
        self.running: dict[str, RunningCoJob] = {}
        self._board = Board(cluster)
        self._handles: dict[str, int] = {}   # job id -> board handle (its seq)
        self.by_handle: dict[int, CoJob] = {}
        self._ends = SortedList()            # (expected end, seq, job id) of running jobs
        self._by_processes: dict[int, dict[int, CoJob]] = {}  # processes -> {seq: waiting job}
        self._last_seq = -1
        self.seq_ordered = True              # every job submitted after the jobs of lower seq

    # ------------------------------------------------------------------ views
    @property
    def queue(self) -> list[CoJob]:
        """Waiting jobs in submission order."""
        return list(self._queue.values())

    def queue_len(self) -> int:
        return len(self._queue)

    def iter_queue(self):
        """:attr:`queue`, lazily (the state must not change while it is read)."""
        return iter(self._queue.values())

    def waiting_by_processes(self) -> dict[int, dict[int, CoJob]]:
        """The waiting jobs grouped by ``processes``, each group ``{seq: job}`` in submission
        order (ascending seq when :attr:`seq_ordered`).  Read only: kept up to date by the
        events (Filler's lazy order, :mod:`coburst.policies.cosched.filler`)."""
        return self._by_processes

    def __contains__(self, job_id: str) -> bool:
        return job_id in self._queue or job_id in self.running

    def board(self) -> Board:
        """A copy of the current board (the caller may place jobs on it)."""
        return self._board.copy()

    def ends(self) -> list[tuple[float, int, str]]:
        """Running jobs as ``(expected end, seq, id)``, earliest first.  A job past its
        expected end (Batsim starts jobs a little after the decision) counts as ending now."""
        return list(self.iter_ends())

    def iter_ends(self):
        """:meth:`ends`, lazily."""
        now = self.now
        for e, s, j in self._ends:
            yield (e if e > now else now), s, j

    def neighbours(self, job_id: str) -> list[CoJob]:
        """Running jobs sharing a node with a running job."""
        run = self.running[job_id]
        handles = set()
        for node in run.placement.nodes:
            handles.update(self._board.residents(node))
        handles.discard(run.job.seq)
        return [self.by_handle[h] for h in sorted(handles)]

    # ------------------------------------------------------------------ events
    def advance(self, now: float) -> None:
        if now < self.now:
            raise ValueError(f"time goes backwards: {now} < {self.now}")
        self.now = float(now)

    def submit(self, job: CoJob) -> None:
        if job.id in self:
            raise ValueError(f"job {job.id!r} submitted twice")
        self._queue[job.id] = job
        self.by_handle[job.seq] = job
        if job.seq <= self._last_seq:
            self.seq_ordered = False
        self._last_seq = max(self._last_seq, job.seq)
        self._by_processes.setdefault(job.processes, {})[job.seq] = job

    def _unqueue(self, job_id: str) -> CoJob:
        job = self._queue.pop(job_id)
        group = self._by_processes[job.processes]
        del group[job.seq]
        if not group:
            del self._by_processes[job.processes]
        return job

    def finish(self, job_id: str) -> RunningCoJob:
        run = self.running.pop(job_id)
        self._board.give(run.placement)
        self._ends.remove((run.expected_end, run.job.seq, job_id))
        self.by_handle.pop(run.job.seq, None)
        return run

    def drop(self, job_id: str) -> CoJob:
        job = self._unqueue(job_id)
        self.by_handle.pop(job.seq, None)
        return job

    def apply(self, decisions: Decisions) -> None:
        """Record started jobs (their placements validated on the board) and drop rejected ones."""
        for rej in decisions.rejects:
            if rej.job.id not in self._queue:
                raise ValueError(f"rejecting job {rej.job.id!r} which is not waiting")
            self.drop(rej.job.id)
        if not decisions.starts:
            return
        trial = self._board.copy()
        for st in decisions.starts:
            if st.job.id not in self._queue:
                raise ValueError(f"starting job {st.job.id!r} which is not waiting")
            trial.take(st.job.seq, st.alloc)  # raises on any conflict
        self._board = trial
        for st in decisions.starts:
            job = self._unqueue(st.job.id)
            run = RunningCoJob(job, self.now, st.alloc)
            self.running[job.id] = run
            self._ends.add((run.expected_end, job.seq, job.id))

    def __repr__(self) -> str:
        return f"NodeSharingState(now={self.now}, queue={len(self._queue)}, running={len(self.running)})"
