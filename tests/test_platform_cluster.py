"""Flat-cluster platforms (coburst/platforms/cluster.py, ``coburst platform cluster``) and the
shipped platforms and workloads on the real Batsim 4.2.1 (environment variable ``BATSIM``).

``platforms/kth_sp2.xml`` used to put the master alone in a ``routing="None"`` zone, on which
Batsim 4.2.1 aborts ("There can't be route in an Empty zone"); it is now generated with the
master in a ``routing="Full"`` zone with a loopback route to itself.
"""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from coburst.errors import InputError
from coburst.platforms.cluster import ClusterSpec, kth_sp2_spec, render_xml, spec_from_options
from coburst.platforms.dragonfly import render_cluster_xml, small_spec
from crossengine import assert_identical, needs_batsim, run_both
from simharness import BIN, REPO, run_sim

pytestmark = pytest.mark.timeout(240)

PLATFORMS = REPO / "platforms"
WORKLOADS = REPO / "workloads"
KTH = PLATFORMS / "kth_sp2.xml"
SCHEDULERS = REPO / "schedulers"
REJECT_ALL = str(REPO / "tests" / "schedulers" / "fixed.py")


def first_jobs(tmp_path: Path, name: str, count: int, max_res: int | None = None) -> Path:
    """The first ``count`` jobs (at most ``max_res`` wide) of a bundled workload."""
    doc = json.loads((WORKLOADS / name).read_text())
    jobs = [j for j in doc["jobs"] if max_res is None or j["res"] <= max_res][:count]
    doc["jobs"] = jobs
    doc["profiles"] = {j["profile"]: doc["profiles"][j["profile"]] for j in jobs}
    path = tmp_path / f"first{count}_{name}"
    path.write_text(json.dumps(doc))
    return path


# ---------------------------------------------------------------------- generator
def test_kth_sp2_is_regenerated_byte_for_byte(tmp_path):
    assert KTH.read_text() == render_xml(kth_sp2_spec())
    out = tmp_path / "k.xml"
    proc = subprocess.run([str(BIN / "coburst"), "platform", "cluster", "--kth-sp2", "--no-record-command",
                           "-o", str(out)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text() == KTH.read_text()


def test_master_has_a_full_zone_with_a_route_to_itself():
    root = ET.fromstring(KTH.read_text()).find("zone")
    cluster = root.find("cluster")
    assert (cluster.get("radical"), cluster.get("prefix")) == ("0-99", "node_")
    zone = root.find("zone")
    assert zone.get("routing") == "Full"
    assert [h.get("id") for h in zone.findall("host")] == ["master_host"]
    route = zone.find("route")
    assert (route.get("src"), route.get("dst")) == ("master_host", "master_host")
    assert [c.get("id") for c in route.findall("link_ctn")] == ["master_loopback"]
    # no routing="None" zone left in any generated or shipped platform
    def none_zones(text):
        return [z.get("id") for z in ET.fromstring(text).iter("zone") if z.get("routing") == "None"]

    assert none_zones(render_cluster_xml(small_spec())) == []
    for path in PLATFORMS.glob("*.xml"):
        assert none_zones(path.read_text()) == [], path


@pytest.mark.parametrize("options, where", [
    ({"nodes": 0}, "--nodes"), ({"bw": "0MBps"}, "--bw"), ({"master": "node_7"}, "--master"),
    ({"cluster_id": "a b"}, "--id"), ({"description": "a -- b"}, "--description"), ({"loopback": 1}, "--loopback"),
])
def test_bad_options_are_named(options, where):
    with pytest.raises(InputError) as err:
        spec_from_options(**options)
    assert err.value.source == where


def test_other_sizes(tmp_path):
    text = render_xml(ClusterSpec(nodes=8, cluster_id="c", master_lat="20us"), command="coburst platform cluster")
    assert 'radical="0-7"' in text and 'gw_dst="node_c_router"' in text and 'latency="20us"' in text
    assert '<prop id="generated_by" value="coburst platform cluster"/>' in text


def test_kth_sp2_runs_on_coburst(tmp_path):
    w = first_jobs(tmp_path, "kth_sp2_delay_5000.json", 60)
    run = run_sim(tmp_path, workloads=[w], platform=KTH, scheduler="easyBackfill", timeout=30)
    run.check()
    rows = run.rows()
    assert len(rows) == 60 and all(r["final_state"].startswith("COMPLETED") for r in rows)


# ---------------------------------------------------------------------- real Batsim 4.2.1
@needs_batsim
def test_kth_sp2_on_real_batsim_like_coburst(tmp_path):
    w = first_jobs(tmp_path, "kth_sp2_delay_5000.json", 300)
    assert_identical(*run_both(tmp_path, workloads=[w], platform=KTH, scheduler="easyBackfill"))


@needs_batsim
@pytest.mark.parametrize("platform, workload, max_res, args", [
    ("kth_sp2.xml", "kth_sp2_delay_5000.json", None, ()),
    ("dragonfly96.xml", "kth_alloc_only_sample.json", None, ()),
    ("dragonfly_small.xml", "kth_io_aware_sample.json", 12, ("--enable-dynamic-jobs",)),
    ("aris_cosched_small.xml", "kth_sp2_delay_5000.json", 32, ()),
    ("cluster16.xml", "kth_sp2_delay_5000.json", 16, ()),
], ids=["kth_sp2", "dragonfly96", "dragonfly_small-io-aware", "aris_cosched_small", "cluster16"])
def test_shipped_platforms_run_on_real_batsim(tmp_path, platform, workload, max_res, args):
    """Every shipped platform with coburst's EASY scheduler (pybatsim's storage-unaware
    ``easyBackfill`` would put computations on the dragonflies' storage hosts, which Batsim
    refuses: "Some computation ... is assigned to storage node")."""
    # the heterogeneous presets run on Batsim with identical outputs in tests/test_hetero_platforms.py
    assert sorted(p.name for p in PLATFORMS.glob("*.xml") if not p.name.startswith("hetero_")) == [
        "aris_cosched_small.xml", "cluster16.xml", "dragonfly96.xml", "dragonfly_small.xml", "kth_sp2.xml"]
    w = first_jobs(tmp_path, workload, 25, max_res)
    run = run_sim(tmp_path, workloads=[w], platform=PLATFORMS / platform, scheduler=str(SCHEDULERS / "coburstEasy.py"),
                  engine="batsim", args=args, wait=120)
    assert run.returncode == 0 and run.sched_returncode == 0, run.report()
    from coburst.analysis.metrics import read_jobs
    assert len(read_jobs(run.jobs_csv)) == 25


@needs_batsim
@pytest.mark.parametrize("workload, platform", [
    ("kth_sp2_delay_5000.json", "kth_sp2.xml"), ("kth_alloc_only_sample.json", "dragonfly96.xml"),
    ("kth_io_aware_sample.json", "dragonfly96.xml"), ("malleable_small.json", "cluster16.xml"),
])
def test_shipped_workloads_load_on_real_batsim(tmp_path, workload, platform):
    """Batsim reads every job and profile of each shipped workload (all jobs rejected)."""
    assert sorted(p.name for p in WORKLOADS.glob("*.json")) == ["kth_alloc_only_sample.json",
                                                                "kth_io_aware_sample.json", "kth_sp2_delay_5000.json",
                                                                "malleable_small.json"]
    doc = json.loads((WORKLOADS / workload).read_text())
    ids = [f"w0!{j['id']}" for j in doc["jobs"]]
    run = run_sim(tmp_path, workloads=[WORKLOADS / workload], platform=PLATFORMS / platform, scheduler=REJECT_ALL,
                  options={"reject": ids}, engine="batsim", wait=120)
    assert run.returncode == 0, run.report()
    assert run.schedule()["nb_jobs_rejected"] == str(len(ids))
