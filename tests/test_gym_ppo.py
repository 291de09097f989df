"""``coburst.gym.ppo``: the NumPy masked PPO of ``coburst/RLScheduler-v0`` -- its hand-written
gradients against finite differences, its determinism, a short training run whose policy
keeps to the mask, saving and reloading a policy, and ``scripts/train_ppo.py``'s errors and
a tiny end-to-end run.  The logs are small synthetic SWF files written here."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from coburst.gym.ppo import (MLP, PPO, Policy, PPOConfig, load_policy, masked_log_softmax, policy_loss,
                             run_episode, value_loss)
from coburst.gym.rlsched import MAX_QUEUE_SIZE, RLSchedulerEnv

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "train_ppo.py"


def write_swf(path: Path, jobs: int = 700, nodes: int = 32, seed: int = 0) -> Path:
    """A synthetic SWF log: Poisson-like arrivals on ``nodes`` nodes, busy enough for queues."""
    rng = np.random.default_rng(seed)
    lines = [f"; MaxNodes: {nodes}", f"; MaxProcs: {nodes}"]
    t = 0
    for j in range(1, jobs + 1):
        t += int(rng.exponential(60))
        run = int(rng.lognormal(6, 1.2)) + 1
        procs = int(min(nodes, 2 ** rng.integers(0, 6)))
        req = run * int(rng.integers(1, 4))
        lines.append(f"{j} {t} 0 {run} {procs} -1 -1 {procs} {req} -1 1 {1 + j % 7} {1 + j % 3} {1 + j % 5} 1 -1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def swf(tmp_path_factory) -> Path:
    return write_swf(tmp_path_factory.mktemp("ppo") / "synthetic.swf")


def _fd_check(loss, params, grads, rng, per_array=12, eps=1e-6):
    for k, q in enumerate(params):
        for flat in rng.choice(q.size, size=min(per_array, q.size), replace=False):
            idx = np.unravel_index(flat, q.shape)
            old = q[idx]
            q[idx] = old + eps
            up = loss()
            q[idx] = old - eps
            down = loss()
            q[idx] = old
            fd = (up - down) / (2 * eps)
            assert abs(fd - grads[k][idx]) <= 1e-7 + 1e-4 * abs(fd), (k, idx, fd, grads[k][idx])


@pytest.mark.parametrize("ent_coef", [0.0, 0.05])
def test_policy_gradient_matches_finite_differences(ent_coef):
    rng = np.random.default_rng(1)
    policy = Policy.new(rng)
    for q in policy.kernel.params:  # away from the initial zeros (biases) and tiny last layer
        q += rng.normal(0, 0.2, q.shape)
    n = 8
    obs = rng.random((n, MAX_QUEUE_SIZE * 8))
    mask = rng.random((n, MAX_QUEUE_SIZE)) < 0.2
    mask[:, 0] = True
    act = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
    logp = masked_log_softmax(policy.logits(obs, mask)[0], mask)[0][np.arange(n), act]
    logp_old = logp + rng.normal(0, 0.3, n)  # some ratios outside the clip range
    adv = rng.normal(size=n)
    _, grads, stats = policy_loss(policy, obs, mask, act, logp_old, adv, 0.2, ent_coef)
    assert stats["clipfrac"] > 0
    _fd_check(lambda: policy_loss(policy, obs, mask, act, logp_old, adv, 0.2, ent_coef)[0],
              policy.kernel.params, grads, rng)


def test_value_gradient_matches_finite_differences():
    rng = np.random.default_rng(2)
    value = MLP((40, 16, 8, 1), rng)
    obs, ret = rng.random((10, 40)), rng.normal(size=10)
    _, grads = value_loss(value, obs, ret)
    _fd_check(lambda: value_loss(value, obs, ret)[0], value.params, grads, rng)


def test_masked_softmax_gives_masked_slots_nothing():
    logits = np.array([[3.0, 1e6, -2.0, 0.5]])
    mask = np.array([[True, False, True, False]])
    logp, p = masked_log_softmax(logits, mask)
    assert p[0, 1] == p[0, 3] == 0.0
    assert p.sum() == pytest.approx(1.0)
    assert np.exp(logp[0, [0, 2]]) == pytest.approx(p[0, [0, 2]])


def _short_training(swf: Path, seed: int, epochs: int = 2, steps: int = 300) -> tuple[PPO, list[dict]]:
    env = RLSchedulerEnv(swf, sequence_length=48)
    ppo = PPO(seed, PPOConfig(minibatch=128, update_epochs=2))
    history = ppo.train(env, epochs, steps, lambda rng: int(rng.integers(0, 400)))
    return ppo, history


def test_same_seed_same_weights_bytes(swf):
    a, ha = _short_training(swf, seed=3, steps=150)
    b, hb = _short_training(swf, seed=3, steps=150)
    c, _ = _short_training(swf, seed=4, steps=150)
    assert a.weights_bytes() == b.weights_bytes()
    assert [h["bsld_mean"] for h in ha] == [h["bsld_mean"] for h in hb]
    assert a.weights_bytes() != c.weights_bytes()
    assert a.weights_bytes() != PPO(3).weights_bytes()  # the updates changed the weights


def test_smoke_training_policy_respects_the_mask(swf):
    ppo, history = _short_training(swf, seed=0, epochs=3, steps=700)
    assert len(history) == 3 and sum(h["steps"] for h in history) >= 2100
    assert all(np.isfinite(h["bsld_mean"]) and h["bsld_mean"] >= 1 for h in history)
    env = RLSchedulerEnv(swf, sequence_length=48)
    rng = np.random.default_rng(0)
    for greedy in (True, False):
        obs, _ = env.reset(options={"start": 500})
        done, steps = False, 0
        while not done:
            mask = env.action_masks()
            a = ppo.policy.act(obs, mask, greedy=greedy, rng=rng)
            assert mask[a], (greedy, steps, a)
            obs, reward, done, _, info = env.step(a)
            steps += 1
        assert reward == -info["bsld_mean"] and steps >= 1
    with pytest.raises(ValueError, match="allows no slot"):
        ppo.policy.act(obs, np.zeros(MAX_QUEUE_SIZE, dtype=bool))


def test_saved_policy_reloads_and_acts_identically(swf, tmp_path):
    ppo, _ = _short_training(swf, seed=5, epochs=1)
    ppo.save(tmp_path / "agent.npz")
    again = load_policy(tmp_path / "agent.npz")
    assert again.kernel.sizes == ppo.policy.kernel.sizes
    assert all(np.array_equal(x, y) for x, y in zip(again.kernel.params, ppo.policy.kernel.params))
    env = RLSchedulerEnv(swf, sequence_length=48)
    for start in (450, 520, 600):
        obs, _ = env.reset(options={"start": start})
        done = False
        while not done:
            mask = env.action_masks()
            a = ppo.policy.act(obs, mask)
            assert again.act(obs, mask) == a
            assert np.array_equal(again.probabilities(obs, mask), ppo.policy.probabilities(obs, mask))
            obs, _, done, _, _ = env.step(a)
    first = run_episode(env, lambda o, e: again.act(o, e.unwrapped.action_masks()), 450)
    assert first == run_episode(env, lambda o, e: ppo.policy.act(o, e.unwrapped.action_masks()), 450)
    bad = tmp_path / "bad.npz"
    np.savez(bad, x=np.zeros(3))
    with pytest.raises(ValueError, match=r"bad\.npz: not a saved policy"):
        load_policy(bad)


def _script():
    spec = importlib.util.spec_from_file_location("train_ppo", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_script_missing_trace_exits_nonzero_with_message(tmp_path):
    env = {"COBURST_SWF_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for args, name in ((["--trace", "kth"], "KTH-SP2-1996-2.1-cln.swf"),
                       (["--trace", str(tmp_path / "absent.swf")], "absent.swf")):
        proc = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env,
                              cwd=ROOT, timeout=60)
        assert proc.returncode == 1
        assert name in proc.stderr and "no such file" in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr


def test_script_bad_trace_and_tiny_run(swf, tmp_path, capsys):
    script = _script()
    bad = tmp_path / "noheader.swf"
    bad.write_text("1 0 0 10 1 -1 -1 1 10 -1 1 1 1 1 1 -1 -1 -1\n")
    assert script.main(["--trace", str(bad), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert str(bad) in err and "MaxNodes" in err
    out = tmp_path / "run"
    assert script.main(["--trace", str(swf), "--epochs", "1", "--steps-per-epoch", "100", "--length", "48",
                        "--test-sequences", "3", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    for label in ("PPO (this run, greedy)", "FCFS", "SJF", "F1", "EASY backfilling (FCFS)", "PPO - F1, paired"):
        assert f"| {label} |" in text
    assert (out / "policy.npz").is_file() and (out / "results.json").is_file()
    load_policy(out / "policy.npz")
