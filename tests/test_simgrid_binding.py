"""SimGrid's Python binding as coburst reads it, whichever one the environment loads (Debian's
SimGrid 3.32 with coburst/_simgrid_compat.py, or SimGrid 4.1's wheel: the ``simgrid`` extra):
hosts' and zones' properties, the zone tree, zones' hosts, links' sharing policies."""

import json
import subprocess
import sys

PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="top" routing="Full">
    <prop id="site" value="lab"/>
    <zone id="left" routing="Full">
      <prop id="rack" value="L"/>
      <host id="master_host" speed="1Gf"/>
      <host id="a" speed="2Gf" core="4">
        <prop id="role" value="compute"/>
        <prop id="wattage_per_state" value="10:20"/>
        <prop id="z_last" value="é"/>
      </host>
      <link id="shared" bandwidth="1GBps" latency="1us"/>
      <link id="fat" bandwidth="2GBps" latency="2us" sharing_policy="FATPIPE"/>
      <route src="master_host" dst="a"><link_ctn id="shared"/><link_ctn id="fat"/></route>
    </zone>
    <zone id="right" routing="Full">
      <host id="b" speed="3Gf"/>
      <link id="duplex" bandwidth="1GBps" latency="3us" sharing_policy="SPLITDUPLEX"/>
    </zone>
    <link id="between" bandwidth="1GBps" latency="4us"/>
    <zoneRoute src="left" dst="right" gw_src="a" gw_dst="b">
      <link_ctn id="between"/><link_ctn id="duplex" direction="UP"/>
    </zoneRoute>
  </zone>
</platform>
"""

PROBE = r"""
import json, sys
from coburst.simulator._simgrid import simgrid
e = simgrid.Engine(["probe", "--log=root.thres:critical"])
e.load_platform(sys.argv[1])
hosts = {h.name: h for h in e.all_hosts}
def zone(z):
    return [z.name, dict(z.get_properties()), sorted(h.name for h in z.all_hosts), [zone(c) for c in z.get_children()]]
root = zone(e.netzone_root)
while root[0] != "top":  # (SimGrid 4.1: a _world_ zone above the file's root zone)
    root = root[3][0]
out = {"version": str(simgrid.simgrid_version), "zones": root,
       "props": {n: list(h.get_properties().items()) for n, h in sorted(hosts.items())}}
def ask():
    out["routes"] = {}
    for a, b in (("master_host", "a"), ("a", "b")):
        links, latency = hosts[a].route_to(hosts[b])
        out["routes"][a + " " + b] = [latency, [(l.name, l.get_sharing_policy().name) for l in links]]
simgrid.Actor.create("probe", hosts["master_host"], ask)
e.run()
print(json.dumps(out))
"""


def test_binding_reads_properties_zones_and_policies(tmp_path):
    path = tmp_path / "p.xml"
    path.write_text(PLATFORM, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    assert out["version"].startswith(("3.32.", "4.1."))
    assert out["zones"] == ["top", {"site": "lab"}, [], [["left", {"rack": "L"}, ["a", "master_host"], []],
                                                         ["right", {}, ["b"], []]]]
    assert out["props"]["master_host"] == [] and out["props"]["b"] == []
    assert sorted(out["props"]["a"]) == [["role", "compute"], ["wattage_per_state", "10:20"], ["z_last", "é"]]
    latency, links = out["routes"]["master_host a"]
    assert links == [["shared", "SHARED"], ["fat", "FATPIPE"]] and abs(latency - 3e-6) < 1e-15
    latency, links = out["routes"]["a b"]
    assert links == [["between", "SHARED"], ["duplex_UP", "SHARED"]] and abs(latency - 7e-6) < 1e-15


def test_the_extension_module_is_named_without_importing_it():
    """The platform cache names the extension module ``import simgrid`` would load, without
    loading SimGrid."""
    code = ("import sys; from coburst._simgrid_finder import extension_path; p = extension_path(); "
            "print(p); print('simgrid' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    path, imported = proc.stdout.split()
    assert path.endswith(".so") and "simgrid" in path and imported == "False"


def test_asking_where_the_binding_is_leaves_it_importable():
    """``importlib.util.find_spec("simgrid")`` (how a test or a tool checks for the binding) asks
    coburst's finder without importing: a later ``import simgrid`` in the same process still
    finds the module (the finder stays registered)."""
    code = ("import importlib.util, sys\n"
            "assert importlib.util.find_spec('simgrid') is not None\n"
            "assert importlib.util.find_spec('simgrid') is not None\n"
            "import simgrid\n"
            "print(simgrid.__name__, 'simgrid' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["simgrid", "True"]
