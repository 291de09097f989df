"""Jobs that change size: the job model carried by extra fields of Batsim JSON jobs and profiles.

Batsim 4.2.1 (and coburst without ``elastic=True``) ignores these fields: the job runs rigid on
``res`` resources with its ordinary profile.  With the elastic mode on
(:class:`coburst.simulator.engine.SimulatorConfig` ``elastic``), a job carrying ``elastic``
runs its application model instead (:mod:`coburst.simulator.elastic`).

A job's ``elastic`` object::

    "elastic": {"type": "malleable",              // rigid | moldable | malleable | evolving | adaptive
                "num_nodes_min": 2, "num_nodes_max": 8,
                "num_gpus_per_node": 2,            // GPUs used on each node (default 0)
                "arguments": {"size": 4e9}}        // numbers the expressions may read

* ``rigid``: runs on ``res`` nodes (the model is still used for its time);
* ``moldable``: the scheduler picks the size at start, in ``[num_nodes_min, num_nodes_max]``;
* ``malleable``: the scheduler picks the size at start and may resize the job at its
  scheduling points;
* ``evolving``: starts on ``res`` nodes; at its scheduling points the job asks for a size
  (its phase's ``evolving_request``), which the scheduler grants, clips or refuses;
* ``adaptive``: both (any start size, requests, and resizes of the scheduler's own).

The application model is the profile's ``elastic`` object (or the job's
``elastic.application``, which takes precedence)::

    "elastic": {"on_init": "5",                        // seconds (an expression) or tasks
                "on_reconfiguration": "2 + 0.1 * num_nodes",
                "on_expansion": [{"type": "delay", "seconds": "1"}],
                "phases": [{"name": "solve", "iterations": 10, "scheduling_point": true,
                            "evolving_request": "num_nodes * 2 if iteration == 3 else num_nodes",
                            "tasks": [{"type": "compute", "flops": "size * 1e2"},
                                      {"type": "compute", "seconds": 30, "model": "amdahl",
                                       "serial_fraction": 0.05},
                                      {"type": "delay", "seconds": "1"}]}]}

Tasks (:class:`Task`): ``delay`` (``seconds``), ``compute`` with ``flops`` (split evenly over the
nodes, or ``per_node``: each node computes that much, at the slowest allocated node's speed) or
with ``seconds`` on one node and a ``model``: ``linear`` (``seconds / num_nodes``, default),
``amdahl`` (``serial_fraction``) or ``downey`` (``A``, ``sigma``); see
:mod:`coburst.models.perf`.  A task given as a string or number is a delay of that many
seconds.  Those are *analytic*: their time is computed.  The *network* tasks are simulated as
parallel tasks on the platform (SimGrid's ``ptask_L07`` model, links shared with every other
transfer of the run):

* ``communication``: ``bytes`` (an expression) spread between the job's nodes by a
  ``pattern`` -- ``all_to_all``, ``gather``, ``scatter``, ``ring``, ``ring_clockwise``,
  ``ring_counter_clockwise``, ``master_worker`` -- as ElastiSim spreads a ``cpu`` task's bytes
  (:func:`coburst.models.patterns.communication_matrix`);
* ``pfs_read``, ``pfs_write``, ``bb_read``, ``bb_write``: ``bytes`` spread over the job's
  nodes by a ``pattern`` -- ``uniform`` (each node that much), ``total`` (or ``all_ranks``:
  split evenly), ``root_only``, ``even_ranks``, ``odd_ranks`` (:func:`coburst.models.patterns.io_vector`) -- read from
  or written to a storage host: ``storage`` (default ``"pfs"`` for ``pfs_*``, ``"bb"`` for
  ``bb_*``) is a label of the job's ``storage_mapping`` when ``EXECUTE_JOB`` gave one,
  otherwise the name of a storage host of the platform, otherwise the platform's only storage
  host.

* ``compute`` with ``flops`` and ``bytes`` and a communication ``pattern``: computation and
  communication coupled, one parallel task of both amounts (Batsim's ``parallel`` profile,
  ElastiSim's ``cpu`` task with ``coupled``), so that they overlap;
* ``gpu``: ``flops`` (split over the nodes, or ``per_node``) computed on the job's
  ``num_gpus_per_node`` GPUs of each node, and ``bytes`` spread between the job's GPUs by
  ``all_to_all``, ``ring``, ``ring_clockwise`` or ``ring_counter_clockwise``
  (:func:`coburst.models.patterns.gpu_matrices`), as ElastiSim's ``gpu`` task
  (:mod:`coburst.simulator.elastic_gpu`).  A job with gpu tasks needs ``num_gpus_per_node``.

Expressions read ``num_gpus_per_node`` and ``num_gpus`` (``num_nodes * num_gpus_per_node``)
besides ``num_nodes`` and the rest.

Data redistribution at a resize (no other simulator has it): the application's
``redistribution`` -- ``{"bytes": expression, "via": storage label}`` or just the expression --
is the size of the job's distributed data; block-distributed over the old nodes, it moves to
the block distribution over the new ones (:func:`coburst.models.patterns.redistribution_matrix`) in one parallel task,
node to node, or, with ``via``, written from the old nodes to that storage host (a burst
buffer, the PFS) and read from it by the new ones.  Its expression reads ``num_nodes`` (the new
size), ``old_num_nodes`` and the arguments.

Scheduling points are the ends of the iterations of phases with ``scheduling_point`` (default
true), except the job's very last iteration.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from coburst.errors import InputError
from coburst.models.patterns import COMM_PATTERNS, GPU_PATTERNS, IO_PATTERNS
from coburst.models.perf import Expression, ExpressionError, amdahl, downey

__all__ = ["KINDS", "RESIZABLE", "Task", "Phase", "Redistribution", "Application", "ElasticJob", "parse_elastic"]

KINDS = ("rigid", "moldable", "malleable", "evolving", "adaptive")
#: kinds whose size may change while they run
RESIZABLE = ("malleable", "evolving", "adaptive")
#: kinds the scheduler may start on any size of [min, max]
MOLDABLE_START = ("moldable", "malleable", "adaptive")
#: kinds that ask for sizes
REQUESTING = ("evolving", "adaptive")
#: variable names an expression may read besides the job's arguments
#: the job's GPUs an expression may read (ElastiSim's names): ``num_gpus_per_node`` (the job's
#: GPUs on each of its nodes) and ``num_gpus`` (``num_nodes * num_gpus_per_node``)
GPU_VARS = ("num_gpus", "num_gpus_per_node")
TASK_VARS = ("num_nodes", "iteration", "iterations", *GPU_VARS)
COST_VARS = ("num_nodes", "old_num_nodes", *GPU_VARS)
#: names an argument cannot take
RESERVED = tuple(dict.fromkeys(TASK_VARS + COST_VARS))
_MODELS = ("linear", "amdahl", "downey")
#: I/O task types and their default storage label
IO_TASKS = {"pfs_read": "pfs", "pfs_write": "pfs", "bb_read": "bb", "bb_write": "bb"}
ANALYTIC = ("delay", "compute")


@dataclass(frozen=True)
class Task:
    """One task of a phase iteration (or of a cost)."""

    type: str  # "delay", "compute", "gpu", "communication" or one of IO_TASKS
    amount: Expression  # seconds (delay, compute with a model), flops (compute, gpu), or bytes (network tasks)
    #: "seconds" (delay), "flops", "linear", "amdahl", "downey"; a network task's pattern
    model: str = "seconds"
    per_node: bool = False
    params: tuple[tuple[str, float], ...] = ()
    storage: str = ""  # an I/O task's storage label
    #: the bytes of a gpu task, or of a compute task coupled with a communication
    comm: Expression | None = None
    comm_pattern: str = ""  # their pattern

    @property
    def analytic(self) -> bool:
        """Its time is computed (delay, compute), not simulated on the network."""
        return self.type in ANALYTIC and self.comm is None

    @property
    def coupled(self) -> bool:
        """A compute task with a communication: one parallel task of both amounts."""
        return self.type == "compute" and self.comm is not None

    def values(self, env: Mapping[str, float]):
        """A simulated task's amounts with ``env``: its bytes (communication, I/O), or
        ``(flops, bytes)`` (a gpu task, a coupled compute task)."""
        if self.type != "gpu" and not self.coupled:
            return self.bytes(env)
        flops = self.amount.evaluate(env)
        size = 0.0 if self.comm is None else self.comm.evaluate(env)
        if flops < 0 or size < 0:
            raise ExpressionError(f"{self.amount.text!r} or {self.comm.text if self.comm else 0!r} is negative "
                                  f"({flops}, {size}) with {dict(env)}")
        return flops, size

    def bytes(self, env: Mapping[str, float]) -> float:
        """A network task's bytes with ``env``."""
        value = self.amount.evaluate(env)
        if value < 0:
            raise ExpressionError(f"{self.amount.text!r} is negative ({value}) with {dict(env)}")
        return value

    def duration(self, env: Mapping[str, float], speed: float) -> float:
        """Seconds this task takes with ``env`` (``num_nodes`` set) on nodes of ``speed`` flop/s."""
        n = env["num_nodes"]
        value = self.amount.evaluate(env)
        if value < 0:
            raise ExpressionError(f"{self.amount.text!r} is negative ({value}) with {dict(env)}")
        if self.model == "seconds":
            return value
        if self.model == "flops":
            return value / speed if self.per_node else value / (n * speed)
        p = dict(self.params)
        if self.model == "linear":
            return value / n
        if self.model == "amdahl":
            return amdahl(value, n, p["serial_fraction"])
        return downey(value, n, p["A"], p["sigma"])


@dataclass(frozen=True)
class Phase:
    name: str
    iterations: Expression
    tasks: tuple[Task, ...]
    scheduling_point: bool = True
    evolving_request: Expression | None = None


@dataclass(frozen=True)
class Redistribution:
    """The data a job moves when resized (see the module's documentation)."""

    bytes: Expression
    via: str | None = None  # a storage label: staged through that storage host


@dataclass(frozen=True)
class Application:
    phases: tuple[Phase, ...]
    on_init: tuple[Task, ...] = ()
    on_reconfiguration: tuple[Task, ...] = ()
    on_expansion: tuple[Task, ...] = ()
    redistribution: Redistribution | None = None


@dataclass
class ElasticJob:
    """The elastic description of one job."""

    kind: str
    num_nodes_min: int
    num_nodes_max: int
    res: int
    arguments: dict[str, float]
    app: Application
    #: iterations of each phase (the arguments fix them)
    iterations: tuple[int, ...] = field(default=())
    #: GPUs the job uses on each of its nodes (its gpu tasks run on them)
    gpus_per_node: int = 0

    @property
    def resizable(self) -> bool:
        return self.kind in RESIZABLE

    @property
    def requesting(self) -> bool:
        return self.kind in REQUESTING

    def start_sizes(self) -> tuple[int, int]:
        """The sizes the job may start on (inclusive)."""
        if self.kind in MOLDABLE_START:
            return self.num_nodes_min, self.num_nodes_max
        return self.res, self.res

    @property
    def gpu_tasks(self) -> bool:
        """The job has gpu tasks."""
        return any(t.type == "gpu" for ph in self.app.phases for t in ph.tasks)

    def env(self, **values: float) -> dict[str, float]:
        """The variables of an expression: the arguments, ``values`` and the job's GPUs."""
        g = self.gpus_per_node
        out = {**self.arguments, **values, "num_gpus_per_node": g}
        if "num_nodes" in values:
            out["num_gpus"] = values["num_nodes"] * g
        return out

    def cost(self, tasks: tuple[Task, ...], n: int, old: int, speed: float) -> float:
        env = self.env(num_nodes=n, old_num_nodes=old)
        return sum(t.duration(env, speed) for t in tasks)

    def iteration_time(self, phase: int, iteration: int, n: int, speed: float) -> float:
        """Seconds the analytic tasks of one iteration of phase ``phase`` take on ``n`` nodes of
        ``speed`` flop/s (the network tasks' time is simulated, not counted here)."""
        env = self.env(num_nodes=n, iteration=iteration, iterations=self.iterations[phase])
        return sum(t.duration(env, speed) for t in self.app.phases[phase].tasks if t.analytic)

    def segments(self, phase: int, iteration: int, n: int, speed: float) -> list:
        """One iteration as the simulator runs it: each run of consecutive analytic tasks is one
        float (its seconds, summed as :meth:`iteration_time` sums them), each simulated task a
        ``(task, task.values(env))`` pair, in the phase's order."""
        tasks = self.app.phases[phase].tasks
        env = self.env(num_nodes=n, iteration=iteration, iterations=self.iterations[phase])
        if all(t.analytic for t in tasks):
            return [sum(t.duration(env, speed) for t in tasks)]
        out: list = []
        group: list[Task] = []
        for t in tasks:
            if t.analytic:
                group.append(t)
                continue
            if group:
                out.append(sum(g.duration(env, speed) for g in group))
                group = []
            out.append((t, t.values(env)))
        if group:
            out.append(sum(g.duration(env, speed) for g in group))
        return out

    def task_values(self, phase: int, iteration: int, n: int, speed: float) -> list:
        """One iteration task by task: ``(task, seconds)`` for analytic tasks, ``(task,
        Task.values)`` for the simulated ones (the energy accounting loads the hosts of each
        compute task)."""
        env = self.env(num_nodes=n, iteration=iteration, iterations=self.iterations[phase])
        return [(t, t.duration(env, speed) if t.analytic else t.values(env)) for t in self.app.phases[phase].tasks]

    def redistributed_bytes(self, n: int, old: int) -> float:
        """Bytes the job's data redistribution moves from ``old`` to ``n`` nodes (0: none)."""
        red = self.app.redistribution
        if red is None:
            return 0.0
        value = red.bytes.evaluate(self.env(num_nodes=n, old_num_nodes=old))
        if value < 0:
            raise ExpressionError(f"{red.bytes.text!r} is negative ({value}) with num_nodes={n}, "
                                  f"old_num_nodes={old}")
        return value

    def requested(self, phase: int, iteration: int, n: int) -> int | None:
        """The size the job asks for at the end of this iteration (None: no request)."""
        expr = self.app.phases[phase].evolving_request
        if expr is None or not self.requesting:
            return None
        env = self.env(num_nodes=n, iteration=iteration, iterations=self.iterations[phase])
        return int(round(expr.evaluate(env)))

    def model_work(self, sizes: list[tuple[int, int, int]], speed: float) -> float:
        """Seconds of computation for ``(phase, iteration, num_nodes)`` triples (invariant checks)."""
        return sum(self.iteration_time(p, i, n, speed) for p, i, n in sizes)


# ---------------------------------------------------------------------------------- parsing
class _Ctx:
    def __init__(self, source: str, where: str, arguments: Mapping[str, float]):
        self.source, self.where, self.arguments = source, where, arguments

    def fail(self, place: str, problem: str):
        raise InputError(self.source, f"{self.where}.{place}" if place else self.where, problem)

    def expr(self, value: Any, place: str, allowed: tuple[str, ...]) -> Expression:
        try:
            expr = Expression(value)
        except ExpressionError as exc:
            self.fail(place, str(exc))
        unknown = sorted(expr.names - set(allowed) - set(self.arguments))
        if unknown:
            known = ", ".join([*allowed, *sorted(self.arguments)]) or "none"
            self.fail(place, f"unknown variable(s) {', '.join(unknown)} in {expr.text!r} (known here: {known})")
        return expr

    def number(self, value: Any, place: str, *, low: float | None = None, high: float | None = None) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            self.fail(place, f"expected a number, got {json.dumps(value)}")
        if (low is not None and value < low) or (high is not None and value > high):
            self.fail(place, f"expected a number in [{low}, {high}], got {value}")
        return float(value)


def _network_task(ctx: _Ctx, spec: dict, place: str, allowed: tuple[str, ...], ttype: str) -> Task:
    io = ttype in IO_TASKS
    fields = {"type", "bytes", "pattern", "name", *(("storage",) if io else ())}
    extra = set(spec) - fields
    if extra or "bytes" not in spec or "pattern" not in spec:
        ctx.fail(place, f"a {ttype} task has 'bytes' and 'pattern'" + (" (and an optional 'storage')" if io else "")
                 + " and an optional 'name'" + (f"; unexpected {sorted(extra)}" if extra else ""))
    patterns = IO_PATTERNS if io else COMM_PATTERNS
    pattern = spec["pattern"]
    if pattern not in patterns:
        ctx.fail(f"{place}.pattern", f"unknown pattern {json.dumps(pattern)} (known: {', '.join(patterns)})")
    storage = spec.get("storage", IO_TASKS.get(ttype, ""))
    if not isinstance(storage, str) or (io and not storage):
        ctx.fail(f"{place}.storage", "expected a storage label (a non-empty string)")
    return Task(ttype, ctx.expr(spec["bytes"], f"{place}.bytes", allowed), pattern, storage=storage)


def _flops_task(ctx: _Ctx, spec: dict, place: str, allowed: tuple[str, ...], ttype: str) -> Task:
    """A compute task with ``flops`` (and, coupled, ``bytes`` and a ``pattern``) or a gpu task
    (``flops`` and / or ``bytes`` and a ``pattern``)."""
    extra = set(spec) - {"type", "flops", "per_node", "bytes", "pattern", "name"}
    if extra:
        ctx.fail(place, f"unexpected field(s) {sorted(extra)} of a {ttype} task (flops, per_node, bytes, pattern, "
                        "name)")
    if "flops" not in spec and "bytes" not in spec:
        ctx.fail(place, f"a {ttype} task has 'flops', 'bytes' or both")
    if ("bytes" in spec) != ("pattern" in spec):
        ctx.fail(place, f"a {ttype} task's 'bytes' go with a 'pattern' (and a pattern with bytes)")
    per_node = spec.get("per_node", False)
    if not isinstance(per_node, bool):
        ctx.fail(f"{place}.per_node", "expected true or false")
    flops = ctx.expr(spec.get("flops", 0), f"{place}.flops", allowed)
    comm, pattern = None, ""
    if "bytes" in spec:
        patterns = GPU_PATTERNS if ttype == "gpu" else COMM_PATTERNS
        pattern = spec["pattern"]
        if pattern not in patterns:
            ctx.fail(f"{place}.pattern", f"unknown pattern {json.dumps(pattern)} for a {ttype} task's bytes "
                                         f"(known: {', '.join(patterns)})")
        comm = ctx.expr(spec["bytes"], f"{place}.bytes", allowed)
    return Task(ttype, flops, "flops", per_node, comm=comm, comm_pattern=pattern)


def _task(ctx: _Ctx, spec: Any, place: str, allowed: tuple[str, ...], network: bool = False) -> Task:
    if isinstance(spec, (str, int, float)) and not isinstance(spec, bool):
        return Task("delay", ctx.expr(spec, place, allowed))
    if not isinstance(spec, dict):
        ctx.fail(place, "a task is an object (or a number of seconds, or an expression string)")
    ttype = spec.get("type")
    if ttype == "communication" or ttype in IO_TASKS:
        if not network:
            ctx.fail(f"{place}.type", f"a {ttype} task cannot be a cost (on_init, on_reconfiguration and "
                     "on_expansion take delay and compute tasks; the data moved at a resize is the "
                     "application's 'redistribution')")
        return _network_task(ctx, spec, place, allowed, ttype)
    if ttype == "delay":
        extra = set(spec) - {"type", "seconds", "name"}
        if extra or "seconds" not in spec:
            ctx.fail(place, "a delay task has 'seconds' (and an optional 'name') only"
                     + (f"; unexpected {sorted(extra)}" if extra else ""))
        return Task("delay", ctx.expr(spec["seconds"], f"{place}.seconds", allowed))
    if ttype == "gpu":
        if not network:
            ctx.fail(f"{place}.type", "a gpu task cannot be a cost (on_init, on_reconfiguration and on_expansion "
                     "take delay and compute tasks)")
        return _flops_task(ctx, spec, place, allowed, "gpu")
    if ttype != "compute":
        ctx.fail(f"{place}.type", f"unknown task type {json.dumps(ttype)} (delay, compute, gpu, communication, "
                 f"{', '.join(IO_TASKS)})")
    if ("flops" in spec) == ("seconds" in spec):
        ctx.fail(place, "a compute task has either 'flops' or 'seconds' (time on one node)")
    if "flops" in spec:
        if "bytes" in spec and not network:
            ctx.fail(f"{place}.bytes", "a cost's compute task has no communication (costs take delay and compute "
                     "tasks)")
        return _flops_task(ctx, spec, place, allowed, "compute")
    model = spec.get("model", "linear")
    if model not in _MODELS:
        ctx.fail(f"{place}.model", f"unknown model {json.dumps(model)} (known: {', '.join(_MODELS)})")
    wanted = {"linear": (), "amdahl": ("serial_fraction",), "downey": ("A", "sigma")}[model]
    extra = set(spec) - {"type", "seconds", "model", "name", *wanted}
    if extra:
        ctx.fail(place, f"unexpected field(s) {sorted(extra)} for model {model!r}")
    params = []
    for key in wanted:
        if key not in spec:
            ctx.fail(place, f"model {model!r} needs {key!r}")
        low, high = {"serial_fraction": (0.0, 1.0), "A": (1.0, None), "sigma": (0.0, None)}[key]
        params.append((key, ctx.number(spec[key], f"{place}.{key}", low=low, high=high)))
    return Task("compute", ctx.expr(spec["seconds"], f"{place}.seconds", allowed), model, False, tuple(params))


def _tasks(ctx: _Ctx, spec: Any, place: str, allowed: tuple[str, ...], network: bool = False) -> tuple[Task, ...]:
    if spec is None:
        return ()
    if isinstance(spec, list):
        return tuple(_task(ctx, t, f"{place}[{i}]", allowed, network) for i, t in enumerate(spec))
    return (_task(ctx, spec, place, allowed, network),)


def _redistribution(ctx: _Ctx, spec: Any, place: str) -> Redistribution | None:
    if spec is None:
        return None
    if isinstance(spec, dict):
        extra = set(spec) - {"bytes", "via"}
        if extra or "bytes" not in spec:
            ctx.fail(place, "a redistribution has 'bytes' (an expression) and an optional 'via' (a storage label)"
                     + (f"; unexpected {sorted(extra)}" if extra else ""))
        via = spec.get("via")
        if via is not None and (not isinstance(via, str) or not via):
            ctx.fail(f"{place}.via", "expected a storage label (a non-empty string)")
        return Redistribution(ctx.expr(spec["bytes"], f"{place}.bytes", COST_VARS), via)
    return Redistribution(ctx.expr(spec, place, COST_VARS))


def _application(ctx: _Ctx, app: Any, place: str) -> tuple[Application, tuple[int, ...]]:
    if not isinstance(app, dict):
        ctx.fail(place, "the application model must be an object with 'phases'")
    extra = set(app) - {"phases", "on_init", "on_reconfiguration", "on_expansion", "redistribution", "name"}
    if extra:
        ctx.fail(place, f"unexpected field(s) {sorted(extra)} (phases, on_init, on_reconfiguration, on_expansion, "
                 "redistribution)")
    phases_doc = app.get("phases")
    if not isinstance(phases_doc, list) or not phases_doc:
        ctx.fail(f"{place}.phases", "expected a non-empty list of phases")
    phases, counts = [], []
    for i, ph in enumerate(phases_doc):
        where = f"{place}.phases[{i}]"
        if not isinstance(ph, dict):
            ctx.fail(where, "a phase is an object with 'tasks'")
        extra = set(ph) - {"name", "iterations", "tasks", "scheduling_point", "evolving_request"}
        if extra:
            ctx.fail(where, f"unexpected field(s) {sorted(extra)}")
        iters = ctx.expr(ph.get("iterations", 1), f"{where}.iterations", ())
        try:
            count = iters.evaluate(ctx.arguments)
        except ExpressionError as exc:
            ctx.fail(f"{where}.iterations", str(exc))
        if count != int(count) or not 1 <= count <= 10**7:
            ctx.fail(f"{where}.iterations", f"expected an integer in [1, 10000000], got {count}")
        tasks = _tasks(ctx, ph.get("tasks"), f"{where}.tasks", TASK_VARS, network=True)
        if not tasks:
            ctx.fail(f"{where}.tasks", "a phase needs at least one task")
        point = ph.get("scheduling_point", True)
        if not isinstance(point, bool):
            ctx.fail(f"{where}.scheduling_point", "expected true or false")
        request = ph.get("evolving_request")
        request = None if request is None else ctx.expr(request, f"{where}.evolving_request", TASK_VARS)
        name = ph.get("name", f"phase{i}")
        if not isinstance(name, str):
            ctx.fail(f"{where}.name", "expected a string")
        phases.append(Phase(name, iters, tasks, point, request))
        counts.append(int(count))
    return Application(tuple(phases), _tasks(ctx, app.get("on_init"), f"{place}.on_init", COST_VARS),
                       _tasks(ctx, app.get("on_reconfiguration"), f"{place}.on_reconfiguration", COST_VARS),
                       _tasks(ctx, app.get("on_expansion"), f"{place}.on_expansion", COST_VARS),
                       _redistribution(ctx, app.get("redistribution"), f"{place}.redistribution")), tuple(counts)


def parse_elastic(job: Mapping[str, Any], profile: Mapping[str, Any] | None, source: str, where: str,
                  profile_where: str = "profile") -> ElasticJob | None:
    """The elastic description of Batsim job object ``job`` (None without an ``elastic`` field).

    ``profile``: the job's profile object (its ``elastic`` is the application model, unless
    the job has ``elastic.application``); ``where``: the job's place (``jobs[3]``).  Raises
    :class:`InputError` naming the file, the place and the problem."""
    spec = job.get("elastic")
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise InputError(source, f"{where}.elastic", "expected an object with 'type' (rigid, moldable, malleable, "
                                                     "evolving or adaptive)")
    res = job.get("res")
    if isinstance(res, bool) or not isinstance(res, int) or res < 1:
        raise InputError(source, f"{where}.res", f"expected a positive integer, got {json.dumps(res)}")
    extra = set(spec) - {"type", "num_nodes_min", "num_nodes_max", "num_gpus_per_node", "arguments", "application"}
    if extra:
        raise InputError(source, f"{where}.elastic", f"unexpected field(s) {sorted(extra)} (type, num_nodes_min, "
                                                     "num_nodes_max, num_gpus_per_node, arguments, application)")
    gpus = spec.get("num_gpus_per_node", 0)
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 0:
        raise InputError(source, f"{where}.elastic.num_gpus_per_node",
                         f"expected a non-negative integer, got {json.dumps(gpus)}")
    kind = spec.get("type", "rigid")
    if kind not in KINDS:
        raise InputError(source, f"{where}.elastic.type", f"unknown job type {json.dumps(kind)} "
                                                          f"(known: {', '.join(KINDS)})")
    bounds = []
    for key in ("num_nodes_min", "num_nodes_max"):
        value = spec.get(key, res)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(source, f"{where}.elastic.{key}", f"expected a positive integer, got {json.dumps(value)}")
        bounds.append(value)
    lo, hi = bounds
    if lo > hi:
        raise InputError(source, f"{where}.elastic", f"num_nodes_min ({lo}) is above num_nodes_max ({hi})")
    if not lo <= res <= hi:
        raise InputError(source, f"{where}.res", f"res ({res}) is outside [num_nodes_min, num_nodes_max] = [{lo}, {hi}]"
                                                 " (Batsim runs the job rigid on res nodes)")
    if kind == "rigid" and lo != hi:
        raise InputError(source, f"{where}.elastic", "a rigid job has num_nodes_min = num_nodes_max = res")
    args = spec.get("arguments", {})
    if not isinstance(args, dict):
        raise InputError(source, f"{where}.elastic.arguments", "expected an object of numbers")
    arguments: dict[str, float] = {}
    for key, value in args.items():
        if not key.isidentifier() or key in RESERVED:
            raise InputError(source, f"{where}.elastic.arguments.{key}",
                             "an argument name is an identifier other than " + ", ".join(RESERVED))
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise InputError(source, f"{where}.elastic.arguments.{key}", f"expected a number, got {json.dumps(value)}")
        arguments[key] = float(value)
    if "application" in spec:
        app_doc, ctx = spec["application"], _Ctx(source, f"{where}.elastic", arguments)
        place = "application"
    else:
        app_doc = profile.get("elastic") if isinstance(profile, Mapping) else None
        if app_doc is None:
            raise InputError(source, f"{where}.elastic", "no application model: give 'application' here or an "
                                                         f"'elastic' object in the job's profile ({profile_where})")
        ctx, place = _Ctx(source, profile_where, arguments), "elastic"
    app, counts = _application(ctx, app_doc, place)
    if not gpus:
        for i, phase in enumerate(app.phases):
            for k, task in enumerate(phase.tasks):
                if task.type == "gpu":
                    ctx.fail(f"{place}.phases[{i}].tasks[{k}]", "a gpu task runs on the job's GPUs, and the job has "
                             f"none: give its elastic.num_gpus_per_node ({where})")
    return ElasticJob(kind, lo, hi, res, arguments, app, counts, gpus)
