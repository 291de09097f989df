"""Time ``coburst analyze`` + ``coburst report`` on a synthetic campaign of the KTH comparison's size.

16 workload parts x 2 job models x 5 policies = 160 runs of ~1800 jobs each, laid out as a campaign
folder (``runs/<id>/params.json``, ``status.json``, ``out_jobs.csv``; one workload JSON per
part with burst-buffer requests, the 96-node dragonfly platform).  The schedules are
synthetic (random waits, contiguous allocations): the figures measure the analysis, not a
scheduler.  Prints the time of each stage; the target is a report in under 30 s.

    .venv/bin/python benchmarks/bench_report.py [--parts 16] [--policies 5] [--jobs 1800] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

HEADER = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success,"
          "final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,"
          "allocated_resources,consumed_energy,metadata\n")


def make_campaign(root: Path, parts: int, policies: int, jobs: int, models: int = 2, nodes: int = 96) -> None:
    platform = ROOT / "platforms" / "dragonfly96.xml"
    root.mkdir(parents=True, exist_ok=True)
    for cell in range(parts * models):
        part, model = cell % parts, ["alloc-only", "io-aware"][cell // parts % 2]
        rng = np.random.default_rng(cell)
        submit = np.sort(rng.integers(0, 30 * 86400, jobs)).astype(float)
        res = np.minimum(rng.geometric(0.15, jobs), nodes)
        runtime = rng.lognormal(7, 1.5, jobs).round(3)
        bb = rng.integers(0, 4_000_000_000, jobs)
        wl = root / f"part{part}-{model}.json"
        wl.write_text(json.dumps({"nb_res": nodes, "jobs": [
            {"id": i, "subtime": float(submit[i]), "walltime": float(runtime[i] * 2), "res": int(res[i]),
             "profile": "p", "bb": int(bb[i])} for i in range(jobs)], "profiles": {"p": {"type": "delay", "delay": 1}}}))
        for pol in range(policies):
            prng = np.random.default_rng(1000 * cell + pol)
            wait = prng.exponential(2000 * (pol + 1), jobs).round(3)
            start = submit + wait
            finish = start + runtime
            first = prng.integers(0, nodes - res + 1)
            run = root / "runs" / f"{model}-part{part}-pol{pol}"
            run.mkdir(parents=True)
            lines = [HEADER]
            for i in range(jobs):
                alloc = f"{first[i]}-{first[i] + res[i] - 1}" if res[i] > 1 else f"{first[i]}"
                lines.append(f"{i},w0,p,{submit[i]:.6f},{res[i]},{runtime[i] * 2:.6f},1,COMPLETED_SUCCESSFULLY,"
                             f"{start[i]:.6f},{runtime[i]:.6f},{finish[i]:.6f},{wait[i]:.6f},"
                             f"{finish[i] - submit[i]:.6f},{(finish[i] - submit[i]) / runtime[i]:.6f},{alloc},-1,\n")
            (run / "out_jobs.csv").write_text("".join(lines))
            (run / "params.json").write_text(json.dumps({
                "scheduler": f"policy-{pol}", "options": "{}", "platform": str(platform), "workload": str(wl),
                "seed": 0, "engine": "coburst", "part": part + 1, "model": model}))
            (run / "status.json").write_text(json.dumps({"state": "done", "error": None, "wall_s": 1.0}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", type=int, default=16)
    ap.add_argument("--policies", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=1800)
    ap.add_argument("--models", type=int, default=2, choices=(1, 2), help="Alloc-Only, IO-Aware [default: both]")
    ap.add_argument("--keep", default=None, help="build the campaign (and report) in this folder and keep it")
    args = ap.parse_args()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_report."))
    try:
        if not (root / "runs").is_dir():
            t = time.perf_counter()
            make_campaign(root, args.parts, args.policies, args.jobs, args.models)
            print(f"synthetic campaign: {args.parts * args.policies * args.models} runs x {args.jobs} jobs "
                  f"({time.perf_counter() - t:.1f} s to write)")
        t0 = time.perf_counter()
        from coburst.analysis.report import build_report
        from coburst.analysis.tables import analyze, write_tables

        t_import = time.perf_counter()
        c0 = time.process_time()
        runs, jobs = analyze([root])
        t_an, c_an = time.perf_counter(), time.process_time()
        write_tables(runs, jobs, root / "analysis")
        t_w, c_w = time.perf_counter(), time.process_time()
        manifest = build_report(runs, jobs, root / "report.html", baseline="policy-0")
        t_r, c_r = time.perf_counter(), time.process_time()
        size = (root / "report.html").stat().st_size
        print(f"imports {t_import - t0:.1f} s, analyze {t_an - t_import:.1f} s ({len(runs)} runs, {len(jobs):,} jobs), "
              f"tables {t_w - t_an:.1f} s, report {t_r - t_w:.1f} s ({len(manifest['figures'])} figures, "
              f"{size / 1e6:.1f} MB); analyze + report: {t_an - t_import + t_r - t_w:.1f} s, "
              f"total {t_r - t0:.1f} s; CPU time analyze + report {c_an - c0 + c_r - c_w:.1f} s")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
