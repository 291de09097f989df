"""Cut a converted log into K equal time periods (Kopański 2020, §4.1: 16 parts of ~20.81 days).

The periods cover ``[t_first, t_last]``, the submit times of the first and last kept jobs:
period ``k`` (0-based) is ``[t_first + k*L, t_first + (k+1)*L)`` with ``L = (t_last -
t_first) / K``; the last period also holds ``t_last``.  Every job lands in exactly one part.
Each part is then numbered and shifted like a full workload (its first job at time 0, ids
0..n-1); the jobs keep their SWF number in ``swf_id`` and their drawn values.
"""

from __future__ import annotations

import math
from typing import Protocol, TypeVar

from coburst.errors import InputError


class Submitted(Protocol):
    """What the split needs of a job (e.g. :class:`coburst.workloads.jobmodels.ConvertedJob`)."""

    submit: float


J = TypeVar("J", bound=Submitted)


def period_index(t: float, t_first: float, t_last: float, parts: int) -> int:
    """Index of the period holding submit time ``t``."""
    span = t_last - t_first
    if span <= 0:
        return 0
    return min(int(math.floor((t - t_first) * parts / span)), parts - 1)


def split_jobs(jobs: list[J], parts: int) -> list[list[J]]:
    """Split ``jobs`` (ordered by submit time) into ``parts`` lists, one per period."""
    if parts < 1:
        raise InputError("--split", None, f"must be >= 1, got {parts}")
    out: list[list[J]] = [[] for _ in range(parts)]
    if not jobs:
        return out
    t_first = min(j.submit for j in jobs)
    t_last = max(j.submit for j in jobs)
    for job in jobs:
        out[period_index(job.submit, t_first, t_last, parts)].append(job)
    return out


def period_bounds(jobs: list[Submitted], parts: int) -> list[tuple[float, float]]:
    """The absolute (start, end) of each period, in SWF time."""
    if not jobs:
        return [(0.0, 0.0)] * parts
    t_first = min(j.submit for j in jobs)
    t_last = max(j.submit for j in jobs)
    length = (t_last - t_first) / parts
    return [(t_first + k * length, t_first + (k + 1) * length) for k in range(parts)]
