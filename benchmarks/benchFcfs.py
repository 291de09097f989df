"""Minimal First-Come-First-Served pybatsim scheduler for the scaling benchmark.

    pybatsim benchmarks/benchFcfs.py
    coburst run benchmarks/benchFcfs.py -p PLATFORM -w WORKLOAD

Used by ``benchmarks/bench_engines.py --scaling``: cheap and independent of the cluster
and queue sizes, so that the run measures the simulator.  Jobs start in submission order
while the head of the queue fits (no backfilling), on the lowest free compute ids
(interval arithmetic on ``ProcSet``, a free-node counter, a ``deque`` queue: O(1) work
per job apart from the fragmentation of the free set).  Finished jobs are dropped from
pybatsim's job table, so the scheduler's memory stays flat over a million jobs.
"""

from collections import deque

from batsim.batsim import BatsimScheduler
from procset import ProcSet


def _lowest(free: ProcSet, n: int) -> ProcSet:
    """The ``n`` lowest ids of ``free`` (which holds at least ``n``)."""
    parts = []
    for first, last in free.intervals():
        size = last - first + 1
        if size >= n:
            parts.append((first, first + n - 1))
            break
        parts.append((first, last))
        n -= size
    return ProcSet(*parts)


class BenchFcfs(BatsimScheduler):
    def onSimulationBegins(self):
        self.nb_machines = self.bs.nb_compute_resources
        self.free = ProcSet((0, self.nb_machines - 1))
        self.nb_free = self.nb_machines
        self.queue = deque()

    def onJobSubmission(self, job):
        if job.requested_resources > self.nb_machines:
            self.bs.reject_jobs([job])
        else:
            self.queue.append(job)

    def onJobCompletion(self, job):
        self.free |= job.allocation
        self.nb_free += len(job.allocation)
        del self.bs.jobs[job.id]

    def onNoMoreEvents(self):
        queue = self.queue
        started = []
        while queue and queue[0].requested_resources <= self.nb_free:
            job = queue.popleft()
            job.allocation = _lowest(self.free, job.requested_resources)
            self.free -= job.allocation
            self.nb_free -= job.requested_resources
            started.append(job)
        if started:
            self.bs.execute_jobs(started)
