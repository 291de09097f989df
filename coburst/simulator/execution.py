"""Job execution: Batsim 4.2's ``execute_job_process`` as a kernel process.

A job runs from the date the server handles its ``EXECUTE_JOB`` (Batsim creates the job's
actor directly on the first host of its allocation: no launch message), through its
profile tree (``jobs_execution.cpp`` ``execute_task``):

* a ``delay`` leaf sleeps ``delay`` seconds if that is strictly shorter than the walltime
  left, else sleeps the walltime left and the job ends with COMPLETED_WALLTIME_REACHED;
* every other leaf is a parallel task (``ptask_L07``: compute vector and communication
  matrix, so network and I/O contention are simulated, by the kernel as SimGrid 3.32
  does) waited for at most the walltime left;
* a ``composed`` profile runs its sequence ``repeat`` times; the first non-zero return code
  ends it;
* with EXECUTE_JOB's ``additional_io_job``, a parallel-task leaf first merges the I/O
  profile of its place in the I/O profile tree into its task
  (:func:`coburst.simulator.leaves.merge_io`).

The walltime left is Batsim's ``remaining_time``: a delay subtracts its length, a parallel
task the time it took.  At the end the job reports to the server with a 1-byte message from
its first host (unless it was killed: the killer reports kills).

Two things can change a running job from outside:

* its **speed factor** (:meth:`JobRun.set_rate`) — the co-scheduling heatmap hook slows or
  speeds a job when its node neighbours change.  The current leaf is interrupted, the work
  done so far is kept, and the rest continues at the new rate;
* a **kill** (:meth:`JobRun.kill`) — :meth:`JobRun.progress` first reports where the job
  was, in Batsim's ``job_progress`` format.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generator

from coburst.errors import ProtocolError
from coburst.simulator import folding
from coburst.simulator.folding import MIN_FOLD, DelayChain, chain_delays
from coburst.simulator.kernel import Run, Suspend, Work
from coburst.simulator.leaves import OTHER_LEAVES, OtherLeaves, merge_io

if TYPE_CHECKING:  # pragma: no cover
    from coburst.simulator.jobs import SimJob
    from coburst.simulator.view import SimulatorView
    from coburst.simulator.kernel import Process
    from coburst.simulator.workload import Profile


_SUSPEND = Suspend()  # (the kernel only reads a request: one for every job)


@dataclass
class Leaf:
    """The leaf task being executed right now."""

    profile_name: str
    #: "delay", "ptask", or "untracked": a leaf whose progress Batsim does not follow (usage
    #: trace, send, recv: neither a ptask nor a delay start, see JobRun.progress)
    kind: str
    work_done: float = 0.0  # fraction of the leaf done before the current chunk (0..1)
    chunk_start: float = 0.0  # simulated time the current chunk started
    chunk_rate: float = 1.0
    delay: float = 0.0  # delay leaves: duration at rate 1
    proc: Any = None  # ptask leaves: the job's kernel process (its running parallel task)
    started: bool = False

    kernel: Any = None  # ptask leaves: the kernel running the job

    def fraction_done(self, now: float) -> float:
        """Fraction of this leaf done at ``now`` (Batsim's ``progress``)."""
        if not self.started:
            return 0.0
        if self.kind == "delay":
            if self.delay <= 0:
                return 1.0
            return min(1.0, self.work_done + (now - self.chunk_start) * self.chunk_rate / self.delay)
        done = self.kernel.work_done(self.proc) if self.kernel is not None and self.proc is not None else None
        if done is None:
            return self.work_done
        return self.work_done + (1.0 - self.work_done) * done


@dataclass
class Frame:
    """One composed profile on the execution stack."""

    profile_name: str
    index: int = -1  # Batsim's current_task_index (global over repeats)


@dataclass
class JobRun(OtherLeaves):
    """State of one executing job; :meth:`process` is its kernel process body."""

    sim: "SimulatorView"
    job: "SimJob"
    hosts: list  # simgrid.Host of the allocation, in executor order
    first_host: Any = None  # host of the allocation's first resource (Batsim runs the job there)
    start: float = 0.0
    rate: float = 1.0
    remaining: float = -1.0  # Batsim's remaining_time (< 0: no walltime)
    stack: list[Frame] = field(default_factory=list)
    leaf: Leaf | None = None
    leaf_depth: int = 0
    proc: "Process | None" = None
    leaf_start: float = 0.0  # date the current delay leaf started
    rate_changed: bool = False  # the current delay leaf's rate changed while it ran
    _sleep_outcome: str = ""  # how the planned end of the current delay leaf ends it
    _rate_cancel: bool = False  # the running chunk was cancelled by set_rate
    #: -E: the running parallel task's (machines, flops, matrix, hosts, rate or None if SimGrid
    #: simulates it, kernel Work handle) — its hosts' CPU load for the energy plugin
    energy_task: tuple | None = None
    #: -E: (machines, rate) of a parallel task left running after the walltime (Batsim does not
    #: cancel it: it loads its hosts until the job's actor ends)
    energy_zombie: tuple | None = None

    # ----------------------------------------------------------------- process body
    def process(self) -> Generator:
        sim = self.sim
        self.start = sim.kernel.now
        self.job.start = self.start
        self.remaining = float(self.job.walltime)
        sim.job_started(self)
        code = yield from self.run_profile(sim.profile_of(self.job))
        sim.job_finished(self, code)
        if code != -2:  # a killed job is reported by its killer
            yield sim.to_server(("COMPLETED", self.job), self.first_host)
        # the job's actor ends once its message is delivered: SimGrid cancels the activities an
        # ending actor started and no longer waits for (ActorImpl::cleanup_from_self), so a
        # parallel task left running after its walltime stops now, before the job is deleted
        # when the server next calls the scheduler (the linear dragonfly's routes to the master
        # tell the two dates apart)
        if self.energy_zombie is not None and sim.power is not None:
            self.end_energy_zombie()
        if self.proc is not None and self.proc.zombie is not None:
            sim.kernel.end_zombie(self.proc)

    def run_profile(self, profile: "Profile") -> Generator:
        if profile.type == "composed":
            return (yield from self.run_composed(profile))
        if profile.type in OTHER_LEAVES:
            self.leaf = Leaf(profile_name=profile.name, kind="untracked")
            self.leaf_depth = len(self.stack)
            return (yield from getattr(self, OTHER_LEAVES[profile.type])(profile))
        self.leaf = Leaf(profile_name=profile.name, kind="delay" if profile.type == "delay" else "ptask")
        self.leaf_depth = len(self.stack)
        if profile.type == "delay":
            outcome = yield from self.run_delay(float(profile.data["delay"]))
        else:
            hosts, flops, matrix = self.sim.build_ptask(self.job, profile, self.hosts)
            self.sim.check_ptask_permission(self.job, flops)
            if self.io is not None:  # EXECUTE_JOB's additional_io_job
                hosts, flops, matrix = merge_io(self, self.io, hosts, flops, matrix)
            outcome = yield from self.run_ptask(hosts, flops, matrix)
        if outcome == "timeout":
            return -1
        if outcome == "cancelled":
            return -2
        return profile.ret

    def run_composed(self, profile: "Profile") -> Generator:
        frame = Frame(profile_name=profile.name)
        self.stack.append(frame)
        seq = profile.data["seq"]
        repeat = int(profile.data.get("repeat", 1))
        io = self.io
        if repeat * len(seq) >= MIN_FOLD and io is None and self.sim.power is None and folding.ENABLED:
            period = chain_delays(profile, lambda name: self.sim.profile_named(self.job, name))
            if period is not None:
                code = yield from self.run_delay_chain(profile, frame, period, repeat)
                self.stack.pop()
                return profile.ret if code == 0 else code
        for iteration in range(repeat):
            for index, name in enumerate(seq):
                frame.index = iteration * len(seq) + index
                self.io = self.io_child(io, index)
                code = yield from self.run_profile(self.sim.profile_named(self.job, name))
                self.io = io
                if code != 0:
                    self.stack.pop()
                    return code
        self.stack.pop()
        return profile.ret

    def run_delay_chain(self, profile: "Profile", frame: Frame, period, repeat: int) -> Generator:
        """A composed profile of delays only: its sleeps one by one as :meth:`run_composed`
        would run them, the kernel folding those that end alone (:mod:`coburst.simulator.folding`)."""
        chain = DelayChain(self, period, repeat)
        seq, size = profile.data["seq"], len(period)
        proc = self.proc
        proc.fold = chain
        try:
            k = 0
            while k < chain.total:
                frame.index = chain.index = k
                code = yield from self.run_profile(self.sim.profile_named(self.job, seq[k % size]))
                if code != 0:
                    return code
                if chain.done:
                    k += chain.done
                    self.remaining = chain.remaining
                    chain.done = 0
                k += 1
            return 0
        finally:
            proc.fold = None

    def run_delay(self, delay: float) -> Generator:
        """Batsim's ``do_delay_task``: the whole delay if strictly shorter than the walltime
        left, else until the walltime (the job's rate stretches or shrinks it)."""
        leaf = self.leaf
        leaf.delay = delay
        leaf.started = True
        leaf.chunk_start = self.leaf_start = self.sim.kernel.now
        leaf.chunk_rate = self.rate
        self.rate_changed = self.rate != 1.0  # the exact Batsim arithmetic applies at rate 1
        self._plan_delay(self.leaf_start)
        yield _SUSPEND  # woken by the timer _plan_delay set
        outcome = self._sleep_outcome
        power = self.sim.power
        if power is not None:
            # SimGrid's sleep_for is a CPU action on the actor's host (the allocation's first
            # machine): its end updates that host's energy like the end of a task
            power.meter.task_end([self.job.alloc.min], self.sim.kernel.now)
        if self.remaining >= 0:
            if outcome == "timeout":
                self.remaining = 0.0
            elif self.remaining > 0:  # Batsim subtracts the delay itself
                self.remaining -= delay if not self.rate_changed else self.sim.kernel.now - self.leaf_start
        if outcome == "done":
            leaf.work_done = 1.0
        return outcome

    def _plan_delay(self, now: float) -> None:
        """(Re)plan the end of the current delay leaf from ``now`` at the current rate."""
        leaf = self.leaf
        need = (1.0 - leaf.work_done) * leaf.delay / self.rate if self.rate_changed else leaf.delay
        left = math.inf if self.remaining < 0 else self.remaining - (now - self.leaf_start)
        if need < left:
            self._sleep_outcome = "done"
            self.sim.kernel.countdown(self.proc, need)
        else:
            self._sleep_outcome = "timeout"
            self.sim.kernel.countdown(self.proc, left)

    def run_ptask(self, hosts: list, flops: list[float], matrix: list[float]) -> Generator:
        leaf = self.leaf
        leaf.started = True
        leaf.proc = self.proc
        kernel = leaf.kernel = self.sim.kernel
        before = kernel.now
        while True:
            scale = (1.0 - leaf.work_done) / self.rate
            leaf.chunk_rate = self.rate
            leaf.chunk_start = kernel.now
            chunk_flops = [f * scale for f in flops] if scale != 1.0 else flops
            rate = self.sim.computed_rate(hosts, chunk_flops, matrix)
            self.work_hosts = {id(h) for h in hosts} if rate is not None else None
            if rate is not None:  # computed as SimGrid's solver would: no SimGrid activity needed
                run = Work(rate)
            elif scale != 1.0:
                run = Run(hosts, chunk_flops, [b * scale for b in matrix])
            else:
                run = Run(hosts, flops, matrix)
            if self.remaining >= 0:
                run.timeout = self.remaining - (kernel.now - before)
            self._rate_cancel = False
            power = self.sim.power
            if power is not None:
                machines = power.machines_of(hosts)
                power.meter.task_start(machines, kernel.now)
                power.meter.start_load(machines, chunk_flops, rate)
                self.energy_task = (machines, chunk_flops, matrix, hosts, rate)
            outcome = yield run
            if power is not None:
                machines, _, _, _, rate = self.energy_task
                self.energy_task = None
                if outcome == "timeout":  # the task keeps running (and loading its hosts)
                    self.energy_zombie = (machines, rate)
                elif rate is None and outcome == "done":  # an L07 action of the kernel
                    power.meter.end_sim_task(machines, kernel.now)
                else:
                    power.meter.task_end(machines, kernel.now)
                    power.meter.stop_load(machines, rate)
            if outcome == "cancelled" and self._rate_cancel:
                continue  # set_rate() cancelled the chunk after recording the work done
            self.work_hosts = None
            if self.remaining >= 0:
                self.remaining = self.remaining - (kernel.now - before)
            if outcome == "done":
                leaf.work_done = 1.0
            return outcome

    # ----------------------------------------------------------------- from outside
    def retune(self) -> None:
        """-E: a machine of the running parallel task changed pstate: a compute-only task gets
        SimGrid's new rate (``min(speed / flops)``), its hosts their new load; an L07 action
        its new bounds (the kernel re-solves)."""
        machines, flops, matrix, hosts, rate = self.energy_task
        if self.proc is None:
            return
        if rate is None:  # an L07 action of the kernel: CpuL07::on_speed_change
            self.sim.kernel.speed_changed(hosts)
            return
        handle = self.proc.activity
        new = self.sim.computed_rate(hosts, flops, matrix)
        if new is None or new == rate or handle is None or not hasattr(handle, "number"):
            return
        self.sim.kernel.clock.set_rate(handle.number, new)
        self.sim.power.meter.start_load(machines, flops, new)
        self.energy_task = (machines, flops, matrix, hosts, new)

    def end_energy_zombie(self) -> None:
        """-E: the job is deleted; its timed-out parallel task is cancelled now."""
        machines, rate = self.energy_zombie
        self.energy_zombie = None
        meter = self.sim.power.meter
        meter.task_end(machines, self.sim.kernel.now)
        meter.stop_load(machines, rate)

    def set_rate(self, rate: float) -> None:
        """Change the job's speed factor from now on (the co-scheduling speedup hook)."""
        if rate <= 0 or not math.isfinite(rate):
            raise ProtocolError(f"job {self.job.id}: invalid speed factor {rate}")
        if rate == self.rate:
            return
        now = self.sim.kernel.now
        leaf = self.leaf
        if leaf is None or not leaf.started or leaf.work_done >= 1.0 or self.proc is None or not self.proc.alive:
            self.rate = rate
            return
        if leaf.kind == "delay":
            leaf.work_done = leaf.fraction_done(now)
            leaf.chunk_start, leaf.chunk_rate = now, rate
            self.rate = rate
            self.rate_changed = True
            self._plan_delay(now)
            return
        self.rate = rate
        proc = self.proc
        if proc.activity is not None:
            leaf.work_done = leaf.fraction_done(now)
            self._rate_cancel = True
            self.sim.kernel.cancel_activity(proc)

    def progress(self, now: float) -> dict[str, Any]:
        """Batsim's ``job_progress`` tree for this job at ``now``."""
        if self.in_recv:
            raise ProtocolError(f"KILL_JOB {self.job.id}: the job runs the profile a recv profile chose; Batsim "
                                "4.2.1 aborts on its progress (jobs.cpp compute_leaf_progress: 'Leaves should not "
                                "contain sub tasks'), so coburst stops too")
        tree: dict[str, Any] | None = None
        if self.leaf is not None and self.leaf_depth == len(self.stack):
            if self.leaf.kind == "untracked":  # protocol.cpp generate_task_tree: no ptask, no delay start
                tree = {"profile_name": self.leaf.profile_name, "current_task_index": -1}
            else:
                tree = {"profile_name": self.leaf.profile_name, "progress": self.leaf.fraction_done(now)}
        for frame in reversed(self.stack):
            node: dict[str, Any] = {"profile_name": frame.profile_name, "current_task_index": frame.index}
            if tree is not None:
                node["current_task"] = tree
            tree = node
        if tree is None:  # not started yet
            profile = self.sim.profile_of(self.job)
            tree = ({"profile_name": profile.name, "current_task_index": -1} if profile.type == "composed"
                    else {"profile_name": profile.name, "progress": 0.0})
        return tree
