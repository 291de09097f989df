"""Tests of the smallest-area-first plugin, written with coburst.testing: a worked example,
coburst's invariants on random dragonfly platforms and workloads, determinism, parameters."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from coburst.errors import InputError
from coburst.platforms.cluster import ClusterSpec, render_xml
from coburst.testing import RunFailed, assert_deterministic, assert_invariants, check_invariants, run_policy
from coburst.testing.records import platform_cluster, records
from coburst.testing.strategies import DragonflyCase, dragonfly_cases
from coburst_saf import SmallestAreaFirst

FOUR_NODES = render_xml(ClusterSpec(nodes=4))


def workload(jobs: list[tuple[int, float, int, float, float]]) -> dict:
    """Jobs (id, submission, nodes, walltime, run time) as a Batsim workload of delay profiles."""
    return {"nb_res": 4, "profiles": {f"d{run:g}": {"type": "delay", "delay": run} for *_, run in jobs},
            "jobs": [{"id": i, "subtime": sub, "res": res, "walltime": wall, "profile": f"d{run:g}"}
                     for i, sub, res, wall, run in jobs]}


def starts(run) -> dict[str, float]:
    """Start dates (to 0.1 s: a job starts a few messages after the decision)."""
    return {job: round(float(row["starting_time"]), 1) for job, row in run.rows.items()}


def test_the_smallest_area_starts_first(tmp_path):
    """When the machine frees at 10 s, the 1-node and 2-node jobs (areas 5 and 10) go before
    the 4-node one submitted earlier (area 400), which starts when they end (14 s); FCFS runs
    it first."""
    wl = workload([(0, 0, 4, 20, 10), (1, 1, 4, 100, 50), (2, 2, 1, 5, 4), (3, 2, 2, 5, 4)])
    run = run_policy("smallest-area-first", wl, FOUR_NODES, out=tmp_path / "saf")
    assert starts(run) == {"w0!0": 0.0, "w0!1": 14.0, "w0!2": 10.0, "w0!3": 10.0}
    assert_invariants(run)
    fcfs = run_policy("fcfs", wl, FOUR_NODES, out=tmp_path / "fcfs")
    assert starts(fcfs) == {"w0!0": 0.0, "w0!1": 10.0, "w0!2": 60.0, "w0!3": 60.0}


def test_the_class_runs_without_its_entry_point(tmp_path):
    """A class (here the plugin's own) runs by itself, registered under its name for the run."""
    wl = workload([(0, 0, 2, 10, 4), (1, 0, 4, 10, 4)])
    run = run_policy(SmallestAreaFirst, wl, FOUR_NODES, out=tmp_path, depth=0)
    assert starts(run) == {"w0!0": 0.0, "w0!1": 4.0}


@settings(max_examples=3, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=dragonfly_cases(max_jobs=12))
def test_invariants_on_random_dragonflies(tmp_path_factory, case: DragonflyCase):
    """coburst's invariants: never-fitting jobs rejected, the others run within their
    walltimes, no node shared, no burst buffer over its capacity."""
    folder = tmp_path_factory.mktemp("case")
    platform, wl = case.write(folder)
    run = run_policy("smallest-area-first", wl, platform, out=folder / "run", ageing=0.5)
    assert_invariants(run)
    cluster = platform_cluster(platform)
    jobs, result = records(cluster, case.jobs, run.rows)
    check_invariants(cluster, jobs, result)


def test_same_seed_same_bytes(tmp_path):
    wl = workload([(i, i % 3, 1 + i % 4, 5 + i, 3 + i) for i in range(10)])
    assert_deterministic("smallest-area-first", wl, FOUR_NODES, out=tmp_path, depth=2)


def test_parameters_are_checked(tmp_path):
    with pytest.raises(InputError, match="depth"):
        SmallestAreaFirst(depth=-1)
    with pytest.raises(RunFailed, match="ageing"):
        run_policy("smallest-area-first", workload([(0, 0, 1, 5, 5)]), FOUR_NODES, out=tmp_path, ageing="x")
