"""Reference discrete-event replay: drive a policy without any simulator.

An honest, minimal event loop standing in for Batsim when only scheduling matters (tests,
benchmarks, quick experiments):

* a job is submitted at its ``subtime``; jobs that can never fit the cluster are rejected
  on submission (same rule as the adapter, :meth:`Cluster.never_fits`);
* a started job runs exactly ``runtime`` seconds (default: its walltime); a runtime above
  the walltime is cut at the walltime (the job is killed, as Batsim does);
* simultaneous events form one batch: ends first, then submissions, then requested calls;
  the policy is called once per batch (``make_decisions``), like Batsim + pybatsim;
* jobs start exactly at the decision date (Batsim adds a small network delay; none here);
* every decision is validated when applied (:meth:`SchedulerState.apply`): a start on a busy
  compute node, a burst buffer over capacity, an unknown job or a call-me-later not in the
  future raises :class:`ReplayError`.

The loop ends when no event is left; jobs still waiting then are reported as ``stalled``
(a correct policy leaves none).
"""

from __future__ import annotations

import heapq
import math
import time as _time
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from coburst.core.cluster import Cluster
from coburst.core.decisions import Decisions
from coburst.core.placement import Allocation
from coburst.core.profile import ProfileConflict
from coburst.core.state import Job, SchedulerState

__all__ = ["replay", "ReplayResult", "JobRecord", "DecisionRecord", "ReplayError"]

_END, _SUBMIT, _WAKE = 0, 1, 2


class ReplayError(RuntimeError):
    """A policy took an invalid decision."""


@dataclass(slots=True)
class JobRecord:
    job: Job
    start: float | None = None
    end: float | None = None
    alloc: Allocation | None = None
    rejected: str | None = None
    killed: bool = False

    @property
    def waiting_time(self) -> float | None:
        return None if self.start is None else self.start - self.job.subtime


@dataclass(slots=True)
class DecisionRecord:
    now: float
    queue: int          # waiting jobs when the policy was called
    running: int
    seconds: float      # wall-clock duration of make_decisions
    decisions: Decisions


@dataclass(slots=True)
class ReplayResult:
    jobs: dict[str, JobRecord]
    decisions: list[DecisionRecord] = field(default_factory=list)
    stalled: list[str] = field(default_factory=list)

    @property
    def makespan(self) -> float:
        ends = [r.end for r in self.jobs.values() if r.end is not None]
        return max(ends) if ends else 0.0

    @property
    def started(self) -> list[JobRecord]:
        return [r for r in self.jobs.values() if r.start is not None]


def replay(
    cluster: Cluster,
    jobs: Iterable[Job],
    policy,
    runtimes: Mapping[str, float] | None = None,
    *,
    keep_decisions: bool = True,
) -> ReplayResult:
    """Run ``policy`` over ``jobs`` on ``cluster`` (module doc)."""
    jobs = sorted(jobs, key=lambda j: j.subtime)  # stable: given order on equal subtimes
    runtimes = runtimes or {}
    records = {j.id: JobRecord(j) for j in jobs}
    if len(records) != len(jobs):
        raise ValueError("duplicate job ids")
    events: list[tuple[float, int, int, object]] = []
    seq = 0
    for j in jobs:
        events.append((float(j.subtime), _SUBMIT, seq, j))
        seq += 1
    heapq.heapify(events)
    state = SchedulerState(cluster, events[0][0] if events else 0.0)
    result = ReplayResult(records)
    wakeups: set[float] = set()

    while events:
        now = events[0][0]
        state.advance(now)
        ended, released = [], []
        while events and events[0][0] == now:
            _, kind, _, payload = heapq.heappop(events)
            if kind == _END:
                run = state.finish(payload)
                records[payload].end = now
                ended.append(run.job)
            elif kind == _SUBMIT:
                reason = cluster.never_fits(payload.res, payload.bb)
                if reason is not None:
                    records[payload.id].rejected = reason
                else:
                    state.submit(payload)
                    released.append(payload)
            else:
                wakeups.discard(now)
        if ended:
            policy.on_job_end(state, ended)
        if released:
            policy.on_job_release(state, released)

        queue_len, running_len = len(state.queue), len(state.running)
        t0 = _time.perf_counter()
        decisions = policy.make_decisions(state)
        elapsed = _time.perf_counter() - t0
        if decisions.now != now:
            raise ReplayError(f"decisions dated {decisions.now} at time {now}")
        try:
            state.apply(decisions)
        except (ValueError, ProfileConflict, KeyError) as err:
            raise ReplayError(f"invalid decision at time {now}: {err}") from err
        if keep_decisions:
            result.decisions.append(DecisionRecord(now, queue_len, running_len, elapsed, decisions))
        for rej in decisions.rejects:
            records[rej.job.id].rejected = rej.reason
        for st in decisions.starts:
            rec = records[st.job.id]
            rec.start, rec.alloc = now, st.alloc
            runtime = float(runtimes.get(st.job.id, st.job.walltime))
            if runtime > st.job.walltime:
                runtime, rec.killed = st.job.walltime, True
            if not math.isfinite(runtime):
                raise ReplayError(f"job {st.job.id!r} has neither a runtime nor a walltime")
            heapq.heappush(events, (now + runtime, _END, seq, st.job.id))
            seq += 1
        for date in decisions.wakeups:
            if not date > now:
                raise ReplayError(f"call-me-later at {date} is not after {now}")
            if date not in wakeups:
                wakeups.add(date)
                heapq.heappush(events, (date, _WAKE, seq, None))
                seq += 1

    result.stalled = [j.id for j in state.queue]
    return result
