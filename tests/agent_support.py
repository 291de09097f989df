"""Agents for the trained-agent scheduler's tests (tests/test_gym_agent_scheduler.py,
tests/test_gym_agent_families.py): plain
rules on the environment's observation and mask, deterministic."""

from __future__ import annotations

import numpy as np


class FirstFit:
    """Starts the first job of the window that fits now; waits when none does."""

    def act(self, observation, mask) -> int:
        fits = np.flatnonzero(mask[:-1])
        return int(fits[0]) if len(fits) else len(mask) - 1


def shortest_fit(observation, mask) -> int:
    """A callable agent reading the observation: of the jobs that fit now, the one of the
    shortest walltime (``jobs`` column 2; ties: the first); waits when none fits."""
    fits = np.flatnonzero(mask[:-1])
    if not len(fits):
        return len(mask) - 1
    walltime = observation["jobs"][fits, 2]
    return int(fits[int(np.argmin(walltime))])


first_fit = FirstFit()


class Recorder(FirstFit):
    """:class:`FirstFit` keeping what it is shown: ``(observation, mask, action)`` copies."""

    def __init__(self):
        self.seen: list = []

    def clear(self) -> None:
        self.seen = []

    def act(self, observation, mask) -> int:
        action = super().act(observation, mask)
        obs = {k: v.copy() for k, v in observation.items()} if isinstance(observation, dict) else observation.copy()
        self.seen.append((obs, mask.copy(), action))
        return action


def last_fit(observation, mask) -> int:
    """The last valid action but *wait* (with choices: the last window job that can start,
    its last choice -- a co-run partner or a host class); waits when none is valid."""
    fits = np.flatnonzero(mask[:-1])
    return int(fits[-1]) if len(fits) else len(mask) - 1


def always_slot_three(observation, mask) -> int:
    """Starts window slot 3 whatever the mask says (an agent that breaks the rules)."""
    return 3


recorder = Recorder()
