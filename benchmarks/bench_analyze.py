"""``coburst analyze`` on a long ``_jobs.csv`` (target: one million rows in <= 30 s, <= 500 MB).

    .venv/bin/python benchmarks/bench_analyze.py [--rows 1000000] [--dir /tmp/bench_analyze] [--no-baseline]

Writes a ``_jobs.csv`` of ``--rows`` delay jobs (deterministic: seed 0; the columns and number
formats of Batsim's, one job in ten with a ``bb=`` placement, one in eleven with a ``speedup=``),
then times, each in its own process (wall time, peak resident memory from ``wait4``):

* ``coburst analyze P -o DIR`` (the CLI: the file read in chunks, jobs tables written as read);
* the baseline: the whole-file reader kept as ``coburst.analysis.metrics._read_raw_jobs_whole``
  (the file decoded and parsed at once, as ``coburst analyze`` did before), the whole per-job
  table built (``analyze``) then written (``write_tables``).  Before the chunked reader the
  CLI took 21-27 s and 1.42 GB on the 1,024,812-row KTH file (2 shared cores).

Both write the same ``jobs.csv`` (checked).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HEADER = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success,"
          "final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,"
          "allocated_resources,consumed_energy,metadata\n")

BASELINE = r"""
import sys
import coburst.analysis.tables as t
from coburst.analysis.metrics import _read_raw_jobs_whole, fold_io_jobs

def whole(path, chunk_bytes=None):
    yield fold_io_jobs(_read_raw_jobs_whole(path), source=str(path))

t.iter_folded_jobs = whole
runs, jobs = t.analyze([sys.argv[1]])
t.write_tables(runs, jobs, sys.argv[2])
"""


def write_jobs(path: Path, n: int, block: int = 100_000) -> None:
    rng = np.random.default_rng(0)
    t = 0.0
    with open(path, "w") as fh:
        fh.write(HEADER)
        for lo in range(0, n, block):
            k = min(block, n - lo)
            ids = np.arange(lo, lo + k)
            submit = t + np.cumsum(rng.integers(0, 40, k)).astype(float)
            t = float(submit[-1])
            nodes = rng.integers(1, 64, k)
            wait = rng.integers(0, 20_000, k).astype(float)
            run = rng.integers(1, 50_000, k).astype(float)
            req = run + rng.integers(0, 3_600, k)
            first = rng.integers(0, 64, k)
            start, finish = submit + wait, submit + wait + run
            meta = np.where(ids % 10 == 0, "bb=" + (ids % 8).astype(str) + ":1000000", "")
            meta = np.where(ids % 11 == 0, "speedup=1.0", meta)
            rows = [f"{i},w0,d{int(r)},{s:.6f},{nd},{q:.6f},1,COMPLETED_SUCCESSFULLY,{b:.6f},{r:.6f},{f:.6f},"
                    f'{w:.6f},{w + r:.6f},{(w + r) / r:.6f},{a}-{a + nd - 1},-1.000000,"{m}"\n'
                    for i, s, nd, q, b, r, f, w, a, m in zip(ids.tolist(), submit.tolist(), nodes.tolist(),
                                                            req.tolist(), start.tolist(), run.tolist(),
                                                            finish.tolist(), wait.tolist(), first.tolist(),
                                                            meta.tolist())]
            fh.write("".join(rows))


def measure(argv: list[str]) -> tuple[float, float]:
    """(wall s, peak resident MB) of a child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{argv} failed ({proc.returncode})")
    return wall, usage.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--dir", default="/tmp/bench_analyze")
    ap.add_argument("--no-baseline", action="store_true")
    args = ap.parse_args()
    root = Path(args.dir)
    root.mkdir(parents=True, exist_ok=True)
    prefix = root / f"r{args.rows}"
    jobs = Path(f"{prefix}_jobs.csv")
    if not jobs.is_file():
        write_jobs(jobs, args.rows)
    print(f"{jobs}: {args.rows:,} rows, {jobs.stat().st_size / 1e6:.0f} MB")
    exe = Path(sys.executable)
    wall, rss = measure([str(exe), "-m", "coburst.cli.main", "analyze", str(prefix), "-o", str(root / "new"), "-q"])
    print(f"coburst analyze (chunked)     : {wall:6.1f} s  {rss:7.0f} MB peak RSS  {args.rows / wall:9,.0f} rows/s")
    if not args.no_baseline:
        wall, rss = measure([str(exe), "-c", BASELINE, str(prefix), str(root / "old")])
        print(f"baseline (whole-file reader)  : {wall:6.1f} s  {rss:7.0f} MB peak RSS  {args.rows / wall:9,.0f} rows/s")
        same = (root / "new" / "jobs.csv").read_bytes() == (root / "old" / "jobs.csv").read_bytes()
        print(f"jobs.csv identical: {same}")


if __name__ == "__main__":
    main()
