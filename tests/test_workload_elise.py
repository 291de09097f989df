"""``coburst workload elise``: co-scheduling workloads drawn from an application seed."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coburst.errors import InputError
from coburst.models.heatmap import AppSeed, bundled_seed
from coburst.workloads.elise import generate

from simharness import REPO

ARIS = dict(cores_per_node=20, units_per_node=4)


def test_sizes_walltimes_profiles():
    apps = bundled_seed("aris-nas")
    doc = generate(apps, 200, seed=1, **ARIS)
    by_name = {a.name: a for a in apps}
    for job in doc["jobs"]:
        app = by_name[job["app"]]
        nodes = -(-app.processes // 20)
        assert (job["compact_nodes"], job["res"]) == (nodes, 4 * nodes)
        assert job["walltime"] == pytest.approx(1.4 * app.compact_time, abs=1e-6)
        assert doc["profiles"][job["profile"]] == {"type": "delay", "delay": app.compact_time}
        assert job["subtime"] == 0  # ELiSE's published setting: all at t = 0
    assert doc["nb_res"] == max(j["res"] for j in doc["jobs"])


@pytest.mark.parametrize("arrival", ["constant", "uniform", "poisson", "weibull"])
def test_arrivals_have_the_requested_mean(arrival):
    doc = generate(bundled_seed("grvingt-nas"), 4000, arrival=arrival, interarrival=30.0, seed=2, **ARIS)
    sub = np.array([j["subtime"] for j in doc["jobs"]])
    assert sub[0] == 0 and np.all(np.diff(sub) >= 0)
    assert np.mean(np.diff(sub)) == pytest.approx(30.0, rel=0.05)


def test_pick_list_and_frequency():
    apps = [AppSeed("a", 10.0, processes=20, frequency=3.0), AppSeed("b", 20.0, processes=40, frequency=1.0)]
    doc = generate(apps, 6, pick=["b", "a"], **ARIS)
    assert [j["app"] for j in doc["jobs"]] == ["b", "a"] * 3
    doc = generate(apps, 4000, pick="frequency", seed=5, **ARIS)
    share = sum(j["app"] == "a" for j in doc["jobs"]) / 4000
    assert share == pytest.approx(0.75, abs=0.03)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 50), arrival=st.sampled_from(["zero", "poisson", "weibull"]))
def test_same_seed_same_bytes(seed, n, arrival):
    apps = bundled_seed("aris-spec")
    a = generate(apps, n, seed=seed, arrival=arrival, **ARIS)
    b = generate(apps, n, seed=seed, arrival=arrival, **ARIS)
    assert json.dumps(a) == json.dumps(b)


@pytest.mark.parametrize("kwargs, option", [
    ({"arrival": "gamma"}, "--arrival"), ({"interarrival": float("nan"), "arrival": "poisson"}, "--interarrival"),
    ({"walltime_factor": 0.5}, "--walltime-factor"), ({"pick": ["nope"]}, "--pick"),
    ({"weibull_shape": 0.0}, "--weibull-shape"),
])
def test_bad_options(kwargs, option):
    with pytest.raises(InputError) as err:
        generate(bundled_seed("aris-nas"), 10, **ARIS, **kwargs)
    assert option in str(err.value)


def test_cli_on_the_cosched_platform_runs_with_the_heatmap(tmp_path):
    """Generate for the shipped 8-node ARIS platform, run it with pybatsim's EASY and the ARIS
    heatmap: every job finishes, each with its achieved speedup in the metadata."""
    platform = REPO / "platforms" / "aris_cosched_small.xml"
    w = tmp_path / "w.json"
    cmd = [sys.executable, "-m", "coburst", "workload", "elise", "-n", "25", "-o", str(w), "-p", str(platform),
           "--arrival", "poisson", "--interarrival", "30", "--seed", "4", "-q"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(w.read_text())
    assert max(j["compact_nodes"] for j in doc["jobs"]) <= 8
    proc = subprocess.run([sys.executable, "-m", "coburst", "run", "easyBackfill", "-q", "-p", str(platform),
                           "-w", str(w), "-e", str(tmp_path / "o"), "--heatmap",
                           str(REPO / "models" / "heatmaps" / "aris-nas.heatmap.csv")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = (tmp_path / "o_jobs.csv").read_text().splitlines()[1:]
    assert len(rows) == 25 and all("COMPLETED_SUCCESSFULLY" in r and "speedup=1.000000" in r for r in rows)
