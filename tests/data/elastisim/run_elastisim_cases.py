"""The cases run by both coburst and ElastiSim: each written once in coburst's workload format,
translated to ElastiSim's (jobs file, application models, configuration), run with ElastiSim and
the equipartition scheduler of equipartition_elastisim.py, and recorded in
tests/data/elastisim/cases.json with the inputs of both sides.

    python run_elastisim_cases.py ELASTISIM_BINARY OUT_JSON [CASE ...]

with a Python that has pyzmq, ELASTISIM_PYTHON_PATH naming the folder of elastisim_python,
ELASTISIM_COMMIT and ELASTISIM_PYTHON_COMMIT the commits they were built from (written into the
record's ``about``), and the scheduler equipartition_elastisim.py next to this file.  With CASE
names only those cases are run; the others are kept from OUT_JSON as they are.

A case runs on cluster16_lat0.xml unless it names its ``platform`` (a file next to this one).
Its ``elastisim_options`` say how its coburst tasks are written for ElastiSim where the two
models differ (:func:`es_phase_tasks`); a case with ``elastisim_equivalent_options`` is run a
second time with ElastiSim's input written in coburst's model, recorded as its
``elastisim_equivalent``.
"""

from __future__ import annotations

import csv
import json
import os
import platform as pyplatform
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPEED = 1e9  # flop/s of a node of cluster16_lat0.xml
PLATFORM = "cluster16_lat0.xml"


def cjob(jid, subtime, kind, res, profile, lo=None, hi=None):
    elastic = {"type": kind}
    if kind != "rigid":
        elastic.update(num_nodes_min=lo, num_nodes_max=hi)
    return {"id": jid, "subtime": subtime, "walltime": -1, "res": res, "profile": profile, "elastic": elastic}


def prof(phases, **costs):
    return {"type": "delay", "delay": 100, "elastic": {**costs, "phases": phases}}


def flops_task(expr):
    return {"type": "compute", "flops": expr}


def amdahl_task(seconds, s):
    return {"type": "compute", "seconds": seconds, "model": "amdahl", "serial_fraction": s}


def delay_task(expr):
    return {"type": "delay", "seconds": expr}


def node_flops_task(expr):
    return {"type": "compute", "flops": expr, "per_node": True}


def comm_task(expr, pattern):
    return {"type": "communication", "bytes": expr, "pattern": pattern}


def io_task(kind, expr, pattern):
    return {"type": kind, "bytes": expr, "pattern": pattern}


CASES = {
    "rigid": {
        "description": "five rigid jobs, first come first served without backfilling (equipartition's start rule)",
        "jobs": [cjob(1, 0, "rigid", 8, "a"), cjob(2, 5, "rigid", 8, "b"), cjob(3, 10, "rigid", 4, "a"),
                 cjob(4, 15, "rigid", 16, "c"), cjob(5, 20, "rigid", 2, "b")],
        "profiles": {
            "a": prof([{"iterations": 10, "tasks": [flops_task("4e10"), delay_task("0.5")]}]),
            "b": prof([{"iterations": 6, "tasks": [flops_task("6e10")]}]),
            "c": prof([{"iterations": 3, "tasks": [flops_task("1.6e11")]}]),
        },
    },
    "moldable": {
        "description": "moldable jobs sized at start by equipartition's share, an Amdahl task (serial fraction 0.1) "
                       "and a rigid job",
        "jobs": [cjob(1, 0, "moldable", 4, "amd", 2, 16), cjob(2, 3, "moldable", 4, "amd", 2, 12),
                 cjob(3, 7, "rigid", 4, "flat"), cjob(4, 11, "moldable", 4, "amd", 4, 8),
                 cjob(5, 40, "moldable", 2, "amd", 1, 16)],
        "profiles": {
            "amd": prof([{"iterations": 5, "tasks": [amdahl_task("40", 0.1)]}]),
            "flat": prof([{"iterations": 4, "tasks": [flops_task("2e10")]}]),
        },
    },
    "malleable": {
        "description": "malleable jobs with compute-only iterations under equipartition: shrink to admit, "
                       "expand when idle; no reconfiguration cost",
        "jobs": [cjob(1, 0, "malleable", 8, "m1", 2, 16), cjob(2, 13, "malleable", 4, "m2", 2, 12),
                 cjob(3, 31, "rigid", 6, "r"), cjob(4, 47, "malleable", 4, "m2", 1, 8)],
        "profiles": {
            "m1": prof([{"iterations": 30, "tasks": [flops_task("3.2e10"), delay_task("0.25")]}]),
            "m2": prof([{"iterations": 20, "tasks": [flops_task("2.4e10")]}]),
            "r": prof([{"iterations": 5, "tasks": [flops_task("3e10")]}]),
        },
    },
    "malleable_cost": {
        "description": "malleable jobs with an Amdahl task, a start cost (on_init), a reconfiguration cost "
                       "depending on the new size (on_reconfiguration) and a constant expansion cost (on_expansion)",
        "jobs": [cjob(1, 0, "malleable", 8, "mc", 2, 16), cjob(2, 17, "malleable", 4, "mc", 2, 8),
                 cjob(3, 29, "moldable", 4, "amd", 2, 6), cjob(4, 61, "malleable", 4, "mc2", 2, 16)],
        "profiles": {
            "mc": prof([{"iterations": 25, "tasks": [amdahl_task("24", 0.05)]}],
                       on_init="3", on_reconfiguration="1 + 0.1 * num_nodes", on_expansion="2"),
            "mc2": prof([{"iterations": 2, "tasks": [amdahl_task("30", 0.2)]},
                         {"iterations": 10, "tasks": [flops_task("1e10 * 4"), delay_task("0.5")]}],
                        on_init="1", on_reconfiguration="0.5 * num_nodes", on_expansion="2"),
            "amd": prof([{"iterations": 5, "tasks": [amdahl_task("40", 0.1)]}]),
        },
    },
    "phase_points": {
        "description": "where the scheduling point between two phases falls: a first phase without points, a second "
                       "with (ElastiSim: points before each iteration of the second phase, so one at the boundary; "
                       "coburst: points after each iteration of the second phase but its last, none at the boundary)",
        "jobs": [cjob(1, 0, "malleable", 8, "pp", 2, 16), cjob(2, 9, "rigid", 8, "r"),
                 cjob(3, 100, "malleable", 4, "pp", 2, 16)],
        "profiles": {
            "pp": prof([{"iterations": 4, "scheduling_point": False, "tasks": [flops_task("4e10")]},
                        {"iterations": 4, "scheduling_point": True, "tasks": [flops_task("4e10")]}]),
            "r": prof([{"iterations": 2, "tasks": [flops_task("2.4e10")]}]),
        },
        # the same model in coburst's terms: the point ElastiSim puts before the first iteration of the second phase
        # is coburst's point after the last iteration of the first, split off into a phase of its own
        "coburst_equivalent": {"pp": prof([
            {"iterations": 3, "scheduling_point": False, "tasks": [flops_task("4e10")]},
            {"iterations": 1, "scheduling_point": True, "tasks": [flops_task("4e10")]},
            {"iterations": 4, "scheduling_point": True, "tasks": [flops_task("4e10")]}])},
    },
    "double_resize": {
        "description": "one scheduling point where equipartition resizes a malleable job twice (16 -> 8 to start a "
                       "4-node job, then 8 -> 1 for the 10-node job behind it): one reconfiguration from 16 to 1 "
                       "nodes, charged once",
        "jobs": [cjob(1, 0, "malleable", 8, "dr", 1, 16), cjob(2, 0.3, "rigid", 4, "h1"),
                 cjob(3, 0.6, "rigid", 10, "h2")],
        "profiles": {
            "dr": prof([{"iterations": 6, "tasks": [flops_task("1.6e10")]}], on_reconfiguration="2 + 0.5 * num_nodes"),
            "h1": prof([{"iterations": 2, "tasks": [flops_task("2e10")]}]),
            "h2": prof([{"iterations": 2, "tasks": [flops_task("1e10")]}]),
        },
    },
    "evolving": {
        "description": "an evolving job asking to grow (granted: nobody waits) and then to shrink (granted, which "
                       "starts the rigid job waiting); the request after the third and the sixth iteration",
        "jobs": [cjob(1, 0, "evolving", 4, "ev", 2, 12), cjob(2, 20, "rigid", 10, "r")],
        "profiles": {
            "ev": prof([{"iterations": 8, "evolving_request": "8 if iteration == 2 else (3 if iteration == 5 else "
                                                              "num_nodes)",
                         "tasks": [flops_task("2.4e10")]}], on_reconfiguration="1"),
            "r": prof([{"iterations": 2, "tasks": [flops_task("2e10")]}]),
        },
        # ElastiSim asks before an iteration, with the number of the iteration about to start
        "elastisim_evolving": {"ev": ["phase_iteration == 3 ? 8 : (phase_iteration == 6 ? 3 : num_nodes)"]},
    },
    "expansion_cost": {
        "description": "an expansion cost depending on num_nodes (ElastiSim: the number of nodes added, on which "
                       "on_expansion runs; coburst: the job's new size)",
        "jobs": [cjob(1, 0, "malleable", 8, "ex", 2, 16), cjob(2, 5, "rigid", 8, "r")],
        "profiles": {
            "ex": prof([{"iterations": 12, "tasks": [flops_task("3.2e10")]}],
                       on_reconfiguration="1", on_expansion="0.25 * num_nodes"),
            "r": prof([{"iterations": 3, "tasks": [flops_task("2.6e10")]}]),
        },
        # the same model in coburst's terms: on_expansion's num_nodes is ElastiSim's number of added nodes
        "coburst_equivalent": {"ex": prof([{"iterations": 12, "tasks": [flops_task("3.2e10")]}],
                                          on_reconfiguration="1",
                                          on_expansion="0.25 * (num_nodes - old_num_nodes)")},
    },
    "communication": {
        "description": "communication tasks of every matrix pattern between the nodes of rigid, moldable and "
                       "malleable jobs (ElastiSim: cpu tasks with bytes only, after or before a cpu task with flops "
                       "only), re-spread over the new nodes after each resize; no two jobs share a link",
        "platform": "cluster16_pfs.xml",
        "jobs": [cjob(1, 0, "malleable", 8, "a2a", 2, 16), cjob(2, 4, "rigid", 4, "ring"),
                 cjob(3, 9, "moldable", 4, "gath", 2, 8), cjob(4, 30.5, "malleable", 4, "mw", 1, 8),
                 cjob(5, 31.5, "malleable", 4, "sc", 2, 8)],
        "profiles": {
            "a2a": prof([{"iterations": 12, "tasks": [flops_task("3.2e10"), comm_task("1e10", "all_to_all")]}]),
            "ring": prof([{"iterations": 5, "tasks": [flops_task("2e10"), comm_task("4e9", "ring"),
                                                      delay_task("0.5")]}]),
            "gath": prof([{"iterations": 4, "tasks": [comm_task("2e9", "gather"), flops_task("1.6e10")]}]),
            "mw": prof([{"iterations": 10, "tasks": [node_flops_task("2e9"), comm_task("1e9", "master_worker")]}],
                       on_reconfiguration="1"),
            "sc": prof([{"iterations": 8, "tasks": [comm_task("4e8 * num_nodes", "scatter"), flops_task("2.4e10"),
                                                    comm_task("2e9", "ring_clockwise"),
                                                    comm_task("1e9", "ring_counter_clockwise")]}]),
        },
    },
    "pfs": {
        "description": "PFS reads and writes of every vector pattern by two to three jobs at once, malleable jobs "
                       "re-spreading their bytes after each resize, on a PFS link no transfer fills (only the nodes' "
                       "links limit them); ElastiSim: every task 'synchronized', so that a job's nodes start each "
                       "task together, as coburst's do",
        "platform": "cluster16_pfs.xml",
        "elastisim_options": {"synchronized": True},
        "jobs": [cjob(1, 0, "malleable", 8, "io1", 2, 16), cjob(2, 3, "rigid", 4, "io2"),
                 cjob(3, 10, "malleable", 4, "io3", 1, 8), cjob(4, 20, "moldable", 4, "io4", 2, 6)],
        "profiles": {
            "io1": prof([{"iterations": 1, "tasks": [io_task("pfs_read", "8e9", "total")]},
                         {"iterations": 10, "tasks": [flops_task("4e10"), io_task("pfs_write", "2e9", "even_ranks")]}]),
            "io2": prof([{"iterations": 6, "tasks": [io_task("pfs_read", "5e8", "uniform"), flops_task("1e10"),
                                                     io_task("pfs_write", "1e9", "root_only")]}]),
            "io3": prof([{"iterations": 8, "tasks": [flops_task("1.2e10"), io_task("pfs_write", "1e9", "odd_ranks"),
                                                     delay_task("0.5")]}], on_reconfiguration="0.5"),
            "io4": prof([{"iterations": 3, "tasks": [io_task("pfs_read", "3e9", "all_ranks"),
                                                     flops_task("1.8e10")]}]),
        },
    },
    "pfs_ranks": {
        "description": "a node's I/O overlapping another's: each iteration the first node writes 2.5e9 bytes "
                       "(root_only), then the odd nodes read 2.5e9 bytes (odd_ranks), then all compute 2 s; "
                       "ElastiSim's nodes go from task to task on their own (a barrier only before each "
                       "iteration here), so nodes 1 and 3 read while node 0 writes; coburst's job runs each task "
                       "on all its nodes before the next",
        "platform": "cluster16_pfs.xml",
        "elastisim_options": {"synchronized_first": True},
        # ElastiSim with a barrier before every task: coburst's model
        "elastisim_equivalent_options": {"synchronized": True},
        "jobs": [cjob(1, 0, "rigid", 4, "rw")],
        "profiles": {
            "rw": prof([{"iterations": 5, "tasks": [io_task("pfs_write", "2.5e9", "root_only"),
                                                    io_task("pfs_read", "2.5e9", "odd_ranks"),
                                                    flops_task("8e9")]}]),
        },
    },
    "pfs_shared": {
        "description": "two jobs' I/O sharing a narrow PFS link (2.5 GB/s): one node of a job writes 1e9 bytes while "
                       "the four nodes of another read 3e9; ElastiSim's I/O task is a parallel task a node, sharing "
                       "the link five ways (0.5 GB/s each); coburst's is a parallel task a job, sharing it two ways "
                       "(1.25 GB/s each)",
        "platform": "cluster16_pfs_shared.xml",
        "elastisim_options": {"synchronized": True},
        "jobs": [cjob(1, 0, "rigid", 4, "w"), cjob(2, 0, "rigid", 4, "r")],
        "profiles": {
            "w": prof([{"iterations": 1, "tasks": [io_task("pfs_write", "1e9", "root_only"), delay_task("1")]}]),
            "r": prof([{"iterations": 1, "tasks": [io_task("pfs_read", "3e9", "total"), delay_task("1")]}]),
        },
    },
    "overlap": {
        "description": "ElastiSim's cpu task with flops and bytes, which overlaps the computation and the "
                       "communication (an iteration takes the longer of the two); coburst's model (and "
                       "'coburst workload from-elastisim') runs a compute task, then a communication task",
        "platform": "cluster16_pfs.xml",
        "elastisim_options": {"combine": True},
        # ElastiSim with the flops and the bytes in two cpu tasks: coburst's model
        "elastisim_equivalent_options": {},
        "jobs": [cjob(1, 0, "rigid", 8, "cpu_bound"), cjob(2, 0, "rigid", 8, "net_bound"),
                 cjob(3, 1, "moldable", 8, "cpu_bound", 2, 16)],
        "profiles": {
            "cpu_bound": prof([{"iterations": 5, "tasks": [flops_task("4e10"), comm_task("2e10", "all_to_all")]}]),
            "net_bound": prof([{"iterations": 5, "tasks": [flops_task("8e9"), comm_task("2e10", "ring")]}]),
        },
    },
}

CASES["communication_backbone"] = {
    **CASES["communication"], "platform": "cluster16_backbone.xml",
    "description": "the case communication on a cluster with a backbone of 2.5 GB/s: the jobs' communications "
                   "share it"}

#: the cases also run on cluster16_lat50.xml
LATENCY_CASES = ("rigid", "malleable", "malleable_cost")


# ------------------------------------------------------------------- coburst -> ElastiSim
def es_expr(expr):
    return expr if isinstance(expr, str) else repr(float(expr))


def es_task(task):
    if isinstance(task, (str, int, float)):
        return {"type": "idle", "delay": es_expr(task), "pattern": "uniform"}
    if task["type"] == "delay":
        return {"type": "idle", "delay": es_expr(task["seconds"]), "pattern": "uniform"}
    if task["type"] == "communication":
        return {"type": "cpu", "bytes": es_expr(task["bytes"]), "communication_pattern": task["pattern"]}
    if task["type"] in ("pfs_read", "pfs_write", "bb_read", "bb_write"):
        return {"type": task["type"], "bytes": es_expr(task["bytes"]), "pattern": task["pattern"]}
    if "flops" in task:
        return {"type": "cpu", "flops": es_expr(task["flops"]),
                "computation_pattern": "uniform" if task.get("per_node") else "all_ranks"}
    model = task.get("model", "linear")
    t1 = f"({es_expr(task['seconds'])}) * {SPEED:g}"
    if model == "linear":
        return {"type": "cpu", "flops": t1, "computation_pattern": "all_ranks"}
    if model == "amdahl":
        s = task["serial_fraction"]
        return {"type": "cpu", "flops": f"{t1} * ({s!r} + (1 - {s!r}) / num_nodes)", "computation_pattern": "uniform"}
    raise ValueError(f"no ElastiSim form for model {model}")


def es_phase_tasks(tasks, options):
    """A phase's tasks in ElastiSim's terms; ``options``: ``combine`` (a compute task with flops and the
    communication task after it are one cpu task with both, which ElastiSim overlaps), ``synchronized``
    (every task starts on all the job's nodes together: a barrier before each), ``synchronized_first``
    (a barrier before each iteration only)."""
    out = []
    for task in tasks:
        if (options.get("combine") and out and isinstance(task, dict) and task.get("type") == "communication"
                and out[-1].get("type") == "cpu" and "flops" in out[-1] and "bytes" not in out[-1]):
            out[-1].update(bytes=es_expr(task["bytes"]), communication_pattern=task["pattern"])
            continue
        out.append(es_task(task))
    if options.get("synchronized"):
        out = [{**t, "synchronized": True} for t in out]
    elif options.get("synchronized_first"):
        out[0] = {**out[0], "synchronized": True}
    return out


def es_application(app, evolving=None, options=None):
    out = {}
    for key in ("on_init", "on_reconfiguration", "on_expansion"):
        if key in app:
            tasks = app[key] if isinstance(app[key], list) else [app[key]]
            out[key] = {"tasks": [es_task(t) for t in tasks]}
    out["phases"] = [{"iterations": ph.get("iterations", 1), "scheduling_point": ph.get("scheduling_point", True),
                      "tasks": es_phase_tasks(ph["tasks"], options or {})} for ph in app["phases"]]
    for phase, request in zip(out["phases"], evolving or ()):
        phase["evolving_request"] = request
    return out


def es_inputs(case, options=None):
    """ElastiSim's jobs file, application models and configuration for ``case`` (``options``: those of
    :func:`es_phase_tasks`, by default the case's ``elastisim_options``)."""
    options = case.get("elastisim_options") if options is None else options
    apps = {name: es_application(p["elastic"], case.get("elastisim_evolving", {}).get(name), options)
            for name, p in case["profiles"].items()}
    jobs = []
    for job in case["jobs"]:
        e = job["elastic"]
        entry = {"type": e["type"], "submit_time": job["subtime"], "application_model": f"{job['profile']}.json"}
        if e["type"] == "rigid":
            entry["num_nodes"] = job["res"]
        else:
            entry.update(num_nodes_min=e["num_nodes_min"], num_nodes_max=e["num_nodes_max"])
        if e["type"] == "evolving":
            entry["attributes"] = {"res": job["res"]}
        jobs.append(entry)
    config = {"jobs_file": "jobs.json", "platform_file": case.get("platform", PLATFORM), "zmq_url": "ipc://elastisim.ipc",
              "schedule_on_job_submit": True, "schedule_on_job_finalize": True,
              "schedule_on_scheduling_point": True, "show_progress_bar": False,
              "job_statistics": "job_statistics.csv", "node_utilization": "node_utilization.csv"}
    return {"jobs": {"jobs": jobs}, "applications": apps, "config": config}


def run_elastisim(binary, name, es, platform_xml, work):
    d = work / name
    d.mkdir(parents=True, exist_ok=True)
    (d / es["config"]["platform_file"]).write_text(platform_xml)
    (d / "jobs.json").write_text(json.dumps(es["jobs"], indent=1))
    for app, doc in es["applications"].items():
        (d / f"{app}.json").write_text(json.dumps(doc, indent=1))
    config = {k: (str(d / v) if k.endswith("_file") or k in ("job_statistics", "node_utilization") else v)
              for k, v in es["config"].items()}
    jobs = json.loads((d / "jobs.json").read_text())
    for j in jobs["jobs"]:
        j["application_model"] = str(d / j["application_model"])
    (d / "jobs.json").write_text(json.dumps(jobs, indent=1))
    config["zmq_url"] = f"ipc://{d}/elastisim.ipc"
    (d / "config.json").write_text(json.dumps(config, indent=1))
    env = {**os.environ, "PYTHONPATH": os.environ.get("ELASTISIM_PYTHON_PATH", "")}
    sim = subprocess.Popen([binary, str(d / "config.json"), "--log=root.thresh:warning"], cwd=d,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.2)
    sched = subprocess.Popen([sys.executable, str(HERE / "equipartition_elastisim.py"), config["zmq_url"],
                              str(d / "decisions.jsonl")], cwd=d, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = sim.communicate(timeout=600)
    s_out, s_err = sched.communicate(timeout=60)
    if sim.returncode or sched.returncode:
        raise RuntimeError(f"{name}: elastisim {sim.returncode} {err[-2000:]}\nscheduler {sched.returncode} {s_err}")
    stats = list(csv.DictReader(open(d / "job_statistics.csv")))
    decisions = [json.loads(line) for line in open(d / "decisions.jsonl")]
    # node counts of each job over time, from ElastiSim's node utilisation file
    per_time = defaultdict(dict)
    for row in csv.DictReader(open(d / "node_utilization.csv")):
        per_time[float(row["Time"])][row["Node"]] = row["Running jobs"]
    current, sizes, last = {}, [], {}
    for t in sorted(per_time):
        current.update(per_time[t])
        count = defaultdict(int)
        for jobs_on in current.values():
            if jobs_on != "none":
                for jid in jobs_on.split(";"):
                    count[int(jid)] += 1
        for jid in sorted(set(count) | set(last)):
            n = count.get(jid, 0)
            if last.get(jid, 0) != n:
                sizes.append([t, jid, n])
                last[jid] = n
    return {"jobs": [{"id": int(r["ID"]), "type": r["Type"], "submit": float(r["Submit Time"]),
                      "start": float(r["Start Time"]), "end": float(r["End Time"]), "status": r["Status"]}
                     for r in stats],
            "decisions": decisions, "sizes": sizes}


def main():
    binary, out_path = sys.argv[1], Path(sys.argv[2])
    only = sys.argv[3:]  # case names: run these only, keep the others of OUT_JSON as they are
    platform_xml = (out_path.parent / PLATFORM).read_text()
    work = Path(os.environ.get("ELASTISIM_WORK", "/tmp/elastisim-runs"))
    commit = os.environ["ELASTISIM_COMMIT"]
    py_commit = os.environ["ELASTISIM_PYTHON_COMMIT"]
    doc = {"about": {
        "produced_by": "ElastiSim run on each case below (its 'elastisim' inputs) with an equipartition scheduler "
                       "written for ElastiSim's Python interface, rule for rule coburst's policy 'equipartition' "
                       "(equipartition_elastisim.py next to this file), by run_elastisim_cases.py; 'elastisim' holds what it printed: "
                       "job_statistics.csv (per-job start and end), the scheduler's decisions (starts and resizes) "
                       "and the nodes of each job over time from node_utilization.csv",
        "elastisim_commit": commit, "elastisim_python_commit": py_commit,
        "simgrid": "3.32 (Debian bookworm libsimgrid-dev 3.32-2+b2)",
        "elastisim_build": "cmake -DSIMGRID_SOURCE_DIR=/usr -DCMAKE_BUILD_TYPE=Release, GCC 12; against SimGrid 3.32 "
                           "two things break: a missing #include <unordered_set> in PlatformManager.h (given with "
                           "-include unordered_set) and s4u::Link::get_load(), absent from 3.32 (PlatformManager.cpp, "
                           "Sensing.cpp), replaced by Link::get_usage() in the local build; it serves only the PFS "
                           "and network utilisation monitoring, which these runs do not use",
        "python": "elastisim-python on pyzmq 27.3.0, Python " + pyplatform.python_version(),
        "command": "elastisim config.json --log=root.thresh:warning, with the scheduler "
                   "python equipartition_elastisim.py ipc://.../elastisim.ipc decisions.jsonl",
        "platform": PLATFORM + " (both simulators; every latency 0); a case with a 'platform' ran on that one: "
                    "cluster16_pfs.xml and cluster16_pfs_shared.xml (the same nodes and a PFS host behind a wide or a "
                    "narrow link), cluster16_backbone.xml (the same nodes with a backbone), every latency 0",
        "speed": SPEED, "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "machine": f"{pyplatform.machine()} {pyplatform.system()}",
    }, "cases": {}}
    if only:
        kept = json.loads(out_path.read_text())
        unknown = set(only) - set(CASES)
        if unknown:
            sys.exit(f"unknown case(s) {sorted(unknown)} (known: {', '.join(CASES)})")
    for name, case in CASES.items():
        if only and name not in only:
            if name in kept["cases"]:
                doc["cases"][name] = kept["cases"][name]
            continue
        es = es_inputs(case)
        xml = (out_path.parent / case.get("platform", PLATFORM)).read_text()
        result = run_elastisim(binary, name, es, xml, work)
        doc["cases"][name] = {"description": case["description"],
                              "coburst": {"nb_res": 16, "jobs": case["jobs"], "profiles": case["profiles"]},
                              "elastisim_inputs": es, "elastisim": result}
        if "platform" in case:
            doc["cases"][name]["platform"] = case["platform"]
        if "elastisim_equivalent_options" in case:  # ElastiSim's input written in coburst's model
            es2 = es_inputs(case, case["elastisim_equivalent_options"])
            doc["cases"][name]["elastisim_equivalent"] = {
                "elastisim_inputs": es2, "elastisim": run_elastisim(binary, name, es2, xml, work / "equivalent")}
        if "coburst_equivalent" in case:
            doc["cases"][name]["coburst_equivalent"] = {
                "nb_res": 16, "jobs": case["jobs"], "profiles": {**case["profiles"], **case["coburst_equivalent"]}}
        print(name, json.dumps(result["jobs"]), len(result["decisions"]), "decisions")
    # the same cases on a platform with latencies (cluster16_lat50.xml): ElastiSim's jobs only
    latency_xml = (out_path.parent / "cluster16_lat50.xml").read_text()
    doc["latency"] = {"platform": "cluster16_lat50.xml", "cases": {}}
    if only:
        doc["latency"] = kept["latency"]
    for name in (n for n in LATENCY_CASES if not only or n in only):
        result = run_elastisim(binary, name, es_inputs(CASES[name]), latency_xml, work / "latency")
        doc["latency"]["cases"][name] = result["jobs"]
    out_path.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
