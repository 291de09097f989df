"""The recordings of the real Batsim (``batsim_recorded``): keys that do not depend on the
machine, packs that read back what was written (the same bytes for the same cases), and the
comparison of a live run with its recording that ignores only what varies between two Batsim
runs (job colours of the Pajé trace, wall-clock columns, hash-map orders)."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

import batsim_recorded as rec


def _inputs(folder: Path, res: int = 1) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    w = folder / "w.json"
    w.write_text(json.dumps({"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": res, "profile": "p"}],
                             "profiles": {"p": {"type": "delay", "delay": 5}}}))
    return w


def test_key_is_the_same_in_any_folder_and_follows_contents(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b" / "deeper"
    wa, wb = _inputs(a), _inputs(b)
    desc = lambda tmp, w: {"workloads": [w], "options": {"record": str(tmp / "m.jsonl")}, "args": ["-q"]}
    assert rec.case_key(desc(a, wa), a) == rec.case_key(desc(b, wb), b)
    wb.write_text(wb.read_text().replace('"res": 1', '"res": 2'))
    assert rec.case_key(desc(a, wa), a) != rec.case_key(desc(b, wb), b)
    assert rec.case_key({**desc(a, wa), "args": ["-q", "--mmax", "2"]}, a) != rec.case_key(desc(a, wa), a)


def test_folder_named_inside_a_file_does_not_change_the_key(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for folder in (a, b):
        folder.mkdir()
        (folder / "events.txt").write_text(f'{{"path": "{folder}/trace.txt"}}\n')
    assert rec.case_key({"args": [a / "events.txt"]}, a) == rec.case_key({"args": [b / "events.txt"]}, b)


def test_pack_round_trip_is_deterministic(tmp_path, monkeypatch):
    monkeypatch.setattr(rec, "PACKS", tmp_path / "packs")
    shared = "job_id,finish\n1,5.000000\n"
    cases = {"k2": rec.Outcome(0, "out", "err", {"wall": 1.5}, {"b_jobs.csv": shared, "b.log": "x"}),
             "k1": rec.Outcome(3, "", "boom {TMP}/x", {}, {"a_jobs.csv": shared})}
    path = rec.write_pack("test_fake", cases)
    first = path.read_bytes()
    data = json.loads(lzma.decompress(first))
    refs = [d for c in data["cases"].values() for d in (c["stdout"], c["stderr"], *c["files"].values())]
    assert len(refs) == 7 and len(data["blobs"]) == 6  # the _jobs.csv of both cases is stored once
    rec.load_pack.cache_clear()
    back = rec.all_cases("test_fake")
    assert back == cases
    assert rec.write_pack("test_fake", dict(reversed(list(cases.items())))).read_bytes() == first
    rec.load_pack.cache_clear()


def test_replayed_files_land_in_the_test_folder(tmp_path):
    files = {"out_jobs.csv": "a\n", "sched/out_events.csv": "{TMP}/w.json\n"}
    rec.restore_files(tmp_path, files)
    assert (tmp_path / "sched" / "out_events.csv").read_text() == f"{tmp_path}/w.json\n"
    before = rec.snapshot(tmp_path)
    (tmp_path / "new_jobs.csv").write_text(f"{tmp_path}\n")
    assert rec.created_files(tmp_path, before) == {"new_jobs.csv": "{TMP}\n"}


def _outcome(**files: str) -> rec.Outcome:
    base = {"out_jobs.csv": "1,0.5\n", "out_schedule.csv": "a,simulation_time,makespan\n1,0.12,9\n",
            "out_schedule.trace": '5 j1 "0.1 0.2 0.3"\n',
            "transcript-out.jsonl": json.dumps({"dir": "in", "raw": '{"b":1,"a":2}'}) + "\n",
            "scheduler-out.log": "took 0.3 s\n"}
    return rec.Outcome(0, "", "", {}, {**base, **files})


def test_live_run_against_recording_ignores_only_what_varies():
    recorded = _outcome()
    assert rec.recording_differences(recorded, _outcome(**{
        "out_schedule.csv": "a,simulation_time,makespan\n1,7.5,9\n",
        "out_schedule.trace": '5 j1 "0.9 0.8 0.7"\n',
        "transcript-out.jsonl": json.dumps({"dir": "in", "raw": '{"a":2,"b":1}'}) + "\n",
        "scheduler-out.log": "took 9 s\n"})) == []
    assert rec.recording_differences(recorded, _outcome(**{"out_jobs.csv": "1,0.500001\n"})) == [
        "out_jobs.csv differs"]
    assert rec.recording_differences(recorded, _outcome(**{"out_schedule.csv": "a,simulation_time,makespan\n"
                                                                               "1,0.12,10\n"})) == [
        "out_schedule.csv differs"]
    live = _outcome()
    live.returncode = 1
    del live.files["out_jobs.csv"]
    assert rec.recording_differences(recorded, live) == ["exit status: recorded 0, live 1",
                                                          "out_jobs.csv: recorded only"]


def test_a_crash_is_a_crash_whichever_signal_ends_it():
    """Batsim's abort sometimes ends in a segmentation fault: recorded SIGABRT, live SIGSEGV (or
    the other way) is the same outcome; a crash against an exit, or another signal, is not."""
    def ending(status: int) -> rec.Outcome:
        outcome = _outcome()
        outcome.returncode = status
        return outcome

    assert rec.recording_differences(ending(-6), ending(-11)) == []
    assert rec.recording_differences(ending(-11), ending(-6)) == []
    assert rec.recording_differences(ending(-6), ending(1)) == ["exit status: recorded -6, live 1"]
    assert rec.recording_differences(ending(-6), ending(-9)) == ["exit status: recorded -6, live -9"]
    assert rec.recording_differences(ending(0), ending(-11)) == ["exit status: recorded 0, live -11"]


def test_the_trace_of_a_run_with_shared_machines_is_not_compared():
    """Batsim draws, on a machine running two jobs at once, the job first in a set ordered by
    heap address: such a run's Pajé trace changes from one run to the next (measured on the
    IO-aware runs, where I/O jobs share storage machines); any other trace is compared."""
    head = "job_id,starting_time,finish_time,allocated_resources\n"
    shared = head + "1,0.0,10.0,0-3\n2,5.0,8.0,3 7\n"
    apart = head + "1,0.0,10.0,0-3\n2,10.0,18.0,3 7\n"
    for jobs, expected in ((shared, []), (apart, ["out_schedule.trace differs"])):
        recorded = _outcome(**{"out_jobs.csv": jobs, "out_schedule.trace": "6 5.0 machine_state m3 j1\n"})
        live = _outcome(**{"out_jobs.csv": jobs, "out_schedule.trace": "6 5.0 machine_state m3 j2\n"})
        assert rec.recording_differences(recorded, live) == expected


def test_workload_paths_in_messages_are_compared_from_the_data_folder_down():
    """``SIMULATION_BEGINS`` names the workload files by absolute path: the folders above
    Batsim's data, the SWF logs or the checkout are the machine's (a clone's ``../shared`` is
    often a link), what follows them is the run's."""
    def transcript(w0: str, w1: str) -> dict:
        raw = json.dumps({"events": [{"type": "SIMULATION_BEGINS", "data": {"workloads": {"w0": w0, "w1": w1}}}]})
        return {"transcript-out.jsonl": json.dumps({"dir": "in", "raw": raw}) + "\n"}

    recorded = _outcome(**transcript("/work/shared/data/batsim-4.2.1/workloads/a.json", "/work/main/workloads/b.json"))
    same = _outcome(**transcript("/tmp/x/shared/data/batsim-4.2.1/workloads/a.json", "/tmp/x/main/workloads/b.json"))
    other = _outcome(**transcript("/tmp/x/shared/data/batsim-4.2.1/workloads/c.json", "/tmp/x/main/workloads/b.json"))
    assert rec.recording_differences(recorded, same) == []
    assert rec.recording_differences(recorded, other) == ["transcript-out.jsonl differs"]


@pytest.mark.parametrize("pack", sorted(rec.PACKS.glob("*.json.xz")), ids=lambda p: p.name)
def test_every_pack_reads(pack):
    module = pack.name[: -len(".json.xz")]
    assert (Path(__file__).parent / f"{module}.py").is_file(), f"{pack.name}: no test module {module}.py"
    cases = rec.all_cases(module)
    assert cases, f"{pack.name} holds no case"
    for key, outcome in cases.items():
        assert len(key) == 32 and isinstance(outcome.returncode, int)


def test_recording_keeps_batsim_outputs_not_logs():
    run = rec.Outcome(0, "", "", {"sched_output": "x" * (rec.SCHED_OUTPUT_TAIL + 10) + "Traceback"},
                      {"out_jobs.csv": "j", "out_consumed_energy.csv": "e", "transcript-out.jsonl": "m",
                       "scheduler-out.log": "l", "recorder-out.log": "r", "scheduler-out/out_events.csv": "p"})
    kept = rec.prune(run)
    assert sorted(kept.files) == ["out_consumed_energy.csv", "out_jobs.csv", "transcript-out.jsonl"]
    assert len(kept.extra["sched_output"]) == rec.SCHED_OUTPUT_TAIL and kept.extra["sched_output"].endswith("Traceback")
