"""Batsim 4.2.1's ``usage_trace``, ``send`` and ``recv`` profiles (``jobs_execution.cpp``
``execute_task``, ``usage_trace_replayer``, ``usage_trace_replayer_process``), as methods of
the job's :class:`~coburst.simulator.execution.JobRun`.

* ``usage_trace``: one process per rank replays its trace file (SimGrid 3.32's
  ``xbt::replay_runner``, see :func:`coburst.simulator.workload.read_usage_trace`): each
  ``m_usage`` line is a compute-only parallel task of ``max(round(usage x cores), 1)`` copies
  of the rank's host; then the rank sends its number in 4 bytes to the job, which waits for
  every rank (each wait bounded by the walltime left).
* ``send``: a message to the scheduler (``FROM_JOB_MSG``), then a short delay.
* ``recv``: waits (polling) for a ``TO_JOB_MSG`` message, then runs the profile the message
  chooses.

Batsim follows the progress of none of them: a killed job reports
``{"profile_name": ..., "current_task_index": -1}`` for such a leaf.
"""

from __future__ import annotations

import math
from collections import deque
from typing import TYPE_CHECKING, Generator

from coburst.errors import ProtocolError
from coburst.simulator.kernel import Get, Mailbox, Process, Put, Run, Sleep, Work

if TYPE_CHECKING:  # pragma: no cover
    from coburst.simulator.workload import Profile


class OtherLeaves:
    """The leaves of :data:`OTHER_LEAVES`, mixed into ``JobRun`` (which provides ``sim``,
    ``job``, ``hosts``, ``first_host``, ``proc``, ``remaining``, ``run_delay`` and
    ``run_profile``)."""

    #: usage_trace: host index (in ``hosts``) of each rank, fixed by the first trace the job
    #: replays (Batsim's ``smpi_ranks_to_hosts_mapping``)
    rank_hosts: list | None = None
    #: how many recv profiles are running the profile they chose (Batsim cannot report the
    #: progress of such a job: see ``JobRun.progress``)
    in_recv: int = 0

    def run_send(self, profile: "Profile") -> Generator:
        """``send`` (``execute_task``, SCHEDULER_SEND): a 1-byte message to the server from the
        job's first host, which becomes ``FROM_JOB_MSG`` ``{"job_id", "msg"}``, then a delay
        of ``sleeptime`` (default 1e-7 s) against the walltime."""
        yield self.sim.to_server(("FROM_JOB", self.job, profile.data["msg"]), self.first_host)
        outcome = yield from self.run_delay(float(profile.data.get("sleeptime", 0.0000001)))
        return -1 if outcome == "timeout" else profile.ret

    def run_recv(self, profile: "Profile") -> Generator:
        """``recv`` (``execute_task``, SCHEDULER_RECV).  With no message waiting: the
        ``timeout`` profile at once if one is named, else a delay of ``polltime`` (default
        0.005 s) against the walltime until a message (``TO_JOB_MSG``) is there.  The first
        message then chooses ``success`` (it matches ``regex``, default ``.*``, as a whole:
        ``std::regex_match``) or ``failure``; the chosen profile (none: nothing) runs as a
        sub-task whose non-zero return code is the recv's."""
        data = profile.data
        if self.job.messages is None:
            self.job.messages = deque()
        buffer = self.job.messages
        follow = ""
        if not buffer:
            if data.get("timeout", ""):
                follow = data["timeout"]
            else:
                while not buffer:
                    outcome = yield from self.run_delay(float(data.get("polltime", 0.005)))
                    if outcome == "timeout":
                        return -1
        if buffer:
            message = buffer.popleft()
            follow = data.get("success", "") if _regex_match(data.get("regex", ".*"), message, self.job.id,
                                                             profile.name) else data.get("failure", "")
        if follow:
            sub = _recv_target(self.sim, self.job, profile.name, follow)
            self.in_recv += 1
            code = yield from self.run_profile(sub)
            self.in_recv -= 1
            if code != 0:
                return code
        return profile.ret

    def run_usage_trace(self, profile: "Profile") -> Generator:
        """``usage_trace`` (``execute_task``): one process per rank on its host (ranks go
        round-robin over the job's first ``res`` hosts unless the job gives
        ``smpi_ranks_to_hosts_mapping``), each replaying its trace
        (``usage_trace_replayer_process``) and then putting a 4-byte message in the job's
        termination mailbox; the job takes them one by one, each ``get`` bounded by the
        walltime left.  At the walltime the ranks still running are killed (-1)."""
        from coburst.simulator.workload import read_usage_trace

        sim, kernel = self.sim, self.sim.kernel
        if profile.rank_actions is None:
            profile.rank_actions = [read_usage_trace(path, rank, f"profile {profile.name!r}")
                                    for rank, path in enumerate(profile.trace_files)]
        ranks = profile.rank_actions
        if self.rank_hosts is None:
            given = self.job.job.json.get("smpi_ranks_to_hosts_mapping") or []
            self.rank_hosts = list(given) or [rank % self.job.job.res for rank in range(len(ranks))]
        if len(self.rank_hosts) != len(ranks):
            raise ProtocolError(f"job {self.job.id}: profile {profile.name!r} has {len(ranks)} ranks but the job's "
                                f"ranks-to-hosts mapping has {len(self.rank_hosts)} (Batsim 4.2.1 aborts: 'SMPI "
                                "ranks_to_host mapping has an invalid size')")
        hosts = [self.hosts[i] for i in self.rank_hosts]
        shared = sim.options["enable_compute_sharing"] or len(set(map(id, hosts))) != len(hosts)
        box = Mailbox(f"{self.job.id}_smpi_termination")
        has_walltime = self.remaining >= 0
        timer = kernel.spawn(self._receive_timeout(box, self.remaining), "timeout") if has_walltime else None
        children = {rank: kernel.spawn(self._usage_rank(rank, host, actions, box, shared), f"{self.job.id}_{rank}")
                    for rank, (host, actions) in enumerate(zip(hosts, ranks))}
        try:
            while children:
                before = kernel.now
                if has_walltime and timer is None:
                    timer = kernel.spawn(self._receive_timeout(box, self.remaining), "timeout")
                rank = yield Get(box)
                self._sleep_ended()  # the get's timeout detector (a sleep) ends
                if rank is _TIMED_OUT:
                    timer = None
                    return -1
                if timer is not None:
                    kernel.kill(timer)
                    timer = None
                del children[rank]
                if has_walltime:
                    self.remaining = self.remaining - (kernel.now - before)
        finally:  # the walltime, or a kill of the job: its ranks go too
            for proc in children.values():
                kernel.kill(proc)
            if timer is not None:
                kernel.kill(timer)
        return profile.ret

    def _sleep_ended(self) -> None:
        """-E: a sleep of the job's actor ended or was cancelled: SimGrid updates its host's
        energy (``CpuAction::on_state_change``), as at the end of a delay."""
        if self.sim.power is not None and self.remaining >= 0:
            self.sim.power.meter.task_end([self.job.alloc.min], self.sim.kernel.now)

    def _receive_timeout(self, box: Mailbox, duration: float) -> Generator:
        """The timeout of the job's ``get(remaining_time)``: a sleep; if the job still waits
        when it ends (its message may be on the way), the get fails (``TimeoutException``)."""
        yield Sleep(max(duration, 0.0))
        if box.receiver is self.proc:
            box.receiver = _NOBODY  # a message still on its way is delivered to nobody
            self.sim.kernel.wake(self.proc, _TIMED_OUT)

    def _usage_rank(self, rank: int, host, actions: list, box: Mailbox, shared: bool) -> Generator:
        """One rank (``usage_trace_replayer``): each ``(usage, flops)`` action is a parallel
        task of ``max(round(usage x cores), 1)`` copies of the rank's host, each computing
        ``flops``; then the rank's number goes to the job in 4 bytes."""
        cores = host.core_count
        for usage, flops in actions:
            copies = max(_round_half_away(usage * cores), 1)
            yield from self._usage_exec(host, copies, flops, shared)
        yield Put(box, rank, route=self.sim.message_route(host, self.first_host), size=4)
        power = self.sim.power
        if power is not None:  # the message's L07Action ends: SimGrid updates both hosts' energy
            power.meter.task_end(power.machines_of([host, self.first_host]), self.sim.kernel.now)

    def _usage_exec(self, host, copies: int, flops: float, shared: bool) -> Generator:
        """One ``m_usage`` parallel task, waited for without timeout.  Alone on its host, its
        rate is what SimGrid 3.32's ``FairBottleneck`` gives one variable with ``copies``
        elements of weight ``flops`` on the host's CPU constraint (bound cores x speed) and the
        L07 bound ``speed / flops``; otherwise the kernel simulates it."""
        if shared:
            yield Run([host] * copies, [flops] * copies, [])
            return
        if flops > 0:
            speed = host.speed
            rate = min(host.core_count * speed / copies / flops, speed / flops)
        else:
            rate = math.inf  # nothing to compute: over at once (L07Action: remains 0)
        power = self.sim.power
        if power is None:
            yield Work(rate)
            return
        machines = power.machines_of([host] * copies)
        load = 0.0
        if flops > 0:
            for _ in range(copies):  # Constraint::get_usage: one element per copy
                load += flops * rate
        power.meter.task_start(machines, self.sim.kernel.now)
        power.meter.start_load(machines[:1], [load], 1.0)
        try:
            yield Work(rate)
        finally:
            power.meter.task_end(machines, self.sim.kernel.now)
            power.meter.stop_load(machines[:1], 1.0)


#: leaf profile types run by a JobRun method of their own
OTHER_LEAVES = {"usage_trace": "run_usage_trace", "send": "run_send", "recv": "run_recv"}

#: what the job's get receives when its timeout ends first
_TIMED_OUT = object()
#: the receiver of a message nobody waits for any more (a get that timed out)
_NOBODY = Process(iter(()), "nobody")
_NOBODY.alive = False


def _round_half_away(x: float) -> int:
    """C's ``round``: halves away from zero (Python's ``round`` goes to even)."""
    whole = math.floor(x)
    return int(whole) + (1 if x - whole >= 0.5 else 0)


def _recv_target(sim, sjob, recv_name: str, name: str) -> "Profile":
    """The profile a recv chose, looked up by name when it runs (``Profiles::at``): Batsim
    4.2.1 aborts if it does not exist, was dropped at load (no job nor composed profile uses
    it: ``remove_unreferenced_profiles``), or was garbage-collected with a finished job."""
    from coburst.simulator.workload import referenced_profiles

    wl = sim.workloads[sjob.job.workload]
    why = ""
    if name not in wl.profiles:
        why = "it does not exist"
    elif wl.path != "dynamic" and name not in referenced_profiles(wl):
        why = "no job nor composed profile uses it, so Batsim dropped it after loading the workload"
    elif (sjob.job.workload, name) in sim.collected_profiles:
        why = "Batsim discarded it when the last job using it ended (use --enable-profile-reuse)"
    if why:
        raise ProtocolError(f"job {sjob.id}: recv profile {recv_name!r} chose profile {name!r}, but {why} (Batsim "
                            "4.2.1 aborts: 'Cannot get profile')")
    return wl.profiles[name]


def _regex_match(pattern: str, text: str, job_id: str, profile_name: str) -> bool:
    """``std::regex_match(text, std::regex(pattern))`` (ECMAScript grammar, whole string),
    with Python's ``re`` (the same for the usual patterns)."""
    import re

    try:
        return re.fullmatch(pattern, text) is not None
    except re.error as exc:
        raise ProtocolError(f"job {job_id}: recv profile {profile_name!r} has an invalid regex {pattern!r}: {exc} "
                            "(Batsim 4.2.1 dies in std::regex)") from None


def to_job_message(sjob, data: dict) -> None:
    """``TO_JOB_MSG`` ``{"job_id", "msg"}``: ``msg`` (a string) joins the job's incoming
    messages (``incoming_message_buffer``), taken by its recv profiles, even before it runs."""
    if not isinstance(data.get("msg"), str):
        raise ProtocolError(f"TO_JOB_MSG {sjob.id}: ['data']['msg'] must be a string (Batsim 4.2.1 aborts too)")
    if sjob.messages is None:
        sjob.messages = deque()
    sjob.messages.append(data["msg"])
