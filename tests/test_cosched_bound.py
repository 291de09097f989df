"""The co-scheduling makespan bound (coburst.theory.cosched_bound): the LP against hand-computed
cases, against the exhaustive optimum of tiny instances (hypothesis), against every
co-scheduling policy's makespan on the real engine with the heatmap hook, and the model's
event arithmetic against the engine's own finish dates (the bound is derived from that model).
"""

from __future__ import annotations

import csv
import json
import math
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simharness import COBURST, REPO
from coburst.errors import InputError
from coburst.models.heatmap import Heatmap, bundled
from coburst.platforms.cosched import CoschedSpec, render_xml
from coburst.policies import cosched
from coburst.theory.cosched_bound import (BoundJob, Machine, exhaustive_makespan, finish_times, jobs_from_workload,
                                          machine_from_platform, makespan_bound, speed_table)

REL = 1e-9


def hm2(aa=1.2, ab=1.5, ba=0.6, bb=0.9) -> Heatmap:
    return Heatmap(["A", "B"], {("A", "A"): aa, ("A", "B"): ab, ("B", "A"): ba, ("B", "B"): bb})


# ---------------------------------------------------------------------- hand-computed
def test_single_job_runs_spread_alone_at_its_row_best():
    job = BoundJob("1", "A", 1, 120.0)
    b = makespan_bound([job], hm2(), Machine(2))
    assert b.makespan == pytest.approx(120.0 / 1.5, rel=REL)     # row best of A = 1.5
    assert exhaustive_makespan([job], hm2(), Machine(2)).makespan == pytest.approx(80.0, rel=REL)
    # one node: spread impossible (needs 2 nodes) -> compact at 1.0
    assert makespan_bound([job], hm2(), Machine(1)).makespan == pytest.approx(120.0, rel=REL)
    # --heatmap-alone 1.0: an idle half is bounded by alone and the pairs that can exist
    # (A next to A needs a second A job): 1.0 -> the bound is the true optimum, compact or alone
    assert makespan_bound([job], hm2(), Machine(2), alone=1.0).makespan == pytest.approx(120.0, rel=REL)
    assert exhaustive_makespan([job], hm2(), Machine(2), alone=1.0).makespan == pytest.approx(120.0, rel=REL)
    # with a B job beside it, A's idle half may be worth A next to B (1.5): a valid, looser bound
    two = [job, BoundJob("2", "B", 1, 1.0)]
    assert makespan_bound(two, hm2(), Machine(4), alone=1.0).makespan == pytest.approx(80.0, rel=REL)
    assert exhaustive_makespan(two, hm2(), Machine(4), alone=1.0).makespan >= 80.0


def test_a_job_cannot_pair_with_itself():
    """Alone 0.5 forced, A next to A 2.0: a single A job gains nothing from 'pairing with A'
    (no other A job), so the bound is its compact time; two A jobs pair at 2.0."""
    hm = Heatmap(["A"], {("A", "A"): 2.0})
    one = [BoundJob("1", "A", 1, 100.0)]
    assert makespan_bound(one, hm, Machine(2), alone=0.5).makespan == pytest.approx(100.0, rel=REL)
    two = [BoundJob("1", "A", 1, 100.0), BoundJob("2", "A", 1, 100.0)]
    assert makespan_bound(two, hm, Machine(2), alone=0.5).makespan == pytest.approx(50.0, rel=REL)
    assert exhaustive_makespan(two, hm, Machine(2), alone=0.5).makespan == pytest.approx(50.0, rel=REL)


def test_idle_halves_of_a_job_with_neighbours_count_at_its_best_pair():
    """With --heatmap-alone 0.5, a 2-node A job spread on 4 nodes, with a 1-node B job on two of
    them, runs at A-next-to-B 1.5 although half of its halves are idle: both end at 100 s.
    Counting idle halves at the alone speed would give a 'bound' above that optimum."""
    hm = Heatmap(["A", "B"], {("A", "B"): 1.5, ("B", "A"): 1.0})
    jobs = [BoundJob("j", "A", 2, 150.0), BoundJob("k", "B", 1, 100.0)]
    opt = exhaustive_makespan(jobs, hm, Machine(4), alone=0.5)
    assert opt.makespan == pytest.approx(100.0, rel=REL)
    assert makespan_bound(jobs, hm, Machine(4), alone=0.5).makespan == pytest.approx(100.0, rel=REL)


def test_pairing_balance_hand_computed():
    """A runs 1.5 next to B, B 0.5 next to A; A next to A and B next to B 1.0; alone: row best
    (A 1.5, B 1.0).  Two A and two B jobs (1 node, work 100) on 2 nodes.  Without the balance
    of paired time, A would pair with B at 1.5 while B runs compact: (2 x 133 + 2 x 200) / 4
    = 167.  With it, every paired second gives A 1.5 and B 0.5 work for two halves, no better
    than compact; A alone (1.5 for two halves) is worse: the bound is the compact 200, the
    optimum too."""
    hm = Heatmap(["A", "B"], {("A", "A"): 1.0, ("A", "B"): 1.5, ("B", "A"): 0.5, ("B", "B"): 1.0})
    jobs = [BoundJob("a1", "A", 1, 100.0), BoundJob("a2", "A", 1, 100.0), BoundJob("b1", "B", 1, 100.0),
            BoundJob("b2", "B", 1, 100.0)]
    b = makespan_bound(jobs, hm, Machine(2))
    assert b.makespan == pytest.approx(200.0, rel=REL)
    assert b.area == pytest.approx(0.5 * (2 * 200 / 1.5 + 2 * 200) / 2, rel=REL)  # the bound without balance
    assert exhaustive_makespan(jobs, hm, Machine(2)).makespan == pytest.approx(200.0, rel=REL)


def test_capacity_bound_with_kills():
    """Eight 1-node jobs of work 100 on 2 nodes, every spread speed 0.5, walltime W.  A job's
    obligation ends at W, so each configuration counts at speed max(g, 100 / W): the cheapest
    node time per unit of work is then compact (W = 140) or a tie (W = 100): 8 x 100 / 2 = 400;
    with W = 50 every job is over after 50 s whatever it does: 8 x 50 / 2 = 200."""
    hm = Heatmap(["A"], {("A", "A"): 0.5})
    jobs = [BoundJob(str(i), "A", 1, 100.0, 140.0) for i in range(8)]
    b = makespan_bound(jobs, hm, Machine(2), alone=0.5)
    assert b.area == pytest.approx(400.0, rel=REL)
    assert b.makespan == pytest.approx(400.0, rel=REL)
    # a walltime of 100 (= p): a killed pair costs 100 per job for 2 jobs on 2 nodes -> 4 x 100
    jobs = [BoundJob(str(i), "A", 1, 100.0, 100.0) for i in range(8)]
    assert makespan_bound(jobs, hm, Machine(2), alone=0.5).makespan == pytest.approx(400.0, rel=REL)
    # walltime 50: every job ends by 50 whatever it does: 8 jobs x 1 node x 50 / 2 nodes
    jobs = [BoundJob(str(i), "A", 1, 100.0, 50.0) for i in range(8)]
    assert makespan_bound(jobs, hm, Machine(2), alone=0.5).makespan == pytest.approx(200.0, rel=REL)
    assert exhaustive_makespan(jobs[:4], hm, Machine(2), alone=0.5).makespan == pytest.approx(100.0, rel=REL)


def test_releases_shift_to_the_first_and_bound_each_job():
    jobs = [BoundJob("1", "A", 1, 100.0, release=10.0), BoundJob("2", "A", 1, 100.0, release=310.0)]
    b = makespan_bound(jobs, hm2(), Machine(4))
    assert b.makespan == pytest.approx(300.0 + 100.0 / 1.5, rel=REL)


def test_speed_table_follows_the_hook():
    hm = Heatmap(["A", "B", "C"], {("A", "A"): 1.2, ("A", "B"): 0.8, ("B", "A"): 1.1, ("C", "C"): 0.7})
    t = speed_table(hm, ["A", "B", "C", None])
    assert t.apps == ("A", "B", "C", None)
    a, b, c, none = range(4)
    assert t.pair[a, c] == pytest.approx(1.0)            # A's row mean (1.2 + 0.8) / 2
    assert t.pair[a, none] == pytest.approx(1.0)
    assert t.pair[b, b] == pytest.approx(1.1)            # B's row mean of one value
    assert t.alone[a] == 1.2 and t.alone[b] == 1.1 and t.alone[c] == 0.7
    assert t.speed(none, [a], False) == 1.0 and t.speed(a, [b, c], False) == pytest.approx(0.8)
    assert t.speed(a, [b], True) == 1.0 and t.speed(c, [], False) == 0.7
    assert t.upper[c] == pytest.approx(0.7) and t.upper[a] == pytest.approx(1.2)
    with pytest.raises(InputError, match="'D'"):
        speed_table(hm, ["D"])


# ---------------------------------------------------------------------- tiny instances, exhaustively
APPS = ("A", "B", "C")


@st.composite
def instances(draw, max_jobs=4, max_nodes=4):
    k = draw(st.integers(1, 3))
    apps = APPS[:k]
    values = {}
    for a in apps:
        for b in apps:
            if draw(st.integers(0, 4)):  # 1 in 5 pairs not measured
                values[(a, b)] = draw(st.sampled_from([0.5, 0.66, 0.8, 0.95, 1.0, 1.1, 1.25, 1.5, 1.8]))
    hm = Heatmap(apps, values)
    nodes = draw(st.integers(1, max_nodes))
    machine = Machine(nodes, draw(st.sampled_from([True, True, False])))
    jobs = []
    for i in range(draw(st.integers(1, max_jobs))):
        app = draw(st.sampled_from(apps + (None,)))
        m = draw(st.integers(1, min(2, nodes)))
        work = float(draw(st.integers(0, 20)) * 5)
        wall = draw(st.sampled_from([math.inf, math.inf, 0.5, 0.8, 1.0, 1.2, 1.4, 2.0]))
        jobs.append(BoundJob(str(i), app, m, work, wall * work if math.isfinite(wall) and work > 0 else math.inf))
    alone = draw(st.sampled_from(["best", "best", 0.7, 1.0, 1.3]))
    return hm, machine, jobs, alone


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_bound_below_the_exhaustive_optimum(inst):
    hm, machine, jobs, alone = inst
    b = makespan_bound(jobs, hm, machine, alone=alone)
    opt = exhaustive_makespan(jobs, hm, machine, alone=alone)
    assert b.makespan <= opt.makespan * (1 + REL) + 1e-9, (b, opt)
    # the LP dominates the bounds it implies; the certificate is the LP value
    assert b.makespan >= max(b.longest, b.area) * (1 - 1e-7) - 1e-9
    assert b.makespan == pytest.approx(b.lp_value, rel=1e-7, abs=1e-9)
    # aggregation is exact
    assert makespan_bound(jobs, hm, machine, alone=alone, aggregate=False).lp_value == \
        pytest.approx(b.lp_value, rel=1e-7, abs=1e-9)
    # the optimum's schedule, evaluated again, gives the optimum
    ends = finish_times(jobs, opt.schedule, hm, machine, alone=alone)
    assert max(ends.values()) == pytest.approx(opt.makespan, rel=REL, abs=1e-9)


def test_exhaustive_pairs_friends():
    """Two applications that slow each other (0.5) but gain with their own kind (1.4), 4 nodes:
    the optimum pairs A with A and B with B, spread, and the bound is tight."""
    hm = Heatmap(["A", "B"], {("A", "A"): 1.4, ("A", "B"): 0.5, ("B", "A"): 0.5, ("B", "B"): 1.4})
    jobs = [BoundJob("1", "A", 1, 70.0), BoundJob("2", "A", 1, 70.0), BoundJob("3", "B", 1, 70.0),
            BoundJob("4", "B", 1, 70.0)]
    opt = exhaustive_makespan(jobs, hm, Machine(4))
    assert opt.makespan == pytest.approx(50.0, rel=REL)              # A+A on 2 nodes, B+B on 2 nodes
    modes = {v[1] for v in opt.schedule.values()}
    assert modes == {"spread"}
    assert makespan_bound(jobs, hm, Machine(4)).makespan == pytest.approx(50.0, rel=REL)


def test_errors_of_the_exhaustive_search_and_the_bound():
    hm = hm2()
    with pytest.raises(ValueError, match="at most"):
        exhaustive_makespan([BoundJob(str(i), "A", 1, 1.0) for i in range(7)], hm, Machine(2))
    with pytest.raises(ValueError, match="never runs"):
        makespan_bound([BoundJob("1", "A", 3, 1.0)], hm, Machine(2))
    with pytest.raises(ValueError, match="no free half"):
        finish_times([BoundJob("1", "A", 1, 10.0), BoundJob("2", "A", 1, 10.0)],
                     {"1": (0.0, "compact", (0,)), "2": (0.0, "spread", (0, 1))}, hm, Machine(2))


# ---------------------------------------------------------------------- files
def platform(tmp_path: Path, nodes: int) -> Path:
    path = tmp_path / f"co{nodes}.xml"
    if not path.exists():
        path.write_text(render_xml(CoschedSpec(nodes=nodes)))
    return path


def write_workload(path: Path, jobs: list[tuple[str | None, int, float, float | None]], units: int = 4) -> Path:
    """jobs: (app, compact nodes, work, walltime factor or None), all at t = 0."""
    doc = {"nb_res": 64, "jobs": [], "profiles": {}}
    for i, (app, m, work, wf) in enumerate(jobs):
        job = {"id": i, "subtime": 0, "res": units * m, "profile": f"p{i}"}
        if wf is not None:
            job["walltime"] = round(wf * work, 6)
        if app is not None:
            job["app"] = app
        doc["jobs"].append(job)
        doc["profiles"][f"p{i}"] = {"type": "delay", "delay": work}
    path.write_text(json.dumps(doc) + "\n")
    return path


def test_workload_and_platform_readers(tmp_path):
    p = platform(tmp_path, 4)
    cl = machine_from_platform(p)
    assert (cl.n, cl.units_per_node, cl.can_spread) == (4, 4, True)
    wl = write_workload(tmp_path / "w.json", [("ft.D.64", 1, 10.0, 1.4), (None, 2, 5.0, None), ("mg.E.128", 5, 1.0, None)])
    doc = json.loads(wl.read_text())
    doc["jobs"].append({"id": 9, "subtime": 3, "res": 6, "profile": "c"})        # not whole nodes: rejected
    doc["profiles"]["c"] = {"type": "composed", "seq": ["p0", "p1"], "repeat": 2}
    doc["jobs"].append({"id": 10, "subtime": 2, "res": 4, "profile": "c"})
    wl.write_text(json.dumps(doc))
    jobs, rejected = jobs_from_workload(wl, cl)
    assert rejected == ["2", "9"]
    assert [(j.id, j.app, j.nodes, j.work, j.walltime, j.release) for j in jobs] == [
        ("0", "ft.D.64", 1, 10.0, 14.0, 0.0), ("1", None, 2, 5.0, math.inf, 0.0), ("10", None, 1, 30.0, math.inf, 2.0)]
    doc["profiles"]["p1"] = {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}
    wl.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"jobs\[1\].profile: profile 'p1' is of type 'parallel_homogeneous'"):
        jobs_from_workload(wl, cl)
    with pytest.raises(InputError, match="node-sharing platform"):
        machine_from_platform(REPO / "platforms" / "kth_sp2.xml")


# ---------------------------------------------------------------------- the engine
def engine_run(tmp_path: Path, policy: str, plat: Path, wl: Path, prefix: str) -> list[dict]:
    out = tmp_path / prefix
    proc = subprocess.run([str(COBURST), "run", policy, "-p", str(plat), "-w", str(wl), "-e", str(out), "-q",
                           "--heatmap", "aris-nas"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    with open(f"{out}_jobs.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def engine_schedule(rows: list[dict], units_per_node: int) -> dict:
    out = {}
    for r in rows:
        units = set()
        for part in r["allocated_resources"].split():
            a, _, b = part.partition("-")
            units.update(range(int(a), int(b or a) + 1))
        nodes = sorted({u // units_per_node for u in units})
        mode = "compact" if len(units) == len(nodes) * units_per_node else "spread"
        out[r["job_id"]] = (float(r["starting_time"]), mode, nodes)
    return out


def check_against_engine(rows, jobs, hm, machine, b, opt=None):
    makespan = max(float(r["finish_time"]) for r in rows)
    assert b.makespan <= makespan + 1e-6      # _jobs.csv rounds dates to the microsecond
    if opt is not None:
        assert opt.makespan <= makespan * (1 + 1e-6) + 1e-6, (opt.makespan, makespan)
    # the model's arithmetic is the engine's: same starts and placements -> same ends
    ends = finish_times(jobs, engine_schedule(rows, 4), hm, machine)
    for r in rows:
        assert ends[r["job_id"]] == pytest.approx(float(r["finish_time"]), abs=1e-5), r["job_id"]
    return makespan


TINY = [("ft.D.64", 1, 100.0, 1.4), ("mg.E.128", 1, 80.0, 1.4), ("cg.E.512", 2, 60.0, 1.4),
        ("ep.E.256", 1, 50.0, 1.4), ("sp.C.64", 1, 30.0, 1.4)]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tiny")
    plat = platform(tmp, 4)
    wl = write_workload(tmp / "w.json", TINY)
    cl = machine_from_platform(plat)
    jobs, _ = jobs_from_workload(wl, cl)
    machine = Machine(cl.n, cl.can_spread)
    hm = bundled("aris-nas")
    return plat, wl, jobs, machine, hm, makespan_bound(jobs, hm, machine), exhaustive_makespan(jobs, hm, machine)


@pytest.mark.parametrize("name", sorted(cosched.families()))
def test_every_policy_above_the_optimum_and_the_bound(tmp_path, tiny, name):
    plat, wl, jobs, machine, hm, b, opt = tiny
    rows = engine_run(tmp_path, name, plat, wl, "o")
    makespan = check_against_engine(rows, jobs, hm, machine, b, opt)
    assert b.makespan <= opt.makespan <= makespan + 1e-6


def test_tiny_instance_numbers(tiny):
    """The fixed instance's bound and optimum, so that a change to either is seen."""
    *_, b, opt = tiny
    assert b.makespan == pytest.approx(83.224476, rel=1e-6)
    assert opt.makespan == pytest.approx(100.747935, rel=1e-6)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                HealthCheck.too_slow])
@given(policy=st.sampled_from(sorted(cosched.families())), nodes=st.sampled_from([4, 8]),
       spec=st.lists(st.tuples(st.sampled_from(["ft.D.64", "mg.E.128", "cg.E.512", "ep.E.256", "sp.C.64", "lu.D.64",
                                                "is.E.256"]),
                               st.integers(1, 2), st.integers(1, 40).map(lambda x: 5.0 * x),
                               st.sampled_from([1.4, 1.4, 1.1, None])), min_size=1, max_size=9))
def test_random_job_sets_on_the_engine(tmp_path, policy, nodes, spec):
    plat = platform(tmp_path, nodes)
    wl = write_workload(tmp_path / "w.json", spec)
    cl = machine_from_platform(plat)
    jobs, rejected = jobs_from_workload(wl, cl)
    assert not rejected
    machine = Machine(cl.n, cl.can_spread)
    hm = bundled("aris-nas")
    b = makespan_bound(jobs, hm, machine)
    opt = exhaustive_makespan(jobs, hm, machine) if len(jobs) <= 4 and nodes == 4 else None
    rows = engine_run(tmp_path, policy, plat, wl, "o")
    check_against_engine(rows, jobs, hm, machine, b, opt)


def test_platform_fast_path_equals_the_hosts(tmp_path):
    from coburst.theory.cosched_bound import cluster_from_hosts

    for spec in (CoschedSpec(nodes=3, bb_nodes=2, bb_capacity="10GB"), CoschedSpec(nodes=5, unit="core",
                                                                                    preset="grvingt")):
        p = tmp_path / "p.xml"
        p.write_text(render_xml(spec))
        a, b = machine_from_platform(p), cluster_from_hosts(p)
        assert (a.n, a.sockets, a.k, a.cores_per_unit, a.can_spread) == (b.n, b.sockets, b.k, b.cores_per_unit,
                                                                          b.can_spread)
        assert list(a.bb_capacity) == list(b.bb_capacity)


# ---------------------------------------------------------------------- coburst analyze, the study
def test_analyze_reports_the_bound(tmp_path, tiny, capsys):
    from coburst.cli.main import main

    plat, wl, jobs, machine, hm, b, _ = tiny
    engine_run(tmp_path, "easy-co", plat, wl, "run")
    out = tmp_path / "an"

    def analyze(*extra):
        capsys.readouterr()
        try:
            code = main(["analyze", str(tmp_path / "run"), "-o", str(out), "-q", *extra])
        except SystemExit as exc:  # argparse
            code = exc.code
        return subprocess.CompletedProcess([], code, "", capsys.readouterr().err)

    proc = analyze("--workload", str(wl), "--platform", str(plat), "--heatmap", "aris-nas")
    assert proc.returncode == 0, proc.stderr
    import pandas as pd
    runs = pd.read_csv(out / "runs.csv")
    assert runs["cosched_bound"].iloc[0] == pytest.approx(b.makespan, rel=1e-9)
    assert runs["makespan_over_bound"].iloc[0] == pytest.approx(runs["makespan"].iloc[0] / b.makespan, rel=1e-9)
    assert runs["makespan_over_bound"].iloc[0] >= 1
    proc = analyze("--workload", str(wl), "--platform", str(plat), "--heatmap", "aris-nas", "--heatmap-alone", "1")
    assert proc.returncode == 0, proc.stderr
    assert pd.read_csv(out / "runs.csv")["cosched_bound"].iloc[0] == pytest.approx(
        makespan_bound(jobs, hm, machine, alone=1.0).makespan, rel=1e-9)
    # a campaign folder: workload and platform from each run's params.json (relative to the campaign)
    import shutil
    camp = tmp_path / "camp"
    (camp / "runs" / "r1").mkdir(parents=True)
    shutil.copy(wl, camp / "w.json")
    shutil.copy(plat, camp / "p.xml")
    shutil.copy(tmp_path / "run_jobs.csv", camp / "runs" / "r1" / "out_jobs.csv")
    (camp / "runs" / "r1" / "params.json").write_text('{"scheduler": "easy-co", "workload": "w.json", '
                                                      '"platform": "p.xml"}')
    (camp / "runs" / "r1" / "status.json").write_text('{"state": "done"}')
    capsys.readouterr()
    assert main(["analyze", str(camp), "-o", str(tmp_path / "an2"), "-q", "--heatmap", "aris-nas"]) == 0
    assert pd.read_csv(tmp_path / "an2" / "runs.csv")["cosched_bound"].iloc[0] == pytest.approx(b.makespan, rel=1e-9)
    for extra, message in (
            (("--heatmap", "aris-nas"), "--heatmap: run run: the makespan bound needs the run's workload"),
            (("--heatmap", "nope", "--workload", str(wl)), "--heatmap: nope: no such file, and not a bundled heatmap"),
            (("--heatmap-alone", "2"), "--heatmap-alone: 2.0: only with --heatmap"),
            (("--heatmap", "aris-nas", "--heatmap-alone", "0"), "argument --heatmap-alone: expected 'best' or a"),
            (("--heatmap", "aris-nas", "--workload", str(wl), "--platform", str(REPO / "platforms" / "kth_sp2.xml")),
             "needs a node-sharing platform")):
        (out / "runs.csv").unlink(missing_ok=True)
        proc = analyze(*extra)
        assert proc.returncode == 2 and message in proc.stderr, (extra, proc.stderr)
        assert "Traceback" not in proc.stderr and not (out / "runs.csv").exists()


def test_study_prints_makespan_over_bound(tmp_path):
    out = tmp_path / "study"
    proc = subprocess.run([str(COBURST.parent / "python"), str(REPO / "scripts" / "cosched_study.py"),
                           "--experiments", "1", "--jobs", "6", "--nodes", "8", "--policies", "EASY-Co",
                           "--workers", "1", "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    header = next(line for line in proc.stdout.splitlines() if line.startswith("scheduler\tmean job speedup"))
    assert header.endswith("makespan / bound")
    with open(out / "metrics.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["scheduler"] for r in rows} == {"EASY-Co", "Conservative"}
    cl = machine_from_platform(out / "aris8.xml")
    jobs, _ = jobs_from_workload(out / "workload0.json", cl)
    b = makespan_bound(jobs, bundled("aris-nas"), Machine(cl.n, cl.can_spread))
    for r in rows:
        assert float(r["bound"]) == pytest.approx(b.makespan, rel=1e-12)
        assert float(r["makespan_over_bound"]) == pytest.approx(float(r["makespan"]) / b.makespan, rel=1e-12)
        assert float(r["makespan_over_bound"]) >= 1
    assert "makespan lower bound" in proc.stdout


def test_a_job_killed_at_its_walltime_on_the_engine(tmp_path):
    """cg.E.512 next to mg.E.128 runs at 0.6659 < 1 / 1.4: spread beside a long mg job it is
    killed at its walltime (140 s, 93 of its 100 s of work done); the model ends it there too,
    and the bound (which counts a killed job's obligation as met at its walltime) stays below."""
    plat = platform(tmp_path, 2)
    wl = write_workload(tmp_path / "w.json", [("cg.E.512", 1, 100.0, 1.4), ("mg.E.128", 1, 300.0, 1.4)])
    cl = machine_from_platform(plat)
    jobs, _ = jobs_from_workload(wl, cl)
    machine, hm = Machine(cl.n, cl.can_spread), bundled("aris-nas")
    rows = engine_run(tmp_path, "easy-co", plat, wl, "o")
    state = {r["job_id"]: (r["final_state"], float(r["finish_time"])) for r in rows}
    assert state["0"] == ("COMPLETED_WALLTIME_REACHED", pytest.approx(140.0, abs=1e-5))
    b = makespan_bound(jobs, hm, machine)
    opt = exhaustive_makespan(jobs, hm, machine)
    check_against_engine(rows, jobs, hm, machine, b, opt)
    assert b.makespan <= opt.makespan


def test_compact_only_bound_is_the_classic_one(tiny):
    """Without spread placements the LP is the classic bound max(longest job, total node
    time / nodes), with kills at the walltime."""
    _, _, jobs, machine, hm, b, _ = tiny
    c = makespan_bound(jobs, hm, Machine(machine.nodes, False))
    done = [min(j.work, j.walltime) for j in jobs]
    assert c.makespan == pytest.approx(max(max(done), sum(j.nodes * d for j, d in zip(jobs, done)) / machine.nodes),
                                       rel=REL)
    assert b.makespan <= c.makespan
