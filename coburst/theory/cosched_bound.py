"""A lower bound on the makespan of a co-scheduling job set: the fluid LP over node-sharing
configurations (OPT as a yardstick).

Kuchumov & Korkhov 2021, §4.1 give the optimal co-schedule of tasks *on one node* as an LP over
the time each combination of tasks runs.  A co-scheduling *cluster* (Kellari 2025, Ch. 3, 5;
ELiSE) runs jobs compact or spread over many nodes, with pairwise co-execution speedups
(a heatmap).  This module gives the same kind of LP for that setting: a relaxation of every
schedule the node-sharing model allows, so that its optimum is a lower bound on the makespan
of *every* policy (and of the best possible schedule), e.g. Kellari's Tables 6.1-6.2
(``scripts/cosched_study.py`` prints makespan / bound for every policy).

The model (read from the code, not from the theses)
----------------------------------------------------
* **Placements** (:mod:`coburst.core.nodeshare`, which validates every policy decision): a
  job of ``m`` compact nodes (``res = m x units_per_node`` Batsim resources) runs either
  *compact*, on every unit of ``m`` whole nodes, alone on them; or *spread*, on half of the
  units of every socket of ``2m`` distinct nodes (needs an even number of units per socket,
  and ``2m <= N``).  A node holds at most two jobs; a spread job's node is either idle on its
  other half, or shares it with exactly one other spread job (half of each socket each).
  The placement is fixed for the job's whole run.
* **Speeds** (:class:`coburst.simulator.speedup.HeatmapSpeedup`, the hook of ``coburst sim
  --heatmap``): a compact job, or a job without ``app``, runs at 1.0; a spread job runs at
  the *minimum* of ``eff(a, b)`` over every job ``b`` sharing any of its nodes
  (:meth:`~coburst.models.heatmap.Heatmap.effective`: the measured speedup, else ``a``'s row
  mean, else 1; a neighbour without ``app`` counts as a missing pair: ``a``'s row mean, else
  1); a spread job with no neighbour runs at ``alone(a)`` (``row_best``, or the
  ``--heatmap-alone`` factor).  Work is conserved across speed changes.
* **Work and walltime**: a job's work ``p`` is its profile's delay (a ``delay`` profile, or a
  ``composed`` sequence of them: the sum, up to the first leaf with a non-zero ``ret``), in
  seconds at speed 1 (compact time).  The engine kills a job ``W`` (its walltime) seconds
  after its start, done or not (ELiSE: W = 1.4 p; the heatmaps go down to 0.66, so slow
  spread jobs *are* killed).
* **Makespan**: last finish - first release (as :mod:`coburst.analysis.tables`); jobs every
  policy rejects (``NodeSharingCluster.never_fits``: not whole nodes, wider than the machine,
  a burst-buffer request that never fits) are left out, as they never run.

The LP
------
Time is counted in *half-node seconds* (a node is two halves).  For job ``j`` (application
``a``, ``m`` nodes, work ``p``, walltime ``W``, release ``r``), let

* ``x_j``: half-node seconds compact (its ``2m`` halves on ``m`` whole nodes);
* ``z_j``: half-node seconds spread with the other half of the node *idle*;
* ``w_jb``: half-node seconds spread with the other half held by a job of application ``b``.

Speed of a configuration: ``g = 1`` (compact), ``U_j = max(alone(a), max_b eff(a, b))``
(idle other half; ``b`` over the applications that have a spread-capable job other than
``j``), ``eff(a, b)`` (paired); for a job without application every ``g`` is 1.  With kills,
``g' = max(g, p / W)``.
Minimise ``C`` subject to::

    (work)     sum_c g'_jc y_jc            >= 2 m_j p_j             every job j
    (time)     x_j + z_j + sum_b w_jb      <= 2 m_j (C - r_j)       every job j
    (capacity) sum_j (x_j + 2 z_j + sum_b w_jb) <= 2 N C
    (pairs)    sum_{j in a} w_jb = sum_{k in b} w_ka                every a != b
    (self)     w_ja <= sum_{k in a, k != j} w_ka                    every j of application a
    y >= 0;  w_jb = 0 where the pair cannot exist (no other spread-capable job of b);
             z_j = w_jb = 0 for jobs that can never run spread

(releases shifted so that the first is 0).

**Theorem.** For every schedule of the model above, makespan >= the LP optimum ``C*``.

*Proof.*  Take a schedule with makespan ``T`` (first release at 0) and measure, over its run
``[S_j, E_j]`` (as the hook sees it: from its start to the end the server handles), each
job's half-node seconds in each configuration: at each instant a half of a node held by
spread job ``j`` is classified by the other half of that node (idle, or one job ``k`` of
application ``b``); a compact job's ``2m`` halves count as compact.  Set ``C = T``.

* (time): ``j`` holds ``2m_j`` halves during ``E_j - S_j <= T - r_j``.
* (capacity): a compact node holds 2 halves of ``x``; a node with one spread job holds 1
  half of ``z`` and an idle half that nobody else can use (2 per unit of ``z``); a shared
  node holds one half of ``w_jb`` and one of ``w_ka``.  At most ``N`` nodes at a time.
* (pairs), (self): every shared node contributes the same time to ``w_jb`` and ``w_ka``; its
  two jobs are distinct, so a job of application ``a`` paired with ``a`` has a *different*
  partner of ``a`` for the same time.
* (work): at each instant, the rate ``v_j`` of ``j`` is at most ``g`` of *each* of its
  halves: compact ``v = 1``; spread with neighbours ``v = min_k eff(a, a_k) <= eff(a, b)``
  for every neighbour ``b``, and ``<= U_j`` for an idle half (its neighbours are other
  spread jobs); spread alone ``v = alone(a) <= U_j``.  So ``v_j <= (1 / 2m_j)`` x the sum
  of ``g`` over its halves, and integrating, the work done is ``<= (1 / 2m_j) sum_c g_jc
  y_jc``.  Either ``j`` completed
  (work done >= ``p_j``), or it was killed (``E_j - S_j >= W_j``, so ``sum_c y_jc >= 2 m_j
  W_j`` and ``sum_c (p_j / W_j) y_jc >= 2 m_j p_j``); in both cases
  ``sum_c max(g_jc, p_j / W_j) y_jc >= 2 m_j p_j``.

So the measured values and ``C = T`` are feasible, and ``C* <= T``.  ∎

What it relaxes: a job's placement is fixed (the LP lets a job switch configuration), nodes
are integral (the LP is fluid), a spread job's speed is the *minimum* over its neighbours
(the LP averages over halves), and which job sits beside which (the LP balances paired time
per pair of applications only).

Aggregation (exact): jobs with the same (application, m, p, W, r) form a class; the LP over
class sums (with ``(self)`` as ``2 w_ka / n_k <= sum over a's classes``) has the same optimum,
because averaging a per-job solution over the jobs of a class keeps it feasible (every
constraint is linear and symmetric within a class).  ELiSE workloads have one class per
application (<= 33 classes for any job count).

Certificate: the returned bound is the Lagrangian dual value of HiGHS's multipliers over
the variables' boxes (``C <= C_max`` = the makespan of running the jobs one after another,
compact; ``y <= 2 m n (C_max - r)``), so solver tolerances cannot push it above the LP
optimum; it equals HiGHS's objective to ~1e-9 relative.

Exhaustive optimum (:func:`exhaustive_makespan`): for tiny instances (all jobs at t = 0),
the best makespan over every *event-driven* schedule of the same model: jobs start at time
0 or when a job ends (the instants where coburst's policies decide), in every placement up to
the symmetry of nodes with the same occupants (including waiting with nodes idle until the
next end).  Schedules that start a job between two ends are not searched; every coburst
policy is event-driven, so every policy's makespan is >= this optimum >= the LP bound.
:func:`finish_times` evaluates a given schedule (starts and placements) under the same rules,
e.g. one read from the engine's ``_jobs.csv``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from coburst.errors import InputError

__all__ = ["BoundJob", "Machine", "SpeedTable", "BoundResult", "ExhaustiveResult", "speed_table",
           "makespan_bound", "exhaustive_makespan", "finish_times", "jobs_from_workload",
           "machine_from_platform", "cluster_from_hosts", "profile_work"]

COMPACT, SPREAD = "compact", "spread"


# ====================================================================== inputs
@dataclass(frozen=True)
class BoundJob:
    """A job as the bound sees it: application (None: no ``app``), compact node count ``nodes``,
    ``work`` (seconds at speed 1), ``walltime`` (inf: none) and ``release`` (submission time)."""

    id: str
    app: str | None
    nodes: int
    work: float
    walltime: float = math.inf
    release: float = 0.0

    def __post_init__(self):
        if not (isinstance(self.nodes, (int, np.integer)) and self.nodes >= 1):
            raise ValueError(f"job {self.id}: nodes must be an integer >= 1, got {self.nodes!r}")
        if not (math.isfinite(self.work) and self.work >= 0):
            raise ValueError(f"job {self.id}: work must be finite and >= 0, got {self.work!r}")
        if not self.walltime > 0:
            raise ValueError(f"job {self.id}: walltime must be > 0 (inf: none), got {self.walltime!r}")
        if not (math.isfinite(self.release) and self.release >= 0):
            raise ValueError(f"job {self.id}: release must be finite and >= 0, got {self.release!r}")


@dataclass(frozen=True)
class Machine:
    """A node-sharing platform as the bound sees it: ``nodes`` and whether jobs can run spread
    (an even number of units per socket, :attr:`NodeSharingCluster.can_spread`)."""

    nodes: int
    can_spread: bool = True

    def spread_ok(self, m: int) -> bool:
        return self.can_spread and 2 * m <= self.nodes


@dataclass(frozen=True)
class SpeedTable:
    """The hook's speeds over the applications of a job set (index ``len(apps) - 1`` is None
    when some job has no application): ``pair[a, b]`` = speed of ``a`` next to ``b``,
    ``alone[a]`` = spread with no neighbour, ``upper[a]`` = the most a job of ``a`` can run at
    (``max(alone[a], pair[a, :])``)."""

    apps: tuple[str | None, ...]
    pair: np.ndarray
    alone: np.ndarray
    upper: np.ndarray

    def index(self, app: str | None) -> int:
        return self.apps.index(app)

    def speed(self, a: int, neighbours: Iterable[int], compact: bool) -> float:
        """The hook's factor (:meth:`HeatmapSpeedup.factor`) of a job of application index ``a``."""
        if compact or self.apps[a] is None:
            return 1.0
        neigh = list(neighbours)
        if not neigh:
            return float(self.alone[a])
        return float(min(self.pair[a, b] for b in neigh))


def speed_table(heatmap, apps: Iterable[str | None], alone: str | float = "best") -> SpeedTable:
    """The hook's speeds for the applications ``apps`` (None = jobs without ``app``), with the
    same :class:`~coburst.models.heatmap.Heatmap` methods the hook calls."""
    apps = list(apps)
    names = sorted({a for a in apps if a is not None})
    missing = [a for a in names if a not in heatmap]
    if missing:
        raise InputError("heatmap", None, f"application(s) {', '.join(map(repr, missing))} not in the heatmap")
    has_none = any(a is None for a in apps)
    order: list[str | None] = list(names) + ([None] if has_none else [])
    n = len(order)
    pair = np.ones((n, n))
    alone_v = np.ones(n)
    for i, a in enumerate(order):
        if a is None:
            continue  # a job without application runs at 1.0 everywhere
        mean = heatmap.row_mean(a)
        for j, b in enumerate(order):
            pair[i, j] = heatmap.effective(a, b) if b is not None else (1.0 if mean is None else mean)
        alone_v[i] = heatmap.job_speedup(a, (), co_scheduled=True) if alone == "best" else float(alone)
    upper = np.maximum(alone_v, pair.max(axis=1)) if n else alone_v
    upper[[i for i, a in enumerate(order) if a is None]] = 1.0
    return SpeedTable(tuple(order), pair, alone_v, upper)


# ====================================================================== the LP
@dataclass
class BoundResult:
    """:func:`makespan_bound`'s answer.

    ``makespan``: the certified lower bound (module doc); ``lp_value``: HiGHS's objective;
    ``longest``: the longest single job at its best speed (a bound the LP implies);
    ``area``: total work at each job's cheapest node-time per work over the node count (also
    implied); ``classes``: per class, its jobs and node-seconds in each configuration;
    ``jobs``: jobs counted; ``seconds``: LP build + solve wall time."""

    makespan: float
    lp_value: float
    longest: float
    area: float
    classes: list[dict] = field(default_factory=list)
    jobs: int = 0
    variables: int = 0
    constraints: int = 0
    seconds: float = 0.0


def _classes(jobs: Sequence[BoundJob], table: SpeedTable, aggregate: bool = True):
    index = {a: i for i, a in enumerate(table.apps)}
    app = np.array([index[j.app] for j in jobs], dtype=np.int64)
    m = np.array([j.nodes for j in jobs], dtype=np.int64)
    p = np.array([j.work for j in jobs], dtype=float)
    w = np.array([j.walltime for j in jobs], dtype=float)
    r = np.array([j.release for j in jobs], dtype=float)
    if not aggregate:
        return app, m, p, w, r, np.ones(len(jobs), dtype=np.int64), np.arange(len(jobs))
    keys = np.rec.fromarrays([app, m, p, w, r], names="app,m,p,w,r")
    uniq, inverse, count = np.unique(keys, return_inverse=True, return_counts=True)
    return (uniq["app"].astype(np.int64), uniq["m"].astype(np.int64), uniq["p"].astype(float),
            uniq["w"].astype(float), uniq["r"].astype(float), count.astype(np.int64), inverse.reshape(-1))


def makespan_bound(jobs: Sequence[BoundJob], heatmap, machine: Machine, *, alone: str | float = "best",
                   aggregate: bool = True) -> BoundResult:
    """The LP bound of the module docstring for ``jobs`` on ``machine`` with ``heatmap``
    (``alone``: the hook's speed of a spread job without neighbour, ``"best"`` or a factor).
    ``aggregate=False`` keeps one class per job (same optimum; for tests and benchmarks)."""
    import time

    t0 = time.perf_counter()
    jobs = list(jobs)
    if not jobs:
        return BoundResult(0.0, 0.0, 0.0, 0.0)
    for j in jobs:
        if j.nodes > machine.nodes:
            raise ValueError(f"job {j.id} needs {j.nodes} nodes, the machine has {machine.nodes}: it never runs")
    table = speed_table(heatmap, [j.app for j in jobs], alone)
    r0 = min(j.release for j in jobs)
    cls_app, m, p, wall, rel, n, _ = _classes(jobs, table, aggregate)
    rel = rel - r0
    K, A = len(m), len(table.apps)
    N = machine.nodes
    spread = machine.can_spread & (2 * m <= N)
    # which pairings can exist: the partner application has a spread-capable job (another one
    # for the job's own application)
    spread_jobs = np.bincount(cls_app[spread], weights=n[spread], minlength=A)
    partner_ok = np.broadcast_to(spread_jobs[None, :] > 0, (K, A)).copy()
    partner_ok[np.arange(K), cls_app] = spread_jobs[cls_app] >= 2
    partner_ok &= spread[:, None]
    allowed = np.zeros((K, 2 + A), dtype=bool)
    allowed[:, 0] = True
    allowed[:, 1] = spread
    allowed[:, 2:] = partner_ok
    # configurations: 0 compact, 1 idle other half (U: alone, or any neighbour that can exist),
    # 2 + b paired with application b; kills: g' = max(g, p / W)
    G = np.empty((K, 2 + A))
    G[:, 0] = 1.0
    G[:, 2:] = table.pair[cls_app]
    G[:, 1] = np.maximum(table.alone[cls_app], np.where(partner_ok, G[:, 2:], 0.0).max(axis=1))
    floor = np.where(np.isfinite(wall), p / wall, 0.0)
    G = np.maximum(G, floor[:, None])
    cost = np.concatenate(([1.0, 2.0], np.ones(A)))
    kk, cc = np.nonzero(allowed)                                   # variables 1.. in (class, config) order
    V = 1 + len(kk)
    var = np.full((K, 2 + A), -1, dtype=np.int64)
    var[kk, cc] = np.arange(1, V)
    # C_max: the jobs one after another, compact (a feasible schedule)
    c_max = float(rel.max() + np.sum(n * np.minimum(p, wall)))
    c_max = max(c_max, 1e-300)
    upper = np.concatenate(([c_max], 2.0 * m[kk] * n[kk] * np.maximum(c_max - rel[kk], 0.0)))
    rows, cols, vals, rhs = [], [], [], []
    # (work) -sum g' y <= -2 m p n
    rows.append(kk)
    cols.append(np.arange(1, V))
    vals.append(-G[kk, cc])
    rhs.append(-2.0 * m * p * n)
    # (time) sum y - 2 m n C <= -2 m n r
    rows += [K + kk, K + np.arange(K)]
    cols += [np.arange(1, V), np.zeros(K, dtype=np.int64)]
    vals += [np.ones(V - 1), -2.0 * m * n]
    rhs.append(-2.0 * m * n * rel)
    # (capacity) sum cost y - 2 N C <= 0
    rows += [np.full(V - 1, 2 * K), np.array([2 * K])]
    cols += [np.arange(1, V), np.array([0])]
    vals += [cost[cc], np.array([-2.0 * N])]
    rhs.append(np.zeros(1))
    nrow = 2 * K + 1
    # (self) (2 / n_k) w_ka - sum_{k' in a} w_k'a <= 0
    selfv = var[np.arange(K), 2 + cls_app]
    has_self = np.flatnonzero(selfv > 0)
    if len(has_self):
        same = cls_app[has_self][:, None] == cls_app[has_self][None, :]
        ri, ci = np.nonzero(same)                                  # row class i, member class j
        rows += [nrow + ri, nrow + np.arange(len(has_self))]
        cols += [selfv[has_self][ci], selfv[has_self]]
        vals += [-np.ones(len(ri)), 2.0 / n[has_self]]
        rhs.append(np.zeros(len(has_self)))
        nrow += len(has_self)
    A_ub = sp.csr_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(nrow, V))
    b_ub = np.concatenate(rhs)
    # (pairs) sum_{k in a} w_kb - sum_{k in b} w_ka = 0, a < b
    pk, pb = np.nonzero(allowed[:, 2:])
    pa = cls_app[pk]
    off = pa != pb
    pk, pa, pb = pk[off], pa[off], pb[off]
    lo, hi = np.minimum(pa, pb), np.maximum(pa, pb)
    pair_id, prow = np.unique(lo * A + hi, return_inverse=True)
    sign = np.where(pa < pb, 1.0, -1.0)
    A_eq = sp.csr_array((sign, (prow.reshape(-1), var[pk, 2 + pb])), shape=(len(pair_id), V)) if len(pair_id) else None
    b_eq = np.zeros(len(pair_id)) if len(pair_id) else None
    c = np.zeros(V)
    c[0] = 1.0
    bounds = np.column_stack((np.zeros(V), upper))
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
    if res.status != 0:
        raise RuntimeError(f"the co-scheduling bound LP did not solve: {res.message}")
    # certified value: Lagrangian dual bound of HiGHS's multipliers over the variables' boxes
    lam = np.maximum(-res.ineqlin.marginals, 0.0)
    d = c + A_ub.T @ lam
    cert = -float(lam @ b_ub)
    if A_eq is not None:
        mu = -res.eqlin.marginals
        d = d + A_eq.T @ mu
        cert -= float(mu @ b_eq)
    cert += float(np.minimum(d * upper, 0.0).sum())
    bound = min(cert, float(res.fun)) if math.isfinite(cert) else 0.0
    bound = max(bound, 0.0)
    # the bounds the LP implies, independently computed (reported; tests compare)
    longest = float(np.max(rel + p / np.where(allowed, G, 0.0).max(axis=1)))
    per_work = np.where(allowed, cost[None, :] / G, np.inf).min(axis=1)
    area = float(np.sum(2.0 * m * p * n * per_work) / (2.0 * N))
    y = res.x
    classes = []
    for k in range(K):
        split = {"compact": 0.0, "alone": 0.0, "paired": {}}
        for cidx in np.flatnonzero(allowed[k]):
            v = float(y[var[k, cidx]]) / 2.0   # node seconds
            if cidx == 0:
                split["compact"] = v
            elif cidx == 1:
                split["alone"] = v
            elif v > 0:
                split["paired"][table.apps[cidx - 2]] = v
        classes.append({"app": table.apps[cls_app[k]], "nodes": int(m[k]), "work": float(p[k]),
                        "walltime": float(wall[k]), "release": float(rel[k] + r0), "jobs": int(n[k]),
                        "node_seconds": split})
    return BoundResult(bound, float(res.fun), longest, area, classes, len(jobs), V, nrow + (len(pair_id)),
                       time.perf_counter() - t0)


# ====================================================================== the model, event by event
@dataclass
class _Run:
    job: int
    mode: str
    nodes: tuple[int, ...]
    start: float
    done: float = 0.0


def _rates(runs: Mapping[int, _Run], occupants: list[list[int]], app: Sequence[int], table: SpeedTable) -> dict:
    out = {}
    for j, run in runs.items():
        neigh = {k for nd in run.nodes for k in occupants[nd] if k != j}
        out[j] = table.speed(app[j], [app[k] for k in neigh], run.mode == COMPACT)
    return out


def _step(now: float, runs: dict, occupants, jobs: Sequence[BoundJob], app, table, horizon: float = math.inf):
    """Advance to the next end (or ``horizon``); returns (date, ended job indices)."""
    rate = _rates(runs, occupants, app, table)
    until = {}
    for j, run in runs.items():
        job = jobs[j]
        need = (job.work - run.done) / rate[j]
        left = job.walltime - (now - run.start)
        until[j] = min(need, left)
    dt = min(until.values()) if until else math.inf
    if now + dt > horizon + 1e-12 * max(1.0, horizon):
        dt = horizon - now
        for j, run in runs.items():
            run.done += rate[j] * dt
        return horizon, []
    tol = 1e-12 * max(1.0, now + dt)
    ended = sorted(j for j, u in until.items() if u <= dt + tol)
    for j, run in runs.items():
        run.done += rate[j] * dt
    return now + dt, ended


def finish_times(jobs: Sequence[BoundJob], starts: Mapping[str, tuple[float, str, Sequence[int]]], heatmap,
                 machine: Machine, *, alone: str | float = "best") -> dict[str, float]:
    """End dates of a given schedule under the model: ``starts[job id] = (date, mode, nodes)``.

    Jobs start at their dates (after the ends at the same date), each placement is checked
    (compact: idle nodes; spread: 2m nodes with a free half); speeds follow the hook."""
    table = speed_table(heatmap, [j.app for j in jobs], alone)
    app = [table.index(j.app) for j in jobs]
    index = {j.id: i for i, j in enumerate(jobs)}
    pending = sorted((float(t), index[jid], mode, tuple(int(x) for x in nodes)) for jid, (t, mode, nodes) in
                     starts.items())
    occupants: list[list[int]] = [[] for _ in range(machine.nodes)]
    runs: dict[int, _Run] = {}
    out: dict[str, float] = {}
    now = 0.0
    while pending or runs:
        if pending and pending[0][0] <= now:
            # ends at this date (zero-length jobs included) come before the next start
            ended = _step(now, runs, occupants, jobs, app, table, now)[1] if runs else []
            if not ended:
                _, j, mode, nodes = pending.pop(0)
                _check_place(jobs[j], mode, nodes, occupants, runs, machine)
                runs[j] = _Run(j, mode, nodes, now)
                for nd in nodes:
                    occupants[nd].append(j)
                continue
        elif runs:
            now, ended = _step(now, runs, occupants, jobs, app, table, pending[0][0] if pending else math.inf)
        else:
            now, ended = pending[0][0], []
        for j in ended:
            for nd in runs.pop(j).nodes:
                occupants[nd].remove(j)
            out[jobs[j].id] = now
    return out


def _check_place(job: BoundJob, mode: str, nodes: Sequence[int], occupants, runs, machine: Machine) -> None:
    if len(set(nodes)) != len(nodes):
        raise ValueError(f"job {job.id}: a node twice in its placement")
    if mode == COMPACT:
        if len(nodes) != job.nodes or any(occupants[nd] for nd in nodes):
            raise ValueError(f"job {job.id}: compact placement needs {job.nodes} idle nodes")
    elif mode == SPREAD:
        if not machine.spread_ok(job.nodes) or len(nodes) != 2 * job.nodes:
            raise ValueError(f"job {job.id}: spread placement needs {2 * job.nodes} nodes")
        for nd in nodes:
            occ = occupants[nd]
            if len(occ) >= 2 or any(runs[k].mode == COMPACT for k in occ):
                raise ValueError(f"job {job.id}: node {nd} has no free half")
    else:
        raise ValueError(f"job {job.id}: unknown mode {mode!r}")


@dataclass
class ExhaustiveResult:
    """:func:`exhaustive_makespan`'s answer: the optimum, one optimal schedule
    (``{job id: (start, mode, nodes)}``) and the number of schedules evaluated."""

    makespan: float
    schedule: dict[str, tuple[float, str, tuple[int, ...]]]
    leaves: int


def _placements(job: BoundJob, occupants: list[list[int]], runs: Mapping[int, _Run], machine: Machine):
    """Every placement of ``job`` now, up to nodes with the same occupants."""
    idle = [nd for nd, occ in enumerate(occupants) if not occ]
    if len(idle) >= job.nodes:
        yield COMPACT, tuple(idle[:job.nodes])
    if not machine.spread_ok(job.nodes):
        return
    groups: dict[int, list[int]] = {}
    for nd, occ in enumerate(occupants):
        if len(occ) == 1 and runs[occ[0]].mode == SPREAD:
            groups.setdefault(occ[0], []).append(nd)
    options = [idle] + [groups[k] for k in sorted(groups)]
    need = 2 * job.nodes

    def rec(i: int, left: int, chosen: list[int]):
        if i == len(options):
            if left == 0:
                yield tuple(sorted(chosen))
            return
        for c in range(min(left, len(options[i])), -1, -1):
            yield from rec(i + 1, left - c, chosen + options[i][:c])

    for nodes in rec(0, need, []):
        yield SPREAD, nodes


def exhaustive_makespan(jobs: Sequence[BoundJob], heatmap, machine: Machine, *, alone: str | float = "best",
                        max_jobs: int = 6) -> ExhaustiveResult:
    """The best makespan over every event-driven schedule of the model (module doc); jobs all
    released at 0.  Exponential: meant for a handful of jobs on a few nodes."""
    jobs = list(jobs)
    if len(jobs) > max_jobs:
        raise ValueError(f"{len(jobs)} jobs: the exhaustive search is for at most {max_jobs}")
    if any(j.release != 0 for j in jobs):
        raise ValueError("the exhaustive search needs every job released at 0")
    if any(j.nodes > machine.nodes for j in jobs):
        raise ValueError("a job wider than the machine never runs")
    table = speed_table(heatmap, [j.app for j in jobs], alone)
    app = [table.index(j.app) for j in jobs]
    fastest = [j.work / max(float(table.upper[a]), 1.0, j.work / j.walltime if math.isfinite(j.walltime) else 0)
               if j.work > 0 else 0.0 for j, a in zip(jobs, app)]
    best = [math.inf, None]
    leaves = [0]

    def launches(start: int, waiting: list[int], occupants, runs, placed: list):
        yield placed
        for pos in range(start, len(waiting)):
            j = waiting[pos]
            for mode, nodes in _placements(jobs[j], occupants, runs, machine):
                runs[j] = _Run(j, mode, nodes, 0.0)
                for nd in nodes:
                    occupants[nd].append(j)
                yield from launches(pos + 1, waiting, occupants, runs, placed + [(j, mode, nodes)])
                for nd in nodes:
                    occupants[nd].remove(j)
                del runs[j]

    def search(now: float, waiting: list[int], occupants, runs: dict, schedule: dict):
        if now + max((fastest[j] for j in waiting), default=0.0) >= best[0] * (1 - 1e-12):
            return
        for placed in list(launches(0, waiting, occupants, runs, [])):
            if not placed and not runs:
                continue
            occ = [list(o) for o in occupants]
            rn = {j: _Run(r.job, r.mode, r.nodes, r.start, r.done) for j, r in runs.items()}
            sched = dict(schedule)
            for j, mode, nodes in placed:
                rn[j] = _Run(j, mode, nodes, now)
                for nd in nodes:
                    occ[nd].append(j)
                sched[jobs[j].id] = (now, mode, nodes)
            left = [j for j in waiting if j not in {p[0] for p in placed}]
            t, ended = _step(now, rn, occ, jobs, app, table)
            for j in ended:
                for nd in rn.pop(j).nodes:
                    occ[nd].remove(j)
            if not left and not rn:
                leaves[0] += 1
                if t < best[0]:
                    best[0], best[1] = t, sched
                continue
            search(t, left, occ, rn, sched)

    search(0.0, list(range(len(jobs))), [[] for _ in range(machine.nodes)], {}, {})
    return ExhaustiveResult(best[0], best[1] or {}, leaves[0])


# ====================================================================== files
def profile_work(profiles: Mapping, name: str, source: str, where: str) -> float:
    """Seconds at speed 1 of a ``delay`` profile or a ``composed`` one of delays (module doc)."""
    prof = profiles[name]
    if prof.type == "delay":
        return float(prof.data["delay"])
    if prof.type == "composed":
        total = 0.0
        for _ in range(int(prof.data.get("repeat", 1))):
            for sub in prof.data["seq"]:
                total += profile_work(profiles, sub, source, where)
                if profiles[sub].type == "delay" and profiles[sub].ret != 0:
                    return total
        return total
    raise InputError(source, where, f"profile {name!r} is of type {prof.type!r}: the co-scheduling bound "
                     "needs delay profiles (or composed ones of delays), whose work the heatmap scales")


def machine_from_platform(path: str | Path):
    """The :class:`~coburst.core.nodeshare.NodeSharingCluster` of a node-sharing platform file,
    as the co-scheduling adapter builds it from Batsim's resources.

    A platform of ``coburst platform cosched`` (root-zone property ``platform=cosched``) is read
    from its root-zone properties (``nodes``, ``sockets``, ``units_per_socket``,
    ``cores_per_unit``) and its burst-buffer capacities (``bb_capacity`` properties): parsing the
    whole XML of 420 nodes (16 MB) takes seconds, this takes milliseconds.  Any other platform is
    parsed, and every compute host must name its ``node``, ``socket`` and ``unit``."""
    import re

    from coburst.core.nodeshare import NodeSharingCluster
    from coburst.validate import read_bytes

    data = read_bytes(path, "platform file")
    head = data.split(b"<host", 1)[0].decode("utf-8", errors="replace")
    zone = dict(re.findall(r'<prop id="([^"]+)" value="([^"]*)"/>', head))
    if zone.get("platform") == "cosched":
        try:
            shape = [int(zone[k]) for k in ("nodes", "sockets", "units_per_socket", "cores_per_unit")]
        except (KeyError, ValueError):
            shape = None
        if shape is not None and min(shape) >= 1:
            caps = [int(c) for c in re.findall(rb'<prop id="bb_capacity" value="(\d+)"/>', data)] \
                if b"bb_capacity" in data else []
            return NodeSharingCluster.build(*shape, bb_capacity=caps)
    return cluster_from_hosts(path)


def cluster_from_hosts(path: str | Path):
    """:func:`machine_from_platform` by parsing every host (any node-sharing platform)."""
    from coburst.core.nodeshare import NodeSharingCluster
    from coburst.platforms.info import read_platform

    info = read_platform(path)
    compute = [{"id": i, "name": h.name, "properties": h.properties} for i, h in enumerate(info.compute)]
    storage = [{"id": len(compute) + i, "name": h.name, "properties": h.properties}
               for i, h in enumerate(info.storage)]
    return NodeSharingCluster.from_resources(compute, storage, source=str(path))


def jobs_from_workload(path: str | Path, cluster) -> tuple[list[BoundJob], list[str]]:
    """The jobs of a Batsim workload that a co-scheduling policy would run on ``cluster`` (a
    :class:`~coburst.core.nodeshare.NodeSharingCluster`), and the ids of those it would reject
    (:meth:`NodeSharingCluster.never_fits`, or a malformed ``bb``)."""
    from coburst.simulator.workload import load_workload

    source = str(path)
    wl = load_workload(path, "w")
    out, rejected = [], []
    for i, job in enumerate(wl.jobs):
        jid = job.id.split("!", 1)[1]
        bb = job.json.get("bb", 0)
        ok_bb = not isinstance(bb, bool) and isinstance(bb, (int, float)) and math.isfinite(bb) and bb >= 0 \
            and bb == int(bb)
        if not ok_bb or cluster.never_fits(job.res, int(bb)) is not None:
            rejected.append(jid)
            continue
        app = job.json.get("app")
        work = profile_work(wl.profiles, job.profile, source, f"jobs[{i}].profile")
        wall = job.walltime if job.walltime > 0 else math.inf
        out.append(BoundJob(jid, app if isinstance(app, str) else None, job.res // cluster.units_per_node, work,
                            wall, job.subtime))
    return out, rejected
