"""FCS on the node-sharing cluster (Kuchumov & Korkhov 2021, §4.2, Listing 1; coburst/policies/cosched/fcs.py).

* hand-computed decisions where FCS's combination differs from Pair-Greedy's and EASY-Co's,
  a join FCS refuses because the total speed would fall, the two weightings;
* the combination one choice starts against brute force over the same placements, evaluated
  with the hook's rule on the real board (hypothesis);
* the real engine with the heatmap hook: the speeds FCS planned are the speeds the hook
  applied; invariants on random workloads (hypothesis): no unit held twice, compact jobs
  alone, at most two jobs per node, every job finishes;
* the entry file on the real Batsim 4.2.1 and on coburst sim: identical outputs (no speedup
  hook on either: Batsim has none; skipped without BATSIM).
"""

from __future__ import annotations

import csv
import json
import subprocess

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cosched_replay import check_board
from crossengine import assert_identical, jobs_rows, needs_batsim, run_both
from simharness import COBURST, REPO
from test_cosched_engine import SMALL, check_invariants, elise_workload, run
from coburst.core.nodeshare import COMPACT, SPREAD, CoJob, NodeSharingCluster, NodeSharingState, PlacementDecisions
from coburst.models.heatmap import Heatmap, write_heatmap
from coburst.policies import cosched
from coburst.policies.cosched.fcs import FCS

# x is friendly with y; z slows everyone and runs slower spread alone (row best 0.9) than compact
TINY = {("x", "y"): 1.3, ("y", "x"): 1.1, ("x", "x"): 0.9, ("y", "y"): 0.95, ("x", "z"): 0.8, ("z", "x"): 0.9,
        ("y", "z"): 0.7, ("z", "y"): 0.9, ("z", "z"): 0.8}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("hm") / "tiny.heatmap.csv"
    write_heatmap(Heatmap(["x", "y", "z"], TINY), path)
    return str(path)


def job(i, nodes, app, wall=100.0, sub=0.0):
    return CoJob(f"j{i}", float(sub), nodes * 4, float(wall), nodes, i, app=app, processes=nodes * 20)


def decide(name, state, **kw):
    pol = cosched.get(name, **kw)
    if hasattr(pol, "on_job_release"):
        pol.on_job_release(state, state.queue)
    return pol.make_decisions(state)


def waiting(cluster, jobs):
    s = NodeSharingState(cluster)
    for j in jobs:
        s.submit(j)
    return s


def placed(d: PlacementDecisions):
    return {st.job.id: (st.alloc.mode, st.alloc.nodes) for st in d.starts}


def board_speed(fcs: FCS, state: NodeSharingState, d: PlacementDecisions) -> float:
    """Total weighted speed, by the hook's rule, of the running jobs and those ``d`` starts."""
    s = NodeSharingState(state.cluster)
    for j in state.queue:
        s.submit(j)
    s.apply(d)
    on = {r.job.seq: (r.job, r.placement) for r in s.running.values()}
    return fcs.total_speed(s.board(), on)


# ---------------------------------------------------------------------- hand-computed
def test_fcs_chooses_the_fastest_combination_not_pair_greedy_nor_easy_co(tiny):
    """3 idle nodes; j0 (x), j1 (z), j2 (y), one node each, all waiting.

    EASY-Co: j0 spread on nodes 0-1, j1 next to it there (serial order), j2 finds no two
    spread-suitable nodes: x next to z, 0.8 + 0.9 = 1.7.
    Pair-Greedy: j0 on 0-1; j1 scores node 0/1 at s(z,x) + s(x,z) - alone(x) = 0.4, the idle
    node 2 at alone(z) = 0.9 -> nodes 0 and 2; j2 takes the half-free 1 and 2: x runs at
    min(0.8, 1.3) = 0.8, z at 0.9, y at min(1.1, 0.7) = 0.7: 2.4 on 3 nodes.
    FCS: the columns are compact 1 (1 node), spread alone x 1.3 / y 1.1 (2 nodes; z's 0.9 is
    below compact), pairs x+y 2.4, x+z 1.7, y+z 1.6 (2 nodes); the best on 3 nodes is the
    pair x+y with z compact: 2.4 + 1 = 3.4."""
    c = NodeSharingCluster.build(3)
    jobs = [job(0, 1, "x"), job(1, 1, "z"), job(2, 1, "y")]
    s = waiting(c, jobs)
    fcs = cosched.get("fcs", heatmap=tiny)
    easy, greedy, best = decide("easy-co", s), decide("pair-greedy", s, heatmap=tiny), decide("fcs", s, heatmap=tiny)
    assert placed(easy) == {"j0": (SPREAD, (0, 1)), "j1": (SPREAD, (0, 1))}
    assert placed(greedy) == {"j0": (SPREAD, (0, 1)), "j1": (SPREAD, (0, 2)), "j2": (SPREAD, (1, 2))}
    assert placed(best) == {"j0": (SPREAD, (0, 1)), "j2": (SPREAD, (0, 1)), "j1": (COMPACT, (2,))}
    assert board_speed(fcs, s, easy) == pytest.approx(1.7)
    assert board_speed(fcs, s, greedy) == pytest.approx(2.4)
    assert board_speed(fcs, s, best) == pytest.approx(3.4)


def test_fcs_refuses_a_join_that_slows_the_machine(tmp_path):
    """x runs spread alone on nodes 0-1 at alone(x) = 1.3.  Joining w there: w at s(w,x) =
    0.6, x falls to s(x,w) = 0.5: 1.1 < 1.3, so FCS leaves w waiting (EASY-Co co-locates it);
    v joins: 1.0 + min(1.3, 1.2) = 2.2 > 1.3."""
    hm = tmp_path / "h.csv"
    write_heatmap(Heatmap(["x", "w", "v"], {("x", "x"): 1.3, ("x", "w"): 0.5, ("w", "x"): 0.6, ("w", "w"): 0.6,
                                            ("x", "v"): 1.2, ("v", "x"): 1.0, ("v", "v"): 1.0}), hm)
    c = NodeSharingCluster.build(2)
    s = waiting(c, [job(0, 1, "x")])
    s.apply(decide("fcs", s, heatmap=str(hm)))
    assert {r.placement.mode for r in s.running.values()} == {SPREAD}   # alone(x) 1.3 > compact 1
    s.submit(job(1, 1, "w"))
    assert placed(decide("fcs", s, heatmap=str(hm))) == {}
    assert placed(decide("easy-co", s)) == {"j1": (SPREAD, (0, 1))}
    s.submit(job(2, 1, "v"))
    assert placed(decide("fcs", s, heatmap=str(hm))) == {"j2": (SPREAD, (0, 1))}


def test_a_host_with_as_many_guests_as_its_nodes_hold(tiny):
    """4 idle nodes; x two nodes wide, two y one node wide.  x spread on the 4 nodes with both
    y beside it: 2 x s(x,y) + s(y,x) + s(y,x) = 2.6 + 2.2 = 4.8, more than all three compact
    (4) or x with one y (3.7, the other y then left out: no idle node)."""
    c = NodeSharingCluster.build(4)
    s = waiting(c, [job(0, 2, "x"), job(1, 1, "y"), job(2, 1, "y")])
    d = decide("fcs", s, heatmap=tiny)
    assert placed(d) == {"j0": (SPREAD, (0, 1, 2, 3)), "j1": (SPREAD, (0, 1)), "j2": (SPREAD, (2, 3))}
    assert board_speed(cosched.get("fcs", heatmap=tiny), s, d) == pytest.approx(4.8)


def test_weights_nodes_or_jobs(tiny):
    """No applications (speed 1 everywhere), 3 idle nodes, j0 three nodes wide, j1 and j2 one:
    by nodes j0 does 3 node-seconds per second against 2; by jobs two jobs beat one."""
    c = NodeSharingCluster.build(3)
    s = waiting(c, [job(0, 3, None), job(1, 1, None), job(2, 1, None)])
    assert set(placed(decide("fcs", s, heatmap=tiny))) == {"j0"}
    assert set(placed(decide("fcs", s, heatmap=tiny, weights="jobs"))) == {"j1", "j2"}


def test_burst_buffer_that_does_not_fit_leaves_the_job_waiting(tiny):
    """x and y would pair (2.4 on 2 nodes) but the one BB node holds one request: y's fails,
    the choice is made again without y: x spread alone (1.3) rather than compact (1)."""
    c = NodeSharingCluster.build(2, bb_capacity=[10])
    s = waiting(c, [CoJob("j0", 0, 4, 100, 1, 0, app="x", processes=20, bb=10),
                    CoJob("j1", 0, 4, 100, 1, 1, app="y", processes=20, bb=10)])
    d = decide("fcs", s, heatmap=tiny)
    assert placed(d) == {"j0": (SPREAD, (0, 1))}
    assert d.starts[0].alloc.bb_nodes == (0,)


def test_parameters_are_checked():
    from coburst.errors import InputError
    with pytest.raises(InputError, match="weights"):
        cosched.get("fcs", weights="cores")
    with pytest.raises(InputError, match="node_limit"):
        cosched.get("fcs", node_limit=0)
    assert cosched.resolve("FCS")[0] is FCS


# ---------------------------------------------------------------------- one choice vs brute force
def brute_force(fcs: FCS, pool, board, on) -> float:
    """Largest total speed over every way to start a subset of ``pool`` with one choice's
    placements (compact; spread alone; a host on idle nodes with one guest, or with as many
    guests of one class as it holds; the same next to a running host alone on some nodes, one
    join per host), each evaluated by the hook's rule on a real board."""
    hosts = {h: [n for n in pl.nodes] for h, (j, pl) in on.items() if pl.mode == SPREAD}
    best = fcs.total_speed(board, on)
    cls = {j.seq: (j.app, j.nodes) for j in pool}

    def later(i, like, q):
        """The first ``q`` jobs after position ``i`` of class ``like`` not started yet."""
        out = [k for k in pool[i + 1:] if k.seq not in on and cls[k.seq] == like][:q]
        return out if len(out) == q else None

    def rec(i, used_hosts):
        nonlocal best
        if i == len(pool):
            best = max(best, fcs.total_speed(board, on))
            return
        j = pool[i]
        rec(i + 1, used_hosts)  # not started (or started already, as a pair partner)
        if j.seq in on:
            return
        spread = board.cluster.spread_possible
        idle = np.flatnonzero(board.jobs_on == 0)
        tries = [[(j, COMPACT, None)]]
        if spread(j.nodes):
            tries.append([(j, SPREAD, idle[: 2 * j.nodes])])
            for k in pool[i + 1:]:
                if k.seq in on or not spread(k.nodes):
                    continue
                host, guest = (j, k) if j.nodes >= k.nodes else (k, j)
                nodes = idle[: 2 * host.nodes]
                tries.append([(host, SPREAD, nodes), (guest, SPREAD, nodes)])
                if k.nodes >= 2 * j.nodes:  # j a guest of k, with the next ones of its class
                    more = later(i, cls[j.seq], k.nodes // j.nodes - 1)
                    if more is not None:
                        nodes = idle[: 2 * k.nodes]
                        tries.append([(k, SPREAD, nodes)] + [(g, SPREAD, nodes) for g in [j] + more])
            for like in {cls[k.seq] for k in pool[i + 1:] if k.seq not in on}:  # j hosting a class
                if like[1] * 2 <= j.nodes:
                    guests = later(i, like, j.nodes // like[1])
                    if guests is not None:
                        nodes = idle[: 2 * j.nodes]
                        tries.append([(j, SPREAD, nodes)] + [(g, SPREAD, nodes) for g in guests])
            for h, nodes in hosts.items():
                single = [n for n in nodes if board.jobs_on[n] == 1]
                if h in used_hosts or len(single) < 2 * j.nodes:
                    continue
                tries.append([(j, SPREAD, single), ("host", h, None)])
                q = len(single) // (2 * j.nodes)
                more = later(i, cls[j.seq], q - 1) if q > 1 else None
                if more is not None:
                    tries.append([(g, SPREAD, single) for g in [j] + more] + [("host", h, None)])
        for group in tries:
            done, hosted, ok = [], None, True
            for what, mode, nodes in group:
                if what == "host":
                    hosted = mode
                    continue
                order = None if nodes is None else np.asarray(nodes, dtype=np.int64)
                short = order is not None and len(order) < 2 * what.nodes
                pl = None if short else board.place(what.seq, mode, what.nodes, order)
                if pl is None:
                    ok = False
                    break
                done.append((what, pl))
            if ok:
                for what, pl in done:
                    on[what.seq] = (what, pl)
                rec(i + 1, used_hosts | ({hosted} if hosted is not None else set()))
                for what, _ in done:
                    del on[what.seq]
            for _, pl in reversed(done):
                board.give(pl)

    rec(0, frozenset())
    return best


@st.composite
def scenes(draw):
    nodes = draw(st.integers(2, 6))
    apps = ["x", "y", "z", None]
    n_run = draw(st.integers(0, 4))
    n_wait = draw(st.integers(1, 5))
    jobs = [job(i, draw(st.sampled_from([1, 1, 2, 3])), draw(st.sampled_from(apps))) for i in range(n_run + n_wait)]
    gone = draw(st.lists(st.integers(0, max(n_run - 1, 0)), max_size=2, unique=True))
    weights = draw(st.sampled_from(["nodes", "jobs"]))
    return NodeSharingCluster.build(nodes), jobs[:n_run], jobs[n_run:], gone, weights


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scene=scenes())
def test_one_choice_is_the_brute_force_optimum(tiny, scene):
    """Running jobs placed by EASY-Co (some then ended: hosts alone on half-free nodes), a
    few waiting jobs: FCS's first choice reaches the largest total speed brute force finds."""
    cluster, running, pool, gone, weights = scene
    s = NodeSharingState(cluster)
    for j in running:
        s.submit(j)
    s.apply(cosched.get("easy-co").make_decisions(s))
    for i in gone:
        if f"j{i}" in s.running:
            s.finish(f"j{i}")
    for j in list(s.queue):
        s.drop(j.id)
    for j in pool:
        s.submit(j)
    fcs = cosched.get("fcs", heatmap=tiny, weights=weights)
    board = s.board()
    on = {r.job.seq: (r.job, r.placement) for r in s.running.values()}
    expected = brute_force(fcs, s.queue, s.board(), dict(on))
    d = PlacementDecisions(s.now)
    fcs.choose(s.queue, board, on, s, d, set())
    assert fcs.total_speed(board, on) == pytest.approx(expected, abs=1e-9)
    s.apply(d)   # valid placements
    check_board(s)


# ---------------------------------------------------------------------- the real engine
def test_hook_applies_the_speeds_fcs_planned(tmp_path, tiny):
    """The hand-computed case through ``coburst run`` with the hook: all three start at 0;
    x next to y runs at 1.3 (and alone, after y, at its row best 1.3), y at 1.1, z compact 1."""
    plat = tmp_path / "p3.xml"
    proc = subprocess.run([str(COBURST), "platform", "cosched", "--nodes", "3", "-o", str(plat)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    wl = tmp_path / "w.json"
    jobs = [{"id": i, "subtime": 0, "walltime": 1000, "res": 4, "profile": "p", "app": a}
            for i, a in enumerate(["x", "z", "y"])]
    wl.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": {"p": {"type": "delay", "delay": 100}}}))
    out = tmp_path / "o"
    proc = subprocess.run([str(COBURST), "run", "fcs", "-p", str(plat), "-w", str(wl), "-e", str(out), "-q",
                           "--heatmap", tiny], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    with open(f"{out}_jobs.csv", newline="") as fh:
        rows = {r["job_id"]: r for r in csv.DictReader(fh)}
    assert {k: r["starting_time"] for k, r in rows.items()} == {"0": "0.000000", "1": "0.000000",
                                                                "2": "0.000000"}
    assert {k: r["metadata"] for k, r in rows.items()} == {"0": "speedup=1.300000", "1": "speedup=1.000000",
                                                          "2": "speedup=1.100000"}
    assert float(rows["0"]["execution_time"]) == pytest.approx(100 / 1.3, abs=1e-5)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n=st.integers(5, 20), arrival=st.sampled_from(["zero", "poisson", "uniform"]))
def test_invariants_on_random_workloads_through_the_engine(tmp_path, seed, n, arrival):
    wl = elise_workload(tmp_path / f"w{seed}.json", n, seed, arrival, interarrival=30.0, max_nodes=8)
    rows = run(tmp_path, "fcs", wl, "--heatmap", "aris-nas", prefix=f"o{seed}")
    check_invariants(rows, co=True)
    assert len(rows) == n
    assert all("speedup=" in r["metadata"] for r in rows)


def test_same_inputs_same_outputs(tmp_path):
    wl = elise_workload(tmp_path / "w.json", 12, seed=5, arrival="zero", max_nodes=8)
    a = run(tmp_path, "fcs", wl, "--heatmap", "aris-nas", prefix="a")
    b = run(tmp_path, "FCS", wl, "--heatmap", "aris-nas", prefix="b")   # the label names the same policy
    assert a == b


@needs_batsim
def test_entry_file_on_real_batsim_like_coburst(tmp_path):
    """schedulers/coschedFCS.py, the same workload, both engines: identical messages and
    outputs.  As for the other co-scheduling entry files (tests/test_cosched_engine.py), no
    speedup hook on either engine: the real Batsim has none; FCS still decides on its heatmap
    option's speeds, so its choices are those of a run with the hook, only the run times differ."""
    wl = elise_workload(tmp_path / "w.json", 25, seed=11, interarrival=25.0, max_nodes=8)
    batsim, coburst = run_both(tmp_path, workloads=[wl], platform=SMALL,
                               scheduler=str(REPO / "schedulers" / "coschedFCS.py"))
    assert_identical(batsim, coburst)
    rows = jobs_rows(coburst)
    check_invariants(rows, co=True)


def test_burst_buffers_on_a_node_sharing_platform(tmp_path):
    """tests/test_cosched_bb.py's scene (24 communicating jobs with burst-buffer requests, two
    BB hosts): FCS's choice ignores burst buffers, a chosen job whose request does not fit
    waits (module doc); every job runs, no BB host over capacity, no unit held twice."""
    from test_cosched_bb import CAP, bb_peak, platform, workload
    plat, wl = platform(tmp_path), workload(tmp_path, ptask=True)
    out = tmp_path / "out"
    proc = subprocess.run([str(COBURST), "run", "fcs", "-p", str(plat), "-w", str(wl), "--heatmap", "aris-nas",
                           "-e", str(out), "-q"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    with open(f"{out}_jobs.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 24
    check_invariants(rows, co=True)
    peak = bb_peak(rows)
    assert peak and all(v <= CAP for v in peak.values()), peak
