"""Batsim 4.2 output files: ``<prefix>_jobs.csv`` and ``<prefix>_schedule.csv``.

Formats follow what Batsim 4.2.1 writes (``docs/output-jobs.rst``,
``docs/output-schedule.rst`` and observed runs): times with 6 decimals, allocations as
interval sets, rows in the order jobs end, ``metadata`` always double-quoted, schedule
keys in lexicographic order.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from procset import ProcSet

from coburst.fileio import atomic_write

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

#: the version string coburst writes in ``batsim_version`` (Batsim compatibility level)
BATSIM_VERSION = "4.2.1-coburst"


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

    @property
    def success(self) -> int:
        return 1 if self.final_state == "COMPLETED_SUCCESSFULLY" else 0

    def csv_row(self) -> str:
        head = f"{self.job_number},{self.workload},{self.profile},{f6(self.subtime)},{self.res},{f6(self.walltime)}"
        if self.final_state == "REJECTED":
            return f"{head},0,REJECTED,,,,,,,,,{quote_metadata(self.metadata)}"
        assert self.start is not None and self.finish is not None and self.alloc is not None
        execution = self.finish - self.start
        waiting = self.start - self.subtime
        turnaround = self.finish - self.subtime
        stretch = turnaround / execution if execution > 0 else float("inf")
        return (f"{head},{self.success},{self.final_state},{f6(self.start)},{f6(execution)},"
                f"{f6(self.finish)},{f6(waiting)},{f6(turnaround)},{f6(stretch)},{self.alloc},"
                f"{f6(-1)},{quote_metadata(self.metadata)}")


def schedule_row(records: list[JobRecord], nb_machines: int, time_computing: float, makespan: float,
                 scheduling_time: float, simulation_time: float, time_idle: float = 0.0) -> dict[str, str]:
    """The ``_schedule.csv`` values (means divide by ``nb_jobs``, like Batsim 4.2).

    ``time_computing`` / ``time_idle``: sums over machines of the time spent in each state,
    counted at state changes only (Batsim never adds a machine's last open interval).
    """
    finished = [r for r in records if r.final_state != "REJECTED"]
    nb_jobs = len(records)
    waits = [r.start - r.subtime for r in finished]
    turns = [r.finish - r.subtime for r in finished]
    slows = [(r.finish - r.subtime) / (r.finish - r.start) if r.finish > r.start else 0.0 for r in finished]
    nb_success = sum(r.success for r in finished)
    # Batsim 4.2 (export.cpp): nb_jobs_killed = finished - success, i.e. failed jobs count too
    nb_killed = len(finished) - nb_success

    def mean(values: list[float]) -> float:
        return sum(values) / nb_jobs if nb_jobs else 0.0

    values = {
        "batsim_version": BATSIM_VERSION,
        "consumed_joules": f6(0.0),
        "makespan": f6(makespan),
        "max_slowdown": f6(max(slows, default=0.0)),
        "max_turnaround_time": f6(max(turns, default=0.0)),
        "max_waiting_time": f6(max(waits, default=0.0)),
        "mean_slowdown": f6(mean(slows)),
        "mean_turnaround_time": f6(mean(turns)),
        "mean_waiting_time": f6(mean(waits)),
        "nb_computing_machines": str(nb_machines),
        "nb_grouped_switches": "0",
        "nb_jobs": str(nb_jobs),
        "nb_jobs_finished": str(len(finished)),
        "nb_jobs_killed": str(nb_killed),
        "nb_jobs_rejected": str(nb_jobs - len(finished)),
        "nb_jobs_success": str(nb_success),
        "nb_machine_switches": "0",
        "scheduling_time": f6(scheduling_time),
        "simulation_time": f6(simulation_time),
        "success_rate": f6(nb_success / nb_jobs if nb_jobs else 0.0),
        "time_computing": f6(time_computing),
        "time_idle": f6(time_idle),
        "time_sleeping": f6(0.0),
        "time_switching_off": f6(0.0),
        "time_switching_on": f6(0.0),
        "time_unavailable": f6(0.0),
    }
    assert tuple(values) == SCHEDULE_KEYS
    return values


def write_outputs(prefix: str, records: list[JobRecord], schedule: dict[str, str]) -> tuple[Path, Path]:
    """Write both files atomically; return their paths."""
    jobs_path = Path(f"{prefix}_jobs.csv")
    sched_path = Path(f"{prefix}_schedule.csv")
    with atomic_write(jobs_path, newline="") as out:
        out.write(JOBS_COLUMNS + "\n")
        for rec in records:
            out.write(rec.csv_row() + "\n")
    with atomic_write(sched_path, newline="") as out:
        out.write(",".join(SCHEDULE_KEYS) + "\n")
        out.write(",".join(schedule[k] for k in SCHEDULE_KEYS) + "\n")
    return jobs_path, sched_path
