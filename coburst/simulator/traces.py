"""Batsim 4.2.1's two trace outputs: ``<prefix>_schedule.trace`` and ``<prefix>_machine_states.csv``.

Both are produced exactly as Batsim 4.2.1 produces them (``src/export.cpp`` classes
``PajeTracer`` and ``MachineStateTracer``, driven by ``src/machines.cpp``
``Machines::update_machines_on_job_run`` / ``update_machines_on_job_end`` and by
``src/jobs_execution.cpp``), given the same calls in the same simulation order:

* ``<prefix>_schedule.trace`` (Pajé) — a fixed header, one container per machine (compute
  then storage, in resource-id order) created at the initialisation time (``%lf``: 6
  decimals), every machine set to the waiting state ``w``; then, in simulation order,

  - when a job starts (``update_machines_on_job_run``), for every machine of its
    allocation in ascending id order whose *top job* changes: the job's entity value
    ``5 j<id> machine_state "<id>" "<r g b>"`` the first time the job is drawn, then
    ``6 <time> machine_state m<machine> j<id>``;
  - when a job whose execution process itself ended with return code -1 (walltime) or
    -2 (a kill that cancelled a running parallel task) ends: ``8 <time> kk k "<id>"``
    then one ``8 <time> km m<machine> "<id>"`` per machine of the allocation
    (``add_job_kill(..., true)`` in ``execute_job_process``);
  - when a job ends (``update_machines_on_job_end``), for every machine of its allocation
    in ascending order: ``6 <time> machine_state m<machine> w`` if no other job runs on
    it any more, else the new top job's state line if the top job changed;
  - at the end, a blank line, ``# End of events, containers destruction``, ``3 <time>
    m<machine> machine_ct`` per machine and ``3 <time> root root_ct``.

  The *top job* of a machine is the first job of Batsim's ``std::set<JobPtr>``, i.e. the
  one with the smallest heap address; it only matters with ``--enable-compute-sharing``.
  The recorder uses an explicit order key instead (default: the order in which jobs were
  first started, see :meth:`TraceRecorder.job_started`).

  The only non-deterministic part of Batsim's file is the colour of each job: Batsim
  generates 64 colours (hues ``i * 360/64``, full saturation and value, ``%lf`` RGB) and
  shuffles them with ``std::random_device`` at every run; the k-th job drawn gets colour
  ``k % 64`` of that permutation.  coburst uses the same 64 colours shuffled by a
  ``numpy.random.Generator`` seeded with ``color_seed`` (deterministic), or an explicit
  colour list (``colors=``), e.g. the permutation read back from a Batsim trace.

* ``<prefix>_machine_states.csv`` — header
  ``time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing`` and one line
  ``%g,%d,%d,%d,%d,%d`` after every job start and every job end (all machines of the
  allocation updated first).  No line at time 0 and none at the end.  Batsim's counters
  start with ``idle`` = number of *compute* machines only (storage machines are idle but
  not counted, ``Machines::create_machines``), and every machine of an allocation moves
  idle -> computing -> idle, so the columns always sum to the number of compute machines
  (an allocation containing storage machines makes ``nb_idle`` smaller, even negative, as
  in Batsim).  Sleeping/switching states only exist with energy (``-E``, see :mod:`coburst.simulator.energy`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from pathlib import Path

from procset import ProcSet

from coburst.fileio import atomic_write

MACHINE_STATES_HEADER = "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing\n"

#: PajeTracer::initialize (export.cpp) with the PajeTracerOutputConstants 1..10; the
#: trailing spaces are Batsim's.
PAJE_HEADER = (
    "%EventDef PajeDefineContainerType 1\n"
    "% Type string\n"
    "% Alias string\n"
    "% Name string\n"
    "%EndEventDef\n"
    "\n"
    "%EventDef PajeCreateContainer 2\n"
    "% Time date \n"
    "% Type string  \n"
    "% Alias string \n"
    "% Name string   \n"
    "% Container string  \n"
    "%EndEventDef\n"
    "\n"
    "%EventDef PajeDestroyContainer 3\n"
    "% Time date\n"
    "% Name string \n"
    "% Type string\n"
    "%EndEventDef\n"
    "\n"
    "%EventDef PajeDefineStateType 4\n"
    "% Alias string \n"
    "% Type string \n"
    "% Name string \n"
    "%EndEventDef\n"
    "\n"
    "%EventDef PajeDefineEntityValue 5\n"
    "% Alias string  \n"
    "% Type string  \n"
    "% Name string  \n"
    "% Color color \n"
    "%EndEventDef\n"
    "\n"
    "%EventDef PajeSetState 6\n"
    "% Time date  \n"
    "% Type string  \n"
    "% Container string  \n"
    "% Value string  \n"
    "%EndEventDef \n"
    "\n"
    "%EventDef PajeDefineEventType 7\n"
    "% Type string\n"
    "% Alias string\n"
    "% Name string\n"
    "%EndEventDef\n"
    "\n"
    "%EventDef PajeNewEvent 8\n"
    "% Time date\n"
    "% Type string\n"
    "% Container string\n"
    "% Value string\n"
    "%EndEventDef\n"
    "\n"
    "%EventDef PajeDefineVariableType 9\n"
    "% Type string\n"
    "% Alias string\n"
    "% Name string\n"
    "% Color string\n"
    "%EndEventDef\n"
    "\n"
    "%EventDef PajeSetVariable 10\n"
    "% Time date\n"
    "% Type string\n"
    "% Container string\n"
    "% Value double\n"
    "%EndEventDef\n"
    "\n"
    "# Container types creation\n"
    "1 0 root_ct \"Machines\"\n"
    "1 root_ct machine_ct \"Machine\"\n"
    "1 0 scheduler_ct \"Scheduler\"\n"
    "1 scheduler_ct killer_ct \"Killer\"\n"
    "\n"
    "# Event types creation\n"
    "7 killer_ct kk \"Job kill\"\n"
    "7 machine_ct km \"Job kill\"\n"
    "\n"
    "# Variable types creation\n"
    "9 scheduler_ct vu_vt \"Utilization\" \"0.0 0.5 0.0\"\n"
    "\n"
    "# Containers creation\n"
)

NB_COLORS = 64  # PajeTracer::PajeTracer calls generate_colors(64)


def lf(value: float) -> str:
    """C's ``%lf`` (6 decimals; ``inf``/``nan`` spelt like glibc)."""
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    return f"{value:f}"


def g(value: float) -> str:
    """C's ``%g`` (Python's ``%g`` is the same conversion, but spells nan/inf like C already)."""
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    return "%g" % value


def hsv_to_rgb(h: float, s: float, v: float) -> tuple[float, float, float]:
    """``PajeTracer::hsv_to_rgb`` (same arithmetic, hence the same doubles)."""
    if s == 0:
        return v, v, v
    h /= 60
    i = math.floor(h)
    f = h - i
    p = v * (1 - s)
    q = v * (1 - s * f)
    t = v * (1 - s * (1 - f))
    if i == 0:
        return v, t, p
    if i == 1:
        return q, v, p
    if i == 2:
        return p, v, t
    if i == 3:
        return p, q, v
    if i == 4:
        return t, p, v
    return v, p, q


def batsim_colors(count: int = NB_COLORS) -> list[str]:
    """``PajeTracer::generate_colors``: the colour strings before Batsim shuffles them."""
    fraction = 360.0 / count
    out = []
    for i in range(count):
        r, gr, b = hsv_to_rgb(i * fraction, 1.0, 1.0)
        out.append(f'"{r:f} {gr:f} {b:f}"')
    return out


#: ``numpy.random.default_rng(0).permutation(64)``, the default order, written out: every run
#: uses it and numpy.random costs ~20 ms to import (``tests/test_startup.py`` checks it)
SEED0_ORDER = (16, 36, 27, 8, 44, 23, 53, 4, 58, 50, 10, 2, 42, 34, 19, 47, 11, 57, 37, 20, 18, 61, 3, 1, 30, 24,
               17, 46, 21, 35, 28, 43, 0, 6, 22, 26, 51, 48, 62, 32, 25, 55, 9, 38, 59, 52, 40, 13, 12, 7, 45, 39,
               63, 5, 49, 14, 54, 29, 41, 60, 56, 33, 15, 31)


def shuffled_colors(seed: int) -> list[str]:
    """The 64 Batsim colours in a deterministic order (Batsim's order is random per run)."""
    colors = batsim_colors()
    if seed == 0 and len(colors) == len(SEED0_ORDER):
        order = SEED0_ORDER
    else:
        import numpy as np

        order = np.random.default_rng(seed).permutation(len(colors))
    return [colors[int(i)] for i in order]


class TraceRecorder:
    """Records machine usage the way Batsim 4.2.1 traces it; :meth:`write` produces the files.

    ``machine_names`` are the resource names in Batsim id order (compute machines, then
    storage machines); ``nb_compute`` is the number of compute machines (default: all).
    ``start_time`` is the simulated time at which Batsim initialises its outputs
    (``prepare_batsim_outputs``, before the simulation runs: 0).

    Call, in simulation order: :meth:`job_started` when a job's execution process starts
    (its machines become computing), :meth:`job_ended` when it releases them,
    :meth:`finish` once at the end, then :meth:`write`.
    """

    def __init__(self, machine_names: Sequence[str], *, nb_compute: int | None = None,
                 schedule_trace: bool = True, machine_states: bool = True, start_time: float = 0.0,
                 colors: Sequence[str] | None = None, color_seed: int = 0):
        self.machine_names = list(machine_names)
        nb = len(self.machine_names)
        self.nb_compute = nb if nb_compute is None else nb_compute
        if not 0 <= self.nb_compute <= nb:
            raise ValueError(f"nb_compute={nb_compute} out of range for {nb} machines")
        self.schedule_trace = schedule_trace
        self.machine_states = machine_states
        self.colors = list(colors) if colors is not None else shuffled_colors(color_seed)
        if not self.colors:
            raise ValueError("colors must not be empty")
        # jobs running on each machine: job id -> order key (the "top job" has the smallest key)
        self._running: list[dict[str, tuple]] = [{} for _ in range(nb)]
        self._state_is_computing = [False] * nb
        # counters as in Machines::_nb_machines_in_each_state (only idle/computing move here)
        self.nb_idle = self.nb_compute
        self.nb_computing = 0
        self.nb_sleeping = self.nb_switching_on = self.nb_switching_off = 0  # only with energy (-E)
        self._unavailable: set[int] = set()  # machines made unavailable by an external event
        # running jobs with an entity value (PajeTracer::_jobs; an ended job is forgotten: it
        # never shows again), and how many jobs got one so far (the colour cycle)
        self._paje_jobs: set[str] = set()
        self._nb_paje_jobs = 0
        self._start_counter = itertools.count()
        self._keys: dict[str, tuple] = {}
        self._finished = False
        self._paje: list[str] = []
        self._states: list[str] = [MACHINE_STATES_HEADER]
        if schedule_trace:
            self._paje_initialize(start_time)

    @classmethod
    def from_options(cls, machine_names: Sequence[str], nb_compute: int, batsim_options: dict | None,
                     **kwargs) -> "TraceRecorder":
        """A recorder honouring ``--disable-schedule-tracing`` / ``--disable-machine-state-tracing``
        (``config.batsim_options`` built by ``coburst.cli.sim``; None = Batsim's defaults)."""
        options = batsim_options or {}
        return cls(machine_names, nb_compute=nb_compute, schedule_trace=options.get("schedule_tracing", True),
                   machine_states=options.get("machine_state_tracing", True), **kwargs)

    # -- Pajé ---------------------------------------------------------------------------

    def _paje_initialize(self, time: float) -> None:
        t = lf(time)
        out = self._paje
        out.append(PAJE_HEADER)
        out.append(f'2 {t} root_ct root "Machines" 0\n')
        for mid, name in enumerate(self.machine_names):
            out.append(f'2 {t} machine_ct m{mid} "{name}" root\n')
        out.append(f'2 {t} scheduler_ct sc "Scheduler" 0\n'
                   f'2 {t} killer_ct k "Killer" sc\n'
                   "\n"
                   "# States creation\n"
                   '4 machine_state machine_ct "Machine state"\n'
                   "\n"
                   "# Creation of the different values the machine state can be\n"
                   '5 w machine_state "Waiting" "0.0 0.0 0.0"\n'
                   '5 l machine_state "Launching" "0.3 0.3 0.3"\n'
                   "\n"
                   "# Begin of events\n")
        for mid in range(len(self.machine_names)):
            out.append(f"6 {t} machine_state m{mid} w\n")

    def _paje_computing(self, mid: int, job_id: str, time: float, t: str | None = None) -> None:
        if job_id not in self._paje_jobs:
            self._paje_register(job_id)
        self._paje.append(f"6 {t or lf(time)} machine_state m{mid} j{job_id}\n")

    def _paje_register(self, job_id: str) -> None:
        """``PajeTracer::register_new_job``: the job's entity value and colour."""
        color = self.colors[self._nb_paje_jobs % len(self.colors)]
        self._nb_paje_jobs += 1
        self._paje_jobs.add(job_id)
        self._paje.append(f'5 j{job_id} machine_state "{job_id}" {color}\n')

    # -- machine states -----------------------------------------------------------------

    def _write_states(self, time: float) -> None:
        if self.machine_states:
            self._states.append(f"{g(time)},{self.nb_sleeping},{self.nb_switching_on},{self.nb_switching_off},"
                                f"{self.nb_idle},{self.nb_computing}\n")

    def write_states(self, time: float) -> None:
        """A ``_machine_states.csv`` line now (``MachineStateTracer::write_machine_states``,
        called by the energy part of the server)."""
        self._write_states(time)

    def machine_state_changed(self, old: str, new: str) -> None:
        """A machine moves between the idle and the energy states (``sleeping``,
        ``switching_on``, ``switching_off``; ``Machines::update_nb_machines_in_each_state``)."""
        for state, delta in ((old, -1), (new, +1)):
            attr = "nb_idle" if state == "idle" else f"nb_{state}"
            setattr(self, attr, getattr(self, attr) + delta)

    def machine_unavailable(self, mid: int, computing: bool) -> None:
        """An external event makes machine ``mid`` unavailable (``server_on_event_machine_unavailable``):
        it leaves the idle or computing count; nothing is written."""
        self._unavailable.add(mid)
        if computing:
            self.nb_computing -= 1
        else:
            self.nb_idle -= 1

    def machine_available(self, mid: int, computing: bool) -> None:
        """Machine ``mid`` is available again: computing if a job still runs there, else idle;
        nothing is written (the Paje trace keeps showing what it showed)."""
        self._unavailable.discard(mid)
        if computing:
            self.nb_computing += 1
        else:
            self.nb_idle += 1

    def _top(self, mid: int) -> str | None:
        jobs = self._running[mid]
        return min(jobs, key=jobs.__getitem__) if jobs else None

    def _machines(self, alloc: Iterable[int], machines: list[int] | None = None) -> list[int]:
        """The machine ids of ``alloc`` in order (``machines``: they are, already sorted)."""
        ids = machines if machines is not None else list(alloc) if isinstance(alloc, ProcSet) \
            else sorted(set(int(i) for i in alloc))
        if ids and (ids[0] < 0 or ids[-1] >= len(self.machine_names)):
            raise ValueError(f"allocation {ids} outside machines 0..{len(self.machine_names) - 1}")
        return ids

    # -- public interface ---------------------------------------------------------------

    def job_started(self, time: float, job_id: str, alloc: Iterable[int], *,
                    order_key: object | None = None, machines: list[int] | None = None) -> None:
        """``Machines::update_machines_on_job_run``: the job's machines become computing.

        Call it where Batsim's ``execute_job_process`` does, i.e. in the job's actor at its
        start time (the job's ``starting_time``), before its first task.  ``order_key``
        decides which job a shared machine shows (smallest first, Batsim: smallest heap
        address); by default jobs rank in the order of their first ``job_started``.
        ``machines``: ``alloc``'s ids as a sorted list, when the caller has it already.
        """
        if self._finished:
            raise RuntimeError("job_started after finish")
        key = self._keys.get(job_id)
        if key is None or order_key is not None:
            key = (0, order_key) if order_key is not None else (1, next(self._start_counter))
            self._keys[job_id] = key
        t = lf(time)
        running, computing, trace = self._running, self._state_is_computing, self.schedule_trace
        ids = self._machines(alloc, machines)
        paje = self._paje
        registered = not trace or job_id in self._paje_jobs
        head, tail = f"6 {t} machine_state m", f" j{job_id}\n"
        became = 0  # idle machines that become computing
        for mid in ids:
            jobs = running[mid]
            if not jobs:  # the usual case: the machine was idle
                computing[mid] = True
                became += 1
                jobs[job_id] = key
                if trace:
                    if not registered:
                        self._paje_register(job_id)
                        registered = True
                    paje.append(f"{head}{mid}{tail}")
                continue
            previous = self._top(mid)
            if job_id in jobs:
                self.nb_idle -= became
                self.nb_computing += became
                raise ValueError(f"job {job_id} is already running on machine {mid}")
            jobs[job_id] = key
            top = self._top(mid)
            if trace and previous != top:
                self._paje_computing(mid, top, time, t)
                registered = registered or top == job_id
        self.nb_idle -= became
        self.nb_computing += became
        self._write_states(time)

    def job_ended(self, time: float, job_id: str, alloc: Iterable[int], *, kill_mark: bool = False,
                  machines: list[int] | None = None) -> None:
        """The job releases its machines (``Machines::update_machines_on_job_end``).

        ``kill_mark``: the job's execution process itself saw the end as a kill, i.e. it
        returned -1 (walltime reached, any profile) or -2 (a ``KILL_JOB`` that cancelled a
        running parallel task, ``cancel_ptask``); Batsim then writes the Pajé kill events
        first (``add_job_kill(job, alloc, now, true)``).  A job killed while no parallel task
        runs (a delay, or a composed profile between tasks) has its actor killed by the
        killer actor: no kill mark (``killer_process``), ``kill_mark=False``.
        ``machines``: ``alloc``'s ids as a sorted list, when the caller has it already.
        """
        if self._finished:
            raise RuntimeError("job_ended after finish")
        ids = self._machines(alloc, machines)
        trace = self.schedule_trace
        t = lf(time)
        paje = self._paje
        if trace and kill_mark:
            paje.append(f'8 {t} kk k "{job_id}"\n')
            for mid in ids:
                paje.append(f'8 {t} km m{mid} "{job_id}"\n')
        running, computing, unavailable = self._running, self._state_is_computing, self._unavailable
        head = f"6 {t} machine_state m"
        freed = 0  # machines that become idle
        try:
            for mid in ids:
                jobs = running[mid]
                if not jobs:
                    raise ValueError(f"job {job_id} ends on machine {mid}, which computes no job")
                if len(jobs) == 1:  # the usual case: the machine computed this job alone
                    if job_id not in jobs:
                        raise ValueError(f"job {job_id} ends on machine {mid}, which does not compute it")
                    jobs.clear()
                    computing[mid] = False
                    if unavailable and mid in unavailable:
                        continue  # Batsim: an unavailable machine stays so (no idle state, no Paje line)
                    freed += 1
                    if trace:
                        paje.append(f"{head}{mid} w\n")
                    continue
                previous = self._top(mid)
                if job_id not in jobs:
                    raise ValueError(f"job {job_id} ends on machine {mid}, which does not compute it")
                del jobs[job_id]
                top = self._top(mid)
                if top != previous and trace:
                    self._paje_computing(mid, top, time, t)
        finally:
            self.nb_idle += freed
            self.nb_computing -= freed
        self._keys.pop(job_id, None)  # ended: memory stays flat on long logs
        self._paje_jobs.discard(job_id)
        self._write_states(time)

    def finish(self, time: float) -> None:
        """End of the simulation (``finalize_batsim_outputs``: the clock after ``engine.run()``)."""
        if self._finished:
            raise RuntimeError("finish called twice")
        self._finished = True
        if self.schedule_trace:
            t = lf(time)
            self._paje.append("\n# End of events, containers destruction\n")
            for mid in range(len(self.machine_names)):
                self._paje.append(f"3 {t} m{mid} machine_ct\n")
            self._paje.append(f"3 {t} root root_ct\n")

    def computing_jobs(self, machine: int) -> list[str]:
        """Jobs running on a machine, top job first (for checks)."""
        jobs = self._running[machine]
        return sorted(jobs, key=jobs.__getitem__)

    def drain(self, paje_out=None, states_out=None) -> None:
        """Write the lines recorded so far to open files (the enabled ones) and forget them:
        the engine streams long traces to disk instead of keeping them in memory."""
        if paje_out is not None and self.schedule_trace:
            paje_out.writelines(self._paje)
            self._paje.clear()
        if states_out is not None and self.machine_states:
            states_out.writelines(self._states)
            self._states.clear()

    def schedule_trace_text(self) -> str:
        return "".join(self._paje)

    def machine_states_text(self) -> str:
        return "".join(self._states)

    @staticmethod
    def paths(prefix: str) -> tuple[Path, Path]:
        return Path(f"{prefix}_schedule.trace"), Path(f"{prefix}_machine_states.csv")

    def write(self, prefix: str) -> list[Path]:
        """Write the enabled files atomically (call :meth:`finish` first); return their paths."""
        if not self._finished:
            raise RuntimeError("write before finish")
        trace_path, states_path = self.paths(prefix)
        written = []
        if self.schedule_trace:
            with atomic_write(trace_path, newline="") as out:
                out.writelines(self._paje)
            written.append(trace_path)
        if self.machine_states:
            with atomic_write(states_path, newline="") as out:
                out.writelines(self._states)
            written.append(states_path)
        return written


def colors_from_trace(text: str) -> list[str]:
    """The colours of the jobs of a Batsim Pajé trace, in the order the jobs were drawn.

    With at most 64 jobs this is a prefix of Batsim's shuffled colour table: pass it as
    ``TraceRecorder(colors=...)`` to reproduce that trace byte for byte.
    """
    out = []
    for line in text.splitlines():
        if line.startswith("5 j"):
            out.append('"' + line.rsplit('"', 2)[-2] + '"')
    return out
