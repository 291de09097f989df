"""Every Batsim profile type, timed under SimGrid's ptask_L07 model, and speed changes.

Platform tests/data/cluster4.xml: nodes of 1 Gflop/s; each node has a private up and a
private down link (1.25 GB/s, 50 us) and all share the backbone (2.5 GB/s, 500 us).  A
node -> node route is UP + backbone + DOWN: latency 600 us.

ptask_L07 expectations: a parallel task is ONE action progressing at a single rate r
limited by every resource it uses (host i: r * flops_i <= speed_i; link l:
r * sum(bytes routed through l) <= bandwidth_l), so its duration is
``max(flops_i / speed_i, bytes_l / bw_l) + latency``, the latency (largest route latency
among the communicating pairs) being paid only if it communicates.  Two tasks sharing a
link share its bandwidth.

The test scheduler ``tests/schedulers/fixed.py`` runs each job at its submission on the
allocation given in its options; jobs are spread in time so that each runs alone (except
where contention is tested).  ``dm = 0`` on cluster4 and a job starts when the server
handles its EXECUTE_JOB (Batsim creates the job's actor directly on its first host, no
launch message, see test_sim_schedules.py), so a job submitted at ``s`` starts at ``s``;
apart from that, only its execution time matters here.
"""

from __future__ import annotations

import json

import pytest

from simharness import CLUSTER4, f6, run_sim, workload

pytestmark = pytest.mark.timeout(60)

LAT = 600e-6  # node -> node route latency (UP 50 us + backbone 500 us + DOWN 50 us)


def check_exec(jobs: dict, expected: dict[str, float], tol: float = 1.5e-6) -> None:
    for jid, duration in expected.items():
        row = jobs[jid]
        assert row["final_state"] == "COMPLETED_SUCCESSFULLY", row
        assert float(row["execution_time"]) == pytest.approx(duration, abs=tol), (jid, row, duration)
        assert float(row["finish_time"]) - float(row["starting_time"]) == pytest.approx(duration, abs=tol)


def test_compute_profiles(tmp_path):
    profiles = {
        "d10": {"type": "delay", "delay": 10},
        "ph_cpu": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0},
        "ph_com": {"type": "parallel_homogeneous", "cpu": 0, "com": 3.125e8},
        "par": {"type": "parallel", "cpu": [1e9, 2e9], "com": [0, 1.25e9, 0, 0]},
        "pht": {"type": "parallel_homogeneous_total", "cpu": 4e9, "com": 0},
        "ph1": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0},
        "d1": {"type": "delay", "delay": 1},
        "seq": {"type": "composed", "seq": ["d1", "ph1"], "repeat": 2},
    }
    w = workload(tmp_path / "w.json", [
        {"id": "delay", "subtime": 1, "res": 1, "profile": "d10"},
        {"id": "ph_cpu", "subtime": 20, "res": 2, "profile": "ph_cpu"},
        {"id": "ph_com", "subtime": 30, "res": 3, "profile": "ph_com"},
        {"id": "par", "subtime": 40, "res": 2, "profile": "par"},
        {"id": "pht", "subtime": 50, "res": 2, "profile": "pht"},
        {"id": "pht_wide", "subtime": 60, "res": 2, "profile": "pht"},
        {"id": "seq", "subtime": 70, "res": 1, "profile": "seq"},
    ], profiles)
    allocs = {"w0!delay": "0", "w0!ph_cpu": "0-1", "w0!ph_com": "0-2", "w0!par": "0-1", "w0!pht": "2-3",
              "w0!pht_wide": "0-3", "w0!seq": "3"}
    run = run_sim(tmp_path, workloads=[w], scheduler="fixed", options={"allocs": allocs}).check()
    jobs = run.jobs()
    check_exec(jobs, {
        # delay: a plain sleep
        "w0!delay": 10.0,
        # 1 Gflop on each of 2 hosts at 1 Gflop/s, no communication (no latency)
        "w0!ph_cpu": 1.0,
        # 3 hosts, 3.125e8 B to each other host: each UP link carries 2 x 3.125e8 B (0.5 s),
        # the shared backbone 6 x 3.125e8 = 1.875e9 B at 2.5 GB/s (0.75 s): 0.75 s + latency
        "w0!ph_com": 0.75 + LAT,
        # host 1 computes 2 Gflop (2 s) while host 0 sends it 1.25e9 B (1 s on its UP link):
        # the CPU bounds the rate; the communication adds its latency
        "w0!par": 2.0 + LAT,
        # _total: 4 Gflop spread over the allocation: 2 hosts -> 2 s, 4 hosts -> 1 s
        # (the only profile allowed to run on more hosts than requested)
        "w0!pht": 2.0,
        "w0!pht_wide": 1.0,
        # composed: (delay 1 s + 1 Gflop on one host) x 2
        "w0!seq": 4.0,
    })
    assert jobs["w0!pht_wide"]["allocated_resources"] == "0-3"
    assert jobs["w0!pht_wide"]["requested_number_of_resources"] == "2"
    for jid, row in jobs.items():  # each job started at its submission (executed at once, dm = 0)
        assert row["starting_time"] == row["submission_time"], row


def test_storage_profiles_single_storage_host(tmp_path):
    """``-r node_3:storage``: compute ids 0-2, storage id 3, no storage_mapping needed."""
    profiles = {
        "read2": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1.25e9},
        "write": {"type": "parallel_homogeneous_pfs", "bytes_to_write": 6.25e8, "storage": "pfs"},
        "read1": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1.25e9},
    }
    w = workload(tmp_path / "w.json", [
        {"id": "read2", "subtime": 1, "res": 2, "profile": "read2"},
        {"id": "write", "subtime": 10, "res": 1, "profile": "write"},
        {"id": "c1", "subtime": 20, "res": 1, "profile": "read1"},
        {"id": "c2", "subtime": 20, "res": 1, "profile": "read1"},
        {"id": "alone", "subtime": 30, "res": 1, "profile": "read1"},
    ], profiles, nb_res=3)
    allocs = {"w0!read2": "0-1", "w0!write": "0", "w0!c1": "0", "w0!c2": "1", "w0!alone": "2"}
    run = run_sim(tmp_path, workloads=[w], scheduler="fixed", options={"allocs": allocs},
                  args=["-r", "node_3:storage"]).check()
    jobs = run.jobs()
    check_exec(jobs, {
        # the storage host sends 1.25e9 B to each of 2 hosts: its UP link carries 2.5e9 B (2 s)
        "w0!read2": 2.0 + LAT,
        # 6.25e8 B to the storage host: 0.5 s on the node's UP and the storage's DOWN link
        "w0!write": 0.5 + LAT,
        # contention: two jobs reading from the same storage host at the same time share its
        # UP link (1.25 GB/s for 2 x 1.25e9 B): 2 s each, twice as long as alone
        "w0!c1": 2.0 + LAT,
        "w0!c2": 2.0 + LAT,
        "w0!alone": 1.0 + LAT,
    })
    assert jobs["w0!c1"]["starting_time"] == jobs["w0!c2"]["starting_time"]
    assert jobs["w0!read2"]["allocated_resources"] == "0-1"  # the storage host is not part of the allocation


def test_storage_profiles_with_storage_mapping(tmp_path):
    """``-r node_2,node_3:storage``: compute ids 0-1, storage ids 2-3, labels mapped by EXECUTE_JOB."""
    profiles = {
        "bbread": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1.25e9, "storage": "bb"},
        "stage": {"type": "data_staging", "nb_bytes": 2.5e9, "from": "src", "to": "dst"},
    }
    w = workload(tmp_path / "w.json", [
        {"id": "bb", "subtime": 1, "res": 1, "profile": "bbread"},
        {"id": "stage", "subtime": 10, "res": 1, "profile": "stage"},
        {"id": "stage_rev", "subtime": 20, "res": 1, "profile": "stage"},
    ], profiles, nb_res=2)
    options = {"allocs": {"w0!bb": "0", "w0!stage": "1", "w0!stage_rev": "0"},
               "storage_mapping": {"w0!bb": {"bb": 3}, "w0!stage": {"src": 2, "dst": 3},
                                   "w0!stage_rev": {"src": 3, "dst": 2}}}
    run = run_sim(tmp_path, workloads=[w], scheduler="fixed", options=options,
                  args=["-r", "node_2,node_3:storage"]).check()
    jobs = run.jobs()
    check_exec(jobs, {
        # node_3 -> node_0: 1.25e9 B on 1.25 GB/s links
        "w0!bb": 1.0 + LAT,
        # data_staging moves 2.5e9 B from storage to storage (node_2 -> node_3 and back): 2 s;
        # the job's own allocation only hosts the job actor
        "w0!stage": 2.0 + LAT,
        "w0!stage_rev": 2.0 + LAT,
    })
    assert jobs["w0!stage"]["allocated_resources"] == "1"
    # the job actor of a data_staging job runs on its allocation's first host, created there
    # when the server handles the decision: it starts at its submission (dm = 0), like the others
    assert [jobs[j]["starting_time"] for j in ("w0!bb", "w0!stage", "w0!stage_rev")] == \
        ["1.000000", "10.000000", "20.000000"]


def test_speed_changes_mid_run(tmp_path):
    """JobRun.set_rate through a test hook (``--speed-hook``): delay and ptask leaves, composed."""
    profiles = {
        "d10": {"type": "delay", "delay": 10},
        "p10": {"type": "parallel_homogeneous", "cpu": 1e10, "com": 0},
        "d2": {"type": "delay", "delay": 2},
        "p3": {"type": "parallel_homogeneous", "cpu": 3e9, "com": 0},
        "seq": {"type": "composed", "seq": ["d2", "p3"]},
    }
    w = workload(tmp_path / "w.json", [
        {"id": "sd", "subtime": 1, "res": 1, "profile": "d10"},
        {"id": "sp", "subtime": 1, "res": 1, "profile": "p10"},
        {"id": "seq", "subtime": 1, "res": 1, "profile": "seq"},
        {"id": "ref", "subtime": 1, "res": 1, "profile": "p10"},
    ], profiles)
    plan = {"w0!sd": [[5, 0.5], [9, 2.0]], "w0!sp": [[5, 0.5], [9, 2.0]], "w0!seq": [[2, 0.5]]}
    run = run_sim(tmp_path, workloads=[w], scheduler="fixed",
                  options={"allocs": {"w0!sd": "0", "w0!sp": "1", "w0!seq": "2", "w0!ref": "3"}},
                  args=["--speed-hook", "sim_speed_hook:PlannedRates"],
                  env={"COBURST_TEST_RATE_PLAN": json.dumps(plan)}).check()
    jobs = run.jobs()
    s = 1  # every job starts at its submission (dm = 0, executed at once)
    for row in jobs.values():
        assert row["starting_time"] == f6(s), row
    # a rate change keeps the work done and runs the rest at the new rate (JobRun.set_rate).
    # 10 s of work: 5 - s = 4 s done at rate 1, then 9 - 5 = 4 s at rate 0.5 (2 s of work),
    # then the remaining 10 - 4 - 2 = 4 s of work at rate 2: 2 s, ends at 11.
    # The same for the delay leaf and for the 1e10-flop parallel task (restarted each time
    # with its remaining flops scaled by 1 / rate: 6e9 / 0.5 = 1.2e10, then 4e9 / 2 = 2e9).
    for jid in ("w0!sd", "w0!sp"):
        assert (jobs[jid]["final_state"], jobs[jid]["finish_time"]) == ("COMPLETED_SUCCESSFULLY", f6(11)), jobs[jid]
        assert jobs[jid]["execution_time"] == f6(11 - s), jobs[jid]
    # composed: d2 runs from s = 1; at 2, 1 s of it is done; the remaining 1 s of work at rate
    # 0.5 ends it at 2 + 2 = 4; the 3 Gflop ptask then runs at half speed: 6 s, ends at 10
    assert jobs["w0!seq"]["finish_time"] == f6(2 + 2 * 1 + 6), jobs["w0!seq"]
    # the untouched job runs at full speed
    assert (jobs["w0!ref"]["execution_time"], jobs["w0!ref"]["finish_time"]) == (f6(10.0), f6(s + 10.0))
