"""``coburst.gym``'s rewards against Batsim's outputs of the same episode (waiting time,
bounded slowdown, utilisation, makespan, energy: dense rewards add up to their sparse
counterpart), the gap to a heuristic baseline, a reward from another distribution's entry
point, and vector environments (``SyncVectorEnv``, ``AsyncVectorEnv``) on the real engine."""

from __future__ import annotations

import csv
import json
import logging
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import coburst.gym  # noqa: F401 - registers the ids
from coburst.gym import BatsimExactEnv
from coburst.gym.rewards import REWARDS, BaselineGap, WeightedSum, make_reward, plugin_rewards
from coburst.testing import run_policy

pytestmark = pytest.mark.timeout(180)

REPO = Path(__file__).resolve().parents[1]
DRAGONFLY = str(REPO / "platforms" / "dragonfly_small.xml")

ENERGY_PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="root" routing="Full">
    <cluster id="c" prefix="h" suffix="" radical="0-7" speed="1Gf" bw="1250MBps" lat="50us">
      <prop id="wattage_per_state" value="95:100:200"/>
      <prop id="wattage_off" value="10"/>
    </cluster>
    <zone id="mz" routing="None">
      <host id="master_host" speed="1Gf"/>
    </zone>
    <link id="ml" bandwidth="1250MBps" latency="100us"/>
    <zoneRoute src="mz" dst="c" gw_src="master_host" gw_dst="hc_router">
      <link_ctn id="ml"/>
    </zoneRoute>
  </zone>
</platform>
"""


@pytest.fixture(scope="module", autouse=True)
def quiet():
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rew")
    doc = json.loads((REPO / "workloads" / "kth_alloc_only_sample.json").read_text())
    doc["jobs"] = doc["jobs"][:40]
    bb = folder / "bb.json"
    bb.write_text(json.dumps(doc))
    run_policy("fcfs", str(bb), DRAGONFLY, out=folder / "warm_bb", trace=False)
    energy = folder / "energy.xml"
    energy.write_text(ENERGY_PLATFORM)
    jobs = [{"id": i, "subtime": 5 * i, "walltime": 100, "res": 1 + i % 4, "profile": f"d{i % 3}"} for i in range(12)]
    edoc = {"nb_res": 8, "jobs": jobs, "profiles": {f"d{k}": {"type": "delay", "delay": 20 + 15 * k} for k in range(3)}}
    ework = folder / "energy.json"
    ework.write_text(json.dumps(edoc))
    run_policy("fcfs", str(ework), str(energy), out=folder / "warm_energy", trace=False, sim_args=["-E"])
    return {"bb": str(bb), "energy": (str(ework), str(energy)), "folder": folder}


def play(env, seed=0):
    obs, info = env.reset(seed=seed)
    rewards = []
    while True:
        obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        rewards.append(reward)
        if terminated or truncated:
            return rewards


def rows_of(env) -> list[dict]:
    with open(env.result.jobs_csv, newline="") as fh:
        return [r for r in csv.DictReader(fh) if r["final_state"] != "REJECTED"]


def episode(workload, platform, reward, **kw):
    env = BatsimExactEnv(workload, platform, window=8, reward=reward, **kw)
    rewards = play(env)
    return env, rewards


def test_every_reward_name_makes_a_reward():
    for name in REWARDS:
        reward = make_reward(name)
        assert all(callable(getattr(reward, m)) for m in ("reset", "step", "final"))
    with pytest.raises(ValueError, match="unknown reward"):
        make_reward("no-such-reward")


def test_waiting_time_dense_and_sparse(inputs):
    rows = None
    sums = {}
    for name in ("waiting-time", "waiting-time-sparse"):
        env, rewards = episode(inputs["bb"], DRAGONFLY, name)
        rows = rows_of(env)
        sums[name] = (rewards, sum(rewards))
        env.close()
    waits = [float(r["waiting_time"]) for r in rows]
    assert sums["waiting-time"][1] == pytest.approx(-sum(waits) / 3600, rel=1e-6, abs=1e-6)
    sparse, total = sums["waiting-time-sparse"]
    assert all(r == 0.0 for r in sparse[:-1]) and total == pytest.approx(-np.mean(waits) / 3600, rel=1e-6)


def test_bounded_slowdown_dense_adds_up_to_the_sparse_one(inputs):
    sparse_env, sparse = episode(inputs["bb"], DRAGONFLY, "bounded-slowdown")
    dense_env, dense = episode(inputs["bb"], DRAGONFLY, "bounded-slowdown-dense")
    completed = len(dense_env.completed)
    assert completed == len(rows_of(dense_env)) and dense_env.n_jobs == 40
    assert sum(dense) * dense_env.n_jobs == pytest.approx(sparse[-1] * completed, rel=1e-9)
    assert sum(1 for r in dense if r != 0.0) > 5  # (dense: rewarded along the way)
    sparse_env.close()
    dense_env.close()


def test_utilisation_and_makespan_against_batsim_outputs(inputs):
    env, dense = episode(inputs["bb"], DRAGONFLY, "utilisation")
    rows = rows_of(env)
    area = sum(int(r["requested_number_of_resources"]) * float(r["execution_time"]) for r in rows)
    total = env.total_units
    assert total == env.cluster.n_compute
    assert sum(dense) == pytest.approx(area / (total * 3600), rel=1e-4)
    makespan = float(env.result.schedule["makespan"])
    env.close()
    env, sparse = episode(inputs["bb"], DRAGONFLY, "utilisation-sparse")
    assert sparse[-1] == pytest.approx(area / (total * makespan), rel=1e-4) and 0 < sparse[-1] <= 1
    env.close()
    for name in ("makespan", "makespan-dense"):
        env, rewards = episode(inputs["bb"], DRAGONFLY, name)
        assert sum(rewards) == pytest.approx(-makespan / 3600, rel=1e-9)
        env.close()


def test_energy_rewards_need_the_energy_model_and_add_up(inputs):
    workload, platform = inputs["energy"]
    for name in ("energy", "energy-dense"):
        env, rewards = episode(workload, platform, name, sim_args=["-E"])
        joules = float(env.result.schedule["consumed_joules"])
        assert joules > 0 and sum(rewards) == pytest.approx(-joules / 3.6e6, rel=1e-9)
        if name == "energy-dense":
            assert sum(1 for r in rewards[:-1] if r < 0) > 3
        env.close()
    env = BatsimExactEnv(workload, platform, window=8, reward="energy")
    with pytest.raises(ValueError, match="energy model"):
        env.reset()
    env.close()


def test_gap_to_the_baseline_on_the_same_episode(inputs):
    gap = BaselineGap(baseline="fcfs", metric="waiting-time")
    env = BatsimExactEnv(inputs["bb"], DRAGONFLY, window=8, reward=gap)
    obs, info = env.reset(seed=0)
    while True:  # FCFS by hand: the head of the queue while it fits, then wait
        obs, reward, terminated, _, info = env.step(0 if info["action_mask"][0] else 8)
        if terminated:
            break
    assert reward == 0.0  # (the baseline's own schedule)
    rewards = play(env)
    waits = [float(r["waiting_time"]) for r in rows_of(env)]
    ref = gap.reference(env)
    assert rewards[-1] == pytest.approx((ref - np.mean(waits)) / ref, rel=1e-9) and rewards[-1] != 0.0
    assert len(gap._ref) == 1  # (the baseline ran once)
    env.close()


def test_weighted_sum(inputs):
    env, rewards = episode(inputs["bb"], DRAGONFLY, WeightedSum({"makespan": 2.0, "waiting-time": 1.0}))
    makespan = float(env.result.schedule["makespan"])
    waits = sum(float(r["waiting_time"]) for r in rows_of(env))
    assert sum(rewards) == pytest.approx(-2 * makespan / 3600 - waits / 3600, rel=1e-6)
    env.close()


def test_a_reward_from_an_entry_point(inputs, tmp_path, monkeypatch):
    info = tmp_path / "extra_rewards-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: extra-rewards\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[coburst.gym.rewards]\nstarted = extra_rewards:Started\n"
                                           "waiting-time = extra_rewards:Started\n")
    (info / "RECORD").write_text("")
    (tmp_path / "extra_rewards.py").write_text(
        "import coburst.gym\n\n"
        "class Started(coburst.gym.Reward):\n"
        "    def step(self, env):\n"
        "        return float(env.n_started)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found, problems = plugin_rewards()
    assert "started" in found and any("'waiting-time' is a built-in" in p for p in problems)
    env, rewards = episode(inputs["bb"], DRAGONFLY, "started")
    assert type(env.reward_fn).__module__ == "extra_rewards" and max(rewards) >= 1.0
    env.close()
    assert type(make_reward("waiting-time")).__module__ == "coburst.gym.rewards"
    sys.modules.pop("extra_rewards", None)


def make_env(workload):
    return lambda: gymnasium.make("coburst/BatsimExactFlat-v0", workload=workload, platform=DRAGONFLY, window=8,
                                  features="extended", reward="bounded-slowdown-dense")


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_vector_environments(inputs, kind):
    cls = gymnasium.vector.SyncVectorEnv if kind == "sync" else gymnasium.vector.AsyncVectorEnv
    envs = cls([make_env(inputs["bb"]) for _ in range(2)])
    obs, info = envs.reset(seed=0)
    assert obs.shape == (2, envs.single_observation_space.shape[0]) and info["action_mask"].shape == (2, 9)
    rng = np.random.default_rng(0)
    ends, steps = 0, 0
    while ends < 2 and steps < 2000:
        masks = info["action_mask"]
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, terminated, truncated, info = envs.step(actions)
        assert envs.observation_space.contains(obs.astype(np.float32))
        ends += int(terminated.sum())
        steps += 1
    assert ends >= 2
    envs.close()
