"""Test scheduler that breaks the protocol (or dies) on purpose, once, at the first job.

``options["violation"]`` selects what it does when the first job is submitted:

* ``unknown_job``: EXECUTE_JOB of a job that does not exist;
* ``outside``: an allocation beyond the platform's resources;
* ``wrong_size``: an allocation smaller than the job's request;
* ``twice``: EXECUTE_JOB of the same job twice in one reply;
* ``overlap``: run every job at its submission on ``allocs`` (default ``0..res-1``: two jobs
  on the same resources at the same time);
* ``malformed_json``: a reply that is not JSON;
* ``call_past``: CALL_ME_LATER one second in the past; ``call_now``: at the current date;
* ``register``: REGISTER_PROFILE + REGISTER_JOB (the simulator runs without dynamic jobs);
* ``register_job``: REGISTER_JOB alone, in the static workload w0, with one of its profiles;
* ``events_after_end``: run every job at its submission on ``allocs``, then answer
  SIMULATION_ENDS with a CALL_ME_LATER;
* ``suicide``: the scheduler process kills itself (SIGKILL) instead of answering;
* ``silent``: never answer (sleeps);
* ``idle``: answer, but never execute nor reject anything.
"""

import os
import signal
import time

from batsim.batsim import BatsimScheduler
from _simtest import install_recorder, set_allocation


class Violator(BatsimScheduler):
    def __init__(self, options=None):
        super().__init__(options or {})
        if self.options.get("record"):
            install_recorder(self.options["record"])
        self.violation = self.options["violation"]
        self.done = False

    def raw(self, etype, data):
        self.bs._events_to_send.append({"timestamp": self.bs.time(), "type": etype, "data": data})

    def onJobSubmission(self, job):
        v = self.violation
        first, self.done = not self.done, True
        if v in ("overlap", "events_after_end"):  # run the jobs (overlap: all on 0..res-1)
            set_allocation(job, self.options)
            self.bs.execute_jobs([job])
            return
        if not first or v == "idle":
            return
        if v == "unknown_job":
            self.raw("EXECUTE_JOB", {"job_id": "w0!999", "alloc": "0"})
        elif v == "outside":
            self.raw("EXECUTE_JOB", {"job_id": job.id, "alloc": "2-5"})
        elif v == "wrong_size":
            self.raw("EXECUTE_JOB", {"job_id": job.id, "alloc": "0"})
        elif v == "twice":
            self.raw("EXECUTE_JOB", {"job_id": job.id, "alloc": "0-1"})
            self.raw("EXECUTE_JOB", {"job_id": job.id, "alloc": "2-3"})
        elif v == "malformed_json":
            network = self.bs.network
            orig = network.send_string

            def garbage(msg):
                network.send_string = orig
                orig('{"now": 1.0, "events": [')

            network.send_string = garbage
        elif v == "call_past":
            self.bs.wake_me_up_at(self.bs.time() - 1)
        elif v == "call_now":
            self.bs.wake_me_up_at(self.bs.time())
        elif v == "register":
            self.raw("REGISTER_PROFILE", {"workload_name": "dyn", "profile_name": "p",
                                          "profile": {"type": "delay", "delay": 1}})
            self.raw("REGISTER_JOB", {"job_id": "dyn!1",
                                      "job": {"id": "dyn!1", "subtime": 0, "res": 1, "profile": "p"}})
        elif v == "register_job":
            self.raw("REGISTER_JOB", {"job_id": "w0!dyn", "job": {"id": "w0!dyn", "subtime": 1, "res": 1,
                                                                   "profile": job.profile}})
        elif v == "suicide":
            os.kill(os.getpid(), signal.SIGKILL)
        elif v == "silent":
            time.sleep(60)
        else:
            raise ValueError(f"unknown violation {v!r}")

    def onSimulationEnds(self):
        if self.violation == "events_after_end":
            self.bs.wake_me_up_at(self.bs.time() + 10)

    def onJobCompletion(self, job):
        pass

    def onRequestedCall(self):
        pass

    def onDeadlock(self):
        raise SystemExit("the simulator stopped talking")
