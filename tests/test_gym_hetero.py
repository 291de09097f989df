"""``coburst.gym`` on heterogeneous clusters (``coburst platform hetero``): host classes, the
(job, host class) action space with its mask, the per-class observation, the env checker,
and the heterogeneous policies (``mapping="deferred"``: their decisions are only starts)
played through the environment giving their ``_jobs.csv`` byte for byte -- with their own
allocations (``actions="job"``) and as (job, class) actions where the class's fastest idle
node is the policy's node."""

from __future__ import annotations

import logging
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import coburst.gym  # noqa: F401 - registers the ids
from coburst.gym import BatsimExactEnv, ExpertMismatch, PolicyExpert
from coburst.gym.hetero import CLASS_FEATURES, HostClasses
from coburst.runner import run
from coburst.testing import run_policy
from hetero_fixtures import platform as hetero_platform
from hetero_fixtures import workload as hetero_workload

pytestmark = pytest.mark.timeout(180)

#: node (cores, speed) and its type: two classes of two speeds each, and a single node
NODES = [(2, 2e9), (1, 3e9), (2, 3e9), (4, 1e9), (2, 1e9), (1, 5e9)]
TYPES = ["fast", "fast", "fast", "slow", "slow", "gpu"]
DEFERRED = ["min-min", "max-min", "duplex", "astar", "heuristic"]
#: the policies whose node is the fastest idle one of its class (earliest completion): their
#: decisions are (job, class) actions; A* and the heuristic (first node) choose otherwise
CLASS_EXPRESSIBLE = ["min-min", "max-min", "duplex"]


@pytest.fixture(scope="module", autouse=True)
def quiet():
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("het")
    plat = hetero_platform(folder / "het.xml", NODES, power=[(5.0, 10.0 + i) for i in range(len(NODES))])
    text = plat.read_text()
    for i, t in enumerate(TYPES):
        text = text.replace(f'<prop id="type" value="t{i}"/>', f'<prop id="type" value="{t}"/>')
    plat.write_text(text)
    rng = np.random.default_rng(3)
    jobs, sub = [], 0
    for i in range(40):
        sub += int(rng.choice([0, 0, 1, 2, 5]))
        jobs.append({"id": i, "subtime": sub, "res": int(rng.choice([1, 1, 1, 2, 2, 4])),
                     "ops": float(rng.integers(1, 40)) * 1e9})
    wl = hetero_workload(folder / "het.json", jobs, nb_res=sum(c for c, _ in NODES))
    run_policy("min-min", str(wl), str(plat), out=folder / "warm", trace=False, mapping="deferred")
    return {"platform": str(plat), "workload": str(wl), "folder": folder}


def test_host_classes_from_the_platform(inputs):
    classes = HostClasses.from_platform(inputs["platform"])
    assert classes.names == ("fast", "slow", "gpu")
    assert classes.node_class.tolist() == [0, 0, 0, 1, 1, 2]


@pytest.mark.parametrize("observation", ["dict", "flat"])
def test_env_checker_and_class_mask(inputs, observation):
    for kw in ({}, {"actions": "class"}, {"actions": "class", "features": "extended"}, {"features": "extended"}):
        env = BatsimExactEnv(inputs["workload"], inputs["platform"], window=5, observation=observation,
                             invalid_action="penalty", **kw)
        check_env(env, skip_render_check=True)
        env.close()
    env = BatsimExactEnv(inputs["workload"], inputs["platform"], window=5, actions="class", features="extended")
    assert env.action_space.n == 5 * 3 + 1 and env.choices == ("fast", "slow", "gpu")
    obs, info = env.reset(seed=0)
    assert obs["classes"].shape == (3, len(CLASS_FEATURES))
    steps = 0
    while True:
        backend = env._backend
        mask = info["action_mask"]
        for k, job in enumerate(env._window_jobs):
            for c, nodes in enumerate(backend.by_class):
                idle = max(len(backend.idle[n]) for n in nodes)
                assert mask[3 * k + c] == (idle >= job.res)
        # the per-class observation: idle cores over the class's cores
        for c, nodes in enumerate(backend.by_class):
            cores = sum(NODES[n][0] for n in nodes)
            assert obs["classes"][c, 0] == pytest.approx(sum(len(backend.idle[n]) for n in nodes) / cores)
        assert obs["classes"][2, 1] == 1.0 and obs["classes"][1, 1] == pytest.approx(1 / 5)
        valid = np.flatnonzero(mask)
        action = int(valid[-2]) if len(valid) > 1 else int(valid[0])  # a job on the last class that fits
        if action < env.wait_action:
            job, c = env._window_jobs[action // 3], action % 3
            obs, _, terminated, _, info = env.step(action)
            node = env.running[-1][2].node if not terminated and env.running else None
            if node is not None and env.running[-1][0].id == job.id:
                assert HostClasses.from_platform(inputs["platform"]).node_class[node] == c
        else:
            obs, _, terminated, _, info = env.step(action)
        steps += 1
        if terminated:
            break
    assert steps >= 40 and len(env.completed) == 40
    env.close()


@pytest.mark.parametrize("policy, actions",
                         [(p, "job") for p in DEFERRED] + [(p, "class") for p in CLASS_EXPRESSIBLE])
def test_deferred_policies_through_the_environment(inputs, policy, actions):
    folder = inputs["folder"]
    params = {} if policy == "heuristic" else {"mapping": "deferred"}
    ref = run(policy, platform=inputs["platform"], workloads=[inputs["workload"]], options=params,
              export=str(folder / f"{policy}_{actions}_ref"))
    want = Path(ref.jobs_csv).read_text()
    env = PolicyExpert(gymnasium.make("coburst/BatsimExact-v0", workload=inputs["workload"],
                                      platform=inputs["platform"], window=64, actions=actions,
                                      export=str(folder / f"{policy}_{actions}")), policy, **params)
    env.reset(seed=0)
    while True:
        _, _, terminated, truncated, _ = env.step(env.expert_action())
        assert not truncated
        if terminated:
            break
    assert Path(env.unwrapped.result.jobs_csv).read_text() == want, actions
    env.close()


def test_queue_mapping_is_not_playable(inputs):
    env = PolicyExpert(BatsimExactEnv(inputs["workload"], inputs["platform"], window=64), "min-min")
    with pytest.raises(ExpertMismatch, match="node queues"):
        env.reset(seed=0)
        for _ in range(200):
            env.step(env.expert_action())
    env.close()


def test_class_actions_need_a_heterogeneous_platform():
    repo = Path(__file__).resolve().parents[1]
    with pytest.raises(ValueError, match="heterogeneous"):
        BatsimExactEnv({"nb_res": 4, "jobs": [], "profiles": {}}, str(repo / "platforms" / "kth_sp2.xml"),
                       actions="class")
