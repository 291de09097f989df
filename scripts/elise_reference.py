"""Run ELiSE (nikosT/elise) on job lists that coburst generates; keep its results as test data.

    python scripts/elise_reference.py --elise /tmp/elise --python /tmp/elisevenv/bin/python \\
        --jobs 200 --seed 1 [--nodes 800] [--arrival zero|poisson --interarrival S] \\
        --out tests/data/elise/grvingt200_s1

The test data (``tests/data/elise/``) came from (ELiSE b6a212c, 2026-11-26)::

    --jobs 200 --seed 1 --nodes 64 --arrival zero --out tests/data/elise/g64_200_t0
    --jobs 200 --seed 2 --nodes 64 --arrival poisson --interarrival 5 --out tests/data/elise/g64_200_poisson
    --jobs 1000 --seed 3 --nodes 800 --arrival zero --out tests/data/elise/g800_1000_t0

ELiSE is not a dependency of coburst: give a work tree of its repository (``--elise``; e.g.
``git --git-dir=<mirror> archive HEAD``, or read every file with ``git show``) and a Python
with its run-time packages (``--python``: a venv with numpy, pandas, plotly, pyyaml,
procset==1.0, psutil).  What the script does, each step ELiSE's own:

1. draws the job list with ``coburst workload elise`` (Grvingt NAS seed, ELiSE's walltime
   1.4 x compact time) and writes it as an ELiSE job list (``<out>/jobs.csv``);
2. writes an ELiSE project file: one input (the cluster ``--nodes`` x (16, 16) cores,
   Grvingt; the "List Generator" over that list; ELiSE's published pool
   ``pools/lm-remake-g5k.nancy.grvingt-NAS.json``), four schedulers (FIFO; EASY; Random Ranks
   Co-Scheduler = EASY-Co; Filler Co-Scheduler; the last three with ``backfill_enabled``) and
   the ``get_workload`` action;
3. runs ``framework/batch/submit.py -f <project> -p mp --export_reports <dir>`` (ELiSE's
   command line: progress server, one process per simulation) and copies its results
   (``workloads/sim_<i>_input_0_scheduler_<i>.csv``) to ``<out>/<policy>.csv`` without the
   ``Assigned Processors`` column (it holds every core of every job: 10x the size) and its
   ``time_reports.csv``.

ELiSE at HEAD (b6a212c, "Add spread mechanism") reads ``spread_timelogs`` from every load of a
pool, which its published pools do not have (KeyError): the script adds ``"spread_timelogs": []``
to a copy of the pool, which gives what ELiSE did before that commit (a spread job alone runs
at the best speedup of its heatmap row: ``get_med_speedup`` returns None, ``max_speedup`` falls
back to the row's values).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from coburst.analysis.elise import job_list_text  # noqa: E402
from coburst.models.heatmap import bundled_seed  # noqa: E402
from coburst.workloads.elise import generate  # noqa: E402

POOL = "pools/lm-remake-g5k.nancy.grvingt-NAS.json"
SCHEDULERS = [("fifo", "FIFO Scheduler", False), ("easy", "EASY Scheduler", True),
              ("easy-co", "Random Ranks Co-Scheduler", True), ("filler", "Filler Co-Scheduler", True)]


def yaml_quote(text: str) -> str:
    return json.dumps(text)  # JSON strings are YAML strings


def run_elise(elise: Path, python: str, listing: str, nodes: int, schedulers, tmp: Path) -> float:
    """Run ELiSE (work tree ``elise``, interpreter ``python``) on an ELiSE job list over
    ``nodes`` Grvingt nodes with ``schedulers`` (``(label, ELiSE name, backfill)`` each) in
    the empty directory ``tmp``; return the whole command's wall time.  ELiSE writes its
    results to ``tmp/results/workloads/sim_<i>_input_0_scheduler_<i>.csv`` and its own
    simulation-loop times to ``tmp/reports/time_reports.csv`` (also used by
    ``benchmarks/bench_elise.py``)."""
    pool = json.loads((elise / POOL).read_text())
    loads = []
    for text in pool["loads"]:
        load = json.loads(text)
        load.setdefault("spread_timelogs", [])
        loads.append(json.dumps(load))
    pool["loads"] = loads
    (tmp / "pool.json").write_text(json.dumps(pool))
    lines = ["name: coburst-reference", "description: coburst's ELiSE reference runs", "inputs:",
             "- cluster:", f"    nodes: {nodes}", "    socket-conf: [16, 16]",
             "  generator:", "    type: List Generator", f"    arg: {yaml_quote(listing)}",
             f"  json: {yaml_quote(str(tmp / 'pool.json'))}",
             f"  loads-machine: {yaml_quote(pool['machine'])}", f"  loads-suite: {yaml_quote(pool['suite'])}",
             "schedulers:"]
    for _, name, bf in schedulers:
        lines += [f"- base: {yaml_quote(name)}", f"  backfill_enabled: {'true' if bf else 'false'}"]
    lines += ["actions:", "  get_workload:", "    inputs: all", "    schedulers: all",
              f"    dir: {yaml_quote(str(tmp / 'results'))}"]
    (tmp / "project.yaml").write_text("\n".join(lines) + "\n")
    # ELiSE starts its helpers as "python <file>": the given Python first on PATH
    env = dict(os.environ, PYTHONPATH="", PATH=f"{Path(python).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    t0 = time.perf_counter()
    subprocess.run([python, str(elise / "framework" / "batch" / "submit.py"), "-f", str(tmp / "project.yaml"),
                    "-p", "mp", "--export_reports", str(tmp / "reports")], cwd=tmp, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elise", required=True, help="ELiSE work tree (holds framework/ and pools/)")
    ap.add_argument("--python", required=True, help="a Python with ELiSE's packages")
    ap.add_argument("--jobs", type=int, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--nodes", type=int, default=800)
    ap.add_argument("--arrival", default="zero")
    ap.add_argument("--interarrival", type=float, default=10.0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    elise = Path(args.elise).resolve()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    doc = generate(bundled_seed("grvingt-nas"), args.jobs, cores_per_node=32, units_per_node=4,
                   arrival=args.arrival, interarrival=args.interarrival, seed=args.seed, max_nodes=args.nodes)
    listing = job_list_text(doc)
    (out / "jobs.csv").write_text(listing)
    with tempfile.TemporaryDirectory(prefix="elise-ref-") as tmp:
        tmp = Path(tmp)
        wall = run_elise(elise, args.python, listing, args.nodes, SCHEDULERS, tmp)
        for i, (policy, _, _) in enumerate(SCHEDULERS):
            src = tmp / "results" / "workloads" / f"sim_{i}_input_0_scheduler_{i}.csv"
            if not src.is_file():
                sys.exit(f"ELiSE wrote no results for {policy} ({src}): see its log above")
            rows = list(csv.reader(io.StringIO(src.read_text())))
            buf = io.StringIO()
            w = csv.writer(buf, lineterminator="\n")
            for row in rows:
                w.writerow(row[:18] + [""] if len(row) > 18 else row)
            (out / f"{policy}.csv").write_text(buf.getvalue())
        shutil.copy(tmp / "reports" / "time_reports.csv", out / "time_reports.csv")
    print(f"{out}: {args.jobs} jobs, 4 schedulers, ELiSE ran in {wall:.1f} s (whole command)", file=sys.stderr)


if __name__ == "__main__":
    main()
