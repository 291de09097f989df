"""Conformance of ``coburst.gym`` with ``coburst run`` on node-sharing platforms: every
built-in co-scheduling policy (:data:`coburst.gym.CONFORMING`: their decisions are only
starts) played as actions of the environment (:class:`coburst.gym.PolicyExpert`) gives its
``_jobs.csv`` byte for byte -- compact and spread placements, co-located jobs -- on a fixed
workload of the small ARIS platform and on random node-sharing platforms (hypothesis)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coburst import registry
from coburst.gym import CONFORMING
from coburst.runner import run
from coburst.testing import run_policy
from coburst.testing.strategies import cosched_cases
from test_gym_conformance import play_expert

pytestmark = pytest.mark.timeout(180)

REPO = Path(__file__).resolve().parents[1]
ARIS = str(REPO / "platforms" / "aris_cosched_small.xml")
COSCHED_POLICIES = [p for p in CONFORMING if registry.resolve(p).entry.family == "cosched"]


@pytest.fixture(scope="module", autouse=True)
def quiet():
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def cosched_workload(path: Path, n: int = 36, seed: int = 1) -> str:
    """Whole-node jobs (1-4 of the 8 ARIS nodes, 4 units each) with applications of the
    ARIS NAS heatmap or none, some killed at their walltime."""
    rng = np.random.default_rng(seed)
    apps = ("cg.E.512", "mg.E.128", "lu.E.512", "ft.E.512")
    jobs, profiles, sub = [], {}, 0
    for i in range(n):
        sub += int(rng.choice([0, 0, 1, 3, 7, 20]))
        nodes, wall = int(rng.integers(1, 5)), int(rng.integers(10, 120))
        profiles[f"p{i}"] = {"type": "delay", "delay": int(rng.integers(1, wall + 5))}
        job = {"id": i, "subtime": sub, "walltime": wall, "res": nodes * 4, "profile": f"p{i}"}
        if rng.integers(0, 5):
            job["app"] = str(rng.choice(apps))
        jobs.append(job)
    path.write_text(json.dumps({"nb_res": 32, "jobs": jobs, "profiles": profiles}))
    return str(path)


@pytest.fixture(scope="module", autouse=True)
def quiet():
    logging.disable(logging.WARNING)  # the adapter's "rejecting job" lines
    yield
    logging.disable(logging.NOTSET)



@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """The workload; the platform is described in coburst's cache by a run in a child process
    first (one SimGrid engine per process: none in this one)."""
    folder = tmp_path_factory.mktemp("coconf")
    co = cosched_workload(folder / "co.json")
    run_policy("cosched:fcfs", co, ARIS, out=folder / "warm_co", trace=False)
    return {"co": (co, ARIS), "folder": folder}


def test_every_node_sharing_policy_is_listed():
    assert len(COSCHED_POLICIES) == len([e for e in registry.entries(plugins=False) if e.family == "cosched"])


@pytest.mark.parametrize("policy", COSCHED_POLICIES)
def test_expert_reproduces_the_policy_with_node_sharing(inputs, policy):
    workload, platform = inputs["co"]
    folder = inputs["folder"]
    ref = run(policy, platform=platform, workloads=[workload], export=str(folder / f"c{policy}_ref"))
    got = play_expert(policy, workload, platform, str(folder / f"c{policy}_gym"))
    assert got.read_text() == Path(ref.jobs_csv).read_text()


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=cosched_cases(max_jobs=12), policy=st.sampled_from(COSCHED_POLICIES))
def test_expert_reproduces_random_node_sharing_cases(tmp_path_factory, case, policy):
    folder = tmp_path_factory.mktemp("cocase")
    platform, workload = case.write(folder)
    ref = run_policy(policy, str(workload), str(platform), out=folder / "ref", trace=False)
    got = play_expert(policy, str(workload), str(platform), str(folder / "gym"), window=32)
    assert got.read_text() == ref.jobs_csv.read_text()
