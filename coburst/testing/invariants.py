"""Invariant checks of a policy's schedule (each raises ``AssertionError`` naming what broke).

On the scheduling core's records (a :func:`coburst.core.replay.replay`, or a run's outputs read
back by :mod:`coburst.testing.records`):

* :func:`check_invariants`: exactly the jobs that can never fit are rejected, every other one
  starts and ends within its walltime, no compute node is shared and no burst-buffer node is
  over its capacity at any instant, BB taken in whole per-node pieces;
* :func:`check_reservations_kept`: every reserved job (or the first of each decision) starts
  no later than its reservation.

On a run's outputs, for every family (:class:`coburst.testing.PolicyRun`):

* :func:`assert_capacities`: no resource id (compute node, node-sharing unit, core) is given
  to two jobs at once, no burst-buffer node holds more than its ``bb_capacity``;
* :func:`assert_every_job_ends`: every job of the workload has a final state; a job that
  started has an end;
* :func:`assert_reservations_kept`: what the policy promises of its reservations
  (``Policy.keeps_reservations``) holds, read from the adapter's decision trace;
* :func:`assert_same_bytes`: two runs wrote the same bytes.
"""

from __future__ import annotations

import json
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from coburst.core.cluster import Cluster
from coburst.core.replay import ReplayResult
from coburst.core.state import Job
from coburst.testing.run import PolicyRun, run_policy

__all__ = ["check_invariants", "check_reservations_kept", "assert_capacities", "assert_every_job_ends",
           "assert_reservations_kept", "assert_same_bytes", "assert_invariants", "assert_deterministic"]


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


# ---------------------------------------------------------------------- on a run's outputs
def _intervals(run: PolicyRun) -> list[tuple[float, float, str, dict]]:
    out = []
    for job_id, row in run.rows.items():
        if row["final_state"] == "REJECTED" or not row["starting_time"]:
            continue
        out.append((float(row["starting_time"]), float(row["finish_time"]), job_id, row))
    return out


def assert_capacities(run: PolicyRun) -> None:
    """No resource given to two jobs at once (compute nodes, node-sharing units, cores: the
    ids of ``allocated_resources``), no burst-buffer node over its capacity (the ``bb=``
    metadata against the platform's ``bb_capacity``), at any instant a job starts."""
    from procset import ProcSet

    from coburst.testing.records import bb_capacities, parse_bb_metadata

    caps = bb_capacities(run.platform)
    spans = []
    for start, end, job_id, row in _intervals(run):
        ids = list(ProcSet.from_str(row["allocated_resources"]))
        assert len(ids) == int(row["requested_number_of_resources"]), \
            f"job {job_id}: {len(ids)} resources allocated for {row['requested_number_of_resources']} requested"
        bb = parse_bb_metadata(row.get("metadata", ""))
        for b in bb:
            assert b in caps, f"job {job_id}: BB bytes on resource {b}, which is not a burst-buffer node"
        spans.append((start, end, job_id, ids, bb))
    for t in sorted({s[0] for s in spans}):
        used: dict[int, str] = {}
        bb_used: dict[int, int] = defaultdict(int)
        for start, end, job_id, ids, bb in spans:
            if not (start <= t < end or start == t == end):
                continue
            for rid in ids:
                assert rid not in used, f"resource {rid} given to {used[rid]} and {job_id} at {t}"
                used[rid] = job_id
            for b, v in bb.items():
                bb_used[b] += v
        for b, v in bb_used.items():
            assert v <= caps[b], f"burst-buffer node {b} holds {v} B > its capacity {caps[b]} B at {t}"


def assert_every_job_ends(run: PolicyRun, *, rejected_ok: bool = True) -> None:
    """Every job of the workload has one row with a final state, and an end when it started
    (``rejected_ok=False``: no job rejected either)."""
    from coburst.testing.records import FINAL

    ids = [f"w0!{j['id']}" for j in run.workload["jobs"]]
    missing = [i for i in ids if i not in run.rows]
    assert not missing, f"jobs without a row in _jobs.csv (never ended): {missing}"
    for job_id in ids:
        row = run.rows[job_id]
        assert row["final_state"] in FINAL, f"job {job_id}: final state {row['final_state']!r}"
        if row["final_state"] == "REJECTED":
            assert rejected_ok, f"job {job_id} rejected"
            continue
        assert row["starting_time"] and row["finish_time"], f"job {job_id} started without an end: {row}"
        assert float(row["finish_time"]) >= float(row["starting_time"])
        assert float(row["starting_time"]) >= float(row["submission_time"]), f"job {job_id} started before it came"


def assert_reservations_kept(run: PolicyRun, *, promise: str | None = "policy", tol_per_job: float = 5e-4) -> None:
    """The reservations of the decision trace are kept as promised: ``"all"`` (every reserved
    job starts no later than its reservation), ``"first"`` (the first reservation of each
    decision), None (nothing checked); ``"policy"``: the policy's ``keeps_reservations``.
    Dates get ``tol_per_job`` seconds per job of slack (a simulator starts a job one message
    after the decision, and a job killed at its walltime frees its nodes a little later)."""
    if promise == "policy":
        promise = run.keeps_reservations
    if promise is None or run.trace is None:
        return
    assert promise in ("all", "first"), promise
    tol = tol_per_job * len(run.workload["jobs"])
    for line in run.trace.read_text().splitlines():
        entry = json.loads(line)
        reservations = entry.get("reserve", [])
        for r in reservations[:1] if promise == "first" else reservations:
            row = run.rows.get(r["job"])
            start = float(row["starting_time"]) if row and row["starting_time"] else None
            assert start is not None and start <= r["start"] + tol, \
                f"job {r['job']} reserved at {r['start']} (decided at {entry['now']}) started at {start}"


def assert_same_bytes(a: PolicyRun, b: PolicyRun) -> None:
    """Two runs wrote the same bytes (``_jobs.csv``, the decision trace, and ``_schedule.csv``
    but for its wall-clock columns)."""
    assert a.jobs_csv.read_bytes() == b.jobs_csv.read_bytes(), "the runs' _jobs.csv differ"
    if a.trace is not None and b.trace is not None:
        assert a.trace.read_bytes() == b.trace.read_bytes(), "the runs' decision traces differ"
    assert a.schedule_rows() == b.schedule_rows(), "the runs' _schedule.csv differ"


def assert_invariants(run: PolicyRun) -> None:
    """:func:`assert_every_job_ends`, :func:`assert_capacities` and
    :func:`assert_reservations_kept` (the policy's promise) on one run."""
    assert_every_job_ends(run)
    assert_capacities(run)
    assert_reservations_kept(run)


def assert_deterministic(policy: Any, workload: Any, platform: Any, *, out: str | Path | None = None,
                         **kwargs: Any) -> None:
    """Run twice with the same inputs and parameters (the same seed): the same bytes
    (:func:`assert_same_bytes`).  The runs go to ``out/a`` and
    ``out/b``, or to a temporary folder removed afterwards."""
    import shutil

    folder = Path(tempfile.mkdtemp(prefix="coburst-testing-") if out is None else out)
    a = run_policy(policy, workload, platform, out=folder / "a", **kwargs)
    b = run_policy(policy, workload, platform, out=folder / "b", **kwargs)
    assert_same_bytes(a, b)
    if out is None:
        shutil.rmtree(folder, ignore_errors=True)
