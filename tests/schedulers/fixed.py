"""Test scheduler: runs every job at once on the allocation its options give it.

Options (``pybatsim fixed.py -o JSON``), every key optional:

* ``allocs``: ``{job_id: "0-1 3"}`` allocation of each job (default ``0..res-1``);
* ``storage_mapping`` / ``mapping``: ``{job_id: {...}}`` sent with EXECUTE_JOB;
* ``start_at``: ``{job_id: t}`` execute the job when the REQUESTED_CALL asked for date ``t``
  arrives instead of at its submission;
* ``reject``: ``[job_id, ...]`` reject these jobs at submission;
* ``metadata``: ``{job_id: text}`` SET_JOB_METADATA at submission;
* ``kill``: ``[[t, [job_id, ...]], ...]`` KILL_JOB these jobs at the REQUESTED_CALL for ``t``;
* ``calls``: ``[t, ...]`` extra CALL_ME_LATER dates;
* ``record``: file where every message is recorded (see ``_simtest.install_recorder``).

Every CALL_ME_LATER is asked in the reply to SIMULATION_BEGINS.
"""

from batsim.batsim import BatsimScheduler

from _simtest import install_recorder, set_allocation


class Fixed(BatsimScheduler):
    def __init__(self, options=None):
        super().__init__(options or {})
        if self.options.get("record"):
            install_recorder(self.options["record"])
        self.actions = []  # [date, kind, payload], done once each
        self.waiting = {}

    def onSimulationBegins(self):
        for jid, t in self.options.get("start_at", {}).items():
            self.actions.append([float(t), "start", jid])
        for t, ids in self.options.get("kill", []):
            self.actions.append([float(t), "kill", ids])
        for t in self.options.get("calls", []):
            self.actions.append([float(t), "call", None])
        for t in sorted({a[0] for a in self.actions}):
            self.bs.wake_me_up_at(t)

    def onJobSubmission(self, job):
        if job.id in self.options.get("reject", []):
            self.bs.reject_jobs([job])
            return
        if job.id in self.options.get("metadata", {}):
            self.bs.set_job_metadata(job.id, self.options["metadata"][job.id])
        if job.id in self.options.get("start_at", {}):
            self.waiting[job.id] = job
            return
        self.execute(job)

    def execute(self, job):
        set_allocation(job, self.options)
        self.bs.execute_jobs([job])

    def onRequestedCall(self):
        now = self.bs.time()
        for action in self.actions:
            date, kind, payload = action
            if kind is None or date > now + 1e-9:
                continue
            action[1] = None
            if kind == "start":
                self.execute(self.waiting.pop(payload))
            elif kind == "kill":
                self.bs.kill_jobs([self.bs.jobs[jid] for jid in payload])

    def onJobCompletion(self, job):
        pass

    def onJobsKilled(self, jobs):
        pass
