"""Workloads whose run time depends on the node (coburst/workloads/hetero.py, irmasim.py;
Sánchez Sousa 2023 §5.1.1, §5.1.2): synthetic sets, the realistic environment from SWF,
IRMaSim conversion, errors, and IRMaSim's examples run on both engines."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from coburst.errors import InputError
from coburst.workloads import hetero
from coburst.workloads.irmasim import convert
from coburst.workloads.swf import read_swf

sys.path.insert(0, str(Path(__file__).parent))
from crossengine import assert_identical, needs_batsim, run_both  # noqa: E402
from simharness import COBURST, REPO, run_sim, write_json  # noqa: E402
from hetero_fixtures import IRMASIM, needs_irmasim  # noqa: E402
from shared_data import need_swf, swf_log  # noqa: E402

KTH = swf_log()


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(COBURST), *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def profile_cpu(doc: dict, job: dict) -> float:
    prof = doc["profiles"][job["profile"]]
    assert prof["type"] == "parallel_homogeneous" and prof["com"] == 0
    return prof["cpu"]


# ----------------------------------------------------------------------------- §5.1.1
def test_synthetic_set_is_the_thesis_setting():
    doc = hetero.synthetic(0)
    jobs = doc["jobs"]
    assert len(jobs) == 512 and doc["nb_res"] == 1
    times = [j["req_time"] for j in jobs]
    assert min(times) >= 100 and max(times) <= 3000 and all(isinstance(t, int) for t in times)
    assert min(times) < 200 and max(times) > 2900  # the whole range is used
    for j in jobs:
        assert j["subtime"] == 0 and j["res"] == 1 and "walltime" not in j
        # req_time = ETC on the 1 GHz reference core (§3.3.2): req_ops = req_time x 1e9 = cpu
        assert j["req_ops"] == j["req_time"] * 10**9 == profile_cpu(doc, j)
        assert j["ipc"] == 1 and j["mem"] == 0 and j["mem_vol"] == 0 and j["nodes"] == j["ntasks_per_node"] == 1


def test_synthetic_cli_same_seed_same_bytes_five_seeds_differ(tmp_path):
    for name, seed in (("a", 3), ("b", 3)):
        r = cli("workload", "hetero", "--seed", str(seed), "-q", "-o", f"{name}.json", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert (tmp_path / "a.json").read_bytes().endswith(b"}\n")
    sets = [json.dumps(hetero.synthetic(s)["jobs"]) for s in range(5)]
    assert len(set(sets)) == 5


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**63 - 1), n=st.integers(1, 60), lo=st.integers(1, 500), width=st.integers(0, 500),
       ref=st.sampled_from([1e9, 2.5e9, 3e8]))
def test_synthetic_invariants(seed, n, lo, width, ref):
    doc = hetero.synthetic(seed, jobs=n, req_min=lo, req_max=lo + width, ref_speed=ref)
    assert [j["id"] for j in doc["jobs"]] == list(range(n))
    for j in doc["jobs"]:
        assert lo <= j["req_time"] <= lo + width
        assert profile_cpu(doc, j) == j["req_ops"] == pytest.approx(j["req_time"] * ref)
    assert set(doc["profiles"]) == {j["profile"] for j in doc["jobs"]}


# ----------------------------------------------------------------------------- §5.1.2
@pytest.fixture(scope="module")
def kth_log():
    return read_swf(need_swf())


@pytest.fixture(scope="module")
def kth_jobs(kth_log):
    log = kth_log
    usable = [j for j in log.jobs if j.submit_time >= 0 and j.run_time > 0
              and (j.allocated_procs > 0 or j.requested_procs > 0)]
    usable.sort(key=lambda j: (j.submit_time, j.job_number))
    return usable


@pytest.mark.parametrize("rounding", ["nearest", "down", "up"])
def test_round_subtime(rounding):
    expect = {"nearest": (0, 1e5, 1e5, 2e5), "down": (0, 0, 1e5, 1e5), "up": (0, 1e5, 1e5, 2e5)}[rounding]
    got = tuple(hetero.round_subtime(t, 1e5, rounding) for t in (0, 5e4, 1e5, 1.5e5))
    assert got == expect
    assert hetero.round_subtime(123.4, 0, rounding) == 123.4


def test_realistic_kth_slice(kth_jobs, kth_log):
    doc, report = hetero.realistic(KTH, start=1000, log=kth_log)
    jobs = doc["jobs"]
    assert len(jobs) == 500 and report.start == 1000
    chosen = kth_jobs[1000:1500]
    assert [j["swf_id"] for j in jobs] == [s.job_number for s in chosen]
    subs = [j["subtime"] for j in jobs]
    assert subs[0] == 0 and subs == sorted(subs) and all(s % 100000 == 0 for s in subs)
    assert report.batches == len(set(subs)) >= 2  # daily groups, not one arrival at a time
    origin = math.floor(chosen[0].submit_time / 1e5 + 0.5) * 1e5
    for j, s in zip(jobs, chosen):
        assert j["subtime"] == math.floor(s.submit_time / 1e5 + 0.5) * 1e5 - origin
        assert j["req_ops"] == profile_cpu(doc, j) == int(s.run_time * 1e9)  # run time on the 1 GHz reference
        assert j["req_time"] == (s.requested_time if s.requested_time > 0 else s.run_time)
        assert j["res"] == min(s.allocated_procs if s.allocated_procs > 0 else s.requested_procs, 32)
        assert j["nodes"] == 1 and j["ntasks_per_node"] == j["res"]  # swf2irmasim: "nodes": 1
        assert "walltime" not in j
    assert report.capped == sum(1 for s in chosen if s.allocated_procs > 32)


def test_realistic_random_start_is_seeded(kth_jobs, kth_log):
    a, ra = hetero.realistic(KTH, start="random", seed=1, length=50, log=kth_log)
    b, rb = hetero.realistic(KTH, start="random", seed=1, length=50, log=kth_log)
    c, rc = hetero.realistic(KTH, start="random", seed=2, length=50, log=kth_log)
    assert a == b and ra.start == rb.start != rc.start
    assert 0 <= ra.start <= len(kth_jobs) - 50
    d, _ = hetero.realistic(KTH, start=ra.start, length=50, log=kth_log)
    assert d["jobs"] == a["jobs"]


def test_realistic_options(kth_jobs, kth_log):
    doc, report = hetero.realistic(KTH, start=0, length=20, batch=0, max_res=None, ref_speed=2e9, log=kth_log)
    assert [j["subtime"] for j in doc["jobs"]] == [s.submit_time - kth_jobs[0].submit_time for s in kth_jobs[:20]]
    assert [j["req_ops"] for j in doc["jobs"]] == [int(s.run_time * 2e9) for s in kth_jobs[:20]]
    assert report.capped == 0


@pytest.mark.parametrize("kwargs, option", [({"length": 10**6}, "--length"), ({"start": 28470}, "--start"),
                                            ({"start": -1}, "--start"), ({"rounding": "half"}, "--rounding"),
                                            ({"batch": -1.0}, "--batch"), ({"max_res": 0}, "--max-res")])
def test_realistic_bad_options(kwargs, option, kth_log):
    with pytest.raises(InputError) as err:
        hetero.realistic(KTH, log=kth_log, **kwargs)
    assert err.value.source == option


def test_realistic_cli_and_errors(tmp_path):
    lines = need_swf().read_text().splitlines(keepends=True)
    small = tmp_path / "kth_head.swf"  # the header and the first 200 jobs of the KTH log
    small.write_text("".join(line for line in lines if line.startswith(";"))
                     + "".join([line for line in lines if not line.startswith(";")][:200]))
    r = cli("workload", "hetero", "--swf", str(small), "--start", "random", "--seed", "4", "--length", "30",
            "-o", "k.json", cwd=tmp_path)
    assert r.returncode == 0 and "slice of 30 jobs" in r.stderr, r.stderr
    doc = json.loads((tmp_path / "k.json").read_text())
    assert doc["coburst"]["seed"] == 4 and len(doc["jobs"]) == 30
    bad = tmp_path / "bad.swf"
    bad.write_text("; a log\n1 0 0 10 1 -1 -1 1 20 -1 1 1 1 1 1 1 -1 -1\n2 5 0 x 1 -1 -1 1 20 -1 1 1 1 1 1 1 -1 -1\n")
    for args, message in ((["--swf", str(bad)], "bad.swf: line 3: field 4 (run_time) is not a number"),
                          (["--swf", str(small), "--start", "later"], "--start"),
                          (["--swf", str(small), "--start", "190", "--length", "20"], "--start: 190 + 20 jobs passes the 200"),
                          (["--jobs", "5", "--swf", str(small)], "--jobs: applies to the synthetic sets only"),
                          (["--length", "5"], "--length: applies to the realistic environment only")):
        r = cli("workload", "hetero", *args, "-o", "out.json", cwd=tmp_path)
        assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert not (tmp_path / "out.json").exists()


# ----------------------------------------------------------------------------- IRMaSim
@needs_irmasim
def test_irmasim_example_workloads_convert():
    for path in (IRMASIM / "heuristic" / "resource" / "workload.json", IRMASIM / "backfill" / "workload_test.json"):
        src = json.loads(path.read_text())["jobs"]
        doc = convert(path)
        assert len(doc["jobs"]) == len(src)
        for job, s in zip(doc["jobs"], src):
            assert job["id"] == s["id"] and job["res"] == s["res"] and job["subtime"] == s["subtime"]
            assert profile_cpu(doc, job) == math.ceil(s["req_ops"] / s["ipc"])
            for key in ("req_time", "req_ops", "ipc", "mem", "mem_vol"):
                assert job[key] == s[key]
            assert job["nodes"] == 1 and job["ntasks_per_node"] == s["res"]  # 'res': all tasks on one node


def _irmasim_workload(tmp_path: Path, jobs: list[dict], profiles: dict | None = None) -> Path:
    doc = {"jobs": jobs, **({"profiles": profiles} if profiles is not None else {})}
    return write_json(tmp_path / "workload.json", doc)


def test_irmasim_task_forms_ipc_profiles_and_subtimes(tmp_path):
    jobs = [{"id": "a", "subtime": 50, "ntasks": 5, "ntasks_per_node": 2, "req_ops": 10, "req_time": 1, "ipc": 3},
            {"id": "b", "subtime": 70, "nodes": 3, "req_ops": 7, "req_time": 1},
            {"id": "c", "subtime": 90, "nodes": 2, "ntasks": 5, "req_ops": 7, "req_time": 1},
            {"subtime": 60, "ntasks": 4, "profile": "p"}]
    doc = convert(_irmasim_workload(tmp_path, jobs, {"p": {"req_ops": 8e9, "req_time": 8, "ipc": 0.5}}))
    got = {j["id"]: j for j in doc["jobs"]}
    assert (got["a"]["res"], got["a"]["nodes"], got["a"]["ntasks_per_node"]) == (5, 3, 2)
    assert profile_cpu(doc, got["a"]) == 4  # ceil(10 / 3), IRMaSim's Job.ops
    assert (got["b"]["res"], got["b"]["nodes"], got["b"]["ntasks_per_node"]) == (3, 3, 1)
    assert (got["c"]["res"], got["c"]["nodes"], got["c"]["ntasks_per_node"]) == (5, 2, 3)
    assert got["job3"]["res"] == 4 and profile_cpu(doc, got["job3"]) == 16e9 and got["job3"]["mem_vol"] == 1
    assert [j["subtime"] for j in doc["jobs"]] == [0, 20, 40, 10]  # the earliest job arrives at 0


@settings(max_examples=60, deadline=None)
@given(form=st.sampled_from(["res", "ntasks", "ntasks+per", "nodes", "nodes+per", "nodes+ntasks", "all3"]),
       ntasks=st.integers(1, 40), per=st.integers(1, 9), nodes=st.integers(1, 9))
def test_irmasim_task_layouts_are_consistent(tmp_path_factory, form, ntasks, per, nodes):
    """Whatever form a job uses, the result satisfies IRMaSim's relations: res = ntasks,
    nodes = ceil(ntasks / ntasks_per_node) or ntasks = nodes x ntasks_per_node."""
    job = {"id": "j", "subtime": 0, "req_ops": 5, "req_time": 1}
    keys = {"res": {"res": ntasks}, "ntasks": {"ntasks": ntasks}, "ntasks+per": {"ntasks": ntasks,
            "ntasks_per_node": per}, "nodes": {"nodes": nodes}, "nodes+per": {"nodes": nodes, "ntasks_per_node": per},
            "nodes+ntasks": {"nodes": nodes, "ntasks": ntasks},
            "all3": {"ntasks": ntasks, "ntasks_per_node": per, "nodes": math.ceil(ntasks / per)}}[form]
    path = _irmasim_workload(tmp_path_factory.mktemp("w"), [{**job, **keys}])
    out = convert(path)["jobs"][0]
    res, n, p = out["res"], out["nodes"], out["ntasks_per_node"]
    assert res == keys.get("ntasks", keys.get("res", n * p))
    if form in ("nodes", "nodes+per"):
        assert res == n * p and n == nodes
    elif form == "nodes+ntasks":
        assert n == nodes and p == math.ceil(res / n)
    else:
        assert n == math.ceil(res / p)


@pytest.mark.parametrize("job, where, problem", [
    ({"id": "x", "subtime": 0, "res": 2, "ntasks": 2, "req_ops": 1, "req_time": 1}, "jobs[0]", "one form only"),
    ({"id": "x", "subtime": 0, "req_ops": 1, "req_time": 1}, "jobs[0]", "needs 'res', 'ntasks' or 'nodes'"),
    ({"id": "x", "subtime": 0, "res": 1, "req_time": 1}, "jobs[0]", "'req_ops' is missing"),
    ({"id": "x", "subtime": 0, "res": 0, "req_ops": 1, "req_time": 1}, "jobs[0].res", "must be >= 1"),
    ({"id": "x", "subtime": 0, "res": 1, "req_ops": 1, "req_time": 1, "ipc": 0}, "jobs[0].ipc", "must be > 0"),
    ({"id": "x", "subtime": 0, "nodes": 3, "ntasks": 4, "ntasks_per_node": 1, "req_ops": 1, "req_time": 1},
     "jobs[0]", "disagrees"),
    ({"id": "x", "subtime": 0, "res": 1, "profile": "nope"}, "jobs[0].profile", "no profile named 'nope'"),
    ({"id": "a!b", "subtime": 0, "res": 1, "req_ops": 1, "req_time": 1}, "jobs[0].id", "'!'"),
    ({"id": "x", "subtime": "soon", "res": 1, "req_ops": 1, "req_time": 1}, "jobs[0].subtime", "expected a number"),
    ({"id": "x", "subtime": 0, "res": 1, "req_ops": 1, "req_time": 1, "walltime": 3}, "jobs[0].walltime",
     "unknown job field"),
])
def test_bad_irmasim_workloads_are_named(tmp_path, job, where, problem):
    path = _irmasim_workload(tmp_path, [job])
    with pytest.raises(InputError) as err:
        convert(path)
    assert err.value.source == str(path) and err.value.where == where and problem in err.value.problem


def test_bad_irmasim_workloads_on_the_command_line_exit_2_without_output(tmp_path):
    (tmp_path / "w.json").write_text('{"jobs": [{"id": "1", "subtime": 0,}]}')
    (tmp_path / "dup.json").write_text('{"jobs": [{"id": "1", "subtime": 0, "res": 1, "req_ops": 1, "req_time": 1},'
                                       ' {"id": "1", "subtime": 0, "res": 1, "req_ops": 1, "req_time": 1}]}')
    for name, message in (("w.json", "w.json: line 1 column 36: invalid JSON"),
                          ("dup.json", "dup.json: jobs[1].id: job id '1' used twice")):
        r = cli("workload", "from-irmasim", name, "-o", "out.json", cwd=tmp_path)
        assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert not (tmp_path / "out.json").exists()


def _irmasim_example(tmp_path: Path, example: str, workload: str) -> tuple[Path, Path]:
    from coburst.platforms.hetero import render_xml
    from coburst.platforms.irmasim import convert as convert_platform
    from coburst.workloads.batsim_json import write_workload

    plat = tmp_path / "platform.xml"
    plat.write_text(render_xml(convert_platform(IRMASIM / example / "platform.json")))
    work = tmp_path / "workload.json"
    write_workload(convert(IRMASIM / example / workload), work)
    return plat, work


@needs_irmasim
def test_irmasim_example_runs_on_coburst_with_the_modelv1_run_times(tmp_path):
    """Backfill example: 11 jobs on one 12-core node of 1 GHz x 4 flops per cycle; a job takes
    ceil(req_ops / ipc) / 4e9 s (IRMaSim's Core.get_next_step), whoever schedules it."""
    plat, work = _irmasim_example(tmp_path, "backfill", "workload_test.json")
    run = run_sim(tmp_path, workloads=[work], platform=plat, scheduler=str(REPO / "schedulers" / "coburstFcfs.py"),
                  timeout=60).check()
    src = {j["id"]: j for j in json.loads((IRMASIM / "backfill" / "workload_test.json").read_text())["jobs"]}
    rows = run.rows()
    assert len(rows) == 11 and all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in rows)
    for r in rows:
        assert float(r["execution_time"]) == pytest.approx(src[r["job_id"]]["req_ops"] / 4e9, abs=2e-6)


@needs_batsim
@needs_irmasim
@pytest.mark.parametrize("example, workload", [("heuristic/resource", "workload.json"),
                                               ("backfill", "workload_test.json")])
def test_irmasim_examples_identical_on_batsim_and_coburst(tmp_path, example, workload):
    plat, work = _irmasim_example(tmp_path, example, workload)
    assert_identical(*run_both(tmp_path, workloads=[work], platform=plat,
                               scheduler=str(REPO / "schedulers" / "coburstFcfs.py"), args=["-E"]))
