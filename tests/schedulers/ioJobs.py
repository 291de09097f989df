"""Test scheduler: :mod:`fixed` (every job at once on the allocation its options give), plus
additional I/O jobs sent with pybatsim 3.2.1's ``execute_jobs(jobs, io_jobs=...)``.

Options (``pybatsim ioJobs.py -o JSON``), besides those of ``fixed.py``, every key optional:

* ``io_jobs``: ``{job_id: {"alloc": ..., "profile_name": ..., "profile": {...}}}`` sent as the
  job's ``additional_io_job`` in EXECUTE_JOB (as given: the alloc is a raw string);
* ``pstates``: ``[[t, "resources", "state"], ...]`` SET_RESOURCE_STATE at the REQUESTED_CALL
  for ``t`` (needs ``-E``).
"""

from fixed import Fixed
from procset import ProcSet

from _simtest import set_allocation


class IoJobs(Fixed):
    def execute(self, job):
        set_allocation(job, self.options)
        io_jobs = self.options.get("io_jobs", {})
        if job.id in io_jobs:
            self.bs.execute_jobs([job], io_jobs={job.id: io_jobs[job.id]})
        else:
            self.bs.execute_jobs([job])

    def onSimulationBegins(self):
        for t, resources, state in self.options.get("pstates", []):
            self.actions.append([float(t), "pstate", (resources, state)])
        super().onSimulationBegins()

    def onRequestedCall(self):
        now = self.bs.time()
        for action in self.actions:
            date, kind, payload = action
            if kind == "pstate" and date <= now + 1e-9:
                action[1] = None
                self.bs.set_resource_state(ProcSet.from_str(payload[0]), payload[1])
        super().onRequestedCall()

    def onMachinePStateChanged(self, nodes, pstate):
        pass
