"""Scheduling metrics computed from Batsim ``_jobs.csv`` files.

Definitions (Kopański 2020, §1.8):

* waiting time ``w = start - submit``; turnaround ``t = finish - submit``;
* slowdown ``t / runtime``; bounded slowdown ``max(t / max(runtime, tau), 1)`` with
  ``tau = 600 s`` (10 minutes) by default;
* makespan: last finish time minus first submission time;
* utilisation: node-seconds used by jobs divided by ``nb_compute * makespan``.

Rejected jobs are excluded from every metric (they never ran).  Only rows of static
workloads (``w0``, ``w1``, ...) count: dynamic sub-jobs (e.g. the ``io`` workload of
IO-Aware execution) are parts of a static job, whose own row carries its times.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from procset import ProcSet

from coburst.errors import InputError

TAU = 600.0

REQUIRED = ("job_id", "submission_time", "starting_time", "finish_time", "execution_time", "final_state",
            "allocated_resources", "requested_number_of_resources")


STATIC_WORKLOAD = r"w\d+"


def read_jobs(path: str | Path, static_only: bool = True) -> pd.DataFrame:
    """Read a Batsim ``_jobs.csv`` (rejected jobs dropped; dynamic sub-jobs dropped unless
    ``static_only`` is false)."""
    try:
        df = pd.read_csv(path, dtype={"job_id": str, "allocated_resources": str, "metadata": str},
                         keep_default_na=False, na_values={"starting_time": [""], "finish_time": [""],
                                                           "execution_time": [""]})
    except FileNotFoundError:
        raise InputError(path, None, "jobs file not found") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"not a Batsim _jobs.csv: {exc}") from None
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise InputError(path, "header", f"not a Batsim _jobs.csv: missing columns {missing}")
    df = df[df["final_state"] != "REJECTED"]
    if static_only and "workload_name" in df.columns:
        df = df[df["workload_name"].astype(str).str.fullmatch(STATIC_WORKLOAD)]
    df = df.copy()
    for col in ("submission_time", "starting_time", "finish_time", "execution_time"):
        df[col] = df[col].astype(float)
    return df


@dataclass(frozen=True)
class Metrics:
    nb_jobs: int
    mean_waiting: float
    mean_bounded_slowdown: float
    mean_turnaround: float
    max_waiting: float
    utilisation: float
    makespan: float

    def as_dict(self) -> dict[str, float]:
        return dict(self.__dict__)


def bounded_slowdown(df: pd.DataFrame, tau: float = TAU) -> np.ndarray:
    turnaround = (df["finish_time"] - df["submission_time"]).to_numpy()
    runtime = df["execution_time"].to_numpy()
    return np.maximum(turnaround / np.maximum(runtime, tau), 1.0)


def node_count(alloc: str, requested: int = 0) -> int:
    """Nodes of an allocation; a job moved by CHANGE_JOB_STATE has none: use its request."""
    return len(ProcSet.from_str(alloc)) if alloc else int(requested)


def compute_metrics(df: pd.DataFrame, nb_compute: int | None = None, tau: float = TAU) -> Metrics:
    """Metrics of one run.  ``nb_compute`` defaults to the highest resource id used + 1."""
    if df.empty:
        return Metrics(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    waiting = (df["starting_time"] - df["submission_time"]).to_numpy()
    turnaround = (df["finish_time"] - df["submission_time"]).to_numpy()
    nodes = np.array([node_count(a, r) for a, r in zip(df["allocated_resources"],
                                                         df["requested_number_of_resources"])])
    if nb_compute is None:
        nb_compute = max((ProcSet.from_str(a).max + 1 for a in df["allocated_resources"] if a),
                         default=int(nodes.max()))
    makespan = float(df["finish_time"].max() - df["submission_time"].min())
    used = float(np.sum(nodes * df["execution_time"].to_numpy()))
    return Metrics(
        nb_jobs=len(df),
        mean_waiting=float(waiting.mean()),
        mean_bounded_slowdown=float(bounded_slowdown(df, tau).mean()),
        mean_turnaround=float(turnaround.mean()),
        max_waiting=float(waiting.max()),
        utilisation=used / (nb_compute * makespan) if makespan > 0 else 0.0,
        makespan=makespan,
    )


def metrics_table(runs: dict[str, pd.DataFrame], nb_compute: int | None = None, baseline: str | None = None):
    """A rich table comparing runs; ratios against ``baseline`` when given."""
    from rich.table import Table

    table = Table(title="Scheduling metrics" + (f" (ratio vs {baseline})" if baseline else ""))
    for col in ("scheduler", "jobs", "mean wait (s)", "mean bounded slowdown (tau=600s)", "utilisation",
                "makespan (s)"):
        table.add_column(col, justify="left" if col == "scheduler" else "right")
    computed = {name: compute_metrics(df, nb_compute) for name, df in runs.items()}
    base = computed.get(baseline) if baseline else None
    for name, m in computed.items():
        def cell(value: float, ref: float | None, fmt: str) -> str:
            text = format(value, fmt)
            if base is not None and ref:
                text += f" ({value / ref:.2f}x)"
            return text

        table.add_row(name, str(m.nb_jobs),
                      cell(m.mean_waiting, base.mean_waiting if base else None, ",.1f"),
                      cell(m.mean_bounded_slowdown, base.mean_bounded_slowdown if base else None, ",.2f"),
                      cell(m.utilisation, base.utilisation if base else None, ".1%"),
                      cell(m.makespan, base.makespan if base else None, ",.0f"))
    return table
