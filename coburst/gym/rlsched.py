"""``RLSchedulerEnv``: an RLScheduler-compatible job-picking environment.

RLScheduler (Zhang et al., SC'20; its ``HPCSimPickJobs.HPCEnv``, "SchedGym") trains an agent
that picks, at every decision, one waiting job of a window; the simulator then waits until
that job fits and starts it.  This mode reproduces that environment decision for decision, so
that results obtained here can be set beside the published ones (docs: ``docs/tutorials/rlscheduler.md``).
It is a simulator of its own (RLScheduler's event loop, not coburst's Batsim-exact engine).

**Trace**: an SWF log read as RLScheduler reads it: ``; MaxNodes:`` / ``; MaxProcs:`` header
lines give the cluster (``MaxProcs`` defaults to ``MaxNodes``); a job's size is
``max(allocated, requested processors)``, its requested time the run time when absent (-1);
jobs of run time 0 are dropped (negative: set to 10 s); jobs are ordered by id.  The
normalisation maxima (run time, memory, user, group, executable) are taken over every line.

**Episodes**: ``sequence_length`` (256) consecutive jobs of the trace, starting at the index
``randint(L, n - L - 1)`` drawn from a NumPy ``RandomState`` seeded exactly as gym 0.17's
``seeding.np_random(seed)`` (RLScheduler's ``env.seed``): ``reset(seed=s)`` then plain
``reset()`` calls give the starts of RLScheduler's ``env.seed(s)`` and its successive resets.
``options={"start": i}`` sets the start index instead.  An episode begins at the first job's
submission with that job waiting on an empty cluster, and ends (``terminated``) when the last
job of the sequence has *started*.

**Observation**: ``Box(0, 1, (128 * 8,), float32)``: 128 slots (``MAX_QUEUE_SIZE``) of eight
features.  The window is the waiting queue in submission order when it holds at most 128
jobs, else RLScheduler's mix of its shortest-requested-time and smallest jobs.  A job's
features: ``min(wait / 43200, 1 - 1e-5)``, ``min(requested time / max run time, 1 - 1e-5)``,
``min(processors / MaxProcs, 1 - 1e-5)``, requested memory, user, group and executable each
``min(v / max v, 1 - 1e-5)`` (1 when -1), and ``1 - 1e-5`` if it fits now else ``1e-5``.
An empty slot is ``[0, 1, 1, 1, 1, 1, 1, 0]``; with ``skip=True`` the first empty slot is the
*skip* slot ``[1, 1, 1, 1, 1, 1, 1, p]`` (``p``: 1 once a skip was taken while every job of
the sequence had been submitted and nothing ran).

**Action**: ``Discrete(128)``: the slot of the job to start.  The clock then moves from event
to event (an arrival of the sequence at or before the next completion first, else that
completion) until the job fits; with ``backfill=True`` it first backfills, at each event,
every waiting job (in submission order) that fits now and whose requested time ends before
the picked job's reservation (computed once, from the running jobs' requested times).  An
empty slot (``action_masks()`` is False) waits ``SKIP_TIME`` (360 s) or to the next event.

**Reward**: 0, then at the end ``-sum(bsld / L)`` over the sequence's jobs, in the order they
started, with ``bsld = max(1, (start - submit + run) / max(run, 10))``: minus the mean bounded
slowdown, bound 10 s.  ``info["bsld_mean"]`` holds the mean at the end.

:func:`schedule_sequence` runs RLScheduler's heuristic baselines (``schedule_curr_sequence_reset``:
the whole queue, not the window, sorted by a score); :func:`heuristic_action` picks a
heuristic's job in the window, as an agent would.
"""

from __future__ import annotations

import hashlib
import math
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

__all__ = ["RLSchedulerEnv", "RLTrace", "load_trace", "schedule_sequence", "heuristic_action",
           "gym017_random_state", "HEURISTICS", "MAX_QUEUE_SIZE", "JOB_FEATURES", "JOB_SEQUENCE_SIZE"]

#: the window (RLScheduler's ``MAX_QUEUE_SIZE``)
MAX_QUEUE_SIZE = 128
#: the features of one window slot, in order
JOB_FEATURES = ("wait", "requested_time", "processors", "requested_memory", "user", "group",
                "executable", "fits_now")
#: jobs per episode (RLScheduler's ``JOB_SEQUENCE_SIZE``)
JOB_SEQUENCE_SIZE = 256
MAX_WAIT_TIME = 12 * 60 * 60
SKIP_TIME = 360
#: the bounded slowdown's bound, in seconds
BSLD_BOUND = 10
_TOP = 1.0 - 1e-5
_PAD = np.array([0, 1, 1, 1, 1, 1, 1, 0], dtype=np.float32)
_FITS = np.array([_TOP, 1e-5], dtype=np.float64)  # fits now, does not
#: the heuristic scores (smallest first) of RLScheduler's code: name -> key attribute of RLTrace
HEURISTICS = ("fcfs", "sjf", "f1", "wfp", "uni", "smallest", "f2")


def gym017_random_state(seed: int) -> np.random.RandomState:
    """A ``RandomState`` seeded as gym 0.17's ``seeding.np_random(seed)`` seeds it: the seed
    modulo 2**64, its decimal text hashed with SHA-512, the first 8 bytes read as a
    little-endian integer, given to ``RandomState.seed`` as 32-bit words, lowest first."""
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    value = int(seed) % 2 ** 64
    big = int.from_bytes(hashlib.sha512(str(value).encode("utf8")).digest()[:8], "little")
    words = []
    while big > 0:
        big, low = divmod(big, 2 ** 32)
        words.append(low)
    rng = np.random.RandomState()
    rng.seed(words or [0])
    return rng


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        return int(float(text))


def _ratio(value: int, top: int) -> float:
    if value == -1:
        return 1.0
    if top == 0:  # RLScheduler divides by zero here
        return 0.0
    return min(float(value) / float(top), _TOP)


class RLTrace:
    """An SWF log as RLScheduler's ``Workloads`` reads it, with each job's static features and
    heuristic keys (computed with the same scalar arithmetic, so ties and orders agree)."""

    def __init__(self, path: str | os.PathLike):
        self.path = str(path)
        rows = []
        max_nodes = max_procs = 0
        top = {"run": 0, "mem": 0, "user": 0, "group": 0, "exe": 0}
        with open(path, encoding="utf-8", errors="replace") as fp:
            for line in fp:
                if line.startswith(";"):
                    if line.startswith("; MaxNodes:"):
                        max_nodes = int(line.split(":")[1].strip())
                    if line.startswith("; MaxProcs:"):
                        max_procs = int(line.split(":")[1].strip())
                    continue
                f = line.split()
                if not f:
                    continue
                if len(f) < 18:
                    raise ValueError(f"{path}: an SWF line needs 18 fields: {line.strip()!r}")
                jid, submit, run = _int(f[0]), _int(f[1]), _int(f[3])
                procs = max(_int(f[4]), _int(f[7]))
                req = _int(f[8])
                req = run if req == -1 else req
                mem, user, group, exe = _int(f[9]), _int(f[11]), _int(f[12]), _int(f[13])
                top["run"] = max(top["run"], run)
                top["mem"] = max(top["mem"], mem)
                top["user"] = max(top["user"], user)
                top["group"] = max(top["group"], group)
                top["exe"] = max(top["exe"], exe)
                if run < 0:
                    run = 10
                if run > 0:
                    rows.append((jid, submit, run, procs, req, mem, user, group, exe))
        if max_procs == 0:
            max_procs = max_nodes
        if max_nodes <= 0:
            raise ValueError(f"{path}: RLScheduler's cluster needs a '; MaxNodes:' header line")
        rows.sort(key=lambda r: r[0])
        if not rows:
            raise ValueError(f"{path}: no job of positive run time")
        self.max_nodes, self.max_procs = max_nodes, max_procs
        self.max_exec_time = top["run"]
        self.procs_per_node = max_procs / max_nodes
        cols = list(zip(*rows))
        self.job_id, self.submit, self.run, self.procs, self.request_time = (list(c) for c in cols[:5])
        self.size = len(rows)
        ppn = float(self.procs_per_node)
        self.nodes = [int(math.ceil(float(p) / ppn)) for p in self.procs]
        static = np.empty((self.size, 6), dtype=np.float64)
        for i, r in enumerate(rows):
            static[i] = (min(float(r[4]) / float(self.max_exec_time), _TOP) if self.max_exec_time else 0.0,
                         min(float(r[3]) / float(max_procs), _TOP),
                         _ratio(r[5], top["mem"]), _ratio(r[6], top["user"]), _ratio(r[7], top["group"]),
                         _ratio(r[8], top["exe"]))
        #: per job: submission time, the six static features, 0 (the observation's row, its
        #: first and last columns filled in per step)
        self.table = np.zeros((self.size, 8), dtype=np.float64)
        self.table[:, 0] = self.submit
        self.table[:, 1:7] = static
        self.nodes_np = np.asarray(self.nodes, dtype=np.int64)
        self.keys = self._keys()

    def _keys(self) -> dict[str, list]:
        s, rt, n = self.submit, self.request_time, self.procs
        keys: dict[str, list] = {"fcfs": list(s), "sjf": list(zip(rt, s)), "smallest": list(zip(n, s))}
        f1, f2, wfp, uni = [], [], [], []
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for sub, req, proc in zip(s, rt, n):
                f1.append(float(np.log10(req if req > 0 else 0.1) * proc
                                + 870 * np.log10(sub if sub > 0 else 0.1)))
                f2.append(float(np.sqrt(req) * proc + 25600 * np.log10(sub)))
                # a waiting job's scheduled_time is -1 in RLScheduler: its "waiting time" is -1 - submit
                wait = -1 - sub
                wfp.append(float(-np.power(float(wait) / req, 3) * proc) if req else math.inf)
                uni.append(float(-(wait + 1e-15) / (np.log2(proc + 1e-15) * req)) if req else math.inf)
        keys.update(f1=f1, f2=f2, wfp=wfp, uni=uni)
        return keys


_TRACES: dict[tuple, RLTrace] = {}


def load_trace(path: str | os.PathLike) -> RLTrace:
    """The :class:`RLTrace` of ``path`` (cached by path, size and modification time)."""
    p = Path(path).resolve()
    st = p.stat()
    key = (str(p), st.st_size, st.st_mtime_ns)
    if key not in _TRACES:
        _TRACES[key] = RLTrace(p)
    return _TRACES[key]


class _Episode:
    """RLScheduler's simulation of one job sequence (lists of trace rows, mutated exactly as
    its job queue and running-job list are, stable sorts included)."""

    def __init__(self, trace: RLTrace, start: int, length: int, backfill: bool, skip: bool = False):
        self.t, self.backfill, self.skip = trace, backfill, skip
        self.start, self.length = start, length
        self.last = start + length
        self.now = trace.submit[start]
        self.queue = [start]
        self.running: list[int] = []
        self.next = start + 1
        self.free = trace.max_nodes
        self.sched: dict[int, int] = {}
        self.ends: dict[int, int] = {}  # start + run time of the started jobs
        self.scores: dict[int, float] = {}
        self.pivot = False
        self.slots: list[int] = []

    # -- the event loop
    def _advance(self) -> None:
        running = self.running
        running.sort(key=self.ends.__getitem__)
        first = running[0]
        self._next_event(first, self.ends[first])

    def _next_event(self, first: int | None, release: float) -> None:
        """The next submission if it comes by ``release``, else the end of the running job
        ``first`` (the earliest to end)."""
        t = self.t
        if self.next < self.last and t.submit[self.next] <= release:
            self.now = max(self.now, t.submit[self.next])
            self.queue.append(self.next)
            self.next += 1
        else:
            self.now = max(self.now, release)
            self.free += t.nodes[first]
            self.running.pop(0)

    def _start(self, j: int) -> None:
        t = self.t
        self.sched[j] = self.now
        self.ends[j] = self.now + t.run[j]
        self.free -= t.nodes[j]
        self.running.append(j)
        run = t.run[j]
        self.scores[t.job_id[j]] = max(1.0, float(self.now - t.submit[j] + run) / max(run, BSLD_BOUND))
        self.queue.remove(j)

    def _wait_for(self, j: int) -> None:
        t = self.t
        if not self.backfill:
            while t.nodes[j] > self.free:
                self._advance()
            return
        sched, rt, ppn = self.sched, t.request_time, t.procs_per_node
        self.running.sort(key=lambda r: sched[r] + rt[r])
        earliest = self.now
        free_procs = self.free * ppn
        for r in self.running:
            free_procs += t.nodes[r] * ppn
            earliest = sched[r] + rt[r]
            if free_procs >= t.procs[j]:
                break
        while t.nodes[j] > self.free:
            self.queue.sort(key=t.submit.__getitem__)
            for k in list(self.queue):
                if t.nodes[k] <= self.free and self.now + rt[k] < earliest:
                    self._start(k)
            self._advance()

    def _refill(self) -> bool:
        """RLScheduler's ``moveforward_for_job``: False when the sequence is over."""
        if self.queue:
            return True
        if self.next >= self.last:
            return False
        t = self.t
        while not self.queue:
            if self.running:
                self.running.sort(key=self.ends.__getitem__)
                first = self.running[0]
                release = self.ends[first]
            else:
                first, release = None, sys.maxsize
            if t.submit[self.next] <= release:
                self.now = max(self.now, t.submit[self.next])
                self.queue.append(self.next)
                self.next += 1
                return True
            self.now = max(self.now, release)
            self.free += t.nodes[first]
            self.running.pop(0)
        return True

    def schedule(self, j: int) -> bool:
        """Start job ``j`` once it fits; True when the sequence is over."""
        if self.t.nodes[j] > self.free:
            self._wait_for(j)
        self._start(j)
        return not self._refill()

    def skip_schedule(self) -> None:
        t = self.t
        after = self.now + SKIP_TIME
        release, first = sys.maxsize, None
        if self.running:
            self.running.sort(key=self.ends.__getitem__)
            first = self.running[0]
            release = self.ends[first]
        if self.next >= self.last and not self.running:
            self.pivot = True
            return
        if after < min(t.submit[self.next], release):
            self.now = after
            return
        self._next_event(first, release)

    # -- the window and the observation
    def window(self) -> list[int]:
        t, q = self.t, self.queue
        q.sort(key=t.submit.__getitem__)
        if len(q) <= MAX_QUEUE_SIZE:
            return list(q)
        keys = t.keys
        for name in ("f1", "f2", "sjf"):
            q.sort(key=keys[name].__getitem__)
        by_sjf = q[:MAX_QUEUE_SIZE]
        q.sort(key=keys["smallest"].__getitem__)
        by_small = q[:MAX_QUEUE_SIZE]
        visible: list[int] = []
        seen: set[int] = set()
        k = 0
        while len(visible) < MAX_QUEUE_SIZE:
            for j in (by_sjf[k], by_small[k]):
                if j not in seen and len(visible) < MAX_QUEUE_SIZE:
                    visible.append(j)
                    seen.add(j)
            k += 1
        return visible

    def observation(self) -> np.ndarray:
        t = self.t
        self.slots = slots = self.window()
        n = len(slots)
        obs = np.empty((MAX_QUEUE_SIZE, 8), dtype=np.float32)
        if n:
            rows = np.array(slots, dtype=np.intp)
            block = t.table[rows]
            wait = block[:, 0]
            np.subtract(self.now, wait, out=wait)
            wait /= float(MAX_WAIT_TIME)
            np.minimum(wait, _TOP, out=wait)
            block[:, 7] = _FITS[(t.nodes_np[rows] > self.free).view(np.int8)]
            obs[:n] = block  # rounded to float32 as RLScheduler's float64 vector would be
        obs[n:] = _PAD
        if self.skip and n < MAX_QUEUE_SIZE:
            obs[n] = 1.0
            obs[n, 7] = 1.0 if self.pivot else 0.0
        return obs.reshape(-1)

    def bsld_mean(self) -> float:
        return sum(v / self.length for v in self.scores.values())


class RLSchedulerEnv(gym.Env):
    """RLScheduler's job-picking environment (module doc).

    ``workload``: an SWF log; ``backfill``: RLScheduler's ``backfil``; ``sequence_length``:
    jobs per episode (256); ``skip``: RLScheduler's ``skip`` (a skip slot in the window);
    ``job_slice``: RLScheduler's ``batch_job_slice`` (draw starts among the first jobs only; 0:
    the whole trace).
    """

    metadata = {"render_modes": []}

    def __init__(self, workload: str | os.PathLike, *, backfill: bool = False,
                 sequence_length: int = JOB_SEQUENCE_SIZE, skip: bool = False, job_slice: int = 0):
        if not isinstance(sequence_length, int) or sequence_length < 1:
            raise ValueError(f"sequence_length must be an integer >= 1, got {sequence_length!r}")
        self.trace = load_trace(workload)
        self.backfill, self.skip = bool(backfill), bool(skip)
        self.sequence_length, self.job_slice = sequence_length, int(job_slice)
        end = self.job_slice if self.job_slice else self.trace.size
        #: the start indices are drawn in [low, high)
        self.low, self.high = sequence_length, end - sequence_length - 1
        if self.job_slice and self.job_slice < sequence_length:
            raise ValueError("job_slice must be 0 or at least sequence_length")
        if self.high <= self.low:
            raise ValueError(f"{self.trace.path}: {self.trace.size} jobs are too few for episodes of "
                             f"{sequence_length} jobs")
        self.action_space = spaces.Discrete(MAX_QUEUE_SIZE)
        self.observation_space = spaces.Box(0.0, 1.0, (MAX_QUEUE_SIZE * len(JOB_FEATURES),), dtype=np.float32)
        self._starts: np.random.RandomState | None = None
        self._ep: _Episode | None = None
        self._done = True

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self._starts = gym017_random_state(seed)
        elif self._starts is None:
            self._starts = gym017_random_state(int(self.np_random.integers(2 ** 63)))
        options = options or {}
        if options.get("start") is not None:
            start = int(options["start"])
            if not 0 <= start <= self.trace.size - self.sequence_length - 1:
                raise ValueError(f"start {start} leaves fewer than {self.sequence_length} jobs after it")
        else:
            start = int(self._starts.randint(self.low, self.high))
        self._ep = _Episode(self.trace, start, self.sequence_length, self.backfill, self.skip)
        self._done = False
        obs = self._ep.observation()
        return obs, self._info()

    def step(self, action):
        if self._done or self._ep is None:
            raise RuntimeError("step() called before reset() or after the episode ended")
        ep = self._ep
        a = int(action)
        if not 0 <= a < MAX_QUEUE_SIZE:
            raise ValueError(f"action {action!r} is outside Discrete({MAX_QUEUE_SIZE})")
        if a < len(ep.slots):
            done = ep.schedule(ep.slots[a])
        else:
            ep.skip_schedule()
            done = False
        obs = ep.observation()
        if not done:
            return obs, 0.0, False, False, self._info()
        self._done = True
        mean = ep.bsld_mean()
        info = self._info()
        info["bsld_mean"] = mean
        return obs, -mean, True, False, info

    def action_masks(self) -> np.ndarray:
        """The slots holding a job (and, with ``skip``, the skip slot)."""
        mask = np.zeros(MAX_QUEUE_SIZE, dtype=bool)
        if self._ep is not None:
            n = len(self._ep.slots)
            mask[:n] = True
            if self.skip and n < MAX_QUEUE_SIZE:
                mask[n] = True
        return mask

    def _info(self) -> dict:
        ep = self._ep
        return {"start": ep.start, "time": ep.now, "queue": len(ep.queue), "action_mask": self.action_masks()}

    @property
    def window_job_ids(self) -> list[int]:
        """The SWF job ids of the window's slots, in order."""
        ids = self.trace.job_id
        return [ids[j] for j in self._ep.slots] if self._ep else []

    def start_times(self) -> dict[int, int]:
        """The start times of the episode's jobs started so far, by SWF job id."""
        ids = self.trace.job_id
        return {ids[j]: s for j, s in self._ep.sched.items()} if self._ep else {}


def heuristic_action(env: Any, heuristic: str) -> int:
    """The window slot of the job a heuristic of RLScheduler's code picks (its smallest score,
    the first such slot)."""
    env = env.unwrapped
    key = env.trace.keys[heuristic]
    slots = env._ep.slots
    return min(range(len(slots)), key=lambda i: key[slots[i]])


def schedule_sequence(trace: RLTrace | str | os.PathLike, start: int, heuristic: str, *,
                      backfill: bool = False, length: int = JOB_SEQUENCE_SIZE) -> tuple[dict[int, int], float]:
    """RLScheduler's heuristic baseline (``schedule_curr_sequence_reset``) on the ``length`` jobs
    from index ``start``: at every decision the whole waiting queue is sorted (stably) by the
    heuristic's score and its first job started once it fits.  Returns the start times by SWF
    job id and the mean bounded slowdown."""
    t = trace if isinstance(trace, RLTrace) else load_trace(trace)
    if heuristic not in t.keys:
        raise ValueError(f"unknown heuristic {heuristic!r}; one of {', '.join(HEURISTICS)}")
    key = t.keys[heuristic].__getitem__
    ep = _Episode(t, start, length, backfill)
    while True:
        ep.queue.sort(key=key)
        if ep.schedule(ep.queue[0]):
            break
    return {t.job_id[j]: s for j, s in ep.sched.items()}, ep.bsld_mean()
