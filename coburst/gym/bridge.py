"""The adapter's decider in :class:`~coburst.gym.env.BatsimExactEnv`: it tells the
environment's listeners of the scheduler's events, passes decision points where nothing can
start, and hands the others to the agent -- by stopping the adapter there
(:class:`~coburst.gym.stepper.AskAgent`, the run in the environment's thread) or by waiting
for the environment's reply (the run in a thread of its own, in SimGrid)."""

from __future__ import annotations

import queue
from typing import Any, Sequence

from coburst.gym.stepper import AskAgent

__all__ = ["Bridge", "Abort"]


class Abort(Exception):
    """Stops the simulation thread of an abandoned episode."""


class Bridge:
    """The adapter's decider (simulation thread): hands decision points to the environment."""

    name = "agent"

    def __init__(self, env: Any):
        self.env = env
        self.to_env: queue.SimpleQueue = queue.SimpleQueue()
        self.to_sim: queue.SimpleQueue = queue.SimpleQueue()
        self.start_dates: dict[str, float] = {}
        #: the run is in the environment's thread: the decider stops the adapter where the
        #: agent is to decide (:mod:`coburst.gym.stepper`) instead of waiting for it
        self.stepped = False
        self.asked = None  # the state the agent is asked about (stepped)

    def on_job_release(self, state, jobs) -> None:
        env = self.env
        env._n_released += len(jobs)
        env._released_subtimes += sum(job.subtime for job in jobs)
        for listener in env.listeners:
            listener.on_job_release(state, jobs)

    def on_job_end(self, state, jobs) -> None:
        env = self.env
        for job in jobs:
            start = self.start_dates.pop(job.id, None)
            if start is not None:
                env.completed.append((job, start, state.now))
                env._done_area += job.res * (state.now - start)
        for listener in env.listeners:
            listener.on_job_end(state, jobs)

    def make_decisions(self, state) -> Any:
        env = self.env
        try:
            for listener in env.listeners:
                hook = getattr(listener, "decision_point", None)
                if hook is not None:
                    hook(state)
        except Exception as exc:  # raised again in the environment's thread
            env._listener_error = exc
            raise Abort("a listener failed") from None
        decisions = env.backend_cls.decisions(state.now)
        if not env._anything_fits(state):
            return decisions
        if self.stepped:
            self.asked = state
            raise AskAgent
        self.to_env.put(("decide", state))
        message = self.to_sim.get()
        if message[0] == "abort":
            raise Abort("episode abandoned")
        return self.started(decisions, message[1], state.now)

    def started(self, decisions: Any, starts: Sequence[tuple], now: float) -> Any:
        """``decisions`` with the agent's ``(job, allocation)`` starts."""
        env = self.env
        for job, alloc in starts:
            decisions.start(job, alloc)
            self.start_dates[job.id] = now
            env.waited += now - job.subtime
        return decisions
