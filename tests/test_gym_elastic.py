"""``coburst/Elastic-v0`` (coburst.gym.elastic): an agent starts and resizes elastic jobs.

The key proof is conformance: a built-in elastic policy's own decisions played as actions
(:class:`coburst.gym.ElasticExpert`) give its ``_jobs.csv`` and ``_reconfigurations.csv``
byte for byte, on the example workload and on random ones (hypothesis).  Beside it: the
Gymnasium checker, the mask against the simulator's rules at every step of random masked
agents (whose runs keep the invariants: no resource to two jobs at once, every size in the
job's bounds, every job ends), the observation's numbers, the rewards against the outputs,
invalid actions, episodes in a row and no thread left behind."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

import coburst.gym
from coburst.adapter.elastic import run_elastic
from coburst.gym import ElasticEnv, ElasticExpert, ExpertMismatch, InvalidAction
from test_elastic_invariants import workloads

pytestmark = pytest.mark.timeout(180)

REPO = Path(__file__).resolve().parents[1]
C16 = str(REPO / "platforms" / "cluster16.xml")
SMALL = str(REPO / "workloads" / "malleable_small.json")
OUTPUTS = ("_jobs.csv", "_reconfigurations.csv")
THREAD = "coburst-gym-elastic"


def sim_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == THREAD}


@pytest.fixture(scope="module", autouse=True)
def platform_described():
    """The platform's description cached by a run in a child process: the episodes here then
    load no SimGrid engine in the test process (one engine a process)."""
    code = ("import sys, tempfile, pathlib; from coburst.adapter.elastic import run_elastic; "
            "run_elastic(sys.argv[1], [sys.argv[2]], 'equipartition', pathlib.Path(tempfile.mkdtemp()) / 'o')")
    subprocess.run([sys.executable, "-c", code, C16, SMALL], check=True, cwd=REPO, capture_output=True, timeout=120)


def rows(path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def play_expert(env: gymnasium.Env, policy: str) -> int:
    expert = ElasticExpert(env, policy)
    expert.reset(seed=0)
    steps = 0
    while True:
        _, _, terminated, truncated, _ = expert.step(expert.expert_action())
        steps += 1
        assert not truncated
        if terminated:
            return steps


def same_outputs(a: str, b: str) -> bool:
    return all(Path(a + s).read_text() == Path(b + s).read_text() for s in OUTPUTS)


def expected_mask(env: ElasticEnv) -> np.ndarray:
    """The valid actions by the simulator's rules, computed apart from the environment."""
    st, B = env.state, env.n_buckets
    free = len(st.free)
    mask = np.zeros(env.action_space.n, dtype=bool)
    for k, job in enumerate(st.queue[:env.window]):
        lo, hi = (job.num_nodes_min, job.num_nodes_max) if job.kind in ("moldable", "malleable", "adaptive") else (
            job.res, job.res)
        for b in range(B):
            size = b + 1
            mask[k * B + b] = lo <= size <= hi and size <= free
    for k, job in enumerate([j for j in st.running.values() if j.point is not None][:env.points]):
        n, want = job.point["num_nodes"], job.point.get("requested")
        if job.kind in ("malleable", "adaptive"):
            lo, hi = job.num_nodes_min, job.num_nodes_max
        elif job.kind == "evolving" and want is not None:
            lo, hi = min(n, want), max(n, want)
        else:
            continue
        for b in range(B):
            size = b + 1
            way = job.size - n  # (a second resize in a message goes the first one's way)
            mask[env.resize_base + k * B + b] = (lo <= size <= hi and size != job.size and size - job.size <= free
                                                 and (size - job.size) * way >= 0)
    stall = not st.running and st.queue and len(env._seen) == env.n_jobs
    mask[-1] = not stall
    return mask


def random_episode(env: ElasticEnv, seed: int, check_mask: bool = True) -> int:
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    steps = 0
    while True:
        mask = info["action_mask"]
        if check_mask:
            want = expected_mask(env)
            assert (mask == want).all(), (env.now, np.flatnonzero(mask), np.flatnonzero(want))
            assert mask[:-1].any()  # (a message is shown only when something can be done)
        obs, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert env.observation_space.contains(obs)
        steps += 1
        assert not truncated
        if terminated:
            return steps


def check_invariants(doc: dict, prefix: str) -> None:
    """No resource to two jobs at once, every size in the job's bounds, every job ends."""
    jobs = {f"w0!{r['job_id']}": r for r in rows(prefix + "_jobs.csv")}
    resizes: dict[str, list] = {}
    for r in rows(prefix + "_reconfigurations.csv"):
        resizes.setdefault(r["job_id"], []).append(r)
    assert len(jobs) == len(doc["jobs"])
    intervals = []
    for job in doc["jobs"]:
        jid = f"w0!{job['id']}"
        row = jobs[jid]
        assert row["final_state"] == "COMPLETED_SUCCESSFULLY", row
        spec = job.get("elastic", {"type": "rigid"})
        kind = spec["type"]
        lo, hi = spec.get("num_nodes_min", job["res"]), spec.get("num_nodes_max", job["res"])
        alloc = ProcSet.from_str(row["allocated_resources"])
        start_lo, start_hi = (lo, hi) if kind in ("moldable", "malleable", "adaptive") else (job["res"], job["res"])
        assert start_lo <= len(alloc) <= start_hi, (jid, kind, len(alloc))
        t = float(row["starting_time"])
        for r in resizes.get(jid, []):
            assert kind in ("malleable", "evolving", "adaptive") and ProcSet.from_str(r["old_allocation"]) == alloc
            new = ProcSet.from_str(r["new_allocation"])
            assert lo <= len(new) <= hi
            if kind == "evolving":
                req = int(r["requested_size"])
                assert min(len(alloc), req) <= len(new) <= max(len(alloc), req)
            intervals.append((jid, t, float(r["date"]), alloc))
            t, alloc = float(r["date"]), new
        intervals.append((jid, t, float(row["finish_time"]), alloc))
    for i, (ja, sa, ea, pa) in enumerate(intervals):
        for jb, sb, eb, pb in intervals[i + 1:]:
            if ja != jb and sa < eb and sb < ea:
                assert not (pa & pb), (ja, jb)


# ---------------------------------------------------------------------- conformance
@pytest.mark.parametrize("policy", ["equipartition", "malleable-easy", "moldable-ect"])
def test_expert_reproduces_the_policy_byte_for_byte(tmp_path, policy):
    ref = run_elastic(C16, [SMALL], policy, tmp_path / "ref")
    env = gymnasium.make("coburst/Elastic-v0", workload=SMALL, platform=C16, sizes="all",
                         export=str(tmp_path / "gym"))
    steps = play_expert(env, policy)
    assert same_outputs(str(tmp_path / "ref"), str(tmp_path / "gym"))
    if policy != "moldable-ect":  # (it never resizes)
        assert len(rows(tmp_path / "gym_reconfigurations.csv")) >= 4
    assert steps > len(rows(tmp_path / "gym_jobs.csv"))
    env.close()
    assert ref.jobs_csv.exists()


def test_expert_matches_coburst_run_on_the_command_line(tmp_path):
    subprocess.run([sys.executable, "-m", "coburst", "run", "equipartition", "-p", C16, "-w", SMALL,
                    "-e", str(tmp_path / "cli"), "-q"], check=True, cwd=REPO, capture_output=True, timeout=120)
    env = ElasticEnv(SMALL, C16, sizes="all", window=4, points=4, export=str(tmp_path / "gym"))
    play_expert(env, "equipartition")
    assert same_outputs(str(tmp_path / "cli"), str(tmp_path / "gym"))
    env.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(doc=st.one_of(workloads(walltimes=True), workloads(network=True, walltimes=True)))
def test_expert_reproduces_the_policies_on_random_workloads(tmp_path_factory, doc):
    folder = tmp_path_factory.mktemp("random")
    (folder / "w.json").write_text(json.dumps(doc))
    for policy in ("equipartition", "malleable-easy"):
        run_elastic(C16, [folder / "w.json"], policy, folder / f"{policy}_ref")
        env = ElasticEnv(str(folder / "w.json"), C16, sizes="all", export=str(folder / f"{policy}_gym"))
        play_expert(env, policy)
        env.close()
        assert same_outputs(str(folder / f"{policy}_ref"), str(folder / f"{policy}_gym")), policy


def test_a_decision_without_an_action_is_a_mismatch_not_another_run(tmp_path):
    # four buckets on [2, 16] are 2, 7, 11, 16: equipartition's shrink of job 1 to 8 is none of them
    env = ElasticExpert(ElasticEnv(SMALL, C16, sizes=4, export=str(tmp_path / "gym")), "equipartition")
    env.reset(seed=0)
    with pytest.raises(ExpertMismatch, match="no valid action"):
        for _ in range(200):
            env.step(env.expert_action())
    env.close()
    # a different action played where the policy decides: the outputs differ (the comparison can fail)
    ref = run_elastic(C16, [SMALL], "equipartition", tmp_path / "ref")
    env = ElasticEnv(SMALL, C16, sizes="all", export=str(tmp_path / "other"))
    _, info = env.reset(seed=0)
    assert info["window"] == ["w0!1"]
    _, _, _, _, info = env.step(env.start_action(0, 15))  # job 1 on 16 nodes, as equipartition ...
    while not env._over:
        _, _, _, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))  # ... but smallest sizes
    assert not same_outputs(str(tmp_path / "ref"), str(tmp_path / "other"))
    assert Path(ref.jobs_csv).exists()
    env.close()


# ---------------------------------------------------------------------- the environment
def test_registered_ids_and_the_gymnasium_checker():
    for env_id in coburst.gym.ELASTIC_IDS:
        env = gymnasium.make(env_id, workload=SMALL, platform=C16, invalid_action="penalty")
        check_env(env.unwrapped, skip_render_check=True)
        obs, info = env.reset(seed=1)
        assert env.observation_space.contains(obs)
        assert (env.get_wrapper_attr("action_masks")() == info["action_mask"]).all()
        env.close()
    env = gymnasium.make("coburst/ElasticFlat-v0", workload=SMALL, platform=C16)
    assert env.observation_space.shape == (4 + 8 * 12 + 8 * 11,)
    assert env.action_space.n == 8 * 4 + 8 * 4 + 1
    env.close()


def test_random_masked_agents_keep_the_invariants(tmp_path):
    doc = json.loads(Path(SMALL).read_text())
    for sizes in ("all", 4, (0.0, 0.5, 1.0)):
        env = ElasticEnv(SMALL, C16, sizes=sizes, window=3, points=2, export=str(tmp_path / "r"))
        for seed in range(2):
            random_episode(env, seed, check_mask=sizes == "all")
            check_invariants(doc, str(tmp_path / "r"))
        env.close()


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(doc=workloads())
def test_random_masked_agents_on_random_workloads(tmp_path_factory, doc):
    folder = tmp_path_factory.mktemp("agent")
    env = ElasticEnv(doc, C16, sizes="all", window=4, points=3, export=str(folder / "r"))
    random_episode(env, 7)
    check_invariants(doc, str(folder / "r"))
    env.close()


def test_size_buckets():
    env = ElasticEnv(SMALL, C16)
    assert env.fractions == (0.0, 1 / 3, 2 / 3, 1.0)
    assert [env.bucket_size(b, 2, 16) for b in range(4)] == [2, 7, 11, 16]
    assert [env.bucket_size(b, 4, 4) for b in range(4)] == [4, 4, 4, 4]
    everything = ElasticEnv(SMALL, C16, sizes="all")
    assert everything.n_buckets == 16 and everything.bucket_size(0, 2, 6) is None
    assert [everything.bucket_size(b, 2, 6) for b in range(1, 6)] == [2, 3, 4, 5, 6]
    for bad in (0, "some", (0.5, 1.5), ()):
        with pytest.raises(ValueError):
            ElasticEnv(SMALL, C16, sizes=bad)
    with pytest.raises(ValueError, match="not available"):
        ElasticEnv(SMALL, C16, reward="energy")
    env.close()
    everything.close()


def test_observation_numbers(tmp_path):
    env = ElasticEnv(SMALL, C16, sizes="all", export=str(tmp_path / "o"))
    obs, info = env.reset(seed=0)
    assert info["now"] == 0.0 and info["window"] == ["w0!1"] and info["points"] == []
    # job 1: malleable in [2, 16], res 8, no walltime, submitted now
    job = obs["jobs"][0]
    assert np.allclose(job, [1, 0, 8 / 16, 2 / 16, 1, 1, 0, 0, 1, 0, 0, 1])
    assert not obs["jobs"][1:].any() and not obs["points"].any()
    assert np.allclose(obs["cluster"], [1, 1 / 9, 0, 0])
    assert np.flatnonzero(info["action_mask"]).tolist() == list(range(1, 16)) + [env.end_action]
    obs, _, _, _, info = env.step(env.start_action(0, 15))  # on all 16 nodes: the message ends
    seen_point = False
    while not env._over:
        if info["points"]:
            job = env.state.running[info["points"][0]]
            row = obs["points"][0]
            phase, it = job.point["phase"], job.point["iteration"]
            assert row[0] == 1 and np.isclose(row[1], job.size / 16)
            if job.id == "w0!1":  # 30 iterations in one phase
                seen_point = True
                assert phase == 0 and np.isclose(row[8], (it + 1) / 30)
                elapsed = env.now - job.start
                assert np.isclose(row[9], elapsed / (elapsed + 3600), atol=1e-6)
            assert np.isclose(obs["cluster"][0], len(env.state.free) / 16)
        obs, _, _, _, info = env.step(env.end_action if info["action_mask"][-1] else
                                      int(np.flatnonzero(info["action_mask"])[0]))
    assert seen_point
    env.close()


def test_rewards_agree_with_the_outputs(tmp_path):
    sums = {}
    for reward in ("waiting-time", "bounded-slowdown", "utilisation-sparse"):
        env = ElasticEnv(SMALL, C16, sizes="all", reward=reward, export=str(tmp_path / reward))
        total = 0.0
        expert = ElasticExpert(env, "equipartition")
        expert.reset(seed=0)
        while True:
            _, r, terminated, _, _ = expert.step(expert.expert_action())
            total += r
            if terminated:
                break
        sums[reward] = total
        env.close()
    jobs = rows(tmp_path / "waiting-time_jobs.csv")
    assert np.isclose(sums["waiting-time"], -sum(float(r["waiting_time"]) for r in jobs) / 3600)
    jobs = rows(tmp_path / "bounded-slowdown_jobs.csv")
    bsld = [max(float(r["turnaround_time"]) / max(float(r["execution_time"]), 10.0), 1.0) for r in jobs]
    assert np.isclose(sums["bounded-slowdown"], -sum(bsld) / len(bsld))
    # node-seconds: each job at the sizes of the reconfiguration log
    prefix = tmp_path / "utilisation-sparse"
    area, makespan = 0.0, 0.0
    resizes = rows(f"{prefix}_reconfigurations.csv")
    for r in rows(f"{prefix}_jobs.csv"):
        t, size = float(r["starting_time"]), len(ProcSet.from_str(r["allocated_resources"]))
        for x in (x for x in resizes if x["job_id"] == f"w0!{r['job_id']}"):
            area += size * (float(x["date"]) - t)
            t, size = float(x["date"]), int(x["new_size"])
        area += size * (float(r["finish_time"]) - t)
        makespan = max(makespan, float(r["finish_time"]))
    # (the environment dates a start, a resize or an end by its message: the outputs by its
    # arrival at the server, a network message later -- under a millisecond)
    assert np.isclose(sums["utilisation-sparse"], area / (16 * makespan), rtol=1e-5)


def test_invalid_actions(tmp_path):
    env = ElasticEnv(SMALL, C16, sizes="all", export=str(tmp_path / "i"))
    _, info = env.reset(seed=0)
    with pytest.raises(InvalidAction, match="job w0!1 starts on \\(2, 16\\), not on bucket 0"):
        env.step(env.start_action(0, 0))
    with pytest.raises(InvalidAction, match="window slot is empty"):
        env.step(env.start_action(1, 3))
    with pytest.raises(InvalidAction, match="no job at a scheduling point"):
        env.step(env.resize_action(0, 3))
    with pytest.raises(InvalidAction, match="outside Discrete"):
        env.step(env.action_space.n)
    assert env.nb_steps == 0 and (env.action_masks() == info["action_mask"]).all()
    penalised = ElasticEnv(SMALL, C16, sizes="all", invalid_action="penalty", penalty=-5.0, export=str(tmp_path / "p"))
    obs, info = penalised.reset(seed=0)
    obs2, reward, terminated, truncated, info2 = penalised.step(penalised.start_action(0, 0))
    assert reward == -5.0 and not terminated and not truncated
    assert all((obs[k] == obs2[k]).all() for k in obs) and info2["message"] == info["message"]
    assert (info2["action_mask"] == info["action_mask"]).all()
    env.close()
    penalised.close()


def test_episodes_in_a_row_truncation_and_no_thread_left(tmp_path):
    before = sim_threads()  # (those of a failed test before this one)
    env = ElasticEnv(SMALL, C16, sizes="all", max_steps=10, export=str(tmp_path / "t"))
    _, info = env.reset(seed=0)
    for i in range(10):
        _, _, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        assert not terminated and truncated == (i == 9)
    assert env.result is None and sim_threads() == before
    with pytest.raises(RuntimeError, match="reset"):
        env.step(env.end_action)
    env.close()
    env = ElasticEnv(SMALL, C16, sizes="all", export=str(tmp_path / "e"))
    texts = []
    for episode in range(4):
        if episode == 2:  # abandoned half-way by the next reset
            _, info = env.reset(seed=0)
            env.step(int(np.flatnonzero(info["action_mask"])[0]))
            assert len(sim_threads() - before) == 1
            continue
        random_episode(env, 3, check_mask=False)
        texts.append(Path(str(tmp_path / "e") + "_jobs.csv").read_text())
    assert texts[0] == texts[1] == texts[2]
    _, info = env.reset(seed=0)
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    env.close()  # mid-episode
    assert sim_threads() == before


def test_first_episode_in_simgrid_then_from_the_cache(tmp_path):
    """With an empty platform cache the first episode runs in SimGrid (in the simulation
    thread), is abandoned, and the next ones take the platform from the cache: all in one
    process, none left running."""
    script = (
        "import sys, threading, numpy as np\n"
        "from coburst.gym import ElasticEnv\n"
        "env = ElasticEnv(sys.argv[1], sys.argv[2], export=sys.argv[3])\n"
        "origins = []\n"
        "for ep in range(3):\n"
        "    obs, info = env.reset(seed=ep)\n"
        "    origins.append(env._hand.sim.cached_platform)\n"
        "    rng, n = np.random.default_rng(ep), 0\n"
        "    while True:\n"
        "        obs, r, term, trunc, info = env.step(rng.choice(np.flatnonzero(info['action_mask'])))\n"
        "        n += 1\n"
        "        if term or (ep == 0 and n == 5):\n"
        "            break\n"
        "    assert term == (ep > 0)\n"
        "env.close()\n"
        "print(origins, [t.name for t in threading.enumerate()])\n")
    env = {**os.environ, "COBURST_CACHE": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", script, SMALL, C16, str(tmp_path / "sg")], env=env, cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[False, True, True] ['MainThread']"


def test_an_evolving_request_is_granted_clipped_or_refused(tmp_path):
    request = "6 if iteration == 0 else (3 if iteration == 1 else num_nodes)"
    doc = {"nb_res": 16, "jobs": [{"id": 1, "subtime": 0, "walltime": -1, "res": 2, "profile": "e",
                                   "elastic": {"type": "evolving", "num_nodes_min": 2, "num_nodes_max": 8}}],
           "profiles": {"e": {"type": "delay", "delay": 10, "elastic": {"on_reconfiguration": "1", "phases": [
               {"iterations": 4, "scheduling_point": True, "evolving_request": request,
                "tasks": [{"type": "compute", "seconds": 10}]}]}}}}
    env = ElasticEnv(doc, C16, sizes="all", export=str(tmp_path / "ev"))
    _, info = env.reset(seed=0)
    # on res only; ending the message would stall the simulation (every job came, nothing runs)
    assert np.flatnonzero(info["action_mask"]).tolist() == [env.start_action(0, 1)]
    with pytest.raises(InvalidAction, match="stall"):
        env.step(env.end_action)
    _, _, _, _, info = env.step(env.start_action(0, 1))
    point_slot = info["action_mask"][env.resize_base:env.resize_base + 16]
    assert info["points"] == ["w0!1"] and env.state.running["w0!1"].point["requested"] == 6
    assert np.flatnonzero(point_slot).tolist() == [2, 3, 4, 5]  # sizes 3 to 6: a grant or a clip
    _, _, _, _, info = env.step(env.resize_action(0, 4))  # clipped to 5
    assert np.flatnonzero(info["action_mask"][env.resize_base:env.resize_base + 16]).tolist() == [5]
    with pytest.raises(InvalidAction, match="may only grow further"):
        env.step(env.resize_action(0, 2))
    _, _, _, _, info = env.step(env.end_action)
    assert env.state.running["w0!1"].point["requested"] == 3  # (asks to shrink to 3 from 5)
    assert np.flatnonzero(info["action_mask"][env.resize_base:env.resize_base + 16]).tolist() == [2, 3]
    _, _, terminated, _, _ = env.step(env.end_action)  # refused; the last request (its own size) is no decision
    assert terminated
    (row,) = rows(str(tmp_path / "ev") + "_reconfigurations.csv")
    assert (row["old_size"], row["new_size"], row["requested_size"]) == ("2", "5", "6")
    env.close()


def test_a_job_resized_twice_in_a_message_is_one_reconfiguration(tmp_path):
    env = ElasticEnv(SMALL, C16, sizes="all", export=str(tmp_path / "m"))
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step(env.start_action(0, 15))
    while "w0!1" not in info["points"]:
        _, _, _, _, info = env.step(env.end_action)
    slot = info["points"].index("w0!1")
    iteration = env.state.running["w0!1"].point["iteration"]
    _, _, _, _, info = env.step(env.resize_action(slot, 7))  # 16 -> 8
    with pytest.raises(InvalidAction, match="may only shrink further"):
        env.step(env.resize_action(slot, 11))
    assert info["action_mask"][env.resize_action(slot, 3)]
    _, _, _, _, info = env.step(env.resize_action(slot, 3))  # -> 4
    while not env._over:
        _, _, _, _, info = env.step(env.end_action if info["action_mask"][-1] else
                                    int(np.flatnonzero(info["action_mask"])[0]))
    first = rows(str(tmp_path / "m") + "_reconfigurations.csv")[0]
    assert (first["job_id"], first["old_size"], first["new_size"], first["iteration"]) == ("w0!1", "16", "4",
                                                                                           str(iteration))
    env.close()
