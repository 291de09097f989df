"""Conformance of ``coburst.gym`` with ``coburst run``: a built-in policy's decisions played
as actions of the environment (:class:`coburst.gym.PolicyExpert`) give that policy's
``_jobs.csv`` byte for byte -- the same decision points, the same dates, the same
allocations and burst-buffer placements -- for every policy of :data:`coburst.gym.CONFORMING`
(their decisions are only starts): here the burst-buffer family, on fixed inputs and on
random dragonflies with burst buffers (hypothesis); the node-sharing family in
``test_gym_conformance_cosched.py``."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import gymnasium
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coburst.gym  # noqa: F401 - registers the ids
from coburst import registry
from coburst.gym import CONFORMING, BatsimExactEnv, ExpertMismatch, PolicyExpert
from coburst.runner import run
from coburst.testing import run_policy
from coburst.testing.strategies import dragonfly_cases

pytestmark = pytest.mark.timeout(180)

REPO = Path(__file__).resolve().parents[1]
DRAGONFLY = str(REPO / "platforms" / "dragonfly_small.xml")
KTH = str(REPO / "platforms" / "kth_sp2.xml")
BB_POLICIES = [p for p in CONFORMING if registry.resolve(p).entry.family == "bb"]


def head(path: Path, n: int, out: Path) -> str:
    doc = json.loads(path.read_text())
    doc["jobs"] = doc["jobs"][:n]
    out.write_text(json.dumps(doc))
    return str(out)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """(workload, platform) pairs; each platform is described in coburst's cache by a run in a
    child process first (one SimGrid engine per process: none in this one)."""
    folder = tmp_path_factory.mktemp("conf")
    bb = head(REPO / "workloads" / "kth_alloc_only_sample.json", 45, folder / "bb.json")
    kth = head(REPO / "workloads" / "kth_sp2_delay_5000.json", 150, folder / "kth.json")
    run_policy("fcfs", bb, DRAGONFLY, out=folder / "warm_bb", trace=False)
    run_policy("fcfs", kth, KTH, out=folder / "warm_kth", trace=False)
    return {"bb": (bb, DRAGONFLY), "kth": (kth, KTH), "folder": folder}


def play_expert(policy: str, workload: str, platform: str, export: str, window: int = 64, **params) -> Path:
    env = PolicyExpert(gymnasium.make("coburst/BatsimExact-v0", workload=workload, platform=platform,
                                      window=window, export=export), policy, **params)
    env.reset(seed=0)
    while True:
        _, _, terminated, truncated, _ = env.step(env.expert_action())
        assert not truncated
        if terminated:
            path = Path(env.unwrapped.result.jobs_csv)
            env.close()
            return path


def test_conforming_list_is_the_burst_buffer_and_node_sharing_families():
    builtin = [e for e in registry.entries(plugins=False) if e.family in ("bb", "cosched")]
    assert sorted(registry.resolve(p).entry.qualified for p in CONFORMING) == sorted(e.qualified for e in builtin)


@pytest.mark.parametrize("policy", BB_POLICIES)
def test_expert_reproduces_the_policy_with_burst_buffers(inputs, policy):
    workload, platform = inputs["bb"]
    folder = inputs["folder"]
    ref = run(policy, platform=platform, workloads=[workload], export=str(folder / f"{policy}_ref"))
    got = play_expert(policy, workload, platform, str(folder / f"{policy}_gym"))
    assert got.read_text() == Path(ref.jobs_csv).read_text()


@pytest.mark.parametrize("policy,params", [("backfill", {"depth": 1}), ("backfill-sjf", {"depth": 2}),
                                           ("conservative", {})])
def test_expert_reproduces_the_policy_on_kth(inputs, policy, params):
    workload, platform = inputs["kth"]
    folder = inputs["folder"]
    ref = run(policy, platform=platform, workloads=[workload], export=str(folder / f"k{policy}_ref"), options=params)
    got = play_expert(policy, workload, platform, str(folder / f"k{policy}_gym"), window=128, **params)
    assert got.read_text() == Path(ref.jobs_csv).read_text()


def test_fcfs_by_hand_with_the_default_allocator(inputs):
    """Without the expert (the environment's own placement): starting the head of the window
    while it fits, then waiting, is FCFS."""
    workload, platform = inputs["bb"]
    folder = inputs["folder"]
    ref = run("fcfs", platform=platform, workloads=[workload], export=str(folder / "hand_ref"))
    env = BatsimExactEnv(workload, platform, window=4, export=str(folder / "hand_gym"))
    _, info = env.reset()
    while True:
        _, _, terminated, _, info = env.step(0 if info["action_mask"][0] else 4)
        if terminated:
            break
    assert Path(env.result.jobs_csv).read_text() == Path(ref.jobs_csv).read_text()
    env.close()


def test_a_job_outside_the_window_is_reported(inputs):
    workload, platform = inputs["bb"]
    env = PolicyExpert(BatsimExactEnv(workload, platform, window=1), "filler-sjf")
    env.reset()
    with pytest.raises(ExpertMismatch, match="larger window is needed"):
        for _ in range(500):
            _, _, terminated, _, _ = env.step(env.expert_action())
            assert not terminated
    env.close()


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=dragonfly_cases(max_jobs=14), policy=st.sampled_from(["fcfs", "backfill", "backfill-sjf", "no-future",
                                                                  "conservative", "filler"]))
def test_expert_reproduces_random_cases(tmp_path_factory, case, policy):
    folder = tmp_path_factory.mktemp("case")
    platform, workload = case.write(folder)
    # the reference in a child process (it also describes the platform in coburst's cache)
    ref = run_policy(policy, str(workload), str(platform), out=folder / "ref", trace=False)
    got = play_expert(policy, str(workload), str(platform), str(folder / "gym"), window=32)
    assert got.read_text() == ref.jobs_csv.read_text()

