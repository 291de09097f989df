#!/usr/bin/env python3
"""Kuchumov & Korkhov 2021, §8: Figures 6 and 7 (competitive ratios of the §5 search
strategies UCB, PI, EI and of FCS against OPT), as one command.

    .venv/bin/python scripts/kuchumov_figures.py                # 9 ranges x 50 instances, n = 10
    .venv/bin/python scripts/kuchumov_figures.py --count 5 --ranges 0.45:0.55 -o /tmp/k

For each α range (default the nine of width 0.1, [0.05, 0.15] ... [0.85, 0.95]),
``--count`` §8 instances with ``--n`` tasks (:func:`coburst.theory.generate.section8_instances`,
seed ``--seed`` + the range's index) are solved by OPT (LP (3)), FCS (Listing 1) and the
search strategies at every k of ``--ks`` (measuring interval ``--interval``, 10 in §8).  The ratio
of an instance is makespan / OPT; tables and figures show the mean over the instances.

Writes into ``-o DIR`` (default ``docs/figures``): ``kuchumov_fig6.png`` (ratio by α range
and k, one panel per strategy), ``kuchumov_fig7.png`` (the lowest ratio over k per range,
and FCS), ``kuchumov_readings.png`` (Figure 7 under each reading), ``kuchumov_table.md`` (the tables, the paper's reading next to the measured
one, and how the readings §5 leaves open move the results) and ``kuchumov_ratios.csv``
(every mean and maximum).  The readings' comparison runs every alternative of
:class:`coburst.theory.search.Readings`, one change at a time from the defaults, at the k
of ``--reading-ks`` (``--no-readings`` skips it).  Ranges run in parallel on ``--jobs``
processes; the output is the same for any ``--jobs``.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from coburst.fileio import atomic_write  # noqa: E402
from coburst.theory.fcs import fcs  # noqa: E402
from coburst.theory.generate import section8_instances  # noqa: E402
from coburst.theory.model import check_feasible, check_instance  # noqa: E402
from coburst.theory.opt import solve_opt  # noqa: E402
from coburst.theory.search import A_PLUS, AFTERS, FLOORS, PRIORS, Readings, run  # noqa: E402

STRATEGIES = ("ucb", "pi", "ei")
NAMES = {"ucb": "UCB", "pi": "PI", "ei": "EI", "fcs": "FCS"}
RANGES = [(round(0.05 + 0.1 * r, 2), round(0.15 + 0.1 * r, 2)) for r in range(9)]
KS = (0.6, 0.7, 0.8, 0.9, 0.95, 0.99)
INTERVAL = 10.0


def variants() -> list[Readings]:
    """The default readings, then every alternative reading, one change at a time."""
    base = Readings()
    out = [base]
    for name, values in (("prior", PRIORS), ("floor", FLOORS), ("a_plus", A_PLUS), ("after", AFTERS)):
        for v in values:
            if v != getattr(base, name):
                out.append(Readings(**{**{f: getattr(base, f) for f in ("prior", "floor", "a_plus", "after")},
                                       name: v}))
    return out


def range_label(r: tuple[float, float]) -> str:
    return f"[{r[0]:.2f},{r[1]:.2f}]"


def solve_range(job: tuple) -> dict:
    """Every ratio of one α range: {("fcs", None, None): [...], (strategy, k, readings label): [...]}."""
    index, rng, n, count, seed, ks, reading_ks, readings, interval = job
    insts = section8_instances(n, rng, count, seed + index)
    out: dict = {}
    for inst in insts:
        check_instance(inst)
        opt = solve_opt(inst).makespan
        f = fcs(inst)
        check_feasible(inst, f)
        out.setdefault(("fcs", None, "default"), []).append(f.makespan / opt)
        for rd in readings:
            for strategy in STRATEGIES:
                for k in (sorted(set(ks) | set(reading_ks)) if rd == Readings() else reading_ks):
                    sched = run(inst, strategy, k=k, interval=interval, readings=rd, check=False)
                    out.setdefault((strategy, k, rd.differences()), []).append(sched.makespan / opt)
    return out


def summary(res: list[dict], ranges, ks, label: str = "default") -> dict:
    """Per range: mean ratio of FCS and of each (strategy, k); lowest over k; claims."""
    mean = {}
    for r, d in zip(ranges, res):
        mean[(r, "fcs", None)] = float(np.mean(d[("fcs", None, "default")]))
        for s in STRATEGIES:
            for k in ks:
                mean[(r, s, k)] = float(np.mean(d[(s, k, label)]))
    low = {(r, s): min(mean[(r, s, k)] for k in ks) for r in ranges for s in STRATEGIES}
    argk = {(r, s): min(ks, key=lambda k: (mean[(r, s, k)], -k)) for r in ranges for s in STRATEGIES}
    best = {r: min(STRATEGIES, key=lambda s: low[(r, s)]) for r in ranges}
    spread = {s: max(max(mean[(r, s, k)] for k in ks) - min(mean[(r, s, k)] for k in ks) for r in ranges)
              for s in STRATEGIES}
    ucb_gain = sum(mean[(r, "ucb", ks[-1])] < mean[(r, "ucb", ks[0])] for r in ranges)
    ucb_max_r = max(ranges, key=lambda r: low[(r, "ucb")])
    top = max((low[(r, s)], r, s) for r in ranges for s in STRATEGIES)
    worse_than_fcs = sum(min(low[(r, s)] for s in STRATEGIES) > mean[(r, "fcs", None)] for r in ranges)
    return {"mean": mean, "low": low, "argk": argk, "best": best, "spread": spread, "ucb_gain": ucb_gain,
            "ucb_max": (low[(ucb_max_r, "ucb")], ucb_max_r), "top": top, "worse_than_fcs": worse_than_fcs,
            "pi_best": sum(best[r] == "pi" for r in ranges)}


def claims_rows(sm: dict, ranges, ks) -> list[tuple[str, str, str]]:
    nr = len(ranges)
    best = ", ".join(f"{range_label(r)} {NAMES[sm['best'][r]]}" for r in ranges)
    return [
        ("PI gives the lowest ratio for all or almost all ranges (§8, §10)",
         f"PI lowest in {sm['pi_best']}/{nr} ranges ({best})"),
        ("UCB's ratio falls as k rises (§8)",
         f"UCB at k={ks[-1]} below k={ks[0]} in {sm['ucb_gain']}/{nr} ranges"),
        ("PI and EI are not affected by k (§8)",
         f"largest spread over k of a range's mean: PI {sm['spread']['pi']:.3f}, EI {sm['spread']['ei']:.3f}, "
         f"UCB {sm['spread']['ucb']:.3f}"),
        ("Figure 7's maximum is 2.6, UCB at α in [0.45, 0.55]",
         f"Figure 7's maximum {sm['top'][0]:.2f} ({NAMES[sm['top'][2]]} at {range_label(sm['top'][1])}); "
         f"UCB's maximum {sm['ucb_max'][0]:.2f} at {range_label(sm['ucb_max'][1])}"),
        ("Figure 7's lowest ratios are reached at k = 0.99 (§8)",
         "lowest at k = " + f"{ks[-1]}: " + ", ".join(
             f"{NAMES[s]} {sum(sm['argk'][(r, s)] == ks[-1] for r in ranges)}/{nr}" for s in STRATEGIES)
         + " ranges (ties go to the larger k)"),
        ("search strategies are worse than FCS (§8)",
         f"the best search strategy is worse than FCS in {sm['worse_than_fcs']}/{nr} ranges"),
    ]


def md_table(head: list[str], rows: list[list[str]]) -> str:
    out = io.StringIO()
    out.write("| " + " | ".join(head) + " |\n")
    out.write("|" + "|".join("---" for _ in head) + "|\n")
    for row in rows:
        out.write("| " + " | ".join(row) + " |\n")
    return out.getvalue()


def report(res, ranges, ks, reading_ks, readings, n, count, seed, interval, elapsed) -> tuple[str, list[list]]:
    sm = summary(res, ranges, ks)
    text = io.StringIO()
    text.write(f"# Kuchumov & Korkhov 2021, §8: competitive ratios (mean makespan / OPT over {count} "
               f"instances of n = {n}, seed {seed}, measuring interval {interval:g})\n\n")
    head = ["α range", "FCS"] + [f"{NAMES[s]} k={k}" for s in STRATEGIES for k in ks]
    rows = [[range_label(r), f"{sm['mean'][(r, 'fcs', None)]:.3f}"]
            + [f"{sm['mean'][(r, s, k)]:.3f}" for s in STRATEGIES for k in ks] for r in ranges]
    text.write("## Figure 6: ratio by α range and k (default readings)\n\n" + md_table(head, rows) + "\n")
    head7 = ["α range", "FCS"] + [f"{NAMES[s]} (lowest, at k)" for s in STRATEGIES]
    rows7 = [[range_label(r), f"{sm['mean'][(r, 'fcs', None)]:.3f}"]
             + [f"{sm['low'][(r, s)]:.3f} ({sm['argk'][(r, s)]})" for s in STRATEGIES] for r in ranges]
    text.write("## Figure 7: lowest ratio over k per range\n\n" + md_table(head7, rows7) + "\n")
    text.write("## The paper's reading and the measured one\n\n"
               + md_table(["paper", "measured"], [list(c) for c in claims_rows(sm, ranges, ks)]) + "\n")
    if len(readings) > 1:
        text.write(f"## How the readings §5 leaves open move the results (k in {', '.join(map(str, reading_ks))})\n\n")
        head_r = ["readings", "PI lowest in", f"UCB k={reading_ks[-1]} < k={reading_ks[0]} in",
                  "spread over k PI / EI / UCB", "max of lowest ratios", "best search worse than FCS in"] + [
            f"{NAMES[s]} lowest {range_label(r)}" for s in STRATEGIES for r in (ranges[0], ranges[len(ranges) // 2],
                                                                                ranges[-1])]
        rows_r = []
        for rd in readings:
            s2 = summary(res, ranges, reading_ks, rd.differences())
            rows_r.append([rd.differences(), f"{s2['pi_best']}/{len(ranges)}", f"{s2['ucb_gain']}/{len(ranges)}",
                           " / ".join(f"{s2['spread'][s]:.3f}" for s in ("pi", "ei", "ucb")),
                           f"{s2['top'][0]:.2f} ({NAMES[s2['top'][2]]} {range_label(s2['top'][1])})",
                           f"{s2['worse_than_fcs']}/{len(ranges)}"]
                          + [f"{s2['low'][(r, s)]:.2f}" for s in STRATEGIES
                             for r in (ranges[0], ranges[len(ranges) // 2], ranges[-1])])
        text.write(md_table(head_r, rows_r) + "\n")
    text.write(f"Computed in {elapsed:.0f} s.\n")
    csv_rows = [["readings", "alpha_lo", "alpha_hi", "strategy", "k", "mean_ratio", "max_ratio", "instances"]]
    for rd in readings:
        lab = rd.differences()
        for r, d in zip(ranges, res):
            for key, vals in d.items():
                if key[2] == lab:
                    csv_rows.append([lab, f"{r[0]:.2f}", f"{r[1]:.2f}", key[0], "" if key[1] is None else f"{key[1]}",
                                     f"{np.mean(vals):.6f}", f"{np.max(vals):.6f}", str(len(vals))])
    return text.getvalue(), csv_rows


def _range_axis(ax, x, labels) -> None:
    ax.set_xticks(x, labels, rotation=45, ha="right", fontsize=8)
    ax.set_xlabel("α range")
    ax.grid(alpha=0.3)


def _save(plt, fig, path: Path) -> None:
    fig.tight_layout()
    with atomic_write(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=110, metadata={"Software": None})
    plt.close(fig)


def figures(res, ranges, ks, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sm = summary(res, ranges, ks)
    x = np.arange(len(ranges))
    labels = [range_label(r) for r in ranges]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6), sharey=True)
    cmap = plt.get_cmap("viridis")
    for ax, s in zip(axes, STRATEGIES):
        for c, k in enumerate(ks):
            ax.plot(x, [sm["mean"][(r, s, k)] for r in ranges], marker="o", ms=3,
                    color=cmap(c / max(1, len(ks) - 1)), label=f"k = {k}")
        ax.set_title(NAMES[s])
        _range_axis(ax, x, labels)
    axes[0].set_ylabel("competitive ratio (mean makespan / OPT)")
    axes[-1].legend(fontsize=8)
    fig.suptitle("Kuchumov & Korkhov 2021, Figure 6 reproduced (coburst): search strategies by α range and k")
    _save(plt, fig, out / "kuchumov_fig6.png")
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    for s, m in zip(STRATEGIES, ("o", "s", "^")):
        ax.plot(x, [sm["low"][(r, s)] for r in ranges], marker=m, label=f"{NAMES[s]} (lowest over k)")
    ax.plot(x, [sm["mean"][(r, "fcs", None)] for r in ranges], marker="D", color="black", label="FCS")
    ax.axhline(1.0, color="grey", lw=0.8)
    _range_axis(ax, x, labels)
    ax.set_ylabel("competitive ratio (mean makespan / OPT)")
    ax.set_title("Kuchumov & Korkhov 2021, Figure 7 reproduced (coburst)")
    ax.legend(fontsize=8)
    _save(plt, fig, out / "kuchumov_fig7.png")


def readings_figure(res, ranges, reading_ks, readings, out: Path) -> None:
    """One panel per strategy: the lowest ratio over ``reading_ks`` per range, one line per
    reading (the defaults in black), FCS dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = np.arange(len(ranges))
    labels = [range_label(r) for r in ranges]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8), sharey=True)
    cmap = plt.get_cmap("tab10")
    fcs_line = [summary(res, ranges, reading_ks)["mean"][(r, "fcs", None)] for r in ranges]
    for ax, s in zip(axes, STRATEGIES):
        for c, rd in enumerate(readings):
            sm = summary(res, ranges, reading_ks, rd.differences())
            default = rd == Readings()
            ax.plot(x, [sm["low"][(r, s)] for r in ranges], marker="o", ms=3, lw=2.2 if default else 1.2,
                    color="black" if default else cmap(c % 10), label=rd.differences())
        ax.plot(x, fcs_line, ls="--", color="grey", label="FCS")
        ax.set_title(f"{NAMES[s]}: lowest ratio over k in {{{', '.join(map(str, reading_ks))}}}")
        _range_axis(ax, x, labels)
    axes[0].set_ylabel("competitive ratio (mean makespan / OPT)")
    axes[-1].legend(fontsize=7)
    fig.suptitle("§5's open readings (coburst.theory.search.Readings): how they move Figure 7")
    _save(plt, fig, out / "kuchumov_readings.png")


def parse_ranges(text: str) -> list[tuple[float, float]]:
    if text == "all":
        return RANGES
    out = []
    for part in text.split(","):
        lo, hi = (float(v) for v in part.split(":"))
        if not 0 <= lo <= hi <= 1:
            raise SystemExit(f"kuchumov_figures.py: bad α range {part!r} (0 <= lo <= hi <= 1)")
        out.append((lo, hi))
    return out


def parse_ks(text: str) -> tuple[float, ...]:
    ks = tuple(float(v) for v in text.split(","))
    if not all(0.5 < k < 1 for k in ks):
        raise SystemExit(f"kuchumov_figures.py: bad k list {text!r} (each 0.5 < k < 1)")
    return ks


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=50, help="instances per α range (50)")
    ap.add_argument("--n", type=int, default=10, help="tasks per instance (10)")
    ap.add_argument("--seed", type=int, default=2021, help="seed of the first range (+ range index)")
    ap.add_argument("--ranges", default="all", help="'all' or LO:HI,LO:HI,...")
    ap.add_argument("--ks", default=",".join(map(str, KS)), help="k values of Figure 6")
    ap.add_argument("--reading-ks", default="0.6,0.9,0.99", help="k values of the readings' comparison")
    ap.add_argument("--no-readings", action="store_true", help="skip the readings' comparison")
    ap.add_argument("--interval", type=float, default=INTERVAL, help="measuring interval (§8: 10)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="processes (2)")
    ap.add_argument("-o", "--out", default=str(REPO / "docs" / "figures"), help="output folder")
    args = ap.parse_args(argv)
    if args.count < 1 or args.n < 1 or args.jobs < 1:
        raise SystemExit("kuchumov_figures.py: --count, --n and --jobs must be >= 1")
    if not 0 < args.interval < float("inf"):
        raise SystemExit("kuchumov_figures.py: --interval must be a finite number > 0")
    ranges, ks = parse_ranges(args.ranges), parse_ks(args.ks)
    reading_ks = parse_ks(args.reading_ks)
    readings = [Readings()] if args.no_readings else variants()
    out = Path(args.out)
    t0 = time.perf_counter()
    jobs = [(i, r, args.n, args.count, args.seed, ks, reading_ks, readings, args.interval)
            for i, r in enumerate(ranges)]
    if args.jobs == 1 or len(jobs) == 1:
        res = [solve_range(j) for j in jobs]
    else:
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            res = list(pool.map(solve_range, jobs))
    elapsed = time.perf_counter() - t0
    text, csv_rows = report(res, ranges, ks, reading_ks, readings, args.n, args.count, args.seed, args.interval,
                            elapsed)
    sys.stdout.write(text)
    out.mkdir(parents=True, exist_ok=True)
    with atomic_write(out / "kuchumov_table.md") as fh:
        fh.write(text.replace(f"Computed in {elapsed:.0f} s.\n", ""))
    with atomic_write(out / "kuchumov_ratios.csv", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(csv_rows)
    figures(res, ranges, ks, out)
    if len(readings) > 1:
        readings_figure(res, ranges, reading_ks, readings, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
