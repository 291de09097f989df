"""Long logs: memory depends on what is alive in the simulation, not on the
length of the log.

The property, not a number: the peak number of live job objects (the simulator's workload
``Job`` and ``SimJob``, pybatsim's ``Job``, the scheduling core's ``Job``) over a short log
and over the same log repeated ten times end to end stay within a small constant of each
other; the streamed reading gives the outputs of the whole-document reading byte for byte
(and the cross-engine suite compares those with Batsim's).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from coburst.simulator import workload as simworkload
from shared_data import need_swf

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = str(ROOT / "platforms" / "kth_sp2.xml")
OUTPUTS = ("_jobs.csv", "_machine_states.csv", "_schedule.trace")


def swf_workload(tmp_path: Path, repeat: int, jobs: int = 300) -> Path:
    out = tmp_path / f"kth_{jobs}x{repeat}.json"
    subprocess.run([sys.executable, "-m", "coburst.cli.main", "workload", "swf", str(need_swf()), "--model", "delay",
                    "-p", PLATFORM, "--max-jobs", str(jobs), "--repeat", str(repeat), "-q", "-o", str(out)],
                   check=True, cwd=ROOT)
    return out


TOOL = Path(__file__).resolve().parent / "tools" / "live_jobs.py"


def run_counted(workload: Path, export: Path, *, whole: bool = False, scheduler: str = "easy") -> dict:
    """``coburst run`` in-process in a child (one SimGrid engine per process), counting live
    job objects (tests/tools/live_jobs.py): ``{"rows", "peak"}``."""
    cmd = [sys.executable, str(TOOL), *(["--whole"] if whole else []), scheduler, "-p", PLATFORM,
           "-w", str(workload), "-e", str(export), "-q"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_live_jobs_do_not_grow_with_the_log(tmp_path):
    once, ten = swf_workload(tmp_path, 1), swf_workload(tmp_path, 10)
    a = run_counted(once, tmp_path / "x1")
    b = run_counted(ten, tmp_path / "x10")
    assert (a["rows"], b["rows"]) == (300, 3000)
    assert a["peak"] > 0
    # same log ten times: the same queues, the same live jobs (a leak of one object per job
    # would show 3000 against 300)
    assert b["peak"] <= a["peak"] + 40, (a, b)
    # the whole reading holds every job of the file
    assert run_counted(ten, tmp_path / "w10", whole=True)["peak"] >= 3000


def test_the_workload_file_is_read_as_a_stream(tmp_path):
    wl = simworkload.load_workload(swf_workload(tmp_path, 2), "w0", stream=True)
    assert wl.jobs is None and wl.nb_jobs == 600
    order = list(wl.submission_order())
    assert [j.id for j in order] == [j.id for j in sorted(order, key=lambda j: (j.subtime, j.id))]
    assert wl.last_released == (order[-1].subtime, order[-1].id)
    assert wl.has_job("w0!599") == (order[-1].subtime, "w0!599") and wl.has_job("w0!600") is None


def test_the_simulator_streams_files_from_a_size_on(tmp_path, monkeypatch):
    """``stream="auto"`` (the simulator's choice): a file under ``STREAM_FROM_BYTES`` is read
    whole (one C-level pass), from that size on streamed; the same jobs in the same order."""
    path = swf_workload(tmp_path, 2)
    size = path.stat().st_size
    monkeypatch.setattr(simworkload, "STREAM_FROM_BYTES", size + 1)
    whole = simworkload.load_workload(path, "w0", stream="auto")
    monkeypatch.setattr(simworkload, "STREAM_FROM_BYTES", size)
    streamed = simworkload.load_workload(path, "w0", stream="auto")
    assert whole.jobs is not None and streamed.jobs is None
    assert [(j.id, j.subtime, j.walltime, j.res, j.profile) for j in whole.submission_order()] == \
        [(j.id, j.subtime, j.walltime, j.res, j.profile) for j in streamed.submission_order()]
    monkeypatch.undo()
    assert simworkload.load_workload(path, "w0", stream="auto").jobs is not None  # ~40 KB: whole


def write(path: Path, doc) -> Path:
    path.write_text(json.dumps(doc))
    return path


def small_doc(jobs):
    profiles = {"a": {"type": "delay", "delay": 10.25}, "b": {"type": "delay", "delay": 3.0000000000000004}}
    return {"nb_res": 4, "jobs": jobs, "profiles": profiles}


#: ties at one subtime sorted by id as strings ("w0!10" before "w0!9"), long decimals, extra fields
TIES = [{"id": 9, "subtime": 1.1, "res": 1, "profile": "a", "walltime": 100},
        {"id": 10, "subtime": 1.1, "res": 2, "profile": "b", "x": {"k": [1, 2.5]}},
        {"id": "c", "subtime": 1.1, "res": 1, "profile": "a"},
        {"id": 3, "subtime": 2.000000000000001, "res": 4, "profile": "b", "walltime": 2.9999999999999996},
        {"id": 4, "subtime": 0.30000000000000004, "res": 3, "profile": "a"}]


@pytest.mark.parametrize("name,jobs,streamed", [
    ("sorted_ties", sorted(TIES, key=lambda j: j["subtime"]), True),
    ("unsorted", TIES, False),  # not in submission order: read whole (Batsim sorts them all first)
])
def test_streamed_outputs_are_the_whole_reading_outputs(tmp_path, name, jobs, streamed):
    path = write(tmp_path / f"{name}.json", small_doc(jobs))
    wl = simworkload.load_workload(path, "w0", stream=True)
    assert (wl.jobs is None) == streamed
    run_counted(path, tmp_path / "stream")
    run_counted(path, tmp_path / "whole", whole=True)
    for suffix in OUTPUTS:
        assert (tmp_path / f"stream{suffix}").read_bytes() == (tmp_path / f"whole{suffix}").read_bytes(), suffix


@pytest.mark.parametrize("text", [
    '{"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "a", "s": "\\ud800"}], '
    '"profiles": {"a": {"type": "delay", "delay": 1}}}',  # a lone surrogate escape
    '{"nb_res": 4, "jobs": [], "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "a"}], '
    '"profiles": {"a": {"type": "delay", "delay": 1}}}',  # a top-level key twice (json keeps the last)
    '{"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "a", "n": 123456789012345678901234}], '
    '"profiles": {"a": {"type": "delay", "delay": 1}}}',  # an integer past 64 bits
    '{"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "a"}, '
    '{"id": 1, "subtime": 1, "res": 1, "profile": "a"}], "profiles": {"a": {"type": "delay", "delay": 1}}}',
])
def test_inputs_the_stream_could_read_otherwise_go_to_the_whole_reading(tmp_path, text):
    path = tmp_path / "w.json"
    path.write_text(text)
    assert simworkload.scan_workload(path, "w0") is None


def test_errors_are_the_whole_readings(tmp_path, capsys):
    """A bad job after thousands of good ones: the whole reading's message, no warning twice."""
    from coburst.errors import InputError

    jobs = [{"id": i, "subtime": -1 if i == 0 else i, "res": 1, "profile": "a"} for i in range(3000)]
    jobs[2500]["res"] = 0
    path = write(tmp_path / "bad.json", small_doc(jobs))
    with pytest.raises(InputError) as err:
        simworkload.load_workload(path, "w0", stream=True)
    assert "jobs[2500].res" in str(err.value)
    assert capsys.readouterr().err.count("negative submission time") == 1


def test_finished_jobs_are_known_as_batsim_knows_them(tmp_path):
    """KILL_JOB of a job that ended, of a job never submitted: Batsim's two messages, also
    for a streamed workload whose ended jobs are not listed."""
    from coburst.simulator.jobs import CompactIds

    ids = CompactIds()
    for i in range(70_000):
        ids.add(f"w0!{i}")
    assert len(ids) == 70_000 and "w0!69999" in ids and "w0!0" in ids and "w0!70000" not in ids
    wl = simworkload.load_workload(write(tmp_path / "w.json", small_doc(sorted(TIES, key=lambda j: j["subtime"]))),
                                   "w0", stream=True)
    first = next(iter(wl.submission_order()))
    assert first.id == "w0!4" and wl.released(wl.has_job("w0!4")) and not wl.released(wl.has_job("w0!3"))
