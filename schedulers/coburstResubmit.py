"""pybatsim entry: malleable jobs on the real Batsim, resized by kill and resubmit.

    batsim -p PLATFORM -w WORKLOAD --enable-dynamic-jobs --forward-profiles-on-submission
    pybatsim schedulers/coburstResubmit.py
    coburst run schedulers/coburstResubmit.py -p PLATFORM -w WORKLOAD --enable-dynamic-jobs \\
        --forward-profiles-on-submission

First come, first served (no backfilling) on each job's ``res`` nodes; jobs whose ``elastic``
type is ``malleable`` or ``adaptive`` change size between their ``num_nodes_min`` and
``num_nodes_max``: when the queue's head does not fit, running ones shrink (oldest first,
towards their minimum) if that makes room for it; when nothing waits, the oldest one that can
grow takes the idle nodes.  Each resize kills the job and runs what is left of it as a
dynamic job (:class:`coburst.adapter.resubmit.Resubmitter`), so the same file runs on the
real Batsim 4.2.1 and on coburst with the same outputs.  Options: ``speed`` (a node's
flop/s, for elastic models counting flops; default 1e9).
"""

from batsim.batsim import BatsimScheduler
from procset import ProcSet

from coburst.adapter.resubmit import Resubmitter

MALLEABLE = ("malleable", "adaptive")


class CoburstResubmit(BatsimScheduler):
    def onSimulationBegins(self):
        self.free = ProcSet((0, self.bs.nb_compute_resources - 1))
        self.queue = []
        self.running = {}  # job id -> job (remainders included)
        self.resizer = Resubmitter(self.bs, speed=float(self.options.get("speed", 1e9)))

    # ---------------------------------------------------------------- events
    def onJobSubmission(self, job):
        self.queue.append(job)

    def onJobCompletion(self, job):
        if job.job_state == job.State.COMPLETED_KILLED and self.resizer.resizing(job):
            return  # (its JOB_KILLED follows in the same message: onJobsKilled)
        self.running.pop(job.id, None)
        target = self.resizer.forget(job)  # (ended before its kill: the resize is off)
        self.free |= job.allocation | ((target or ProcSet()) - job.allocation)

    def onJobsKilled(self, jobs):
        for job in jobs:
            self.running.pop(job.id, None)
            target = self.resizer.pending.get(job.id)
            self.free |= job.allocation - (target or ProcSet())
        for remainder in self.resizer.killed(jobs):
            self.running[remainder.id] = remainder

    def onNoMoreEvents(self):
        self.schedule()

    # ---------------------------------------------------------------- decisions
    def limits(self, job):
        spec = self.resizer.original(job).json_dict.get("elastic")
        if not isinstance(spec, dict) or spec.get("type") not in MALLEABLE:
            return None
        return int(spec.get("num_nodes_min", 1)), int(spec.get("num_nodes_max", job.requested_resources))

    def resizable(self):
        return [j for j in self.running.values() if not self.resizer.resizing(j) and self.limits(j) is not None]

    def schedule(self):
        while self.queue and self.queue[0].requested_resources <= len(self.free):
            job = self.queue.pop(0)
            job.allocation = ProcSet(*list(self.free)[:job.requested_resources])
            self.free -= job.allocation
            self.running[job.id] = job
            self.bs.execute_jobs([job])
        if self.queue:
            self.shrink_for(self.queue[0].requested_resources - len(self.free))
        elif len(self.free):
            self.expand()
        if self.bs.no_more_static_jobs and not self.queue and not self.running and not self.resizer.pending:
            self.resizer.finish()

    def shrink_for(self, needed):
        if self.resizer.pending:
            return  # (a resize under way frees nodes first)
        plan, room = [], 0
        for job in self.resizable():
            low, _ = self.limits(job)
            give = len(job.allocation) - low
            if give > 0 and room < needed:
                take = min(give, needed - room)
                plan.append((job, len(job.allocation) - take))
                room += take
        if room < needed:
            return
        for job, size in plan:
            self.resizer.resize(job, ProcSet(*list(job.allocation)[:size]))

    def expand(self):
        for job in self.resizable():
            _, high = self.limits(job)
            grow = min(high - len(job.allocation), len(self.free))
            if grow > 0:
                extra = ProcSet(*list(self.free)[:grow])
                self.free -= extra
                self.resizer.resize(job, job.allocation | extra)
                return
