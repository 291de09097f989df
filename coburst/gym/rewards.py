"""Rewards of :class:`coburst.gym.BatsimExactEnv`: small classes a user can add to.

A reward is an object with three methods, each given the environment (``env.unwrapped``):

* ``reset(env)`` -- a new episode begins (after the first observation is ready);
* ``step(env) -> float`` -- after every step that changed something (the environment's
  ``now``, ``queue``, ``running``, ``completed`` and ``waited`` describe the new state);
* ``final(env) -> float`` -- once, when the simulation ended (``terminated``); added to that
  step's reward.  A truncated episode gets no final reward.

Subclass :class:`Reward` and override what you need; pass an instance as ``reward=`` (or a
name of :data:`REWARDS`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["Reward", "WaitingTime", "BoundedSlowdown", "REWARDS", "make_reward"]


class Reward:
    """No reward (0 at every step); the base of the others."""

    name = "none"

    def reset(self, env: Any) -> None:
        pass

    def step(self, env: Any) -> float:
        return 0.0

    def final(self, env: Any) -> float:
        return 0.0


class WaitingTime(Reward):
    """Dense: minus the waiting time accrued since the previous step, summed over the jobs
    (the started ones up to their start, the waiting ones up to ``now``), divided by
    ``scale`` seconds.  The rewards of an episode add up to minus the total waiting time of
    its jobs (over ``scale``)."""

    name = "waiting-time"

    def __init__(self, scale: float = 3600.0):
        self.scale = float(scale)
        self._last = 0.0

    def total(self, env: Any) -> float:
        return env.waited + env.queue_wait()

    def reset(self, env: Any) -> None:
        self._last = self.total(env)

    def step(self, env: Any) -> float:
        total = self.total(env)
        accrued, self._last = total - self._last, total
        return -accrued / self.scale


class BoundedSlowdown(Reward):
    """Sparse: at the end of the episode, minus the mean bounded slowdown of the completed
    jobs, ``max((end - subtime) / max(end - start, tau), 1)``; 0 at every other step."""

    name = "bounded-slowdown"

    def __init__(self, tau: float = 10.0):
        self.tau = float(tau)

    def final(self, env: Any) -> float:
        done = env.completed
        if not done:
            return 0.0
        tau = self.tau
        total = sum(max((end - job.subtime) / max(end - start, tau), 1.0) for job, start, end in done)
        return -total / len(done)


#: reward names accepted by ``reward=``
REWARDS = {cls.name: cls for cls in (Reward, WaitingTime, BoundedSlowdown)}


def make_reward(spec: Any) -> Reward:
    """A reward object from a name of :data:`REWARDS` or an object with the reward methods."""
    if isinstance(spec, str):
        try:
            return REWARDS[spec]()
        except KeyError:
            raise ValueError(f"unknown reward {spec!r} (known: {', '.join(REWARDS)})") from None
    if all(callable(getattr(spec, m, None)) for m in ("reset", "step", "final")):
        return spec
    raise TypeError(f"reward must be a name ({', '.join(REWARDS)}) or an object with reset/step/final, got {spec!r}")
