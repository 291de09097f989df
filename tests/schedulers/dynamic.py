"""Test scheduler: dynamic registration (REGISTER_PROFILE + REGISTER_JOB + NOTIFY).

At the first static job submission it registers the profiles of ``options["profiles"]`` in
workload ``options.get("workload", "dyn")`` and the jobs of ``options["jobs"]`` (each
``{"id": "dyn!1", "res": 1, "walltime": 10, "profile": "p", "alloc": "1"}``), then sends
NOTIFY registration_finished unless ``options["finish"]`` is false.  Static jobs run at
once on ``allocs`` (default ``0..res-1``).  A dynamic job is executed in the same reply as
its registration, or — when the simulator acknowledges dynamic jobs — when its
JOB_SUBMITTED comes back.
"""

from batsim.batsim import BatsimScheduler
from procset import ProcSet

from _simtest import install_recorder, set_allocation


class Dynamic(BatsimScheduler):
    def __init__(self, options=None):
        super().__init__(options or {})
        if self.options.get("record"):
            install_recorder(self.options["record"])
        self.registered = False
        self.dyn_allocs = {j["id"]: j["alloc"] for j in self.options.get("jobs", [])}

    def onJobSubmission(self, job):
        if job.id in self.dyn_allocs:  # acknowledgement of a dynamic job
            self.execute_dynamic(job)
            return
        set_allocation(job, self.options)
        self.bs.execute_jobs([job])
        if not self.registered:
            self.registered = True
            self.register()

    def register(self):
        wl = self.options.get("workload", "dyn")
        self.bs.register_profiles(wl, self.options.get("profiles", {}))
        for spec in self.options.get("jobs", []):
            job = self.bs.register_job(spec["id"], spec["res"], spec.get("walltime", -1), spec["profile"])
            if not self.bs.ack_of_dynamic_jobs:
                self.execute_dynamic(job)
        if self.options.get("finish", True):
            self.bs.notify_registration_finished()

    def execute_dynamic(self, job):
        job.allocation = ProcSet.from_str(self.dyn_allocs[job.id])
        self.bs.execute_jobs([job])

    def onJobCompletion(self, job):
        pass
