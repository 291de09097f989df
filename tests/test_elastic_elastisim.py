"""coburst's elastic mode against ElastiSim: the cases of tests/data/elastisim/cases.json (rigid,
moldable, malleable jobs under equipartition, Amdahl tasks, start, reconfiguration and expansion
costs, two resizes of one job at one point, an evolving job's requests, the scheduling point
between two phases), each written in coburst's workload format and in
ElastiSim's, were run by ElastiSim with an equipartition scheduler written for its Python
interface rule for rule as coburst's ``equipartition``; the file keeps what ElastiSim printed (its
``about`` says how).  coburst runs the same cases here and must give the same per-job start and
end times, the same decisions (start sizes, resizes: date, job, old and new size) and the same
number of nodes per job over time.

Tolerance, from two roundings:

* ElastiSim prints its times with C++'s default stream precision, 6 significant digits
  (``137.633`` for 137.6333...), coburst its files with 6 decimals: a relative 6e-6 plus 1e-6;
* coburst speaks Batsim 4.2.1's protocol, whose messages carry their date with 6 decimals
  (``"%6f"``); the scheduler answers at that date and a job waiting at a scheduling point goes on
  at the answer's date, up to 5e-7 s after the point when the date was rounded up (Batsim's
  behaviour, which coburst reproduces).  So coburst's dates may run behind ElastiSim's exact ones
  by up to 5e-7 s per scheduling point passed before: the tolerance adds 5e-7 s per scheduling
  point of the run (the decisions' dates, which ElastiSim's scheduler logs at full precision,
  get that drift and coburst's 6 decimals).  Rigid and moldable jobs have no scheduling points:
  there the times agree to the printed digits.

Two cases differ on purpose, as docs/tutorials/malleable.md ("Against ElastiSim") documents, and
the tests assert the difference: where the scheduling point between two phases falls, and what
``num_nodes`` means in ``on_expansion``; their ``coburst_equivalent`` input (the same model in
coburst's terms) agrees with ElastiSim.  ElastiSim's scheduler resizing a job twice at one
invocation is one reconfiguration (to the nodes it leaves the job with), as coburst's two
``RESIZE_JOB`` of one job in one reply now are.  On a platform with latencies coburst's dates
are later, as documented: its messages take them (Batsim's), ElastiSim's 0-byte ones not.

Transfers (each case names its platform: cluster16_pfs.xml, the same nodes with a PFS host behind
a link no transfer fills; cluster16_backbone.xml, with a backbone the jobs' communications share;
cluster16_pfs_shared.xml, a narrow PFS link): communication tasks of every pattern (ElastiSim's
``cpu`` tasks with bytes only) and PFS reads and writes of every pattern (ElastiSim's tasks
``synchronized``) give ElastiSim's dates and decisions.  Three cases differ by design, each by the
amount the models give by hand: ElastiSim overlaps a ``cpu`` task's flops and bytes (coburst: a
compute task, then a communication task), ElastiSim's nodes go from task to task on their own
between barriers (coburst's job runs each task on all its nodes before the next), and ElastiSim's
I/O task is a parallel task a node (a shared link is shared per node; coburst's a parallel task a
job, shared per job).  The first two have an ``elastisim_equivalent`` (ElastiSim's input written
in coburst's model: two ``cpu`` tasks; every task ``synchronized``), which agrees with coburst.
Written in coburst's coupled form (one compute task with the bytes, one parallel task of both,
which the converter makes of ElastiSim's ``cpu`` task with both), the first gives ElastiSim's
dates.

GPUs (cluster16_gpu.xml: the same nodes with 4 GPUs each): rigid, moldable and malleable jobs of
gpu tasks (2, 3, 4 or 1 GPU(s) per node, flops split or per node, bytes all-to-all or in a ring
within and between nodes, expressions and a reconfiguration cost reading ``num_gpus`` and
``num_gpus_per_node``), and compute tasks coupled with a communication on a shared backbone
(ElastiSim's ``cpu`` task ``coupled``), give ElastiSim's dates and decisions, run directly and
imported."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from coburst.adapter.elastic import run_elastic
from coburst.policies.elastic.equipartition import Equipartition

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "elastisim"
PLATFORM = DATA / "cluster16_lat0.xml"
LATENCY_PLATFORM = DATA / "cluster16_lat50.xml"  # 50 us in the cluster, 100 us to the master host
RECORD = json.loads((DATA / "cases.json").read_text())
CASES = RECORD["cases"]
#: the cases whose direct translation differs from ElastiSim as documented
DIFFERENT = {"phase_points", "expansion_cost", "pfs_ranks", "pfs_shared", "overlap"}
#: of those, the cases where ElastiSim's model of a task differs from coburst's: imported, they
#: read as coburst's model (not translated to ElastiSim's meaning, which coburst has no form for)
MODEL_DIFFERENT = {"pfs_ranks", "pfs_shared"}

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module", autouse=True)
def platform_described():
    """The platform's description cached by a run in a child process: the runs here then take it
    from the cache and load no SimGrid engine in the test process (SimGrid allows one engine a
    process, and the first run on a platform new to the cache loads one, which would stop a
    later test's first run on another platform)."""
    code = ("import json, sys, tempfile, pathlib; from coburst.adapter.elastic import run_elastic; "
            "d = pathlib.Path(tempfile.mkdtemp()); w = d / 'w.json'; "
            "w.write_text(json.dumps(json.loads(sys.argv[2]))); run_elastic(sys.argv[1], [w], 'equipartition', d / 'o')")
    for platform in (PLATFORM, LATENCY_PLATFORM, *sorted({platform_of(c) for c in CASES.values()} - {PLATFORM})):
        subprocess.run([sys.executable, "-c", code, str(platform), json.dumps(CASES["rigid"]["coburst"])],
                       check=True, env=os.environ, cwd=REPO, capture_output=True, timeout=120)


def platform_of(case: dict) -> Path:
    """The platform a case ran on (cluster16_lat0.xml unless it names one)."""
    return DATA / case.get("platform", PLATFORM.name)


#: the most a scheduling point can delay a job in coburst: Batsim's dates have 6 decimals
DRIFT_PER_POINT = 5e-7


def close(a: float, b: float, drift: float = 0.0) -> bool:
    """``a`` (coburst) is ``b`` (ElastiSim, printed to 6 significant digits) within ``drift``."""
    return abs(a - b) <= drift + 6e-6 * abs(b) + 1e-6


class Counting(Equipartition):
    """coburst's equipartition, counting the scheduling points it answers."""

    def __init__(self):
        super().__init__()
        self.points = 0

    def schedule(self, state, decisions):
        self.points += len(state.at_points())
        super().schedule(state, decisions)


def rows(path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def simulate(tmp_path: Path, name: str, workload: dict, platform: Path = PLATFORM) -> dict:
    """coburst on ``workload`` with equipartition: jobs (by submission order), decisions, sizes."""
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(workload))
    policy = Counting()
    result = run_elastic(platform, [path], policy, tmp_path / name)
    order = {str(job["id"]): i for i, job in enumerate(workload["jobs"])}  # ElastiSim's ids: submission order
    jobs = sorted(({"id": order[r["job_id"]], "start": float(r["starting_time"]), "end": float(r["finish_time"]),
                    "size": len(_ids(r["allocated_resources"])), "state": r["final_state"]}
                   for r in rows(result.jobs_csv)), key=lambda j: j["id"])
    resizes = [{"t": float(r["date"]), "job": order[r["job_id"].split("!", 1)[1]], "old": int(r["old_size"]),
                "new": int(r["new_size"]), "cost": float(r["reconfiguration_time"])}
               for r in rows(tmp_path / f"{name}_reconfigurations.csv")]
    # the nodes of each job over time: start, resizes, end
    changes = [(j["start"], j["id"], j["size"]) for j in jobs] + [(j["end"], j["id"], 0) for j in jobs]
    changes += [(r["t"], r["job"], r["new"]) for r in resizes]
    sent = [(t, data["job_id"]) for t, etype, data in result.link.trace if etype == "RESIZE_JOB"]
    return {"jobs": jobs, "resizes": resizes, "sizes": _timeline(changes), "drift": DRIFT_PER_POINT * policy.points,
            "sent": sent}


def _ids(text: str) -> list[int]:
    out = []
    for part in text.split():
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def _timeline(changes) -> list[tuple[float, int, int]]:
    """(time, job, nodes) at each change, the last change of a job at one time winning, in time then job order."""
    at = defaultdict(dict)
    for t, job, n in changes:
        at[round(t, 5)][job] = (t, n)
    out, last = [], {}
    for key in sorted(at):
        for job in sorted(at[key]):
            t, n = at[key][job]
            if last.get(job, 0) != n:
                out.append((t, job, n))
                last[job] = n
    return out


def es_view(case: dict) -> dict:
    """ElastiSim's record; the resizes its scheduler decided at one invocation for one job are the
    one reconfiguration ElastiSim applies (to the nodes the scheduler left the job with)."""
    es = case["elastisim"]
    starts = {d["job"]: d["size"] for d in es["decisions"] if d["event"] == "start"}
    resizes = []
    for d in (d for d in es["decisions"] if d["event"] == "resize"):
        same = [r for r in resizes if r["t"] == d["t"] and r["job"] == d["job"]]
        if same:
            same[0]["new"] = d["new"]
        else:
            resizes.append(dict(d))
    resizes = [r for r in resizes if r["old"] != r["new"]]
    return {"jobs": es["jobs"], "starts": starts, "resizes": resizes,
            "sizes": [(t, job, n) for t, job, n in es["sizes"]]}


def assert_same(co: dict, es: dict) -> None:
    drift = co["drift"]
    assert len(co["jobs"]) == len(es["jobs"])
    for c, e in zip(co["jobs"], es["jobs"]):
        assert c["id"] == e["id"]
        assert c["state"] == "COMPLETED_SUCCESSFULLY" and e["status"] == "completed"
        assert close(c["start"], e["start"], drift), (c, e)
        assert close(c["end"], e["end"], drift), (c, e)
        assert c["size"] == es["starts"][c["id"]], (c, es["starts"])
    assert [(r["job"], r["old"], r["new"]) for r in co["resizes"]] == [(r["job"], r["old"], r["new"])
                                                                       for r in es["resizes"]]
    for c, e in zip(co["resizes"], es["resizes"]):
        assert -1e-6 <= c["t"] - e["t"] <= drift + 1e-6, (c, e)  # (coburst behind, never ahead; 6 decimals)
    assert [(job, n) for _, job, n in co["sizes"]] == [(job, n) for _, job, n in es["sizes"]]
    for (tc, _, _), (te, _, _) in zip(co["sizes"], es["sizes"]):
        assert close(tc, te, drift), (co["sizes"], es["sizes"])


def test_the_record_says_how_it_was_made():
    about = RECORD["about"]
    assert len(about["elastisim_commit"]) == 40 and "3.32" in about["simgrid"] and about["command"]
    assert set(CASES) >= {"rigid", "moldable", "malleable", "malleable_cost"} | DIFFERENT
    for case in CASES.values():  # every case resizes something or is rigid/moldable, and finished in ElastiSim
        assert all(j["status"] == "completed" for j in case["elastisim"]["jobs"])
    assert sum(d["event"] == "resize" for c in CASES.values() for d in c["elastisim"]["decisions"]) >= 10


@pytest.mark.parametrize("name", sorted(set(CASES) - DIFFERENT))
def test_coburst_gives_elastisims_times_and_decisions(tmp_path, name):
    case = CASES[name]
    co = simulate(tmp_path, name, case["coburst"], platform_of(case))
    assert_same(co, es_view(case))
    if name.startswith("malleable"):
        assert len(co["resizes"]) >= 4  # (the case exercises shrinks and expansions)
        assert {r["new"] > r["old"] for r in co["resizes"]} == {True, False}


def test_the_point_between_two_phases_belongs_to_the_next_phase_in_elastisim(tmp_path):
    """ElastiSim: a point before each iteration of a phase with ``scheduling_point`` (not before the
    job's first); coburst: a point after each iteration of such a phase (not after the job's last).
    A first phase without points and a second with: ElastiSim stops the job at the boundary (t=10,
    after four iterations of 2.5 s on 16 nodes), coburst first after the second phase's first
    iteration (t=12.5); the equivalent coburst model agrees with ElastiSim."""
    case = CASES["phase_points"]
    es = es_view(case)
    co = simulate(tmp_path, "direct", case["coburst"])
    assert (es["resizes"][0]["t"], es["resizes"][0]["job"], es["resizes"][0]["new"]) == (10.0, 0, 8)
    assert (co["resizes"][0]["t"], co["resizes"][0]["job"], co["resizes"][0]["new"]) == (12.5, 0, 8)
    # the rigid job waits for the shrink: 2.5 s longer in coburst
    assert close(es["jobs"][1]["start"], 10.0) and close(co["jobs"][1]["start"], 12.5)
    with pytest.raises(AssertionError):
        assert_same(co, es)
    assert_same(simulate(tmp_path, "equivalent", case["coburst_equivalent"]), es)


def test_num_nodes_in_on_expansion_counts_the_added_nodes_in_elastisim(tmp_path):
    """``on_expansion: 0.25 * num_nodes``: ElastiSim runs it on the added nodes and evaluates it with
    their number (8 added: 2 s), coburst with the job's new size (16: 4 s); written with
    ``num_nodes - old_num_nodes`` coburst agrees with ElastiSim."""
    case = CASES["expansion_cost"]
    es = es_view(case)
    co = simulate(tmp_path, "direct", case["coburst"])
    grow = [r for r in co["resizes"] if r["new"] > r["old"]]
    assert [(r["old"], r["new"], r["cost"]) for r in grow] == [(8, 16, pytest.approx(1 + 0.25 * 16))]
    with pytest.raises(AssertionError):
        assert_same(co, es)
    # the job ends 2 s later in coburst: the 16-node cost against ElastiSim's 8-node one
    assert close(co["jobs"][0]["end"] - es["jobs"][0]["end"], 0.25 * 16 - 0.25 * 8)
    same = simulate(tmp_path, "equivalent", case["coburst_equivalent"])
    assert [r["cost"] for r in same["resizes"] if r["new"] > r["old"]] == [pytest.approx(1 + 0.25 * 8)]
    assert_same(same, es)


def test_two_resizes_at_one_point_are_one_reconfiguration(tmp_path):
    """At one scheduling point equipartition shrinks a job to 8 nodes (to start a 4-node job) and
    then to 1 (for the 10-node job behind it): two RESIZE_JOB in one reply.  ElastiSim applies the
    assignment its scheduler leaves, one reconfiguration from 16 to 1 nodes, its cost (2 + 0.5 *
    num_nodes: 2.5 s) once; so does coburst (one row, one JOB_RESIZED, one cost), not two costs
    (2 + 0.5 * 8 and then 2.5: 8.5 s)."""
    case = CASES["double_resize"]
    decided = [(d["t"], d["old"], d["new"]) for d in case["elastisim"]["decisions"] if d["event"] == "resize"]
    assert decided[:2] == [(1.0, 16, 8), (1.0, 8, 1)]
    co = simulate(tmp_path, "double", case["coburst"])
    assert co["sent"][:2] == [(1.0, "w0!1"), (1.0, "w0!1")]
    assert [(r["t"], r["old"], r["new"], r["cost"]) for r in co["resizes"]] == [
        (1.0, 16, 1, 2.5), (19.5, 1, 16, 2 + 0.5 * 16)]
    assert_same(co, es_view(case))
    assert co["jobs"][0]["end"] == 1.0 + 2.5 + 16 + 10 + 4  # (one iteration on 1 node, four on 16)


@pytest.mark.parametrize("name", sorted(RECORD["latency"]["cases"]))
def test_with_latencies_coburst_takes_them_for_its_messages_and_elastisim_not(tmp_path, name):
    """On a platform with latencies (50 us in the cluster, 100 us on the master's link) ElastiSim
    gives the dates it gives without: a job tells its batch system of a scheduling point or of its
    end by a message of 0 bytes, which SimGrid's ptask_L07 model delivers at once.  Batsim 4.2.1's
    messages (so coburst's) have 1 byte and take the route's latency (150 us from a node to the
    master) under the same model: its dates are later, by at most 150 us a message (a job's end, a
    scheduling point) before; in the rigid case the third job starts 150 us after ElastiSim's,
    the fourth 300 us, the fifth 450 us (one job end each)."""
    es = RECORD["latency"]["cases"][name]
    assert [(j["start"], j["end"]) for j in es] == [(j["start"], j["end"]) for j in CASES[name]["elastisim"]["jobs"]]
    co = simulate(tmp_path, name, CASES[name]["coburst"], LATENCY_PLATFORM)
    messages = co["drift"] / DRIFT_PER_POINT + len(co["jobs"])  # (points and ends)
    later = []
    for c, e in zip(co["jobs"], es):
        for key in ("start", "end"):
            gap = c[key] - e[key]
            assert -6e-6 * abs(e[key]) - 1e-6 <= gap <= 150e-6 * messages + co["drift"] + 6e-6 * abs(e[key]) + 1e-6
            later.append(gap)
    assert max(later) > 1e-4  # (the latencies show)
    if name == "rigid":
        assert [round(c["start"] - e["start"], 6) for c, e in zip(co["jobs"], es)] == [0, 0, 150e-6, 300e-6, 450e-6]


# ------------------------------------------------------------------ ElastiSim's own files, imported
def imported(tmp_path: Path, name: str) -> dict:
    """Case ``name``'s ElastiSim inputs (jobs.json and application models) written as ElastiSim
    read them, then converted by ``coburst workload from-elastisim``."""
    inputs = CASES[name]["elastisim_inputs"]
    folder = tmp_path / f"es_{name}"
    folder.mkdir()
    (folder / "jobs.json").write_text(json.dumps(inputs["jobs"]))
    for app, model in inputs["applications"].items():
        (folder / f"{app}.json").write_text(json.dumps(model))
    out = folder / "workload.json"
    proc = subprocess.run([sys.executable, "-m", "coburst", "workload", "from-elastisim", str(folder / "jobs.json"),
                           "-o", str(out), "--nodes", "16", "-q"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    NOTES[name] = [line for line in proc.stderr.splitlines() if line.startswith("note: ")]
    return json.loads(out.read_text())


#: case -> the notes its import printed
NOTES: dict[str, list[str]] = {}


@pytest.mark.parametrize("name", sorted(set(CASES) - {"phase_points"} - MODEL_DIFFERENT))
def test_elastisims_files_imported_give_elastisims_times(tmp_path, name):
    """ElastiSim's own jobs.json and application models, imported: the same per-job start and end
    times and decisions as ElastiSim's run (an on_expansion's num_nodes and an evolving request's
    phase_iteration are translated to what ElastiSim means by them)."""
    case = CASES[name]
    assert_same(simulate(tmp_path, name, imported(tmp_path, name), platform_of(case)), es_view(case))
    assert NOTES[name] == []  # (nothing said where the dates agree)


@pytest.mark.parametrize("name", sorted(MODEL_DIFFERENT))
def test_imported_transfer_cases_read_as_cobursts_model(tmp_path, name):
    """ElastiSim's files of the cases whose task models differ, imported: ``synchronized`` does not
    change the converted job (coburst's tasks always start on all the job's nodes together; the
    import notes the tasks whose nodes part in ElastiSim), a node's I/O is the job's: coburst's
    dates of the case as it is written in coburst's format, not ElastiSim's."""
    case = CASES[name]
    direct = simulate(tmp_path, "direct", case["coburst"], platform_of(case))
    imported_run = simulate(tmp_path, "imported", imported(tmp_path, name), platform_of(case))
    assert [(j["start"], j["end"]) for j in imported_run["jobs"]] == [(j["start"], j["end"]) for j in direct["jobs"]]
    with pytest.raises(AssertionError):
        assert_same(imported_run, es_view(case))
    if name == "pfs_ranks":  # the import says where ElastiSim's nodes part
        assert NOTES[name] and all("without 'synchronized'" in n and "jobs.json" not in n for n in NOTES[name])


@pytest.mark.parametrize("task, noted", [
    ({"type": "idle", "delay": 1, "pattern": "root_only"}, True),
    ({"type": "idle", "delay": 1, "pattern": "root_only", "synchronized": True}, False),
    ({"type": "idle", "delay": 1, "pattern": "uniform"}, False),
    ({"type": "cpu", "flops": 1e9, "computation_pattern": "root_only", "synchronized": False}, True),
    ({"type": "pfs_write", "bytes": 1e9, "pattern": "even_ranks"}, True),
    ({"type": "pfs_read", "bytes": 1e9, "pattern": "total"}, False),
])
def test_a_task_whose_nodes_part_in_elastisim_is_noted(tmp_path, task, noted):
    (tmp_path / "a.json").write_text(json.dumps({"phases": [{"tasks": [{"type": "idle", "delay": 1,
                                                                          "pattern": "uniform"}, task]}]}))
    jobs = tmp_path / "jobs.json"
    jobs.write_text(json.dumps({"jobs": [{"type": "rigid", "submit_time": 0, "num_nodes": 2,
                                          "application_model": "a.json"}] * 2}))
    proc = subprocess.run([sys.executable, "-m", "coburst", "workload", "from-elastisim", str(jobs), "-o",
                           str(tmp_path / "w.json"), "-q"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and (tmp_path / "w.json").is_file(), proc.stderr
    notes = [line for line in proc.stderr.splitlines() if line.startswith("note: ")]
    if noted:  # once for the model, naming its file and the task
        assert len(notes) == 1 and "a.json: phases[0].tasks[1]: pattern" in notes[0], proc.stderr
    else:
        assert proc.stderr == ""


def test_imported_phase_points_keep_the_documented_difference(tmp_path):
    """Where the scheduling point between two phases falls is coburst's model, not translated."""
    co = simulate(tmp_path, "pp", imported(tmp_path, "phase_points"))
    assert (co["resizes"][0]["t"], co["resizes"][0]["new"]) == (12.5, 8)


@pytest.mark.parametrize("task, message", [
    ({"type": "gpu", "bytes": 1, "communication_pattern": "gather"}, "pattern 'gather' is not taken for a gpu task"),
    ({"type": "tpu", "flops": 1, "computation_pattern": "uniform"}, "task type 'tpu' is not taken"),
    ({"type": "pfs_write", "bytes": 1, "pattern": "total", "async": True}, "asynchronous I/O is not modelled"),
    ({"type": "idle", "delay": "1 ?", "pattern": "uniform"}, "cannot read the expression"),
    ({"type": "cpu", "flops": 1, "computation_pattern": "vector"}, "pattern 'vector' is not taken"),
    ({"type": "sequence", "iterations": 10**6, "tasks": []}, "expected an integer in [1, 10000]"),
])
def test_what_is_not_taken_is_named(tmp_path, task, message):
    (tmp_path / "a.json").write_text(json.dumps({"phases": [{"tasks": [task]}]}))
    jobs = tmp_path / "jobs.json"
    jobs.write_text(json.dumps({"jobs": [{"type": "rigid", "submit_time": 0, "num_nodes": 2,
                                          "application_model": "a.json"}]}))
    proc = subprocess.run([sys.executable, "-m", "coburst", "workload", "from-elastisim", str(jobs), "-o",
                           str(tmp_path / "w.json")], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and message in proc.stderr and "a.json: phases[0].tasks[0]" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "w.json").exists()


def test_gpu_jobs_with_gpus_per_node_bounds_that_differ_are_refused(tmp_path):
    """coburst keeps a job's GPUs per node fixed: ElastiSim's min and max must agree."""
    (tmp_path / "a.json").write_text(json.dumps({"phases": [{"tasks": [{"type": "gpu", "flops": 1,
                                                                        "computation_pattern": "uniform"}]}]}))
    jobs = tmp_path / "jobs.json"
    jobs.write_text(json.dumps({"jobs": [{"type": "malleable", "submit_time": 0, "num_nodes_min": 1,
                                          "num_nodes_max": 2, "num_gpus_per_node_min": 1,
                                          "num_gpus_per_node_max": 2, "application_model": "a.json"}]}))
    proc = subprocess.run([sys.executable, "-m", "coburst", "workload", "from-elastisim", str(jobs), "-o",
                           str(tmp_path / "w.json")], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "jobs[0]" in proc.stderr and "keeps a job's GPUs per node fixed" in proc.stderr
    assert "Traceback" not in proc.stderr


# ------------------------------------------------------------------ GPUs
def test_the_gpu_cases_by_hand(tmp_path):
    """``gpu_rigid`` on nodes of 4 GPUs of 10 Gflop/s, 5 GB/s GPU links, 1.25 GB/s node links:
    job 0 (4 nodes, 2 GPUs each) computes 2e10 flops a GPU (2 s) while its all-to-all of 2e10
    bytes between 8 GPUs sends 1.71e10 between nodes (4.29e9 a node: 3.43 s) and 7.1e8 over each
    node's GPU link (0.14 s), then waits 0.5 s: 5 x 3.93 s; job 1 (8 nodes, 4 GPUs) 2 s of GPU
    flops (its ring: 0.8 s between nodes, 0.15 s within), then 1 s of CPU flops: 3 x 3 s; job 2
    (1 GPU a node) starts when job 1 ends, 4 x 1 s.  ``gpu_malleable``: each resize's cost is
    0.5 + 0.05 num_gpus, num_gpus = 2 x the new size, as ElastiSim evaluates it."""
    assert es_ends(CASES["gpu_rigid"]) == [(0.0, 19.6429), (0.0, 9.0), (9.0, 13.0), (9.0, 15.0)]
    case = CASES["gpu_malleable"]
    co = simulate(tmp_path, "gm", case["coburst"], platform_of(case))
    assert [(r["old"], r["new"]) for r in co["resizes"]] == [(16, 8), (8, 4), (4, 12), (12, 16)]
    assert [r["cost"] for r in co["resizes"]] == [pytest.approx(0.5 + 0.05 * 2 * r["new"]) for r in co["resizes"]]
    assert CASES["gpu_malleable"]["elastisim_inputs"]["jobs"]["jobs"][0]["num_gpus_per_node_max"] == 2


def sequential_form(workload: dict) -> dict:
    """``workload`` with each coupled compute task written as a compute task then its communication."""
    out = json.loads(json.dumps(workload))
    for profile in out["profiles"].values():
        for phase in profile["elastic"]["phases"]:
            tasks = []
            for task in phase["tasks"]:
                if isinstance(task, dict) and task.get("type") == "compute" and "bytes" in task:
                    tasks.append({k: v for k, v in task.items() if k not in ("bytes", "pattern")})
                    tasks.append({"type": "communication", "bytes": task["bytes"], "pattern": task["pattern"]})
                else:
                    tasks.append(task)
            phase["tasks"] = tasks
    return out


def test_coupled_tasks_are_not_a_compute_task_then_a_communication(tmp_path):
    """The ``coupled`` case written as coburst's default (a compute task, then a communication
    task) gives other dates than ElastiSim's coupled tasks: the CPU-bound job ends 13.1 s later
    (its computation no longer hides its communication), the network-bound one 7.5 s earlier (the
    jobs' transfers share the backbone otherwise over time: a coupled task's transfer goes at the
    pace of the whole task); the coupled form is what agrees."""
    case = CASES["coupled"]
    seq = simulate(tmp_path, "seq", sequential_form(case["coburst"]), platform_of(case))
    es = case["elastisim"]["jobs"]
    assert [round(c["end"] - e["end"], 4) for c, e in zip(seq["jobs"][:2], es[:2])] == [13.1, -7.5]
    with pytest.raises(AssertionError):
        assert_same(seq, es_view(case))


# ------------------------------------------------------------------ transfers
def es_ends(case: dict) -> list[tuple[float, float]]:
    return [(j["start"], j["end"]) for j in case["elastisim"]["jobs"]]


def test_the_transfers_take_the_networks_time():
    """The transfer cases are not decided by their computations alone: ElastiSim's dates, by hand.
    ``communication``: the rigid ring job (4 nodes from t = 5) sends 4e9 / 8 bytes to each
    neighbour an iteration, 1e9 bytes through each node's 1.25 GB/s link (0.8 s), after 5 s of
    compute and before a 0.5 s delay: 5 x 6.3 s, ends at 36.5.  ``pfs``: the rigid job (4 nodes
    from t = 3.1) reads 5e8 bytes a node (0.4 s), computes 2.5 s, its first node writes 1e9 bytes
    (0.8 s): 6 x 3.7 s, ends at 25.3.  ``communication_backbone``: the same jobs as
    ``communication`` sharing a 2.5 GB/s backbone: the all-to-all job ends at 117.313 instead
    of 73.3333."""
    assert es_ends(CASES["communication"])[1] == (5.0, 36.5)
    assert es_ends(CASES["pfs"])[1] == (3.1, 25.3)
    assert es_ends(CASES["communication"])[0] == (0.0, 73.3333)
    assert es_ends(CASES["communication_backbone"])[0] == (0.0, 117.313)
    patterns = {t["pattern"] for c in ("communication", "pfs") for p in CASES[c]["coburst"]["profiles"].values()
                for ph in p["elastic"]["phases"] for t in ph["tasks"] if "pattern" in t}
    assert patterns >= {"all_to_all", "gather", "scatter", "ring", "ring_clockwise", "ring_counter_clockwise",
                        "master_worker", "uniform", "total", "all_ranks", "root_only", "even_ranks", "odd_ranks"}


def coupled_form(workload: dict) -> dict:
    """``workload`` with each compute task with flops followed by a communication task written
    as one compute task coupled with that communication."""
    out = json.loads(json.dumps(workload))
    for profile in out["profiles"].values():
        for phase in profile["elastic"]["phases"]:
            tasks = []
            for task in phase["tasks"]:
                last = tasks[-1] if tasks else None
                if (isinstance(task, dict) and task.get("type") == "communication" and isinstance(last, dict)
                        and last.get("type") == "compute" and "flops" in last and "bytes" not in last):
                    last.update(bytes=task["bytes"], pattern=task["pattern"])
                else:
                    tasks.append(task)
            phase["tasks"] = tasks
    return out


def test_elastisim_overlaps_a_cpu_tasks_flops_and_bytes(tmp_path):
    """ElastiSim's ``cpu`` task with flops and bytes starts the computation and the communication
    together: an iteration takes the longer of the two.  coburst's compute task, then its
    communication task, take their sum.  The CPU-bound job (8 nodes: 5 s of compute, an
    all-to-all of 2e10 bytes, 2.5e9 through each node's link: 2 s) takes 5 x 5 s in ElastiSim and
    5 x 7 s in coburst; the network-bound one (1 s of compute, a ring of 2e10 bytes: 2 s) 5 x 2 s
    and 5 x 3 s; the moldable job waiting for it starts 5 s later in coburst and runs 10 s longer.
    Written as two ``cpu`` tasks, ElastiSim gives coburst's dates.  Written as coburst's coupled
    form (one compute task with the bytes: one parallel task of both, which the converter makes
    of ElastiSim's cpu task), coburst gives ElastiSim's dates: no link is shared by two jobs here,
    so one parallel task of both amounts ends when two separate ones would."""
    case = CASES["overlap"]
    co = simulate(tmp_path, "overlap", case["coburst"], platform_of(case))
    assert es_ends(case) == [(0.0, 25.0), (0.0, 10.0), (10.0, 35.0)]
    assert [(j["start"], j["end"]) for j in co["jobs"]] == [(0.0, 35.0), (0.0, 15.0), (15.0, 50.0)]
    assert_same(co, es_view(case["elastisim_equivalent"]))
    tasks = case["elastisim_inputs"]["applications"]["cpu_bound"]["phases"][0]["tasks"]
    assert len(tasks) == 1 and {"flops", "bytes"} <= set(tasks[0]) and "coupled" not in tasks[0]
    coupled = coupled_form(case["coburst"])
    assert [len(ph["tasks"]) for p in coupled["profiles"].values() for ph in p["elastic"]["phases"]] == [1, 1]
    assert_same(simulate(tmp_path, "coupled", coupled, platform_of(case)), es_view(case))
    imported_tasks = imported(tmp_path, "overlap")["profiles"]["cpu_bound"]["elastic"]["phases"][0]["tasks"]
    assert imported_tasks == [{"type": "compute", "flops": "4e10", "bytes": "2e10", "pattern": "all_to_all"}]


def test_elastisims_nodes_go_from_task_to_task_on_their_own(tmp_path):
    """ElastiSim's nodes run a phase's tasks each on its own and meet only at barriers (a
    ``synchronized`` task, a communication, a scheduling point, the job's end; here a barrier
    before each iteration): node 0 writes 2.5e9 bytes (2 s) while nodes 1 and 3 already read
    their 1.25e9 bytes (1 s), then all compute 2 s: 4 s an iteration, 20 s.  coburst's job runs
    each task on all its nodes before the next: 2 + 1 + 2 s, 25 s.  With every task
    ``synchronized`` ElastiSim gives coburst's 25 s."""
    case = CASES["pfs_ranks"]
    co = simulate(tmp_path, "ranks", case["coburst"], platform_of(case))
    assert es_ends(case) == [(0.0, 20.0)]
    assert [(j["start"], j["end"]) for j in co["jobs"]] == [(0.0, 25.0)]
    assert_same(co, es_view(case["elastisim_equivalent"]))


def test_elastisim_shares_a_link_per_node_and_coburst_per_job(tmp_path):
    """Two rigid jobs at t = 0 on a 2.5 GB/s PFS link: the first node of one writes 1e9 bytes, the
    four nodes of the other read 7.5e8 bytes each, then each waits 1 s.  ElastiSim's I/O task is
    one parallel task a node: five share the link, 0.5 GB/s each; the reads end at 1.5 s, the
    write (its last 2.5e8 bytes at its node link's 1.25 GB/s) at 1.7 s: the jobs end at 2.7 and
    2.5.  coburst's is one parallel task a job, as Batsim's ``parallel_homogeneous_pfs``: two
    share the link, 1.25 GB/s each; the write ends at 0.8 s, the read (its last 2e9 bytes at
    2.5 GB/s) at 1.6 s: 1.8 and 2.6."""
    case = CASES["pfs_shared"]
    co = simulate(tmp_path, "shared", case["coburst"], platform_of(case))
    assert es_ends(case) == [(0.0, 2.7), (0.0, 2.5)]
    assert [(j["start"], j["end"]) for j in co["jobs"]] == [(0.0, 1.8), (0.0, 2.6)]
