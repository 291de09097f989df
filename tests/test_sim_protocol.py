"""Scheduler decisions end to end: walltimes, KILL_JOB, dynamic jobs, CALL_ME_LATER,
SET_JOB_METADATA, REJECT_JOB — real ``coburst sim``, real pybatsim schedulers of
``tests/schedulers/`` over ZeroMQ.

Platform tests/data/cluster4.xml: ``dm = 0`` (master alone in a routing="None" zone: the
messages between Batsim's actors on the master cost nothing), so a job submitted at ``t``
and executed at once starts at ``t`` (a job starts when the server handles its
EXECUTE_JOB, no launch message); its completion reaches the server one node -> master
message later, ``dj = 650.0008 us`` (see test_sim_schedules.py).  The scheduler sees every
float printed with ``"%6f"`` (dates and progress rounded to the microsecond).
"""

from __future__ import annotations

import pytest

from simharness import f6, run_sim, workload

pytestmark = pytest.mark.timeout(60)

DJ4 = 50e-6 + 500e-6 + 100e-6 + 1 / 1.25e9


def test_walltime_and_return_codes(tmp_path):
    profiles = {
        "d10": {"type": "delay", "delay": 10},
        "d5": {"type": "delay", "delay": 5},
        "d2": {"type": "delay", "delay": 2},
        "d1": {"type": "delay", "delay": 1},
        "p10": {"type": "parallel_homogeneous", "cpu": 1e10, "com": 0},
        "seq3": {"type": "composed", "seq": ["d2", "d2", "d2"]},
        "fail": {"type": "delay", "delay": 1, "ret": 2},
        "seqfail": {"type": "composed", "seq": ["d1", "fail", "d10"]},
    }
    w = workload(tmp_path / "w.json", [
        {"id": "over", "subtime": 1, "res": 1, "walltime": 5, "profile": "d10"},
        {"id": "equal", "subtime": 1, "res": 1, "walltime": 5, "profile": "d5"},
        {"id": "under", "subtime": 1, "res": 1, "walltime": 5.5, "profile": "d5"},
        {"id": "nowall", "subtime": 1, "res": 1, "walltime": -1, "profile": "d2"},
        {"id": "ptask", "subtime": 20, "res": 1, "walltime": 3, "profile": "p10"},
        {"id": "seq", "subtime": 20, "res": 1, "walltime": 5, "profile": "seq3"},
        {"id": "fail", "subtime": 20, "res": 1, "walltime": 10, "profile": "fail"},
        {"id": "seqfail", "subtime": 20, "res": 1, "walltime": 100, "profile": "seqfail"},
    ], profiles)
    allocs = {"w0!over": "0", "w0!equal": "1", "w0!under": "2", "w0!nowall": "3",
              "w0!ptask": "0", "w0!seq": "1", "w0!fail": "2", "w0!seqfail": "3"}
    run = run_sim(tmp_path, workloads=[w], scheduler="fixed", options={"allocs": allocs}, record=True).check()
    jobs = run.jobs()
    d = DJ4

    def check(jid, state, start, finish):
        row = jobs[jid]
        assert row["final_state"] == state, row
        assert row["success"] == ("1" if state == "COMPLETED_SUCCESSFULLY" else "0"), row
        assert (row["starting_time"], row["finish_time"]) == (f6(start), f6(finish)), row

    # every job is executed on its submission and starts then (dm = 0: at 1 and at 20).
    # walltime measured from the job's start; a delay runs to its end only if strictly
    # shorter than the walltime: delay == walltime is killed at start + walltime
    check("w0!over", "COMPLETED_WALLTIME_REACHED", 1, 6)
    check("w0!equal", "COMPLETED_WALLTIME_REACHED", 1, 6)
    check("w0!under", "COMPLETED_SUCCESSFULLY", 1, 6)
    check("w0!nowall", "COMPLETED_SUCCESSFULLY", 1, 3)
    assert jobs["w0!nowall"]["requested_time"] == "-1.000000"
    # a ptask (10 s of work) is stopped at its walltime 3; a composed profile shares the
    # walltime among its tasks: d2 (5 -> 3 left), d2 (3 -> 1 left), the third d2 cut after 1 s
    check("w0!ptask", "COMPLETED_WALLTIME_REACHED", 20, 23)
    check("w0!seq", "COMPLETED_WALLTIME_REACHED", 20, 25)
    # ret > 0: COMPLETED_FAILED; in a composed profile the first failing task ends the job
    check("w0!fail", "COMPLETED_FAILED", 20, 21)
    check("w0!seqfail", "COMPLETED_FAILED", 20, 22)
    completed = {e["data"]["job_id"]: e for e in run.events("JOB_COMPLETED")}
    expected_codes = {"w0!over": -1, "w0!equal": -1, "w0!under": 0, "w0!nowall": 0, "w0!ptask": -1,
                      "w0!seq": -1, "w0!fail": 2, "w0!seqfail": 2}
    for jid, code in expected_codes.items():
        ev = completed[jid]
        assert list(ev["data"]) == ["job_id", "job_state", "return_code", "alloc"]
        assert ev["data"]["return_code"] == code, ev
        assert ev["data"]["job_state"] == jobs[jid]["final_state"]
        assert ev["data"]["alloc"] == allocs[jid]
    # a completion reaches the server one node -> master message after the end; messages are
    # served one at a time: k jobs ending together are seen at end + d, end + 2d, ... end + k*d
    # (printed with "%6f": 6.000650, 6.001300, 6.001950 for the three jobs ending at 6)
    by_end: dict[str, list[float]] = {}
    for jid, ev in completed.items():
        by_end.setdefault(jobs[jid]["finish_time"], []).append(ev["timestamp"])
    for end, stamps in by_end.items():
        expected = [float(f6(float(end) + k * d)) for k in range(1, len(stamps) + 1)]
        assert sorted(stamps) == expected, (end, stamps)
    assert sorted(len(v) for v in by_end.values()) == [1, 1, 1, 1, 1, 3]
    sched = run.schedule()
    # nb_jobs_killed counts every finished job that did not succeed (Batsim 4.2)
    assert (sched["nb_jobs_success"], sched["nb_jobs_killed"], sched["nb_jobs_finished"]) == ("2", "6", "8")


def test_kill_job_progress(tmp_path):
    profiles = {
        "d10": {"type": "delay", "delay": 10},
        "d2": {"type": "delay", "delay": 2},
        "seq": {"type": "composed", "seq": ["d2", "d10"]},
        "p10": {"type": "parallel_homogeneous", "cpu": 1e10, "com": 0},
        "d1": {"type": "delay", "delay": 1},
    }
    w = workload(tmp_path / "w.json", [
        {"id": "delay", "subtime": 1, "res": 1, "profile": "d10"},
        {"id": "seq", "subtime": 1, "res": 1, "profile": "seq"},
        {"id": "ptask", "subtime": 1, "res": 1, "profile": "p10"},
        {"id": "short", "subtime": 1, "res": 1, "profile": "d1"},
    ], profiles)
    options = {
        "allocs": {"w0!delay": "0", "w0!seq": "1", "w0!ptask": "2", "w0!short": "3"},
        # two KILL_JOB in one reply at t=6: the second names "delay" again (already being killed:
        # silently skipped by Batsim)
        "kill": [[6, ["w0!delay"]], [6, ["w0!delay", "w0!seq", "w0!ptask"]]],
    }
    run = run_sim(tmp_path, workloads=[w], scheduler="fixed", options=options, record=True).check()
    s = 1  # start of every job (executed on its submission, dm = 0)
    killed = run.events("JOB_KILLED")
    assert [e["data"]["job_ids"] for e in killed] == [["w0!delay"], ["w0!seq", "w0!ptask"]]
    progress = {jid: tree for e in killed for jid, tree in e["data"]["job_progress"].items()}
    for e in killed:
        assert e["timestamp"] == 6.0  # dm = 0: the killer's KILLING_DONE costs nothing
        assert list(e["data"]) == ["job_ids", "job_progress"]
    # progress values are printed with "%6f" like every float Batsim sends
    # delay leaf: elapsed / delay = (6 - 1) / 10
    assert progress["w0!delay"] == {"profile_name": "d10", "progress": float(f6((6 - s) / 10))}
    assert list(progress["w0!delay"]) == ["profile_name", "progress"]
    # composed: index of the running task, and its own progress (d2 done at s + 2 = 3)
    tree = progress["w0!seq"]
    assert list(tree) == ["profile_name", "current_task_index", "current_task"]
    assert tree["profile_name"] == "seq" and tree["current_task_index"] == 1
    assert tree["current_task"] == {"profile_name": "d10", "progress": float(f6((6 - s - 2) / 10))}
    # ptask leaf: 1 - remaining ratio (1e10 flops at 1 Gflop/s, no communication: no latency)
    assert progress["w0!ptask"] == {"profile_name": "p10", "progress": float(f6((6 - s) / 10))}
    # JOB_COMPLETED(COMPLETED_KILLED) precede each JOB_KILLED; the return code is -1 for a job
    # killed in a delay (its actor is killed: Batsim's default code), -2 for one whose running
    # parallel task was cancelled (the job's actor ends by itself with "killed by the scheduler")
    completed = run.events("JOB_COMPLETED")
    killed_completions = [e for e in completed if e["data"]["job_state"] == "COMPLETED_KILLED"]
    assert sorted(e["data"]["job_id"] for e in killed_completions) == ["w0!delay", "w0!ptask", "w0!seq"]
    assert {e["data"]["job_id"]: e["data"]["return_code"] for e in killed_completions} == \
        {"w0!delay": -1, "w0!seq": -1, "w0!ptask": -2}
    assert all(e["timestamp"] == 6.0 for e in killed_completions)
    for msg in run.received():
        types = [(e["type"], e["data"].get("job_id")) for e in msg["events"]]
        for i, (etype, _) in enumerate(types):
            if etype == "JOB_KILLED":
                ids = msg["events"][i]["data"]["job_ids"]
                before = [jid for t, jid in types[:i] if t == "JOB_COMPLETED"]
                assert set(ids) <= set(before), types
    jobs = run.jobs()
    for jid in ("w0!delay", "w0!seq", "w0!ptask"):
        row = jobs[jid]
        assert (row["final_state"], row["success"]) == ("COMPLETED_KILLED", "0")
        assert (row["starting_time"], row["finish_time"]) == (f6(s), f6(6.0)), row
    assert jobs["w0!short"]["final_state"] == "COMPLETED_SUCCESSFULLY"
    assert run.sched_returncode == 0, run.sched_output


@pytest.mark.parametrize("ack", [False, True])
def test_dynamic_registration(tmp_path, ack):
    w = workload(tmp_path / "w.json", [{"id": 1, "subtime": 1, "res": 1, "profile": "d1"}],
                 {"d1": {"type": "delay", "delay": 1}})
    options = {"allocs": {"w0!1": "0"},
               "profiles": {"p5": {"type": "delay", "delay": 5}},
               "jobs": [{"id": "dyn!a", "res": 2, "walltime": 10, "profile": "p5", "alloc": "1-2"}]}
    args = ["--enable-dynamic-jobs"] + (["--acknowledge-dynamic-jobs"] if ack else [])
    run = run_sim(tmp_path, workloads=[w], scheduler="dynamic", options=options, args=args, record=True).check()
    begins = run.events("SIMULATION_BEGINS")[0]["data"]["config"]
    assert (begins["dynamic-jobs-enabled"], begins["dynamic-jobs-acknowledged"]) == (True, ack)
    assert begins["profile-reuse-enabled"] is False
    submitted = [e for e in run.events("JOB_SUBMITTED") if e["data"]["job_id"] == "dyn!a"]
    if ack:
        # echoed back as JOB_SUBMITTED (job JSON as registered, id rewritten; no profile)
        assert len(submitted) == 1
        assert submitted[0]["data"] == {"job_id": "dyn!a", "job": {"profile": "p5", "id": "dyn!a", "res": 2,
                                                                    "walltime": 10, "subtime": 1.0}}
        assert submitted[0]["timestamp"] == 1.0
    else:
        assert submitted == []
    jobs = run.jobs()
    row = jobs["dyn!a"]
    # registered at 1 (the static job's submission), then executed at 1 (dm = 0: the decisions
    # of a reply, and with acknowledgement the JOB_SUBMITTED round trip, all happen at 1):
    # starts at 1, no wait, stretch 1
    assert row == {
        "job_id": "a", "workload_name": "dyn", "profile": "p5", "submission_time": "1.000000",
        "requested_number_of_resources": "2", "requested_time": "10.000000", "success": "1",
        "final_state": "COMPLETED_SUCCESSFULLY", "starting_time": "1.000000", "execution_time": "5.000000",
        "finish_time": "6.000000", "waiting_time": "0.000000", "turnaround_time": "5.000000",
        "stretch": "1.000000", "allocated_resources": "1-2", "consumed_energy": "-1.000000", "metadata": "",
    }
    assert run.schedule()["nb_jobs"] == "2"
    # the simulation ended (NOTIFY registration_finished was sent) after both jobs
    assert run.events()[-1]["type"] == "SIMULATION_ENDS"


def test_call_me_later(tmp_path):
    w = workload(tmp_path / "w.json", [{"id": 1, "subtime": 1, "res": 1, "profile": "d1"}],
                 {"d1": {"type": "delay", "delay": 1}})
    run = run_sim(tmp_path, workloads=[w], scheduler="fixed", record=True,
                  options={"start_at": {"w0!1": 3.5}, "calls": [2.25, 30]}).check()
    calls = run.events("REQUESTED_CALL")
    # one REQUESTED_CALL per CALL_ME_LATER, at the requested date (+ dm = 0), data {}
    assert [(e["timestamp"], e["data"]) for e in calls] == [(2.25, {}), (3.5, {}), (30.0, {})]
    row = run.jobs()["w0!1"]
    # executed in the reply to the REQUESTED_CALL of 3.5: starts then (dm = 0)
    assert (row["starting_time"], row["finish_time"]) == ("3.500000", "4.500000")
    # a pending CALL_ME_LATER keeps the simulation alive
    ends = run.events("SIMULATION_ENDS")
    assert len(ends) == 1 and ends[0]["timestamp"] == 30.0


def test_set_job_metadata_and_reject(tmp_path):
    w = workload(tmp_path / "w.json", [
        {"id": 1, "subtime": 1, "res": 1, "profile": "d1"},
        {"id": 2, "subtime": 1, "res": 4, "walltime": 20, "profile": "d1"},
        {"id": 3, "subtime": 2, "res": 1, "profile": "d1"},
    ], {"d1": {"type": "delay", "delay": 1}})
    run = run_sim(tmp_path, workloads=[w], scheduler="fixed",
                  options={"reject": ["w0!2"], "metadata": {"w0!1": "phase=a, user 7; ok", "w0!3": "x"},
                           "allocs": {"w0!1": "0", "w0!3": "1"}}).check()
    lines = run.jobs_csv.read_text().splitlines()
    # the rejected row is written at the rejection, before the rows of the jobs that ran
    assert lines[1] == '2,w0,d1,1.000000,4,20.000000,0,REJECTED,,,,,,,,,""'
    assert lines[2].endswith(',0,-1.000000,"phase=a, user 7; ok"')
    assert lines[3].endswith(',1,-1.000000,"x"')
    sched = run.schedule()
    assert (sched["nb_jobs"], sched["nb_jobs_rejected"], sched["nb_jobs_finished"], sched["nb_jobs_success"]) == \
        ("3", "1", "2", "2")


def test_kill_before_the_job_started(tmp_path):
    """A KILL_JOB in the same reply as the EXECUTE_JOB.

    There is no launch message: the server creates the job's actor when it handles the
    EXECUTE_JOB, and that actor runs (starts the job and its first task) in the next
    scheduling round at that date, before the KILL_JOB — a later message — can reach the
    server.  So even with ``dm = 0`` the job is killed *just after* it started: at the same
    date, with the progress of a task that has just begun.  (Batsim 4.2.1 does the same,
    measured with a master whose messages to itself cost nothing.)"""
    profiles = {"d10": {"type": "delay", "delay": 10}, "d2": {"type": "delay", "delay": 2},
                "seq": {"type": "composed", "seq": ["d2", "d10"]},
                "p10": {"type": "parallel_homogeneous", "cpu": 1e10, "com": 0}}
    w = workload(tmp_path / "w.json", [{"id": "seq", "subtime": 1, "res": 1, "profile": "seq"},
                                       {"id": "d", "subtime": 1, "res": 1, "profile": "d10"},
                                       {"id": "p", "subtime": 1, "res": 1, "profile": "p10"}], profiles)
    run = run_sim(tmp_path, workloads=[w], scheduler="fixed", record=True, options={
        "allocs": {"w0!seq": "0", "w0!d": "1", "w0!p": "2"},
        "start_at": {"w0!seq": 5, "w0!d": 5, "w0!p": 5}, "kill": [[5, ["w0!seq", "w0!d", "w0!p"]]]}).check()
    (killed,) = run.events("JOB_KILLED")
    assert killed["timestamp"] == 5.0 and killed["data"]["job_ids"] == ["w0!seq", "w0!d", "w0!p"]
    # the trees of tasks that have just started: the composed profile is at its first task
    # (index 0, progress 0), the leaves at progress 0
    assert killed["data"]["job_progress"] == {
        "w0!seq": {"profile_name": "seq", "current_task_index": 0,
                   "current_task": {"profile_name": "d2", "progress": 0.0}},
        "w0!d": {"profile_name": "d10", "progress": 0.0},
        "w0!p": {"profile_name": "p10", "progress": 0.0},
    }
    # killed in a delay: return code -1; the running parallel task of w0!p cancelled: -2
    codes = {e["data"]["job_id"]: (e["data"]["job_state"], e["data"]["return_code"], e["timestamp"])
             for e in run.events("JOB_COMPLETED")}
    assert codes == {"w0!seq": ("COMPLETED_KILLED", -1, 5.0), "w0!d": ("COMPLETED_KILLED", -1, 5.0),
                     "w0!p": ("COMPLETED_KILLED", -2, 5.0)}
    for row in run.rows():
        # started and killed at 5: a null runtime, which Batsim replaces by 1e-5 s (so the
        # finish time, start + runtime, is 5.00001 and the stretch (5.00001 - 1) / 1e-5)
        assert (row["final_state"], row["starting_time"], row["execution_time"], row["finish_time"]) == \
            ("COMPLETED_KILLED", "5.000000", "0.000010", "5.000010"), row
        assert (row["waiting_time"], row["turnaround_time"], row["stretch"]) == \
            ("4.000000", "4.000010", "400001.000000"), row


def test_killing_a_ptask_frees_its_resources(tmp_path):
    """Two jobs read from the same storage host (sharing its link); killing one speeds up the other."""
    profiles = {"read": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1.25e9}}
    w = workload(tmp_path / "w.json", [{"id": "a", "subtime": 1, "res": 1, "profile": "read"},
                                       {"id": "b", "subtime": 1, "res": 1, "profile": "read"}], profiles, nb_res=3)
    run = run_sim(tmp_path, workloads=[w], scheduler="fixed", record=True, args=["-r", "node_3:storage"],
                  options={"allocs": {"w0!a": "0", "w0!b": "1"}, "kill": [[2, ["w0!a"]]]}).check()
    # node_3 -> node_i: c_link_3_UP 50us + c_backbone 500us + c_link_i_DOWN 50us
    lat = 600e-6
    s = 1  # both start at s (dm = 0); after the route latency each gets half of node_3's 1.25 GB/s
    done_at_kill = 0.5 * (2 - s - lat)  # fraction of its 1.25e9 B each has read at t=2: 0.4997
    (killed,) = run.events("JOB_KILLED")
    assert killed["timestamp"] == 2.0
    assert killed["data"]["job_progress"]["w0!a"] == {"profile_name": "read", "progress": float(f6(done_at_kill))}
    completed = {e["data"]["job_id"]: e for e in run.events("JOB_COMPLETED")}
    assert (completed["w0!a"]["data"]["job_state"], completed["w0!a"]["data"]["return_code"]) == \
        ("COMPLETED_KILLED", -2)  # its parallel task was cancelled
    # b alone from t=2: the rest (1 - 0.4997) at full speed, ends at 2.5003
    b = run.jobs()["w0!b"]
    assert (b["final_state"], b["starting_time"], b["finish_time"]) == \
        ("COMPLETED_SUCCESSFULLY", f6(s), f6(2 + (1 - done_at_kill))), b
    assert completed["w0!b"]["timestamp"] == float(f6(2 + (1 - done_at_kill) + DJ4))

