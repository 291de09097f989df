"""``coburst run``: simulator and scheduler together, from one command.

The scheduler is a pybatsim scheduler file (``schedulers/coburstEasy.py``, pybatsim's
own ``easyBackfill``...) or the name of a coburst policy (``fcfs``, ``easy``,
``backfill-sjf-1``...), with options as JSON.  It runs as a real ``pybatsim`` process
talking ZeroMQ to the embedded simulator.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from coburst.cli.sim import add_sim_options, simulator_config_from_args
from coburst.errors import InputError

REPO_SCHEDULERS = Path(__file__).resolve().parents[2] / "schedulers"


def resolve_scheduler(spec: str, options: dict) -> tuple[str, dict]:
    """A scheduler file path, a pybatsim bundled name, or a coburst policy name."""
    path = Path(spec)
    if spec.endswith(".py"):
        if not path.is_file():
            raise InputError(spec, None, "scheduler file not found")
        return str(path.resolve()), options
    from coburst.policies import resolve

    try:
        resolve(spec)
    except (KeyError, ValueError, InputError):
        pass
    else:
        return str(REPO_SCHEDULERS / "coburstBackfill.py"), {"policy": spec, **options}
    # pybatsim's bundled schedulers (schedFcfs, easyBackfill, ...)
    return spec, options


def launch_scheduler(spec: str, options: dict, endpoint: str, log_path: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "batsim.cmds.launcher", spec, "-o", json.dumps(options),
           "-s", endpoint, "-t", "30000", "-v", "warning"]
    with open(log_path, "w", encoding="utf-8") as log:  # the child keeps its own descriptor
        return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy())


def _simulate(args: argparse.Namespace, config, link=None):
    """Run the simulation with a progress bar on a terminal."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from coburst.simulator.engine import Simulator

    total = sum(len(json.loads(Path(w).read_text()).get("jobs", [])) for w in args.workload)
    show = not args.quiet and sys.stderr.isatty()
    with Progress(TextColumn("[bold]simulating"), BarColumn(), TextColumn("{task.completed}/{task.total} jobs"),
                  TextColumn("t={task.fields[now]:.0f}s"), TimeElapsedColumn(), disable=not show,
                  transient=True) as progress:
        task = progress.add_task("sim", total=total or None, now=0.0)
        config.on_progress = lambda now, done, submitted: progress.update(task, completed=done, now=now)
        sim = Simulator(config)
        sim.link = link(sim) if link is not None else None
        return sim.run()


def _run_over_zmq(args: argparse.Namespace, spec: str, options: dict):
    """The scheduler as a real ``pybatsim`` process on a private IPC endpoint (no port to
    pick, so no race with other runs on the machine)."""
    sock_dir = tempfile.mkdtemp(prefix="coburst-run-")
    args.socket_endpoint = f"ipc://{sock_dir}/scheduler.sock"
    log_path = Path(sock_dir) / "scheduler.log"
    proc = None
    try:
        config = simulator_config_from_args(args)
        proc = launch_scheduler(spec, options, args.socket_endpoint, log_path)

        def peer_alive():
            code = proc.poll()
            if code is None:
                return None
            tail = log_path.read_text(errors="replace").strip().splitlines()[-8:]
            return (f"the scheduler process exited with code {code} before the end of the simulation; its last "
                    "output:\n    " + "\n    ".join(tail))

        config.peer_alive = peer_alive
        return _simulate(args, config)
    finally:
        sched_log = ""
        if proc is not None:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            sched_log = log_path.read_text(errors="replace")
        shutil.rmtree(sock_dir, ignore_errors=True)
        if proc is not None and proc.returncode not in (0, None) and "Traceback" in sched_log:
            print(sched_log, file=sys.stderr)


def run_command(args: argparse.Namespace) -> int:
    from coburst.simulator.protocol import InProcessLink

    try:
        options = json.loads(args.options)
    except json.JSONDecodeError as exc:
        raise InputError("-o/--options", f"column {exc.colno}", f"invalid JSON: {exc.msg}") from None
    if not isinstance(options, dict):
        raise InputError("-o/--options", None, "must be a JSON object")
    spec, options = resolve_scheduler(args.scheduler, options)
    if args.transport == "inprocess":
        args.socket_endpoint = "in-process"
        config = simulator_config_from_args(args)
        result = _simulate(args, config, lambda sim: InProcessLink(
            spec, options, timeout=args.timeout, on_timeout=lambda message: sim.abort_outputs()))
    else:
        result = _run_over_zmq(args, spec, options)
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
        console.print(metrics_table({args.scheduler: jobs}, nb_compute=result.nb_compute))
    return 0


def register(sub) -> None:
    parser = sub.add_parser("run", allow_abbrev=False, help="run the simulator and a scheduler together",
                            description=__doc__.splitlines()[0])
    parser.add_argument("scheduler", help="pybatsim scheduler file (.py), pybatsim bundled scheduler name, "
                                          "or coburst policy name (fcfs, easy, backfill-sjf-1, ...)")
    parser.add_argument("-o", "--options", default="{}", help="scheduler options as a JSON object")
    parser.add_argument("--transport", choices=("inprocess", "zmq"), default="inprocess",
                        help="inprocess: load the pybatsim scheduler into the simulator's process and exchange "
                             "the Batsim messages through memory (default); zmq: run it as a separate pybatsim "
                             "process over ZeroMQ, as with the batsim command")
    add_sim_options(parser)
    parser.set_defaults(func=run_command)
