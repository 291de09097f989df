"""Test scheduler: pybatsim's ``fillerSchedWithEvents`` (the scheduler Batsim tests its
external events with), made deterministic, and optionally killing the jobs a machine
failure hits.

``fillerSchedWithEvents`` keeps its waiting jobs in a ``set`` of Job objects, whose order
depends on memory addresses: with two jobs waiting, two runs may start them in another
order.  Here the waiting jobs are tried in submission order; everything else is the
original's (first-fit on the available machines, machines made unavailable by an event
taken out of the pool, 5 ms of scheduling time per decision).

Options (``pybatsim eventsFiller.py -o JSON``), every key optional:

* ``kill_on_unavailable``: kill the jobs running on machines that become unavailable (Batsim
  itself leaves them running; ``docs/input-events.rst`` suggests this);
* ``ignore_unavailability``: keep using machines an event made unavailable (to test that the
  simulator refuses such a job);
* ``record``: file where every message is recorded (see ``_simtest.install_recorder``).
"""

from itertools import islice

from procset import ProcSet
from schedulers.fillerSchedWithEvents import FillerSchedWithEvents

from _simtest import install_recorder


class EventsFiller(FillerSchedWithEvents):
    def __init__(self, options=None):
        super().__init__(options or {})
        if self.options.get("record"):
            install_recorder(self.options["record"])
        self.generic = []

    def onSimulationBegins(self):
        super().onSimulationBegins()
        self.openJobs = {}  # job id -> job, in submission order
        self.running = {}  # job id -> job

    def onJobSubmission(self, job):
        if job.requested_resources > self.bs.nb_compute_resources:
            self.bs.reject_jobs([job])
        else:
            self.openJobs[job.id] = job

    def scheduleJobs(self):
        scheduled = []
        for job in list(self.openJobs.values()):
            if job.requested_resources <= len(self.availableResources):
                job.allocation = ProcSet(*islice(self.availableResources, job.requested_resources))
                scheduled.append(job)
                self.availableResources -= job.allocation
                self.runningResources |= job.allocation
                del self.openJobs[job.id]
                self.running[job.id] = job
        self.bs.consume_time(self.sched_delay)
        if scheduled:
            self.bs.execute_jobs(scheduled)

    def onJobCompletion(self, job):
        self.running.pop(job.id, None)
        super().onJobCompletion(job)

    def onJobsKilled(self, jobs):
        pass

    def onNotifyEventMachineUnavailable(self, machines):
        if self.options.get("ignore_unavailability"):
            return
        super().onNotifyEventMachineUnavailable(machines)
        if self.options.get("kill_on_unavailable"):
            hit = [job for job in self.running.values() if job.allocation & machines]
            if hit:
                self.bs.kill_jobs(hit)

    def onNotifyGenericEvent(self, event_data):
        self.generic.append(event_data)
