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
