"""The linear dragonfly (``coburst platform dragonfly --style cluster``): SimGrid's own
``<cluster topology="DRAGONFLY">``, the burst-buffer roles in a ``coburst-roles`` zone
property, against the explicit form (one route per pair of hosts).

* size: linear in the hosts (1000 hosts <= 100 KB, 10,000 <= 1 MB);
* SimGrid 4.1: every node-to-node route is the explicit form's, link for link; a route to or
  from the master or the PFS is the explicit form's one link plus the dragonfly route from the
  gateway host (SimGrid creates no router netpoint for a DRAGONFLY cluster);
* roles: ``coburst sim`` applies the file's, ``-r`` must say the same or the run stops naming
  both; ``coburst platform info`` prints the real Batsim's ``-r``; the test harness and
  ``run_with_batsim`` pass it to the real Batsim;
* every burst-buffer policy and the IO-aware model give the same messages and outputs on the
  real Batsim 4.2.1 (with ``-r``) and ``coburst sim`` (recorded runs, tests/crossengine.py);
* against the explicit form: the same burst-buffer placements and allocations, dates later by
  the longer routes to the master (the comparison sees it).
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from crossengine import assert_identical, jobs_rows, needs_batsim, run_both
from simharness import COBURST, REPO, batsim_role_args, run_sim
from coburst.errors import InputError
from coburst.platforms.dragonfly import (DragonflySpec, _Links, bb_ranks, node_route, render_cluster_xml, render_xml,
                                         small_spec, storage_roles, thesis_spec)
from coburst.platforms.info import read_platform
from coburst.simulator.external import batsim_role_arguments

SMALL_SPEC = small_spec()
BACKFILL = str(REPO / "schedulers" / "coburstBackfill.py")
#: every burst-buffer policy family of coburstBackfill.py (tests/test_io_aware.py's list)
POLICIES = ("fcfs", "filler", "filler-sjf", "no-future-1", "backfill-1", "backfill-sjf-1", "conservative")
#: the search-based families, each through its own entry file
SEARCH = {"maxutil": "coburstMaxutil.py", "window": "coburstWindow.py", "plan": "coburstPlan.py"}


def write(tmp_path: Path, spec: DragonflySpec = SMALL_SPEC, name: str = "linear") -> Path:
    path = tmp_path / f"{name}.xml"
    path.write_text(render_cluster_xml(spec) if name == "linear" else render_xml(spec))
    return path


def dump(path: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "coburst.platforms.simgrid_dump", str(path), "--routes"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def alloc_only(tmp_path: Path, count: int = 60) -> Path:
    """The first ``count`` jobs of the bundled alloc-only KTH sample (BB requests, delay jobs)."""
    doc = json.loads((REPO / "workloads" / "kth_alloc_only_sample.json").read_text())
    doc["jobs"] = doc["jobs"][:count]
    doc["profiles"] = {j["profile"]: doc["profiles"][j["profile"]] for j in doc["jobs"]}
    path = tmp_path / "alloc.json"
    path.write_text(json.dumps(doc))
    return path


# ---------------------------------------------------------------------- the file
def test_size_is_linear_and_within_targets():
    sizes = {}
    for topo in ((5, 10, 5, 4), (10, 25, 10, 4)):  # 1000 and 10,000 hosts
        spec = DragonflySpec(groups=topo[0], chassis=topo[1], routers=topo[2], nodes=topo[3])
        sizes[spec.host_count] = len(render_cluster_xml(spec).encode())
    assert sizes[1000] <= 100_000 and sizes[10_000] <= 1_000_000, sizes
    assert len(render_xml(DragonflySpec(groups=2, chassis=2, routers=2, nodes=5))) > 5 * sizes[1000] // 10


def test_roles_and_zone_properties_in_the_file(tmp_path):
    path = write(tmp_path, thesis_spec())
    info = read_platform(path)
    assert info.master == "master" and info.nb_compute == 96 and info.nb_bb == 12
    assert [h.name for h in info.burst_buffers] == [f"node_{9 * k}" for k in range(12)]
    assert info.bb_capacity == 40 * 10**9 and info.zone_properties["topo_parameters"] == "3,1;4,1;3,1;3"
    assert storage_roles(thesis_spec()) == ",".join(f"node_{9 * k}" for k in range(12)) + ":storage"
    assert batsim_role_args(path, []) == ["-r", storage_roles(thesis_spec())]
    assert batsim_role_args(path, ["-r", "node_0:storage"]) == ["-r", "node_0:storage"]  # a test's own -r
    assert batsim_role_arguments(str(path), ["-m", "master"]) == ["-r", storage_roles(thesis_spec()), "-m", "master"]
    same = ["--add-role-to-hosts", storage_roles(thesis_spec())]
    assert batsim_role_arguments(str(path), same) == same
    with pytest.raises(InputError, match="differ: node_18 .storage in the file, no role with -r."):
        batsim_role_arguments(str(path), ["-r", "node_0,node_9:storage"])
    proc = subprocess.run([str(COBURST), "platform", "info", str(path)], capture_output=True, text=True,
                          timeout=60, env={"COLUMNS": "400", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert f"-r {storage_roles(thesis_spec())}" in proc.stdout
    proc = subprocess.run([str(COBURST), "platform", "info", "--batsim-roles", str(path)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == f"-r {storage_roles(thesis_spec())}\n", proc.stderr
    proc = subprocess.run([str(COBURST), "platform", "info", "--batsim-roles", str(REPO / "platforms" /
                                                                                   "dragonfly96.xml")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == "\n"  # the explicit form: roles in host properties


def test_cli_writes_the_linear_form_and_names_the_roles(tmp_path):
    out = tmp_path / "p.xml"
    proc = subprocess.run([str(COBURST), "platform", "dragonfly", "--style", "cluster", "--topo", "2,1;2,1;2,1;2",
                           "--bb-capacity", "10GB", "--no-record-command", "-o", str(out)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text() == render_cluster_xml(SMALL_SPEC)
    assert "the real Batsim needs -r node_0,node_4,node_8,node_12:storage" in proc.stderr


# ---------------------------------------------------------------------- SimGrid routes
@pytest.mark.parametrize("spec", [SMALL_SPEC, DragonflySpec(groups=2, group_links=2, chassis=3, routers=2,
                                                            router_links=3, nodes=2, bb_per_chassis=2)],
                         ids=["small", "multi-link"])
def test_routes_against_the_explicit_form(tmp_path, spec):
    explicit, linear = dump(write(tmp_path, spec, "explicit")), dump(write(tmp_path, spec, "linear"))
    links = _Links(spec)
    names = {link.id: link.simgrid_name or link.id for link in links.all()}
    names.update({"link_master": "link_master", "link_pfs": "link_pfs"})
    assert set(explicit["hosts"]) == set(linear["hosts"])
    n = spec.host_count
    gateway = next(r for r in range(n) if r not in set(bb_ranks(spec)))
    for src in range(n):
        for dst in range(n):
            pair = f"{spec.host_name(src)} {spec.host_name(dst)}"
            assert [names[x] for x in explicit["routes"][pair]] == linear["routes"][pair], pair
            assert explicit["latency"][pair] == linear["latency"][pair], pair
    for host, link in (("master", "link_master"), ("pfs", "link_pfs")):
        for rank in range(n):
            node = spec.host_name(rank)
            assert explicit["routes"][f"{host} {node}"] == [link]
            inside = [] if rank == gateway else [x.simgrid_name for x in node_route(spec, links, gateway, rank)]
            assert linear["routes"][f"{host} {node}"] == [link] + inside
            back = [] if rank == gateway else [x.simgrid_name for x in node_route(spec, links, rank, gateway)]
            assert linear["routes"][f"{node} {host}"] == back + [link]
    assert explicit["routes"]["master pfs"] == linear["routes"]["master pfs"] == ["link_master", "link_pfs"]


# ---------------------------------------------------------------------- roles in coburst sim
def test_conflicting_roles_stop_the_run_naming_both(tmp_path):
    path = write(tmp_path)
    wl = alloc_only(tmp_path, 5)
    proc = subprocess.run([str(COBURST), "sim", "-p", str(path), "-w", str(wl), "-e", str(tmp_path / "x"),
                           "-r", "node_0,node_4:storage", "--timeout", "2"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert (f"{path}: property coburst-roles: the roles of the platform file (node_0,node_4,node_8,node_12:storage) "
            "and of -r/--add-role-to-hosts (node_0:storage node_4:storage) differ: node_12 (storage in the file, "
            "no role with -r), node_8 (storage in the file, no role with -r)") in proc.stderr


@pytest.mark.parametrize("roles", [[], ["-r", "node_12,node_8:storage", "-r", "node_0,node_4:storage"]],
                         ids=["file", "file-and-same-r"])
def test_coburst_sim_applies_the_file_roles(tmp_path, roles):
    run = run_sim(tmp_path, workloads=[alloc_only(tmp_path, 5)], platform=write(tmp_path), scheduler=BACKFILL,
                  transcript=True, args=roles, wait=60, timeout=30)
    assert run.returncode == 0, run.report()
    begins = run.events("SIMULATION_BEGINS")[0]["data"]
    storage = {r["name"]: r for r in begins["storage_resources"]}
    assert sorted(storage) == ["node_0", "node_12", "node_4", "node_8", "pfs"]
    assert storage["node_4"]["properties"] == {"role": "storage"}
    assert storage["node_4"]["zone_properties"]["bb_capacity"] == "10000000000"
    assert begins["nb_compute_resources"] == 12


# ---------------------------------------------------------------------- both engines
@needs_batsim
@pytest.mark.parametrize("policy", POLICIES)
def test_burst_buffer_policies_on_both_engines(tmp_path, policy):
    wl = alloc_only(tmp_path)
    batsim, coburst = run_both(tmp_path, workloads=[wl], platform=write(tmp_path), scheduler=BACKFILL,
                               options={"policy": policy})
    assert_identical(batsim, coburst)
    assert "-r" in batsim.cmd or batsim.cmd[0] == "batsim (recorded)"
    rows = jobs_rows(coburst)
    assert any(r["metadata"].startswith("bb=") for r in rows)


@needs_batsim
@pytest.mark.parametrize("family", sorted(SEARCH))
def test_search_policies_on_both_engines(tmp_path, family):
    wl = alloc_only(tmp_path, 30)
    assert_identical(*run_both(tmp_path, workloads=[wl], platform=write(tmp_path),
                               scheduler=str(REPO / "schedulers" / SEARCH[family])))


@needs_batsim
@pytest.mark.parametrize("jobs", [(0, 1, 2), (1, 2, 3, 4), (0, 1, 2, 3, 4)], ids=["0-2", "1-4", "all"])
def test_io_aware_model_on_both_engines(tmp_path, jobs):
    """tests/test_io_aware.py's small IO-aware workload (burst-buffer stage-in, checkpoints,
    flushes, stage-out as dynamic sub-jobs; job 3 reaches its walltime during a flush): the
    same messages and outputs on both engines (the Pajé trace aside, as tests/test_io_aware.py).
    With all jobs, four stage-outs share the gateway's link with that flush, whose parallel
    task runs on after the walltime until its job's actor ends (its completion message
    delivered, 200 us later on this form), not until the job is deleted (300 us later)."""
    from test_io_aware import DYN, SCHED, small_workload

    wl = small_workload(tmp_path)
    doc = json.loads(wl.read_text())
    doc["jobs"] = [j for j in doc["jobs"] if j["id"] in jobs]
    wl.write_text(json.dumps(doc))
    batsim, coburst = run_both(tmp_path, workloads=[wl], platform=write(tmp_path, small_spec_40gb()),
                               scheduler=SCHED, options={"policy": "fcfs"}, args=list(DYN))
    assert_identical(batsim, coburst, trace=False)
    assert any(r["job_id"].startswith("w0.2.out") for r in jobs_rows(coburst))


def small_spec_40gb() -> DragonflySpec:
    """The IO-aware tests' platform: dragonfly_small with 40 GB burst buffers
    (tests/test_io_aware.py reads the capacity from platforms/dragonfly_small.xml)."""
    from test_io_aware import BB_CAP

    return DragonflySpec(groups=2, chassis=2, routers=2, nodes=2, bb_capacity=BB_CAP)


def _cols(run, *names) -> list[tuple]:
    return [tuple(r[n] for n in names) for r in csv.DictReader(io.StringIO(run.jobs_csv.read_text()))]


@pytest.mark.parametrize("policy", ["backfill-sjf-1", "conservative"])
def test_same_placements_as_the_explicit_form_later_dates(tmp_path, policy):
    """Same BB placements and allocations on both forms; the dates differ (messages to the
    master cross the dragonfly from the gateway host), which the comparison sees."""
    wl = alloc_only(tmp_path)
    runs = [run_sim(tmp_path, workloads=[wl], platform=write(tmp_path, SMALL_SPEC, form), scheduler=BACKFILL,
                    options={"policy": policy}, prefix=form, wait=120, timeout=60) for form in ("explicit", "linear")]
    for run in runs:
        assert run.returncode == 0, run.report()
    keys = ("job_id", "allocated_resources", "metadata", "final_state")
    assert _cols(runs[0], *keys) == _cols(runs[1], *keys)
    ends = [[float(s) for (s,) in _cols(run, "finish_time") if s] for run in runs]
    later = [b - a for a, b in zip(*ends)]
    assert all(d >= -1e-9 for d in later) and max(later) > 0
    assert max(later) < 1e-2


def test_distance_matrix_is_the_pairwise_rule():
    """Cluster's (compute x BB) distance classes, computed on arrays for 10,000-host
    platforms, follow Cluster._distance pair by pair (unknown group or chassis included)."""
    import random

    from coburst.core.cluster import Cluster, Node

    rng = random.Random(5)

    def pick():
        return rng.choice([None, 0, 1, 2])

    compute = [Node(i, f"c{i}", pick(), pick(), None) for i in range(40)]
    bb = [Node(40 + j, f"b{j}", pick(), pick(), None, bb_capacity=10) for j in range(12)]
    cluster = Cluster(compute, bb)
    for i, c in enumerate(cluster.compute):
        for j, s in enumerate(cluster.bb):
            assert cluster.bb_distance[i, j] == Cluster._distance(c, s)
        assert list(cluster.bb_preference[i]) == sorted(range(len(bb)), key=lambda j: (cluster.bb_distance[i, j], j))
