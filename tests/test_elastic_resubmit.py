"""Batsim-portable resizes (coburst.adapter.resubmit, schedulers/coburstResubmit.py): the same
outputs on the real Batsim 4.2.1 and on coburst; under random workloads no node is held twice,
every job ends, sizes stay within their bounds and the work done is the work asked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crossengine import assert_identical, needs_batsim, run_both
from simharness import workload

REPO = Path(__file__).resolve().parents[1]
PLATFORM = REPO / "platforms" / "cluster16.xml"
SCHEDULER = REPO / "schedulers" / "coburstResubmit.py"
ARGS = ["--enable-dynamic-jobs", "--forward-profiles-on-submission"]

pytestmark = pytest.mark.timeout(300)


def small(tmp: Path) -> Path:
    """Malleable jobs growing into idle nodes and shrinking for a waiting job, rigid ones."""
    jobs = [{"id": 1, "subtime": 0, "walltime": -1, "res": 4, "profile": "long",
             "elastic": {"type": "malleable", "num_nodes_min": 2, "num_nodes_max": 16}},
            {"id": 2, "subtime": 10, "walltime": -1, "res": 8, "profile": "mid"},
            {"id": 3, "subtime": 15, "walltime": -1, "res": 8, "profile": "mid",
             "elastic": {"type": "malleable", "num_nodes_min": 4, "num_nodes_max": 12}},
            {"id": 4, "subtime": 30, "walltime": -1, "res": 6, "profile": "short"},
            {"id": 5, "subtime": 300, "walltime": -1, "res": 2, "profile": "short"}]
    profiles = {"long": {"type": "delay", "delay": 400}, "mid": {"type": "delay", "delay": 100},
                "short": {"type": "delay", "delay": 50}}
    return workload(tmp / "w.json", jobs, profiles, nb_res=16)


@needs_batsim
@pytest.mark.parametrize("which", ["small", "malleable_small"])
def test_same_outputs_as_batsim(tmp_path, which):
    """The kill-and-resubmit scheduler on both engines: every message, ``_jobs.csv`` (the
    remainders included), ``_schedule.csv``, machine states and trace, identical; on the
    shipped mixed workload the elastic models set the remainders' times.  (The remainders'
    delays have many decimals: Batsim keeps six, see test_crossengine.py.)"""
    w = small(tmp_path) if which == "small" else REPO / "workloads" / "malleable_small.json"
    batsim, coburst = run_both(tmp_path, workloads=[w], platform=PLATFORM, scheduler=str(SCHEDULER), args=ARGS)
    assert_identical(batsim, coburst)
    rows = coburst.jobs()
    assert any(k.startswith("resized!") for k in rows), sorted(rows)
    assert any(r["final_state"] == "COMPLETED_KILLED" for r in rows.values())


# ------------------------------------------------------------------ invariants
# (each run in its own process: with dynamic jobs the platform cache is not used, and SimGrid
# allows one engine a process)
job_st = st.tuples(st.integers(0, 200), st.integers(1, 16), st.sampled_from([5.0, 30.0, 77.7, 300.0]),
                   st.one_of(st.none(), st.tuples(st.integers(1, 8), st.integers(8, 16))))


@settings(max_examples=25, deadline=None)
@given(specs=st.lists(job_st, min_size=1, max_size=10))
def test_invariants(tmp_path_factory, specs):
    tmp = tmp_path_factory.mktemp("resubmit")
    jobs, profiles = [], {}
    for k, (sub, res, delay, bounds) in enumerate(specs):
        name = f"d{delay}"
        profiles[name] = {"type": "delay", "delay": delay}
        job = {"id": str(k), "subtime": sub, "walltime": -1, "res": res, "profile": name}
        if bounds is not None:
            low, high = min(bounds[0], res), max(bounds[1], res)
            job["elastic"] = {"type": "malleable", "num_nodes_min": low, "num_nodes_max": high}
        jobs.append(job)
    w = tmp / "w.json"
    w.write_text(json.dumps({"nb_res": 16, "jobs": jobs, "profiles": profiles}))
    proc = subprocess.run([sys.executable, "-m", "coburst", "run", str(SCHEDULER), "-p", str(PLATFORM), "-w", str(w),
                           "-e", str(tmp / "o"), "-q", *ARGS], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    df = pd.read_csv(tmp / "o_jobs.csv", dtype={"job_id": str, "allocated_resources": str})
    # every job ends: each workload job completed, its last piece successfully
    pieces: dict[str, list] = {}
    for row in df.itertuples():
        origin = row.job_id.split("-r")[0] if row.workload_name == "resized" else row.job_id
        pieces.setdefault(origin, []).append(row)
    assert set(pieces) == {j["id"] for j in jobs}
    for job in jobs:
        rows = sorted(pieces[job["id"]], key=lambda r: r.starting_time)
        assert [r.final_state for r in rows[:-1]] == ["COMPLETED_KILLED"] * (len(rows) - 1)
        assert rows[-1].final_state == "COMPLETED_SUCCESSFULLY"
        sizes = [len(_ids(r.allocated_resources)) for r in rows]
        low, high = (job["elastic"]["num_nodes_min"], job["elastic"]["num_nodes_max"]) if "elastic" in job \
            else (job["res"], job["res"])
        assert all(low <= s <= high for s in sizes), (job, sizes)
        # the work done is the work asked (node-seconds, linear speed-up; progress is rounded
        # to 1e-6 and each kill lands a message later)
        work = sum(r.execution_time * s for r, s in zip(rows, sizes))
        asked = profiles[job["profile"]]["delay"] * job["res"]
        assert abs(work - asked) <= 1e-3 * len(rows) * 16 + 1e-6 * asked, (job, work, asked)
    # no node held twice at any time
    spans = sorted((r.starting_time, r.finish_time, _ids(r.allocated_resources)) for r in df.itertuples()
                   if r.execution_time > 0)
    for i, (s1, f1, a1) in enumerate(spans):
        for s2, f2, a2 in spans[i + 1:]:
            if s2 >= f1:
                break
            assert not (a1 & a2), (s1, f1, a1, s2, f2, a2)


def _ids(text: str) -> set[int]:
    from procset import ProcSet

    return set(ProcSet.from_str(str(text)))


def test_only_delay_jobs_are_resized():
    from coburst.adapter.resubmit import Resubmitter

    class Job:
        id, profile_dict = "w0!1", {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}

    with pytest.raises(ValueError, match="only jobs of a delay profile can be resized by kill and resubmit"):
        Resubmitter(bs=None).resize(Job(), [0, 1])
