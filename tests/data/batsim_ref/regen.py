"""Regenerate the reference outputs of the real Batsim 4.2.1 in this folder.

    .venv/bin/python tests/data/batsim_ref/regen.py [/path/to/batsim]

(default binary: $BATSIM, else ``batsim`` on ``PATH``).  For every scenario below it
runs Batsim against a scheduler (a small scripted one here, or pybatsim's
``easyBackfill``), keeps ``<name>_schedule.trace``, ``<name>_machine_states.csv`` and
``<name>_jobs.csv``, and writes ``<name>.calls.json``: the TraceRecorder calls (job starts
and ends in simulation order, with times that print exactly like Batsim's) derived from
Batsim's ``_jobs.csv`` and ``_machine_states.csv``.  Only the colours of the Pajé job
entity values change from one run to the next (Batsim shuffles them with
``std::random_device``).

The scripted scheduler is FCFS on the first free compute machines; workload job extras:
``"alloc": "a-b"`` forces an allocation (with compute sharing), ``"reject": true`` rejects
the job and ``"kill_after": d`` sends KILL_JOB d seconds after the EXECUTE_JOB decision
(through CALL_ME_LATER).
"""

from __future__ import annotations

import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
PLATFORM = REPO / "tests" / "data" / "cluster_master.xml"

#: name -> (scheduler, extra batsim options, job ids killed while no parallel task ran
#: (no Pajé kill mark), order keys of jobs sharing machines (Batsim: heap addresses,
#: read off the run))
SCENARIOS = {
    "basic": ("scripted", [], ["w0!5"], {}),
    "sharing": ("scripted", ["--enable-compute-sharing"], [],
                {"w0!c": 0, "w0!b": 1, "w0!a": 2, "w0!d": 3, "w0!e": 4}),
    "storage": ("scripted", ["-r", "node_3:storage"], [], {}),
    "easy": ("easyBackfill", [], [], {}),
}


def interval_string(ids):
    ids = sorted(ids)
    out, i = [], 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        out.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return " ".join(out)


def interval_ids(text):
    out = []
    for part in text.split():
        a, _, b = part.partition("-")
        out += range(int(a), int(b or a) + 1)
    return out


def scripted_scheduler(endpoint: str) -> None:
    import zmq

    sock = zmq.Context.instance().socket(zmq.REP)
    sock.bind(endpoint)
    free, queue, jobs, running, kills = set(), [], {}, {}, []
    while True:
        msg = json.loads(sock.recv())
        now, out, ended = msg["now"], [], False
        for ev in msg["events"]:
            kind, data = ev["type"], ev["data"]
            if kind == "SIMULATION_BEGINS":
                free = set(range(data["nb_compute_resources"]))
            elif kind == "JOB_SUBMITTED":
                jobs[data["job_id"]] = data["job"]
                queue.append(data["job_id"])
            elif kind == "JOB_COMPLETED":
                ids = running.pop(data["job_id"], None)
                if ids is not None and not jobs[data["job_id"]].get("alloc"):
                    free |= set(ids)
            elif kind == "SIMULATION_ENDS":
                ended = True
        for when, jid in list(kills):
            if when <= now + 1e-9:
                kills.remove((when, jid))
                if jid in running:
                    out.append({"timestamp": now, "type": "KILL_JOB", "data": {"job_ids": [jid]}})
        while queue:
            jid = queue[0]
            job = jobs[jid]
            if job.get("reject"):
                out.append({"timestamp": now, "type": "REJECT_JOB", "data": {"job_id": jid}})
                queue.pop(0)
                continue
            if job.get("alloc"):
                ids = interval_ids(job["alloc"])
            else:
                if len(free) < job["res"]:
                    break
                ids = sorted(free)[:job["res"]]
                free -= set(ids)
            queue.pop(0)
            running[jid] = ids
            out.append({"timestamp": now, "type": "EXECUTE_JOB",
                        "data": {"job_id": jid, "alloc": interval_string(ids)}})
            if "kill_after" in job:
                kills.append((now + job["kill_after"], jid))
                out.append({"timestamp": now, "type": "CALL_ME_LATER",
                            "data": {"timestamp": now + job["kill_after"]}})
        sock.send_string(json.dumps({"now": now, "events": out}))
        if ended:
            sock.close()
            return


def batsim_float(pct_g: str, pct_f: str) -> float:
    """A double that C prints as ``pct_g`` with %g and ``pct_f`` with %f."""
    for start in (float(pct_f), float(pct_g)):
        for direction in (math.inf, -math.inf):
            v = start
            for _ in range(100000):
                if "%g" % v == pct_g and f"{v:f}" == pct_f:
                    return v
                v = math.nextafter(v, direction)
    raise SystemExit(f"no double prints as {pct_g} (%g) and {pct_f} (%f)")


def derive_calls(prefix: str, no_mark: list[str]) -> tuple[list[str], list]:
    trace = Path(prefix + "_schedule.trace").read_text()
    names = [line.split('"')[1] for line in trace.splitlines()
             if line.startswith("2 ") and " machine_ct m" in line]
    events = []
    with open(prefix + "_jobs.csv", newline="") as handle:
        for row in csv.DictReader(handle):
            if row["final_state"] == "REJECTED":
                continue
            jid = row["workload_name"] + "!" + row["job_id"]
            alloc = row["allocated_resources"]
            mark = (row["final_state"] == "COMPLETED_WALLTIME_REACHED"
                    or (row["final_state"] == "COMPLETED_KILLED" and jid not in no_mark))
            events.append((float(row["starting_time"]), 1, row["starting_time"], ["start", jid, alloc]))
            events.append((float(row["finish_time"]), 0, row["finish_time"], ["end", jid, alloc, mark]))
    events.sort(key=lambda e: (e[0], e[1]))
    states = [line.split(",")[0] for line in Path(prefix + "_machine_states.csv").read_text().splitlines()[1:]]
    assert len(states) == len(events), (len(states), len(events))
    calls = []
    for (_, _, pct_f, call), pct_g in zip(events, states):
        calls.append([call[0], batsim_float(pct_g, pct_f)] + call[1:])
    calls.append(["finish", float(trace.rstrip("\n").splitlines()[-1].split()[1])])
    return names, calls


def dump_calls(path: Path, info: dict, calls: list) -> None:
    head = json.dumps(info, separators=(",", ":"))[:-1]
    body = ",\n".join(json.dumps(c, separators=(",", ":")) for c in calls)
    path.write_text(head + ',"calls":[\n' + body + "\n]}\n")


def main() -> int:
    batsim = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("BATSIM") or shutil.which("batsim")
    if not batsim:
        sys.exit("regen.py: give the batsim binary (argument, $BATSIM, or batsim on PATH)")
    for port, (name, (sched, extra, no_mark, keys)) in enumerate(SCENARIOS.items(), start=29301):
        endpoint = f"tcp://127.0.0.1:{port}"
        workload = HERE / f"{name}.workload.json"
        with tempfile.TemporaryDirectory() as tmp:
            prefix = f"{tmp}/{name}"
            if sched == "scripted":
                peer = threading.Thread(target=scripted_scheduler, args=(endpoint,), daemon=True)
                peer.start()
            else:
                peer = subprocess.Popen([str(Path(sys.executable).parent / "pybatsim"), sched, "-s", endpoint],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(3)
            cmd = [batsim, "-p", str(PLATFORM), "-m", "master_0", "-w", str(workload), "-e", prefix,
                   "-s", endpoint, "-q", *extra]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
            if isinstance(peer, subprocess.Popen):
                peer.wait(timeout=30)
            else:
                peer.join(timeout=30)
            for suffix in ("_schedule.trace", "_machine_states.csv", "_jobs.csv"):
                shutil.copy(prefix + suffix, HERE / f"{name}{suffix}")
            names, calls = derive_calls(prefix, no_mark)
        nb_compute = len(names) - sum(1 for i in range(0, len(extra), 2)
                                      if extra[i] == "-r" and extra[i + 1].endswith(":storage"))
        shown = " ".join(["batsim", "-p", "tests/data/cluster_master.xml", "-m", "master_0", "-w",
                          f"tests/data/batsim_ref/{name}.workload.json", "-e", name, "-s", "tcp://127.0.0.1:PORT",
                          *extra])
        dump_calls(HERE / f"{name}.calls.json",
                   {"command": shown, "scheduler": sched, "machines": names, "nb_compute": nb_compute,
                    "order_keys": keys}, calls)
        print(f"{name}: {len(calls)} calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
