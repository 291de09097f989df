"""The simulator's elastic mode (coburst.simulator.elastic) run by in-process elastic policies
(coburst.adapter.elastic): moldable starts, resizes at scheduling points with their costs,
evolving requests, the reconfiguration log, the protocol's refusals, and Batsim's behaviour kept
wherever no job changes size."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from coburst.adapter.elastic import ElasticLink, run_elastic
from coburst.errors import InputError, ProtocolError
from coburst.policies.elastic.base import Decisions, ElasticPolicy, ElasticState
from coburst.policies.elastic.equipartition import Equipartition
from coburst.simulator.engine import Simulator, SimulatorConfig
from platform_cache_fill import fill_platform_cache

REPO = Path(__file__).resolve().parents[1]
C16 = REPO / "platforms" / "cluster16.xml"
SMALL = REPO / "workloads" / "malleable_small.json"
WALL = ("scheduling_time", "simulation_time")

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module", autouse=True)
def platform_described():
    """(the runs here are in the test process: the platform comes from the cache)"""
    fill_platform_cache(C16)


def rows(path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write(tmp_path: Path, jobs: list[dict], profiles: dict, name: str = "w.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"nb_res": 16, "jobs": jobs, "profiles": profiles}))
    return path


def app(iterations=4, seconds=40.0, reconf="2", **extra) -> dict:
    return {"type": "delay", "delay": 100,
            "elastic": {"on_reconfiguration": reconf, **extra,
                        "phases": [{"iterations": iterations, "tasks": [{"type": "compute", "seconds": seconds}]}]}}


class Scripted(ElasticPolicy):
    """Starts every job at a given size and answers each scheduling point from a script."""

    family = "scripted-test"

    def __init__(self, start: dict[str, int], answers: dict[tuple[str, int], str] | None = None):
        super().__init__()
        self.start_sizes, self.answers = start, answers or {}

    def schedule(self, state: ElasticState, d: Decisions) -> None:
        for job in list(state.queue):
            size = self.start_sizes.get(job.id, job.res)
            lo, hi = job.start_sizes()
            if not lo <= size <= hi:  # past the policy-side check: the simulator's own refusal
                state.queue.remove(job)
                d.events.append(("EXECUTE_JOB", {"job_id": job.id, "alloc": f"0-{size - 1}"}))
            elif len(state.free) >= size:
                d.start(job, sorted(state.free)[:size])
        for job in state.at_points():
            alloc = self.answers.get((job.id, job.point["iteration"]))
            if alloc is not None:
                d.events.append(("RESIZE_JOB", {"job_id": job.id, "alloc": alloc}))


def run(tmp_path, workload, policy, elastic=True, name="out"):
    cfg = SimulatorConfig(platform=str(C16), workloads=[str(workload)], export_prefix=str(tmp_path / name),
                          elastic=elastic)
    sim = Simulator(cfg)
    sim.link = ElasticLink(policy)
    return sim.run()


def test_moldable_start_and_malleable_resizes_follow_the_model(tmp_path):
    w = write(tmp_path, [{"id": 1, "subtime": 0, "walltime": -1, "res": 4, "profile": "a",
                          "elastic": {"type": "malleable", "num_nodes_min": 2, "num_nodes_max": 8}}],
              {"a": app(on_init="1", on_expansion="num_nodes - old_num_nodes")})
    res = run(tmp_path, w, Scripted({"w0!1": 8}, {("w0!1", 0): "0-3", ("w0!1", 1): "0-5"}))
    (row,) = rows(res.jobs_csv)
    assert row["allocated_resources"] == "0-7" and row["requested_number_of_resources"] == "4"
    log = rows(tmp_path / "out_reconfigurations.csv")
    assert [(r["old_allocation"], r["new_allocation"], r["reconfiguration_time"]) for r in log] == [
        ("0-7", "0-3", "2.000000"), ("0-3", "0-5", "4.000000")]
    # init 1 + 40/8 + 2 + 40/4 + (2 + 2) + 2 x 40/6, plus the scheduling points' 1-byte messages
    model = 1 + 5 + 2 + 10 + 4 + 2 * 40 / 6
    assert model < float(row["execution_time"]) < model + 3 * 1e-3
    assert float(log[0]["date"]) == pytest.approx(6.0, abs=1e-3)


def test_evolving_requests_are_granted_clipped_or_refused(tmp_path):
    prof = {"a": {"type": "delay", "delay": 9, "elastic": {"phases": [
        {"iterations": 4, "evolving_request": "6 + iteration", "tasks": [{"type": "compute", "seconds": 24}]}]}}}
    jobs = [{"id": 1, "subtime": 0, "walltime": -1, "res": 2, "profile": "a",
             "elastic": {"type": "evolving", "num_nodes_min": 1, "num_nodes_max": 8}}]
    w = write(tmp_path, jobs, prof)
    # iteration 0 asks 6: granted; iteration 1 asks 7: clipped to 6 (no change); 2 asks 8: clipped to 7
    res = run(tmp_path, w, Scripted({}, {("w0!1", 0): "0-5", ("w0!1", 2): "0-6"}))
    log = rows(tmp_path / "out_reconfigurations.csv")
    assert [(r["new_size"], r["requested_size"]) for r in log] == [("6", "6"), ("7", "8")]
    assert rows(res.jobs_csv)[0]["final_state"] == "COMPLETED_SUCCESSFULLY"
    with pytest.raises(ProtocolError, match="asked for 6 resources"):
        run(tmp_path, w, Scripted({}, {("w0!1", 0): "0-6"}), name="bad")


@pytest.mark.parametrize("start, answers, message", [
    ({"w0!1": 9}, {}, "starts on in \\[2, 8\\]"),
    ({}, {("w0!1", 0): "0-8"}, "outside the job's bounds"),
    ({}, {("w0!1", 0): "0-3 20"}, "outside the platform"),
    ({}, {("w0!1", 0): "0-2 4"}, "already computing another job"),
])
def test_protocol_refusals(tmp_path, start, answers, message):
    w = write(tmp_path, [{"id": 1, "subtime": 0, "walltime": -1, "res": 4, "profile": "a",
                          "elastic": {"type": "malleable", "num_nodes_min": 2, "num_nodes_max": 8}},
                         {"id": 2, "subtime": 0, "walltime": -1, "res": 1, "profile": "r"}],
              {"a": app(), "r": {"type": "delay", "delay": 500}})
    with pytest.raises(ProtocolError, match=message):
        run(tmp_path, w, Scripted(start, answers))


class ResizeAnytime(Scripted):
    def schedule(self, state, d):
        super().schedule(state, d)
        for job in state.running.values():
            if job.point is None:
                d.events.append(("RESIZE_JOB", {"job_id": job.id, "alloc": "0"}))


def test_resize_outside_a_scheduling_point_or_without_the_mode_is_refused(tmp_path):
    w = write(tmp_path, [{"id": 1, "subtime": 0, "walltime": -1, "res": 4, "profile": "a",
                          "elastic": {"type": "malleable", "num_nodes_min": 1, "num_nodes_max": 8}}], {"a": app()})
    with pytest.raises(ProtocolError, match="not at a scheduling point"):
        run(tmp_path, w, ResizeAnytime({}))
    with pytest.raises(ProtocolError, match="unknown event type 'RESIZE_JOB'"):
        run(tmp_path, w, ResizeAnytime({}), elastic=False)


def test_walltime_ends_an_elastic_job(tmp_path):
    w = write(tmp_path, [{"id": 1, "subtime": 0, "walltime": 25, "res": 4, "profile": "a",
                          "elastic": {"type": "moldable", "num_nodes_min": 1, "num_nodes_max": 4}}], {"a": app()})
    (row,) = rows(run(tmp_path, w, Scripted({"w0!1": 4})).jobs_csv)
    assert row["final_state"] == "COMPLETED_WALLTIME_REACHED" and row["execution_time"] == "25.000000"


def test_bad_model_is_an_input_error_before_the_run(tmp_path):
    w = write(tmp_path, [{"id": 1, "subtime": 0, "walltime": -1, "res": 4, "profile": "a",
                          "elastic": {"type": "malleable", "num_nodes_min": 2, "num_nodes_max": 8}}],
              {"a": app(seconds="40 / nodes")})
    with pytest.raises(InputError) as info:
        run(tmp_path, w, Equipartition())
    assert info.value.source == str(w) and info.value.where == "profiles.a.elastic.phases[0].tasks[0].seconds"
    assert not list(tmp_path.glob("out_*"))
    w = write(tmp_path, [{"id": 7, "subtime": 0, "walltime": -1, "res": 1, "profile": "a"},
                         {"id": 8, "subtime": 0, "walltime": -1, "res": 9, "profile": "a",
                          "elastic": {"type": "malleable", "num_nodes_min": 2, "num_nodes_max": 8}}], {"a": app()})
    with pytest.raises(InputError) as info:
        run(tmp_path, w, Equipartition())
    assert info.value.where == "jobs[1].res" and "outside [num_nodes_min, num_nodes_max]" in info.value.problem


def strip_elastic(path: Path, to: Path) -> Path:
    doc = json.loads(path.read_text())
    for job in doc["jobs"]:
        job.pop("elastic", None)
    for prof in doc["profiles"].values():
        prof.pop("elastic", None)
    to.write_text(json.dumps(doc))
    return to


def test_elastic_fields_are_ignored_without_the_mode(tmp_path):
    """Batsim semantics: a pybatsim scheduler runs every job rigid on res with its profile, the
    extra fields change nothing."""
    plain = strip_elastic(SMALL, tmp_path / "plain.json")
    outs = []
    for w in (SMALL, plain):
        prefix = tmp_path / w.stem
        cmd = [sys.executable, "-m", "coburst", "run", "easyBackfill", "-q", "-p", str(C16), "-e", str(prefix),
               "-w", str(w)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=100, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        outs.append(Path(f"{prefix}_jobs.csv").read_text())
        assert not Path(f"{prefix}_reconfigurations.csv").exists()
    assert outs[0] == outs[1]
    assert all(r["execution_time"] in ("400.000000", "300.000000", "200.000000", "150.000000")
               for r in csv.DictReader(outs[0].splitlines()))


def test_the_mode_changes_nothing_for_rigid_jobs(tmp_path):
    doc = json.loads((REPO / "workloads" / "kth_sp2_delay_5000.json").read_text())
    doc["jobs"] = [j for j in doc["jobs"][:400] if j["res"] <= 16][:150]
    doc["nb_res"] = 16
    w = tmp_path / "kth.json"
    w.write_text(json.dumps(doc))
    a = run(tmp_path, w, Equipartition(), elastic=False, name="off")
    b = run(tmp_path, w, Equipartition(), elastic=True, name="on")
    assert a.jobs_csv.read_text() == b.jobs_csv.read_text()
    assert {k: v for k, v in a.schedule.items() if k not in WALL} == \
        {k: v for k, v in b.schedule.items() if k not in WALL}
    assert (tmp_path / "on_reconfigurations.csv").read_text().count("\n") == 1


def test_bundled_small_workload(tmp_path):
    res = run_elastic(C16, [SMALL], "equipartition", tmp_path / "m")
    jobs = rows(res.jobs_csv)
    assert len(jobs) == 6 and all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in jobs)
    log = rows(tmp_path / "m_reconfigurations.csv")
    assert log and {r["job_id"] for r in log} <= {"w0!1", "w0!3", "w0!5", "w0!6"}
    again = run_elastic(C16, [SMALL], "equipartition", tmp_path / "m2")
    assert again.jobs_csv.read_text() == res.jobs_csv.read_text()
    assert (tmp_path / "m2_reconfigurations.csv").read_text() == (tmp_path / "m_reconfigurations.csv").read_text()


@pytest.mark.parametrize("policy", ["equipartition", "moldable-ect"])
def test_coburst_run_takes_an_elastic_policy_in_process_or_over_zeromq(tmp_path, policy):
    """(moldable-ect reads the jobs' models from the profiles forwarded on submission, in process
    and over ZeroMQ alike)"""
    base = [sys.executable, "-m", "coburst", "run", policy, "-q", "-p", str(C16), "-w", str(SMALL)]
    for transport in ("inprocess", "zmq"):
        proc = subprocess.run([*base, "--transport", transport, "-e", str(tmp_path / transport)], capture_output=True,
                              text=True, timeout=100, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    reference = run_elastic(C16, [SMALL], policy, tmp_path / "m")
    for transport in ("inprocess", "zmq"):
        assert (tmp_path / f"{transport}_jobs.csv").read_text() == reference.jobs_csv.read_text()
        assert (tmp_path / f"{transport}_reconfigurations.csv").read_text() == \
            (tmp_path / "m_reconfigurations.csv").read_text()


def test_without_the_handshake_every_job_runs_as_batsim_runs_it(tmp_path):
    """The simulator offers the extension; a scheduler that does not answer NOTIFY elastic_jobs
    gets Batsim: every job rigid on res with its profile, no scheduling point, RESIZE_JOB refused."""
    plain = strip_elastic(SMALL, tmp_path / "plain.json")
    cfg = SimulatorConfig(platform=str(C16), workloads=[str(SMALL)], export_prefix=str(tmp_path / "silent"),
                          elastic=True)
    sim = Simulator(cfg)
    sim.link = ElasticLink(Equipartition(), announce=False)
    silent = sim.run()
    assert sim.link.trace and all(t == "EXECUTE_JOB" for _, t, _ in sim.link.trace)
    base = run(tmp_path, plain, Equipartition(), elastic=False, name="plain")
    assert silent.jobs_csv.read_text() == base.jobs_csv.read_text()
    assert (tmp_path / "silent_reconfigurations.csv").read_text().count("\n") == 1

    class Resizer(ElasticPolicy):
        family = "resizer-test"

        def schedule(self, state, d):
            for job in list(state.queue):
                d.start(job, sorted(state.free)[:job.res])
            if state.running:
                d.events.append(("RESIZE_JOB", {"job_id": next(iter(state.running)), "alloc": "0"}))

    cfg.export_prefix = str(tmp_path / "refused")
    sim = Simulator(cfg)
    sim.link = ElasticLink(Resizer(), announce=False)
    with pytest.raises(ProtocolError, match="did not announce the elastic jobs extension"):
        sim.run()


def test_kill_at_a_scheduling_point(tmp_path):
    class Killer(Scripted):
        def schedule(self, state, d):
            super().schedule(state, d)
            for job in state.at_points():
                if job.point["iteration"] == 1:
                    d.events.append(("KILL_JOB", {"job_ids": [job.id]}))

    w = write(tmp_path, [{"id": 1, "subtime": 0, "walltime": -1, "res": 16, "profile": "a",
                          "elastic": {"type": "malleable", "num_nodes_min": 2, "num_nodes_max": 16}},
                         {"id": 2, "subtime": 1, "walltime": -1, "res": 16, "profile": "r"}],
              {"a": app(), "r": {"type": "delay", "delay": 10}})
    policy = Killer({})
    res = run(tmp_path, w, policy)
    by_id = {r["job_id"]: r for r in rows(res.jobs_csv)}
    assert by_id["1"]["final_state"] == "COMPLETED_KILLED"
    assert float(by_id["1"]["finish_time"]) == pytest.approx(2 * 40 / 16, abs=1e-2)
    assert by_id["2"]["final_state"] == "COMPLETED_SUCCESSFULLY"
    assert float(by_id["2"]["starting_time"]) == pytest.approx(float(by_id["1"]["finish_time"]), abs=1e-2)


def test_malleable_easy_backfills_and_shrinks_to_start_the_head(tmp_path):
    """Malleable EASY: a short job ends before the head's reservation and starts at once (under
    equipartition, which does not backfill, it waits for the head), a long one fits in the
    resources the head leaves; a malleable job holding the
    whole cluster shrinks at its next point just enough for a waiting rigid job, and grows back
    when nobody waits."""
    from coburst.policies.elastic.malleable_easy import MalleableEasy

    d = {"type": "delay", "delay": 100}
    jobs = [{"id": 1, "subtime": 0, "walltime": 100, "res": 12, "profile": "d"},
            {"id": 2, "subtime": 1, "walltime": 100, "res": 8, "profile": "d"},   # head: waits for job 1
            {"id": 3, "subtime": 2, "walltime": 50, "res": 4, "profile": "s"},    # ends before: backfilled
            {"id": 4, "subtime": 3, "walltime": 500, "res": 4, "profile": "d"}]   # in the extra nodes
    w = write(tmp_path, jobs, {"d": d, "s": {"type": "delay", "delay": 40}})
    starts = {}
    for name, policy in (("easy", MalleableEasy()), ("equi", Equipartition())):
        starts[name] = {r["job_id"]: float(r["starting_time"]) for r in rows(run(tmp_path, w, policy, name=name).jobs_csv)}
    assert starts["easy"]["3"] == 2.0 and starts["equi"]["3"] >= 100
    assert starts["easy"]["2"] == starts["equi"]["2"] == pytest.approx(100, abs=0.01)
    # job 4 would end after the reservation, but at 100 s the head leaves 8 nodes: it takes 4
    # of them as soon as 4 are free (job 3's end), and does not delay the head
    assert starts["easy"]["4"] == pytest.approx(42, abs=0.01)

    w2 = write(tmp_path, [{"id": 1, "subtime": 0, "walltime": -1, "res": 16, "profile": "a",
                           "elastic": {"type": "malleable", "num_nodes_min": 2, "num_nodes_max": 16}},
                          {"id": 2, "subtime": 1, "walltime": 30, "res": 6, "profile": "d"}],
               {"a": app(iterations=6, seconds=160.0, reconf="0"), "d": {"type": "delay", "delay": 20}}, "w2.json")
    res = run(tmp_path, w2, MalleableEasy(), name="shrink")
    log = rows(tmp_path / "shrink_reconfigurations.csv")
    # 16 -> 10 at the first point (160/16 = 10 s), job 2 starts there; back to 16 once it ended
    assert [(r["old_size"], r["new_size"]) for r in log] == [("16", "10"), ("10", "16")]
    started = {r["job_id"]: float(r["starting_time"]) for r in rows(res.jobs_csv)}
    assert started["2"] == pytest.approx(float(log[0]["date"]), abs=1e-3) and 10 <= started["2"] < 10.01


@pytest.mark.parametrize("blocker, size, start", [(100, 16, 100.0), (1000, 4, 0.0)])
def test_moldable_ect_takes_the_size_that_completes_first(tmp_path, blocker, size, start):
    """A moldable Amdahl job (1600 s on one node, serial fraction 0.05) behind a 12-node job: with
    4 nodes free now it would end at 460 s; if the 12-node job ends at 100 s, waiting for all 16
    ends it at 100 + 175 s, and it waits; if that job ends at 1000 s, it starts now on 4.  The
    plain job's end is known from its forwarded delay profile."""
    from coburst.policies.elastic.moldable_ect import MoldableECT

    w = write(tmp_path, [{"id": 1, "subtime": 0, "walltime": -1, "res": 12, "profile": "d"},
                         {"id": 2, "subtime": 1, "walltime": -1, "res": 8, "profile": "a",
                          "elastic": {"type": "moldable", "num_nodes_min": 2, "num_nodes_max": 16}}],
              {"d": {"type": "delay", "delay": blocker},
               "a": {"type": "delay", "delay": 9, "elastic": {"phases": [{"iterations": 4, "tasks": [
                   {"type": "compute", "seconds": 400, "model": "amdahl", "serial_fraction": 0.05}]}]}}})
    res = run_elastic(C16, [w], MoldableECT(), tmp_path / "ect")
    (row,) = [r for r in rows(res.jobs_csv) if r["job_id"] == "2"]
    assert len(row["allocated_resources"].split("-")) and float(row["starting_time"]) == pytest.approx(
        max(start, 1.0), abs=0.01)
    lo, _, hi = row["allocated_resources"].partition("-")
    assert int(hi or lo) - int(lo) + 1 == size


@pytest.mark.parametrize("name", ["min-agreement", "min-common-pool", "pref-steal-agreement", "average-agreement"])
def test_agreements_promise_the_shrunk_nodes_to_the_waiting_job(tmp_path, name):
    """A malleable job started alone (on its minimum, or its preferred 9 nodes) and grown to all
    16 at its first point; a 4-node rigid job arrives at 95 s: the malleable job's last nodes
    are promised to it, given back at the malleable job's next point, and the rigid job starts
    on them then."""
    from coburst.policies.elastic import get

    w = write(tmp_path, [{"id": 1, "subtime": 0, "walltime": -1, "res": 16, "profile": "a",
                          "elastic": {"type": "malleable", "num_nodes_min": 2, "num_nodes_max": 16}},
                         {"id": 2, "subtime": 95, "walltime": 30, "res": 4, "profile": "d"}],
              {"a": app(iterations=12, seconds=160.0, reconf="0"), "d": {"type": "delay", "delay": 20}})
    res = run_elastic(C16, [w], get(name), tmp_path / "ag")
    log = rows(tmp_path / "ag_reconfigurations.csv")
    assert log[0]["new_allocation"] == "0-15" and float(log[0]["date"]) < 95
    shrink = log[1]
    assert (shrink["old_allocation"], shrink["new_allocation"]) == ("0-15", "0-11") and float(shrink["date"]) > 95
    started = {r["job_id"]: r for r in rows(res.jobs_csv)}
    assert started["2"]["allocated_resources"] == "12-15"
    assert float(started["2"]["starting_time"]) == pytest.approx(float(shrink["date"]), abs=1e-3)
    # once the rigid job ended, the malleable job grows back to 16 at a later point
    assert log[-1]["new_size"] == "16"
