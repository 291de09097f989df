"""``PolicyExpert``: a built-in coburst policy played as actions of :class:`BatsimExactEnv`.

The wrapper listens to the environment's scheduler events (``env.listeners``) and passes them
to a fresh instance of the policy every episode; at every decision point of the engine --
shown to the agent or passed -- it asks the policy for its decisions, exactly where and with
what the pybatsim adapter would ask it (``coburst run POLICY``).  :meth:`expert_action` then
gives the action that starts the policy's next job (its slot in the window), or *wait* once
they are all started.  The jobs run where the policy placed them: the wrapper sets the
environment's allocator to the policy's allocations (the agent chooses *which* job starts;
*where* is the allocator's business, coburst's default placement otherwise).

Played to the end, an episode gives the policy's ``_jobs.csv`` byte for byte
(``tests/test_gym_conformance*.py``, ``tests/test_gym_hetero.py``) for the policies whose
decisions are only starts: the burst-buffer and node-sharing families (:data:`CONFORMING`)
and the heterogeneous-cluster family with ``mapping="deferred"`` (with ``"queue"`` they map
jobs to node queues, which no action expresses).  With ``actions="placement"`` or
``"class"`` the expert plays the policy's job and the mode or class of its allocation, and
the environment places the job itself (``play_allocations=False``): the same run where the
policy's placement is the environment's.  Pair-Greedy ranks the nodes of a spread job by
the pair's speed: its placements are partner actions with ``partner_order="speed"`` (the
spread placements in that ranking, :mod:`coburst.gym.backends`), not with the default
submission order.  A policy that starts a job outside the window, or
starts a job where the environment would show no decision, makes :meth:`expert_action` (or
the step) raise :class:`ExpertMismatch`.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym


__all__ = ["PolicyExpert", "ExpertMismatch", "CONFORMING"]

#: built-in policies whose decisions are only starts (no rejects, no call-me-later): the
#: burst-buffer family (flat clusters and dragonflies) and the node-sharing family
#: (``coburst platform cosched`` platforms, without ``--heatmap`` speedups), by the names
#: ``coburst run`` takes
CONFORMING = ("fcfs", "filler", "filler-sjf", "backfill", "backfill-sjf", "no-future", "conservative",
              "maxutil", "window", "plan-sum", "plan-square", "plan-cube", "plan-start",
              "cosched:fcfs", "cosched:easy", "cosched:conservative", "sjf", "ljf", "easy-co", "sjf-co", "ljf-co",
              "laf-co", "popularity", "cosched:filler", "sjf-filler", "pop-filler", "pair-greedy", "fcs")


class ExpertMismatch(RuntimeError):
    """The policy decided something the environment cannot play."""


class PolicyExpert(gym.Wrapper):
    """``PolicyExpert(env, "backfill-sjf", depth=1)``: the policy's actions (module doc)."""

    def __init__(self, env: gym.Env, policy: str, *, play_allocations: bool | None = None, **params: Any):
        super().__init__(env)
        #: the jobs run on the policy's allocations (default; with ``actions="placement"``,
        #: off: the action's mode places them)
        self.play_allocations = env.unwrapped.actions == "job" if play_allocations is None else play_allocations
        from coburst import registry

        self.policy_name = policy
        self.params = params
        self._scope = registry.scope(env.unwrapped.backend_cls.family)
        self.policy = self._scope.get(policy, **params)  # checked now: a bad name fails here
        self._plan: list = []
        self._allocs: dict[str, Any] = {}
        self._point = 0  # the engine's decision points seen

    def reset(self, **kwargs):
        base = self.env.unwrapped
        self.policy = self._scope.get(self.policy_name, **self.params)
        base.listeners[:] = [lst for lst in base.listeners if not isinstance(lst, _Listener)]
        base.listeners.append(_Listener(self))
        # the policy's allocations; with placement actions the environment places the job
        # itself in the mode the action names (what the policy's placement must then be)
        base.allocator = self._allocate if self.play_allocations else None
        self._plan, self._allocs, self._point = [], {}, 0
        return self.env.reset(**kwargs)

    # called in the simulation thread, at every decision point of the engine
    def _decision_point(self, state) -> None:
        if self._plan:
            raise ExpertMismatch(f"the policy's starts {[j.id for j in self._plan]} were not played before "
                                 f"simulated time {state.now:.6f} (jobs outside the window, at a decision point "
                                 f"the environment passed: a larger window is needed)")
        decisions = self.policy.make_decisions(state)
        if decisions.rejects or decisions.wakeups or getattr(decisions, "maps", None):
            raise ExpertMismatch(f"{self.policy.name} rejects jobs, maps them to node queues or asks to be called "
                                 "later: only starts can be played as actions")
        self._plan = [st.job for st in decisions.starts]
        self._allocs = {st.job.id: st.alloc for st in decisions.starts}
        self._point += 1

    def _allocate(self, job):
        return self._allocs.get(job.id)

    def expert_action(self) -> int:
        """The action the policy takes now (``actions="placement"``: its job and the mode
        of its placement)."""
        base = self.env.unwrapped
        if not self._plan:
            return base.wait_action
        job = self._plan[0]
        ids = [j.id for j in base._window_jobs]
        if job.id not in ids:
            raise ExpertMismatch(f"the policy starts job {job.id}, which is not in the window {ids} "
                                 f"(a larger window is needed)")
        slot = ids.index(job.id)
        if base.choices:
            try:
                choice = base._backend.choice_of(job, self._allocs[job.id], len(base.choices))
            except ValueError as exc:
                raise ExpertMismatch(f"{self.policy.name}'s placement is no action: {exc}") from None
            return len(base.choices) * slot + choice
        return slot

    def step(self, action):
        base = self.env.unwrapped
        slot = action if not base.choices else action // len(base.choices)
        if self._plan and action < base.wait_action and slot < len(base._window_jobs) and base.action_masks()[action]:
            if base._window_jobs[slot].id == self._plan[0].id:
                self._plan.pop(0)  # (before the step: the engine may reach its next decision point)
        return self.env.step(action)


class _Listener:
    def __init__(self, expert: PolicyExpert):
        self.expert = expert

    def on_job_release(self, state, jobs) -> None:
        self.expert.policy.on_job_release(state, jobs)

    def on_job_end(self, state, jobs) -> None:
        self.expert.policy.on_job_end(state, jobs)

    def decision_point(self, state) -> None:
        self.expert._decision_point(state)
