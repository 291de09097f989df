"""Outputs of ``coburst sim`` (``_jobs.csv``, ``_schedule.csv``, evalys), resource ids,
SIMULATION_BEGINS, and determinism.

Platform tests/data/cluster4.xml: dm = 0, dj = 650.0008 us (see test_sim_schedules.py): a
job executed on its submission starts at its submission date (a job starts when the server
handles its EXECUTE_JOB); only the JOB_COMPLETED the scheduler gets comes dj after the end.
"""

from __future__ import annotations

import json

import pytest

from simharness import CLUSTER4, DATA, JOBS_HEADER, f6, run_sim, workload

pytestmark = pytest.mark.timeout(60)

SCHEDULE_KEYS = (
    "batsim_version,consumed_joules,makespan,max_slowdown,max_turnaround_time,max_waiting_time,mean_slowdown,"
    "mean_turnaround_time,mean_waiting_time,nb_computing_machines,nb_grouped_switches,nb_jobs,nb_jobs_finished,"
    "nb_jobs_killed,nb_jobs_rejected,nb_jobs_success,nb_machine_switches,scheduling_time,simulation_time,"
    "success_rate,time_computing,time_idle,time_sleeping,time_switching_off,time_switching_on,time_unavailable")
WALL_CLOCK_KEYS = ("scheduling_time", "simulation_time")

PROFILES = {"d1": {"type": "delay", "delay": 1}, "d2": {"type": "delay", "delay": 2},
            "d3": {"type": "delay", "delay": 3}, "d4": {"type": "delay", "delay": 4},
            "d10": {"type": "delay", "delay": 10}}


def row(jid, sub, res, wall, start, runtime, alloc, profile, state="COMPLETED_SUCCESSFULLY", meta=""):
    """A _jobs.csv line computed by hand (Batsim 4.2: %f numbers, interval-set allocation)."""
    finish = start + runtime
    success = 1 if state == "COMPLETED_SUCCESSFULLY" else 0
    return (f"{jid},w0,{profile},{f6(sub)},{res},{f6(wall)},{success},{state},{f6(start)},{f6(runtime)},"
            f"{f6(finish)},{f6(start - sub)},{f6(finish - sub)},{f6((finish - sub) / runtime)},{alloc},"
            f'-1.000000,"{meta}"')


@pytest.fixture(scope="module")
def schedule_run(tmp_path_factory):
    """One run used by several checks: storage host, rejection, non-contiguous allocation."""
    tmp = tmp_path_factory.mktemp("schedule")
    w = workload(tmp / "w.json", [
        {"id": 1, "subtime": 1, "res": 2, "walltime": 20, "profile": "d10"},
        {"id": 2, "subtime": 2, "res": 1, "walltime": 20, "profile": "d4"},
        {"id": 3, "subtime": 3, "res": 1, "walltime": 20, "profile": "d1"},
        {"id": 4, "subtime": 7, "res": 1, "walltime": 20, "profile": "d2"},
        {"id": 5, "subtime": 12, "res": 2, "walltime": 20, "profile": "d1"},
    ], PROFILES, nb_res=3)
    options = {"allocs": {"w0!1": "0-1", "w0!2": "2", "w0!4": "2", "w0!5": "0 2"}, "reject": ["w0!3"]}
    return run_sim(tmp, workloads=[w], scheduler="fixed", options=options, args=["-r", "node_3:storage"]).check()


def test_jobs_csv_exact(schedule_run):
    expected = "\n".join([
        JOBS_HEADER,
        # rows in the order jobs end or are rejected (j3 is rejected at its submission, 3);
        # every job runs at once on its submission (no waiting time, stretch 1):
        # j2 2-6, j4 7-9 (node_2 free again since 6), j1 1-11, j5 12-13 (node_0 free since 11)
        '3,w0,d1,3.000000,1,20.000000,0,REJECTED,,,,,,,,,""',
        row(2, 2, 1, 20, 2, 4, "2", "d4"),
        row(4, 7, 1, 20, 7, 2, "2", "d2"),
        row(1, 1, 2, 20, 1, 10, "0-1", "d10"),
        row(5, 12, 2, 20, 12, 1, "0 2", "d1"),
    ]) + "\n"
    assert schedule_run.jobs_csv.read_text() == expected


def test_schedule_csv(schedule_run):
    text = schedule_run.schedule_csv.read_text()
    lines = text.split("\n")
    assert len(lines) == 3 and lines[2] == "", "two newline-terminated lines"
    assert lines[0] == SCHEDULE_KEYS
    values = schedule_run.schedule()
    assert values["batsim_version"].startswith("4.2")
    # finished jobs (start, runtime, subtime): 1 (1, 10, 1), 2 (2, 4, 2), 4 (7, 2, 7), 5 (12, 1, 12):
    # none waited (each starts when the server handles its EXECUTE_JOB, at its submission
    # since dm = 0).  Means divide by nb_jobs = 5 (the rejected job counts).
    turnarounds = [10, 4, 2, 1]
    slowdowns = [10 / 10, 4 / 4, 2 / 2, 1 / 1]
    # machine time (Batsim counts an interval when a machine changes state, never the last
    # open one; a machine becomes computing when its job starts -- when the server handles
    # EXECUTE_JOB, here at the submission date -- and idle when its job ends):
    # node_0: idle 0-1, computing 1-11, idle 11-12, computing 12-13
    # node_1: idle 0-1, computing 1-11
    # node_2: idle 0-2, computing 2-6, idle 6-7, computing 7-9, idle 9-12, computing 12-13
    # node_3 (storage) never used: 0
    computing = (11 - 1) + (13 - 12) + (11 - 1) + (6 - 2) + (9 - 7) + (13 - 12)  # 28
    idle = (1 - 0) + (12 - 11) + (1 - 0) + (2 - 0) + (7 - 6) + (12 - 9)  # 9
    expected = {
        "consumed_joules": "0.000000",
        "makespan": f6(13),
        "max_slowdown": f6(max(slowdowns)),
        "max_turnaround_time": f6(max(turnarounds)),
        "max_waiting_time": f6(0),
        "mean_slowdown": f6(sum(slowdowns) / 5),  # 0.8
        "mean_turnaround_time": f6(sum(turnarounds) / 5),  # 3.4
        "mean_waiting_time": f6(0),
        "nb_computing_machines": "4",  # compute + storage machines (not the master)
        "nb_grouped_switches": "0",
        "nb_jobs": "5",
        "nb_jobs_finished": "4",
        "nb_jobs_killed": "0",
        "nb_jobs_rejected": "1",
        "nb_jobs_success": "4",
        "nb_machine_switches": "0",
        "success_rate": "0.800000",
        "time_computing": f6(computing),
        "time_idle": f6(idle),
        "time_sleeping": "0.000000",
        "time_switching_off": "0.000000",
        "time_switching_on": "0.000000",
        "time_unavailable": "0.000000",
    }
    assert {k: values[k] for k in expected} == expected
    for key in WALL_CLOCK_KEYS:
        assert float(values[key]) >= 0 and values[key] == f6(float(values[key]))


@pytest.mark.timeout(240)  # importing evalys (pandas, matplotlib, seaborn, scipy) alone takes ~10 s CPU
def test_evalys_reads_jobs_csv_and_draws_a_gantt(schedule_run, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from evalys.jobset import JobSet

    from coburst.analysis.evalys_compat import quiet

    with quiet():  # evalys' own pandas deprecation warnings (its code, not ours)
        js = JobSet.from_csv(str(schedule_run.jobs_csv))
    df = js.df
    assert len(df) == 5
    assert sorted(df["jobID"].astype(str)) == ["1", "2", "3", "4", "5"]
    ran = df[df["final_state"] != "REJECTED"]
    assert len(ran) == 4
    assert list(ran.sort_values("starting_time")["allocated_resources"].astype(str)) == ["0-1", "2", "2", "0 2"]
    with quiet():
        js.gantt(title="coburst sim")  # evalys' own layout (show() does nothing under Agg)
    png = tmp_path / "gantt.png"
    plt.savefig(png)
    plt.close("all")
    assert png.stat().st_size > 1000


def test_resource_ids_and_simulation_begins(tmp_path):
    """Ids: compute hosts first, then storage, each in SimGrid's (lexicographic) host order."""
    w = workload(tmp_path / "w.json", [{"id": 1, "subtime": 1, "res": 1, "profile": "d10"}],
                 {"d10": {"type": "delay", "delay": 10}}, nb_res=1)
    run = run_sim(tmp_path, workloads=[w], platform=DATA / "ids.xml", scheduler="fixed", record=True,
                  args=["-r", "node_7:storage"]).check()
    first = run.messages()[0]
    assert first["dir"] == "in"
    msg = first["msg"]
    assert list(msg) == ["now", "events"] and msg["now"] == 0
    assert len(msg["events"]) == 1  # SIMULATION_BEGINS comes alone
    event = msg["events"][0]
    assert list(event) == ["timestamp", "type", "data"]
    assert (event["timestamp"], event["type"]) == (0, "SIMULATION_BEGINS")
    data = event["data"]
    assert list(data) == ["nb_resources", "nb_compute_resources", "nb_storage_resources", "allow_compute_sharing",
                          "allow_storage_sharing", "config", "compute_resources", "storage_resources",
                          "workloads", "profiles"]
    compute_names = sorted(f"node_{i}" for i in range(102) if i != 7)  # lexicographic
    storage_names = sorted([f"bb_{i}" for i in range(11)] + ["node_7"])
    assert compute_names[:6] == ["node_0", "node_1", "node_10", "node_100", "node_101", "node_11"]
    assert (data["nb_resources"], data["nb_compute_resources"], data["nb_storage_resources"]) == (113, 101, 12)
    assert (data["allow_compute_sharing"], data["allow_storage_sharing"]) == (False, True)
    assert data["config"] == {
        "redis-enabled": False, "redis-hostname": "127.0.0.1", "redis-port": 6379, "redis-prefix": "default",
        "profiles-forwarded-on-submission": False, "dynamic-jobs-enabled": False,
        "dynamic-jobs-acknowledged": False, "profile-reuse-enabled": False, "sched-config": "",
        "forward-unknown-events": False}
    assert list(data["config"]) == ["redis-enabled", "redis-hostname", "redis-port", "redis-prefix",
                                    "profiles-forwarded-on-submission", "dynamic-jobs-enabled",
                                    "dynamic-jobs-acknowledged", "profile-reuse-enabled", "sched-config",
                                    "forward-unknown-events"]
    compute, storage = data["compute_resources"], data["storage_resources"]
    assert [r["name"] for r in compute] == compute_names
    assert [r["id"] for r in compute] == list(range(101))
    assert [r["name"] for r in storage] == storage_names
    assert [r["id"] for r in storage] == list(range(101, 113))
    # a cluster's <prop> are properties of its hosts and of the cluster's netzone: each
    # resource's zone_properties are those of the zones from the root down to its own
    # (Batsim's attach_zone_properties_to_machines; the root zone has none)
    zone_props = {"node": {"rack": "A"}, "bb": {"role": "storage", "bb_capacity": "1000"}}
    for r in compute + storage:
        assert list(r) == ["id", "name", "state", "properties", "zone_properties"]
        assert r["state"] == "idle"
        assert r["zone_properties"] == zone_props[r["name"].split("_")[0]], r
    # every resource announces a "role" property ("" for plain compute hosts), plus its own
    # properties (here inherited from the cluster's <prop>)
    assert compute[0]["properties"] == {"rack": "A", "role": ""}
    assert storage[0]["properties"] == {"role": "storage", "bb_capacity": "1000"}
    # node_7 becomes a storage resource through -r: its role changes, not its zone
    assert storage[-1] == {"id": 112, "name": "node_7", "state": "idle",
                           "properties": {"rack": "A", "role": "storage"}, "zone_properties": {"rack": "A"}}
    assert data["workloads"] == {"w0": str(w.resolve())}
    assert data["profiles"] == {"w0": {"d10": {"type": "delay", "delay": 10}}}
    # the default allocation "0" of the test scheduler is the first compute host in that order
    assert run.rows()[0]["allocated_resources"] == "0"
    # the master is not a resource
    assert "master_host" not in [r["name"] for r in compute + storage]


def test_job_submitted_json_and_no_profile(tmp_path):
    """JOB_SUBMITTED: the workload's job object, extra fields kept, id rewritten."""
    w = tmp_path / "w.json"
    w.write_text('{"nb_res": 4, "profiles": {"d1": {"type": "delay", "delay": 1, "extra": [1, 2.5]}},'
                 ' "jobs": [{"id": 7, "subtime": 1, "walltime": 20, "res": 1, "profile": "d1", "user": 7,'
                 ' "bb": 1000}, {"id": "name", "subtime": 1.5, "res": 1, "profile": "d1"}]}')
    run = run_sim(tmp_path, workloads=[w], scheduler="fixed", record=True,
                  options={"allocs": {"w0!7": "0", "w0!name": "1"}}).check()
    subs = run.events("JOB_SUBMITTED")
    assert [e["data"] for e in subs] == [
        {"job_id": "w0!7", "job": {"id": "w0!7", "subtime": 1, "walltime": 20, "res": 1, "profile": "d1",
                                   "user": 7, "bb": 1000}},
        {"job_id": "w0!name", "job": {"id": "w0!name", "subtime": 1.5, "res": 1, "profile": "d1"}},
    ]
    assert run.events("SIMULATION_BEGINS")[0]["data"]["profiles"]["w0"]["d1"] == \
        {"type": "delay", "delay": 1, "extra": [1, 2.5]}
    jobs = run.jobs()
    assert jobs["w0!name"]["requested_time"] == "-1.000000"  # no walltime
    assert jobs["w0!7"]["job_id"] == "7"


def test_determinism(tmp_path):
    """Same inputs -> byte-identical _jobs.csv (and _schedule.csv but its wall-clock fields)."""
    profiles = {**PROFILES,
                "io": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 6.25e8, "bytes_to_write": 1e8},
                "ph": {"type": "parallel_homogeneous", "cpu": 5e8, "com": 1e8}}
    jobs = [{"id": i, "subtime": 1 + (i * 7 % 5) * 0.5, "res": 1 + i % 2, "walltime": 8 + i % 3,
             "profile": ["d3", "io", "ph", "d10"][i % 4]} for i in range(12)]
    w = workload(tmp_path / "w.json", jobs, profiles, nb_res=3)
    outputs = []
    for k in range(2):
        run = run_sim(tmp_path, workloads=[w], scheduler="easyBackfill", prefix=f"run{k}",
                      args=["-r", "node_3:storage"]).check()
        sched = run.schedule()
        outputs.append((run.jobs_csv.read_bytes(), {k: v for k, v in sched.items() if k not in WALL_CLOCK_KEYS}))
    assert outputs[0][0] == outputs[1][0]
    assert outputs[0][1] == outputs[1][1]
    assert outputs[0][0].count(b"\n") == 13
    assert json.dumps(outputs[0][1])  # sanity


def test_two_workloads(tmp_path):
    """``-w`` twice: workloads w0 and w1, one NOTIFY once both submitters are done."""
    w0 = workload(tmp_path / "a.json", [{"id": 1, "subtime": 1, "res": 1, "profile": "d1"}], PROFILES)
    w1 = workload(tmp_path / "b.json", [{"id": 1, "subtime": 3, "res": 2, "profile": "d2"}], PROFILES)
    run = run_sim(tmp_path, workloads=[w0, w1], scheduler="fixed", record=True,
                  options={"allocs": {"w0!1": "0", "w1!1": "1-2"}}).check()
    begins = run.events("SIMULATION_BEGINS")[0]["data"]
    assert begins["workloads"] == {"w0": str(w0.resolve()), "w1": str(w1.resolve())}
    assert set(begins["profiles"]) == {"w0", "w1"}
    notify = run.events("NOTIFY")
    assert [(e["timestamp"], e["data"]["type"]) for e in notify] == [(3.0, "no_more_static_job_to_submit")]
    rows = run.rows()
    assert [(r["workload_name"], r["job_id"], r["allocated_resources"]) for r in rows] == \
        [("w0", "1", "0"), ("w1", "1", "1-2")]
