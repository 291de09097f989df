"""Co-scheduling metrics (Kellari 2025, §2.3) from a run's ``_jobs.csv``.

A job ``i`` ran ``t_run`` seconds (``execution_time``) after waiting ``t_wait``
(``waiting_time``) on ``n_req`` cores (``requested_number_of_resources`` x
``cores_per_unit``: the units of ``coburst platform cosched``); the speedup hook
(``--heatmap``) appended its achieved speedup ``S_i`` = compact time / ``t_run`` to its
``metadata`` (``speedup=<x>``; absent = 1, a job run without the hook).

* makespan speedup ``mS`` = baseline makespan / makespan (eq. 2.1; baseline: Conservative);
* mean slowdown: mean of ``(t_run + t_wait) / t_run`` (eq. 2.2-2.3), and its standard deviation;
* mean slowdown per processor: mean of ``(t_run + t_wait) / t_run / n_req`` (eq. 2.4-2.5);
* utilisation: busy core-seconds / (total cores x makespan) (eq. 2.6, t1 = 0, t2 = makespan);
* mean job speedup: mean of ``S_i`` (eq. 2.7-2.8);
* weighted mean job speedup: ``sum(w_i S_i) / sum(w_i)``, ``w_i = t_run x n_req`` (eq. 2.9);
* slowdown counts: percentage of jobs with ``S_i < 0.99`` (§2.3.2.4).

Only jobs that ran are counted (rejected rows are skipped).

Makespan lower bound (:func:`makespan_bound_of`; per run: :func:`coburst.analysis.tables.add_bound_columns`, ``coburst analyze
--heatmap``, ``scripts/cosched_study.py``): the fluid LP of
:mod:`coburst.theory.cosched_bound` for the run's workload, platform and heatmap, and
makespan / bound, an upper bound on how far the run is from the best possible schedule.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from coburst.errors import InputError


def _speedup(metadata: str, source: str, line: int) -> float:
    for part in metadata.split(";"):
        key, sep, value = part.partition("=")
        if sep and key.strip() == "speedup":
            try:
                s = float(value)
            except ValueError:
                s = math.nan
            if not (math.isfinite(s) and s > 0):
                raise InputError(source, f"line {line}, metadata", f"invalid speedup {value!r}")
            return s
    return 1.0


def cosched_metrics(jobs_csv: str | Path, *, total_cores: int, cores_per_unit: int = 1,
                    baseline_makespan: float | None = None) -> dict[str, float]:
    """The metrics of the module docstring for one run."""
    source = str(jobs_csv)
    if total_cores <= 0 or cores_per_unit <= 0:
        raise InputError("cosched_metrics", f"total_cores={total_cores}, cores_per_unit={cores_per_unit}",
                         "must be > 0")
    from array import array

    try:
        fh = open(jobs_csv, newline="", encoding="utf-8")
    except OSError as exc:
        raise InputError(source, None, f"cannot read: {exc}") from None
    # rows read one at a time: eight bytes per job kept for each sum (math.fsum needs them all)
    sld, sldpp, speed, weights, busy, finish = array("d"), array("d"), array("d"), array("d"), 0.0, 0.0
    with fh:
        for line, row in enumerate(csv.DictReader(fh), start=2):
            if row.get("final_state") == "REJECTED" or not row.get("execution_time"):
                continue
            try:
                t_run, t_wait = float(row["execution_time"]), float(row["waiting_time"])
                n_req = int(row["requested_number_of_resources"]) * cores_per_unit
                finish = max(finish, float(row["finish_time"]))
            except (KeyError, ValueError) as exc:
                raise InputError(source, f"line {line}", f"not a Batsim _jobs.csv row: {exc}") from None
            if t_run <= 0:
                continue
            s = (t_run + t_wait) / t_run
            sld.append(s)
            sldpp.append(s / n_req)
            speed.append(_speedup(row.get("metadata", ""), source, line))
            weights.append(t_run * n_req)
            busy += t_run * n_req
    if not sld:
        raise InputError(source, None, "no job ran")
    n = len(sld)
    mean_sld = math.fsum(sld) / n
    out = {
        "jobs": float(n),
        "makespan": finish,
        "mean_slowdown": mean_sld,
        "std_slowdown": math.sqrt(math.fsum((x - mean_sld) ** 2 for x in sld) / n),
        "mean_slowdown_per_processor": math.fsum(sldpp) / n,
        "utilisation": busy / (total_cores * finish) if finish > 0 else 0.0,
        "mean_job_speedup": math.fsum(speed) / n,
        "weighted_mean_job_speedup": math.fsum(w * s for w, s in zip(weights, speed)) / math.fsum(weights),
        "slowdown_count_percent": 100.0 * sum(1 for s in speed if s < 0.99) / n,
    }
    if baseline_makespan is not None:
        out["makespan_speedup"] = baseline_makespan / finish if finish > 0 else math.nan
    return out


# ---------------------------------------------------------------------- the makespan lower bound
def makespan_bound_of(workload: str | Path, platform: str | Path, heatmap, *, alone: str | float = "best",
                      cache: dict | None = None, spread: bool = True):
    """The co-scheduling makespan lower bound (:func:`coburst.theory.cosched_bound.makespan_bound`)
    of a workload file on a node-sharing platform file with a heatmap (a
    :class:`~coburst.models.heatmap.Heatmap`): the jobs a co-scheduling policy would run (rejected
    ones left out), on the platform's nodes.  ``cache``: a dict shared between calls (platforms
    and bounds are computed once per file).  ``spread=False``: the bound of compact-only
    schedules (every job on whole nodes, speed 1), the yardstick of traditional policies."""
    from coburst.theory.cosched_bound import Machine, jobs_from_workload, machine_from_platform, makespan_bound

    cache = {} if cache is None else cache
    pkey = ("platform", str(platform))
    if pkey not in cache:
        cache[pkey] = machine_from_platform(platform)
    cluster = cache[pkey]
    key = ("bound", str(workload), str(platform), id(heatmap), alone, spread)
    if key not in cache:
        jobs, _ = jobs_from_workload(workload, cluster)
        cache[key] = makespan_bound(jobs, heatmap, Machine(cluster.n, cluster.can_spread and spread), alone=alone)
    return cache[key]
