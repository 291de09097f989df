"""The policy interface and the steps the canonical algorithms are made of.

Interface (the batsched model): the driver records events in the
:class:`~coburst.core.state.SchedulerState` and calls the hooks :meth:`Policy.on_job_release`
/ :meth:`Policy.on_job_end`; then, once per batch of simultaneous events, it calls
:meth:`Policy.make_decisions`, which returns a :class:`~coburst.core.decisions.Decisions`.
A policy never talks to Batsim and never changes the state.

Parameters are declared once per class (:class:`Param`), validated in ``__init__`` (unknown
name, wrong type or value -> :class:`~coburst.errors.InputError` naming it) and exposed
scikit-learn style: attributes of the same name and :meth:`Policy.get_params`.

Steps shared by the algorithms (Kopański 2020, Chapter 3):

* :func:`start_in_order` -- Algorithm 1 (FCFS): start jobs in order, stop at the first that
  cannot start now;
* :func:`fill` -- Algorithm 2 (greedy filling): start every job that can start now;
* :func:`reserve` -- reserve compute (and, if ``storage``, BB) resources at the earliest
  date; a reservation that begins now is a start.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Iterable, Sequence

import numpy as np

from coburst.core.decisions import Decisions
from coburst.core.maskprofile import MaskProfile
from coburst.core.placement import Allocation
from coburst.core.profile import Profile
from coburst.core.state import Job, SchedulerState
from coburst.errors import InputError

__all__ = ["Param", "Policy", "start_in_order", "fill", "try_start", "reserve", "fits_any_now"]

_BATCH = 8  # fill() screens lists at least this long with Profile.first_fit
_SCREENED = (Profile, MaskProfile)  # profiles whose idle_now() is the free nodes now


@dataclass(frozen=True)
class Param:
    """One validated policy parameter."""

    name: str
    type: type | tuple[type, ...]
    default: Any
    check: Callable[[Any], bool] | None = None
    doc: str = ""


class Policy(ABC):
    """Base class of every scheduling policy (module doc)."""

    family: ClassVar[str] = ""
    source: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    #: what the policy promises of the reservations it makes (checked by
    #: :func:`coburst.testing.assert_reservations_kept` from the adapter's decision trace):
    #: ``"all"`` (a reserved job never starts after its reservation), ``"first"`` (the first
    #: reservation of every decision is kept; later ones may slip), None (no promise)
    keeps_reservations: ClassVar[str | None] = None

    def __init__(self, **kwargs: Any):
        known = {p.name: p for p in self.params}
        for name in kwargs:
            if name not in known:
                hint = ", ".join(known) or "none"
                raise InputError(f"policy {self.family!r}", name,
                                 f"unknown parameter (known parameters: {hint})")
        for p in self.params:
            value = kwargs.get(p.name, p.default)
            types = p.type if isinstance(p.type, tuple) else (p.type,)
            if isinstance(value, bool) and bool not in types:
                ok = False
            else:
                ok = isinstance(value, types)
            if ok and p.check is not None:
                ok = bool(p.check(value))
            if not ok:
                raise InputError(f"policy {self.family!r}", p.name, f"invalid value {value!r}: {p.doc}")
            setattr(self, p.name, value)

    #: the steps below run on the availability profile as bit masks
    #: (:meth:`SchedulerState.mask_profile`, the same answers); False: the numpy
    #: :class:`Profile` (the former path, kept as the tests' reference)
    bit_masks: bool = True

    def availability(self, state: SchedulerState) -> Profile | MaskProfile:
        """The availability profile of ``state`` the policy's steps run on (a fresh copy)."""
        return state.mask_profile() if self.bit_masks else state.profile()

    def get_params(self) -> dict[str, Any]:
        return {p.name: getattr(self, p.name) for p in self.params}

    @property
    def name(self) -> str:
        """Thesis-style label, e.g. ``backfill-sjf-1`` (family, then the depth)."""
        depth = getattr(self, "depth", None)
        return self.family if depth is None or "depth" not in {p.name for p in self.params} \
            else f"{self.family}-{depth}"

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    # ------------------------------------------------------------------ interface
    def on_job_release(self, state: SchedulerState, jobs: Sequence[Job]) -> None:
        """Jobs were submitted (already in ``state.queue``)."""

    def on_job_end(self, state: SchedulerState, jobs: Sequence[Job]) -> None:
        """Jobs ended (already removed from ``state.running``)."""

    @abstractmethod
    def make_decisions(self, state: SchedulerState) -> Decisions:
        """Decide at ``state.now``."""


# ---------------------------------------------------------------------- steps
def try_start(profile: Profile, job: Job, decisions: Decisions) -> bool:
    """Start ``job`` now if its compute nodes and BB fit for its whole walltime.

    A job wider than the nodes free now is refused before the profile's prefix tables are
    (re)computed (:meth:`Profile.idle_now`; the same answer as ``alloc_now``)."""
    if type(profile) in _SCREENED and job.res > profile.idle_now():
        return False
    alloc = profile.alloc_now(job.res, job.walltime, job.bb)
    if alloc is None:
        return False
    profile.occupy(profile.now, profile.now + job.walltime, alloc)
    decisions.start(job, alloc)
    return True


def start_in_order(profile: Profile, jobs: Iterable[Job], decisions: Decisions) -> list[Job]:
    """Algorithm 1 (FCFS): start jobs in order until one cannot start; return the others."""
    jobs = list(jobs)
    for i, job in enumerate(jobs):
        if not try_start(profile, job, decisions):
            return jobs[i:]
    return []


def fill(profile: Profile, jobs: Iterable[Job], decisions: Decisions) -> list[Job]:
    """Algorithm 2 (greedy filling): start every job that can start now, in the given
    order; return those that could not.

    Long lists are screened in batches (:meth:`Profile.first_fit`): a job skipped once
    stays unfit, as starting jobs only takes resources away; none is tried when every job
    is wider than the nodes free now."""
    jobs = list(jobs)
    if _all_too_wide(profile, jobs):
        return jobs
    if type(profile) is MaskProfile:  # the same screen, job by job in Python
        def next_fit(i: int) -> int:
            return profile.first_fit_jobs(jobs, i)
    elif len(jobs) < _BATCH or not hasattr(profile, "first_fit"):
        return [job for job in jobs if not try_start(profile, job, decisions)]
    else:
        res, end, bb = _fit_arrays(profile, jobs)

        def next_fit(i: int) -> int:
            return profile.first_fit(res, end, bb, i)
    left, i = [], 0
    while True:
        hit = next_fit(i)
        if hit < 0:
            left.extend(jobs[i:])
            return left
        left.extend(jobs[i:hit])
        if not try_start(profile, jobs[hit], decisions):  # cannot happen: same test
            left.append(jobs[hit])
        i = hit + 1


def fits_any_now(profile: Profile, jobs: Sequence[Job]) -> bool:
    """Whether some job of ``jobs`` can start now on ``profile`` (its compute nodes and BB
    for its whole walltime), i.e. whether Algorithm 2 (:func:`fill`) would start any of them
    in any order: when none fits, none fits after another starts either, so greedy filling
    of every permutation starts nothing."""
    if _all_too_wide(profile, jobs):
        return False
    if type(profile) is MaskProfile:
        return profile.first_fit_jobs(jobs) >= 0
    if len(jobs) < _BATCH or not hasattr(profile, "first_fit"):
        return any(profile.fits_now(j.res, j.walltime, j.bb) for j in jobs)
    return profile.first_fit(*_fit_arrays(profile, jobs)) >= 0


def _all_too_wide(profile: Profile, jobs: Sequence[Job]) -> bool:
    """Every job is wider than the nodes free now (said without the profile's prefix tables;
    only for :class:`Profile` and :class:`MaskProfile`)."""
    if type(profile) not in _SCREENED:
        return False
    idle = profile.idle_now()
    return all(j.res > idle for j in jobs)


def _fit_arrays(profile: Profile, jobs: Sequence[Job]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(res, end, bb)`` of ``jobs`` for :meth:`Profile.first_fit` (end: now + walltime)."""
    now, n = profile.now, len(jobs)
    return (np.fromiter((j.res for j in jobs), dtype=np.int64, count=n),
            np.fromiter((now + j.walltime for j in jobs), dtype=float, count=n),
            np.fromiter((j.bb for j in jobs), dtype=np.int64, count=n))


def reserve(profile: Profile, job: Job, decisions: Decisions,
            storage: bool = True) -> tuple[float, Allocation] | None:
    """Reserve ``job`` at its earliest date (compute nodes, and BB if ``storage``).

    A reservation at ``now`` is turned into a start (when its BB fits too).  Returns
    ``(date, allocation)``, or None when the job never fits the profile.
    """
    found = profile.earliest(job.res, job.walltime, job.bb, storage=storage)
    if found is None:
        return None
    start, alloc = found
    if start == profile.now:
        full = alloc if storage or not job.bb else profile.alloc_now(job.res, job.walltime, job.bb)
        if full is not None:
            profile.occupy(start, start + job.walltime, full)
            decisions.start(job, full)
            return start, full
    profile.occupy(start, start + job.walltime, alloc)
    decisions.reserve(job, start, alloc)
    return start, alloc
