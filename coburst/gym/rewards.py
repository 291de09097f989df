"""Rewards of :class:`coburst.gym.BatsimExactEnv`: small classes a user can add to.

A reward is an object with three methods, each given the environment (``env.unwrapped``):

* ``reset(env)`` -- a new episode begins (after the first observation is ready);
* ``step(env) -> float`` -- after every step that changed something (the environment's
  ``now``, ``queue``, ``running``, ``completed`` and ``waited`` describe the new state);
* ``final(env) -> float`` -- once, when the simulation ended (``terminated``; ``env.result``
  holds Batsim's outputs); added to that step's reward.  A truncated episode gets no final
  reward.

Subclass :class:`Reward` and override what you need; pass an instance as ``reward=``, or a
name: one of :data:`REWARDS`, or the name of an entry point of the group
``coburst.gym.rewards`` of an installed distribution (``name = "package.module:Class"``: a
class, or any callable, that makes the reward object with no argument; the built-in names
win).  Dense rewards come at every step; sparse ones only at the end.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

__all__ = ["Reward", "WaitingTime", "BoundedSlowdown", "Utilisation", "Makespan", "Energy", "BaselineGap",
           "WeightedSum", "REWARDS", "GROUP", "make_reward", "plugin_rewards"]

#: the entry-point group through which a distribution adds rewards
GROUP = "coburst.gym.rewards"


class Reward:
    """No reward (0 at every step); the base of the others."""

    name = "none"

    def reset(self, env: Any) -> None:
        pass

    def step(self, env: Any) -> float:
        return 0.0

    def final(self, env: Any) -> float:
        return 0.0


def bounded_slowdown(job: Any, start: float, end: float, tau: float) -> float:
    """``max((end - subtime) / max(end - start, tau), 1)``."""
    return max((end - job.subtime) / max(end - start, tau), 1.0)


class WaitingTime(Reward):
    """Waiting time, in units of ``scale`` seconds.

    Dense (default): minus the waiting time accrued since the previous step, summed over the
    jobs (the started ones up to their start, the waiting ones up to ``now``); the rewards of
    an episode add up to minus the total waiting time of its jobs.  Sparse
    (``dense=False``): at the end, minus the mean waiting time of the started jobs."""

    name = "waiting-time"

    def __init__(self, scale: float = 3600.0, dense: bool = True):
        self.scale = float(scale)
        self.dense = bool(dense)
        self._last = 0.0
        self._started = 0

    def total(self, env: Any) -> float:
        return env.waited + env.queue_wait()

    def reset(self, env: Any) -> None:
        self._last = self.total(env)

    def step(self, env: Any) -> float:
        if not self.dense:
            return 0.0
        total = self.total(env)
        accrued, self._last = total - self._last, total
        return -accrued / self.scale

    def final(self, env: Any) -> float:
        if self.dense or not env.n_started:
            return 0.0
        return -env.waited / env.n_started / self.scale


class BoundedSlowdown(Reward):
    """Bounded slowdown ``max((end - subtime) / max(end - start, tau), 1)`` of the completed jobs.

    Sparse (default): at the end, minus its mean over the completed jobs; 0 at every other
    step.  Dense (``dense=True``): at every step, minus the bounded slowdowns of the jobs
    completed since the previous step, over the number of jobs of the workload -- the rewards
    add up to the sparse one when every job completes."""

    name = "bounded-slowdown"

    def __init__(self, tau: float = 10.0, dense: bool = False):
        self.tau = float(tau)
        self.dense = bool(dense)
        self._seen = 0

    def reset(self, env: Any) -> None:
        self._seen = len(env.completed)

    def step(self, env: Any) -> float:
        if not self.dense:
            return 0.0
        done = env.completed
        new, self._seen = done[self._seen:], len(done)
        tau = self.tau
        return -sum(bounded_slowdown(job, s, e, tau) for job, s, e in new) / max(env.n_jobs, 1)

    def final(self, env: Any) -> float:
        if self.dense:
            return self.step(env)
        done = env.completed
        if not done:
            return 0.0
        tau = self.tau
        return -sum(bounded_slowdown(job, s, e, tau) for job, s, e in done) / len(done)


class Utilisation(Reward):
    """The share of the compute resources busy (node sharing: units of whole nodes).

    Dense (default): at every step, the busy resource-seconds since the previous step over
    ``total x scale`` (the rewards add up to the busy area over ``total x scale``).  Sparse
    (``dense=False``): at the end, the utilisation of the episode, busy area over
    ``total x makespan`` (Batsim's ``makespan``)."""

    name = "utilisation"

    def __init__(self, scale: float = 3600.0, dense: bool = True):
        self.scale = float(scale)
        self.dense = bool(dense)
        self._last = 0.0

    def reset(self, env: Any) -> None:
        self._last = env.busy_area()

    def step(self, env: Any) -> float:
        if not self.dense:
            return 0.0
        area = env.busy_area()
        new, self._last = area - self._last, area
        return new / (env.total_units * self.scale) if env.total_units else 0.0

    def final(self, env: Any) -> float:
        if self.dense:
            return self.step(env)
        makespan = float(env.result.schedule["makespan"]) if env.result is not None else env.now
        return env.busy_area() / (env.total_units * makespan) if env.total_units and makespan > 0 else 0.0


class Makespan(Reward):
    """Minus the makespan (Batsim's: the date the last job ended), in units of ``scale`` seconds.

    Sparse (default): at the end only.  Dense (``dense=True``): minus the simulated time
    elapsed since the previous step; the end adds what remains, so that the rewards add up to
    minus the makespan."""

    name = "makespan"

    def __init__(self, scale: float = 3600.0, dense: bool = False):
        self.scale = float(scale)
        self.dense = bool(dense)
        self._last = 0.0

    def reset(self, env: Any) -> None:
        self._last = 0.0

    def step(self, env: Any) -> float:
        if not self.dense:
            return 0.0
        now, last = env.now, self._last
        self._last = now
        return -(now - last) / self.scale

    def final(self, env: Any) -> float:
        makespan = float(env.result.schedule["makespan"]) if env.result is not None else env.now
        return -(makespan - (self._last if self.dense else 0.0)) / self.scale


class Energy(Reward):
    """Minus the energy the platform consumed, in units of ``scale`` joules (default: kWh).
    Needs the energy model (``sim_args=["-E"]`` and a platform with ``wattage_per_state``).

    Sparse (default): at the end, minus Batsim's ``consumed_joules``.  Dense (``dense=True``):
    minus the energy consumed since the previous step; the end adds what remains (the rewards
    add up to minus ``consumed_joules``)."""

    name = "energy"

    def __init__(self, scale: float = 3.6e6, dense: bool = False):
        self.scale = float(scale)
        self.dense = bool(dense)
        self._last = 0.0

    def reset(self, env: Any) -> None:
        if env.consumed_energy() is None and not env._over:
            raise ValueError("the energy reward needs the energy model: sim_args=['-E'] and a platform with "
                             "wattage_per_state properties")
        self._last = env.consumed_energy() or 0.0

    def step(self, env: Any) -> float:
        if not self.dense or env._over:
            return 0.0
        joules = env.consumed_energy()
        new, self._last = joules - self._last, joules
        return -new / self.scale

    def final(self, env: Any) -> float:
        total = float(env.result.schedule["consumed_joules"])
        return -(total - (self._last if self.dense else 0.0)) / self.scale


class BaselineGap(Reward):
    """Sparse: at the end, how much better than a built-in heuristic the episode did on the
    same inputs, ``(baseline - episode) / baseline`` of a metric where lower is better
    (``"bounded-slowdown"``: the mean over the jobs that ran, ``tau`` 10 s; ``"waiting-time"``:
    the mean; ``"makespan"``), both read from the ``_jobs.csv`` and ``_schedule.csv`` of the
    runs.  The baseline (``coburst run BASELINE`` on the environment's platform, workloads and
    Batsim options; default ``fcfs``, ``cosched:fcfs`` on node-sharing platforms) runs once per
    reward object; 0 is the baseline's score, positive is better."""

    name = "baseline-gap"

    METRICS = ("bounded-slowdown", "waiting-time", "makespan")

    def __init__(self, baseline: str | None = None, metric: str = "bounded-slowdown", tau: float = 10.0):
        if metric not in self.METRICS:
            raise ValueError(f"metric must be one of {self.METRICS}, got {metric!r}")
        self.baseline = baseline
        self.metric = metric
        self.tau = float(tau)
        self._ref: dict[tuple, float] = {}

    def score(self, result: Any) -> float:
        """The metric of a run (its :class:`~coburst.simulator.engine.SimResult`)."""
        import csv

        if self.metric == "makespan":
            return float(result.schedule["makespan"])
        with open(result.jobs_csv, newline="", encoding="utf-8") as fh:
            rows = [r for r in csv.DictReader(fh) if r["final_state"] != "REJECTED"]
        if not rows:
            return 0.0
        if self.metric == "waiting-time":
            return sum(float(r["waiting_time"]) for r in rows) / len(rows)
        tau = self.tau
        return sum(max((float(r["waiting_time"]) + float(r["execution_time"])) / max(float(r["execution_time"]), tau),
                       1.0) for r in rows) / len(rows)

    def reference(self, env: Any) -> float:
        import tempfile

        from coburst.runner import run

        baseline = self.baseline or ("cosched:fcfs" if env.backend_cls.family == "cosched" else "fcfs")
        key = (baseline, env.platform, tuple(env.workloads), tuple(env.sim_args))
        if key not in self._ref:
            with tempfile.TemporaryDirectory(prefix="coburst-gym-baseline-") as tmp:
                result = run(baseline, platform=env.platform, workloads=env.workloads, export=f"{tmp}/baseline",
                             sim_args=env.sim_args)
                self._ref[key] = self.score(result)
        return self._ref[key]

    def final(self, env: Any) -> float:
        ref = self.reference(env)
        got = self.score(env.result)
        return (ref - got) / ref if ref > 0 else 0.0


class WeightedSum(Reward):
    """``sum(weight x reward)`` of several rewards (objects or names), e.g.
    ``WeightedSum({"waiting-time": 1.0, "utilisation": 0.5})``."""

    name = "weighted-sum"

    def __init__(self, terms: dict | list):
        items = terms.items() if isinstance(terms, dict) else terms
        self.terms = [(float(w), make_reward(r)) for r, w in items]

    def reset(self, env: Any) -> None:
        for _, r in self.terms:
            r.reset(env)

    def step(self, env: Any) -> float:
        return sum(w * r.step(env) for w, r in self.terms)

    def final(self, env: Any) -> float:
        return sum(w * r.final(env) for w, r in self.terms)


#: reward names accepted by ``reward=``: what makes the reward object
REWARDS: dict[str, Callable[[], Any]] = {
    "none": Reward,
    "waiting-time": WaitingTime,
    "waiting-time-sparse": functools.partial(WaitingTime, dense=False),
    "bounded-slowdown": BoundedSlowdown,
    "bounded-slowdown-dense": functools.partial(BoundedSlowdown, dense=True),
    "utilisation": Utilisation,
    "utilisation-sparse": functools.partial(Utilisation, dense=False),
    "makespan": Makespan,
    "makespan-dense": functools.partial(Makespan, dense=True),
    "energy": Energy,
    "energy-dense": functools.partial(Energy, dense=True),
    "baseline-gap": BaselineGap,
}


def plugin_rewards() -> tuple[dict[str, Any], list[str]]:
    """The rewards of the entry points of :data:`GROUP` (name -> entry point, not loaded),
    and the problems (a name that is a built-in one is skipped)."""
    from importlib.metadata import entry_points

    found: dict[str, Any] = {}
    problems = []
    try:
        eps = sorted(entry_points(group=GROUP), key=lambda ep: (ep.name, ep.value))
    except Exception as exc:  # noqa: BLE001 - a broken installation must not stop the environment
        return {}, [f"the entry points of group {GROUP!r} cannot be read ({type(exc).__name__}: {exc})"]
    for ep in eps:
        if ep.name in REWARDS:
            problems.append(f"reward entry point {ep.name!r} = {ep.value!r} skipped: {ep.name!r} is a built-in reward")
        elif ep.name not in found:
            found[ep.name] = ep
    return found, problems


def _is_reward(obj: Any) -> bool:
    return all(callable(getattr(obj, m, None)) for m in ("reset", "step", "final"))


def make_reward(spec: Any) -> Any:
    """A reward object from a name (:data:`REWARDS`, then the entry points of :data:`GROUP`)
    or an object with the reward methods."""
    if isinstance(spec, str):
        factory = REWARDS.get(spec)
        if factory is None:
            plugins, _ = plugin_rewards()
            ep = plugins.get(spec)
            if ep is None:
                known = ", ".join([*REWARDS, *plugins])
                raise ValueError(f"unknown reward {spec!r} (known: {known})")
            try:
                factory = ep.load()
            except Exception as exc:  # noqa: BLE001 - reported with the entry point
                raise ValueError(f"reward {spec!r} (entry point {ep.value!r}) cannot be loaded: "
                                 f"{type(exc).__name__}: {exc}") from None
        reward = factory()
        if not _is_reward(reward):
            raise TypeError(f"reward {spec!r} made {reward!r}, which has no reset/step/final")
        return reward
    if _is_reward(spec) and not isinstance(spec, type):
        return spec
    raise TypeError(f"reward must be a name ({', '.join(REWARDS)}) or an object with reset/step/final, got {spec!r}")

