"""FCS, Fastest Combination Speed first (Kuchumov & Korkhov 2021, §4.2, Listing 1).

While tasks remain, run the combination of active tasks with the largest speed
a_j = sum_i a_{i,j} until one of its tasks completes.  Decisions where the text is open
(tested in ``tests/test_theory_fcs.py``):

* **Order of the combinations** (ties): Listing 1 keeps the first maximum "in the order of
  j = 1, ..., m", an order the paper never defines.  coburst uses increasing bit mask
  (task i = bit i): ``tie="first"``.  ``tie="last"`` keeps the highest mask, and
  ``tie="worst"`` explores every tied choice and keeps the one with the largest makespan —
  the adversarial reading of Example 1 ("Suppose that the FCS strategy at the first
  iteration selects the combination with {T_2, ..., T_n}"), which is also ``"last"`` there.
* **Ties in floating point**: combinations whose speeds differ by at most
  :data:`TIE_RTOL` (relative) are tied; the exact path (``exact=True``, Fractions) ties
  only equal speeds.
* **Simultaneous completion**: the running combination runs until the first of its tasks
  completes; every task of it that completes at that same instant (relative
  :data:`TIE_RTOL` in floats, exactly with Fractions) completes with it.
* Tasks at speed 0 in the chosen combination stay active (they "stall").
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from coburst.theory.model import Instance, Schedule, Segment, submasks_within

TIE_RTOL = 1e-12
#: search nodes ``tie="worst"`` may visit before giving up
WORST_NODE_LIMIT = 200_000


class TieSearchTooLarge(RuntimeError):
    """``tie="worst"`` met more tied branches than :data:`WORST_NODE_LIMIT`."""


def _float_step(inst: Instance, csum: np.ndarray, active: int) -> list[int]:
    """The tied fastest combinations of the active tasks (increasing masks)."""
    cand = submasks_within(active, inst.n)
    speeds = csum[cand]
    best = speeds.max()
    return [int(c) for c in cand[speeds >= best - TIE_RTOL * abs(best)]]


def _float_run(inst: Instance, mask: int, rem: np.ndarray) -> tuple[float, np.ndarray, int]:
    """Run ``mask`` until its first completion: (duration, new remaining work, finished mask)."""
    a = inst.speeds[mask]
    running = np.flatnonzero(a > 0)
    times = rem[running] / a[running]
    dt = times.min()
    done = running[times <= dt * (1 + TIE_RTOL)]
    new = rem - a * dt
    new[done] = 0.0
    new = np.maximum(new, 0.0)
    fin = 0
    for i in done:
        fin |= 1 << int(i)
    return float(dt), new, fin


def fcs(inst: Instance, tie: str = "first") -> Schedule:
    """FCS's schedule of ``inst`` in floating point (see the module docstring for ``tie``)."""
    csum = inst.combination_speeds()
    if tie == "worst":
        segs = _worst(inst, csum, inst.full, inst.b.astype(float).copy(), 0.0, [0])
        return Schedule(segs)
    if tie not in ("first", "last"):
        raise ValueError(f"unknown tie-break {tie!r}")
    active, rem, t, segs = inst.full, inst.b.astype(float).copy(), 0.0, []
    while active:
        tied = _float_step(inst, csum, active)
        mask = tied[0] if tie == "first" else tied[-1]
        dt, rem, fin = _float_run(inst, mask, rem)
        segs.append(Segment(mask, t, t + dt))
        t += dt
        active &= ~fin
    return Schedule(segs)


def _worst(inst, csum, active, rem, t, counter) -> list[Segment]:
    if not active:
        return []
    best: list[Segment] | None = None
    for mask in _float_step(inst, csum, active):
        counter[0] += 1
        if counter[0] > WORST_NODE_LIMIT:
            raise TieSearchTooLarge(f"more than {WORST_NODE_LIMIT} tied FCS branches")
        dt, new, fin = _float_run(inst, mask, rem)
        tail = [Segment(mask, t, t + dt)] + _worst(inst, csum, active & ~fin, new, t + dt, counter)
        if best is None or tail[-1].end > best[-1].end * (1 + TIE_RTOL):
            best = tail
    return best


def fcs_exact(inst: Instance, tie: str = "first") -> Schedule:
    """FCS with exact rational arithmetic (the instance's numbers as Fractions); segment
    times are Fractions.  ``tie`` is ``"first"`` or ``"last"``."""
    n = inst.n
    b = inst.fraction_b()
    rows: dict[int, list[Fraction]] = {}

    def row(mask: int) -> list[Fraction]:
        if mask not in rows:
            rows[mask] = inst.fraction_speeds(mask)
        return rows[mask]

    csum: dict[int, Fraction] = {}
    active, rem, t, segs = inst.full, list(b), Fraction(0), []
    while active:
        best_mask, best = 0, Fraction(-1)
        for mask in submasks_within(active, n):
            mask = int(mask)
            if mask not in csum:
                csum[mask] = sum(row(mask), Fraction(0))
            s = csum[mask]
            if s > best or (tie == "last" and s == best):
                best_mask, best = mask, s
        a = row(best_mask)
        dt = min(rem[i] / a[i] for i in range(n) if a[i] > 0)
        fin = 0
        for i in range(n):
            if a[i] > 0:
                rem[i] -= a[i] * dt
                if rem[i] == 0:
                    fin |= 1 << i
        segs.append(Segment(best_mask, t, t + dt))
        t += dt
        active &= ~fin
    return Schedule(segs)
