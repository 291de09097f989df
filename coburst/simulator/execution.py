"""Job execution on SimGrid: one actor per job, profiles run as SimGrid activities.

A job actor runs on the first host of its allocation (as in Batsim 4).  Leaves of the
profile tree are either a *delay* (a timed wait) or a *parallel task* (SimGrid ptask on
the ``ptask_L07`` model: compute vectors and communication matrices, so network and I/O
contention are simulated).

Two things can change a running job from outside:

* its **speed factor** (:meth:`JobRun.set_rate`) — the co-scheduling heatmap hook slows or
  speeds a job when its node neighbours change.  The current leaf is interrupted, the work
  done so far is kept, and the rest continues at the new rate;
* a **kill** — :meth:`JobRun.progress` reports where the job was, in Batsim's
  ``job_progress`` format, before the actor is killed.

Semantics follow Batsim 4.2 (``jobs_execution.cpp``): the walltime is measured from the
job's start and shared by all sub-tasks of a composed profile; a delay runs to its end
only if it is strictly shorter than the remaining walltime; return codes propagate from
the first failing sub-task.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from coburst.errors import ProtocolError
from coburst.simulator._simgrid import simgrid

if TYPE_CHECKING:  # pragma: no cover
    from coburst.simulator.engine import SimJob, Simulator
    from coburst.simulator.workload import Profile


def _load_remaining_ratio():
    """A GIL-releasing ``Exec.remaining_ratio``, or None if it cannot be set up.

    SimGrid 4.1's Python binding of ``Exec.remaining_ratio`` performs a simcall while
    holding the GIL: if another Python actor runs in the same scheduling round, that actor
    waits for the GIL forever and the simulation hangs (e.g. two speed changes at the same
    date).  The C API ``sg_exec_get_remaining_ratio`` called through ctypes releases the
    GIL.  The ``s4u::Exec*`` is read from the pybind11 instance (simple layout: the value
    pointer follows the object header).
    """
    import ctypes
    import glob
    import os

    try:
        folder = os.path.dirname(simgrid.__file__)
        lib = ctypes.CDLL(sorted(glob.glob(os.path.join(folder, "libsimgrid.so*")))[0])
        func = lib.sg_exec_get_remaining_ratio
    except (IndexError, OSError, AttributeError):  # pragma: no cover - unusual SimGrid install
        return None
    func.restype, func.argtypes = ctypes.c_double, [ctypes.c_void_p]
    header = ctypes.sizeof(ctypes.c_ssize_t) + ctypes.sizeof(ctypes.c_void_p)  # PyObject_HEAD

    def remaining_ratio(exe) -> float:
        pointer = ctypes.c_void_p.from_address(id(exe) + header).value
        return func(pointer) if pointer else exe.remaining_ratio

    return remaining_ratio


_remaining_ratio = _load_remaining_ratio() or (lambda exe: exe.remaining_ratio)


class WalltimeReached(Exception):
    """Raised inside a job actor when its walltime expires."""


@dataclass
class Leaf:
    """The leaf task being executed right now."""

    profile_name: str
    kind: str  # "delay" or "ptask"
    work_done: float = 0.0  # fraction of the leaf already done (0..1)
    chunk_start: float = 0.0  # simulated time the current chunk started
    chunk_rate: float = 1.0
    delay: float = 0.0  # delay leaves: duration at rate 1
    exec: Any = None  # ptask leaves: the running simgrid.Exec
    started: bool = False

    def fraction_done(self, now: float) -> float:
        """Fraction of this leaf done at ``now`` (Batsim's ``progress``)."""
        if not self.started:
            return 0.0
        if self.kind == "delay":
            if self.delay <= 0:
                return 1.0
            elapsed = max(0.0, now - self.chunk_start)  # the chunk may start after a launch message
            return min(1.0, self.work_done + elapsed * self.chunk_rate / self.delay)
        if self.exec is None:
            return self.work_done
        try:
            ratio = _remaining_ratio(self.exec)
        except Exception:  # the activity already ended
            ratio = 0.0
        return self.work_done + (1.0 - self.work_done) * (1.0 - ratio)


@dataclass
class Frame:
    """One composed profile on the execution stack."""

    profile_name: str
    index: int = -1  # Batsim's current_task_index (global over repeats)


@dataclass
class JobRun:
    """State of one executing job, shared between its actor and the server."""

    sim: "Simulator"
    job: "SimJob"
    hosts: list  # simgrid.Host of the allocation, in executor order
    start: float = 0.0
    deadline: float = math.inf
    rate: float = 1.0
    stack: list[Frame] = field(default_factory=list)
    leaf: Leaf | None = None
    leaf_depth: int = 0
    wakeup: Any = None  # simgrid.Semaphore used to interrupt a delay leaf
    actor: Any = None
    first_host: Any = None  # host of the allocation's first resource (Batsim runs the job there)
    timer_seq: int = 0  # delay jobs run by the engine's delay timer (no actor): current heap entry
    timer_code: int = 0  # return code when the timer entry fires (-1: walltime reached)

    # ----------------------------------------------------------------- actor body
    def main(self) -> None:
        """Actor body: run the profile, then report completion to the server.

        The job starts one master-to-node message after the decision (Batsim 4.2 starts a
        job when the server's launch message reaches the job's first host), so ``start`` is
        the decision date plus the route time master -> first host.
        """
        launch = self.sim.delay_to_master(self.first_host)
        profile = self.sim.profile_of(self.job)
        self.wakeup = simgrid.Semaphore(0)
        if launch > 0 and profile.type != "delay":
            simgrid.this_actor.sleep_for(launch)
            launch = 0.0
        # a top-level delay folds the launch message into its first wait (one context switch less)
        now = simgrid.Engine.clock + launch
        self.start = now
        self.job.start = now
        walltime = self.job.walltime
        self.deadline = now + walltime if walltime > 0 else math.inf
        try:
            code = self.run_profile(profile)
        except WalltimeReached:
            code = -1
        self.sim.job_finished(self, code)

    def walltime_left(self, now: float) -> float:
        """Walltime left at ``now``, as ``walltime - elapsed`` (not ``deadline - now``, which
        rounds: (16.0001 + 21) - 16.0001 > 21 would let a delay equal to its walltime escape
        Batsim's strict ``delay < remaining`` rule)."""
        walltime = self.job.walltime
        return walltime - (now - self.start) if walltime > 0 else math.inf

    # ----------------------------------------------------------------- delay jobs, no actor
    def start_on_timer(self) -> None:
        """Start a job whose profile is a single delay on the engine's delay timer.

        Same dates as the actor path: the job starts one master-to-node message after the
        decision, ends ``delay`` later if that is strictly shorter than its walltime, else at
        ``start + walltime`` with COMPLETED_WALLTIME_REACHED.
        """
        profile = self.sim.profile_of(self.job)
        self.start = simgrid.Engine.clock + self.sim.delay_to_master(self.first_host)
        self.job.start = self.start
        walltime = self.job.walltime
        self.deadline = self.start + walltime if walltime > 0 else math.inf
        self.leaf = Leaf(profile_name=profile.name, kind="delay", delay=float(profile.data["delay"]),
                         started=True, chunk_start=self.start, chunk_rate=self.rate)
        self.leaf_depth = 0
        self._timer_schedule(self.start, profile.ret)

    def _timer_schedule(self, from_time: float, code: int) -> None:
        leaf = self.leaf
        need = (1.0 - leaf.work_done) * leaf.delay / self.rate
        left = self.walltime_left(from_time)
        if need < left:
            end, self.timer_code = from_time + need, code
        else:
            end, self.timer_code = self.deadline, -1
        self.timer_seq += 1
        self.sim.timer_push(end, self)

    # ----------------------------------------------------------------- profiles
    def run_profile(self, profile: "Profile") -> int:
        if profile.type == "composed":
            return self.run_composed(profile)
        depth = len(self.stack)
        self.leaf = Leaf(profile_name=profile.name, kind="delay" if profile.type == "delay" else "ptask")
        self.leaf_depth = depth
        if profile.type == "delay":
            self.run_delay(float(profile.data["delay"]))
        else:
            hosts, flops, matrix = self.sim.build_ptask(self.job, profile, self.hosts)
            self.run_ptask(hosts, flops, matrix)
        return profile.ret

    def run_composed(self, profile: "Profile") -> int:
        frame = Frame(profile_name=profile.name)
        self.stack.append(frame)
        seq = profile.data["seq"]
        repeat = int(profile.data.get("repeat", 1))
        for iteration in range(repeat):
            for index, name in enumerate(seq):
                frame.index = iteration * len(seq) + index
                code = self.run_profile(self.sim.profile_named(self.job, name))
                if code != 0:
                    self.stack.pop()
                    return code
        self.stack.pop()
        return profile.ret

    def run_delay(self, delay: float) -> None:
        leaf = self.leaf
        leaf.delay = delay
        leaf.started = True
        while True:
            clock = simgrid.Engine.clock
            now = max(clock, self.start)  # before the job's start: still in its launch message
            leaf.chunk_start = now
            leaf.chunk_rate = self.rate
            need = (1.0 - leaf.work_done) * delay / self.rate
            left = self.walltime_left(now)
            # Batsim: the delay runs to its end only if strictly shorter than the walltime left
            span = need if need < left else left
            timed_out = self.wakeup.acquire_timeout(span + (now - clock))
            if timed_out:
                if need < left:
                    leaf.work_done = 1.0
                    return
                raise WalltimeReached()
            # interrupted by a rate change: account the work done and continue
            leaf.work_done = leaf.fraction_done(simgrid.Engine.clock)

    def run_ptask(self, hosts: list, flops: list[float], matrix: list[float]) -> None:
        leaf = self.leaf
        leaf.started = True
        while True:
            scale = (1.0 - leaf.work_done) / self.rate
            leaf.chunk_rate = self.rate
            leaf.chunk_start = simgrid.Engine.clock
            exe = simgrid.this_actor.exec_init(hosts, [f * scale for f in flops], [b * scale for b in matrix])
            leaf.exec = exe
            exe.start()
            left = self.deadline - simgrid.Engine.clock
            try:
                if math.isinf(left):
                    exe.wait()
                else:
                    exe.wait_for(left)
                leaf.work_done = 1.0
                leaf.exec = None
                return
            except simgrid.TimeoutException:
                exe.cancel()
                leaf.exec = None
                raise WalltimeReached() from None
            except simgrid.CancelException:
                # set_rate() cancelled the chunk after recording the work done
                leaf.exec = None
                continue

    # ----------------------------------------------------------------- from outside
    def set_rate(self, rate: float) -> None:
        """Change the job's speed factor from now on (called by the server)."""
        if rate <= 0 or not math.isfinite(rate):
            raise ProtocolError(f"job {self.job.id}: invalid speed factor {rate}")
        if rate == self.rate:
            return
        leaf = self.leaf
        if self.actor is None and leaf is not None and self.timer_seq > 0:  # run by the delay timer
            now = max(simgrid.Engine.clock, self.start)
            leaf.work_done = leaf.fraction_done(now)
            leaf.chunk_start, leaf.chunk_rate = now, rate
            self.rate = rate
            code = self.timer_code if self.timer_code != -1 else self.sim.profile_of(self.job).ret
            self._timer_schedule(now, code)
            return
        self.rate = rate
        if leaf is None or not leaf.started or leaf.work_done >= 1.0:
            return
        if leaf.kind == "delay":
            self.wakeup.release()
        elif leaf.exec is not None:
            leaf.work_done = leaf.fraction_done(simgrid.Engine.clock)
            exe, leaf.exec = leaf.exec, None
            exe.cancel()

    def progress(self, now: float) -> dict[str, Any]:
        """Batsim's ``job_progress`` tree for this job at ``now``."""
        tree: dict[str, Any] | None = None
        if self.leaf is not None and self.leaf_depth == len(self.stack):
            tree = {"profile_name": self.leaf.profile_name, "progress": self.leaf.fraction_done(now)}
        for frame in reversed(self.stack):
            node: dict[str, Any] = {"profile_name": frame.profile_name, "current_task_index": frame.index}
            if tree is not None:
                node["current_task"] = tree
            tree = node
        if tree is None:  # not started yet (still in its launch message)
            profile = self.sim.profile_of(self.job)
            tree = ({"profile_name": profile.name, "current_task_index": -1} if profile.type == "composed"
                    else {"profile_name": profile.name, "progress": 0.0})
        return tree
