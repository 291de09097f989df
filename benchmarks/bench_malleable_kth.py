"""Benchmark: a trace-derived malleable workload against its rigid run, whole runs in process.

    .venv/bin/python benchmarks/bench_malleable_kth.py [--jobs N] [--repeat 3] [--share 0.5] [--swf PATH]

The workload: the KTH-SP2 log (``--swf PATH``, else ``KTH-SP2-1996-2.1-cln.swf`` in
``$COBURST_SWF_DIR``, else in ``../shared/data/swf`` beside the checkout: the Parallel Workloads
Archive's, not in this repository) as delay jobs on ``platforms/kth_sp2.xml`` (``coburst workload
swf --model delay``: all its usable jobs, or the first ``--jobs N``), then ``coburst workload
malleable --share 0.5`` (Amdahl fitted to each job's logged size, 10 iterations, seed 0).

It times, in process (``coburst run ... --transport inprocess``), medians of ``--repeat`` runs:

* ``rigid EASY``: ``coburst run easy`` on the delay workload (the rigid jobs as logged);
* ``malleable EASY``: ``coburst run malleable-easy`` on the malleable one (the simulator's
  elastic mode: iterations, scheduling points, resizes).

and prints the ratio malleable / rigid (target: at most 2), with the date, the machine and the
load average.  ElastiSim is not run here: ``bench_elastic.py`` measures it beside coburst when it
is located.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from shared_data import missing, swf_log  # noqa: E402  (tests/shared_data.py: where the KTH log lies)
from bench_malleable_elastisim import coburst, log_arguments  # noqa: E402  (this folder)

PLATFORM = ROOT / "platforms" / "kth_sp2.xml"


def timed(policy: str, workload: Path, out: Path) -> float:
    start = time.perf_counter()
    coburst("run", policy, "-q", "--transport", "inprocess", "-p", str(PLATFORM), "-w", str(workload), "-e", str(out))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    log_arguments(parser)
    args = parser.parse_args()
    log = args.swf or swf_log()
    if not log.exists():
        parser.error(f"--swf {args.swf}: no such file" if args.swf else missing(log))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        rigid, malleable = tmp / "rigid.json", tmp / "malleable.json"
        coburst("workload", "swf", str(log), "--model", "delay", "-p", str(PLATFORM), "-o", str(rigid), "-q",
                *(["--max-jobs", str(args.jobs)] if args.jobs else []))
        coburst("workload", "malleable", str(rigid), "-o", str(malleable), "--share", args.share, "--seed", "0", "-q")
        times: dict[str, list[float]] = {"rigid EASY": [], "malleable EASY": []}
        for k in range(args.repeat):  # (interleaved: both see the same load)
            times["rigid EASY"].append(timed("easy", rigid, tmp / f"r{k}"))
            times["malleable EASY"].append(timed("malleable-easy", malleable, tmp / f"m{k}"))
        with open(tmp / "m0_reconfigurations.csv") as f:
            resizes = sum(1 for _ in f) - 1
        with open(tmp / "r0_jobs.csv") as f:
            jobs = sum(1 for _ in f) - 1
    med = {name: statistics.median(v) for name, v in times.items()}
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {platform.node()} ({platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}), Python {platform.python_version()}")
    print(f"KTH-SP2 {jobs} jobs, share {args.share} malleable ({resizes} resizes in the malleable run); medians of "
          f"{args.repeat} whole runs in process:")
    for name, value in med.items():
        print(f"  {name:15s} {value:8.2f} s")
    print(f"  ratio malleable / rigid: {med['malleable EASY'] / med['rigid EASY']:.2f} (target <= 2)")


if __name__ == "__main__":
    main()
