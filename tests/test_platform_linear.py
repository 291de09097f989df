"""The linear co-scheduling layout (``coburst platform cosched --layout linear``):
O(nodes) zoneRoutes through a hub zone in a ``DijkstraCache`` root, against the full layout
(n(n-1)/2 zoneRoutes) it replaces.

* SimGrid 4.1 (coburst's venv): every route between any two hosts, links in order and
  latency as a float, equal in both layouts (random specs, burst buffers or not);
* the real Batsim 4.2.1 (SimGrid 3.32) and ``coburst sim``: the same workload and scheduler
  on both layouts give the same messages and outputs, on each engine (tests/crossengine.py);
* the file grows linearly and stays loadable by coburst's own platform reader.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crossengine import differences, needs_batsim
from simharness import BATSIM, REPO, run_sim
from coburst.errors import InputError
from coburst.platforms.cosched import CoschedSpec, aris_small_spec, render_xml
from test_cosched_engine import elise_workload


def routes(path: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "coburst.platforms.simgrid_dump", str(path), "--routes"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def both(tmp_path: Path, spec: CoschedSpec) -> tuple[Path, Path]:
    paths = []
    for layout in ("full", "linear"):
        path = tmp_path / f"{layout}.xml"
        path.write_text(render_xml(spec, layout=layout))
        paths.append(path)
    return paths[0], paths[1]


def test_full_layout_is_todays_file():
    """--layout full still writes the shipped platform byte for byte."""
    assert render_xml(aris_small_spec(), layout="full") == (REPO / "platforms" / "aris_cosched_small.xml").read_text()


LATENCIES = st.sampled_from(["0", "1us", "3us", "0.5us", "100us", "2.5ms"])


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(nodes=st.integers(1, 9), bb=st.integers(0, 3), unit=st.sampled_from(["half-socket", "core"]),
       preset=st.sampled_from(["aris", "grvingt"]), link=LATENCIES, backbone=LATENCIES, membus=LATENCIES,
       master=LATENCIES)
def test_every_route_the_same_on_simgrid_41(tmp_path_factory, nodes, bb, unit, preset, link, backbone, membus,
                                             master):
    spec = CoschedSpec(nodes=nodes, bb_nodes=bb, unit=unit, preset=preset, link_lat=link, backbone_lat=backbone,
                       membus_lat=membus, master_lat=master)
    tmp = tmp_path_factory.mktemp("routes")
    try:
        full, linear = both(tmp, spec)
    except InputError as exc:  # latencies whose sums differ in binary64: refused, never written
        assert "--layout full" in str(exc)
        return
    a, b = routes(full), routes(linear)
    assert a["hosts"] == b["hosts"]
    assert a["routes"] == b["routes"]
    assert a["latency"] == b["latency"]  # floats through json: repr, exact


def test_latencies_the_linear_layout_cannot_match_are_refused():
    spec = CoschedSpec(nodes=3, link_lat="0.5us", backbone_lat="0.1ms", master_lat="0.1ms")
    m, b, n = 1e-4, 1e-4, 5e-7
    assert (m + b) + n != (n + b) + m  # the premise
    with pytest.raises(InputError, match="--layout full"):
        render_xml(spec, layout="linear")
    render_xml(spec, layout="full")


def test_size_grows_linearly():
    sizes = {n: len(render_xml(CoschedSpec(nodes=n, preset="grvingt"), layout="linear")) for n in (200, 400, 800)}
    per_node = [(sizes[2 * n] - sizes[n]) / n for n in (200, 400)]
    assert max(per_node) - min(per_node) < 0.02 * min(per_node), sizes
    assert sizes[800] <= 2 * 10**6, sizes  # the target: <= 2 MB at 800 nodes
    full = len(render_xml(CoschedSpec(nodes=200, preset="grvingt"), layout="full"))
    assert full > 2 * sizes[200]


def _run(tmp_path: Path, engine: str, platform: Path, wl: Path, prefix: str):
    run = run_sim(tmp_path, engine=engine, prefix=prefix, transcript=True, wait=300, timeout=60,
                  workloads=[wl], platform=platform, scheduler="easyBackfill")
    assert run.returncode == 0, run.report()
    return run


ENGINES = ["coburst", pytest.param("batsim", marks=needs_batsim)]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("spec", [CoschedSpec(nodes=8), CoschedSpec(nodes=6, bb_nodes=2, unit="core"),
                                  CoschedSpec(nodes=8, link_lat="0", backbone_lat="0", master_lat="0",
                                              membus_lat="0")],
                         ids=["aris8", "core-bb", "zero-latency"])
def test_same_outputs_on_both_layouts(tmp_path, engine, spec):
    """Same workload (communicating NAS jobs), same scheduler: every message the scheduler
    receives and every output file identical on the full and the linear layout."""
    full, linear = both(tmp_path, spec)
    wl = elise_workload(tmp_path / "w.json", 25, seed=11, interarrival=25.0, max_nodes=spec.nodes)
    a = _run(tmp_path, engine, full, wl, "full")
    b = _run(tmp_path, engine, linear, wl, "linear")
    assert differences(a, b) == []
    rows = (tmp_path / "full_jobs.csv").read_text()
    assert rows == (tmp_path / "linear_jobs.csv").read_text()
    assert rows.count("COMPLETED_SUCCESSFULLY") == 25


@pytest.mark.parametrize("engine", ENGINES)
def test_the_comparison_sees_a_network_change(tmp_path, engine):
    """The test above can fail: a 1 us longer backbone latency moves dates on each engine."""
    wl = elise_workload(tmp_path / "w.json", 25, seed=11, interarrival=25.0, max_nodes=8)
    paths = []
    for name, lat in (("a", "1us"), ("b", "2us")):
        paths.append(tmp_path / f"{name}.xml")
        paths[-1].write_text(render_xml(CoschedSpec(nodes=8, backbone_lat=lat), layout="full"))
    a = _run(tmp_path, engine, paths[0], wl, "a")
    b = _run(tmp_path, engine, paths[1], wl, "b")
    assert differences(a, b) != []
