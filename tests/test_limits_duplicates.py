"""Duplicate JSON keys in a workload (``"res": 1, "res": 99``) are read as Batsim 4.2.1 reads
them: RapidJSON's ``FindMember`` finds the *first* member (checked on the real binary: for
``"res": 1, "res": 12`` it requires 1 machine, ``server.cpp``: "The job requires 1 machines
but only 12 were given"), where Python's ``json`` keeps the last.  Each repeated key is
named in a warning; the whole and the streamed readings give the same jobs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from coburst.simulator import workload as wmod
from coburst.simulator.workload import load_workload

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = ROOT / "platforms" / "cluster16.xml"

DUPLICATED = ('{"nb_res": 16, "nb_res": 2, "jobs": [\n'
              '{"id": 1, "subtime": 0, "res": 1, "res": 12, "profile": "d", "walltime": 100, "walltime": 2},\n'
              '{"id": 2, "subtime": 1, "res": 3, "profile": "d", "profile": "nothing"}],\n'
              ' "profiles": {"d": {"type": "delay", "delay": 5, "delay": 50}}}')


@pytest.mark.parametrize("stream", [False, True])
def test_the_first_value_is_read_with_a_warning(tmp_path, capsys, monkeypatch, stream):
    path = tmp_path / "w.json"
    path.write_text(DUPLICATED)
    monkeypatch.setattr(wmod, "STREAM_FROM_BYTES", 0)
    wl = load_workload(path, "w0", stream="auto" if stream else False)
    err = capsys.readouterr().err
    assert wl.nb_res == 16
    jobs = list(wl.iter_jobs())
    assert [(j.res, j.walltime, j.profile) for j in jobs] == [(1, 100.0, "d"), (3, -1.0, "d")]
    assert jobs[0].json["res"] == 1  # the scheduler is sent what coburst read
    assert wl.profiles["d"].data["delay"] == 5
    for where, key, first, other in [("nb_res", "nb_res", "16", "2"), ("jobs[0].res", "res", "1", "12"),
                                     ("jobs[0].walltime", "walltime", "100", "2"),
                                     ("jobs[1].profile", "profile", '"d"', '"nothing"'),
                                     ("profiles.d.delay", "delay", "5", "50")]:
        assert (f"{path}: {where}: duplicate key \"{key}\": the first value, {first}, is read (as Batsim 4.2.1 "
                f"reads it), not {other}") in err, err


def test_a_run_uses_the_first_values(tmp_path):
    (tmp_path / "w.json").write_text(DUPLICATED)
    proc = subprocess.run([sys.executable, "-m", "coburst", "run", "fcfs", "-p", str(PLATFORM), "-w", "w.json",
                           "-e", "out", "-q"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = [line.split(",") for line in (tmp_path / "out_jobs.csv").read_text().splitlines()]
    head = rows[0]
    job1 = dict(zip(head, rows[1]))
    assert job1["requested_number_of_resources"] == "1" and job1["requested_time"] == "100.000000"
    assert job1["execution_time"] == "5.000000" and job1["final_state"] == "COMPLETED_SUCCESSFULLY"


def test_duplicate_profile_names_stay_an_error(tmp_path):
    """Batsim 4.2.1 refuses them ("duplication of profile name 'd'")."""
    from coburst.errors import InputError

    path = tmp_path / "w.json"
    path.write_text('{"nb_res": 1, "jobs": [], "profiles": {"d": {"type": "delay", "delay": 1}, '
                    '"d": {"type": "delay", "delay": 2}}}')
    with pytest.raises(InputError, match="profiles.d: duplicate profile name"):
        load_workload(path, "w0")


def test_many_duplicates_are_summed_up(tmp_path, capsys):
    keys = ", ".join(f'"k{i}": {i}, "k{i}": {i + 1}' for i in range(20))
    path = tmp_path / "w.json"
    path.write_text('{"nb_res": 1, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d", ' + keys + "}], "
                    '"profiles": {"d": {"type": "delay", "delay": 1}}}')
    load_workload(path, "w0")
    err = capsys.readouterr().err
    assert err.count('duplicate key "') == 5 and "15 more duplicate keys" in err, err
