"""Delay-only composed profiles, folded: many sleeps in one numpy pass, the same dates.

A ``composed`` profile whose sequence holds only ``delay`` profiles (``repeat`` up to 2**31
in Batsim 4.2.1) is, in SimGrid, one ``sleep_for`` after another: each sleep is an action
of the clock, and each step of the clock subtracts the step from every pending action
(:class:`coburst.simulator.kernel.Clock`).  Run one by one, a million such sleeps cost a
million trips through the kernel and the job's generators.

When a sleep of such a sequence ends *alone* (no other action ends in that step, no other
process is ready to run, the solver has nothing to redo), nothing but the job can act
before its next sleep ends, as long as that sleep is the strictly shortest pending action
and ends no other one.  :class:`DelayChain` then does, for as many following sleeps as
that holds, exactly what the clock would have done step by step — ``now + d`` and every
other action's ``remaining - rate * d``, with SimGrid's precision rule — as numpy
accumulations (``ufunc.accumulate`` folds left to right, one IEEE operation per element, as
the step-by-step code does), and it applies Batsim's walltime rule to each sleep (the whole
delay only while it is strictly shorter than the walltime left).  The job then goes on from
the last folded sleep as if it had run them all; the outputs are the same bytes
(``tests/test_sim_folding.py`` runs both ways on random workloads).

Not folded (run sleep by sleep): energy runs (each sleep's end updates its host's energy), a
job whose speed factor is not 1, a job with additional I/O, a sequence holding a non-zero
``ret`` or a delay that is not a positive number.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from coburst import signals
from coburst.simulator.kernel import PRECISION

if TYPE_CHECKING:  # pragma: no cover
    from coburst.simulator.kernel import Clock
    from coburst.simulator.workload import Profile

#: False: every sleep runs through the kernel (the reference the fold is tested against)
ENABLED = True

#: the first batch of sleeps folded at once (doubling up to :data:`LARGEST_BATCH`)
FIRST_BATCH = 64
LARGEST_BATCH = 1 << 16
#: the fewest sleeps worth a fold
MIN_FOLD = 4


def chain_delays(profile: "Profile", profiles) -> "np.ndarray | None":
    """The delays of one pass of ``profile``'s sequence if it can be folded (every element a
    ``delay`` profile with a positive finite delay and ``ret`` 0), else None."""
    delays = []
    for name in profile.data["seq"]:
        sub = profiles(name)
        if sub.type != "delay" or sub.ret != 0:
            return None
        d = float(sub.data["delay"])
        if not 0.0 < d < float("inf"):
            return None
        delays.append(d)
    return np.array(delays, dtype=np.float64) if delays else None


class DelayChain:
    """The fold of one composed profile's sleeps; the kernel calls :meth:`fold` (as the
    ``fold`` of the job's process) when one of them ended alone."""

    __slots__ = ("run", "period", "total", "index", "done", "remaining")

    def __init__(self, run, period: np.ndarray, repeat: int):
        """``run``: the job's :class:`~coburst.simulator.execution.JobRun` (its ``remaining``,
        ``rate``, ``rate_changed`` and current sleep's outcome are read)."""
        self.run = run
        self.period = period
        self.total = repeat * len(period)
        self.index = 0  # the sleep running now (Batsim's current_task_index)
        self.done = 0  # sleeps folded after it (read and reset by the job)
        self.remaining = run.remaining  # the walltime left after them

    def fold(self, clock: "Clock") -> None:
        run = self.run
        if run.rate != 1.0 or run.rate_changed or run._sleep_outcome != "done":
            return
        period, size = self.period, len(self.period)
        start = self.index + 1
        if start + MIN_FOLD > self.total:
            return
        # (a quick look first: a fold pays for itself only if a few sleeps end before any
        # other action; in a busy simulation most do not)
        if clock.n and sum(period[i % size] for i in range(start, start + MIN_FOLD)) >= clock.next_delta():
            return
        wall = run.remaining
        if wall > 0:  # what run_delay subtracts when the ending sleep's job resumes
            wall = wall - period[self.index % size]
        timed = wall >= 0
        if timed and wall <= 0:
            return
        now = clock.now
        n = clock.n
        rem = np.array(clock.rem, dtype=np.float64)
        rate = np.array(clock.rate, dtype=np.float64)
        prec = np.array(clock.prec, dtype=np.float64)
        unit = bool(np.all(rate == 1.0))
        live = rate > 0  # (a rate of 0 never ends: SimGrid leaves it out of the step)
        folded = 0
        batch = FIRST_BATCH
        while start < self.total:
            count = min(batch, self.total - start)
            d = period[np.arange(start, start + count) % size]
            nows = np.add.accumulate(np.concatenate(([now], d)))
            ok = np.ones(count, dtype=bool)
            if timed:
                walls = np.subtract.accumulate(np.concatenate(([wall], d)))
                ok &= d < walls[:-1]
            if n:
                steps = np.broadcast_to(d, (n, count)) if unit else rate[:, None] * d[None, :]
                amounts = np.subtract.accumulate(np.concatenate((rem[:, None], steps), axis=1), axis=1)
                before = amounts[:, :-1] if unit else np.where(live[:, None], amounts[:, :-1] / np.where(
                    live, rate, 1.0)[:, None], np.inf)
                ok &= np.all(before > d, axis=0)  # the sleep is the one shortest action
                after = amounts[:, 1:]
                ok &= ~np.any((after < PRECISION) & (after < prec[:, None]), axis=0)  # ending none
            good = count if ok.all() else int(np.argmin(ok))
            if good:
                now = float(nows[good])
                if timed:
                    wall = float(walls[good])
                if n:
                    rem = amounts[:, good].copy()
                folded += good
                start += good
            if good < count:
                break
            signals.check()
            batch = min(2 * batch, LARGEST_BATCH)
        if not folded:
            return
        clock.now = now
        if n:
            clock.rem = rem.tolist()
        clock.skip_numbers(folded)  # each sleep would have been a new action
        self.done = folded
        self.remaining = wall if timed else run.remaining
