"""A trained agent as a pybatsim scheduler: the same agent in the environment, on coburst's
engine (``coburst run``, ``coburst sim``) and on the real Batsim.

**The agent** is any object with ``act(observation, mask) -> int`` (or a callable
``agent(observation, mask) -> int``): ``observation`` is what
:class:`~coburst.gym.env.BatsimExactEnv` returns, ``mask`` its ``action_masks()`` (a boolean
array, ``wait_action + 1`` long, the last entry *wait*).  It is named by the scheduler option
``agent = "package.module:attribute"`` (an import path, read as such: the module is
imported and the attribute looked up, dots allowed -- nothing is evaluated).

**The decider** (:class:`AgentDecider`) is the environment's own bridge
(:class:`~coburst.gym.bridge.Bridge`) over a :class:`SchedulerView`: an environment without a
simulation of its own, fed by the adapter's events, made when the simulation begins (the
platform's resources tell the node-sharing grid or the host classes, which shape the
actions and observations).  At a decision point where some job of the window can start, the
view goes through the environment's code -- its ``_next_point`` (window, mask, observer),
``step`` for every action (starts, mask, the end of the decision) -- so the agent sees
exactly the observations and masks of the environment, and the jobs it starts are the
reply, as they are in the environment.  Decision points where nothing can start are passed
without asking the agent, as there.

**Families** (one entry file each, over the adapter the family's built-in policies use):

* ``schedulers/coburstAgent.py`` (:class:`TrainedAgentScheduler`): burst-buffer platforms
  (flat clusters and dragonflies), ``actions="job"``;
* ``schedulers/coschedAgent.py`` (:class:`CoschedTrainedAgentScheduler`): node-sharing
  platforms (``coburst platform cosched``), ``actions`` ``"job"``, ``"placement"`` or
  ``"partner"``;
* ``schedulers/heteroAgent.py`` (:class:`HeteroTrainedAgentScheduler`): heterogeneous
  clusters (``coburst platform hetero``), ``actions`` ``"job"`` or ``"class"``.

**Options** (JSON, ``-o``): ``agent`` (required) and the environment's keyword options that
shape observations and actions, as the agent was trained with: ``window`` (16),
``features`` (``"basic"``), ``observation`` (``"dict"``), ``horizons``, ``time_scale``
(3600), ``actions`` (``"job"``); on node-sharing platforms also ``modes``, ``partners`` (4),
``partner_order`` (``"submission"``) and ``heatmap``.  The rest are the family adapter's
(``bb_capacity``, ``dragonfly``, ``trace``, ...).  An option the family does not take, or
an ``actions`` value it cannot play, is an :class:`~coburst.errors.InputError` naming it.
"""

from __future__ import annotations

import importlib
import json
from types import SimpleNamespace
from typing import Any, Callable, Mapping

from coburst.adapter.agent import AgentScheduler, CoschedAgentScheduler, HeteroAgentScheduler
from coburst.errors import InputError
from coburst.gym.bridge import Bridge
from coburst.gym.backends import PARTNER_ORDERS, PLACEMENT_MODES, BBBackend, CoschedBackend
from coburst.gym.env import BatsimExactEnv
from coburst.gym.hetero import HostClasses
from coburst.gym.observe import DEFAULT_HORIZONS
from coburst.gym.rewards import Reward
from coburst.gym.stepper import AskAgent

__all__ = ["AGENT_OPTIONS", "FAMILY_ACTIONS", "AgentDecider", "SchedulerView", "load_agent", "split_options",
           "TrainedAgentScheduler", "CoschedTrainedAgentScheduler", "HeteroTrainedAgentScheduler"]

#: the scheduler options read here (the others are the adapter's)
AGENT_OPTIONS = ("agent", "window", "features", "observation", "horizons", "time_scale", "actions",
                 "modes", "partners", "partner_order", "heatmap")
#: family -> the ``actions`` its platforms take
FAMILY_ACTIONS = {"bb": ("job",), "cosched": ("job", "placement", "partner"), "hetero": ("job", "class")}
#: family -> its entry file and the platforms it runs on (messages)
ENTRY = {"bb": ("schedulers/coburstAgent.py", "burst-buffer platforms"),
         "cosched": ("schedulers/coschedAgent.py", "node-sharing platforms (coburst platform cosched)"),
         "hetero": ("schedulers/heteroAgent.py", "heterogeneous clusters (coburst platform hetero)")}
#: the options of node-sharing platforms only
_COSCHED_ONLY = ("modes", "partners", "partner_order", "heatmap")
_SOURCE = "scheduler options"


def load_agent(spec: Any) -> Callable[[Any, Any], Any]:
    """``agent(observation, mask) -> action`` from an import path ``"package.module:attribute"``
    (the attribute's ``act`` method, or the attribute itself when it is a callable without
    one).  An :class:`~coburst.errors.InputError` naming the ``agent`` option otherwise."""
    if not isinstance(spec, str):
        raise InputError(_SOURCE, "agent", f'must be an import path "package.module:attribute", got {spec!r}')
    module_name, sep, attribute = spec.partition(":")
    names = attribute.split(".") if attribute else []
    if (not sep or not module_name or not names
            or not all(part.isidentifier() for part in module_name.split("."))
            or not all(part.isidentifier() for part in names)):
        raise InputError(_SOURCE, "agent", f'must be an import path "package.module:attribute", got {spec!r}')
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(_SOURCE, "agent", f"{spec!r}: cannot import module {module_name!r} "
                         f"({type(exc).__name__}: {exc})") from None
    except Exception as exc:  # noqa: BLE001 - the module's own error, reported with the option
        raise InputError(_SOURCE, "agent", f"{spec!r}: importing {module_name!r} failed "
                         f"({type(exc).__name__}: {exc})") from None
    for i, name in enumerate(names):
        try:
            obj = getattr(obj, name)
        except AttributeError:
            where = ".".join([module_name, *names[:i]])
            raise InputError(_SOURCE, "agent", f"{spec!r}: {where} has no attribute {name!r}") from None
    act = getattr(obj, "act", None)
    if callable(act) and not isinstance(obj, type):
        return act
    if callable(obj) and not isinstance(obj, type):
        return obj
    raise InputError(_SOURCE, "agent", f"{spec!r} is neither an object with act(observation, mask) "
                     f"nor a callable agent(observation, mask), got {type(obj).__name__}")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _modes(value: Any) -> bool:
    return (isinstance(value, list) and bool(value) and all(m in PLACEMENT_MODES for m in value)
            and len(set(value)) == len(value))


#: the environment's options a scheduler takes: (option, valid, what a valid value is, the
#: environment's value from it); the other checks (``actions`` per family, the partner
#: options together, the heatmap's file) follow in :func:`split_options`
_ENV_OPTIONS = (
    ("window", lambda v: _integer(v) and v >= 1, "an integer >= 1", int),
    ("features", lambda v: v in ("basic", "extended"), '"basic" or "extended"', str),
    ("observation", lambda v: v in ("dict", "flat"), '"dict" or "flat"', str),
    ("horizons", lambda v: isinstance(v, list) and bool(v) and all(_number(h) and h >= 0 for h in v),
     "a non-empty list of seconds >= 0", lambda v: tuple(float(h) for h in v)),
    ("time_scale", lambda v: _number(v) and v > 0, "a number of seconds > 0", float),
    ("actions", lambda v: isinstance(v, str), "a string", str),
    ("modes", _modes, f"a list of {' and/or '.join(map(repr, PLACEMENT_MODES))}", tuple),
    ("partners", lambda v: _integer(v) and v >= 1, "an integer >= 1", int),
    ("partner_order", lambda v: v in PARTNER_ORDERS, f"one of {', '.join(map(repr, PARTNER_ORDERS))}", str),
    ("heatmap", lambda v: isinstance(v, str) and bool(v), "a heatmap file or a bundled heatmap name", str),
)


def _actions_option(value: Any, family: str) -> str:
    if value in FAMILY_ACTIONS[family]:
        return value
    takes = ", ".join(f'"{a}"' for a in FAMILY_ACTIONS[family])
    entry, platforms = ENTRY[family]
    others = [f'"{value}": {ENTRY[f][0]} ({ENTRY[f][1]})' for f in ENTRY if f != family
              and value in FAMILY_ACTIONS[f]]
    hint = f"; for {others[0]}" if others else ""
    raise InputError(_SOURCE, "actions", f"{entry} runs on {platforms} and takes {takes}, got {value!r}{hint}")


def _cosched_rules(env_kw: dict) -> None:
    """What the node-sharing options ask of each other, and a heatmap that loads."""
    needs_partner = [k for k in ("partners", "partner_order", "heatmap") if k in env_kw]
    if needs_partner and env_kw.get("actions") != "partner":
        raise InputError(_SOURCE, needs_partner[0], 'is an option of actions "partner" only')
    if "heatmap" in env_kw:
        if env_kw.get("partner_order") != "speed":
            raise InputError(_SOURCE, "heatmap", 'ranks the partners of partner_order "speed" only')
        from coburst.policies.cosched.base import load_heatmap_param

        try:
            load_heatmap_param("", env_kw["heatmap"])
        except InputError as err:
            raise InputError(_SOURCE, "heatmap", err.problem) from None


def split_options(options: Mapping[str, Any] | None, family: str = "bb") -> tuple[Callable, dict, dict]:
    """``(agent, environment keyword options, adapter options)`` from the scheduler options of
    an agent on ``family``'s platforms (``"bb"``, ``"cosched"``, ``"hetero"``); an
    :class:`~coburst.errors.InputError` naming a bad one."""
    options = dict(options or {})
    if "agent" not in options:
        raise InputError(_SOURCE, "agent", 'missing: the agent\'s import path, "package.module:attribute"')
    act = load_agent(options.pop("agent"))
    if family != "cosched":
        extra = [k for k in _COSCHED_ONLY if k in options]
        if extra:
            raise InputError(_SOURCE, extra[0], f"is an option of node-sharing platforms only "
                             f"({ENTRY['cosched'][0]}), not of {ENTRY[family][1]}")
    env_kw: dict[str, Any] = {}
    for name, valid, what, convert in _ENV_OPTIONS:
        if name in options:
            value = options.pop(name)
            if not valid(value):
                raise InputError(_SOURCE, name, f"must be {what}, got {value!r}")
            env_kw[name] = convert(value)
    if "actions" in env_kw:
        env_kw["actions"] = _actions_option(env_kw["actions"], family)
    if family == "cosched":
        _cosched_rules(env_kw)
    return act, env_kw, options


class _Reply:
    """The view's link: keeps the decisions the environment's ``step`` hands over."""

    def __init__(self):
        self.decisions = None

    def finish(self, decisions: Any) -> None:
        self.decisions = decisions


class SchedulerView(BatsimExactEnv):
    """The environment as a scheduler sees it: no simulation of its own, the adapter's state
    at each decision point (module doc).  ``scheduler``: the adapter (its ``family``,
    ``cluster``, ``nb_seen``, ``bs``), whose simulation has begun; ``env_kw``: the
    environment's keyword options."""

    def __init__(self, scheduler: Any, **env_kw: Any):
        self._scheduler = scheduler
        # no platform file: the adapter's family and resources; no workload: the jobs come
        # from the adapter; no reward (the agent is not learning here)
        super().__init__([], "", reward=Reward(), horizons=env_kw.pop("horizons", DEFAULT_HORIZONS), **env_kw)
        self._scratch()  # (no outputs of its own)
        self._tmp = None
        self._link = _Reply()
        self._kernel = SimpleNamespace(resume_value=None)
        self._deciding = False
        self._workload_jobs: int | None = None

    def _platform_kind(self) -> tuple[type, HostClasses | None]:
        family = self._scheduler.family
        if family == "hetero":
            from coburst.gym.hetero import HeteroBackend

            return HeteroBackend, HostClasses.from_cluster(self._scheduler.cluster)
        return (CoschedBackend if family == "cosched" else BBBackend), None

    def _count_jobs(self) -> int | None:
        """The jobs of the simulation's workloads (SIMULATION_BEGINS names their files), as the
        environment counts them before the run; None when a file cannot be read."""
        workloads = getattr(getattr(self._scheduler, "bs", None), "workloads", None) or {}
        total = 0
        for path in workloads.values():
            try:
                with open(path, encoding="utf-8") as fh:
                    total += len(json.load(fh).get("jobs", ()))
            except (OSError, ValueError, TypeError, AttributeError):
                return None
        return total

    def _n_submitted_all(self) -> bool:
        if self._workload_jobs is None:
            self._workload_jobs = self._count_jobs()
        if self._workload_jobs is None:  # (Batsim's notification after the last submission)
            return bool(getattr(getattr(self._scheduler, "bs", None), "no_more_static_jobs", False))
        return self._scheduler.nb_seen >= self._workload_jobs

    def _next_point(self) -> None:
        if self._run is not None:  # a decision point: the environment's own set-up
            super()._next_point()
            self._run = None
        else:  # the decision ended (``step``): its starts are in the reply
            self._deciding = False

    def decide(self, act: Callable, state: Any) -> Any:
        """The agent's decision at ``state`` (a decision point where some job can start)."""
        self._over = False
        self._bridge.asked = state
        self._run = iter((None,))
        self._link.decisions = None
        self._deciding = True
        self._next_point()
        while self._deciding:
            self.step(act(self._observation(), self.action_masks()))
        return self._link.decisions


class AgentDecider(Bridge):
    """The adapter's decider: the environment's bridge, the agent asked in place; its view
    (:meth:`attach`) is made when the simulation begins."""

    def __init__(self, act: Callable):
        super().__init__(None)
        self.stepped = True  # (the bridge raises AskAgent where the agent is to decide)
        self.act = act

    def attach(self, view: SchedulerView) -> None:
        self.env = view
        view._bridge = self

    def make_decisions(self, state) -> Any:
        try:
            return super().make_decisions(state)  # (nothing can start: no starts)
        except AskAgent:
            return self.env.decide(self.act, state)


class _TrainedAgent:
    """What the three agent-driven adapters add: the agent's options checked (the family's
    ``actions``), the decider in the policy's place, its view made once the platform is read."""

    #: the policy family of the adapter (``"bb"``, ``"cosched"``, ``"hetero"``)
    family = "bb"

    def __init__(self, options: Mapping[str, Any] | None = None):
        super().__init__(None, options)  # (a bad option: a message and status 2, as every adapter)
        act, self._env_kw, _ = split_options(options, self.family)
        self.policy = AgentDecider(act)

    def onSimulationBegins(self):
        super().onSimulationBegins()
        self.policy.attach(SchedulerView(self, **dict(self._env_kw)))

    @classmethod
    def check_options(cls, options: Mapping[str, Any] | None):
        _, _, adapter = split_options(options, cls.family)
        return super().check_options(adapter)


class TrainedAgentScheduler(_TrainedAgent, AgentScheduler):
    """The burst-buffer adapter driven by a trained agent named in its options (``agent``:
    ``"package.module:attribute"``; ``window``, ``features``, ``observation``, ``horizons``,
    ``time_scale``, ``actions`` as the environment's), asked as
    :class:`coburst.gym.BatsimExactEnv` asks it (:mod:`coburst.gym.scheduler`).  Entry file:
    ``schedulers/coburstAgent.py``."""


class CoschedTrainedAgentScheduler(_TrainedAgent, CoschedAgentScheduler):
    """The node-sharing adapter driven by a trained agent (``actions`` ``"job"``,
    ``"placement"`` or ``"partner"``; also ``modes``, ``partners``, ``partner_order``,
    ``heatmap`` as the environment's).  Entry file: ``schedulers/coschedAgent.py``."""

    family = "cosched"


class HeteroTrainedAgentScheduler(_TrainedAgent, HeteroAgentScheduler):
    """The heterogeneous-cluster adapter driven by a trained agent (``actions`` ``"job"`` or
    ``"class"``: the host classes read from the platform's resources, as the environment
    reads them from its file).  Entry file: ``schedulers/heteroAgent.py``."""

    family = "hetero"
