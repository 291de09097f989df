"""Batsim's workflows (``-W``, ``--WS``, ``--workflow-jobs-limit``,
``--ignore-beyond-last-workflow``) on both engines.

Every run goes through the real Batsim 4.2.1 and ``coburst sim`` with the same pybatsim
scheduler, and everything Batsim writes is compared (:func:`crossengine.assert_identical`).
Batsim's own input is ``workloads/GENOME.d.351024866.5.dax`` on ``platforms/cluster512.xml``
(what its ``test/test_workflow.py`` runs, there with batsched's fcfs; here with pybatsim's
``easyBackfill`` and the deterministic filler of ``tests/schedulers/eventsFiller.py``), read
from Batsim's files beside the checkout (``COBURST_BATSIM_DATA``, default
``../shared/data/batsim-4.2.1``; skipped, naming the file, without them); the other cases use
small DAX files of our own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from crossengine import assert_identical, needs_batsim, run_both
from simharness import CLUSTER_MASTER, run_sim, workload
from shared_data import batsim_file, needs_batsim_data

pytestmark = needs_batsim

needs_repo = needs_batsim_data()

M = ["-m", "master_0"]


def dax(path: Path, jobs: list[tuple], edges: dict[str, list[str]]) -> Path:
    """A DAX file: ``jobs`` = (id, runtime, num_procs or None), ``edges`` = child -> parents."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<adag xmlns="http://pegasus.isi.edu/schema/DAX" version="2.1" name="t">']
    for jid, runtime, procs in jobs:
        extra = f' num_procs="{procs}"' if procs is not None else ""
        lines.append(f'  <job id="{jid}" name="n" runtime="{runtime}"{extra}/>')
    for child, parents in edges.items():
        lines.append(f'  <child ref="{child}">')
        lines += [f'    <parent ref="{p}"/>' for p in parents]
        lines.append("  </child>")
    lines.append("</adag>")
    path.write_text("\n".join(lines) + "\n")
    return path


#: a small diamond with wide tasks: A -> (B, C, D) -> E, F independent
DIAMOND = ([("A", 3.5, 2), ("B", 10.25, 1), ("C", 2, 3), ("D", 7.125, None), ("E", 1, 4), ("F", 20, "2")],
           {"B": ["A"], "C": ["A"], "D": ["A"], "E": ["B", "C", "D"]})


@needs_repo
@pytest.mark.parametrize("scheduler", ["easyBackfill", "eventsFiller"])
def test_batsims_genome_workflow(tmp_path, scheduler):
    plat = batsim_file(tmp_path, "platforms/cluster512.xml")
    wf = batsim_file(tmp_path, "workloads/GENOME.d.351024866.5.dax")
    batsim, coburst = run_both(tmp_path, platform=plat, scheduler=scheduler, args=["-W", str(wf)])
    assert_identical(batsim, coburst)
    assert len(coburst.rows()) == 36


@needs_repo
def test_batsims_genome_cut_workflow_with_a_job_limit(tmp_path):
    """``--WS`` (the workflow starts at 100.5 s) and at most 3 of its jobs at once."""
    plat = batsim_file(tmp_path, "platforms/cluster512.xml")
    wf = batsim_file(tmp_path, "workloads/GENOME.d.351024866.5.dax")
    batsim, coburst = run_both(tmp_path, platform=plat, scheduler="easyBackfill",
                               args=["--WS", str(wf), "100.5", "--workflow-jobs-limit", "3"])
    assert_identical(batsim, coburst)
    rows = coburst.rows()
    assert rows[0]["workload_name"] == "wfc0" and min(float(r["submission_time"]) for r in rows) == 100.5


@pytest.mark.parametrize("limit, more", [("0", []), ("2", ["--forward-profiles-on-submission"])])
def test_diamond_workflow(tmp_path, limit, more):
    """Wide tasks, a join, at most ``limit`` jobs at once; the tasks' delay profiles travel
    with their jobs under ``--forward-profiles-on-submission``."""
    wf = dax(tmp_path / "d.dax", *DIAMOND)
    batsim, coburst = run_both(tmp_path, platform=CLUSTER_MASTER, scheduler="easyBackfill",
                               args=M + ["-W", str(wf), "--workflow-jobs-limit", limit, *more])
    assert_identical(batsim, coburst)
    if more:
        assert coburst.events("JOB_SUBMITTED")[0]["data"]["profile"] == {"type": "delay", "delay": 3.5}


def test_workflows_beside_a_workload_ignore_beyond_last(tmp_path):
    """A workload and two workflows under ``--ignore-beyond-last-workflow``: Batsim drops
    every submission while exactly one workflow is done (its test compares the number of
    finished workflows with a ``bool``): the workload's jobs submitted between the end of
    ``wf0`` and the end of ``wfc0`` are never seen, the later ones run."""
    wf0 = dax(tmp_path / "a.dax", [("X", 5, 1), ("Y", 5, 2)], {"Y": ["X"]})
    wf1 = dax(tmp_path / "b.dax", [("P", 20, 1), ("Q", 21.5, 1), ("R", 19, 1)], {})
    wl = workload(tmp_path / "w.json", [{"id": i, "subtime": 4 * i, "res": 1, "profile": "d"} for i in range(12)],
                  {"d": {"type": "delay", "delay": 3}})
    batsim, coburst = run_both(tmp_path, workloads=[wl], platform=CLUSTER_MASTER, scheduler="easyBackfill",
                               args=M + ["-W", str(wf0), "--WS", str(wf1), "2", "--ignore-beyond-last-workflow"])
    assert_identical(batsim, coburst)
    jobs = sorted(int(r["job_id"]) for r in coburst.rows() if r["workload_name"] == "w0")
    assert jobs[0] == 0 and jobs[-1] == 11 and len(jobs) < 12


def test_duplicated_edge_as_batsim(tmp_path):
    """An edge listed twice: Batsim's ``add_edge`` appends the child twice to its parent's
    children, so the parent's completion counts twice.  A child with that one parent is
    never submitted (Batsim runs on without it; coburst warns)."""
    wf = dax(tmp_path / "dup.dax", [("A", 1, 1), ("B", 1, 1), ("C", 2, 1)], {"B": ["A", "A"], "C": ["A"]})
    batsim, coburst = run_both(tmp_path, platform=CLUSTER_MASTER, scheduler="easyBackfill", args=M + ["-W", str(wf)])
    assert_identical(batsim, coburst)
    assert [r["profile"] for r in coburst.rows()] == ["wf0_A", "wf0_C"]
    assert "edge" in coburst.stderr and "'B'" in coburst.stderr


def test_duplicated_edge_submitting_twice_refused_as_batsim(tmp_path):
    """A child of two parents, one edge listed twice, the doubled parent done first: the
    child is made ready twice and Batsim aborts creating its profile again; coburst stops
    too, naming the file and the task.  (The doubled parent done first would count three
    completions for two parents: the child would never be submitted.)"""
    wf = dax(tmp_path / "dup.dax", [("A", 1, 1), ("X", 5, 1), ("C", 1, 1)], {"C": ["A", "A", "X"]})
    runs = [run_sim(tmp_path, engine=engine, prefix=engine, platform=CLUSTER_MASTER, scheduler="easyBackfill",
                    args=M + ["-W", str(wf)], sched_timeout_ms=3000, timeout=10) for engine in ("batsim", "coburst")]
    assert runs[0].returncode != 0 and "already exists" in runs[0].stderr
    assert runs[1].returncode == 2, runs[1].report()
    assert f"{wf}: line 5 <job id='C'>: the task is submitted a second time" in runs[1].stderr


def test_workflow_with_external_events(tmp_path):
    """A workflow and machine failures together (the workflow submitter starts before the
    event submitter, as Batsim creates them)."""
    wf = dax(tmp_path / "d.dax", *DIAMOND)
    ev = tmp_path / "ev.txt"
    ev.write_text('{"type": "machine_unavailable", "resources": "1-2", "timestamp": 0}\n'
                  '{"type": "machine_available", "resources": "1-2", "timestamp": 9}\n')
    batsim, coburst = run_both(tmp_path, platform=CLUSTER_MASTER, scheduler="eventsFiller",
                               args=M + ["-W", str(wf), "--events", str(ev)])
    assert_identical(batsim, coburst)
