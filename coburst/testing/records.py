"""A run's outputs read back as the scheduling core's records (independently of the adapter).

``_jobs.csv`` rows become :class:`~coburst.core.replay.JobRecord` objects (start, end, compute
allocation, and the burst-buffer placement the burst-buffer adapter publishes as job
metadata ``bb=<BB id>:<bytes>/...``), the adapter's decision trace (``{"trace": FILE}``)
becomes :class:`~coburst.core.replay.DecisionRecord` objects with their reservations: what
:func:`coburst.testing.invariants.check_invariants` and
:func:`~coburst.testing.invariants.check_reservations_kept` check.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
from procset import ProcSet

from coburst.core.cluster import Cluster
from coburst.core.decisions import Decisions
from coburst.core.placement import Allocation
from coburst.core.replay import DecisionRecord, JobRecord, ReplayResult
from coburst.core.state import Job

__all__ = ["FINAL", "platform_cluster", "parse_bb_metadata", "allocation", "records", "trace_decisions",
           "bb_capacities"]

#: the final states of a job in ``_jobs.csv``
FINAL = {"COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED", "COMPLETED_FAILED", "COMPLETED_KILLED", "REJECTED"}


def _numbered(path: str | Path):
    """Compute and storage hosts of a platform as Batsim 4.2 numbers them: compute hosts,
    then storage hosts, each in lexicographic host-name order."""
    from coburst.platforms.info import read_platform

    info = read_platform(path)
    compute = sorted(info.compute, key=lambda h: h.name)
    storage = sorted(info.storage, key=lambda h: h.name)
    res = [{"id": k, "name": h.name, "properties": h.properties} for k, h in enumerate(compute + storage)]
    return res[:len(compute)], res[len(compute):]


def platform_cluster(path: str | Path) -> Cluster:
    """The cluster as Batsim 4.2 numbers it: compute hosts, then storage hosts, each in
    lexicographic host-name order (independent of the adapter's own reading)."""
    compute, storage = _numbered(path)
    return Cluster.from_resources(compute, storage)


def bb_capacities(path: str | Path) -> dict[int, int]:
    """Batsim resource id -> ``bb_capacity`` of every burst-buffer node of a platform."""
    _, storage = _numbered(path)
    out = {}
    for r in storage:
        cap = r["properties"].get("bb_capacity")
        if cap is not None:
            out[r["id"]] = int(cap)
    return out


_META = re.compile(r"bb=(\d+:\d+(?:/\d+:\d+)*)")


def parse_bb_metadata(text: str) -> dict[int, int]:
    """``bb=12:2000/13:1000`` -> {12: 2000, 13: 1000}; empty text -> {}.  The ``bb=`` field may
    be one of several ``;``-separated fields of the metadata."""
    if not text:
        return {}
    fields = [f for f in text.split(";") if f.startswith("bb=")]
    if not fields:
        return {}
    m = _META.fullmatch(fields[0])
    assert m, f"malformed BB metadata {text!r}"
    out: dict[int, int] = {}
    for part in m.group(1).split("/"):
        b, v = part.split(":")
        assert int(b) not in out, f"BB id repeated in {text!r}"
        out[int(b)] = int(v)
    return out


def allocation(cluster: Cluster, job: Job, nodes: ProcSet, bb_bytes: dict[int, int]) -> Allocation:
    """An :class:`Allocation` (cluster indices) from Batsim ids and BB bytes per BB id."""
    for rid in nodes:
        assert cluster.is_compute(rid), f"job {job.id}: resource {rid} is not a compute node"
    idx = np.array(sorted(cluster.compute_index(rid) for rid in nodes), dtype=np.int64)
    if not bb_bytes:
        return Allocation.make(cluster.n_bb, idx)
    bb_nodes = []
    for rid, v in bb_bytes.items():
        assert job.bb and v % job.bb == 0 and v > 0, f"job {job.id}: {v} B on BB {rid} is not whole pieces of {job.bb}"
        bb_nodes += [cluster.bb_index(rid)] * (v // job.bb)
    return Allocation.make(cluster.n_bb, idx, np.array(bb_nodes), job.bb)


def records(cluster: Cluster, jobs_json: Sequence[Mapping], rows: Mapping[str, Mapping[str, str]],
            workload: str = "w0") -> tuple[list[Job], ReplayResult]:
    """Jobs (from their workload JSON) and their records (from the ``_jobs.csv`` rows, by
    ``workload!id``) of a burst-buffer run."""
    assert len(rows) == len(jobs_json), f"{len(rows)} rows for {len(jobs_json)} jobs"
    jobs, recs = [], {}
    for j in jobs_json:
        job = Job(f"{workload}!{j['id']}", float(j["subtime"]), j["res"], float(j["walltime"]), j.get("bb", 0))
        jobs.append(job)
        row = rows[job.id]
        assert row["final_state"] in FINAL, row
        rec = JobRecord(job)
        recs[job.id] = rec
        if row["final_state"] == "REJECTED":
            rec.rejected = "rejected"
            assert row["starting_time"] == "" and row["allocated_resources"] == "", row
            continue
        assert float(row["submission_time"]) == job.subtime, row
        rec.start = float(row["starting_time"])
        # end = start + execution time: both printed with 6 decimals, exact for a killed job
        rec.end = rec.start + float(row["execution_time"])
        assert abs(rec.end - float(row["finish_time"])) <= 2e-6, row
        rec.killed = row["final_state"] == "COMPLETED_WALLTIME_REACHED"
        rec.alloc = allocation(cluster, job, ProcSet.from_str(row["allocated_resources"]),
                               parse_bb_metadata(row["metadata"]))
    return jobs, ReplayResult(recs)


def trace_decisions(cluster: Cluster, jobs: list[Job], path: str | Path) -> list[DecisionRecord]:
    """The decisions of a burst-buffer adapter's trace, with their reservations."""
    by_id = {j.id: j for j in jobs}
    out = []
    for line in Path(path).read_text().splitlines():
        entry = json.loads(line)
        dec = Decisions(entry["now"])
        for r in entry.get("reserve", ()):
            job = by_id[r["job"]]
            dec.reserve(job, r["start"], allocation(cluster, job, ProcSet.from_str(r["nodes"]),
                                                     parse_bb_metadata(r["bb"])))
        out.append(DecisionRecord(entry["now"], 0, 0, 0.0, dec))
    return out
