"""Scheduling state for heterogeneous clusters of multi-core nodes (Sánchez Sousa 2023, §3.1).

The platform (``coburst platform hetero``, /tmp/hetero-format.md): one Batsim resource per
core; the cores of a node share its properties ``node`` (index), ``core`` (index in the node),
``cores``, ``type``, ``speed`` (flops/s of one core), and optionally ``mem`` (GB), ``mem_bw``
(GB/s), ``static_power`` / ``dynamic_power`` (W per core).  Batsim does not send host speeds
to the scheduler, so the speed travels as the property ``speed``.

Model (§3.1-3.2): a job of ``res`` tasks runs on ``res`` cores of **one** node (tasks of a job
execute on the same node at the same time); its expected time to compute on node ``n`` is
``ETC(j, n) = work(j) / speed(n)`` with ``work`` the operations per task.  The *machine
availability time* is kept per core: a job of ``k`` tasks mapped to a node takes the ``k``
cores that free first and starts when the last of them frees (:func:`place`).

:class:`HeteroState` holds the date, the jobs waiting to be mapped (submission order), the
per-node queues of mapped jobs (the thesis' ``self.scheduling``: a mapped job waits for its
node, in mapping order), the running jobs and the free cores.  It changes only through
events (:meth:`~HeteroState.submit`, :meth:`~HeteroState.finish`) and by applying
:class:`HeteroDecisions` (maps, starts, rejects), validated: a start on a busy core or of a
job not at the head of its node's queue is an error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import numpy as np

from coburst.core.decisions import Decisions, Start
from coburst.core.resources import indexed_resources
from coburst.errors import InputError

__all__ = ["HNode", "HeteroCluster", "HJob", "CoreAlloc", "HeteroDecisions", "RunningHJob", "HeteroState",
           "job_work", "nonneg_number", "place"]


@dataclass(frozen=True, slots=True)
class HNode:
    """One node: its cores' Batsim resource ids (core order) and properties."""

    index: int
    ids: tuple[int, ...]
    speed: float            # flops/s of one core
    type: str = ""
    mem: float = 0.0        # GB (0 when the platform does not say)
    mem_bw: float = 0.0     # GB/s
    power: float = 0.0      # W at full load: cores x (static + dynamic) per core

    @property
    def cores(self) -> int:
        return len(self.ids)


def _number(props: Mapping[str, Any], key: str, source: str, where: str, default: float | None) -> float:
    if key not in props:
        if default is None:
            raise InputError(source, where, f"a heterogeneous-cluster policy needs the host property {key!r} "
                             f"(coburst platform hetero); it is missing")
        return default
    try:
        value = float(str(props[key]).strip())
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise InputError(source, where, f"property {key!r} must be a finite number >= 0, got {props[key]!r}")
    return value


class HeteroCluster:
    """Nodes of a heterogeneous platform, in node-index order (module doc)."""

    def __init__(self, nodes: list[HNode]):
        if not nodes:
            raise ValueError("no nodes")
        self.nodes = nodes
        self.speed = np.array([n.speed for n in nodes], dtype=float)
        self.cores = np.array([n.cores for n in nodes], dtype=np.int64)
        self.max_cores = int(self.cores.max())
        self.min_speed = float(self.speed.min())

    def __len__(self) -> int:
        return len(self.nodes)

    def __repr__(self) -> str:
        return f"HeteroCluster({len(self.nodes)} nodes, {int(self.cores.sum())} cores)"

    @classmethod
    def from_resources(cls, compute: Iterable[Mapping[str, Any]], source: str = "platform") -> "HeteroCluster":
        """From Batsim's compute resource descriptions (``id``, ``name``, ``properties``)."""
        cells: dict[int, dict[int, int]] = {}
        info: dict[int, dict[str, Any]] = {}
        needs = ("a heterogeneous-cluster policy needs hosts with 'node', 'core' and 'speed' properties "
                 "(coburst platform hetero)")
        for rid, name, props, (node, core) in indexed_resources(compute, ("node", "core"), source, needs):
            where = f"host {name!r}"
            speed = _number(props, "speed", source, where, None)
            if speed <= 0:
                raise InputError(source, where, f"property 'speed' must be > 0, got {props['speed']!r}")
            mine = {"speed": speed, "type": str(props.get("type", "")),
                    "mem": _number(props, "mem", source, where, 0.0),
                    "mem_bw": _number(props, "mem_bw", source, where, 0.0),
                    "power": _number(props, "static_power", source, where, 0.0)
                    + _number(props, "dynamic_power", source, where, 0.0)}
            if node in info and info[node]["speed"] != speed:
                raise InputError(source, where, f"node {node}: cores of different speeds ({info[node]['speed']} "
                                 f"and {speed}); a node is homogeneous (Sánchez Sousa 2023, §3.1)")
            info.setdefault(node, mine)
            if core in cells.setdefault(node, {}):
                raise InputError(source, where, f"node {node} core {core} appears twice")
            cells[node][core] = rid
        if not cells:
            raise InputError(source, None, "no compute resources")
        nodes = []
        for i, node in enumerate(sorted(cells)):
            ids = tuple(cells[node][c] for c in sorted(cells[node]))
            d = info[node]
            nodes.append(HNode(i, ids, d["speed"], d["type"], d["mem"], d["mem_bw"], d["power"] * len(ids)))
        return cls(nodes)


def nonneg_number(value: Any) -> float | None:
    """``value`` as a float when it is a finite JSON number >= 0 (not a boolean), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        return None
    return float(value)


def job_work(info: Mapping[str, Any] | None, profile: Mapping[str, Any] | None, walltime: float,
             min_speed: float) -> float | None:
    """Operations per task of a job: its ``req_ops`` field (divided by its ``ipc`` when given,
    rounded up, as the workload converter does), else its ``parallel_homogeneous``
    profile's ``cpu``, else the requested time (``req_time`` field, else the walltime) on the
    slowest node (the thesis' ``req_time``: the time on the slowest node, §3.3.2).  None when
    nothing gives an estimate."""
    info = info or {}
    ops = nonneg_number(info.get("req_ops"))
    if ops is not None:
        ipc = nonneg_number(info.get("ipc"))
        # IRMaSim counts instructions: a core runs ipc of them per flop-cycle, so the flops the
        # engine runs are ceil(req_ops / ipc) (coburst workload from-irmasim writes that cpu)
        return float(math.ceil(ops / ipc)) if ipc else ops
    if profile and profile.get("type") == "parallel_homogeneous":
        cpu = nonneg_number(profile.get("cpu"))
        if cpu is not None:
            return cpu
    req = nonneg_number(info.get("req_time"))
    if req is not None:
        return req * min_speed
    if math.isfinite(walltime) and walltime > 0:
        return walltime * min_speed
    return None


@dataclass(frozen=True, slots=True)
class HJob:
    """A job for the heterogeneous policies: ``res`` tasks (cores of one node), ``work``
    operations per task; ``req_time`` the user's requested time (job selection orders)."""

    id: str
    subtime: float
    res: int
    work: float
    seq: int = 0
    walltime: float = math.inf
    req_time: float = 0.0
    mem: float = 0.0
    mem_vol: float = 0.0
    extra: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class CoreAlloc:
    """Cores of one node (Batsim resource ids, ascending)."""

    node: int
    ids: tuple[int, ...]

    @property
    def nodes(self) -> tuple[int, ...]:  # what Decisions-style checks count
        return self.ids


class HeteroDecisions(Decisions):
    """:class:`~coburst.core.decisions.Decisions` plus the jobs mapped to node queues."""

    __slots__ = ("maps",)

    def __init__(self, now: float):
        super().__init__(now)
        self.maps: list[tuple[HJob, int]] = []

    def map(self, job: HJob, node: int) -> None:
        """Append ``job`` to ``node``'s queue (it starts when it reaches the head and fits)."""
        self.maps.append((job, int(node)))

    def start(self, job: HJob, alloc: CoreAlloc) -> None:  # type: ignore[override]
        if len(alloc.ids) != job.res:
            raise ValueError(f"job {job.id}: {len(alloc.ids)} cores for res={job.res}")
        self.starts.append(Start(job, alloc))  # type: ignore[arg-type]

    def __bool__(self) -> bool:
        return bool(self.starts or self.rejects or self.wakeups or self.maps)

    def __repr__(self) -> str:
        return (f"HeteroDecisions(now={self.now}, map={[(j.id, n) for j, n in self.maps]}, "
                f"start={self.started_ids}, reject={[r.job.id for r in self.rejects]})")


@dataclass(slots=True)
class RunningHJob:
    job: HJob
    start: float
    alloc: CoreAlloc
    expected_end: float


def place(row: np.ndarray, k: int, etc: float, now: float) -> tuple[float, float]:
    """Map a job of ``k`` tasks onto a node whose sorted core availability is ``row`` (padded
    with inf; changed in place): its ``k`` first-free cores run it from the date the last of
    them frees (not before ``now``) for ``etc`` seconds.  Returns ``(start, end)``."""
    start = max(float(row[k - 1]), now)
    end = start + etc
    row[:k] = end
    row.sort()
    return start, end


class HeteroState:
    """Date, waiting (unmapped) jobs, node queues, running jobs, free cores (module doc)."""

    def __init__(self, cluster: HeteroCluster, now: float = 0.0):
        self.cluster = cluster
        self.now = float(now)
        self._queue: dict[str, HJob] = {}
        self.node_queues: list[list[HJob]] = [[] for _ in cluster.nodes]
        self.mapped: dict[str, int] = {}
        self.running: dict[str, RunningHJob] = {}
        self.free: list[list[int]] = [list(n.ids) for n in cluster.nodes]  # ascending resource ids

    # ------------------------------------------------------------------ views
    @property
    def queue(self) -> list[HJob]:
        """Jobs waiting to be mapped, in submission order."""
        return list(self._queue.values())

    def __contains__(self, job_id: str) -> bool:
        return job_id in self._queue or job_id in self.mapped or job_id in self.running

    def etc(self, job: HJob) -> np.ndarray:
        """``ETC(job, n)`` for every node (§3.2)."""
        return job.work / self.cluster.speed

    def etc_matrix(self, jobs: list[HJob]) -> np.ndarray:
        work = np.fromiter((j.work for j in jobs), dtype=float, count=len(jobs))
        return work[:, None] / self.cluster.speed[None, :]

    def availability(self, queues: bool = True) -> np.ndarray:
        """Core availability dates, one row per node, sorted, padded with inf (m x max cores):
        ``now`` for a free core, the expected end of a running job (at least ``now``), and,
        with ``queues``, the node queues played in order with :func:`place` (§3.2's machine
        availability time, per core)."""
        cl = self.cluster
        avail = np.full((len(cl), cl.max_cores), math.inf)
        dates: list[list[float]] = [[self.now] * len(free) for free in self.free]
        for run in self.running.values():
            dates[run.alloc.node].extend([max(run.expected_end, self.now)] * len(run.alloc.ids))
        for n, d in enumerate(dates):
            d.sort()
            avail[n, :len(d)] = d
        if queues:
            for n, q in enumerate(self.node_queues):
                row = avail[n]
                speed = cl.speed[n]
                for job in q:
                    place(row, job.res, job.work / speed, self.now)
        return avail

    # ------------------------------------------------------------------ events
    def advance(self, now: float) -> None:
        if now < self.now:
            raise ValueError(f"time goes backwards: {now} < {self.now}")
        self.now = float(now)

    def submit(self, job: HJob) -> None:
        if job.id in self:
            raise ValueError(f"job {job.id!r} submitted twice")
        if job.res > self.cluster.max_cores or job.res < 1:
            raise ValueError(f"job {job.id!r}: {job.res} tasks fit no node")
        self._queue[job.id] = job

    def finish(self, job_id: str) -> RunningHJob:
        run = self.running.pop(job_id)
        free = self.free[run.alloc.node]
        free.extend(run.alloc.ids)
        free.sort()
        return run

    def drop(self, job_id: str) -> HJob:
        return self._queue.pop(job_id)

    def apply(self, decisions: HeteroDecisions) -> None:
        """Maps, then rejects, then starts, each validated against the state."""
        for job, node in getattr(decisions, "maps", ()):
            if job.id not in self._queue:
                raise ValueError(f"mapping job {job.id!r} which is not waiting to be mapped")
            if not 0 <= node < len(self.cluster) or job.res > self.cluster.nodes[node].cores:
                raise ValueError(f"job {job.id!r} ({job.res} tasks) mapped to node {node} which cannot hold it")
            del self._queue[job.id]
            self.node_queues[node].append(job)
            self.mapped[job.id] = node
        for rej in decisions.rejects:
            if rej.job.id not in self._queue:
                raise ValueError(f"rejecting job {rej.job.id!r} which is not waiting")
            del self._queue[rej.job.id]
        for st in decisions.starts:
            job, alloc = st.job, st.alloc
            node = alloc.node
            if job.id in self.mapped:
                q = self.node_queues[self.mapped[job.id]]
                if self.mapped[job.id] != node or not q or q[0].id != job.id:
                    raise ValueError(f"starting job {job.id!r} which is not at the head of node {node}'s queue")
                q.pop(0)
                del self.mapped[job.id]
            elif job.id in self._queue:
                del self._queue[job.id]
            else:
                raise ValueError(f"starting job {job.id!r} which is not waiting")
            free = self.free[node]
            busy = [i for i in alloc.ids if i not in free]
            if busy or len(set(alloc.ids)) != len(alloc.ids):
                raise ValueError(f"job {job.id!r} started on busy cores {busy or alloc.ids} of node {node}")
            taken = set(alloc.ids)
            self.free[node] = [i for i in free if i not in taken]
            self.running[job.id] = RunningHJob(job, self.now, alloc,
                                               self.now + job.work / self.cluster.speed[node])

    def __repr__(self) -> str:
        return (f"HeteroState(now={self.now}, unmapped={len(self._queue)}, mapped={len(self.mapped)}, "
                f"running={len(self.running)})")
