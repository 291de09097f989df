"""``BatsimExactEnv``: a Gymnasium environment on the embedded, Batsim-exact simulator.

**Steps are the engine's decision points.**  The simulator (:mod:`coburst.simulator.engine`)
runs with the family's adapter driven by the agent (:mod:`coburst.adapter.agent`); wherever
a pybatsim scheduler would be asked for its decisions (once per Batsim message, after its
events), the adapter asks this environment instead.  On a platform of coburst's platform
cache the run is in this thread and *pauses* there (:mod:`coburst.gym.stepper`: no thread,
no hand-over); a run in SimGrid (the first on a platform) runs in a thread of its own and
waits.  The agent starts jobs of the visible window one step at a time; its decision ends
when it chooses *wait* (the last action) or when no further job can start now.  The jobs it
started go to the simulator as one reply, exactly as a policy's decisions do.  Decision
points where no job of the window can start now are passed without asking the agent.

**Actions** (``actions=``): ``"job"`` -- ``Discrete(window + 1)``, slot ``k`` starts the
``k``-th job of the window (the waiting jobs in submission order, those started in this
decision left out) where the backend places it (:mod:`coburst.gym.backends`,
:mod:`coburst.gym.hetero`), or where the *allocator* says; ``"placement"`` (node sharing)
-- a job and compact/spread; ``"partner"`` (node sharing) -- a job and compact, spread or
spread beside one of ``partners`` co-run partners (offered by ``partner_order``:
``"submission"``, or ``"speed"`` -- ranked for each job by the pair's speed on ``heatmap``,
as Pair-Greedy ranks nodes; :mod:`coburst.gym.backends`); ``"class"`` (heterogeneous clusters) --
a job and a host class.  With choices, action ``k x len(choices) + i`` starts slot ``k``
with choice ``i`` (:attr:`choices`); :attr:`wait_action` ends the decision.
``action_masks()`` and ``info["action_mask"]`` mark the valid ones; *wait* is masked out
only when it would stall the simulation.  An action outside the mask raises
:class:`InvalidAction`; with ``invalid_action="penalty"`` it gets the reward ``penalty``
and changes nothing.

**Observations** (``features="basic"`` or ``"extended"``; ``observation="dict"`` or
``"flat"``): :mod:`coburst.gym.observe`.  **Rewards**: :mod:`coburst.gym.rewards`.

**Episodes** run a whole workload: ``terminated`` when the simulation ended (Batsim's
outputs are then written: ``env.result``); ``truncated`` when ``max_decisions`` steps were
taken or the simulated time reached ``max_time`` at a decision point (the simulation is
abandoned, no outputs).  The dynamics are deterministic (``reset(seed=...)`` seeds
``np_random`` only).

**One SimGrid engine per process.**  A run whose platform is in the platform cache
(:mod:`coburst.simulator.platform_cache`: ``delay`` or non-communicating jobs on a platform
seen before -- the first episode puts it there) does not load SimGrid; a run that needs
SimGrid creates the one engine of the process.  Describe the platforms in the cache first
(one ``coburst run`` of each, in any process), as the tests do.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import weakref
from pathlib import Path
from typing import Any, Callable, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from coburst.gym.backends import PARTNER_ORDERS, PLACEMENT_MODES, backend_for
from coburst.gym.hetero import HostClasses
from coburst.gym.observe import CLUSTER_FEATURES, DEFAULT_HORIZONS, JOB_FEATURES, Observer
from coburst.gym.rewards import make_reward
from coburst.gym.bridge import Bridge
from coburst.gym.stepper import SteppedKernel, SteppedLink

__all__ = ["BatsimExactEnv", "InvalidAction", "JOB_FEATURES", "CLUSTER_FEATURES", "ACTIONS", "PLACEMENT_MODES"]

#: ``actions=`` values: a job of the window (``"job"``); a job and its placement mode on
#: node-sharing platforms (``"placement"``), or its mode or co-run partner (``"partner"``); a
#: job and a host class on heterogeneous platforms (``"class"``)
ACTIONS = ("job", "placement", "partner", "class")


class InvalidAction(ValueError):
    """An action outside the action mask (or outside the action space)."""


def scratch_dir(env: Any, prefix: str) -> str:
    """A fresh folder for ``env``'s workload copies and default outputs, removed by
    ``env._scratch()`` (``close``) or, when the environment is never closed (or its constructor
    fails), when it is garbage-collected or the interpreter exits."""
    path = tempfile.mkdtemp(prefix=prefix)
    env._scratch = weakref.finalize(env, shutil.rmtree, path, True)
    return path


def begin_step(env, action: Any, n_actions: int) -> tuple[tuple | None, int]:
    """What every ``step`` of the environments on the engine begins with: ``(the step's result,
    -1)`` when the episode has just ended (its final reward), else ``(None, the action)``, the
    action checked to be an integer of ``Discrete(n_actions)`` (:class:`InvalidAction`)."""
    if env._over and env._end_pending:
        env._end_pending = False
        return (env._observation(), env.reward_fn.final(env), True, False, env._info()), -1
    if env._over:
        raise RuntimeError("the episode is over: call reset()")
    try:
        a = int(action)
    except (TypeError, ValueError):
        raise InvalidAction(f"action {action!r} is not an integer") from None
    if not 0 <= a < n_actions:
        raise InvalidAction(f"action {a} outside Discrete({n_actions})")
    return None, a


class BatsimExactEnv(gym.Env):
    """Event-driven scheduling on the Batsim-exact engine (module doc).

    ``workload``: a Batsim workload JSON file, an SWF log (``.swf``: converted to ``delay``
    jobs with coburst's converter, :func:`coburst.workloads.delay.swf_to_delay_workload`), a
    workload document (dict), or a list of files; ``platform``: a SimGrid platform file.
    ``sim_args``: further Batsim options as command-line strings (as ``coburst run``);
    ``adapter_options``: the adapter's (``bb_capacity``, ``dragonfly``).  ``export``: the
    output prefix (default: a temporary folder of the environment, removed by
    :meth:`close`).
    """

    metadata = {"render_modes": []}

    def __init__(self, workload: Any, platform: str, *, window: int = 16, reward: Any = "waiting-time",
                 max_decisions: int | None = None, max_time: float | None = None,
                 invalid_action: str = "raise", penalty: float = -1.0, observation: str = "dict",
                 time_scale: float = 3600.0, export: str | None = None, sim_args: Sequence[str] = (),
                 adapter_options: dict | None = None, allocator: Callable | None = None,
                 modes: Sequence[str] = ("compact", "spread"), features: str = "basic",
                 horizons: Sequence[float] = DEFAULT_HORIZONS, actions: str = "job", partners: int = 4,
                 partner_order: str = "submission", heatmap: str = "aris-nas"):
        if not isinstance(window, int) or window < 1:
            raise ValueError(f"window must be an integer >= 1, got {window!r}")
        if invalid_action not in ("raise", "penalty"):
            raise ValueError(f"invalid_action must be 'raise' or 'penalty', got {invalid_action!r}")
        if observation not in ("dict", "flat"):
            raise ValueError(f"observation must be 'dict' or 'flat', got {observation!r}")
        if max_decisions is not None and max_decisions < 1:
            raise ValueError(f"max_decisions must be >= 1, got {max_decisions!r}")
        self.window = window
        self.reward_fn = make_reward(reward)
        self.max_decisions = max_decisions
        self.max_time = max_time
        self.invalid_action = invalid_action
        self.penalty = float(penalty)
        self.time_scale = float(time_scale)
        self.sim_args = list(sim_args)
        self.adapter_options = dict(adapter_options or {})
        #: ``allocator(job) -> allocation | None``: where a started job runs (None: the
        #: backend's placement, :mod:`coburst.gym.backends`)
        self.allocator = allocator
        if not modes or any(m not in ("compact", "spread") for m in modes):
            raise ValueError(f"modes must name 'compact' and/or 'spread', got {modes!r}")
        #: node-sharing platforms: the placement modes a started job may take, in order of preference
        self.modes = tuple(modes)
        #: objects told of the scheduler's events: ``on_job_release(state, jobs)``,
        #: ``on_job_end(state, jobs)`` and (if they have it) ``decision_point(state)`` at
        #: every decision point, shown to the agent or not (used by :class:`coburst.gym.PolicyExpert`)
        self.listeners: list[Any] = []
        self.platform = str(platform)
        self.backend_cls, classes = self._platform_kind()
        from coburst.adapter.agent import agent_scheduler

        agent_scheduler(self.backend_cls.family).check_options(self.adapter_options)  # InputError naming a bad one
        self._tmp = scratch_dir(self, "coburst-gym-")
        self.workloads = self._workload_files(workload)
        self.export = export or str(Path(self._tmp) / "episode")
        self.observation_kind = observation
        if actions not in ACTIONS:
            raise ValueError(f"actions must be one of {ACTIONS}, got {actions!r}")
        if actions in ("placement", "partner") and self.backend_cls.family != "cosched":
            raise ValueError(f"actions={actions!r} needs a node-sharing platform (coburst platform cosched)")
        if not isinstance(partners, int) or partners < 1:
            raise ValueError(f"partners must be an integer >= 1, got {partners!r}")
        #: ``actions="partner"``: the co-run partner slots
        self.partners = partners if actions == "partner" else 0
        if partner_order not in PARTNER_ORDERS:
            raise ValueError(f"partner_order must be one of {PARTNER_ORDERS}, got {partner_order!r}")
        if partner_order != "submission" and actions != "partner":
            raise ValueError(f"partner_order={partner_order!r} needs actions='partner'")
        #: how the partners are offered (:data:`~coburst.gym.backends.PARTNER_ORDERS`)
        self.partner_order = partner_order
        #: ``partner_order="speed"``: the heatmap's speeds that rank them
        self.speeds = None
        if partner_order == "speed":
            from coburst.policies.cosched.base import AppSpeeds, load_heatmap_param

            from coburst.errors import InputError

            try:
                self.speeds = AppSpeeds(load_heatmap_param("", heatmap))
            except InputError as err:
                raise ValueError(f"heatmap: {err.problem}") from None
        if actions == "class" and self.backend_cls.family != "hetero":
            raise ValueError("actions='class' needs a heterogeneous platform (coburst platform hetero)")
        self.actions = actions
        #: heterogeneous platforms: the host classes (:mod:`coburst.gym.hetero`)
        self.host_classes = classes
        #: what an action chooses besides the job: placement modes, host class names, or nothing
        self.choices = {"job": (), "placement": PLACEMENT_MODES,
                        "partner": PLACEMENT_MODES + tuple(f"partner {i}" for i in range(self.partners)),
                        "class": getattr(self.host_classes, "names", ())}[actions]
        #: the action that ends the decision (*wait*); action ``k x len(choices) + i`` starts
        #: slot ``k`` with choice ``i`` (``k`` alone without choices)
        self.wait_action = window * max(len(self.choices), 1)
        self.action_space = spaces.Discrete(self.wait_action + 1)
        self._observer = Observer(self, features, tuple(horizons))
        self.features = features
        self._dict_space = self._observer.dict_space
        self.observation_space = (self._dict_space if observation == "dict"
                                  else spaces.flatten_space(self._dict_space))
        self._thread: threading.Thread | None = None
        self._run = None  # the engine's run (Simulator.run_steps), when it is in this thread
        self._listener_error: BaseException | None = None
        self._bridge: Bridge | None = None
        self._over = True
        self._end_pending = False
        self.result = None
        self.state = None
        self.cluster = None
        self.total_units = 0  # the compute resources (node sharing: units), known at the first decision
        self._reset_episode()

    # ------------------------------------------------------------------ inputs
    def _platform_kind(self) -> tuple[type, HostClasses | None]:
        """``(backend class, host classes)`` of the platform file (host classes: heterogeneous
        platforms only, else None)."""
        backend_cls = backend_for(self.platform)
        hetero = backend_cls.family == "hetero"
        return backend_cls, HostClasses.from_platform(self.platform) if hetero else None

    def _workload_files(self, workload: Any) -> list[str]:
        import json

        items = workload if isinstance(workload, (list, tuple)) else [workload]
        files = []
        for i, item in enumerate(items):
            if isinstance(item, dict):
                path = Path(self._tmp) / f"workload{i}.json"
                path.write_text(json.dumps(item, separators=(",", ":")) + "\n", encoding="utf-8")
                files.append(str(path))
            elif str(item).lower().endswith(".swf"):
                from coburst.platforms.info import read_platform
                from coburst.workloads.batsim_json import write_workload
                from coburst.workloads.delay import swf_to_delay_workload

                nb_res = read_platform(self.platform).nb_compute
                path = Path(self._tmp) / f"workload{i}.json"
                write_workload(swf_to_delay_workload(item, nb_res), path)
                files.append(str(path))
            else:
                files.append(str(item))
        return files

    # ------------------------------------------------------------------ episode
    def _reset_episode(self) -> None:
        self.now = 0.0
        self.completed: list[tuple[Any, float, float]] = []  # (job, start, end) of the completed jobs
        self.waited = 0.0  # waiting time of the started jobs (start - subtime, summed)
        self.nb_decisions = 0  # steps taken in this episode
        self.decision_id = 0  # decision points shown so far (a new one: a new number)
        self._n_total = 0
        self._pending: list[tuple[Any, Any]] = []  # (job, allocation) started in this decision
        self._window_jobs: list = []
        self._mask = np.zeros(self.wait_action + 1, dtype=bool)
        self._mask[-1] = True
        self._fit_known: dict = {}  # (job id, mode) -> fits, in this decision (false stays false)
        self._released_subtimes = 0.0  # sum of the submission dates of the jobs released so far
        self._n_released = 0
        self._started_subtimes = 0.0  # ... of the jobs started so far
        self._n_started = 0
        self._done_area = 0.0  # resource-seconds of the completed jobs
        self._sim = None
        self._observer.reset()

    def _abandon(self) -> None:
        """Stop the simulation thread of the current episode, if any (no outputs)."""
        thread, bridge, run = self._thread, self._bridge, self._run
        self._thread = self._bridge = self._run = None
        if run is not None:
            run.close()  # (the engine removes the partial outputs)
        if thread is None:
            return
        if thread.is_alive():
            bridge.to_sim.put(("abort",))
            thread.join()

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._abandon()
        self._reset_episode()
        self.result = None
        from coburst.adapter.agent import agent_scheduler
        from coburst.runner import _ArgumentError, add_run_arguments, light_pybatsim, preflight
        from coburst.simulator.engine import Simulator

        light_pybatsim()
        parser = _ArgumentError(prog="coburst.gym", add_help=False, allow_abbrev=False)
        add_run_arguments(parser)
        args = parser.parse_args(["agent", "-p", self.platform, *(a for w in self.workloads for a in ("-w", w)),
                                  "-e", self.export, "-q", *self.sim_args])
        args.socket_endpoint = "in-process"
        config, self._n_total = preflight(args)
        bridge = self._bridge = Bridge(self)
        scheduler = agent_scheduler(self.backend_cls.family)(bridge, self.adapter_options)
        sim = Simulator(config)
        sim.kernel.__class__ = SteppedKernel  # (pauses where the link defers its reply)
        self._kernel = sim.kernel
        self._sim = sim
        self._link = sim.link = SteppedLink(scheduler)
        self._scheduler = scheduler
        run = sim.run_steps()

        def body():
            try:
                next(run)  # the inputs are read here: a SimGrid engine is made (and must run) in this thread
                if sim.cached_platform:  # no SimGrid: the run goes on in the environment's thread
                    bridge.to_env.put(("loaded", False))
                    return
                bridge.to_env.put(("loaded", True))
                while True:
                    next(run)
            except StopIteration as stop:
                bridge.to_env.put(("done", stop.value))
            except BaseException as exc:  # noqa: BLE001 - handed to the environment's thread
                bridge.to_env.put(("error", exc))

        thread = threading.Thread(target=body, name="coburst-gym-simulation", daemon=True)
        thread.start()
        kind, value = bridge.to_env.get()
        if kind == "error":  # (an input error: nothing ran)
            thread.join()
            raise value
        self._over = False
        if value:  # the run is in SimGrid's actor, in that thread, which waits for the agent
            self._thread = thread
        else:  # the run pauses at the decision points, in this thread
            thread.join()
            bridge.stepped = True
            self._run = run
        self._next_point()
        # a simulation that ended before any decision point: one step ends the episode
        self._end_pending = self._over
        self.reward_fn.reset(self)
        return self._observation(), self._info()

    def _next_point(self) -> None:
        """Run (or wait for) the simulation to its next decision point, or its end."""
        run = self._run
        if run is not None:
            try:
                next(run)
                message = ("decide", self._bridge.asked)
            except StopIteration as stop:
                message = ("done", stop.value)
            except BaseException as exc:  # noqa: BLE001 - as the simulation thread hands it over
                message = ("error", exc)
        else:
            message = self._bridge.to_env.get()
        kind = message[0]
        if kind == "decide":
            state = self.state = message[1]
            self.now = state.now
            self.cluster = self._scheduler.cluster
            self._pending = []
            self._backend = self._bridge.backend
            self.total_units = self._backend.total_units
            self.decision_id += 1
            self._fit_known = {}
            self._observer.new_point()
            self._refresh(self._bridge.window)
            return
        self._over = True
        if self._thread is not None:
            self._thread.join()
        self._thread = self._run = None
        self._window_jobs = []
        self._mask = np.zeros(self.wait_action + 1, dtype=bool)
        self._mask[-1] = True
        if kind == "error":
            error, self._listener_error = self._listener_error, None
            raise error if error is not None else message[1]
        self.result = message[1]
        if self.state is not None:
            self.now = self.state.now

    def _visible(self, state, pending_ids) -> list:
        jobs = []
        for job in state._queue.values():
            if job.id not in pending_ids:
                jobs.append(job)
                if len(jobs) == self.window:
                    break
        return jobs

    def _anything_fits(self, state) -> bool:
        """Some job of the window can start now (simulation thread, before a decision); the
        backend of the decision is made here (``_bridge.backend``)."""
        jobs = self._visible(state, ())
        if not jobs:
            return False
        cluster = self._scheduler.cluster
        family = self.backend_cls.family
        backend = (self.backend_cls(state, cluster, self.modes, self.partners, self.speeds) if family == "cosched" else
                   self.backend_cls(state, cluster, self.host_classes) if family == "hetero" else
                   self.backend_cls(state, cluster))
        self._bridge.backend = backend
        self._bridge.window = jobs
        return backend.any_fits(jobs)

    def _refresh(self, window: list | None = None) -> None:
        """The window and the mask (``window``: the window already made, nothing started)."""
        if window is None:
            window = self._visible(self.state, {job.id for job, _ in self._pending})
        self._window_jobs = jobs = window
        fits = [False] * self.wait_action
        backend = self._backend
        known = self._fit_known  # (a start only takes resources: what did not fit still does not)
        if self.actions == "job":
            for i, job in enumerate(jobs):
                ok = known.get(job.id)
                if ok is not False:
                    ok = known[job.id] = backend.fits(job)
                fits[i] = ok
        else:
            n = len(self.choices)
            for i, job in enumerate(jobs):
                for m in range(n):
                    key = (job.id, m)
                    ok = known.get(key)
                    if ok is not False:
                        ok = known[key] = backend.fits_choice(job, m)
                    fits[n * i + m] = ok
        # wait stalls the simulation when nothing runs, nothing started and every job came
        stall = not self.state.running and not self._pending and self._n_submitted_all()
        fits.append(not (stall and any(fits)))
        self._mask = np.array(fits, dtype=bool)

    def _n_submitted_all(self) -> bool:
        return self._scheduler.nb_seen >= self._n_total

    # ------------------------------------------------------------------ step
    def action_masks(self) -> np.ndarray:
        """The valid actions (sb3-contrib's ``MaskablePPO`` reads this)."""
        return self._mask.copy()

    def step(self, action):
        ended, a = begin_step(self, action, self.wait_action + 1)
        if ended is not None:
            return ended
        wait = self.wait_action
        slot, choice = (a, None) if not self.choices else divmod(a, len(self.choices))
        if not self._mask[a]:
            if self.invalid_action == "raise":
                how = "" if choice is None else f" ({self.choices[choice]})"
                what = "wait (it would stall the simulation: nothing runs)" if a == wait else (
                    f"start window slot {slot} (empty)" if slot >= len(self._window_jobs) else
                    f"start job {self._window_jobs[slot].id}{how} (it does not fit now)")
                raise InvalidAction(f"action {a} is masked out at simulated time {self.now:.6f}: cannot {what}; "
                                    f"valid actions: {np.flatnonzero(self._mask).tolist()}")
            self.nb_decisions += 1
            truncated = self._truncate_if_due()
            return self._observation(), self.penalty, False, truncated, self._info()
        self.nb_decisions += 1
        if a < wait:
            job = self._window_jobs[slot]
            alloc = None if self.allocator is None else self.allocator(job)
            if choice is not None and alloc is None:
                alloc = self._backend.start_choice(job, choice)
            else:
                alloc = self._backend.start(job, alloc)
            self._pending.append((job, alloc))
            self._n_started += 1
            self._started_subtimes += job.subtime
            self._refresh()
            if self._mask[:-1].any():
                reward = self.reward_fn.step(self)
                truncated = self._truncate_if_due()
                return self._observation(), reward, False, truncated, self._info()
        # the decision ends: the started jobs go to the simulator
        starts, self._pending = self._pending, []
        bridge = self._bridge
        if bridge.stepped:
            decisions = bridge.started(self.backend_cls.decisions(self.now), starts, self.now)
            self._kernel.resume_value = self._link.finish(decisions)
        else:
            bridge.to_sim.put(("starts", starts))
        self._next_point()
        reward = self.reward_fn.step(self)
        terminated = self._over
        if terminated:
            reward += self.reward_fn.final(self)
            return self._observation(), reward, True, False, self._info()
        truncated = self._truncate_if_due()
        return self._observation(), reward, False, truncated, self._info()

    def _truncate_if_due(self) -> bool:
        due = ((self.max_decisions is not None and self.nb_decisions >= self.max_decisions)
               or (self.max_time is not None and self.now >= self.max_time))
        if due:
            self._abandon()
            self._over = True
        return due

    # ------------------------------------------------------------------ views
    @property
    def queue_length(self) -> int:
        """The number of waiting jobs (those started in this decision left out)."""
        if self._over or self.state is None:
            return 0
        return self._n_released - self._n_started

    @property
    def n_started(self) -> int:
        """The jobs started so far in the episode."""
        return self._n_started

    @property
    def n_jobs(self) -> int:
        """The jobs of the workload(s)."""
        return self._n_total

    def busy_area(self) -> float:
        """Resource-seconds used up to ``now`` (the completed jobs', the running ones' so far;
        node sharing: units of whole nodes)."""
        now = self.now
        return self._done_area + sum(job.res * (now - start) for job, start, _ in self.running)

    def consumed_energy(self) -> float | None:
        """Joules the platform consumed up to ``now`` (every machine; None without the energy
        model, ``sim_args=["-E"]``)."""
        power = getattr(self._sim, "power", None)
        if power is None:
            return None
        return float(power.meter.total_energy(self.now))

    def queue_wait(self) -> float:
        """The waiting time the waiting jobs accrued up to ``now``, summed (O(1))."""
        if self._over or self.state is None:
            return 0.0
        return (self._n_released - self._n_started) * self.now - (self._released_subtimes - self._started_subtimes)

    @property
    def queue(self) -> list:
        """The waiting jobs (submission order), those started in this decision left out."""
        if self._over or self.state is None:
            return []
        pending_ids = {job.id for job, _ in self._pending}
        return [job for job in self.state._queue.values() if job.id not in pending_ids]

    @property
    def running(self) -> list:
        """``(job, start, allocation)`` of the running jobs and of those started in this decision."""
        if self._over or self.state is None:
            return []
        runs = [(r.job, r.start, getattr(r, "alloc", None) or getattr(r, "placement", None))
                for r in self.state.running.values()]
        return runs + [(job, self.now, alloc) for job, alloc in self._pending]

    def _observation(self):
        return self._observer.observe()

    def slot_fits(self) -> np.ndarray:
        """Per window slot: some action starting its job is valid now."""
        fits = self._mask[:-1]
        return fits if not self.choices else fits.reshape(self.window, len(self.choices)).any(axis=1)

    def _info(self) -> dict:
        return {"action_mask": self._mask.copy(), "now": self.now, "decision": self.decision_id,
                "window": [job.id for job in self._window_jobs]}

    def close(self) -> None:
        self._abandon()
        self._over = True
        if self._tmp is not None:
            self._scratch()
            self._tmp = None
        super().close()
