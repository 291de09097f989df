"""Cross-engine conformance: the same scheduler and inputs on the real Batsim 4.2.1 and on
``coburst sim`` give identical messages and outputs (see ``crossengine.py`` for exactly what
is compared).  Needs the real binary (environment variable ``BATSIM``).

Platforms (all loadable by Batsim 4.2.1):

* ``tests/data/cluster_master.xml`` — 4-node flat cluster, the master in a second cluster
  behind a backbone link (``-m master_0``): messages between Batsim's own actors cost a
  route (50 us), node -> master 680 us;
* ``tests/data/cluster100_master.xml`` — the same with 100 nodes;
* ``platforms/dragonfly_small.xml`` / ``dragonfly96.xml`` — the burst-buffer dragonflies
  (master tagged ``role=master``, PFS host, storage nodes).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from crossengine import assert_identical, jobs_rows, needs_batsim, run_both
from simharness import DATA, REPO, workload

pytestmark = [needs_batsim, pytest.mark.timeout(600)]

C4 = DATA / "cluster_master.xml"
C100 = DATA / "cluster100_master.xml"
M = ["-m", "master_0"]
SMALL = REPO / "platforms" / "dragonfly_small.xml"
DF96 = REPO / "platforms" / "dragonfly96.xml"


def kth_part(tmp_path, n: int, start: int = 0):
    """``n`` jobs of the bundled KTH-SP2 delay workload (100 nodes)."""
    doc = json.loads((REPO / "workloads" / "kth_sp2_delay_5000.json").read_text())
    jobs = doc["jobs"][start:start + n]
    t0 = jobs[0]["subtime"]
    doc["jobs"] = [{**j, "subtime": j["subtime"] - t0} for j in jobs]
    used = {j["profile"] for j in doc["jobs"]}
    doc["profiles"] = {k: v for k, v in doc["profiles"].items() if k in used}
    path = tmp_path / "kth.json"
    path.write_text(json.dumps(doc))
    return path


# ---------------------------------------------------------------- pybatsim's bundled schedulers

def test_easy_backfill_on_kth(tmp_path):
    w = kth_part(tmp_path, 400, start=1000)
    assert_identical(*run_both(tmp_path, workloads=[w], platform=C100, scheduler="easyBackfill", args=M))


def test_filler_sched(tmp_path):
    """pybatsim's fillerSched picks among waiting jobs by iterating over a ``set`` of Job
    objects (hashed by memory address): with two or more jobs waiting its decisions change
    from run to run, on either engine.  Here at most one job waits at a time; its
    ``consume_time`` makes every decision arrive 5 ms after the event (REQ-REP sleeps)."""
    w = workload(tmp_path / "w.json", [
        {"id": i, "subtime": 10 * i + (i % 3) * 0.25, "res": 1 + i % 4, "walltime": 20,
         "profile": ["d7", "d3", "d9.5"][i % 3]} for i in range(40)],
        {"d7": {"type": "delay", "delay": 7}, "d3": {"type": "delay", "delay": 3},
         "d9.5": {"type": "delay", "delay": 9.5}})
    assert_identical(*run_both(tmp_path, workloads=[w], platform=C4, scheduler="fillerSched", args=M))


def test_schedfcfs(tmp_path):
    # pybatsim's schedFcfs asserts start times > 0: submissions after t=0
    w = workload(tmp_path / "w.json", [
        {"id": i, "subtime": 1 + 3 * (i % 5), "res": 1 + i % 4, "walltime": 50,
         "profile": ["d7", "d13", "d60"][i % 3]} for i in range(30)],
        {"d7": {"type": "delay", "delay": 7}, "d13": {"type": "delay", "delay": 13},
         "d60": {"type": "delay", "delay": 60}})
    assert_identical(*run_both(tmp_path, workloads=[w], platform=C4, scheduler="schedFcfs", args=M))


# ---------------------------------------------------------------- coburst's scheduler entry files

@pytest.mark.parametrize("entry, options", [
    ("coburstFcfs.py", {}),
    ("coburstEasy.py", {}),
    ("coburstBackfill.py", {"policy": "backfill-sjf-1"}),
    ("coburstBackfill.py", {"policy": "conservative"}),
    ("coburstBackfill.py", {"policy": "filler"}),
])
def test_coburst_entry_files_on_the_dragonfly(tmp_path, entry, options):
    w = REPO / "workloads" / "kth_alloc_only_sample.json"
    assert_identical(*run_both(tmp_path, workloads=[w], platform=SMALL, options=options,
                               scheduler=str(REPO / "schedulers" / entry)))


# ---------------------------------------------------------------- every profile type

def test_compute_profiles(tmp_path):
    profiles = {
        "d10": {"type": "delay", "delay": 10},
        "ph_cpu": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0},
        "ph_com": {"type": "parallel_homogeneous", "cpu": 0, "com": 3.125e8},
        "par": {"type": "parallel", "cpu": [1e9, 2e9], "com": [0, 1.25e9, 0, 0]},
        "pht": {"type": "parallel_homogeneous_total", "cpu": 4e9, "com": 1e8},
        "ph1": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e6},
        "d1": {"type": "delay", "delay": 1.5},
        "seq": {"type": "composed", "seq": ["d1", "ph1"], "repeat": 3},
    }
    w = workload(tmp_path / "w.json", [
        {"id": "delay", "subtime": 1, "res": 1, "profile": "d10"},
        {"id": "ph_cpu", "subtime": 20, "res": 2, "profile": "ph_cpu"},
        {"id": "ph_com", "subtime": 30, "res": 3, "profile": "ph_com"},
        {"id": "par", "subtime": 40, "res": 2, "profile": "par"},
        {"id": "pht", "subtime": 50, "res": 2, "profile": "pht"},
        {"id": "pht_wide", "subtime": 60, "res": 2, "profile": "pht"},
        {"id": "seq", "subtime": 70, "res": 1, "profile": "seq"},
        {"id": "c1", "subtime": 90, "res": 2, "profile": "ph_com"},  # contention: two at once
        {"id": "c2", "subtime": 90, "res": 2, "profile": "ph_com"},
    ], profiles)
    allocs = {"w0!delay": "0", "w0!ph_cpu": "0-1", "w0!ph_com": "0-2", "w0!par": "0-1", "w0!pht": "2-3",
              "w0!pht_wide": "0-3", "w0!seq": "3", "w0!c1": "0-1", "w0!c2": "2-3"}
    assert_identical(*run_both(tmp_path, workloads=[w], platform=C4, scheduler="fixed",
                               options={"allocs": allocs}, args=M))


def test_storage_profiles_with_storage_mapping(tmp_path):
    profiles = {
        "pfs_rw": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e9, "bytes_to_write": 5e8,
                   "storage": "bb"},
        "stage": {"type": "data_staging", "nb_bytes": 2.5e9, "from": "bb", "to": "pfs"},
        "mixed": {"type": "composed", "seq": ["pfs_rw", "stage"], "repeat": 2},
    }
    w = workload(tmp_path / "w.json", [
        {"id": "rw", "subtime": 1, "res": 2, "profile": "pfs_rw"},
        {"id": "stage", "subtime": 10, "res": 1, "profile": "stage"},
        {"id": "mixed", "subtime": 20, "res": 1, "profile": "mixed"},
        {"id": "both1", "subtime": 40, "res": 1, "profile": "pfs_rw"},
        {"id": "both2", "subtime": 40, "res": 1, "profile": "pfs_rw"},
    ], profiles, nb_res=2)
    smap = {"bb": 2, "pfs": 3}
    options = {"allocs": {"w0!rw": "0-1", "w0!stage": "0", "w0!mixed": "1", "w0!both1": "0", "w0!both2": "1"},
               "storage_mapping": {j: smap for j in ("w0!rw", "w0!stage", "w0!mixed", "w0!both1", "w0!both2")}}
    assert_identical(*run_both(tmp_path, workloads=[w], platform=C4, scheduler="fixed", options=options,
                               args=M + ["-r", "node_2,node_3:storage"]))


# ---------------------------------------------------------------- walltimes, kills, calls, metadata

def test_walltimes_and_return_codes(tmp_path):
    profiles = {
        "d10": {"type": "delay", "delay": 10}, "d5": {"type": "delay", "delay": 5},
        "d2": {"type": "delay", "delay": 2}, "d1": {"type": "delay", "delay": 1},
        "p10": {"type": "parallel_homogeneous", "cpu": 1e10, "com": 1e6},
        "seq3": {"type": "composed", "seq": ["d2", "d2", "d2"]},
        "seqp": {"type": "composed", "seq": ["d2", "p10"]},
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
        {"id": "seqequal", "subtime": 40, "res": 1, "walltime": 6, "profile": "seq3"},
        {"id": "seqp", "subtime": 40, "res": 2, "walltime": 4, "profile": "seqp"},
        {"id": "fail", "subtime": 20, "res": 1, "walltime": 10, "profile": "fail"},
        {"id": "seqfail", "subtime": 20, "res": 1, "walltime": 100, "profile": "seqfail"},
    ], profiles)
    allocs = {"w0!over": "0", "w0!equal": "1", "w0!under": "2", "w0!nowall": "3", "w0!ptask": "0",
              "w0!seq": "1", "w0!fail": "2", "w0!seqfail": "3", "w0!seqequal": "0", "w0!seqp": "1-2"}
    assert_identical(*run_both(tmp_path, workloads=[w], platform=C4, scheduler="fixed",
                               options={"allocs": allocs}, args=M))


SHARED_LINK = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="master" speed="1Gf"><prop id="role" value="master"/></host>
    <host id="n0" speed="1Gf"/>
    <host id="n1" speed="1Gf"/>
    <link id="a" bandwidth="1kBps" latency="100us"/>
    <link id="b" bandwidth="50MBps" latency="20us"/>
    <route src="n0" dst="master"><link_ctn id="a"/></route>
    <route src="n1" dst="master"><link_ctn id="b"/><link_ctn id="a"/></route>
    <route src="n0" dst="n1"><link_ctn id="a"/><link_ctn id="b"/></route>
  </zone>
</platform>
"""


@pytest.mark.parametrize("com", [0.0, 1e6])
def test_walltime_message_shares_the_links_of_its_parallel_task(tmp_path, com):
    """A communicating parallel task keeps its links after its walltime (as in Batsim), and
    the job's JOB_COMPLETED message crosses one of them: it gets its share of the link (half
    of it, beside the task's flow: 2 ms for its byte instead of 1 ms) and reaches the server
    after B's submission (coburst's messages used to travel on links of their own,
    which decided differently at such walltime kills)."""
    platform = tmp_path / "shared_link.xml"
    platform.write_text(SHARED_LINK)
    profiles = {"comm": {"type": "parallel", "cpu": [1e6, 1e6], "com": [0, 0, com, 0]},
                "d5": {"type": "delay", "delay": 5}}
    w = workload(tmp_path / "w.json", [
        {"id": "A", "subtime": 0, "res": 2, "walltime": 1, "profile": "comm"},
        {"id": "B", "subtime": 1.0016, "res": 1, "walltime": 50, "profile": "d5"},
    ], profiles, nb_res=2)
    assert_identical(*run_both(tmp_path, workloads=[w], platform=platform, scheduler="easyBackfill"))


def test_kill_job_with_progress(tmp_path):
    profiles = {
        "d10": {"type": "delay", "delay": 10}, "d2": {"type": "delay", "delay": 2},
        "seq": {"type": "composed", "seq": ["d2", "d10"]},
        "p10": {"type": "parallel_homogeneous", "cpu": 1e10, "com": 1e6},
        "d1": {"type": "delay", "delay": 1},
    }
    w = workload(tmp_path / "w.json", [
        {"id": "delay", "subtime": 1, "res": 1, "profile": "d10"},
        {"id": "seq", "subtime": 1, "res": 1, "profile": "seq"},
        {"id": "ptask", "subtime": 1, "res": 1, "profile": "p10"},
        {"id": "short", "subtime": 1, "res": 1, "profile": "d1"},
        {"id": "late", "subtime": 1, "res": 1, "profile": "seq"},
    ], profiles)
    options = {"allocs": {"w0!delay": "0", "w0!seq": "1", "w0!ptask": "2", "w0!short": "3", "w0!late": "3"},
               "start_at": {"w0!late": 4},
               "kill": [[6, ["w0!delay"]], [6, ["w0!delay", "w0!seq", "w0!ptask"]], [7.25, ["w0!late"]]]}
    assert_identical(*run_both(tmp_path, workloads=[w], platform=C4, scheduler="fixed", options=options, args=M))


def test_call_me_later_metadata_and_rejections(tmp_path):
    w = workload(tmp_path / "w.json", [
        {"id": 1, "subtime": 1, "res": 1, "profile": "d1"},
        {"id": 2, "subtime": 1, "res": 4, "walltime": 20, "profile": "d1"},
        {"id": 3, "subtime": 2, "res": 1, "profile": "d1"},
        {"id": 4, "subtime": 2, "res": 2, "profile": "d1"},
    ], {"d1": {"type": "delay", "delay": 1}})
    options = {"reject": ["w0!2"], "metadata": {"w0!1": "phase=a, user 7; ok", "w0!3": "x"},
               "allocs": {"w0!1": "0", "w0!3": "1", "w0!4": "2-3"}, "start_at": {"w0!4": 3.5},
               "calls": [2.25, 30, 30.000001]}
    assert_identical(*run_both(tmp_path, workloads=[w], platform=C4, scheduler="fixed", options=options, args=M))


@pytest.mark.parametrize("ack", [False, True])
def test_dynamic_registration(tmp_path, ack):
    w = workload(tmp_path / "w.json", [{"id": 1, "subtime": 1, "res": 1, "profile": "d1"}],
                 {"d1": {"type": "delay", "delay": 1}})
    options = {"allocs": {"w0!1": "0"},
               "profiles": {"p5": {"type": "delay", "delay": 5},
                            "ph": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e7}},
               "jobs": [{"id": "dyn!a", "res": 2, "walltime": 10, "profile": "p5", "alloc": "1-2"},
                        {"id": "dyn!b", "res": 1, "walltime": 10, "profile": "ph", "alloc": "3"}]}
    args = M + ["--enable-dynamic-jobs"] + (["--acknowledge-dynamic-jobs"] if ack else [])
    assert_identical(*run_both(tmp_path, workloads=[w], platform=C4, scheduler="dynamic", options=options,
                               args=args))


@pytest.mark.parametrize("ack", [False, True])
def test_registered_numbers_are_kept_to_six_decimals(tmp_path, ack):
    """Batsim 4.2.1 keeps a registered profile or job as its Writer prints it back (every
    double "%6f"): a delay of 13.333333333333334 s lasts 13.333333 s, a walltime of
    2.4444444444 s is 2.444444 s, cpu 1.23456789e9 flops is 1234567890.000000 (not an integer
    of JSON: printed and read again) -- the dates, the machine times and the JOB_SUBMITTED
    the scheduler gets back show it."""
    w = workload(tmp_path / "w.json", [{"id": 1, "subtime": 1, "res": 1, "profile": "d1"}],
                 {"d1": {"type": "delay", "delay": 1}})
    options = {"allocs": {"w0!1": "0"},
               "profiles": {"third": {"type": "delay", "delay": 40 / 3},
                            "long": {"type": "delay", "delay": 5.0000004},
                            "ph": {"type": "parallel_homogeneous", "cpu": 1.23456789e9, "com": 1.0000007e7}},
               "jobs": [{"id": "dyn!a", "res": 1, "walltime": 100.123456789, "profile": "third", "alloc": "1"},
                        {"id": "dyn!b", "res": 1, "walltime": 2.4444444444, "profile": "long", "alloc": "2"},
                        {"id": "dyn!c", "res": 1, "walltime": -1, "profile": "ph", "alloc": "3"}]}
    args = M + ["--enable-dynamic-jobs", "--forward-profiles-on-submission"] + (
        ["--acknowledge-dynamic-jobs"] if ack else [])
    batsim, coburst = run_both(tmp_path, workloads=[w], platform=C4, scheduler="dynamic", options=options, args=args)
    assert_identical(batsim, coburst)
    rows = coburst.jobs()
    assert rows["dyn!a"]["execution_time"] == "13.333333"
    assert rows["dyn!b"]["final_state"] == "COMPLETED_WALLTIME_REACHED"


def test_several_workloads_and_options(tmp_path):
    w1 = workload(tmp_path / "w1.json", [{"id": i, "subtime": i, "res": 1, "profile": "d3"} for i in range(6)],
                  {"d3": {"type": "delay", "delay": 3}})
    w2 = workload(tmp_path / "w2.json", [{"id": i, "subtime": 0.5 + i, "res": 2, "profile": "d2"} for i in range(4)],
                  {"d2": {"type": "delay", "delay": 2}})
    args = M + ["--forward-profiles-on-submission", "--sched-cfg", '{"x": 1}', "--mmax", "3"]
    assert_identical(*run_both(tmp_path, workloads=[w1, w2], platform=C4, scheduler="easyBackfill", args=args))


def test_dragonfly96_parallel_homogeneous_kth(tmp_path):
    w = REPO / "workloads" / "kth_alloc_only_sample.json"
    assert_identical(*run_both(tmp_path, workloads=[w], platform=DF96,
                               scheduler=str(REPO / "schedulers" / "coburstEasy.py")))


# ---------------------------------------------------------------- random workloads

job_strategy = st.fixed_dictionaries({
    "subtime": st.integers(0, 40).map(float) | st.floats(0, 40, allow_nan=False).map(lambda x: round(x, 3)),
    "res": st.integers(1, 4),
    "delay": st.integers(1, 20),
    "walltime": st.sampled_from([-1, 5, 10, 20]),
})


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(jobs=st.lists(job_strategy, min_size=1, max_size=30))
def test_random_delay_workloads(tmp_path_factory, jobs):
    """Random delay workloads (ties of submission and end dates, walltimes equal to delays)
    under pybatsim's EASY backfilling (deterministic)."""
    scheduler = "easyBackfill"
    tmp_path = tmp_path_factory.mktemp("random")
    profiles = {f"d{j['delay']}": {"type": "delay", "delay": j["delay"]} for j in jobs}
    w = workload(tmp_path / "w.json", [
        {"id": i, "subtime": j["subtime"], "res": j["res"], "walltime": j["walltime"], "profile": f"d{j['delay']}"}
        for i, j in enumerate(jobs)], profiles)
    batsim, coburst = run_both(tmp_path, workloads=[w], platform=C4, scheduler=scheduler, args=M)
    assert_identical(batsim, coburst)
    assert len(jobs_rows(coburst)) == len(jobs)


def test_compute_sharing(tmp_path):
    """``--enable-compute-sharing``: jobs may share machines (co-scheduling will rely on it);
    delays overlap freely, parallel tasks share the CPUs (SimGrid's solver)."""
    profiles = {"d10": {"type": "delay", "delay": 10}, "d4": {"type": "delay", "delay": 4},
                "p4": {"type": "parallel_homogeneous", "cpu": 4e9, "com": 0},
                "p2": {"type": "parallel_homogeneous", "cpu": 2e9, "com": 1e6}}
    w = workload(tmp_path / "w.json", [
        {"id": "a", "subtime": 1, "res": 2, "profile": "d10"},
        {"id": "b", "subtime": 2, "res": 2, "profile": "d4"},
        {"id": "c", "subtime": 3, "res": 1, "profile": "p4"},
        {"id": "d", "subtime": 3, "res": 2, "profile": "p2"},
        {"id": "e", "subtime": 4, "res": 1, "walltime": 3, "profile": "p4"},
    ], profiles)
    allocs = {"w0!a": "0-1", "w0!b": "1-2", "w0!c": "2", "w0!d": "2-3", "w0!e": "2"}
    # (the Pajé trace is left out: which job Batsim draws on a shared machine depends on heap
    # addresses; a walltime-killed parallel task keeps its CPUs until its job is deleted — measured)
    assert_identical(*run_both(tmp_path, workloads=[w], platform=C4, scheduler="fixed", options={"allocs": allocs},
                               args=M + ["--enable-compute-sharing"]), trace=False)
