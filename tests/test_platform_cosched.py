"""Co-scheduling platforms (coburst/platforms/cosched.py, ``coburst platform cosched``):
one Batsim resource per half socket or core, on ``coburst sim`` and on the real Batsim 4.2.1."""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET

import pytest

from coburst.errors import InputError
from coburst.platforms.cosched import (CoschedSpec, aris_small_spec, host_name, render_xml, resource_id,
                                       spec_from_options, units)
from crossengine import assert_identical, jobs_rows, needs_batsim, run_both
from simharness import BIN, REPO, run_sim, workload

pytestmark = pytest.mark.timeout(240)

SMALL = REPO / "platforms" / "aris_cosched_small.xml"
PROFILES = {"d10": {"type": "delay", "delay": 10}, "d5": {"type": "delay", "delay": 5},
            "d3": {"type": "delay", "delay": 3}}


# ---------------------------------------------------------------------- generator
def test_small_platform_is_regenerated_byte_for_byte(tmp_path):
    assert SMALL.read_text() == render_xml(aris_small_spec())
    out = tmp_path / "a.xml"
    proc = subprocess.run([str(BIN / "coburst"), "platform", "cosched", "--aris-small", "--no-record-command",
                           "-o", str(out)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == SMALL.read_bytes()
    assert "32 half-socket units" in proc.stderr


def test_same_options_same_bytes_and_command_recorded():
    spec = spec_from_options(nodes=3, preset="marconi", unit="core")
    assert render_xml(spec, "coburst platform cosched x") == render_xml(spec, "coburst platform cosched x")
    assert '<prop id="generated_by" value="coburst platform cosched x"/>' in render_xml(spec, "coburst platform "
                                                                                              "cosched x")
    # an explicit shape equal to the preset's changes nothing
    assert render_xml(spec_from_options(nodes=3, preset="marconi", sockets=2, cores=24, unit="core")) == \
        render_xml(spec)


def _hosts(text):
    root = ET.fromstring(text).find("zone")
    zone_props = {p.get("id"): p.get("value") for p in root.findall("prop")}
    hosts = {}
    for zone in root.findall("zone"):
        for h in zone.findall("host"):
            props = {p.get("id"): p.get("value") for p in h.findall("prop")}
            hosts[h.get("id")] = (h.get("speed"), props, zone.get("id"))
    return zone_props, hosts


def test_structure_of_the_small_platform():
    zone_props, hosts = _hosts(SMALL.read_text())
    assert zone_props == {"platform": "cosched", "preset": "aris", "nodes": "8", "sockets": "2",
                          "cores_per_socket": "10", "unit": "half-socket", "units_per_socket": "2",
                          "cores_per_unit": "5", "core_speed": "1000000000"}
    compute = sorted(h for h in hosts if h != "master_host")
    assert len(compute) == 32 and compute[:5] == ["n0_s0_h0", "n0_s0_h1", "n0_s1_h0", "n0_s1_h1", "n1_s0_h0"]
    assert hosts["master_host"][2] == "master_zone"
    for rid, name in enumerate(compute):
        speed, props, zone = hosts[name]
        node, socket, unit = int(props["node"]), int(props["socket"]), int(props["unit"])
        assert resource_id(aris_small_spec(), node, socket, unit) == rid  # Batsim: ids in name order
        assert name == f"n{node}_s{socket}_h{unit}" and zone == f"n{node}"
        assert props == {"role": "compute_node", "node": str(node), "socket": str(socket), "unit": str(unit),
                         "cores": "5"}
        assert speed == "5000000000f"
    # no routing="None" zone (Batsim 4.2.1 aborts on a master alone in one)
    assert all(z.get("routing") == "Full" for z in ET.fromstring(SMALL.read_text()).iter("zone"))


@pytest.mark.parametrize("options, first, last, count, speed", [
    ({"nodes": 100, "preset": "marconi", "unit": "core"}, "n00_s0_c00", "n99_s1_c23", 4800, "1000000000f"),
    ({"nodes": 11, "preset": "grvingt", "core_speed": "2.5Gf"}, "n00_s0_h0", "n10_s1_h1", 44, "20000000000f"),
    ({"nodes": 2, "sockets": 12, "cores": 3, "unit": "core"}, "n0_s00_c0", "n1_s11_c2", 72, "1000000000f"),
])
def test_padded_names_sort_in_resource_order(options, first, last, count, speed):
    spec = spec_from_options(**options)
    names = [host_name(spec, *u) for u in units(spec)]
    assert len(names) == spec.nb_units == count and names == sorted(names) and (names[0], names[-1]) == (first, last)
    assert [resource_id(spec, *u) for u in units(spec)] == list(range(count))
    if count < 100:
        zone_props, hosts = _hosts(render_xml(spec))
        assert sorted(h for h in hosts if h != "master_host") == names
        assert {hosts[n][0] for n in names} == {speed}
        assert zone_props["preset"] == spec.preset


@pytest.mark.parametrize("options, where", [
    ({"nodes": 0}, "--nodes"), ({"nodes": True}, "--nodes"), ({"preset": "summit"}, "--preset"),
    ({"preset": "aris", "cores": 12}, "--cores"), ({"preset": "marconi", "sockets": 4}, "--sockets"),
    ({"preset": "custom", "sockets": 2}, "--cores"), ({"sockets": 0, "cores": 4}, "--sockets"),
    ({"sockets": 2, "cores": 5}, "--unit"), ({"unit": "socket"}, "--unit"), ({"core_speed": "0f"}, "--core-speed"),
    ({"core_speed": "fast"}, "--core-speed"), ({"link_bw": "0Bps"}, "--link-bw"),
    ({"link_lat": "1 parsec"}, "--link-lat"),
    ({"membus_bw": "1Gf"}, "--membus-bw"), ({"master": "n3_router"}, "--master"), ({"master": "a b"}, "--master"),
    ({"description": "a -- b"}, "--description"), ({"sharing": 1}, "--sharing"),
])
def test_bad_options_are_named(options, where):
    with pytest.raises(InputError) as err:
        spec_from_options(**options)
    assert err.value.source == where


def test_cli_bad_option_exits_2_and_writes_nothing(tmp_path):
    out = tmp_path / "x.xml"
    proc = subprocess.run([str(BIN / "coburst"), "platform", "cosched", "--preset", "aris", "--unit", "half-socket",
                           "--cores", "7", "-o", str(out)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--cores" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()


# ---------------------------------------------------------------------- coburst sim
def test_small_platform_runs_on_coburst(tmp_path):
    """The resources Batsim would announce, and pybatsim's easyBackfill on a few delay jobs."""
    w = workload(tmp_path / "w.json", [
        {"id": "1", "subtime": 0, "res": 4, "profile": "d10"},
        {"id": "2", "subtime": 1, "res": 30, "profile": "d5"},
        {"id": "3", "subtime": 2, "res": 2, "profile": "d5"},
        {"id": "4", "subtime": 3, "res": 32, "profile": "d3"},
    ], PROFILES, nb_res=32)
    run = run_sim(tmp_path, workloads=[w], platform=SMALL, scheduler="fixed", record=True, prefix="fixed",
                  options={"allocs": {"w0!1": "0-3", "w0!2": "4-31 0-1", "w0!3": "30-31", "w0!4": "0-31"}},
                  args=["--enable-compute-sharing"], timeout=30).check()
    begins = run.events("SIMULATION_BEGINS")[0]["data"]
    assert begins["nb_compute_resources"] == 32 and begins["nb_storage_resources"] == 0
    resources = begins["compute_resources"]
    spec = aris_small_spec()
    assert [r["name"] for r in resources] == [host_name(spec, *u) for u in units(spec)]
    for r, (n, s, u) in zip(resources, units(spec)):
        assert r["id"] == resource_id(spec, n, s, u)
        assert r["properties"] == {"role": "compute_node", "node": str(n), "socket": str(s), "unit": str(u),
                                   "cores": "5"}
        assert r["zone_properties"]["unit"] == "half-socket" and r["zone_properties"]["nodes"] == "8"
    assert {r["job_id"]: r["final_state"] for r in run.rows()} == dict.fromkeys("1234", "COMPLETED_SUCCESSFULLY")

    easy = run_sim(tmp_path, workloads=[w], platform=SMALL, scheduler="easyBackfill", prefix="easy",
                   timeout=30).check()
    rows = {r["job_id"]: r for r in easy.rows()}
    assert {k: (r["allocated_resources"], r["starting_time"]) for k, r in rows.items()} == {
        "1": ("0-3", "0.000000"), "3": ("30-31", "2.000000"),
        "2": ("0-29", "10.000102"), "4": ("0-31", "15.000204")}


# ---------------------------------------------------------------------- real Batsim 4.2.1
def _cross_workload(tmp_path):
    return workload(tmp_path / "w.json", [
        {"id": "a", "subtime": 0, "res": 4, "profile": "d10"},   # node 0, compact
        {"id": "b", "subtime": 1, "res": 4, "profile": "d5"},    # spread: half of every socket of nodes 1-2
        {"id": "c", "subtime": 1, "res": 4, "profile": "d3"},    # co-located with b: the other halves
        {"id": "d", "subtime": 2, "res": 8, "profile": "d5"},
    ], PROFILES, nb_res=32)


@needs_batsim
def test_small_platform_on_real_batsim_like_coburst(tmp_path):
    allocs = {"w0!a": "0-3", "w0!b": "4 6 8 10", "w0!c": "5 7 9 11", "w0!d": "24-31"}
    batsim, coburst = run_both(tmp_path, workloads=[_cross_workload(tmp_path)], platform=SMALL, scheduler="fixed",
                               options={"allocs": allocs})
    assert_identical(batsim, coburst)
    assert {r["job_id"]: r["allocated_resources"] for r in jobs_rows(coburst)} == {
        "a": "0-3", "b": "4 6 8 10", "c": "5 7 9 11", "d": "24-31"}


@needs_batsim
def test_small_platform_with_compute_sharing_on_real_batsim_like_coburst(tmp_path):
    """Two jobs on the same units (--enable-compute-sharing); the Pajé trace is left out
    (which job Batsim draws on a shared machine depends on heap addresses)."""
    allocs = {"w0!a": "0-3", "w0!b": "2-5", "w0!c": "2-5", "w0!d": "0-7"}
    batsim, coburst = run_both(tmp_path, workloads=[_cross_workload(tmp_path)], platform=SMALL, scheduler="fixed",
                               options={"allocs": allocs}, args=["--enable-compute-sharing"])
    assert_identical(batsim, coburst, trace=False)
    rows = {r["job_id"]: r for r in jobs_rows(coburst)}
    assert rows["b"]["allocated_resources"] == rows["c"]["allocated_resources"] == "2-5"
    assert all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in rows.values())
