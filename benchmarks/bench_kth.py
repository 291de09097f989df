"""Benchmark: the full KTH-SP2 log, Alloc-Only model, ``backfill-sjf-1`` through ``coburst sim``.

    .venv/bin/python benchmarks/bench_kth.py [--jobs N] [--policy backfill-sjf-1] [--baseline fcfs] [--repeat 1]
                                             [--swf PATH]

The workload is generated deterministically into a temporary directory with the converter
(``coburst workload swf KTH-SP2-1996-2.1-cln.swf --seed 0``: all 28,453 usable jobs, or the
first ``--jobs N``; the log is ``--swf PATH``, else in ``$COBURST_SWF_DIR``, else in
``../shared/data/swf`` beside the checkout: the Parallel Workloads Archive's, not in this
repository) for ``platforms/dragonfly96.xml`` (96 compute nodes, 12 BB nodes).
Each run is two processes, as in benchmarks/bench_sim.py: the pybatsim scheduler
(``schedulers/coburstBackfill.py -o '{"policy": ...}'``) and ``coburst sim``; the script
prints the wall time, the CPU time of the simulator and of the scheduler (``os.wait4``
rusage of each child) and the ratios against a baseline policy measured in the same run
(default ``fcfs``: same simulator work, the cheapest decisions), so that the figures can be
compared across machines.  The load average is printed too: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT / "tests"))
from shared_data import missing, swf_log  # noqa: E402  (tests/shared_data.py: where the KTH log lies)

PLATFORM = ROOT / "platforms" / "dragonfly96.xml"
SCHEDULER = ROOT / "schedulers" / "coburstBackfill.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_workload(log: Path, path: Path, jobs: int | None) -> int:
    cmd = [sys.executable, "-m", "coburst", "workload", "swf", str(log), "--seed", "0", "-p", str(PLATFORM),
           "-q", "-o", str(path)]
    if jobs:
        cmd += ["--max-jobs", str(jobs)]
    subprocess.run(cmd, check=True)
    return len(json.loads(path.read_text())["jobs"])


def run_once(policy: str, workload: Path, out: Path) -> dict:
    port = free_port()
    endpoint = f"tcp://127.0.0.1:{port}"
    log = open(out.with_suffix(".sched.log"), "w")  # noqa: SIM115 - closed below
    sched = subprocess.Popen([str(VENV_BIN / "pybatsim"), str(SCHEDULER), "-o", json.dumps({"policy": policy}),
                              "-s", endpoint, "-t", "3600000", "-v", "error"], stdout=log, stderr=subprocess.STDOUT)
    t0 = time.perf_counter()
    sim = subprocess.Popen([str(VENV_BIN / "coburst"), "sim", "-p", str(PLATFORM), "-w", str(workload),
                            "-e", str(out), "-s", endpoint, "--timeout", "600", "-q"],
                           stderr=subprocess.PIPE, text=True)
    _, sim_status, sim_usage = os.wait4(sim.pid, 0)
    wall = time.perf_counter() - t0
    try:
        _, _, sched_usage = os.wait4(sched.pid, 0)
    finally:
        log.close()
    sim.returncode = os.waitstatus_to_exitcode(sim_status)
    if sim.returncode != 0:
        tail = out.with_suffix(".sched.log").read_text(errors="replace")[-2000:]
        raise SystemExit(f"coburst sim failed ({policy}): {sim.stderr.read()}\nscheduler:\n{tail}")
    return {"wall": wall, "sim_cpu": sim_usage.ru_utime + sim_usage.ru_stime,
            "sched_cpu": sched_usage.ru_utime + sched_usage.ru_stime}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=None, help="first N jobs only (default: the whole log)")
    parser.add_argument("--policy", default="backfill-sjf-1")
    parser.add_argument("--baseline", default="fcfs", help="policy measured in the same run for the ratios")
    parser.add_argument("--repeat", type=int, default=1, help="runs per policy (medians reported)")
    parser.add_argument("--swf", type=Path, help="the KTH-SP2 log (default KTH-SP2-1996-2.1-cln.swf in "
                                                 "$COBURST_SWF_DIR, else in ../shared/data/swf beside the checkout)")
    args = parser.parse_args()
    log = args.swf or swf_log()
    if not log.is_file():
        parser.error(f"--swf {args.swf}: no such file" if args.swf else missing(log))
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="coburst-bench-kth-") as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        n = make_workload(log, tmp / "kth.json", args.jobs)
        print(f"KTH-SP2 Alloc-Only, {n:,} jobs on {PLATFORM.name} (workload generated in "
              f"{time.perf_counter() - t0:.1f} s); load average {load0[0]:.1f} on {os.cpu_count()} CPUs")
        results = {}
        for policy in (args.baseline, args.policy):
            runs = [run_once(policy, tmp / "kth.json", tmp / f"{policy}-{i}") for i in range(args.repeat)]
            results[policy] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    base, main_ = results[args.baseline], results[args.policy]
    print(f"\n{'':22s}{args.policy:>16s}{args.baseline:>16s}{'ratio':>9s}")
    for key, label in (("wall", "wall time (s)"), ("sim_cpu", "simulator CPU (s)"), ("sched_cpu", "scheduler CPU (s)")):
        ratio = main_[key] / base[key] if base[key] else float("nan")
        print(f"{label:22s}{main_[key]:16.2f}{base[key]:16.2f}{ratio:8.2f}x")
    print(f"{'jobs/s (wall)':22s}{n / main_['wall']:16,.0f}{n / base['wall']:16,.0f}")
    load1 = os.getloadavg()
    print(f"(median of {args.repeat} run(s) per policy; load average at the end {load1[0]:.1f})")


if __name__ == "__main__":
    main()
