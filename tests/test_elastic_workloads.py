"""Malleable workloads from a log (coburst.workloads.malleable, ``coburst workload malleable``):
the recipe's model holds at every job's logged size, its bounds are the ones it names, the
Batsim view of every job is untouched, the same seed gives the same bytes, and the result runs."""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coburst.errors import InputError
from coburst.models.elastic import parse_elastic
from coburst.workloads.malleable import MalleableRecipe, make_malleable
from platform_cache_fill import fill_platform_cache

REPO = Path(__file__).resolve().parents[1]
KTH = REPO / "workloads" / "kth_sp2_delay_5000.json"

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module", autouse=True)
def platform_described():
    """(the Downey test's runs are in the test process: the platform comes from the cache)"""
    fill_platform_cache(REPO / "platforms" / "cluster16.xml")


def doc_of(sizes_times: list[tuple[int, float]], nb_res: int = 100) -> dict:
    return {"nb_res": nb_res,
            "jobs": [{"id": i, "subtime": i, "walltime": 2 * t + 10, "res": p, "profile": f"d{i}"}
                     for i, (p, t) in enumerate(sizes_times)],
            "profiles": {f"d{i}": {"type": "delay", "delay": t} for i, (_, t) in enumerate(sizes_times)}}


@settings(max_examples=200, deadline=None)
@given(jobs=st.lists(st.tuples(st.integers(1, 100), st.floats(1, 1e6)), min_size=1, max_size=20),
       e=st.floats(0.3, 1.0), emin_share=st.floats(0.1, 1.0), f=st.floats(0.05, 1.0), seed=st.integers(0, 2**32 - 1))
def test_the_recipe_fits_each_job_at_its_logged_size(jobs, e, emin_share, f, seed):
    recipe = MalleableRecipe(share=1.0, efficiency=e, min_efficiency=e * emin_share, min_fraction=f, seed=seed)
    doc = doc_of(jobs)
    out = make_malleable(doc, recipe)
    for before, job in zip(doc["jobs"], out["jobs"]):
        assert {k: job[k] for k in ("id", "subtime", "res", "profile")} == {k: before[k] for k in ("id", "subtime",
                                                                                                  "res", "profile")}
        p, runtime = before["res"], doc["profiles"][before["profile"]]["delay"]
        if p == 1 or e < 1 / p:
            assert job == before  # (one node, or an efficiency no Amdahl job has there: rigid)
            continue
        spec = parse_elastic(job, None, "w.json", f"jobs[{job['id']}]")
        assert spec.kind == "malleable"
        # the model gives the logged run time at the logged size, with efficiency e there
        assert spec.model_work([(0, i, p) for i in range(10)], 1e9) == pytest.approx(runtime, rel=1e-9)
        t1 = spec.model_work([(0, i, 1) for i in range(10)], 1e9)

        def efficiency(n):
            return t1 / (n * spec.model_work([(0, i, n) for i in range(10)], 1e9))

        assert efficiency(p) == pytest.approx(e, rel=1e-9)
        assert spec.num_nodes_min == min(p, max(1, math.ceil(f * p - 1e-9)))
        hi = spec.num_nodes_max
        assert p <= hi <= 100
        assert hi == p or efficiency(hi) >= e * emin_share - 1e-9
        assert hi in (p, 100) or efficiency(hi + 1) < e * emin_share + 1e-9
        # the walltime stretches as the time on the smallest size does
        stretch = spec.model_work([(0, i, spec.num_nodes_min) for i in range(10)], 1e9) / runtime
        assert before["walltime"] * stretch - 1e-6 <= job["walltime"] < before["walltime"] * stretch + 1


def test_share_and_seed():
    doc = json.loads(KTH.read_text())
    none = make_malleable(doc, MalleableRecipe(share=0.0))
    assert none["jobs"] == doc["jobs"]
    half = make_malleable(doc, MalleableRecipe(share=0.5, seed=3))
    made = [j["id"] for j in half["jobs"] if "elastic" in j]
    wide = [j["id"] for j in doc["jobs"] if j["res"] > 1]
    assert 0.45 * len(wide) < len(made) < 0.55 * len(wide)
    assert json.dumps(make_malleable(doc, MalleableRecipe(share=0.5, seed=3))) == json.dumps(half)
    assert [j["id"] for j in make_malleable(doc, MalleableRecipe(share=0.5, seed=4))["jobs"] if "elastic" in j] != made
    # a job's draw depends on its place only: a prefix of the log gets the same choices
    prefix = make_malleable({**doc, "jobs": doc["jobs"][:1000]}, MalleableRecipe(share=0.5, seed=3))
    assert prefix["jobs"] == half["jobs"][:1000]


def test_bad_inputs_are_named():
    doc = doc_of([(4, 10.0)])
    doc["profiles"]["d0"] = {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}
    with pytest.raises(InputError, match=r"w.json: jobs\[0\].profile: job 0 has a 'parallel_homogeneous' profile"):
        make_malleable(doc, MalleableRecipe(share=1.0), "w.json")
    with pytest.raises(InputError, match="min_efficiency: expected in"):
        MalleableRecipe(efficiency=0.5, min_efficiency=0.6)


def test_the_command_writes_a_workload_that_runs(tmp_path):
    """``coburst workload malleable`` on the first 300 KTH-SP2 jobs, then malleable EASY on it in
    process: every job ends, within its bounds; Batsim's view of the file is the rigid log."""
    doc = json.loads(KTH.read_text())
    rigid = tmp_path / "rigid.json"
    rigid.write_text(json.dumps({**doc, "jobs": doc["jobs"][:300]}))
    out = tmp_path / "m.json"
    base = [sys.executable, "-m", "coburst"]
    proc = subprocess.run([*base, "workload", "malleable", str(rigid), "-o", str(out), "--share", "0.6",
                           "--on-reconfiguration", "1 + 0.01 * num_nodes"], capture_output=True, text=True, timeout=100)
    assert proc.returncode == 0 and "jobs malleable" in proc.stderr, proc.stderr
    proc = subprocess.run([*base, "run", "malleable-easy", "-q", "-p", str(REPO / "platforms" / "kth_sp2.xml"),
                           "-w", str(out), "-e", str(tmp_path / "o")], capture_output=True, text=True, timeout=250)
    assert proc.returncode == 0, proc.stderr
    with open(tmp_path / "o_jobs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 300 and {r["final_state"] for r in rows} <= {"COMPLETED_SUCCESSFULLY",
                                                                      "COMPLETED_WALLTIME_REACHED"}
    with open(tmp_path / "o_reconfigurations.csv", newline="") as f:
        resizes = list(csv.DictReader(f))
    jobs = {str(j["id"]): j for j in json.loads(out.read_text())["jobs"]}
    assert resizes
    for r in resizes:
        e = jobs[r["job_id"].split("!")[1]]["elastic"]
        assert e["num_nodes_min"] <= int(r["new_size"]) <= e["num_nodes_max"]
    # the same inputs and seed: the same bytes; bad options: a clear error and no file
    again = tmp_path / "again.json"
    subprocess.run([*base, "workload", "malleable", str(rigid), "-o", str(again), "--share", "0.6", "-q",
                    "--on-reconfiguration", "1 + 0.01 * num_nodes"], check=True, timeout=100)
    assert again.read_bytes() == out.read_bytes()
    bad = subprocess.run([*base, "workload", "malleable", str(rigid), "-o", str(tmp_path / "bad.json"),
                          "--on-reconfiguration", "nodes * 2"], capture_output=True, text=True, timeout=100)
    assert bad.returncode != 0 and "unknown variable(s) nodes" in bad.stderr and "Traceback" not in bad.stderr
    assert not (tmp_path / "bad.json").exists()


# ------------------------------------------------------------------ Downey's model
def test_downey_workloads_follow_the_model_and_run(tmp_path):
    """``coburst workload downey``: each job's Batsim delay is its model's time on ``res`` nodes,
    its bounds are [1, min(nodes, ceil(2A))], the same seed gives the same bytes, and the
    elastic invariants hold under three policies."""
    from coburst.models.perf import downey
    from test_elastic_invariants import check_run

    out = tmp_path / "d.json"
    base = [sys.executable, "-m", "coburst", "workload", "downey", "-n", "25", "--nodes", "16", "--seed", "7",
            "--t1-max", "2000", "--gap", "30"]
    subprocess.run([*base, "-o", str(out), "-q"], check=True, timeout=60)
    again = tmp_path / "again.json"
    subprocess.run([*base, "-o", str(again), "-q"], check=True, timeout=60)
    assert out.read_bytes() == again.read_bytes()
    doc = json.loads(out.read_text())
    kinds = set()
    for job in doc["jobs"]:
        profile = doc["profiles"][job["profile"]]
        task = profile["elastic"]["phases"][0]["tasks"][0]
        a, sigma = task["A"], task["sigma"]
        assert 1 <= a <= 16 and 0 <= sigma <= 2
        assert job["elastic"]["num_nodes_max"] == min(16, math.ceil(2 * a)) and job["elastic"]["num_nodes_min"] == 1
        assert profile["delay"] == pytest.approx(downey(task["seconds"] * 10, job["res"], a, sigma), rel=1e-12)
        kinds.add(job["elastic"]["type"])
    assert kinds == {"malleable", "moldable"}
    for policy in ("equipartition", "malleable-easy", "moldable-ect"):
        folder = tmp_path / policy
        folder.mkdir()
        check_run(doc, folder, policy=policy)
    bad = subprocess.run([*base[:-4], "-o", str(tmp_path / "bad.json"), "--t1-min", "100", "--t1-max", "10"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "0 < t1_min <= t1_max" in bad.stderr and not (tmp_path / "bad.json").exists()
