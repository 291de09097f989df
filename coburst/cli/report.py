"""``coburst report``: one self-contained HTML report (figures embedded, sortable tables).

Inputs: Batsim outputs (prefixes, folders of ``*_jobs.csv``, campaign folders) or folders
written by ``coburst analyze``.  The page needs no server and no network: open it from disk.
"""

from __future__ import annotations

import argparse

from coburst.cli.plot import choices
from coburst.validate import check_output, opt_float


def report_command(args: argparse.Namespace) -> int:
    from coburst.analysis import plots
    from coburst.analysis.report import report_outputs

    kinds = choices(args.kinds, plots.KINDS, "--kinds") if args.kinds else list(plots.KINDS)
    out = check_output(args.output, "-o/--output")
    manifest = report_outputs(args.inputs, out, tau=args.tau, workload=args.workload, platform=args.platform,
                              baseline=args.baseline, title=args.title, kinds=kinds)
    print(f"{out}: {manifest['runs']} runs, {len(manifest['figures'])} figures, baseline {manifest['baseline']}")
    return 0


def register(sub) -> None:
    parser = sub.add_parser("report", allow_abbrev=False, help="self-contained HTML report of runs",
                            description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="+", metavar="OUT",
                        help="output prefix, folder of *_jobs.csv, campaign folder or coburst analyze folder")
    parser.add_argument("-o", "--output", required=True, metavar="REPORT.html", help="the HTML file to write")
    parser.add_argument("--baseline", default=None, metavar="SCHED",
                        help="baseline policy (label or scheduler name) [default: the first]")
    parser.add_argument("--title", default="coburst report", help="title of the page")
    parser.add_argument("--kinds", default=None, help="figure kinds, comma-separated [default: all]")
    parser.add_argument("--tau", type=opt_float(0, exclusive_minimum=True), default=600.0,
                        help="bounded slowdown bound, seconds [default: 600]")
    parser.add_argument("--workload", default=None, help="workload of every run (BB requests)")
    parser.add_argument("--platform", default=None, help="platform of every run (capacities)")
    parser.set_defaults(func=report_command)
