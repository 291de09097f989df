"""The co-execution speedup hook (``coburst sim --heatmap``): ELiSE's rule against
hand-computed timelines on the shipped 8-node ARIS co-scheduling platform.

Platform ``platforms/aris_cosched_small.xml``: node i owns resources 4i..4i+3 (half sockets
``s0_h0, s0_h1, s1_h0, s1_h1``).  A job holding all four units of each of its nodes is
compact; one holding ``4 6 8 10`` (half 0 of each socket of nodes 1-2) is spread, and
``5 7 9 11`` is its co-located partner.

Heatmap: speedup(A next to B) = 0.8, (B next to A) = 1.25, (A, A) = 0.9, (B, B) = 1.1; so a
co-scheduled A alone runs at 0.9 (best of its row) and a B alone at 1.25.
"""

from __future__ import annotations

import pytest

from simharness import REPO, run_sim, workload

pytestmark = pytest.mark.timeout(120)

PLATFORM = REPO / "platforms" / "aris_cosched_small.xml"
SPREAD, PARTNER, COMPACT = "4 6 8 10", "5 7 9 11", "0-3"


@pytest.fixture()
def heatmap(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("job\\co_job,A,B\r\nA,0.9,0.8\r\nB,1.25,1.1\r\n")
    return path


def run(tmp_path, heatmap, jobs, allocs, args=()):
    w = workload(tmp_path / "w.json", jobs, {"d10": {"type": "delay", "delay": 10},
                                             "d5": {"type": "delay", "delay": 5}}, nb_res=32)
    return run_sim(tmp_path, workloads=[w], platform=PLATFORM, scheduler="fixed", options={"allocs": allocs},
                   args=["--heatmap", str(heatmap), "--enable-compute-sharing", *args]).check()


def times(row):
    return float(row["starting_time"]), float(row["finish_time"])


def test_elise_rule_timeline(tmp_path, heatmap):
    jobs = [{"id": 1, "subtime": 1, "res": 4, "profile": "d10", "app": "A"},
            {"id": 2, "subtime": 3, "res": 4, "profile": "d10", "app": "B"},
            {"id": 3, "subtime": 1, "res": 4, "profile": "d5", "app": "A"}]
    r = run(tmp_path, heatmap, jobs, {"w0!1": SPREAD, "w0!2": PARTNER, "w0!3": COMPACT})
    rows = r.jobs()
    s1, e1 = times(rows["w0!1"])
    s2, e2 = times(rows["w0!2"])
    s3, e3 = times(rows["w0!3"])
    # compact job: speed 1
    assert e3 - s3 == pytest.approx(5.0, abs=2e-6)
    # j1 alone (spread, no neighbour): 0.9 (best of A's row) until j2 arrives
    # j2 next to j1 (B next to A): 1.25 -> 10 / 1.25 = 8 s, j1 meanwhile at 0.8
    assert e2 - s2 == pytest.approx(8.0, abs=2e-6)
    left = 10 - 0.9 * (s2 - s1) - 0.8 * 8  # j1's work left when j2 ends; then alone again at 0.9
    assert e1 == pytest.approx(e2 + left / 0.9, abs=2e-6)
    # achieved speedups in the metadata
    assert rows["w0!2"]["metadata"] == "speedup=1.250000"
    assert rows["w0!3"]["metadata"] == "speedup=1.000000"
    assert float(rows["w0!1"]["metadata"].split("=")[1]) == pytest.approx(10 / (e1 - s1), abs=2e-6)


def test_alone_factor_and_missing_pair(tmp_path, heatmap):
    """``--heatmap-alone 1.0``: a spread job without neighbour runs at 1; a neighbour with no
    application counts as a missing pair: the job's average speedup (A: (0.9+0.8)/2)."""
    jobs = [{"id": 1, "subtime": 1, "res": 4, "profile": "d10", "app": "A"},
            {"id": 2, "subtime": 1, "res": 4, "profile": "d10"}]
    r = run(tmp_path, heatmap, jobs, {"w0!1": SPREAD, "w0!2": PARTNER}, args=("--heatmap-alone", "1.0"))
    rows = r.jobs()
    s1, e1 = times(rows["w0!1"])
    s2, e2 = times(rows["w0!2"])
    assert e2 - s2 == pytest.approx(10.0, abs=2e-6)  # no application: speed 1
    # j1: at 0.85 while j2 runs (from s2 to e2), alone (1.0) before and after
    work = (s2 - s1) * 1.0 + (e2 - s2) * 0.85
    assert e1 == pytest.approx(e2 + (10 - work) / 1.0, abs=2e-6)


def test_unknown_application_is_an_input_error(tmp_path, heatmap):
    w = workload(tmp_path / "w.json", [{"id": 1, "subtime": 1, "res": 4, "profile": "d10", "app": "Z"}],
                 {"d10": {"type": "delay", "delay": 10}}, nb_res=32)
    r = run_sim(tmp_path, workloads=[w], platform=PLATFORM, scheduler="fixed", args=["--heatmap", str(heatmap)])
    assert r.returncode == 2 and "'Z' is not in the heatmap" in r.stderr and "jobs[id=1].app" in r.stderr
    assert not r.leftovers() or all(not x.endswith(".csv") for x in r.leftovers())


def test_coburst_run_in_process_gives_the_same_timeline(tmp_path, heatmap):
    """``coburst run --heatmap``: the in-process scheduler gets the same speedups as over ZeroMQ."""
    import json
    import subprocess
    import sys

    from simharness import SCHEDULERS

    jobs = [{"id": 1, "subtime": 1, "res": 4, "profile": "d10", "app": "A"},
            {"id": 2, "subtime": 3, "res": 4, "profile": "d10", "app": "B"}]
    allocs = {"w0!1": SPREAD, "w0!2": PARTNER}
    ref = run(tmp_path, heatmap, jobs, allocs)
    w = tmp_path / "w.json"
    proc = subprocess.run([sys.executable, "-m", "coburst", "run", str(SCHEDULERS / "fixed.py"), "-q",
                           "-o", json.dumps({"allocs": allocs}), "-p", str(PLATFORM), "-w", str(w),
                           "-e", str(tmp_path / "inproc"), "--heatmap", str(heatmap), "--enable-compute-sharing"],
                          capture_output=True, text=True, timeout=120, env={"PYTHONPATH": str(SCHEDULERS),
                                                                           "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "inproc_jobs.csv").read_text() == ref.jobs_csv.read_text()
