"""Benchmark: coburst's elastic mode against ElastiSim, wall time on a larger malleable workload.

    .venv/bin/python benchmarks/bench_elastic.py [--jobs 500] [--repeat 3] [--seed 1]

The workload: ``--jobs`` jobs (seeded) on the 16-node platform of tests/data/elastisim
(``cluster16_lat0.xml``), arriving as a Poisson process (mean gap 90 s); 60% malleable, 20% moldable, 20% rigid;
one phase of 10 to 40 iterations of a compute task (flops split over the nodes) and an Amdahl
task, a reconfiguration cost ``1 + 0.05 * num_nodes``.  coburst runs it in process with the
``equipartition`` policy; ElastiSim (when located) with the equipartition scheduler of
tests/data/elastisim/equipartition_elastisim.py (the same rules), over ZeroMQ, the way it runs.

ElastiSim is located through environment variables (nothing is built or fetched here):

* ``COBURST_ELASTISIM``: the ``elastisim`` executable;
* ``COBURST_ELASTISIM_PYTHON``: a Python with ``pyzmq`` and ``elastisim_python`` importable
  (default: this one); ``COBURST_ELASTISIM_PYTHONPATH`` is added to its ``PYTHONPATH``.

Without ``COBURST_ELASTISIM`` only coburst's figure is printed, and the script says so.  Figures
are medians of ``--repeat`` runs, wall time (ElastiSim's includes its scheduler process), with
the date, the machine and the load average.  As a check that both simulated the same thing,
the script prints the makespans and how many jobs start and end at the same dates in both (to
ElastiSim's 6 printed digits), and the first date where a job's differ: the two agree job for
job until two events share a date (a job's scheduling point and another's end, say), which
coburst's policy sees in one message and ElastiSim's scheduler one after the other
(docs/tutorials/malleable.md, "Against ElastiSim"); from there the runs may part.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATA = ROOT / "tests" / "data" / "elastisim"
PLATFORM = DATA / "cluster16_lat0.xml"
SCHEDULER = DATA / "equipartition_elastisim.py"
SPEED = 1e9


def workload(n: int, seed: int) -> dict:
    """coburst's format (the elastic fields of Batsim jobs and profiles)."""
    rng = random.Random(seed)
    jobs, profiles, t = [], {}, 0.0
    for i in range(1, n + 1):
        t += rng.expovariate(1 / 90.0)
        kind = rng.choices(["malleable", "moldable", "rigid"], [0.6, 0.2, 0.2])[0]
        lo = rng.choice([1, 2, 4])
        hi = rng.choice([8, 12, 16])
        res = rng.choice([2, 4, 8])
        res = min(max(res, lo), hi)
        name = f"p{i}"
        iters = rng.randint(10, 40)
        flops = rng.choice([1, 2, 4, 8]) * 1e10
        seconds = rng.choice([5, 10, 20])
        serial = rng.choice([0.02, 0.05, 0.1])
        profiles[name] = {"type": "delay", "delay": 100, "elastic": {
            "on_reconfiguration": "1 + 0.05 * num_nodes",
            "phases": [{"iterations": iters, "tasks": [
                {"type": "compute", "flops": repr(flops)},
                {"type": "compute", "seconds": seconds, "model": "amdahl", "serial_fraction": serial}]}]}}
        elastic = {"type": kind}
        if kind != "rigid":
            elastic.update(num_nodes_min=lo, num_nodes_max=hi)
        jobs.append({"id": i, "subtime": round(t, 3), "walltime": -1, "res": res, "profile": name,
                     "elastic": elastic})
    return {"nb_res": 16, "jobs": jobs, "profiles": profiles}


def elastisim_inputs(doc: dict, folder: Path) -> Path:
    """ElastiSim's jobs file, application models and configuration for ``doc``; the configuration's path."""
    jobs = []
    for job in doc["jobs"]:
        app = doc["profiles"][job["profile"]]["elastic"]
        phases = []
        for ph in app["phases"]:
            tasks = []
            for task in ph["tasks"]:
                if "flops" in task:
                    tasks.append({"type": "cpu", "flops": task["flops"], "computation_pattern": "all_ranks"})
                else:
                    s = task["serial_fraction"]
                    tasks.append({"type": "cpu", "flops": f"{task['seconds']} * {SPEED:g} * ({s} + (1 - {s}) / num_nodes)",
                                  "computation_pattern": "uniform"})
            phases.append({"iterations": ph["iterations"], "tasks": tasks})
        model = {"on_reconfiguration": {"tasks": [{"type": "idle", "delay": app["on_reconfiguration"],
                                                   "pattern": "uniform"}]}, "phases": phases}
        path = folder / f"{job['profile']}.json"
        path.write_text(json.dumps(model))
        e = job["elastic"]
        entry = {"type": e["type"], "submit_time": job["subtime"], "application_model": str(path)}
        if e["type"] == "rigid":
            entry["num_nodes"] = job["res"]
        else:
            entry.update(num_nodes_min=e["num_nodes_min"], num_nodes_max=e["num_nodes_max"])
        jobs.append(entry)
    return elastisim_config(folder, jobs, PLATFORM)


def elastisim_config(folder: Path, jobs: list[dict], platform_file: Path) -> Path:
    """ElastiSim's ``jobs.json`` of ``jobs`` and its ``config.json`` in ``folder`` (the scheduler
    called at submissions, ends and scheduling points; statistics written there); returns the
    configuration's path."""
    (folder / "jobs.json").write_text(json.dumps({"jobs": jobs}))
    config = {"jobs_file": str(folder / "jobs.json"), "platform_file": str(platform_file),
              "zmq_url": f"ipc://{folder}/elastisim.ipc", "schedule_on_job_submit": True,
              "schedule_on_job_finalize": True, "schedule_on_scheduling_point": True, "show_progress_bar": False,
              "job_statistics": str(folder / "job_statistics.csv"),
              "node_utilization": str(folder / "node_utilization.csv")}
    path = folder / "config.json"
    path.write_text(json.dumps(config))
    return path


def run_coburst(path: Path, folder: Path) -> tuple[float, float, list[tuple[float, float]]]:
    """Wall time, makespan, (start, end) of the jobs in submission order."""
    from coburst.adapter.elastic import run_elastic

    t0 = time.perf_counter()
    result = run_elastic(PLATFORM, [path], "equipartition", folder / "co")
    wall = time.perf_counter() - t0
    with open(result.jobs_csv, newline="") as f:
        rows = sorted(csv.DictReader(f), key=lambda r: int(r["job_id"]))
    times = [(float(r["starting_time"]), float(r["finish_time"])) for r in rows]
    return wall, max(end for _, end in times), times


def run_elastisim(binary: str, config: Path, folder: Path) -> tuple[float, float, list[tuple[float, float]]]:
    python = os.environ.get("COBURST_ELASTISIM_PYTHON", sys.executable)
    env = dict(os.environ)
    extra = os.environ.get("COBURST_ELASTISIM_PYTHONPATH")
    if extra:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (extra, env.get("PYTHONPATH")) if p)
    url = json.loads(config.read_text())["zmq_url"]
    t0 = time.perf_counter()
    sim = subprocess.Popen([binary, str(config), "--log=root.thresh:critical"], cwd=folder,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    sched = subprocess.Popen([python, str(SCHEDULER), url], cwd=folder, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, err = sim.communicate(timeout=3600)
    _, serr = sched.communicate(timeout=60)
    wall = time.perf_counter() - t0
    if sim.returncode or sched.returncode:
        raise SystemExit(f"ElastiSim failed ({sim.returncode}, scheduler {sched.returncode}):\n{err[-2000:]}\n{serr}")
    with open(folder / "job_statistics.csv", newline="") as f:
        rows = sorted(csv.DictReader(f), key=lambda r: int(r["ID"]))  # (ids in submission order)
    times = [(float(r["Start Time"]), float(r["End Time"])) for r in rows]
    return wall, max(end for _, end in times), times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    binary = os.environ.get("COBURST_ELASTISIM")
    doc = workload(args.jobs, args.seed)
    print(f"date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; machine {platform.machine()} "
          f"{platform.processor() or platform.system()}, {os.cpu_count()} cpus, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; python {platform.python_version()}")
    print(f"workload: {args.jobs} jobs (seed {args.seed}; "
          f"{sum(j['elastic']['type'] == 'malleable' for j in doc['jobs'])} malleable) on {PLATFORM.name}, "
          f"equipartition; medians of {args.repeat} runs, wall time")
    co, es = [], []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / "w.json"
        path.write_text(json.dumps(doc))
        config = elastisim_inputs(doc, folder) if binary else None
        for _ in range(args.repeat):
            co.append(run_coburst(path, folder))
            if binary:
                es.append(run_elastisim(binary, config, folder))
    co_wall = statistics.median(w for w, _, _ in co)
    print(f"{'':10} {'wall (s)':>10} {'makespan (s)':>14}")
    print(f"{'coburst':10} {co_wall:10.3f} {co[0][1]:14.3f}")
    if binary:
        es_wall = statistics.median(w for w, _, _ in es)
        print(f"{'ElastiSim':10} {es_wall:10.3f} {es[0][1]:14.3f}")
        print(f"ratio ElastiSim / coburst: {es_wall / co_wall:.2f}")
        # the same simulation? ElastiSim prints 6 significant digits
        gaps = [max(abs(a - c), abs(b - d)) for (a, b), (c, d) in zip(co[0][2], es[0][2])]
        differ = [min(c[0], e[0]) for g, c, e in zip(gaps, co[0][2], es[0][2]) if g > 1e-5 * max(1.0, e[1])]
        print(f"per-job start and end: {len(gaps) - len(differ)} of {len(gaps)} jobs at the same dates in both"
              + (f"; the first to differ starts at {min(differ):.3f} s, the largest difference {max(gaps):.3f} s"
                 if differ else ""))
    else:
        print("ElastiSim not located (set COBURST_ELASTISIM to its executable): coburst's figure only")
    return 0


if __name__ == "__main__":
    sys.exit(main())
