"""Masked PPO in NumPy for ``coburst/RLScheduler-v0`` (:mod:`coburst.gym.rlsched`).

RLScheduler (Zhang et al., SC'20) trains its job-picking agent with PPO and a *kernel* policy:
one small network scores each of the window's 128 rows (its eight features) on its own, and
a softmax over the scores of the slots holding a job (the action mask) gives the probability
of starting each.  This module is that agent in one file of NumPy, with the backpropagation
written by hand:

* :class:`MLP`: a ReLU perceptron (forward, backward);
* :class:`Policy`: the kernel network (8 -> 32 -> 16 -> 8 -> 1 by default) and the masked
  softmax; :meth:`Policy.act` picks a slot (the most probable or a draw), :meth:`Policy.save`
  and :func:`load_policy` keep it in an ``.npz`` file;
* :class:`PPO`: the policy, a value network on the flattened observation, generalised
  advantage estimation (GAE), the clipped objective, Adam; :meth:`PPO.train` collects whole
  episodes and updates, epoch after epoch, within an optional wall-clock limit.

No deep-learning framework is used: no GPU runtime to install, no new dependency, and the
run is deterministic -- the same seed (and the same NumPy, BLAS and thread count) gives the
same weights, byte for byte.  ``scripts/train_ppo.py`` trains and evaluates it
(``docs/tutorials/rlscheduler.md``, "Training an agent").
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from coburst.gym.rlsched import JOB_FEATURES, MAX_QUEUE_SIZE

__all__ = ["MLP", "Adam", "Policy", "PPO", "PPOConfig", "load_policy", "masked_log_softmax",
           "policy_loss", "value_loss", "run_episode"]

NF = len(JOB_FEATURES)
#: the logit given to masked slots (finite, so that 0 * it stays 0)
_NEG = -1e30
_FORMAT = "coburst-ppo-1"


class MLP:
    """A perceptron: ReLU between layers, none after the last.  ``params``: ``[W0, b0, W1, b1,
    ...]`` (float64), ``W`` of shape ``(in, out)``."""

    def __init__(self, sizes: tuple[int, ...], rng: np.random.Generator, out_scale: float = 1.0):
        self.sizes = tuple(int(s) for s in sizes)
        self.params: list[np.ndarray] = []
        last = len(self.sizes) - 2
        for i, (a, b) in enumerate(zip(self.sizes[:-1], self.sizes[1:])):
            w = rng.standard_normal((a, b)) * np.sqrt(2.0 / a)
            if i == last:
                w *= out_scale
            self.params += [w, np.zeros(b)]

    def forward(self, x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """``(output, cache)``; ``x`` of shape ``(n, in)``."""
        cache = [x]
        p = self.params
        n = len(p) // 2
        for i in range(n):
            x = x @ p[2 * i] + p[2 * i + 1]
            if i < n - 1:
                np.maximum(x, 0.0, out=x)
            cache.append(x)
        return x, cache

    def backward(self, cache: list[np.ndarray], dy: np.ndarray) -> list[np.ndarray]:
        """The gradients of ``params`` given the loss's gradient ``dy`` at the output."""
        p = self.params
        n = len(p) // 2
        grads: list[np.ndarray] = [np.empty(0)] * len(p)
        for i in range(n - 1, -1, -1):
            grads[2 * i] = cache[i].T @ dy
            grads[2 * i + 1] = dy.sum(axis=0)
            if i:
                dy = (dy @ p[2 * i].T) * (cache[i] > 0)
        return grads


class Adam:
    """Adam (Kingma and Ba) over a list of arrays, updated in place."""

    def __init__(self, params: list[np.ndarray], lr: float, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-8):
        self.lr, self.b1, self.b2, self.eps = lr, beta1, beta2, eps
        self.m = [np.zeros_like(q) for q in params]
        self.v = [np.zeros_like(q) for q in params]
        self.t = 0

    def step(self, params: list[np.ndarray], grads: list[np.ndarray]) -> None:
        self.t += 1
        c1, c2 = 1 - self.b1 ** self.t, 1 - self.b2 ** self.t
        for q, g, m, v in zip(params, grads, self.m, self.v):
            m *= self.b1
            m += (1 - self.b1) * g
            v *= self.b2
            v += (1 - self.b2) * g * g
            q -= self.lr * (m / c1) / (np.sqrt(v / c2) + self.eps)


def masked_log_softmax(logits: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(log-probabilities, probabilities)`` of a softmax over the unmasked entries of each
    row (masked entries: probability 0, log-probability ``-1e30``)."""
    z = np.where(mask, logits, _NEG)
    z = z - z.max(axis=-1, keepdims=True)
    e = np.where(mask, np.exp(np.where(mask, z, 0.0)), 0.0)
    s = e.sum(axis=-1, keepdims=True)
    return np.where(mask, z - np.log(s), _NEG), e / s


class Policy:
    """The kernel policy: :attr:`kernel` scores each window row, the masked softmax over the
    rows holding a job gives the action's distribution."""

    def __init__(self, kernel: MLP):
        self.kernel = kernel

    @classmethod
    def new(cls, rng: np.random.Generator, hidden: tuple[int, ...] = (32, 16, 8)) -> "Policy":
        return cls(MLP((NF, *hidden, 1), rng, out_scale=0.01))

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """The scores of the rows of ``obs`` (``(n, 1024)`` or ``(1024,)``) where ``mask``
        (``(n, 128)`` or ``(128,)``) is True, ``-1e30`` elsewhere: ``(n, 128)``, and the
        kernel's cache.  Only the unmasked rows go through the kernel (the others' scores
        would be discarded by the softmax anyway)."""
        mask = np.asarray(mask, dtype=bool).reshape(-1, MAX_QUEUE_SIZE)
        rows = np.asarray(obs, dtype=np.float64).reshape(-1, MAX_QUEUE_SIZE, NF)[mask]
        y, cache = self.kernel.forward(rows)
        out = np.full(mask.shape, _NEG)
        out[mask] = y[:, 0]
        return out, cache

    def probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        mask = np.asarray(mask, dtype=bool).reshape(-1, MAX_QUEUE_SIZE)
        return masked_log_softmax(self.logits(obs, mask)[0], mask)[1]

    def act(self, obs: np.ndarray, mask: np.ndarray, greedy: bool = True,
            rng: np.random.Generator | None = None) -> int:
        """A slot whose mask is True: the most probable (the first such), or a draw from ``rng``."""
        mask = np.asarray(mask, dtype=bool)
        if not mask.any():
            raise ValueError("the action mask allows no slot")
        logits = self.logits(obs, mask)[0][0]
        if greedy:
            return int(np.argmax(logits))
        if rng is None:
            raise ValueError("sampling needs a numpy Generator (rng=)")
        return _sample(masked_log_softmax(logits, mask)[1], rng)

    def save(self, path: str | os.PathLike, **extra: np.ndarray) -> None:
        """The kernel's weights and sizes in an ``.npz`` file (with ``extra`` arrays)."""
        arrays = {f"kernel_{i}": q for i, q in enumerate(self.kernel.params)}
        meta = json.dumps({"format": _FORMAT, "kernel_sizes": self.kernel.sizes})
        np.savez(path, meta=np.array(meta), **arrays, **extra)


def _sample(probs: np.ndarray, rng: np.random.Generator) -> int:
    c = np.cumsum(probs)
    i = int(np.searchsorted(c, rng.random() * c[-1], side="right"))
    i = min(i, len(probs) - 1)
    while probs[i] == 0.0:  # never a masked slot, whatever the rounding
        i -= 1
    return i


def load_policy(path: str | os.PathLike) -> Policy:
    """The :class:`Policy` saved in ``path`` (by :meth:`Policy.save` or :meth:`PPO.save`);
    ``ValueError`` naming the file and the problem when it is not one."""
    path = os.fspath(path)
    try:
        with np.load(path, allow_pickle=False) as f:
            meta = json.loads(str(f["meta"]))
            if meta.get("format") != _FORMAT:
                raise ValueError(f"format {meta.get('format')!r}, expected {_FORMAT!r}")
            sizes = tuple(meta["kernel_sizes"])
            params = [np.array(f[f"kernel_{i}"], dtype=np.float64) for i in range(2 * (len(sizes) - 1))]
    except (OSError, KeyError, ValueError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a saved policy ({exc})") from None
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        if params[2 * i].shape != (a, b) or params[2 * i + 1].shape != (b,):
            raise ValueError(f"{path}: layer {i}: weights of shape {params[2 * i].shape}, expected {(a, b)}")
    kernel = MLP.__new__(MLP)
    kernel.sizes, kernel.params = sizes, params
    return Policy(kernel)


# -- the losses and their gradients


def policy_loss(policy: Policy, obs: np.ndarray, mask: np.ndarray, act: np.ndarray, logp_old: np.ndarray,
                adv: np.ndarray, clip: float = 0.2, ent_coef: float = 0.0) -> tuple[float, list[np.ndarray], dict]:
    """PPO's clipped surrogate, minus ``ent_coef`` times the entropy, averaged over the batch:
    ``(loss, gradients of the kernel's params, stats)``."""
    n = len(act)
    logits, cache = policy.logits(obs, mask)
    logp_all, p = masked_log_softmax(logits, mask)
    idx = np.arange(n)
    logp = logp_all[idx, act]
    ratio = np.exp(logp - logp_old)
    clipped = np.clip(ratio, 1 - clip, 1 + clip)
    surr = np.minimum(ratio * adv, clipped * adv)
    plogp = np.where(mask, p * logp_all, 0.0)
    ent = -plogp.sum(axis=1)
    loss = float(-surr.mean() - ent_coef * ent.mean())
    # d loss / d logp: -adv * ratio where the unclipped term is the minimum, else 0
    active = ratio * adv <= clipped * adv
    dlogp = np.where(active, -adv * ratio, 0.0) / n
    dz = -p * dlogp[:, None]
    dz[idx, act] += dlogp
    if ent_coef:
        # d H / d z_i = -p_i (log p_i + H)
        dz += (ent_coef / n) * np.where(mask, p * (logp_all + ent[:, None]), 0.0)
    grads = policy.kernel.backward(cache, dz[mask][:, None])
    stats = {"kl": float((logp_old - logp).mean()), "clipfrac": float((np.abs(ratio - 1) > clip).mean()),
             "entropy": float(ent.mean())}
    return loss, grads, stats


def value_loss(value: MLP, obs: np.ndarray, ret: np.ndarray) -> tuple[float, list[np.ndarray]]:
    """Half the mean squared error of the value network on ``ret``, and its gradients."""
    v, cache = value.forward(np.asarray(obs, dtype=np.float64).reshape(len(ret), -1))
    err = v[:, 0] - ret
    return float(0.5 * (err * err).mean()), value.backward(cache, (err / len(ret))[:, None])


# -- training


@dataclass
class PPOConfig:
    """PPO's settings (RLScheduler's where it has them: ``gamma`` 1, ``lam`` 0.97, clip 0.2,
    policy and value learning rates 3e-4 and 1e-3, target KL 0.01)."""

    hidden: tuple[int, ...] = (32, 16, 8)
    value_hidden: tuple[int, ...] = (32, 16)
    pi_lr: float = 3e-4
    vf_lr: float = 1e-3
    clip: float = 0.2
    gamma: float = 1.0
    lam: float = 0.97
    update_epochs: int = 4
    minibatch: int = 256
    target_kl: float = 0.01
    ent_coef: float = 0.0


@dataclass
class Batch:
    obs: np.ndarray
    mask: np.ndarray
    act: np.ndarray
    logp: np.ndarray
    adv: np.ndarray
    ret: np.ndarray
    episodes: list[dict] = field(default_factory=list)


class PPO:
    """The policy, the value network and their optimisers (module doc).  Everything random --
    the weights, the actions drawn, the episodes' starts, the minibatches -- comes from one
    ``numpy.random.Generator`` seeded with ``seed``."""

    def __init__(self, seed: int = 0, config: PPOConfig | None = None):
        self.config = c = config or PPOConfig()
        self.rng = np.random.default_rng(seed)
        self.policy = Policy.new(self.rng, c.hidden)
        self.value = MLP((MAX_QUEUE_SIZE * NF, *c.value_hidden, 1), self.rng)
        self.pi_opt = Adam(self.policy.kernel.params, c.pi_lr)
        self.vf_opt = Adam(self.value.params, c.vf_lr)
        #: the value network predicts returns divided by this (set from the first batch)
        self.ret_scale = 0.0

    def collect(self, env: Any, steps: int, starts: Callable[[np.random.Generator], int]) -> Batch:
        """Whole episodes, sampled from the policy, until at least ``steps`` steps;
        ``starts(rng)``: each episode's start index in the trace."""
        c = self.config
        obs_l, mask_l, act_l, logp_l, adv_l, ret_l, eps = [], [], [], [], [], [], []
        total = 0
        while total < steps:
            start = int(starts(self.rng))
            obs, info = env.reset(options={"start": start})
            e_obs, e_mask, e_act, e_logp, rewards = [], [], [], [], []
            done = False
            while not done:
                mask = env.unwrapped.action_masks()
                logp_all, p = masked_log_softmax(self.policy.logits(obs, mask)[0][0], mask)
                a = _sample(p, self.rng)
                e_obs.append(obs)
                e_mask.append(mask)
                e_act.append(a)
                e_logp.append(logp_all[a])
                obs, r, term, trunc, info = env.step(a)
                rewards.append(r)
                done = term or trunc
            o = np.asarray(e_obs, dtype=np.float32)
            if not self.ret_scale:
                self.ret_scale = max(1.0, abs(sum(rewards)))
            v = self.value.forward(o.astype(np.float64))[0][:, 0] * self.ret_scale
            rew = np.asarray(rewards)
            v_next = np.append(v[1:], 0.0)
            delta = rew + c.gamma * v_next - v
            adv = np.empty_like(delta)
            run = 0.0
            for t in range(len(delta) - 1, -1, -1):
                run = delta[t] + c.gamma * c.lam * run
                adv[t] = run
            ret = np.empty_like(rew)
            run = 0.0
            for t in range(len(rew) - 1, -1, -1):
                run = rew[t] + c.gamma * run
                ret[t] = run
            obs_l.append(o)
            mask_l.append(np.asarray(e_mask))
            act_l.append(np.asarray(e_act))
            logp_l.append(np.asarray(e_logp))
            adv_l.append(adv)
            ret_l.append(ret)
            eps.append({"start": start, "steps": len(rew), "bsld": info.get("bsld_mean", float("nan"))})
            total += len(rew)
        return Batch(np.concatenate(obs_l), np.concatenate(mask_l), np.concatenate(act_l),
                     np.concatenate(logp_l), np.concatenate(adv_l), np.concatenate(ret_l), eps)

    def update(self, batch: Batch) -> dict:
        """PPO's update on ``batch``: ``update_epochs`` passes of minibatches (the policy's
        stop once the approximate KL passes 1.5 times ``target_kl``)."""
        c = self.config
        n = len(batch.act)
        adv = (batch.adv - batch.adv.mean()) / (batch.adv.std() + 1e-8)
        ret = batch.ret / self.ret_scale
        stats: dict = {"kl": 0.0, "clipfrac": 0.0, "entropy": 0.0, "vloss": 0.0, "pi_updates": 0}
        pi_on = True
        for _ in range(c.update_epochs):
            order = self.rng.permutation(n)
            kls = []
            for lo in range(0, n, c.minibatch):
                i = np.sort(order[lo:lo + c.minibatch])
                o = batch.obs[i]
                if pi_on:
                    _, g, s = policy_loss(self.policy, o, batch.mask[i], batch.act[i], batch.logp[i], adv[i],
                                          c.clip, c.ent_coef)
                    self.pi_opt.step(self.policy.kernel.params, g)
                    kls.append(s["kl"])
                    stats.update(clipfrac=s["clipfrac"], entropy=s["entropy"])
                    stats["pi_updates"] += 1
                vl, g = value_loss(self.value, o, ret[i])
                self.vf_opt.step(self.value.params, g)
                stats["vloss"] = vl
            if pi_on:
                stats["kl"] = float(np.mean(kls))
                if stats["kl"] > 1.5 * c.target_kl:
                    pi_on = False
        return stats

    def train(self, env: Any, epochs: int, steps_per_epoch: int, starts: Callable[[np.random.Generator], int],
              time_limit: float | None = None, log: Callable[[dict], None] | None = None) -> list[dict]:
        """Up to ``epochs`` rounds of :meth:`collect` and :meth:`update`, stopping after the
        round that passes ``time_limit`` seconds; returns each round's record."""
        t0 = time.monotonic()
        history = []
        for epoch in range(epochs):
            batch = self.collect(env, steps_per_epoch, starts)
            stats = self.update(batch)
            bsld = [e["bsld"] for e in batch.episodes]
            rec = {"epoch": epoch + 1, "episodes": len(bsld), "steps": len(batch.act),
                   "bsld_mean": float(np.mean(bsld)), "elapsed": time.monotonic() - t0, **stats}
            history.append(rec)
            if log:
                log(rec)
            if time_limit is not None and rec["elapsed"] >= time_limit:
                break
        return history

    def save(self, path: str | os.PathLike) -> None:
        """The policy (as :meth:`Policy.save`) with the value network's weights."""
        self.policy.save(path, **{f"value_{i}": q for i, q in enumerate(self.value.params)},
                         ret_scale=np.array(self.ret_scale))

    def weights_bytes(self) -> bytes:
        """Every weight of both networks, concatenated (to compare two runs)."""
        return b"".join(q.tobytes() for q in self.policy.kernel.params + self.value.params)


def run_episode(env: Any, choose: Callable[[np.ndarray, Any], int], start: int) -> float:
    """Plays one episode from ``start`` with ``choose(obs, env) -> action``; its mean bounded
    slowdown.  A policy: ``lambda obs, env: policy.act(obs, env.unwrapped.action_masks())``."""
    obs, _ = env.reset(options={"start": start})
    while True:
        obs, _, term, trunc, info = env.step(choose(obs, env))
        if term or trunc:
            return float(info["bsld_mean"])
