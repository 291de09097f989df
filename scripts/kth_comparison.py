#!/usr/bin/env python3
"""The thesis' comparison of the best policies on the 16 KTH-SP2 parts (Kopański 2020,
§4.6, Figures 4.46-4.49 and 4.58-4.61): backfill-sjf-1, maxutil-1.0-1, window-1,
plan-square-0 and plan-cube-0, Alloc-Only and IO-Aware job models, platforms/dragonfly96.xml.

A thin wrapper over the campaign ``scripts/kopanski_kth.toml`` (``coburst campaign``):

    .venv/bin/python scripts/kth_comparison.py [--jobs 2] [--out out/kopanski_kth]
    .venv/bin/python scripts/kth_comparison.py --parts 1 2 3 --models alloc_only
    .venv/bin/python scripts/kth_comparison.py --policies backfill-sjf-1 maxutil-1.0-1 window-1
    .venv/bin/python scripts/kth_comparison.py --report-only
    .venv/bin/python scripts/kth_comparison.py --report-only --figures docs/figures

1. runs the campaign (``coburst campaign scripts/kopanski_kth.toml``: the workloads made once
   by ``scripts/make_kth_workloads.sh``, every (part, model, policy) through ``coburst run``
   with ``--enable-dynamic-jobs`` and its decision-time profile, ``--jobs`` runs at a time,
   or on a Dask cluster with ``--scheduler-address``), restricted to ``--parts``,
   ``--models`` and ``--policies`` (``--only``; the other runs stay pending); finished runs
   are skipped (resume: kill it, start it again);
2. prints, per model and policy (``--policies``: a subset, backfill-sjf-1 always included,
   e.g. the fast ones while the plan-based runs are pending), the mean over the parts that
   finished for every listed policy of
   the per-part means of waiting time, turnaround, slowdown and bounded slowdown (tau =
   600 s), each divided by backfill-sjf-1's mean on the same part (the thesis' normalised
   means), and writes OUT/summary.json.  The thesis' headline: the best plan-based
   policies about 0.80 (waiting time) and 0.73 (bounded slowdown);
3. with ``--figures DIR``, draws per model, over the same parts, the box plots of the means
   normalised to backfill-sjf-1 (``kth_<model>_normalised.png``) and the boxenplots of every
   job's waiting time and bounded slowdown (``kth_<model>_boxen.png``), with
   :mod:`coburst.analysis.plots` (the figures of ``coburst plot --kind normalised,boxen``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SPEC = ROOT / "scripts" / "kopanski_kth.toml"
POLICIES = ["backfill-sjf-1", "maxutil-1.0-1", "window-1", "plan-square-0", "plan-cube-0"]
# --variants: readings of Alg. 8 line 32 (plan-*-0 execute = "fill" / "plan")
VARIANTS_SPEC = ROOT / "scripts" / "kopanski_kth_variants.toml"
VARIANTS = ["backfill-sjf-1", "plan-square-0", "plan-square-0-plan", "plan-cube-0", "plan-cube-0-plan"]
MODELS = ["alloc_only", "io_aware"]
BASE = "backfill-sjf-1"
METRICS = ("waiting", "turnaround", "slowdown", "bounded_slowdown")


def figures(out: Path, summary: dict, fig_dir: Path) -> list[Path]:
    """``kth_<model>_{normalised,boxen}.png`` over the parts of ``summary`` (every policy done)."""
    from dataclasses import replace

    from coburst.analysis import plots
    from coburst.analysis.tables import analyze

    runs = finished_runs(out)
    written = []
    for model, info in summary.items():
        if not info["parts"]:
            continue
        paths = [runs[(model, p, pol)].parent for p in info["parts"] for pol in info["policies"]]
        runs_df, jobs_df = analyze(paths)
        figs = [replace(f, name=f"kth_{model}_{f.name}") for kind in ("normalised", "boxen")
                for f in plots.make(kind, runs_df, jobs_df, baseline=BASE)]
        written += plots.save(figs, fig_dir, ("png",))
    return written


_spec = SPEC


def finished_runs(out: Path) -> dict[tuple[str, int, str], Path]:
    """(model, part, policy) -> _jobs.csv of every finished run of the campaign in ``out``."""
    from coburst.campaign.executors import run_state
    from coburst.campaign.runner import PREFIX_NAME, runs_dir
    from coburst.campaign.spec import load_campaign

    camp = load_campaign(_spec, out=out)
    return {(r.params["model"], int(r.params["part"]), r.params["scheduler"]):
            runs_dir(out) / r.run_id / f"{PREFIX_NAME}_jobs.csv" for r in run_state(camp).done}


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
    runs = finished_runs(out) if (out / "campaign.toml").is_file() else {}
    for model in models:
        done = [p for p in parts if all((model, p, pol) in runs for pol in policies)]
        summary[model] = {"parts": done, "policies": list(policies), "normalised": {}}
        if not done:
            print(f"{model}: no part finished for every policy yet")
            continue
        means = {pol: {p: part_means(runs[(model, p, pol)]) for p in done}
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
    ap.add_argument("--variants", action="store_true",
                    help="the readings of Alg. 8 line 32 instead (scripts/kopanski_kth_variants.toml, "
                         f"policies {', '.join(VARIANTS)}; default --out out/kopanski_kth_variants)")
    ap.add_argument("--out", type=Path, default=None, help="the campaign's output folder")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="runs at a time")
    ap.add_argument("--scheduler-address", default=None, help="run on this Dask cluster (tcp://HOST:PORT)")
    ap.add_argument("--parts", type=int, nargs="+", default=list(range(1, 17)))
    ap.add_argument("--models", nargs="+", choices=MODELS, default=MODELS)
    ap.add_argument("--policies", nargs="+", choices=sorted(set(POLICIES) | set(VARIANTS)), default=None,
                    help=f"policies to run and report ({BASE} is always included)")
    ap.add_argument("--report-only", action="store_true", help="only print the table of what finished")
    ap.add_argument("--figures", type=Path, default=None, metavar="DIR",
                    help="also write kth_<model>_normalised.png and kth_<model>_boxen.png to DIR")
    args = ap.parse_args(argv)
    global _spec
    _spec, known = (VARIANTS_SPEC, VARIANTS) if args.variants else (SPEC, POLICIES)
    wanted = set(args.policies or known)
    if wanted - set(known):
        ap.error(f"--policies: {', '.join(sorted(wanted - set(known)))} not in this campaign ({', '.join(known)})")
    policies = [pol for pol in known if pol in wanted | {BASE}]
    out = (args.out or ROOT / "out" / ("kopanski_kth_variants" if args.variants else "kopanski_kth")).resolve()
    if not args.report_only:
        cmd = [sys.executable, "-m", "coburst", "campaign", str(_spec), "--out", str(out), "--jobs", str(args.jobs),
               "--only", "part=" + ",".join(map(str, args.parts)), "--only", "model=" + ",".join(args.models),
               "--only", "scheduler=" + ",".join(policies)]
        if args.scheduler_address:
            cmd += ["--scheduler-address", args.scheduler_address]
        code = subprocess.call(cmd)
        if code not in (0, 1):  # 1: some runs failed (listed above); the table shows the others
            return code
    summary = report(out, args.parts, args.models, policies)
    from coburst.fileio import atomic_write
    with atomic_write(out / "summary.json") as f:
        f.write(json.dumps(summary, indent=None, separators=(",", ":")) + "\n")
    if args.figures is not None:
        for path in figures(out, summary, args.figures):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
