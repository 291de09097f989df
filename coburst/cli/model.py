"""``coburst model``: the burst-buffer request model (Kopański 2020, §2.5).

``coburst model fit-bb LOG.swf`` fits exponential, lognormal, logistic, half-logistic and
beta distributions to the per-processor memory requests of an SWF log with 5-fold
cross-validation and prints the Kolmogorov-Smirnov table (Table 2.2) and the parameters;
``coburst model bb`` prints the model coburst uses (Tables 2.3 and 2.4).
"""

from __future__ import annotations

import argparse
import json

from coburst.validate import COUNT_MAX, SEED, opt_int

FIELDS = {"requested": ("requested_memory", 10), "used": ("used_memory", 7)}


def _fit_bb(args: argparse.Namespace) -> int:
    import numpy as np
    from rich.console import Console
    from rich.table import Table

    from coburst.errors import InputError
    from coburst.fileio import atomic_write
    from coburst.models.fit import best, cross_validate, memory_per_processor
    from coburst.validate import check_output
    from coburst.workloads.swf import read_swf

    attr, number = FIELDS[args.field]
    if args.json:
        check_output(args.json, "--json")
    log = read_swf(args.swf)
    values = memory_per_processor(log.jobs, attr)
    if values.size == 0:
        raise InputError(args.swf, f"field {number} ({args.field} memory)",
                         f"no job has a positive value (all {len(log.jobs)} jobs give -1 or 0): nothing to fit. "
                         "This log records no memory; coburst then uses the lognormal of Kopański 2020, Table 2.3 "
                         "(models/bb_request.json), fitted to METACENTRUM-2013-3 (see 'coburst model bb').")
    used = values
    if args.max_samples and values.size > args.max_samples:
        used = np.random.default_rng(args.seed).choice(values, size=args.max_samples, replace=False)
    results = cross_validate(used, folds=args.folds, seed=args.seed, source=args.swf,
                             where=f"field {number} ({args.field} memory)")
    winner = best(results)

    console = Console()
    console.print(f"{args.swf}: {values.size} of {len(log.jobs)} jobs have a positive {args.field} memory "
                  f"(field {number}, KB per processor); fitting {used.size} values, {args.folds}-fold "
                  f"cross-validation, seed {args.seed}")
    table = Table(title="Kolmogorov-Smirnov D statistic on the held-out folds (cf. Kopański 2020, Table 2.2)")
    table.add_column("Distribution")
    table.add_column("KS statistic average", justify="right")
    table.add_column("parameters (mean ± std over folds)")
    for res in results:
        params = ", ".join(f"{k}={v:.6g} ± {res.std_params[k]:.3g}" for k, v in res.mean_params.items())
        mark = " (best)" if res is winner else ""
        table.add_row(res.name + mark, f"{res.ks_mean:.4f} ± {res.ks_std:.4f}", params)
    console.print(table)
    console.print(f"best fit: {winner.name}; scipy.stats.{winner.scipy_name}("
                  + ", ".join(f"{k}={v:.6g}" for k, v in winner.mean_params.items()) + ")")
    if args.json:
        doc = {
            "source": args.swf, "field": args.field, "values": int(values.size), "fitted": int(used.size),
            "folds": args.folds, "seed": args.seed, "best": winner.scipy_name,
            "results": [{"name": r.name, "scipy": r.scipy_name, "ks_mean": r.ks_mean, "ks_std": r.ks_std,
                         "ks": r.ks, "params": r.mean_params, "params_std": r.std_params} for r in results],
        }
        with atomic_write(args.json) as handle:
            handle.write(json.dumps(doc, indent=2) + "\n")
        console.print(f"wrote {args.json}")
    return 0


def _bb(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from coburst.models.bb_request import BBRequestModel

    model = BBRequestModel.load(args.bb_model)
    console = Console()
    table = Table(title="Burst-buffer request per processor: scipy.stats.lognorm (KiB)")
    table.add_column("parameter")
    table.add_column("value", justify="right")
    table.add_row("shape s", f"{model.s:.10g}")
    table.add_row("location", f"{model.loc:.10g}")
    table.add_row("scale", f"{model.scale:.10g}")
    for key, value in model.statistics_kib().items():
        table.add_row(key, f"{value:.0f} KiB = {value * model.unit_bytes / 2**30:.2f} GiB")
    table.add_row("floor", f"{model.floor_bytes} bytes")
    table.add_row("short jobs", f"runtime <= {model.short_job_runtime:g} s -> {model.short_job_bytes} bytes")
    console.print(table)
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("model", help="burst-buffer request model: fit and show",
                                   description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="model_command", metavar="ACTION")
    sub.required = True

    fit = sub.add_parser("fit-bb", help="fit 5 distributions to per-processor memory requests (Table 2.2)",
                         description="Fit exponential, lognormal, logistic, half-logistic and beta to the "
                                     "per-processor memory requests of an SWF log with k-fold cross-validation.")
    fit.add_argument("swf", help="SWF log with memory requests (e.g. METACENTRUM-2013-3.swf)")
    fit.add_argument("--field", choices=tuple(FIELDS), default="requested",
                     help="requested (field 10, default, as the thesis) or used (field 7) memory")
    fit.add_argument("--folds", type=opt_int(2, 1000), default=5, help="cross-validation folds (default 5)")
    fit.add_argument("--seed", type=SEED, default=0, help="seed of the fold split and subsample (default 0)")
    fit.add_argument("--max-samples", type=opt_int(0, COUNT_MAX), default=100_000,
                     help="fit a random subsample of at most this many values (default 100000; 0: all)")
    fit.add_argument("--json", help="also write the results to this JSON file")
    fit.set_defaults(func=_fit_bb)

    show = sub.add_parser("bb", help="show the burst-buffer request model in use (Tables 2.3, 2.4)")
    show.add_argument("--bb-model", help="parameter file (default models/bb_request.json)")
    show.set_defaults(func=_bb)
