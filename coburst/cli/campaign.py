"""``coburst campaign``: a grid of simulations from a TOML file, resumable, local or on Dask.

    coburst campaign FILE.toml [--engine coburst|batsim] [--jobs N] [--out DIR]
                               [--scheduler-address tcp://HOST:PORT] [--retry-failed]
                               [--only KEY=V1,V2 ...] [--dry-run]
    coburst campaign status DIR_OR_FILE
    coburst campaign report DIR_OR_FILE [-o report.html] [--baseline SCHEDULER] [--tau 600]

The format of FILE.toml is in :mod:`coburst.campaign.spec`; the output folder's layout in
:mod:`coburst.campaign`.  Every run goes through ``coburst run`` (or the real Batsim with
``--engine batsim``) in its own process and is published atomically under
``<out>/runs/<run-id>``; finished runs are skipped, so a stopped or killed campaign resumes
where it was by running the same command again.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from coburst.errors import InputError

SUBCOMMANDS = ("status", "report")


def _add_run_options(parser: argparse.ArgumentParser, suppress: bool) -> None:
    d = (lambda value: argparse.SUPPRESS) if suppress else (lambda value: value)
    parser.add_argument("--engine", choices=("coburst", "batsim"), default=d(None),
                        help="simulate every run with coburst's engine or the real batsim [default: the file's "
                             "[campaign] engines, else coburst]")
    parser.add_argument("--batsim", default=d(None), metavar="PATH",
                        help="the batsim binary for --engine batsim [default: $BATSIM, else batsim on PATH]")
    parser.add_argument("-j", "--jobs", type=_positive_int, default=d(None), metavar="N",
                        help="runs at a time on this machine [default: the CPU count]")
    parser.add_argument("--out", default=d(None), metavar="DIR",
                        help="output folder [default: the file's [campaign] out, else out/<name>]")
    parser.add_argument("--scheduler-address", default=d(None), metavar="tcp://HOST:PORT",
                        help="run on a Dask distributed cluster (workers sharing this file system) instead of "
                             "the local cores")
    parser.add_argument("--retry-failed", action="store_true", default=d(False),
                        help="run the failed runs again (default: keep their failure)")
    parser.add_argument("--only", action="append", default=d([]), metavar="KEY=V1[,V2...]",
                        help="run only the runs whose parameter KEY (scheduler, workload, seed, a label, ...) "
                             "is one of the values (repeatable: all must match); the others stay pending")
    parser.add_argument("--dry-run", action="store_true", default=d(False),
                        help="list the runs and their state, run nothing")
    parser.add_argument("-q", "--quiet", action="store_true", default=d(False),
                        help="no progress and no line per run; only the summary")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _load(target: str, out: str | None = None, engine: str | None = None):
    """A campaign from a spec file, or from an output folder's stored spec."""
    from coburst.campaign.launch import load

    return load(target, out, engine)


# ---------------------------------------------------------------------------- run
def run_campaign(args: argparse.Namespace) -> int:
    from rich.console import Console

    from coburst.campaign.launch import launch, select

    camp = _load(args.target, args.out, args.engine)
    selected = select(camp, args.only) if args.only else camp.runs
    err = Console(stderr=True, soft_wrap=True)
    out_option = "--out" if args.out else f"{camp.source} ([campaign] out)"
    outcome = launch(camp, selected, out_option=out_option, jobs=args.jobs, scheduler_address=args.scheduler_address,
                     batsim=args.batsim, retry_failed=args.retry_failed, dry_run=args.dry_run,
                     log=lambda line: None if args.quiet else err.print(line, markup=False, highlight=False),
                     execute=lambda todo, jobs, address, batsim: _execute_with_progress(
                         camp, todo, jobs, address, batsim, args.retry_failed, args.quiet, err))
    if args.dry_run:
        kind = {r.run_id: "done" for r in outcome.done} | {r.run_id: "failed" for r, _ in outcome.failed}
        for run in selected:
            print(f"{kind.get(run.run_id, 'pending'):8s} {run.run_id}")
        print(f"{len(selected)} runs ({len(camp.runs)} in the campaign), output folder {camp.out}")
        return 0
    failed = outcome.failed
    print(f"campaign {camp.name}: {len(outcome.done)}/{len(selected)} done, {len(failed)} failed, "
          f"{outcome.pending} pending; ran {outcome.ran} in {outcome.wall_s:.1f} s; output {camp.out}")
    for run, status in failed[:10]:
        print(f"  failed {run.run_id}: {_first_line(status.get('error'))}")
    if len(failed) > 10:
        print(f"  ... {len(failed) - 10} more: coburst campaign status {camp.out}")
    return 1 if failed else 0


def _first_line(error) -> str:
    text = str(error or "").strip().splitlines()
    return text[-1] if text else "(no error recorded)"


def _execute_with_progress(camp, todo, jobs, scheduler_address, batsim, retry_failed, quiet, err):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, \
        TimeRemainingColumn

    from coburst.campaign import executors

    show = not quiet and err.is_terminal
    columns = (TextColumn("[bold]campaign"), BarColumn(), MofNCompleteColumn(), TextColumn("done"),
               TextColumn("{task.fields[running]} running"), TextColumn("{task.fields[failed]} failed"),
               TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*columns, console=err, disable=not show, transient=False) as bar:
        task = bar.add_task("runs", total=len(todo), running=0, failed=0)

        def update(prog, result):
            bar.update(task, completed=prog.done + prog.failed, running=prog.running, failed=prog.failed)
            if result is not None and not quiet and result["state"] in ("done", "failed"):
                mark = "done  " if result["state"] == "done" else "FAILED"
                line = f"{mark} {result['run_id']}  {result['wall_s']:.1f} s"
                if result["state"] == "failed":
                    line += f"  {_first_line(result['error'])}"
                (bar.console.print if show else (lambda s, **k: print(s, flush=True)))(line, markup=False,
                                                                                         highlight=False)

        return executors.execute(camp, todo, jobs=jobs, scheduler_address=scheduler_address, batsim=batsim,
                                 retry_failed=retry_failed, on_update=update)


# ---------------------------------------------------------------------------- status / report
def _campaign_of(target: str):
    path = Path(target)
    if not path.exists():
        raise InputError(path, None, "no such campaign file or output folder")
    return _load(target)


def status_command(args: argparse.Namespace) -> int:
    from coburst.campaign import executors

    camp = _campaign_of(args.target)
    state = executors.run_state(camp)
    pid = executors.holder(camp.out) if camp.out.is_dir() else None
    print(f"campaign {camp.name}: {len(camp.runs)} runs in {camp.out}")
    print(f"  done     {len(state.done)}")
    print(f"  failed   {len(state.failed)}")
    print(f"  pending  {len(state.pending)}" + (f" (a campaign is running here: pid {pid}; {len(state.stale)} runs "
                                                "in progress)" if pid else ""))
    if state.unknown:
        print(f"  {len(state.unknown)} run folders belong to no run of the spec: {', '.join(state.unknown[:3])}...")
    for run, status in state.failed:
        error = str(status.get("error") or "").strip()
        print(f"\nFAILED {run.run_id} ({status.get('wall_s', 0):.1f} s)\n  " + "\n  ".join(error.splitlines()[-8:]))
    return 0


def report_command(args: argparse.Namespace) -> int:
    from coburst.campaign import executors

    camp = _campaign_of(args.target)
    state = executors.run_state(camp)
    if not state.done:
        raise InputError(camp.out, None, "no finished run to report yet")
    try:
        from coburst.analysis.report import report_outputs
    except ImportError as exc:
        raise InputError("coburst campaign report", None, f"the analysis module is not available ({exc})") from None
    out_html = Path(args.output) if args.output else camp.out / "report.html"
    paths = [str(executors.runner.runs_dir(camp.out) / r.run_id) for r in state.done]
    report_outputs(paths, out_html, tau=args.tau, baseline=args.baseline)
    print(f"report of {len(paths)} runs ({len(state.failed)} failed, {len(state.pending)} pending): {out_html}")
    return 0


# ---------------------------------------------------------------------------- dispatch
def campaign_command(args: argparse.Namespace) -> int:
    rest = list(args.rest)
    if args.target is None:
        args.campaign_parser.error("a campaign file (FILE.toml), or status / report, is required")
    if args.target in SUBCOMMANDS:
        from coburst.cli.main import _Parser

        p = _Parser(prog=f"coburst campaign {args.target}", description=(
            "counts of done, failed and pending runs, and the failures' errors" if args.target == "status"
            else "an HTML report of the finished runs (coburst.analysis)"))
        p.add_argument("target", metavar="DIR_OR_FILE", help="campaign output folder or campaign file")
        if args.target == "report":
            p.add_argument("-o", "--output", default=None, metavar="REPORT.html",
                           help="the report [default: <out>/report.html]")
            p.add_argument("--baseline", default=None, metavar="SCHEDULER",
                           help="scheduler the means are normalised to")
            p.add_argument("--tau", type=float, default=600.0, metavar="SECONDS",
                           help="bounded-slowdown threshold [default: 600]")
        sub_args = p.parse_args(rest)
        return (status_command if args.target == "status" else report_command)(sub_args)
    from coburst.cli.main import _Parser

    tail = _Parser(prog="coburst campaign", add_help=False)
    _add_run_options(tail, suppress=True)
    tail.parse_args(rest, namespace=args)
    return run_campaign(args)


def register(sub) -> None:
    parser = sub.add_parser("campaign", allow_abbrev=False, help="run a grid of simulations from a TOML file "
                            "(resumable, local cores or Dask); campaign status|report",
                            description=__doc__.split("\n\n")[0], usage=__doc__.split("\n\n")[1].strip(),
                            formatter_class=argparse.RawDescriptionHelpFormatter,
                            epilog="FILE.toml format: docs/reference/campaign-file.md (the keys and their defaults); "
                                   "a first campaign: docs/tutorials/campaign.md.")
    _add_run_options(parser, suppress=False)
    parser.add_argument("target", metavar="FILE.toml", nargs="?",
                        help="campaign file (or 'status' / 'report', see usage)")
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    parser.set_defaults(func=campaign_command, campaign_parser=parser)
