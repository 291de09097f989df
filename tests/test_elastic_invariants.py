"""Invariants of elastic runs under the equipartition policy, on random workloads (hypothesis):
no resource is ever given to two jobs at once, every job ends, every allocation stays in the
job's bounds (a rigid or evolving job starts on res), and each job's execution time is what its
performance model gives for the sizes it ran its iterations on, plus its reconfiguration costs
(and the scheduling points' 1-byte messages: under a millisecond each, and a millisecond for each
job whose events of the same date go first)."""

from __future__ import annotations

import csv
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from coburst.adapter.elastic import run_elastic
from coburst.models.elastic import parse_elastic
from platform_cache_fill import fill_platform_cache

REPO = Path(__file__).resolve().parents[1]
C16 = REPO / "platforms" / "cluster16.xml"
NODES, SPEED = 16, 1e9
KINDS = ("none", "rigid", "moldable", "malleable", "evolving", "adaptive")

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module", autouse=True)
def platform_described():
    """(the runs here are in the test process: the platform comes from the cache)"""
    fill_platform_cache(C16)


@st.composite
def tasks(draw, network=False):
    kind = draw(st.sampled_from(["delay", "flops", "linear", "amdahl", "downey", *(["comm"] * 2 if network else [])]))
    seconds = draw(st.integers(1, 60))
    if kind == "comm":  # (simulated on the network: its time is not in the model's work)
        return {"type": "communication", "bytes": f"{seconds}e8 * num_nodes",
                "pattern": draw(st.sampled_from(["all_to_all", "ring", "gather", "master_worker"]))}
    if kind == "delay":
        return {"type": "delay", "seconds": f"{seconds} + 0 * iteration"}
    if kind == "flops":
        return {"type": "compute", "flops": f"{seconds}e9 * (1 + iteration % 2)"}
    task = {"type": "compute", "seconds": seconds, "model": kind}
    if kind == "amdahl":
        task["serial_fraction"] = draw(st.sampled_from([0.0, 0.05, 0.3]))
    if kind == "downey":
        task.update(A=draw(st.integers(1, 16)), sigma=draw(st.sampled_from([0.0, 0.5, 1.0, 2.5])))
    return task


@st.composite
def workloads(draw, network=False, walltimes=False):
    profiles, jobs = {}, []
    for i in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(KINDS))
        lo = draw(st.integers(1, 8))
        hi = draw(st.integers(lo, 16))
        res = draw(st.integers(lo, hi))
        phases = [{"iterations": draw(st.integers(1, 5)), "tasks": draw(st.lists(tasks(network), min_size=1, max_size=2)),
                   "scheduling_point": draw(st.booleans()) or p == 0,
                   **({"evolving_request": f"{draw(st.integers(1, 16))} if iteration % 2 else num_nodes"}
                      if draw(st.booleans()) else {})}
                  for p in range(draw(st.integers(1, 2)))]
        profiles[f"p{i}"] = {"type": "delay", "delay": draw(st.integers(1, 100)),
                             "elastic": {"phases": phases,
                                         "on_init": draw(st.sampled_from(["0", "1", "0.5 * num_nodes"])),
                                         "on_reconfiguration": draw(st.sampled_from(["0", "2", "1 + 0.1 * num_nodes"])),
                                         "on_expansion": draw(st.sampled_from(["0", "num_nodes - old_num_nodes"])),
                                         **({"redistribution": draw(st.sampled_from(["1e9", "num_nodes * 1e8"]))}
                                            if network and draw(st.booleans()) else {})}}
        # (a walltime, for backfilling, far above any job's time here: every job still ends by itself)
        walltime = draw(st.sampled_from([-1, 20000, 40000])) if walltimes else -1
        job = {"id": i, "subtime": draw(st.integers(0, 120)), "walltime": walltime, "res": res, "profile": f"p{i}"}
        if kind == "rigid":
            lo = hi = res
        if kind != "none":
            job["elastic"] = {"type": kind, "num_nodes_min": lo, "num_nodes_max": hi}
        jobs.append(job)
    return {"nb_res": NODES, "jobs": jobs, "profiles": profiles}


def check_run(doc: dict, folder: Path, network: bool = False, policy: str = "equipartition",
              platform: Path = C16) -> None:
    """(``network``: communication tasks and data redistributions take time the model does not
    count, so the execution time is only bounded below.)"""
    w = folder / "w.json"
    w.write_text(json.dumps(doc))
    result = run_elastic(platform, [w], policy, folder / "out")
    with open(result.jobs_csv, newline="") as f:
        rows = {f"w0!{r['job_id']}": r for r in csv.DictReader(f)}
    with open(folder / "out_reconfigurations.csv", newline="") as f:
        log = list(csv.DictReader(f))
    # every job ends, successfully (no walltime)
    assert len(rows) == len(doc["jobs"]) and all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in rows.values())
    by_job: dict[str, list[dict]] = {}
    for r in log:
        by_job.setdefault(r["job_id"], []).append(r)
    intervals = []  # (job, start, end, allocation)
    for job in doc["jobs"]:
        jid = f"w0!{job['id']}"
        row = rows[jid]
        spec = parse_elastic(job, doc["profiles"][job["profile"]], "w.json", jid)
        start, end = float(row["starting_time"]), float(row["finish_time"])
        alloc = ProcSet.from_str(row["allocated_resources"])
        if spec is None:
            assert len(alloc) == job["res"]
            intervals.append((jid, start, end, alloc))
            continue
        lo, hi = spec.start_sizes()
        assert lo <= len(alloc) <= hi
        t, sizes, cost = start, {}, 0.0
        for r in by_job.get(jid, []):
            assert ProcSet.from_str(r["old_allocation"]) == alloc
            assert spec.resizable
            new = ProcSet.from_str(r["new_allocation"])
            assert spec.num_nodes_min <= len(new) <= spec.num_nodes_max
            if spec.kind == "evolving":
                req = int(r["requested_size"])
                assert min(len(alloc), req) <= len(new) <= max(len(alloc), req)
            date = float(r["date"])
            intervals.append((jid, t, date, alloc))
            sizes[(int(r["phase"]), int(r["iteration"]))] = len(new)
            t, alloc = date, new
            cost += float(r["reconfiguration_time"])
        intervals.append((jid, t, end, alloc))
        # work conserved per the model: the iterations' times at the sizes they ran on
        n = int(ProcSet.from_str(row["allocated_resources"]).__len__())
        work = spec.cost(spec.app.on_init, n, n, SPEED)
        for p, count in enumerate(spec.iterations):
            for i in range(count):
                work += spec.iteration_time(p, i, n, SPEED)
                n = sizes.get((p, i), n)
        points = sum(count for p, count in enumerate(spec.iterations) if spec.app.phases[p].scheduling_point)
        runtime = float(row["execution_time"])
        assert work + cost - 2e-6 <= runtime, (jid, work, cost, runtime)
        # (a point's message waits behind the other events of its date: a millisecond a job at most)
        slack = (points + len(doc["jobs"])) * 1e-3
        assert network or runtime <= work + cost + slack + 2e-6, (jid, work, cost, runtime)
    # no resource given to two jobs at once
    for a in range(len(intervals)):
        ja, sa, ea, pa = intervals[a]
        for b in range(a + 1, len(intervals)):
            jb, sb, eb, pb = intervals[b]
            if ja != jb and sa < eb and sb < ea:
                assert not (pa & pb), (intervals[a], intervals[b])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_equipartition_invariants(doc):
    with tempfile.TemporaryDirectory() as tmp:
        check_run(doc, Path(tmp))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(network=True))
def test_equipartition_invariants_with_network_tasks(doc):
    """The same with communication tasks and data redistributions, which the network times."""
    with tempfile.TemporaryDirectory() as tmp:
        check_run(doc, Path(tmp), network=True)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(walltimes=True))
def test_malleable_easy_invariants(doc):
    """Malleable EASY backfilling: the same invariants, with walltimes its reservations read."""
    with tempfile.TemporaryDirectory() as tmp:
        check_run(doc, Path(tmp), policy="malleable-easy")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(walltimes=True))
def test_moldable_ect_invariants(doc):
    """Sizing by expected completion (the jobs' models forwarded with their profiles)."""
    with tempfile.TemporaryDirectory() as tmp:
        check_run(doc, Path(tmp), policy="moldable-ect")


AGREEMENTS = [f"{size}-{name}" for size in ("min", "pref", "average")
              for name in ("agreement", "common-pool", "steal-agreement")]


@pytest.mark.parametrize("policy", AGREEMENTS)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=workloads(walltimes=True))
def test_agreement_strategies_invariants(policy, doc):
    """The nine agreement strategies (Posner et al. 2023): promised nodes go to one job at a time."""
    with tempfile.TemporaryDirectory() as tmp:
        check_run(doc, Path(tmp), policy=policy)


@pytest.mark.parametrize("policy", ["equipartition", "malleable-easy", "moldable-ect", *AGREEMENTS])
def test_bundled_workload_invariants(tmp_path, policy):
    check_run(json.loads((REPO / "workloads" / "malleable_small.json").read_text()), tmp_path, policy=policy)
