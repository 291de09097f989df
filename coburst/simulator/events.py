"""Batsim 4.2.1's external events (``--events FILE``, repeatable): machines becoming
unavailable and available again, and generic events forwarded to the scheduler.

What Batsim does, and this module reproduces (sources in Batsim 4.2.1's ``src/``):

* ``events.cpp`` ``EventList::load_from_json``: an events file holds one JSON object per
  line (empty lines skipped); each has a string ``type`` and a number ``timestamp`` >= 0.
  ``machine_available`` / ``machine_unavailable`` events carry ``resources``, an interval set
  of resource ids (``"0-4 6 8"``, ``IntervalSet::from_string_hyphen(s, " ", "-")``).  Any
  other type is a *generic* event, accepted only with ``--forward-unknown-events`` (Batsim
  aborts otherwise) and forwarded to the scheduler as it is.  The events are then sorted by
  ``std::sort`` on (timestamp, type), the types ranked available < unavailable < generic:
  :func:`cxx_sort` is GCC's ``std::sort``, so that events of one date and one type come in
  Batsim's order even where that sort is not stable (more than 16 events).
* ``event_submitter.cpp`` ``static_event_submitter_process``: one submitter per file (named
  ``we0``, ``we1``... by ``--events`` order), created after the job submitters, says hello
  to the server, then sends the events date by date (all events dated at or before its
  current date in one message), sleeping in between, and says goodbye.
* ``server.cpp`` ``server_on_event_occurred``: each event in order;
  ``server_on_event_machine_unavailable`` makes every listed machine ``unavailable`` (Batsim
  aborts if one already is) and sends ``NOTIFY event_machine_unavailable``; the jobs running
  there are **not** killed (``docs/input-events.rst``: the scheduler may kill them);
  ``server_on_event_machine_available`` makes them idle (or computing, if a job still runs
  there; Batsim aborts if one was not unavailable) and sends ``NOTIFY
  event_machine_available``; a generic event is sent as ``NOTIFY`` whose data is the whole
  event object.  ``server_on_submitter_bye``: when every event submitter has said goodbye,
  ``NOTIFY no_more_external_event_to_occur``; the simulation cannot end before that.
* ``machines.cpp``: an unavailable machine cannot start a job (``server_on_execute_job``
  aborts); a job ending on it leaves it unavailable (no idle state, no Pajé line, no
  ``_machine_states.csv`` change for it); the time it spends unavailable is counted in
  ``time_unavailable`` (``Machine::update_machine_state``; the open interval at the end is
  not counted, as for the other states).

With ``-E``, a machine that is not idle or computing (sleeping, switching) cannot be made
unavailable here, and an unavailable machine cannot change power state: coburst stops with
an error naming it instead of guessing (Batsim mixes the two states; nothing in its test
inputs does it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Generator, Sequence

from procset import ProcInt, ProcSet

from coburst.errors import InputError
from coburst.simulator.kernel import Sleep
from coburst.simulator.output import LD
from coburst.simulator.protocol import RawJSON, encode_value, rapidjson_double

if TYPE_CHECKING:  # pragma: no cover
    from coburst.simulator.view import SimulatorView

__all__ = ["AVAILABLE", "UNAVAILABLE", "GENERIC", "Event", "EventList", "ExternalEvents", "cxx_sort",
           "load_event_list", "parse_interval_set"]

#: ``EventType`` (events.hpp), in its declaration order: the sort's tie-breaker
AVAILABLE, UNAVAILABLE, GENERIC = 0, 1, 2
_KNOWN = {"machine_available": AVAILABLE, "machine_unavailable": UNAVAILABLE}


@dataclass(slots=True)
class Event:
    """One external event (Batsim's ``Event``)."""

    timestamp: float  # a double (Batsim: long double made from the JSON double, exact)
    kind: int  # AVAILABLE, UNAVAILABLE or GENERIC
    line: int  # line of the events file (for error messages)
    resources: ProcSet | None = None  # machine events
    data: RawJSON | None = None  # generic events: the event object, as the message writer prints it


@dataclass
class EventList:
    """The events of one ``--events`` file, sorted as Batsim sorts them."""

    name: str  # we0, we1, ...
    path: str
    events: list[Event]


# ---------------------------------------------------------------- GCC's std::sort
def cxx_sort(items: list, less: Callable[[Any, Any], bool]) -> list:
    """``std::sort(items, less)`` exactly as libstdc++ (GCC 12, Batsim's build) does it:
    introsort (median-of-three pivot moved to the front, unguarded partition, heap sort past
    ``2 * log2(n)`` levels) down to blocks of 16, then insertion sort.  Unlike Python's
    sort it is not stable: equal elements may come out in another order than they went in,
    and Batsim's event order at one date depends on that.  Sorts ``items`` in place and
    returns it."""
    a = items
    n = len(a)
    if n < 2:
        return a

    def median_to_first(result: int, x: int, y: int, z: int) -> None:
        if less(a[x], a[y]):
            if less(a[y], a[z]):
                a[result], a[y] = a[y], a[result]
            elif less(a[x], a[z]):
                a[result], a[z] = a[z], a[result]
            else:
                a[result], a[x] = a[x], a[result]
        elif less(a[x], a[z]):
            a[result], a[x] = a[x], a[result]
        elif less(a[y], a[z]):
            a[result], a[z] = a[z], a[result]
        else:
            a[result], a[y] = a[y], a[result]

    def partition(first: int, last: int, pivot: int) -> int:
        while True:
            while less(a[first], a[pivot]):
                first += 1
            last -= 1
            while less(a[pivot], a[last]):
                last -= 1
            if not first < last:
                return first
            a[first], a[last] = a[last], a[first]
            first += 1

    def adjust_heap(first: int, hole: int, length: int, value: Any) -> None:
        top = hole
        child = hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if less(a[first + child], a[first + child - 1]):
                child -= 1
            a[first + hole] = a[first + child]
            hole = child
        if length % 2 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            a[first + hole] = a[first + child - 1]
            hole = child - 1
        parent = (hole - 1) // 2
        while hole > top and less(a[first + parent], value):
            a[first + hole] = a[first + parent]
            hole = parent
            parent = (hole - 1) // 2
        a[first + hole] = value

    def heap_sort(first: int, last: int) -> None:
        length = last - first
        if length >= 2:
            parent = (length - 2) // 2
            while True:
                adjust_heap(first, parent, length, a[first + parent])
                if parent == 0:
                    break
                parent -= 1
        while last - first > 1:
            last -= 1
            value = a[last]
            a[last] = a[first]
            adjust_heap(first, 0, last - first, value)

    def introsort(first: int, last: int, depth: int) -> None:
        while last - first > 16:
            if depth == 0:
                heap_sort(first, last)
                return
            depth -= 1
            mid = first + (last - first) // 2
            median_to_first(first, first + 1, mid, last - 1)
            cut = partition(first + 1, last, first)
            introsort(cut, last, depth)
            last = cut

    def linear_insert(last: int) -> None:
        value = a[last]
        prev = last - 1
        while less(value, a[prev]):
            a[last] = a[prev]
            last = prev
            prev -= 1
        a[last] = value

    def insertion_sort(first: int, last: int) -> None:
        for i in range(first + 1, last):
            if less(a[i], a[first]):
                value = a[i]
                a[first + 1:i + 1] = a[first:i]
                a[first] = value
            else:
                linear_insert(i)

    introsort(0, n, 2 * (n.bit_length() - 1))
    if n > 16:
        insertion_sort(0, 16)
        for i in range(16, n):
            linear_insert(i)
    else:
        insertion_sort(0, n)
    return a


def _event_less(x: Event, y: Event) -> bool:
    """``event_comparator_timestamp_number`` (events.cpp)."""
    if x.timestamp == y.timestamp:
        return x.kind < y.kind
    return x.timestamp < y.timestamp


# ---------------------------------------------------------------- reading an events file
def _stoi(text: str) -> tuple[int, bool]:
    """``std::stoi``: leading white space, a sign, digits, anything after ignored.
    Returns (value, whether some character was ignored); ValueError where stoi throws."""
    s = text.lstrip(" \t\n\v\f\r")
    i = 1 if s[:1] in ("+", "-") else 0
    j = i
    while j < len(s) and "0" <= s[j] <= "9":
        j += 1
    if j == i:
        raise ValueError(f"{text!r} is not an integer")
    value = int(s[:j])
    if not -2 ** 31 <= value < 2 ** 31:
        raise ValueError(f"{text!r} is out of the range of an int")
    return value, j != len(s) or len(s) != len(text)


def parse_interval_set(text: str) -> tuple[ProcSet, list[str]]:
    """``IntervalSet::from_string_hyphen(text, " ", "-")`` (the intervalset library Batsim
    links): parts split on runs of spaces, each an integer or ``a-b`` with a <= b; overlapping
    parts are merged.  Returns the set and what Batsim accepts but is odd (for warnings);
    ValueError with Batsim's reason where it throws (an empty string, a lone ``-``...)."""
    odd: list[str] = []
    result = ProcSet()
    parts = _split_compress(text, " ")
    for part in parts:
        bounds = _split_compress(part, "-")
        if len(bounds) not in (1, 2):
            raise ValueError(f"part {part!r} is neither an integer nor an interval a-b")
        values = []
        for b in bounds:
            try:
                v, ignored = _stoi(b)
            except ValueError:
                raise ValueError(f"part {part!r}: {b!r} is not an integer") from None
            if ignored:
                odd.append(f"{b!r} read as {v}")
            values.append(v)
        lo, hi = values[0], values[-1]
        if lo > hi:
            raise ValueError(f"part {part!r}: {lo} is greater than {hi}")
        if lo < 0:  # "+-1" is the only way there; Batsim would abort on the machine id
            raise ValueError(f"part {part!r}: negative resource id {lo}")
        result |= ProcSet(ProcInt(lo, hi))
    return result, odd


def _split_compress(text: str, sep: str) -> list[str]:
    """``boost::split(parts, text, is_any_of(sep), token_compress_on)``: a run of separators
    makes one, but a separator at either end still yields an empty part there."""
    return re.split(re.escape(sep) + "+", text)


class _Object(list):
    """A JSON object as RapidJSON keeps it: its members in order, duplicates included."""


def _encode_json(value: Any, out: list) -> None:
    """``value`` (decoded with :class:`_Object` objects) as Batsim's message writer prints it."""
    if type(value) is _Object:
        out.append("{")
        for i, (key, item) in enumerate(value):
            if i:
                out.append(",")
            encode_value(key, out)
            out.append(":")
            _encode_json(item, out)
        out.append("}")
    elif type(value) is list:
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _encode_json(item, out)
        out.append("]")
    else:
        encode_value(value, out)


def _member(obj: _Object, key: str) -> tuple[bool, Any]:
    """RapidJSON's ``HasMember``/``operator[]``: the first member of that name."""
    for k, v in obj:
        if k == key:
            return True, v
    return False, None


def _warn(source: str, where: str, problem: str) -> None:
    from coburst.simulator.platform import warn

    warn(source, where, problem)


def load_event_list(path: str, name: str, forward_unknown: bool) -> EventList:
    """Read and check one events file as Batsim's ``EventList::load_from_json`` does;
    InputError naming the file, the line and the problem where Batsim aborts, a warning where
    Batsim accepts something odd."""
    from coburst.validate import read_text

    text = read_text(path, "events file")
    events: list[Event] = []
    seen_lines = text.split("\n")  # std::getline splits on '\n' only
    for number, line in enumerate(seen_lines, 1):
        if not line:
            continue
        where = f"line {number}"
        if not line.strip(" \t\r\n"):
            raise InputError(path, where, "a line of white space only (Batsim reads each non-empty line as one "
                                          "JSON event and aborts on it)")
        try:
            obj = json.loads(line, object_pairs_hook=_Object, parse_float=rapidjson_double,
                             parse_constant=_no_constant)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"{where} column {exc.colno}", f"invalid JSON: {exc.msg} (each line of an "
                                                                  "events file is one JSON object)") from None
        except ValueError as exc:
            raise InputError(path, where, f"{exc} is not a JSON number") from None
        if type(obj) is not _Object:
            raise InputError(path, where, "an event must be a JSON object")
        keys = [k for k, _ in obj]
        if len(set(keys)) != len(keys):
            _warn(path, where, "a field appears twice: the first one counts (as in Batsim)")
        has, etype = _member(obj, "type")
        if not has:
            raise InputError(path, where, "the event has no 'type' field")
        if not isinstance(etype, str):
            raise InputError(path, where, f"'type' must be a string, got {json.dumps(etype)[:40]}")
        has, stamp = _member(obj, "timestamp")
        if not has:
            raise InputError(path, where, "the event has no 'timestamp' field")
        if isinstance(stamp, bool) or not isinstance(stamp, (int, float)):
            raise InputError(path, where, "'timestamp' must be a number")
        stamp = float(stamp)
        if not stamp >= 0:
            raise InputError(path, where, f"negative timestamp {stamp:g} (Batsim refuses it)")
        kind = _KNOWN.get(etype)
        if kind is None:
            if not forward_unknown:
                raise InputError(path, where, f"unknown event type {etype!r}: Batsim knows machine_available "
                                              "and machine_unavailable, and forwards other types to the "
                                              "scheduler only with --forward-unknown-events")
            out: list = []
            _encode_json(obj, out)
            events.append(Event(stamp, GENERIC, number, data=RawJSON("".join(out))))
            continue
        has, res = _member(obj, "resources")
        if not has:
            raise InputError(path, where, f"a {etype} event needs a 'resources' field (e.g. \"0-4 6\")")
        if not isinstance(res, str):
            raise InputError(path, where, "'resources' must be a string (an interval set such as \"0-4 6\")")
        try:
            machines, odd = parse_interval_set(res)
        except ValueError as exc:
            raise InputError(path, f"{where} resources", f"invalid interval set {res!r}: {exc}") from None
        for what in odd:
            _warn(path, f"{where} resources", f"{what} (Batsim reads integers with std::stoi)")
        events.append(Event(stamp, kind, number, resources=machines))
    return EventList(name, str(path), cxx_sort(events, _event_less))


def _no_constant(name: str):
    raise ValueError(name)


# ---------------------------------------------------------------- the simulation side
class ExternalEvents:
    """Batsim's event submitters and the server's handlers of their events, for one
    :class:`~coburst.simulator.engine.Simulator` (``sim.external``).

    The engine calls :meth:`check_platform` once the resources are known, spawns
    :meth:`submitter` for each list after the job submitters, gives the server's
    ``EVENTS``/``EVENTS_BYE`` messages to :meth:`handle`, and asks :meth:`done` in its end
    test.  ``unavailable[rid]`` is read by the machine accounting and the execute check."""

    def __init__(self, sim: "SimulatorView", lists: Sequence[EventList]):
        self.sim = sim
        self.lists = list(lists)
        self.nb_done = 0
        self.unavailable = bytearray(len(sim.resources))
        self.time_unavailable = [LD(0)] * len(sim.resources)
        self._line: dict[int, tuple[str, int]] = {}  # id(event) -> (file, line), for errors

    @classmethod
    def load(cls, paths: Sequence[str], forward_unknown: bool) -> list[EventList]:
        return [load_event_list(p, f"we{i}", forward_unknown) for i, p in enumerate(paths)]

    def check_platform(self) -> None:
        """Every resource an event names exists (Batsim aborts when it handles the event;
        coburst says so before the simulation starts)."""
        nb = len(self.sim.resources)
        for elist in self.lists:
            for event in elist.events:
                if event.resources is not None and event.resources.max >= nb:
                    bad = [i for i in event.resources if i >= nb][0]
                    raise InputError(elist.path, f"line {event.line} resources",
                                     f"machine {bad} does not exist (the platform's resources are 0-{nb - 1})")

    def done(self) -> bool:
        """Every event submitter said goodbye."""
        return self.nb_done == len(self.lists)

    # -- Batsim's actor ------------------------------------------------------------------
    def submitter(self, elist: EventList) -> Generator:
        """``static_event_submitter_process`` (event_submitter.cpp)."""
        sim = self.sim
        yield sim.to_server(("HELLO",))
        current = sim.kernel.now
        batch: list[Event] = []
        for event in elist.events:
            if event.timestamp > current:
                if batch:
                    yield sim.to_server(("EVENTS", elist, batch))
                    batch = []
                yield Sleep(float(LD(event.timestamp) - LD(current)))  # long double dates
                current = sim.kernel.now
            batch.append(event)
        if batch:
            yield sim.to_server(("EVENTS", elist, batch))
        yield sim.to_server(("EVENTS_BYE",))

    # -- the server's handlers -----------------------------------------------------------
    def handle(self, message: tuple) -> None:
        """``server_on_event_occurred`` and the event half of ``server_on_submitter_bye``."""
        sim = self.sim
        if message[0] == "EVENTS_BYE":
            self.nb_done += 1
            if self.done():
                sim.append("NOTIFY", {"type": "no_more_external_event_to_occur"})
            return
        _, elist, events = message
        for event in events:
            if event.kind == GENERIC:
                sim.append("NOTIFY", event.data)
            elif event.kind == UNAVAILABLE:
                for rid in event.resources:
                    self._make_unavailable(elist, event, rid)
                sim.append("NOTIFY", {"type": "event_machine_unavailable", "resources": str(event.resources)})
            else:
                for rid in event.resources:
                    self._make_available(elist, event, rid)
                sim.append("NOTIFY", {"type": "event_machine_available", "resources": str(event.resources)})

    def _state_error(self, elist: EventList, event: Event, problem: str) -> InputError:
        return InputError(elist.path, f"line {event.line}", f"{problem} (at simulated time {self.sim.now():f}; "
                                                            "Batsim 4.2.1 aborts here too)")

    def _make_unavailable(self, elist: EventList, event: Event, rid: int) -> None:
        sim = self.sim
        name = sim.resources[rid].name
        if self.unavailable[rid]:
            raise self._state_error(elist, event, f"machine {rid} ('{name}') is made unavailable but already is")
        power = sim.power
        from coburst.simulator.energy import IDLE
        if power is not None and power.state[rid] != IDLE:
            raise self._state_error(elist, event, f"machine {rid} ('{name}') is made unavailable while it is "
                                                  f"{power.state[rid]}: not simulated by coburst")
        busy = sim.machine_busy[rid] > 0
        self._move(rid, sim.machine_computing if busy else sim.machine_idle)
        self.unavailable[rid] = 1
        sim.traces.machine_unavailable(rid, busy)

    def _make_available(self, elist: EventList, event: Event, rid: int) -> None:
        sim = self.sim
        if not self.unavailable[rid]:
            name = sim.resources[rid].name
            state = "computing" if sim.machine_busy[rid] else "idle"
            raise self._state_error(elist, event, f"machine {rid} ('{name}') is made available but it was not "
                                                  f"unavailable (its state: {state})")
        self._move(rid, self.time_unavailable)
        self.unavailable[rid] = 0
        sim.traces.machine_available(rid, sim.machine_busy[rid] > 0)

    def _move(self, rid: int, spent: list) -> None:
        """``Machine::update_machine_state``: the time since the last change goes to the old
        state's total (long double)."""
        sim = self.sim
        now = LD(sim.kernel.now)
        spent[rid] += now - sim.machine_last_change[rid]
        sim.machine_last_change[rid] = now

    # -- checks the server makes -----------------------------------------------------------
    def check_executable(self, job_id: str, alloc: ProcSet) -> None:
        """``server_on_execute_job``: no machine of the allocation may be unavailable."""
        from coburst.errors import ProtocolError

        for rid in alloc:
            if self.unavailable[rid]:
                res = self.sim.resources[rid]
                raise ProtocolError(f"EXECUTE_JOB {job_id}: invalid allocation ({alloc}): machine {rid} "
                                    f"('{res.name}') cannot compute jobs now: it is unavailable (an external "
                                    "event made it so; Batsim 4.2.1 aborts here too)")

    def check_power_change(self, data: dict) -> None:
        """``SET_RESOURCE_STATE`` on an unavailable machine: not simulated (see the module doc).
        (A malformed request is left to the energy part's checks.)"""
        from coburst.errors import ProtocolError
        from coburst.simulator.allocation import parse_allocation

        try:
            ids, _ = parse_allocation(data.get("resources"))
        except (ValueError, TypeError, AttributeError):
            return
        for rid in ids:
            if 0 <= rid < len(self.unavailable) and self.unavailable[rid]:
                raise ProtocolError(f"SET_RESOURCE_STATE: machine {rid} is unavailable (external event): a power "
                                    "state change of an unavailable machine is not simulated by coburst")

    def schedule_values(self) -> dict[str, str]:
        """``time_unavailable`` of ``_schedule.csv`` (summed in machine order, long double)."""
        total = LD(0)
        for spent in self.time_unavailable:
            total += spent
        return {"time_unavailable": f"{float(total):.6f}"}
