"""Workflows (``-W``, ``--WS``) without the real Batsim: reading DAX files as Batsim 4.2.1
does (:mod:`coburst.simulator.workflow`), C's number parsing, and the errors of ``coburst
sim``.  The comparison with Batsim itself is ``tests/test_crossengine_workflows.py``."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from simharness import run_cli, run_sim

from coburst.errors import InputError
from coburst.simulator.workflow import c_strtod, c_strtol, load_dax, parse_start_time


@pytest.mark.parametrize("text, value, whole", [
    ("35.79", 35.79, True), (" 2", 2.0, False), ("1e3", 1000.0, True), ("1e", 1.0, False), (".5x", 0.5, False),
    ("", 0.0, False), ("abc", 0.0, False), ("-0x1p4", -16.0, True), ("INF", math.inf, True)])
def test_strtod(text, value, whole):
    assert c_strtod(text) == (value, whole)


@pytest.mark.parametrize("text, value", [("4", 4), ("4.5", 4), ("x", 0), ("-3", -3), (str(2 ** 32 + 5), 5),
                                         (str(2 ** 70), -1)])
def test_strtol_to_int(text, value):
    assert c_strtol(text)[0] == value


def test_start_time():
    assert parse_start_time("12.5") == 12.5 and parse_start_time("3abc") == 3.0
    for bad in ("x", "-1", ""):
        with pytest.raises(InputError, match="--WS"):
            parse_start_time(bad)


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_dax_as_batsim_reads_it(tmp_path, capsys):
    """Tasks by id (a repeated id replaces the first), num_procs <= 0 or absent -> 1, runtime
    absent -> 0, non-<job> elements and namespaces ignored, dependencies in document order."""
    path = write(tmp_path / "w.dax", """<?xml version="1.0"?>
<adag xmlns="http://pegasus.isi.edu/schema/DAX">
  <job id="b" runtime="2" num_procs="0"/>
  <job id="a" runtime="1.5" num_procs="3"/>
  <file name="x"/>
  <job id="c"/>
  <job id="b" runtime="4"/>
  <child ref="c"><parent ref="a"/><parent ref="b"/><parent ref="a"/></child>
</adag>
""")
    tasks = load_dax(str(path))
    assert sorted(tasks) == ["a", "b", "c"]
    assert (tasks["a"].num_procs, tasks["a"].runtime) == (3, 1.5)
    assert (tasks["b"].num_procs, tasks["b"].runtime) == (1, 4.0)
    assert tasks["c"].runtime == 0.0
    assert [p.id for p in tasks["c"].parents] == ["a", "b"]
    assert [c.id for c in tasks["a"].children] == ["c", "c"]  # Batsim's add_edge
    err = capsys.readouterr().err
    assert "replaces the first one" in err and "no runtime" in err and "listed again" in err


@pytest.mark.parametrize("text, where, problem", [
    ("<adag><job id='a' runtime='1'/><child ref='z'/></adag>", "line 1 <child ref='z'>", "no <job> with id 'z'"),
    ("<adag><job id='a' runtime='1'/><child ref='a'><parent ref='q'/></child></adag>", "line 1 <parent ref='q'>",
     "no <job> with id 'q'"),
    ("<adag>\n<job id='a' runtime='1'>\n</adag>", "line 3 column 3", "invalid XML: mismatched tag"),
    ("<adag><job id='a' runtime='-2'/></adag>", "line 1 <job>", "finite runtime >= 0"),
])
def test_bad_dax_named(tmp_path, text, where, problem):
    path = write(tmp_path / "bad.dax", text)
    with pytest.raises(InputError) as err:
        load_dax(str(path))
    assert str(err.value).startswith(f"{path}: {where}: ") and problem in str(err.value)


def test_no_adag_means_no_task(tmp_path, capsys):
    assert load_dax(str(write(tmp_path / "w.dax", "<dag><job id='a'/></dag>"))) == {}
    assert "no <adag> root element" in capsys.readouterr().err


def test_missing_workflow_file(tmp_path):
    run = run_cli(tmp_path, ["-p", "unused.xml", "-W", str(tmp_path / "nope.dax")])
    assert run.returncode == 2 and "workflow (DAX) file not found" in run.stderr


def test_workflow_alone_runs(tmp_path):
    """A workflow is enough to make a simulation (no -w); its jobs are wf0!0, wf0!1, ..."""
    path = write(tmp_path / "w.dax", "<adag><job id='a' runtime='2'/><job id='b' runtime='1' num_procs='2'/>"
                                     "<child ref='b'><parent ref='a'/></child></adag>")
    run = run_sim(tmp_path, scheduler="easyBackfill", args=["-W", str(path)]).check()
    rows = run.rows()
    assert [(r["job_id"], r["workload_name"], r["profile"], r["requested_number_of_resources"],
             r["requested_time"]) for r in rows] == [("0", "wf0", "wf0_a", "1", "12.000000"),
                                                     ("1", "wf0", "wf0_b", "2", "11.000000")]
    assert float(rows[1]["submission_time"]) >= float(rows[0]["finish_time"])
