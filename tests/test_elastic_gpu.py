"""GPU jobs and coupled compute tasks of the elastic mode (coburst.models.elastic,
coburst.simulator.elastic_gpu): parsing, expressions, the spreading of a gpu task's bytes, the
checks before the run and at a start, and the time of gpu and coupled tasks by hand (the cases
recorded with ElastiSim are in test_elastic_elastisim.py)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from coburst.adapter.elastic import run_elastic
from coburst.errors import InputError, ProtocolError
from coburst.models.elastic import parse_elastic
from coburst.models.patterns import gpu_link_bytes, gpu_matrices
from coburst.policies.elastic.base import Decisions, ElasticPolicy, ElasticState
from coburst.policies.elastic.equipartition import Equipartition
from coburst.simulator.elastic_gpu import parse_quantity
from platform_cache_fill import fill_platform_cache

REPO = Path(__file__).resolve().parents[1]
GPU = REPO / "tests" / "data" / "elastisim" / "cluster16_gpu.xml"  # 4 GPUs of 10 Gflop/s a node, 5 GB/s link
PLAIN = REPO / "platforms" / "cluster16.xml"

pytestmark = pytest.mark.timeout(120)

#: two nodes with 2 GPUs, two without
MIXED = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="root" routing="Full">
    <host id="master_host" speed="1Gf"/>
    <host id="g0" speed="1Gf"><prop id="num_gpus" value="2"/><prop id="flops_per_gpu" value="1Gf"/></host>
    <host id="g1" speed="1Gf"><prop id="num_gpus" value="2"/><prop id="flops_per_gpu" value="1Gf"/></host>
    <host id="h0" speed="1Gf"/>
    <host id="h1" speed="1Gf"/>
    <link id="l" bandwidth="1GBps" latency="0"/>
    <route src="master_host" dst="g0"><link_ctn id="l"/></route>
    <route src="master_host" dst="g1"><link_ctn id="l"/></route>
    <route src="master_host" dst="h0"><link_ctn id="l"/></route>
    <route src="master_host" dst="h1"><link_ctn id="l"/></route>
  </zone>
</platform>
"""


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("mixed") / "mixed.xml"
    path.write_text(MIXED)
    fill_platform_cache(path, 4)
    return path


@pytest.fixture(scope="module", autouse=True)
def platform_described():
    """(the runs here are in the test process: the platforms come from the cache)"""
    fill_platform_cache(GPU)
    fill_platform_cache(PLAIN)


def elastic_job(tasks, gpus=2, kind="rigid", res=2, **extra):
    elastic = {"type": kind, **({"num_gpus_per_node": gpus} if gpus is not None else {}), **extra}
    if kind != "rigid":
        elastic.update(num_nodes_min=1, num_nodes_max=4)
    return ({"id": 1, "res": res, "subtime": 0, "walltime": -1, "profile": "p", "elastic": elastic},
            {"type": "delay", "delay": 1, "elastic": {"phases": [{"iterations": 2, "tasks": tasks}]}})


def parse(tasks, **kw):
    job, profile = elastic_job(tasks, **kw)
    return parse_elastic(job, profile, "w.json", "jobs[0]", "profiles.p")


# ------------------------------------------------------------------ model
def test_gpu_tasks_and_expressions_read_the_jobs_gpus():
    spec = parse([{"type": "gpu", "flops": "1e10 * num_gpus", "per_node": True, "bytes": "num_gpus_per_node * 1e9",
                   "pattern": "ring"},
                  {"type": "compute", "flops": "4e9", "bytes": "1e9", "pattern": "all_to_all"}], gpus=3)
    gpu, coupled = spec.app.phases[0].tasks
    assert spec.gpus_per_node == 3 and spec.gpu_tasks
    assert (gpu.type, gpu.per_node, gpu.comm_pattern, gpu.analytic, gpu.coupled) == ("gpu", True, "ring", False, False)
    assert (coupled.type, coupled.coupled, coupled.analytic) == ("compute", True, False)
    env = spec.env(num_nodes=4, iteration=0, iterations=2)
    assert (env["num_gpus"], env["num_gpus_per_node"]) == (12, 3)
    assert gpu.values(env) == (1.2e11, 3e9) and coupled.values(env) == (4e9, 1e9)
    # (compute and communication alone stay as they were: analytic, and bytes)
    plain = parse([{"type": "compute", "flops": "4e9"}, {"type": "communication", "bytes": 5, "pattern": "ring"}],
                  gpus=None)
    assert plain.gpus_per_node == 0 and plain.app.phases[0].tasks[0].analytic
    assert plain.segments(0, 0, 4, 1e9) == [1.0, (plain.app.phases[0].tasks[1], 5.0)]


@pytest.mark.parametrize("tasks, extra, where, problem", [
    ([{"type": "gpu", "flops": 1}], {"gpus": None}, "profiles.p.elastic.phases[0].tasks[0]",
     "a gpu task runs on the job's GPUs, and the job has none"),
    ([{"type": "gpu", "bytes": 1, "pattern": "gather"}], {}, "profiles.p.elastic.phases[0].tasks[0].pattern",
     "unknown pattern \"gather\" for a gpu task's bytes"),
    ([{"type": "gpu", "bytes": 1}], {}, "profiles.p.elastic.phases[0].tasks[0]", "'bytes' go with a 'pattern'"),
    ([{"type": "gpu"}], {}, "profiles.p.elastic.phases[0].tasks[0]", "has 'flops', 'bytes' or both"),
    ([{"type": "compute", "flops": 1, "bytes": 2, "pattern": "ring", "seconds": 1}], {},
     "profiles.p.elastic.phases[0].tasks[0]", "either 'flops' or 'seconds'"),
    ([{"type": "gpu", "flops": "gpus * 2"}], {}, "profiles.p.elastic.phases[0].tasks[0].flops",
     "unknown variable(s) gpus"),
    ([{"type": "gpu", "flops": 1}], {"gpus": -1}, "jobs[0].elastic.num_gpus_per_node", "non-negative integer"),
    ([{"type": "gpu", "flops": 1}], {"arguments": {"num_gpus": 2}}, "jobs[0].elastic.arguments.num_gpus",
     "an argument name is an identifier other than"),
])
def test_bad_gpu_input_is_named(tasks, extra, where, problem):
    with pytest.raises(InputError) as info:
        parse(tasks, **extra)
    assert info.value.source == "w.json" and info.value.where == where and problem in info.value.problem


def test_gpu_and_coupled_tasks_are_no_costs():
    job, profile = elastic_job([1])
    profile["elastic"]["on_init"] = [{"type": "gpu", "flops": 1}]
    with pytest.raises(InputError, match="a gpu task cannot be a cost"):
        parse_elastic(job, profile, "w.json", "jobs[0]", "profiles.p")
    profile["elastic"]["on_init"] = [{"type": "compute", "flops": 1, "bytes": 1, "pattern": "ring"}]
    with pytest.raises(InputError, match="a cost's compute task has no communication"):
        parse_elastic(job, profile, "w.json", "jobs[0]", "profiles.p")


def test_a_gpu_tasks_bytes_split_within_and_between_nodes_as_elastisim_does():
    # 2 nodes of 4 GPUs, a ring of 1.6e10 bytes: 1e9 to each neighbour of each of the 8 GPUs;
    # within a node 3 GPU pairs (6e9 a node), between nodes 2 ring steps each way (4e9)
    intra, inter = gpu_matrices("ring", 2, 4, 1.6e10)
    assert sum(intra) == pytest.approx(6e9) and sum(inter) == pytest.approx(4e9)
    assert gpu_link_bytes(intra, 4) == pytest.approx(1.5e9)
    # all-to-all between 8 GPUs (2 nodes of 4): 56 pairs, 12 a node inside it, 32 across
    intra, inter = gpu_matrices("all_to_all", 2, 4, 5.6e10)
    assert sum(intra) == pytest.approx(1.2e10) and sum(inter) == pytest.approx(3.2e10)
    # one GPU a node: everything between nodes; one node: everything within it
    assert gpu_matrices("ring_clockwise", 4, 1, 8.0) == ([0.0], [0, 2.0, 0, 0, 0, 0, 2.0, 0, 0, 0, 0, 2.0, 2.0, 0, 0, 0])
    intra, inter = gpu_matrices("ring_clockwise", 1, 2, 8.0)
    assert inter == [0.0] and gpu_link_bytes(intra, 2) == 8.0


def test_simgrid_quantities():
    assert parse_quantity("10Gf", "f") == 1e10 and parse_quantity("2.5flops", "f") == 2.5
    assert parse_quantity("5GBps", "Bps") == 5e9 and parse_quantity("8Gbps", "Bps") == 1e9
    assert parse_quantity("1KiBps", "Bps") == 1024 and parse_quantity("7", "f") == 7.0
    assert parse_quantity("fast", "f") is None and parse_quantity("5GB", "Bps") is None


# ------------------------------------------------------------------ simulation
def rows(path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def simulate(tmp_path: Path, jobs: list[dict], profiles: dict, platform: Path = GPU, policy=None, name="out"):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"nb_res": 16, "jobs": jobs, "profiles": profiles}))
    result = run_elastic(platform, [path], policy or Equipartition(), tmp_path / name)
    return path, {r["job_id"]: (float(r["starting_time"]), float(r["finish_time"])) for r in rows(result.jobs_csv)}


def test_gpu_tasks_take_the_longest_of_their_gpus_gpu_link_and_network(tmp_path):
    """cluster16_gpu.xml: 4 GPUs of 10 Gflop/s a node, a 5 GB/s GPU link, 1.25 GB/s node links.
    Job 0 (2 nodes, 4 GPUs each): 8e10 flops split, 1e10 a GPU (1 s); a ring of 4e10 bytes
    between its 8 GPUs, 1e10 between the nodes (each node sends 5e9: 4 s) and 3.75e9 over the
    busiest GPU pair's link (0.75 s): 4 s an iteration.  Job 1 (1 node, 4 GPUs): a ring of 2e10
    bytes all within the node, 5e9 over the busiest pair (1 s), and 1 s of flops: 1 s; with 2
    GPUs (job 3) the same flops take 2 s and the ring's pair is both neighbours of each GPU, 2e10
    bytes (4 s): 4 s.  Job 2: a coupled compute task (2 s of
    flops on its 4 nodes, an all-to-all of 2e10 bytes: 4 s) takes 4 s, not 6."""
    ring = {"type": "gpu", "flops": "num_gpus * 1e10", "bytes": "4e10", "pattern": "ring"}
    local = {"type": "gpu", "flops": "4e10", "per_node": True, "bytes": "2e10", "pattern": "ring"}
    coupled = {"type": "compute", "flops": "8e9", "bytes": "2e10", "pattern": "all_to_all"}
    jobs, profiles = [], {}
    for jid, (tasks, gpus, res) in enumerate([([ring], 4, 2), ([local], 4, 1), ([coupled], 0, 4), ([local], 2, 1)]):
        job, profiles[f"p{jid}"] = elastic_job(tasks, gpus=gpus or None, res=res)
        jobs.append({**job, "id": jid, "profile": f"p{jid}"})
    path, times = simulate(tmp_path, jobs, profiles)
    assert times == {"0": (0.0, 8.0), "1": (0.0, 2.0), "2": (0.0, 8.0), "3": (0.0, 8.0)}
    again = simulate(tmp_path, jobs, profiles, name="again")[1]
    assert again == times and (tmp_path / "out_jobs.csv").read_bytes() == (tmp_path / "again_jobs.csv").read_bytes()


def test_gpu_jobs_the_platform_cannot_hold_are_refused_before_the_run(tmp_path):
    job, profile = elastic_job([{"type": "gpu", "flops": 1}], gpus=2)
    with pytest.raises(InputError) as info:
        simulate(tmp_path, [job], {"p": profile}, PLAIN)
    assert info.value.where == "jobs[0]" and info.value.source.endswith("out.json")
    assert "asks for 2 GPU(s) per node on at least 2 node(s), but 0 compute host(s)" in info.value.problem
    job, profile = elastic_job([{"type": "gpu", "flops": 1}], gpus=5)
    with pytest.raises(InputError, match=r"the most GPUs a host has: 4\)"):
        simulate(tmp_path, [job], {"p": profile})
    assert not list(tmp_path.glob("out_*"))


class StartOn(ElasticPolicy):
    """Starts every job on the given resources."""

    family = "start-on-test"

    def __init__(self, alloc: str):
        super().__init__()
        self.alloc = alloc

    def schedule(self, state: ElasticState, d: Decisions) -> None:
        for job in list(state.queue):
            state.queue.remove(job)
            d.events.append(("EXECUTE_JOB", {"job_id": job.id, "alloc": self.alloc}))


def test_a_gpu_job_started_on_a_host_without_gpus_is_a_protocol_error(tmp_path, mixed):
    job, profile = elastic_job([{"type": "gpu", "flops": "2e9"}], gpus=2, kind="moldable")
    _, times = simulate(tmp_path, [job], {"p": profile}, mixed, StartOn("0-1"), name="fits")
    assert times == {"1": (0.0, 1.0)}  # (2e9 flops over 2 nodes of 2 GPUs of 1 Gflop/s: 0.5 s, twice)
    with pytest.raises(ProtocolError, match=r"resource 2 \(h0\) has 0 GPU\(s\), the job uses 2 per node"):
        simulate(tmp_path, [job], {"p": profile}, mixed, StartOn("1-2"), name="bad")
