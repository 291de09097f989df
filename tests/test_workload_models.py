"""SWF -> Batsim workloads: Alloc-Only and IO-Aware job models, determinism, splitting."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from coburst.errors import InputError
from coburst.platforms.info import read_platform
from coburst.workloads.batsim_json import dumps, read_workload, validate
from coburst.workloads.jobmodels import ModelParams, PlatformParams, swf_to_workloads
from shared_data import need_swf

ROOT = Path(__file__).resolve().parents[1]
DF96 = ROOT / "platforms" / "dragonfly96.xml"
SMALL = ROOT / "platforms" / "dragonfly_small.xml"

SWF = """; Version: 2.2
1  1000  0   100   4  -1 -1   4   200  -1 1 1 1 -1 -1 -1 -1 -1
2  1010  0  7200   1  -1 -1   1  9000  -1 1 1 1 -1 -1 -1 -1 -1
3  1020  0    60   2  -1 -1   2   120  -1 1 1 1 -1 -1 -1 -1 -1
4  1500  0 40000  12  -1 -1  12 50000  -1 1 1 1 -1 -1 -1 -1 -1
5  1600  0   500  20  -1 -1  20   600  -1 1 1 1 -1 -1 -1 -1 -1
"""


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "coburst", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)


@pytest.fixture(scope="module")
def small_swf(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("swf") / "small.swf"
    path.write_text(SWF)
    return path


@pytest.fixture(scope="module")
def small_platform():
    return read_platform(SMALL)


@pytest.fixture(scope="module")
def kth_full():
    docs, report = swf_to_workloads(str(need_swf()), read_platform(DF96), ModelParams(seed=0))
    return docs[0]


def test_platform_params_from_shipped_platforms(small_platform):
    plat = PlatformParams.from_platform(read_platform(DF96))
    assert plat == PlatformParams(nb_res=96, speed=1e9, bandwidth=1.25e9, bb_capacity=40 * 10**9, nb_bb=12)
    small = PlatformParams.from_platform(small_platform)
    assert (small.nb_res, small.nb_bb, small.bb_capacity) == (12, 4, 10 * 10**9)


def test_alloc_only_jobs(small_swf, small_platform):
    (doc,), report = swf_to_workloads(str(small_swf), small_platform, ModelParams(seed=3))
    assert report.dropped == {"wider than the platform (12 nodes)": 1}
    validate(doc)
    assert doc["nb_res"] == 12
    jobs = doc["jobs"]
    assert [j["id"] for j in jobs] == [0, 1, 2, 3]
    assert [j["swf_id"] for j in jobs] == [1, 2, 3, 4]
    assert [j["subtime"] for j in jobs] == [0, 10, 20, 500]  # shifted to 0
    assert [j["walltime"] for j in jobs] == [200, 9000, 120, 50000]  # requested time
    assert [j["res"] for j in jobs] == [4, 1, 2, 12]
    for job, runtime in zip(jobs, (100, 7200, 60, 40000)):
        prof = doc["profiles"][job["profile"]]
        assert job["profile"] == f"p{job['id']}"
        assert prof["type"] == "parallel_homogeneous"
        assert prof["cpu"] == runtime * 10**9  # runtime x speed
        assert isinstance(job["bb"], int) and job["bb"] > 0
        assert "io" not in job
    assert doc["profiles"]["p1"]["com"] == 0  # one node: no pair to talk to
    assert 40e6 < doc["profiles"]["p0"]["com"] < 160e6  # Normal(100 MB, 20 %)
    assert jobs[2]["bb"] == 10_000_000  # runtime <= 120 s: minimal request
    assert jobs[3]["bb"] <= 10 * 10**9 // 3  # 12 nodes on 4 BB nodes of 10 GB
    assert doc["coburst"]["model"] == "alloc-only" and doc["coburst"]["seed"] == 3


def test_io_aware_jobs_follow_the_thesis_formula(small_swf, small_platform):
    (alloc,), _ = swf_to_workloads(str(small_swf), small_platform, ModelParams(seed=3))
    (doc,), _ = swf_to_workloads(str(small_swf), small_platform, ModelParams(model="io-aware", seed=3))
    validate(doc)
    plat = PlatformParams.from_platform(small_platform)
    for job, same in zip(doc["jobs"], alloc["jobs"]):
        assert job["bb"] == same["bb"]  # same draws in both models
        runtime = {1: 100, 2: 7200, 3: 60, 4: 40000}[job["swf_id"]]
        cpu = round(plat.speed * max(runtime - 40 * job["bb"] / plat.bandwidth, 0.05 * runtime))
        io = job["io"]
        phases = min(max(round(cpu / 3600e9), 1), 10)
        assert io["phases"] == phases and io["checkpoints"] == phases - 1
        assert io["compute"] == {"type": "parallel_homogeneous", "cpu": round(cpu / phases),
                                 "com": alloc["profiles"][same["profile"]]["com"]}
        ckpt = job["bb"] // 2
        assert io["checkpoint"] == {"type": "parallel_homogeneous_pfs", "bytes_to_read": 0, "bytes_to_write": ckpt,
                                    "storage": "bb"}
        assert io["flush"] == {"type": "data_staging", "nb_bytes": ckpt, "from": "bb", "to": "pfs"}
        assert io["stage_in"] == {"type": "data_staging", "nb_bytes": job["bb"], "from": "pfs", "to": "bb"}
        assert io["stage_out"] == {"type": "data_staging", "nb_bytes": job["bb"], "from": "bb", "to": "pfs"}
        static = doc["profiles"][job["profile"]]
        assert static["cpu"] == cpu and static["com"] == io["compute"]["com"] * phases
    long_job = next(j for j in doc["jobs"] if j["swf_id"] == 4)
    assert long_job["io"]["phases"] == 10  # 40000 s: capped at 10 phases
    two_hours = next(j for j in doc["jobs"] if j["swf_id"] == 2)
    assert two_hours["io"]["phases"] == 2


def test_io_cap_keeps_five_percent_of_compute(small_swf, small_platform):
    (doc,), _ = swf_to_workloads(str(small_swf), small_platform, ModelParams(model="io-aware", seed=3, kappa=1e6))
    for job in doc["jobs"]:
        runtime = {1: 100, 2: 7200, 3: 60, 4: 40000}[job["swf_id"]]
        assert doc["profiles"][job["profile"]]["cpu"] == round(0.05 * runtime * 1e9)


def test_kth_alloc_only_statistics(kth_full):
    jobs = kth_full["jobs"]
    assert len(jobs) == 28453 and kth_full["nb_res"] == 96
    assert jobs[0]["subtime"] == 0 and jobs[-1]["subtime"] == 29363618 - 599850
    assert [j["id"] for j in jobs] == list(range(len(jobs)))
    theta = np.array([kth_full["profiles"][j["profile"]]["com"] for j in jobs if j["res"] > 1], dtype=float)
    assert theta.mean() == pytest.approx(100e6, rel=0.01)
    assert theta.std() == pytest.approx(20e6, rel=0.03)
    bb = np.array([j["bb"] for j in jobs if j["res"] <= 12 and kth_full["profiles"][j["profile"]]["cpu"] > 120e9])
    assert np.median(bb) == pytest.approx(2563753 * 1024, rel=0.04)  # Table 2.4 median
    assert bb.min() >= 100_000_000 and bb.max() <= 40 * 10**9
    for job in jobs:  # every request fits the platform (unsplittable, 12 BB nodes of 40 GB)
        assert 12 * (40 * 10**9 // job["bb"]) >= job["res"]


def test_split_keeps_every_job_exactly_once(kth_full):
    parts, _ = swf_to_workloads(str(need_swf()), read_platform(DF96), ModelParams(seed=0), split=16)
    assert len(parts) == 16
    full = {j["swf_id"]: j for j in kth_full["jobs"]}
    seen: list[int] = []
    period_end = None
    for k, part in enumerate(parts, start=1):
        validate(part)
        meta = part["coburst"]
        assert (meta["part"], meta["parts"]) == (k, 16)
        if period_end is not None:
            assert meta["period_start"] == pytest.approx(period_end)
        period_end = meta["period_end"]
        jobs = part["jobs"]
        assert 1000 < len(jobs) < 3000  # thesis: 1222 to 2940 jobs per period
        assert jobs[0]["subtime"] == 0 and [j["id"] for j in jobs] == list(range(len(jobs)))
        for job in jobs:
            seen.append(job["swf_id"])
            ref = full[job["swf_id"]]
            assert job["bb"] == ref["bb"] and job["res"] == ref["res"] and job["walltime"] == ref["walltime"]
            assert part["profiles"][job["profile"]] == kth_full["profiles"][ref["profile"]]
    assert len(seen) == len(set(seen)) == len(full)
    assert sorted(seen) == sorted(full)
    days = (parts[0]["coburst"]["period_end"] - parts[0]["coburst"]["period_start"]) / 86400
    assert days == pytest.approx(20.81, abs=0.01)  # §4.1


def test_output_is_byte_identical_and_samples_are_reproducible(tmp_path):
    # the documented command (README) reproduces the shipped sample byte for byte
    kth = need_swf()
    out = tmp_path / "alloc-only.json"
    proc = run_cli("workload", "swf", str(kth), "--max-jobs", "200", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == (ROOT / "workloads" / "kth_alloc_only_sample.json").read_bytes()
    assert validate(read_workload(out))["jobs"] == 200
    platform = read_platform(DF96)
    (io_doc,), _ = swf_to_workloads(str(kth), platform, ModelParams(model="io-aware"), max_jobs=200,
                                    platform_name="dragonfly96.xml")
    assert dumps(io_doc).encode() == (ROOT / "workloads" / "kth_io_aware_sample.json").read_bytes()
    assert validate(io_doc)["io_jobs"] == 200
    (seed1,), _ = swf_to_workloads(str(kth), platform, ModelParams(seed=1), max_jobs=200,
                                   platform_name="dragonfly96.xml")
    assert dumps(seed1).encode() != out.read_bytes()


def test_cli_split_writes_numbered_parts(tmp_path, small_swf):
    proc = run_cli("workload", "swf", str(small_swf), "-p", str(SMALL), "--split", "3", "-o",
                   str(tmp_path / "w.json"))
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["w.part01.json", "w.part02.json", "w.part03.json"]
    counts = [len(json.loads((tmp_path / n).read_text())["jobs"]) for n in names]
    assert sum(counts) == 4 and counts == [3, 0, 1]  # submits 1000..1500 in 3 periods of ~167 s


@pytest.mark.parametrize("args, message", [
    (["--split", "0"], "--split: must be >= 1"),
    (["--max-jobs", "0"], "--max-jobs: must be >= 1"),
    (["--kappa", "-1"], "--kappa: must be >= 0"),
    (["-p", "nowhere.xml"], "nowhere.xml: platform file not found"),
])
def test_cli_option_errors(tmp_path, small_swf, args, message):
    proc = run_cli("workload", "swf", str(small_swf), "-o", str(tmp_path / "w.json"), *args)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_platform_without_compute_hosts(tmp_path, small_swf):
    xml = tmp_path / "p.xml"
    xml.write_text("<?xml version='1.0'?><platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">"
                   "<prop id=\"link_bandwidth\" value=\"1e9\"/><host id=\"master\" speed=\"1Gf\">"
                   "<prop id=\"role\" value=\"master\"/></host></zone></platform>")
    proc = run_cli("workload", "swf", str(small_swf), "-p", str(xml), "-o", str(tmp_path / "w.json"))
    assert proc.returncode == 2 and f"{xml}: the platform has no compute host" in proc.stderr
    xml.write_text("<platform><zone id='z'")
    proc = run_cli("workload", "swf", str(small_swf), "-p", str(xml), "-o", str(tmp_path / "w.json"))
    assert proc.returncode == 2 and "invalid XML" in proc.stderr


def test_workload_validation_messages():
    (doc,), _ = swf_to_workloads(str(need_swf()), read_platform(SMALL),
                                 ModelParams(model="io-aware"), max_jobs=3)
    validate(doc)
    cases = [
        (lambda d: d.pop("nb_res"), "the 'nb_res' field is missing"),
        (lambda d: d["jobs"][1].update(res=99), "jobs[1].res: must be between 1 and nb_res=12"),
        (lambda d: d["jobs"][2].update(profile="nope"), "jobs[2].profile: unknown profile"),
        (lambda d: d["jobs"][0].update(bb=-5), "jobs[0].bb: must be >= 0"),
        (lambda d: d["jobs"][0].update(bb=1.5), "jobs[0].bb: expected an integer"),
        (lambda d: d["jobs"][1].update(id=0), "jobs[1].id: duplicate job id"),
        (lambda d: d["jobs"][0]["io"].pop("flush"), "jobs[0].io: lacks profile 'flush'"),
        (lambda d: d["jobs"][0]["io"].update(checkpoints=7), "checkpoints = phases - 1"),
        (lambda d: d["jobs"][0]["io"]["stage_in"].update(type="delay"), "jobs[0].io.stage_in: profile of type"),
        (lambda d: d["profiles"]["p0"].update(type="magic"), "profiles.p0.type: unknown or unsupported profile type"),
        (lambda d: d["jobs"][0].pop("subtime"), "jobs[0]: job lacks field 'subtime'"),
    ]
    for mutate, message in cases:
        bad = copy.deepcopy(doc)
        mutate(bad)
        with pytest.raises(InputError) as err:
            validate(bad, "w.json")
        assert message in str(err.value), (message, str(err.value))
    assert dumps(doc).endswith("}\n") and "\n" not in dumps(doc)[:-1]


def test_cli_check(tmp_path):
    proc = run_cli("workload", "check", "workloads/kth_io_aware_sample.json")
    assert proc.returncode == 0, proc.stderr
    assert "IO-Aware jobs" in proc.stdout
    bad = tmp_path / "bad.json"
    bad.write_text('{"nb_res": 4, "jobs": [], "profiles": ')
    proc = run_cli("workload", "check", str(bad))
    assert proc.returncode == 2 and "invalid JSON" in proc.stderr


def test_bb_source_memory_uses_the_swf_request(tmp_path, small_platform):
    swf = tmp_path / "mem.swf"
    swf.write_text("1 0 0 3600 2 -1 -1 2 7200 3000000 1 1 1 -1 -1 -1 -1 -1\n"
                   "2 5 0 3600 2 -1 -1 2 7200 -1 1 1 1 -1 -1 -1 -1 -1\n"
                   "3 9 0 3600 2 -1 -1 2 7200 50000 1 1 1 -1 -1 -1 -1 -1\n")
    (doc,), _ = swf_to_workloads(str(swf), small_platform, ModelParams(bb_source="memory"))
    (drawn,), _ = swf_to_workloads(str(swf), small_platform, ModelParams())
    assert doc["jobs"][0]["bb"] == 3000000 * 1024  # KB per processor -> bytes per node
    assert doc["jobs"][1]["bb"] == drawn["jobs"][1]["bb"]  # unknown: drawn from the model
    assert doc["jobs"][2]["bb"] == 100_000_000  # floor


def test_io_profiles_are_valid_batsim_profiles_for_coburst_sim():
    simulator = pytest.importorskip("coburst.simulator.workload")
    doc = read_workload(ROOT / "workloads" / "kth_io_aware_sample.json")
    for job in doc["jobs"]:
        for key in ("stage_in", "compute", "checkpoint", "flush", "stage_out"):
            simulator.validate_profile(f"{job['id']}-{key}", job["io"][key], "sample", key)
    simulator.load_workload(ROOT / "workloads" / "kth_io_aware_sample.json", "w0")
