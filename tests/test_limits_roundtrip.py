"""Round trips: what a run writes, ``coburst analyze`` and ``coburst report`` read back.

* Job ids are read as Batsim 4.2.1 reads them: it rewrites each job's JSON with the id
  unescaped and aborts when that is not JSON any more (an id holding ``"``, a newline or
  another control character, or one of ``( ) , | }``), and it keeps an id up to its first NUL
  character.  coburst refuses the first (file, job, problem) and cuts the second (a warning),
  so ``_jobs.csv``, written unquoted byte for byte as Batsim writes it, never holds an id that
  would need quoting; the ids it holds are read back as they are.
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
