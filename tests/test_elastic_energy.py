"""Energy (``-E``) in the elastic mode (coburst.simulator.elastic): a compute task loads its hosts
as the real Batsim 4.2.1's parallel task of the same flops does, a delay leaves them idle with
SimGrid's update of the actor's host at the sleep's end, and a resized job's energy sums its
allocations over time."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from crossengine import needs_batsim
from simharness import run_sim

pytestmark = pytest.mark.timeout(300)

#: four 1-core hosts with two pstates (idle:one core:all cores watts), the master in its own zone
PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="root" routing="Full">
    <cluster id="c" prefix="h" suffix="" radical="0-3" speed="1Gf, 0.5Gf" bw="1250MBps" lat="50us"
             bb_bw="2500MBps" bb_lat="500us">
      <prop id="wattage_per_state" value="100:120:200, 90:100:150"/>
      <prop id="wattage_off" value="10"/>
    </cluster>
    <zone id="master_zone" routing="Full">
      <host id="master_host" speed="1Gf"/>
      <link id="master_loopback" bandwidth="10GBps" latency="0"/>
      <route src="master_host" dst="master_host"><link_ctn id="master_loopback"/></route>
    </zone>
    <link id="master_link" bandwidth="1250MBps" latency="100us"/>
    <zoneRoute src="master_zone" dst="c" gw_src="master_host" gw_dst="hc_router">
      <link_ctn id="master_link"/>
    </zoneRoute>
  </zone>
</platform>
"""


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def elastic_run(tmp: Path, platform: Path, doc: dict, name: str) -> Path:
    w = tmp / f"{name}.json"
    w.write_text(json.dumps(doc))
    proc = subprocess.run([sys.executable, "-m", "coburst", "run", "equipartition", "-q", "-E", "-p", str(platform),
                           "-w", str(w), "-e", str(tmp / name)], capture_output=True, text=True, timeout=200)
    assert proc.returncode == 0, proc.stderr
    return tmp / name


@needs_batsim
def test_compute_and_delay_tasks_consume_what_batsim_counts(tmp_path):
    """A job that waits 5 s then computes 2e9 flops on each of its 4 hosts, and one computing
    1e9 on each of 2: as elastic (rigid) jobs on coburst, and as Batsim ``delay`` then
    ``parallel_homogeneous`` profiles on the real Batsim 4.2.1: the same dates, the same
    ``consumed_energy`` per job and the same ``_consumed_energy.csv``.  (5100 J for the first:
    SimGrid updates a host's energy at the end of an action on it -- the sleep on the job's first
    host -- and not when a parallel task starts, so three hosts count their 5 idle seconds at
    the computing power.)"""
    platform = tmp_path / "energy4.xml"
    platform.write_text(PLATFORM)
    plain = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 1, "walltime": -1, "res": 4, "profile": "A"},
                                   {"id": 2, "subtime": 3, "walltime": -1, "res": 2, "profile": "B"}],
             "profiles": {"A": {"type": "composed", "seq": ["d5", "c2"]}, "d5": {"type": "delay", "delay": 5},
                          "c2": {"type": "parallel_homogeneous", "cpu": 2e9, "com": 0},
                          "B": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}}
    w = tmp_path / "plain.json"
    w.write_text(json.dumps(plain))
    batsim = run_sim(tmp_path, engine="batsim", workloads=[w], platform=platform, prefix="batsim", args=["-E"],
                     wait=120, timeout=60)
    assert batsim.returncode == 0, batsim.report()
    elastic = {"nb_res": 4, "jobs": [dict(j, elastic={"type": "rigid"}) for j in plain["jobs"]], "profiles": {
        "A": {"type": "delay", "delay": 1, "elastic": {"phases": [{"tasks": [
            {"type": "delay", "seconds": 5}, {"type": "compute", "flops": 8e9}]}]}},  # (split over 4 hosts)
        "B": {"type": "delay", "delay": 1, "elastic": {"phases": [{"tasks": [{"type": "compute", "flops": 2e9}]}]}}}}
    ours = elastic_run(tmp_path, platform, elastic, "co")
    cols = ("job_id", "starting_time", "finish_time", "consumed_energy")
    assert [[r[c] for c in cols] for r in rows(ours.with_name("co_jobs.csv"))] == \
        [[r[c] for c in cols] for r in rows(batsim.jobs_csv)]
    assert rows(batsim.jobs_csv)[0]["consumed_energy"] == "5100.000000"
    assert ours.with_name("co_consumed_energy.csv").read_text() == \
        (tmp_path / "batsim_consumed_energy.csv").read_text()


def test_a_resized_job_counts_each_allocation_for_its_time(tmp_path):
    """A malleable job of three 10 s delay iterations on 2 hosts while a rigid job holds the
    other two for 15 s, grown to all 4 at its point after 20 s: idle hosts at 100 W, so
    2 x 20 s x 100 W + 4 x 10 s x 100 W = 8000 J (and the scheduling points' messages: a few
    hundred microseconds on 2 hosts more)."""
    platform = tmp_path / "energy4.xml"
    platform.write_text(PLATFORM)
    doc = {"nb_res": 4, "jobs": [
        {"id": 0, "subtime": 0, "walltime": -1, "res": 2, "profile": "r"},
        {"id": 1, "subtime": 0, "walltime": -1, "res": 2, "profile": "m",
         "elastic": {"type": "malleable", "num_nodes_min": 1, "num_nodes_max": 4}}],
        "profiles": {"r": {"type": "delay", "delay": 15},
                     "m": {"type": "delay", "delay": 1, "elastic": {
                         "phases": [{"iterations": 3, "tasks": [{"type": "delay", "seconds": 10}]}]}}}}
    out = elastic_run(tmp_path, platform, doc, "m")
    log = rows(out.with_name("m_reconfigurations.csv"))
    assert [(r["old_size"], r["new_size"]) for r in log] == [("2", "4")] and 20 <= float(log[0]["date"]) < 20.01
    job = {r["job_id"]: r for r in rows(out.with_name("m_jobs.csv"))}["1"]
    assert 8000 <= float(job["consumed_energy"]) < 8000 + 2 * 100 * 0.01
