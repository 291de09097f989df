"""pybatsim's own schedulers driven by ``coburst sim``, against hand-computed schedules.

Timing model of coburst (the same actors as Batsim 4.2, see coburst/simulator/engine.py):

* every internal message is a 1-byte transfer to the master host, served FIFO by the
  server: it costs the SimGrid route time sender -> master, ``latency + 1 B / bottleneck
  bandwidth``.  ``dm`` is master -> master, ``dj`` first host of a job -> master;
* the server calls the scheduler as soon as it is ready and no internal message waits;
  the k-th decision of a reply reaches the server ``k * dm`` after the reply;
* **job start (what coburst does)**: Batsim 4.2 starts a job "one master-to-node message
  after the decision"; coburst models that message: the job actor is created when the
  EXECUTE_JOB reaches the server, then waits the route time master -> first host
  (``dj``, routes are symmetric) before its ``starting_time``;
* a job's completion reaches the server ``dj`` after its end (the JOB_COMPLETED timestamp),
  and the scheduler's next decisions follow from there.

tests/data/cluster4.xml: master_host alone in a routing="None" zone, so ``dm = 0``
(SimGrid 3.3x routed nothing inside such zones), and for every node
``dj = c_link_i_UP 50us + c_backbone 500us + ml 100us + 1 B / 1.25 GB/s = 650.0008 us``.

pybatsim's ``schedFcfs`` (batsim.sched API) asserts that the allocation's start time is
> 0: with dm = 0 a job submitted at t = 0 is seen at t = 0 (as on Batsim), so these
workloads start at t = 1.
"""

from __future__ import annotations

import pytest

from simharness import CLUSTER4, CLUSTER_MASTER, f6, run_sim, workload

pytestmark = pytest.mark.timeout(60)

# cluster4.xml
DJ4 = 50e-6 + 500e-6 + 100e-6 + 1 / 1.25e9
# cluster_master.xml (master_0 is a cluster host, run with -m master_0)
DM = 20e-6 + 10e-6 + 20e-6 + 1 / 1.25e9  # m_link_0_UP + m_backbone + m_link_0_DOWN
DJ = 50e-6 + 500e-6 + 100e-6 + 10e-6 + 20e-6 + 1 / 1.25e9  # c_link_i_UP + c_backbone + ml + m_backbone + m_link_0_DOWN

DELAYS = {"d1": {"type": "delay", "delay": 1}, "d2": {"type": "delay", "delay": 2},
          "d3": {"type": "delay", "delay": 3}, "d4": {"type": "delay", "delay": 4},
          "d5": {"type": "delay", "delay": 5}, "d10": {"type": "delay", "delay": 10}}


def check_schedule(run, expected: dict[str, tuple[float, float, str]]) -> None:
    """``expected[job] = (start, finish, alloc)``, compared as printed (6 decimals)."""
    jobs = run.jobs()
    assert set(jobs) == set(expected), run.report()
    for jid, (start, finish, alloc) in expected.items():
        row = jobs[jid]
        assert row["final_state"] == "COMPLETED_SUCCESSFULLY", row
        assert (row["starting_time"], row["finish_time"]) == (f6(start), f6(finish)), (jid, row)
        assert row["execution_time"] == f6(finish - start), (jid, row)
        assert row["allocated_resources"] == alloc, (jid, row)


def test_schedfcfs_cluster4(tmp_path):
    w = workload(tmp_path / "w.json", [
        {"id": 1, "subtime": 1, "res": 4, "profile": "d10"},
        {"id": 2, "subtime": 2, "res": 2, "profile": "d10"},
        {"id": 3, "subtime": 2, "res": 1, "profile": "d3"},
        {"id": 4, "subtime": 3, "res": 4, "profile": "d5"},
    ], DELAYS)
    run = run_sim(tmp_path, workloads=[w], scheduler="schedFcfs").check()
    d = DJ4
    # j1: JOB_SUBMITTED at 1 (dm = 0), EXECUTE at 1, starts one master->node message later.
    # j2, j3 wait for j1: j1 ends at 11 + d, its JOB_COMPLETED reaches the server at 11 + 2d,
    # both are executed in that reply (dm = 0: both decisions arrive at 11 + 2d) -> start 11 + 3d.
    # j4 (4 nodes, strict FCFS) waits for j2: j2 ends 21 + 3d, completion seen 21 + 4d,
    # start 21 + 5d.
    check_schedule(run, {
        "w0!1": (1 + d, 11 + d, "0-3"),
        "w0!2": (11 + 3 * d, 21 + 3 * d, "0-1"),
        "w0!3": (11 + 3 * d, 14 + 3 * d, "2"),
        "w0!4": (21 + 5 * d, 26 + 5 * d, "0-3"),
    })
    # rows in end order
    assert [r["job_id"] for r in run.rows()] == ["1", "3", "2", "4"]
    assert run.sched_returncode == 0, run.sched_output


def test_easy_backfill_cluster4(tmp_path):
    w = workload(tmp_path / "w.json", [
        {"id": 1, "subtime": 1, "res": 2, "walltime": 20, "profile": "d10"},
        {"id": 2, "subtime": 2, "res": 4, "walltime": 10, "profile": "d5"},
        {"id": 3, "subtime": 3, "res": 2, "walltime": 5, "profile": "d4"},
        {"id": 4, "subtime": 8, "res": 1, "walltime": 30, "profile": "d2"},
        {"id": 5, "subtime": 9, "res": 1, "walltime": 5, "profile": "d1"},
    ], DELAYS)
    run = run_sim(tmp_path, workloads=[w], scheduler="easyBackfill").check()
    d = DJ4
    # j1 starts at once on 0-1 (pybatsim estimates its end at 1 + walltime 20 = 21).
    # j2 (4 nodes) gets the reservation at 21; j3 (walltime 5 <= 21 - 3) is backfilled on 2-3
    # at 3 + d.  j4 (walltime 30 > 21 - 8) is not backfilled; j5 (walltime 5 <= 21 - 9) is,
    # at 9 + d on the free nodes left by j3.
    # j1 ends 11 + d, seen at 11 + 2d: j2 starts 11 + 3d, ends 16 + 3d, seen 16 + 4d:
    # j4 starts 16 + 5d.
    jobs = run.jobs()
    expected = {
        "w0!1": (1 + d, 11 + d), "w0!3": (3 + d, 7 + d), "w0!5": (9 + d, 10 + d),
        "w0!2": (11 + 3 * d, 16 + 3 * d), "w0!4": (16 + 5 * d, 18 + 5 * d),
    }
    for jid, (start, finish) in expected.items():
        row = jobs[jid]
        assert (row["starting_time"], row["finish_time"]) == (f6(start), f6(finish)), (jid, row)
        assert row["success"] == "1"
    assert jobs["w0!1"]["allocated_resources"] == "0-1"
    assert jobs["w0!3"]["allocated_resources"] == "2-3"
    assert jobs["w0!2"]["allocated_resources"] == "0-3"
    assert jobs["w0!5"]["allocated_resources"] in ("2", "3")
    assert [r["job_id"] for r in run.rows()] == ["3", "5", "1", "2", "4"]


def test_schedfcfs_master_inside_a_cluster(tmp_path):
    """dm > 0: the message chain of Batsim's actors, all on the master (digest section 5)."""
    w = workload(tmp_path / "w.json", [
        {"id": 1, "subtime": 0, "res": 4, "profile": "d10"},
        {"id": 2, "subtime": 5, "res": 2, "profile": "d10"},
        {"id": 3, "subtime": 5, "res": 2, "profile": "d3"},
    ], DELAYS)
    run = run_sim(tmp_path, workloads=[w], platform=CLUSTER_MASTER, scheduler="schedFcfs",
                  args=["-m", "master_0"]).check()
    m, d = DM, DJ
    # t=0: the server sends SIMULATION_BEGINS; the submitter's HELLO and then the REQ-REP
    #      actor's SCHED_READY are queued (each a master->master message, served FIFO).
    # m:   HELLO served; the submitter puts j1 (subtime 0 <= m) in a batch and sends it
    #      (queued behind SCHED_READY) since j2's subtime is later.
    # 2m:  SCHED_READY served (SUBMIT still queued: no call).
    # 3m:  SUBMIT served -> JOB_SUBMITTED(j1) at 3m; nothing queued -> scheduler called at 3m.
    #      The submitter sleeps 5 - m (its date was taken after HELLO), until 5 + 2m.
    # 4m:  EXECUTE_JOB(j1) served; j1 starts one master->node message later: 4m + d.
    # 5 + 2m: SUBMIT(j2, j3) sent, served 5 + 3m; BYE sent as soon as the submitter is
    #      released, so it is already queued: no call until 5 + 4m (JOB_SUBMITTED + NOTIFY).
    # j1 ends 10 + 4m + d, JOB_COMPLETED at 10 + 4m + 2d; schedFcfs executes j2 then j3 in one
    # reply: the 1st decision arrives +m, the 2nd +2m, each job starts d later.
    check_schedule(run, {
        "w0!1": (4 * m + d, 10 + 4 * m + d, "0-3"),
        "w0!2": (10 + 5 * m + 3 * d, 20 + 5 * m + 3 * d, "0-1"),
        "w0!3": (10 + 6 * m + 3 * d, 13 + 6 * m + 3 * d, "2-3"),
    })


def test_message_chain_timestamps(tmp_path):
    """Event timestamps seen by a recording scheduler, with dm > 0 (CALL_ME_LATER included)."""
    w = workload(tmp_path / "w.json", [
        {"id": 1, "subtime": 0, "res": 1, "profile": "d3"},
        {"id": 2, "subtime": 0, "res": 1, "profile": "d1"},
    ], DELAYS)
    run = run_sim(tmp_path, workloads=[w], platform=CLUSTER_MASTER, scheduler="fixed", record=True,
                  options={"allocs": {"w0!1": "0", "w0!2": "1"}, "start_at": {"w0!1": 2}},
                  args=["-m", "master_0"]).check()
    m, d = DM, DJ
    # t=0: reply to SIMULATION_BEGINS = [CALL_ME_LATER(2)]; queue: HELLO, CALL_ME_LATER.
    # m:   HELLO served; the submitter sends SUBMIT(j1, j2) (queued behind CALL_ME_LATER).
    # 2m:  CALL_ME_LATER served (a waiter sleeps until 2); the REQ-REP actor sends SCHED_READY.
    # 3m:  SUBMIT served -> JOB_SUBMITTED x2 at 3m; the submitter sends BYE.
    # 4m:  SCHED_READY; BYE still queued.  5m: BYE -> NOTIFY at 5m; scheduler called.
    # 6m:  EXECUTE_JOB(j2) served -> j2 starts 6m + d.
    # 2:   the waiter wakes up; WAITING_DONE -> REQUESTED_CALL at 2 + m; EXECUTE_JOB(j1) served
    #      at 2 + 2m -> j1 starts 2 + 2m + d.
    # j2 ends 1 + 6m + d, JOB_COMPLETED at 1 + 6m + 2d; j1 ends 5 + 2m + d, seen 5 + 2m + 2d.
    expected_events = [
        ("SIMULATION_BEGINS", 0.0),
        ("JOB_SUBMITTED", 3 * m), ("JOB_SUBMITTED", 3 * m), ("NOTIFY", 5 * m),
        ("JOB_COMPLETED", 1 + 6 * m + 2 * d),
        ("REQUESTED_CALL", 2 + m),
        ("JOB_COMPLETED", 5 + 2 * m + 2 * d),
        ("SIMULATION_ENDS", None),
    ]
    got = [(e["type"], e["timestamp"]) for e in run.events()]
    assert [t for t, _ in got] == [t for t, _ in expected_events], got
    for (etype, ts), (_, expected_ts) in zip(got, expected_events):
        if expected_ts is not None:
            assert ts == pytest.approx(expected_ts, abs=1e-9), (etype, ts, expected_ts)
    # the SIMULATION_ENDS: after j1's completion was answered (SCHED_READY one dm later)
    assert got[-1][1] == pytest.approx(5 + 3 * m + 2 * d, abs=1e-9)
    check_schedule(run, {"w0!2": (6 * m + d, 1 + 6 * m + d, "1"), "w0!1": (2 + 2 * m + d, 5 + 2 * m + d, "0")})
    # every message's "now" is the date of its last event, events are dated in order
    for msg in run.received():
        stamps = [e["timestamp"] for e in msg["events"]]
        assert stamps == sorted(stamps) and msg["now"] == stamps[-1]


def test_same_subtime_jobs_share_one_message(tmp_path):
    """Jobs of one batch come in one message, ordered by (subtime, id string): w0!10 < w0!2."""
    w = workload(tmp_path / "w.json", [
        {"id": 2, "subtime": 1, "res": 1, "profile": "d1"},
        {"id": 10, "subtime": 1, "res": 1, "profile": "d1"},
        {"id": 3, "subtime": 4, "res": 1, "profile": "d1"},
    ], DELAYS)
    run = run_sim(tmp_path, workloads=[w], scheduler="fixed", record=True,
                  options={"allocs": {"w0!2": "0", "w0!10": "1", "w0!3": "2"}}).check()
    received = run.received()
    batches = [[e["data"]["job_id"] for e in msg["events"] if e["type"] == "JOB_SUBMITTED"] for msg in received]
    batches = [b for b in batches if b]
    assert batches == [["w0!10", "w0!2"], ["w0!3"]]
    # dm = 0: JOB_SUBMITTED dated at the subtime itself; the last batch comes with NOTIFY
    last = [msg for msg in received if any(e["type"] == "NOTIFY" for e in msg["events"])][0]
    assert [(e["type"], e["timestamp"]) for e in last["events"]] == [("JOB_SUBMITTED", 4.0), ("NOTIFY", 4.0)]
    assert last["events"][1]["data"] == {"type": "no_more_static_job_to_submit"}
