"""SWF jobs -> Batsim jobs under the two job models of Kopański 2020, §2.4.

Selection policy (:func:`select_jobs`; SWF writes ``-1`` for unknown values)
    =====================  =====================================================================
    field                  policy
    =====================  =====================================================================
    submit time (2)        unknown or negative: job dropped
    run time (4)           unknown or <= 0: job dropped (nothing to simulate)
    processors (8, 5)      requested processors; when unknown, allocated processors; when both
                           are unknown or <= 0: job dropped
    width                  wider than the platform's compute nodes: job dropped (§2.3)
    requested time (9)     the walltime; unknown or <= 0: the run time is used (counted in the
                           report).  A job whose run time exceeds its requested time is kept
                           and will be killed at its walltime, as on the real machine.
    requested memory (10)  ignored by default (burst buffers drawn from the model, §2.5);
                           with ``bb_source="memory"`` a positive value (KB per processor) is
                           used as the request, unknown ones are drawn from the model
    status (11), others    not used; every job is kept whatever its status
    =====================  =====================================================================

    Kept jobs are ordered by (submit time, job number); ids become 0, 1, ... in that order,
    and submit times are shifted so that the first kept job is submitted at 0.  The SWF job
    number travels in the job field ``swf_id``.

Randomness
    Job ``j`` draws from ``numpy.random.default_rng([seed, swf_job_number])``: first the
    burst-buffer request (one standard normal), then its communication amount θ.  A job's
    draws therefore depend only on the seed and its SWF number: the split parts, the
    ``--max-jobs`` prefixes and the full workload give every job the same values.

Job fields (both models)
    ``id``, ``subtime``, ``walltime`` (= requested time), ``res``, ``profile`` (``"p<id>"``),
    ``bb`` (burst-buffer request in bytes **per compute node**, :mod:`coburst.models.bb_request`)
    and ``swf_id``.

Alloc-Only model
    One ``parallel_homogeneous`` profile: ``cpu = round(runtime * speed)`` flops per node and
    ``com = θ`` bytes between every pair of distinct nodes, θ ~ Normal(100 MB, 20 %) drawn per
    job (clipped at 0; 0 for one-node jobs, which have no pair).

IO-Aware model — the ``io`` job field
    Compute per node is shortened to leave room for I/O::

        cpu = round(speed * max(runtime - kappa * bb / bandwidth, (1 - io_cap) * runtime))

    with ``kappa = 40``, ``bandwidth`` the compute network link bandwidth and ``io_cap = 0.95``
    (I/O may take at most 95 % of the time).  It is cut into
    ``N = min(max(round(cpu / (phase_seconds * speed)), 1), max_phases)`` equal phases
    (``phase_seconds = 3600``, ``max_phases = 10``, as in the thesis' scheduler options).
    The static job's ``profile`` is a ``parallel_homogeneous`` with the whole shortened
    computation and ``N * θ`` bytes per pair, so that an IO-unaware scheduler can still run
    it as one phase.  The job also carries::

        "io": {
          "phases": N,                       # compute phases
          "checkpoints": N - 1,              # one after every compute phase but the last
          "stage_in":   {"type": "data_staging", "nb_bytes": bb, "from": "pfs", "to": "bb"},
          "compute":    {"type": "parallel_homogeneous", "cpu": cpu / N, "com": θ},
          "checkpoint": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 0,
                         "bytes_to_write": ckpt, "storage": "bb"},
          "flush":      {"type": "data_staging", "nb_bytes": ckpt, "from": "bb", "to": "pfs"},
          "stage_out":  {"type": "data_staging", "nb_bytes": bb, "from": "bb", "to": "pfs"}
        }

    where ``ckpt = floor(checkpoint_fraction * bb)`` (0.5, as the thesis' scheduler).  Every
    value is a complete Batsim 4.2 profile, ready for ``REGISTER_PROFILE`` (run Batsim with
    ``--enable-dynamic-jobs``).  Amounts are per compute node; the
    storage labels ``pfs`` and ``bb`` are mapped in ``storage_mapping`` to the PFS host and to
    the burst-buffer host holding that node's space.  How the thesis ran a job (the scheduler
    rejects the static job once its compute nodes and burst buffers are reserved, then
    submits dynamic sub-jobs whose walltime is what remains of the job's walltime; coburst's
    own execution of this recipe, with its few deliberate differences, is
    :mod:`coburst.adapter.io_aware`):

    1. stage-in: one ``stage_in`` sub-job per compute node, allocation {PFS, its BB node},
       ``storage_mapping = {"pfs": PFS, "bb": BB}``; compute starts when all have finished;
    2. for phase 1..N: one ``compute`` sub-job on all the job's compute nodes; after every
       phase but the last, one ``checkpoint`` sub-job per compute node, allocation {node, its
       BB node}, ``storage_mapping = {"bb": BB}`` (the job is blocked meanwhile); when all
       checkpoints have finished, one ``flush`` sub-job per node (BB -> PFS, no walltime)
       starts together with the next compute phase and overlaps it;
    3. stage-out: one ``stage_out`` sub-job per compute node; the job is over when every
       stage-out and every flush has finished.  If any sub-job is killed (walltime), the
       job is over and counts as killed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from coburst.errors import InputError
from coburst.models.bb_request import BBRequestModel
from coburst.workloads.swf import SwfJob

MODELS = ("alloc-only", "io-aware")


@dataclass(frozen=True)
class ModelParams:
    """Parameters of the job models (defaults: the thesis)."""

    model: str = "alloc-only"
    seed: int = 0
    kappa: float = 40.0
    comm_mean: float = 100e6  # bytes, θ's mean
    comm_cv: float = 0.2  # θ's standard deviation / mean
    phase_seconds: float = 3600.0
    max_phases: int = 10
    checkpoint_fraction: float = 0.5
    io_cap: float = 0.95
    bb_source: str = "model"  # or "memory"

    def check(self) -> None:
        if self.model not in MODELS:
            raise InputError("--model", None, f"unknown job model {self.model!r} (choose {', '.join(MODELS)})")
        if self.bb_source not in ("model", "memory"):
            raise InputError("--bb-source", None, "choose 'model' or 'memory'")
        if self.kappa < 0:
            raise InputError("--kappa", None, f"must be >= 0, got {self.kappa}")
        if not 0 <= self.io_cap < 1:
            raise InputError("--io-cap", None, f"must be in [0, 1), got {self.io_cap}")
        if self.max_phases < 1 or self.phase_seconds <= 0:
            raise InputError("--max-phases", None, "phases must be >= 1 and phase length > 0")


@dataclass(frozen=True)
class PlatformParams:
    """What the job models need to know about the platform."""

    nb_res: int  # compute nodes
    speed: float  # flop/s of a compute node
    bandwidth: float  # bytes/s of a compute network link
    bb_capacity: int  # bytes per burst-buffer node
    nb_bb: int  # number of burst-buffer nodes

    @classmethod
    def from_platform(cls, info) -> "PlatformParams":
        """From a :class:`coburst.platforms.info.PlatformInfo`."""
        if info.link_bandwidth is None:
            raise InputError(info.path, None, "cannot tell the compute network bandwidth (no 'link_bandwidth' "
                             "zone property and no <cluster bw>)")
        return cls(nb_res=info.nb_compute, speed=info.host_speed, bandwidth=info.link_bandwidth,
                   bb_capacity=info.bb_capacity, nb_bb=info.nb_bb)


@dataclass
class FilterReport:
    """How many SWF records each rule dropped or changed."""

    records: int = 0
    kept: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    walltime_from_runtime: int = 0
    procs_from_allocated: int = 0
    truncated: int = 0

    def drop(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1


@dataclass
class Selected:
    swf: SwfJob
    res: int
    walltime: float


@dataclass
class ConvertedJob:
    """A job before numbering: everything but its id and profile name."""

    swf_id: int
    submit: float  # absolute SWF submit time
    walltime: float
    res: int
    bb: int
    profile: dict
    io: dict | None = None


def _num(x: float) -> int | float:
    """Integers print as integers in the JSON output."""
    return int(x) if float(x).is_integer() else float(x)


def select_jobs(jobs: Iterable[SwfJob], nb_res: int, max_jobs: int | None = None) -> tuple[list[Selected], FilterReport]:
    """Apply the selection policy of the module docstring."""
    report = FilterReport()
    kept: list[Selected] = []
    for job in jobs:
        report.records += 1
        if job.submit_time < 0:
            report.drop("unknown submit time")
            continue
        if job.run_time <= 0:
            report.drop("unknown or zero run time")
            continue
        res = job.requested_procs
        if res <= 0:
            res = job.allocated_procs
            if res > 0:
                report.procs_from_allocated += 1
        if res <= 0:
            report.drop("unknown processor count")
            continue
        if res > nb_res:
            report.drop(f"wider than the platform ({nb_res} nodes)")
            continue
        walltime = job.requested_time
        if walltime <= 0:
            walltime = job.run_time
            report.walltime_from_runtime += 1
        kept.append(Selected(job, res, walltime))
    kept.sort(key=lambda s: (s.swf.submit_time, s.swf.job_number))
    if max_jobs is not None and len(kept) > max_jobs:
        report.truncated = len(kept) - max_jobs
        kept = kept[:max_jobs]
    report.kept = len(kept)
    return kept, report


def job_rng(seed: int, swf_id: int) -> np.random.Generator:
    """The generator of one job (see "Randomness" in the module docstring)."""
    return np.random.default_rng([int(seed) & 0xFFFFFFFFFFFFFFFF, int(swf_id) & 0xFFFFFFFFFFFFFFFF])


def _round(x: float) -> int:
    return int(math.floor(x + 0.5))


def io_aware_compute(runtime: float, bb: int, plat: PlatformParams, params: ModelParams) -> int:
    """Shortened compute per node in flops (Kopański 2020, §2.4 formula, kappa and I/O cap)."""
    seconds = max(runtime - params.kappa * bb / plat.bandwidth, (1.0 - params.io_cap) * runtime)
    return _round(plat.speed * seconds)


def io_phases(cpu: int, plat: PlatformParams, params: ModelParams) -> int:
    """Number of compute phases: about one per ``phase_seconds``, between 1 and ``max_phases``."""
    return min(max(_round(cpu / (params.phase_seconds * plat.speed)), 1), params.max_phases)


def io_field(cpu: int, theta: int, bb: int, plat: PlatformParams, params: ModelParams) -> dict:
    """The ``io`` job field (schema in the module docstring)."""
    phases = io_phases(cpu, plat, params)
    ckpt = int(math.floor(params.checkpoint_fraction * bb))
    return {
        "phases": phases,
        "checkpoints": phases - 1,
        "stage_in": {"type": "data_staging", "nb_bytes": bb, "from": "pfs", "to": "bb"},
        "compute": {"type": "parallel_homogeneous", "cpu": _round(cpu / phases), "com": theta},
        "checkpoint": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 0, "bytes_to_write": ckpt,
                       "storage": "bb"},
        "flush": {"type": "data_staging", "nb_bytes": ckpt, "from": "bb", "to": "pfs"},
        "stage_out": {"type": "data_staging", "nb_bytes": bb, "from": "bb", "to": "pfs"},
    }


def convert_job(sel: Selected, plat: PlatformParams, params: ModelParams, bb_model: BBRequestModel) -> ConvertedJob:
    """One selected SWF job under the chosen model (draws: BB request, then θ)."""
    job = sel.swf
    rng = job_rng(params.seed, job.job_number)
    raw_bb = float(bb_model.draw_raw_bytes(rng))
    theta_raw = float(rng.normal(params.comm_mean, params.comm_cv * params.comm_mean))
    if params.bb_source == "memory" and job.requested_memory > 0:
        raw_bb = job.requested_memory * 1024.0
    bb = bb_model.finish(raw_bb, sel.res, job.run_time, plat.bb_capacity, plat.nb_bb)
    theta = max(_round(theta_raw), 0) if sel.res > 1 else 0
    if params.model == "alloc-only":
        profile = {"type": "parallel_homogeneous", "cpu": _round(job.run_time * plat.speed), "com": theta}
        io = None
    else:
        cpu = io_aware_compute(job.run_time, bb, plat, params)
        io = io_field(cpu, theta, bb, plat, params)
        profile = {"type": "parallel_homogeneous", "cpu": cpu, "com": theta * io["phases"]}
    return ConvertedJob(swf_id=job.job_number, submit=job.submit_time, walltime=sel.walltime, res=sel.res,
                        bb=bb, profile=profile, io=io)


def convert(selected: list[Selected], plat: PlatformParams, params: ModelParams,
            bb_model: BBRequestModel | None = None) -> list[ConvertedJob]:
    """Convert every selected job (order kept)."""
    params.check()
    bb_model = bb_model or BBRequestModel.load()
    return [convert_job(sel, plat, params, bb_model) for sel in selected]


def build_workload(jobs: list[ConvertedJob], nb_res: int, meta: dict | None = None,
                   description: str | None = None) -> dict:
    """Number the jobs 0.. and shift submit times to 0; returns the workload object."""
    t0 = jobs[0].submit if jobs else 0
    out_jobs = []
    profiles = {}
    for i, job in enumerate(jobs):
        name = f"p{i}"
        entry = {"id": i, "subtime": _num(job.submit - t0), "walltime": _num(job.walltime), "res": job.res,
                 "profile": name, "bb": job.bb, "swf_id": job.swf_id}
        if job.io is not None:
            entry["io"] = job.io
        out_jobs.append(entry)
        profiles[name] = job.profile
    doc: dict = {}
    if description:
        doc["description"] = description
    doc["nb_res"] = nb_res
    if meta:
        doc["coburst"] = meta
    doc["jobs"] = out_jobs
    doc["profiles"] = profiles
    return doc


def swf_to_workloads(swf_path: str, platform, params: ModelParams, *, max_jobs: int | None = None,
                     split: int | None = None, bb_model: BBRequestModel | None = None,
                     platform_name: str | None = None) -> tuple[list[dict], FilterReport]:
    """Read an SWF log and return the workload (or its ``split`` parts) and the report.

    ``platform`` is a :class:`coburst.platforms.info.PlatformInfo`.
    """
    from pathlib import Path

    from coburst.workloads.split import period_bounds, split_jobs
    from coburst.workloads.swf import read_swf

    params.check()
    plat = PlatformParams.from_platform(platform)
    log = read_swf(swf_path)
    selected, report = select_jobs(log.jobs, plat.nb_res, max_jobs)
    if not selected:
        raise InputError(swf_path, None, "no job left after filtering (see the selection policy in "
                         "coburst/workloads/jobmodels.py)")
    converted = convert(selected, plat, params, bb_model)
    base_meta = {
        "generator": "coburst workload swf",
        "source": Path(swf_path).name,
        "model": params.model,
        "seed": params.seed,
        "platform": platform_name or Path(platform.path).name,
        "host_speed": _num(plat.speed),
        "link_bandwidth": _num(plat.bandwidth),
        "bb_capacity": plat.bb_capacity,
        "bb_nodes": plat.nb_bb,
    }
    if params.model == "io-aware":
        base_meta["kappa"] = _num(params.kappa)
    name = Path(swf_path).stem
    if not split:
        meta = dict(base_meta, swf_jobs=report.records, jobs=len(converted))
        return [build_workload(converted, plat.nb_res, meta, f"{name}, {params.model}, {len(converted)} jobs")], report
    parts = split_jobs(converted, split)
    bounds = period_bounds(converted, split)
    docs = []
    for k, (part, (start, end)) in enumerate(zip(parts, bounds), start=1):
        meta = dict(base_meta, part=k, parts=split, period_start=_num(start), period_end=_num(end),
                    jobs=len(part))
        docs.append(build_workload(part, plat.nb_res, meta,
                                   f"{name}, {params.model}, part {k} of {split}, {len(part)} jobs"))
    return docs, report
