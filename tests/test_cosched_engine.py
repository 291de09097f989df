"""The co-scheduling policies on the real engine: every policy through ``coburst run`` with the
heatmap hook, the model's invariants checked on the ``_jobs.csv`` the engine wrote (also on
random workloads, hypothesis), and the entry files on the real Batsim 4.2.1 giving identical
outputs (tests/crossengine.py; skipped without BATSIM).
"""

from __future__ import annotations

import csv
import json
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crossengine import assert_identical, jobs_rows, needs_batsim, run_both
from simharness import COBURST, REPO
from coburst.models.heatmap import bundled_seed
from coburst.policies import cosched
from coburst.workloads.elise import generate

SMALL = REPO / "platforms" / "aris_cosched_small.xml"   # 8 ARIS nodes, 4 half-socket units each
UNITS_PER_NODE = 4
SEED_APPS = bundled_seed("aris-nas")


def elise_workload(path: Path, n: int, seed: int, arrival: str = "poisson", interarrival: float = 40.0,
                   max_nodes: int = 4) -> Path:
    small = [a for a in SEED_APPS if a.processes and a.processes <= max_nodes * 20]
    wl = generate(small, n, cores_per_node=20, units_per_node=UNITS_PER_NODE, arrival=arrival,
                  interarrival=interarrival, seed=seed)
    path.write_text(json.dumps(wl) + "\n")
    return path


def run(tmp_path: Path, policy: str, wl: Path, *extra: str, prefix: str = "out") -> list[dict]:
    out = tmp_path / prefix
    proc = subprocess.run([str(COBURST), "run", policy, "-p", str(SMALL), "-w", str(wl), "-e", str(out), "-q",
                           *extra], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    with open(f"{out}_jobs.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def units_of(alloc: str) -> set[int]:
    out = set()
    for part in alloc.split():
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def check_invariants(rows: list[dict], co: bool) -> None:
    """From the engine's outputs: every job finished; at every instant no unit held twice, a
    compact job alone on its nodes, at most two jobs per node; compact policies compact."""
    assert rows and all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in rows), \
        [(r["job_id"], r["final_state"]) for r in rows if r["final_state"] != "COMPLETED_SUCCESSFULLY"]
    jobs = []
    for r in rows:
        u = units_of(r["allocated_resources"])
        nodes = {x // UNITS_PER_NODE for x in u}
        compact = len(u) == UNITS_PER_NODE * len(nodes)
        assert compact or (len(u) == 2 * len(nodes)), f"job {r['job_id']}: neither compact nor spread: {u}"
        assert len(u) == int(r["requested_number_of_resources"])
        jobs.append((float(r["starting_time"]), float(r["finish_time"]), u, nodes, compact, r["job_id"]))
        if not co:
            assert compact, f"job {r['job_id']} not compact under a compact policy"
    for t in sorted({j[0] for j in jobs}):
        live = [j for j in jobs if j[0] <= t < j[1]]
        held: dict[int, str] = {}
        per_node: dict[int, list] = defaultdict(list)
        for start, end, u, nodes, compact, jid in live:
            for x in u:
                assert x not in held, f"unit {x} held by {held[x]} and {jid} at {t}"
                held[x] = jid
            for n in nodes:
                per_node[n].append((jid, compact))
        for n, js in per_node.items():
            assert len(js) <= 2, f"node {n} holds {js} at {t}"
            assert len(js) == 1 or not any(c for _, c in js), f"compact job not alone on node {n} at {t}: {js}"


@pytest.fixture(scope="module")
def workload30(tmp_path_factory) -> Path:
    return elise_workload(tmp_path_factory.mktemp("wl") / "w.json", 30, seed=3)


@pytest.mark.parametrize("name", sorted(cosched.families()))
def test_every_policy_runs_with_the_heatmap_hook(tmp_path, workload30, name):
    rows = run(tmp_path, name, workload30, "--heatmap", "aris-nas")
    co = cosched.families()[name].co
    check_invariants(rows, co)
    speedups = [r["metadata"] for r in rows]
    assert all("speedup=" in m for m in speedups)
    if co:  # spread jobs run at heatmap speeds, not all exactly the compact time
        assert any(not m.endswith("speedup=1") for m in speedups)


@pytest.mark.parametrize("name", ["easy-co", "popularity", "sjf-filler", "conservative"])
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n=st.integers(5, 40), arrival=st.sampled_from(["zero", "poisson", "uniform"]))
def test_invariants_on_random_workloads_through_the_engine(tmp_path, name, seed, n, arrival):
    wl = elise_workload(tmp_path / f"w{seed}.json", n, seed, arrival, interarrival=30.0, max_nodes=8)
    rows = run(tmp_path, name, wl, "--heatmap", "aris-nas", prefix=f"o{seed}")
    check_invariants(rows, cosched.families()[name].co)
    assert len(rows) == n


def test_same_inputs_same_outputs(tmp_path, workload30):
    a = run(tmp_path, "pair-greedy", workload30, "--heatmap", "aris-nas", prefix="a")
    b = run(tmp_path, "pair-greedy", workload30, "--heatmap", "aris-nas", prefix="b")
    assert a == b


def test_entry_file_rejects_policy_option_and_bad_parameters(tmp_path, workload30):
    out = tmp_path / "x"
    proc = subprocess.run([str(COBURST), "run", str(REPO / "schedulers" / "coschedEasyCo.py"), "-o",
                           '{"policy": "fcfs"}', "-p", str(SMALL), "-w", str(workload30), "-e", str(out), "-q"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "always runs 'easy-co'" in proc.stderr + proc.stdout
    assert not list(tmp_path.glob("x_*"))
    proc = subprocess.run([str(COBURST), "run", "popularity", "-o", '{"threshold": -1}', "-p", str(SMALL),
                           "-w", str(workload30), "-e", str(out), "-q"], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "threshold" in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr


# ---------------------------------------------------------------------- real Batsim 4.2.1
@needs_batsim
@pytest.mark.parametrize("entry", ["coschedEasyCo", "coschedConservative", "coschedFiller", "coschedPopularity",
                                   "coschedPairGreedy", "coschedSjfFiller", "coschedLafCo"])
def test_entry_files_on_real_batsim_like_coburst(tmp_path, entry):
    """Same entry file, same workload, both engines (no heatmap: Batsim has none): identical
    messages and outputs; compute sharing is not needed (units are never given twice)."""
    wl = elise_workload(tmp_path / "w.json", 25, seed=11, interarrival=25.0, max_nodes=8)
    batsim, coburst = run_both(tmp_path, workloads=[wl], platform=SMALL,
                               scheduler=str(REPO / "schedulers" / f"{entry}.py"))
    assert_identical(batsim, coburst)
    rows = jobs_rows(coburst)
    check_invariants(rows, entry not in ("coschedConservative",))


def test_bad_heatmap_option_names_the_option_and_the_file(tmp_path, workload30):
    bad = tmp_path / "bad.json"
    bad.write_text("[1,2\n")
    proc = subprocess.run([str(COBURST), "run", "popularity", "-o", json.dumps({"heatmap": str(bad)}), "-p",
                           str(SMALL), "-w", str(workload30), "-e", str(tmp_path / "x"), "-q"],
                          capture_output=True, text=True, timeout=60)
    err = proc.stderr + proc.stdout
    assert proc.returncode == 2 and "Traceback" not in err
    assert f"-o/--options: heatmap: {bad}: line 2" in err  # one line, before the scheduler starts
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_run_heatmap_reaches_the_policies_that_read_one(tmp_path, workload30):
    """``coburst run --heatmap X``: a policy that reads a heatmap (Popularity) decides on X
    when its options name none -- the same run as naming X in the options, and not the run
    deciding on the default aris-nas heatmap."""
    from coburst.models.heatmap import bundled_path
    src = bundled_path("aris-nas").read_text().splitlines()
    unfriendly = [src[0]] + [",".join([r.split(",")[0]] + ["0.5" if c else "" for c in r.split(",")[1:]])
                             for r in src[1:]]
    x = tmp_path / "unfriendly.heatmap.csv"
    x.write_text("\n".join(unfriendly) + "\n")
    a = run(tmp_path, "popularity", workload30, "--heatmap", str(x), prefix="a")
    b = run(tmp_path, "popularity", workload30, "--heatmap", str(x), "-o", json.dumps({"heatmap": str(x)}), prefix="b")
    c = run(tmp_path, "popularity", workload30, "--heatmap", str(x), "-o", json.dumps({"heatmap": "aris-nas"}),
            prefix="c")
    assert a == b
    assert a != c
