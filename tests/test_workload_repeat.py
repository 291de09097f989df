"""``coburst workload swf --repeat K`` and ``--model delay``: long logs written job by job.

The repeated workload is the log K times end to end (ids and submission times shifted,
profiles shared); with K = 1 the bytes are those of the plain conversion; the writer's memory
does not grow with K (measured with tracemalloc: the property, not a figure)."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from cli_support import call
from shared_data import need_swf, swf_log
from coburst.workloads.batsim_json import dumps, repeat_period, write_repeated

REPO = Path(__file__).resolve().parents[1]
KTH = swf_log()
KTH_PLATFORM = REPO / "platforms" / "kth_sp2.xml"


def _doc(times, ids=None):
    ids = list(range(len(times))) if ids is None else ids
    return {"nb_res": 4, "jobs": [{"id": i, "subtime": t, "walltime": 10, "res": 1, "profile": "d"}
                                  for i, t in zip(ids, times)],
            "profiles": {"d": {"type": "delay", "delay": 3}}}


def test_repeat_once_is_the_plain_writer(tmp_path):
    doc = _doc([0, 2.5, 7])
    write_repeated(doc, tmp_path / "w.json", 1)
    assert (tmp_path / "w.json").read_text() == dumps(doc)


@pytest.mark.parametrize("times, period", [([0, 4, 10], 15), ([0], 1), ([0, 0.5, 1.0], 2.0), ([0, 2.0, 5.0], 7.5), ([3, 3], 1)])
def test_period_is_span_plus_mean_gap(times, period):
    assert repeat_period(_doc(times)) == period


def test_copies_shift_ids_and_times_and_share_profiles(tmp_path):
    doc = _doc([0, 4, 10])
    assert write_repeated(doc, tmp_path / "w.json", 3) == 9
    out = json.loads((tmp_path / "w.json").read_text())
    assert [j["id"] for j in out["jobs"]] == list(range(9))
    assert [j["subtime"] for j in out["jobs"]] == [0, 4, 10, 15, 19, 25, 30, 34, 40]
    assert all(isinstance(j["subtime"], int) for j in out["jobs"])
    assert out["profiles"] == doc["profiles"]
    assert out["jobs"][4] == {**doc["jobs"][1], "id": 4, "subtime": 19}  # field order kept


def test_repeat_needs_jobs_numbered_in_order(tmp_path):
    from coburst.errors import InputError

    with pytest.raises(InputError, match="numbered 0..n-1"):
        write_repeated(_doc([0, 1], ids=[1, 0]), tmp_path / "w.json", 2)
    assert not (tmp_path / "w.json").exists()


def _peak(doc, path, repeat) -> int:
    tracemalloc.start()
    try:
        write_repeated(doc, path, repeat)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_writer_memory_does_not_grow_with_the_repeat_count(tmp_path):
    doc = _doc(list(range(0, 2000, 2)))
    once = _peak(doc, tmp_path / "a.json", 1)
    many = _peak(doc, tmp_path / "b.json", 40)  # 40,000 jobs
    assert (tmp_path / "b.json").stat().st_size > 30 * (tmp_path / "a.json").stat().st_size
    assert many < once + 64 * 1024, (once, many)


def test_cli_delay_model_repeated(tmp_path):
    out1, out3 = tmp_path / "k1.json", tmp_path / "k3.json"
    args = [need_swf(), "--model", "delay", "-p", KTH_PLATFORM, "--max-jobs", 500, "-q"]
    assert call("workload", "swf", *args, "-o", out1) == (0, "")
    code, err = call("workload", "swf", *args[:-1], "--repeat", 3, "-o", out3)
    assert code == 0 and "(1500 jobs, delay, the log 3 times)" in err
    one, three = json.loads(out1.read_text()), json.loads(out3.read_text())
    assert one["nb_res"] == three["nb_res"] == 100
    assert all(j["type"] == "delay" for j in one["profiles"].values())
    period = repeat_period(one)
    for k in range(3):
        for i, job in enumerate(one["jobs"]):
            assert three["jobs"][k * 500 + i] == {**job, "id": k * 500 + i, "subtime": job["subtime"] + k * period}
    assert "repeated 3 times" in three["description"]
    code, _ = call("workload", "swf", *args[:-1], "--repeat", 3, "-o", tmp_path / "again.json")
    assert code == 0 and (tmp_path / "again.json").read_bytes() == out3.read_bytes()  # deterministic


def test_cli_alloc_only_repeat_records_it_in_the_metadata(tmp_path):
    out = tmp_path / "w.json"
    code, _ = call("workload", "swf", need_swf(), "--max-jobs", 50, "--repeat", 2, "-o", out, "-q")
    assert code == 0
    doc = json.loads(out.read_text())
    assert len(doc["jobs"]) == 100 and doc["coburst"]["repeat"] == 2 and len(doc["profiles"]) == 50
    assert {j["profile"] for j in doc["jobs"][50:]} == {j["profile"] for j in doc["jobs"][:50]}


@pytest.mark.parametrize("extra, where", [(["--repeat", "0"], "--repeat"), (["--repeat", "2", "--split", "4"], "--repeat"),
                                         (["--model", "delay", "--split", "2"], "--split")])
def test_cli_bad_repeat_options(tmp_path, extra, where):
    code, err = call("workload", "swf", KTH, "-o", tmp_path / "w.json", *extra)
    assert code == 2 and where in err
    assert not list(tmp_path.iterdir())
