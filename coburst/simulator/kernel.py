"""A process kernel on SimGrid: Batsim's actors as Python generators in one SimGrid actor.

Batsim 4.2 runs each of its actors (server, submitters, request-reply, one per job, waiters,
killers) as a SimGrid actor.  With SimGrid's Python binding every actor is an OS thread and
every blocking call a thread switch, which made an actor-per-job engine slow.  Here every
Batsim actor is a *process*: a generator that yields what it waits for —

* :class:`Sleep` ``(duration)``            — ``this_actor::sleep_for``;
* :class:`Put` ``(mailbox, msg, latency, bandwidth, route, size)`` — a blocking
  ``mailbox->put(msg, size)`` (Batsim's messages: 1 byte) over a route: its links when
  given, else a link of its own of the given bottleneck bandwidth;
* :class:`Get` ``(mailbox)``               — a blocking ``mailbox->get()``;
* :class:`Run` ``(hosts, flops, bytes, timeout)`` — a SimGrid parallel task
  (``exec_init(...)->start()->wait_for(timeout)``), simulated here as SimGrid 3.32's
  ``ptask_L07`` model does (:mod:`coburst.simulator.l07`: network and CPU contention by the
  ``FairBottleneck`` solver); the process gets back ``"done"``, ``"timeout"`` or
  ``"cancelled"``;
* :class:`Suspend` — wait until someone else wakes the process.

and one SimGrid actor, :meth:`Kernel.main`, runs them all.

**Time is SimGrid 3.32's own arithmetic** (:class:`Clock`): under ``ptask_L07`` every pending
action counts down by common steps.  A parallel task and a 1-byte message are both
``L07Action`` s: the largest latency of their routes first, then their work (1.0) at the rate
the solver gives their lmm variable, re-solved whenever a variable comes or goes — a message
shares its route's links with the parallel tasks crossing them.  Measured bit for bit against
SimGrid 3.32 (Batsim 4.2.1's; ``scripts/l07_reference``).  Actions ending in the same step
wake their processes in creation order; processes woken or created at a date run in rounds at
that date, in the order they were woken (SimGrid's scheduling rounds).  When both ends of a
message wait, the side that arrived first resumes first (as SimGrid does).

No SimGrid activity runs while simulating: SimGrid (4.1, the Python binding) only loaded the
platform, whose hosts, links and routes :class:`coburst.simulator.l07.Network` reads.
"""

from __future__ import annotations

import gc
import math
import os
from collections import deque
from dataclasses import dataclass, field
from operator import truediv
from typing import Any, Generator


from coburst.simulator import l07

_DEBUG = bool(os.environ.get("COBURST_DEBUG_SIM"))

#: SimGrid's ``precision/timing``: a remaining duration below it is over
PRECISION = 1e-9
#: SimGrid's ``precision/work-amount`` x ``precision/timing``: the relative precision of
#: an action's remaining work
WORK_PRECISION = 1e-5 * 1e-9
MSG_BYTES = 1  # Batsim's internal messages are 1 byte


@dataclass(slots=True)
class Sleep:
    duration: float


@dataclass(slots=True)
class Put:
    mailbox: "Mailbox"
    message: Any
    #: the route's links (shared with the parallel tasks and messages crossing them)
    route: "l07.Route"
    size: float = MSG_BYTES  # bytes sent (``mailbox->put(msg, size)``)


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

    __slots__ = ("gen", "name", "alive", "action", "activity", "timer", "data", "zombie", "fold")

    def __init__(self, gen: Generator, name: str):
        self.gen = gen
        self.name = name
        self.alive = True
        self.action = None  # its pending countdown (sleep), if any
        self.activity = None  # the running parallel task (_Flow or _WorkHandle), if any
        self.timer = None  # the clock action of its parallel task's timeout, if any
        self.data = None  # free slot for the owner (e.g. the JobRun)
        self.zombie = None  # a parallel task left running after its timeout (see _timeout)
        #: while it sleeps through a delay-only composed profile: its
        #: :class:`~coburst.simulator.folding.DelayChain` (see :meth:`Kernel._ended`)
        self.fold = None


@dataclass
class Mailbox:
    """A SimGrid mailbox with blocking put/get: puts are served one at a time, FIFO."""

    name: str
    pending: deque = field(default_factory=deque)  # (sender, Put)
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
    off by an ulp or more for most actions.

    The amounts live in plain lists (swap-remove): a simulation has a few tens of pending
    actions at a time (running jobs, messages, timers), where a list comprehension costs less
    than numpy's per-call overhead (measured: 1-2 us a step against 3.3 us up to ~60
    actions); the arithmetic is the same IEEE double operations either way.
    """

    __slots__ = ("now", "rem", "rate", "prec", "seq", "owner", "n", "_counter", "_where", "_nonunit")

    def __init__(self, capacity: int = 64):
        self.now = 0.0
        self.rem: list[float] = []
        self.rate: list[float] = []
        self.prec: list[float] = []
        self.seq: list[int] = []
        self.owner: list = []
        self.n = 0
        self._counter = 0
        self._where: dict[int, int] = {}  # creation number -> index
        self._nonunit = 0  # actions whose rate is not 1.0 (none: remaining / rate == remaining)

    def add(self, duration: float, owner: Any, number: int = -1) -> int:
        """Start a timed action (a sleep, a latency); returns its creation number (``number``
        >= 0: the action continues one that just ended, in its place in the creation order)."""
        if number < 0:
            number = self._counter
            self._counter += 1
        self._where[number] = self.n
        self.n += 1
        self.rem.append(float(duration))
        self.rate.append(1.0)
        self.prec.append(PRECISION)
        self.seq.append(number)
        self.owner.append(owner)
        return number

    def add_work(self, rate: float, owner: Any, remains: float = 1.0, number: int = -1) -> int:
        """Start an action doing ``remains`` of work at ``rate`` per second."""
        if rate != 1.0:
            self._nonunit += 1
        return self._add(remains, rate, WORK_PRECISION, owner, number)

    def _add(self, amount: float, rate: float, precision: float, owner: Any, number: int = -1) -> int:
        if number < 0:
            number = self._counter
            self._counter += 1
        self._where[number] = self.n
        self.n += 1
        self.rem.append(float(amount))
        self.rate.append(float(rate))
        self.prec.append(precision)
        self.seq.append(number)
        self.owner.append(owner)
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
        self.rate[i] = float(rate)

    def remains(self, number: int) -> float | None:
        """What is left of an action (None: over or cancelled)."""
        i = self._where.get(number)
        return None if i is None else self.rem[i]

    def skip_numbers(self, count: int) -> None:
        """``count`` actions were made and ended without passing here (a fold of sleeps):
        the next action's creation number comes after theirs."""
        self._counter += count

    def cancel(self, number: int) -> None:
        i = self._where.get(number)
        if i is not None:
            self._remove(i)

    def _remove(self, i: int) -> None:
        rate = self.rate
        if rate[i] != 1.0:
            self._nonunit -= 1
        rem, prec, seq, owner = self.rem, self.prec, self.seq, self.owner
        last = self.n - 1
        del self._where[seq[i]]
        if i != last:
            rem[i] = rem[last]
            rate[i] = rate[last]
            prec[i] = prec[last]
            number = seq[i] = seq[last]
            owner[i] = owner[last]
            self._where[number] = i
        rem.pop()
        rate.pop()
        prec.pop()
        seq.pop()
        owner.pop()
        self.n = last

    def next_delta(self) -> float:
        """Duration of the next step (inf: nothing pending)."""
        if not self.n:
            return math.inf
        if not self._nonunit:
            return min(self.rem)
        try:
            return min(map(truediv, self.rem, self.rate))
        except ZeroDivisionError:  # a rate of 0 never ends (SimGrid skips it)
            return min((r / q for r, q in zip(self.rem, self.rate) if q > 0), default=math.inf)

    def step(self, delta: float) -> list:
        """Advance by ``delta``; return the owners of the actions that ended, in creation
        order."""
        self.now = self.now + delta
        if not self.n:
            return []
        if not self._nonunit:
            rem = self.rem = [r - delta for r in self.rem]
        else:
            rem = self.rem = [r - q * delta for r, q in zip(self.rem, self.rate)]
        return self._ended(rem)

    def advance(self) -> list | None:
        """:meth:`next_delta` and :meth:`step` by it in one call (the same operations; the
        kernel's main loop): the owners of the actions that ended, in creation order; None
        (nothing done) when no action can ever end."""
        if not self.n:
            return None
        rem = self.rem
        if not self._nonunit:
            delta = min(rem)
            self.now = self.now + delta
            rem = self.rem = [r - delta for r in rem]
        else:
            rate = self.rate
            try:
                delta = min(map(truediv, rem, rate))
            except ZeroDivisionError:  # a rate of 0 never ends (SimGrid skips it)
                delta = min((r / q for r, q in zip(rem, rate) if q > 0), default=math.inf)
                if delta == math.inf:
                    return None
            self.now = self.now + delta
            rem = self.rem = [r - q * delta for r, q in zip(rem, rate)]
        return self._ended(rem)

    def _ended(self, rem: list) -> list:
        """Take out the actions a step left at 0 (``rem``: the amounts after it); their owners
        in creation order."""
        prec = self.prec
        # double_update, then "<= 0: done" (PRECISION is the larger of the two precisions)
        ended = [i for i, r in enumerate(rem) if r < PRECISION and r < prec[i]]
        count = len(ended)
        if count == 1:
            i = ended[0]
            owner = self.owner[i]
            self._remove(i)
            return [owner]
        if not count:
            return []
        seq = self.seq
        ended.sort(key=seq.__getitem__)
        owners = [self.owner[i] for i in ended]
        for i in sorted(ended, reverse=True):  # swap-remove from the back
            self._remove(i)
        return owners


class Kernel:
    """Runs processes in simulated time (see the module docstring)."""

    #: messages alone on their links skip the solver (:meth:`_enable_message`); False: every
    #: message goes through it (the reference path, kept for tests/test_sim_fastpaths.py)
    lone_messages = True

    def __init__(self, network: "l07.Network | None" = None):
        self.clock = Clock()
        self.network = network if network is not None else l07.Network()
        self.system = l07.FairBottleneck()
        self._ready: list = []  # (process, value) to run in the next round, in that order
        self.stopped = False
        #: the message counting down outside the solver, if any (see _enable_message)
        self._lone: "_Flow | None" = None

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
            self._stop_timer(proc)
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
            box.pending.append((proc, req))
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
            flow = _Flow(l07.ptask(self.network, req.hosts, req.flops, req.bytes), proc, None)
            proc.activity = flow
            self._start_flow(flow)
            if req.timeout >= 0:
                self._add_timer(proc, flow, req.timeout)
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
        batch, self._ready = self._ready, []
        if len(batch) == 1:  # (half the rounds of a delay run: the same steps, without the lists)
            proc, value = batch[0]
            if proc.alive:
                try:
                    req = proc.gen.send(value)
                except StopIteration:
                    proc.alive = False
                    return
                if not self.stopped:
                    self._handle(proc, req)
            return
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

    # ------------------------------------------------------------------ L07 actions
    def _start_flow(self, flow: "_Flow") -> None:
        """An ``L07Action`` starts: its latency first (its variable disabled), else at once."""
        latency = flow.action.latency
        if latency > 0:
            flow.latent = True
            flow.number = self.clock.add(latency, flow)
        elif flow.action.empty:  # nothing to do: over at the next step
            flow.number = self.clock.add(0.0, flow)
        else:
            self._enable(flow, -1)

    def _enable(self, flow: "_Flow", number: int) -> None:
        """The variable takes part in the sharing from now on (``update_variable_penalty(1)``);
        its rate comes from the next solve."""
        flow.latent = False
        if flow.action is None:  # a message whose action is made only if needed
            self._enable_message(flow, number)
            return
        flow.action.update_bound()
        var = flow.action.var
        var.owner = flow
        if self._lone is not None:
            self._join_lone()
        self.system.enable(var)
        flow.number = self.clock.add_work(0.0, flow, number=number)

    def _enable_message(self, flow: "_Flow", number: int) -> None:
        """A message (:meth:`_start_transfer`) whose links hold no other variable (none
        enabled, none freed but not yet purged; most messages of a simulation without
        communicating parallel tasks) is its own component: the next solve would give its
        variable the value ``_solve_alone`` gives it, a function of its elements and bound
        only (:meth:`l07.MessageKind.solve_alone`, once per route).  It counts down at that
        value without entering the solver (no action nor variable made, no enable, solve,
        removal nor purge).  Should another variable be enabled while it runs, the message
        first enters the system as the solve would have left it (:meth:`_join_lone`), so
        what is shared from then on is what the solver would share.  Not alone (or another
        message is): its action is made and enabled as any other."""
        kind = flow.kind
        if self._lone is not None:
            self._join_lone()
        else:
            for cnst, _ in kind.elems:
                if cnst.elems:
                    break
            else:
                self._lone = flow
                flow.number = self.clock.add_work((kind.solved or kind.solve_alone())[0], flow, number=number)
                return
        action = flow.action = kind.action(flow)
        self.system.enable(action.var)
        flow.number = self.clock.add_work(0.0, flow, number=number)

    def _join_lone(self) -> None:
        """The message counting down outside the solver enters it as its solve left it (its
        value and mu, its elements last on its links), before anything else is enabled or
        touched."""
        flow, self._lone = self._lone, None
        kind = flow.kind
        action = flow.action = kind.action(flow)
        var = action.var
        var.value, var.mu = kind.solved
        self.system.variables[id(var)] = var
        for cnst, weight in var.elems:
            cnst.elems.append([var, weight])

    def _latency_paid(self, flow: "_Flow") -> bool:
        """``HostL07Model::update_actions_state`` at the end of a latency: the variable is
        enabled; an action with nothing to do (no link, no flops) is over at once (True)."""
        if (flow.action.empty if flow.action is not None else flow.kind.empty):
            flow.latent = False
            return True
        self._enable(flow, flow.number)
        return False

    def _solve(self) -> None:
        """``FairBottleneck::solve`` (when something changed), then each enabled action counts
        down at its variable's value."""
        set_rate = self.clock.set_rate
        for var in self.system.solve():
            set_rate(var.owner.number, var.value)

    def _flow_over(self, flow: "_Flow") -> None:
        """An action's work is done (``Action::finish``, then the variable freed)."""
        if flow is self._lone:  # (its links left empty: the next solve would have nothing to do)
            self._lone = None
        elif not flow.latent and flow.action is not None:
            self.system.remove(flow.action.var)
        flow.number = -1
        if flow.box is not None:
            self._transfer_done(flow.box)
            return
        proc = flow.proc
        if proc.activity is flow:
            proc.activity = None
            self._stop_timer(proc)
            self.wake(proc, "done")
        elif proc.zombie is flow:
            proc.zombie = None

    def speed_changed(self, hosts: list) -> None:
        """The speed of ``hosts`` changed (a pstate): ``CpuL07::on_speed_change`` — their CPU
        constraints get the new bound, the actions computing on them a new bound."""
        names = set()
        system = self.system
        if self._lone is not None:
            self._join_lone()
        for host in hosts:
            cnst = self.network.cpus.get(host.name)
            if cnst is not None:
                cnst.bound = host.core_count * float(host.speed)
                names.add(host.name)
                system.touch(cnst)
        if not names:
            return
        for var in system.variables.values():
            action = var.owner.action
            if any(host.name in names for host, _ in action.computing):
                action.update_bound()
                system.touch(var)

    def host_load(self, host) -> float:
        """``Host::get_load()``: the flops per second the parallel tasks take of ``host``, with
        the values of the last solve (a task that ended or was cancelled since still counts,
        as in SimGrid's callbacks at its end; a task just enabled counts 0)."""
        cnst = self.network.cpus.get(host.name)
        return 0.0 if cnst is None else cnst.load()

    # ------------------------------------------------------------------ mailboxes
    def _start_transfer(self, box: Mailbox, receiver_first: bool) -> None:
        """A ``mailbox->put(msg, 1)`` meets its ``get``: a 1-byte ``L07Action`` over the route."""
        box.busy = True
        box.receiver_first = receiver_first
        req = box.pending[0][1]
        if not self.lone_messages:  # (the reference path: every message's action made at once)
            self._start_flow(_Flow(l07.message(req.route, req.size), None, box))
            return
        route, size = req.route, req.size
        kind = route.kinds.get(size) or l07.message_kind(route, size)
        flow = _Flow(None, None, box)
        flow.kind = kind
        if kind.latency > 0:  # as _start_flow, the action made only once needed (_enable_message)
            flow.latent = True
            flow.number = self.clock.add(kind.latency, flow)
        elif kind.empty:
            flow.number = self.clock.add(0.0, flow)
        else:
            self._enable_message(flow, -1)  # (_enable's path for a flow without action; latent is False)

    def _transfer_done(self, box: Mailbox) -> None:
        sender, req = box.pending.popleft()
        box.busy = False
        receiver, box.receiver = box.receiver, None
        ready = self._ready  # (wake, inlined: two per message)
        if box.receiver_first:  # whoever waited first resumes first
            ready.append((receiver, req.message))
            ready.append((sender, None))
        else:
            ready.append((sender, None))
            ready.append((receiver, req.message))

    # ------------------------------------------------------------------ parallel tasks
    def _add_timer(self, proc: Process, activity: Any, timeout: float) -> None:
        """SimGrid 3.32's ``ActivityImpl::wait_for(timeout)``: a ``SynchroImpl`` whose action is
        a sleep of ``timeout`` on the waiting actor's host (counted down like any action, not
        a timer at ``now + timeout``); it goes when the task ends first."""
        proc.timer = self.clock.add(timeout, _Timeout(proc, activity))

    def _stop_timer(self, proc: Process) -> None:
        if proc.timer is not None:
            self.clock.cancel(proc.timer)
            proc.timer = None

    def _drop(self, activity: Any) -> None:
        """Stop a running parallel task (an L07 action or a computed one)."""
        if type(activity) is _WorkHandle:
            self.clock.cancel(activity.number)
        elif activity.number >= 0:
            self.clock.cancel(activity.number)
            activity.number = -1
            if activity is self._lone:
                self._lone = None
            elif not activity.latent:
                self.system.remove(activity.action.var)

    def work_done(self, proc: Process) -> float | None:
        """Fraction of its current parallel task ``proc`` has done (None: none)."""
        activity = proc.activity
        if activity is None:
            return None
        if type(activity) is _Flow and activity.latent:
            return 0.0
        left = self.clock.remains(activity.number)
        return 1.0 if left is None else 1.0 - left

    def cancel_activity(self, proc: Process) -> bool:
        """Cancel the parallel task ``proc`` waits for; it resumes with ``"cancelled"``."""
        activity = proc.activity
        if activity is None:
            return False
        proc.activity = None
        self._stop_timer(proc)
        self._drop(activity)
        self.wake(proc, "cancelled")
        return True

    def _timeout(self, timeout: "_Timeout") -> None:
        """The sleep of a ``wait_for`` ended before the task: the waiter gets ``"timeout"``."""
        proc, activity = timeout.proc, timeout.activity
        if proc.activity is activity:
            proc.activity = None
            proc.timer = None
            if type(activity) is _WorkHandle:
                self._drop(activity)  # on dedicated hosts nobody can tell the difference
            else:
                # Batsim's job actor stops waiting (wait_for timed out) but nothing cancels
                # the parallel task: it keeps its CPUs and links until the job's actor ends,
                # see end_zombie
                proc.zombie = activity
            self.wake(proc, "timeout")

    def end_zombie(self, proc: Process) -> None:
        """Cancel a parallel task left running after its timeout (its job's actor ends: SimGrid
        cancels the activities of an ending actor)."""
        flow, proc.zombie = proc.zombie, None
        if flow is not None:
            self._drop(flow)

    # ------------------------------------------------------------------ main loop
    #: the garbage collector's youngest-generation threshold while simulating (Python's: 700)
    GC_THRESHOLD = 10_000

    def main(self) -> None:
        """The body of the one SimGrid actor.

        While it runs, what exists at its start (modules, platform, the scheduler) is out of
        the garbage collector's sight (``gc.freeze``: a full collection traversed all of it,
        ~30 ms each) and the youngest generation is collected every ``GC_THRESHOLD``
        allocations instead of 700 (a simulation allocates and frees small objects at a high
        rate, few of them in cycles): ~5 % of a delay run's CPU time, no change in what is
        simulated."""
        thresholds = gc.get_threshold()
        frozen_before = gc.get_freeze_count()  # (someone else's freeze is theirs to undo)
        gc.freeze()
        gc.set_threshold(max(thresholds[0], self.GC_THRESHOLD), *thresholds[1:])
        try:
            self._main()
        finally:
            gc.set_threshold(*thresholds)
            if not frozen_before:
                gc.unfreeze()

    #: clock steps between two looks at the stop signals (SIGINT, SIGTERM): a long run that
    #: never talks to its scheduler (a job of a million composed-profile tasks) still stops
    #: within a few milliseconds of one (a look costs one non-blocking read, ~1 us)
    SIGNAL_STEPS = 1024

    def _main(self) -> None:
        from coburst.signals import check

        clock, system = self.clock, self.system
        steps = self.SIGNAL_STEPS
        while not self.stopped:
            steps -= 1
            if not steps:
                check()  # (Interrupted: recorded by the engine's guard, outputs removed)
                steps = self.SIGNAL_STEPS
            while self._ready:
                self._round()
                if self.stopped:
                    return
            if system.modified:
                self._solve()
            ended = clock.advance()  # (next_delta, then step by it)
            if ended is None:
                return  # nothing can ever happen again
            self._ended(ended)

    def _ended(self, owners: list) -> None:
        """The actions of a step that ended: their owners' processes go on."""
        for owner in owners:
            kind = type(owner)
            if kind is _Flow:
                if not owner.latent or self._latency_paid(owner):
                    self._flow_over(owner)
            elif kind is _WorkHandle:
                self._work_ended(owner)
            elif kind is _Timeout:
                self._timeout(owner)
            else:
                owner.action = None
                if owner.fold is not None and len(owners) == 1 and not self._ready and not self.system.modified:
                    owner.fold.fold(self.clock)  # (its next sleeps, while nothing else can act)
                self._ready.append((owner, None))  # (wake, inlined)

    def _work_ended(self, handle: "_WorkHandle") -> None:
        proc = handle.proc
        if proc.activity is handle:
            proc.activity = None
            self._stop_timer(proc)
            self.wake(proc, "done")

    def stop(self) -> None:
        self.stopped = True


class _WorkHandle:
    """A computed parallel task in the clock (the owner of its action)."""

    __slots__ = ("proc", "number")

    def __init__(self, proc: Process):
        self.proc = proc
        self.number = -1


class _Timeout:
    """Owner of the sleep of a ``wait_for(timeout)`` on ``activity``."""

    __slots__ = ("proc", "activity")

    def __init__(self, proc: Process, activity: Any):
        self.proc = proc
        self.activity = activity


class _Flow:
    """An ``L07Action`` in the clock (the owner of its latency, then of its work): a parallel
    task of process ``proc`` or the message of mailbox ``box`` (whose action may be made only
    when it enters the solver: ``action`` None, ``kind`` its :class:`l07.MessageKind`)."""

    __slots__ = ("action", "proc", "box", "number", "latent", "kind")

    def __init__(self, action: "l07.Action | None", proc: Process | None, box: Mailbox | None):
        self.action = action
        self.proc = proc
        self.box = box
        self.number = -1
        self.latent = False
        self.kind = None
