"""Standard Workload Format 2.2 reader (Parallel Workloads Archive).

A data line has 18 whitespace-separated numeric fields (Feitelson's SWF definition):

====  ======================  ====  =========================
  1   job number                10  requested memory (KB/proc)
  2   submit time (s)           11  status
  3   wait time (s)             12  user id
  4   run time (s)              13  group id
  5   allocated processors      14  executable number
  6   average CPU time (s)      15  queue number
  7   used memory (KB/proc)     16  partition number
  8   requested processors      17  preceding job number
  9   requested time (s)        18  think time (s)
====  ======================  ====  =========================

Lines starting with ``;`` are header comments (``; Key: value`` pairs are kept in
:attr:`SwfLog.header`); blank lines are ignored.  A line with another number of fields or
with a field that is not a number is reported as an :class:`~coburst.errors.InputError`
naming the file and the line.  ``-1`` means "unknown" in every field; what the converter
does with unknown values is :func:`coburst.workloads.jobmodels.select_jobs`'s policy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from coburst.errors import InputError
from coburst.validate import COUNT_MAX, TIME_MAX, decode_text

FIELDS = (
    "job_number", "submit_time", "wait_time", "run_time", "allocated_procs", "average_cpu_time",
    "used_memory", "requested_procs", "requested_time", "requested_memory", "status", "user_id",
    "group_id", "executable", "queue", "partition", "preceding_job", "think_time",
)


@dataclass(frozen=True)
class SwfJob:
    """One SWF record; times in seconds, memory in KB per processor, -1 when unknown."""

    job_number: int
    submit_time: float
    wait_time: float
    run_time: float
    allocated_procs: int
    average_cpu_time: float
    used_memory: float
    requested_procs: int
    requested_time: float
    requested_memory: float
    status: int
    user_id: int
    group_id: int
    executable: int
    queue: int
    partition: int
    preceding_job: int
    think_time: float
    line: int = 0  # line number in the file (1-based)


@dataclass
class SwfLog:
    path: str
    header: dict[str, str] = field(default_factory=dict)
    jobs: list[SwfJob] = field(default_factory=list)


_INT_FIELDS = {"job_number", "allocated_procs", "requested_procs", "status", "user_id", "group_id",
               "executable", "queue", "partition", "preceding_job"}

#: largest magnitude of each field (coburst.validate): times 2**32 s (136 years, microsecond
#: resolution kept), processors 2**31 - 1, memory 2**50 KB per processor, identifiers 2**53
#: (exact in a double); -1 (unknown) is always accepted
_LIMITS = {name: float(2**53) for name in FIELDS}
_LIMITS.update({name: TIME_MAX for name in ("submit_time", "wait_time", "run_time", "average_cpu_time",
                                            "requested_time", "think_time")})
_LIMITS.update({"allocated_procs": float(COUNT_MAX), "requested_procs": float(COUNT_MAX),
                "used_memory": float(2**50), "requested_memory": float(2**50)})


def _number(token: str, name: str, source: str, lineno: int) -> float | int:
    try:
        value = float(token)
    except ValueError:
        raise InputError(source, f"line {lineno}", f"field {FIELDS.index(name) + 1} ({name}) is not a number: "
                         f"{token!r}") from None
    if not math.isfinite(value):
        raise InputError(source, f"line {lineno}", f"field {FIELDS.index(name) + 1} ({name}) is not finite: "
                         f"{token!r}")
    if abs(value) > _LIMITS[name]:
        raise InputError(source, f"line {lineno}", f"field {FIELDS.index(name) + 1} ({name}) is out of range: "
                         f"{token!r} (at most {_LIMITS[name]:g} in magnitude)")
    if name in _INT_FIELDS:
        if value != int(value):
            raise InputError(source, f"line {lineno}", f"field {FIELDS.index(name) + 1} ({name}) must be an "
                             f"integer, got {token!r}")
        return int(value)
    return value


def parse_line(text: str, source: str = "<swf>", lineno: int = 0) -> SwfJob | None:
    """Parse one line; ``None`` for comments and blank lines."""
    stripped = text.strip()
    if not stripped or stripped.startswith(";"):
        return None
    tokens = stripped.split()
    if len(tokens) != len(FIELDS):
        raise InputError(source, f"line {lineno}", f"expected {len(FIELDS)} fields, found {len(tokens)}")
    values = {name: _number(tok, name, source, lineno) for name, tok in zip(FIELDS, tokens)}
    return SwfJob(**values, line=lineno)


def read_swf(path: str | Path) -> SwfLog:
    """Read a whole SWF file (header and jobs, in file order)."""
    source = str(path)
    log = SwfLog(path=source)
    try:
        if Path(source).is_dir():
            raise InputError(source, None, "is a directory, expected an SWF file")
        handle = open(source, "rb")
    except FileNotFoundError:
        raise InputError(source, None, "SWF file not found") from None
    except OSError as exc:
        raise InputError(source, None, f"cannot read SWF file: {exc.strerror}") from None
    with handle:
        try:
            decode_text(handle.peek(4096)[:4096] if hasattr(handle, "peek") else b"", source)
        except InputError as exc:
            if "UTF-16" in exc.problem or "UTF-32" in exc.problem:  # named for the whole file
                raise
        for lineno, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(source, f"line {lineno}", f"not a text file ({exc.reason})") from None
            stripped = text.strip()
            if stripped.startswith(";"):
                key, sep, value = stripped[1:].partition(":")
                if sep and key.strip() and " " not in key.strip():
                    log.header.setdefault(key.strip(), value.strip())
                continue
            job = parse_line(text, source, lineno)
            if job is not None:
                log.jobs.append(job)
    if not log.jobs:
        raise InputError(source, None, "no job records (only comments or empty)")
    return log
