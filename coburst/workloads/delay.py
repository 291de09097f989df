"""SWF log -> Batsim workload of ``delay`` jobs (the classic way to replay a log on Batsim).

Each kept job runs exactly its SWF run time (``delay`` profile) on ``res`` = requested
processors, with walltime = requested time (run time when unknown).  Selection rules are
those of :func:`coburst.workloads.jobmodels.select_jobs`; ids and submit times are shifted
so that the first kept job is ``0`` at time 0.  Profiles are shared between jobs of equal
run time (``d<runtime>``), which keeps files small.
"""

from __future__ import annotations

from pathlib import Path

from coburst.workloads.batsim_json import write_workload
from coburst.workloads.jobmodels import _num, select_jobs
from coburst.workloads.swf import read_swf


def swf_to_delay_workload(swf_path: str | Path, nb_res: int, max_jobs: int | None = None,
                          first_job: int = 0, with_report: bool = False):
    """Batsim workload document of the (first ``max_jobs``) jobs of an SWF log (with the
    selection's :class:`~coburst.workloads.jobmodels.FilterReport` if ``with_report``)."""
    log = read_swf(swf_path)
    selected, report = select_jobs(log.jobs, nb_res)
    selected = selected[first_job:]
    if max_jobs is not None:
        report.truncated = max(0, len(selected) - max_jobs)
        selected = selected[:max_jobs]
    t0 = selected[0].swf.submit_time if selected else 0.0
    jobs, profiles = [], {}
    for i, sel in enumerate(selected):
        runtime = _num(sel.swf.run_time)
        name = f"d{runtime}"
        profiles.setdefault(name, {"type": "delay", "delay": runtime})
        jobs.append({"id": i, "subtime": _num(sel.swf.submit_time - t0), "walltime": _num(sel.walltime),
                     "res": sel.res, "profile": name, "swf_id": sel.swf.job_number})
    doc = {"nb_res": nb_res, "description": f"delay jobs from {Path(swf_path).name}",
           "jobs": jobs, "profiles": dict(sorted(profiles.items(), key=lambda kv: kv[1]["delay"]))}
    return (doc, report) if with_report else doc


def write_delay_workload(swf_path: str | Path, out: str | Path, nb_res: int, max_jobs: int | None = None,
                         first_job: int = 0) -> dict:
    doc = swf_to_delay_workload(swf_path, nb_res, max_jobs, first_job)
    write_workload(doc, out)
    return doc
