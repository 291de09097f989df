"""Delay-only composed profiles folded (coburst.simulator.folding): the same bytes as sleep by
sleep, on random workloads mixing long delay chains with walltimes, parallel tasks, nested
and plain delays; the fold really takes the sleeps; and the real Batsim 4.2.1's dates on a
long chain (recorded, or live with ``BATSIM``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coburst import api
from coburst.simulator import folding

from crossengine import assert_identical, needs_batsim, run_both
from simharness import CLUSTER4, CLUSTER_MASTER, workload

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.timeout(300)


ENERGY = REPO / "platforms" / "hetero_low16.xml"


@pytest.fixture(scope="module", autouse=True)
def platform_described():
    """The platforms' descriptions cached by runs in a child process: the runs here take them
    from the cache and load no SimGrid engine in the test process (one engine a process)."""
    code = ("import json, sys, tempfile, pathlib; from coburst import api; "
            "d = pathlib.Path(tempfile.mkdtemp()); w = d / 'w.json'; w.write_text(sys.argv[2]); "
            "api.run(api.RunConfig(policy='fcfs', platform=sys.argv[1], workloads=[w], out=d / 'o', "
            "energy=sys.argv[3] == 'E'))")
    doc = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "walltime": -1, "res": 1, "profile": "d"}],
           "profiles": {"d": {"type": "delay", "delay": 1}}}
    for platform, energy in ((CLUSTER4, ""), (ENERGY, "E")):
        subprocess.run([sys.executable, "-c", code, str(platform), json.dumps(doc), energy], check=True, cwd=REPO,
                       capture_output=True, timeout=120)


def outputs(tmp: Path, doc: dict, policy: str, fold: bool) -> dict[str, bytes]:
    """The run's files (``_schedule.csv`` without its wall-clock columns)."""
    w = tmp / "w.json"
    w.write_text(json.dumps(doc))
    out = tmp / ("folded" if fold else "sleeps")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(folding, "ENABLED", fold)
        api.run(api.RunConfig(policy=policy, platform=CLUSTER4, workloads=[w], out=out))
    files = {s: Path(f"{out}_{s}").read_bytes() for s in ("jobs.csv", "machine_states.csv", "schedule.trace")}
    head, row = Path(f"{out}_schedule.csv").read_text().splitlines()[:2]
    keep = [i for i, k in enumerate(head.split(",")) if k not in ("scheduling_time", "simulation_time")]
    files["schedule.csv"] = ",".join(row.split(",")[i] for i in keep).encode()
    return files


DELAYS = st.sampled_from([0.1, 0.7, 1.0, 0.001, 3.3, 1e-7, 2.5e-5, 17.0])

profiles_st = st.fixed_dictionaries({
    "chain": st.lists(DELAYS, min_size=1, max_size=4),
    "repeat": st.integers(1, 400),
    "inner": st.lists(DELAYS, min_size=1, max_size=3),
    "inner_repeat": st.integers(1, 50),
    "outer_repeat": st.integers(1, 5),
    "flops": st.sampled_from([1e6, 3e8, 1e9]),
    "com": st.sampled_from([0.0, 1e5, 1e7]),
})

jobs_st = st.lists(st.tuples(st.sampled_from(["chain", "nested", "ptask", "d3", "after"]),
                             st.integers(1, 4), st.sampled_from([0.0, 0.05, 1.3, 7.0, 40.0]),
                             st.sampled_from([-1, 2.0, 9.999, 30.0, 100.0])),
                   min_size=1, max_size=8)


def document(p: dict, jobs: list) -> dict:
    profiles = {f"d{i}": {"type": "delay", "delay": d} for i, d in enumerate(p["chain"] + p["inner"])}
    chain = [f"d{i}" for i in range(len(p["chain"]))]
    inner = [f"d{len(chain) + i}" for i in range(len(p["inner"]))]
    profiles.update({
        "chain": {"type": "composed", "repeat": p["repeat"], "seq": chain},
        "inner": {"type": "composed", "repeat": p["inner_repeat"], "seq": inner},
        "nested": {"type": "composed", "repeat": p["outer_repeat"], "seq": ["inner", "ptask", "inner"]},
        "ptask": {"type": "parallel_homogeneous", "cpu": p["flops"], "com": p["com"]},
        "d3": {"type": "delay", "delay": 3.0},
        "after": {"type": "composed", "repeat": 3, "seq": ["d3", "chain"]},
    })
    return {"nb_res": 4, "profiles": profiles,
            "jobs": [{"id": str(i), "subtime": sub, "res": res, "walltime": wall, "profile": prof}
                     for i, (prof, res, sub, wall) in enumerate(jobs)]}


@settings(max_examples=30, deadline=None)
@given(p=profiles_st, jobs=jobs_st, policy=st.sampled_from(["fcfs", "easy"]))
def test_folded_as_sleep_by_sleep(tmp_path_factory, p, jobs, policy):
    """Every file byte for byte, folding or not: chains alone and beside other jobs' sleeps,
    messages and parallel tasks, walltimes reached inside a chain, nested chains."""
    doc = document(p, jobs)
    tmp = tmp_path_factory.mktemp("fold")
    assert outputs(tmp, doc, policy, True) == outputs(tmp, doc, policy, False)


def test_the_fold_takes_the_sleeps(tmp_path, monkeypatch):
    """A chain of 20,000 sleeps beside a longer job: nearly all are folded, none is lost."""
    folded = []
    original = folding.DelayChain.fold

    def counting(self, clock):
        original(self, clock)
        folded.append(self.done)

    monkeypatch.setattr(folding.DelayChain, "fold", counting)
    doc = {"nb_res": 4, "profiles": {"a": {"type": "delay", "delay": 0.1}, "b": {"type": "delay", "delay": 0.7},
                                     "c": {"type": "composed", "repeat": 10_000, "seq": ["a", "b"]},
                                     "long": {"type": "delay", "delay": 12345.678}},
           "jobs": [{"id": "1", "subtime": 0, "res": 1, "walltime": -1, "profile": "c"},
                    {"id": "2", "subtime": 3.3, "res": 2, "walltime": -1, "profile": "long"}]}
    files = outputs(tmp_path, doc, "fcfs", True)
    assert sum(folded) > 19_900
    assert b"1,w0,c,0.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,8000.000000" in files["jobs.csv"]


def test_energy_runs_are_not_folded(tmp_path, monkeypatch):
    """With ``-E`` each sleep's end updates its host's energy: sleep by sleep."""
    calls = []
    monkeypatch.setattr(folding.DelayChain, "fold", lambda self, clock: calls.append(self))
    doc = {"nb_res": 4, "profiles": {"a": {"type": "delay", "delay": 0.1},
                                     "c": {"type": "composed", "repeat": 100, "seq": ["a"]}},
           "jobs": [{"id": "1", "subtime": 0, "res": 1, "walltime": -1, "profile": "c"}]}
    w = tmp_path / "w.json"
    w.write_text(json.dumps(doc))
    api.run(api.RunConfig(policy="fcfs", platform=ENERGY, workloads=[w], out=tmp_path / "e", energy=True))
    assert not calls
    api.run(api.RunConfig(policy="fcfs", platform=ENERGY, workloads=[w], out=tmp_path / "n"))
    assert calls  # (the same run without energy is folded)


# ------------------------------------------------------------------ the real Batsim
def long_chains(tmp_path: Path) -> Path:
    """Two chains of 20,000 and 6,000 sleeps, one ending on its walltime inside the chain, a
    communicating parallel task and plain delays beside them."""
    profiles = {"a": {"type": "delay", "delay": 0.1}, "b": {"type": "delay", "delay": 0.7},
                "e": {"type": "delay", "delay": 0.003},
                "c": {"type": "composed", "repeat": 10_000, "seq": ["a", "b"]},
                "f": {"type": "composed", "repeat": 2_000, "seq": ["e", "a", "e"]},
                "p": {"type": "parallel_homogeneous", "cpu": 5e9, "com": 1e8},
                "d": {"type": "delay", "delay": 1234.5678}}
    jobs = [{"id": "1", "subtime": 0, "res": 1, "walltime": -1, "profile": "c"},
            {"id": "2", "subtime": 3.3, "res": 1, "walltime": 200.0, "profile": "f"},
            {"id": "3", "subtime": 5, "res": 2, "walltime": -1, "profile": "p"},
            {"id": "4", "subtime": 11.11, "res": 1, "walltime": -1, "profile": "d"},
            {"id": "5", "subtime": 2000, "res": 2, "walltime": -1, "profile": "f"}]
    return workload(tmp_path / "chains.json", jobs, profiles)


@needs_batsim
def test_long_delay_chains_as_batsim(tmp_path):
    batsim, coburst = run_both(tmp_path, workloads=[long_chains(tmp_path)], platform=CLUSTER_MASTER,
                               scheduler="schedFcfs", args=["-m", "master_0"])
    assert_identical(batsim, coburst)
    rows = coburst.jobs()
    assert rows["w0!2"]["final_state"] == "COMPLETED_WALLTIME_REACHED"
