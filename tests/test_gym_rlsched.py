"""``coburst/RLScheduler-v0``: RLScheduler's job-picking environment, checked against outputs of
RLScheduler's own ``HPCSimPickJobs.HPCEnv`` (``tests/data/rlscheduler/lublin256.json.xz``, see
its ``about``) on the Lublin-256 logs: the episode starts its seeding draws, per-job start times
of its heuristics over the whole queue and through the 128-job window, the observations (their
SHA-256), the rewards, and the heuristic columns of its README's bounded-slowdown table."""

from __future__ import annotations

import hashlib
import json
import lzma
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import coburst.gym  # noqa: F401 - registers the ids
from coburst.gym.rlsched import (MAX_QUEUE_SIZE, RLSchedulerEnv, gym017_random_state, heuristic_action,
                                 load_trace, schedule_sequence)
from shared_data import LUBLIN_256, LUBLIN_256_NEW2, need_swf

pytestmark = pytest.mark.timeout(120)

DATA = Path(__file__).resolve().parent / "data" / "rlscheduler" / "lublin256.json.xz"
CASES = [(trace, backfill) for trace in (LUBLIN_256, LUBLIN_256_NEW2) for backfill in (0, 1)]
#: RLScheduler's README, "Results of Scheduling Towards average bounded slowdown", the heuristic
#: columns of its Lublin-1 (lublin_256.swf) and Lublin-2 (lublin_256_new2) rows
README = {(LUBLIN_256, 0): {"fcfs": 7273.77, "wfp": 19753.53, "uni": 22274.74, "sjf": 277.35, "f1": 258.37},
          (LUBLIN_256_NEW2, 0): {"fcfs": 7842.47, "wfp": 9523.18, "uni": 11265.31, "sjf": 787.89, "f1": 698.34},
          (LUBLIN_256, 1): {"fcfs": 235.82, "wfp": 133.87, "uni": 307.23, "sjf": 73.31, "f1": 75.07},
          (LUBLIN_256_NEW2, 1): {"fcfs": 247.61, "wfp": 318.35, "uni": 379.59, "sjf": 91.99, "f1": 148.25}}


@pytest.fixture(scope="module")
def recorded():
    return json.loads(lzma.decompress(DATA.read_bytes()))


def _episodes(recorded, trace, backfill):
    return [e for e in recorded["episodes"] if e["trace"] == trace and e["backfill"] == backfill]


def _waits_of(trace, start, n, start_times):
    return [start_times[trace.job_id[start + k]] - trace.submit[start + k] for k in range(n)]


# ------------------------------------------------------------------ against RLScheduler's outputs
@pytest.mark.parametrize("trace,backfill", CASES)
def test_window_heuristics_step_for_step(recorded, trace, backfill):
    """Stepping the environment, each step picking the window slot of the smallest FCFS / SJF /
    F1 score: the same starts (seeded), observations, per-job start times, steps and reward."""
    path = need_swf(trace)
    episodes = _episodes(recorded, trace, backfill)
    assert len(episodes) == 10
    for heuristic in ("fcfs", "sjf", "f1"):
        env = gymnasium.make("coburst/RLScheduler-v0", workload=str(path), backfill=bool(backfill))
        for i, ep in enumerate(episodes):
            obs, info = env.reset(seed=ep["seed"]) if i == 0 else env.reset()
            assert info["start"] == ep["start"]
            t = env.unwrapped.trace
            assert t.job_id[ep["start"]] == ep["first_job_id"]
            digest, steps, terminated = hashlib.sha256(), 0, False
            while not terminated:
                digest.update(obs.tobytes())
                obs, reward, terminated, truncated, info = env.step(heuristic_action(env, heuristic))
                assert not truncated
                steps += 1
                assert terminated or reward == 0.0
            want = ep["window_heuristics"][heuristic]
            assert _waits_of(t, ep["start"], 256, env.unwrapped.start_times()) == want["waits"], (heuristic, i)
            assert steps == want["steps"]
            assert reward == want["reward"] == -info["bsld_mean"]
            assert digest.hexdigest() == want["obs_sha256"], (heuristic, i)
        env.close()


def test_random_agent_with_and_without_skip(recorded):
    """Random valid actions (a seeded draw among the mask: the jobs' slots and, with ``skip``,
    the skip slot), with and without backfilling: the same actions, observations, start times,
    steps and reward as RLScheduler's environment given the same draws."""
    path = need_swf(LUBLIN_256)
    runs = recorded["random_agent"]
    assert len(runs) == 12
    envs: dict = {}
    for run in runs:
        key = (run["backfill"], run["skip"])
        if key not in envs:
            envs[key] = RLSchedulerEnv(path, backfill=bool(run["backfill"]), skip=bool(run["skip"]))
            obs, info = envs[key].reset(seed=run["seed"])
        else:
            obs, info = envs[key].reset()
        env = envs[key]
        assert info["start"] == run["start"]
        rng = np.random.RandomState(run["policy_seed"])
        digest, actions, terminated = hashlib.sha256(), [], False
        while not terminated:
            digest.update(obs.tobytes())
            valid = np.flatnonzero(info["action_mask"]).tolist()
            actions.append(valid[rng.randint(len(valid))])
            obs, reward, terminated, _, info = env.step(actions[-1])
        assert hashlib.sha256(json.dumps(actions).encode()).hexdigest() == run["actions_sha256"]
        assert digest.hexdigest() == run["obs_sha256"]
        assert (len(actions), reward) == (run["steps"], run["reward"])
        assert _waits_of(env.trace, run["start"], 256, env.start_times()) == run["waits"]


@pytest.mark.parametrize("trace,backfill", CASES)
def test_queue_heuristics_start_times(recorded, trace, backfill):
    """RLScheduler's heuristic baselines over the whole queue (FCFS, SJF, F1 and its WFP3 and
    UNICEP as coded): the same start time for every job, the same mean bounded slowdown."""
    t = load_trace(need_swf(trace))
    for ep in _episodes(recorded, trace, backfill):
        for heuristic, want in ep["queue_heuristics"].items():
            starts, mean = schedule_sequence(t, ep["start"], heuristic, backfill=bool(backfill))
            assert _waits_of(t, ep["start"], 256, starts) == want["waits"], (heuristic, ep["episode"])
            assert mean == want["bsld_mean"]


@pytest.mark.parametrize("trace", [LUBLIN_256, LUBLIN_256_NEW2])
def test_readme_table(recorded, trace):
    """The README's protocol (``make_table_script.py``: seed 1, ten sequences of 1024 jobs):
    RLScheduler's own per-sequence values, and its published means to two decimals."""
    t = load_trace(need_swf(trace))
    for backfill in (0, 1):
        rec = next(r for r in recorded["readme_table"] if r["trace"] == trace and r["backfill"] == backfill)
        env = RLSchedulerEnv(t.path, backfill=bool(backfill), sequence_length=1024)
        starts = [env.reset(seed=1)[1]["start"]] + [env.reset()[1]["start"] for _ in range(9)]
        assert starts == rec["starts"]
        for heuristic, values in rec["per_sequence"].items():
            mine = [schedule_sequence(t, s, heuristic, backfill=bool(backfill), length=1024)[1] for s in starts]
            assert mine == values, heuristic
            assert round(float(np.mean(mine)), 2) == README[(trace, backfill)][heuristic], heuristic


# ------------------------------------------------------------------ the Gymnasium interface
def test_check_env_and_seeding():
    assert coburst.gym.RLSCHEDULER_ID == "coburst/RLScheduler-v0" in gymnasium.registry
    env = gymnasium.make("coburst/RLScheduler-v0", workload=str(need_swf(LUBLIN_256)))
    check_env(env.unwrapped)
    assert env.observation_space.shape == (MAX_QUEUE_SIZE * 8,)
    assert env.action_space.n == MAX_QUEUE_SIZE
    a, _ = env.reset(seed=5)
    s5 = env.unwrapped._ep.start
    b, _ = env.reset(seed=5)
    assert env.unwrapped._ep.start == s5 and np.array_equal(a, b)
    env.reset(seed=6)
    assert env.unwrapped._ep.start != s5
    # the starts are gym 0.17's RandomState draws, randint(256, n - 257)
    rng = gym017_random_state(5)
    assert s5 == rng.randint(256, env.unwrapped.trace.size - 257)
    env.reset(options={"start": 300})
    assert env.unwrapped._ep.start == 300
    mask = env.unwrapped.action_masks()
    assert mask[0] and not mask[1:].any()
    env.close()


SMALL = """; MaxNodes: 4
; MaxProcs: 4
1   0 -1 100 2 -1 -1 -1  -1 -1 1 -1 -1 -1 0 -1 -1 -1
2  10 -1  50 4 -1 -1 -1  60 -1 1 -1 -1 -1 0 -1 -1 -1
3  20 -1  10 2 -1 -1 -1  20 -1 1 -1 -1 -1 0 -1 -1 -1
4  25 -1   0 1 -1 -1 -1  -1 -1 1 -1 -1 -1 0 -1 -1 -1
5 1000 -1 200 1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1
6 1010 -1 10 1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1
7 1020 -1 10 1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1
8 1030 -1 10 1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1
9 1040 -1 10 1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1
"""


@pytest.fixture()
def small(tmp_path):
    path = tmp_path / "small.swf"
    path.write_text(SMALL)
    return str(path)


def _play(env, actions):
    obs, _ = env.reset(options={"start": 0})
    out = [obs]
    for a in actions:
        obs, reward, terminated, _, info = env.step(a)
        out.append(obs)
    return out, reward, terminated, info


def test_small_trace_by_hand(small):
    """Three jobs on four nodes, worked by hand: job 4 (run time 0) is dropped; job 2 (four
    nodes) waits for job 1; with backfilling job 3 runs in the hole before job 2's reservation."""
    env = RLSchedulerEnv(small, sequence_length=3)
    assert env.trace.job_id == [1, 2, 3, 5, 6, 7, 8, 9] and env.trace.max_exec_time == 200
    obs, reward, terminated, info = _play(env, [0, 0, 0])
    assert terminated and env.start_times() == {1: 0, 2: 100, 3: 150}
    bslds = [1.0, (90 + 50) / 50, (130 + 10) / 10]
    assert reward == -sum(b / 3 for b in bslds) == -info["bsld_mean"]
    first = obs[0].reshape(MAX_QUEUE_SIZE, 8)
    assert np.allclose(first[0], [0, 100 / 200, 2 / 4, 1, 1, 1, 1, 1 - 1e-5])
    assert np.array_equal(first[1:], np.tile(np.float32([0, 1, 1, 1, 1, 1, 1, 0]), (MAX_QUEUE_SIZE - 1, 1)))
    second = obs[1].reshape(MAX_QUEUE_SIZE, 8)  # t = 10: job 2 waits, does not fit
    assert np.allclose(second[0], [0, 60 / 200, 1 - 1e-5, 1, 1, 1, 1, 1e-5])
    third = obs[2].reshape(MAX_QUEUE_SIZE, 8)  # t = 100: job 3 has waited 80 s, does not fit
    assert np.allclose(third[0, [0, 7]], [80 / 43200, 1e-5])

    env = RLSchedulerEnv(small, sequence_length=3, backfill=True)
    obs, reward, terminated, info = _play(env, [0, 0])
    assert terminated and env.start_times() == {1: 0, 3: 20, 2: 100}
    assert reward == -(1 / 3 + 1 / 3 + 2.8 / 3)


def test_check_env_small(small):
    env = gymnasium.make("coburst.gym:coburst/RLScheduler-v0", workload=small, sequence_length=3, skip=True)
    check_env(env.unwrapped)
    assert isinstance(env.unwrapped, RLSchedulerEnv)
    obs, info = env.reset(seed=0)
    assert info["start"] == 3 and list(np.flatnonzero(info["action_mask"])) == [0, 1]  # a job, the skip slot
    assert np.array_equal(obs.reshape(MAX_QUEUE_SIZE, 8)[1], np.float32([1, 1, 1, 1, 1, 1, 1, 0]))
    env.close()


def test_empty_slot_waits(small):
    """An empty slot starts nothing: the clock moves 360 s or to the next event (here job 3's
    arrival at t = 20)."""
    env = RLSchedulerEnv(small, sequence_length=3)
    env.reset(options={"start": 0})
    env.step(0)
    assert env.unwrapped._ep.now == 10
    obs, reward, terminated, _, info = env.step(5)
    assert (reward, terminated, info["time"], info["queue"]) == (0.0, False, 20, 2)
    assert env.window_job_ids == [2, 3]
    with pytest.raises(ValueError):
        env.step(MAX_QUEUE_SIZE)


def test_bad_inputs(tmp_path, small):
    (tmp_path / "nohead.swf").write_text(SMALL.split("\n", 2)[2])
    with pytest.raises(ValueError, match="MaxNodes"):
        RLSchedulerEnv(tmp_path / "nohead.swf", sequence_length=3)
    with pytest.raises(ValueError, match="too few"):
        RLSchedulerEnv(small, sequence_length=4)
    env = RLSchedulerEnv(small, sequence_length=3)
    with pytest.raises(RuntimeError):
        env.step(0)
    with pytest.raises(ValueError, match="start"):
        env.reset(options={"start": 5})
