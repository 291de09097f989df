"""pybatsim's own schedulers driven by ``coburst sim``, against hand-computed schedules.

Timing model of coburst (the same actors as Batsim 4.2.1, see coburst/simulator/engine.py;
every point measured on the real Batsim 4.2.1):

* every internal message is a blocking 1-byte ``put`` to the server's mailbox on the
  master host, served one at a time in arrival order: it costs the SimGrid route time
  sender -> master, ``latency + 1 B / bottleneck bandwidth``.  ``dm`` is master -> master
  (HELLO, submissions, BYE, each decision, SCHED_READY, WAITING_DONE...), ``dj`` first
  host of a job -> master (its completion);
* the server calls the scheduler as soon as it is ready and no internal message waits;
  the request-reply actor forwards the decisions of the reply one by one (the k-th one
  reaches the server ``k * dm`` after the reply), then SCHED_READY (one more ``dm``);
* **a job starts when the server handles its EXECUTE_JOB** (Batsim creates the job's
  actor directly on its first host: no launch message);
* its completion reaches the server ``dj`` after its end (the JOB_COMPLETED timestamp),
  and the scheduler's next decisions follow from there;
* the submitter takes its date after HELLO, sends a batch (blocking put) before sleeping
  until a later subtime, and measures that sleep from the end of the put (it wakes one
  put duration late when ``dm > 0``);
* SimGrid scheduling rounds: a put made while the server handles a message is not yet
  in its mailbox, so the submitter's BYE (sent right after its last SUBMIT is received)
  comes in a later scheduler message than that last JOB_SUBMITTED;
* Batsim prints every float of a message with ``"%6f"``: the scheduler sees dates
  rounded to the microsecond, and answers with them (pybatsim echoes the rounded
  ``now``).  Below, every such rounding is downwards (the dates are ``k + n * 1e-6 +
  a few 1e-9``), so the decisions are never held back to a later timestamp.

tests/data/cluster4.xml: master_host alone in a routing="None" zone, so ``dm = 0``
(SimGrid 3.3x routes nothing inside such zones), and for every node
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
    # dm = 0: the submitter wakes at each subtime exactly.
    # j1: JOB_SUBMITTED at 1, EXECUTE_JOB at 1 reaches the server at once: starts at 1, ends 11.
    # j2, j3 wait for j1 (strict FCFS, j2 first): j1's JOB_COMPLETED reaches the server at
    # 11 + d (seen as 11.000650, rounded down); both are executed in that reply and both
    # decisions arrive at 11 + d (dm = 0) -> start 11 + d.
    # j4 (4 nodes) waits for j2 (j3's completion at 14 + 2d changes nothing): j2 ends 21 + d,
    # completion seen 21 + 2d, j4 starts 21 + 2d.
    check_schedule(run, {
        "w0!1": (1, 11, "0-3"),
        "w0!2": (11 + d, 21 + d, "0-1"),
        "w0!3": (11 + d, 14 + d, "2"),
        "w0!4": (21 + 2 * d, 26 + 2 * d, "0-3"),
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
    # dm = 0: every job is seen at its subtime and a job executed at once starts then.
    # j1 starts at 1 on 0-1 (pybatsim estimates its end at 1 + walltime 20 = 21).
    # j2 (4 nodes) gets the reservation at 21; j3 (walltime 5 <= 21 - 3) is backfilled on 2-3
    # at 3, ends 7 (seen 7 + d).  j4 (walltime 30 > 21 - 8, and j2 leaves no spare node) is
    # not backfilled; j5 (walltime 5 <= 21 - 9) is, at 9 on a node left free by j3.
    # j1 ends 11, seen at 11 + d (after j5's completion at 10 + d): j2 starts 11 + d, ends
    # 16 + d, seen 16 + 2d: j4 starts 16 + 2d.
    jobs = run.jobs()
    expected = {
        "w0!1": (1, 11), "w0!3": (3, 7), "w0!5": (9, 10),
        "w0!2": (11 + d, 16 + d), "w0!4": (16 + 2 * d, 18 + 2 * d),
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
                  args=["-m", "master_0"], transcript=True).check()
    m, d = DM, DJ
    # t=0: the submitter (created before the server) sends HELLO; the server sends
    #      SIMULATION_BEGINS; the REQ-REP actor's SCHED_READY is queued behind HELLO (each
    #      a master->master message, served FIFO).
    # m:   HELLO served; the submitter takes its date (m), puts j1 (subtime 0 <= m) in a
    #      batch and sends it (queued behind SCHED_READY) since j2's subtime is later.
    # 2m:  SCHED_READY served (SUBMIT still queued: no call).
    # 3m:  SUBMIT served -> JOB_SUBMITTED(j1) at 3m; nothing queued -> scheduler called at 3m.
    #      The submitter's put ends: it sleeps 5 - m (from its date m), until 5 + 2m.
    # 4m:  EXECUTE_JOB(j1) served: j1 starts at 4m.  5m: SCHED_READY.
    # 5 + 2m: SUBMIT(j2, j3) sent, served 5 + 3m -> scheduler called (the submitter's BYE,
    #      sent in the same scheduling round, is not in the mailbox yet); BYE served 5 + 4m,
    #      SCHED_READY 5 + 5m -> NOTIFY sent at 5 + 5m.
    # j1 ends 10 + 4m, JOB_COMPLETED at 10 + 4m + d; schedFcfs executes j2 then j3 in one
    # reply: the 1st decision arrives +m, the 2nd +2m, each job starting when it arrives.
    check_schedule(run, {
        "w0!1": (4 * m, 10 + 4 * m, "0-3"),
        "w0!2": (10 + 5 * m + d, 20 + 5 * m + d, "0-1"),
        "w0!3": (10 + 6 * m + d, 13 + 6 * m + d, "2-3"),
    })
    # the messages the scheduler got (recorded by a proxy), dates as printed ("%6f"): an event
    # is dated when the server handles the internal message behind it, a message when it is
    # sent -- so the NOTIFY (BYE served at 5 + 4m) comes in the message of 5 + 5m, when the
    # scheduler is ready again.  j3's completion (13 + 6m + 2d) comes before j2's
    # (20 + 5m + 2d); SIMULATION_ENDS once the last reply's SCHED_READY is served (+m).
    expected_messages = [
        (0.0, [("SIMULATION_BEGINS", None, 0.0)]),
        (3 * m, [("JOB_SUBMITTED", "w0!1", 3 * m)]),
        (5 + 3 * m, [("JOB_SUBMITTED", "w0!2", 5 + 3 * m), ("JOB_SUBMITTED", "w0!3", 5 + 3 * m)]),
        (5 + 5 * m, [("NOTIFY", None, 5 + 4 * m)]),
        (10 + 4 * m + d, [("JOB_COMPLETED", "w0!1", 10 + 4 * m + d)]),
        (13 + 6 * m + 2 * d, [("JOB_COMPLETED", "w0!3", 13 + 6 * m + 2 * d)]),
        (20 + 5 * m + 2 * d, [("JOB_COMPLETED", "w0!2", 20 + 5 * m + 2 * d)]),
        (20 + 6 * m + 2 * d, [("SIMULATION_ENDS", None, 20 + 6 * m + 2 * d)]),
    ]
    got = [(msg["now"], [(e["type"], e["data"].get("job_id"), e["timestamp"]) for e in msg["events"]])
           for msg in run.received()]
    assert got == [(float(f6(now)), [(t, j, float(f6(ts))) for t, j, ts in events])
                   for now, events in expected_messages], got


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
    # t=0: the submitter sends HELLO; reply to SIMULATION_BEGINS = [CALL_ME_LATER(2)], whose
    #      decision is queued behind HELLO.
    # m:   HELLO served; the submitter sends SUBMIT(j1, j2) (queued behind CALL_ME_LATER).
    # 2m:  CALL_ME_LATER served (a waiter sleeps until 2); the REQ-REP actor sends SCHED_READY.
    # 3m:  SUBMIT served -> JOB_SUBMITTED x2 at 3m; the submitter sends BYE.
    # 4m:  SCHED_READY; BYE still queued.  5m: BYE -> NOTIFY at 5m; scheduler called.
    # 6m:  EXECUTE_JOB(j2) served -> j2 starts at 6m (SCHED_READY 7m).
    # 2:   the waiter wakes up; WAITING_DONE -> REQUESTED_CALL at 2 + m (seen as 2.000050, not
    #      before the CALL_ME_LATER date); EXECUTE_JOB(j1) served at 2 + 2m -> j1 starts then.
    # j2 ends 1 + 6m, JOB_COMPLETED at 1 + 6m + d; j1 ends 5 + 2m, seen 5 + 2m + d.
    expected_events = [
        ("SIMULATION_BEGINS", 0.0),
        ("JOB_SUBMITTED", 3 * m), ("JOB_SUBMITTED", 3 * m), ("NOTIFY", 5 * m),
        ("JOB_COMPLETED", 1 + 6 * m + d),
        ("REQUESTED_CALL", 2 + m),
        ("JOB_COMPLETED", 5 + 2 * m + d),
        ("SIMULATION_ENDS", 5 + 3 * m + d),  # after j1's completion was answered (SCHED_READY +dm)
    ]
    got = [(e["type"], e["timestamp"]) for e in run.events()]
    assert [t for t, _ in got] == [t for t, _ in expected_events], got
    # the scheduler sees every date printed with "%6f" (rounded to the microsecond)
    assert got == [(etype, float(f6(ts))) for etype, ts in expected_events], got
    check_schedule(run, {"w0!2": (6 * m, 1 + 6 * m, "1"), "w0!1": (2 + 2 * m, 5 + 2 * m, "0")})
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
    # dm = 0: JOB_SUBMITTED dated at the subtime itself.  The submitter's BYE, sent in the
    # scheduling round where the server handles the last SUBMIT, is not yet in the server's
    # mailbox: the scheduler gets the last batch alone, then NOTIFY in the next message
    # (same date: every message costs 0 here)
    notify = [i for i, msg in enumerate(received) if any(e["type"] == "NOTIFY" for e in msg["events"])]
    assert len(notify) == 1, received
    last_batch, last = received[notify[0] - 1], received[notify[0]]
    assert [(e["type"], e["timestamp"]) for e in last_batch["events"]] == [("JOB_SUBMITTED", 4.0)]
    assert last_batch["events"][0]["data"]["job_id"] == "w0!3"
    assert [(e["type"], e["timestamp"]) for e in last["events"]] == [("NOTIFY", 4.0)]
    assert last["events"][0]["data"] == {"type": "no_more_static_job_to_submit"}
