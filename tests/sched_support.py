"""Test support for the scheduling core and policies: hypothesis strategies and the
invariant checks applied to :func:`coburst.core.replay.replay` results."""

from __future__ import annotations

from collections import defaultdict

from hypothesis import strategies as st

from coburst.core.cluster import Cluster
from coburst.core.replay import ReplayResult
from coburst.core.state import Job

UNIT = 1000  # BB bytes unit in generated cases


@st.composite
def clusters(draw, max_compute: int = 12, max_bb: int = 4, min_bb: int = 0) -> Cluster:
    n = draw(st.integers(1, max_compute))
    nb = draw(st.integers(min_bb, max_bb))
    caps = draw(st.lists(st.integers(1, 8).map(lambda u: u * UNIT), min_size=nb, max_size=nb))
    topo = draw(st.booleans())
    if topo:
        groups = draw(st.integers(1, 2))
        chassis = draw(st.integers(1, 2))
        def pos(k):
            return (k % groups, (k // groups) % chassis, 0)
        ctopo = [pos(draw(st.integers(0, 7))) for _ in range(n)]
        btopo = [pos(draw(st.integers(0, 7))) for _ in range(nb)]
        return Cluster.build(n, caps, compute_topology=ctopo, bb_topology=btopo)
    return Cluster.build(n, caps)


@st.composite
def workloads(draw, cluster: Cluster, max_jobs: int = 20, allow_unfit: bool = True):
    """``(jobs, runtimes)`` with integer dates; runtimes <= walltimes."""
    n = draw(st.integers(1, max_jobs))
    max_cap = cluster.max_bb_capacity
    jobs, runtimes = [], {}
    t = 0
    for i in range(n):
        t += draw(st.integers(0, 6))
        res_max = cluster.n_compute + (1 if allow_unfit else 0)
        res = draw(st.integers(1, res_max))
        wall = draw(st.integers(1, 30))
        if max_cap and draw(st.booleans()):
            bb = draw(st.integers(1, 2 * max_cap // UNIT + (1 if allow_unfit else 0))) * UNIT // 2
        else:
            bb = 0
        job = Job(f"j{i}", float(t), res, float(wall), bb)
        if not allow_unfit and cluster.never_fits(res, bb):
            continue
        jobs.append(job)
        runtimes[job.id] = float(draw(st.integers(1, wall)))
    return jobs, runtimes


def check_invariants(cluster: Cluster, jobs: list[Job], result: ReplayResult) -> None:
    """Resource safety and liveness of a replay (raises AssertionError)."""
    recs = result.jobs
    # rejected exactly the jobs that can never fit
    for job in jobs:
        rec = recs[job.id]
        never = cluster.never_fits(job.res, job.bb)
        if never:
            assert rec.rejected and rec.start is None, (job, rec)
        else:
            assert rec.rejected is None, (job, rec.rejected)
            assert rec.start is not None and rec.end is not None, f"job {job.id} never ran"
            assert rec.start >= job.subtime
            assert rec.end <= rec.start + job.walltime
    assert not result.stalled
    started = [r for r in recs.values() if r.start is not None]
    # allocation shape
    for r in started:
        a = r.alloc
        assert len(a.nodes) == r.job.res == len(set(a.nodes.tolist()))
        if r.job.bb:
            assert a.bb == r.job.bb and len(a.bb_nodes) == r.job.res
        else:
            assert a.bb_use is None
    # no compute node shared, no BB node over capacity, at any instant
    instants = sorted({r.start for r in started})
    for t in instants:
        live = [r for r in started if r.start <= t < r.end or (r.start == t == r.end)]
        used: dict[int, str] = {}
        bb = defaultdict(int)
        for r in live:
            for node in r.alloc.nodes.tolist():
                assert node not in used, f"node {node} shared by {used[node]} and {r.job.id} at {t}"
                used[node] = r.job.id
            if r.alloc.bb_use is not None:
                for b, v in enumerate(r.alloc.bb_use.tolist()):
                    bb[b] += v
        for b, v in bb.items():
            assert v <= cluster.bb_capacity[b], f"BB node {b} over capacity at {t}: {v}"


def check_reservations_kept(result: ReplayResult, first_only: bool = False, tol: float = 1e-9) -> None:
    """Every job that got a reservation at some date starts no later than it (``tol``
    seconds of slack: a simulator starts jobs a little after the decision)."""
    for rec in result.decisions:
        reservations = rec.decisions.reservations[:1] if first_only else rec.decisions.reservations
        for r in reservations:
            start = result.jobs[r.job.id].start
            assert start is not None and start <= r.start + tol, \
                f"job {r.job.id} reserved at {r.start} (decided at {rec.now}) started at {start}"
