"""``coburst.gym``: the Gymnasium environment on the Batsim-exact engine -- registration,
the env checker, masks and invalid actions, truncation, observations, rewards, inputs
(Batsim JSON, SWF, a workload document) and vector environments."""

from __future__ import annotations

import csv
import json
import logging
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import coburst.gym
from coburst.errors import InputError
from coburst.gym import BatsimExactEnv, InvalidAction
from coburst.testing import run_policy

pytestmark = pytest.mark.timeout(120)

REPO = Path(__file__).resolve().parents[1]
DRAGONFLY = str(REPO / "platforms" / "dragonfly_small.xml")
KTH = str(REPO / "platforms" / "kth_sp2.xml")
BB_SAMPLE = REPO / "workloads" / "kth_alloc_only_sample.json"


@pytest.fixture(scope="module", autouse=True)
def quiet():
    logging.disable(logging.WARNING)  # the adapter's "rejecting job" lines
    yield
    logging.disable(logging.NOTSET)


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """The first 40 jobs of the burst-buffer sample on the small dragonfly; the platform is
    described in coburst's cache by a run in a child process first (no SimGrid engine in this
    process: one engine per process)."""
    folder = tmp_path_factory.mktemp("gym")
    doc = json.loads(BB_SAMPLE.read_text())
    doc["jobs"] = doc["jobs"][:40]
    path = folder / "small.json"
    path.write_text(json.dumps(doc))
    run_policy("fcfs", str(path), DRAGONFLY, out=folder / "warm", trace=False)
    return str(path)


def first_valid(info) -> int:
    return int(np.flatnonzero(info["action_mask"])[0])


def play(env, choose=first_valid):
    obs, info = env.reset(seed=0)
    rewards, steps = [], 0
    while True:
        obs, reward, terminated, truncated, info = env.step(choose(info))
        rewards.append(reward)
        steps += 1
        if terminated or truncated:
            return rewards, steps, terminated, truncated


def test_registered_ids_and_env_checker(small):
    assert set(coburst.gym.ENV_IDS) <= set(gymnasium.registry)
    for env_id in coburst.gym.ENV_IDS:
        env = gymnasium.make(env_id, workload=small, platform=DRAGONFLY, window=8, invalid_action="penalty")
        check_env(env.unwrapped, skip_render_check=True)
        obs, info = env.reset(seed=1)
        assert env.observation_space.contains(obs)
        assert info["action_mask"].shape == (9,) and info["action_mask"].dtype == bool
        env.close()
    env = gymnasium.make("coburst.gym:coburst/BatsimExact-v0", workload=small, platform=DRAGONFLY)
    assert isinstance(env.unwrapped, BatsimExactEnv)
    env.reset(seed=0)
    # what sb3-contrib's MaskablePPO calls through the wrappers gymnasium.make adds
    assert (env.get_wrapper_attr("action_masks")() == env.unwrapped.action_masks()).all()
    env.close()
    with pytest.raises(InputError, match="unknown option"):
        BatsimExactEnv(small, DRAGONFLY, adapter_options={"depth": 1})


def test_episode_writes_batsim_outputs_and_is_deterministic(small, tmp_path):
    env = BatsimExactEnv(small, DRAGONFLY, window=8, export=str(tmp_path / "a"))
    r1, n1, terminated, truncated = play(env)
    assert terminated and not truncated
    jobs_csv = Path(env.result.jobs_csv)
    assert jobs_csv == tmp_path / "a_jobs.csv"
    first = jobs_csv.read_text()
    rows = list(csv.DictReader(first.splitlines()))
    assert len(rows) == 40
    r2, n2, _, _ = play(env)  # a second episode of the same environment: the same run
    assert (n1, r1) == (n2, r2) and jobs_csv.read_text() == first
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step(8)
    env.close()


def test_mask_marks_jobs_that_fit_and_invalid_actions(small):
    env = BatsimExactEnv(small, DRAGONFLY, window=8)
    obs, info = env.reset(seed=0)
    base = env
    mask = env.action_masks()
    assert (mask == info["action_mask"]).all() and mask[:-1].any()
    profile = base._backend.profile
    for i, job in enumerate(base._window_jobs):
        assert mask[i] == profile.fits_now(job.res, job.walltime, job.bb)
        assert obs["jobs"][i, 0] == 1.0 and obs["jobs"][i, 5] == float(mask[i])
    assert not obs["jobs"][len(base._window_jobs):].any()
    with pytest.raises(InvalidAction, match="outside Discrete"):
        env.step(9)
    bad = [i for i in range(8) if not mask[i]]
    if bad:
        with pytest.raises(InvalidAction, match="masked out"):
            env.step(bad[0])
    env.close()
    # penalty: the reward is the penalty and nothing changes
    env = BatsimExactEnv(small, DRAGONFLY, window=8, invalid_action="penalty", penalty=-5.0)
    obs, info = env.reset(seed=0)
    bad = [i for i in range(8) if not info["action_mask"][i]]
    if bad:
        obs2, reward, terminated, truncated, info2 = env.step(bad[0])
        assert reward == -5.0 and not terminated and not truncated
        assert (info2["action_mask"] == info["action_mask"]).all() and info2["window"] == info["window"]
        assert all((obs2[k] == obs[k]).all() for k in obs)
    env.close()


def test_wait_is_masked_only_when_it_would_stall(tmp_path):
    """One job on an idle cluster, nothing else to come: waiting would stall the simulation."""
    doc = {"nb_res": 100, "jobs": [{"id": 0, "subtime": 0, "walltime": 100, "res": 4, "profile": "d"}],
           "profiles": {"d": {"type": "delay", "delay": 10}}}
    run_policy("fcfs", doc, KTH, out=tmp_path / "warm", trace=False)
    env = BatsimExactEnv(doc, KTH, window=4)
    _, info = env.reset()
    assert info["action_mask"].tolist() == [True, False, False, False, False]
    with pytest.raises(InvalidAction, match="stall"):
        env.step(4)
    _, reward, terminated, truncated, info = env.step(0)
    assert terminated and reward == 0.0
    job, start, end = env.completed[0]
    assert start == 0.0 and end == pytest.approx(10.0, abs=1e-2)  # (the messages' latency)
    env.close()


def test_truncation_by_decisions_and_by_time(small):
    env = BatsimExactEnv(small, DRAGONFLY, window=8, max_decisions=5)
    rewards, steps, terminated, truncated = play(env)
    assert (steps, terminated, truncated) == (5, False, True)
    assert env.result is None and env._thread is None  # the simulation was abandoned
    env.close()
    env = BatsimExactEnv(small, DRAGONFLY, window=8, max_time=50_000)
    rewards, steps, terminated, truncated = play(env)
    assert truncated and not terminated and env.now >= 50_000
    env.close()


def test_waiting_time_reward_adds_up_to_the_total_wait(small):
    env = BatsimExactEnv(small, DRAGONFLY, window=8, reward=coburst.gym.WaitingTime(scale=100.0))
    rewards, _, terminated, _ = play(env)
    rows = list(csv.DictReader(Path(env.result.jobs_csv).read_text().splitlines()))
    wait = sum(float(r["waiting_time"]) for r in rows if r["final_state"] != "REJECTED")
    assert terminated and sum(rewards) == pytest.approx(-wait / 100.0, rel=1e-6, abs=1e-3)
    env.close()


def test_bounded_slowdown_reward_is_sparse(small):
    env = BatsimExactEnv(small, DRAGONFLY, window=8, reward="bounded-slowdown")
    rewards, _, terminated, _ = play(env)
    assert terminated and all(r == 0.0 for r in rewards[:-1])
    rows = [r for r in csv.DictReader(Path(env.result.jobs_csv).read_text().splitlines())
            if r["final_state"] != "REJECTED"]
    bsld = [max((float(r["waiting_time"]) + float(r["execution_time"])) / max(float(r["execution_time"]), 10.0), 1.0)
            for r in rows]
    assert rewards[-1] == pytest.approx(-sum(bsld) / len(bsld), rel=1e-5)
    env.close()


def test_custom_reward_class(small):
    class Started(coburst.gym.Reward):
        def step(self, env):
            return float(len(env.running))

    env = BatsimExactEnv(small, DRAGONFLY, window=8, reward=Started())
    rewards, _, _, _ = play(env)
    assert max(rewards) >= 1.0
    env.close()
    with pytest.raises(ValueError, match="unknown reward"):
        BatsimExactEnv(small, DRAGONFLY, reward="nope")


def test_flat_observation_matches_the_dict_one(small):
    d = BatsimExactEnv(small, DRAGONFLY, window=8)
    f = BatsimExactEnv(small, DRAGONFLY, window=8, observation="flat")
    od, _ = d.reset(seed=0)
    of, _ = f.reset(seed=0)
    assert isinstance(f.observation_space, gymnasium.spaces.Box) and f.observation_space.contains(of)
    assert np.array_equal(of, np.concatenate([od["cluster"], od["jobs"].ravel()]))
    d.close()
    f.close()


def test_swf_input(tmp_path):
    swf = tmp_path / "log.swf"
    lines = ["; tiny log"]
    for i in range(6):  # job submit wait run procs cpu mem req_procs req_time req_mem status ...
        lines.append(f"{i + 1} {i * 10} -1 {20 + i} 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1")
    swf.write_text("\n".join(lines) + "\n")
    env = BatsimExactEnv(str(swf), KTH, window=4)
    run_policy("fcfs", env.workloads[0], KTH, out=tmp_path / "warm", trace=False)
    rewards, steps, terminated, _ = play(env)
    assert terminated
    assert len(Path(env.result.jobs_csv).read_text().splitlines()) == 7
    env.close()


def test_sync_vector_env(small):
    envs = gymnasium.vector.SyncVectorEnv(
        [lambda: BatsimExactEnv(small, DRAGONFLY, window=8) for _ in range(3)])
    obs, info = envs.reset(seed=0)
    assert obs["jobs"].shape == (3, 8, 6)
    masks = info["action_mask"]
    ends = 0
    for _ in range(200):
        actions = np.array([int(np.flatnonzero(m)[0]) for m in masks])
        obs, rewards, terminated, truncated, info = envs.step(actions)
        ends += int(terminated.sum())
        masks = info["action_mask"]
        if ends >= 3:
            break
    assert ends >= 3
    envs.close()


def test_node_sharing_platform(tmp_path):
    """On a node-sharing platform the mask counts whole nodes' units; a started job takes the
    first placement mode of ``modes`` that fits (compact: idle nodes; spread: half of every
    socket of twice the nodes)."""
    aris = str(REPO / "platforms" / "aris_cosched_small.xml")  # 8 nodes, 4 units each
    jobs = [{"id": i, "subtime": 0, "walltime": 50, "res": 4 * n, "profile": "d", "app": "cg.E.512"}
            for i, n in enumerate([4, 3, 2, 1, 2])]
    doc = {"nb_res": 32, "jobs": jobs, "profiles": {"d": {"type": "delay", "delay": 20}}}
    run_policy("cosched:fcfs", doc, aris, out=tmp_path / "warm", trace=False)
    for modes in (("compact",), ("spread", "compact")):
        env = BatsimExactEnv(doc, aris, window=4, modes=modes)
        obs, info = env.reset(seed=0)
        assert env.observation_space.contains(obs)
        assert info["action_mask"].tolist() == [True] * 4 + [False]  # (waiting would stall)
        assert obs["cluster"][0] == 1.0
        obs, _, _, _, info = env.step(0)  # 4 nodes
        assert env.running[-1][2].mode == modes[0]
        assert obs["cluster"][0] == pytest.approx(0.5)  # half of the cores, either way
        _, _, _, _, info = env.step(0)  # 3 nodes
        if modes == ("compact",):  # one idle node left: only the 1-node job fits
            assert info["action_mask"].tolist() == [False, True, False, False, True]
        rewards, steps, terminated, _ = play(env)
        assert terminated
        env.close()


def test_an_episode_without_decision_points_is_one_step(tmp_path):
    """Every job is wider than the machine (rejected on submission): the simulation ends
    during reset, and the first step ends the episode."""
    doc = {"nb_res": 100, "jobs": [{"id": 0, "subtime": 0, "walltime": 100, "res": 500, "profile": "d"}],
           "profiles": {"d": {"type": "delay", "delay": 10}}}
    run_policy("fcfs", doc, KTH, out=tmp_path / "warm", trace=False)
    env = BatsimExactEnv(doc, KTH, window=4)
    obs, info = env.reset()
    assert info["action_mask"].tolist() == [False] * 4 + [True] and not obs["jobs"].any()
    _, reward, terminated, truncated, _ = env.step(4)
    assert terminated and not truncated and reward == 0.0 and env.result is not None
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step(4)
    env.close()



CHILD = """
import json, logging, sys
from pathlib import Path
import numpy as np
logging.disable(logging.WARNING)
from coburst.gym import BatsimExactEnv
env = BatsimExactEnv(sys.argv[1], sys.argv[2], window=8)
report = []
for episode in range(2):
    obs, info = env.reset(seed=0)
    stepped = env._run is not None
    steps = 0
    while True:
        obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        steps += 1
        if terminated:
            break
    report.append({"stepped": stepped, "steps": steps, "jobs": Path(env.result.jobs_csv).read_text()})
print(json.dumps(report))
env.close()
"""


def test_the_first_episode_runs_in_simgrid_in_a_thread_the_next_ones_pause(small, tmp_path):
    """With an empty platform cache the first episode's run is in SimGrid's actor: a thread of
    its own that waits for the agent (a child process: one SimGrid engine per process); it
    describes the platform in the cache, and the next episode runs in the environment's thread
    and pauses.  Both are the same episode, the one this process plays."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, COBURST_CACHE=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", CHILD, small, DRAGONFLY], env=env, capture_output=True, text=True,
                          timeout=110)
    assert proc.returncode == 0, proc.stderr
    first, second = json.loads(proc.stdout.strip().splitlines()[-1])
    assert first["stepped"] is False and second["stepped"] is True
    here = BatsimExactEnv(small, DRAGONFLY, window=8)
    _, steps, terminated, _ = play(here)
    assert here._bridge.stepped and terminated
    assert first["steps"] == second["steps"] == steps
    assert first["jobs"] == second["jobs"] == Path(here.result.jobs_csv).read_text()
    here.close()


def test_an_environment_never_closed_leaves_no_folder_behind(small):
    # a played episode whose environment is dropped without close(), and a constructor that
    # fails after taking its folder: both folders go once the objects are collected
    import gc

    env = BatsimExactEnv(small, DRAGONFLY, window=8)
    play(env)
    folder = Path(env._tmp)
    assert (folder / "episode_jobs.csv").is_file()
    del env
    gc.collect()
    assert not folder.exists()
    before = {p.name for p in Path(folder.parent).glob("coburst-gym-*")}
    with pytest.raises(ValueError, match="actions"):
        BatsimExactEnv(small, DRAGONFLY, actions="sideways")
    gc.collect()
    assert {p.name for p in Path(folder.parent).glob("coburst-gym-*")} == before
    closed = BatsimExactEnv(small, DRAGONFLY, window=8)
    folder = Path(closed._tmp)
    closed.close()
    assert not folder.exists()
    closed.close()  # (twice is harmless)
