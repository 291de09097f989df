"""Heterogeneous-cluster policies (Sánchez Sousa 2023, Ch. 3-4; coburst/policies/hetero/).

Algorithms on hand-made and random ETC matrices (min-min / max-min choose by the minimum
completion time, the vectorised code equals the straightforward loop, duplex is the better
of the two, A* is optimal without pruning and never worse than min-min with it), the
state's validation, the option checks, and the entry files through the real engine
(``coburst run``) on random workloads: no core over-committed, every job finishes on cores
of one node, queue mapping never re-maps, same seed same bytes.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hetero_fixtures as hf
from hetero_fixtures import NODES, check_invariants, ids_of, node_of_core, random_jobs
from simharness import COBURST, REPO
from coburst.core.hetero import CoreAlloc, HeteroCluster, HeteroDecisions, HeteroState, HJob, place
from coburst.errors import InputError
from coburst.policies import hetero
from coburst.policies.hetero.astar import astar_map
from coburst.policies.hetero.minmin import batch_map, batch_map_reference, makespan

SCHED = REPO / "schedulers"
ENTRIES = {"min-min": "heteroMinMin", "max-min": "heteroMaxMin", "duplex": "heteroDuplex", "astar": "heteroAStar",
           "heuristic": "heteroHeuristic"}


def plan_tuples(plan):
    return [(a.job, a.node, a.start, a.end) for a in plan]


def zeros(m, cores=1):
    return np.zeros((m, cores))


# ---------------------------------------------------------------------- hand-made ETC
# Braun et al.'s inconsistent ETC (job x node): min-min and max-min by hand.
ETC3 = np.array([[4.0, 6.0], [3.0, 2.0], [8.0, 1.0]])


def test_min_min_maps_the_job_with_the_minimum_completion_time_first():
    # M = (4 on n0, 2 on n1, 1 on n1): job 2 first (1 on n1); then job 0 (4 on n0) vs job 1
    # (3 on n0, tie with 1 + 2 = 3 on n1 -> lower node): job 1 on n0; then job 0: 3 + 4 = 7 on
    # n0 = 1 + 6 = 7 on n1 -> n0.
    avail = zeros(2)
    plan = batch_map(ETC3.copy(), np.ones(3, int), avail, 0.0, "min")
    assert plan_tuples(plan) == [(2, 1, 0.0, 1.0), (1, 0, 0.0, 3.0), (0, 0, 3.0, 7.0)]
    assert makespan(avail) == 7.0


def test_max_min_maps_the_job_with_the_maximum_minimum_completion_time_first():
    # M = (4, 2, 1): job 0 on n0 (4); then M = (job1: 2 on n1, job2: 1 on n1): job 1 on n1;
    # then job 2: 4 + 8 = 12 on n0, 2 + 1 = 3 on n1 -> n1.
    avail = zeros(2)
    plan = batch_map(ETC3.copy(), np.ones(3, int), avail, 0.0, "max")
    assert plan_tuples(plan) == [(0, 0, 0.0, 4.0), (1, 1, 0.0, 2.0), (2, 1, 2.0, 3.0)]
    assert makespan(avail) == 4.0


def test_multi_task_job_waits_for_its_first_free_cores():
    # node 0: 4 cores free at 0, 5, 7, 9; a 2-task job starts at 5 (its two first-free cores)
    row = np.array([0.0, 5.0, 7.0, 9.0])
    assert place(row, 2, 3.0, 1.0) == (5.0, 8.0)
    assert list(row) == [7.0, 8.0, 8.0, 9.0]
    # completion time of a 3-task job: node 0 gives max(7, now) + 1 = 9 (its third first-free
    # core), node 1 (1 core) cannot hold it
    avail = np.array([[7.0, 8.0, 8.0, 9.0], [0.0, math.inf, math.inf, math.inf]])
    plan = batch_map(np.array([[1.0, 0.1]]), np.array([3]), avail, 0.0, "min")
    assert plan_tuples(plan) == [(0, 0, 8.0, 9.0)]


@st.composite
def etc_instances(draw, max_jobs=8, max_nodes=4, max_cores=3, integer=True):
    m = draw(st.integers(1, max_nodes))
    cores = [draw(st.integers(1, max_cores)) for _ in range(m)]
    width = max(cores)
    avail = np.full((m, width), math.inf)
    for n, c in enumerate(cores):
        avail[n, :c] = sorted(draw(st.integers(0, 6)) for _ in range(c))
    n_jobs = draw(st.integers(1, max_jobs))
    k = np.array([draw(st.integers(1, max(cores))) for _ in range(n_jobs)])
    value = st.integers(1, 30).map(float) if integer else st.floats(0.1, 50.0)
    etc = np.array([[draw(value) for _ in range(m)] for _ in range(n_jobs)])
    return etc, k, avail


@settings(max_examples=80, deadline=None)
@given(inst=etc_instances(max_jobs=12, integer=False), pick=st.sampled_from(["min", "max"]),
       now=st.sampled_from([0.0, 2.5]))
def test_vectorised_min_min_and_max_min_equal_the_straightforward_loop(inst, pick, now):
    etc, k, avail = inst
    rows = [list(r[np.isfinite(r)]) for r in avail]
    ref = batch_map_reference(etc.tolist(), k.tolist(), rows, now, pick)
    a = avail.copy()
    assert plan_tuples(batch_map(etc.copy(), k, a, now, pick)) == plan_tuples(ref)


@settings(max_examples=60, deadline=None)
@given(inst=etc_instances(max_jobs=12), pick=st.sampled_from(["min", "max"]), now=st.sampled_from([0.0, 2.5]))
def test_deferred_prefix_starts_the_same_jobs_as_the_whole_plan(inst, pick, now):
    etc, k, avail = inst
    full = plan_tuples(batch_map(etc.copy(), k, avail.copy(), now, pick))
    part = plan_tuples(batch_map(etc.copy(), k, avail.copy(), now, pick, now_only=True))
    assert part == full[:len(part)]
    assert [a for a in part if a[2] <= now] == [a for a in full if a[2] <= now]


@settings(max_examples=50, deadline=None)
@given(inst=etc_instances(max_jobs=12))
def test_every_step_of_min_min_takes_the_smallest_minimum_completion_time(inst):
    """Replaying the plan: at each step the chosen job's completion time is the minimum over
    the remaining jobs' minimum completion times (max-min: the maximum), on its best node."""
    etc, k, avail = inst
    for pick in ("min", "max"):
        a = avail.copy()
        plan = batch_map(etc.copy(), k, a, 0.0, pick)
        cur = avail.copy()
        left = [j for j in range(len(k)) if k[j] <= np.isfinite(avail).sum(axis=1).max()]
        for step in plan:
            ms = {j: min(cur[n, k[j] - 1] + etc[j, n] for n in range(len(cur))) for j in left}
            target = min(ms.values()) if pick == "min" else max(ms.values())
            assert ms[step.job] == target
            assert step.end == ms[step.job]
            place(cur[step.node], int(k[step.job]), float(etc[step.job, step.node]), 0.0)
            left.remove(step.job)
        assert not left


@settings(max_examples=50, deadline=None)
@given(work=st.lists(st.integers(1, 40), min_size=1, max_size=12),
       speed=st.lists(st.sampled_from([1.0, 2.0, 4.0, 8.0]), min_size=1, max_size=4),
       cores=st.integers(1, 2))
def test_on_consistent_etc_min_min_is_the_thesis_sorted_list_scheduling(work, speed, cores):
    """Alg. 1-2 of the thesis: jobs sorted by requested time (max-min: backwards), each to
    its minimum-completion-time node; with ETC = work / speed the same mapping as choosing
    by M (module doc of minmin.py)."""
    etc = np.array(work, float)[:, None] / np.array(speed)[None, :]
    k = np.ones(len(work), int)
    for pick, reverse in (("min", False), ("max", True)):
        order = sorted(range(len(work)), key=lambda j: -work[j] if reverse else work[j])
        cur = np.zeros((len(speed), cores))
        expected = []
        for j in order:
            n = int(np.argmin(cur[:, 0] + etc[j]))
            expected.append((j, n) + place(cur[n], 1, float(etc[j, n]), 0.0))
        a = np.zeros((len(speed), cores))
        assert plan_tuples(batch_map(etc.copy(), k, a, 0.0, pick)) == expected


def brute_force_makespan(etc, k, avail, now=0.0):
    best = math.inf
    m = len(avail)
    for nodes in itertools.product(range(m), repeat=len(k)):
        a = avail.copy()
        if any(not np.isfinite(a[n, k[j] - 1]) for j, n in enumerate(nodes)):
            continue
        for j, n in enumerate(nodes):
            place(a[n], int(k[j]), float(etc[j, n]), now)
        best = min(best, makespan(a))
    return best


@settings(max_examples=80, deadline=None)
@given(inst=etc_instances(max_jobs=5, max_nodes=3, max_cores=2))
def test_astar_without_pruning_finds_the_optimal_makespan(inst):
    """Optimal over the mappings in batch order (brute force); min-min, the incumbent, may also
    reorder the jobs of a multi-core node and then be better still.  On single-core nodes the
    order on a node does not matter: A* is optimal outright."""
    etc, k, avail = inst
    a, a_mm = avail.copy(), avail.copy()
    stats = {}
    astar_map(etc.copy(), k, a, 0.0, 0, stats)
    batch_map(etc.copy(), k, a_mm, 0.0, "min")
    best = brute_force_makespan(etc, k, avail)
    assert makespan(a) == pytest.approx(min(best, makespan(a_mm)), abs=1e-9), stats
    if avail.shape[1] == 1:
        assert makespan(a) == pytest.approx(best, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(inst=etc_instances(max_jobs=40, max_nodes=5, max_cores=2, integer=False),
       limit=st.sampled_from([16, 128]))
def test_astar_with_pruning_is_never_worse_than_min_min(inst, limit):
    etc, k, avail = inst
    a_mm, a_star = avail.copy(), avail.copy()
    batch_map(etc.copy(), k, a_mm, 0.0, "min")
    plan = astar_map(etc.copy(), k, a_star, 0.0, limit)
    assert makespan(a_star) <= makespan(a_mm) + 1e-9
    fits = (k[:, None] <= np.isfinite(avail).sum(axis=1)[None, :]).any(axis=1)
    assert sorted(a.job for a in plan) == list(np.flatnonzero(fits))


def test_astar_pruning_limit_shapes_the_search():
    rng = np.random.default_rng(5)
    etc = rng.uniform(100, 3000, 60)[:, None] / rng.uniform(1, 10, 6)[None, :]
    k = np.ones(60, int)
    small, big = {}, {}
    astar_map(etc, k, zeros(6), 0.0, 16, small)
    astar_map(etc, k, zeros(6), 0.0, 512, big)
    assert small["generated"] < big["generated"]
    assert small["expanded"] >= 60 or small["used"] == "min-min"


# ---------------------------------------------------------------------- duplex
def duplex_plan(etc, k, avail, now=0.0):
    from coburst.policies.hetero.minmin import Duplex

    class _State:
        pass
    state = _State()
    state.now = now
    state.etc_matrix = lambda jobs: etc
    pol = Duplex()
    jobs = [HJob(str(j), 0.0, int(k[j]), 1.0, seq=j) for j in range(len(k))]
    a = avail.copy()
    return pol.plan(state, jobs, a), a, pol.last_choice


@settings(max_examples=60, deadline=None)
@given(inst=etc_instances(max_jobs=10))
def test_duplex_equals_the_better_of_min_min_and_max_min(inst):
    etc, k, avail = inst
    a_min, a_max = avail.copy(), avail.copy()
    p_min = batch_map(etc.copy(), k, a_min, 0.0, "min")
    p_max = batch_map(etc.copy(), k, a_max, 0.0, "max")
    plan, a, choice = duplex_plan(etc, k, avail)
    if makespan(a_min) <= makespan(a_max):   # Alg. 3: ties go to min-min
        assert (choice, plan_tuples(plan)) == ("min-min", plan_tuples(p_min))
    else:
        assert (choice, plan_tuples(plan)) == ("max-min", plan_tuples(p_max))
    assert makespan(a) == min(makespan(a_min), makespan(a_max))


def test_duplex_hand_made_choices():
    # ETC3: min-min 7, max-min 4 -> max-min
    assert duplex_plan(ETC3, np.ones(3, int), zeros(2))[2] == "max-min"
    # a tie (both 6) -> min-min (Alg. 3, "<=")
    etc = np.array([[1.0, 10.0], [10.0, 1.0], [5.0, 5.0]])
    a_min, a_max = zeros(2), zeros(2)
    batch_map(etc.copy(), np.ones(3, int), a_min, 0.0, "min")
    batch_map(etc.copy(), np.ones(3, int), a_max, 0.0, "max")
    assert makespan(a_min) == makespan(a_max) == 6.0
    assert duplex_plan(etc, np.ones(3, int), zeros(2))[2] == "min-min"


# ---------------------------------------------------------------------- state and options
def resources(nodes, speed_prop=True):
    out, rid = [], 0
    for i, (cores, speed) in enumerate(nodes):
        for c in range(cores):
            props = {"node": str(i), "core": str(c), "cores": str(cores)}
            if speed_prop:
                props["speed"] = str(speed)
            out.append({"id": rid, "name": f"n{i}_c{c}", "properties": props})
            rid += 1
    return out


def test_cluster_from_resources_and_its_errors():
    cl = HeteroCluster.from_resources(resources([(2, 1e9), (1, 3e9)]))
    assert [n.ids for n in cl.nodes] == [(0, 1), (2,)] and list(cl.speed) == [1e9, 3e9] and cl.max_cores == 2
    with pytest.raises(InputError, match="'speed'.*missing") as err:
        HeteroCluster.from_resources(resources([(1, 1e9)], speed_prop=False))
    assert "n0_c0" in str(err.value)
    bad = resources([(2, 1e9)])
    bad[1]["properties"]["speed"] = "2e9"
    with pytest.raises(InputError, match="different speeds"):
        HeteroCluster.from_resources(bad)
    bad = resources([(1, 1e9)])
    bad[0]["properties"]["core"] = "x"
    with pytest.raises(InputError, match="'core' must be an integer"):
        HeteroCluster.from_resources(bad)


def state_after(jobs, maps=(), starts=()):
    """A state on nodes (2 cores at 1 Gf/s, 1 core at 2 Gf/s) after submitting ``jobs`` and
    applying one decision of ``maps`` ((job, node)) and ``starts`` ((job, node, core ids))."""
    st_ = HeteroState(HeteroCluster.from_resources(resources([(2, 1e9), (1, 2e9)])))
    for j in jobs:
        st_.submit(j)
    d = HeteroDecisions(0.0)
    for j, n in maps:
        d.map(j, n)
    for j, n, ids in starts:
        d.start(j, CoreAlloc(n, ids))
    st_.apply(d)
    return st_


def test_state_refuses_over_commitment_and_queue_jumping():
    a, b, c = (HJob(x, 0.0, 1, 1e9, seq=i) for i, x in enumerate("abc"))
    st_ = state_after((a, b, c), maps=((a, 1), (b, 1)), starts=((a, 1, (2,)),))
    assert st_.free == [[0, 1], []] and [j.id for j in st_.node_queues[1]] == ["b"]
    # machine availability per core: running job until its expected end, then the queue
    av = st_.availability()
    assert list(av[1, :1]) == [1.0] and list(av[0]) == [0.0, 0.0]   # a: 0.5 s, b: 0.5 s on node 1
    d = HeteroDecisions(0.0)
    d.start(c, CoreAlloc(1, (2,)))           # core 2 is busy
    with pytest.raises(ValueError, match="busy cores"):
        st_.apply(d)
    with pytest.raises(ValueError, match="head of node 0's queue"):   # b is behind a
        state_after((a, b), maps=((a, 0), (b, 0)), starts=((b, 0, (0,)),))
    with pytest.raises(ValueError, match="cannot hold it"):
        state_after((HJob("w", 0.0, 2, 1e9),), maps=((HJob("w", 0.0, 2, 1e9), 1),))


def test_work_of_a_job_and_its_fallbacks():
    from coburst.core.hetero import job_work
    prof = {"type": "parallel_homogeneous", "cpu": 5e9, "com": 0}
    assert job_work({"req_ops": 3e9}, prof, math.inf, 1e9) == 3e9          # req_ops first
    assert job_work({"req_ops": 10, "ipc": 4}, prof, math.inf, 1e9) == 3.0          # IRMaSim: ceil(req_ops / ipc), as the converter
    assert job_work({"req_ops": True}, prof, math.inf, 1e9) == 5e9         # then the profile's cpu
    assert job_work({"req_time": 7}, {"type": "delay", "delay": 3}, math.inf, 2e9) == 14e9   # req_time on the slowest
    assert job_work({}, None, 10.0, 2e9) == 20e9                           # walltime on the slowest
    assert job_work({"req_time": -1}, None, math.inf, 1e9) is None


def test_options_are_validated():
    assert hetero.get("shortest_fastest").get_params() == {"job_selection": "shortest", "node_selection": "high_gflops",
                                                          "seed": 0, "mapping": "deferred"}
    assert hetero.get("A*").max_vertices == 128
    with pytest.raises(InputError, match="unknown parameter"):
        hetero.get("min-min", depth=1)
    with pytest.raises(InputError, match="mapping"):
        hetero.get("duplex", mapping="later")
    with pytest.raises(InputError, match="max_vertices"):
        hetero.get("astar", max_vertices=-1)
    with pytest.raises(InputError, match="node_selection"):
        hetero.get("heuristic", node_selection="fastest")
    with pytest.raises(InputError, match="unknown heterogeneous-cluster policy"):
        hetero.resolve("minmin")
    with pytest.raises(InputError, match="label says"):
        hetero.get("shortest_fastest", job_selection="longest")


def test_heuristic_node_orders():
    cl = HeteroCluster.from_resources(resources([(2, 1e9), (1, 3e9), (4, 2e9)]))
    st_ = HeteroState(cl)
    free = [[0], [2], [3, 4, 5, 6]]
    order = lambda sel: hetero.get("heuristic", node_selection=sel).node_order(st_, free)  # noqa: E731
    assert order("first") == [0, 1, 2]
    assert order("high_gflops") == [1, 2, 0]
    assert order("high_cores") == [2, 0, 1]
    assert order("low_cores") == [0, 1, 2]
    assert sorted(order("random")) == [0, 1, 2]
    r1 = [hetero.get("heuristic", node_selection="random", seed=7).node_order(st_, free) for _ in range(2)]
    assert r1[0] == r1[1]


def test_heuristic_deferred_blocks_at_the_head_and_queue_refills_the_node_list():
    cl = HeteroCluster.from_resources(resources([(2, 1e9), (1, 3e9), (1, 2e9)]))
    jobs = [HJob("w", 0.0, 2, 1e9, seq=0), HJob("x", 0.0, 1, 1e9, seq=1)]
    st_ = HeteroState(cl)
    for j in jobs:
        st_.submit(j)
    st_.free[0] = [0]          # node 0 has one idle core: w (2 tasks) waits, x waits behind it
    assert not hetero.get("heuristic").make_decisions(st_).starts
    # IRMaSim's first x high_gflops (MCT) as queue mapping: fastest node first, each node once
    # per round, the list refilled when every node was used (§2.2)
    st_ = HeteroState(cl)
    five = [HJob(str(i), 0.0, 1, 1e9, seq=i) for i in range(5)]
    for j in five:
        st_.submit(j)
    dec = hetero.get("mct", mapping="queue").make_decisions(st_)
    assert [(j.id, n) for j, n in dec.maps] == [("0", 1), ("1", 2), ("2", 0), ("3", 1), ("4", 2)]
    assert sorted(s.job.id for s in dec.starts) == ["0", "1", "2"]   # queue heads on idle cores


# ---------------------------------------------------------------------- through the engine
@pytest.fixture(scope="module")
def plat(tmp_path_factory) -> Path:
    return hf.platform(tmp_path_factory.mktemp("plat") / "hetero.xml", NODES, mem=[4, 8, 16, 32],
                       power=[(10, 20), (5, 30), (8, 8), (2, 4)])


def run(tmp_path: Path, entry: str, plat: Path, wl: Path, options: dict | None = None, prefix: str = "out"):
    out = tmp_path / prefix
    proc = subprocess.run([str(COBURST), "run", str(SCHED / f"{entry}.py"), "-p", str(plat), "-w", str(wl),
                           "-e", str(out), "-q", "-o", json.dumps(options or {})],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    with open(f"{out}_jobs.csv", newline="") as fh:
        return list(csv.DictReader(fh))


CASES = [("min-min", {}), ("max-min", {"mapping": "deferred"}), ("duplex", {}), ("duplex", {"mapping": "deferred"}),
         ("astar", {"max_vertices": 16}), ("astar", {"mapping": "deferred"}), ("min-min", {"mapping": "deferred"}),
         ("heuristic", {"job_selection": "random", "node_selection": "random", "seed": 3}),
         ("heuristic", {"job_selection": "shortest", "node_selection": "high_gflops", "mapping": "queue"}),
         ("heuristic", {"job_selection": "low_mem_bw", "node_selection": "low_power"}),
         ("heuristic", {"job_selection": "smallest", "node_selection": "high_cores", "mapping": "queue"}),
         ("heuristic", {"job_selection": "longest", "node_selection": "high_mem_bw"})]


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), seed=st.integers(0, 10_000), n=st.integers(1, 12),
       arrival=st.sampled_from(["zero", "poisson", "batches"]))
def test_random_workloads_through_the_engine(tmp_path, plat, case, seed, n, arrival):
    policy, options = case
    jobs = random_jobs(seed, n, arrival)
    wl = hf.workload(tmp_path / f"w{seed}.json", jobs, 8)
    rows = run(tmp_path, ENTRIES[policy], plat, wl, options, prefix=f"o{seed}")
    check_invariants(rows, jobs)


def test_queue_mapping_never_remaps_and_runs_each_node_in_order(tmp_path, plat):
    jobs = random_jobs(11, 14, "batches")
    wl = hf.workload(tmp_path / "w.json", jobs, 8)
    trace = tmp_path / "trace.jsonl"
    rows = run(tmp_path, "heteroDuplex", plat, wl, {"trace": str(trace)})
    check_invariants(rows, jobs)
    mapped: dict[str, int] = {}
    order: dict[int, list[str]] = {}
    subtime = {f"w0!{j['id']}": j["subtime"] for j in jobs}
    batches = []
    for line in trace.read_text().splitlines():
        entry = json.loads(line)
        for jid, node in entry["map"].items():
            assert jid not in mapped          # mapped once
            mapped[jid] = node
            order.setdefault(node, []).append(jid.split("!")[1])
        if entry["map"]:
            batches.append(sorted(entry["map"]))
            assert {subtime[j] for j in entry["map"]} == {entry["now"]}   # mapped on arrival
    assert len(mapped) == len(jobs)
    # a batch = the jobs of one submission date (one Batsim message)
    same_date: dict[float, list[str]] = {}
    for jid, t in subtime.items():
        same_date.setdefault(t, []).append(jid)
    assert sorted(batches) == sorted(sorted(v) for v in same_date.values())
    where = node_of_core()
    starts: dict[int, list[tuple[float, str]]] = {}
    for r in rows:
        node = where[ids_of(r["allocated_resources"])[0]]
        assert mapped[f"w0!{r['job_id']}"] == node   # ran where it was mapped
        starts.setdefault(node, []).append((float(r["starting_time"]), int(r["job_id"])))
    for node, seq in order.items():              # FIFO per node: starts in mapping order
        ran = [str(j) for _, j in sorted(starts[node])]
        assert ran == seq, (node, ran, seq)


def test_deferred_mapping_commits_only_starts_and_too_wide_jobs_are_rejected(tmp_path, plat):
    jobs = random_jobs(12, 12, "zero")
    wide = {"id": 99, "subtime": 0.0, "res": 5, "ops": 1e9}   # the widest node has 4 cores
    wl = hf.workload(tmp_path / "w.json", jobs + [wide], 8)
    trace = tmp_path / "trace.jsonl"
    rows = run(tmp_path, "heteroMinMin", plat, wl, {"trace": str(trace), "mapping": "deferred"})
    assert [r["final_state"] for r in rows if r["job_id"] == "99"] == ["REJECTED"]
    rows = [r for r in rows if r["job_id"] != "99"]
    check_invariants(rows, jobs)
    lines = [json.loads(x) for x in trace.read_text().splitlines()]
    assert lines and all(not line["map"] for line in lines)
    assert len({j for line in lines for j in line["start"]}) == len(jobs)


def test_same_seed_same_bytes_and_seed_matters(tmp_path, plat):
    jobs = random_jobs(4, 14, "zero")
    wl = hf.workload(tmp_path / "w.json", jobs, 8)
    opts = {"job_selection": "random", "node_selection": "random", "seed": 1}
    run(tmp_path, "heteroHeuristic", plat, wl, opts, prefix="a")
    run(tmp_path, "heteroHeuristic", plat, wl, opts, prefix="b")
    run(tmp_path, "heteroHeuristic", plat, wl, {**opts, "seed": 2}, prefix="c")
    a, b, c = ((tmp_path / f"{p}_jobs.csv").read_bytes() for p in "abc")
    assert a == b and a != c


def entry_class(entry: str):
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"_entry_{entry}", SCHED / f"{entry}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, entry[:1].upper() + entry[1:])  # pybatsim's rule: the class named after its file


@pytest.mark.parametrize("entry", sorted(ENTRIES.values()))
def test_entry_files_load_and_refuse_unknown_options(entry, capsys):
    cls = entry_class(entry)
    assert cls(None).policy.family == {v: k for k, v in ENTRIES.items()}[entry]
    for opts, word in (({"depth": 1}, "depth"), ({"policy": "duplex"}, "policy"), ({"mapping": "soon"}, "mapping")):
        with pytest.raises(SystemExit) as exc:
            cls(opts)
        assert exc.value.code == 2 and word in capsys.readouterr().err


def test_a_platform_without_speeds_is_refused(tmp_path):
    wl = hf.workload(tmp_path / "w.json", [{"id": 0, "subtime": 0.0, "res": 1, "ops": 1e9}], 4)
    proc = subprocess.run([str(COBURST), "run", str(SCHED / "heteroMinMin.py"), "-p", str(REPO / "tests" / "data" /
                           "cluster4.xml"), "-w", str(wl), "-e", str(tmp_path / "flat"), "-q"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "'speed' properties" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_coburst_run_takes_the_policy_name(tmp_path, plat):
    """``coburst run duplex`` (a policy name, through schedulers/heteroPolicy.py) is the run of
    the entry file schedulers/heteroDuplex.py, byte for byte."""
    wl = hf.workload(tmp_path / "w.json", random_jobs(5, 10, "batches"), 8)
    by_file = run(tmp_path, "heteroDuplex", plat, wl, prefix="file")
    proc = subprocess.run([str(COBURST), "run", "duplex", "-p", str(plat), "-w", str(wl), "-e", str(tmp_path / "name"),
                           "-q"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "name_jobs.csv").read_bytes() == (tmp_path / "file_jobs.csv").read_bytes()
    assert len(by_file) == 10
