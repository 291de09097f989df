"""Job starts and ends as the outputs see them: machine states (Batsim's
``Machine::update_machine_state`` arithmetic), the Pajé trace, energy, the speed hook, and the
``_jobs.csv`` rows, written when Batsim writes them.

:class:`JobAccounting` is one part of :class:`coburst.simulator.engine.Simulator`.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from coburst.simulator.jobs import SimJob
from coburst.simulator.output import JobRecord, to_ld

if TYPE_CHECKING:  # pragma: no cover
    from coburst.simulator.execution import JobRun

_DEBUG = bool(os.environ.get("COBURST_DEBUG_SIM"))


class JobAccounting:
    """What the outputs record when a job starts, ends or is rejected."""

    def _set_machines(self, ids: list[int], delta: int) -> None:
        """A job starts (+1) or ends (-1) on machines ``ids``: account the time each machine
        spent in its previous state (Batsim's ``Machine::update_machine_state``, long double).
        Batsim updates a machine at *every* job start on it, also one already computing (a
        storage machine shared by several jobs, compute sharing): the interval is then added
        in two parts, which changes the last bits of the long double sums; at a job end only
        when the machine becomes idle."""
        now = to_ld(self.kernel.now)
        busy_list, last = self.machine_busy, self.machine_last_change
        idle, computing = self.machine_idle, self.machine_computing
        unavailable = self.external.unavailable if self.external is not None else None
        since = span = None  # machines that last changed together share that date's object
        for rid in ids:
            busy = busy_list[rid]
            new = busy + delta
            if delta > 0 or (new == 0 and not (unavailable and unavailable[rid])):
                # (a job ending on a machine an external event made unavailable leaves it so)
                if last[rid] is not since:
                    since = last[rid]
                    span = now - since
                if busy == 0:
                    idle[rid] += span
                else:
                    computing[rid] += span
                last[rid] = now
            busy_list[rid] = new

    def record(self, rec: JobRecord) -> None:
        """A job's row of ``_jobs.csv`` (written when Batsim writes it: at its end or rejection)."""
        self._jobs_out.write(rec.csv_row() + "\n")
        self.stats.add(rec)
        self.nb_records += 1
        if self.nb_records % 2000 == 0:
            self.traces.drain(*self._trace_out)

    def job_started(self, run: JobRun) -> None:
        """The job's process starts (Batsim's ``update_machines_on_job_run``)."""
        if self.power is not None:
            self.power.job_start(run.job, self.kernel.now)
        ids = run.job.machine_ids()
        self._set_machines(ids, +1)
        self.traces.job_started(self.kernel.now, run.job.id, run.job.alloc, machines=ids)
        if self.speed_hook is not None:
            self.speed_hook.on_job_start(run.job)

    def job_finished(self, run: JobRun, code: int) -> None:
        """The job's process ends (before it reports to the server)."""
        sjob = run.job
        now = self.kernel.now
        if _DEBUG:
            print(f"job end {sjob.id} start {sjob.start!r} end {now!r}", file=sys.stderr)
        sjob.finish = now  # a null runtime becomes 1e-5 in the outputs (JobRecord.times)
        sjob.return_code = code
        sjob.state = ("COMPLETED_SUCCESSFULLY" if code == 0 else "COMPLETED_FAILED" if code > 0 else
                      "COMPLETED_WALLTIME_REACHED" if code == -1 else "COMPLETED_KILLED")
        # (a job whose running parallel task a KILL_JOB cancelled keeps its code -2; a job killed
        # in a delay keeps Batsim's default -1, see killer())
        self._end_job(sjob, kill_mark=code in (-1, -2))

    def _end_job(self, sjob: SimJob, kill_mark: bool = False) -> None:
        ids = sjob.machine_ids()
        self._set_machines(ids, -1)
        self.traces.job_ended(self.kernel.now, sjob.id, sjob.alloc, kill_mark=kill_mark, machines=ids)
        if self.power is not None:
            self.power.job_end(sjob, self.kernel.now)
        if self.speed_hook is not None:
            self.speed_hook.on_job_end(sjob)

    def job_row(self, sjob: SimJob) -> None:
        """The job's ``_jobs.csv`` row, written when the server learns of its end (Batsim's
        ``write_job`` in ``server_on_job_completed`` / ``server_on_killing_done``), not when it
        ends: a rejection or another completion handled in between comes first."""
        self.record(JobRecord(
            job_number=sjob.id.split("!", 1)[1], workload=sjob.job.workload, profile=sjob.job.profile,
            subtime=sjob.job.subtime, res=sjob.job.res, walltime=sjob.job.walltime, final_state=sjob.state,
            start=sjob.start, finish=sjob.finish, alloc=sjob.alloc if sjob.first_alloc is None else sjob.first_alloc,
            metadata=sjob.job.metadata, consumed_energy=sjob.energy,
            alloc_text=sjob.alloc_text if sjob.first_alloc is None else str(sjob.first_alloc)))
