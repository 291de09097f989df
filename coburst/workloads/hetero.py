"""Workloads whose run time depends on the node: Sánchez Sousa 2023, §5.1.1 and §5.1.2.

Every job is ``parallel_homogeneous`` work, not a delay: ``cpu`` = the operations of one
task (flops), ``com`` = 0, so a task on a core of speed ``s`` flop/s takes ``cpu / s``
seconds -- IRMaSim's ``Core.get_next_step`` (``ops / (mops x 1e6)``) with its memory
speed-up at 1.  One task = one core = one Batsim resource (``res`` = tasks).

Job fields (the shared heterogeneous format; Batsim forwards them in ``job.json_dict``)
    ``id``, ``subtime``, ``res``, ``profile`` (named ``cpu<flops>``, one per distinct
    amount), then IRMaSim's ``req_time`` (s: the user's estimate), ``req_ops`` (operations
    per task), ``ipc``, ``mem`` (per task, IRMaSim's unit: MB), ``mem_vol``, ``nodes`` and
    ``ntasks_per_node`` (IRMaSim's layout: the generated jobs, like IRMaSim's ``res`` jobs and
    swf2irmasim's ``"nodes": 1``, put all their tasks on one node; IRMaSim conversions keep
    the file's, :mod:`coburst.workloads.irmasim`); SWF-derived jobs add ``swf_id``.  **No walltime** (IRMaSim never kills a job; Batsim
    kills at the walltime): ``walltime`` is left out (Batsim's -1) and the estimate travels
    as ``req_time``.  ``nb_res`` = the widest job.

§5.1.1, heterogeneity evaluation (:func:`synthetic`)
    512 single-task jobs, all submitted at 0 (Braun et al. 2001's static mapping setting),
    requested times "from 100 to 3000 seconds": drawn uniformly on the integers 100..3000
    (IRMaSim's workloads use whole seconds) with ``numpy.random.default_rng(seed)``; five
    workloads = seeds 0-4.  Operations from the requested time, as §3.3.2 defines it:
    ``req_time(j) = ETC(j, slowest node)``, so ``req_ops = req_time x ref_speed`` with the
    reference ``ref_speed`` = 1 Gflop/s = the slowest clock the Tables 2-3 ranges allow (1 GHz,
    1 flop per cycle, :mod:`coburst.platforms.hetero`): a job runs exactly its requested time
    on a 1 GHz core and ``req_time / clock`` on a faster one.  (Check: 512 jobs of 1550 s on
    average are 7.9e14 flop; the expected capacity of Table 2's platform, about 98 Gflop/s,
    gives a perfectly balanced total time of ~8100 s, Table 3's ~320 Gflop/s ~2500 s: the
    thesis reports total times of 8500-10000 s and 2100-3500 s.)

§5.1.2, realistic environment (:func:`realistic`, any SWF log, read by :mod:`coburst.workloads.swf`)
    Jobs as IRMaSim's ``utils/swf2irmasim_workload.py`` makes them: jobs with run time <= 0
    dropped (aborted), tasks = allocated processors (field 5; the requested ones, field 8,
    when unknown; dropped when both are unknown), ``req_ops = run time x ref_speed`` (its
    ``--freq``, default 1e9), ``req_time`` = requested time (field 9; the run time when
    unknown, counted in the report), ``ipc`` 1, ``mem`` 0, ``mem_vol`` 0.  Jobs wider than
    ``max_res`` (default 32, the widest node of Tables 4-5: a job runs on one node in the
    thesis' model, §3.1) are cut to ``max_res`` tasks (swf2irmasim's ``--max-ntasks``; counted).
    Then the thesis' batching: "the submit time of the jobs has been rounded to 10^5", so
    jobs arrive in daily groups: ``subtime`` rounded to the nearest multiple of ``batch``
    (1e5 s; ``rounding="down"``/``"up"`` to floor/ceil, 0 = no rounding).  A slice of
    ``length`` (500) consecutive jobs in (submit time, job number) order, from job ``start``
    (0-based, after filtering) or, with ``start="random"``, from a start drawn uniformly in
    0..n-length with the seed (IRMaSim's ``trajectory_origin: random``; the thesis ran five
    500-job simulations from ~1500 jobs, so its slices overlapped).  Submit times are
    shifted so that the slice's first job arrives at 0 (IRMaSim subtracts the first job's
    submit time).  Job ids are 0.. in slice order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coburst.errors import InputError

__all__ = ["REF_SPEED", "SwfReport", "make_job", "realistic", "synthetic", "workload_doc"]

#: reference speed of requested times: 1 Gflop/s (module doc)
REF_SPEED = 1e9
ROUNDINGS = ("nearest", "down", "up")


def profile_name(cpu: int | float) -> str:
    return f"cpu{int(cpu)}" if float(cpu).is_integer() else f"cpu{cpu!r}"


def make_job(job_id: int | str, subtime: float, res: int, cpu: int | float, *, req_time: float, req_ops: float,
             ipc: float = 1, mem: float = 0, mem_vol: float = 0, **extra: Any) -> dict[str, Any]:
    """One job in the shared format (module doc); ``cpu`` = flops per task."""
    job = {"id": job_id, "subtime": _int_if_whole(subtime), "res": int(res), "profile": profile_name(cpu),
           "req_time": _int_if_whole(req_time), "req_ops": _int_if_whole(req_ops), "ipc": _int_if_whole(ipc),
           "mem": _int_if_whole(mem), "mem_vol": _int_if_whole(mem_vol), "nodes": 1, "ntasks_per_node": int(res)}
    job.update(extra)
    return job


def _int_if_whole(x: float | int) -> float | int:
    if isinstance(x, int) and not isinstance(x, bool):
        return x
    x = float(x)
    return int(x) if x.is_integer() and abs(x) < 2**63 else x


def workload_doc(jobs: list[dict], description: str, meta: dict[str, Any]) -> dict:
    """The Batsim workload: jobs, one ``parallel_homogeneous`` profile per distinct ``cpu``."""
    profiles: dict[str, dict] = {}
    for job in jobs:
        name = job["profile"]
        if name not in profiles:
            cpu = name[3:]
            value = int(cpu) if cpu.isdigit() else float(cpu)
            profiles[name] = {"type": "parallel_homogeneous", "cpu": value, "com": 0}
    return {"description": description, "coburst": meta, "nb_res": max((j["res"] for j in jobs), default=1),
            "jobs": jobs, "profiles": profiles}


# ------------------------------------------------------------------------------ §5.1.1
def synthetic(seed: int, jobs: int = 512, req_min: int = 100, req_max: int = 3000,
              ref_speed: float = REF_SPEED) -> dict:
    """§5.1.1's workload number ``seed`` (module doc)."""
    import numpy as np

    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InputError("--jobs", None, f"must be an integer >= 1, got {jobs!r}")
    if not (isinstance(req_min, int) and isinstance(req_max, int)) or req_min < 1 or req_max < req_min:
        raise InputError("--req-max", None, f"requested times need 1 <= min <= max, got {req_min}..{req_max}")
    if not (math.isfinite(ref_speed) and ref_speed > 0):
        raise InputError("--ref-speed", None, f"must be > 0, got {ref_speed!r}")
    rng = np.random.default_rng(seed)
    times = rng.integers(req_min, req_max, size=jobs, endpoint=True)
    out = []
    for k, t in enumerate(times.tolist()):
        ops = _int_if_whole(t * ref_speed)
        out.append(make_job(k, 0, 1, ops, req_time=t, req_ops=ops))
    meta = {"generator": "hetero-synthetic", "source": "Sanchez Sousa 2023, 5.1.1", "seed": seed, "jobs": jobs,
            "req_time": [req_min, req_max], "ref_speed": _int_if_whole(ref_speed)}
    return workload_doc(out, f"{jobs} single-task jobs, requested time {req_min}-{req_max} s at "
                             f"{ref_speed:g} flop/s, all submitted at 0 (seed {seed})", meta)


# ------------------------------------------------------------------------------ §5.1.2
@dataclass
class SwfReport:
    records: int = 0
    kept: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    req_from_runtime: int = 0
    capped: int = 0
    start: int = 0
    batches: int = 0

    def drop(self, why: str) -> None:
        self.dropped[why] = self.dropped.get(why, 0) + 1


def round_subtime(t: float, batch: float, rounding: str = "nearest") -> float:
    """``t`` to a multiple of ``batch`` (module doc); ``batch`` 0: unchanged."""
    if batch == 0:
        return t
    q = t / batch
    k = math.floor(q + 0.5) if rounding == "nearest" else math.floor(q) if rounding == "down" else math.ceil(q)
    return k * batch


def realistic(swf_path: str | Path, *, start: int | str = 0, length: int = 500, seed: int = 0,
              batch: float = 1e5, rounding: str = "nearest", max_res: int | None = 32,
              ref_speed: float = REF_SPEED, log=None) -> tuple[dict, SwfReport]:
    """§5.1.2's realistic environment from an SWF log (module doc); ``log``: the file already
    read by :func:`coburst.workloads.swf.read_swf` (several slices of one log)."""
    import numpy as np

    from coburst.workloads.swf import read_swf

    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise InputError("--length", None, f"must be an integer >= 1, got {length!r}")
    if not (math.isfinite(batch) and batch >= 0):
        raise InputError("--batch", None, f"must be >= 0, got {batch!r}")
    if rounding not in ROUNDINGS:
        raise InputError("--rounding", None, f"must be one of {', '.join(ROUNDINGS)}, got {rounding!r}")
    if max_res is not None and max_res < 1:
        raise InputError("--max-res", None, f"must be >= 1, got {max_res}")
    if not (math.isfinite(ref_speed) and ref_speed > 0):
        raise InputError("--ref-speed", None, f"must be > 0, got {ref_speed!r}")
    if log is None:
        log = read_swf(swf_path)
    report = SwfReport(records=len(log.jobs))
    kept = []
    for job in log.jobs:
        if job.submit_time < 0:
            report.drop("unknown submit time")
            continue
        if job.run_time <= 0:
            report.drop("run time <= 0 (aborted)")
            continue
        procs = job.allocated_procs if job.allocated_procs > 0 else job.requested_procs
        if procs <= 0:
            report.drop("unknown processors")
            continue
        kept.append((job.submit_time, job.job_number, job, procs))
    kept.sort(key=lambda x: (x[0], x[1]))
    n = len(kept)
    if n == 0:
        raise InputError(swf_path, None, "no job left after filtering (every job aborted or without processors)")
    if length > n:
        raise InputError("--length", None, f"{length} jobs asked, the log has {n} usable jobs")
    if start == "random":
        first = int(np.random.default_rng(seed).integers(0, n - length, endpoint=True))
    else:
        if isinstance(start, bool) or not isinstance(start, int) or start < 0:
            raise InputError("--start", None, f"must be a job index >= 0 or 'random', got {start!r}")
        if start + length > n:
            raise InputError("--start", None, f"{start} + {length} jobs passes the {n} usable jobs of {swf_path}")
        first = start
    report.start = first
    chosen = kept[first:first + length]
    rounded = [round_subtime(sub, batch, rounding) for sub, _, _, _ in chosen]
    origin = rounded[0]
    jobs = []
    for k, ((_, number, job, procs), sub) in enumerate(zip(chosen, rounded)):
        res = procs
        if max_res is not None and res > max_res:
            res = max_res
            report.capped += 1
        req_time = job.requested_time
        if req_time <= 0:
            req_time = job.run_time
            report.req_from_runtime += 1
        ops = int(job.run_time * ref_speed)  # swf2irmasim: int(run time x freq)
        jobs.append(make_job(k, sub - origin, res, ops, req_time=req_time, req_ops=ops, swf_id=number))
    report.kept = len(jobs)
    report.batches = len(set(rounded))
    meta = {"generator": "hetero-realistic", "source": "Sanchez Sousa 2023, 5.1.2", "swf": Path(swf_path).name,
            "start": first, "length": length, "seed": seed if start == "random" else None,
            "batch": _int_if_whole(batch), "rounding": rounding, "max_res": max_res,
            "ref_speed": _int_if_whole(ref_speed)}
    desc = (f"{length} jobs of {Path(swf_path).name} from job {first} (after filtering), submit times rounded "
            f"{rounding} to {batch:g} s ({report.batches} batches), at most {max_res} tasks, {ref_speed:g} flop/s")
    return workload_doc(jobs, desc, meta), report
