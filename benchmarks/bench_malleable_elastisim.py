"""Benchmark: coburst's elastic mode against ElastiSim on the KTH-SP2 log made malleable, wall time.

    .venv/bin/python benchmarks/bench_malleable_elastisim.py [--jobs N] [--repeat 3] [--share 0.5] [--swf PATH]

The workload: the KTH-SP2 log (``--swf PATH``, else ``KTH-SP2-1996-2.1-cln.swf`` in
``$COBURST_SWF_DIR``, else in ``../shared/data/swf`` beside the checkout: the Parallel Workloads
Archive's, not in this repository) as delay jobs on ``platforms/kth_sp2.xml`` (``coburst workload
swf --model delay``: all its usable jobs, or the first ``--jobs N``), then ``coburst workload
malleable --share 0.5`` (Amdahl fitted to each job's logged size, 10 iterations with a scheduling
point after each, seed 0).  The same jobs are written in ElastiSim's format: a malleable job with
its bounds and an application model of 10 iterations of a ``cpu`` task of ``T1 / 10 * speed * (s
+ (1 - s) / num_nodes)`` flops on each node (the Amdahl task as tests/data/elastisim/cases.json
writes it), a rigid job with one ``idle`` task of its logged run time.  Without walltimes, in
both: ElastiSim (at 26c03fb) counts a job whose run time equals its walltime (28 jobs of the
log) both completed and killed, ends the run while another job still runs and aborts ("Invalid
final job status"); so no job is killed in either.  ElastiSim's platform is ``kth_sp2.xml`` with its master host marked as the batch
system host.

It times, medians of ``--repeat`` runs, wall time:

* coburst: ``coburst run equipartition --transport inprocess`` (a child process, start-up
  included);
* ElastiSim, when located (as benchmarks/bench_elastic.py locates it: ``COBURST_ELASTISIM``,
  ``COBURST_ELASTISIM_PYTHON``, ``COBURST_ELASTISIM_PYTHONPATH``), with the equipartition
  scheduler of tests/data/elastisim/equipartition_elastisim.py (the same rules as coburst's
  ``equipartition``) over ZeroMQ, its scheduler process included; a run longer than
  ``--timeout`` seconds (default 3600) is stopped and reported as such (run a slice with
  ``--jobs``).

and prints the date, the machine, the load average before and after, both rates (jobs a
second of wall time) and the ratio ElastiSim / coburst.  As a check that both simulated the same
thing: the makespans and how many jobs start and end at the same dates (to ElastiSim's 6
printed digits, and 1e-3 s: the platform's latencies delay coburst's messages, not ElastiSim's
0-byte ones, docs/tutorials/malleable.md, "Against ElastiSim").
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))
from shared_data import missing, swf_log  # noqa: E402  (tests/shared_data.py: where the KTH log lies)
from bench_elastic import SCHEDULER, elastisim_config  # noqa: E402  (the equipartition scheduler for ElastiSim)

PLATFORM = ROOT / "platforms" / "kth_sp2.xml"
SPEED = 1e9  # flop/s of a node of kth_sp2.xml


def coburst(*args: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "coburst", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"coburst {' '.join(args)} failed:\n{proc.stderr}")


def elastisim_platform(folder: Path) -> Path:
    """kth_sp2.xml with its master host marked as ElastiSim's batch system host."""
    xml = PLATFORM.read_text()
    plain = '<host id="master_host" speed="1Gf"/>'
    if plain not in xml:
        sys.exit(f"{PLATFORM}: no {plain!r} to mark as ElastiSim's batch system host")
    path = folder / "kth_sp2_elastisim.xml"
    path.write_text(xml.replace(plain, '<host id="master_host" speed="1Gf"><prop id="batch_system" value="true"/>'
                                       "</host>"))
    return path


def elastisim_inputs(doc: dict, folder: Path) -> Path:
    """ElastiSim's jobs file, application models (one a job, in ``folder/models``) and
    configuration for the Batsim workload ``doc``; the configuration's path."""
    models = folder / "models"
    models.mkdir(exist_ok=True)
    jobs = []
    for job in doc["jobs"]:
        elastic = job.get("elastic")
        entry = {"submit_time": job["subtime"]}
        if float(job.get("walltime", -1)) > 0:
            entry["walltime"] = job["walltime"]
        if elastic is None:  # a rigid job as logged: its run time
            delay = doc["profiles"][job["profile"]]["delay"]
            model = {"phases": [{"iterations": 1, "scheduling_point": False,
                                 "tasks": [{"type": "idle", "delay": repr(float(delay)), "pattern": "uniform"}]}]}
            entry.update(type="rigid", num_nodes=job["res"])
        else:
            app = elastic["application"]
            phases = []
            for ph in app["phases"]:
                tasks = []
                for task in ph["tasks"]:
                    if task.get("model") != "amdahl":
                        sys.exit(f"job {job['id']}: a task {task} (the recipe's are Amdahl compute tasks)")
                    s = task["serial_fraction"]
                    tasks.append({"type": "cpu", "flops": f"({task['seconds']!r}) * {SPEED:g} * ({s!r} + (1 - {s!r}) "
                                                          "/ num_nodes)", "computation_pattern": "uniform"})
                phases.append({"iterations": ph["iterations"], "scheduling_point": True, "tasks": tasks})
            model = {"phases": phases}
            cost = str(app.get("on_reconfiguration", "0"))
            if cost.strip() not in ("0", "0.0"):
                model["on_reconfiguration"] = {"tasks": [{"type": "idle", "delay": cost, "pattern": "uniform"}]}
            entry.update(type="malleable", num_nodes_min=elastic["num_nodes_min"],
                         num_nodes_max=elastic["num_nodes_max"])
        path = models / f"{job['id']}.json"
        path.write_text(json.dumps(model))
        entry["application_model"] = str(path)
        jobs.append(entry)
    return elastisim_config(folder, jobs, elastisim_platform(folder))


def children_cpu() -> float:
    """CPU seconds (user and system) of the child processes waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_coburst(workload: Path, out: Path) -> tuple[float, list[tuple[float, float]], float]:
    """Wall time; (start, end) of each job in the workload's order; CPU time."""
    cpu, start = children_cpu(), time.perf_counter()
    coburst("run", "equipartition", "-q", "--transport", "inprocess", "-p", str(PLATFORM), "-w", str(workload),
            "-e", str(out))
    wall, cpu = time.perf_counter() - start, children_cpu() - cpu
    with open(f"{out}_jobs.csv", newline="") as f:
        rows = sorted(csv.DictReader(f), key=lambda r: int(r["job_id"]))
    return wall, [(float(r["starting_time"]), float(r["finish_time"])) for r in rows], cpu


def run_elastisim(binary: str, config: Path, folder: Path, timeout: float) -> tuple[float, list | None, float]:
    """Wall time (ElastiSim and its scheduler); (start, end) of each job in submission order, or
    None when the run was stopped at ``timeout``; CPU time (both processes)."""
    python = os.environ.get("COBURST_ELASTISIM_PYTHON", sys.executable)
    env = dict(os.environ)
    extra = os.environ.get("COBURST_ELASTISIM_PYTHONPATH")
    if extra:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (extra, env.get("PYTHONPATH")) if p)
    url = json.loads(config.read_text())["zmq_url"]
    cpu, start = children_cpu(), time.perf_counter()
    sim = subprocess.Popen([binary, str(config), "--log=root.thresh:critical"], cwd=folder,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    sched = subprocess.Popen([python, str(SCHEDULER), url], cwd=folder, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _, err = sim.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        sim.kill()
        sched.kill()
        sim.communicate()
        sched.communicate()
        return time.perf_counter() - start, None, children_cpu() - cpu
    _, serr = sched.communicate(timeout=120)
    wall, cpu = time.perf_counter() - start, children_cpu() - cpu
    if sim.returncode or sched.returncode:
        sys.exit(f"ElastiSim failed ({sim.returncode}, scheduler {sched.returncode}):\n{err[-2000:]}\n{serr[-2000:]}")
    with open(folder / "job_statistics.csv", newline="") as f:
        rows = sorted(csv.DictReader(f), key=lambda r: int(r["ID"]))  # (ids in submission order)
    return wall, [(float(r["Start Time"]), float(r["End Time"])) for r in rows], cpu


def stamp() -> str:
    return (f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {platform.node()} "
            f"({platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load "
            f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}), Python {platform.python_version()}")


def log_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that choose the log and how it is made malleable, and the runs' count."""
    parser.add_argument("--jobs", type=int, help="the first N usable jobs of the log (default: all)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each (default 3)")
    parser.add_argument("--share", default="0.5", help="share of the jobs made malleable (default 0.5)")
    parser.add_argument("--swf", type=Path, help="the KTH-SP2 log (default KTH-SP2-1996-2.1-cln.swf in "
                                                 "$COBURST_SWF_DIR, else in ../shared/data/swf beside the checkout)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    log_arguments(parser)
    parser.add_argument("--elastisim-repeat", type=int, help="runs of ElastiSim (default: --repeat)")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds an ElastiSim run may take (default "
                                                                    "3600)")
    args = parser.parse_args()
    log = args.swf or swf_log()
    if not log.exists():
        parser.error(f"--swf {args.swf}: no such file" if args.swf else missing(log))
    binary = os.environ.get("COBURST_ELASTISIM")
    print(f"start: {stamp()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        rigid, malleable = tmp / "rigid.json", tmp / "malleable.json"
        coburst("workload", "swf", str(log), "--model", "delay", "-p", str(PLATFORM), "-o", str(rigid), "-q",
                *(["--max-jobs", str(args.jobs)] if args.jobs else []))
        coburst("workload", "malleable", str(rigid), "-o", str(malleable), "--share", args.share, "--seed", "0", "-q")
        doc = json.loads(malleable.read_text())
        # no walltimes, in either: ElastiSim (26c03fb) counts a job whose run time equals its walltime
        # both completed and killed, stops one job early and aborts ("Invalid final job status")
        for job in doc["jobs"]:
            job["walltime"] = -1
        malleable.write_text(json.dumps(doc))
        n = len(doc["jobs"])
        n_malleable = sum("elastic" in j for j in doc["jobs"])
        es_dir = tmp / "elastisim"
        es_dir.mkdir()
        config = elastisim_inputs(doc, es_dir) if binary else None
        co, es = [], []
        es_repeat = args.repeat if args.elastisim_repeat is None else args.elastisim_repeat
        for k in range(max(args.repeat, es_repeat)):  # (interleaved: both see the same load)
            if k < args.repeat:
                co.append(run_coburst(malleable, tmp / f"co{k}"))
                print(f"  run {k + 1}: coburst wall {co[-1][0]:.2f} s, CPU {co[-1][2]:.2f} s", flush=True)
            if binary and k < es_repeat and (not es or es[-1][1] is not None):
                es.append(run_elastisim(binary, config, es_dir, args.timeout))
                print(f"  run {k + 1}: ElastiSim wall {es[-1][0]:.2f} s, CPU {es[-1][2]:.2f} s"
                      + ("" if es[-1][1] is not None else " (stopped)"), flush=True)
        with open(tmp / "co0_reconfigurations.csv") as f:
            resizes = sum(1 for _ in f) - 1
    print(f"end:   {stamp()}")
    print(f"KTH-SP2 {'all ' if not args.jobs else 'first '}{n} jobs, {n_malleable} malleable (share {args.share}), "
          f"{resizes} resizes in coburst's run; equipartition; medians of {args.repeat} runs, wall time")
    co_wall, co_cpu = statistics.median(w for w, _, _ in co), statistics.median(c for _, _, c in co)
    print(f"  {'coburst (in process)':24s} wall {co_wall:9.2f} s  {n / co_wall:8.1f} jobs/s  CPU {co_cpu:9.2f} s  "
          f"makespan {max(e for _, e in co[0][1]):.1f}  ({len(co)} runs)")
    if not binary:
        print("ElastiSim not located (set COBURST_ELASTISIM to its executable): coburst's figure only")
        return
    done = [(w, c) for w, t, c in es if t is not None]
    if not done:
        print(f"  {'ElastiSim':24s} stopped after {es[0][0]:.0f} s (--timeout {args.timeout:g}): run a slice (--jobs)")
        return
    es_wall, es_cpu = statistics.median(w for w, _ in done), statistics.median(c for _, c in done)
    times = next(t for _, t, _ in es if t is not None)
    print(f"  {'ElastiSim + scheduler':24s} wall {es_wall:9.2f} s  {n / es_wall:8.1f} jobs/s  CPU {es_cpu:9.2f} s  "
          f"makespan {max(e for _, e in times):.1f}  ({len(done)} run{'s' if len(done) > 1 else ''})")
    print(f"  ratio ElastiSim / coburst: wall {es_wall / co_wall:.1f}, CPU {es_cpu / co_cpu:.1f}")
    # (ElastiSim prints 6 significant digits: 1e-3 s, plus 6e-6 of the date)
    same = sum(abs(a - c) <= 1e-3 + 6e-6 * abs(c) and abs(b - d) <= 1e-3 + 6e-6 * abs(d)
               for (a, b), (c, d) in zip(co[0][1], times))
    print(f"  per-job start and end at the same dates (to ElastiSim's 6 digits, and 1e-3 s): {same} of {n} jobs")


if __name__ == "__main__":
    main()
