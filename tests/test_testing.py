"""coburst.testing on coburst's own policies: run_policy and the invariant assertions over the
three families (random platforms and workloads of each), the same bytes twice, and the
assertions failing where they should (a doctored run)."""

from __future__ import annotations

import csv
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coburst.testing import (PolicyRun, RunFailed, assert_capacities, assert_deterministic, assert_every_job_ends,
                             assert_invariants, assert_reservations_kept, run_policy)
from coburst.testing.strategies import cosched_cases, dragonfly_cases, hetero_cases

SETTINGS = settings(max_examples=2, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@SETTINGS
@given(case=dragonfly_cases(max_jobs=10), name=st.sampled_from(["backfill-sjf-1", "conservative"]))
def test_burst_buffer_policies(tmp_path_factory, case, name):
    folder = tmp_path_factory.mktemp("bb")
    run = run_policy(name, *reversed(case.write(folder)), out=folder / "run")
    assert run.keeps_reservations in ("all", "first")
    assert_invariants(run)


@SETTINGS
@given(case=cosched_cases(), name=st.sampled_from(["cosched:easy", "easy-co", "popularity"]))
def test_co_scheduling_policies(tmp_path_factory, case, name):
    folder = tmp_path_factory.mktemp("co")
    platform, workload = case.write(folder)
    run = run_policy(name, workload, platform, out=folder / "run")
    assert_invariants(run)
    rejected = {f"w0!{j['id']}" for j in case.workload["jobs"] if j["res"] % 4 or j["res"] > case.workload["nb_res"]}
    assert {k for k, r in run.rows.items() if r["final_state"] == "REJECTED"} == rejected


@SETTINGS
@given(case=hetero_cases(), name=st.sampled_from(["min-min", "duplex", "shortest_fastest"]))
def test_heterogeneous_mapping_policies(tmp_path_factory, case, name):
    folder = tmp_path_factory.mktemp("het")
    platform, workload = case.write(folder)
    run = run_policy(name, workload, platform, out=folder / "run")
    assert_invariants(run)


def small_run(tmp_path, name="backfill-1", **params) -> PolicyRun:
    from coburst.platforms.cluster import ClusterSpec, render_xml

    jobs = [{"id": i, "subtime": i % 3, "res": 1 + i % 3, "walltime": 9, "profile": "d"} for i in range(8)]
    wl = {"nb_res": 4, "jobs": jobs, "profiles": {"d": {"type": "delay", "delay": 4}}}
    return run_policy(name, wl, render_xml(ClusterSpec(nodes=4)), out=tmp_path, **params)


def test_same_inputs_and_seed_same_bytes(tmp_path):
    """IRMaSim's random heuristic draws jobs and nodes from its seed: twice the same bytes."""
    from coburst.platforms.hetero import preset, render_xml

    jobs = [{"id": i, "subtime": i % 3, "res": 1, "walltime": -1, "profile": f"p{i % 4}"} for i in range(24)]
    wl = {"nb_res": 16, "jobs": jobs,
          "profiles": {f"p{k}": {"type": "parallel_homogeneous", "cpu": (k + 1) * 4e9, "com": 0} for k in range(4)}}
    assert_deterministic("full_random", wl, render_xml(preset("low16", seed=0)), out=tmp_path, seed=3)
    assert (tmp_path / "a" / "out_jobs.csv").read_bytes() == (tmp_path / "b" / "out_jobs.csv").read_bytes()


def _rewrite(run: PolicyRun, change) -> None:
    rows = list(run.rows.values())
    change(rows)
    with open(run.jobs_csv, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    run.__dict__.pop("rows", None)


def test_the_assertions_catch_a_doctored_run(tmp_path):
    run = small_run(tmp_path / "run")
    assert_invariants(run)
    assert run.keeps_reservations == "all" and run.decisions()

    def share(rows):  # the second job on the first job's resources, at the same time
        rows[1].update(starting_time=rows[0]["starting_time"], finish_time=rows[0]["finish_time"],
                       allocated_resources=rows[0]["allocated_resources"],
                       requested_number_of_resources=rows[0]["requested_number_of_resources"])
    _rewrite(run, share)
    with pytest.raises(AssertionError, match=r"resource \d+ given to w0!\d and w0!\d at "):
        assert_capacities(run)

    def drop(rows):
        del rows[-1]
    _rewrite(run, drop)
    with pytest.raises(AssertionError, match="never ended"):
        assert_every_job_ends(run)


def test_a_broken_reservation_is_caught(tmp_path):
    run = small_run(tmp_path / "run")
    line = next(d for d in run.decisions() if d["reserve"])
    job = line["reserve"][0]["job"]
    late = float(line["reserve"][0]["start"]) + 5

    def delay(rows):
        for row in rows:
            if f"{row['workload_name']}!{row['job_id']}" == job:
                row["starting_time"] = repr(late)
    _rewrite(run, delay)
    with pytest.raises(AssertionError, match=f"job {job} reserved at"):
        assert_reservations_kept(run)
    assert_reservations_kept(run, promise=None)


def test_a_failed_run_says_why(tmp_path):
    with pytest.raises(RunFailed, match="depth: invalid value -1"):
        small_run(tmp_path / "run", name="backfill", depth=-1)
    with pytest.raises(RunFailed, match="neither a coburst policy"):
        small_run(tmp_path / "run2", name="backfil-1")


def test_relative_paths_are_taken_from_the_callers_folder(tmp_path, monkeypatch):
    """``out``, the workload and the platform given relative to the caller's working folder
    (the run's own process works inside ``out``)."""
    from coburst.platforms.hetero import preset, render_xml

    monkeypatch.chdir(tmp_path)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "p.xml").write_text(render_xml(preset("low16", seed=0)))
    jobs = [{"id": i, "subtime": i, "res": 1, "walltime": -1, "profile": "p"} for i in range(3)]
    (tmp_path / "in" / "w.json").write_text(json.dumps({"nb_res": 16, "jobs": jobs, "profiles": {
        "p": {"type": "parallel_homogeneous", "cpu": 4e9, "com": 0}}}))
    run = run_policy("full_random", "in/w.json", "in/p.xml", out="rel/run", seed=1)
    assert run.jobs_csv == tmp_path / "rel" / "run" / "out_jobs.csv"
    assert len(run.rows) == 3
    assert_invariants(run)
