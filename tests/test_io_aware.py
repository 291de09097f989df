"""IO-Aware job execution (coburst/adapter/io_aware.py), end to end: real ``coburst sim``,
real pybatsim process running ``schedulers/coburstBackfill.py``."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

import pytest
from procset import ProcSet

from coburst.adapter import parse_options
from coburst.adapter.io_aware import parse_io
from coburst.errors import InputError
from simharness import REPO, run_sim, write_json

pytestmark = pytest.mark.timeout(240)

SMALL = REPO / "platforms" / "dragonfly_small.xml"
BIG = REPO / "platforms" / "dragonfly96.xml"
SCHED = str(REPO / "schedulers" / "coburstBackfill.py")
POLICIES = ("fcfs", "filler", "filler-sjf", "no-future-1", "backfill-1", "backfill-sjf-1", "conservative")
DYN = ("--enable-dynamic-jobs",)
TOL = 2e-3  # message delays between a decision and what it starts (a few 50-100 us hops)


def tol(res: int) -> float:
    """Lag allowed between a job's last sub-job end and its row's finish: the simultaneous
    completions of its per-node sub-jobs reach Batsim's server one message at a time."""
    return TOL + 2e-4 * res


def zone_props(path: Path) -> dict[str, str]:
    root = ET.parse(path).getroot().find("zone")
    return {p.get("id"): p.get("value") for p in root.findall("prop")}


PROPS = zone_props(SMALL)
SPEED = float(PROPS["host_speed"])  # flop/s of a compute node
LINK_BW = float(PROPS["link_bandwidth"])  # node <-> BB node links
PFS_BW = float(PROPS["pfs_bandwidth"])  # the one link every PFS transfer crosses
BB_CAP = int(PROPS["bb_capacity"])
NB_COMPUTE = 12


def io_field(phases: int, cpu: float, bb: int, ckpt: int) -> dict:
    """The ``io`` field as coburst/workloads/jobmodels.py writes it."""
    return {"phases": phases, "checkpoints": phases - 1,
            "stage_in": {"type": "data_staging", "nb_bytes": bb, "from": "pfs", "to": "bb"},
            "compute": {"type": "parallel_homogeneous", "cpu": cpu, "com": 0},
            "checkpoint": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 0, "bytes_to_write": ckpt,
                           "storage": "bb"},
            "flush": {"type": "data_staging", "nb_bytes": ckpt, "from": "bb", "to": "pfs"},
            "stage_out": {"type": "data_staging", "nb_bytes": bb, "from": "bb", "to": "pfs"}}


GB = 1_000_000_000
#: id -> (subtime, walltime, res, bb per node, phases, compute seconds per phase, checkpoint bytes)
SMALL_JOBS = {
    0: (0, 100, 4, 5 * GB, 3, 2, GB * 5 // 2),
    1: (0, 100, 4, 5 * GB, 2, 3, GB * 5 // 2),
    2: (1, 100, 4, 5 * GB, 1, 1, GB * 5 // 2),   # BB full (2 x 20 GB of 40 GB): waits for job 0 or 1
    3: (50, 15, 1, GB, 3, 10, GB // 2),           # walltime reached during its 2nd compute phase
    4: (50, 100, 2, 0, 2, 1, 0),                  # no BB request: compute phases only
}


def small_workload(tmp_path: Path, bad_io: bool = False) -> Path:
    """SMALL_JOBS; with ``bad_io``, job 5 has a malformed ``io`` field (2 checkpoints for 2 phases)."""
    jobs, profiles = [], {}
    for jid, (sub, wall, res, bb, phases, secs, ckpt) in SMALL_JOBS.items():
        io = io_field(phases, secs * SPEED, bb, ckpt)
        jobs.append({"id": jid, "subtime": sub, "walltime": wall, "res": res, "profile": f"p{jid}", "bb": bb,
                     "io": io})
        profiles[f"p{jid}"] = {"type": "parallel_homogeneous", "cpu": phases * secs * SPEED, "com": 0}
    if bad_io:
        io = {**io_field(2, SPEED, GB, GB // 2), "checkpoints": 2}
        jobs.append({"id": 5, "subtime": 60, "walltime": 100, "res": 1, "profile": "p5", "bb": GB, "io": io})
        profiles["p5"] = {"type": "parallel_homogeneous", "cpu": 2 * SPEED, "com": 0}
    return write_json(tmp_path / "io_small.json", {"nb_res": NB_COMPUTE, "jobs": jobs, "profiles": profiles})


def sample_workload(tmp_path: Path, name: str, count: int = 20, squeeze: float = 50.0) -> Path:
    """The first ``count`` jobs of a bundled sample, submitted ``squeeze`` times faster (queueing)."""
    doc = json.loads((REPO / "workloads" / name).read_text())
    jobs = doc["jobs"][:count]
    for job in jobs:
        job["subtime"] = round(job["subtime"] / squeeze, 3)
    doc["jobs"] = jobs
    doc["profiles"] = {j["profile"]: doc["profiles"][j["profile"]] for j in jobs}
    return write_json(tmp_path / name, doc)


def simulate(tmp_path, workload, platform=SMALL, args=DYN, options=None, prefix="out", wait=30.0):
    run = run_sim(tmp_path, workloads=[workload], platform=platform, scheduler=SCHED,
                  options=options or {"policy": "fcfs"}, args=args, timeout=30, prefix=prefix, wait=wait)
    run.check()
    assert run.sched_returncode == 0, run.report()
    return run


# ---------------------------------------------------------------------- reading results
def num(row, key):
    return float(row[key])


def parse_meta(meta: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in meta.split(";") if part)


def bb_bytes(meta: dict[str, str]) -> dict[int, int]:
    if "bb" not in meta:
        return {}
    return {int(b): int(v) for b, v in (x.split(":") for x in meta["bb"].split("/"))}


def split_rows(run):
    """(static rows by job id, sub-job rows by static job id then by sub-job tag)."""
    static, subs = {}, defaultdict(dict)
    for row in run.rows():
        if row["workload_name"] == "w0":
            assert row["job_id"] not in static, "two rows for one static job"
            static[row["job_id"]] = row
        else:
            assert row["workload_name"] == "io", row
            wl, jid, tag = row["job_id"].split(".", 2)
            assert wl == "w0"
            subs[jid][tag] = row
    return static, subs


def check_consistency(static, subs, nb_compute, bb_capacity):
    """Invariants of any IO-Aware run (static rows vs sub-jobs, resources held)."""
    spans = {}
    for jid, row in static.items():
        assert row["final_state"] in ("COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"), row
        meta = parse_meta(row["metadata"])
        alloc = ProcSet.from_str(meta["alloc"])
        assert len(alloc) == int(row["requested_number_of_resources"])
        start, finish = num(row, "starting_time"), num(row, "finish_time")
        assert row["allocated_resources"] == ""  # moved by CHANGE_JOB_STATE, not executed
        mine = subs[jid]
        assert mine, f"job {jid} has no sub-job"
        first = min(num(r, "starting_time") for r in mine.values())
        last = max(num(r, "finish_time") for r in mine.values())
        # the static row spans its sub-jobs, up to the message delays
        assert start <= first <= start + TOL, (jid, start, first)
        assert last <= finish <= last + tol(len(alloc)), (jid, last, finish)
        if row["final_state"] == "COMPLETED_SUCCESSFULLY":
            assert all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in mine.values())
        walltime = num(row, "requested_time")
        assert finish - start <= walltime + tol(len(alloc)), (jid, finish - start, walltime)
        bbs = set(bb_bytes(meta))
        for tag, sub in mine.items():
            used = ProcSet.from_str(sub["allocated_resources"])
            compute = ProcSet(*(r for r in used if r < nb_compute))
            assert compute <= alloc, (jid, tag, used, alloc)  # compute sub-jobs on the job's nodes only
            storage = set(used) - set(compute)
            assert storage <= bbs | {max(used)}, (jid, tag, used, bbs)  # its BB nodes and the PFS
        spans[jid] = (start, finish, alloc, bb_bytes(meta))
    # compute nodes held from start to finish by one job; BB never over capacity
    ids = sorted(spans)
    for i, a in enumerate(ids):
        sa, fa, alloc_a, _ = spans[a]
        for b in ids[i + 1:]:
            sb, fb, alloc_b, _ = spans[b]
            if sa < fb and sb < fa:
                assert not (alloc_a & alloc_b), f"jobs {a} and {b} share nodes {alloc_a & alloc_b}"
    for t in sorted({s for s, _, _, _ in spans.values()}):
        use = defaultdict(int)
        for s, f, _, bb in spans.values():
            if s <= t < f:
                for b, v in bb.items():
                    use[b] += v
        assert all(v <= bb_capacity for v in use.values()), (t, dict(use))
    return spans


# ---------------------------------------------------------------------- tests
def test_phases_times_walltime_and_resources(tmp_path):
    run = simulate(tmp_path, small_workload(tmp_path))
    static, subs = split_rows(run)
    assert sorted(static) == ["0", "1", "2", "3", "4"]
    spans = check_consistency(static, subs, NB_COMPUTE, BB_CAP)

    def exec_time(jid, tag):
        return num(subs[jid][tag], "execution_time")

    # --- the phases of each job, in order
    for jid, (sub, wall, res, bb, phases, secs, ckpt) in SMALL_JOBS.items():
        nodes = list(spans[str(jid)][2])
        mine = subs[str(jid)]
        if jid == 3:
            continue  # cut by its walltime, below
        expected = {f"c{k}" for k in range(1, phases + 1)}
        if bb:
            expected |= {f"{p}.{c}" for p in ("in", "out") for c in nodes}
            expected |= {f"{p}{k}.{c}" for p in ("ck", "fl") for k in range(1, phases) for c in nodes}
        assert set(mine) == expected, (jid, sorted(mine))
        assert static[str(jid)]["final_state"] == "COMPLETED_SUCCESSFULLY"
        assert parse_meta(static[str(jid)]["metadata"])["phases"] == f"{phases}/{phases}"
        for k in range(1, phases + 1):
            c = mine[f"c{k}"]
            assert ProcSet.from_str(c["allocated_resources"]) == ProcSet(*nodes)  # all nodes, every phase
            assert abs(num(c, "execution_time") - secs) < 1e-6  # cpu / speed, no communication
            before = [mine[f"in.{n}"] for n in nodes] if k == 1 and bb else \
                [mine[f"ck{k - 1}.{n}"] for n in nodes] if bb else [mine[f"c{k - 1}"]] if k > 1 else []
            assert all(num(r, "finish_time") <= num(c, "starting_time") for r in before), (jid, k)
            if bb and k < phases:
                # checkpoint k after compute k; flush k starts with compute k+1 and overlaps it
                assert all(num(mine[f"ck{k}.{n}"], "starting_time") >= num(c, "finish_time") for n in nodes)
                nxt = mine[f"c{k + 1}"]
                for n in nodes:
                    fl = mine[f"fl{k}.{n}"]
                    assert abs(num(fl, "starting_time") - num(nxt, "starting_time")) < 1e-9
                    assert num(fl, "finish_time") > num(nxt, "starting_time")
        if bb:
            last = num(mine[f"c{phases}"], "finish_time")
            assert all(num(mine[f"out.{n}"], "starting_time") >= last for n in nodes)
            # data staging runs between the PFS and the node's BB host; checkpoints on the node
            meta_bbs = set(bb_bytes(parse_meta(static[str(jid)]["metadata"])))
            for n in nodes:
                for tag in [f"in.{n}", f"out.{n}"] + [f"fl{k}.{n}" for k in range(1, phases)]:
                    used = ProcSet.from_str(mine[tag]["allocated_resources"])
                    assert len(used) == 2 and min(used) in meta_bbs, (tag, used)
                for k in range(1, phases):
                    assert mine[f"ck{k}.{n}"]["allocated_resources"] == str(n)

    # --- transfer durations (bytes / bottleneck bandwidth, plus route latency)
    # jobs 0 and 1 stage in together: 8 transfers of 5 GB share the PFS link
    for jid in ("0", "1"):
        for tag in [t for t in subs[jid] if t.startswith("in.")]:
            assert abs(exec_time(jid, tag) - 8 * 5 * GB / PFS_BW) < 1e-3
    # job 3 alone: stage-in GB over the PFS link, checkpoint GB/2 node -> its BB node, flush over the PFS link
    node3 = list(spans["3"][2])[0]
    assert abs(exec_time("3", f"in.{node3}") - GB / PFS_BW) < 1e-3
    assert abs(exec_time("3", f"ck1.{node3}") - (GB // 2) / LINK_BW) < 1e-3
    assert abs(exec_time("3", f"fl1.{node3}") - (GB // 2) / PFS_BW) < 1e-3

    # --- walltime across phases: job 3 (15 s) is cut in its 2nd compute phase
    row3 = static["3"]
    assert row3["final_state"] == "COMPLETED_WALLTIME_REACHED" and row3["success"] == "0"
    start3, finish3 = spans["3"][:2]
    assert 15.0 <= finish3 - start3 <= 15.0 + TOL
    assert set(subs["3"]) == {f"in.{node3}", "c1", f"ck1.{node3}", f"fl1.{node3}", "c2"}
    assert subs["3"]["c2"]["final_state"] == "COMPLETED_WALLTIME_REACHED"
    assert abs(num(subs["3"]["c2"], "finish_time") - (start3 + 15.0)) < TOL
    assert parse_meta(row3["metadata"])["phases"] == "1/3"

    # --- BB held until the last flush / stage-out: job 2 waits for job 0 or 1 to end
    assert num(static["2"], "starting_time") >= min(spans["0"][1], spans["1"][1])
    assert "bb" not in parse_meta(static["4"]["metadata"])


def test_acknowledged_sub_jobs_profile_reuse_and_bad_io(tmp_path):
    # sub-jobs echoed by JOB_SUBMITTED are not taken for new static jobs; profile names
    # are unique, so profile reuse changes nothing; a malformed io field: static profile
    run = simulate(tmp_path, small_workload(tmp_path, bad_io=True),
                   args=DYN + ("--acknowledge-dynamic-jobs", "--enable-profile-reuse"))
    static, subs = split_rows(run)
    bad = static.pop("5")
    assert bad["final_state"] == "COMPLETED_SUCCESSFULLY" and bad["allocated_resources"]
    assert abs(num(bad, "execution_time") - 2) < 1e-3 and "5" not in subs
    assert "job w0!5 runs its static profile: io.checkpoints" in run.sched_output
    check_consistency(static, subs, NB_COMPUTE, BB_CAP)
    assert {j: r["final_state"] for j, r in static.items()} == {
        "0": "COMPLETED_SUCCESSFULLY", "1": "COMPLETED_SUCCESSFULLY", "2": "COMPLETED_SUCCESSFULLY",
        "3": "COMPLETED_WALLTIME_REACHED", "4": "COMPLETED_SUCCESSFULLY"}


@pytest.mark.parametrize("args, options", [((), {"policy": "fcfs"}), (DYN, {"policy": "fcfs", "io_aware": False})],
                         ids=["no-dynamic-jobs", "io_aware-false"])
def test_static_profile_fallback(tmp_path, args, options):
    run = simulate(tmp_path, small_workload(tmp_path), args=args, options=options)
    rows = run.rows()
    assert all(r["workload_name"] == "w0" for r in rows) and len(rows) == len(SMALL_JOBS)
    by_id = {r["job_id"]: r for r in rows}
    # one phase with the whole computation, on real allocations
    assert abs(num(by_id["0"], "execution_time") - 3 * 2) < 1e-3
    assert by_id["0"]["allocated_resources"]
    if not args:
        assert "run their static profile: the simulator runs without --enable-dynamic-jobs" in run.sched_output


def test_bad_io_field_is_reported():
    assert parse_io(io_field(3, 1e9, GB, GB // 2)).phases == 3
    bad = io_field(2, 1e9, GB, GB // 2)
    bad["checkpoints"] = 2
    assert "checkpoints" in parse_io(bad)
    bad = io_field(2, 1e9, GB, GB // 2)
    bad["flush"] = {"type": "delay", "delay": 1}
    assert "flush" in parse_io(bad)
    assert "phases" in parse_io({"phases": 0})
    assert parse_options({"policy": "fcfs", "io_aware": False})[1]["io_aware"] is False
    with pytest.raises(InputError) as err:
        parse_options({"policy": "fcfs", "io_aware": "yes"})
    assert err.value.where == "io_aware"


@pytest.mark.parametrize("policy", POLICIES)
def test_every_policy_runs_the_io_aware_sample(tmp_path, policy):
    w = sample_workload(tmp_path, "kth_io_aware_sample.json")
    run = simulate(tmp_path, w, platform=BIG, options={"policy": policy}, wait=120)
    static, subs = split_rows(run)
    assert sorted(static, key=int) == [str(i) for i in range(20)]
    props = zone_props(BIG)
    check_consistency(static, subs, nb_compute=96, bb_capacity=int(props["bb_capacity"]))
    for jid, row in static.items():
        assert float(row["starting_time"]) >= float(row["submission_time"])
