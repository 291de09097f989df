"""``coburst run`` and ``coburst demo`` end to end (real simulator, real pybatsim process)."""

from __future__ import annotations

import csv
import json
import subprocess

import pytest

from simharness import COBURST, CLUSTER4, REPO, workload

pytestmark = pytest.mark.timeout(180)


def _rows(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def _jobs(tmp_path):
    # 4 nodes: job 0 takes all nodes for 10 s; jobs 1 and 2 (2 nodes each) wait for it
    return workload(tmp_path / "w.json", [
        {"id": 0, "subtime": 0, "walltime": 20, "res": 4, "profile": "d10"},
        {"id": 1, "subtime": 1, "walltime": 30, "res": 2, "profile": "d20"},
        {"id": 2, "subtime": 2, "walltime": 10, "res": 2, "profile": "d5"},
    ], {"d10": {"type": "delay", "delay": 10}, "d20": {"type": "delay", "delay": 20},
        "d5": {"type": "delay", "delay": 5}})


@pytest.mark.parametrize("scheduler, options", [
    ("easyBackfill", "{}"),                                       # pybatsim's bundled scheduler
    ("backfill-1", "{}"),                                         # coburst policy by name
    (str(REPO / "schedulers" / "coburstBackfill.py"), '{"policy": "fcfs"}'),  # scheduler file + JSON options
])
def test_run_drives_simulator_and_scheduler(tmp_path, scheduler, options):
    w = _jobs(tmp_path)
    out = tmp_path / "o"
    proc = subprocess.run([str(COBURST), "run", scheduler, "-o", options, "-p", str(CLUSTER4), "-w", str(w),
                           "-e", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = _rows(f"{out}_jobs.csv")
    assert sorted(r["job_id"] for r in rows) == ["0", "1", "2"]
    assert all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in rows)
    # the metrics summary is printed
    assert "mean wait" in proc.stdout and "utilisation" in proc.stdout
    # job 0 runs first on all 4 nodes; 1 and 2 start when its completion reaches the scheduler
    start = {r["job_id"]: float(r["starting_time"]) for r in rows}
    finish0 = float(next(r for r in rows if r["job_id"] == "0")["finish_time"])
    assert start["1"] > finish0 and start["2"] > finish0


def test_run_reports_a_crashing_scheduler(tmp_path):
    w = _jobs(tmp_path)
    bad = tmp_path / "crashy.py"
    bad.write_text("from batsim.batsim import BatsimScheduler\n"
                   "class Crashy(BatsimScheduler):\n"
                   "    def onJobSubmission(self, job):\n"
                   "        raise RuntimeError('boom in the scheduler')\n")
    proc = subprocess.run([str(COBURST), "run", str(bad), "-p", str(CLUSTER4), "-w", str(w), "-e",
                           str(tmp_path / "o"), "--timeout", "10"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 4
    assert "scheduler" in proc.stderr and "boom in the scheduler" in proc.stderr
    assert not list(tmp_path.glob("o_*.csv"))


def test_run_rejects_bad_options(tmp_path):
    w = _jobs(tmp_path)
    proc = subprocess.run([str(COBURST), "run", "easyBackfill", "-o", "{not json", "-p", str(CLUSTER4), "-w",
                           str(w)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "-o/--options" in proc.stderr
    proc = subprocess.run([str(COBURST), "run", "easyBackfill", "--no-such-option", "-p", str(CLUSTER4)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--no-such-option" in proc.stderr


def test_demo_compares_fcfs_and_easy(tmp_path):
    proc = subprocess.run([str(COBURST), "demo", "--jobs", "300", "-o", str(tmp_path)], capture_output=True,
                          text=True, timeout=170)
    assert proc.returncode == 0, proc.stderr
    for name in ("FCFS", "EASY"):
        assert name in proc.stdout
    fcfs, easy = _rows(tmp_path / "fcfs_jobs.csv"), _rows(tmp_path / "easy_jobs.csv")
    assert len(fcfs) == len(easy) == 300
    wait = {name: sum(float(r["waiting_time"]) for r in rows) / len(rows)
            for name, rows in (("fcfs", fcfs), ("easy", easy))}
    # backfilling never makes the mean wait worse than FCFS on this log prefix
    assert wait["easy"] <= wait["fcfs"]
    # FCFS starts jobs in submission order
    starts = [float(r["starting_time"]) for r in sorted(fcfs, key=lambda r: int(r["job_id"]))]
    assert starts == sorted(starts)


POLICIES = ("fcfs", "filler", "filler-sjf", "no-future-1", "backfill-1", "backfill-sjf-1", "conservative")


@pytest.mark.parametrize("model", ["alloc_only", "io_aware"])
@pytest.mark.parametrize("policy", POLICIES)
def test_every_policy_runs_both_job_models_through_coburst_run(tmp_path, policy, model):
    """Every policy, Alloc-Only and IO-Aware (dynamic sub-jobs), via ``coburst run``."""
    doc = json.loads((REPO / "workloads" / f"kth_{model}_sample.json").read_text())
    doc["jobs"] = doc["jobs"][:8]
    for job in doc["jobs"]:  # squeeze arrivals so that jobs queue and the policy matters
        job["subtime"] = job["subtime"] / 50
    used = {job["profile"] for job in doc["jobs"]}
    doc["profiles"] = {name: prof for name, prof in doc["profiles"].items() if name in used}
    w = tmp_path / "w.json"
    w.write_text(json.dumps(doc))
    out = tmp_path / "o"
    proc = subprocess.run([str(COBURST), "run", policy, "--enable-dynamic-jobs", "-p",
                           str(REPO / "platforms" / "dragonfly96.xml"), "-w", str(w), "-e", str(out), "-q"],
                          capture_output=True, text=True, timeout=170)
    assert proc.returncode == 0, proc.stderr
    from coburst.analysis.metrics import read_jobs

    rows = read_jobs(f"{out}_jobs.csv").to_dict("records")  # IO-Aware sub-jobs folded back
    assert sorted(int(r["job_id"]) for r in rows) == list(range(8))  # one row per static job
    assert all(r["final_state"].startswith("COMPLETED") and r["workload_name"] == "w0" for r in rows)
    if model == "io_aware":  # the phases ran as dynamic sub-jobs; the static jobs were rejected
        raw = _rows(f"{out}_jobs.csv")
        assert any(r["workload_name"] == "io" for r in raw)
        assert all(r["final_state"] == "REJECTED" for r in raw if r["workload_name"] == "w0")
