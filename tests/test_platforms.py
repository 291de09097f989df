"""Dragonfly platform generator (Kopański 2020, §2.2): numbering, properties, SimGrid loading."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from coburst.errors import InputError
from coburst.platforms.dragonfly import (
    DragonflySpec,
    _Links,
    bb_ranks,
    coords,
    node_route,
    parse_topology,
    position,
    render_cluster_xml,
    render_xml,
    small_spec,
    thesis_spec,
    validate,
)
from coburst.platforms.info import read_platform

ROOT = Path(__file__).resolve().parents[1]
DF96 = ROOT / "platforms" / "dragonfly96.xml"
SMALL = ROOT / "platforms" / "dragonfly_small.xml"

needs_simgrid = pytest.mark.skipif(importlib.util.find_spec("simgrid") is None, reason="SimGrid bindings missing")


def run(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, timeout=120, **kw)


def simgrid_dump(path: Path, *extra: str) -> dict:
    proc = run("-m", "coburst.platforms.simgrid_dump", str(path), *extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


# ---------------------------------------------------------------------- numbering
def test_numbering_follows_simgrid_rank_id_to_coords():
    spec = thesis_spec()
    assert spec.host_count == 108 and spec.topo_parameters == "3,1;4,1;3,1;3"
    for rank in range(spec.host_count):
        g, c, b, n = coords(spec, rank)
        # DragonflyZone::rankId_to_coords
        assert g == rank // (4 * 3 * 3)
        assert c == (rank % 36) // 9 and b == (rank % 9) // 3 and n == rank % 3
        pos = position(spec, rank)
        assert pos == {"group": g, "chassis": g * 4 + c, "router": (g * 4 + c) * 3 + b}
    assert position(spec, 107) == {"group": 2, "chassis": 11, "router": 35}


def test_burst_buffer_nodes_are_the_first_node_of_each_chassis():
    assert bb_ranks(thesis_spec()) == [0, 9, 18, 27, 36, 45, 54, 63, 72, 81, 90, 99]
    assert bb_ranks(small_spec()) == [0, 4, 8, 12]
    assert bb_ranks(DragonflySpec(bb_per_chassis=2))[:4] == [0, 1, 9, 10]


def test_shipped_platforms_are_reproducible():
    assert DF96.read_text() == render_xml(thesis_spec())
    assert SMALL.read_text() == render_xml(small_spec())


def test_shipped_thesis_platform_properties():
    info = read_platform(DF96)
    assert len(info.hosts) == 110 and info.master == "master"
    assert info.nb_compute == 96 and info.nb_bb == 12 and info.bb_capacity == 40 * 10**9
    assert [h.name for h in info.burst_buffers] == [f"node_{9 * k}" for k in range(12)]
    assert [h.name for h in info.storage] == [f"node_{9 * k}" for k in range(12)] + ["pfs"]
    assert info.host_speed == 1e9 and info.link_bandwidth == 1.25e9
    hosts = {h.name: h for h in info.hosts}
    # Listing 1: named master and tagged role=master (Batsim 4.2's default -m is master_host)
    assert hosts["master"].properties == {"role": "master"}
    assert hosts["pfs"].properties == {"role": "storage"}
    assert hosts["node_40"].properties == {"role": "compute_node", "group": "1", "chassis": "4", "router": "13"}
    assert hosts["node_99"].properties == {"role": "storage", "bb_capacity": "40000000000", "group": "2",
                                           "chassis": "11", "router": "33"}
    assert info.zone_properties["pfs_bandwidth"] == "5000000000"
    assert info.zone_properties["topo_parameters"] == "3,1;4,1;3,1;3"
    root = ET.parse(DF96).getroot()
    links = {link.get("id"): link for link in root.iter("link")}
    assert links["link_pfs"].get("bandwidth") == "5000MBps" and links["link_pfs"].get("sharing_policy") is None
    assert links["link_master"].get("sharing_policy") == "FATPIPE"
    assert links["local_node_0_UP"].get("bandwidth") == "1250MBps" and links["local_node_0_UP"].get("latency") == "50us"
    assert links["loopback_node_3"].get("bandwidth") == "1000MBps"


def test_every_host_has_routes_to_master_and_pfs_in_the_xml():
    root = ET.parse(SMALL).getroot()
    routes = {(r.get("src"), r.get("dst")) for r in root.iter("route")}
    nodes = [f"node_{i}" for i in range(16)]
    for node in nodes:
        assert ("master", node) in routes and ("pfs", node) in routes
        for other in nodes:
            assert (node, other) in routes


def test_routes_reproduce_simgrid_minimal_routing_by_hand():
    spec = thesis_spec()
    links = _Links(spec)
    # node_1 (g0 c0 b0) -> node_100 (g2 c3 b0): green to router 2 (= target group), blue, black
    names = [link.simgrid_name for link in node_route(spec, links, 1, 100)]
    assert names == ["local_link_from_router_0_to_node_1_1_UP",
                     "green_link_in_chassis_0_between_routers_0_and_2_109_UP",
                     "blue_link_between_group_0_and_2_routers_2_and_24_199_UP",
                     "black_link_in_group_2_between_chassis_0_and_3_blade_0_186_UP",
                     "local_link_from_router_33_to_node_1_100_DOWN"]
    assert [link.id for link in node_route(spec, links, 5, 5)] == ["loopback_node_5"]


@pytest.mark.parametrize("kwargs, option, message", [
    ({"groups": 4}, "--groups", "groups <= routers per chassis"),
    ({"nodes": 0}, "--nodes", "must be >= 1"),
    ({"bb_per_chassis": 9}, "--bb-per-chassis", "no compute node left"),
    ({"bb_per_chassis": 10}, "--bb-per-chassis", "between 0 and the 9 nodes"),
    ({"bw": "12 parsecs"}, "--bw", "cannot read bandwidth"),
    ({"lat": "5 furlongs"}, "--lat", "cannot read latency"),
    ({"master": "node_3"}, "--master", "distinct names"),
    ({"master": "master_host"}, "--master", "Batsim would see the master twice"),
    ({"pfs_bw": "0MBps"}, "--pfs-bw", "must be > 0"),
])
def test_invalid_specs_name_the_option(kwargs, option, message):
    with pytest.raises(InputError) as err:
        validate(DragonflySpec(**kwargs))
    assert str(err.value).startswith(option) and message in str(err.value)


def test_topology_parsing():
    assert parse_topology("2,1;2,1;2,1;2") == {"groups": 2, "group_links": 1, "chassis": 2, "chassis_links": 1,
                                               "routers": 2, "router_links": 1, "nodes": 2}
    with pytest.raises(InputError, match="cannot read dragonfly topology"):
        parse_topology("3;4;3;3")


def test_cli_generates_and_reports_errors(tmp_path):
    out = tmp_path / "p.xml"
    proc = run("-m", "coburst", "platform", "dragonfly", "--topo", "2,2;2,1;3,1;2", "--bb-capacity", "20GB",
               "--pfs-bw", "2GBps", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    info = read_platform(out)
    assert (len(info.hosts), info.nb_bb, info.bb_capacity) == (26, 4, 20 * 10**9)
    assert info.zone_properties["generated_by"].startswith("coburst platform dragonfly --topo")
    proc = run("-m", "coburst", "platform", "dragonfly", "--topo", "3,1;4,1;2,1;3", "-o", str(tmp_path / "x.xml"))
    assert proc.returncode == 2 and "--groups: SimGrid's dragonfly routing needs" in proc.stderr
    assert not (tmp_path / "x.xml").exists()
    proc = run("-m", "coburst", "platform", "dragonfly", "--topo", "3,1;4,1;3,1;3", "--nodes", "4")
    assert proc.returncode == 2 and "--nodes: contradicts --topo" in proc.stderr
    proc = run("-m", "coburst", "platform", "info", str(DF96))
    assert proc.returncode == 0 and "40000000000" in proc.stdout
    proc = run("-m", "coburst", "platform", "info", str(tmp_path / "none.xml"))
    assert proc.returncode == 2 and "platform file not found" in proc.stderr


# ---------------------------------------------------------------------- SimGrid
@needs_simgrid
def test_shipped_platform_loads_in_simgrid_with_properties_and_master_routes():
    dump = simgrid_dump(DF96, "--routes")
    hosts = dump["hosts"]
    assert len(hosts) == 110
    assert hosts["node_9"]["properties"]["bb_capacity"] == "40000000000"
    assert hosts["node_10"]["properties"]["role"] == "compute_node" and hosts["node_10"]["speed"] == 1e9
    assert hosts["master"]["properties"] == {"role": "master"}
    for name in hosts:
        if name.startswith("node_"):
            assert dump["routes"][f"{name} master"] == ["link_master"]
            assert dump["routes"][f"master {name}"] == ["link_master"]
            assert dump["routes"][f"pfs {name}"] == ["link_pfs"]
    assert dump["latency"]["node_1 node_100"] == pytest.approx(5 * 50e-6)


@needs_simgrid
@pytest.mark.parametrize("spec", [thesis_spec(), DragonflySpec(groups=2, group_links=2, chassis=3, routers=2,
                                                              router_links=3, nodes=2)],
                         ids=["thesis", "multi-link"])
def test_explicit_routes_equal_simgrid_dragonfly_cluster_routes(tmp_path, spec):
    explicit, cluster = tmp_path / "explicit.xml", tmp_path / "cluster.xml"
    explicit.write_text(render_xml(spec))
    cluster.write_text(render_cluster_xml(spec))
    mine = simgrid_dump(explicit, "--routes", "--only", spec.prefix)
    ref = simgrid_dump(cluster, "--routes", "--only", spec.prefix)
    names = {link.id: link.simgrid_name for link in _Links(spec).all()}
    assert set(mine["routes"]) == set(ref["routes"])
    assert len(ref["routes"]) == spec.host_count**2
    for pair, route in ref["routes"].items():
        assert [names[x] for x in mine["routes"][pair]] == route, pair
        assert mine["latency"][pair] == pytest.approx(ref["latency"][pair])
    assert set(ref["hosts"]) == set(mine["hosts"])
