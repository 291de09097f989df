"""Energy (``-E``) on ``coburst sim`` and on the real Batsim 4.2.1: identical outputs.

Everything :func:`crossengine.assert_identical` compares (every message the scheduler gets,
``ANSWER consumed_energy`` and ``RESOURCE_STATE_CHANGED`` included; ``_jobs.csv`` with its
``consumed_energy`` column; ``_schedule.csv`` with ``consumed_joules``, the switch counts and
the sleeping/switching times; ``_machine_states.csv``; the Pajé trace), plus
``_consumed_energy.csv`` and ``_pstate_changes.csv`` byte for byte.

Platforms: shapes of Batsim's own energy platforms, written here with other figures —
a Vivaldi zone without links (``energy_platform_homogeneous_no_net_*``: 16-pstate hosts,
sleep pstate with switch-off/on virtual pstates), a cluster with links
(``cluster_energy_128``: communicating tasks, simulated by SimGrid), a Full zone with
explicit routes and pybatsim's ``fcfsSchedSleep`` pstate layout (0-2 compute, 3 sleep, 4 off,
5 on).  The scheduler is ``tests/schedulers/energyProbe.py`` (pybatsim 3.2.1's energy
schedulers are unusable on Batsim 4.2.1: ``fcfsSchedSleep`` reads pstates as integers,
``easyEnergyBudget`` is unmaintained).  When
Batsim's own files are at hand (``COBURST_BATSIM_DATA``, default ``../shared/data/batsim-4.2.1``),
its energy platforms and ``test_energy_minimal_load*`` workloads run too.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from crossengine import assert_energy_identical, assert_identical, needs_batsim, run_both
from shared_data import batsim_file, needs_batsim_data
from simharness import workload

pytestmark = [needs_batsim, pytest.mark.timeout(600)]

SPEEDS = "100.0Mf, 90Mf, 75Mf, 60Mf, 45Mf, 1e-9Mf, 0.25f, 0.0125f"
WATTS = ("95.0:101.5:190.5, 94.0:99.0:172.25, 93.0:97.0:150.125, 92.0:95.0:131.0, 91.0:93.5:120.75, "
         "9.75:9.75:9.75, 101.0:101.0:101.0, 125.5:125.5:125.5")
#: the same with two values (Idle:AllCores, Epsilon = Idle) for some pstates
WATTS2 = ("95.0:190.5, 94.0:172.25, 93.0:97.0:150.125, 92.0:95.0:131.0, 91.0:120.75, 9.75:9.75, 101.0:101.0, "
          "125.5:125.5")


def vivaldi_platform(path: Path, nb: int) -> Path:
    """Hosts at the same coordinates of a Vivaldi zone: no link, no latency."""
    hosts = "".join(
        f'  <host id="host{i}" coordinates="0 0 0" speed="{SPEEDS}" pstate="0">\n'
        f'    <prop id="wattage_per_state" value="{WATTS}"/>\n    <prop id="wattage_off" value="10"/>\n'
        f'    <prop id="sleep_pstates" value="5:6:7"/>\n  </host>\n' for i in range(nb))
    path.write_text("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                    '<platform version="4.1">\n<zone id="AS0" routing="Vivaldi">\n'
                    '  <host id="master_host" coordinates="0 0 0" speed="100Mf">\n'
                    '    <prop id="wattage_per_state" value="100:100:200"/>\n  </host>\n'
                    f"{hosts}</zone>\n</platform>\n")
    return path


def cluster_platform(path: Path, nb: int) -> Path:
    """A cluster with private links and a backbone, the master in a second cluster."""
    path.write_text(f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="AS0" routing="Full">
  <cluster id="cc" prefix="host" suffix="" radical="0-{nb - 1}" bw="125MBps" lat="50us" bb_bw="2.25GBps"
           bb_lat="500us" speed="{SPEEDS}">
    <prop id="wattage_per_state" value="{WATTS2}"/>
    <prop id="wattage_off" value="9.75"/>
    <prop id="sleep_pstates" value="5:6:7"/>
  </cluster>
  <cluster id="cm" prefix="master_host" suffix="" radical="0-0" bw="125MBps" lat="50us" bb_bw="2.25GBps"
           bb_lat="500us" speed="100.0Mf">
    <prop id="wattage_per_state" value="100:200"/>
    <prop id="role" value="master"/>
  </cluster>
  <link id="backbone" bandwidth="1.25GBps" latency="500us"/>
  <zoneRoute src="cc" dst="cm" gw_src="hostcc_router" gw_dst="master_hostcm_router">
    <link_ctn id="backbone"/>
  </zoneRoute>
</zone>
</platform>
""")
    return path


def sleeper_platform(path: Path) -> Path:
    """Four hosts with pybatsim ``fcfsSchedSleep``'s pstates: 0-2 compute, 3 sleep (4 off, 5 on)."""
    hosts = "".join(
        f'  <host id="{name}" speed="100.0Mf, 50.0Mf, 20.0Mf, 1e-9Mf, 0.2f, 0.05f" pstate="0">\n'
        '    <prop id="wattage_per_state" value="100.0:120.0:200.0, 93.0:110.0:170.0, 90.0:100.0:150.0, 10:10, '
        '120:120, 110:110"/>\n    <prop id="wattage_off" value="10"/>\n'
        '    <prop id="sleep_pstates" value="3:4:5"/>\n  </host>\n'
        for name in ("Earth", "Mars", "Mercury", "Venus"))
    links = "".join(f'  <link id="l{name}" bandwidth="40MBps" latency="100us"/>\n'
                    for name in ("master_host", "Earth", "Mars", "Mercury", "Venus"))
    names = ["master_host", "Earth", "Mars", "Mercury", "Venus"]
    routes = "".join(f'  <route src="{a}" dst="{b}"><link_ctn id="l{a}"/><link_ctn id="l{b}"/></route>\n'
                     for i, a in enumerate(names) for b in names[i + 1:])
    path.write_text("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                    '<platform version="4.1">\n<zone id="AS0" routing="Full">\n'
                    '  <host id="master_host" speed="100Mf">\n'
                    '    <prop id="wattage_per_state" value="100:200"/>\n  </host>\n'
                    f"{hosts}{links}{routes}</zone>\n</platform>\n")
    return path


PROFILES = {
    "c": {"type": "parallel_homogeneous", "cpu": 5e8, "com": 0},
    "c2": {"type": "parallel_homogeneous", "cpu": 3e8, "com": 1e6},
    "d": {"type": "delay", "delay": 7.5},
    "seq": {"type": "composed", "seq": ["d", "c"]},
}
JOBS = [{"id": 1, "subtime": 1, "walltime": 1000, "res": 2, "profile": "c"},
        {"id": 2, "subtime": 2, "walltime": 1000, "res": 1, "profile": "d"},
        {"id": 3, "subtime": 3, "walltime": 1000, "res": 3, "profile": "seq"},
        {"id": 4, "subtime": 3.5, "walltime": 4, "res": 1, "profile": "c"},
        {"id": 5, "subtime": 20, "walltime": 1000, "res": 2, "profile": "c2"},
        {"id": 6, "subtime": 200, "walltime": 1000, "res": 4, "profile": "seq"}]


@pytest.mark.parametrize("options", [
    {"query": True},
    {"query": True, "pstates": [0, 2, 4], "busy_pstate": [0, 3]},
    {"query": True, "sleep": [5, 0]},
    {"query": True, "sleep": [5, 1], "pstates": [1, 4]},
], ids=["query", "pstates", "sleep", "sleep-pstates"])
def test_vivaldi_no_net_platform(tmp_path, options):
    platform = vivaldi_platform(tmp_path / "nonet.xml", 8)
    wl = workload(tmp_path / "w.json", JOBS, PROFILES, nb_res=8)
    batsim, coburst = run_both(tmp_path, workloads=[wl], platform=platform, scheduler="energyProbe",
                               options=options, args=["-E"])
    assert_energy_identical(batsim, coburst)
    assert coburst.jobs()["w0!1"]["consumed_energy"] != "-1.000000"


@pytest.mark.parametrize("options", [{"query": True, "pstates": [0, 3]}, {"query": True, "sleep": [5, 0]}],
                         ids=["pstates", "sleep"])
def test_cluster_with_links(tmp_path, options):
    """Communicating tasks on links: SimGrid simulates them, their CPU load comes from their rate."""
    platform = cluster_platform(tmp_path / "cluster.xml", 6)
    wl = workload(tmp_path / "w.json", JOBS, PROFILES, nb_res=6)
    batsim, coburst = run_both(tmp_path, workloads=[wl], platform=platform, scheduler="energyProbe",
                               options=options, args=["-E"])
    assert_energy_identical(batsim, coburst)


def test_full_zone_with_routes(tmp_path):
    """Hosts of a Full zone, explicit routes (the switch reports cross links), pybatsim
    ``fcfsSchedSleep``'s pstate layout.  (That scheduler itself cannot run on Batsim 4.2.1:
    it compares the ``state`` string of ``RESOURCE_STATE_CHANGED`` with integers and exits.)"""
    platform = sleeper_platform(tmp_path / "sleeper.xml")
    jobs = [{"id": 1, "subtime": 1, "walltime": 1000, "res": 2, "profile": "c"},
            {"id": 2, "subtime": 2, "walltime": 1000, "res": 1, "profile": "d"},
            {"id": 3, "subtime": 3, "walltime": 1000, "res": 4, "profile": "c2"},
            {"id": 4, "subtime": 150, "walltime": 1000, "res": 2, "profile": "seq"}]
    wl = workload(tmp_path / "w.json", jobs, PROFILES, nb_res=4)
    batsim, coburst = run_both(tmp_path, workloads=[wl], platform=platform, scheduler="energyProbe",
                               options={"query": True, "sleep": [3, 1], "pstates": [0, 2]}, args=["-E"])
    assert_energy_identical(batsim, coburst)
    assert int(coburst.schedule()["nb_machine_switches"]) > 0


def test_hetero_preset(tmp_path):
    """coburst's heterogeneous preset (platforms/hetero_low16.xml: Idle:AllCores per core) and
    a synthetic set of its single-task jobs (``coburst workload hetero``)."""
    from simharness import COBURST

    repo = Path(__file__).resolve().parents[1]
    wl = tmp_path / "h.json"
    subprocess.run([str(COBURST), "workload", "hetero", "-o", str(wl), "--jobs", "48", "--seed", "1", "-q"],
                   check=True, capture_output=True, timeout=120)
    batsim, coburst = run_both(tmp_path, workloads=[wl], platform=repo / "platforms" / "hetero_low16.xml",
                               scheduler="energyProbe", options={"query": True, "pstates": [0]}, args=["-E"])
    assert_energy_identical(batsim, coburst, degenerate_epower=True)


@needs_batsim_data()
@pytest.mark.parametrize("platform", ["energy_platform_homogeneous_no_net_128.xml", "cluster_energy_128.xml"])
@pytest.mark.parametrize("load", ["50"])
def test_batsims_own_energy_platforms(tmp_path, platform, load):
    plat = batsim_file(tmp_path, f"platforms/{platform}")
    wl = batsim_file(tmp_path, f"workloads/test_energy_minimal_load{load}.json")
    batsim, coburst = run_both(tmp_path, workloads=[wl], platform=plat, scheduler="energyProbe",
                               options={"query": True, "sleep": [13, 0]}, args=["-E"])
    assert_energy_identical(batsim, coburst)
