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
from coburst.validate import read_json
from coburst.simulator import workload as simulator_workload

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


def repeat_period(doc: dict) -> int | float:
    """How far apart two copies of a workload start when it is repeated end to end: the span
    of its submission times plus its mean gap between two submissions (at least 1 s), so that
    the first job of a copy comes one typical gap after the last job of the previous copy.
    An integer when every submission time is one."""
    times = [job["subtime"] for job in doc["jobs"]]
    if not times:
        return 0
    span = max(times) - min(times)
    gap = span / (len(times) - 1) if len(times) > 1 else 1.0
    if all(isinstance(t, int) for t in times):
        return span + max(1, round(gap))
    return span + max(1.0, gap)


def write_repeated(doc: dict, path: str | Path, repeat: int) -> int:
    """Validate ``doc`` and write it atomically to ``path`` repeated ``repeat`` times end to end:
    copy ``k`` (from 0) has the jobs of ``doc`` with ids ``k * n + id`` (``n`` jobs; integer ids
    ``0..n-1``) and submission times shifted by ``k *`` :func:`repeat_period`, sharing
    ``doc``'s profiles.  The jobs are written one by one (memory independent of ``repeat``);
    with ``repeat == 1`` the bytes are :func:`write_workload`'s.  Returns the job count."""
    validate(doc, str(path))
    jobs = doc["jobs"]
    n = len(jobs)
    if repeat > 1 and [job["id"] for job in jobs] != list(range(n)):
        raise InputError(str(path), "jobs", "--repeat needs the jobs numbered 0..n-1 in order")
    period = repeat_period(doc)
    encode = json.JSONEncoder(indent=None, separators=(",", ":"), sort_keys=False, allow_nan=False).encode
    head = {key: value for key, value in doc.items() if key not in ("jobs", "profiles")}
    with atomic_write(path) as handle:
        handle.write(encode(head)[:-1] + ("," if head else "") + '"jobs":[')
        for k in range(repeat):
            shift = k * period
            for i, job in enumerate(jobs):
                if k:
                    job = {**job, "id": k * n + i, "subtime": _shifted(job["subtime"], shift)}
                handle.write(("," if k or i else "") + encode(job))
        handle.write('],"profiles":' + encode(doc["profiles"]) + "}\n")
    return n * repeat


def _shifted(subtime: int | float, shift: int | float) -> int | float:
    value = subtime + shift
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _nonneg(value: Any, source: str, where: str, integer: bool = False) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(source, where, f"expected a number, got {json.dumps(value)}")
    if value < 0:
        raise InputError(source, where, f"must be >= 0, got {value}")
    if integer and int(value) != value:
        raise InputError(source, where, f"expected an integer, got {value}")


def validate_profile(prof: Any, source: str, where: str) -> None:
    """Check one profile with Batsim 4.2's rules (those ``coburst sim`` applies)."""
    simulator_workload.validate_profile(where.rsplit(".", 1)[-1], prof, source, where)


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
    """Check a workload object; return a small summary. Raises :class:`InputError`.

    The Batsim part (envelope, profiles, jobs) is checked by the simulator's own loader,
    so a file that passes here loads in ``coburst sim`` (and Batsim 4.2); on top of it,
    coburst's job fields: ``res`` <= ``nb_res``, ``bb`` and ``io``.
    """
    workload = simulator_workload.workload_from_doc(doc, "w0", source)
    nb_res = doc["nb_res"]
    n_io = 0
    for i, (job, obj) in enumerate(zip(workload.jobs, doc["jobs"])):
        where = f"jobs[{i}]"
        if job.res > nb_res:
            raise InputError(source, f"{where}.res", f"must be between 1 and nb_res={nb_res}, got {job.res}")
        if "bb" in obj:
            _nonneg(obj["bb"], source, f"{where}.bb", integer=True)
        if "io" in obj:
            validate_io(obj["io"], source, f"{where}.io")
            n_io += 1
    return {"jobs": len(workload.jobs), "profiles": len(workload.profiles), "nb_res": nb_res, "io_jobs": n_io}


def read_workload(path: str | Path) -> dict:
    """Load and validate a workload file."""
    source = str(path)
    doc = read_json(path, "workload file")
    validate(doc, source)
    return doc
