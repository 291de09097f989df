"""ELiSE's results against coburst's: agreement per job and per aggregate, and wall times.

    .venv/bin/python benchmarks/bench_elise_agreement.py [--cases g64_200_t0,...] [--defaults]

For each case of ``tests/data/elise`` (ELiSE's own outputs, ``scripts/elise_reference.py``)
and each of FIFO, EASY, EASY-Co, Filler: ``coburst run`` in-process on ``coburst platform
cosched --zero-latency`` with ELiSE's rules (``backfill_rule=elise``; co-schedulers also
``placement_order=shared-first``), and with ``--defaults`` also coburst's defaults (Lifka's
EASY rule, serial node order, the default platform latencies), printing the share of jobs
whose start is within 1 s of ELiSE's, the relative differences of makespan, mean wait and
mean slowdown, and the whole-run wall time of ``coburst run`` next to ELiSE's own simulation
time (``time_reports.csv``, measured when the reference was made: ELiSE's loop only, without
its start-up).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from coburst.analysis.elise import read_results  # noqa: E402

COBURST = ROOT / ".venv" / "bin" / "coburst"
DATA = ROOT / "tests" / "data" / "elise"
NODES = {"g64_200_t0": 64, "g64_200_poisson": 64, "g800_1000_t0": 800}
ELISE = {"fifo": {}, "easy": {"backfill_rule": "elise"},
         "easy-co": {"backfill_rule": "elise", "placement_order": "shared-first"},
         "filler": {"backfill_rule": "elise", "placement_order": "shared-first"}}
NAMES = {"fifo": "FIFO Scheduler", "easy": "EASY Scheduler", "easy-co": "Random Ranks Co-Scheduler",
         "filler": "Filler Co-Scheduler"}


def sh(*args):
    subprocess.run([str(COBURST), *map(str, args)], check=True, capture_output=True)


def aggregates(res):
    jobs = list(res.values())
    return (max(j["finish"] for j in jobs) - min(j["submit"] for j in jobs),
            statistics.fmean(j["start"] - j["submit"] for j in jobs),
            statistics.fmean((j["finish"] - j["submit"]) / (j["finish"] - j["start"]) for j in jobs))


def elise_times(case):
    out = {}
    with open(DATA / case / "time_reports.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            h, m, s = row["Real Time"].split(":")
            out[row["Scheduler Name"]] = dt.timedelta(hours=int(h), minutes=int(m), seconds=float(s)).total_seconds()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(NODES))
    ap.add_argument("--defaults", action="store_true", help="also coburst's defaults")
    args = ap.parse_args()
    print("| case | policy | settings | starts within 1 s | makespan | mean wait | mean slowdown "
          "| coburst run (s) | ELiSE loop (s) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="bench-elise-agree-") as tmp:
        tmp = Path(tmp)
        for case in args.cases.split(","):
            times = elise_times(case)
            variants = [("ELiSE's", True)] + ([("defaults", False)] if args.defaults else [])
            for label, elise in variants:
                plat, wl = tmp / f"{case}-{elise}.xml", tmp / f"{case}-{elise}.json"
                sh("platform", "cosched", "--preset", "grvingt", "--nodes", NODES[case], *(["--zero-latency"] if elise else []),
                   "-o", plat)
                sh("workload", "elise", "--from", DATA / case / "jobs.csv", "--seed-apps", "grvingt-nas", "-p", plat,
                   "-o", wl, "-q")
                for policy, opts in ELISE.items():
                    pre = tmp / f"{case}-{policy}-{elise}"
                    t0 = time.perf_counter()
                    sh("run", {"fifo": "fcfs"}.get(policy, policy), "-p", plat, "-w", wl, "--heatmap", "grvingt-nas",
                       "-e", pre, "-o", json.dumps(opts if elise else {}), "-q")
                    wall = time.perf_counter() - t0
                    sh("workload", "elise", "--run", f"{pre}_jobs.csv", "-w", wl, "-p", plat, "-o", f"{pre}.csv", "-q")
                    mine, theirs = read_results(f"{pre}.csv"), read_results(DATA / case / f"{policy}.csv")
                    close = sum(abs(mine[k]["start"] - theirs[k]["start"]) <= 1 for k in theirs)
                    a, b = aggregates(mine), aggregates(theirs)
                    rel = [f"{(x - y) / y:+.2%}" if y else f"{x - y:+.3f}" for x, y in zip(a, b)]
                    print(f"| {case} | {policy} | {label} | {close}/{len(theirs)} | {' | '.join(rel)} "
                          f"| {wall:.2f} | {times[NAMES[policy]]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
