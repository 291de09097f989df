"""The burst-buffer-aware malleable policy (coburst.policies.elastic.bb_malleable): a job waiting
for burst-buffer space is admitted by shrinking malleable jobs, and under random workloads
(hypothesis) the burst-buffer space held never exceeds the platform's, besides the elastic
invariants (no node held twice, sizes within bounds, every job ends)."""

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
from test_elastic_invariants import check_run, workloads

pytestmark = pytest.mark.timeout(300)

CAPACITY = 4e10
#: 16 nodes of 1 Gflop/s and one burst-buffer host (role storage) of 40 GB behind the master
PLATFORM = f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="root" routing="Full">
    <cluster id="c" prefix="node_" suffix="" radical="0-15" speed="1Gf" bw="1250MBps" lat="50us"
             bb_bw="2500MBps" bb_lat="500us"/>
    <zone id="master_zone" routing="Full">
      <host id="master_host" speed="1Gf"/>
      <host id="bb0" speed="1Gf"><prop id="role" value="storage"/><prop id="bb_capacity" value="{CAPACITY:.0f}"/></host>
      <link id="master_loopback" bandwidth="10GBps" latency="0"/>
      <link id="bb_link" bandwidth="2GBps" latency="10us"/>
      <route src="master_host" dst="master_host"><link_ctn id="master_loopback"/></route>
      <route src="bb0" dst="master_host"><link_ctn id="bb_link"/></route>
    </zone>
    <link id="master_link" bandwidth="1250MBps" latency="100us"/>
    <zoneRoute src="master_zone" dst="c" gw_src="master_host" gw_dst="node_c_router">
      <link_ctn id="master_link"/>
    </zoneRoute>
  </zone>
</platform>
"""


@pytest.fixture(scope="module")
def platform(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bbplat") / "bb16.xml"
    path.write_text(PLATFORM)
    # (the platform's description cached by a first run in a child process: SimGrid allows one
    # engine a process)
    import subprocess
    import sys

    w = path.with_name("w.json")
    w.write_text(json.dumps({"nb_res": 16, "jobs": [{"id": 1, "subtime": 0, "walltime": -1, "res": 1, "profile": "d"}],
                             "profiles": {"d": {"type": "delay", "delay": 1}}}))
    subprocess.run([sys.executable, "-m", "coburst", "run", "bb-malleable-easy", "-q", "-p", str(path), "-w", str(w),
                    "-e", str(path.with_name("o"))], check=True, capture_output=True, timeout=120)
    return path


def rows(path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_a_job_waiting_for_space_is_admitted_by_a_shrink(tmp_path, platform):
    """A malleable job on 8 nodes holds 8 x 4 GB = 32 GB of the 40; a rigid 2-node job asking for
    8 GB a node has its nodes but not its space: the malleable job shrinks at its next point (to
    6 nodes, 24 GB: 16 GB free) and the rigid job starts then."""
    doc = {"nb_res": 16, "jobs": [
        {"id": 1, "subtime": 0, "walltime": -1, "res": 8, "bb": 4e9, "profile": "a",
         "elastic": {"type": "malleable", "num_nodes_min": 2, "num_nodes_max": 8}},
        {"id": 2, "subtime": 1, "walltime": 100, "res": 2, "bb": 8e9, "profile": "d"}],
        "profiles": {"a": {"type": "delay", "delay": 1, "elastic": {
            "phases": [{"iterations": 6, "tasks": [{"type": "compute", "seconds": 80}]}]}},
            "d": {"type": "delay", "delay": 20}}}
    w = tmp_path / "w.json"
    w.write_text(json.dumps(doc))
    res = run_elastic(platform, [w], "bb-malleable-easy", tmp_path / "o")
    log = rows(tmp_path / "o_reconfigurations.csv")
    assert (log[0]["old_size"], log[0]["new_size"]) == ("8", "6") and 10 <= float(log[0]["date"]) < 10.01
    started = {r["job_id"]: float(r["starting_time"]) for r in rows(res.jobs_csv)}
    assert started["2"] == pytest.approx(float(log[0]["date"]), abs=1e-3)
    # under malleable EASY, blind to burst buffers, it would have started at once
    blind = run_elastic(platform, [w], "malleable-easy", tmp_path / "blind")
    assert {r["job_id"]: float(r["starting_time"]) for r in rows(blind.jobs_csv)}["2"] == 1.0


def bb_held_never_exceeds(doc: dict, folder: Path) -> None:
    """From the outputs: each job's burst buffers (bb bytes a node) over its allocations."""
    jobs = {f"w0!{j['id']}": j for j in doc["jobs"]}
    changes = []  # (time, +/- bytes)
    log = rows(folder / "out_reconfigurations.csv")
    for r in rows(folder / "out_jobs.csv"):
        jid = f"w0!{r['job_id']}"
        per = jobs[jid].get("bb", 0)
        size = len(ProcSet.from_str(r["allocated_resources"]))
        t = float(r["starting_time"])
        for rec in (x for x in log if x["job_id"] == jid):
            changes += [(t, per * size), (float(rec["date"]), -per * size)]
            t, size = float(rec["date"]), int(rec["new_size"])
        changes += [(t, per * size), (float(r["finish_time"]), -per * size)]
    level = 0.0
    for _, amount in sorted(changes, key=lambda c: (c[0], c[1])):  # (ends before starts at one date)
        level += amount
        assert level <= CAPACITY * (1 + 1e-9), (level, changes)


@st.composite
def bb_workloads(draw):
    doc = draw(workloads(walltimes=True))
    for job in doc["jobs"]:
        job["bb"] = draw(st.sampled_from([0, 1e9, 2e9, 2.5e9]))  # (a node: even 16 nodes fit the 40 GB)
    return doc


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=bb_workloads())
def test_invariants_with_burst_buffers(platform, doc):
    with tempfile.TemporaryDirectory() as tmp:
        check_run(doc, Path(tmp), policy="bb-malleable-easy", platform=platform)
        bb_held_never_exceeds(doc, Path(tmp))


def test_a_growth_request_is_clipped_to_the_free_space(tmp_path, platform):
    """An evolving job (4 GB a node) asks to grow from 1 to 10 nodes while another job holds
    8 GB: 28 GB are free, room for 7 more nodes: it is clipped to 8 (malleable EASY, blind to
    burst buffers, grants the 10)."""
    doc = {"nb_res": 16, "jobs": [
        {"id": 1, "subtime": 0, "walltime": -1, "res": 1, "bb": 4e9, "profile": "e",
         "elastic": {"type": "evolving", "num_nodes_min": 1, "num_nodes_max": 10}},
        {"id": 2, "subtime": 0, "walltime": -1, "res": 1, "bb": 8e9, "profile": "d"}],
        "profiles": {"e": {"type": "delay", "delay": 1, "elastic": {"phases": [
            {"iterations": 2, "evolving_request": "10", "tasks": [{"type": "delay", "seconds": 10}]}]}},
            "d": {"type": "delay", "delay": 100}}}
    w = tmp_path / "w.json"
    w.write_text(json.dumps(doc))
    sizes = {}
    for policy in ("bb-malleable-easy", "malleable-easy"):
        run_elastic(platform, [w], policy, tmp_path / policy)
        (row,) = rows(tmp_path / f"{policy}_reconfigurations.csv")
        sizes[policy] = (row["requested_size"], row["new_size"])
    assert sizes == {"bb-malleable-easy": ("10", "8"), "malleable-easy": ("10", "10")}
