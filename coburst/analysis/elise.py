"""ELiSE's job-list format: read it, write it, and write a coburst run in it.

ELiSE (nikosT/elise) reads and writes one CSV layout, 19 columns, SWF's first 18 fields
plus the cores a job ran on:

* **output**: ``Logger.get_workload`` (``framework/realsim/logger/logger.py``), written by the
  ``get_workload`` action (``framework/batch/run_utils.py``) as
  ``workloads/sim_<i>_input_<j>_scheduler_<k>.csv``: per job ``Job Number`` (the rank after
  ELiSE's stable sort by submit time), ``Submit Time`` (shifted so that the first job
  arrives at 0), ``Wait Time``, ``Run Time``, ``Number of Allocated Processors``,
  ``Requested Number of Processors``, ``Requested Time`` (the walltime), ``Status`` (always 1),
  ``Executable Number`` (the application, e.g. ``bt.D.121``), ``Assigned Processors``
  (``"[1, 2, ...]"``, cores numbered from 1, node ``i`` holding ``i*ppn+1 ... (i+1)*ppn``);
  other fields empty; numbers as Python's ``str(float)``.
* **input**: the "List Generator" (``framework/realsim/generators/keyslist.py``,
  ``KeysListGenerator.generate_jobs_set``) skips the header, drops lines of fewer than 18
  comma-separated fields and reads field 0 (id), 1 (submit time), 8 (walltime) and 13 (the
  application, looked up in its pool for the process count and the compact time).

:func:`read_job_list` reads such a file with the List Generator's fields (and refuses what
ELiSE would crash on or silently drop: a number that is not one, a short line, no job);
:func:`job_list_text` writes a job list; :func:`run_text` writes a coburst run (its
``_jobs.csv`` and workload) as ELiSE writes its results.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path

from coburst.errors import InputError

__all__ = ["HEADER", "ListJob", "read_job_list", "job_list_text", "run_text", "read_results"]

#: ELiSE's header (``Logger.get_workload``), one line
HEADER = ("Job Number,Submit Time,Wait Time,Run Time,Number of Allocated Processors,Average CPU Time Used,"
          "Used Memory,Requested Number of Processors,Requested Time,Requested Memory,Status,User ID,Group ID,"
          "Executable Number,Queue Number,Partition Number,Preceding Job Number,Think Time from Preceding Job,"
          "Assigned Processors")
_FIELDS = {"id": 0, "submit": 1, "wait": 2, "run": 3, "procs": 7, "walltime": 8, "app": 13}


@dataclass(frozen=True)
class ListJob:
    """One line of an ELiSE job list: ``line`` (1-based), the fields ELiSE reads, and the
    requested processors when the line gives them (ELiSE takes the count from its pool)."""

    line: int
    id: str
    submit: float
    walltime: float
    app: str
    processes: int | None


def _number(path, line: int, field: int, name: str, text: str, *, positive: bool = False) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(path, f"line {line}, field {field + 1} ({name})",
                         f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise InputError(path, f"line {line}, field {field + 1} ({name})", f"{text!r} is not a finite number")
    if value < 0 or (positive and value == 0):
        raise InputError(path, f"line {line}, field {field + 1} ({name})",
                         f"{text!r} must be {'> 0' if positive else '>= 0'}")
    return value


def read_job_list(path: str | Path) -> list[ListJob]:
    """The jobs of an ELiSE job list (module doc), in file order.

    Errors (:class:`~coburst.errors.InputError`, naming the file, the line and the field):
    missing or unreadable file, no header, a line of fewer than 18 fields (ELiSE would drop it
    silently), a submit time or walltime that is not a finite number (>= 0; walltime > 0), an
    empty application, a non-integer processor count, no job at all."""
    from coburst.validate import read_text

    text = read_text(path, "ELiSE job list")
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise InputError(path, "line 1", "empty file, expected ELiSE's header (Job Number,Submit Time,...)")
    head = lines[0].split(",")
    if len(head) < 18 or head[0].strip() != "Job Number" or head[13].strip() != "Executable Number":
        raise InputError(path, "line 1", "not ELiSE's job-list header (Job Number,Submit Time,...,Executable Number,"
                         "...: 18 or 19 columns, as ELiSE's get_workload writes)")
    jobs = []
    for n, raw in enumerate(lines[1:], start=2):
        if not raw.strip():
            continue
        fields = raw.split(",")  # as ELiSE: the quoted processor list is never read
        if len(fields) < 18:
            raise InputError(path, f"line {n}", f"{len(fields)} comma-separated fields, ELiSE needs at least 18 "
                             "(it would drop this job silently)")
        jid = fields[0].strip()
        if not jid:
            raise InputError(path, f"line {n}, field 1 (Job Number)", "empty job number")
        submit = _number(path, n, 1, "Submit Time", fields[1].strip())
        wall = _number(path, n, 8, "Requested Time", fields[8].strip(), positive=True)
        app = fields[13].strip()
        if not app:
            raise InputError(path, f"line {n}, field 14 (Executable Number)", "empty application name")
        procs = None
        ptext = fields[7].strip()
        if ptext:
            try:
                procs = int(float(ptext))
            except ValueError:
                raise InputError(path, f"line {n}, field 8 (Requested Number of Processors)",
                                 f"{ptext!r} is not a number") from None
            if procs != float(ptext) or procs <= 0:
                raise InputError(path, f"line {n}, field 8 (Requested Number of Processors)",
                                 f"{ptext!r} is not a whole number > 0")
        jobs.append(ListJob(n, jid, submit, wall, app, procs))
    if not jobs:
        raise InputError(path, None, "no job in the list (only a header)")
    return jobs


def _row(job_id, submit, wait, run, nalloc, procs, wall, app, cores: str = "") -> str:
    return f"{job_id},{submit},{wait},{run},{nalloc},,,{procs},{wall},,1,,,{app},,,,,{cores}"


def job_list_text(doc: dict) -> str:
    """A Batsim workload of ``coburst workload elise`` (jobs with ``app`` and ``processes``) as
    an ELiSE job list: the fields the List Generator reads, the others empty (``Wait Time`` and
    ``Run Time`` 0), in the workload's order."""
    out = [HEADER]
    for job in doc["jobs"]:
        app = job.get("app", job.get("profile"))
        out.append(_row(job["id"], float(job["subtime"]), 0.0, 0.0, "", job.get("processes", ""),
                        float(job["walltime"]), app))
    return "\n".join(out) + "\n"


def _cores(units: list[int], units_per_node: int, cores_per_unit: int) -> list[int]:
    """ELiSE's core numbers (from 1, ``ppn`` per node) of a coburst allocation of units.
    A unit ``u`` of node ``u // units_per_node`` covers that node's cores
    ``(u % units_per_node) * cores_per_unit ...``: within a node the same count as ELiSE,
    not necessarily the same cores (ELiSE gives the first free half of each socket)."""
    out = []
    for u in units:
        first = u * cores_per_unit + 1
        out.extend(range(first, first + cores_per_unit))
    return out


def run_text(jobs_csv: str | Path, workload: str | Path, *, units_per_node: int, cores_per_unit: int,
             processors: bool = True) -> str:
    """A coburst (or Batsim) run as ELiSE writes its results (``Logger.get_workload``).

    ``jobs_csv``: the run's ``_jobs.csv``; ``workload``: its Batsim workload (for each job's
    application and processes: fields ``app``/``processes``, else the profile and the cores of
    its units).  Rows in the workload's order, ``Job Number`` = Batsim's job id without the
    workload name; ``Submit Time`` as in the workload; ``Run Time`` = finish - start;
    ``Assigned Processors`` from the allocated units (:func:`_cores`; ``processors=False``
    leaves it empty).  Jobs that never started (rejected) are left out, as ELiSE has none."""
    from coburst.analysis.metrics import read_raw_jobs  # checked reader (file, line, column)
    from procset import ProcSet

    with open(workload, "rb") as fh:
        try:
            doc = json.load(fh)
        except (ValueError, UnicodeDecodeError) as exc:
            raise InputError(workload, None, f"not a JSON workload: {exc}") from None
    raw = read_raw_jobs(jobs_csv)
    rows = {}
    for i in range(len(raw)):
        rows[str(raw["job_id"][i]).split("!")[-1]] = i
    out = [HEADER]
    for job in doc.get("jobs", []):
        jid = str(job["id"])
        i = rows.get(jid)
        if i is None:
            raise InputError(jobs_csv, None, f"job {jid!r} of {workload} is not in this run's jobs")
        start = float(raw["starting_time"][i])
        if not math.isfinite(start):
            continue
        finish = float(raw["finish_time"][i])
        sub = float(job["subtime"])
        alloc = str(raw["allocated_resources"][i])
        units = list(ProcSet.from_str(alloc)) if alloc and alloc != "nan" else []
        cores = _cores(units, units_per_node, cores_per_unit)
        procs = job.get("processes") or len(cores)
        app = job.get("app", job.get("profile"))
        plist = '"' + str(cores) + '"' if processors else ""
        out.append(_row(jid, sub, start - sub, finish - start, len(cores), procs, float(job["walltime"]), app,
                        plist))
    return "\n".join(out) + "\n"


def read_results(path: str | Path) -> dict[str, dict]:
    """ELiSE's results file (``get_workload``) as ``{job number: {"submit", "start", "finish",
    "app", "walltime", "procs"}}`` (start = submit + wait, finish = start + run time)."""
    text = Path(path).read_text(encoding="utf-8")
    reader = csv.reader(io.StringIO(text))
    head = next(reader, None)
    if head is None or head[:1] != ["Job Number"]:
        raise InputError(path, "line 1", "not an ELiSE results file (header Job Number,...)")
    out = {}
    for n, fields in enumerate(reader, start=2):
        if not fields:
            continue
        if len(fields) < 18:
            raise InputError(path, f"line {n}", f"{len(fields)} fields, expected 18 or 19")
        sub = _number(path, n, 1, "Submit Time", fields[1])
        try:
            wait, run = float(fields[2]), float(fields[3])
        except ValueError:
            raise InputError(path, f"line {n}", "wait or run time is not a number") from None
        out[fields[0]] = {"submit": sub, "start": sub + wait, "finish": sub + wait + run, "app": fields[13],
                          "walltime": float(fields[8]), "procs": fields[7]}
    return out
