"""Tidy tables of Batsim outputs: one row per run, one row per job (``coburst analyze``).

Entry point for the campaign code and the CLI: :func:`analyze`.

Inputs (``paths``), each one of:

* an output prefix ``dir/out`` (the run's files are ``dir/out_jobs.csv``,
  ``dir/out_schedule.csv``), or the ``_jobs.csv`` file itself;
* a folder holding ``*_jobs.csv`` files (one run each, named by the file's prefix);
* a campaign folder: ``<campaign>/runs/<run-id>/`` with ``params.json`` (a flat JSON object:
  ``scheduler``, ``options``, ``platform``, ``workload``, ``seed``, ``engine``, labels...),
  ``status.json`` (``{"state": "done"|"failed", ...}``) and the outputs under the prefix
  ``out``.  Only runs whose state is ``done`` are read (runs in progress -- temporary
  ``.tmp-*`` folders -- and failed runs are counted in a note, never read); every parameter
  becomes a column.
  A single run folder (``params.json`` + ``out_jobs.csv``) is accepted too.

Outputs of both engines (coburst's and the real Batsim 4.2.1) have the same format.

Per-job table (``jobs_df``), one row per static job that ran (rejected jobs dropped,
IO-Aware sub-jobs folded back into their static job by :func:`coburst.analysis.metrics.fold_io_jobs`):
``run``, ``policy``, ``job_id``, ``submit``, ``start``, ``finish``, ``runtime`` (execution
time), ``waiting`` = start - submit, ``turnaround`` = finish - submit, ``slowdown`` =
turnaround / runtime (NaN for a zero runtime), ``bounded_slowdown`` = max(turnaround /
max(runtime, tau), 1), ``nodes`` (requested), ``requested_time``, ``final_state``,
``success``, ``bb_per_node`` and ``bb_bytes`` = nodes x bb_per_node (from the workload; without
a workload, ``bb_bytes`` is the placement the scheduler wrote in the job's ``bb=`` metadata,
``bb_per_node`` NaN), ``speedup`` (co-scheduling hook's ``speedup=`` metadata, NaN if absent),
``allocated_resources``, ``energy`` (the job's ``consumed_energy``, J; NaN without ``-E``).

Run table (``runs_df``), one row per run: ``run``, the run's parameters (``scheduler``,
``options``, ``platform``, ``workload``, ``seed``, ``engine`` and any label), ``policy``
(scheduler, plus its options when not empty), ``path`` (output prefix), then the metrics:

* ``jobs``, ``rejected``, ``failed`` (jobs that ran but did not complete successfully);
* ``mean_/p50_/p90_/p99_/max_`` of ``waiting``, ``turnaround``, ``slowdown``,
  ``bounded_slowdown`` (linear-interpolation quantiles), ``tau`` the bounded-slowdown bound;
* ``makespan`` = last finish - first submission (s);
* ``energy`` (J) = ``_schedule.csv``'s ``consumed_joules`` (first submission to last job end)
  and ``energy_total`` (J) = the last value of ``_consumed_energy.csv`` (time 0 to its last
  event), for runs simulated with energy (``-E``), NaN otherwise
  (:func:`coburst.analysis.metrics.read_energy`);
* ``utilisation`` = sum(nodes x runtime) / (compute nodes x makespan);
* ``bb_utilisation`` = sum(bb_bytes x runtime) / (total BB capacity x makespan);
* ``mean_queue_nodes`` / ``max_queue_nodes``: time mean and maximum over the makespan of the
  requested nodes of waiting jobs; ``queue_load_compute`` = mean_queue_nodes / compute nodes;
* ``mean_queue_bb`` / ``max_queue_bb`` (bytes) and ``queue_load_storage`` = mean_queue_bb / BB
  capacity: the same for burst-buffer requests;
* ``nb_compute``, ``bb_capacity`` (total bytes), the capacities used;
* with co-scheduling (a job carries ``speedup=`` or the platform is a node-sharing one):
  ``cosched_*``: Kellari's metrics by :func:`coburst.analysis.cosched.cosched_metrics`
  (mean slowdown and its std, mean slowdown per processor, utilisation in cores, mean and
  weighted mean job speedup, percentage of slowed-down jobs);
* ``notes``: why a metric is NaN (no workload, no platform...), ``;``-separated.

Capacities: compute nodes and BB capacity come from the platform (``params.json``'s
``platform`` or ``--platform``, read by :func:`coburst.platforms.info.read_platform`), else
from the workload's ``coburst`` header (``bb_nodes`` x ``bb_capacity``) and ``nb_res``, else
the number of compute nodes is the highest allocated resource id + 1 and the BB metrics
are NaN with a note.
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from coburst.analysis import timeseries
from coburst.analysis.metrics import (CHUNK_BYTES, STATIC_WORKLOAD, TAU, bounded_slowdown_of, iter_folded_jobs,
                                     job_energy, read_energy)
from coburst.campaign.runner import DONE, list_runs, run_folder_state
from coburst.errors import InputError

__all__ = ["RunInput", "discover", "analyze", "analyze_stream", "analyze_runs", "read_run", "RunReader", "write_tables",
           "JobsWriter", "METRIC_COLUMNS", "PARAM_EXCLUDE",
           "group_columns", "DISTRIBUTION_METRICS"]

#: metrics with mean / quantiles in the run table
DISTRIBUTION_METRICS = ("waiting", "turnaround", "slowdown", "bounded_slowdown")
STATS = ("mean", "p50", "p90", "p99", "max")
#: parameters that name a policy; the others identify a workload part / setting (group)
PARAM_EXCLUDE = ("scheduler", "options", "policy", "scheduler_spec")
#: columns of the run table that are not parameters
BOOKKEEPING = ("run", "run_id", "policy", "path", "notes", "tau", "nb_compute", "bb_capacity", "jobs", "rejected",
               "failed", "wall_s")
#: scheduler options that change no decision (left out of policy labels)
NON_DECISION_OPTIONS = ("decision_log",)


@dataclass
class RunInput:
    """One run to analyse: its id, output prefix and parameters."""

    run: str
    prefix: Path
    params: dict = field(default_factory=dict)
    base: Path | None = None  # folder against which relative params paths are resolved


# ------------------------------------------------------------------ discovery
def _jobs_file(prefix: Path) -> Path:
    return Path(f"{prefix}_jobs.csv")


def _flat(value):
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return value


def _read_json(path: Path) -> dict:
    from coburst.validate import read_json

    doc = read_json(path)
    if not isinstance(doc, dict):
        raise InputError(path, None, "expected a JSON object")
    return doc


def _campaign_run(folder: Path, campaign: Path | None) -> RunInput | None:
    status_file = folder / "status.json"
    if status_file.is_file():
        status = _read_json(status_file)
        if status.get("state") != "done":
            return None
    params = {}
    if (folder / "params.json").is_file():
        params = {k: _flat(v) for k, v in _read_json(folder / "params.json").items()}
    prefix = folder / "out"
    if not _jobs_file(prefix).is_file():
        if status_file.is_file():
            raise InputError(folder, "status.json", f"run marked done but {_jobs_file(prefix).name} is missing")
        return None
    if "wall_s" not in params and status_file.is_file():
        wall = _read_json(status_file).get("wall_s")
        if isinstance(wall, (int, float)):
            params["wall_s"] = float(wall)
    return RunInput(run=folder.name, prefix=prefix, params=params, base=campaign or folder)


def _stderr_notice(text: str) -> None:
    print(f"note: {text}", file=sys.stderr)


def discover(paths: Iterable[str | Path], notice: Callable[[str], None] | None = _stderr_notice) -> list[RunInput]:
    """The runs named by ``paths`` (module doc), in a deterministic order: the order of the
    arguments, and inside a folder the sorted names.  Run ids are made unique by prefixing
    the folder name when two runs share one.  In a campaign folder only finished runs are
    read (:func:`coburst.campaign.runner.list_runs`); runs in progress or failed are counted
    and passed to ``notice``."""
    runs: list[RunInput] = []
    for raw in paths:
        p = Path(raw)
        s = str(raw)
        if s.endswith("_jobs.csv") and p.is_file():
            runs.append(RunInput(p.name[: -len("_jobs.csv")], Path(s[: -len("_jobs.csv")])))
        elif _jobs_file(p).is_file() and not p.is_dir():
            runs.append(RunInput(p.name, p))
        elif p.is_dir() and (p / "runs").is_dir():
            skipped: dict[str, int] = {}
            for d, state in list_runs(p):
                if state != DONE:
                    skipped[state] = skipped.get(state, 0) + 1
                    continue
                r = _campaign_run(d, p)
                if r is not None:
                    runs.append(r)
            if skipped and notice is not None:
                counts = ", ".join(f"{n} {state}" for state, n in sorted(skipped.items()))
                notice(f"{p}: runs not read ({counts}): only finished runs count")
        elif p.is_dir() and (p / "params.json").is_file() and _jobs_file(p / "out").is_file():
            state = run_folder_state(p, strict=True)
            if state != DONE:
                raise InputError(p, None, f"this campaign run is {state}: only finished runs are read")
            r = _campaign_run(p, None)
            if r is not None:
                runs.append(r)
        elif p.is_dir():
            files = sorted(p.glob("*_jobs.csv"))
            if not files:
                raise InputError(p, None, "no Batsim output here: no *_jobs.csv file and no runs/ folder of a campaign")
            runs.extend(RunInput(f.name[: -len("_jobs.csv")], Path(str(f)[: -len("_jobs.csv")])) for f in files)
        else:
            raise InputError(raw, None, "not a Batsim output: expected an output prefix P with P_jobs.csv, a "
                             "_jobs.csv file, a folder of *_jobs.csv files or a campaign folder (runs/<id>/)")
    ids = [r.run for r in runs]
    dupes = {i for i in ids if ids.count(i) > 1}
    for r in runs:
        if r.run in dupes:
            r.run = f"{r.prefix.parent.name}/{r.run}"
    ids = [r.run for r in runs]
    if len(set(ids)) != len(ids):
        for r in runs:
            r.run = str(r.prefix)
    return runs


# ------------------------------------------------------------------ capacities
class _Cache:
    def __init__(self):
        self.workloads: dict[str, tuple[dict, dict, int | None]] = {}
        self.platforms: dict[str, tuple[int, float, dict]] = {}


def _resolve(value, base: Path | None) -> Path | None:
    if not value or not isinstance(value, str):
        return None
    p = Path(value)
    if p.is_absolute():
        return p
    for root in (Path.cwd(), base, base.parent if base else None):
        if root is not None and (root / p).exists():
            return root / p
    return p


def _workload_info(path: Path, cache: _Cache) -> tuple[dict, dict, int | None]:
    """(job id -> bb per node, coburst header, nb_res) of a workload JSON."""
    key = str(path)
    if key not in cache.workloads:
        doc = _read_json(path)
        jobs = doc.get("jobs")
        if not isinstance(jobs, list):
            raise InputError(path, "jobs", "not a Batsim workload: no jobs array")
        bb = {}
        for k, j in enumerate(jobs):
            if isinstance(j, dict) and "id" in j:
                v = j.get("bb", 0)
                bb[str(j["id"])] = float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0
        header = doc.get("coburst") if isinstance(doc.get("coburst"), dict) else {}
        nb_res = doc.get("nb_res") if isinstance(doc.get("nb_res"), int) else None
        cache.workloads[key] = (bb, header, nb_res)
    return cache.workloads[key]


def _platform_info(path: Path, cache: _Cache) -> tuple[int, float, dict]:
    """(compute nodes, total BB bytes, root zone properties)."""
    key = str(path)
    if key not in cache.platforms:
        from coburst.platforms.info import read_platform

        info = read_platform(path)
        total_bb = float(sum(int(h.properties["bb_capacity"]) for h in info.burst_buffers))
        cache.platforms[key] = (info.nb_compute, total_bb, info.zone_properties)
    return cache.platforms[key]


# ------------------------------------------------------------------ one run
_BB_META = re.compile(r"(?:^|;)bb=([^;]*)")
_SPEEDUP_META = re.compile(r"(?:^|;)speedup=([^;]*)")


def _bb_from_metadata(meta: pd.Series) -> np.ndarray:
    """Bytes placed by the scheduler (``bb=<id>:<bytes>/...`` metadata), NaN without."""
    parts = meta.str.extract(_BB_META, expand=False)
    out = np.full(len(meta), np.nan)
    for k, text in enumerate(parts.to_numpy(object)):
        if isinstance(text, str) and text:
            try:
                out[k] = sum(float(x.split(":", 1)[1]) for x in text.split("/") if ":" in x)
            except ValueError:
                pass
    return out


def _quantiles(values: np.ndarray) -> dict[str, float]:
    v = values[np.isfinite(values)]
    if v.size == 0:
        return dict.fromkeys(STATS, float("nan"))
    q = np.percentile(v, (50, 90, 99))
    return {"mean": float(v.mean()), "p50": float(q[0]), "p90": float(q[1]), "p99": float(q[2]),
            "max": float(v.max())}


def policy_label(params: dict) -> str:
    """The scheduler, with its options when they change decisions (``decision_log`` does
    not): ``window-1``, ``window-1 {"depth": 2}``."""
    sched = str(params.get("scheduler", ""))
    opts = params.get("options")
    if opts in (None, "", "{}", "null") or (isinstance(opts, float) and math.isnan(opts)):
        return sched
    try:
        parsed = json.loads(opts) if isinstance(opts, str) else opts
    except ValueError:
        return f"{sched} {opts}"
    if isinstance(parsed, dict):
        parsed = {k: v for k, v in parsed.items() if k not in NON_DECISION_OPTIONS}
        return f"{sched} {json.dumps(parsed, sort_keys=True)}" if parsed else sched
    return f"{sched} {opts}"


def _engine(prefix: Path) -> str | None:
    sched = Path(f"{prefix}_schedule.csv")
    try:
        with open(sched, encoding="utf-8") as fh:
            header, row = fh.readline().strip().split(","), fh.readline().strip().split(",")
        version = dict(zip(header, row)).get("batsim_version", "")
    except (OSError, ValueError):
        return None
    return "coburst" if "coburst" in version else ("batsim" if version else None)


_NUMBERS = re.compile(r"\d+")


def _max_resource_id(cells: pd.Series) -> int | None:
    """The highest number in any of the ``allocated_resources`` cells (None without)."""
    best = None
    for text in cells.astype(str).unique():
        for x in _NUMBERS.findall(text):
            if best is None or int(x) > best:
                best = int(x)
    return best


def _has_bytes(path: Path, needle: bytes, chunk: int = 8 << 20) -> bool:
    """Whether the file holds ``needle`` (read in chunks)."""
    with open(path, "rb") as fh:
        tail = b""
        while block := fh.read(chunk):
            if needle in tail + block:
                return True
            tail = block[-(len(needle) - 1):]
    return False


class RunReader:
    """One run read chunk by chunk: :meth:`chunks` yields its per-job table in pieces (the rows
    :func:`read_run` returns, in order); :attr:`row` is its run-table row once they are all read.
    Memory: a chunk of the ``_jobs.csv``, plus six numbers per job for the run's metrics."""

    def __init__(self, run: RunInput, *, tau: float = TAU, workload: str | Path | None = None,
                 platform: str | Path | None = None, cache: _Cache | None = None, chunk_bytes: int = CHUNK_BYTES):
        self.run, self.tau, self.chunk_bytes = run, tau, chunk_bytes
        self.cache = cache or _Cache()
        self.jobs_csv = _jobs_file(run.prefix)
        self.row: dict | None = None
        params = dict(run.params)
        params.setdefault("scheduler", run.run)
        if "engine" not in params:
            engine = _engine(run.prefix)
            if engine:
                params["engine"] = engine
        self.params = params
        from coburst.analysis.resizes import read_resizes

        self.resizes = read_resizes(run.prefix)  # (elastic runs: their resizes per job)
        self.wl_path = Path(workload) if workload else _resolve(params.get("workload"), run.base)
        self.pf_path = Path(platform) if platform else _resolve(params.get("platform"), run.base)

    def _jobs(self, df: pd.DataFrame, policy: str, bb_map: dict, bb_zero: bool):
        """The static, non-rejected rows of a folded chunk: (rejected count, their rows, job table)."""
        if "workload_name" in df.columns:
            df = df[df["workload_name"].astype(str).str.fullmatch(STATIC_WORKLOAD)]
        rejected = int((df["final_state"] == "REJECTED").sum())
        df = df[df["final_state"] != "REJECTED"].reset_index(drop=True)
        nodes = df["requested_number_of_resources"].to_numpy(float)
        submit = df["submission_time"].to_numpy(float)
        start = df["starting_time"].to_numpy(float)
        finish = df["finish_time"].to_numpy(float)
        runtime = df["execution_time"].to_numpy(float)
        waiting = start - submit
        turnaround = finish - submit
        with np.errstate(divide="ignore", invalid="ignore"):
            slowdown = np.where(runtime > 0, turnaround / runtime, np.nan)
        bsld = bounded_slowdown_of(turnaround, runtime, self.tau)
        meta = df["metadata"].astype(str) if "metadata" in df.columns else pd.Series([""] * len(df), dtype=str)
        job_ids = df["job_id"].astype(str)
        if bb_map:
            bb_per_node = job_ids.map(bb_map).to_numpy(float)
            bb_bytes = nodes * bb_per_node
        else:
            bb_per_node = np.full(len(df), np.nan)
            bb_bytes = _bb_from_metadata(meta)
            if bb_zero:
                bb_bytes = np.nan_to_num(bb_bytes, nan=0.0)
        speedup = pd.to_numeric(meta.str.extract(_SPEEDUP_META, expand=False), errors="coerce").to_numpy(float)
        jobs = pd.DataFrame({
            "run": self.run.run, "policy": policy, "job_id": job_ids.to_numpy(object),
            "submit": submit, "start": start, "finish": finish, "runtime": runtime, "waiting": waiting,
            "turnaround": turnaround, "slowdown": slowdown, "bounded_slowdown": bsld, "nodes": nodes,
            "requested_time": df["requested_time"].to_numpy(float) if "requested_time" in df else np.nan,
            "final_state": df["final_state"].astype(str).to_numpy(object),
            "success": pd.to_numeric(df["success"], errors="coerce").to_numpy(float) if "success" in df else np.nan,
            "bb_per_node": bb_per_node, "bb_bytes": bb_bytes, "speedup": speedup,
            "allocated_resources": df["allocated_resources"].astype(str).to_numpy(object),
            "energy": job_energy(df)})
        if self.resizes is not None:
            for name, values in self.resizes.columns(df["workload_name"] if "workload_name" in df else
                                                     pd.Series(["w0"] * len(df)), job_ids).items():
                jobs[name] = values
        return rejected, df, jobs

    def _any_placement(self, policy: str) -> bool:
        """Whether a job of the run has a ``bb=`` placement in its metadata (a pass over the file)."""
        if not _has_bytes(self.jobs_csv, b"bb="):
            return False
        for df in iter_folded_jobs(self.jobs_csv, self.chunk_bytes):
            if np.isfinite(self._jobs(df, policy, {}, False)[2]["bb_bytes"].to_numpy()).any():
                return True
        return False

    def chunks(self):
        run, cache, tau, params = self.run, self.cache, self.tau, self.params
        wl_path, pf_path = self.wl_path, self.pf_path
        notes: list[str] = []
        policy = policy_label(params)
        bb_map, header, nb_res = {}, {}, None
        if wl_path is not None:
            if not wl_path.is_file():
                raise InputError(wl_path, None, f"workload of run {run.run} not found")
            bb_map, header, nb_res = _workload_info(wl_path, cache)
        nb_compute, bb_capacity, zone = None, float("nan"), {}
        if pf_path is not None:
            if not pf_path.is_file():
                raise InputError(pf_path, None, f"platform of run {run.run} not found")
            nb_compute, total_bb, zone = _platform_info(pf_path, cache)
            bb_capacity = total_bb if total_bb > 0 else float("nan")
        if (nb_compute is None or nb_compute == 0) and nb_res:
            nb_compute = nb_res
        if math.isnan(bb_capacity) and header.get("bb_nodes") and header.get("bb_capacity"):
            try:
                bb_capacity = float(header["bb_nodes"]) * float(header["bb_capacity"])
            except (TypeError, ValueError):
                pass
        bb_zero = False
        bb_note = None
        if not bb_map and wl_path is None:
            bb_zero = self._any_placement(policy)
            bb_note = ("BB requests: scheduler placements (bb= metadata), no workload given" if bb_zero else
                       "BB metrics NaN: no workload given (BB requests are not in _jobs.csv)")
        parts: dict[str, list] = {k: [] for k in ("submit", "start", "finish", "runtime", "nodes", "bb_bytes")}
        rejected = failed = n_jobs = 0
        max_id, any_speedup = None, False
        for df in iter_folded_jobs(self.jobs_csv, self.chunk_bytes):
            r, df, jobs = self._jobs(df, policy, bb_map, bb_zero)
            rejected += r
            n_jobs += len(jobs)
            failed += int((jobs["final_state"] != "COMPLETED_SUCCESSFULLY").sum())
            any_speedup = any_speedup or bool(np.isfinite(jobs["speedup"].to_numpy()).any())
            if not nb_compute and len(df):
                m = _max_resource_id(df["allocated_resources"])
                if m is not None and (max_id is None or m > max_id):
                    max_id = m
            for k in parts:
                parts[k].append(np.array(jobs[k].to_numpy(float)))  # a copy: a view would keep the chunk
            yield jobs
        submit, start, finish, runtime, nodes, bb_bytes = (
            np.concatenate(parts[k]) if parts[k] else np.empty(0) for k in parts)
        del parts
        if not nb_compute:
            nb_compute = max_id + 1 if max_id is not None else 0
            notes.append("compute nodes: highest allocated id + 1 (no platform)")
        if bb_note:
            notes.append(bb_note)
        waiting = start - submit
        turnaround = finish - submit
        with np.errstate(divide="ignore", invalid="ignore"):
            slowdown = np.where(runtime > 0, turnaround / runtime, np.nan)
        bsld = bounded_slowdown_of(turnaround, runtime, tau)

        row: dict = {"run": run.run, **params, "policy": policy, "path": str(run.prefix)}
        row["jobs"] = n_jobs
        row["rejected"] = rejected
        row["failed"] = failed
        row["tau"] = float(tau)
        for name, values in (("waiting", waiting), ("turnaround", turnaround), ("slowdown", slowdown),
                             ("bounded_slowdown", bsld)):
            for stat, v in _quantiles(values).items():
                row[f"{stat}_{name}"] = v
        if n_jobs:
            t0, t1 = float(np.min(submit)), float(np.max(finish))
        else:
            t0 = t1 = 0.0
        makespan = t1 - t0
        row["makespan"] = makespan
        row["nb_compute"] = nb_compute
        row["bb_capacity"] = bb_capacity
        row.update(read_energy(run.prefix))
        ok = makespan > 0 and nb_compute > 0
        row["utilisation"] = float(np.sum(nodes * runtime) / (nb_compute * makespan)) if ok else float("nan")
        row["mean_queue_nodes"] = timeseries.interval_mean(submit, start, nodes, t0, t1) if makespan > 0 else float("nan")
        row["max_queue_nodes"] = timeseries.step_max(submit, start, nodes)
        row["queue_load_compute"] = row["mean_queue_nodes"] / nb_compute if nb_compute else float("nan")
        has_bb = np.isfinite(bb_bytes).all() and n_jobs > 0
        if has_bb:
            row["mean_queue_bb"] = timeseries.interval_mean(submit, start, bb_bytes, t0, t1) if makespan > 0 else float("nan")
            row["max_queue_bb"] = timeseries.step_max(submit, start, bb_bytes)
        else:
            row["mean_queue_bb"] = row["max_queue_bb"] = float("nan")
        if has_bb and not math.isnan(bb_capacity) and makespan > 0:
            row["bb_utilisation"] = float(np.sum(bb_bytes * runtime) / (bb_capacity * makespan))
            row["queue_load_storage"] = row["mean_queue_bb"] / bb_capacity
        else:
            row["bb_utilisation"] = row["queue_load_storage"] = float("nan")
            if has_bb and math.isnan(bb_capacity):
                notes.append("BB utilisation NaN: no BB capacity (give the platform)")

        cosched = zone.get("platform") == "cosched" or any_speedup
        if cosched and n_jobs:
            from coburst.analysis.cosched import cosched_metrics

            try:
                cpu = int(zone.get("cores_per_unit", 1))
                cores = (int(zone["nodes"]) * int(zone["sockets"]) * int(zone["cores_per_socket"])
                         if zone.get("platform") == "cosched" else nb_compute * cpu)
            except (KeyError, ValueError):
                cpu, cores = 1, nb_compute
                notes.append("co-scheduling: core count of the platform unknown, one core per resource")
            m = cosched_metrics(self.jobs_csv, total_cores=max(cores, 1), cores_per_unit=cpu)
            for key in ("mean_slowdown", "std_slowdown", "mean_slowdown_per_processor", "utilisation",
                        "mean_job_speedup", "weighted_mean_job_speedup", "slowdown_count_percent"):
                row[f"cosched_{key}"] = m[key]
        if self.resizes is not None:
            row.update(self.resizes.totals())
        row["notes"] = "; ".join(notes)
        self.row = row


def read_run(run: RunInput, *, tau: float = TAU, workload: str | Path | None = None,
             platform: str | Path | None = None, cache: _Cache | None = None) -> tuple[dict, pd.DataFrame]:
    """The run-table row (dict) and the per-job table of one run (module doc); :class:`RunReader`
    gives the per-job table in pieces."""
    reader = RunReader(run, tau=tau, workload=workload, platform=platform, cache=cache)
    tables = list(reader.chunks())
    return reader.row, tables[0] if len(tables) == 1 else pd.concat(tables, ignore_index=True)


def _check_tau(tau) -> None:
    if not (isinstance(tau, (int, float)) and math.isfinite(tau) and tau > 0):
        raise InputError("--tau", str(tau), "must be a finite number > 0")


def analyze(paths: Sequence[str | Path], tau: float = TAU, *, workload: str | Path | None = None,
            platform: str | Path | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Analyse Batsim outputs: ``(runs_df, jobs_df)``.

    ``paths``: output prefixes, ``_jobs.csv`` files, folders of ``*_jobs.csv`` files or
    campaign folders (module doc; campaign: ``<c>/runs/<id>/{params.json,status.json,out_jobs.csv}``,
    only ``done`` runs).  ``tau``: bound of the bounded slowdown (s, default 600).
    ``workload`` / ``platform``: files used for every run instead of the ones in its
    ``params.json`` (BB requests and capacities).  Bad input raises
    :class:`coburst.errors.InputError`.  ``runs_df``: one row per run (columns: module doc),
    in discovery order; ``jobs_df``: one row per job, with ``run`` the key into ``runs_df``.
    :func:`analyze_stream`: the same with the per-job table handed over in pieces.
    """
    tables: list[pd.DataFrame] = []
    runs_df = analyze_stream(paths, tau, workload=workload, platform=platform, sink=tables.append)
    jobs_df = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
    return runs_df, jobs_df


def analyze_stream(paths: Sequence[str | Path], tau: float = TAU, *, workload: str | Path | None = None,
                   platform: str | Path | None = None, sink: Callable[[pd.DataFrame], None],
                   chunk_bytes: int = CHUNK_BYTES) -> pd.DataFrame:
    """:func:`analyze`'s ``runs_df``; its ``jobs_df`` handed to ``sink`` in pieces, in order
    (their concatenation is ``jobs_df``), each read from a chunk of a ``_jobs.csv``
    (:class:`RunReader`): memory does not grow with the runs' length."""
    _check_tau(tau)
    runs = discover(paths)
    if not runs:
        raise InputError(", ".join(map(str, paths)) or "(no input)", None, "no finished run to analyse")
    return analyze_runs(runs, tau, workload=workload, platform=platform, sink=sink, chunk_bytes=chunk_bytes)


def analyze_runs(runs: Sequence[RunInput], tau: float = TAU, *, workload: str | Path | None = None,
                 platform: str | Path | None = None, sink: Callable[[pd.DataFrame], None],
                 chunk_bytes: int = CHUNK_BYTES) -> pd.DataFrame:
    """:func:`analyze_stream` of runs already found by :func:`discover`."""
    cache = _Cache()
    rows = []
    for r in runs:
        reader = RunReader(r, tau=tau, workload=workload, platform=platform, cache=cache, chunk_bytes=chunk_bytes)
        for jobs in reader.chunks():
            sink(jobs)
        rows.append(reader.row)
    runs_df = pd.DataFrame(rows)
    # parameters first, metrics after, in a stable order
    first = ["run", "policy"] + [c for c in runs_df.columns if c not in ("run", "policy") and c in _param_names(rows)]
    return runs_df[first + [c for c in runs_df.columns if c not in first]]


def _param_names(rows: list[dict]) -> list[str]:
    """Parameter keys: those between ``run`` and ``policy`` in a row (read_run's order)."""
    names: list[str] = []
    for row in rows:
        for k in list(row)[1:]:
            if k == "policy":
                break
            if k not in names:
                names.append(k)
    return names


#: run-level metric columns (those present in a given table: :func:`metric_columns`)
METRIC_COLUMNS = (
    [f"{s}_{m}" for m in DISTRIBUTION_METRICS for s in STATS]
    + ["makespan", "energy", "energy_total", "utilisation", "bb_utilisation", "mean_queue_nodes", "max_queue_nodes", "queue_load_compute",
       "mean_queue_bb", "max_queue_bb", "queue_load_storage", "cosched_mean_slowdown", "cosched_std_slowdown",
       "cosched_mean_slowdown_per_processor", "cosched_utilisation", "cosched_mean_job_speedup",
       "cosched_weighted_mean_job_speedup", "cosched_slowdown_count_percent", "resizes", "reconfiguration_time"])


def metric_columns(runs_df: pd.DataFrame) -> list[str]:
    """Metric columns of ``runs_df`` that hold at least one finite value."""
    return [c for c in METRIC_COLUMNS if c in runs_df.columns
            and np.isfinite(pd.to_numeric(runs_df[c], errors="coerce")).any()]


def group_columns(runs_df: pd.DataFrame) -> list[str]:
    """Parameters identifying a setting / workload part: every parameter column except
    those naming the policy (scheduler, options) and bookkeeping (run id, path, engine is
    kept), with more than one value or not."""
    skip = set(PARAM_EXCLUDE) | set(BOOKKEEPING) | set(METRIC_COLUMNS) | {"path", "notes"}
    return [c for c in runs_df.columns if c not in skip and not c.startswith("cosched_")]


def write_tables(runs_df: pd.DataFrame, jobs_df: pd.DataFrame, out_dir: str | Path) -> list[Path]:
    """``runs.csv``, ``runs.parquet``, ``jobs.csv``, ``jobs.parquet`` in ``out_dir``, each
    written atomically (a failure leaves no partial file).  :class:`JobsWriter`: the jobs
    tables written piece by piece (the same files)."""
    written = write_run_tables(runs_df, out_dir)
    with JobsWriter(out_dir) as writer:
        writer.write(jobs_df)
    return written + writer.paths


def write_run_tables(runs_df: pd.DataFrame, out_dir: str | Path) -> list[Path]:
    """``runs.csv`` and ``runs.parquet`` of :func:`write_tables`."""
    from coburst.fileio import atomic_write

    out = Path(out_dir)
    with atomic_write(out / "runs.csv", newline="") as fh:
        runs_df.to_csv(fh, index=False, float_format="%.10g")
    with atomic_write(out / "runs.parquet", "wb") as fh:
        _for_parquet(runs_df).to_parquet(fh, index=False)
    return [out / "runs.csv", out / "runs.parquet"]


#: rows of a row group of ``jobs.parquet`` (and of a piece of ``jobs.csv``) written by
#: :class:`JobsWriter`: a table of at most this many rows is one row group, as pandas writes it
JOBS_ROW_GROUP = 1 << 16


def _csv_floats(values: np.ndarray) -> np.ndarray:
    """``"%.10g" % x`` of each value (empty for NaN), as pandas' ``to_csv(float_format="%.10g")``
    writes them; integers the fast way."""
    out = np.empty(len(values), dtype=object)
    with np.errstate(invalid="ignore"):
        ints = np.isfinite(values) & (np.abs(values) < 1e10) & (values == np.trunc(values)) & ~(
            (values == 0) & np.signbit(values))
    if ints.any():
        out[ints] = list(map(str, values[ints].astype(np.int64).tolist()))
    rest = np.flatnonzero(~ints)
    if len(rest):
        fmt = "%.10g".__mod__
        out[rest] = [fmt(x) if x == x else "" for x in values[rest].tolist()]
    return out


def _csv_cells(values: np.ndarray) -> np.ndarray:
    """Text cells as the csv module writes them (quoted when they hold a comma, a quote or a
    line break)."""
    cells = values.astype(object)
    special = [i for i, v in enumerate(pd.unique(cells)) if any(c in v for c in ',"\r\n')]
    if not special:
        return cells
    return np.array(['"' + v.replace('"', '""') + '"' if any(c in v for c in ',"\r\n') else v for v in cells],
                    dtype=object)


def _csv_text(df: pd.DataFrame, header: bool) -> str | None:
    """``df.to_csv(index=False, float_format="%.10g")`` built column by column (much faster
    for many rows); None when a column is not float64 or text (then pandas writes it)."""
    cols = []
    for c in df.columns:
        col = df[c]
        if col.dtype == np.float64:
            cols.append(_csv_floats(col.to_numpy()))
        elif col.dtype == object and all(isinstance(v, str) for v in pd.unique(col.to_numpy())):
            cols.append(_csv_cells(col.to_numpy()))
        else:
            return None
    head = ",".join(_csv_cells(np.array([str(c) for c in df.columns], dtype=object))) + "\n" if header else ""
    if not len(df):
        return head if len(df.columns) > 1 else None
    if len(df.columns) < 2:  # one column: csv quotes an empty cell
        return None
    return head + "".join([",".join(r) + "\n" for r in zip(*cols)])


class JobsWriter:
    """``jobs.csv`` and ``jobs.parquet`` of :func:`write_tables`, written piece by piece
    (:meth:`write`): rows are kept until they fill a row group of :data:`JOBS_ROW_GROUP` rows,
    so memory does not grow with the table.  A table of at most that many rows gives the
    files :func:`write_tables` wrote whole; a longer one, the same rows in row groups of that
    size.  Written atomically: nothing is left if the ``with`` block fails."""

    def __init__(self, out_dir: str | Path, row_group: int = JOBS_ROW_GROUP):
        self.out = Path(out_dir)
        self.row_group = row_group
        self.paths = [self.out / "jobs.csv", self.out / "jobs.parquet"]
        self._buffer: list[pd.DataFrame] = []
        self._rows = 0
        self._stack = None
        self._parquet = None
        self._schema = None
        self.row_groups: list[int] = []  # rows of each row group written

    def __enter__(self):
        import contextlib

        self._stack = contextlib.ExitStack()
        self._created = not self.out.exists()
        return self

    def write(self, df: pd.DataFrame) -> None:
        self._buffer.append(df)
        self._rows += len(df)
        while self._rows > self.row_group:
            table = pd.concat(self._buffer, ignore_index=True)
            self._flush(table.iloc[: self.row_group])
            rest = table.iloc[self.row_group:].reset_index(drop=True)
            self._buffer, self._rows = [rest], len(rest)

    def _open(self):
        from coburst.fileio import atomic_write

        self._csv = self._stack.enter_context(atomic_write(self.paths[0], newline=""))
        self._pq_fh = self._stack.enter_context(atomic_write(self.paths[1], "wb"))

    def _flush(self, df: pd.DataFrame) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        first = self._schema is None
        if first:
            self._open()
        text = _csv_text(df, header=first)
        if text is None:
            df.to_csv(self._csv, index=False, header=first, float_format="%.10g")
        else:
            self._csv.write(text)
        table = pa.Table.from_pandas(_for_parquet(df), schema=self._schema, preserve_index=False)
        if first:
            self._schema = table.schema
            self._parquet = self._stack.enter_context(pq.ParquetWriter(self._pq_fh, self._schema))
        self._parquet.write_table(table, row_group_size=len(df))
        self.row_groups.append(len(df))

    def __exit__(self, kind, value, tb):
        try:
            if kind is None:
                table = pd.concat(self._buffer, ignore_index=True) if self._buffer else pd.DataFrame()
                if self._schema is None:  # the whole table in hand: written as write_tables always did
                    self._open()
                    text = _csv_text(table, header=True)
                    if text is None:
                        table.to_csv(self._csv, index=False, float_format="%.10g")
                    else:
                        self._csv.write(text)
                    _for_parquet(table).to_parquet(self._pq_fh, index=False)
                    self.row_groups.append(len(table))
                elif len(table):
                    self._flush(table)
                self._buffer = []
        except BaseException:
            self._stack.__exit__(*__import__("sys").exc_info())
            raise
        result = self._stack.__exit__(kind, value, tb)
        if kind is not None and self._created:
            import contextlib

            with contextlib.suppress(OSError):
                self.out.rmdir()
        return result


def _for_parquet(df: pd.DataFrame) -> pd.DataFrame:
    """Mixed-type object columns (a parameter that is a number in one run, text in
    another) become text so that pyarrow can type them."""
    out = df.copy()
    for c in out.columns:
        if out[c].dtype == object:
            kinds = {type(v) for v in out[c] if v is not None and not (isinstance(v, float) and math.isnan(v))}
            if len(kinds) > 1:
                out[c] = out[c].map(lambda v: None if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))
    return out


#: columns every saved table has (coburst analyze writes them all)
RUN_COLUMNS = ("run", "policy")
JOB_COLUMNS = ("run", "policy", "job_id", "submit", "start", "finish", "runtime", "waiting", "turnaround", "slowdown",
               "bounded_slowdown", "nodes")
#: per-job columns that must hold numbers (NaN allowed) in a saved table
JOB_NUMBERS = ("submit", "start", "finish", "runtime", "waiting", "turnaround", "slowdown", "bounded_slowdown", "energy",
               "nodes", "requested_time", "bb_per_node", "bb_bytes", "speedup")


def _procset_text(text: str) -> bool:
    """Whether ``text`` is an interval set as Batsim writes them (``0-3 8``, increasing bounds)."""
    from procset import ProcSet

    if not re.fullmatch(r"\d+(?:-\d+)?(?: \d+(?:-\d+)?)*", text):
        return False
    try:
        ProcSet.from_str(text)
    except (ValueError, TypeError):
        return False
    return True


def _raise_at(path: Path, ext: str, bad: pd.Series, column: str, problem: str, cells: pd.Series | None = None) -> None:
    """An InputError at the first row where ``bad`` holds (CSV: its line, the header being
    line 1; Parquet: its row), if any; ``{cell}`` in ``problem`` becomes that row's cell of
    ``cells`` (its ``repr``)."""
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        where = f"line {i + 2}" if ext == "csv" else f"row {i + 1}"
        if cells is not None:
            problem = problem.replace("{cell}", repr(cells.iloc[i]))
        raise InputError(path, f"{where}, column {column}", problem)


def _check_numbers(df: pd.DataFrame, path: Path, columns: list[str], ext: str) -> None:
    """Every cell of ``columns`` a number (empty = NaN): else an InputError naming the file,
    the line (CSV: header = line 1) or row (Parquet), the column and the cell."""
    for c in columns:
        if pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]):
            continue
        values = pd.to_numeric(df[c], errors="coerce")
        bad = values.isna() & df[c].notna() & (df[c].astype(str).str.strip() != "")
        if pd.api.types.is_bool_dtype(df[c]):
            bad = df[c].notna()
        _raise_at(path, ext, bad, c, "expected a number, got {cell}: the table is damaged; rebuild it with "
                                     "coburst analyze", df[c])
        df[c] = values


def _check_tables(runs: pd.DataFrame, jobs: pd.DataFrame, r: Path, j: Path, ext: str) -> None:
    """The checks of :func:`read_tables`: the columns coburst analyze writes, non-empty run and
    policy cells, resource sets as Batsim writes them, no job of a run the run table does not
    hold, numbers where numbers belong (converted in place)."""
    cut = "the table is damaged or cut short; rebuild it with coburst analyze"
    for f, df, needed in ((r, runs, RUN_COLUMNS), (j, jobs, JOB_COLUMNS)):
        if "run" not in df.columns:
            raise InputError(f, "header", "not a coburst analyze table: no 'run' column")
        missing = [c for c in needed if c not in df.columns]
        if missing:
            raise InputError(f, "header", f"column {missing[0]!r} is missing"
                             + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
                             + ": the table is damaged; rebuild it with coburst analyze")
    if runs.empty:
        raise InputError(r, None, "no run in this table (empty or cut short): rebuild it with coburst analyze")
    for f, df in ((r, runs), (j, jobs)):
        for c in ("run", "policy") + (("allocated_resources",) if df is jobs and
                                        "allocated_resources" in df.columns else ()):
            _raise_at(f, ext, df[c].isna() | (df[c].astype(str).str.strip() == ""), c, f"empty cell: {cut}")
    if "allocated_resources" in jobs.columns:
        cells = jobs["allocated_resources"].astype(str)
        bad_values = {v for v in cells.unique() if not _procset_text(v)}
        _raise_at(j, ext, cells.isin(bad_values), "allocated_resources",
                  "expected resource ids like '0-3 8', got {cell}: " + cut, jobs["allocated_resources"])
    unknown = sorted(set(jobs["run"].astype(str)) - set(runs["run"].astype(str)))
    if unknown:
        raise InputError(j, "column run", f"run {unknown[0]!r} is not in {r.name}: the tables do not belong "
                                          "together; rebuild them with coburst analyze")
    _check_numbers(runs, r, [c for c in METRIC_COLUMNS if c in runs.columns], ext)
    _check_numbers(jobs, j, [c for c in JOB_NUMBERS if c in jobs.columns], ext)


def read_tables(path: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tables written by :func:`write_tables` (a folder holding ``runs.parquet`` and
    ``jobs.parquet``, or ``runs.csv`` and ``jobs.csv``), checked (:func:`_check_tables`)."""
    p = Path(path)
    for ext, reader in (("parquet", pd.read_parquet), ("csv", pd.read_csv)):
        r, j = p / f"runs.{ext}", p / f"jobs.{ext}"
        if r.is_file() and j.is_file():
            tables = []
            for f in (r, j):
                try:
                    tables.append(reader(f) if ext == "parquet" else reader(f, dtype={"job_id": str, "run": str}))
                except Exception as exc:  # pyarrow / pandas parse errors of a damaged table
                    reason = " ".join(str(exc).split()) or type(exc).__name__
                    raise InputError(f, None, f"cannot read this analysis table ({reason}): rebuild it with "
                                              "coburst analyze") from None
            runs, jobs = tables
            _check_tables(runs, jobs, r, j, ext)
            runs["run"] = runs["run"].astype(str)
            jobs["run"] = jobs["run"].astype(str)
            return runs, jobs
    raise InputError(p, None, "no runs.parquet/jobs.parquet (or runs.csv/jobs.csv) of coburst analyze here")


def is_tables_dir(path: str | Path) -> bool:
    p = Path(path)
    return p.is_dir() and ((p / "runs.parquet").is_file() or (p / "runs.csv").is_file()) and not (p / "runs").is_dir()


def retau(runs: pd.DataFrame, jobs: pd.DataFrame, tau: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The tables with the bounded slowdown recomputed for ``tau`` (from each job's turnaround
    and runtime, as :func:`read_run` computes it); unchanged when they already use ``tau``."""
    _check_tau(tau)
    if "tau" in runs.columns and len(runs) and (runs["tau"].astype(float) == float(tau)).all():
        return runs, jobs
    runs, jobs = runs.copy(), jobs.copy()
    jobs["bounded_slowdown"] = bounded_slowdown_of(jobs["turnaround"].to_numpy(float), jobs["runtime"].to_numpy(float),
                                                   tau)
    by_run = {run: grp["bounded_slowdown"].to_numpy(float) for run, grp in jobs.groupby("run", sort=False)}
    stats = [_quantiles(by_run.get(run, np.empty(0))) for run in runs["run"]]
    for stat in STATS:
        runs[f"{stat}_bounded_slowdown"] = np.array([s[stat] for s in stats], dtype=float)
    runs["tau"] = float(tau)
    return runs, jobs


def load(paths: Sequence[str | Path], tau: float = TAU, **kw) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tables from ``coburst analyze`` folders and/or raw outputs (analysed on the fly), all with
    the bounded slowdown for ``tau`` (tables analysed with another tau are recomputed)."""
    tables = [retau(*read_tables(p), tau) for p in paths if is_tables_dir(p)]
    raw = [p for p in paths if not is_tables_dir(p)]
    if raw:
        tables.append(analyze(raw, tau, **kw))
    runs = pd.concat([t[0] for t in tables], ignore_index=True)
    jobs = pd.concat([t[1] for t in tables], ignore_index=True)
    return runs, jobs


def add_bound_columns(runs_df, paths, heatmap, *, workload=None, platform=None, alone: str | float = "best",
                      option: str = "--heatmap"):
    """``runs_df`` (:func:`coburst.analysis.tables.analyze` of ``paths``) with two columns:
    ``cosched_bound`` (the makespan lower bound of each run's workload on its platform with
    ``heatmap``; files from ``workload`` / ``platform`` or the run's ``params.json``) and
    ``makespan_over_bound`` (``makespan`` / bound: how far the run is from the best possible
    schedule, at most; ``_jobs.csv`` rounds dates to the microsecond, so a run that reaches the
    bound may show 0.9999999).  A run whose workload or platform is unknown is an error naming it."""
    from coburst.analysis.cosched import makespan_bound_of

    runs = {r.run: r for r in discover(paths, notice=None)}
    cache: dict = {}
    bounds = []
    for run_id in runs_df["run"]:
        run = runs[run_id]
        files = {}
        for name, given in (("workload", workload), ("platform", platform)):
            path = Path(given) if given else _resolve(run.params.get(name), run.base)
            if path is None:
                raise InputError(option, f"run {run_id}", f"the makespan bound needs the run's {name}: give "
                                 f"--{name} (or analyse a campaign whose params.json names it)")
            files[name] = path
        bounds.append(makespan_bound_of(files["workload"], files["platform"], heatmap, alone=alone,
                                        cache=cache).makespan)
    out = runs_df.copy()
    out["cosched_bound"] = bounds
    out["makespan_over_bound"] = [m / b if b > 0 else math.nan for m, b in zip(out["makespan"], bounds)]
    return out
