"""Large dragonflies with burst buffers in the linear form: file size, load time, runs.

    .venv/bin/python benchmarks/bench_dragonfly.py [--repeat N] [--no-batsim] [--batsim PATH] [--jobs N]

Platforms: ``coburst platform dragonfly --style cluster`` (SimGrid's ``<cluster
topology="DRAGONFLY">``, the burst-buffer roles in a ``coburst-roles`` zone property), one
burst-buffer node per chassis:

``dragonfly-1000``    ``--topo 5,1;10,1;5,1;4``: 1000 hosts (950 compute, 50 burst buffers);
``dragonfly-10000``   ``--topo 10,1;25,1;10,1;4``: 10,000 hosts (9750 compute, 250 burst buffers).

For each: the file's size; the load time (SimGrid 4.1 ``load_platform`` in a fresh process,
timed around the call); the wall time of a whole run with ``schedulers/coburstEasy.py``
(EASY backfilling with burst buffers) of 1 job (one 1 s delay job) and of ``--jobs`` jobs
(default 5000: ``bench_engines.scaling_workload`` delay jobs, each with a burst-buffer
request of 0, 1 or 4 GB per node drawn with seed 1): ``coburst run --transport inprocess``
and the real Batsim 4.2.1 + pybatsim, given the file's roles as ``-r`` (``coburst platform
info``).  coburst runs with the platform cache off (SimGrid loads the platform at every run,
as Batsim does).  Medians of ``--repeat`` runs (default 3); ratio = coburst / Batsim.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_engines  # noqa: E402
from bench_engines import COBURST, Case, RunFailed, find_batsim, run_engine, scaling_workload  # noqa: E402

bench_engines.ENV["COBURST_PLATFORM_CACHE"] = "off"  # (SimGrid loads the platform at every run)
ROOT = HERE.parent
SCHEDULER = str(ROOT / "schedulers" / "coburstEasy.py")
PLATFORMS = [("dragonfly-1000", "5,1;10,1;5,1;4", 950), ("dragonfly-10000", "10,1;25,1;10,1;4", 9750)]
LOAD = ("import sys, time, simgrid\n"
        "e = simgrid.Engine(['load', '--log=root.thres:critical'])\n"
        "t = time.perf_counter(); e.load_platform(sys.argv[1]); print(time.perf_counter() - t)\n")


def one_job(path: Path) -> Path:
    path.write_text(json.dumps({"nb_res": 1, "jobs": [{"id": "1", "subtime": 1, "res": 1, "profile": "d"}],
                                "profiles": {"d": {"type": "delay", "delay": 1}}}) + "\n")
    return path


def bb_jobs(path: Path, jobs: int, nodes: int) -> Path:
    """``scaling_workload(jobs, nodes)`` with a burst-buffer request per job (0, 1 or 4 GB per node)."""
    import numpy as np

    doc = json.loads(scaling_workload(jobs, nodes).read_text())
    rng = np.random.default_rng(1)
    for job, bb in zip(doc["jobs"], rng.choice([0, 10**9, 4 * 10**9], len(doc["jobs"]))):
        job["bb"] = int(bb)
    path.write_text(json.dumps(doc))
    return path


def load_time(platform: Path) -> float:
    out = subprocess.run([sys.executable, "-c", LOAD, str(platform)], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=5000)
    ap.add_argument("--no-batsim", action="store_true")
    ap.add_argument("--batsim", default=None)
    args = ap.parse_args()
    batsim = None if args.no_batsim else find_batsim(args.batsim)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-dragonfly-") as tmp:
        tmp = Path(tmp)
        one = one_job(tmp / "one.json")
        for name, topo, compute in PLATFORMS:
            plat = tmp / f"{name}.xml"
            subprocess.run([str(COBURST), "platform", "dragonfly", "--style", "cluster", "--topo", topo,
                            "--no-record-command", "-o", str(plat)], check=True, capture_output=True)
            many = bb_jobs(tmp / f"{name}-jobs.json", args.jobs, compute)
            loads = [load_time(plat) for _ in range(args.repeat)]
            walls: dict[tuple[str, str], list[float]] = {}
            for r in range(args.repeat):
                for label, wl in (("1 job", one), (f"{args.jobs} jobs", many)):
                    case = Case(f"{name}-{label}", "", plat, wl, SCHEDULER, 1)
                    for engine, key in (("coburst-inprocess", "coburst"), ("batsim", "batsim")):
                        if engine == "batsim" and not batsim:
                            continue
                        d = tmp / f"{name}-{label.replace(' ', '')}-{key}{r}"
                        d.mkdir()
                        try:
                            walls.setdefault((label, key), []).append(run_engine(engine, case, d / "out",
                                                                                 batsim)["wall"])
                        except RunFailed as err:
                            print(f"{name} {label} {key}: {err}", file=sys.stderr)
                        else:
                            print(f"{name} {label} {key} #{r + 1}: {walls[(label, key)][-1]:.2f} s", file=sys.stderr)
            med = {k: statistics.median(v) for k, v in walls.items() if v}
            rows.append((name, plat.stat().st_size, statistics.median(loads), med))
    print(f"\n| platform | size (KB) | SimGrid 4.1 load (s) | run | coburst in process (s) | Batsim 4.2.1 (s) "
          "| coburst / Batsim |")
    print("|---|---:|---:|---|---:|---:|---:|")
    for name, size, load, med in rows:
        for label in ("1 job", f"{args.jobs} jobs"):
            c, b = med.get((label, "coburst")), med.get((label, "batsim"))
            ratio = f"{c / b:.2f}" if c and b else "-"
            print(f"| {name} | {size / 1e3:.1f} | {load:.3f} | {label} | {c if c is None else f'{c:.2f}'} "
                  f"| {'-' if b is None else f'{b:.2f}'} | {ratio} |")
    print(f"\nmedians of {args.repeat} runs; scheduler schedulers/coburstEasy.py; coburst with the platform cache off")


if __name__ == "__main__":
    main()
