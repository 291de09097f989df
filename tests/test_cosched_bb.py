"""Burst-buffer-aware co-scheduling with network contention, end to end.

A node-sharing platform with burst-buffer storage hosts and a PFS (``coburst platform cosched
--bb-nodes``); jobs naming their application, requesting burst buffer and running as
communicating parallel tasks; a co-scheduling policy placing units and burst buffers; the
heatmap speedup hook changing the tasks' speeds while they share the network (node ports,
backbone, memory buses).  Checked from the engine's outputs: every job finished, burst-buffer
capacity never exceeded at any instant, units never given twice, speedups recorded.  The same
platform and entry file with delay jobs are identical on the real Batsim 4.2.1.
"""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import pytest

from crossengine import assert_identical, needs_batsim, run_both
from simharness import COBURST, REPO
from test_cosched_engine import check_invariants

CAP = 10 * 10**9
APPS = ["bt.D.256", "cg.D.128", "ep.E.256", "ft.D.256", "is.E.256", "bt.D.64"]


def platform(tmp_path: Path) -> Path:
    p = tmp_path / "bbco.xml"
    subprocess.run([str(COBURST), "platform", "cosched", "--nodes", "8", "--bb-nodes", "2", "--bb-capacity", "10GB",
                    "-o", str(p)], check=True, capture_output=True)
    return p


def workload(tmp_path: Path, ptask: bool) -> Path:
    jobs, profiles = [], {}
    for i in range(24):
        app = APPS[i % len(APPS)]
        nodes = 1 + (i * 7) % 3
        runtime = 20 + (i * 13) % 40
        prof = f"p{i}"
        if ptask:  # work of each unit (5 cores x 1 Gf) and 200 MB to every other unit
            profiles[prof] = {"type": "parallel_homogeneous", "cpu": runtime * 5e9, "com": 2e8}
        else:
            profiles[prof] = {"type": "delay", "delay": runtime}
        jobs.append({"id": i, "subtime": i * 3, "walltime": 4 * runtime + 60, "res": 4 * nodes, "profile": prof,
                     "app": app, "bb": (1 + i % 4) * 10**9})
    path = tmp_path / ("ptask.json" if ptask else "delay.json")
    path.write_text(json.dumps({"nb_res": 32, "jobs": jobs, "profiles": profiles}) + "\n")
    return path


def bb_peak(rows: list[dict]) -> dict[int, int]:
    """Highest bytes in use on each burst-buffer resource over time (from the metadata)."""
    events = []
    for r in rows:
        for part in r["metadata"].split(";"):
            if part.startswith("bb="):
                for item in part[3:].split("/"):
                    rid, nbytes = (int(x) for x in item.split(":"))
                    events.append((float(r["starting_time"]), 1, rid, nbytes))
                    events.append((float(r["finish_time"]), 0, rid, -nbytes))
    use: dict[int, int] = {}
    peak: dict[int, int] = {}
    for _, _, rid, delta in sorted(events):
        use[rid] = use.get(rid, 0) + delta
        peak[rid] = max(peak.get(rid, 0), use[rid])
    return peak


@pytest.mark.parametrize("policy", ["easy-co", "pair-greedy", "conservative"])
def test_burst_buffer_co_scheduling_with_network_contention(tmp_path, policy):
    plat, wl = platform(tmp_path), workload(tmp_path, ptask=True)
    out = tmp_path / "out"
    proc = subprocess.run([str(COBURST), "run", policy, "-p", str(plat), "-w", str(wl), "--heatmap", "aris-nas",
                           "-e", str(out), "-q"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    with open(f"{out}_jobs.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 24
    check_invariants(rows, policy != "conservative")
    peak = bb_peak(rows)
    assert peak and all(v <= CAP for v in peak.values()), peak
    assert set(peak) <= {32, 33}                   # the two burst-buffer hosts (ids after the units)
    assert all("speedup=" in r["metadata"] and "bb=" in r["metadata"] for r in rows)
    # communicating tasks: a job's time is its work at the heatmap speed plus its transfers
    assert all(float(r["execution_time"]) > 0 for r in rows)


@needs_batsim
def test_burst_buffer_co_scheduling_platform_on_real_batsim_like_coburst(tmp_path):
    batsim, coburst = run_both(tmp_path, workloads=[workload(tmp_path, ptask=False)], platform=platform(tmp_path),
                               scheduler=str(REPO / "schedulers" / "coschedEasyCo.py"))
    assert_identical(batsim, coburst)
