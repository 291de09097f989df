"""Test scheduler: :mod:`fixed` (every job at once on the allocation its options give), plus
messages to and from jobs and additional I/O jobs.

Options (``pybatsim messenger.py -o JSON``), besides those of ``fixed.py``, every key optional:

* ``to_job``: ``{job_id: ["text", ...]}`` TO_JOB_MSG these messages to the job at its submission
  (before it runs: Batsim keeps them for its recv profiles);
* ``replies``: ``{job_id: ["text", ...]}`` answer the job's successive FROM_JOB_MSG with these
  TO_JOB_MSG messages (default for every message: ``"ack"``);
* ``io_jobs``: ``{job_id: {"alloc": ..., "profile_name": ..., "profile": {...}}}`` sent as the
  job's ``additional_io_job`` in EXECUTE_JOB.
"""

from fixed import Fixed

from _simtest import set_allocation


class Messenger(Fixed):
    def onJobSubmission(self, job):
        for text in self.options.get("to_job", {}).get(job.id, []):
            self.bs.send_message_to_job(job, text)
        super().onJobSubmission(job)

    def execute(self, job):
        set_allocation(job, self.options)
        self.bs.execute_job(job, self.options.get("io_jobs", {}).get(job.id))

    def onJobMessage(self, timestamp, job, message):
        replies = self.options.setdefault("replies", {}).get(job.id)
        self.bs.send_message_to_job(job, replies.pop(0) if replies else "ack")
