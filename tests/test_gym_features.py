"""``coburst.gym``'s extended observations and placement actions: the env checker on every
configuration, the availability profile and user features against the jobs themselves, and
the node-sharing policies played as (job, placement mode) actions -- without their
allocations -- giving their ``_jobs.csv`` byte for byte where their placements are the
environment's (the first suitable nodes in index order), and Pair-Greedy as partner actions
offered by the pair's speed (``partner_order="speed"``), on fixed and random cases."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coburst.gym  # noqa: F401 - registers the ids
from coburst.gym import BatsimExactEnv, ExpertMismatch, PolicyExpert
from coburst.gym.observe import EXTENDED_JOB_FEATURES
from coburst.runner import run
from coburst.testing import run_policy
from coburst.testing.strategies import cosched_cases
from test_gym_conformance_cosched import COSCHED_POLICIES, cosched_workload

pytestmark = pytest.mark.timeout(180)

REPO = Path(__file__).resolve().parents[1]
DRAGONFLY = str(REPO / "platforms" / "dragonfly_small.xml")
ARIS = str(REPO / "platforms" / "aris_cosched_small.xml")
#: node-sharing policies whose placements are not the first suitable nodes in index order
#: (Pair-Greedy ranks the nodes by the pair's speed: its jobs go elsewhere than a (job, mode)
#: action puts them; partner actions with ``partner_order="speed"`` play it)
OWN_PLACEMENT = {"pair-greedy"}


@pytest.fixture(scope="module", autouse=True)
def quiet():
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("feat")
    doc = json.loads((REPO / "workloads" / "kth_alloc_only_sample.json").read_text())
    doc["jobs"] = doc["jobs"][:40]
    for i, job in enumerate(doc["jobs"]):
        if i % 4:
            job["user"] = f"u{i % 3}"
    bb = folder / "bb.json"
    bb.write_text(json.dumps(doc))
    co = cosched_workload(folder / "co.json")
    run_policy("fcfs", str(bb), DRAGONFLY, out=folder / "warm_bb", trace=False)
    run_policy("cosched:fcfs", co, ARIS, out=folder / "warm_co", trace=False)
    return {"bb": str(bb), "co": co, "folder": folder}


def first_valid(info) -> int:
    return int(np.flatnonzero(info["action_mask"])[0])


@pytest.mark.parametrize("observation", ["dict", "flat"])
def test_env_checker_on_every_configuration(inputs, observation):
    configs = [(inputs["bb"], DRAGONFLY, {"features": "extended"}),
               (inputs["co"], ARIS, {"features": "extended"}),
               (inputs["co"], ARIS, {"features": "extended", "actions": "placement"}),
               (inputs["co"], ARIS, {"actions": "placement"}),
               (inputs["co"], ARIS, {"actions": "partner", "partners": 3}),
               (inputs["co"], ARIS, {"actions": "partner", "features": "extended"})]
    for workload, platform, kw in configs:
        env = BatsimExactEnv(workload, platform, window=6, observation=observation, invalid_action="penalty", **kw)
        check_env(env, skip_render_check=True)
        obs, info = env.reset(seed=0)
        assert env.observation_space.contains(obs)
        assert info["action_mask"].shape == (env.action_space.n,)
        for _ in range(30):  # a few steps: every observation is in the space
            obs, _, terminated, truncated, info = env.step(first_valid(info))
            assert env.observation_space.contains(obs)
            if terminated or truncated:
                break
        env.close()


def test_extended_features_against_the_jobs(inputs):
    env = BatsimExactEnv(inputs["bb"], DRAGONFLY, window=8, features="extended",
                         horizons=(0.0, 600.0, 36_000.0, 1e9))
    obs, info = env.reset(seed=0)
    assert obs["jobs"].shape == (8, len(EXTENDED_JOB_FEATURES)) and obs["profile"].shape == (4, 2)
    checked = 0
    for _ in range(60):
        total = env.cluster.n_compute
        running = env.running
        now = env.now
        for h, row in zip((0.0, 600.0, 36_000.0, 1e9), obs["profile"]):
            busy = sum(job.res for job, start, _ in running if start + job.walltime > now + h)
            assert row[0] == pytest.approx((total - busy) / total, abs=1e-6)
        assert obs["profile"][0, 0] == pytest.approx(obs["cluster"][0], abs=1e-6)
        assert (np.diff(obs["profile"][:, 0]) >= -1e-6).all()  # (capacity only comes back over time)
        assert obs["profile"][-1, 0] == pytest.approx(1.0)
        queue = env.queue
        assert env.queue_length == len(queue)
        for i, job in enumerate(env.unwrapped._window_jobs):
            user = (job.extra or {}).get("user")
            if user is None:
                assert obs["jobs"][i, 6] == 0.0 and obs["jobs"][i, 7] == 0.0
                continue
            same = sum(1 for j in queue if (j.extra or {}).get("user") == user)
            assert obs["jobs"][i, 6] == pytest.approx(same / len(queue), abs=1e-6)
            used = sum(j.res for j, _, _ in running if (j.extra or {}).get("user") == user)
            assert obs["jobs"][i, 7] == pytest.approx(used / total, abs=1e-6)
            checked += 1
        obs, _, terminated, _, info = env.step(first_valid(info))
        if terminated:
            break
    assert checked > 10
    env.close()


def test_placement_actions_and_corun_features(inputs):
    env = BatsimExactEnv(inputs["co"], ARIS, window=4, features="extended", actions="placement")
    obs, info = env.reset(seed=0)
    assert env.action_space.n == 9 and env.wait_action == 8
    mask = info["action_mask"]
    for k, job in enumerate(env._window_jobs):
        assert mask[2 * k] == env._backend.fits_mode(job, "compact") == bool(obs["corun"][k, 0])
        assert mask[2 * k + 1] == env._backend.fits_mode(job, "spread") == bool(obs["corun"][k, 1])
        assert obs["jobs"][k, 5] == float(mask[2 * k] or mask[2 * k + 1])
    spread = [a for a in range(1, 8, 2) if mask[a]]
    assert spread
    env.step(spread[0])
    assert env.running[-1][2].mode == "spread"
    env.close()


@pytest.mark.parametrize("policy", [p for p in COSCHED_POLICIES if p not in OWN_PLACEMENT])
def test_node_sharing_policies_as_placement_actions(inputs, policy):
    workload, folder = inputs["co"], inputs["folder"]
    ref = run(policy, platform=ARIS, workloads=[workload], export=str(folder / f"p{policy}_ref"))
    env = PolicyExpert(gymnasium.make("coburst/BatsimExact-v0", workload=workload, platform=ARIS, window=64,
                                      actions="placement", export=str(folder / f"p{policy}_gym")), policy)
    assert not env.play_allocations
    env.reset(seed=0)
    while True:
        _, _, terminated, truncated, _ = env.step(env.expert_action())
        assert not truncated
        if terminated:
            break
    assert Path(env.unwrapped.result.jobs_csv).read_text() == Path(ref.jobs_csv).read_text()
    env.close()


def test_placement_actions_need_a_node_sharing_platform(inputs):
    with pytest.raises(ValueError, match="node-sharing"):
        BatsimExactEnv(inputs["bb"], DRAGONFLY, actions="placement")
    with pytest.raises(ValueError, match="features"):
        BatsimExactEnv(inputs["bb"], DRAGONFLY, features="everything")


def test_partner_actions_put_a_spread_job_beside_its_partner(inputs):
    env = BatsimExactEnv(inputs["co"], ARIS, window=6, actions="partner", partners=3, modes=("spread",))
    assert env.choices == ("compact", "spread", "partner 0", "partner 1", "partner 2")
    n = len(env.choices)
    obs, info = env.reset(seed=0)
    checked = 0
    for _ in range(400):
        mask = info["action_mask"]
        partners = env._backend.partners()
        for i in range(3):  # partner slots: valid only for existing partners, as the observation says
            assert obs["partners"][i, 0] == float(i < len(partners))
            assert not mask[i + 2::n][:len(env._window_jobs)].any() or i < len(partners)
        beside = [a for a in range(env.wait_action) if a % n >= 2 and mask[a]]
        if beside:
            a = beside[-1]
            job = env._window_jobs[a // n]
            first = partners[a % n - 2][1]
            backend, got = env._backend, []
            place = backend.start_choice
            backend.start_choice = lambda j, i, place=place, got=got: got.append(place(j, i)) or got[-1]  # (records)
            obs, _, terminated, _, info = env.step(a)
            alloc = got[0]
            assert alloc.mode == "spread" and set(first[:2 * job.nodes]) <= set(alloc.nodes)
            checked += 1
        else:
            obs, _, terminated, _, info = env.step(int(np.flatnonzero(mask)[0]))
        if terminated:
            break
    assert checked >= 3
    env.close()


def play_to_the_end(env) -> list[int]:
    """The expert's actions to the episode's end; returns their choices (-1: wait)."""
    base, choices = env.unwrapped, []
    env.reset(seed=0)
    while True:
        action = env.expert_action()
        choices.append(action % len(base.choices) if action < base.wait_action else -1)
        _, _, terminated, truncated, _ = env.step(action)
        assert not truncated
        if terminated:
            return choices


@pytest.mark.parametrize("partners", [1, 4])
@pytest.mark.parametrize("seed", [1, 2])
def test_pair_greedy_as_partner_actions_ranked_by_speed(inputs, seed, partners):
    """With ``partner_order="speed"`` the spread placements follow the job's pair-speed ranking
    (Pair-Greedy's node order): Pair-Greedy's decisions are partner actions, and its
    ``_jobs.csv`` comes out byte for byte."""
    folder = inputs["folder"]
    workload = cosched_workload(folder / f"pg{seed}.json", seed=seed)
    ref = run("pair-greedy", platform=ARIS, workloads=[workload], export=str(folder / f"pg{seed}_ref"))
    env = PolicyExpert(BatsimExactEnv(workload, ARIS, window=64, actions="partner", partners=partners,
                                      partner_order="speed", export=str(folder / f"pg{seed}_{partners}")),
                       "pair-greedy")
    choices = play_to_the_end(env)
    assert Path(env.unwrapped.result.jobs_csv).read_text() == Path(ref.jobs_csv).read_text()
    assert choices.count(1) >= 30  # (spread, in the ranking: every job Pair-Greedy starts)
    env.close()
    # the ranking matters: offered by submission order (spread nodes in index order), the same
    # decisions are no action
    env = PolicyExpert(BatsimExactEnv(workload, ARIS, window=64, actions="partner", partners=partners,
                                      export=str(folder / f"pg{seed}_{partners}_sub")), "pair-greedy")
    with pytest.raises(ExpertMismatch, match="no placement action"):
        play_to_the_end(env)
    env.close()


def test_speed_ranked_partners_and_their_placements(inputs):
    """The partners offered to a job are ranked by the pair's speed (ties: node order); beside
    partner ``i``, a spread job takes that partner's nodes first, then the ranking."""
    env = BatsimExactEnv(inputs["co"], ARIS, window=6, actions="partner", partners=3, partner_order="speed",
                         modes=("spread",))
    speeds = env.speeds
    n = len(env.choices)
    obs, info = env.reset(seed=0)
    assert obs["partners"].shape == (6, 3, 3)
    checked = 0
    for _ in range(400):
        backend, mask = env._backend, info["action_mask"]
        for k, job in enumerate(env._window_jobs):
            partners = backend.partners(job)
            a = speeds.of(job)
            scores = [speeds.eff[a, speeds.of(env.state.by_handle[h])] + speeds.eff[speeds.of(env.state.by_handle[h]), a]
                      - speeds.alone[speeds.of(env.state.by_handle[h])] for h, _ in partners]
            keys = [(-s, nodes[0]) for s, (_, nodes) in zip(scores, partners)]
            assert keys == sorted(keys)
            assert obs["partners"][k, :, 0].tolist() == [float(i < len(partners)) for i in range(3)]
        beside = [a for a in range(env.wait_action) if a % n >= 2 and mask[a]]
        if beside:
            a = beside[-1]
            job = env._window_jobs[a // n]
            first = backend.partners(job)[a % n - 2][1]
            alloc = backend.board.copy().place(job.seq, "spread", job.nodes,
                                               np.asarray(first + [i for i in backend._ranking(job)[0].tolist()
                                                                   if i not in first]), job.bb)
            got, place = [], backend.start_choice
            backend.start_choice = lambda j, i, place=place, got=got: got.append(place(j, i)) or got[-1]  # (records)
            obs, _, terminated, _, info = env.step(a)
            assert got[0].mode == "spread" and got[0].units == alloc.units
            assert set(first[:2 * job.nodes]) <= set(alloc.nodes)
            checked += 1
        else:
            obs, _, terminated, _, info = env.step(int(np.flatnonzero(mask)[0]))
        if terminated:
            break
    assert checked >= 3
    env.close()


def test_partner_order_needs_partner_actions(inputs):
    with pytest.raises(ValueError, match="partner_order"):
        BatsimExactEnv(inputs["co"], ARIS, actions="placement", partner_order="speed")
    with pytest.raises(ValueError, match="partner_order"):
        BatsimExactEnv(inputs["co"], ARIS, actions="partner", partner_order="fastest")
    with pytest.raises(ValueError, match="heatmap: 'no-such-map' is neither a file"):
        BatsimExactEnv(inputs["co"], ARIS, actions="partner", partner_order="speed", heatmap="no-such-map")


def test_pair_greedy_placements_are_reported_as_no_action(inputs):
    """Pair-Greedy ranks every node by the pair's speed: a job may span several partners, and
    its idle nodes come before the half-free ones; with the partners offered by submission
    order (the spread nodes in index order) its placements are no action."""
    env = PolicyExpert(BatsimExactEnv(inputs["co"], ARIS, window=64, actions="partner", partners=8), "pair-greedy")
    env.reset(seed=0)
    with pytest.raises(ExpertMismatch, match="no placement action"):
        for _ in range(500):
            _, _, terminated, _, _ = env.step(env.expert_action())
            assert not terminated
    env.close()


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=cosched_cases(max_jobs=12),
       policy=st.sampled_from([p for p in COSCHED_POLICIES if p not in OWN_PLACEMENT]))
def test_placement_actions_on_random_node_sharing_cases(tmp_path_factory, case, policy):
    """On random node-sharing platforms and workloads: the policy's decisions as (job, mode)
    actions give its ``_jobs.csv`` -- or the expert names the placement no action gives."""
    folder = tmp_path_factory.mktemp("placecase")
    platform, workload = case.write(folder)
    ref = run_policy(policy, str(workload), str(platform), out=folder / "ref", trace=False)
    env = PolicyExpert(BatsimExactEnv(str(workload), str(platform), window=32, actions="placement",
                                      export=str(folder / "gym")), policy)
    env.reset(seed=0)
    try:
        while True:
            _, _, terminated, _, _ = env.step(env.expert_action())
            if terminated:
                break
    except ExpertMismatch as exc:
        assert "no placement action" in str(exc)
    else:
        assert (folder / "gym_jobs.csv").read_text() == ref.jobs_csv.read_text()
    env.close()


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=cosched_cases(max_jobs=12), partners=st.integers(1, 3))
def test_pair_greedy_as_partner_actions_on_random_node_sharing_cases(tmp_path_factory, case, partners):
    """On random node-sharing platforms and workloads: Pair-Greedy played as partner actions
    ranked by speed gives its ``_jobs.csv`` byte for byte."""
    folder = tmp_path_factory.mktemp("pgcase")
    platform, workload = case.write(folder)
    ref = run_policy("pair-greedy", str(workload), str(platform), out=folder / "ref", trace=False)
    env = PolicyExpert(BatsimExactEnv(str(workload), str(platform), window=32, actions="partner",
                                      partners=partners, partner_order="speed", export=str(folder / "gym")),
                       "pair-greedy")
    play_to_the_end(env)
    assert (folder / "gym_jobs.csv").read_text() == ref.jobs_csv.read_text()
    env.close()
