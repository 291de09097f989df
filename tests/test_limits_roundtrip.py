"""Round trips: what a run writes, ``coburst analyze`` and ``coburst report`` read back.

* Job ids are read as Batsim 4.2.1 reads them: it rewrites each job's JSON with the id
  unescaped and aborts when that is not JSON any more (an id holding ``"``, a newline or
  another control character, or one of ``( ) , | }``), and it keeps an id up to its first NUL
  character.  coburst refuses the first (file, job, problem) and cuts the second (a warning),
  so ``_jobs.csv``, written unquoted byte for byte as Batsim writes it, never holds an id that
  would need quoting; the ids it holds are read back as they are.
* Profile names are written unquoted, as Batsim 4.2.1 writes them (``a,b``, ``"x``, a name
  holding a newline): the readers quote them on read (``coburst.analysis.batsim_rows``), in
  whichever chunk of a large file they first appear.
* Run names holding ``$...$`` (TeX math for matplotlib) are drawn as text by ``coburst
  report``, not parsed (a ``\\frac{`` used to end in a traceback).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from cli_support import call

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = ROOT / "platforms" / "cluster16.xml"
COBURST = [sys.executable, "-m", "coburst"]


def workload(tmp: Path, ids: list, name: str = "w.json") -> Path:
    jobs = [{"id": jid, "subtime": k, "res": 1, "profile": "d"} for k, jid in enumerate(ids)]
    path = tmp / name
    path.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": {"d": {"type": "delay", "delay": 3}}}))
    return path


@pytest.mark.parametrize("jid", ['"quoted', 'a"b', "a,b", "a\nb", "a\rb", "a\tb", "a(b", "a)b", "a|b", "a}b"])
def test_ids_batsim_aborts_on_are_refused(tmp_path, jid):
    path = workload(tmp_path, ["plain", jid])
    code, err = call("run", "fcfs", "-p", PLATFORM, "-w", path, "-e", tmp_path / "out", "-q")
    assert code == 2, err
    assert f"{path}: jobs[1].id: job id {json.dumps(jid)}: Batsim 4.2.1 aborts on it" in err, err
    assert not list(tmp_path.glob("out*"))


def run(tmp: Path, workload_path: Path, prefix: str) -> subprocess.CompletedProcess:
    return subprocess.run([*COBURST, "run", "fcfs", "-p", str(PLATFORM), "-w", str(workload_path), "-e", prefix,
                           "-q"], capture_output=True, text=True, cwd=tmp, timeout=120)


def test_ids_that_need_no_quoting_round_trip(tmp_path):
    """Ids Batsim takes as they are (``;``, spaces, ``'``, ``{``, ``]``, a backslash, non-ASCII),
    and one holding a NUL (named by the text before it, as Batsim names it)."""
    ids = ["a;b", "a b", "it's", "{x", "x]", "a\\b", "é€", "nul\x00after", 7]
    proc = run(tmp_path, workload(tmp_path, ids), "out")
    assert proc.returncode == 0, proc.stderr
    assert 'jobs[7].id: job id "nul\\u0000after" holds a NUL character: the job is named "nul"' in proc.stderr
    raw = (tmp_path / "out_jobs.csv").read_bytes()
    assert b"\x00" not in raw
    expected = {"a;b", "a b", "it's", "{x", "x]", "a\\b", "é€", "nul", "7"}
    assert {line.split(b",", 1)[0].decode() for line in raw.splitlines()[1:]} == expected  # written unquoted
    code, err = call("analyze", tmp_path / "out", "-o", tmp_path / "an")
    assert code == 0, err
    jobs = pd.read_parquet(next((tmp_path / "an").glob("jobs*.parquet"))) \
        if list((tmp_path / "an").glob("jobs*.parquet")) else pd.read_csv(tmp_path / "an" / "jobs.csv", dtype=str)
    assert set(jobs["job_id"].astype(str)) == expected
    code, err = call("report", tmp_path / "out", "-o", tmp_path / "r.html")
    assert code == 0, err


def test_run_names_with_tex_math_in_report(tmp_path):
    path = workload(tmp_path, [1, 2, 3])
    (tmp_path / "runs").mkdir()
    for prefix in ("runs/a$\\frac{x$", "runs/b$x^2$", "runs/c$"):
        proc = run(tmp_path, path, prefix)
        assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([*COBURST, "report", "runs", "-o", "r.html"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    html = (tmp_path / "r.html").read_text()
    assert "a$\\frac{x$" in html and "b$x^2$" in html


HOSTILE_PROFILES = ["a,b", '"quoted', 'mid"dle', "two\nlines", ",,,", '"', "x,1.000000,1,-1.000000,1,RUNNING", "plain"]


def profiles_workload(tmp: Path, count: int = 8) -> Path:
    jobs = [{"id": str(k), "subtime": k, "res": 1, "profile": HOSTILE_PROFILES[k % len(HOSTILE_PROFILES)]}
            for k in range(count)]
    profiles = {name: {"type": "delay", "delay": 3 + k} for k, name in enumerate(HOSTILE_PROFILES)}
    path = tmp / "w.json"
    path.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": profiles}))
    return path


def test_profile_names_batsim_writes_unquoted_are_read_back(tmp_path):
    """Written as Batsim writes them (unquoted: the file is Batsim's bytes), read back whole
    by ``read_raw_jobs`` (in one chunk and in chunks of a few rows, the first bad row in a
    later chunk), ``coburst analyze`` and ``coburst report``."""
    from coburst.analysis.metrics import read_raw_jobs

    proc = run(tmp_path, profiles_workload(tmp_path, 40), "out")
    assert proc.returncode == 0, proc.stderr
    raw = (tmp_path / "out_jobs.csv").read_bytes()
    assert b"\n0,w0,a,b,0.000000," in raw and b'2,w0,mid"dle,' in raw  # unquoted, as Batsim
    for chunk in (1 << 22, 300, 1):
        df = read_raw_jobs(tmp_path / "out_jobs.csv", chunk_bytes=chunk)
        got = dict(zip(df["job_id"].astype(str), df["profile"]))
        assert got == {str(k): HOSTILE_PROFILES[k % len(HOSTILE_PROFILES)] for k in range(40)}, chunk
        assert list(df.sort_values("job_id", key=lambda c: c.astype(int))["execution_time"]) == [
            float(3 + k % len(HOSTILE_PROFILES)) for k in range(40)]
    code, err = call("analyze", tmp_path / "out", "-o", tmp_path / "an")
    assert code == 0, err
    code, err = call("report", tmp_path / "out", "-o", tmp_path / "r.html")
    assert code == 0, err


def test_a_row_batsim_would_not_write_is_still_refused(tmp_path):
    """Quoting on read applies only to Batsim's own row form: a row with an extra field
    elsewhere is refused, named by its line."""
    proc = run(tmp_path, profiles_workload(tmp_path, 8), "out")
    assert proc.returncode == 0, proc.stderr
    lines = (tmp_path / "out_jobs.csv").read_text().split("\n")
    bad = next(i for i, line in enumerate(lines) if line.startswith("7,"))
    lines[bad] = lines[bad].replace(",COMPLETED_SUCCESSFULLY,", ",COMPLETED_SUCCESSFULLY,extra,")
    (tmp_path / "bad_jobs.csv").write_text("\n".join(lines))
    code, err = call("analyze", tmp_path / "bad_jobs.csv", "-o", tmp_path / "an")
    assert code == 2
    assert f"bad_jobs.csv: line {bad + 1}: 18 fields, the header has 17 (not a row of Batsim's _jobs.csv" in err, err
    assert "Traceback" not in err
