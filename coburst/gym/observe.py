"""The observations of :class:`~coburst.gym.env.BatsimExactEnv` (its feature sets).

Every number is in ``[0, 1]``: times as ``t / (t + time_scale)`` (``inf``: 1), counts as
shares.  ``features="basic"`` (default)::

    jobs     (window, 6)  present, wait, walltime, size, bb, fits
    cluster  (3,)         free_nodes, free_bb, queue

``features="extended"`` adds two job columns and the availability profile::

    jobs     (window, 8)  ... fits, user_queue, user_running
    profile  (H, 2)       free compute share and free burst-buffer share at now + h, h in horizons

and on node-sharing platforms (``coburst platform cosched``)::

    corun    (window, 3)  fits compact, fits spread, co-run share of its spread placement

with ``actions="partner"`` (any feature set), one row per co-run partner slot::

    partners (P, 3)       present, its nodes a spread job could share / nodes, its nodes / nodes

(with ``partner_order="speed"`` the partners are ranked for each job: ``partners`` is then
``(window, P, 3)``, the rows of window slot ``k`` those of its job's partner slots)

and on heterogeneous platforms (``coburst platform hetero``), one row per host class
(:mod:`coburst.gym.hetero`)::

    classes  (C, 4)       idle cores share, speed, power, widest idle node

``user_queue`` is the share of the waiting jobs (the window's and beyond) whose ``user``
(the workload's job field; absent: no user) is the job's, ``user_running`` the share of the
compute resources used by that user's running jobs (0 for a job without user).  The profile
counts the running jobs (and those started in this decision) at their expected ends (start
+ walltime): free compute nodes (node sharing: units of whole nodes) and free burst-buffer
bytes over the platform's total.  ``corun``'s third column: of the ``2 m`` nodes a spread
placement of the job would take now (index order), the share already running one spread
job -- its co-run partners (0 when it cannot spread).

The rows of the window jobs' constant features are computed once per job.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from gymnasium import spaces

__all__ = ["JOB_FEATURES", "CLUSTER_FEATURES", "EXTENDED_JOB_FEATURES", "PROFILE_FEATURES", "CORUN_FEATURES",
           "PARTNER_FEATURES",
           "DEFAULT_HORIZONS", "Observer"]

#: the columns of ``observation["jobs"]`` (``features="basic"``)
JOB_FEATURES = ("present", "wait", "walltime", "size", "bb", "fits")
#: the columns of ``observation["jobs"]`` with ``features="extended"``
EXTENDED_JOB_FEATURES = JOB_FEATURES + ("user_queue", "user_running")
#: the entries of ``observation["cluster"]``
CLUSTER_FEATURES = ("free_nodes", "free_bb", "queue")
#: the columns of ``observation["profile"]`` (one row per horizon)
PROFILE_FEATURES = ("free_nodes", "free_bb")
#: the columns of ``observation["corun"]`` (node-sharing platforms, ``features="extended"``)
CORUN_FEATURES = ("fits_compact", "fits_spread", "corun_share")
#: the columns of ``observation["partners"]`` (``actions="partner"``, one row per partner slot)
PARTNER_FEATURES = ("present", "shareable_nodes", "nodes")
#: the default horizons of the availability profile, seconds after now
DEFAULT_HORIZONS = (0.0, 900.0, 3600.0, 4 * 3600.0, 24 * 3600.0)


def _user(job: Any) -> Any:
    extra = job.extra
    return extra.get("user") if isinstance(extra, dict) else None


class Observer:
    """Builds the observation space and the observations of one environment."""

    def __init__(self, env: Any, features: str, horizons: tuple):
        if features not in ("basic", "extended"):
            raise ValueError(f"features must be 'basic' or 'extended', got {features!r}")
        self.env = env
        self.extended = features == "extended"
        self.horizons = np.asarray(horizons, dtype=float)
        if self.extended and (not len(self.horizons) or (self.horizons < 0).any()):
            raise ValueError(f"horizons must be seconds >= 0, got {horizons!r}")
        self.corun = self.extended and env.backend_cls.family == "cosched"
        self.classes = self.extended and env.backend_cls.family == "hetero"
        self.partners = env.partners
        #: the partners are ranked per job (``partner_order="speed"``): one table per window slot
        self.per_job = getattr(env, "partner_order", "submission") == "speed"
        w = env.window
        cols = EXTENDED_JOB_FEATURES if self.extended else JOB_FEATURES
        subs = {"jobs": spaces.Box(0.0, 1.0, (w, len(cols)), dtype=np.float32),
                "cluster": spaces.Box(0.0, 1.0, (len(CLUSTER_FEATURES),), dtype=np.float32)}
        if self.extended:
            subs["profile"] = spaces.Box(0.0, 1.0, (len(self.horizons), len(PROFILE_FEATURES)), dtype=np.float32)
        if self.corun:
            subs["corun"] = spaces.Box(0.0, 1.0, (w, len(CORUN_FEATURES)), dtype=np.float32)
        if self.partners:
            subs["partners"] = spaces.Box(0.0, 1.0, self._partner_shape(env), dtype=np.float32)
        if self.classes:
            from coburst.gym.hetero import CLASS_FEATURES

            subs["classes"] = spaces.Box(0.0, 1.0, (len(env.host_classes), len(CLASS_FEATURES)), dtype=np.float32)
        self.dict_space = spaces.Dict(subs)
        self.keys = tuple(self.dict_space.spaces)  # (gymnasium's order: flatten's)
        self.ncols = len(cols)
        self._static: dict[str, tuple] = {}
        self._point = None

    # ------------------------------------------------------------------ episode
    def reset(self) -> None:
        self._static = {}
        self._point = None

    def new_point(self) -> None:
        """A decision point: what stays the same until the next one (running jobs, users)."""
        env = self.env
        backend = env._backend
        running = [r for r in env.state.running.values()]
        self._busy = sum(backend.units(r.job) for r in running)
        self._bb_used = sum(backend.bb_bytes(r.job) for r in running)
        self._point = None
        if not self.extended:
            return
        self._ends = [r.expected_end for r in running]
        self._units = [backend.units(r.job) for r in running]
        self._bbs = [backend.bb_bytes(r.job) for r in running]
        users: dict[Any, int] = {}
        for r in running:
            u = _user(r.job)
            if u is not None:
                users[u] = users.get(u, 0) + backend.units(r.job)
        self._user_running = users

    def _row(self, job: Any) -> tuple:
        row = self._static.get(job.id)
        if row is None:
            backend, scale = self.env._backend, self.env.time_scale
            wall = job.walltime
            row = self._static[job.id] = (job.subtime, 1.0 if math.isinf(wall) else wall / (wall + scale),
                                          backend.size(job), backend.bb(job))
        return row

    # ------------------------------------------------------------------ observation
    def observe(self) -> Any:
        env = self.env
        w = env.window
        obs = {"jobs": np.zeros((w, self.ncols), dtype=np.float32),
               "cluster": np.zeros(len(CLUSTER_FEATURES), dtype=np.float32)}
        if self.extended:
            obs["profile"] = np.zeros((len(self.horizons), len(PROFILE_FEATURES)), dtype=np.float32)
        if self.corun:
            obs["corun"] = np.zeros((w, len(CORUN_FEATURES)), dtype=np.float32)
        if self.classes:
            obs["classes"] = np.zeros(self.dict_space["classes"].shape, dtype=np.float32)
        if self.partners:
            obs["partners"] = np.zeros(self.dict_space["partners"].shape, dtype=np.float32)
        if not env._over and env.state is not None:
            self._fill(obs)
        if env.observation_kind == "flat":
            return np.concatenate([obs[k].ravel() for k in self.keys])
        return {k: obs[k] for k in self.keys}  # (the space's order)

    def _fill(self, obs: dict) -> None:
        env = self.env
        backend = env._backend
        now, scale = env.now, env.time_scale
        window = env._window_jobs
        pending = env._pending
        n = len(window)
        if n:
            rows = np.array([self._row(job) for job in window])
            jobs = obs["jobs"]
            jobs[:n, 0] = 1.0
            wait = np.maximum(now - rows[:, 0], 0.0)
            jobs[:n, 1] = wait / (wait + scale)
            jobs[:n, 2:5] = rows[:, 1:4]
            jobs[:n, 5] = env.slot_fits()[:n]
        busy = self._busy + sum(backend.units(job) for job, _ in pending)
        used_bb = self._bb_used + sum(backend.bb_bytes(job) for job, _ in pending)
        total, total_bb = backend.total_units, backend.total_bb
        queued = env.queue_length
        obs["cluster"][:] = (max(total - busy, 0) / total, max(total_bb - used_bb, 0) / total_bb if total_bb else 1.0,
                             queued / (queued + env.window))
        if self.partners:
            if self.per_job:
                for k, job in enumerate(window):
                    self._partner_rows(obs["partners"][k], backend.partners(job))
            else:
                self._partner_rows(obs["partners"], backend.partners())
        if not self.extended:
            return
        self._extended(obs, window, pending, total, total_bb)

    def _partner_rows(self, rows: np.ndarray, partners: list) -> None:
        env = self.env
        n = env._backend.cluster.n
        by_handle = env.state.by_handle
        for i, (handle, nodes) in enumerate(partners):
            job = by_handle.get(handle)
            rows[i] = (1.0, len(nodes) / n, 0.0 if job is None else job.nodes * 2 / n)

    def _partner_shape(self, env: Any) -> tuple[int, ...]:
        """``(P, 3)``; with ``partner_order="speed"`` (partners ranked per job) ``(window, P, 3)``."""
        shape = (self.partners, len(PARTNER_FEATURES))
        return (env.window, *shape) if self.per_job else shape

    def _extended(self, obs: dict, window: list, pending: list, total: int, total_bb: int) -> None:
        env = self.env
        backend = env._backend
        now = env.now
        ends = np.array(self._ends + [now + job.walltime for job, _ in pending])
        units = np.array(self._units + [backend.units(job) for job, _ in pending], dtype=float)
        bbs = np.array(self._bbs + [backend.bb_bytes(job) for job, _ in pending], dtype=float)
        at = now + self.horizons
        alive = ends[None, :] > at[:, None] if len(ends) else np.zeros((len(at), 0), dtype=bool)
        prof = obs["profile"]
        prof[:, 0] = np.maximum(total - alive @ units, 0.0) / total
        prof[:, 1] = np.maximum(total_bb - alive @ bbs, 0.0) / total_bb if total_bb else 1.0
        if window:
            queue_users: dict[Any, int] = {}
            for job in env.queue:
                u = _user(job)
                if u is not None:
                    queue_users[u] = queue_users.get(u, 0) + 1
            running = dict(self._user_running)
            for job, _ in pending:
                u = _user(job)
                if u is not None:
                    running[u] = running.get(u, 0) + backend.units(job)
            nq = max(env.queue_length, 1)
            jobs = obs["jobs"]
            for i, job in enumerate(window):
                u = _user(job)
                if u is not None:
                    jobs[i, 6] = queue_users.get(u, 0) / nq
                    jobs[i, 7] = min(running.get(u, 0) / total, 1.0)
        if self.corun:
            corun = obs["corun"]
            for i, job in enumerate(window):
                corun[i] = backend.corun(job)
        if self.classes:
            obs["classes"][:] = backend.class_features()
