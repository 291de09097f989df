"""``coburst demo``: FCFS vs EASY backfilling on the KTH-SP2 log, end to end.

Runs coburst's FCFS and EASY backfilling pybatsim schedulers (``schedulers/coburstFcfs.py``,
``schedulers/coburstEasy.py``) through the embedded simulator on the bundled 100-node
platform (``platforms/kth_sp2.xml``) and the bundled workload derived from the KTH-SP2 log
(``workloads/kth_sp2_delay_5000.json``: its first 5000 valid jobs, delay profiles; the log
itself is not needed), then
prints mean waiting time, mean bounded slowdown (tau = 10 min), utilisation and makespan.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from coburst.errors import InputError
from coburst.validate import check_output

ROOT = Path(__file__).resolve().parents[2]
PLATFORM = ROOT / "platforms" / "kth_sp2.xml"
WORKLOAD = ROOT / "workloads" / "kth_sp2_delay_5000.json"
SCHEDULERS = {"FCFS": ROOT / "schedulers" / "coburstFcfs.py", "EASY": ROOT / "schedulers" / "coburstEasy.py"}


def demo_command(args: argparse.Namespace) -> int:
    from rich.console import Console

    from coburst.analysis.metrics import metrics_table, read_jobs

    console = Console()
    out = Path(args.output)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError("-o/--output", str(out), f"cannot create the output folder: {exc.strerror}") from None
    check_output(str(out / "fcfs_jobs.csv"), "-o/--output")
    workload = Path(args.workload) if args.workload else WORKLOAD
    if args.jobs is not None:
        doc = json.loads(workload.read_text())
        if args.jobs <= 0:
            raise InputError("--jobs", str(args.jobs), "must be > 0")
        doc["jobs"] = doc["jobs"][:args.jobs]
        workload = out / f"{workload.stem}_first{args.jobs}.json"
        workload.write_text(json.dumps(doc))
    batsim = None
    if args.engine == "batsim":
        from coburst.simulator.external import find_batsim

        batsim = find_batsim(args.batsim)
    runs = {}
    for name, entry in SCHEDULERS.items():
        engine = f"the real Batsim ({batsim})" if batsim else "coburst's engine"
        console.print(f"[bold]{name}[/bold]: {entry.relative_to(ROOT)} on {PLATFORM.relative_to(ROOT)} "
                      f"with {workload.name}, on {engine}")
        prefix = out / name.lower()
        if batsim:
            from coburst.simulator.external import run_with_batsim

            run_with_batsim(batsim, str(entry), {}, str(PLATFORM), [str(workload)], str(prefix))
        else:
            argv = ["run", str(entry), "-p", str(PLATFORM), "-w", str(workload), "-e", str(prefix), "-q"]
            code = _run_in_subprocess(argv)
            if code != 0:
                return code
        runs[name] = read_jobs(f"{prefix}_jobs.csv")
    console.print(metrics_table(runs, nb_compute=100, baseline="FCFS"))
    console.print(f"outputs: {out}/fcfs_jobs.csv, {out}/easy_jobs.csv (Batsim format; evalys reads them)")
    return 0


def _run_in_subprocess(argv: list[str]) -> int:
    """Each simulation needs its own process (SimGrid's engine is a per-process singleton)."""
    import subprocess
    import sys

    return subprocess.call([sys.executable, "-m", "coburst", *argv])


def register(sub) -> None:
    parser = sub.add_parser("demo", allow_abbrev=False, help="FCFS vs EASY backfilling on the KTH-SP2 log",
                            description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default="out/demo", help="output folder [default: out/demo]")
    parser.add_argument("--jobs", type=int, default=None, help="use only the first N jobs (quick look)")
    parser.add_argument("--workload", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--engine", choices=("coburst", "batsim"), default="coburst",
                        help="simulate with coburst's embedded engine (default) or the real batsim binary")
    parser.add_argument("--batsim", default=None, metavar="PATH",
                        help="the batsim binary for --engine batsim [default: $BATSIM, else batsim on PATH]")
    parser.set_defaults(func=demo_command)
