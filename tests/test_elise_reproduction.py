"""ELiSE's results, reproduced.

``tests/data/elise/<case>/`` holds what ELiSE (nikosT/elise at b6a212c) wrote when run by
``scripts/elise_reference.py`` on job lists coburst drew (Grvingt NAS seed, 2 x 16 cores per
node): ``jobs.csv`` (the job list ELiSE read), ``fifo.csv``, ``easy.csv``, ``easy-co.csv``
(Random Ranks Co-Scheduler), ``filler.csv`` (ELiSE's results, ``get_workload``, without the
processor lists) and ``time_reports.csv``.  Each case is run here through ``coburst workload
elise --from``, ``coburst platform cosched --zero-latency`` and ``coburst run`` with ELiSE's
backfill rule (and, for the co-schedulers, ELiSE's node order), written back with ``coburst
workload elise --run``, and compared with ELiSE's file: FIFO and EASY starts within 1 s of
ELiSE's for >= 99 % of the jobs, EASY-Co and Filler aggregates (makespan, mean wait, mean
slowdown) within 2 %.
"""

from __future__ import annotations

import csv
import json
import statistics
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from coburst.analysis.elise import HEADER, read_job_list, read_results
from coburst.policies import cosched
from cosched_replay import replay
from crossengine import assert_identical, needs_batsim, run_both
from simharness import COBURST, REPO
from test_cosched_policies import workloads

DATA = REPO / "tests" / "data" / "elise"
CASES = {"g64_200_t0": 64, "g64_200_poisson": 64, "g800_1000_t0": 800}
ELISE_OPTIONS = {"fifo": {}, "easy": {"backfill_rule": "elise"},
                 "easy-co": {"backfill_rule": "elise", "placement_order": "shared-first"},
                 "filler": {"backfill_rule": "elise", "placement_order": "shared-first"}}


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(COBURST), *args], capture_output=True, text=True, timeout=600)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def aggregates(res: dict[str, dict]) -> tuple[float, float, float]:
    """(makespan, mean wait, mean slowdown) of a results file (read_results)."""
    jobs = list(res.values())
    makespan = max(j["finish"] for j in jobs) - min(j["submit"] for j in jobs)
    wait = statistics.fmean(j["start"] - j["submit"] for j in jobs)
    slow = statistics.fmean((j["finish"] - j["submit"]) / (j["finish"] - j["start"]) for j in jobs)
    return makespan, wait, slow


def run_case(tmp_path: Path, case: str, policy: str, options: dict) -> dict[str, dict]:
    plat, wl, out = tmp_path / "p.xml", tmp_path / "w.json", tmp_path / "elise.csv"
    cli("platform", "cosched", "--preset", "grvingt", "--nodes", str(CASES[case]), "--zero-latency", "-o", str(plat))
    cli("workload", "elise", "--from", str(DATA / case / "jobs.csv"), "--seed-apps", "grvingt-nas", "-p", str(plat),
        "-o", str(wl), "-q")
    cli("run", {"fifo": "fcfs"}.get(policy, policy), "-p", str(plat), "-w", str(wl), "--heatmap", "grvingt-nas",
        "-e", str(tmp_path / "out"), "-o", json.dumps(options), "-q")
    cli("workload", "elise", "--run", str(tmp_path / "out_jobs.csv"), "-w", str(wl), "-p", str(plat), "-o", str(out),
        "-q")
    return read_results(out)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("policy", ["fifo", "easy"])
def test_fifo_and_easy_starts_agree_with_elise(tmp_path, case, policy):
    mine = run_case(tmp_path, case, policy, ELISE_OPTIONS[policy])
    theirs = read_results(DATA / case / f"{policy}.csv")
    assert mine.keys() == theirs.keys()
    close = sum(abs(mine[k]["start"] - theirs[k]["start"]) <= 1.0 for k in theirs)
    assert close >= 0.99 * len(theirs), f"{close}/{len(theirs)} starts within 1 s of ELiSE's"


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("policy", ["easy-co", "filler"])
def test_cosched_aggregates_agree_with_elise(tmp_path, case, policy):
    mine = aggregates(run_case(tmp_path, case, policy, ELISE_OPTIONS[policy]))
    theirs = aggregates(read_results(DATA / case / f"{policy}.csv"))
    for name, a, b in zip(("makespan", "mean wait", "mean slowdown"), mine, theirs):
        assert abs(a - b) <= 0.02 * abs(b), f"{name}: coburst {a:.3f}, ELiSE {b:.3f}"


def test_easy_rule_departs_from_elise_where_elise_refuses_a_long_backfill(tmp_path):
    """The default (Lifka's EASY: a job ending after the reserved date starts if it leaves the
    head room) starts jobs that ELiSE's rule keeps waiting: the comparison fails without the
    option, so the option is what makes the agreement."""
    mine = run_case(tmp_path, "g64_200_t0", "easy", {})
    theirs = read_results(DATA / "g64_200_t0" / "easy.csv")
    differ = sum(abs(mine[k]["start"] - theirs[k]["start"]) > 1.0 for k in theirs)
    assert differ > 2


def test_same_date_jobs_keep_the_workload_order(tmp_path):
    """12 jobs at t = 0, one node each, on 2 nodes: FCFS starts them in the workload's order
    (ids 0, 1, 2, ..., 11), not Batsim's string order (0, 1, 10, 11, 2, ...)."""
    plat, wl = tmp_path / "p.xml", tmp_path / "w.json"
    cli("platform", "cosched", "--preset", "grvingt", "--nodes", "2", "--zero-latency", "-o", str(plat))
    jobs = [{"id": i, "subtime": 0, "walltime": 20, "res": 4, "profile": "d"} for i in range(12)]
    wl.write_text(json.dumps({"nb_res": 8, "jobs": jobs, "profiles": {"d": {"type": "delay", "delay": 10}}}))
    for policy in ("fcfs", "easy", "easy-co", "filler", "sjf"):
        cli("run", policy, "-p", str(plat), "-w", str(wl), "-e", str(tmp_path / policy), "-q")
        with open(tmp_path / f"{policy}_jobs.csv", newline="") as fh:
            rows = list(csv.DictReader(fh))
        order = [int(r["job_id"]) for r in sorted(rows, key=lambda r: (float(r["starting_time"]), int(r["job_id"])))]
        starts = sorted({round(float(r["starting_time"]), 6) for r in rows})
        assert order == list(range(12)), policy
        assert len(starts) == 6, policy  # two at a time (compact: a node each; spread: half of both)


@needs_batsim
def test_same_date_order_on_both_engines(tmp_path):
    """Batsim 4.2.1 submits the jobs of one date ordered by their id as a string
    (``job_comparator_subtime_number``), and so does ``coburst sim`` (identical messages);
    the co-scheduling adapter ranks them in the workload's order on both engines: the same
    schedule (identical outputs), jobs started in id order."""
    plat, wl = tmp_path / "p.xml", tmp_path / "w.json"
    cli("platform", "cosched", "--preset", "grvingt", "--nodes", "2", "-o", str(plat))
    jobs = [{"id": i, "subtime": 0, "walltime": 20, "res": 4, "profile": "d"} for i in range(12)]
    wl.write_text(json.dumps({"nb_res": 8, "jobs": jobs, "profiles": {"d": {"type": "delay", "delay": 10}}}))
    batsim, coburst = run_both(tmp_path, workloads=[wl], platform=plat,
                               scheduler=str(REPO / "schedulers" / "coschedFcfs.py"))
    assert_identical(batsim, coburst)
    for run in (batsim, coburst):
        submitted = [e["data"]["job_id"] for msg in [m["msg"] for m in run.messages() if m["dir"] == "in"]
                     for e in msg["events"] if e["type"] == "JOB_SUBMITTED"]
        assert submitted == sorted(f"w0!{i}" for i in range(12))  # Batsim's order: "w0!0", "w0!1", "w0!10", ...
        rows = run.rows()
        order = [int(r["job_id"]) for r in sorted(rows, key=lambda r: (float(r["starting_time"]), int(r["job_id"])))]
        assert order == list(range(12))


@needs_batsim
def test_zero_latency_platform_on_both_engines(tmp_path):
    """``--zero-latency`` loads in Batsim 4.2.1 (SimGrid 3.32) and gives identical outputs."""
    plat, wl = tmp_path / "p.xml", tmp_path / "w.json"
    cli("platform", "cosched", "--preset", "grvingt", "--nodes", "4", "--zero-latency", "-o", str(plat))
    jobs = [j for j in read_job_list(DATA / "g64_200_t0" / "jobs.csv")[:40] if j.app.endswith(".32")]
    text = HEADER + "\n" + "".join(f"{j.id},{j.submit},0,0,,,,,{j.walltime},,1,,,{j.app},,,,,\n" for j in jobs)
    (tmp_path / "l.csv").write_text(text)
    cli("workload", "elise", "--from", str(tmp_path / "l.csv"), "--seed-apps", "grvingt-nas", "-p", str(plat),
        "-o", str(wl), "-q")
    batsim, coburst = run_both(tmp_path, workloads=[wl], platform=plat,
                               scheduler=str(REPO / "schedulers" / "coschedEasy.py"))
    assert_identical(batsim, coburst)
    starts = {round(float(r["starting_time"]), 6) for r in batsim.rows()}
    assert 0.0 in starts  # the first jobs start at the decision's date


# ------------------------------------------------------------------ the job-list reader
def write(tmp_path: Path, body: str, header: str = HEADER) -> Path:
    p = tmp_path / "list.csv"
    p.write_text(header + "\n" + body)
    return p


@pytest.mark.parametrize("body, where, problem", [
    ("0,abc,0,0,,,,32,68.6,,1,,,ep.D.32,,,,,\n", "line 2, field 2 (Submit Time)", "is not a number"),
    ("0,0,0,0,,,,32,-1,,1,,,ep.D.32,,,,,\n", "line 2, field 9 (Requested Time)", "must be > 0"),
    ("0,0,0,0,,,,32,inf,,1,,,ep.D.32,,,,,\n", "line 2, field 9 (Requested Time)", "not a finite number"),
    ("0,0,0,0,,,,32,68.6\n", "line 2", "ELiSE needs at least 18"),
    ("0,0,0,0,,,,32,68.6,,1,,,,,,,,\n", "line 2, field 14 (Executable Number)", "empty application"),
    ("0,0,0,0,,,,32,68.6,,1,,,ep.D.32,,,,,\n1,5,0,0,,,,32,68.6,,1,,,xx.Z.1,,,,,\n",
     "line 3, field 14 (Executable Number)", "not in the seed"),
    ("0,0,0,0,,,,64,68.6,,1,,,ep.D.32,,,,,\n", "line 2, field 8 (Requested Number of Processors)",
     "the seed's 'ep.D.32' has 32"),
    ("0,0,0,0,,,,3.5,68.6,,1,,,ep.D.32,,,,,\n", "line 2, field 8", "not a whole number"),
    ("", None, "no job"),
])
def test_malformed_job_lists_are_refused_with_file_line_and_problem(tmp_path, body, where, problem):
    src = write(tmp_path, body)
    out = tmp_path / "w.json"
    proc = cli("workload", "elise", "--from", str(src), "--seed-apps", "grvingt-nas", "-o", str(out), check=False)
    assert proc.returncode == 2, proc.stderr
    assert str(src) in proc.stderr and problem in proc.stderr, proc.stderr
    if where:
        assert where in proc.stderr, proc.stderr
    assert not out.exists()


def test_not_an_elise_header(tmp_path):
    src = write(tmp_path, "0,0,0\n", header="id,subtime,walltime")
    proc = cli("workload", "elise", "--from", str(src), "--seed-apps", "grvingt-nas", "-o",
               str(tmp_path / "w.json"), check=False)
    assert proc.returncode == 2 and "line 1" in proc.stderr and "header" in proc.stderr, proc.stderr


def test_job_list_reads_as_elise_does(tmp_path):
    """Stable sort by submit time, times shifted to the first job, ids 0, 1, ... in that
    order; the application's processes and compact time from the seed, the list's walltime."""
    body = ("7,20,0,0,,,,,300,,1,,,cg.D.32,,,,,\n3,10,0,0,,,,32,68.6,,1,,,ep.D.32,,,,,\n"
            "5,10,0,0,,,,,99,,1,,,mg.D.32,,,,,\n")
    src = write(tmp_path, body)
    out = tmp_path / "w.json"
    cli("workload", "elise", "--from", str(src), "--seed-apps", "grvingt-nas", "-o", str(out), "-q")
    doc = json.loads(out.read_text())
    got = [(j["id"], j["subtime"], j["app"], j["walltime"], j["processes"]) for j in doc["jobs"]]
    assert got == [(0, 0, "ep.D.32", 68.6, 32), (1, 0, "mg.D.32", 99.0, 32), (2, 10, "cg.D.32", 300.0, 32)]
    assert doc["profiles"]["ep.D.32"] == {"type": "delay", "delay": 49.0}
    # a list written by coburst reads back to the same jobs
    listing = tmp_path / "again.csv"
    cli("workload", "elise", "--from", str(src), "--seed-apps", "grvingt-nas", "--elise-list", "-o", str(listing),
        "-q")
    again = tmp_path / "w2.json"
    cli("workload", "elise", "--from", str(listing), "--seed-apps", "grvingt-nas", "-o", str(again), "-q")
    assert json.loads(again.read_text())["jobs"] == doc["jobs"]


def test_run_written_as_elise_results(tmp_path):
    """``--run``: ELiSE's 19 columns, one row per job in the workload's order, times as ELiSE
    computes them, the cores of the allocated units."""
    mine = run_case(tmp_path, "g64_200_t0", "fifo", {})
    text = (tmp_path / "elise.csv").read_text().splitlines()
    assert text[0] == HEADER
    rows = list(csv.reader(text[1:]))
    assert [r[0] for r in rows] == [str(i) for i in range(200)]
    assert all(len(r) == 19 for r in rows)
    first = rows[0]
    assert int(first[4]) == int(first[7]) or int(first[4]) >= int(first[7])  # whole nodes: cores >= processes
    cores = json.loads(first[18])
    assert len(cores) == int(first[4]) and min(cores) >= 1
    assert mine["0"]["start"] == float(first[1]) + float(first[2])


# ------------------------------------------------------------------ ELiSE's rules on random workloads

ELISE_KW = {"backfill_rule": "elise"}


def _elise_policy(name):
    kw = dict(ELISE_KW)
    if name in ("easy-co", "filler", "sjf-filler"):
        kw["placement_order"] = "shared-first"
    if name == "popularity":
        kw["heatmap"] = "aris-nas"
    return cosched.get(name, **kw)


@pytest.mark.parametrize("name", ["easy", "sjf", "easy-co", "sjf-co", "filler", "sjf-filler", "popularity"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wl=workloads())
def test_elise_rules_keep_the_invariants(name, wl):
    """ELiSE's backfill rule and node order: no unit twice, compact alone, <= 2 jobs per node
    (checked after every batch by the replay), every job finishes, same decisions twice."""
    cluster, jobs, runtimes = wl
    out = replay(cluster, jobs, _elise_policy(name), runtimes)
    assert not out.stalled
    assert set(out.records) | set(out.rejected) == {j.id for j in jobs}
    assert all(r.end is not None for r in out.records.values())
    again = replay(cluster, jobs, _elise_policy(name), runtimes)
    assert [(k, r.start, r.units) for k, r in out.records.items()] == \
        [(k, r.start, r.units) for k, r in again.records.items()]


@pytest.mark.parametrize("name", ["easy", "easy-co"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wl=workloads())
def test_elise_backfill_ends_before_the_oldest_waiting_job_starts(name, wl):
    """ELiSE's rule with exact walltimes (submission-order policies): a job started while an
    older one waits (a backfilled job) ends no later than the oldest waiting job starts; it
    never takes nodes past that date, which Lifka's EASY rule allows."""
    cluster, jobs, _ = wl
    out = replay(cluster, jobs, _elise_policy(name), None)
    recs = {r.job.seq: r for r in out.records.values()}
    for seq, r in recs.items():
        waiting = [h for s, h in recs.items() if s < seq and h.job.subtime <= r.start < h.start]
        if waiting:
            head = min(waiting, key=lambda h: h.job.seq)
            assert r.end <= head.start + 1e-9, (r.job.id, r.end, head.job.id, head.start)
