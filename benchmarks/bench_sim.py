"""Simulator benchmark: ``coburst sim`` + pybatsim ``easyBackfill``.

    .venv/bin/python benchmarks/bench_sim.py [--jobs 5000] [--repeat 3]

Scenarios (issue #2, item 10):

1. a generated 5000-job ``delay`` workload on a 96-node flat cluster;
2. a generated 2000-job ``parallel_homogeneous`` workload on the dragonfly platform of
   the burst-buffer study (``platforms/dragonfly96.xml``, spec §1).

For each run the script prints the wall time, the CPU time of the simulator process and
of the scheduler process (from ``resource.getrusage`` of each child), and the simulator's
share.  The baseline measured in the same run is the *scheduler* itself: the ratio
``simulator CPU / scheduler CPU`` says how much the simulated platform costs compared
with the pybatsim scheduler it drives (Batsim 4.2.1 + pybatsim: about 2.7 s wall /
2.5 s CPU for scenario 1 on a 2-core machine, for reference).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
CLUSTER96 = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="root" routing="Full">
    <cluster id="c" prefix="node_" suffix="" radical="0-95" speed="1Gf" bw="1250MBps" lat="50us"
             bb_bw="2500MBps" bb_lat="500us"/>
    <zone id="mz" routing="None"><host id="master_host" speed="1Gf"/></zone>
    <link id="ml" bandwidth="1250MBps" latency="100us"/>
    <zoneRoute src="mz" dst="c" gw_src="master_host" gw_dst="node_c_router"><link_ctn id="ml"/></zoneRoute>
  </zone>
</platform>
"""


def delay_workload(n: int, nodes: int, seed: int = 1) -> dict:
    """Poisson arrivals, log-uniform sizes and run times, walltime = 1.5 x run time."""
    rng = np.random.default_rng(seed)
    sub = np.cumsum(rng.exponential(60.0, n))
    res = np.minimum(nodes, np.round(2 ** rng.uniform(0, 5, n))).astype(int)
    run = np.round(10 ** rng.uniform(1, 3.5, n))
    jobs, profiles = [], {}
    for i in range(n):
        name = f"d{int(run[i])}"
        profiles[name] = {"type": "delay", "delay": int(run[i])}
        jobs.append({"id": i, "subtime": round(float(sub[i]), 3), "walltime": int(run[i] * 1.5),
                     "res": int(res[i]), "profile": name})
    return {"nb_res": nodes, "jobs": jobs, "profiles": profiles}


def ptask_workload(n: int, nodes: int, seed: int = 2) -> dict:
    rng = np.random.default_rng(seed)
    sub = np.cumsum(rng.exponential(30.0, n))
    res = np.minimum(nodes, np.round(2 ** rng.uniform(0, 4, n))).astype(int)
    cpu = np.round(10 ** rng.uniform(10, 12, n))  # 10..1000 s at 1 Gf
    jobs, profiles = [], {}
    for i in range(n):
        name = f"p{i}"
        profiles[name] = {"type": "parallel_homogeneous", "cpu": float(cpu[i]), "com": 1e8}
        jobs.append({"id": i, "subtime": round(float(sub[i]), 3), "walltime": int(cpu[i] / 1e9 * 3 + 60),
                     "res": int(res[i]), "profile": name})
    return {"nb_res": nodes, "jobs": jobs, "profiles": profiles}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_once(platform: Path, workload: Path, out: Path, extra: list[str], scheduler: str = "easyBackfill") -> dict:
    port = free_port()
    sched = subprocess.Popen([str(VENV_BIN / "pybatsim"), scheduler, "-s", f"tcp://127.0.0.1:{port}",
                              "-t", "60000", "-v", "error"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    t0 = time.perf_counter()
    sim = subprocess.Popen([str(VENV_BIN / "coburst"), "sim", "-p", str(platform), "-w", str(workload),
                            "-e", str(out), "-s", f"tcp://127.0.0.1:{port}", "-q", *extra],
                           stderr=subprocess.PIPE, text=True)
    _, sim_status, sim_usage = os.wait4(sim.pid, 0)
    wall = time.perf_counter() - t0
    _, _, sched_usage = os.wait4(sched.pid, 0)
    if os.waitstatus_to_exitcode(sim_status) != 0:
        raise SystemExit(f"coburst sim failed: {sim.stderr.read()}")
    sim_cpu = sim_usage.ru_utime + sim_usage.ru_stime
    sched_cpu = sched_usage.ru_utime + sched_usage.ru_stime
    return {"wall": wall, "sim_cpu": sim_cpu, "sched_cpu": sched_cpu}


def report(title: str, runs: list[dict], nb_jobs: int) -> None:
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"\n{title}")
    print(f"  wall time            {med['wall']:8.2f} s   ({nb_jobs / med['wall']:,.0f} jobs/s)")
    print(f"  simulator CPU        {med['sim_cpu']:8.2f} s")
    print(f"  scheduler CPU        {med['sched_cpu']:8.2f} s   (baseline: the scheduler process)")
    print(f"  simulator/scheduler  {med['sim_cpu'] / med['sched_cpu']:8.2f} x")
    print(f"  (median of {len(runs)} runs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--ptask-jobs", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "c96.xml").write_text(CLUSTER96)
        (tmp / "delay.json").write_text(json.dumps(delay_workload(args.jobs, 96)))
        runs = [run_once(tmp / "c96.xml", tmp / "delay.json", tmp / f"d{i}", []) for i in range(args.repeat)]
        report(f"{args.jobs}-job delay workload, 96-node cluster, pybatsim easyBackfill", runs, args.jobs)
        dragonfly = ROOT / "platforms" / "dragonfly96.xml"
        if dragonfly.exists():
            (tmp / "ptask.json").write_text(json.dumps(ptask_workload(args.ptask_jobs, 96)))
            # pybatsim's easyBackfill allocates storage ids too (it uses nb_resources), which Batsim
            # forbids for computing profiles: coburst's EASY allocates compute nodes only
            easy = str(ROOT / "schedulers" / "coburstEasy.py")
            runs = [run_once(dragonfly, tmp / "ptask.json", tmp / f"p{i}", [], easy) for i in range(args.repeat)]
            report(f"{args.ptask_jobs}-job parallel_homogeneous workload, dragonfly96, coburst EASY (backfill-1)",
                   runs, args.ptask_jobs)


if __name__ == "__main__":
    main()
