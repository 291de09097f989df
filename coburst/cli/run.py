"""``coburst run``: simulator and scheduler together, from one command.

The scheduler is a pybatsim scheduler file (``schedulers/coburstEasy.py``, pybatsim's
own ``easyBackfill``...) or the name of a coburst policy (``fcfs``, ``easy``,
``backfill-sjf-1``...), with options as JSON (:func:`coburst.api.run` runs it); this
command prints the run's summary and metrics.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from coburst.runner import add_run_arguments, cosched_platform, scheduler_options


def run_command(args: argparse.Namespace) -> int:
    from coburst import api

    config = api.RunConfig.from_args(args, scheduler_options(args.options))
    run = api.run(config)
    result = run.sim
    options = run.scheduler_options
    if not args.quiet:
        from rich.console import Console

        from coburst.analysis.metrics import metrics_table, read_jobs

        console = Console()
        console.print(result.summary())
        jobs = read_jobs(result.jobs_csv)
        nb_io = int(jobs["metadata"].astype(str).str.contains(r"(?:^|;)phases=\d+/\d+$").sum()) \
            if "metadata" in jobs.columns else 0
        if nb_io:
            console.print(f"{nb_io} IO-Aware jobs ran as dynamic sub-jobs (rejected rows + workload 'io' in "
                          "_jobs.csv); the metrics fold them back into one row each")
        energy = None
        if args.energy:
            from coburst.analysis.metrics import read_energy

            energy = {args.scheduler: read_energy(result.prefix)["energy"]}
        console.print(metrics_table({args.scheduler: jobs}, nb_compute=result.nb_compute, energy=energy))
        zone = cosched_platform(args.platform)
        if zone is not None:
            console.print(cosched_table(result.jobs_csv, zone))
        dlog = options.get("decision_log")
        if isinstance(dlog, str) and dlog and Path(dlog).is_file():
            from coburst.adapter.profiler import decision_time_table

            console.print(decision_time_table(dlog))
    return 0


def cosched_table(jobs_csv, zone: dict[str, str]):
    """Kellari's co-scheduling metrics of a run on a node-sharing platform (a rich table)."""
    from rich.table import Table

    from coburst.analysis.cosched import cosched_metrics

    try:
        cpu = int(zone.get("cores_per_unit", 1))
        cores = int(zone["nodes"]) * int(zone["sockets"]) * int(zone["cores_per_socket"])
    except (KeyError, ValueError):
        return "co-scheduling metrics: the platform's zone properties do not give its core count"
    m = cosched_metrics(jobs_csv, total_cores=cores, cores_per_unit=cpu)
    table = Table(title="co-scheduling metrics (Kellari 2025, §2.3)")
    for key in ("mean_slowdown", "mean_slowdown_per_processor", "utilisation", "mean_job_speedup",
                "weighted_mean_job_speedup", "slowdown_count_percent"):
        table.add_column(key.replace("_", " "), justify="right")
    table.add_row(*(f"{m[k]:.4g}" for k in ("mean_slowdown", "mean_slowdown_per_processor", "utilisation",
                                             "mean_job_speedup", "weighted_mean_job_speedup",
                                             "slowdown_count_percent")))
    return table


def register(sub) -> None:
    parser = sub.add_parser("run", allow_abbrev=False, help="run the simulator and a scheduler together",
                            description=__doc__.splitlines()[0])
    add_run_arguments(parser)
    parser.set_defaults(func=run_command)
