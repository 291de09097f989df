"""Batsim 4.2 workload JSON: deterministic writing and validation.

A workload is ``{"nb_res": N, "jobs": [...], "profiles": {...}}`` (Batsim 4.2
``docs/input-workload.rst``); coburst adds the optional ``description`` and ``coburst``
(generation metadata) top-level keys, which Batsim ignores, and the job fields ``bb``,
``swf_id`` and ``io`` (see :mod:`coburst.workloads.jobmodels`), which Batsim forwards to
the scheduler.

Output is byte-deterministic: keys in insertion order, compact separators, one trailing
newline (``notes/conventions.md``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from coburst.errors import InputError
from coburst.fileio import atomic_write

PROFILE_TYPES = {
    "delay": ("delay",),
    "parallel": ("cpu", "com"),
    "parallel_homogeneous": ("cpu", "com"),
    "parallel_homogeneous_total": ("cpu", "com"),
    "composed": ("seq",),
    "parallel_homogeneous_pfs": (),
    "data_staging": ("nb_bytes", "from", "to"),
}
IO_PROFILES = {"stage_in": "data_staging", "compute": "parallel_homogeneous",
               "checkpoint": "parallel_homogeneous_pfs", "flush": "data_staging", "stage_out": "data_staging"}


def dumps(doc: dict) -> str:
    """The canonical text of a workload."""
    return json.dumps(doc, indent=None, separators=(",", ":"), sort_keys=False, allow_nan=False) + "\n"


def write_workload(doc: dict, path: str | Path) -> None:
    """Validate ``doc`` and write it atomically to ``path``."""
    validate(doc, str(path))
    with atomic_write(path) as handle:
        handle.write(dumps(doc))


def _nonneg(value: Any, source: str, where: str, integer: bool = False) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(source, where, f"expected a number, got {json.dumps(value)}")
    if value < 0:
        raise InputError(source, where, f"must be >= 0, got {value}")
    if integer and int(value) != value:
        raise InputError(source, where, f"expected an integer, got {value}")


def validate_profile(prof: Any, source: str, where: str) -> None:
    if not isinstance(prof, dict):
        raise InputError(source, where, "a profile must be a JSON object")
    ptype = prof.get("type")
    if ptype not in PROFILE_TYPES:
        raise InputError(source, f"{where}.type", f"unknown profile type {json.dumps(ptype)}")
    for key in PROFILE_TYPES[ptype]:
        if key not in prof:
            raise InputError(source, where, f"profile of type {ptype!r} needs field {key!r}")
    for key in ("cpu", "com", "delay", "nb_bytes", "bytes_to_read", "bytes_to_write"):
        if key in prof and not isinstance(prof[key], list):
            _nonneg(prof[key], source, f"{where}.{key}")


def validate_io(io: Any, source: str, where: str) -> None:
    """Check an IO-Aware ``io`` job field."""
    if not isinstance(io, dict):
        raise InputError(source, where, "expected an object")
    for key in ("phases", "checkpoints"):
        if key not in io:
            raise InputError(source, where, f"lacks {key!r}")
        _nonneg(io[key], source, f"{where}.{key}", integer=True)
    if io["phases"] < 1 or io["checkpoints"] != io["phases"] - 1:
        raise InputError(source, where, "needs phases >= 1 and checkpoints = phases - 1")
    for key, ptype in IO_PROFILES.items():
        if key not in io:
            raise InputError(source, where, f"lacks profile {key!r}")
        validate_profile(io[key], source, f"{where}.{key}")
        if io[key]["type"] != ptype:
            raise InputError(source, f"{where}.{key}.type", f"expected {ptype!r}")


def validate(doc: Any, source: str = "<workload>") -> dict:
    """Check a workload object; return a small summary. Raises :class:`InputError`."""
    if not isinstance(doc, dict):
        raise InputError(source, None, "a workload must be a JSON object")
    if "nb_res" not in doc:
        raise InputError(source, None, "lacks 'nb_res'")
    nb_res = doc["nb_res"]
    _nonneg(nb_res, source, "nb_res", integer=True)
    profiles = doc.get("profiles")
    if not isinstance(profiles, dict):
        raise InputError(source, "profiles", "expected an object of profiles")
    for name, prof in profiles.items():
        validate_profile(prof, source, f"profiles.{name}")
    jobs = doc.get("jobs")
    if not isinstance(jobs, list):
        raise InputError(source, "jobs", "expected a list of jobs")
    seen: set[str] = set()
    n_io = 0
    for i, job in enumerate(jobs):
        where = f"jobs[{i}]"
        if not isinstance(job, dict):
            raise InputError(source, where, "a job must be a JSON object")
        for key in ("id", "subtime", "res", "profile"):
            if key not in job:
                raise InputError(source, where, f"lacks {key!r}")
        if str(job["id"]) in seen:
            raise InputError(source, f"{where}.id", f"duplicate job id {job['id']!r}")
        seen.add(str(job["id"]))
        _nonneg(job["subtime"], source, f"{where}.subtime")
        _nonneg(job["res"], source, f"{where}.res", integer=True)
        if job["res"] < 1 or job["res"] > nb_res:
            raise InputError(source, f"{where}.res", f"must be between 1 and nb_res={nb_res}, got {job['res']}")
        if "walltime" in job and job["walltime"] != -1:
            _nonneg(job["walltime"], source, f"{where}.walltime")
        if job["profile"] not in profiles:
            raise InputError(source, f"{where}.profile", f"unknown profile {json.dumps(job['profile'])}")
        if "bb" in job:
            _nonneg(job["bb"], source, f"{where}.bb", integer=True)
        if "io" in job:
            validate_io(job["io"], source, f"{where}.io")
            n_io += 1
    return {"jobs": len(jobs), "profiles": len(profiles), "nb_res": nb_res, "io_jobs": n_io}


def read_workload(path: str | Path) -> dict:
    """Load and validate a workload file."""
    source = str(path)
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(source, None, "workload file not found") from None
    except json.JSONDecodeError as exc:
        raise InputError(source, f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}") from None
    validate(doc, source)
    return doc
