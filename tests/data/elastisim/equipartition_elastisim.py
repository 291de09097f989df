"""Equipartition as an ElastiSim scheduler (elastisim-python interface), rule for rule the
policy `equipartition` of coburst (coburst/policies/elastic/equipartition.py), written for
ElastiSim without importing coburst.

ElastiSim invokes it on every job submission, job completion and scheduling point
(schedule_on_job_submit, schedule_on_job_finalize, schedule_on_scheduling_point). A running
job may be resized only when the invocation is its own scheduling point (as coburst's policy
resizes only jobs at a point in the current message); the targets of "shrink to admit" are
remembered and applied at each job's next point.  An evolving request (ElastiSim invokes the
scheduler with it when the size a job asks for differs from its own) is answered by rule 1; an
evolving job starts on the size of its attribute ``res`` (coburst's ``res``).  Left out, as the
cases have none: the rejection of a job larger than the platform.

Each decision is appended to the log file given as argv[2] (one JSON object per line):
starts {"t", "event": "start", "job", "size"} and resizes {"t", "event": "resize", "job",
"old", "new"}.
"""

from __future__ import annotations

import json
import sys
from collections import deque
from typing import Any

from elastisim_python import InvocationType, Job, JobState, JobType, Node, pass_algorithm

RUNNING_STATES = (JobState.RUNNING, JobState.PENDING_RECONFIGURATION, JobState.IN_RECONFIGURATION)
MOLDABLE_START = (JobType.MOLDABLE, JobType.MALLEABLE, JobType.ADAPTIVE)

targets: dict[int, int] = {}
#: ids of the running jobs in the order they started (coburst's running dict order)
start_order: dict[int, None] = {}
#: ids of the pending jobs, by identifier (a job leaves it when this scheduler starts it)
pending: deque[int] = deque()
seen = 0  # the jobs of ElastiSim's list looked at so far (a new job is appended to the list)
LOG = open(sys.argv[2], "w") if len(sys.argv) > 2 else None


def log(**record: Any) -> None:
    if LOG is not None:
        LOG.write(json.dumps(record) + "\n")
        LOG.flush()


class Queue:
    """The pending jobs by identifier, as a view of :data:`pending` on ElastiSim's job list (its
    latest Job objects): an invocation looks at the head only, so that it costs what the running
    jobs cost, not what the waiting ones (or every job submitted so far) would."""

    def __init__(self, jobs: list[Job]):
        self.jobs = jobs

    def _clean(self) -> None:  # (a job no longer pending at the head: not waiting any more)
        while pending and self.jobs[pending[0]].state != JobState.PENDING:
            pending.popleft()

    def __bool__(self) -> bool:
        self._clean()
        return bool(pending)

    def __getitem__(self, k: int) -> Job:
        if k != 0:
            raise IndexError("the queue gives its head only")
        self._clean()
        return self.jobs[pending[0]]

    def remove(self, job: Job) -> None:
        if pending and pending[0] == job.identifier:
            pending.popleft()
        else:
            pending.remove(job.identifier)


class State:
    def __init__(self, jobs: list[Job], nodes: list[Node], system: dict[str, Any]):
        global seen
        self.now = system["time"]
        self.nodes = nodes
        self.compute = list(range(len(nodes)))
        for job in jobs[seen:]:  # (the jobs submitted since the last invocation)
            if job.state == JobState.PENDING:
                pending.append(job.identifier)
            elif job.state in RUNNING_STATES:
                start_order.setdefault(job.identifier)
        seen = len(jobs)
        self.queue = Queue(jobs)
        for jid in [jid for jid in start_order if jobs[jid].state not in RUNNING_STATES]:
            del start_order[jid]
        self.running = {jid: jobs[jid] for jid in start_order}
        self.alloc = {jid: sorted(j.assigned_node_ids) for jid, j in self.running.items()}
        used = {n for ids in self.alloc.values() for n in ids}
        self.free = set(self.compute) - used
        self.point = self.requested = None
        if system["invocation_type"] in (InvocationType.INVOKE_SCHEDULING_POINT,
                                         InvocationType.INVOKE_EVOLVING_REQUEST):
            self.point = system["job"].identifier
            self.requested = system.get("evolving_request")
        self.resized: set[int] = set()

    def at_points(self) -> list[Job]:
        return [j for jid, j in self.running.items() if jid == self.point]

    def size(self, job: Job) -> int:
        return len(self.alloc[job.identifier])


def start_sizes(job: Job) -> tuple[int, int]:
    if job.type in MOLDABLE_START:
        return job.num_nodes_min, job.num_nodes_max
    if job.type == JobType.EVOLVING:
        res = int(float(job.attributes["res"]))
        return res, res
    return job.num_nodes, job.num_nodes


def shrinkable(job: Job) -> bool:
    return job.type in (JobType.MALLEABLE, JobType.ADAPTIVE)


def start(st: State, job: Job, ids: list[int]) -> None:
    st.free.difference_update(ids)
    st.queue.remove(job)
    job.assign([st.nodes[i] for i in ids])
    st.running[job.identifier] = job
    st.alloc[job.identifier] = sorted(ids)
    start_order[job.identifier] = None
    log(t=st.now, event="start", job=job.identifier, size=len(ids))


def resize_to(st: State, job: Job, size: int) -> None:
    old = st.alloc[job.identifier]
    if size == len(old):
        return
    if size < len(old):
        new = old[:size]
    else:
        new = sorted(old + sorted(st.free)[:size - len(old)])
    removed = [i for i in old if i not in new]
    added = [i for i in new if i not in old]
    if removed:
        job.remove([n for n in job.assigned_nodes if n.identifier in removed])  # (its own Node objects)
    if added:
        job.assign([st.nodes[i] for i in added])
    st.free.difference_update(added)
    st.free.update(removed)
    st.alloc[job.identifier] = new
    st.resized.add(job.identifier)
    log(t=st.now, event="resize", job=job.identifier, old=len(old), new=len(new))


def requests(st: State) -> None:
    for job in st.at_points():
        want = st.requested
        if want is None or want == st.size(job) or job.identifier in targets:
            continue
        if want < st.size(job):
            resize_to(st, job, want)
        elif not st.queue and st.free:
            resize_to(st, job, min(want, st.size(job) + len(st.free)))


def apply_targets(st: State) -> None:
    for job in st.at_points():
        target = targets.get(job.identifier)
        if target is not None and target < st.size(job):
            resize_to(st, job, target)
        if target is not None and st.size(job) <= target:
            del targets[job.identifier]


def start_jobs(st: State, n_total: int) -> None:
    while st.queue:
        head = st.queue[0]
        lo, hi = start_sizes(head)
        free = len(st.free)
        if free < lo:
            return
        share = n_total // (len(st.running) + 1)
        size = min(hi, free, max(lo, share))
        start(st, head, sorted(st.free)[:size])


def set_targets(st: State, head: Job) -> None:
    lo = start_sizes(head)[0]
    movable = [j for j in st.running.values() if shrinkable(j)]
    room = len(st.free) + sum(st.size(j) - j.num_nodes_min for j in movable)
    if room < lo or not movable:
        return
    share = (len(st.free) + sum(st.size(j) for j in movable)) // (len(movable) + 1)
    new = {j.identifier: max(j.num_nodes_min, min(st.size(j), share)) for j in movable}
    if len(st.free) + sum(st.size(j) - new[j.identifier] for j in movable) < lo:
        new = {j.identifier: j.num_nodes_min for j in movable}
    targets.update({jid: t for jid, t in new.items() if t < st.size(st.running[jid])})


def expand(st: State) -> None:
    growing = [j for j in st.at_points()
               if shrinkable(j) and st.size(j) < j.num_nodes_max and j.identifier not in st.resized]
    while growing and st.free:
        share = max(1, len(st.free) // len(growing))
        for job in list(growing):
            extra = min(share, job.num_nodes_max - st.size(job), len(st.free))
            if extra > 0:
                resize_to(st, job, st.size(job) + extra)
            if st.size(job) >= job.num_nodes_max or not st.free:
                growing.remove(job)


def schedule(jobs: list[Job], nodes: list[Node], system: dict[str, Any]) -> None:
    global targets
    st = State(jobs, nodes, system)
    n_total = len(st.compute)
    targets = {jid: t for jid, t in targets.items() if jid in st.running}
    if not st.queue:
        targets.clear()
    requests(st)
    apply_targets(st)
    start_jobs(st, n_total)
    if st.queue:
        set_targets(st, st.queue[0])
        apply_targets(st)
        start_jobs(st, n_total)
    if not st.queue:
        expand(st)


if __name__ == "__main__":
    pass_algorithm(schedule, sys.argv[1])
