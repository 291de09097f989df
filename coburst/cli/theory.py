"""``coburst theory``: co-scheduling theory of Kuchumov & Korkhov (2021).

``generate`` writes §8 instances, ``evaluate`` answers OPT (§4.1) and FCS (§4.2) for each
instance of a file, ``worst-case`` searches instances maximising a strategy's
makespan / OPT (FCS, or the §5 search strategies PI, EI, UCB).  Layout of the files:
:mod:`coburst.theory.io`.
"""

from __future__ import annotations

import argparse

from coburst.errors import InputError
from coburst.fileio import atomic_write
from coburst.validate import COUNT_MAX, SEED, check_output, opt_float, opt_int

#: largest n of ``generate`` and ``worst-case`` (2**n x n speeds are stored)
MAX_N = 20


def _generate(args: argparse.Namespace) -> int:
    lo, hi = args.alpha
    if not 0.0 <= lo <= hi <= 1.0:
        raise InputError("--alpha", f"{lo:g} {hi:g}", "expected 0 <= LO <= HI <= 1")
    check_output(args.output, "-o/--output")
    from coburst.theory.generate import section8_instances
    from coburst.theory.io import instances_json

    insts = section8_instances(args.n, (lo, hi), args.count, args.seed)
    with atomic_write(args.output) as handle:
        handle.write(instances_json(insts))
    print(f"wrote {args.output}: {len(insts)} instances of n = {args.n}, alpha in [{lo:g}, {hi:g}], seed {args.seed}")
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    check_output(args.output, "-o/--output")
    from coburst.theory.fcs import TieSearchTooLarge, fcs
    from coburst.theory.io import dumps, read_instances
    from coburst.theory.opt import solve_opt

    answers = []
    invalid = 0
    for entry in read_instances(args.file):
        if entry.inst is None:
            invalid += 1
            answers.append({"id": entry.id, "valid": False, "error": entry.error, "opt_makespan": None,
                            "fcs_makespan": None})
            continue
        try:
            sched = fcs(entry.inst, tie=args.tie)
        except TieSearchTooLarge as exc:
            raise InputError("--tie", "worst", f"instance {entry.id!r}: {exc}; use --tie first or last") from None
        try:
            opt = solve_opt(entry.inst)
        except RuntimeError as exc:  # (the numeric range is checked when read: a solver failure left)
            raise InputError(args.file, f"instance {entry.id!r}", f"the LP solver failed on it ({exc}): its "
                             "numbers may be past what the solver handles; rescale the instance") from None
        answer = {"id": entry.id, "valid": True, "error": None, "opt_makespan": opt.makespan,
                  "fcs_makespan": sched.makespan}
        if args.schedules:
            answer["opt_times"] = {str(mask): x for mask, x in sorted(opt.times.items())}
            answer["fcs_schedule"] = [[s.mask, s.start, s.end] for s in sched.segments]
        answers.append(answer)
    with atomic_write(args.output) as handle:
        handle.write(dumps({"answers": answers}))
    print(f"wrote {args.output}: {len(answers) - invalid} instances answered, {invalid} invalid")
    return 0


def _worst_case(args: argparse.Namespace) -> int:
    if not 0.5 < args.k < 1.0:
        raise InputError("--k", str(args.k), "the k-quantile parameter must satisfy 0.5 < k < 1 (§5.2, (26))")
    check_output(args.output, "-o/--output")
    if args.strategy != "fcs":
        try:
            import coburst.theory.search  # noqa: F401
        except ModuleNotFoundError:  # pragma: no cover - the §5 module ships with coburst
            raise InputError("--strategy", args.strategy, "the §5 search strategies are not available") from None
    if args.strategy == "fcs" and args.n < 2:
        raise InputError("--n", str(args.n), "FCS's worst case needs n >= 2 (with one task FCS is OPT)")
    from coburst.theory.io import dumps, instance_doc
    from coburst.theory.worst_case import worst_case

    found = worst_case(args.n, args.strategy, seed=args.seed, iterations=args.iterations,
                       time_limit=args.time_limit, k=args.k, interval=args.interval)

    def frac(x):
        return None if x is None else f"{x.numerator}/{x.denominator}"

    report = {"strategy": found.strategy, "ratio": found.ratio, "start": found.start,
              "evaluations": found.evaluations, "seed": args.seed,
              "makespan_exact": frac(found.makespan_exact), "opt_exact": frac(found.opt_exact),
              "opt_upper": frac(found.opt_upper), "opt_lower": frac(found.opt_lower),
              "proven_ratio": frac(found.proven_ratio)}
    if args.strategy != "fcs":
        report.update({"k": args.k, "interval": args.interval})
    with atomic_write(args.output) as handle:
        handle.write(dumps({"instances": [instance_doc(found.inst)], "worst_case": report}))
    line = f"wrote {args.output}: {args.strategy} / OPT = {found.ratio:.6f} at n = {args.n} (from {found.start})"
    if found.proven_ratio is not None:
        line += f"; exactly {float(found.proven_ratio):.12g}"
        line += " (OPT exact)" if found.opt_exact is not None else " (a proven lower bound)"
    print(line)
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("theory", help="co-scheduling theory: OPT, FCS, worst cases (Kuchumov & "
                                   "Korkhov 2021)", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="theory_command", metavar="ACTION")
    sub.required = True

    gen = sub.add_parser("generate", help="write §8 instances (b ~ U(100, 200), speeds shrinking by U(alpha, 1))",
                         description="Write instances of the §8 generator to a JSON file.")
    gen.add_argument("--n", type=opt_int(1, MAX_N), required=True, help=f"tasks per instance (1..{MAX_N})")
    gen.add_argument("--alpha", type=opt_float(0.0, 1.0), nargs=2, metavar=("LO", "HI"), required=True,
                     help="range of the per-task alpha, e.g. 0.45 0.55")
    gen.add_argument("--count", type=opt_int(1, COUNT_MAX), default=1, help="number of instances (default 1)")
    gen.add_argument("--seed", type=SEED, default=0, help="seed (default 0)")
    gen.add_argument("-o", "--output", required=True, help="instances JSON file to write")
    gen.set_defaults(func=_generate)

    ev = sub.add_parser("evaluate", help="OPT and FCS makespans of every instance of a file",
                        description="Answer OPT (LP (3)) and FCS (Listing 1) for each instance; instances that "
                                    "break the model (e.g. constraint (1)) get valid false and the error.")
    ev.add_argument("file", help="instances JSON file")
    ev.add_argument("--tie", choices=("first", "last", "worst"), default="first",
                    help="FCS tie-break: first (default) or last combination in mask order, or worst "
                         "(adversarial)")
    ev.add_argument("--schedules", action="store_true",
                    help="also write OPT's time per combination (opt_times: {mask: x_j}) and FCS's schedule "
                         "(fcs_schedule: [[mask, start, end], ...])")
    ev.add_argument("-o", "--output", required=True, help="answers JSON file to write")
    ev.set_defaults(func=_evaluate)

    wc = sub.add_parser("worst-case", help="search instances maximising a strategy's makespan / OPT",
                        description="Search instances satisfying constraint (1) that maximise makespan / OPT: "
                                    "structured families, then local search; the ratio is checked exactly.")
    wc.add_argument("--n", type=opt_int(1, 14), required=True, help="tasks (1..14)")
    wc.add_argument("--strategy", choices=("fcs", "pi", "ei", "ucb"), default="fcs", help="strategy (default fcs)")
    wc.add_argument("--iterations", type=opt_int(0, COUNT_MAX), default=300,
                    help="local-search steps (default 300)")
    wc.add_argument("--time-limit", type=opt_float(0.0, 1e6, exclusive_minimum=True), default=None,
                    help="stop the local search after this many seconds")
    wc.add_argument("--seed", type=SEED, default=0, help="seed (default 0)")
    wc.add_argument("--k", type=opt_float(0.5, 1.0), default=0.9,
                    help="§5 quantile parameter k of PI/EI/UCB (0.5 < k < 1, default 0.9)")
    wc.add_argument("--interval", type=opt_float(0.0, 1e6, exclusive_minimum=True), default=10.0,
                    help="§5 measuring interval (default 10, as §8)")
    wc.add_argument("-o", "--output", required=True, help="JSON file to write (the instance and the ratio)")
    wc.set_defaults(func=_worst_case)
