"""``coburst plot``: figures (PNG, SVG) of analysed runs.

Inputs: folders written by ``coburst analyze`` (``runs.parquet``/``jobs.parquet``) or Batsim
outputs (analysed on the fly, as ``coburst analyze`` would).  Kinds: gantt, boxen, tail,
ci, normalised, timeseries, pareto, corr (``all`` for every kind); see
:mod:`coburst.analysis.plots`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from coburst.errors import InputError
from coburst.validate import check_output, opt_float


def choices(text: str, allowed, option: str) -> list[str]:
    """A comma-separated option value: each item one of ``allowed``, duplicates dropped."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise InputError(option, text, "empty list")
    bad = [t for t in items if t not in allowed]
    if bad:
        raise InputError(option, bad[0], f"unknown value; one of {', '.join(allowed)}")
    return list(dict.fromkeys(items))


def plot_command(args: argparse.Namespace) -> int:
    from coburst.analysis import plots
    from coburst.analysis.report import resolve_baseline
    from coburst.analysis.tables import load

    kinds = list(plots.KINDS) if args.kind == "all" else choices(args.kind, plots.KINDS, "--kind")
    formats = choices(args.format, plots.FORMATS, "--format")
    pareto = {}
    if args.pareto:
        xy = [t.strip() for t in args.pareto.split(",")]
        if len(xy) != 2:
            raise InputError("--pareto", args.pareto, "expected two metrics X,Y")
        pareto = {"pareto_x": xy[0], "pareto_y": xy[1]}
    out = Path(args.output)
    check_output(out / f"{kinds[0]}.{formats[0]}", "-o/--output")
    runs, jobs = load(args.inputs, args.tau, workload=args.workload, platform=args.platform)
    baseline = resolve_baseline(runs, args.baseline)
    written = []
    for kind in kinds:
        figs = plots.make(kind, runs, jobs, baseline=baseline, **(pareto if kind == "pareto" else {}))
        written += plots.save(figs, out, formats)
    for p in written:
        print(p)
    if not written:
        print("no figure (too few runs for this kind)")
    return 0


def register(sub) -> None:
    parser = sub.add_parser("plot", allow_abbrev=False, help="figures (PNG/SVG) of analysed runs",
                            description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="+", metavar="TABLES_OR_OUT",
                        help="coburst analyze folder, output prefix, folder of *_jobs.csv or campaign folder")
    parser.add_argument("--kind", required=True, help="figure kind(s), comma-separated, or 'all'")
    parser.add_argument("-o", "--output", default="figures", metavar="DIR", help="output folder [default: figures]")
    parser.add_argument("--format", default="png,svg", help="png, svg or png,svg [default: png,svg]")
    parser.add_argument("--baseline", default=None, help="baseline policy (label or scheduler name) [default: first]")
    parser.add_argument("--pareto", default=None, metavar="X,Y",
                        help="metrics of the Pareto plot, X minimised, Y maximised "
                        "[default: mean_bounded_slowdown,utilisation]")
    parser.add_argument("--tau", type=opt_float(0, exclusive_minimum=True), default=600.0,
                        help="bounded slowdown bound for raw outputs, seconds [default: 600]")
    parser.add_argument("--workload", default=None, help="workload of every raw output (BB requests)")
    parser.add_argument("--platform", default=None, help="platform of every raw output (capacities)")
    parser.set_defaults(func=plot_command)
