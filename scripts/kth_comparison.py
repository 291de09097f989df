#!/usr/bin/env python3
"""The thesis' comparison of the best policies on the 16 KTH-SP2 parts (Kopański 2020,
§4.6, Figures 4.46-4.49 and 4.58-4.61): backfill-sjf-1, maxutil-1.0-1, window-1,
plan-square-0 and plan-cube-0, Alloc-Only and IO-Aware job models, platforms/dragonfly96.xml.

    .venv/bin/python scripts/kth_comparison.py [--jobs 2] [--out out/kth_comparison]
    .venv/bin/python scripts/kth_comparison.py --parts 1 2 3 --models alloc_only
    .venv/bin/python scripts/kth_comparison.py --policies backfill-sjf-1 maxutil-1.0-1 window-1

1. makes the 16 parts of both models once (``scripts/make_kth_workloads.sh``, into
   OUT/workloads) unless they exist;
2. runs every (part, model, policy) through ``coburst run`` (``--enable-dynamic-jobs``:
   IO-Aware jobs run their phases), ``--jobs`` runs at a time (default: the CPU count);
   a run whose ``_jobs.csv`` exists is not run again (resume: kill it, start it again);
   each run also writes its decision-time profile (``_decisions.csv``);
3. prints, per model and policy (``--policies``: a subset, backfill-sjf-1 always included,
   e.g. the fast ones while the plan-based runs are pending), the mean over the parts that
   finished for every listed policy of
   the per-part means of waiting time, turnaround, slowdown and bounded slowdown (tau =
   600 s), each divided by backfill-sjf-1's mean on the same part (the thesis' normalised
   means), and writes OUT/summary.json.  The thesis' headline: the best plan-based
   policies about 0.80 (waiting time) and 0.73 (bounded slowdown).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

POLICIES = ["backfill-sjf-1", "maxutil-1.0-1", "window-1", "plan-square-0", "plan-cube-0"]
MODELS = ["alloc_only", "io_aware"]
BASE = "backfill-sjf-1"
METRICS = ("waiting", "turnaround", "slowdown", "bounded_slowdown")


def make_workloads(out: Path) -> Path:
    wdir = out / "workloads"
    if not (wdir / "kth_io_aware.part16.json").exists():
        subprocess.run(["bash", str(ROOT / "scripts" / "make_kth_workloads.sh"), str(wdir)], check=True)
    return wdir


def run_one(wdir: Path, out: Path, part: int, model: str, policy: str) -> tuple[str, float]:
    prefix = out / model / f"part{part:02d}" / policy
    done = Path(f"{prefix}_jobs.csv")
    if done.exists():
        return "cached", 0.0
    prefix.parent.mkdir(parents=True, exist_ok=True)
    tmp = prefix.parent / f".{policy}.running"
    t0 = time.perf_counter()
    # --timeout: a plan-based decision at a long queue takes seconds, more under nice
    cmd = [str(ROOT / ".venv" / "bin" / "coburst"), "run", policy, "-q", "--enable-dynamic-jobs", "--timeout", "3600",
           "-o", json.dumps({"decision_log": f"{prefix}_decisions.csv"}),
           "-p", str(ROOT / "platforms" / "dragonfly96.xml"),
           "-w", str(wdir / f"kth_{model}.part{part:02d}.json"), "-e", str(tmp)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return f"failed: {proc.stderr.strip().splitlines()[-1:] }", time.perf_counter() - t0
    for suffix in ("_schedule.csv", "_jobs.csv"):  # _jobs.csv last: it marks the run done
        Path(f"{tmp}{suffix}").replace(f"{prefix}{suffix}")
    return "ran", time.perf_counter() - t0


def part_means(path: Path) -> dict[str, float]:
    from coburst.analysis.metrics import bounded_slowdown, read_jobs

    df = read_jobs(path)
    df = df[df["final_state"] != "REJECTED"]
    wait = df["starting_time"] - df["submission_time"]
    turn = df["finish_time"] - df["submission_time"]
    run = df["execution_time"].clip(lower=1e-9)
    return {"waiting": float(wait.mean()), "turnaround": float(turn.mean()),
            "slowdown": float((turn / run).mean()), "bounded_slowdown": float(bounded_slowdown(df).mean())}


def report(out: Path, parts: list[int], models: list[str], policies: list[str] = POLICIES) -> dict:
    summary: dict = {}
    for model in models:
        done = [p for p in parts if all(Path(f"{out}/{model}/part{p:02d}/{pol}_jobs.csv").exists() for pol in policies)]
        summary[model] = {"parts": done, "policies": list(policies), "normalised": {}}
        if not done:
            print(f"{model}: no part finished for every policy yet")
            continue
        means = {pol: {p: part_means(Path(f"{out}/{model}/part{p:02d}/{pol}_jobs.csv")) for p in done}
                 for pol in policies}
        print(f"\n{model}: {len(done)} parts ({', '.join(map(str, done))}); mean over parts of the per-part "
              f"mean divided by {BASE}'s")
        print(f"{'policy':<16}" + "".join(f"{m:>18}" for m in METRICS))
        for pol in policies:
            row = {m: statistics.mean(means[pol][p][m] / means[BASE][p][m] for p in done) for m in METRICS}
            summary[model]["normalised"][pol] = row
            print(f"{pol:<16}" + "".join(f"{row[m]:>18.3f}" for m in METRICS))
    return summary


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "out" / "kth_comparison")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="runs at a time")
    ap.add_argument("--parts", type=int, nargs="+", default=list(range(1, 17)))
    ap.add_argument("--models", nargs="+", choices=MODELS, default=MODELS)
    ap.add_argument("--policies", nargs="+", choices=POLICIES, default=POLICIES,
                    help=f"policies to run and report ({BASE} is always included)")
    ap.add_argument("--report-only", action="store_true", help="only print the table of what finished")
    args = ap.parse_args(argv)
    policies = [pol for pol in POLICIES if pol in set(args.policies) | {BASE}]
    out = args.out.resolve()
    if not args.report_only:
        wdir = make_workloads(out)
        # cheap runs first so that whole parts finish early
        tasks = [(p, m, pol) for p in args.parts for m in args.models for pol in policies]
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = {pool.submit(run_one, wdir, out, p, m, pol): (p, m, pol) for p, m, pol in tasks}
            for fut, (p, m, pol) in futures.items():
                status, secs = fut.result()
                print(f"part {p:2d} {m:<10} {pol:<14} {status} {secs:8.1f} s", flush=True)
    summary = report(out, args.parts, args.models, policies)
    from coburst.fileio import atomic_write
    with atomic_write(out / "summary.json") as f:
        f.write(json.dumps(summary, indent=None, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
