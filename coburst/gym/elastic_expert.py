"""``ElasticExpert``: a built-in elastic policy played as actions of :class:`~coburst.gym.elastic.ElasticEnv`.

At every message of the elastic mode -- shown to the agent or passed -- the wrapper gives
the policy (a fresh instance every episode) a copy of the state the environment holds, before
anything is decided, exactly as :class:`~coburst.adapter.elastic.ElasticLink` would give it,
and keeps the policy's decisions.  :meth:`ElasticExpert.expert_action` then gives the action
that takes the policy's next decision (its start or resize, in the policy's order), or *end*
once they are all taken.  The policy's rejects must be the environment's own (the jobs wider
than the platform, first); a start must take the lowest free resources and a resize follow
``Decisions.resize_to`` (what the built-in policies do), and every size must be a bucket
(``sizes="all"`` makes every size one): otherwise :class:`~coburst.gym.expert.ExpertMismatch`.

Played to the end, an episode gives the policy's ``_jobs.csv`` and ``_reconfigurations.csv``
byte for byte (``tests/test_gym_elastic.py``: ``equipartition``, ``malleable-easy`` and
``moldable-ect`` -- whose profiles are then forwarded, as ``coburst run`` forwards them -- on the
example workload, the first two on random ones).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium as gym

from coburst.gym.expert import ExpertMismatch
from coburst.policies.elastic.base import Decisions, EJob, ElasticState

__all__ = ["ElasticExpert", "clone_state"]


def clone_state(state: ElasticState) -> ElasticState:
    """A copy of ``state`` a policy may change (the jobs' models are shared: read only)."""

    def job(j: EJob) -> EJob:
        return dataclasses.replace(j, alloc=None if j.alloc is None else list(j.alloc),
                                   point=None if j.point is None else dict(j.point))

    queue = [job(j) for j in state.queue]
    by_id = {j.id: j for j in queue}
    return ElasticState(now=state.now, compute=list(state.compute), free=set(state.free), queue=queue,
                        running={k: job(j) for k, j in state.running.items()}, bb_capacity=state.bb_capacity,
                        submitted=[by_id[j.id] for j in state.submitted if j.id in by_id])


class ElasticExpert(gym.Wrapper):
    """``ElasticExpert(gymnasium.make("coburst/Elastic-v0", ..., sizes="all"), "equipartition")``."""

    def __init__(self, env: gym.Env, policy: str, **params: Any):
        super().__init__(env)
        from coburst import registry

        name = policy if ":" in policy else f"elastic:{policy}"
        self.policy_name, self.params = name, params
        self.policy = registry.get(name, **params)  # (a bad name fails here)
        self._plan: list[tuple[str, dict]] = []

    def reset(self, **kwargs):
        from coburst import registry

        base = self.env.unwrapped
        self.policy = registry.get(self.policy_name, **self.params)
        base.listeners[:] = [lst for lst in base.listeners if not isinstance(lst, _Listener)]
        base.listeners.append(_Listener(self))
        if getattr(self.policy, "needs_profiles", False):
            base.forward_profiles = True
        self._plan = []
        return self.env.reset(**kwargs)

    # simulation thread, at every message
    def _message(self, state: ElasticState) -> None:
        if self._plan:
            raise ExpertMismatch(f"the policy's decisions {self._plan} were not played before simulated time "
                                 f"{state.now:.6f} (outside the window or the point slots: a larger window or more "
                                 f"point slots are needed; or in a message the environment passed)")
        mine = clone_state(state)
        decisions = Decisions(mine)
        self.policy.schedule(mine, decisions)
        events = list(decisions.events)
        expected = [job.id for job in state.too_wide()]
        rejects = []
        while events and events[0][0] == "REJECT_JOB":
            rejects.append(events.pop(0)[1]["job_id"])
        if rejects != expected or any(etype not in ("EXECUTE_JOB", "RESIZE_JOB") for etype, _ in events):
            raise ExpertMismatch(f"{self.policy.name} decides {decisions.events} at simulated time {state.now:.6f}: "
                                 f"only the environment's rejects ({expected}), first, then starts and resizes "
                                 "can be played")
        self._plan = events

    def expert_action(self) -> int:
        """The action taking the policy's next decision now (*end* when none is left)."""
        base = self.env.unwrapped
        if not self._plan:
            return base.end_action
        etype, data = self._plan[0]
        ids = _ids(data["alloc"])
        st = base.state
        if etype == "EXECUTE_JOB":
            slots = [job.id for job in base._window_jobs]
            if data["job_id"] not in slots:
                raise ExpertMismatch(f"the policy starts {data['job_id']}, not in the window {slots}")
            job = base._window_jobs[slots.index(data["job_id"])]
            bucket = base.bucket_of(len(ids), *job.start_sizes())
            want = sorted(st.free)[:len(ids)]
            action = None if bucket is None else base.start_action(slots.index(job.id), bucket)
        else:
            slots = [job.id for job in base._point_jobs]
            if data["job_id"] not in slots:
                raise ExpertMismatch(f"the policy resizes {data['job_id']}, not in the point slots {slots}")
            job = base._point_jobs[slots.index(job_id := data["job_id"])]
            bounds = base.resize_range(job)
            bucket = None if bounds is None else base.bucket_of(len(ids), *bounds)
            want = (job.alloc[:len(ids)] if len(ids) < job.size else
                    sorted(job.alloc + sorted(st.free)[:len(ids) - job.size]))
            action = None if bucket is None else base.resize_action(slots.index(job_id), bucket)
        if ids != want:
            raise ExpertMismatch(f"the policy's {etype} {data} is not on the resources an action takes ({want})")
        if action is None or not base.action_masks()[action]:
            raise ExpertMismatch(f"the policy's {etype} {data} is no valid action (size {len(ids)}: no bucket of "
                                 "this size, or masked out; sizes='all' has one per size)")
        return action

    def step(self, action):
        if self._plan:
            try:
                if action == self.expert_action():
                    self._plan.pop(0)  # (before the step: the simulation may reach its next message)
            except ExpertMismatch:
                pass  # (the step plays what it is given; the next message reports the plan left)
        return self.env.step(action)


def _ids(text: str) -> list[int]:
    out = []
    for part in text.split():
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


class _Listener:
    def __init__(self, expert: ElasticExpert):
        self.expert = expert

    def on_message(self, state) -> None:
        self.expert._message(state)
