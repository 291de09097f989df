"""IO-Aware job execution (coburst/adapter/io_aware.py) and its fold-back
(coburst/analysis/metrics.py, ``fold_io_jobs``).

* engine-independent tests of the fold-back rule on hand-written ``_jobs.csv`` files;
* end to end on ``coburst sim`` with a real pybatsim process running
  ``schedulers/coburstBackfill.py``;
* cross-engine: the same runs on the real Batsim 4.2.1 (binary named by the environment
  variable ``BATSIM``; skipped without it) give the same ``_jobs.csv`` as ``coburst sim``.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

import pytest
from procset import ProcSet

from coburst.adapter import parse_options
from coburst.adapter import io_aware
from coburst.adapter.io_aware import final_state, parse_io, static_metadata, subjob_metadata
from coburst.analysis import metrics
from coburst.analysis.metrics import compute_metrics, fold_io_jobs, parse_metadata, read_jobs, read_raw_jobs
from coburst.errors import InputError
from crossengine import needs_batsim
from simharness import JOBS_HEADER, REPO, run_sim, write_json

pytestmark = pytest.mark.timeout(240)

SMALL = REPO / "platforms" / "dragonfly_small.xml"
BIG = REPO / "platforms" / "dragonfly96.xml"
SCHED = str(REPO / "schedulers" / "coburstBackfill.py")
POLICIES = ("fcfs", "filler", "filler-sjf", "no-future-1", "backfill-1", "backfill-sjf-1", "conservative")
DYN = ("--enable-dynamic-jobs",)
TOL = 2e-3  # message delays between a decision and what it starts (a few 50-100 us hops)
#: largest date difference accepted between the two engines (measured: 1e-6 s, the last
#: printed digit; dates are the simulator's business, order/allocations/states must match)
ENGINE_TOL = 1e-3
DATE_COLUMNS = ("submission_time", "starting_time", "execution_time", "finish_time", "waiting_time",
                "turnaround_time", "stretch")


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


def simulate(tmp_path, workload, platform=SMALL, args=DYN, options=None, prefix="out", wait=30.0,
             engine="coburst"):
    run = run_sim(tmp_path, workloads=[workload], platform=platform, scheduler=SCHED,
                  options=options or {"policy": "fcfs"}, args=args, timeout=30, prefix=prefix, wait=wait,
                  **({} if engine == "coburst" else {"engine": engine}))
    assert run.returncode == 0, run.report()
    assert run.sched_returncode == 0, run.report()
    return run


# ---------------------------------------------------------------------- reading results
def num(row, key):
    return float(row[key])


def bb_bytes(meta: dict[str, str]) -> dict[int, int]:
    if "bb" not in meta:
        return {}
    return {int(b): int(v) for b, v in (x.split(":") for x in meta["bb"].split("/"))}


def split_rows(run):
    """(rejected static rows by job id, sub-job rows by static job id then by sub-job tag,
    folded rows by job id).  Checks how Batsim records IO-Aware jobs (module doc of
    coburst/adapter/io_aware.py)."""
    static, subs = {}, defaultdict(dict)
    for row in run.rows():
        meta = parse_metadata(row["metadata"])
        if row["workload_name"] == "w0":
            assert row["job_id"] not in static, "two rows for one static job"
            static[row["job_id"]] = row
            if "io" in meta:  # run as sub-jobs: rejected, with its allocation in the metadata
                assert row["final_state"] == "REJECTED" and row["starting_time"] == "", row
        else:
            assert row["workload_name"] == "io", row
            wl, jid, tag = row["job_id"].split(".", 2)
            assert wl == "w0" and meta["of"] == f"w0!{jid}", row
            assert tag.split(".")[0] == meta["step"], row
            subs[jid][tag] = row
    folded = {r["job_id"]: r for r in read_jobs(run.jobs_csv).to_dict("records")}
    assert set(folded) == {j for j, r in static.items() if r["final_state"] != "REJECTED" or j in subs}
    return static, subs, folded


def check_consistency(static, subs, folded, nb_compute, bb_capacity):
    """Invariants of any IO-Aware run (folded rows vs sub-jobs, resources held)."""
    spans = {}
    for jid, row in folded.items():
        if jid not in subs:
            continue  # ran its static profile
        assert row["final_state"] in ("COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"), row
        meta = parse_metadata(static[jid]["metadata"])
        alloc = ProcSet.from_str(meta["alloc"])
        assert len(alloc) == int(row["requested_number_of_resources"])
        assert row["allocated_resources"] == meta["alloc"]
        start, finish = row["starting_time"], row["finish_time"]
        mine = subs[jid]
        assert start == min(num(r, "starting_time") for r in mine.values())
        assert finish == max(num(r, "finish_time") for r in mine.values())
        assert abs(row["waiting_time"] - (start - row["submission_time"])) < 1e-9
        assert start >= row["submission_time"]
        if row["final_state"] == "COMPLETED_SUCCESSFULLY":
            assert all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in mine.values())
            assert any(parse_metadata(r["metadata"]).keys() >= {"last"} for r in mine.values())
            assert row["metadata"].endswith(f";phases={meta['io']}/{meta['io']}")
        assert finish - start <= row["requested_time"] + TOL, (jid, finish - start)
        bbs = set(bb_bytes(meta))
        for tag, sub in mine.items():
            used = ProcSet.from_str(sub["allocated_resources"])
            compute = ProcSet(*(r for r in used if r < nb_compute))
            assert compute <= alloc, (jid, tag, used, alloc)  # compute sub-jobs on the job's nodes only
            storage = set(used) - set(compute)
            assert storage <= bbs | {max(used)}, (jid, tag, used, bbs)  # its BB nodes and the PFS
            assert num(sub, "starting_time") >= start and num(sub, "finish_time") <= finish
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


def compare_engines(batsim, coburst) -> float:
    """Same ``_jobs.csv`` on both engines: same rows in the same order, every column equal
    but the dates, which may differ by ENGINE_TOL; same folded rows.  The largest date
    difference is returned."""
    rows_b, rows_c = batsim.rows(), coburst.rows()
    assert [(r["workload_name"], r["job_id"]) for r in rows_b] == [(r["workload_name"], r["job_id"]) for r in rows_c]
    worst = 0.0
    for rb, rc in zip(rows_b, rows_c):
        for col in rb:
            if col in DATE_COLUMNS and rb[col] != rc[col]:
                worst = max(worst, abs(float(rb[col]) - float(rc[col])))
            elif col not in DATE_COLUMNS:
                assert rb[col] == rc[col], (rb["workload_name"], rb["job_id"], col, rb[col], rc[col])
    worst = max(worst, same_folded(batsim, coburst))
    assert worst <= ENGINE_TOL, worst
    print(f"largest date difference between the engines: {worst:g} s")
    return worst


def same_folded(a, b) -> float:
    """Same folded rows (ids, order, states, allocations, metadata), dates within ENGINE_TOL."""
    fa, fb = read_jobs(a.jobs_csv), read_jobs(b.jobs_csv)
    assert list(fa["job_id"]) == list(fb["job_id"])
    worst = 0.0
    for col in fa.columns:
        if col in DATE_COLUMNS:
            worst = max(worst, float((fa[col] - fb[col]).abs().max()))
        else:
            assert list(fa[col]) == list(fb[col]), col
    assert worst <= ENGINE_TOL, worst
    return worst


# ---------------------------------------------------------------------- fold-back, no simulator
def _csv(path: Path, rows: list[list]) -> Path:
    """A ``_jobs.csv`` from short rows: (id, workload, state, start, finish, alloc, metadata);
    submission at 0, 2 requested resources, walltime 100."""
    lines = [JOBS_HEADER]
    for jid, wl, state, start, finish, alloc, meta in rows:
        if state == "REJECTED":
            lines.append(f'{jid},{wl},p{jid},0.000000,2,100.000000,0,REJECTED,,,,,,,,,"{meta}"')
            continue
        ex = finish - start
        lines.append(f"{jid},{wl},p{jid},0.000000,2,100.000000,{int(state == 'COMPLETED_SUCCESSFULLY')},{state},"
                     f"{start:.6f},{ex:.6f},{finish:.6f},{start:.6f},{finish:.6f},{finish / ex:.6f},{alloc},"
                     f'-1.000000,"{meta}"')
    path.write_text("\n".join(lines) + "\n")
    return path


OK, WALL, KILLED = "COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED"


def test_fold_back_rule(tmp_path):
    rows = [
        [5, "w0", OK, 0.0, 3.0, "4-5", ""],                                        # ran statically
        [0, "w0", "REJECTED", 0, 0, "", "bb=12:100/13:100;alloc=0-1;io=2"],       # IO-Aware, complete
        [1, "w0", "REJECTED", 0, 0, "", "alloc=2-3;io=2"],                        # cut by a sub-job's walltime
        [2, "w0", "REJECTED", 0, 0, "", "alloc=6;io=3"],                          # ran out of walltime between phases
        [3, "w0", "REJECTED", 0, 0, "", "alloc=7 9;io=1"],                        # a sub-job killed
        [4, "w0", "REJECTED", 0, 0, "", ""],                                      # really rejected
        ["w0.0.in.0", "io", OK, 1.0, 2.0, "12 14", "of=w0!0;step=in"],
        ["w0.0.in.1", "io", OK, 1.0, 2.5, "13-14", "of=w0!0;step=in"],
        ["w0.1.c1", "io", OK, 1.5, 4.0, "2-3", "of=w0!1;step=c1"],
        ["w0.0.c1", "io", OK, 2.5, 5.0, "0-1", "of=w0!0;step=c1"],
        ["w0.2.c1", "io", OK, 2.0, 6.0, "6", "of=w0!2;step=c1"],
        ["w0.1.c2", "io", WALL, 4.0, 7.0, "2-3", "of=w0!1;step=c2;last"],
        ["w0.0.c2", "io", OK, 5.0, 8.0, "0-1", "of=w0!0;step=c2"],
        ["w0.3.c1", "io", KILLED, 3.0, 8.5, "7 9", "of=w0!3;step=c1;last"],
        [6, "w1", OK, 8.0, 9.0, "10", "bb=12:5"],                                 # another static workload
        ["w0.0.out.0", "io", OK, 8.0, 9.5, "12 14", "of=w0!0;step=out;last"],
        ["w0.0.out.1", "io", OK, 8.0, 9.25, "13-14", "of=w0!0;step=out;last"],
        ["x", "dyn", OK, 9.0, 10.0, "11", ""],                                    # some other dynamic job
    ]
    path = _csv(tmp_path / "j_jobs.csv", rows)
    df = read_jobs(path)
    got = {r["job_id"]: r for r in df.to_dict("records")}
    # one row per static job that ran, placed where its last sub-job ended (end order)
    assert list(df["job_id"]) == ["5", "2", "1", "3", "6", "0"]
    assert list(df["workload_name"]) == ["w0", "w0", "w0", "w0", "w1", "w0"]
    j0 = got["0"]
    assert (j0["starting_time"], j0["finish_time"], j0["execution_time"]) == (1.0, 9.5, 8.5)
    assert (j0["waiting_time"], j0["turnaround_time"], j0["stretch"]) == (1.0, 9.5, 9.5 / 8.5)
    assert (j0["final_state"], j0["success"], j0["allocated_resources"]) == (OK, 1, "0-1")
    assert j0["metadata"] == "bb=12:100/13:100;alloc=0-1;phases=2/2"
    assert (j0["profile"], j0["requested_number_of_resources"], j0["requested_time"]) == ("p0", 2, 100.0)
    assert j0["consumed_energy"] == -1.0
    assert (got["1"]["final_state"], got["1"]["success"], got["1"]["metadata"]) == (WALL, 0, "alloc=2-3;phases=1/2")
    assert (got["2"]["final_state"], got["2"]["metadata"]) == (WALL, "alloc=6;phases=1/3")
    assert (got["3"]["final_state"], got["3"]["allocated_resources"]) == (KILLED, "7 9")
    assert (got["3"]["starting_time"], got["3"]["finish_time"]) == (3.0, 8.5)
    assert got["5"]["metadata"] == "" and got["6"]["metadata"] == "bb=12:5"
    # metrics count the static jobs on their compute nodes
    m = compute_metrics(df, nb_compute=12)
    assert m.nb_jobs == 6 and m.makespan == 9.5
    used = 2 * 3.0 + 2 * 5.5 + 1 * 4.0 + 2 * 5.5 + 1 * 1.0 + 2 * 8.5  # jobs 5, 1, 2, 3, 6, 0
    assert m.utilisation == pytest.approx(used / (12 * 9.5))
    # raw reading keeps every row but the rejected ones
    raw = read_jobs(path, static_only=False)
    assert len(raw) == len(rows) - 5
    assert len(read_raw_jobs(path)) == len(rows)


def test_fold_back_leaves_other_files_alone(tmp_path):
    rows = [[0, "w0", OK, 0.0, 3.0, "0-1", "bb=12:5"], [1, "w0", "REJECTED", 0, 0, "", "io=x"]]
    path = _csv(tmp_path / "a_jobs.csv", rows)
    raw = read_raw_jobs(path)
    assert fold_io_jobs(raw).equals(raw)
    assert list(read_jobs(path)["job_id"]) == ["0"]


@pytest.mark.parametrize("rows, where", [
    ([["w0.0.c1", "io", OK, 1.0, 2.0, "0", "of=w0!0;step=c1;last"]], "sub-job of w0!0"),
    ([[0, "w0", "REJECTED", 0, 0, "", "alloc=0;io=1"]], "job w0!0"),
], ids=["sub-job-without-static-row", "static-row-without-sub-jobs"])
def test_fold_back_errors_name_the_job(tmp_path, rows, where):
    with pytest.raises(InputError) as err:
        read_jobs(_csv(tmp_path / "bad_jobs.csv", rows))
    assert err.value.where == where


def test_adapter_and_fold_back_speak_the_same_metadata(tmp_path):
    assert (io_aware.KEY_PHASES, io_aware.KEY_OF, io_aware.KEY_STEP, io_aware.FLAG_LAST) == \
        (metrics.IO_PHASES, metrics.IO_OF, metrics.IO_STEP, metrics.IO_LAST)
    assert static_metadata("bb=12:5", [0, 1, 2, 5], 3) == "bb=12:5;alloc=0-2 5;io=3"
    assert static_metadata(None, [4], 1) == "alloc=4;io=1"
    assert subjob_metadata("w0!7", "ck2", False) == "of=w0!7;step=ck2"
    assert parse_metadata(subjob_metadata("w0!7", "out", True)) == {"of": "w0!7", "step": "out", "last": ""}
    # the adapter's final state of a job and the fold-back's, for every combination
    cases = [([OK, OK], True), ([OK, OK], False), ([OK, WALL], True), ([OK, KILLED], False),
             ([KILLED, WALL], True), (["COMPLETED_FAILED"], False)]
    for n, (states, last_sent) in enumerate(cases):
        rows = [[0, "w0", "REJECTED", 0, 0, "", "alloc=0;io=2"]]
        for k, state in enumerate(states):
            rows.append([f"w0.0.c{k + 1}", "io", state, k, k + 1, "0",
                         subjob_metadata("w0!0", f"c{k + 1}", last_sent and k == len(states) - 1)])
        folded = read_jobs(_csv(tmp_path / f"c{n}_jobs.csv", rows))
        assert folded["final_state"].tolist() == [final_state(states, last_sent)], (states, last_sent)
    assert final_state([OK, OK], True) == OK and final_state([OK], False) == WALL
    assert final_state([KILLED, WALL], True) == WALL and final_state([KILLED], True) == KILLED


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


# ---------------------------------------------------------------------- coburst sim
def check_small_run(run):
    """Everything the small workload must show, on either engine."""
    static, subs, folded = split_rows(run)
    assert sorted(static) == ["0", "1", "2", "3", "4"] and sorted(folded) == sorted(static)
    spans = check_consistency(static, subs, folded, NB_COMPUTE, BB_CAP)

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
        last = {t for t, r in mine.items() if "last" in parse_metadata(r["metadata"])}
        assert last == ({f"out.{c}" for c in nodes} if bb else {f"c{phases}"}), (jid, last)
        assert folded[str(jid)]["final_state"] == "COMPLETED_SUCCESSFULLY"
        assert folded[str(jid)]["metadata"].endswith(f"phases={phases}/{phases}")
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
            last_compute = num(mine[f"c{phases}"], "finish_time")
            assert all(num(mine[f"out.{n}"], "starting_time") >= last_compute for n in nodes)
            # data staging runs between the PFS and the node's BB host; checkpoints on the node
            meta_bbs = set(bb_bytes(parse_metadata(static[str(jid)]["metadata"])))
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
    row3 = folded["3"]
    assert row3["final_state"] == "COMPLETED_WALLTIME_REACHED" and row3["success"] == 0
    start3, finish3 = spans["3"][:2]
    assert 15.0 - TOL <= finish3 - start3 <= 15.0 + TOL
    assert set(subs["3"]) == {f"in.{node3}", "c1", f"ck1.{node3}", f"fl1.{node3}", "c2"}
    assert subs["3"]["c2"]["final_state"] == "COMPLETED_WALLTIME_REACHED"
    assert row3["metadata"] == f"bb={parse_metadata(static['3']['metadata'])['bb']};alloc={node3};phases=1/3"

    # --- BB held until the last flush / stage-out: job 2 waits for job 0 or 1 to end
    assert folded["2"]["starting_time"] >= min(spans["0"][1], spans["1"][1])
    assert "bb" not in parse_metadata(static["4"]["metadata"])
    return static, subs, folded


def test_phases_times_walltime_and_resources(tmp_path):
    check_small_run(simulate(tmp_path, small_workload(tmp_path)))


def test_acknowledged_sub_jobs_profile_reuse_and_bad_io(tmp_path):
    # sub-jobs echoed by JOB_SUBMITTED are not taken for new static jobs; profile names
    # are unique, so profile reuse changes nothing; a malformed io field: static profile
    run = simulate(tmp_path, small_workload(tmp_path, bad_io=True),
                   args=DYN + ("--acknowledge-dynamic-jobs", "--enable-profile-reuse"))
    static, subs, folded = split_rows(run)
    bad = static.pop("5")
    assert bad["final_state"] == "COMPLETED_SUCCESSFULLY" and bad["allocated_resources"]
    assert abs(num(bad, "execution_time") - 2) < 1e-3 and "5" not in subs
    assert "job w0!5 runs its static profile: io.checkpoints" in run.sched_output
    check_consistency(static, subs, folded, NB_COMPUTE, BB_CAP)
    assert {j: r["final_state"] for j, r in folded.items()} == {
        "0": "COMPLETED_SUCCESSFULLY", "1": "COMPLETED_SUCCESSFULLY", "2": "COMPLETED_SUCCESSFULLY",
        "3": "COMPLETED_WALLTIME_REACHED", "4": "COMPLETED_SUCCESSFULLY", "5": "COMPLETED_SUCCESSFULLY"}


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


@pytest.mark.parametrize("policy", POLICIES)
def test_every_policy_runs_the_io_aware_sample(tmp_path, policy):
    w = sample_workload(tmp_path, "kth_io_aware_sample.json", count=12)
    run = simulate(tmp_path, w, platform=BIG, options={"policy": policy}, wait=120)
    static, subs, folded = split_rows(run)
    assert sorted(folded, key=int) == [str(i) for i in range(12)]
    props = zone_props(BIG)
    check_consistency(static, subs, folded, nb_compute=96, bb_capacity=int(props["bb_capacity"]))


# ---------------------------------------------------------------------- real Batsim 4.2.1
@needs_batsim
def test_real_batsim_runs_the_small_workload_like_coburst(tmp_path):
    w = small_workload(tmp_path)
    batsim = simulate(tmp_path, w, prefix="batsim", engine="batsim")
    check_small_run(batsim)
    # only --enable-dynamic-jobs is needed; with acknowledgements and profile reuse, the same
    again = simulate(tmp_path, w, prefix="batsim_ack", engine="batsim",
                     args=DYN + ("--acknowledge-dynamic-jobs", "--enable-profile-reuse"))
    same_folded(again, batsim)
    coburst = simulate(tmp_path, w, prefix="coburst")
    compare_engines(batsim, coburst)


@needs_batsim
def test_real_batsim_runs_the_bundled_sample_like_coburst(tmp_path):
    # coburstEasy = backfill-1, the README's example (first 60 jobs, queueing compressed 5x)
    w = sample_workload(tmp_path, "kth_io_aware_sample.json", count=60, squeeze=5.0)
    runs = [simulate(tmp_path, w, platform=BIG, options={"policy": "backfill-1"}, prefix=engine, engine=engine,
                     wait=120) for engine in ("batsim", "coburst")]
    static, subs, folded = split_rows(runs[0])
    assert len(folded) == 60 and len(subs) >= 50
    check_consistency(static, subs, folded, nb_compute=96, bb_capacity=int(zone_props(BIG)["bb_capacity"]))
    compare_engines(*runs)
