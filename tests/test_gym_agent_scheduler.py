"""A trained agent as a pybatsim scheduler (``schedulers/coburstAgent.py``,
:mod:`coburst.gym.scheduler`): the same agent gives the same ``_jobs.csv``, byte for byte,
played in ``coburst/BatsimExact-v0``, run by ``coburst run`` (in process and over ZeroMQ)
and on the real Batsim 4.2.1 (recorded: tests/data/batsim_recorded); it sees the
environment's observations and masks at every decision; a bad agent path is an error
naming the option (status 2, no traceback)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import gymnasium
import pytest

import agent_support
import coburst.gym  # noqa: F401 - registers the environments
from cli_support import call
from simharness import COBURST, DATA, TESTS, run_sim, workload

pytestmark = pytest.mark.timeout(180)

REPO = TESTS.parent
ENTRY = REPO / "schedulers" / "coburstAgent.py"
AGENTS = ("agent_support:first_fit", "agent_support:shortest_fit")
WINDOW = 4
#: 4 compute nodes, the master alone in a cluster of its own (a platform the real Batsim takes)
PLATFORM = DATA / "cluster_master.xml"
M = ["-m", "master_0"]


def small_workload(path: Path) -> Path:
    """16 delay jobs of 1 to 4 nodes on the 4-node cluster, arriving faster than they run:
    the window holds several jobs, of which the agents start different ones."""
    sizes = (3, 1, 4, 2, 2, 1, 3, 4, 1, 2, 3, 1, 2, 4, 1, 2)
    delays = (40, 15, 25, 60, 10, 35, 20, 5, 50, 30, 45, 12, 8, 22, 33, 18)
    jobs = [{"id": str(i), "subtime": 4 * i, "res": res, "profile": f"d{delay}", "walltime": delay + 20}
            for i, (res, delay) in enumerate(zip(sizes, delays))]
    profiles = {f"d{d}": {"type": "delay", "delay": d} for d in set(delays)}
    return workload(path, jobs, profiles, nb_res=4)


def coburst_run(tmp: Path, options: dict, prefix: str, *extra: str) -> subprocess.CompletedProcess:
    """``coburst run schedulers/coburstAgent.py`` in a child process (the agent module on its
    path)."""
    cmd = [str(COBURST), "run", str(ENTRY), "-o", json.dumps(options), "-p", str(PLATFORM),
           "-w", str(tmp / "w.json"), "-e", str(tmp / prefix), "-q", *M, *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp,
                          env={**os.environ, "PYTHONPATH": str(TESTS)})


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The workload; its platform described in coburst's cache by a first run in a child
    process (no SimGrid engine in this process)."""
    tmp = tmp_path_factory.mktemp("agent")
    small_workload(tmp / "w.json")
    done = coburst_run(tmp, {"agent": AGENTS[0]}, "warm")
    assert done.returncode == 0, done.stderr
    return tmp


def play_env(tmp: Path, act, prefix: str, **env_kw) -> tuple[Path, list]:
    """The agent played through ``gymnasium.make``; returns the ``_jobs.csv`` and what it saw
    (observation, mask, action) at every step."""
    env = gymnasium.make("coburst/BatsimExact-v0", workload=str(tmp / "w.json"), platform=str(PLATFORM),
                         export=str(tmp / prefix), sim_args=M, **env_kw)
    seen = []
    obs, info = env.reset(seed=0)
    while True:
        mask = env.unwrapped.action_masks()
        assert (mask == info["action_mask"]).all()
        action = act(obs, mask)
        seen.append((obs, mask, action))
        obs, _, terminated, truncated, info = env.step(action)
        assert not truncated
        if terminated:
            break
    env.close()
    return tmp / f"{prefix}_jobs.csv", seen


def same_views(a: list, b: list) -> None:
    assert len(a) == len(b)
    for (obs_a, mask_a, act_a), (obs_b, mask_b, act_b) in zip(a, b):
        assert act_a == act_b
        assert (mask_a == mask_b).all()
        if isinstance(obs_a, dict):
            assert obs_a.keys() == obs_b.keys()
            for key in obs_a:
                assert obs_a[key].dtype == obs_b[key].dtype and (obs_a[key] == obs_b[key]).all(), key
        else:
            assert (obs_a == obs_b).all()


@pytest.mark.parametrize("agent", AGENTS)
def test_same_jobs_in_the_environment_and_coburst_run(folder, agent):
    tag = agent.partition(":")[2]
    target = getattr(agent_support, tag)
    act = getattr(target, "act", target)
    env_csv, seen = play_env(folder, act, f"gym_{tag}", window=WINDOW)
    expected = env_csv.read_bytes()
    assert expected.count(b"COMPLETED_SUCCESSFULLY") == 16
    for transport in ("inprocess", "zmq"):
        done = coburst_run(folder, {"agent": agent, "window": WINDOW}, f"{transport}_{tag}", "--transport", transport)
        assert done.returncode == 0, done.stderr
        assert (folder / f"{transport}_{tag}_jobs.csv").read_bytes() == expected, transport
    assert len(seen) >= 16  # (a start a step, and any waits)
    assert max(obs["jobs"][:, 0].sum() for obs, _, _ in seen) == WINDOW  # (a full window at times)


def test_the_two_agents_decide_differently(folder):
    a, _ = play_env(folder, agent_support.first_fit.act, "diff_a", window=WINDOW)
    b, _ = play_env(folder, agent_support.shortest_fit, "diff_b", window=WINDOW)
    assert a.read_bytes() != b.read_bytes()


@pytest.mark.parametrize("env_kw", [{"window": 3}, {"window": 5, "features": "extended", "observation": "flat",
                                                    "horizons": [0, 30, 120], "time_scale": 60}],
                         ids=["basic", "extended-flat"])
def test_the_scheduler_sees_the_environments_observations_and_masks(folder, env_kw):
    # the scheduler in this process (coburst run, in-process transport; the platform is in
    # the cache): the recording agent keeps what it was shown
    agent_support.recorder.clear()
    code, err = call("run", ENTRY, "-o", json.dumps({"agent": "agent_support:recorder", **env_kw}),
                     "-p", PLATFORM, "-w", folder / "w.json", "-e", folder / "rec", "-q", *M)
    assert code == 0, err
    in_scheduler = list(agent_support.recorder.seen)
    agent_support.recorder.clear()
    kw = {**env_kw, "horizons": tuple(env_kw["horizons"])} if "horizons" in env_kw else env_kw
    env_csv, in_env = play_env(folder, agent_support.recorder.act, "rec_env", **kw)
    assert (folder / "rec_jobs.csv").read_bytes() == env_csv.read_bytes()
    same_views(in_scheduler, in_env)
    assert len(in_env) >= 16
    # some masks forbid wait (nothing runs and every job has come: waiting would stall), which
    # the scheduler knows from the workload's job count
    assert any(not mask[-1] for _, mask, _ in in_env)


def test_same_jobs_on_the_real_batsim(folder, tmp_path, monkeypatch):
    # live: the pybatsim scheduler imports the agent's module from tests/; replay: the recording
    monkeypatch.setenv("PYTHONPATH", str(TESTS))
    w = small_workload(tmp_path / "w.json")
    for agent in AGENTS:
        name = agent.partition(":")[2]
        run = run_sim(tmp_path, workloads=[w], platform=PLATFORM, scheduler=str(ENTRY),
                      options={"agent": agent, "window": WINDOW}, args=M, engine="batsim", prefix=f"batsim_{name}",
                      wait=60)
        assert run.returncode == 0, run.stderr
        target = getattr(agent_support, name)
        env_csv, _ = play_env(folder, getattr(target, "act", target), f"gym_real_{name}", window=WINDOW)
        assert run.jobs_csv.read_bytes() == env_csv.read_bytes(), name


@pytest.mark.parametrize("spec, words", [
    ("agent_support:no_such_agent", "has no attribute 'no_such_agent'"),
    ("no_such_package.agents:agent", "cannot import module 'no_such_package.agents'"),
    ("__import__('os').getcwd()", "import path"),
    ("agent_support", "import path"),
    ("agent_support:FirstFit", "neither an object with act"),
    (7, "import path"),
])
def test_a_bad_agent_path_is_an_error_naming_the_option(folder, spec, words):
    code, err = call("run", ENTRY, "-o", json.dumps({"agent": spec}), "-p", PLATFORM, "-w", folder / "w.json",
                     "-e", folder / "bad", "-q")
    assert code == 2
    assert "agent" in err and words in err, err
    assert "Traceback" not in err
    assert not (folder / "bad_jobs.csv").exists()


def test_bad_options_over_zmq_and_missing_agent(folder):
    done = coburst_run(folder, {"agent": "agent_support:nothing_here"}, "badz", "--transport", "zmq")
    assert done.returncode == 2
    assert "agent" in done.stderr and "nothing_here" in done.stderr and "Traceback" not in done.stderr
    code, err = call("run", ENTRY, "-o", json.dumps({"window": 4}), "-p", PLATFORM, "-w", folder / "w.json",
                     "-e", folder / "bad", "-q")
    assert code == 2 and "agent: missing" in err and "Traceback" not in err
    code, err = call("run", ENTRY, "-o", json.dumps({"agent": AGENTS[0], "window": 0}), "-p", PLATFORM,
                     "-w", folder / "w.json", "-e", folder / "bad", "-q")
    assert code == 2 and "window" in err and "Traceback" not in err
    code, err = call("run", ENTRY, "-o", json.dumps({"agent": AGENTS[0], "policy": "fcfs"}), "-p", PLATFORM,
                     "-w", folder / "w.json", "-e", folder / "bad", "-q")
    assert code == 2 and "policy" in err and "Traceback" not in err


@pytest.mark.parametrize("option, value, words", [
    ("window", True, "an integer >= 1"), ("window", 2.0, "an integer >= 1"),
    ("features", "all", '"basic" or "extended"'), ("observation", "box", '"dict" or "flat"'),
    ("horizons", [], "non-empty list"), ("horizons", [0, -5], "seconds >= 0"), ("horizons", "60", "list"),
    ("time_scale", 0, "> 0"), ("time_scale", "3600", "> 0"), ("actions", 5, "a string"),
])
def test_each_bad_environment_option_is_an_error_naming_it(folder, option, value, words):
    code, err = call("run", ENTRY, "-o", json.dumps({"agent": AGENTS[0], option: value}), "-p", PLATFORM,
                     "-w", folder / "w.json", "-e", folder / "bad", "-q")
    assert code == 2, err
    assert option in err and words in err and repr(value) in err, err
    assert "Traceback" not in err
    assert not (folder / "bad_jobs.csv").exists()


def test_an_agent_choosing_a_masked_action_fails_the_run(folder):
    done = coburst_run(folder, {"agent": "agent_support:always_slot_three", "window": WINDOW}, "masked")
    assert done.returncode != 0
    assert "masked out" in done.stderr
