"""ElastiSim's workloads read as Batsim workloads with elastic jobs (``coburst workload
from-elastisim``).

ElastiSim (Özden et al., ICPP 2022; elastisim/elastisim) reads a ``jobs.json`` — ``{"jobs":
[{"type", "submit_time", "walltime", "num_nodes" | "num_nodes_min", "num_nodes_max",
"arguments", "attributes", "application_model": FILE}]}`` — and one application model per
``FILE`` (``on_init``, ``on_reconfiguration``, ``on_expansion``, ``phases`` of tasks), its
expressions in exprtk's syntax.  :func:`convert` gives the same jobs in coburst's model
(:mod:`coburst.models.elastic`):

* job ``k`` of the file (0-based, ElastiSim's own numbering) is Batsim job ``k``, submitted at
  ``submit_time``; its walltime is ``walltime`` (none when absent or 0); ``res`` (the size the
  real Batsim runs it rigid on, and an evolving job's start size) is ``attributes.res`` when
  given, else ``num_nodes`` (rigid), else ``num_nodes_min``; the ``arguments`` are numbers;
* its profile is a ``delay`` of the model's time on ``res`` nodes of ``speed`` flop/s (what
  the real Batsim runs; a coupled task's computation counted, its communication, network and
  gpu tasks not; 1 s when that is nothing) carrying the application model;
* tasks: ``idle`` and ``busy_wait`` become ``delay`` tasks (``uniform`` and ``root_only``: the
  delay; ``total`` / ``all_ranks``: the delay over the nodes); ``cpu`` becomes a ``compute``
  task (``flops`` per node for ``uniform`` and ``root_only``, split over the nodes for ``total``
  / ``all_ranks``), with ``bytes`` too a compute task coupled with its communication (one
  parallel task of both, which overlaps them as ElastiSim does), with ``bytes`` only a
  ``communication`` task; ``gpu`` becomes a ``gpu`` task (the same flops, its bytes'
  ``communication_pattern`` as its ``pattern``); ``pfs_read`` / ``pfs_write`` / ``bb_read`` / ``bb_write``
  keep their type, bytes and pattern; a task's ``iterations`` and ``sequence`` tasks are
  unrolled (at most :data:`MAX_UNROLLED` tasks);
* expressions are translated from exprtk's syntax: ``c ? a : b``, ``&&``, ``||``, ``!``,
  ``phase_iteration`` (the iteration in the phase: coburst's ``iteration``; in an
  ``evolving_request``, ``iteration + 1``: ElastiSim asks at its point before an iteration,
  coburst at its point after the one before), and ``num_nodes`` in ``on_expansion`` (ElastiSim
  runs it on the added nodes: ``num_nodes - old_num_nodes``).

A job's GPUs: ``num_gpus_per_node`` (rigid) or ``num_gpus_per_node_min`` = ``_max`` (the
others: coburst keeps the count fixed; different bounds are refused) becomes
``elastic.num_gpus_per_node``.

One difference stays, by design: ElastiSim's scheduling points come *before* each iteration of
a phase with ``scheduling_point`` (not before the job's first), coburst's *after* each (not
after the job's last); between a phase without points and one with, ElastiSim stops at the
boundary and coburst after the second phase's first iteration
(``docs/tutorials/malleable.md``, "Against ElastiSim").

Read as coburst's model, with a note naming the place (``convert(notes=...)``; the command
prints it): a task whose nodes have different loads (``root_only``, ``even_ranks``,
``odd_ranks``) without ``synchronized``, from which ElastiSim's nodes go on one by one and
coburst's together.

Not taken, each named with its place: GPU tasks in the costs, GPUs per node that may change,
asynchronous I/O, ``vector`` and ``matrix``
patterns (explicit per-rank loads), ``even_ranks`` / ``odd_ranks`` on delay and compute tasks,
network tasks in the costs (coburst's costs take delay and compute tasks).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from coburst.errors import InputError
from coburst.validate import read_json
from coburst.models.elastic import KINDS, IO_TASKS, parse_elastic
from coburst.models.patterns import GPU_PATTERNS

#: task patterns that give a job's nodes different loads
RANK_PATTERNS = ("root_only", "even_ranks", "odd_ranks")

__all__ = ["convert", "translate_expression", "MAX_UNROLLED"]

#: tasks a phase may unroll into (``iterations`` of tasks and sequences)
MAX_UNROLLED = 10_000

_TOKEN = re.compile(r"\s*(?:(\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|([A-Za-z_]\w*)|(&&|\|\||==|!=|<=|>=|"
                    r"\*\*|[-+*/%^()<>?:,!]))")


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"unexpected {text[pos:pos + 20]!r} at character {pos}")
        out.append(m.group(m.lastindex))
        pos = m.end()
    return out


def _ternary(tokens: list[str], names: dict[str, str]) -> str:
    """``tokens`` (one parenthesised level flattened by the caller) with ``c ? a : b`` rewritten."""
    depth, q = 0, None
    for i, t in enumerate(tokens):
        depth += t == "("
        depth -= t == ")"
        if depth == 0 and t == "?":
            q = i
            break
    if q is None:
        return " ".join(_plain(tokens, names))
    depth, nested, colon = 0, 0, None
    for i in range(q + 1, len(tokens)):
        t = tokens[i]
        depth += t == "("
        depth -= t == ")"
        if depth == 0 and t == "?":
            nested += 1
        elif depth == 0 and t == ":":
            if nested == 0:
                colon = i
                break
            nested -= 1
    if colon is None:
        raise ValueError("'?' without its ':'")
    cond, a, b = tokens[:q], tokens[q + 1:colon], tokens[colon + 1:]
    return f"(({_ternary(a, names)}) if ({_ternary(cond, names)}) else ({_ternary(b, names)}))"


def _plain(tokens: list[str], names: dict[str, str]) -> list[str]:
    out = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t == "(":  # a parenthesised group: its own ternaries
            depth, j = 0, i
            while j < len(tokens):
                depth += tokens[j] == "("
                depth -= tokens[j] == ")"
                if depth == 0:
                    break
                j += 1
            if j == len(tokens):
                raise ValueError("unbalanced parentheses")
            inner = tokens[i + 1:j]
            # (a function's arguments: each argument on its own)
            args, depth, start = [], 0, 0
            for k, u in enumerate(inner):
                depth += u == "("
                depth -= u == ")"
                if depth == 0 and u == ",":
                    args.append(inner[start:k])
                    start = k + 1
            args.append(inner[start:])
            out.append("(" + ", ".join(_ternary(a, names) for a in args) + ")")
            i = j + 1
            continue
        out.append(names.get(t) or {"&&": "and", "||": "or", "!": "not", "phase_iteration": "iteration"}.get(t, t))
        i += 1
    return out


def translate_expression(text: Any, names: dict[str, str] | None = None) -> Any:
    """An exprtk expression of ElastiSim as coburst's (numbers are kept as they are); ``names``:
    variables to write otherwise."""
    if not isinstance(text, (str, int, float)) or isinstance(text, bool):
        return text
    text = str(text)
    return _ternary(_tokens(text), names or {})


class _Reader:
    def __init__(self, source: str):
        self.source = source
        #: variables written otherwise in the expressions being read (see :meth:`application`)
        self.names: dict[str, str] = {}
        #: where the converted file may give other dates than ElastiSim (``PLACE: what``)
        self.notes: list[str] = []

    def rank_dependent(self, spec: dict, place: str, pattern: str) -> None:
        """A task whose nodes have different loads (``pattern``) and no ``synchronized``: in
        ElastiSim its nodes go on from it at different times, in coburst together."""
        if pattern in RANK_PATTERNS and spec.get("synchronized") is not True:
            self.notes.append(f"{self.source}: {place}: pattern {pattern!r} without 'synchronized': ElastiSim's "
                              "nodes go on from it one by one, coburst's together when the slowest is done "
                              "(the dates may differ)")

    def fail(self, place: str, problem: str):
        raise InputError(self.source, place, problem)

    def expr(self, value: Any, place: str, names: dict[str, str] | None = None) -> Any:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            self.fail(place, f"expected a number or an expression, got {json.dumps(value)[:80]}")
        if not isinstance(value, str) and not names:
            return value
        try:
            return translate_expression(value, names or self.names)
        except ValueError as exc:
            self.fail(place, f"cannot read the expression {str(value)[:200]!r}: {exc}")

    def repeat(self, spec: dict, place: str) -> int:
        k = spec.get("iterations", 1)
        if isinstance(k, str):
            try:
                k = float(k)
            except ValueError:
                self.fail(f"{place}.iterations", f"a task's iterations must be a number here, got {k[:80]!r}")
        if isinstance(k, bool) or not isinstance(k, (int, float)) or k != int(k) or not 1 <= k <= MAX_UNROLLED:
            self.fail(f"{place}.iterations", f"expected an integer in [1, {MAX_UNROLLED}], got {json.dumps(k)}")
        return int(k)

    def tasks(self, doc: Any, place: str, cost: bool) -> list[dict]:
        if not isinstance(doc, list):
            self.fail(place, "expected a list of tasks")
        out: list[dict] = []
        for i, spec in enumerate(doc):
            out.extend(self.task(spec, f"{place}[{i}]", cost))
            if len(out) > MAX_UNROLLED:
                self.fail(place, f"unrolls into more than {MAX_UNROLLED} tasks")
        return out

    def task(self, spec: Any, place: str, cost: bool) -> list[dict]:
        if not isinstance(spec, dict):
            self.fail(place, "a task is an object with a 'type'")
        ttype = str(spec.get("type", "")).lower()
        k = self.repeat(spec, place)
        if ttype == "sequence":
            return self.tasks(spec.get("tasks"), f"{place}.tasks", cost) * k
        if spec.get("async") is True:
            self.fail(f"{place}.async", "asynchronous I/O is not modelled")
        if ttype in ("idle", "busy_wait"):
            pattern = str(spec.get("pattern", "uniform")).lower()
            seconds = self.expr(spec.get("delay"), f"{place}.delay")
            self.rank_dependent(spec, place, pattern)
            if pattern in ("total", "all_ranks"):
                seconds = f"({seconds}) / num_nodes"
            elif pattern not in ("uniform", "root_only"):
                self.fail(f"{place}.pattern", f"pattern {pattern!r} is not taken for a delay")
            return [{"type": "delay", "seconds": seconds}] * k
        if ttype in ("cpu", "gpu"):
            if ttype == "gpu" and cost:
                self.fail(f"{place}.type", "a gpu task in a cost is not modelled (costs take delay and compute tasks)")
            task: dict[str, Any] = {"type": "compute" if ttype == "cpu" else "gpu"}
            if spec.get("flops") is not None:
                pattern = str(spec.get("computation_pattern", "")).lower()
                if pattern not in ("uniform", "root_only", "total", "all_ranks"):
                    self.fail(f"{place}.computation_pattern", f"pattern {pattern!r} is not taken")
                self.rank_dependent(spec, place, pattern)
                task.update(flops=self.expr(spec["flops"], f"{place}.flops"),
                            **({"per_node": True} if pattern in ("uniform", "root_only") else {}))
            if spec.get("bytes") is not None:
                if cost:
                    self.fail(f"{place}.bytes", "communication in a cost is not modelled (costs take delay and "
                                                "compute tasks)")
                pattern = str(spec.get("communication_pattern", "")).lower()
                if ttype == "gpu" and pattern not in GPU_PATTERNS:
                    self.fail(f"{place}.communication_pattern", f"pattern {pattern!r} is not taken for a gpu task "
                                                                f"(known: {', '.join(GPU_PATTERNS)})")
                task.update(bytes=self.expr(spec["bytes"], f"{place}.bytes"), pattern=pattern)
                if "flops" not in task and ttype == "cpu":  # (bytes only: a communication task)
                    task["type"] = "communication"
            if len(task) == 1:
                self.fail(place, f"a {ttype} task has 'flops' or 'bytes'")
            return [task] * k
        if ttype in IO_TASKS:
            if cost:
                self.fail(f"{place}.type", f"a {ttype} task in a cost is not modelled (costs take delay and compute "
                                           "tasks)")
            pattern = str(spec.get("pattern", "")).lower()
            self.rank_dependent(spec, place, pattern)
            return [{"type": ttype, "bytes": self.expr(spec.get("bytes"), f"{place}.bytes"), "pattern": pattern}] * k
        self.fail(f"{place}.type", f"task type {spec.get('type')!r} is not taken (idle, busy_wait, cpu, gpu, "
                                   "pfs_read, pfs_write, bb_read, bb_write, sequence)")

    def application(self, doc: Any, place: str) -> dict:
        if not isinstance(doc, dict) or not isinstance(doc.get("phases"), list):
            self.fail(place, "an application model is an object with 'phases'")
        app: dict[str, Any] = {}
        for key in ("on_init", "on_reconfiguration", "on_expansion"):
            if doc.get(key) is not None:
                one = doc[key]
                if not isinstance(one, dict):
                    self.fail(f"{place}{key}", "expected an object with 'tasks'")
                # (ElastiSim runs on_expansion on the added nodes: its num_nodes is their number)
                self.names = {"num_nodes": "(num_nodes - old_num_nodes)",
                              "num_gpus": "((num_nodes - old_num_nodes) * num_gpus_per_node)"} \
                    if key == "on_expansion" else {}
                try:
                    tasks = self.tasks(one.get("tasks", []), f"{place}{key}.tasks", cost=True)
                finally:
                    self.names = {}
                app[key] = tasks * self.repeat(one, f"{place}{key}")
        phases = []
        for i, ph in enumerate(doc["phases"]):
            where = f"{place}phases[{i}]"
            if not isinstance(ph, dict):
                self.fail(where, "a phase is an object with 'tasks'")
            phase = {"iterations": self.expr(ph.get("iterations", 1), f"{where}.iterations"),
                     "scheduling_point": ph.get("scheduling_point", True),
                     "tasks": self.tasks(ph.get("tasks"), f"{where}.tasks", cost=False)}
            if ph.get("evolving_request") is not None:
                # (ElastiSim asks at its point before an iteration, coburst at its point after the
                # one before: ElastiSim's phase_iteration is coburst's iteration + 1 there)
                phase["evolving_request"] = self.expr(ph["evolving_request"], f"{where}.evolving_request",
                                                      {"phase_iteration": "(iteration + 1)"})
            phases.append(phase)
        app["phases"] = phases
        return app


def _number(reader: _Reader, value: Any, place: str) -> float:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            reader.fail(place, f"an argument must be a number (coburst's expressions read numbers), got {value[:80]!r}")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        reader.fail(place, f"expected a number, got {json.dumps(value)[:80]}")
    return float(value)


def _gpus_per_node(reader: _Reader, job: dict, kind: str, where: str) -> int:
    """A job's GPUs per node: ``num_gpus_per_node`` (rigid), ``num_gpus_per_node_min`` and
    ``_max`` (the others, equal: coburst keeps the count fixed while the job runs)."""
    if kind == "rigid":
        value, name = job.get("num_gpus_per_node", 0), "num_gpus_per_node"
    else:
        value, name = job.get("num_gpus_per_node_min", 0), "num_gpus_per_node_min"
        top = job.get("num_gpus_per_node_max", 0)
        if top != value:
            reader.fail(where, f"num_gpus_per_node_min ({json.dumps(value)}) and num_gpus_per_node_max "
                               f"({json.dumps(top)}) differ: coburst keeps a job's GPUs per node fixed")
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        reader.fail(f"{where}.{name}", f"expected a non-negative integer, got {json.dumps(value)}")
    return value


def _coupled_seconds(spec, n: int, speed: float) -> float:
    """Seconds the computation of the coupled compute tasks takes on ``n`` nodes of ``speed``."""
    total = 0.0
    for p, phase in enumerate(spec.app.phases):
        for i in range(spec.iterations[p]):
            env = spec.env(num_nodes=n, iteration=i, iterations=spec.iterations[p])
            total += sum(replace(t, comm=None).duration(env, speed) for t in phase.tasks if t.coupled)
    return total


def convert(jobs_path: str | Path, nodes: int | None = None, speed: float = 1e9,
            notes: list[str] | None = None) -> dict:
    """The Batsim workload of ElastiSim's ``jobs_path`` (its application models read beside it).
    ``notes`` (a list), if given, gets a line for every task of an application model where the
    converted workload may give other dates than ElastiSim (a task whose nodes have different
    loads, without ``synchronized``), naming the file and the place."""
    jobs_path = Path(jobs_path)
    src = str(jobs_path)
    reader = _Reader(src)
    doc = read_json(jobs_path, "ElastiSim jobs file")
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
        reader.fail("", "an ElastiSim jobs file is an object with a 'jobs' list")
    apps: dict[str, dict] = {}
    jobs, profiles, keys = [], {}, {}
    for k, job in enumerate(doc["jobs"]):
        where = f"jobs[{k}]"
        if not isinstance(job, dict):
            reader.fail(where, "a job is an object")
        kind = str(job.get("type", "")).lower()
        if kind not in KINDS:
            reader.fail(f"{where}.type", f"unknown job type {job.get('type')!r} (known: {', '.join(KINDS)})")
        gpus = _gpus_per_node(reader, job, kind, where)
        model = job.get("application_model")
        if not isinstance(model, str) or not model:
            reader.fail(f"{where}.application_model", "expected the path of an application model")
        path = (jobs_path.parent / model).resolve()
        if str(path) not in apps:
            app_reader = reader_for(path)
            apps[str(path)] = app_reader.application(read_json(path, "ElastiSim application model"), "")
            if notes is not None:
                notes.extend(app_reader.notes)
        attributes = job.get("attributes") or {}
        if kind == "rigid":
            lo = hi = job.get("num_nodes")
        else:
            lo, hi = job.get("num_nodes_min"), job.get("num_nodes_max")
        for name, value in (("num_nodes" if kind == "rigid" else "num_nodes_min", lo), ("num_nodes_max", hi)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                reader.fail(f"{where}.{name}", f"expected a positive integer, got {json.dumps(value)}")
        res = attributes.get("res", lo) if isinstance(attributes, dict) else lo
        res = int(_number(reader, res, f"{where}.attributes.res"))
        arguments = {}
        for name, value in (job.get("arguments") or {}).items():
            arguments[name] = _number(reader, value, f"{where}.arguments.{name}")
        walltime = job.get("walltime", 0) or 0
        walltime = _number(reader, walltime, f"{where}.walltime")
        elastic = {"type": kind, "num_nodes_min": lo, "num_nodes_max": hi, **({"num_gpus_per_node": gpus} if gpus
                                                                              else {}),
                   **({"arguments": arguments} if arguments else {})}
        batsim_job = {"id": k, "subtime": _number(reader, job.get("submit_time", 0), f"{where}.submit_time"),
                      "walltime": walltime if walltime > 0 else -1, "res": res, "elastic": elastic}
        key = (str(path), res, json.dumps(arguments, sort_keys=True))
        if key not in keys:
            app = apps[str(path)]
            spec = parse_elastic({**batsim_job}, {"elastic": app}, src, where, f"{model} (as converted)")
            seconds = spec.cost(spec.app.on_init, res, res, speed) + spec.model_work(
                [(p, i, res) for p, count in enumerate(spec.iterations) for i in range(count)], speed)
            seconds = (seconds + _coupled_seconds(spec, res, speed)) or 1.0
            name = f"{Path(model).stem}" + (f"@{len(keys)}" if any(kk[0] == str(path) for kk in keys) else "")
            keys[key] = name
            profiles[name] = {"type": "delay", "delay": seconds, "elastic": app}
        batsim_job["profile"] = keys[key]
        jobs.append(batsim_job)
    top = max([j["elastic"]["num_nodes_max"] for j in jobs] + [j["res"] for j in jobs] + [1])
    if nodes is not None and nodes < top:
        raise InputError("--nodes", None, f"{nodes} nodes, but a job of {src} asks for up to {top}")
    return {"nb_res": nodes or top, "description": f"converted from ElastiSim's {jobs_path.name} "
                                                   "(coburst workload from-elastisim)",
            "jobs": jobs, "profiles": profiles}


def reader_for(path: Path) -> _Reader:
    return _Reader(str(path))
