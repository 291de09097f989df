"""The optimising policies end to end: ``coburst run`` on both job models (with the
decision-time profile), and the same entry file on the real Batsim 4.2.1 and on
``coburst sim`` with identical outputs (needs ``BATSIM``)."""

from __future__ import annotations

import csv
import json
import subprocess

import pytest

from crossengine import assert_identical, needs_batsim, run_both
from simharness import COBURST, REPO

pytestmark = pytest.mark.timeout(300)

DF96 = REPO / "platforms" / "dragonfly96.xml"


def _sample(tmp_path, model: str, n: int, squeeze: float):
    doc = json.loads((REPO / "workloads" / f"kth_{model}_sample.json").read_text())
    doc["jobs"] = doc["jobs"][:n]
    for job in doc["jobs"]:  # squeeze arrivals so that jobs queue and the optimisers work
        job["subtime"] = job["subtime"] / squeeze
    used = {job["profile"] for job in doc["jobs"]}
    doc["profiles"] = {name: prof for name, prof in doc["profiles"].items() if name in used}
    w = tmp_path / f"{model}.json"
    w.write_text(json.dumps(doc))
    return w


@pytest.mark.parametrize("model", ["alloc_only", "io_aware"])
@pytest.mark.parametrize("policy", ["maxutil-1.0-1", "window-1", "plan-square-0"])
def test_coburst_run_both_job_models_with_decision_log(tmp_path, policy, model):
    w = _sample(tmp_path, model, 12, 50)
    out, dlog = tmp_path / "o", tmp_path / "decisions.csv"
    proc = subprocess.run([str(COBURST), "run", policy, "-o", json.dumps({"decision_log": str(dlog)}),
                           "--enable-dynamic-jobs", "-p", str(DF96), "-w", str(w), "-e", str(out)],
                          capture_output=True, text=True, timeout=250)
    assert proc.returncode == 0, proc.stderr
    from coburst.analysis.metrics import read_jobs

    rows = read_jobs(f"{out}_jobs.csv").to_dict("records")
    assert sorted(int(r["job_id"]) for r in rows) == list(range(12))
    assert all(r["final_state"].startswith("COMPLETED") for r in rows)
    with open(dlog, newline="") as f:
        log = list(csv.DictReader(f))
    assert log and list(log[0]) == ["date", "queue", "running", "policy", "wall_s", "tried"]
    assert {r["policy"] for r in log} == {policy}
    assert all(float(r["wall_s"]) >= 0 and int(r["tried"]) >= 0 for r in log)
    assert [float(r["date"]) for r in log] == sorted(float(r["date"]) for r in log)


@needs_batsim
@pytest.mark.parametrize("entry, options", [
    ("coburstMaxutil.py", {}),
    ("coburstWindow.py", {"window": 12}),
    ("coburstPlan.py", {"policy": "plan-cube-0", "seed": 1}),
])
def test_same_outputs_on_real_batsim(tmp_path, entry, options):
    w = _sample(tmp_path, "alloc_only", 60, 20)
    assert_identical(*run_both(tmp_path, workloads=[w], platform=DF96, options=options,
                               scheduler=str(REPO / "schedulers" / entry)))


def test_coburst_run_prints_the_decision_time_summary(tmp_path):
    """``coburst run`` with a ``decision_log`` option prints the profiler's summary after the
    metrics (one row per queue-length bucket and ``all``, as the log says)."""
    w = _sample(tmp_path, "alloc_only", 12, 50)
    dlog = tmp_path / "decisions.csv"
    proc = subprocess.run([str(COBURST), "run", "backfill-sjf-1", "-o", json.dumps({"decision_log": str(dlog)}),
                           "-p", str(DF96), "-w", str(w), "-e", str(tmp_path / "o")],
                          capture_output=True, text=True, timeout=250)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "decision time" in out and "median ms" in out
    assert out.index("decision time") > out.index("Scheduling metrics")
    from coburst.adapter.profiler import summarize

    summary = summarize(dlog)
    assert summary[-1][0] == "all"
    all_row = next(line for line in out.splitlines() if line.strip("│┃ ").startswith("all"))
    assert all_row.split("│")[2].strip() == str(summary[-1][1])  # decisions
    # without the option: no summary
    proc = subprocess.run([str(COBURST), "run", "backfill-sjf-1", "-p", str(DF96), "-w", str(w),
                           "-e", str(tmp_path / "p")], capture_output=True, text=True, timeout=250)
    assert proc.returncode == 0 and "decision time" not in proc.stdout


def test_plan_kernel_compiles_outside_the_scheduler_timeout(tmp_path):
    """With no compiled kernel on the machine (an empty numba cache), a plan-based run
    compiles it when the policy is made, before the simulation, so a short scheduler
    time-out is not spent compiling (a fresh clone once failed here with the 30 s default)."""
    import os
    w = _sample(tmp_path, "alloc_only", 8, 50)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    proc = subprocess.run([str(COBURST), "run", "plan-square-0", "--timeout", "5", "-q", "-p", str(DF96), "-w",
                           str(w), "-e", str(tmp_path / "o")], capture_output=True, text=True, timeout=280, env=env)
    assert proc.returncode == 0, proc.stderr
    assert any((tmp_path / "numba-cache").rglob("*.nbi"))  # it did compile (into the empty cache)
