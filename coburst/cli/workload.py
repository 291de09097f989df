"""``coburst workload``: convert SWF logs to Batsim workloads and check workload files.

``coburst workload swf LOG.swf -o OUT.json`` applies the Alloc-Only or IO-Aware job model
(Kopański 2020, §2.3–2.5); ``--split K`` writes K time periods instead of the full log.
``coburst workload hetero`` writes workloads whose run time depends on the node (Sánchez
Sousa 2023, §5.1.1 synthetic sets, §5.1.2 realistic environment from an SWF log) and
``coburst workload from-irmasim`` converts an IRMaSim ``workload.json``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from coburst.validate import COUNT_MAX, SEED, check_output, opt_float, opt_int, read_bytes

DEFAULT_PLATFORM = Path(__file__).resolve().parents[2] / "platforms" / "dragonfly96.xml"


def part_path(output: str, k: int, parts: int) -> Path:
    """File of part ``k`` (1-based) of ``parts``: ``OUT.json`` -> ``OUT.part01.json``."""
    out = Path(output)
    width = max(2, len(str(parts)))
    return out.with_name(f"{out.stem}.part{k:0{width}d}{out.suffix or '.json'}")


def _swf(args: argparse.Namespace) -> int:
    from coburst.errors import InputError
    from coburst.models.bb_request import BBRequestModel
    from coburst.platforms.info import read_platform
    from coburst.workloads.batsim_json import write_repeated
    from coburst.workloads.jobmodels import ModelParams, PlatformParams, swf_to_workloads

    if args.max_jobs is not None and args.max_jobs < 1:
        raise InputError("--max-jobs", None, f"must be >= 1, got {args.max_jobs}")
    if args.split is not None and args.split < 1:
        raise InputError("--split", None, f"must be >= 1, got {args.split}")
    if args.split and args.repeat > 1:
        raise InputError("--repeat", str(args.repeat), "cannot be combined with --split")
    if args.split and args.model == "delay":
        raise InputError("--split", None, "splits the Alloc-Only and IO-Aware models only, not --model delay")
    if args.split:
        paths = [part_path(args.output, k, args.split) for k in range(1, args.split + 1)]
    else:
        paths = [Path(args.output)]
    for path in paths:  # before any work
        check_output(path, "-o/--output")
    read_bytes(args.swf, "SWF file")
    read_bytes(args.platform, "platform file")
    platform = read_platform(args.platform)
    if args.model == "delay":
        from coburst.workloads.delay import swf_to_delay_workload

        docs, report = swf_to_delay_workload(args.swf, PlatformParams.from_platform(platform).nb_res,
                                             args.max_jobs, with_report=True)
        docs = [docs]
    else:
        params = ModelParams(model=args.model, seed=args.seed, kappa=args.kappa, bb_source=args.bb_source)
        bb_model = BBRequestModel.load(args.bb_model)
        docs, report = swf_to_workloads(args.swf, platform, params, max_jobs=args.max_jobs, split=args.split,
                                        bb_model=bb_model, platform_name=Path(args.platform).name)
    if args.repeat > 1:
        doc = docs[0]
        if "coburst" in doc:
            doc["coburst"]["repeat"] = args.repeat
        doc["description"] = f"{doc.get('description', args.swf)}, repeated {args.repeat} times end to end"
    counts = [write_repeated(doc, path, args.repeat) for doc, path in zip(docs, paths)]
    if not args.quiet:
        dropped = ", ".join(f"{n} {why}" for why, n in report.dropped.items()) or "none"
        print(f"{args.swf}: {report.records} records, {report.kept} jobs kept; dropped: {dropped}", file=sys.stderr)
        if report.walltime_from_runtime:
            print(f"  {report.walltime_from_runtime} jobs without requested time use their run time as walltime",
                  file=sys.stderr)
        if report.procs_from_allocated:
            print(f"  {report.procs_from_allocated} jobs without requested processors use the allocated ones",
                  file=sys.stderr)
        if report.truncated:
            print(f"  --max-jobs: {report.truncated} later jobs left out", file=sys.stderr)
        for count, path in zip(counts, paths):
            repeated = f", the log {args.repeat} times" if args.repeat > 1 else ""
            print(f"wrote {path} ({count} jobs, {args.model}{repeated})", file=sys.stderr)
    return 0


def _check(args: argparse.Namespace) -> int:
    import numpy as np
    from rich.console import Console
    from rich.table import Table

    from coburst.workloads.batsim_json import read_workload, validate

    console = Console()
    for path in args.workloads:
        doc = read_workload(path)
        summary = validate(doc, path)
        table = Table(title=str(path))
        table.add_column("what")
        table.add_column("value")
        table.add_row("jobs", str(summary["jobs"]))
        table.add_row("nb_res", str(summary["nb_res"]))
        table.add_row("IO-Aware jobs", str(summary["io_jobs"]))
        jobs = doc["jobs"]
        if jobs:
            bb = np.array([j.get("bb", 0) for j in jobs], dtype=float)
            res = np.array([j["res"] for j in jobs], dtype=float)
            sub = np.array([j["subtime"] for j in jobs], dtype=float)
            table.add_row("submit span (days)", f"{(sub.max() - sub.min()) / 86400:.2f}")
            table.add_row("res mean / max", f"{res.mean():.2f} / {res.max():.0f}")
            table.add_row("bb per node mean / median (GB)", f"{bb.mean() / 1e9:.3f} / {np.median(bb) / 1e9:.3f}")
            table.add_row("bb per node min / max (GB)", f"{bb.min() / 1e9:.3f} / {bb.max() / 1e9:.3f}")
        console.print(table)
    return 0


def _cosched_shape(platform: str | None) -> tuple[int, int, int | None, int]:
    """(cores per node, units per node, nodes, cores per unit) of a ``coburst platform cosched``
    file (default: ARIS, 20 cores in 4 half-socket units, any node count)."""
    import xml.etree.ElementTree as ET

    from coburst.errors import InputError

    if not platform:
        return 20, 4, None, 5
    read_bytes(platform, "platform file")
    try:
        root = ET.parse(platform).getroot()
    except (OSError, ET.ParseError) as exc:
        raise InputError(platform, None, f"cannot read the platform: {exc}") from None
    zone = root.find("zone")
    props = {p.get("id"): p.get("value") for p in (zone.findall("prop") if zone is not None else [])}
    try:
        sockets, per_socket = int(props["sockets"]), int(props["cores_per_socket"])
        units = sockets * int(props["units_per_socket"])
        return sockets * per_socket, units, int(props["nodes"]), sockets * per_socket // units
    except (KeyError, ValueError, ZeroDivisionError):
        raise InputError(platform, "root zone properties",
                         "not a co-scheduling platform (made by coburst platform cosched)") from None


def _elise(args: argparse.Namespace) -> int:
    from coburst.errors import InputError
    from coburst.fileio import atomic_write
    from coburst.models.heatmap import bundled_names, bundled_seed, load_seed
    from coburst.workloads.batsim_json import write_workload
    from coburst.workloads.elise import from_job_list, generate

    check_output(args.output, "-o/--output")
    if args.from_list and args.run:
        raise InputError("--from", args.from_list, "give --from (an ELiSE job list) or --run (a run), not both")
    cores, units, max_nodes, per_unit = _cosched_shape(args.platform)
    if args.run:  # a run's _jobs.csv -> ELiSE's results file
        from coburst.analysis.elise import run_text
        if not args.workload or not args.platform:
            raise InputError("--run", args.run, "needs -w/--workload and -p/--platform (the run's workload and "
                             "co-scheduling platform)")
        read_bytes(args.run, "jobs file")
        text = run_text(args.run, args.workload, units_per_node=units, cores_per_unit=per_unit)
        with atomic_write(args.output) as fh:
            fh.write(text)
        if not args.quiet:
            print(f"{args.output}: {text.count(chr(10)) - 1} jobs in ELiSE's results format", file=sys.stderr)
        return 0
    if Path(args.seed_apps).is_dir():
        raise InputError("--seed-apps", args.seed_apps, "is a directory, expected a seed file or a bundled name")
    if Path(args.seed_apps).is_file():
        apps = load_seed(args.seed_apps)
    elif args.seed_apps in bundled_names() or Path(f"{args.seed_apps}").suffix == "":
        try:
            apps = bundled_seed(args.seed_apps)
        except (KeyError, FileNotFoundError, InputError):
            raise InputError("--seed-apps", args.seed_apps, "neither a seed file nor a bundled seed") from None
    else:
        raise InputError("--seed-apps", args.seed_apps, "no such seed file")
    if args.from_list:
        from coburst.analysis.elise import read_job_list
        doc = from_job_list(read_job_list(args.from_list), apps, cores_per_node=cores, units_per_node=units,
                            max_nodes=max_nodes, source=args.from_list,
                            description=f"ELiSE job list {Path(args.from_list).name}, seed {args.seed_apps}")
    else:
        pick = args.pick if args.pick in ("random", "frequency") else [x for x in args.pick.split(",") if x]
        doc = generate(apps, args.jobs, cores_per_node=cores, units_per_node=units, pick=pick, arrival=args.arrival,
                       interarrival=args.interarrival, weibull_shape=args.weibull_shape,
                       walltime_factor=args.walltime_factor, seed=args.seed, max_nodes=max_nodes,
                       description=f"ELiSE-style workload: {args.jobs} jobs from {args.seed_apps}, seed {args.seed}")
    if args.elise_list:
        from coburst.analysis.elise import job_list_text
        with atomic_write(args.output) as fh:
            fh.write(job_list_text(doc))
    else:
        write_workload(doc, args.output)
    if not args.quiet:
        print(f"{args.output}: {len(doc['jobs'])} jobs, {len(doc['profiles'])} applications", file=sys.stderr)
    return 0


def _hetero(args: argparse.Namespace) -> int:
    from coburst.errors import InputError
    from coburst.platforms.units import parse_speed
    from coburst.workloads.batsim_json import write_workload
    from coburst.workloads.hetero import realistic, synthetic

    check_output(args.output, "-o/--output")
    ref = parse_speed(args.ref_speed, "--ref-speed")
    if args.swf is None:
        for opt, value in (("--start", args.start), ("--length", args.length), ("--batch", args.batch),
                           ("--rounding", args.rounding), ("--max-res", args.max_res)):
            if value is not None:
                raise InputError(opt, None, "applies to the realistic environment only (--swf LOG)")
        doc = synthetic(args.seed, jobs=args.jobs, req_min=args.req_min, req_max=args.req_max, ref_speed=ref)
        write_workload(doc, args.output)
        if not args.quiet:
            print(f"wrote {args.output}: {len(doc['jobs'])} single-task jobs at t=0, requested time "
                  f"{args.req_min}-{args.req_max} s (seed {args.seed})", file=sys.stderr)
        return 0
    for opt, value, default in (("--jobs", args.jobs, 512), ("--req-min", args.req_min, 100),
                                ("--req-max", args.req_max, 3000)):
        if value != default:
            raise InputError(opt, None, "applies to the synthetic sets only (without --swf)")
    start: int | str = 0
    if args.start is not None:
        if args.start == "random":
            start = "random"
        else:
            try:
                start = int(args.start)
            except ValueError:
                raise InputError("--start", None, f"expected a job index or 'random', got {args.start!r}") from None
    max_res = 32 if args.max_res is None else (None if args.max_res == 0 else args.max_res)
    doc, report = realistic(args.swf, start=start, length=500 if args.length is None else args.length,
                            seed=args.seed, batch=1e5 if args.batch is None else args.batch,
                            rounding=args.rounding or "nearest", max_res=max_res, ref_speed=ref)
    write_workload(doc, args.output)
    if not args.quiet:
        dropped = ", ".join(f"{n} {why}" for why, n in report.dropped.items()) or "none"
        print(f"{args.swf}: {report.records} records; dropped: {dropped}", file=sys.stderr)
        print(f"  slice of {report.kept} jobs from job {report.start}, {report.batches} submission batches; "
              f"{report.capped} jobs cut to {max_res} tasks; {report.req_from_runtime} without requested time "
              f"use their run time", file=sys.stderr)
        print(f"wrote {args.output}", file=sys.stderr)
    return 0


def _from_irmasim(args: argparse.Namespace) -> int:
    from coburst.workloads.batsim_json import write_workload
    from coburst.workloads.irmasim import convert

    check_output(args.output, "-o/--output")
    doc = convert(args.workload)
    write_workload(doc, args.output)
    if not args.quiet:
        print(f"wrote {args.output}: {len(doc['jobs'])} jobs, {len(doc['profiles'])} profiles", file=sys.stderr)
    return 0


def _malleable(args: argparse.Namespace) -> int:
    from coburst.models.perf import Expression, ExpressionError
    from coburst.workloads.batsim_json import read_workload, write_workload
    from coburst.workloads.malleable import MalleableRecipe, make_malleable

    check_output(args.output, "-o/--output")
    from coburst.errors import InputError
    from coburst.models.elastic import COST_VARS

    try:
        unknown = sorted(Expression(args.on_reconfiguration).names - set(COST_VARS))
    except ExpressionError as exc:
        raise InputError("--on-reconfiguration", None, str(exc)) from None
    if unknown:
        raise InputError("--on-reconfiguration", None, f"unknown variable(s) {', '.join(unknown)} (known: "
                                                       f"{', '.join(COST_VARS)})")
    recipe = MalleableRecipe(share=args.share, efficiency=args.efficiency, min_fraction=args.min_fraction,
                             min_efficiency=args.min_efficiency, iterations=args.iterations,
                             on_reconfiguration=args.on_reconfiguration, seed=args.seed)
    doc = make_malleable(read_workload(args.workload), recipe, args.workload)
    write_workload(doc, args.output)
    if not args.quiet:
        made = sum(1 for job in doc["jobs"] if "elastic" in job)
        print(f"wrote {args.output}: {made} of {len(doc['jobs'])} jobs malleable", file=sys.stderr)
    return 0


def _from_elastisim(args: argparse.Namespace) -> int:
    from coburst.platforms.units import parse_speed
    from coburst.workloads.batsim_json import write_workload
    from coburst.workloads.elastisim import convert

    check_output(args.output, "-o/--output")
    notes: list[str] = []
    doc = convert(args.jobs, nodes=args.nodes, speed=parse_speed(args.speed, "--speed"), notes=notes)
    write_workload(doc, args.output)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if not args.quiet:
        print(f"wrote {args.output}: {len(doc['jobs'])} jobs, {len(doc['profiles'])} profiles", file=sys.stderr)
    return 0


def _downey(args: argparse.Namespace) -> int:
    from coburst.workloads.batsim_json import write_workload
    from coburst.workloads.downey import DowneyWorkload, generate

    check_output(args.output, "-o/--output")
    doc = generate(DowneyWorkload(jobs=args.jobs, nodes=args.nodes, gap=args.gap, t1_min=args.t1_min,
                                  t1_max=args.t1_max, a_max=args.a_max, sigma_max=args.sigma_max,
                                  malleable=args.malleable, iterations=args.iterations, walltime=args.walltime,
                                  seed=args.seed))
    write_workload(doc, args.output)
    if not args.quiet:
        print(f"wrote {args.output}: {len(doc['jobs'])} jobs on {args.nodes} nodes", file=sys.stderr)
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("workload", help="convert SWF logs and check Batsim workloads",
                                   description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="workload_command", metavar="ACTION")
    sub.required = True

    swf = sub.add_parser("swf", help="convert an SWF log to a Batsim workload (Alloc-Only or IO-Aware)",
                         description="Convert an SWF 2.2 log to a Batsim 4.2 workload with burst-buffer requests "
                                     "(selection policy and job models: coburst/workloads/jobmodels.py).")
    swf.add_argument("swf", help="SWF log, e.g. ../shared/data/swf/KTH-SP2-1996-2.1-cln.swf")
    swf.add_argument("-o", "--output", required=True,
                     help="output workload JSON; with --split K, parts go to OUT.part01.json ... OUT.partK.json")
    swf.add_argument("--model", choices=("alloc-only", "io-aware", "delay"), default="alloc-only",
                     help="job model (default alloc-only); delay: each job a delay of its SWF run time on its "
                          "requested processors, the classic log replay")
    swf.add_argument("-p", "--platform", default=str(DEFAULT_PLATFORM),
                     help="platform XML giving nodes, speed, bandwidth and burst buffers "
                          "(default platforms/dragonfly96.xml)")
    swf.add_argument("--seed", type=SEED, default=0, help="random seed (default 0); same seed, same bytes")
    swf.add_argument("--split", type=opt_int(1, 10_000), metavar="K", help="cut the log into K equal time periods (thesis: 16)")
    swf.add_argument("--max-jobs", type=opt_int(1, COUNT_MAX), metavar="N", help="keep only the first N jobs after filtering")
    swf.add_argument("--repeat", type=opt_int(1, 100_000), default=1, metavar="K",
                     help="the log K times end to end: copy k's ids and submission times shifted by k x (submission "
                          "span + mean gap); written job by job, any length in constant memory (default 1)")
    swf.add_argument("--kappa", type=opt_float(0, 1e6), default=40.0, help="IO-Aware compute shortening factor (default 40)")
    swf.add_argument("--bb-source", choices=("model", "memory"), default="model",
                     help="model: draw every request from the lognormal (default); memory: use the SWF requested "
                          "memory (field 10) when known")
    swf.add_argument("--bb-model", help="burst-buffer model parameters (default models/bb_request.json)")
    swf.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    swf.set_defaults(func=_swf)

    elise = sub.add_parser("elise", help="co-scheduling workload drawn from an application seed (ELiSE-style)",
                           description="N jobs drawn from an application seed (coburst/workloads/elise.py), sized "
                                       "for a node-sharing platform (coburst platform cosched).")
    elise.add_argument("-o", "--output", required=True, help="output workload JSON")
    elise.add_argument("--seed-apps", default="aris-nas",
                       help="application seed: a bundled name (aris-nas, aris-spec, grvingt-nas) or a seed CSV "
                            "(default aris-nas)")
    elise.add_argument("-n", "--jobs", type=opt_int(1, 10_000_000), default=1000, help="number of jobs (default 1000)")
    elise.add_argument("-p", "--platform", default=None,
                       help="co-scheduling platform XML giving cores and units per node (default: ARIS, 20 cores "
                            "in 4 half-socket units)")
    elise.add_argument("--pick", default="random",
                       help="random (uniform), frequency (seed weights) or a comma-separated list of applications")
    elise.add_argument("--arrival", default="zero", help="zero, constant, uniform, poisson or weibull (default zero)")
    elise.add_argument("--interarrival", type=opt_float(0, 1e9), default=10.0, help="mean gap between arrivals in s (default 10)")
    elise.add_argument("--weibull-shape", type=opt_float(0.05, 1e3), default=1.5, help="Weibull shape (default 1.5)")
    elise.add_argument("--walltime-factor", type=opt_float(0, 1e6, exclusive_minimum=True), default=1.4, help="walltime / compact time (default 1.4)")
    elise.add_argument("--seed", type=SEED, default=0, help="random seed (default 0); same seed, same bytes")
    elise.add_argument("--from", dest="from_list", default=None, metavar="FILE",
                       help="read ELiSE's job list (the CSV of its List Generator and of its results: "
                            "application, submit time and walltime of each job) instead of drawing jobs")
    elise.add_argument("--elise-list", action="store_true",
                       help="write the jobs as an ELiSE job list (CSV) instead of a Batsim workload")
    elise.add_argument("--run", default=None, metavar="JOBS_CSV",
                       help="write a run (its _jobs.csv, with -w its workload) as ELiSE writes its results")
    elise.add_argument("-w", "--workload", default=None, help="the run's workload (with --run)")
    elise.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    elise.set_defaults(func=_elise)

    he = sub.add_parser("hetero", help="jobs whose run time depends on the node (Sanchez Sousa 2023, 5.1.1/5.1.2)",
                        description="Workloads of parallel_homogeneous work (flops per task, com 0), so a job's run "
                                    "time is its operations / the core's speed (coburst/workloads/hetero.py). "
                                    "Without --swf: 5.1.1's synthetic set (512 single-task jobs at t=0, requested "
                                    "time 100-3000 s, operations = requested time x --ref-speed). With --swf LOG: "
                                    "5.1.2's realistic environment (submit times rounded to --batch seconds, a "
                                    "--length-job slice).")
    he.add_argument("-o", "--output", required=True, help="output workload JSON")
    he.add_argument("--seed", type=SEED, default=0,
                    help="synthetic: the set's seed (the thesis' five: 0-4); realistic: the seed of --start random "
                         "(default 0)")
    he.add_argument("--ref-speed", default="1Gf",
                    help="speed at which the requested time (synthetic) or the SWF run time (realistic) is spent: "
                         "operations = time x this (default 1Gf, the slowest clock of Tables 2-3)")
    he.add_argument("--jobs", type=opt_int(1, 10_000_000), default=512, help="synthetic: number of jobs (default 512)")
    he.add_argument("--req-min", type=opt_int(1, 2**32), default=100,
                    help="synthetic: shortest requested time in s (default 100)")
    he.add_argument("--req-max", type=opt_int(1, 2**32), default=3000,
                    help="synthetic: longest requested time in s (default 3000)")
    he.add_argument("--swf", help="realistic environment from this SWF log (e.g. ../shared/data/swf/KTH-SP2-1996-2.1-cln.swf)")
    he.add_argument("--start", help="realistic: index of the slice's first job after filtering, or 'random' "
                                    "(drawn with --seed; default 0)")
    he.add_argument("--length", type=opt_int(1, COUNT_MAX), help="realistic: jobs in the slice (default 500)")
    he.add_argument("--batch", type=opt_float(0, 2**32),
                    help="realistic: submit times rounded to multiples of this many seconds (default 1e5; 0: none)")
    he.add_argument("--rounding", choices=("nearest", "down", "up"), help="realistic: how (default nearest)")
    he.add_argument("--max-res", type=opt_int(0, COUNT_MAX),
                    help="realistic: wider jobs are cut to this many tasks (default 32, the widest node of Tables "
                         "4-5; 0: no cut)")
    he.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    he.set_defaults(func=_hetero)

    ir = sub.add_parser("from-irmasim", help="convert an IRMaSim workload.json (req_ops, ipc, res, req_time, ...)",
                        description="Convert an IRMaSim workload (JSON) to a Batsim workload of parallel_homogeneous "
                                    "work: cpu = ceil(req_ops / ipc) per task, IRMaSim's fields kept "
                                    "(coburst/workloads/irmasim.py).")
    ir.add_argument("workload", help="IRMaSim workload.json")
    ir.add_argument("-o", "--output", required=True, help="output workload JSON")
    ir.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    ir.set_defaults(func=_from_irmasim)

    ma = sub.add_parser("malleable", help="make a share of a workload's delay jobs malleable (Amdahl fitted to "
                                          "the logged size)",
                        description="Give a share of the delay jobs of a Batsim workload an elastic model: Amdahl's "
                                    "law with the efficiency --efficiency at the logged size, bounds from "
                                    "--min-fraction x size to the largest size at --min-efficiency "
                                    "(coburst/workloads/malleable.py). Batsim still runs the workload rigid.")
    ma.add_argument("workload", help="Batsim workload of delay jobs (coburst workload swf --model delay)")
    ma.add_argument("-o", "--output", required=True, help="output workload JSON")
    ma.add_argument("--share", type=opt_float(0, 1), default=0.5, help="share of the jobs made malleable (default 0.5)")
    ma.add_argument("--efficiency", type=opt_float(0, 1, exclusive_minimum=True), default=0.8,
                    help="parallel efficiency at the logged size (default 0.8)")
    ma.add_argument("--min-fraction", type=opt_float(0, 1, exclusive_minimum=True), default=0.2,
                    help="smallest size as a share of the logged one (default 0.2)")
    ma.add_argument("--min-efficiency", type=opt_float(0, 1, exclusive_minimum=True), default=0.5,
                    help="largest size: the last whose efficiency stays at or above this (default 0.5)")
    ma.add_argument("--iterations", type=opt_int(1, 10**6), default=10,
                    help="iterations of each job, a scheduling point after each (default 10)")
    ma.add_argument("--on-reconfiguration", default="0",
                    help="cost of a resize in seconds, an expression of num_nodes and old_num_nodes (default 0)")
    ma.add_argument("--seed", type=SEED, default=0, help="random seed (default 0); same seed, same bytes")
    ma.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    ma.set_defaults(func=_malleable)

    fe = sub.add_parser("from-elastisim", help="convert ElastiSim's jobs.json and application models",
                        description="Convert an ElastiSim jobs file (and the application models it names, read "
                                    "beside it) to a Batsim workload of elastic jobs (coburst/workloads/elastisim.py); "
                                    "run it with an elastic policy (coburst run equipartition ...).")
    fe.add_argument("jobs", help="ElastiSim's jobs.json")
    fe.add_argument("-o", "--output", required=True, help="output workload JSON")
    fe.add_argument("--nodes", type=opt_int(1, COUNT_MAX), help="nb_res (default: the largest size a job asks for)")
    fe.add_argument("--speed", default="1Gf", help="node speed for the rigid view's delays (default 1Gf)")
    fe.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    fe.set_defaults(func=_from_elastisim)

    dw = sub.add_parser("downey", help="moldable and malleable jobs under Downey's speedup model (seeded)",
                        description="Draw elastic jobs: Poisson arrivals, log-uniform sequential times and average "
                                    "parallelism, uniform variance of parallelism (coburst/workloads/downey.py).")
    dw.add_argument("-o", "--output", required=True, help="output workload JSON")
    dw.add_argument("-n", "--jobs", type=opt_int(1, 10_000_000), default=100, help="number of jobs (default 100)")
    dw.add_argument("--nodes", type=opt_int(1, 10_000_000), default=16, help="nb_res (default 16)")
    dw.add_argument("--gap", type=opt_float(0, 1e12), default=60.0, help="mean gap between arrivals in s (default 60)")
    dw.add_argument("--t1-min", type=opt_float(0, 1e12, exclusive_minimum=True), default=60.0,
                    help="shortest time on one node in s (default 60)")
    dw.add_argument("--t1-max", type=opt_float(0, 1e12, exclusive_minimum=True), default=36000.0,
                    help="longest time on one node in s (default 36000)")
    dw.add_argument("--a-max", type=opt_float(1, 1e7), help="largest average parallelism (default: --nodes)")
    dw.add_argument("--sigma-max", type=opt_float(0, 1e6), default=2.0, help="largest variance of parallelism (default 2)")
    dw.add_argument("--malleable", type=opt_float(0, 1), default=0.5, help="share of malleable jobs (default 0.5)")
    dw.add_argument("--iterations", type=opt_int(1, 10**6), default=10, help="iterations of each job (default 10)")
    dw.add_argument("--walltime", type=opt_float(1, 1e6), help="walltime as a multiple of the time on one node "
                                                                "(default: none)")
    dw.add_argument("--seed", type=SEED, default=0, help="random seed (default 0); same seed, same bytes")
    dw.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    dw.set_defaults(func=_downey)

    check = sub.add_parser("check", help="validate Batsim workload files and summarise them")
    check.add_argument("workloads", nargs="+", help="workload JSON files")
    check.set_defaults(func=_check)
