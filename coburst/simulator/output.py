"""Batsim 4.2 output files: ``<prefix>_jobs.csv`` and ``<prefix>_schedule.csv``.

Formats follow what Batsim 4.2.1 writes (``docs/output-jobs.rst``,
``docs/output-schedule.rst`` and observed runs): times with 6 decimals, allocations as
interval sets, rows in the order jobs end, ``metadata`` always double-quoted, schedule
keys in lexicographic order.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from procset import ProcSet


JOBS_COLUMNS = (
    "job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,"
    "success,final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,"
    "stretch,allocated_resources,consumed_energy,metadata"
)

SCHEDULE_KEYS = (
    "batsim_version", "consumed_joules", "makespan", "max_slowdown", "max_turnaround_time",
    "max_waiting_time", "mean_slowdown", "mean_turnaround_time", "mean_waiting_time",
    "nb_computing_machines", "nb_grouped_switches", "nb_jobs", "nb_jobs_finished", "nb_jobs_killed",
    "nb_jobs_rejected", "nb_jobs_success", "nb_machine_switches", "scheduling_time", "simulation_time",
    "success_rate", "time_computing", "time_idle", "time_sleeping", "time_switching_off",
    "time_switching_on", "time_unavailable",
)

#: C's ``long double`` (80-bit on x86-64), in which Batsim computes job times and sums
LD = np.longdouble
EPSILON_RUNTIME = np.longdouble("1e-5")
_LD_NEGATIVE_ZERO = LD(-0.0)


def to_ld(value) -> LD:
    """``LD(value)``, five times faster for a ``float``: ``-0.0 + x`` is ``x`` exactly for every
    double (zeros keep their sign; infinities, NaN), and a double converts to a long double
    exactly (other types: ``LD`` itself)."""
    return _LD_NEGATIVE_ZERO + value if type(value) is float else LD(value)

#: the version string coburst writes in ``batsim_version`` (Batsim compatibility level)
BATSIM_VERSION = "4.2.1-coburst"


def fmt_Lf(value) -> str:
    """C's ``%Lf`` of a long double (6 decimals, exactly rounded)."""
    value = LD(value)
    if not np.isfinite(value):
        return "nan" if np.isnan(value) else ("inf" if value > 0 else "-inf")
    return np.format_float_positional(value, precision=6, unique=False, fractional=True, trim="k")


def f6(value: float) -> str:
    """Batsim's ``%f`` formatting (6 decimals)."""
    return f"{value:.6f}"


def quote_metadata(text: str) -> str:
    """Batsim wraps metadata in double quotes, doubling inner quotes (RFC 4180)."""
    return '"' + text.replace('"', '""') + '"'


@dataclass
class JobRecord:
    """What the outputs need to know about one finished or rejected job."""

    job_number: str  # the part after "!"
    workload: str
    profile: str
    subtime: float
    res: int
    walltime: float
    final_state: str  # COMPLETED_SUCCESSFULLY, COMPLETED_FAILED, COMPLETED_WALLTIME_REACHED,
    #                   COMPLETED_KILLED or REJECTED
    start: float | None = None
    finish: float | None = None
    alloc: ProcSet | None = None
    metadata: str = ""
    consumed_energy: object = None  # -E: the job's energy (long double, printed %Lf); None: -1
    #: ``str(alloc)`` when the caller has it already (a ProcSet's formatting is slow)
    alloc_text: str | None = None

    @property
    def success(self) -> int:
        return 1 if self.final_state == "COMPLETED_SUCCESSFULLY" else 0

    _times: tuple | None = None

    def times(self) -> tuple[LD, LD, LD]:
        if self._times is None:
            self._times = self._compute_times()
        return self._times

    def _compute_times(self) -> tuple[LD, LD, LD]:
        """Batsim's long-double (start, runtime, completion): ``runtime = end clock - start``,
        ``1e-5`` when null (``jobs_execution.cpp``), ``completion = start + runtime``."""
        start = to_ld(self.start)
        runtime = to_ld(self.finish) - start
        if runtime == 0:
            runtime = EPSILON_RUNTIME
        return start, runtime, start + runtime

    _derived: tuple | None = None

    def derived(self) -> tuple:
        """(start, runtime, completion, waiting, turnaround, stretch) in Batsim's long double
        (``waiting = start - submission``, ``turnaround = completion - submission``,
        ``stretch = turnaround / runtime``): worked out once for the row and the sums."""
        if self._derived is None:
            start, runtime, completion = self.times()
            sub = to_ld(self.subtime)
            turnaround = completion - sub
            self._derived = (start, runtime, completion, start - sub, turnaround, turnaround / runtime)
        return self._derived

    def csv_row(self) -> str:
        head = f"{self.job_number},{self.workload},{self.profile},{self.subtime:.6f},{self.res},{self.walltime:.6f}"
        if self.final_state == "REJECTED":
            return f"{head},0,REJECTED,,,,,,,,,{quote_metadata(self.metadata)}"
        assert self.start is not None and self.finish is not None and self.alloc is not None
        start, runtime, completion, wait, turnaround, stretch = self.derived()
        # (one formatting call: "%.6f" takes each long double as float(), as the f-string did)
        return "%s,%d,%s,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%s,%s,%s" % (
            head, self.success, self.final_state, start, runtime, completion, wait, turnaround, stretch,
            self.alloc if self.alloc_text is None else self.alloc_text,
            "-1.000000" if self.consumed_energy is None else fmt_Lf(self.consumed_energy),
            quote_metadata(self.metadata))


class ScheduleStats:
    """Batsim's ``JobsTracer`` counters, updated as each job's row is written (long double
    sums in the order jobs end)."""

    def __init__(self):
        self.nb_jobs = self.nb_finished = self.nb_success = 0
        zero = LD(0)
        self.sum_wait = self.sum_turn = self.sum_slow = zero
        self.max_wait = self.max_turn = self.max_slow = self.makespan = zero

    def add(self, r: JobRecord) -> None:
        self.nb_jobs += 1
        if r.final_state == "REJECTED":
            return
        self.nb_finished += 1
        self.nb_success += r.success
        _, _, completion, wait, turn, slow = r.derived()
        self.sum_wait += wait
        self.sum_turn += turn
        self.sum_slow += slow
        if completion > self.makespan:
            self.makespan = completion
        if wait > self.max_wait:
            self.max_wait = wait
        if turn > self.max_turn:
            self.max_turn = turn
        if slow > self.max_slow:
            self.max_slow = slow

    def row(self, nb_machines: int, time_computing, time_idle, scheduling_time: float,
            simulation_time: float) -> dict[str, str]:
        """The ``_schedule.csv`` values (means divide by ``nb_jobs``, like Batsim 4.2).

        ``time_computing`` / ``time_idle``: sums over machines of the time spent in each
        state, counted at state changes only (Batsim never adds a machine's last open
        interval)."""
        nb_jobs = self.nb_jobs
        # Batsim 4.2 (export.cpp): nb_jobs_killed = finished - success, i.e. failed jobs count too
        nb_killed = self.nb_finished - self.nb_success

        def mean(total) -> str:  # Batsim divides by 0 without a job: x86's 0.0 / 0 is -nan
            return f6(float(total) / nb_jobs) if nb_jobs else "-nan"

        values = {
            "batsim_version": BATSIM_VERSION,
            "consumed_joules": f6(0.0),
            "makespan": f6(float(self.makespan)),
            "max_slowdown": f6(float(self.max_slow)),
            "max_turnaround_time": f6(float(self.max_turn)),
            "max_waiting_time": f6(float(self.max_wait)),
            "mean_slowdown": mean(self.sum_slow),
            "mean_turnaround_time": mean(self.sum_turn),
            "mean_waiting_time": mean(self.sum_wait),
            "nb_computing_machines": str(nb_machines),
            "nb_grouped_switches": "0",
            "nb_jobs": str(nb_jobs),
            "nb_jobs_finished": str(self.nb_finished),
            "nb_jobs_killed": str(nb_killed),
            "nb_jobs_rejected": str(nb_jobs - self.nb_finished),
            "nb_jobs_success": str(self.nb_success),
            "nb_machine_switches": "0",
            "scheduling_time": f6(scheduling_time),
            "simulation_time": f6(simulation_time),
            "success_rate": mean(self.nb_success),
            "time_computing": f6(float(time_computing)),
            "time_idle": f6(float(time_idle)),
            "time_sleeping": f6(0.0),
            "time_switching_off": f6(0.0),
            "time_switching_on": f6(0.0),
            "time_unavailable": f6(0.0),
        }
        assert tuple(values) == SCHEDULE_KEYS
        return values


class StagedFiles:
    """Output files written as the simulation goes, each through a temporary file in its
    final folder: :meth:`commit` renames them all, :meth:`abort` removes them, so a failed
    run leaves nothing half-written (and earlier results of the same prefix untouched).
    Opening them first also checks, before any work, that the outputs can be written."""

    def __init__(self, paths: list[Path]):
        import os
        import tempfile

        self.paths = [Path(p) for p in paths]
        self.handles: list = []
        self.tmps: list[str] = []
        try:
            for path in self.paths:
                if path.is_dir():
                    raise IsADirectoryError(f"{path} is a directory")
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
                self.tmps.append(tmp)
                self.handles.append(os.fdopen(fd, "w", encoding="utf-8", newline="", buffering=1 << 16))
        except BaseException:
            self.abort()
            raise

    def commit(self) -> None:
        import os

        umask = os.umask(0)
        os.umask(umask)
        for handle, tmp, path in zip(self.handles, self.tmps, self.paths):
            handle.close()
            os.chmod(tmp, 0o666 & ~umask)
            os.replace(tmp, path)
        self.handles, self.tmps = [], []

    def abort(self) -> None:
        import contextlib
        import os

        for handle in self.handles:
            with contextlib.suppress(Exception):
                handle.close()
        for tmp in self.tmps:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        self.handles, self.tmps = [], []
