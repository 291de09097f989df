"""Batsim 4.2.1's ``additional_io_job`` (EXECUTE_JOB) on ``coburst sim`` and on the real
Batsim: identical outputs (everything :func:`crossengine.assert_identical` compares), and
the same refusals.

The scheduler is ``tests/schedulers/ioJobs.py`` (pybatsim 3.2.1's
``execute_jobs(jobs, io_jobs={job_id: {"alloc", "profile_name", "profile"?}})``).  The
platform is ``tests/data/cluster_master.xml`` (4 nodes, the master behind a backbone) with
``node_3`` made a storage host (``-r node_3:storage``): machines 0-2 compute, 3 stores.

What Batsim 4.2.1 does (``protocol.cpp`` ``handle_execute_job``, ``jobs_execution.cpp``
``initialize_sequential_tasks``, ``task_execution.cpp`` ``execute_parallel_task``), checked
here: each parallel-task leaf of the job merges the I/O profile of the same place in the I/O
profile tree into its parallel task, which then runs on the union of both allocations; a
delay (and send, recv, usage trace) leaf ignores it; only the job's own allocation counts as
used (machine states, ``_jobs.csv``, Pajé trace); an I/O allocation outside the platform is
fine until a parallel task merges it.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from crossengine import assert_energy_identical, assert_identical, jobs_rows, needs_batsim, run_both
from simharness import BATSIM, DATA, SCHEDULERS, run_sim, workload

pytestmark = pytest.mark.timeout(600)

PLATFORM = DATA / "cluster_master.xml"
ARGS = ["-m", "master_0", "-r", "node_3:storage"]

PROFILES = {
    "ph": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e7},
    "ph2": {"type": "parallel_homogeneous", "cpu": 5e8, "com": 2e8},
    "nocom": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0},
    "par": {"type": "parallel", "cpu": [1e9, 5e8], "com": [0, 1e8, 2e8, 0]},
    "pht": {"type": "parallel_homogeneous_total", "cpu": 3e9, "com": 3e8},
    "pfs": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e9, "bytes_to_write": 2e8},
    "d": {"type": "delay", "delay": 3},
    "long": {"type": "parallel_homogeneous", "cpu": 6e9, "com": 0},
    "seq": {"type": "composed", "repeat": 2, "seq": ["ph", "d", "ph2"]},
    "inner": {"type": "composed", "seq": ["ph2", "d"]},
    "nested": {"type": "composed", "seq": ["inner", "ph"]},
    "or_else": {"type": "recv", "timeout": "chosen", "success": "d"},
    "chosen": {"type": "parallel_homogeneous", "cpu": 2e9, "com": 1e7},  # (kept loaded by "keep")
    "talk": {"type": "composed", "seq": ["or_else", "ph2"]},
    # I/O profiles (named by EXECUTE_JOB; the workload keeps them through "keep")
    "io": {"type": "parallel_homogeneous", "cpu": 0, "com": 2.5e9},
    "io2": {"type": "parallel_homogeneous", "cpu": 0, "com": 1e9},
    "io_par": {"type": "parallel", "cpu": [2e8, 0], "com": [0, 3e9, 1e9, 0]},
    "io_pht": {"type": "parallel_homogeneous_total", "cpu": 0, "com": 6e9},
    "io_cpu": {"type": "parallel", "cpu": [2e9, 0], "com": [0, 1e9, 1e9, 0]},
    "io_seq": {"type": "composed", "seq": ["io", "d", "io2"]},
    "io_inner": {"type": "composed", "seq": ["io2", "ph", "io"]},  # longer than "inner": fine
    "io_nested": {"type": "composed", "seq": ["io_inner", "io"]},
    "io_talk": {"type": "composed", "seq": ["io", "io2"]},
    "keep": {"type": "composed", "seq": ["io", "io2", "io_par", "io_pht", "io_cpu", "io_seq", "io_nested",
                                         "io_talk", "chosen"]},
}

#: (job id, subtime, res, profile, walltime or None, job alloc, additional_io_job or None)
CASES = [
    # another job computes alone on node 2 (coburst counts it down itself) when an I/O task
    # starts computing there too: both share node 2's CPU
    ("victim", 0, 1, "long", None, "2", None),
    ("intruder", 1, 2, "ph", None, "0-1", {"alloc": "2-3", "profile_name": "io_cpu"}),
    ("after", 20, 1, "long", None, "2", None),  # (node 2 was used by I/O: coburst leaves it to the kernel)
    ("overlap", 30, 2, "ph", None, "0-1", {"alloc": "1 3", "profile_name": "io"}),
    ("solo_io", 40, 2, "ph", None, "0-1", {"alloc": "2-3", "profile_name": "io_cpu"}),  # node 2 idle for Batsim
    ("inline_disjoint", 50, 2, "ph", None, "0-1",
     {"alloc": "2-3", "profile_name": "io_inline", "profile": {"type": "parallel_homogeneous", "cpu": 0,
                                                               "com": 2e9}}),
    ("parallel", 70, 2, "par", None, "0-1", {"alloc": "0 3", "profile_name": "io_par"}),
    ("total", 90, 3, "pht", None, "0-2", {"alloc": "1-3", "profile_name": "io_pht"}),
    ("no_job_comm", 110, 2, "nocom", None, "0-1", {"alloc": "0-1 3", "profile_name": "io"}),
    ("pfs_quirk", 130, 2, "pfs", None, "0-1", {"alloc": "1 3", "profile_name": "io"}),
    ("delay_outside", 150, 1, "d", None, "0", {"alloc": "7", "profile_name": "io"}),
    ("composed", 170, 2, "seq", None, "1-2", {"alloc": "0 3", "profile_name": "io_seq"}),
    ("nested", 210, 2, "nested", None, "0-1", {"alloc": "2-3", "profile_name": "io_nested"}),
    ("recv", 250, 1, "talk", None, "2", {"alloc": "0 3", "profile_name": "io_talk"}),
    ("walltime", 270, 2, "ph", 1.5, "0-1", {"alloc": "1 3", "profile_name": "io"}),
    ("killed", 290, 2, "seq", None, "0-1", {"alloc": "1 3", "profile_name": "io_seq"}),
    ("keeper", 500, 2, "keep", None, "0-1", None),  # rejected: keeps the I/O profiles loaded
]


def case_workload(tmp_path, cases=CASES):
    jobs = [{"id": jid, "subtime": t, "res": res, "profile": prof, **({"walltime": wall} if wall else {})}
            for jid, t, res, prof, wall, _, _ in cases]
    options = {"allocs": {f"w0!{jid}": alloc for jid, *_, alloc, _ in cases},
               "io_jobs": {f"w0!{jid}": io for jid, *_, io in cases if io is not None},
               "reject": ["w0!keeper"], "kill": [[295.5, ["w0!killed"]]]}
    # composed profiles no job reaches are left out: Batsim drops them at load, and the
    # profiles they list survive or not depending on its hash-map order
    reached, todo = set(), [j["profile"] for j in jobs]
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo.extend(PROFILES[name].get("seq", []))
    profiles = {k: p for k, p in PROFILES.items() if k in reached or p["type"] != "composed"}
    return workload(tmp_path / "w.json", jobs, profiles), options


@needs_batsim
def test_merged_parallel_tasks(tmp_path):
    """Every kind of merge (overlapping, disjoint, inline, parallel, total amount, no job
    communication, a PFS job's quirk), I/O ignored by delay and recv leaves, composed and
    nested composed profiles, a walltime reached and a kill during a merged task, an I/O task
    sharing the CPU of another job's machine."""
    wl, options = case_workload(tmp_path)
    batsim, coburst = run_both(tmp_path, workloads=[wl], platform=PLATFORM, scheduler="ioJobs", options=options,
                               args=ARGS)
    assert_identical(batsim, coburst)
    rows = {r["job_id"]: r for r in jobs_rows(coburst)}
    assert rows["walltime"]["final_state"] == "COMPLETED_WALLTIME_REACHED"
    assert rows["killed"]["final_state"] == "COMPLETED_KILLED"
    assert rows["overlap"]["allocated_resources"] == "0-1"  # the I/O machines are not counted
    # the I/O transfers set the pace: 2.5e9 bytes over a 1.25 GB/s link
    assert float(rows["overlap"]["execution_time"]) > 2
    # node 2 shared with the intruder's I/O computation: the victim took longer than 6 s
    assert float(rows["victim"]["execution_time"]) > 6.5
    killed = [m["raw"] for m in coburst.messages() if m["dir"] == "in" and "JOB_KILLED" in m["raw"]]
    assert '"job_progress":{"w0!killed":{"profile_name":"seq","current_task_index":2,"current_task":{"profile_name":"ph2"' in killed[0]


ENERGY_PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="root" routing="Full">
    <cluster id="c" prefix="node_" suffix="" radical="0-3" speed="1Gf, 500Mf" bw="1250MBps" lat="50us"
             bb_bw="2500MBps" bb_lat="500us">
      <prop id="wattage_per_state" value="95.0:101.5:190.5, 94.0:99.0:172.25"/>
      <prop id="wattage_off" value="9.75"/>
    </cluster>
    <cluster id="m" prefix="master_" suffix="" radical="0-0" speed="1Gf" bw="1250MBps" lat="20us"
             bb_bw="2500MBps" bb_lat="10us">
      <prop id="wattage_per_state" value="100:200"/>
    </cluster>
    <link id="ml" bandwidth="1250MBps" latency="100us"/>
    <zoneRoute src="m" dst="c" gw_src="master_m_router" gw_dst="node_c_router"><link_ctn id="ml"/></zoneRoute>
  </zone>
</platform>
"""


@needs_batsim
def test_merged_parallel_tasks_with_energy(tmp_path):
    """-E: the machines' energy while merged tasks load them (the job's consumed energy counts
    its own allocation only), an I/O task sharing another job's machine, pstate changes of a
    machine a merged task computes on, a walltime reached."""
    names = ("victim", "intruder", "after", "overlap", "solo_io", "parallel", "walltime", "keeper")
    wl, options = case_workload(tmp_path, [c for c in CASES if c[0] in names])
    options.pop("kill")
    # node 2 slows down while the victim and the intruder's I/O computation share it, then
    # while only solo_io's I/O computes there (Batsim counts node 2 idle then)
    options["pstates"] = [[2, "2", "1"], [3.5, "2", "0"], [41, "2", "1"], [42.5, "2", "0"]]
    platform = tmp_path / "energy.xml"
    platform.write_text(ENERGY_PLATFORM)
    batsim, coburst = run_both(tmp_path, workloads=[wl], platform=platform, scheduler="ioJobs", options=options,
                               args=ARGS + ["-E"])
    assert_energy_identical(batsim, coburst)


def _io_case(name: str):
    """(profiles added, jobs, allocs, additional_io_job, extra options) of a refusal case."""
    ph = [{"id": 1, "subtime": 0, "res": 2, "profile": "ph"}]
    seq = [{"id": 1, "subtime": 0, "res": 2, "profile": "pair"}]
    base = {"pair": {"type": "composed", "seq": ["ph", "d"]}}
    return {
        "io_pfs": ({}, ph, {"alloc": "3", "profile_name": "io_pfs"}),
        "io_com_0": ({}, ph, {"alloc": "3", "profile_name": "io0"}),
        "io_parallel_size": ({}, ph, {"alloc": "1-3", "profile_name": "io_par"}),
        "io_delay_on_ptask": ({}, ph, {"alloc": "3", "profile_name": "d"}),
        "outside_platform": ({}, ph, {"alloc": "3 7", "profile_name": "io"}),
        "too_big": ({}, [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}], {"alloc": "0-9", "profile_name": "io"}),
        "empty_alloc": ({}, ph, {"alloc": "", "profile_name": "io"}),
        "seq_io_leaf_job": ({}, ph, {"alloc": "3", "profile_name": "io_pair"}),
        "leaf_io_seq_job": (base, seq, {"alloc": "3", "profile_name": "io"}),
        "seq_sizes": (base, seq, {"alloc": "3", "profile_name": "io_seq"}),
        "inline_seq": (base, seq, {"alloc": "3", "profile_name": "new",
                                   "profile": {"type": "composed", "seq": ["io", "io"]}}),
        "storage_computes": ({}, ph, {"alloc": "2-3", "profile_name": "io_cpu_storage"}),
        "name_exists": ({}, ph, {"alloc": "3", "profile_name": "io", "profile": {"type": "delay", "delay": 1}}),
        "unknown_name": ({}, ph, {"alloc": "3", "profile_name": "nope"}),
        # job 0's composed profile is discarded when it ends, and its profiles with it
        "collected_sub_profile": ({"cp": {"type": "composed", "seq": ["io2", "d"]}},
                                  [{"id": 0, "subtime": 0, "res": 2, "profile": "cp"}, ph[0] | {"subtime": 10}],
                                  {"alloc": "1 3", "profile_name": "io2"}),
        "data_staging_job": ({"stage": {"type": "data_staging", "nb_bytes": 1e8, "from": "pfs", "to": "pfs"}},
                             [{"id": 1, "subtime": 0, "res": 1, "profile": "stage"}],
                             {"alloc": "3", "profile_name": "io"}),
    }[name]


#: case -> (what coburst says, what Batsim 4.2.1 prints as it aborts; None: it crashes,
#: reading outside its data: a segmentation fault)
REFUSALS = {
    "io_pfs": ("storage mapping is null", "storage mapping is null but the code uses it!"),
    "io_com_0": ("communicates nothing", None),
    "io_parallel_size": ("has 2 executors but the I/O allocation has 3 machines",
                         "the number of resources given by the allocation (3) is different"),
    "io_delay_on_ptask": ("Should not be reached", "Should not be reached."),
    "outside_platform": ("Cannot get machine 7", "Cannot get machine 7: it does not exist"),
    "too_big": ("Cannot get machine 4", "Cannot get machine 4: it does not exist"),
    "empty_alloc": ("bad IO allocation", "Invalid JSON message: bad IO allocation"),
    "seq_io_leaf_job": ("must have compatible profile", "must have compatible profile in order to be merged"),
    "leaf_io_seq_job": ("a job sequence needs an I/O sequence", None),
    "seq_sizes": ("has 3 profiles but the job's sequence 'pair' has 2",
                  "IO profile sequence size (3) and job profile sequence size (2) should be the same"),
    "inline_seq": ("never resolved", None),
    "storage_computes": ("assigned to storage node (id=3, name='node_3')",
                         "Some computation (1e+06) is assigned to storage node (id=3, name='node_3')"),
    "name_exists": ("already exists", "The given profile name 'io' already exists!"),
    "unknown_name": ("it does not exist", "The given profile name 'nope' does not exists"),
    "data_staging_job": ("Unknown storage label='pfs'", "Unknown storage label='pfs'"),
    "collected_sub_profile": ("discarded it when the last job using it ended",
                              "Cannot get profile 'io2': it existed some time ago but is no longer accessible"),
}
REFUSAL_PROFILES = {
    **{k: PROFILES[k] for k in ("ph", "d", "io", "io_seq", "io2")},
    "io_pfs": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e8, "bytes_to_write": 0},
    "io0": {"type": "parallel_homogeneous", "cpu": 0, "com": 0},
    "io_par": {"type": "parallel", "cpu": [0, 0], "com": [0, 1e8, 1e8, 0]},
    "io_pair": {"type": "composed", "seq": ["io", "io"]},
    "io_cpu_storage": {"type": "parallel", "cpu": [0, 1e6], "com": [0, 1e8, 1e8, 0]},
    "keep": {"type": "composed", "seq": ["io", "io_seq", "io_pfs", "io0", "io_par", "io_pair", "io_cpu_storage",
                                         "d"]},
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_refusals(tmp_path, case):
    """Inputs on which Batsim 4.2.1 aborts or crashes: coburst stops (exit 3) naming why.
    Without Batsim (``BATSIM`` unset) only coburst runs."""
    profiles, jobs, io = _io_case(case)
    jobs = jobs + [{"id": 9, "subtime": 500, "res": 2, "profile": "keep"}]
    wl = workload(tmp_path / "w.json", jobs, {**REFUSAL_PROFILES, **profiles})
    res = next(j["res"] for j in jobs if j["id"] == 1)
    options = {"allocs": {"w0!1": "0-1" if res == 2 else "0", "w0!9": "0-1"},
               "io_jobs": {"w0!1": io}, "reject": ["w0!9"]}
    for engine in ("batsim", "coburst") if BATSIM else ("coburst",):
        run = run_sim(tmp_path, engine=engine, prefix=engine, workloads=[wl], scheduler="ioJobs", platform=PLATFORM,
                      options=options, args=ARGS, wait=60, timeout=10)
        assert run.returncode != 0, f"{engine} accepted it\n" + run.report()
        ours, batsims = REFUSALS[case]
        if engine == "coburst":
            assert run.returncode == 3, run.report()
            assert ours in run.stderr, run.stderr
            assert "Traceback" not in run.stderr
        elif batsims is None:
            assert run.returncode == -11, run.report()  # SIGSEGV
        else:
            assert batsims in run.stderr, run.report()


@needs_batsim
def test_mapping_with_additional_io_job(tmp_path):
    """EXECUTE_JOB carries at most one of mapping, storage_mapping, additional_io_job
    (Batsim 4.2.1: 'the data value ... should be of size in {2,3}')."""
    wl = workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 2, "profile": "ph"},
                                        {"id": 9, "subtime": 500, "res": 2, "profile": "io"}], PROFILES)
    options = {"allocs": {"w0!1": "0-1", "w0!9": "0-1"}, "mapping": {"w0!1": {"0": 0, "1": 1}},
               "io_jobs": {"w0!1": {"alloc": "3", "profile_name": "io"}}, "reject": ["w0!9"]}
    for engine in ("batsim", "coburst"):
        run = run_sim(tmp_path, engine=engine, prefix=engine, workloads=[wl], scheduler="ioJobs", platform=PLATFORM,
                      options=options, args=ARGS, wait=60, timeout=10)
        assert run.returncode != 0, f"{engine} accepted it\n" + run.report()
    assert "at most one of mapping, storage_mapping, additional_io_job" in run.stderr


def test_in_process_without_batsim(tmp_path):
    """``coburst run`` with the scheduler in-process (no Batsim needed): the dates Batsim
    4.2.1 gives (measured on the real binary, see test_merged_parallel_tasks)."""
    names = ("victim", "intruder", "overlap", "inline_disjoint", "delay_outside", "composed", "keeper")
    wl, options = case_workload(tmp_path, [c for c in CASES if c[0] in names])
    options.pop("kill")
    prefix = tmp_path / "out"
    cmd = [sys.executable, "-m", "coburst", "run", str(SCHEDULERS / "ioJobs.py"), "--transport", "inprocess", "-q",
           "-o", json.dumps(options), "-p", str(PLATFORM), "-e", str(prefix), "-w", str(wl), *ARGS]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240, cwd=tmp_path,
                          env={"PYTHONPATH": str(SCHEDULERS), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(tmp_path / "out_jobs.csv", newline="") as f:
        rows = {r["job_id"]: r for r in csv.DictReader(f)}
    assert {k: (r["final_state"], r["execution_time"], r["allocated_resources"]) for k, r in rows.items()} == {
        "victim": ("COMPLETED_SUCCESSFULLY", "8.000000", "2"),  # node 2's CPU shared with the I/O task
        "intruder": ("COMPLETED_SUCCESSFULLY", "4.000600", "0-1"),
        "overlap": ("COMPLETED_SUCCESSFULLY", "2.008600", "0-1"),
        "inline_disjoint": ("COMPLETED_SUCCESSFULLY", "1.608600", "0-1"),
        "delay_outside": ("COMPLETED_SUCCESSFULLY", "3.000000", "0"),
        "composed": ("COMPLETED_SUCCESSFULLY", "11.938400", "1-2"),
        "keeper": ("REJECTED", "", ""),
    }


def test_registered_composed_profile(tmp_path):
    """A composed profile registered during the simulation (REGISTER_PROFILE) is never
    resolved by Batsim 4.2.1 (like an I/O sequence given in EXECUTE_JOB): a job running it
    crashes Batsim (segmentation fault); coburst stops naming why."""
    wl = workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}], PROFILES)
    options = {"profiles": {"a": {"type": "delay", "delay": 2}, "s": {"type": "composed", "seq": ["a", "a"]}},
               "jobs": [{"id": "dyn!1", "res": 1, "walltime": 10, "profile": "s", "alloc": "1"}]}
    for engine in ("batsim", "coburst") if BATSIM else ("coburst",):
        run = run_sim(tmp_path, engine=engine, prefix=engine, workloads=[wl], scheduler="dynamic", platform=PLATFORM,
                      options=options, args=["-m", "master_0", "--enable-dynamic-jobs"], wait=60, timeout=10)
        assert run.returncode == (3 if engine == "coburst" else -11), run.report()
    assert "registered during the simulation" in run.stderr
