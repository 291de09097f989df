"""``coburst analyze``: every metric of a set of Batsim outputs, as tidy tables.

Reads output prefixes, folders of ``*_jobs.csv`` files or campaign folders (either engine's
outputs) and writes ``runs.csv``/``runs.parquet`` (one row per run) and
``jobs.csv``/``jobs.parquet`` (one row per job) into ``-o DIR``; prints a summary.
The columns are documented in :mod:`coburst.analysis.tables`.  With ``--heatmap H``
(co-scheduling runs), two more: ``cosched_bound``, a lower bound on the makespan of the run's
workload on its platform with heatmap H (:mod:`coburst.theory.cosched_bound`), and
``makespan_over_bound``.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from coburst.errors import InputError
from coburst.validate import check_output, opt_float


def alone_factor(text: str) -> str | float:
    """``--heatmap-alone``: ``best`` or a positive, finite speed factor."""
    if text == "best":
        return text
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected 'best' or a positive, finite speed factor, got {text!r}")
    return value


def default_output(paths: list[str]) -> Path:
    """``<campaign>/analysis`` for one campaign folder, else ``./analysis``."""
    if len(paths) == 1 and Path(paths[0]).is_dir() and (Path(paths[0]) / "runs").is_dir():
        return Path(paths[0]) / "analysis"
    return Path("analysis")


def summary_table(runs_df):
    from rich.table import Table

    table = Table(title=f"{len(runs_df)} run(s)")
    cols = [("run", "run", None), ("policy", "policy", None), ("jobs", "jobs", "{:,.0f}"),
            ("mean_waiting", "mean wait (s)", "{:,.1f}"),
            ("mean_bounded_slowdown", f"mean bsld (tau={runs_df['tau'].iloc[0]:g}s)", "{:,.2f}"),
            ("utilisation", "util.", "{:.1%}"), ("bb_utilisation", "BB util.", "{:.1%}"),
            ("makespan", "makespan (s)", "{:,.0f}")]
    if "makespan_over_bound" in runs_df:
        cols += [("cosched_bound", "bound (s)", "{:,.0f}"), ("makespan_over_bound", "makespan/bound", "{:.3f}")]
    for _, head, fmt in cols:
        table.add_column(head, justify="left" if fmt is None else "right")
    for _, row in runs_df.head(40).iterrows():
        cells = []
        for key, _, fmt in cols:
            v = row.get(key)
            if fmt is None:
                cells.append(str(v))
            else:
                cells.append("-" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt.format(v))
        table.add_row(*cells)
    return table


def _missing_folders(out: Path) -> list[Path]:
    """``out`` and those of its parents that do not exist yet, deepest first."""
    missing = []
    for folder in (out, *out.parents):
        if folder.exists():
            break
        missing.append(folder)
    return missing


def analyze_command(args: argparse.Namespace) -> int:
    from rich.console import Console

    from coburst.analysis.tables import JobsWriter, analyze_stream, write_run_tables

    out = Path(args.output) if args.output else default_output(args.outputs)
    created = _missing_folders(out)
    try:
        check_output(out / "runs.csv", "-o/--output")
        heatmap = None
        if args.heatmap is not None:
            from coburst.simulator.arguments import heatmap_file
            from coburst.models.heatmap import load_heatmap

            heatmap = load_heatmap(heatmap_file(args.heatmap))
        elif args.heatmap_alone is not None:
            raise InputError("--heatmap-alone", str(args.heatmap_alone), "only with --heatmap (the makespan bound)")
        with JobsWriter(out) as jobs_writer:  # the jobs table written as the runs are read
            runs_df = analyze_stream(args.outputs, args.tau, workload=args.workload, platform=args.platform,
                                     sink=jobs_writer.write)
            if heatmap is not None:
                from coburst.analysis.tables import add_bound_columns

                runs_df = add_bound_columns(runs_df, args.outputs, heatmap, workload=args.workload,
                                            platform=args.platform, alone=args.heatmap_alone or "best")
            written = write_run_tables(runs_df, out)
    except BaseException:
        for folder in created:  # (the folders made for the tables, left empty by the failure)
            try:
                folder.rmdir()
            except OSError:
                break
        raise
    written += jobs_writer.paths
    console = Console()
    if not args.quiet:
        console.print(summary_table(runs_df))
        if len(runs_df) > 40:
            console.print(f"... {len(runs_df) - 40} more runs in {out / 'runs.csv'}")
        notes = sorted({n for text in runs_df["notes"] for n in str(text).split("; ") if n})
        for n in notes:
            console.print(f"note: {n}")
    console.print("tables: " + ", ".join(str(p) for p in written))
    return 0


def register(sub) -> None:
    parser = sub.add_parser("analyze", allow_abbrev=False, help="metrics of Batsim outputs as tidy tables "
                            "(CSV and Parquet)", description=__doc__.split("\n\n")[0] + "\n\n" +
                            __doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("outputs", nargs="+", metavar="OUT",
                        help="output prefix (P with P_jobs.csv), folder of *_jobs.csv, or campaign folder")
    parser.add_argument("-o", "--output", default=None, metavar="DIR",
                        help="folder for runs.csv/.parquet and jobs.csv/.parquet [default: <campaign>/analysis "
                        "for one campaign, else ./analysis]")
    parser.add_argument("--tau", type=opt_float(0, exclusive_minimum=True), default=600.0,
                        help="bound of the bounded slowdown, seconds [default: 600]")
    parser.add_argument("--workload", default=None, metavar="W.json",
                        help="workload of every run (burst-buffer requests) [default: params.json's]")
    parser.add_argument("--platform", default=None, metavar="P.xml",
                        help="platform of every run (compute nodes, BB capacity) [default: params.json's]")
    parser.add_argument("--heatmap", default=None, metavar="H",
                        help="co-scheduling runs: add a lower bound on the makespan (coburst.theory.cosched_bound) "
                        "of each run's workload on its platform with heatmap H (file or bundled name: aris-nas...), "
                        "and makespan / bound")
    parser.add_argument("--heatmap-alone", default=None, type=alone_factor, metavar="best|FACTOR",
                        help="with --heatmap: the speed of a spread job without neighbour, as the run's "
                        "coburst sim --heatmap-alone [default: best]")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the files written")
    parser.set_defaults(func=analyze_command)
