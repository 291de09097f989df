"""A trained agent as the scheduler on node-sharing platforms (``schedulers/coschedAgent.py``:
``job``, ``placement`` and ``partner`` actions) and heterogeneous clusters
(``schedulers/heteroAgent.py``: ``job`` and ``class`` actions), through the adapters the
built-in policies of those families use: the same agent gives the same ``_jobs.csv``, byte
for byte, played in ``coburst/BatsimExact-v0`` and run by ``coburst run`` (in a child
process, in process and over ZeroMQ) and on the real Batsim 4.2.1 (recorded:
tests/data/batsim_recorded); it sees the environment's observations and masks at
every decision; options a family does not take are errors naming them (status 2, no
traceback)."""

from __future__ import annotations

import json
import logging
import os
import subprocess
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import agent_support
import coburst.gym  # noqa: F401 - registers the environments
from cli_support import call
from hetero_fixtures import platform as hetero_platform
from hetero_fixtures import workload as hetero_workload
from simharness import COBURST, TESTS, run_sim
from test_gym_agent_scheduler import same_views
from test_gym_conformance_cosched import cosched_workload

pytestmark = pytest.mark.timeout(300)

REPO = TESTS.parent
ENTRIES = {"cosched": REPO / "schedulers" / "coschedAgent.py", "hetero": REPO / "schedulers" / "heteroAgent.py",
           "bb": REPO / "schedulers" / "coburstAgent.py"}
ARIS = REPO / "platforms" / "aris_cosched_small.xml"
#: node (cores, speed) and its type: three host classes
NODES = [(2, 2e9), (1, 3e9), (2, 3e9), (4, 1e9), (2, 1e9), (1, 5e9)]
TYPES = ["fast", "fast", "fast", "slow", "slow", "gpu"]
#: (family, scheduler options besides the agent, the agent): what each case plays
CASES = {
    "cosched-job": ("cosched", {"window": 6}, "first_fit"),
    "cosched-placement": ("cosched", {"actions": "placement", "window": 6}, "last_fit"),
    "cosched-partner": ("cosched", {"actions": "partner", "partners": 3, "window": 6}, "last_fit"),
    "cosched-partner-speed": ("cosched", {"actions": "partner", "partners": 2, "partner_order": "speed",
                                          "heatmap": "aris-nas", "window": 6, "features": "extended"}, "last_fit"),
    "hetero-class": ("hetero", {"actions": "class", "window": 5}, "last_fit"),
    "hetero-class-extended": ("hetero", {"actions": "class", "window": 5, "features": "extended",
                                         "observation": "flat"}, "first_fit"),
}


@pytest.fixture(scope="module", autouse=True)
def quiet():
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def coburst_run(tmp: Path, family: str, options: dict, prefix: str, *extra: str) -> subprocess.CompletedProcess:
    """``coburst run`` of the family's agent entry file in a child process (the agents'
    module and this checkout's package on its path)."""
    platform, wl = tmp / f"{family}.xml", tmp / f"{family}.json"
    cmd = [str(COBURST), "run", str(ENTRIES[family]), "-o", json.dumps(options), "-p", str(platform),
           "-w", str(wl), "-e", str(tmp / prefix), "-q", *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=200, cwd=tmp,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join((str(TESTS), str(REPO)))})


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The two platforms and workloads, described in coburst's cache by a first run of each
    in a child process (no SimGrid engine in this process)."""
    tmp = tmp_path_factory.mktemp("families")
    (tmp / "cosched.xml").write_text(ARIS.read_text())
    cosched_workload(tmp / "cosched.json")
    plat = hetero_platform(tmp / "hetero.xml", NODES, power=[(5.0, 10.0 + i) for i in range(len(NODES))])
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
    hetero_workload(tmp / "hetero.json", jobs, nb_res=sum(c for c, _ in NODES))
    for family in ("cosched", "hetero"):
        done = coburst_run(tmp, family, {"agent": "agent_support:first_fit"}, f"warm_{family}")
        assert done.returncode == 0, done.stderr
    return tmp


def env_kw(options: dict) -> dict:
    """The environment's keyword options from the scheduler's."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}


def play_env(tmp: Path, family: str, act, prefix: str, **kw) -> tuple[Path, list]:
    """The agent played through ``gymnasium.make``; returns the ``_jobs.csv`` and what it saw
    (observation, mask, action) at every step."""
    env = gymnasium.make("coburst/BatsimExact-v0", workload=str(tmp / f"{family}.json"),
                         platform=str(tmp / f"{family}.xml"), export=str(tmp / prefix), **kw)
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
    choices = env.unwrapped.choices
    env.close()
    return tmp / f"{prefix}_jobs.csv", seen, choices


@pytest.mark.parametrize("case", list(CASES))
def test_same_jobs_in_the_environment_and_coburst_run(folder, case):
    family, options, agent = CASES[case]
    target = getattr(agent_support, agent)
    env_csv, seen, choices = play_env(folder, family, getattr(target, "act", target), f"gym_{case}", **env_kw(options))
    expected = env_csv.read_bytes()
    assert expected.count(b"\n") - 1 == (36 if family == "cosched" else 40)  # (every job ran)
    transports = ("inprocess", "zmq") if case in ("cosched-partner", "hetero-class") else ("inprocess",)
    for transport in transports:
        done = coburst_run(folder, family, {"agent": f"agent_support:{agent}", **options}, f"{transport}_{case}",
                           "--transport", transport)
        assert done.returncode == 0, done.stderr
        assert (folder / f"{transport}_{case}_jobs.csv").read_bytes() == expected, transport
    # the agent's actions used the family's choices: co-run partners, host classes beyond the first
    if choices:
        taken = {a % len(choices) for _, mask, a in seen if a < len(mask) - 1}
        if case.startswith("cosched-partner"):
            assert any(i >= 2 for i in taken), taken
        if agent == "last_fit" and family == "hetero":
            assert taken - {0}, taken


@pytest.mark.parametrize("case", list(CASES))
def test_same_jobs_on_the_real_batsim(folder, case, tmp_path, monkeypatch):
    # live: pybatsim runs the family's entry file, which imports the agent from tests/;
    # replay: the recording
    family, options, agent = CASES[case]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join((str(TESTS), str(REPO))))
    run = run_sim(tmp_path, workloads=[folder / f"{family}.json"], platform=folder / f"{family}.xml",
                  scheduler=str(ENTRIES[family]), options={"agent": f"agent_support:{agent}", **options},
                  engine="batsim", prefix=f"batsim_{case}", wait=120)
    assert run.returncode == 0, run.stderr
    target = getattr(agent_support, agent)
    env_csv, _, _ = play_env(folder, family, getattr(target, "act", target), f"gym_real_{case}", **env_kw(options))
    assert run.jobs_csv.read_bytes() == env_csv.read_bytes(), case


def test_the_agents_decide_differently_on_partners(folder):
    options = env_kw(CASES["cosched-partner"][1])
    a, _, _ = play_env(folder, "cosched", agent_support.first_fit.act, "diff_first", **options)
    b, _, _ = play_env(folder, "cosched", agent_support.last_fit, "diff_last", **options)
    assert a.read_bytes() != b.read_bytes()


@pytest.mark.parametrize("case", ["cosched-partner-speed", "cosched-placement", "hetero-class-extended"])
def test_the_scheduler_sees_the_environments_observations_and_masks(folder, case):
    family, options, _ = CASES[case]
    agent_support.recorder.clear()
    code, err = call("run", ENTRIES[family], "-o", json.dumps({"agent": "agent_support:recorder", **options}),
                     "-p", folder / f"{family}.xml", "-w", folder / f"{family}.json", "-e", folder / f"rec_{case}",
                     "-q")
    assert code == 0, err
    in_scheduler = list(agent_support.recorder.seen)
    agent_support.recorder.clear()
    env_csv, in_env, _ = play_env(folder, family, agent_support.recorder.act, f"rec_env_{case}", **env_kw(options))
    assert (folder / f"rec_{case}_jobs.csv").read_bytes() == env_csv.read_bytes()
    same_views(in_scheduler, in_env)
    assert len(in_env) >= 30


@pytest.mark.parametrize("family, options, words", [
    ("bb", {"actions": "placement"}, ['coburstAgent.py runs on burst-buffer platforms and takes "job"',
                                      "schedulers/coschedAgent.py"]),
    ("bb", {"actions": "class"}, ["schedulers/heteroAgent.py"]),
    ("hetero", {"actions": "partner"}, ['takes "job", "class"', "schedulers/coschedAgent.py"]),
    ("cosched", {"actions": "class"}, ['takes "job", "placement", "partner"', "schedulers/heteroAgent.py"]),
    ("cosched", {"actions": "everything"}, ["actions", "'everything'"]),
    ("hetero", {"actions": "class", "partners": 3}, ["partners", "node-sharing platforms only"]),
    ("cosched", {"actions": "placement", "partners": 3}, ["partners", 'actions "partner" only']),
    ("cosched", {"actions": "partner", "partner_order": "fastest"}, ["partner_order", "'speed'"]),
    ("cosched", {"actions": "partner", "heatmap": "aris-nas"}, ["heatmap", 'partner_order "speed" only']),
    ("cosched", {"actions": "partner", "partner_order": "speed", "heatmap": "no-such-map"}, ["heatmap", "no-such-map"]),
    ("cosched", {"modes": ["sideways"]}, ["modes"]),
    ("cosched", {"policy": "pair-greedy"}, ["policy", "unknown option"]),
])
def test_options_a_family_does_not_take_are_errors(folder, family, options, words):
    data = "cosched" if family == "cosched" else "hetero"
    code, err = call("run", ENTRIES[family], "-o", json.dumps({"agent": "agent_support:first_fit", **options}),
                     "-p", folder / f"{data}.xml", "-w", folder / f"{data}.json", "-e", folder / "bad", "-q")
    assert code == 2, err
    assert "Traceback" not in err
    for word in words:
        assert word in err, err
    assert not (folder / "bad_jobs.csv").exists()


def test_an_agent_entry_file_on_another_familys_platform_is_an_error(folder):
    code, err = call("run", ENTRIES["hetero"], "-o", json.dumps({"agent": "agent_support:first_fit"}),
                     "-p", folder / "cosched.xml", "-w", folder / "cosched.json", "-e", folder / "wrong", "-q")
    assert code == 2, err
    assert "Traceback" not in err and "heterogeneous" in err, err
