"""A process kernel on SimGrid: Batsim's actors as Python generators in one SimGrid actor.

Batsim 4.2 runs each of its actors (server, submitters, request-reply, one per job, waiters,
killers) as a SimGrid actor.  With SimGrid's Python binding every actor is an OS thread and
every blocking call a thread switch, which made an actor-per-job engine slow.  Here every
Batsim actor is a *process*: a generator that yields what it waits for —

* :class:`Sleep` ``(duration)``            — ``this_actor::sleep_for``;
* :class:`Put` ``(mailbox, msg, route)``   — a blocking ``mailbox->put(msg, 1)``: a 1-byte
  transfer over a route of the given latency and bottleneck bandwidth;
* :class:`Get` ``(mailbox)``               — a blocking ``mailbox->get()``;
* :class:`Run` ``(hosts, flops, bytes, timeout)`` — a SimGrid parallel task
  (``exec_init(...)->start()->wait_for(timeout)``), the one thing SimGrid itself simulates
  (network and I/O contention under ``ptask_L07``); the process gets back ``"done"``,
  ``"timeout"`` or ``"cancelled"``;
* :class:`Suspend` — wait until someone else wakes the process.

and one SimGrid actor, :meth:`Kernel.main`, runs them all.

**Time is SimGrid's own arithmetic** (:class:`Clock`): under ``ptask_L07`` every pending
action counts down by common steps, and a 1-byte message costs its route's latency, then
1 B / the bottleneck bandwidth — measured bit for bit against SimGrid 3.32 (Batsim 4.2.1's)
and 4.1.  Actions ending in the same step wake their processes in creation order;
processes woken or created at a date run in rounds at that date, in the order they were
woken (SimGrid's scheduling rounds).  When both ends of a message wait, the side that
arrived first resumes first (as SimGrid does).

Simulated time advances without a thread switch per event: the SimGrid clock is only
moved (one ``sleep_for`` or ``wait_any_for``) while parallel tasks run.
"""

from __future__ import annotations

import math
import os
import sys
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Generator

import numpy as np

from coburst.simulator._simgrid import simgrid

_DEBUG = bool(os.environ.get("COBURST_DEBUG_SIM"))

#: SimGrid's ``precision/timing``: a remaining duration below it is over
PRECISION = 1e-9
#: SimGrid's ``precision/work-amount`` x ``precision/timing``: the relative precision of
#: an action's remaining work
WORK_PRECISION = 1e-5 * 1e-9
MSG_BYTES = 1  # Batsim's internal messages are 1 byte
_min = np.minimum.reduce


@dataclass(slots=True)
class Sleep:
    duration: float


@dataclass(slots=True)
class Put:
    mailbox: "Mailbox"
    message: Any
    latency: float  # route latency (s)
    bandwidth: float  # bottleneck bandwidth of the route (B/s); inf with no link on the route


@dataclass(slots=True)
class Get:
    mailbox: "Mailbox"


@dataclass(slots=True)
class Suspend:
    """Wait until someone else wakes the process (e.g. a countdown set with
    :meth:`Kernel.countdown`)."""


@dataclass(slots=True)
class Work:
    """A parallel task coburst computes itself (it only computes, on dedicated hosts): its
    whole work (1.0) at ``rate`` per second, the value SimGrid's solver would give it."""

    rate: float
    timeout: float = -1.0  # < 0: no timeout


@dataclass(slots=True)
class Run:
    hosts: list
    flops: list
    bytes: list
    timeout: float = -1.0  # < 0: no timeout


class Process:
    """One Batsim actor (a generator driven by the kernel)."""

    __slots__ = ("gen", "name", "alive", "action", "activity", "timer", "data", "zombie")

    def __init__(self, gen: Generator, name: str):
        self.gen = gen
        self.name = name
        self.alive = True
        self.action = None  # its pending countdown (sleep), if any
        self.activity = None  # the running simgrid.Exec, if any
        self.timer = None  # absolute date of its parallel task's timeout, if any
        self.data = None  # free slot for the owner (e.g. the JobRun)
        self.zombie = None  # a parallel task left running after its timeout (see _fire_timers)


@dataclass
class Mailbox:
    """A SimGrid mailbox with blocking put/get: puts are served one at a time, FIFO."""

    name: str
    pending: deque = field(default_factory=deque)  # (sender, message, latency, transfer)
    receiver: Process | None = None
    receiver_first: bool = False  # the receiver was waiting when the current transfer began
    busy: bool = False  # a transfer is in progress

    def empty(self) -> bool:
        """``Mailbox::empty()``: no put waiting to be received."""
        return not self.pending or (self.busy and len(self.pending) == 1)


class Clock:
    """SimGrid's clock under ``ptask_L07``: pending actions count down by common steps.

    Each pending action has a remaining amount and a rate: a sleep or a message's latency
    counts seconds at rate 1 (SimGrid's ``max_duration`` / ``latency``), a message's byte or
    a parallel task coburst computes itself counts the fraction of its work left (1.0 at
    the start) at a rate in fractions per second (SimGrid's ``remains`` and the lmm
    variable's value).  A step lasts the smallest ``remaining / rate``; it is added to
    ``now`` and ``rate * step`` is subtracted from every remaining amount (SimGrid's
    ``double_update``: below the precision — 1e-9 s for times, 1e-5 x 1e-9 for work — it is
    0), and the actions at 0 end, in creation order.  Measured with SimGrid 3.32 (Batsim
    4.2.1's) and 4.1: this reproduces their dates bit for bit, where ``start + duration`` is
    off by an ulp or more for most actions.  The amounts live in dense numpy arrays
    (swap-remove), so a step costs a few vector operations.
    """

    def __init__(self, capacity: int = 64):
        self.now = 0.0
        self.rem = np.empty(capacity)
        self.rate = np.empty(capacity)
        self.prec = np.empty(capacity)
        self.seq = np.empty(capacity, dtype=np.int64)
        self.owner: list = [None] * capacity
        self.n = 0
        self._counter = 0
        self._where: dict[int, int] = {}  # creation number -> index
        self._nonunit = 0  # actions whose rate is not 1.0 (none: remaining / rate == remaining)

    def add(self, duration: float, owner: Any) -> int:
        """Start a timed action (a sleep, a latency); returns its creation number."""
        return self._add(duration, 1.0, PRECISION, owner)

    def add_work(self, rate: float, owner: Any, remains: float = 1.0) -> int:
        """Start an action doing ``remains`` of work at ``rate`` per second."""
        if rate != 1.0:
            self._nonunit += 1
        return self._add(remains, rate, WORK_PRECISION, owner)

    def _add(self, amount: float, rate: float, precision: float, owner: Any) -> int:
        n = self.n
        if n == len(self.rem):
            self.rem = np.resize(self.rem, 2 * n)
            self.rate = np.resize(self.rate, 2 * n)
            self.prec = np.resize(self.prec, 2 * n)
            self.seq = np.resize(self.seq, 2 * n)
            self.owner.extend([None] * n)
        self.rem[n] = amount
        self.rate[n] = rate
        self.prec[n] = precision
        number = self._counter
        self._counter += 1
        self.seq[n] = number
        self.owner[n] = owner
        self._where[number] = n
        self.n = n + 1
        return number

    def set_rate(self, number: int, rate: float) -> None:
        """Change a running action's rate from now on (SimGrid: a new lmm value after a host's
        speed changed; the remaining amount keeps counting down from where it is)."""
        i = self._where.get(number)
        if i is None:
            return
        if self.rate[i] != 1.0:
            self._nonunit -= 1
        if rate != 1.0:
            self._nonunit += 1
        self.rate[i] = rate

    def remains(self, number: int) -> float | None:
        """What is left of an action (None: over or cancelled)."""
        i = self._where.get(number)
        return None if i is None else float(self.rem[i])

    def cancel(self, number: int) -> None:
        i = self._where.get(number)
        if i is not None:
            self._remove(i)

    def _remove(self, i: int) -> None:
        if self.rate[i] != 1.0:
            self._nonunit -= 1
        last = self.n - 1
        del self._where[int(self.seq[i])]
        if i != last:
            self.rem[i] = self.rem[last]
            self.rate[i] = self.rate[last]
            self.prec[i] = self.prec[last]
            self.seq[i] = self.seq[last]
            self.owner[i] = self.owner[last]
            self._where[int(self.seq[i])] = i
        self.owner[last] = None
        self.n = last

    def next_delta(self) -> float:
        """Duration of the next step (inf: nothing pending)."""
        n = self.n
        if not n:
            return math.inf
        if not self._nonunit:
            return float(self.rem[0]) if n == 1 else float(_min(self.rem[:n]))
        return float(_min(self.rem[:n] / self.rate[:n]))

    def step(self, delta: float) -> list:
        """Advance by ``delta``; return the owners of the actions that ended, in creation
        order."""
        self.now = self.now + delta
        n = self.n
        if not n:
            return []
        rem = self.rem[:n]
        if not self._nonunit:
            rem -= delta
        else:
            rem -= self.rate[:n] * delta
        ended = (rem < self.prec[:n]).nonzero()[0]  # double_update, then "<= 0: done"
        count = len(ended)
        if count == 1:
            i = int(ended[0])
            owner = self.owner[i]
            self._remove(i)
            return [owner]
        if not count:
            return []
        ended = ended[np.argsort(self.seq[ended], kind="stable")]
        owners = [self.owner[i] for i in ended]
        for i in sorted(ended.tolist(), reverse=True):  # swap-remove from the back
            self._remove(i)
        return owners


class Kernel:
    """Runs processes in simulated time (see the module docstring)."""

    def __init__(self):
        self.clock = Clock()
        self._ready: deque = deque()
        self._activities: dict = {}  # simgrid.Exec -> Process
        self._timers: list = []  # (date, number, process, exec): parallel-task timeouts
        self._aset = None
        self._timer_counter = 0
        self.stopped = False

    @property
    def now(self) -> float:
        return self.clock.now

    # ------------------------------------------------------------------ processes
    def spawn(self, gen: Generator, name: str = "") -> Process:
        """Create a process; it first runs in the next round at the current date (as a
        SimGrid actor created by another one)."""
        proc = Process(gen, name)
        self._ready.append((proc, None))
        return proc

    def kill(self, proc: Process) -> None:
        """Kill a process at once (``Actor::kill``): its countdown is dropped, a running
        parallel task cancelled."""
        if not proc.alive:
            return
        proc.alive = False
        if proc.action is not None:
            self.clock.cancel(proc.action)
            proc.action = None
        if proc.activity is not None:
            activity, proc.activity = proc.activity, None
            self._drop(activity)
        proc.gen.close()

    def wake(self, proc: Process, value: Any = None) -> None:
        self._ready.append((proc, value))

    def countdown(self, proc: Process, duration: float) -> None:
        """Wake ``proc`` after ``duration`` (a SimGrid sleep), replacing its pending one."""
        if proc.action is not None:
            self.clock.cancel(proc.action)
        proc.action = self.clock.add(duration, proc)

    def _handle(self, proc: Process, req: Any) -> None:
        """Carry out a request (SimGrid handles the simcalls of a round after all its actors ran)."""
        if not proc.alive:
            return
        kind = type(req)
        if kind is Sleep:
            proc.action = self.clock.add(req.duration, proc)
        elif kind is Put:
            box = req.mailbox
            box.pending.append((proc, req.message, req.latency, req.bandwidth))
            if box.receiver is not None and not box.busy:
                self._start_transfer(box, receiver_first=True)
        elif kind is Get:
            box = req.mailbox
            box.receiver = proc
            if box.pending and not box.busy:
                self._start_transfer(box, receiver_first=False)
        elif kind is Suspend:
            pass
        elif kind is Run:
            self._start_exec(proc, req)
        elif kind is Work:
            handle = _WorkHandle(proc)
            if req.rate == math.inf:  # nothing to compute: over at the next step
                handle.number = self.clock.add(0.0, handle)
            else:
                handle.number = self.clock.add_work(req.rate, handle)
            proc.activity = handle
            if req.timeout >= 0:
                self._add_timer(proc, handle, req.timeout)

        else:  # pragma: no cover - programming error
            raise TypeError(f"process {proc.name} yielded {req!r}")

    def _round(self) -> None:
        """One scheduling round: every ready process runs until its next request, then the
        requests are carried out in that order (so a put made in this round is not yet in
        its mailbox for a process that looks at it later in the same round, as in SimGrid)."""
        batch, self._ready = self._ready, deque()
        requests = []
        append = requests.append
        for proc, value in batch:
            if not proc.alive:
                continue
            try:
                req = proc.gen.send(value)
            except StopIteration:
                proc.alive = False
                continue
            if self.stopped:
                return
            append((proc, req))
        handle = self._handle
        for proc, req in requests:
            handle(proc, req)

    # ------------------------------------------------------------------ mailboxes
    def _start_transfer(self, box: Mailbox, receiver_first: bool) -> None:
        box.busy = True
        box.receiver_first = receiver_first
        _, _, latency, bandwidth = box.pending[0]
        # a comm is one L07 action: its latency, then its byte at the bottleneck bandwidth (no
        # link at all on the route: nothing to do, it ends at the next step)
        if latency > 0:
            self.clock.add(latency, _Transfer(box, bandwidth))
        else:
            self._start_byte(box, bandwidth)

    def _start_byte(self, box: Mailbox, bandwidth: float) -> None:
        if math.isinf(bandwidth):
            self.clock.add(0.0, _Transfer(box, None))
        else:
            self.clock.add_work(bandwidth / MSG_BYTES, _Transfer(box, None))

    def _transfer_step(self, marker: "_Transfer") -> None:
        if marker.bandwidth is not None:
            self._start_byte(marker.box, marker.bandwidth)
            return
        box = marker.box
        sender, message, _, _ = box.pending.popleft()
        box.busy = False
        receiver, box.receiver = box.receiver, None
        if box.receiver_first:  # whoever waited first resumes first
            self.wake(receiver, message)
            self.wake(sender, None)
        else:
            self.wake(sender, None)
            self.wake(receiver, message)

    # ------------------------------------------------------------------ parallel tasks
    def _start_exec(self, proc: Process, req: Run) -> None:
        if not self._activities:
            self._sync_simgrid()
        exe = simgrid.this_actor.exec_init(req.hosts, req.flops, req.bytes)
        exe.start()
        if self._aset is None:
            self._aset = simgrid.ActivitySet()
        self._aset.push(exe)
        proc.activity = exe
        self._activities[exe] = proc
        if req.timeout >= 0:
            self._add_timer(proc, exe, req.timeout)

    def _add_timer(self, proc: Process, activity: Any, timeout: float) -> None:
        """SimGrid's ``wait_for(timeout)``: a timer at the absolute date ``now + timeout``."""
        proc.timer = self.clock.now + timeout
        self._timers.append((proc.timer, self._timer_counter, proc, activity))
        self._timer_counter += 1
        self._timers.sort(key=lambda t: (t[0], t[1]))

    def _drop(self, activity: Any) -> None:
        """Stop a running activity (a SimGrid Exec or a computed parallel task)."""
        if type(activity) is _WorkHandle:
            self.clock.cancel(activity.number)
        else:
            self._forget(activity)
            activity.cancel()

    def work_done(self, proc: Process) -> float | None:
        """Fraction of its current computed parallel task ``proc`` has done (None: none)."""
        activity = proc.activity
        if type(activity) is not _WorkHandle:
            return None
        left = self.clock.remains(activity.number)
        return 1.0 if left is None else 1.0 - left

    def _sync_simgrid(self) -> None:
        """Bring SimGrid's idle clock exactly to the kernel's date: double it while it is
        below half the date (``c + c`` is exact), then one sleep whose end ``c + (now - c)``
        is exact too (Sterbenz)."""
        now = self.clock.now
        clock = simgrid.Engine.clock
        while 0 < clock < now / 2:
            simgrid.this_actor.sleep_for(clock)
            clock = simgrid.Engine.clock
        if now > clock:
            simgrid.this_actor.sleep_for(now - clock)

    def _forget(self, exe) -> None:
        if exe in self._activities:
            del self._activities[exe]
            self._aset.erase(exe)

    def cancel_activity(self, proc: Process) -> bool:
        """Cancel the parallel task ``proc`` waits for; it resumes with ``"cancelled"``."""
        activity = proc.activity
        if activity is None:
            return False
        proc.activity = None
        proc.timer = None
        self._drop(activity)
        self.wake(proc, "cancelled")
        return True

    def _fire_timers(self) -> None:
        now = self.clock.now
        while self._timers and self._timers[0][0] <= now:
            _, _, proc, activity = self._timers.pop(0)
            if proc.activity is activity and proc.timer is not None:
                proc.activity = None
                proc.timer = None
                if type(activity) is _WorkHandle:
                    self._drop(activity)  # on dedicated hosts nobody can tell the difference
                else:
                    # Batsim's job actor stops waiting (wait_for timed out) but nothing cancels
                    # the parallel task: it keeps its CPUs and links until the job is deleted
                    # (measured), see end_zombie
                    self._activities[activity] = None
                    proc.zombie = activity
                self.wake(proc, "timeout")

    def end_zombie(self, proc: Process) -> None:
        """Cancel a parallel task left running after its timeout (its job is deleted)."""
        exe, proc.zombie = proc.zombie, None
        if exe is not None and exe in self._activities:
            self._drop(exe)

    # ------------------------------------------------------------------ main loop
    def main(self) -> None:
        """The body of the one SimGrid actor."""
        clock, timers = self.clock, self._timers
        while not self.stopped:
            while self._ready:
                self._round()
                if self.stopped:
                    return
            delta = clock.next_delta()
            if timers:
                while timers and timers[0][2].timer is None:
                    timers.pop(0)  # stale timeouts
                if timers:
                    delta = min(delta, max(0.0, timers[0][0] - clock.now))
            if self._activities:
                # let SimGrid run the parallel tasks until our next date or one of them ends
                timeout = clock.now + delta - simgrid.Engine.clock
                if timeout > 0 or math.isinf(delta):
                    try:
                        done = self._aset.wait_any() if math.isinf(delta) else self._aset.wait_any_for(timeout)
                    except simgrid.TimeoutException:
                        done = None
                    if done is not None:
                        if _DEBUG:
                            print(f"exec done at {simgrid.Engine.clock!r} (kernel {clock.now!r}, "
                                  f"next {clock.now + delta!r})", file=sys.stderr)
                        proc = self._activities.pop(done, None)
                        self._aset.erase(done)
                        self._advance(max(0.0, simgrid.Engine.clock - clock.now))
                        if proc is not None:
                            proc.activity = None
                            proc.timer = None
                            self.wake(proc, "done")
                        continue
            if delta == math.inf:
                return  # nothing can ever happen again
            self._advance(delta)

    def _advance(self, delta: float) -> None:
        for owner in self.clock.step(delta):
            kind = type(owner)
            if kind is _Transfer:
                self._transfer_step(owner)
            elif kind is _WorkHandle:
                self._work_ended(owner)
            else:
                owner.action = None
                self.wake(owner, None)
        self._fire_timers()

    def _work_ended(self, handle: "_WorkHandle") -> None:
        proc = handle.proc
        if proc.activity is handle:
            proc.activity = None
            proc.timer = None
            self.wake(proc, "done")

    def stop(self) -> None:
        self.stopped = True


class _WorkHandle:
    """A computed parallel task in the clock (the owner of its action)."""

    __slots__ = ("proc", "number")

    def __init__(self, proc: Process):
        self.proc = proc
        self.number = -1


class _Transfer:
    """Owner of a message's latency (``bandwidth``: of the byte to send next) or byte (None)."""

    __slots__ = ("box", "bandwidth")

    def __init__(self, box: Mailbox, bandwidth: float | None):
        self.box = box
        self.bandwidth = bandwidth
