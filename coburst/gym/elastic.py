"""``ElasticEnv``: a Gymnasium environment whose agent starts and resizes elastic jobs.

The simulation is the simulator's elastic mode (:mod:`coburst.simulator.elastic`) run by
:class:`~coburst.adapter.elastic.ElasticLink`, exactly as ``coburst run equipartition`` runs
it, with an elastic policy that hands each scheduler message to the agent: **a step is one
decision inside one message** (start a job, resize a job), and the action *end* sends the
message's decisions to the simulator, which runs on to its next message.  The decisions go
through :class:`~coburst.policies.elastic.base.Decisions`, so the policy-side checks and the
simulator's own apply.  Messages where the agent can do nothing (no job of the window can
start, no job at a scheduling point can be resized) are passed without asking it, and a
message ends by itself once *end* is the only valid action.  Before the agent is asked, the
waiting jobs whose smallest size exceeds the platform's compute resources are rejected
(``REJECT_JOB``: they could never start), as the built-in elastic policies reject them.

**Actions** -- ``Discrete(window x B + points x B + 1)``, ``B`` size buckets (``sizes=``):

* ``k x B + b`` (``k < window``): start the ``k``-th waiting job of the window (the waiting
  jobs in submission order, those started in this message left out) on the size of bucket
  ``b``, on the lowest free compute resources;
* ``window x B + k x B + b`` (``k < points``): resize the ``k``-th running job at a
  scheduling point now (start order) to the size of bucket ``b``: a shrink gives back its
  highest resources, a growth takes the lowest free ones (``Decisions.resize_to``); the jobs
  at a point beyond the ``points`` slots go on at their size;
* ``window x B + points x B`` (the last, ``end_action``): end the message.

Sizes: ``sizes=B`` (an integer, default 4) gives the fractions ``0, 1/(B-1), ..., 1`` (``B =
1``: ``1``); a sequence gives fractions in ``[0, 1]`` of one's own; bucket ``f`` of a range
``[lo, hi]`` is the size ``lo + round(f x (hi - lo))`` (halves up), so buckets may share a
size.  ``sizes="all"`` gives one bucket per size: bucket ``b`` is ``b + 1`` nodes (``B`` = the
platform's compute resources), valid only inside the range -- every decision of a policy is
then an action.  The range of a start is the job's start sizes (``[num_nodes_min,
num_nodes_max]`` for moldable, malleable and adaptive jobs; ``res`` for rigid and evolving
ones); of a resize, ``[num_nodes_min, num_nodes_max]`` for malleable and adaptive jobs and,
for an evolving job asking for ``requested`` nodes at a point where it had ``n``, ``[min(n,
requested), max(n, requested)]``: ``requested`` grants, between clips, and not resizing
refuses (the simulator's rule).  A start is valid when its size is free; a resize when the
size differs from the job's current one and its growth is free (a job may be resized more
than once in a message, the same way only -- growing further, or shrinking further -- so that
every message ends after finitely many steps: one reconfiguration, from its size at the point
to the last one).
*End* is valid unless it would stall the simulation (nothing runs, every job was submitted
and jobs wait).  ``action_masks()`` and ``info["action_mask"]`` mark the valid actions; an
action outside the mask raises :class:`~coburst.gym.env.InvalidAction`, or with
``invalid_action="penalty"`` gets the reward ``penalty`` and changes nothing.

**Observations** (``observation="dict"``; ``"flat"``: the same numbers as one ``Box``, the
keys in Gymnasium's order ``cluster``, ``jobs``, ``points``, each row by row).  Every number is
in ``[0, 1]``: a time ``t`` as ``t / (t + time_scale)`` (no walltime: 1), a size as a share of
the platform's ``N`` compute resources; empty slots are zeros::

    cluster (4,)              free, queue, running, points
    jobs    (window, 12)      present, wait, size, min, max, walltime,
                              rigid, moldable, malleable, evolving, adaptive, fits
    points  (points, 11)      present, size, min, max, requested, malleable, evolving,
                              adaptive, progress, elapsed, resized

``cluster``: the free compute resources over ``N`` (after this message's decisions so far), the
waiting jobs ``n`` as ``n / (n + window)``, the running jobs over ``N``, the jobs at a point ``p``
as ``p / (p + points)``.  ``jobs``: the waiting time so far, ``res``, the bounds
``num_nodes_min`` and ``num_nodes_max`` (a rigid job: ``res``), the walltime, the kind (one-hot)
and whether some start of it is valid now.  ``points``: the current size, the bounds, the size
an evolving or adaptive job asks for (0: none), the kind, the share of its iterations done,
the time since its start, and whether it was resized in this message.  The column names are
:data:`JOB_FEATURES`, :data:`POINT_FEATURES` and :data:`CLUSTER_FEATURES`.

**Rewards**: those of :mod:`coburst.gym.rewards` that read the run's jobs (``"waiting-time"``,
the default, and ``"-sparse"``, ``"bounded-slowdown"`` and ``"-dense"``, ``"utilisation"`` and
``"-sparse"``, ``"makespan"`` and ``"-dense"``, ``"none"``, their weighted sums, objects of one's
own): the environment gives ``now``, ``queue``, ``running``, ``completed`` (a job's end is the
date of the message that told it), ``waited``, ``n_started``, ``n_jobs``, ``total_units``,
``busy_area()`` (the node-seconds used, each job at its size of the time) and ``result``.
``"energy"`` (the elastic mode runs without ``-E``) and ``"baseline-gap"`` are refused.

**Episodes** run a workload (a Batsim JSON file with ``elastic`` jobs, a document or a list
of files) on a platform: ``terminated`` when the simulation ended (the outputs are written:
``env.result``, ``<export>_jobs.csv`` and ``<export>_reconfigurations.csv``); ``truncated``
when ``max_steps`` steps were taken (the simulation is abandoned, no outputs).  The dynamics
are deterministic (``reset(seed=...)`` seeds ``np_random`` only).

**Threads.**  The simulation runs in a thread of its own, which waits in the policy's
``schedule`` while the agent decides; :meth:`~ElasticEnv.reset` and :meth:`~ElasticEnv.close`
abandon a running episode and join its thread.  SimGrid allows one engine per process: a
run on a platform of coburst's platform cache (:mod:`coburst.simulator.platform_cache`: the
first episode on a platform puts it there) loads no SimGrid, so episodes follow each other in
one process.  ``forward_profiles=True`` forwards the jobs' profiles on submission (the jobs'
models in ``state``), as for a policy that reads them.
"""

from __future__ import annotations

import json
import math
import queue
import threading
from pathlib import Path
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from coburst.gym.bridge import Abort
from coburst.gym.env import InvalidAction, begin_step, scratch_dir
from coburst.gym.rewards import BaselineGap, Energy, make_reward
from coburst.policies.elastic.base import Decisions, EJob, ElasticPolicy, ElasticState

__all__ = ["ElasticEnv", "JOB_FEATURES", "POINT_FEATURES", "CLUSTER_FEATURES", "KINDS"]

#: the job kinds, in the order of the one-hot columns of ``jobs``
KINDS = ("rigid", "moldable", "malleable", "evolving", "adaptive")
#: the columns of ``observation["jobs"]``
JOB_FEATURES = ("present", "wait", "size", "min", "max", "walltime") + KINDS + ("fits",)
#: the columns of ``observation["points"]``
POINT_FEATURES = ("present", "size", "min", "max", "requested", "malleable", "evolving", "adaptive", "progress",
                  "elapsed", "resized")
#: the entries of ``observation["cluster"]``
CLUSTER_FEATURES = ("free", "queue", "running", "points")


class _Hand:
    """One episode's hand-over between the simulation thread and the environment."""

    def __init__(self):
        self.to_env: queue.SimpleQueue = queue.SimpleQueue()
        self.to_sim: queue.SimpleQueue = queue.SimpleQueue()
        self.sim = None
        self.link = None


class _AgentPolicy(ElasticPolicy):
    """The elastic policy of an episode (simulation thread): each message goes to the agent."""

    family = "gym-agent"

    def __init__(self, env: "ElasticEnv", hand: _Hand):
        super().__init__()
        self.env, self.hand = env, hand

    def schedule(self, state: ElasticState, decisions: Decisions) -> None:
        env = self.env
        env._begin_message(state, decisions, self.hand)
        if env._mask[:-1].any():
            self.hand.to_env.put(("decide",))
            if self.hand.to_sim.get()[0] == "abort":
                raise Abort("episode abandoned")
        env._decisions = None


class ElasticEnv(gym.Env):
    """Start and resize elastic jobs at the elastic mode's messages (module doc)."""

    metadata = {"render_modes": []}

    def __init__(self, workload: Any, platform: str, *, window: int = 8, points: int | None = None,
                 sizes: int | str | Sequence[float] = 4, reward: Any = "waiting-time", max_steps: int | None = None,
                 invalid_action: str = "raise", penalty: float = -1.0, observation: str = "dict",
                 time_scale: float = 3600.0, export: str | None = None, forward_profiles: bool = False):
        for name, value in (("window", window), ("points", window if points is None else points)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if invalid_action not in ("raise", "penalty"):
            raise ValueError(f"invalid_action must be 'raise' or 'penalty', got {invalid_action!r}")
        if observation not in ("dict", "flat"):
            raise ValueError(f"observation must be 'dict' or 'flat', got {observation!r}")
        if max_steps is not None and max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps!r}")
        from coburst.platforms.info import read_platform

        self.platform = str(platform)
        #: the platform's compute resources
        self.n_compute = self.total_units = read_platform(self.platform).nb_compute
        self.window, self.points = window, window if points is None else points
        #: the size fractions of the buckets (None: ``sizes="all"``, bucket ``b`` is ``b + 1`` nodes)
        self.fractions = _fractions(sizes)
        self.n_buckets = self.n_compute if self.fractions is None else len(self.fractions)
        self.reward_fn = make_reward(reward)
        if isinstance(self.reward_fn, (BaselineGap, Energy)):
            raise ValueError(f"reward {self.reward_fn.name!r} is not available on elastic runs")
        self.max_steps, self.invalid_action, self.penalty = max_steps, invalid_action, float(penalty)
        self.time_scale = float(time_scale)
        self.forward_profiles = bool(forward_profiles)
        #: objects told of every message (simulation thread), before anything is decided:
        #: ``on_message(state)`` (:class:`coburst.gym.elastic_expert.ElasticExpert`)
        self.listeners: list[Any] = []
        self._tmp = scratch_dir(self, "coburst-gym-elastic-")
        self.workloads = self._workload_files(workload)
        self.export = export or str(Path(self._tmp) / "episode")
        B = self.n_buckets
        #: the first resize action (``window x B``)
        self.resize_base = self.window * B
        #: the action ending the message (the last)
        self.end_action = self.resize_base + self.points * B
        self.action_space = spaces.Discrete(self.end_action + 1)
        box = lambda *shape: spaces.Box(0.0, 1.0, shape, dtype=np.float32)  # noqa: E731
        self._dict_space = spaces.Dict({"cluster": box(len(CLUSTER_FEATURES)),
                                        "jobs": box(self.window, len(JOB_FEATURES)),
                                        "points": box(self.points, len(POINT_FEATURES))})
        self.observation_kind = observation
        self.observation_space = (self._dict_space if observation == "dict"
                                  else spaces.flatten_space(self._dict_space))
        self._bucket_sizes: dict[tuple[int, int], np.ndarray] = {}
        self._hand: _Hand | None = None
        self._thread: threading.Thread | None = None
        self._thread_error: BaseException | None = None
        self.result = None
        self._reset_episode()
        self._over = True

    def _workload_files(self, workload: Any) -> list[str]:
        files = []
        for i, item in enumerate(workload if isinstance(workload, (list, tuple)) else [workload]):
            if isinstance(item, dict):  # (a document: written to the environment's folder)
                (path := Path(self._tmp) / f"workload{i}.json").write_text(json.dumps(item), encoding="utf-8")
                item = path
            files.append(str(item))
        return files

    # ------------------------------------------------------------------ sizes and actions
    def bucket_size(self, b: int, lo: int, hi: int) -> int | None:
        """The size of bucket ``b`` in the range ``[lo, hi]`` (None: none there)."""
        if self.fractions is None:
            return b + 1 if lo <= b + 1 <= hi else None
        return lo + math.floor(self.fractions[b] * (hi - lo) + 0.5)

    def _sizes(self, lo: int, hi: int) -> np.ndarray:
        """The sizes of the buckets in ``[lo, hi]`` (0: none), an array."""
        sizes = self._bucket_sizes.get((lo, hi))
        if sizes is None:
            sizes = self._bucket_sizes[(lo, hi)] = np.array([self.bucket_size(b, lo, hi) or 0
                                                             for b in range(self.n_buckets)])
        return sizes

    @staticmethod
    def resize_range(job: EJob) -> tuple[int, int] | None:
        """The sizes a job at a point may be resized to (None: none)."""
        if job.shrinkable:
            return job.num_nodes_min, job.num_nodes_max
        requested = (job.point or {}).get("requested")
        if job.kind == "evolving" and requested is not None:
            n = int(job.point["num_nodes"])
            return min(n, requested), max(n, requested)
        return None

    def start_action(self, slot: int, bucket: int) -> int:
        return slot * self.n_buckets + bucket

    def resize_action(self, slot: int, bucket: int) -> int:
        return self.resize_base + slot * self.n_buckets + bucket

    def bucket_of(self, size: int, lo: int, hi: int) -> int | None:
        """The first bucket of size ``size`` in ``[lo, hi]`` (None: no bucket has it)."""
        for b in range(self.n_buckets):
            if self.bucket_size(b, lo, hi) == size:
                return b
        return None

    # ------------------------------------------------------------------ episode
    def _reset_episode(self) -> None:
        self.now = 0.0
        self.state: ElasticState | None = None
        self._decisions: Decisions | None = None
        self.completed: list[tuple[EJob, float, float]] = []  # (job, start, end) of the ended jobs
        self.waited = 0.0  # the started jobs' waiting times, summed
        self.nb_steps = 0
        self.message_id = 0  # the messages shown to the agent so far
        self.n_jobs = 0
        self._n_released = self._n_started = self._n_rejected = 0
        self._released_subtimes = self._left_subtimes = 0.0  # (left: started or rejected)
        #: job id -> [job, start, size, since, node-seconds before since] of the running jobs
        self._live: dict[str, list] = {}
        self._done_area = 0.0
        self._window_jobs: list[EJob] = []
        self._point_jobs: list[EJob] = []
        self._mask = np.zeros(self.end_action + 1, dtype=bool)
        self._mask[-1] = True
        self._end_pending = False

    def _abandon(self) -> None:
        """Stop the simulation thread of the current episode, if any (no outputs)."""
        thread, hand = self._thread, self._hand
        self._thread = self._hand = None
        if thread is not None and thread.is_alive():
            hand.to_sim.put(("abort",))
            thread.join()

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._abandon()
        self._reset_episode()
        self.result = None
        from coburst.adapter.elastic import ElasticLink
        from coburst.simulator.engine import Simulator, SimulatorConfig
        from coburst.simulator.options import DEFAULTS

        Path(self.export).parent.mkdir(parents=True, exist_ok=True)
        config = SimulatorConfig(platform=self.platform, workloads=list(self.workloads), export_prefix=self.export,
                                 elastic=True)
        if self.forward_profiles:
            config.batsim_options = {**DEFAULTS, "forward_profiles_on_submission": True}
        hand = self._hand = _Hand()

        def body():
            try:
                sim = hand.sim = Simulator(config)
                sim.link = hand.link = ElasticLink(_AgentPolicy(self, hand))
                hand.to_env.put(("done", sim.run()))
            except BaseException as exc:  # noqa: BLE001 - handed to the environment's thread
                hand.to_env.put(("error", exc))

        self._thread = threading.Thread(target=body, name="coburst-gym-elastic", daemon=True)
        self._over = False
        self._thread.start()
        self._next_message()
        self._end_pending = self._over  # (nothing to decide at all: one step ends the episode)
        self.reward_fn.reset(self)
        return self._observation(), self._info()

    def _next_message(self) -> None:
        """Wait for the simulation's next message to the agent, or its end."""
        kind, *value = self._hand.to_env.get()
        if kind == "decide":
            self.message_id += 1
            return
        self._over = True
        self._thread.join()
        self._thread = None
        self._window_jobs, self._point_jobs = [], []
        self._mask = np.zeros(self.end_action + 1, dtype=bool)
        self._mask[-1] = True
        if kind == "error":
            error, self._thread_error = self._thread_error, None
            raise error if error is not None else value[0]
        self.result = value[0]
        self.now = self._hand.link.state.now
        for jid in list(self._live):  # (ended in the last message)
            self._job_ended(jid)
        self.state = None

    # ------------------------------------------------------------------ simulation thread
    def _begin_message(self, state: ElasticState, decisions: Decisions, hand: _Hand) -> None:
        """A message arrived (simulation thread): bookkeeping, listeners, rejects, the mask."""
        self.state, self._decisions, self.now = state, decisions, state.now
        if not self.n_jobs:
            self.n_jobs = sum(wl.nb_jobs for wl in hand.sim.workloads.values())
            if len(state.compute) != self.n_compute:
                self._thread_error = ValueError(f"the simulation has {len(state.compute)} compute resources, "
                                                f"the platform file {self.n_compute}")
                raise Abort("compute resources")
        for jid in [jid for jid in self._live if jid not in state.running]:
            self._job_ended(jid)
        for job in state.submitted:
            self._n_released += 1
            self._released_subtimes += job.subtime
        try:
            for listener in self.listeners:
                listener.on_message(state)
        except Exception as exc:  # raised again in the environment's thread
            self._thread_error = exc
            raise Abort("a listener failed") from None
        for job in state.too_wide():
            decisions.reject(job)
            self._n_rejected += 1
            self._left_subtimes += job.subtime
        self._refresh()

    def _job_ended(self, jid: str) -> None:
        job, start, size, since, area = self._live.pop(jid)
        self._done_area += area + size * (self.now - since)
        self.completed.append((job, start, self.now))

    def _refresh(self) -> None:
        """The window, the jobs at a point and the mask."""
        st, B = self.state, self.n_buckets
        free = len(st.free)
        self._window_jobs = st.queue[:self.window]
        self._point_jobs = st.at_points()[:self.points]
        mask = np.zeros(self.end_action + 1, dtype=bool)
        for k, job in enumerate(self._window_jobs):
            sizes = self._sizes(*job.start_sizes())
            mask[k * B:(k + 1) * B] = (sizes > 0) & (sizes <= free)
        for k, job in enumerate(self._point_jobs):
            bounds = self.resize_range(job)
            if bounds is not None:
                change = self._sizes(*bounds) - job.size
                way = job.size - job.point["num_nodes"]  # (resized in this message: the same way only)
                at = self.resize_base + k * B
                mask[at:at + B] = (change > -job.size) & (change != 0) & (change <= free) & (change * way >= 0)
        stall = not st.running and st.queue and self._n_released >= self.n_jobs
        mask[-1] = not (stall and mask[:-1].any())
        self._mask = mask

    # ------------------------------------------------------------------ step
    def action_masks(self) -> np.ndarray:
        """The valid actions (sb3-contrib's ``MaskablePPO`` reads this)."""
        return self._mask.copy()

    def describe(self, action: int) -> str:
        """What ``action`` does, in words."""
        a, B = int(action), self.n_buckets
        if a == self.end_action:
            return "end the message"
        if a < self.resize_base:
            return f"start window slot {a // B} on size bucket {a % B}"
        return f"resize point slot {(a - self.resize_base) // B} to size bucket {(a - self.resize_base) % B}"

    def step(self, action):
        ended, a = begin_step(self, action, self.end_action + 1)
        if ended is not None:
            return ended
        self.nb_steps += 1
        if not self._mask[a]:
            if self.invalid_action == "raise":
                self.nb_steps -= 1
                raise InvalidAction(f"action {a} ({self.describe(a)}) is masked out at simulated time "
                                    f"{self.now:.6f} ({self._why_not(a)}); valid actions: "
                                    f"{np.flatnonzero(self._mask).tolist()}")
            return self._observation(), self.penalty, False, self._truncate_if_due(), self._info()
        if a != self.end_action:
            self._apply(a)
            self._refresh()
        if a == self.end_action or not self._mask[:-1].any():
            self._hand.to_sim.put(("end",))
            self._next_message()
        reward = self.reward_fn.step(self)
        if self._over:
            return self._observation(), reward + self.reward_fn.final(self), True, False, self._info()
        return self._observation(), reward, False, self._truncate_if_due(), self._info()

    def _apply(self, a: int) -> None:
        d, st, B, now = self._decisions, self.state, self.n_buckets, self.now
        if a < self.resize_base:
            job = self._window_jobs[a // B]
            size = self.bucket_size(a % B, *job.start_sizes())
            d.start(job, sorted(st.free)[:size])
            self.waited += now - job.subtime
            self._n_started += 1
            self._left_subtimes += job.subtime
            self._live[job.id] = [job, now, size, now, 0.0]
            return
        slot, b = divmod(a - self.resize_base, B)
        job = self._point_jobs[slot]
        d.resize_to(job, self.bucket_size(b, *self.resize_range(job)))
        live = self._live[job.id]
        live[4] += live[2] * (now - live[3])
        live[2], live[3] = job.size, now

    def _why_not(self, a: int) -> str:
        B = self.n_buckets
        if a == self.end_action:
            return "it would stall the simulation: nothing runs and every job was submitted"
        if a < self.resize_base:
            slot, b = divmod(a, B)
            if slot >= len(self._window_jobs):
                return "the window slot is empty"
            job = self._window_jobs[slot]
            size = self.bucket_size(b, *job.start_sizes())
            return (f"job {job.id} starts on {job.start_sizes()}, not on bucket {b}" if size is None else
                    f"job {job.id} on {size} resources, {len(self.state.free)} free")
        slot, b = divmod(a - self.resize_base, B)
        if slot >= len(self._point_jobs):
            return "no job at a scheduling point in that slot"
        job = self._point_jobs[slot]
        bounds = self.resize_range(job)
        if bounds is None:
            return f"job {job.id} ({job.kind}) cannot be resized now"
        size = self.bucket_size(b, *bounds)
        way = job.size - job.point["num_nodes"]
        return (f"job {job.id} resizes within {bounds}, not on bucket {b}" if size is None else
                f"job {job.id} already has {size} resources" if size == job.size else
                f"job {job.id} went from {job.point['num_nodes']} to {job.size} resources in this message: "
                f"it may only {'grow' if way > 0 else 'shrink'} further" if (size - job.size) * way < 0 else
                f"job {job.id} would grow from {job.size} to {size}, {len(self.state.free)} free")

    def _truncate_if_due(self) -> bool:
        if self.max_steps is None or self.nb_steps < self.max_steps:
            return False
        self._abandon()
        self._over = True
        self.state = None
        return True

    # ------------------------------------------------------------------ views (rewards)
    @property
    def queue(self) -> list[EJob]:
        """The waiting jobs (submission order)."""
        return list(self.state.queue) if self.state is not None and not self._over else []

    @property
    def queue_length(self) -> int:
        return len(self.state.queue) if self.state is not None and not self._over else 0

    @property
    def running(self) -> list[tuple[EJob, float, list[int]]]:
        """``(job, start, allocation)`` of the running jobs (those started in this message too)."""
        if self.state is None or self._over:
            return []
        return [(job, job.start, list(job.alloc)) for job in self.state.running.values()]

    @property
    def n_started(self) -> int:
        return self._n_started

    def queue_wait(self) -> float:
        """The waiting time the waiting jobs accrued up to ``now``, summed."""
        if self._over or self.state is None:
            return 0.0
        waiting = self._n_released - self._n_started - self._n_rejected
        return waiting * self.now - (self._released_subtimes - self._left_subtimes)

    def busy_area(self) -> float:
        """Node-seconds used up to ``now`` (each job at its size of the time)."""
        now = self.now
        return self._done_area + sum(area + size * (now - since) for _, _, size, since, area in self._live.values())

    def consumed_energy(self) -> None:
        return None

    def progress(self, job: EJob) -> float:
        """The share of a running job's iterations done."""
        run = getattr(self._hand.sim.jobs.get(job.id), "run", None) if self._hand is not None else None
        total = getattr(run, "total_iterations", 0)
        return run.iterations_done / total if total else 0.0

    # ------------------------------------------------------------------ observation
    def _observation(self):
        obs = {key: np.zeros(space.shape, dtype=np.float32) for key, space in self._dict_space.spaces.items()}
        st, N = self.state, float(self.n_compute)
        if self._over or st is None:
            obs["cluster"][0] = 1.0
        else:
            scale, now = self.time_scale, self.now
            time = lambda t: t / (t + scale) if t >= 0 else 1.0  # noqa: E731
            n_queue, n_points = len(st.queue), len(st.at_points())
            obs["cluster"][:] = (len(st.free) / N, n_queue / (n_queue + self.window), len(st.running) / N,
                                 n_points / (n_points + self.points))
            B, mask = self.n_buckets, self._mask
            for k, job in enumerate(self._window_jobs):
                row = obs["jobs"][k]
                row[:6] = (1.0, time(now - job.subtime), job.res / N, job.num_nodes_min / N, job.num_nodes_max / N,
                           time(job.walltime))
                row[6 + KINDS.index(job.kind)] = 1.0
                row[11] = float(mask[k * B:(k + 1) * B].any())
            resized = self._decisions.resized if self._decisions is not None else ()
            for k, job in enumerate(self._point_jobs):
                row = obs["points"][k]
                requested = job.point.get("requested")
                row[:5] = (1.0, job.size / N, job.num_nodes_min / N, job.num_nodes_max / N,
                           0.0 if requested is None else requested / N)
                row[5 + ("malleable", "evolving", "adaptive").index(job.kind)] = 1.0
                row[8:] = (self.progress(job), time(now - job.start), float(job.id in resized))
        if self.observation_kind == "flat":
            return spaces.flatten(self._dict_space, obs)
        return obs

    def _info(self) -> dict:
        return {"action_mask": self._mask.copy(), "now": self.now, "message": self.message_id,
                "window": [job.id for job in self._window_jobs], "points": [job.id for job in self._point_jobs]}

    def close(self) -> None:
        self._abandon()
        self._over = True
        if self._tmp is not None:
            self._scratch()
            self._tmp = None
        super().close()


def _fractions(sizes: Any) -> tuple[float, ...] | None:
    if isinstance(sizes, str) and sizes == "all":
        return None
    if isinstance(sizes, int) and not isinstance(sizes, bool):
        if sizes < 1:
            raise ValueError(f"sizes must be >= 1, got {sizes}")
        return (1.0,) if sizes == 1 else tuple(i / (sizes - 1) for i in range(sizes))
    if isinstance(sizes, str):
        raise ValueError(f"sizes must be an integer, 'all' or a sequence of fractions, got {sizes!r}")
    fractions = tuple(float(f) for f in sizes)
    if not fractions or any(not 0.0 <= f <= 1.0 for f in fractions):
        raise ValueError(f"sizes: fractions in [0, 1] expected, got {sizes!r}")
    return fractions
