"""Batsim 4.2.1's workflows (``-W DAX_FILE``, ``--WS CUT_DAX_FILE START_TIME``), with
``--workflow-jobs-limit`` and ``--ignore-beyond-last-workflow``.

What Batsim does, and this module reproduces (sources in Batsim 4.2.1's ``src/``):

* ``workflow.cpp`` ``Workflow::load_from_xml`` (pugixml): the ``<job>`` elements of the root
  ``<adag>`` element are the tasks: ``id``, ``runtime`` (``strtod``, 0 when absent) and
  ``num_procs`` (``strtol``, 1 when absent or not positive); a later task with the same id
  replaces an earlier one.  Each ``<child ref>``'s ``<parent ref>`` elements are its
  dependencies (an unknown id aborts Batsim).  ``add_edge`` keeps a parent once in the
  child's parents, but -- a Batsim bug kept here -- appends the child to the parent's
  children every time the edge is listed.
* ``batsim.cpp``: workflow ``i`` of ``-W`` is the workload ``wf<i>``; the ``i``-th ``--WS``
  pair is ``wfc<i>``, started at ``START_TIME`` (``std::stod``, >= 0).  Each is an empty
  static workload (listed in ``SIMULATION_BEGINS`` with the DAX file and no profiles) whose
  submitter is created after the workload submitters.
* ``job_submitter.cpp`` ``workflow_submitter_process``: it says hello, sleeps until the
  start time, then submits the ready tasks one job per message (the source tasks first, in
  task-id order), at most ``--workflow-jobs-limit`` at once (0: no limit), and waits for
  the server to call it back when one of its jobs completes: the children of that task
  whose every parent completed become ready (in the order of the task's children).  Each
  task becomes job ``<wf>!<n>`` (n counts submissions), profile ``<wf>_<task id>`` (a
  ``delay`` of the task's runtime), ``subtime`` = the date printed ``%f``, ``walltime`` =
  runtime + 10 printed ``%f``, ``res`` = num_procs.  When no task is ready nor running it
  says goodbye.
* ``server.cpp``: ``server_on_job_completed`` calls the workflow's submitter back (a
  message from the server to the submitter, the server waiting for it to be received)
  *before* it appends ``JOB_COMPLETED``; a killed job is not called back (Batsim's
  ``server_on_killing_done`` has no call-back: the workflow never ends);
  ``server_on_job_submitted`` ignores every submission, of any workload, once the workflows
  are done under ``--ignore-beyond-last-workflow`` -- with Batsim's test
  ``nb_workflow_submitters_finished == workflows.size()`` where ``Workflows::size()``
  returns a ``bool``: it holds when exactly one workflow submitter has finished.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generator, Sequence

from coburst.errors import InputError
from coburst.simulator.kernel import Get, Mailbox, Put, Sleep
from coburst.simulator.protocol import rapidjson_double
from coburst.simulator.workload import Job, Profile, Workload, job_from_json

if TYPE_CHECKING:  # pragma: no cover
    from coburst.simulator.view import SimulatorView

__all__ = ["Task", "Workflow", "Workflows", "c_strtod", "c_strtol", "load_dax", "parse_start_time"]


@dataclass(eq=False)
class Task:
    """A task of a workflow (Batsim's ``Task``)."""

    id: str
    num_procs: int
    runtime: float
    line: int
    parents: list["Task"] = field(default_factory=list)
    children: list["Task"] = field(default_factory=list)
    nb_parent_completed: int = 0


@dataclass
class Workflow:
    """One ``-W``/``--WS`` workflow: the workload ``name`` and its tasks."""

    name: str  # wf0, wfc0, ...
    path: str
    start_time: float
    tasks: dict[str, Task]  # by id (Batsim: std::map, i.e. sorted by id)
    mailbox: Mailbox | None = None

    def source_tasks(self) -> list[Task]:
        """``Workflow::get_source_tasks``: the tasks without parents, in id order."""
        return [self.tasks[k] for k in sorted(self.tasks) if not self.tasks[k].parents]


# ---------------------------------------------------------------- C number parsing
_SPACE = " \t\n\v\f\r"
_DEC = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_HEX = re.compile(r"([+-]?)0[xX]((?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?)")
_SPECIAL = re.compile(r"([+-]?)(inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?)", re.IGNORECASE)


def c_strtod(text: str) -> tuple[float, bool]:
    """C's ``strtod(text, NULL)``: the longest number at the start (after white space), 0 when
    there is none.  Returns (value, whether the whole text was that number)."""
    s = text.lstrip(_SPACE)
    m = _HEX.match(s)
    if m:
        value = float.fromhex(m.group(0))
    else:
        m = _SPECIAL.match(s)
        if m:
            value = math.inf if m.group(2)[0] in "iI" else math.nan
            value = -value if m.group(1) == "-" else value
        else:
            m = _DEC.match(s)
            if not m:
                return 0.0, False
            value = float(m.group(0))  # glibc's strtod is correctly rounded, as Python's float()
    return value, m.end() == len(s) and len(s) == len(text)


def c_strtol(text: str) -> tuple[int, bool]:
    """``static_cast<int>(strtol(text, NULL, 10))`` (LP64: clamped to a 64-bit long, then its
    low 32 bits).  Returns (value, whether the whole text was that number)."""
    s = text.lstrip(_SPACE)
    m = re.match(r"[+-]?\d+", s)
    if not m:
        return 0, False
    value = max(-2 ** 63, min(2 ** 63 - 1, int(m.group(0))))
    value = (value + 2 ** 31) % 2 ** 32 - 2 ** 31
    return value, m.end() == len(s) and len(s) == len(text)


def parse_start_time(text: str) -> float:
    """``--WS``'s start time as Batsim reads it (``std::stod``, then ``>= 0``)."""
    s = text.lstrip(_SPACE)
    value, _ = c_strtod(s)
    if not (_DEC.match(s) or _HEX.match(s) or _SPECIAL.match(s)):
        raise InputError("--WS/--workflow-start", repr(text), "cannot read the start time as a number")
    if not value >= 0:
        raise InputError("--WS/--workflow-start", repr(text), "the start time must be >= 0")
    return value


# ---------------------------------------------------------------- DAX files
@dataclass
class _Element:
    name: str
    attrs: dict[str, str]
    line: int
    children: list["_Element"] = field(default_factory=list)


def _read_xml(path: str) -> _Element | None:
    """The document's root element (names as written: no namespace processing, as pugixml)."""
    from xml.parsers import expat

    from coburst.validate import read_bytes

    data = read_bytes(path, "workflow (DAX) file")
    parser = expat.ParserCreate()
    stack: list[_Element] = []
    root: list[_Element] = []

    def start(name, attrs):
        el = _Element(name, dict(attrs), parser.CurrentLineNumber)
        (stack[-1].children if stack else root).append(el)
        stack.append(el)

    def end(name):
        stack.pop()

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise InputError(path, f"line {exc.lineno} column {exc.offset + 1}",
                         f"invalid XML: {expat.ErrorString(exc.code)} (Batsim: 'Invalid XML file')") from None
    return root[0] if root else None


def _warn(source: str, where: str | None, problem: str) -> None:
    from coburst.simulator.platform import warn

    warn(source, where, problem)


def load_dax(path: str) -> dict[str, Task]:
    """The tasks of a DAX file and their dependencies (``Workflow::load_from_xml``)."""
    root = _read_xml(path)
    if root is None or root.name != "adag":
        _warn(path, None, "no <adag> root element: the workflow has no task (as in Batsim)")
        return {}
    tasks: dict[str, Task] = {}
    for el in root.children:
        if el.name != "job":
            continue
        where = f"line {el.line} <job>"
        num_procs = 1
        if "num_procs" in el.attrs:
            num_procs, whole = c_strtol(el.attrs["num_procs"])
            if not whole:
                _warn(path, where, f"num_procs={el.attrs['num_procs']!r} read as {num_procs} (C's strtol)")
            if num_procs <= 0:
                num_procs = 1
        if "runtime" not in el.attrs:
            _warn(path, where, "no runtime: the task lasts 0 s (as in Batsim)")
        runtime, whole = c_strtod(el.attrs.get("runtime", ""))
        if "runtime" in el.attrs and not whole:
            _warn(path, where, f"runtime={el.attrs['runtime']!r} read as {runtime!r} (C's strtod)")
        if not (runtime >= 0 and math.isfinite(runtime)):
            raise InputError(path, where, f"runtime {el.attrs.get('runtime')!r}: coburst simulates tasks of a "
                                          "finite runtime >= 0 only")
        tid = el.attrs.get("id", "")
        if tid in tasks:
            _warn(path, where, f"a second task with id {tid!r} replaces the first one (as in Batsim)")
        tasks[tid] = Task(tid, num_procs, runtime, el.line)
    for el in root.children:
        if el.name != "child":
            continue
        child = _task(tasks, el, path)
        for pel in el.children:
            if pel.name != "parent":
                continue
            parent = _task(tasks, pel, path)
            if parent not in child.parents:
                child.parents.append(parent)
            if parent not in parent.children:  # Batsim's add_edge tests the parent, not the child
                if child in parent.children:
                    _warn(path, f"line {pel.line} <parent ref={parent.id!r}>",
                          f"edge {parent.id!r} -> {child.id!r} listed again: Batsim counts {parent.id!r}'s "
                          f"completion twice for {child.id!r} (which then may never be submitted, or twice)")
                parent.children.append(child)
    return tasks


def _task(tasks: dict[str, Task], el: _Element, path: str) -> Task:
    ref = el.attrs.get("ref", "")
    task = tasks.get(ref)
    if task is None:
        raise InputError(path, f"line {el.line} <{el.name} ref={ref!r}>",
                         f"no <job> with id {ref!r} (Batsim aborts: Invalid Workflow::get_task call)")
    return task


# ---------------------------------------------------------------- the simulation side
class Workflows:
    """Batsim's workflow submitters and the server's side of them, for one
    :class:`~coburst.simulator.engine.Simulator` (``sim.workflows``)."""

    def __init__(self, sim: "SimulatorView", workflows: Sequence[Workflow], jobs_limit: int, ignore_beyond_last: bool):
        self.sim = sim
        self.workflows = list(workflows)
        self.by_name = {wf.name: wf for wf in self.workflows}
        self.limit = jobs_limit
        self.ignore_beyond_last = ignore_beyond_last
        self.nb_finished = 0
        self.origin: dict[str, Workflow] = {}  # job id -> its workflow, until its completion
        for wf in self.workflows:
            wf.mailbox = Mailbox(f"{wf.name}_submitter")

    @staticmethod
    def load(paths: Sequence[str], cut: Sequence[tuple[str, float]]) -> list[Workflow]:
        """``-W`` files (``wf<i>``, start 0) then ``--WS`` pairs (``wfc<i>``)."""
        out = [Workflow(f"wf{i}", str(p), 0.0, load_dax(str(p))) for i, p in enumerate(paths)]
        out += [Workflow(f"wfc{i}", str(p), float(t), load_dax(str(p))) for i, (p, t) in enumerate(cut)]
        return out

    def workloads(self) -> list[Workload]:
        """The workflows' workloads (empty until their tasks are submitted)."""
        return [Workload(name=wf.name, path=wf.path, nb_res=None) for wf in self.workflows]

    # -- Batsim's actor ------------------------------------------------------------------
    def submitter(self, wf: Workflow) -> Generator:
        """``workflow_submitter_process`` (job_submitter.cpp)."""
        sim = self.sim
        yield sim.to_server(("HELLO",))
        ready = wf.source_tasks()
        submitted: dict[str, Task] = {}
        sleep = wf.start_time - sim.kernel.now
        if sleep > 0:  # SimGrid's sleep_for: a no-op for a duration <= 0
            yield Sleep(sleep)
        counter = 0
        current = 0
        while ready or submitted:
            while ready and (self.limit == 0 or self.limit > current):
                task = ready.pop(0)
                job = self._job(wf, task, counter)
                counter += 1
                yield sim.to_server(("SUBMIT", [job], wf))
                submitted[job.id] = task
                current += 1
            if submitted:
                done_id = yield Get(wf.mailbox)
                current -= 1
                task = submitted[done_id]
                kids = list(task.children)
                for kid in kids:
                    kid.nb_parent_completed += 1
                for kid in kids:
                    if kid.nb_parent_completed == len(kid.parents):
                        ready.append(kid)
                del submitted[done_id]
        yield sim.to_server(("BYE", wf))

    def _job(self, wf: Workflow, task: Task, number: int) -> Job:
        """``submit_workflow_task_as_job``: the task's profile and job, as Batsim writes them
        (dates through ``std::to_string``, i.e. ``%f``, read back by RapidJSON)."""
        sim = self.sim
        wl = sim.workloads[wf.name]
        pname = f"{wf.name}_{task.id}"
        if pname in wl.profiles:
            raise InputError(wf.path, f"line {task.line} <job id={task.id!r}>",
                             "the task is submitted a second time (an edge listed twice makes Batsim count its "
                             "parent twice), and Batsim aborts on its profile's second creation")
        wl.profiles[pname] = Profile(pname, "delay", {"type": "delay", "delay": task.runtime})
        obj = {"id": f"{wf.name}!{number}", "subtime": rapidjson_double(f"{sim.kernel.now:f}"),
               "walltime": rapidjson_double(f"{task.runtime + 10.0:f}"), "res": task.num_procs, "profile": pname}
        job = job_from_json(obj, wf.name, wf.path, f"line {task.line} <job id={task.id!r}>", wl.profiles)
        wl.jobs.append(job)
        return job

    # -- the server's side -----------------------------------------------------------------
    def ignores_submissions(self) -> bool:
        """``server_on_job_submitted`` under ``--ignore-beyond-last-workflow`` (see the module doc)."""
        return self.ignore_beyond_last and self.nb_finished == 1

    def submitted(self, message: tuple) -> None:
        """A workflow's job was submitted: call its submitter back at its completion."""
        if len(message) > 2:
            for job in message[1]:
                self.origin[job.id] = message[2]

    def callback(self, job_id: str) -> Put | None:
        """``server_on_job_completed``'s call-back to the job's workflow submitter (the server
        waits until it is received), or None."""
        wf = self.origin.pop(job_id, None)
        if wf is None:
            return None
        sim = self.sim
        master = sim.machines.master
        return Put(wf.mailbox, job_id, route=sim.message_route(master, master))

    def said_bye(self, message: tuple) -> None:
        if len(message) > 1:
            self.nb_finished += 1
