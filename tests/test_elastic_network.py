"""Network tasks of elastic jobs (coburst.models.elastic, coburst.models.patterns,
coburst.simulator.elastic): communication and PFS I/O tasks are the parallel tasks the real
Batsim 4.2.1 runs for the same bytes, and a resized job's data redistribution moves exactly the
blocks that change node."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coburst.errors import InputError
from coburst.models.elastic import parse_elastic
from coburst.models.patterns import COMM_PATTERNS, communication_matrix, io_vector, redistribution_matrix
from crossengine import needs_batsim
from simharness import run_sim

REPO = Path(__file__).resolve().parents[1]
C16 = REPO / "platforms" / "cluster16.xml"

pytestmark = pytest.mark.timeout(300)

#: 8 nodes and a PFS host (role storage) behind the master's link: transfers of two jobs share
#: the cluster's backbone and the PFS's links
PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="root" routing="Full">
    <cluster id="c" prefix="node_" suffix="" radical="0-7" speed="1Gf" bw="1250MBps" lat="50us"
             bb_bw="2500MBps" bb_lat="500us"/>
    <zone id="master_zone" routing="Full">
      <host id="master_host" speed="1Gf"/>
      <host id="pfs" speed="1Gf"><prop id="role" value="storage"/></host>
      <link id="master_loopback" bandwidth="10GBps" latency="0"/>
      <link id="pfs_link" bandwidth="2GBps" latency="10us"/>
      <route src="master_host" dst="master_host"><link_ctn id="master_loopback"/></route>
      <route src="pfs" dst="master_host"><link_ctn id="pfs_link"/></route>
    </zone>
    <link id="master_link" bandwidth="1250MBps" latency="100us"/>
    <zoneRoute src="master_zone" dst="c" gw_src="master_host" gw_dst="node_c_router">
      <link_ctn id="master_link"/>
    </zoneRoute>
  </zone>
</platform>
"""


def rows(path: Path) -> dict[str, dict[str, str]]:
    with open(path, newline="") as f:
        return {r["job_id"]: r for r in csv.DictReader(f)}


def coburst_run(tmp: Path, platform: Path, doc: dict, name: str = "co") -> Path:
    """``coburst run equipartition`` on ``doc`` in a child process (SimGrid: one engine a
    process); the run's prefix."""
    w = tmp / f"{name}.json"
    w.write_text(json.dumps(doc))
    proc = subprocess.run([sys.executable, "-m", "coburst", "run", "equipartition", "-q", "-p", str(platform),
                           "-w", str(w), "-e", str(tmp / name)], capture_output=True, text=True, timeout=200)
    assert proc.returncode == 0, proc.stderr
    return tmp / name


# ------------------------------------------------------------------ against the real Batsim
def _pairs(n: int, per_pair, size: float) -> list[float]:
    return [size if per_pair(i, j) else 0.0 for i in range(n) for j in range(n)]


@needs_batsim
def test_network_tasks_take_what_batsim_takes_for_the_same_bytes(tmp_path):
    """Two jobs at once, sharing the backbone and the PFS's links: one computes, talks all to all,
    writes to the PFS, computes; the other talks in a ring and reads from the PFS.  As elastic
    (rigid) jobs on coburst, and as Batsim ``parallel`` / ``parallel_homogeneous_pfs`` profiles
    of the same bytes on the real Batsim 4.2.1: the same start and end dates, to the microsecond."""
    platform = tmp_path / "pfs8.xml"
    platform.write_text(PLATFORM)
    a2a = _pairs(4, lambda i, j: i != j, 1e8)
    ring = _pairs(4, lambda i, j: j in ((i - 1) % 4, (i + 1) % 4), 1e8)
    plain = {"nb_res": 8, "jobs": [{"id": 1, "subtime": 1, "walltime": -1, "res": 4, "profile": "A"},
                                   {"id": 2, "subtime": 1, "walltime": -1, "res": 4, "profile": "B"}],
             "profiles": {"A": {"type": "composed", "seq": ["d3", "a2a", "pw", "d2"]},
                          "B": {"type": "composed", "seq": ["ring", "pr"]},
                          "d3": {"type": "delay", "delay": 3}, "d2": {"type": "delay", "delay": 2},
                          "a2a": {"type": "parallel", "cpu": [0, 0, 0, 0], "com": a2a},
                          "ring": {"type": "parallel", "cpu": [0, 0, 0, 0], "com": ring},
                          "pw": {"type": "parallel_homogeneous_pfs", "bytes_to_write": 3e8, "storage": "pfs"},
                          "pr": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e8, "storage": "pfs"}}}
    w = tmp_path / "plain.json"
    w.write_text(json.dumps(plain))
    batsim = run_sim(tmp_path, engine="batsim", workloads=[w], platform=platform, prefix="batsim", wait=120,
                     timeout=60)
    assert batsim.returncode == 0, batsim.report()
    elastic = {"nb_res": 8, "jobs": [dict(j, elastic={"type": "rigid"}) for j in plain["jobs"]], "profiles": {
        "A": {"type": "delay", "delay": 1, "elastic": {"phases": [{"tasks": [
            {"type": "delay", "seconds": 3},
            {"type": "communication", "bytes": 1.2e9, "pattern": "all_to_all"},  # 1e8 a pair
            {"type": "pfs_write", "bytes": 3e8, "pattern": "uniform"},
            {"type": "delay", "seconds": 2}]}]}},
        "B": {"type": "delay", "delay": 1, "elastic": {"phases": [{"tasks": [
            {"type": "communication", "bytes": 8e8, "pattern": "ring"},  # 1e8 to each neighbour
            {"type": "pfs_read", "bytes": 4e8, "pattern": "total"}]}]}}}}
    ours = rows(coburst_run(tmp_path, platform, elastic).with_name("co_jobs.csv"))
    theirs = rows(batsim.jobs_csv)
    cols = ("allocated_resources", "starting_time", "execution_time", "finish_time", "final_state")
    assert {j: [r[c] for c in cols] for j, r in ours.items()} == {j: [r[c] for c in cols] for j, r in theirs.items()}
    # (the network decided: the transfers took time, and the two jobs' transfers slowed each other)
    assert float(theirs["1"]["execution_time"]) > 5.5 and float(theirs["2"]["execution_time"]) > 0.3


# ------------------------------------------------------------------ patterns
@settings(max_examples=200, deadline=None)
@given(pattern=st.sampled_from(COMM_PATTERNS), n=st.integers(1, 12), size=st.floats(0, 1e12))
def test_communication_patterns_move_what_elastisim_moves(pattern, n, size):
    m = communication_matrix(pattern, n, size)
    assert len(m) == n * n and all(x >= 0 for x in m)
    assert all(m[i * n + i] == 0 for i in range(n)) or pattern.startswith("ring") and n <= 2
    factor = {"master_worker": 4.0}.get(pattern, 1.0 if pattern not in ("gather", "scatter") else (n - 1) / n)
    assert sum(m) == pytest.approx(factor * size if n > 1 else 0.0, rel=1e-9, abs=1e-6)


def test_patterns_by_hand():
    assert communication_matrix("gather", 3, 6.0) == [0, 0, 0, 2, 0, 0, 2, 0, 0]
    assert communication_matrix("scatter", 3, 6.0) == [0, 2, 2, 0, 0, 0, 0, 0, 0]
    assert communication_matrix("ring_clockwise", 3, 6.0) == [0, 2, 0, 0, 0, 2, 2, 0, 0]
    assert communication_matrix("ring_counter_clockwise", 3, 6.0) == [0, 0, 2, 2, 0, 0, 0, 2, 0]
    assert communication_matrix("master_worker", 3, 6.0) == [0, 6, 6, 6, 0, 0, 6, 0, 0]
    assert io_vector("uniform", 3, 5.0) == [5, 5, 5] and io_vector("total", 4, 8.0) == [2, 2, 2, 2]
    assert io_vector("root_only", 3, 5.0) == [5, 0, 0]
    assert io_vector("even_ranks", 3, 6.0) == [3, 0, 3] and io_vector("odd_ranks", 3, 6.0) == [0, 6, 0]
    assert io_vector("odd_ranks", 1, 6.0) == [0.0]


@settings(max_examples=300, deadline=None)
@given(old=st.sets(st.integers(0, 15), min_size=1, max_size=10), new=st.sets(st.integers(0, 15), min_size=1,
                                                                             max_size=10),
       size=st.integers(0, 10**9))
def test_redistribution_moves_each_block_once_and_keeps_what_stays(old, new, size):
    """Every new rank receives its block exactly, from the old ranks that held it; a byte that
    stays on its node does not move; nothing is sent to or from a node that is neither."""
    old, new = sorted(old), sorted(new)
    hosts, m = redistribution_matrix(old, new, float(size))
    k = len(hosts)
    assert hosts[:len(old)] == old and set(hosts) == set(old) | set(new)
    received = {hosts[j]: sum(m[i * k + j] for i in range(k)) for j in range(k)}
    sent = {hosts[i]: sum(m[i * k + j] for j in range(k)) for i in range(k)}
    kept = 0.0
    for j, dst in enumerate(new):
        lo, hi = j * size / len(new), (j + 1) * size / len(new)
        local = 0.0
        if dst in old:
            i = old.index(dst)
            local = max(0.0, min(hi, (i + 1) * size / len(old)) - max(lo, i * size / len(old)))
        kept += local
        assert received[dst] + local == pytest.approx(hi - lo, abs=1e-6)
    for r in set(old) - set(new):
        assert received[r] == 0
    for r in set(new) - set(old):
        assert sent[r] == 0
    assert sum(m) == pytest.approx(size - kept, abs=1e-5)


# ------------------------------------------------------------------ in the simulator
def _resizing(redistribution, nodes: int = 16) -> dict:
    app = {"on_reconfiguration": "1", "phases": [{"iterations": 2, "tasks": [{"type": "delay", "seconds": 10}]}]}
    if redistribution is not None:
        app["redistribution"] = redistribution
    # job 0 holds all but two nodes for 5 s: the malleable job starts on 2, and equipartition
    # grows it to 4 at its first point (10 s)
    return {"nb_res": nodes, "jobs": [{"id": 0, "subtime": 0, "walltime": -1, "res": nodes - 2, "profile": "b"},
                                   {"id": 1, "subtime": 0, "walltime": -1, "res": 2, "profile": "a",
                                    "elastic": {"type": "malleable", "num_nodes_min": 2, "num_nodes_max": 4}}],
            "profiles": {"a": {"type": "delay", "delay": 1, "elastic": app}, "b": {"type": "delay", "delay": 5}}}


def test_a_resize_moves_the_data_over_the_network(tmp_path):
    """The malleable job grows from nodes 14-15 to 0-1 14-15 with 2.5e9 bytes of data: new ranks
    0 and 1 (nodes 0, 1) take 625 MB each from old rank 0 (node 14), new rank 2 (node 14) takes
    625 MB from node 15, node 15 keeps its last quarter.  Node 14 sends 1.25e9 bytes through its
    1.25 GB/s link: the job ends about 1 s later than without the redistribution."""
    base = rows(coburst_run(tmp_path, C16, _resizing(None), "none").with_name("none_jobs.csv"))["1"]
    moved = coburst_run(tmp_path, C16, _resizing("2.5e9"), "moved")
    row = rows(moved.with_name("moved_jobs.csv"))["1"]
    (log,) = list(csv.DictReader(open(moved.with_name("moved_reconfigurations.csv"))))
    assert (log["old_allocation"], log["new_allocation"], log["redistributed_bytes"]) == (
        "14-15", "0-1 14-15", "2500000000.000000")
    extra = float(row["execution_time"]) - float(base["execution_time"])
    assert 1.0 <= extra < 1.01, extra
    # a staged redistribution names a storage host the platform has
    bad = coburst_run_fails(tmp_path, C16, _resizing({"bytes": "1e9", "via": "bb"}))
    assert "storage 'bb' is no storage host of the platform" in bad


def coburst_run_fails(tmp: Path, platform: Path, doc: dict) -> str:
    w = tmp / "bad.json"
    w.write_text(json.dumps(doc))
    proc = subprocess.run([sys.executable, "-m", "coburst", "run", "equipartition", "-q", "-p", str(platform),
                           "-w", str(w), "-e", str(tmp / "bad")], capture_output=True, text=True, timeout=200)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    return proc.stderr


def test_a_staged_redistribution_goes_through_the_storage_host(tmp_path):
    """``via``: the old nodes write their blocks to the PFS host, then the new nodes read theirs:
    twice 2.5e9 bytes through the 1.25 GB/s master link on the way to the PFS: at least 4 s.
    (The run without redistribution filled the platform cache, which holds no route to the PFS:
    those come from SimGrid, on the platform sealed as a simulation seals it.)"""
    platform = tmp_path / "pfs8.xml"
    platform.write_text(PLATFORM)
    base = rows(coburst_run(tmp_path, platform, _resizing(None, 8), "none").with_name("none_jobs.csv"))["1"]
    row = rows(coburst_run(tmp_path, platform, _resizing({"bytes": "2.5e9", "via": "pfs"}, 8),
                           "via").with_name("via_jobs.csv"))["1"]
    extra = float(row["execution_time"]) - float(base["execution_time"])
    assert 4.0 <= extra < 4.01, extra


@pytest.mark.parametrize("task, message", [
    ({"type": "communication", "bytes": 1, "pattern": "matrix"}, "unknown pattern \"matrix\""),
    ({"type": "pfs_read", "bytes": 1}, "has 'bytes' and 'pattern'"),
    ({"type": "bb_write", "bytes": "x", "pattern": "total"}, "unknown variable(s) x"),
    ({"type": "pfs_write", "bytes": 1, "pattern": "total", "storage": ""}, "expected a storage label"),
])
def test_bad_network_tasks_are_named(task, message):
    job = {"res": 2, "elastic": {"type": "rigid"}}
    with pytest.raises(InputError) as err:
        parse_elastic(job, {"elastic": {"phases": [{"tasks": [task]}]}}, "w.json", "jobs[0]")
    assert message in str(err.value) and "profile.elastic.phases[0].tasks[0]" in str(err.value)
    with pytest.raises(InputError, match="cannot be a cost"):
        parse_elastic(job, {"elastic": {"on_reconfiguration": [task], "phases": [{"tasks": [1]}]}}, "w.json", "j")
