"""Round trip SWF -> Batsim workload -> ``coburst sim`` with a pybatsim scheduler, on the
shipped dragonfly platform (Kopański 2020, §2.2-2.4).

The scheduler is coburst's EASY backfilling entry file: it uses only the compute nodes.
pybatsim's own ``easyBackfill`` counts the platform's storage hosts as resources and may put
computation on them, which Batsim 4.2.1 (and coburst) refuse.
"""

from __future__ import annotations

import csv
import importlib.util
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from coburst.workloads.batsim_json import read_workload
from shared_data import need_swf

ROOT = Path(__file__).resolve().parents[1]
DF96 = ROOT / "platforms" / "dragonfly96.xml"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "coburst", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


EASY = str(ROOT / "schedulers" / "coburstEasy.py")


def _simulate(tmp_path: Path, workload: Path, platform: Path = DF96, scheduler: str = EASY):
    """Run ``coburst sim`` against pybatsim's ``scheduler``; return the rows of _jobs.csv."""
    port = _free_port()
    log = tmp_path / "scheduler.log"
    with open(log, "w") as sink:  # a file, not a pipe: pybatsim logs every message
        sched = subprocess.Popen([sys.executable, "-m", "batsim.cmds.launcher", scheduler, "-v", "warning",
                                  "-s", f"tcp://*:{port}"], stdout=sink, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        proc = run_cli("sim", "-p", str(platform), "-w", str(workload), "-e", str(tmp_path / "out"),
                       "-s", f"tcp://localhost:{port}", "--timeout", "60")
        assert proc.returncode == 0, proc.stderr
        sched.wait(timeout=120)
        assert sched.returncode == 0, log.read_text()[-2000:]
    finally:
        if sched.poll() is None:
            sched.kill()
            sched.wait()
    with open(tmp_path / "out_jobs.csv", newline="") as handle:
        return list(csv.DictReader(handle))


needs_sim = pytest.mark.skipif(
    not (ROOT / "coburst" / "simulator" / "engine.py").exists() or importlib.util.find_spec("simgrid") is None,
    reason="coburst sim or SimGrid missing")


@needs_sim
def test_round_trip_1000_kth_jobs_alloc_only_with_easy_backfill(tmp_path):
    workload = tmp_path / "kth1000.json"
    proc = run_cli("workload", "swf", str(need_swf()), "--max-jobs", "1000", "-o", str(workload), "-q")
    assert proc.returncode == 0, proc.stderr
    doc = read_workload(workload)
    rows = _simulate(tmp_path, workload)
    assert len(rows) == 1000
    jobs = {f"{j['id']}": j for j in doc["jobs"]}
    assert {r["job_id"] for r in rows} == set(jobs)
    runtime = {k: doc["profiles"][j["profile"]]["cpu"] / 1e9 for k, j in jobs.items()}
    ratios = []
    for row in rows:
        job = jobs[row["job_id"]]
        assert int(row["requested_number_of_resources"]) == job["res"]
        assert float(row["requested_time"]) == job["walltime"]
        assert float(row["submission_time"]) == job["subtime"]
        execution = float(row["execution_time"])
        if row["final_state"] == "COMPLETED_SUCCESSFULLY":
            assert execution >= runtime[row["job_id"]] - 1e-3  # compute and communication overlap
            ratios.append(execution / runtime[row["job_id"]])
        else:
            assert row["final_state"] == "COMPLETED_WALLTIME_REACHED"
            assert execution == pytest.approx(job["walltime"], abs=0.01)
    over = {k for k in jobs if runtime[k] > jobs[k]["walltime"]}
    killed = {r["job_id"] for r in rows if r["final_state"] != "COMPLETED_SUCCESSFULLY"}
    assert over and over <= killed  # runtime beyond the requested time: killed, as on the real machine
    assert np.median(ratios) == pytest.approx(1.0, abs=1e-3)


@needs_sim
def test_io_aware_sample_runs_as_static_jobs(tmp_path):
    rows = _simulate(tmp_path, ROOT / "workloads" / "kth_io_aware_sample.json")
    assert len(rows) == 200
