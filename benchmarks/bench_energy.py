"""What energy (``-E``) costs ``coburst run``, and what its hooks cost without ``-E``.

    .venv/bin/python benchmarks/bench_energy.py [--repeat N] [--jobs N] [--baseline REV]

Three variants of the same run (``coburst run --transport inprocess -q``, pybatsim's
``easyBackfill``, the first ``--jobs`` jobs of ``workloads/kth_sp2_delay_5000.json`` on
``platforms/kth_sp2.xml``, 100 nodes):

``baseline``  coburst at ``--baseline`` (default: the commit before energy was added),
              extracted with ``git archive`` and put first on ``PYTHONPATH``;
``no-E``      the working tree, without ``-E``;
``E``         the working tree with ``-E`` (the same platform with
              ``wattage_per_state="100:120:200"`` on every node).

Runs are sequential, variants interleaved within each repetition; figures are medians of
wall time and CPU time (user + sys of the run's process tree).  The ``_jobs.csv`` of
``baseline`` and ``no-E`` must be byte-identical.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COBURST = REPO / ".venv" / "bin" / "coburst"
DEFAULT_BASELINE = "5bb2456^"


def prepare(tmp: Path, jobs: int, baseline: str) -> tuple[Path, Path, Path, Path]:
    wl = json.loads((REPO / "workloads" / "kth_sp2_delay_5000.json").read_text())
    wl["jobs"] = wl["jobs"][:jobs]
    used = {j["profile"] for j in wl["jobs"]}
    wl["profiles"] = {k: v for k, v in wl["profiles"].items() if k in used}
    wl_path = tmp / "w.json"
    wl_path.write_text(json.dumps(wl))
    plat = (REPO / "platforms" / "kth_sp2.xml").read_text()
    energy = tmp / "kth_sp2_energy.xml"
    head, sep, tail = plat.partition('bb_lat="500us"/>')
    assert sep, "platforms/kth_sp2.xml changed: cannot add power properties"
    energy.write_text(head + 'bb_lat="500us">\n      <prop id="wattage_per_state" value="100:120:200"/>\n'
                      "    </cluster>" + tail)
    base = tmp / "baseline"
    base.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", baseline, "coburst"], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(base)
    return wl_path, REPO / "platforms" / "kth_sp2.xml", energy, base


def run_once(tmp: Path, name: str, platform: Path, wl: Path, extra: list[str], pythonpath: str | None):
    prefix = tmp / name
    cmd = [str(COBURST), "run", "easyBackfill", "--transport", "inprocess", "-q", "-p", str(platform),
           "-w", str(wl), "-e", str(prefix), *extra]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{name} failed:\n{proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, Path(f"{prefix}_jobs.csv").read_bytes()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--baseline", default=DEFAULT_BASELINE)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_energy_") as d:
        tmp = Path(d)
        wl, plat, energy_plat, base = prepare(tmp, args.jobs, args.baseline)
        variants = {"baseline": (plat, [], str(base)), "no-E": (plat, [], None), "E": (energy_plat, ["-E"], None)}
        figures: dict[str, list[tuple[float, float]]] = {k: [] for k in variants}
        outputs: dict[str, bytes] = {}
        for _ in range(args.repeat):
            for name, (platform, extra, pythonpath) in variants.items():
                wall, cpu, jobs_csv = run_once(tmp, name, platform, wl, extra, pythonpath)
                figures[name].append((wall, cpu))
                outputs[name] = jobs_csv
        same = outputs["baseline"] == outputs["no-E"]
        print(f"{args.jobs} jobs, easyBackfill, kth_sp2 (100 nodes), medians of {args.repeat} runs; "
              f"baseline = coburst at {args.baseline}; _jobs.csv baseline vs no-E: "
              f"{'identical' if same else 'DIFFERENT'}")
        base_wall = statistics.median(w for w, _ in figures["baseline"])
        base_cpu = statistics.median(c for _, c in figures["baseline"])
        for name in variants:
            wall = statistics.median(w for w, _ in figures[name])
            cpu = statistics.median(c for _, c in figures[name])
            print(f"  {name:9s} wall {wall:7.2f} s ({wall / base_wall:5.2f}x)   cpu {cpu:7.2f} s ({cpu / base_cpu:5.2f}x)")
        if not same:
            sys.exit(1)


if __name__ == "__main__":
    main()
