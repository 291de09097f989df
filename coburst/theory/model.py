"""The deterministic co-scheduling model (Kuchumov & Korkhov 2021, §3).

n tasks T_0..T_{n-1} (the paper numbers them 1..n; coburst uses 0-based indices so that
task i is bit i of a combination's mask).  Task i needs ``b[i] > 0`` units of work.  A
*combination* S_j is any non-empty subset of the tasks, written as its bit mask j
(1 <= j <= 2**n - 1).  ``speeds[j, i]`` is a_{i,j}, the speed of task i while combination j
runs (work units per time unit); row 0 (the empty combination) is all zeros and
``speeds[j, i] == 0`` whenever task i is not in j.

Decisions where §3 is open or misprinted (tested in ``tests/test_theory_model.py``):

* **Constraint (1) is printed reversed.**  The text says a task's speed "decreases with the
  increase in the number of tasks in combination", but (1) reads a_{i,p} <= a_{i,q} for
  S_p ⊂ S_q.  coburst checks the intended meaning: ``a[q, i] <= a[p, i]`` whenever
  S_p ⊂ S_q and task i is in S_p.  Checking every mask against the masks with one more
  task suffices (the order is transitive); the relative tolerance is ``1e-9``
  (``a_sup - a_sub <= 1e-9 * max(a_sub, a_sup)``, so a task at speed 0 stays at 0).
* **Speed range.**  §3: "when T_i ∈ S_j then 0 <= a_{i,j} <= 1" — values above 1 are not
  admissible and are rejected (with the same 1e-9 tolerance).  §3 also normalises the
  speed alone to 1 "without loss of generality"; coburst does not require that (any
  speed alone in (0, 1] is accepted), but a task whose speed alone is 0 is rejected: by
  (1) it would run at speed 0 in every combination and could never complete.
* **Work.**  ``b[i]`` must be finite and > 0 (a task with nothing to do is not a task).

A schedule (§3) is a sequence of (combination, duration) pairs; coburst stores it as
:class:`Segment` s with absolute start and end times, back to back from time 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from coburst.errors import InputError

#: relative tolerance of constraint (1) and of the speed range
RTOL = 1e-9
#: the longest serial schedule (every task alone, one after the other: an upper bound of every
#: makespan the LPs compute), in the instance's time unit; HiGHS reads 1e20 as infinity
SERIAL_MAX = 1e15


def tasks_of(mask: int) -> list[int]:
    """The tasks (bit positions) of combination ``mask``, increasing."""
    out, i = [], 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    return out


def mask_of(tasks) -> int:
    """The bit mask of a collection of task indices."""
    m = 0
    for t in tasks:
        m |= 1 << int(t)
    return m


def show_mask(mask: int) -> str:
    """``"5 {T0,T2}"``: how errors and reports name a combination."""
    return f"{mask} {{{','.join(f'T{i}' for i in tasks_of(mask))}}}"


def popcounts(n: int) -> np.ndarray:
    """|S_j| for every mask j in 0..2**n-1 (int64 array)."""
    masks = np.arange(1 << n, dtype=np.int64)
    counts = np.zeros(1 << n, dtype=np.int64)
    for i in range(n):
        counts += (masks >> i) & 1
    return counts


def membership(n: int) -> np.ndarray:
    """Boolean (2**n, n) array: ``[j, i]`` is True when task i is in combination j."""
    masks = np.arange(1 << n, dtype=np.int64)[:, None]
    return ((masks >> np.arange(n, dtype=np.int64)[None, :]) & 1).astype(bool)


def submasks_within(active: int, n: int) -> np.ndarray:
    """Every non-empty combination made only of the tasks in ``active``, increasing."""
    masks = np.arange(1, 1 << n, dtype=np.int64)
    return masks[(masks & ~np.int64(active)) == 0]


@dataclass(frozen=True, eq=False)
class Instance:
    """One co-scheduling instance of §3: work ``b`` (n,) and speeds (2**n, n), float64.

    ``exact_b`` / ``exact_speeds`` optionally carry the same numbers as
    :class:`fractions.Fraction` (e.g. Example 1, instances found by the worst-case search)
    for the exact checks of :mod:`coburst.theory.exact`; when absent, the floats are
    converted exactly (every float is a rational)."""

    id: str
    b: np.ndarray
    speeds: np.ndarray
    exact_b: tuple | None = field(default=None, repr=False)
    exact_speeds: dict | None = field(default=None, repr=False)

    @property
    def n(self) -> int:
        return int(self.b.shape[0])

    @property
    def m(self) -> int:
        """Number of combinations, 2**n - 1."""
        return (1 << self.n) - 1

    @property
    def full(self) -> int:
        """Mask of all tasks."""
        return (1 << self.n) - 1

    def combination_speeds(self) -> np.ndarray:
        """a_j = sum_i a_{i,j} for every mask j (index 0 is the empty combination, 0)."""
        return self.speeds.sum(axis=1)

    def masks_of(self, active: int) -> np.ndarray:
        """The non-empty combinations of the tasks in ``active`` (increasing masks)."""
        return submasks_within(active, self.n)

    def fraction_b(self) -> list[Fraction]:
        if self.exact_b is not None:
            return list(self.exact_b)
        return [Fraction(float(x)) for x in self.b]

    def fraction_speeds(self, mask: int) -> list[Fraction]:
        """Row ``mask`` of the speeds as exact fractions."""
        if self.exact_speeds is not None and mask in self.exact_speeds:
            return list(self.exact_speeds[mask])
        return [Fraction(float(x)) for x in self.speeds[mask]]


def make_instance(id: str, b, speeds, exact: bool = False) -> Instance:
    """Build an :class:`Instance` from sequences (floats or Fractions).

    ``speeds`` is a (2**n, n) array-like, or a mapping mask -> row (missing masks: zero
    rows).  With ``exact=True`` the given values (Fractions/ints) are kept as the exact
    numbers and the float arrays are their nearest floats."""
    b_list = list(b)
    n = len(b_list)
    if isinstance(speeds, dict):
        rows = {int(k): list(v) for k, v in speeds.items()}
    else:
        rows = {j: list(row) for j, row in enumerate(speeds)}
    arr = np.zeros((1 << n, n), dtype=np.float64)
    for j, row in rows.items():
        arr[j] = [float(x) for x in row]
    b_arr = np.array([float(x) for x in b_list], dtype=np.float64)
    if exact:
        eb = tuple(Fraction(x) for x in b_list)
        es = {j: tuple(Fraction(x) for x in row) for j, row in rows.items() if j}
        return Instance(id, b_arr, arr, eb, es)
    return Instance(id, b_arr, arr)


def check_numeric_range(inst: Instance, source: str, where: str) -> None:
    """The numbers the LP solver can take: the serial schedule (sum of b_i / a_i alone, an
    upper bound of every makespan the LPs compute) at most :data:`SERIAL_MAX` (a work of 1e308,
    or a speed alone of 1e-300, was an LP-solver traceback)."""
    a = inst.speeds
    alone = np.array([a[1 << i, i] for i in range(inst.n)])
    with np.errstate(over="ignore"):
        times = inst.b / alone
        serial = float(np.sum(times))
    if not serial <= SERIAL_MAX:
        i = int(np.argmax(times))
        raise InputError(source, where, f"the tasks run alone one after the other take {serial:g} time units "
                                        f"(task {i}: work {float(inst.b[i]):g} at speed {float(alone[i]):g}): "
                                        f"more than {SERIAL_MAX:g}, past the LP solver's numeric range; rescale "
                                        "the works")


def check_instance(inst: Instance, source: str = "instance") -> None:
    """Check an instance against §3 (see the module docstring); raise
    :class:`~coburst.errors.InputError` naming the instance, the task and the
    combination(s) at fault.  Constraint (1) is reported with the two combinations."""
    where = f"instance {inst.id!r}"
    b, a = inst.b, inst.speeds
    if b.ndim != 1 or b.shape[0] < 1:
        raise InputError(source, where, "needs at least one task")
    n = inst.n
    if n > 30:
        raise InputError(source, where, f"{n} tasks: at most 30 (2**n combinations are stored)")
    if a.shape != (1 << n, n):
        raise InputError(source, where, f"speeds have shape {a.shape}, expected {(1 << n, n)}")
    for i in range(n):
        if not np.isfinite(b[i]) or b[i] <= 0:
            raise InputError(source, where, f"task {i}: work b = {float(b[i])!r} must be a finite number > 0")
    bad = ~np.isfinite(a)
    if bad.any():
        j, i = (int(x) for x in np.argwhere(bad)[0])
        raise InputError(source, where, f"task {i} in combination {show_mask(j)}: speed {float(a[j, i])!r} is not finite")
    member = membership(n)
    outside = (~member) & (a != 0)
    if outside.any():
        j, i = (int(x) for x in np.argwhere(outside)[0])
        raise InputError(source, where, f"task {i} is not in combination {show_mask(j)} but has speed {float(a[j, i])!r} "
                                        "there (must be 0)")
    low = member & (a < 0)
    if low.any():
        j, i = (int(x) for x in np.argwhere(low)[0])
        raise InputError(source, where, f"task {i} in combination {show_mask(j)}: speed {float(a[j, i])!r} < 0")
    high = member & (a > 1 + RTOL)
    if high.any():
        j, i = (int(x) for x in np.argwhere(high)[0])
        raise InputError(source, where, f"task {i} in combination {show_mask(j)}: speed {float(a[j, i])!r} > 1 "
                                        "(§3: 0 <= a_ij <= 1)")
    for i in range(n):
        if a[1 << i, i] <= 0:
            raise InputError(source, where, f"task {i} has speed 0 alone (combination {show_mask(1 << i)}): by "
                                            "constraint (1) it has speed 0 everywhere and can never complete")
    sub, sup, task = first_violation(a, n)
    if task is not None:
        raise InputError(source, where, f"constraint (1) broken: task {task} runs at {float(a[sub, task])!r} in "
                                        f"combination {show_mask(sub)} but faster, at {float(a[sup, task])!r}, in "
                                        f"combination {show_mask(sup)} which adds task "
                                        f"{(sup ^ sub).bit_length() - 1} (a task's speed never rises when a "
                                        "task joins its combination)")
    check_numeric_range(inst, source, where)


def first_violation(a: np.ndarray, n: int, rtol: float = RTOL) -> tuple[int, int, int | None]:
    """The first (sub-mask, super-mask, task) breaking constraint (1), in increasing
    sub-mask, then added task, then task order; ``(0, 0, None)`` when there is none."""
    masks = np.arange(1 << n, dtype=np.int64)
    found: list[tuple[int, int, int]] = []
    for j in range(n):
        bit = np.int64(1 << j)
        subs = masks[((masks & bit) == 0) & (masks != 0)]
        if subs.size == 0:
            continue
        lo, hi = a[subs], a[subs | bit]
        viol = (hi - lo) > rtol * np.maximum(lo, hi)
        viol[:, j] = False
        if viol.any():
            r, i = (int(x) for x in np.argwhere(viol)[0])
            found.append((int(subs[r]), j, i))
    if not found:
        return 0, 0, None
    sub, j, i = min(found)
    return sub, sub | (1 << j), i


@dataclass(frozen=True)
class Segment:
    """Combination ``mask`` runs from ``start`` to ``end``."""

    mask: int
    start: float
    end: float

    @property
    def length(self) -> float:
        return self.end - self.start


@dataclass
class Schedule:
    """A schedule of §3: segments back to back from time 0 (C_max = sum of lengths, (2))."""

    segments: list[Segment]

    @property
    def makespan(self) -> float:
        return self.segments[-1].end if self.segments else 0.0

    def time_per_mask(self) -> dict[int, float]:
        """x_j of (2): total time each combination runs."""
        out: dict[int, float] = {}
        for s in self.segments:
            out[s.mask] = out.get(s.mask, 0.0) + s.length
        return out

    def work(self, inst: Instance) -> np.ndarray:
        """Work each task completes under this schedule."""
        done = np.zeros(inst.n)
        for s in self.segments:
            done += inst.speeds[s.mask] * s.length
        return done


class InfeasibleSchedule(AssertionError):
    """A schedule breaks §3's feasibility (raised by :func:`check_feasible`)."""


def check_feasible(inst: Instance, schedule: Schedule, rtol: float = 1e-9) -> None:
    """Check that ``schedule`` is feasible for ``inst`` (§3): segments back to back from 0
    with non-negative lengths, every mask a non-empty combination of the instance's tasks,
    and every task completes exactly its work, ``sum_k a_{i,j_k} x_{j_k} = b_i`` (relative
    tolerance ``rtol``), never exceeding it along the way.  Tasks not in a segment's
    combination make no progress there (their speed is 0 by §3), so a task only ever runs
    in combinations containing it.  Raises :class:`InfeasibleSchedule`."""
    t = 0.0
    done = np.zeros(inst.n)
    scale = max(schedule.makespan, 1.0)
    for k, s in enumerate(schedule.segments):
        if not (0 < s.mask <= inst.full):
            raise InfeasibleSchedule(f"segment {k}: mask {s.mask} is not a combination of {inst.n} tasks")
        if abs(s.start - t) > rtol * scale:
            raise InfeasibleSchedule(f"segment {k} starts at {s.start}, previous ends at {t}")
        if s.end < s.start - rtol * scale:
            raise InfeasibleSchedule(f"segment {k} ends at {s.end} before its start {s.start}")
        done = done + inst.speeds[s.mask] * (s.end - s.start)
        over = done > inst.b * (1 + rtol) + rtol
        if over.any():
            i = int(np.argmax(over))
            raise InfeasibleSchedule(f"task {i} exceeds its work in segment {k} ({done[i]} > {inst.b[i]})")
        t = s.end
    short = np.abs(done - inst.b) > rtol * np.maximum(inst.b, 1.0)
    if short.any():
        i = int(np.argmax(short))
        raise InfeasibleSchedule(f"task {i} completes {done[i]} work units, needs {inst.b[i]}")


def schedule_from_times(x: dict[int, float]) -> Schedule:
    """The schedule running each combination j for x_j (x_j > 0), in increasing mask order
    (§4.1: "in any order")."""
    segs, t = [], 0.0
    for mask in sorted(x):
        if x[mask] > 0:
            segs.append(Segment(int(mask), t, t + float(x[mask])))
            t += float(x[mask])
    return Schedule(segs)
