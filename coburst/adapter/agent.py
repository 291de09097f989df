"""A pybatsim scheduler whose decisions come from outside the adapter: an agent.

:class:`AgentScheduler` is the burst-buffer adapter
(:class:`~coburst.adapter.scheduler.CoburstScheduler`: the same admission, rejection of jobs
that can never fit, ``EXECUTE_JOB`` and BB metadata) with a *decider* in place of the policy.
The decider is any object with the policy interface (``on_job_release``, ``on_job_end``,
``make_decisions(state) -> Decisions``); ``coburst.gym`` passes one that hands the state to
a reinforcement-learning agent and returns the jobs it started.  Nothing here knows about the
agent: the Batsim protocol stays in the adapter, the decisions are coburst
:class:`~coburst.core.decisions.Decisions`.

:class:`CoschedAgentScheduler` is the same over the node-sharing adapter.
The scheduler object is handed to :class:`coburst.simulator.protocol.InProcessLink` as it is
(no scheduler file, no options text).
"""

from __future__ import annotations

from typing import Any, Mapping

from coburst.adapter.cosched import CoschedScheduler
from coburst.adapter.hetero import HeteroScheduler
from coburst.adapter.scheduler import _SOURCE, ADAPTER_OPTIONS, CoburstScheduler, parse_options
from coburst.errors import InputError

__all__ = ["AgentScheduler", "CoschedAgentScheduler", "HeteroAgentScheduler", "agent_scheduler"]


def _adapter_options(options: Mapping[str, Any] | None, registry: Any, placeholder: str = "fcfs"):
    """``(placeholder policy, adapter settings)``: the adapter's options only (the decisions
    are the decider's, so no ``policy`` and no policy parameters)."""
    unknown = sorted(k for k in (options or {}) if k not in ADAPTER_OPTIONS or k == "policy")
    if unknown:
        raise InputError(_SOURCE, unknown[0], "unknown option: an agent-driven scheduler takes the adapter's "
                         f"options only ({', '.join(o for o in ADAPTER_OPTIONS if o != 'policy')})")
    return parse_options(options, fixed_policy=placeholder, registry=registry)


class _AgentDriven:
    """What both agent-driven adapters add to their family's adapter: the decider in the
    policy's place, a count of the jobs submitted so far (admitted or rejected at once), and
    the adapter's options only (the placeholder policy is replaced by the decider)."""

    #: a policy of the family, named in the adapter's options until the decider replaces it
    placeholder = "fcfs"

    def __init__(self, decider: Any, options: Mapping[str, Any] | None = None):
        super().__init__(options)
        self.policy = decider
        self.nb_seen = 0

    def admit(self, job):
        self.nb_seen += 1
        super().admit(job)

    @classmethod
    def check_options(cls, options: Mapping[str, Any] | None):
        return _adapter_options(options, cls.registry, cls.placeholder)

    def finish_decisions(self, decisions: Any) -> None:
        """What ``onNoMoreEvents`` does after ``make_decisions``, for a decider that answered
        later (``coburst.gym`` without a thread: the decider stopped ``onNoMoreEvents`` there
        and the agent's decisions come now)."""
        self.nb_decisions += 1
        self.apply(decisions)
        if self.io is not None:
            self.io.after_decisions()


class AgentScheduler(_AgentDriven, CoburstScheduler):
    """The burst-buffer adapter driven by ``decider`` (module doc).  ``options``: the
    adapter's options (``bb_capacity``, ``dragonfly``, ``trace``); no ``policy``."""


class CoschedAgentScheduler(_AgentDriven, CoschedScheduler):
    """The node-sharing adapter (:class:`~coburst.adapter.cosched.CoschedScheduler`: units of
    whole nodes, compact or spread placements, one decision per date and event) driven by
    ``decider``, whose decisions are
    :class:`~coburst.core.nodeshare.PlacementDecisions`."""

    def finish_decisions(self, decisions: Any) -> None:
        super().finish_decisions(decisions)
        self._decided_at = self._now()  # (as onNoMoreEvents, after the decisions)


class HeteroAgentScheduler(_AgentDriven, HeteroScheduler):
    """The heterogeneous-cluster adapter (:class:`~coburst.adapter.hetero.HeteroScheduler`:
    jobs on cores of one node) driven by ``decider``, whose decisions are
    :class:`~coburst.core.hetero.HeteroDecisions` (starts only)."""

    placeholder = "min-min"


def agent_scheduler(family: str) -> type:
    """The agent-driven adapter of a policy family: ``"bb"``, ``"cosched"`` or ``"hetero"``."""
    return {"bb": AgentScheduler, "cosched": CoschedAgentScheduler, "hetero": HeteroAgentScheduler}[family]
