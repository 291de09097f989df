"""Batsim 4 workloads: loading and validating JSON workloads and their profiles.

A workload file is ``{"nb_res": N, "jobs": [...], "profiles": {...}}`` (Batsim 4.2
``docs/input-workload.rst``).  Every problem is reported as an
:class:`~coburst.errors.InputError` naming the file, the JSON path and the problem.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from decimal import Decimal
from typing import Any

from coburst.errors import InputError
from coburst.simulator.json_rules import _RISKY_ID, _JsonObject, _json_object, check_id_rewrite, warn_duplicates
from coburst.validate import AMOUNT_MAX, COUNT_MAX, cut, number, quote, read_json

#: dates and durations of a Batsim workload: any finite double Batsim can print, as Batsim
#: 4.2 reads them (``GetDouble()``; its own test_long_workload.json submits jobs up to
#: 1e17 s; :func:`batsim_writable` is the one bound, Batsim's message writer's).
#: Far dates lose resolution (at 1e10 s a double still resolves 2e-6 s, at 1e17 s 16 s)
#: exactly as they do in Batsim, whose arithmetic coburst repeats.
BATSIM_TIME_MAX = float("inf")

#: Batsim 4.2.1 reads ``repeat`` with RapidJSON's ``IsInt``/``GetInt``: a 32-bit int
INT32_MAX = 2**31 - 1

#: profile type -> (required fields, optional fields with defaults)
PROFILE_FIELDS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "delay": (("delay",), {}),
    "parallel": (("cpu", "com"), {}),
    "parallel_homogeneous": (("cpu", "com"), {}),
    "parallel_homogeneous_total": (("cpu", "com"), {}),
    "composed": (("seq",), {"repeat": 1}),
    "parallel_homogeneous_pfs": ((), {"bytes_to_read": 0.0, "bytes_to_write": 0.0, "storage": "pfs"}),
    "data_staging": (("nb_bytes", "from", "to"), {}),
    "usage_trace": (("trace",), {}),
    "send": (("msg",), {"sleeptime": 0.0000001}),
    "recv": ((), {"regex": ".*", "success": "", "failure": "", "timeout": "", "polltime": 0.005}),
}
PROFILE_TYPES = tuple(PROFILE_FIELDS)

#: profile types Batsim 4.2.1 knows that coburst does not simulate, and why
UNSUPPORTED_TYPES = {
    "smpi": "SMPI trace replay is not simulated by coburst sim: it runs each rank's MPI trace through SimGrid's "
            "SMPI runtime (smpi_replay_run: point-to-point and collective algorithms, eager/rendez-vous protocols), "
            "which SimGrid's Python binding (3.32 or 4.1) does not expose; run such workloads on the real "
            "Batsim",
}


@dataclass
class Profile:
    """A validated Batsim profile."""

    name: str
    type: str
    data: dict[str, Any]  # the JSON object, as given
    #: ``usage_trace``: each rank's trace file (Batsim's ``trace_filenames``)
    trace_files: list[str] | None = None
    #: ``usage_trace``: each rank's ``(usage, flops)`` actions, read at the first execution
    #: (Batsim's replay reads them when the rank runs; see :func:`read_usage_trace`)
    rank_actions: list | None = None

    @property
    def ret(self) -> int:
        return int(self.data.get("ret", 0))


@dataclass
class Job:
    """A job of a workload, as Batsim sees it."""

    id: str  # "workload!number"
    workload: str
    subtime: float
    walltime: float  # -1: no walltime
    res: int
    profile: str
    json: dict[str, Any]  # the job's JSON object with "id" rewritten to the full id
    metadata: str = ""
    dynamic: bool = False
    json_text: Any = None  # the job's description as sent to the scheduler, encoded once


@dataclass
class Workload:
    """A workload: its jobs in memory (``jobs``), or, for a file read as a stream
    (:func:`load_workload` with ``stream=True``), ``jobs`` None and ``stream`` the
    :class:`JobStream` reading them from the file as the simulation goes."""

    name: str
    path: str
    nb_res: int | None
    jobs: list[Job] | None = field(default_factory=list)
    profiles: dict[str, Profile] = field(default_factory=dict)
    stream: "JobStream | None" = None
    #: the profiles Batsim keeps after loading (see :func:`referenced_profiles`; None: not computed)
    kept: set[str] | None = None
    #: (subtime, id) of the last job handed to the simulation (see :meth:`released`)
    last_released: tuple[float, str] | None = None
    #: a workload file (all its jobs exist for Batsim from the start)
    from_file: bool = False
    _ids: set[str] | None = None

    @property
    def nb_jobs(self) -> int:
        return self.stream.nb_jobs if self.jobs is None else len(self.jobs)

    def iter_jobs(self):
        """The jobs in file order (read again from the file for a streamed workload)."""
        return iter(self.stream) if self.jobs is None else iter(self.jobs)

    def submission_order(self):
        """The jobs in Batsim's submission order (``job_submitter.cpp``: sorted by submission
        time, then by full id as a string, ``job_comparator_subtime_number``); each job handed
        out is remembered in :attr:`last_released`."""
        jobs = self.stream.submission_order() if self.jobs is None else \
            iter(sorted(self.jobs, key=lambda j: (j.subtime, j.id)))
        for job in jobs:
            self.last_released = (job.subtime, job.id)
            yield job

    def has_job(self, jid: str) -> tuple[float, str] | None:
        """Whether job ``jid`` is one of the workload's (Batsim's ``Jobs::exists`` for a job of
        the file: every job of the file exists from the start): its (subtime, id), else None."""
        if self.jobs is None:
            return self.stream.find(jid)
        if self._ids is None:
            self._ids = {j.id: j.subtime for j in self.jobs}
        subtime = self._ids.get(jid)
        return None if subtime is None else (subtime, jid)

    def released(self, key: tuple[float, str]) -> bool:
        """Whether the job of (subtime, id) ``key`` was already handed to the simulation."""
        return self.last_released is not None and key <= self.last_released


def batsim_writable(value: float, source: str, where: str) -> float:
    """Batsim 4.2.1's only bound on dates: its message writer prints a number with ``%6f``
    into 32 characters and aborts (``Assertion `ret < buf_size - 1' failed``) beyond 30,
    i.e. past about 1e23 s (-1e22 s).  A date or duration past it is refused here, naming
    it (a run whose dates grow past it later, e.g. by a huge computation, is not caught)."""
    if len("%6f" % value) > 30:
        raise InputError(source, where, f"{value:g} s: Batsim 4.2.1 aborts on such a date (its messages print "
                                        "numbers with %6f into 30 characters: dates from -1e22 to 1e23 s)")
    return value


def _num(value: Any, source: str, where: str, *, positive: bool = False, integer: bool = False,
         allow_neg1: bool = False, maximum: float = AMOUNT_MAX) -> float:
    """A finite number >= 0 (> 0 with ``positive``) and <= ``maximum`` (see coburst.validate)."""
    return number(value, source, where, minimum=0, exclusive_minimum=positive, integer=integer,
                  maximum=maximum, allow=(-1,) if allow_neg1 else ())


def validate_profile(name: str, prof: Any, source: str, where: str, base: Path | None = None) -> Profile:
    """Check one profile object; return it as a :class:`Profile`.  ``base``: the folder of
    the workload file (``usage_trace`` traces are relative to it; None: the profile does not
    come from a file, which Batsim 4.2.1 refuses for ``usage_trace``)."""
    if not isinstance(prof, dict):
        raise InputError(source, where, "a profile must be a JSON object")
    ptype = prof.get("type")
    if isinstance(ptype, str) and ptype in UNSUPPORTED_TYPES:
        raise InputError(source, f"{where}.type", f"profile type {ptype!r}: {UNSUPPORTED_TYPES[ptype]}")
    if isinstance(ptype, str) and ptype not in PROFILE_FIELDS and "trace" in prof:
        # profiles.cpp tests `profile_type == "smpi" || "usage_trace"`, always true: any other type
        # with a 'trace' is read, and replayed, as a usage trace
        from coburst.simulator.platform import warn

        warn(source, f"{where}.type", f"unknown profile type {ptype!r} with a 'trace' field: Batsim 4.2.1 runs it "
             "as a usage_trace profile (profiles.cpp), and so does coburst")
        ptype = "usage_trace"
    if not isinstance(ptype, str) or ptype not in PROFILE_FIELDS:
        known = ", ".join(PROFILE_TYPES)
        raise InputError(source, f"{where}.type",
                         f"unknown or unsupported profile type {json.dumps(ptype)} (supported: {known})")
    required, _optional = PROFILE_FIELDS[ptype]
    for key in required:
        if key not in prof:
            raise InputError(source, where, f"profile of type {ptype!r} needs field {key!r}")
    if ptype == "delay":
        delay = prof["delay"]
        if not (type(delay) in _FAST_NUMBERS and 0 < delay < 1e22):  # (the usual delay passes every check)
            batsim_writable(_num(delay, source, f"{where}.delay", positive=True, maximum=BATSIM_TIME_MAX),
                            source, f"{where}.delay")
    elif ptype in ("parallel_homogeneous", "parallel_homogeneous_total"):
        _num(prof["cpu"], source, f"{where}.cpu")
        _num(prof["com"], source, f"{where}.com")
    elif ptype == "parallel":
        cpu, com = prof["cpu"], prof["com"]
        if not isinstance(cpu, list) or not cpu:
            raise InputError(source, f"{where}.cpu", "expected a non-empty list of numbers")
        if not isinstance(com, list) or len(com) != len(cpu) ** 2:
            raise InputError(source, f"{where}.com",
                             f"expected a list of {len(cpu)}x{len(cpu)} = {len(cpu) ** 2} numbers")
        for i, v in enumerate(cpu):
            _num(v, source, f"{where}.cpu[{i}]")
        for i, v in enumerate(com):
            _num(v, source, f"{where}.com[{i}]")
    elif ptype == "composed":
        seq = prof["seq"]
        if not isinstance(seq, list) or not seq or not all(isinstance(s, str) for s in seq):
            raise InputError(source, f"{where}.seq", "expected a non-empty list of profile names")
        repeat = prof.get("repeat", 1)
        if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat > INT32_MAX:
            raise InputError(source, f"{where}.repeat", f"profile {name!r}: 'repeat' must be an integer of at most "
                             f"{INT32_MAX} (Batsim 4.2.1 refuses any other as a non-integral 'repeat': it reads a "
                             f"32-bit int), got {quote(repeat)}")
        if repeat < 1:
            raise InputError(source, f"{where}.repeat", f"profile {name!r}: expected an integer >= 1, got {repeat}")
    elif ptype == "parallel_homogeneous_pfs":
        if "bytes_to_read" not in prof and "bytes_to_write" not in prof:
            raise InputError(source, where, "profile of type 'parallel_homogeneous_pfs' needs 'bytes_to_read' "
                                            "or 'bytes_to_write'")
        _num(prof.get("bytes_to_read", 0), source, f"{where}.bytes_to_read")
        _num(prof.get("bytes_to_write", 0), source, f"{where}.bytes_to_write")
        if not isinstance(prof.get("storage", "pfs"), str):
            raise InputError(source, f"{where}.storage", "expected a storage label (string)")
    elif ptype == "data_staging":
        _num(prof["nb_bytes"], source, f"{where}.nb_bytes")
        for key in ("from", "to"):
            if not isinstance(prof[key], str):
                raise InputError(source, f"{where}.{key}", "expected a storage label (string)")
    elif ptype == "usage_trace":
        trace_files = usage_trace_files(prof["trace"], source, where, base)
    elif ptype == "send":
        if not isinstance(prof["msg"], dict):
            raise InputError(source, f"{where}.msg", "expected a JSON object (the message sent to the scheduler)")
        if "sleeptime" in prof:
            _num(prof["sleeptime"], source, f"{where}.sleeptime", positive=True, maximum=BATSIM_TIME_MAX)
    elif ptype == "recv":
        for key in ("regex", "success", "failure", "timeout"):
            if key in prof and not isinstance(prof[key], str):
                raise InputError(source, f"{where}.{key}", "expected a string (Batsim 4.2.1 reads it with GetString)")
        if "polltime" in prof:
            _num(prof["polltime"], source, f"{where}.polltime", positive=True, maximum=BATSIM_TIME_MAX)
    if "ret" in prof:
        if isinstance(prof["ret"], bool) or not isinstance(prof["ret"], int):
            raise InputError(source, f"{where}.ret", "expected an integer return code")
    profile = Profile(name=name, type=ptype, data=prof)
    if ptype == "usage_trace":
        profile.trace_files = trace_files
    return profile


def usage_trace_files(trace: Any, source: str, where: str, base: Path | None) -> list[str]:
    """The rank trace files a ``usage_trace`` profile lists (``profiles.cpp``
    ``Profile::from_json``): ``trace`` names, relative to the workload file's folder, a file
    whose lines (right-trimmed) name one trace per rank, relative to that file's folder.  A
    rank file itself is read when the job runs (:func:`read_usage_trace`), as Batsim does."""
    if not isinstance(trace, str):
        raise InputError(source, f"{where}.trace", "expected the name of a trace file (string)")
    if base is None:
        raise InputError(source, f"{where}.trace", "a usage_trace profile can only come from a workload file (Batsim "
                                                   "4.2.1 aborts on one registered or sent by the scheduler)")
    path = Path(f"{base}/{trace}")
    if not path.is_file():
        raise InputError(source, f"{where}.trace", f"{trace!r} leads to {str(path)!r}, which is not a file")
    try:
        lines = path.read_bytes().decode("utf-8", errors="surrogateescape").split("\n")
    except OSError as exc:
        raise InputError(str(path), None, f"cannot read the trace list: {exc}") from None
    if lines and lines[-1] == "":  # std::getline: a final newline ends the last line
        lines.pop()
    return [f"{path.parent}/{line.rstrip()}" for line in lines]


def read_usage_trace(path: str, rank: int, source: str) -> list[tuple[float, float]]:
    """One rank's ``(usage, flops)`` actions, as SimGrid 3.32's ``xbt::replay_runner`` reads
    them for Batsim's ``m_usage`` action (``src/xbt/xbt_replay.cpp`` ``ReplayReader::get``,
    Batsim's ``usage_trace_replayer``):

    * lines are trimmed; blank lines and lines starting with ``#`` are skipped; fields are
      split on runs of blanks and tabs;
    * the last line is replayed only if a newline ends it (``get`` returns ``not eof()``);
    * a line for another rank (first field not the rank number) is ignored, with a warning;
    * the second field must be ``m_usage`` (the one action Batsim registers); the third,
      the usage, is in [0, 1] and the fourth, the flops, finite and >= 0, both read with
      ``std::stod`` (leading number, rest ignored).
    """
    from coburst.simulator.energy import _stod_prefix
    from coburst.simulator.platform import warn

    try:
        text = Path(path).read_bytes().decode("utf-8", errors="surrogateescape")
    except OSError as exc:
        raise InputError(path, None, f"cannot read the replay file of rank {rank} of {source}: {exc} (Batsim "
                                     "4.2.1 aborts: 'Cannot read replay file')") from None
    lines = text.split("\n")
    complete = lines[:-1]  # the text after the last newline is never replayed
    actions = []
    me = str(rank)
    for number, raw in enumerate(complete, start=1):
        line = raw.strip(" \t\r\f\v")
        if not line or line.startswith("#"):
            continue
        fields = [f for f in line.replace("\t", " ").split(" ") if f]
        if fields[0] != me:
            warn(path, f"line {number}", f"trace element not for rank {rank} (target {fields[0]!r}): ignored, as "
                 "SimGrid's replay does")
            continue
        if len(fields) < 2 or fields[1] != "m_usage":
            action = fields[1] if len(fields) > 1 else ""
            raise InputError(path, f"line {number}", f"unknown replay action {action!r}: a usage trace has only "
                             "'m_usage' actions (Batsim 4.2.1 aborts: 'action is unknown')")
        if len(fields) < 4:
            raise InputError(path, f"line {number}", "an m_usage action needs a usage and a number of flops")
        usage, flops = _stod_prefix(fields[2]), _stod_prefix(fields[3])
        if usage is None or flops is None:
            raise InputError(path, f"line {number}", "usage and flops must be numbers (Batsim 4.2.1 dies in "
                             "std::stod)")
        if not (math.isfinite(usage) and 0.0 <= usage <= 1.0):
            raise InputError(path, f"line {number}", f"invalid usage {usage:g}: not in [0,1] (Batsim 4.2.1 aborts)")
        if not (math.isfinite(flops) and flops >= 0.0):
            raise InputError(path, f"line {number}", f"invalid flops {flops:g}: not finite and >= 0 (Batsim 4.2.1 "
                             "aborts)")
        actions.append((usage, flops))
    return actions


def check_composed_references(profiles: dict[str, Profile], source: str) -> None:
    """Every name in a composed profile's ``seq`` must exist; no cycles (an iterative walk:
    a chain of thousands of composed profiles is no ``RecursionError``)."""
    for name, prof in profiles.items():
        if prof.type != "composed":
            continue
        for i, sub in enumerate(prof.data["seq"]):
            if sub not in profiles:
                raise InputError(source, f"profiles.{name}.seq[{i}]", f"unknown profile {cut(repr(sub))}")
    state: dict[str, int] = {}
    for root in profiles:
        if state.get(root):
            continue
        state[root] = 1
        trail = [root]
        todo = [iter(_subprofiles(profiles[root]))]
        while todo:
            sub = next(todo[-1], None)
            if sub is None:
                todo.pop()
                state[trail.pop()] = 2
                continue
            if state.get(sub) == 1:
                cycle = trail[trail.index(sub):] + [sub]
                shown = " -> ".join(cycle) if len(cycle) <= 20 else " -> ".join(cycle[:10] + ["..."] + cycle[-10:])
                raise InputError(source, f"profiles.{cut(sub)}", f"composed profiles form a cycle: {cut(shown)}")
            if not state.get(sub):
                state[sub] = 1
                trail.append(sub)
                todo.append(iter(_subprofiles(profiles[sub])))


def _subprofiles(prof: Profile) -> list[str]:
    return prof.data["seq"] if prof.type == "composed" else []


def referenced_profiles(wl: "Workload") -> set[str]:
    """The profiles Batsim 4.2 keeps after loading a workload (``Profiles::
    remove_unreferenced_profiles``): those a job uses or a composed profile lists; the others
    are dropped from memory and left out of ``SIMULATION_BEGINS``.  (Batsim drops by
    reference count while iterating a hash map, so a profile listed only by an unused composed
    profile may or may not survive there; coburst keeps it.)"""
    if wl.kept is not None:
        return wl.kept
    used = {job.profile for job in wl.iter_jobs()}
    for prof in wl.profiles.values():
        if prof.type == "composed":
            used.update(prof.data["seq"])
    return used


#: dates the fast path of :func:`job_from_json` takes as they are (below them "%6f" prints
#: far fewer than 30 characters: :func:`batsim_writable` cannot refuse them)
_FAST_DATE_MAX = 1e15


def job_from_json(obj: Any, workload: str, source: str, where: str, profiles: dict[str, Profile],
                  nb_compute: int | None = None, quiet: bool = False) -> Job:
    """Validate one job object and build a :class:`Job` (id becomes ``workload!id``;
    ``quiet``: no warning, the job was checked before).

    A job of the common shape (integer or plain string id, dates in [0, 1e15[ with a walltime
    > 0 or -1, an integer count of resources, a known profile, no rank mapping) is built by one
    test of each field; any other goes through every check of :func:`checked_job`, whose
    errors and warnings it reports (the same Job either way: ``tests/test_startup.py``)."""
    if common_job(obj, profiles):
        full_id = f"{workload}!{obj['id']}"
        data = dict(obj)
        data["id"] = full_id
        walltime = obj.get("walltime", -1)
        return Job(id=full_id, workload=workload, subtime=float(obj["subtime"]), walltime=float(walltime),
                   res=obj["res"], profile=obj["profile"], json=data)
    return checked_job(obj, workload, source, where, profiles, quiet=quiet)


_FAST_NUMBERS = (int, float)


def common_job(obj: Any, profiles: dict[str, Profile]) -> bool:
    """Whether job object ``obj`` has the common shape :func:`job_from_json` builds without
    its one-by-one checks (which it would pass, with no warning)."""
    if not isinstance(obj, dict):
        return False
    raw_id = obj.get("id")
    subtime = obj.get("subtime")
    walltime = obj.get("walltime", -1)
    res = obj.get("res")
    profile = obj.get("profile")
    tid = type(raw_id)
    return bool((tid is int or (tid is str and raw_id and "!" not in raw_id and not _RISKY_ID.search(raw_id)))
                and type(subtime) in _FAST_NUMBERS and 0 <= subtime < _FAST_DATE_MAX
                and type(walltime) in _FAST_NUMBERS and (0 < walltime < _FAST_DATE_MAX or walltime == -1)
                and type(res) is int and 0 < res <= COUNT_MAX
                and type(profile) is str and profile in profiles
                and "smpi_ranks_to_hosts_mapping" not in obj)


def checked_job(obj: Any, workload: str, source: str, where: str, profiles: dict[str, Profile],
                quiet: bool = False) -> Job:
    """:func:`job_from_json` with every check made one by one (its errors and warnings)."""
    if not isinstance(obj, dict):
        raise InputError(source, where, "a job must be a JSON object")
    for key in ("id", "subtime", "res", "profile"):
        if key not in obj:
            raise InputError(source, where, f"job lacks field {key!r}")
    raw_id = obj["id"]
    if isinstance(raw_id, bool) or not isinstance(raw_id, (int, str)) or raw_id == "":
        raise InputError(source, f"{where}.id", f"expected an integer or a non-empty string, got {json.dumps(raw_id)}")
    raw_id = str(raw_id)
    if "\x00" in raw_id:  # Batsim 4.2.1 keeps the C string (std::string of GetString()): up to the NUL
        cut_id = raw_id.partition("\x00")[0]
        if not cut_id:
            raise InputError(source, f"{where}.id", f"job id {quote(raw_id)} starts with a NUL character: Batsim "
                                                    "4.2.1 reads it as an empty id")
        if not quiet:
            from coburst.simulator.platform import warn

            warn(source, f"{where}.id", f"job id {quote(raw_id)} holds a NUL character: the job is named "
                 f"{quote(cut_id)}, the text before it, as Batsim 4.2.1 names it")
        raw_id = cut_id
    if "!" in raw_id:
        wl, _, raw_id = raw_id.partition("!")
        if wl != workload:
            raise InputError(source, f"{where}.id",
                             f"job id names workload {quote(wl)} but belongs to workload {quote(workload)}")
    if _RISKY_ID.search(raw_id):
        check_id_rewrite(obj, f"{workload}!{raw_id}", source, f"{where}.id")
    subtime = batsim_writable(number(obj["subtime"], source, f"{where}.subtime"), source, f"{where}.subtime")
    if subtime < 0 and not quiet:
        from coburst.simulator.platform import warn

        warn(source, f"{where}.subtime", f"negative submission time {subtime:g}: the job is submitted when the "
             "simulation starts and keeps this submission_time in the outputs (as in Batsim)")
    walltime = batsim_writable(_num(obj.get("walltime", -1), source, f"{where}.walltime", positive=True,
                                    allow_neg1=True, maximum=BATSIM_TIME_MAX), source, f"{where}.walltime")
    if isinstance(obj["res"], bool) or not isinstance(obj["res"], int):
        raise InputError(source, f"{where}.res", f"expected an integer number of resources, got {json.dumps(obj['res'])}")
    res = int(_num(obj["res"], source, f"{where}.res", positive=True, integer=True, maximum=COUNT_MAX))
    profile = obj["profile"]
    if not isinstance(profile, str) or profile not in profiles:
        raise InputError(source, f"{where}.profile", f"unknown profile {json.dumps(profile)}")
    if "smpi_ranks_to_hosts_mapping" in obj:  # jobs.cpp Job::from_json (usage_trace and smpi ranks)
        ranks = obj["smpi_ranks_to_hosts_mapping"]
        if not isinstance(ranks, list):
            raise InputError(source, f"{where}.smpi_ranks_to_hosts_mapping", "expected an array of host numbers")
        for i, host in enumerate(ranks):
            if isinstance(host, bool) or not isinstance(host, int) or not 0 <= host < res:
                raise InputError(source, f"{where}.smpi_ranks_to_hosts_mapping[{i}]",
                                 f"rank {i} has an invalid value {json.dumps(host)}: should be an integer in [0,{res}[")
    full_id = f"{workload}!{raw_id}"
    data = dict(obj)
    data["id"] = full_id
    return Job(id=full_id, workload=workload, subtime=float(subtime), walltime=float(walltime),
               res=res, profile=profile, json=data)


#: the largest significand RapidJSON keeps in its 64-bit integer while reading a fraction
_EXACT = 2**53 - 1
#: the powers of ten a double holds exactly (RapidJSON's ``Pow10`` table, up to 1e22)
_POW10 = tuple(float(f"1e{k}") for k in range(23))


def batsim_float(text: str) -> float:
    """A number of a workload file as Batsim 4.2.1 reads it (``workload.cpp``: RapidJSON's
    ``Document::Parse`` with default flags, then ``GetDouble``: subtimes, walltimes, every
    profile amount): :func:`coburst.simulator.protocol.rapidjson_double`, one ulp off the
    correctly rounded value for some 16-17 digit numbers (``95.44886130889651`` of Batsim's
    ``test_batsim_paper_workload_seed1.json``).  A number past the double range keeps
    Python's reading (``inf``), which the checks refuse naming the field."""
    if "e" not in text and "E" not in text:
        if len(text) <= 16:
            return float(text)  # rapidjson_double's own fast path (without importing the protocol)
        whole, _, fraction = text.lstrip("-").partition(".")
        digits = whole + fraction
        if fraction and len(fraction) <= 22 and len(digits.lstrip("0")) <= 17:
            significand = int(digits)
            if significand <= _EXACT:
                # an exact double divided once by an exact power of ten: correctly rounded
                return float(text)
            # rapidjson_double's steps for a plain number of at most 17 significant digits:
            # RapidJSON checks its 2**53 limit before each fraction digit, so only the last
            # one can be left out of its 64-bit significand, then added in double arithmetic
            # (below its 17-digit limit); one division by 10**len(fraction)
            head, last = divmod(significand, 10)
            value = float(significand) if head <= _EXACT else float(head) * 10.0 + last
            value = value / _POW10[len(fraction)]
            return -value if text.startswith("-") else value
    from coburst.simulator.protocol import rapidjson_double

    try:
        return rapidjson_double(text)
    except ValueError:
        return float(text)


def _decimal_float(number: Decimal) -> float:
    """:func:`batsim_float` of a number the streamed reader got as a ``Decimal`` (its digits
    and exponent, not the file's layout of them).  Up to 17 significant digits below 1e15,
    RapidJSON reads every usual layout of them alike (plain, or an exponent after one digit
    and a fraction: it checks its 2**53 limit on the same prefixes of the digits and never
    reaches its 17-digit limit), so the Decimal's own text reads as the file's.  Past that
    the layout can matter: :class:`_Fallback` (the whole reading sees the file's text)."""
    text = str(number)
    if "E" not in text:
        if len(text) <= 16:
            return float(text)
        whole, _, fraction = text.lstrip("-").partition(".")
        if len(whole) <= 15 and len((whole + fraction).lstrip("0")) <= 17:
            return batsim_float(text)
    elif len(number.as_tuple().digits) <= 17 and number.adjusted() < 15:
        return batsim_float(text)
    raise _Fallback


def _batsim_numbers(value: Any) -> Any:
    """``value`` as decoded by ijson without ``use_float`` (a ``Decimal`` for each number
    with a fraction or an exponent, exact digits and exponent) with those numbers read as
    Batsim reads them (:func:`_decimal_float`)."""
    kind = type(value)
    if kind is Decimal:
        return _decimal_float(value)
    if kind is dict or kind is _Unique:
        if _NESTED.isdisjoint(map(type, value.values())):
            return value  # the usual job: nothing to convert (checked in C)
        store = dict.__setitem__  # (a _Unique refuses a key set twice: here the value is replaced)
        for key, item in value.items():
            kind = type(item)
            if kind is Decimal:
                store(value, key, _decimal_float(item))
            elif kind is dict or kind is list or kind is _Unique:
                store(value, key, _batsim_numbers(item))
        return value
    if kind is list:
        return [_batsim_numbers(item) if type(item) in _NESTED else item for item in value]
    return value


#: ``load_workload(..., stream="auto")`` streams files of at least this many bytes; smaller
#: ones are read whole (C-level :mod:`json`, one pass: ~30 ms instead of ~60 ms for 5000 jobs,
#: a few MB of job objects at most).  Tests of the streamed path lower it.
STREAM_FROM_BYTES = 1 << 20


def load_workload(path: str | Path, name: str, stream: bool | str = False) -> Workload:
    """Load and validate a Batsim JSON workload file; its jobs are named ``name!id``.

    ``stream``: validate the whole file first, then read its jobs from the file as the
    simulation goes (:class:`JobStream`; memory independent of the number of jobs) when that
    gives Batsim's result: jobs listed in submission order (a file whose jobs are not sorted by
    subtime is read whole, as Batsim's submitter needs them all sorted first).  Any problem
    found, or any input the streaming reader might read otherwise than :mod:`json` (see
    :func:`scan_workload`), falls back to the whole-document reading, so errors and warnings
    are today's, word for word.  ``"auto"``: stream files of :data:`STREAM_FROM_BYTES` bytes or
    more (what the simulator does); both readings give the same outputs."""
    source = str(path)
    if stream == "auto":
        try:
            stream = Path(path).stat().st_size >= STREAM_FROM_BYTES
        except OSError:
            stream = False  # the whole reading reports it
    if stream:
        wl = scan_workload(path, name)
        if wl is not None:
            return wl
    doc = read_json(path, "workload file", object_pairs_hook=_json_object, parse_float=batsim_float)
    wl = workload_from_doc(doc, name, source, base=Path(path).parent)
    wl.from_file = True
    return wl


def workload_from_doc(doc: Any, name: str, source: str, base: Path | None = None) -> Workload:
    """Validate a decoded workload document with Batsim 4.2's rules (see :func:`load_workload`;
    ``base``: the workload file's folder, where ``usage_trace`` profiles find their traces)."""
    if not isinstance(doc, dict):
        raise InputError(source, None, "a workload must be a JSON object with 'jobs' and 'profiles'")
    if type(doc) is _JsonObject:
        warn_duplicates(doc, source, "")
    if "nb_res" not in doc:
        raise InputError(source, None, "the 'nb_res' field is missing")
    nb_res = doc["nb_res"]
    if isinstance(nb_res, bool) or not isinstance(nb_res, int) or not 0 < nb_res <= COUNT_MAX:
        raise InputError(source, "nb_res", f"expected an integer between 1 and {COUNT_MAX}, got {json.dumps(nb_res)}")
    if "profiles" not in doc:
        raise InputError(source, None, "the 'profiles' object is missing")
    profiles_doc = doc["profiles"]
    if not isinstance(profiles_doc, dict):
        raise InputError(source, "profiles", "expected an object mapping profile names to profiles")
    if getattr(profiles_doc, "duplicates", None):
        raise InputError(source, f"profiles.{profiles_doc.duplicates[0]}", "duplicate profile name")
    for pname, p in profiles_doc.items():
        if type(p) is _JsonObject:
            warn_duplicates(p, source, f"profiles.{cut(pname, 60)}")
    profiles = {pname: validate_profile(pname, p, source, f"profiles.{pname}", base)
                for pname, p in profiles_doc.items()}
    check_composed_references(profiles, source)
    jobs_doc = doc.get("jobs")
    if not isinstance(jobs_doc, list):
        raise InputError(source, "jobs", "expected a list of jobs")
    wl = Workload(name=name, path=source, nb_res=nb_res, profiles=profiles)
    from coburst.simulator.expansion import oversized_error, oversized_profiles

    oversized, cap = oversized_profiles(profiles)
    seen: dict[str, int] = {}
    for i, obj in enumerate(jobs_doc):
        if type(obj) is _JsonObject:
            warn_duplicates(obj, source, f"jobs[{i}]")
        job = job_from_json(obj, name, source, f"jobs[{i}]", profiles)
        if oversized and job.profile in oversized:
            raise oversized_error(source, f"jobs[{i}]", obj["id"], job.profile, cap)
        if job.id in seen:
            raise InputError(source, f"jobs[{i}].id", f"duplicate job id {obj['id']!r} (also jobs[{seen[job.id]}])")
        seen[job.id] = i
        prof = profiles[job.profile]
        if prof.type == "parallel" and len(prof.data["cpu"]) != job.res:  # Batsim's check_single_job_validity
            raise InputError(source, f"jobs[{i}].res", f"the job requests {job.res} resources but its "
                             f"'parallel' profile {job.profile!r} has {len(prof.data['cpu'])} executors")
        wl.jobs.append(job)
    return wl


# ------------------------------------------------------------------------------ streamed reading
#: nesting depth beyond which the streamed reader hands the file to :mod:`json` (which refuses
#: documents nested about a thousand levels deep; real workloads nest a few levels)
_STREAM_DEPTH = 100


#: repeated keys the streamed reader met (:class:`_Unique`), over all its readings
_REPEATED = [0]


class _Unique(dict):
    """A JSON object of the streamed reader: a repeated key is counted in :data:`_REPEATED`
    (the file then goes to the whole reading, which reads the first value, as Batsim does, and
    warns: :class:`_JsonObject`).  (Nothing is raised here: ijson's C parser does not pass on
    an exception of ``__setitem__``.)"""

    __slots__ = ()

    def __setitem__(self, key, value):
        if key in self:
            _REPEATED[0] += 1
        else:
            dict.__setitem__(self, key, value)


def _shallow(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` nests fewer than :data:`_STREAM_DEPTH` levels."""
    if depth > _STREAM_DEPTH:
        return False
    if type(value) is dict or type(value) is _Unique:
        return all(_shallow(v, depth + 1) for v in value.values() if type(v) in _FLAT)
    if type(value) is list:
        return all(_shallow(v, depth + 1) for v in value if type(v) in _FLAT)
    return True


#: the types of values :func:`_shallow` looks into
_FLAT = frozenset((dict, list, _Unique))
#: the types of values :func:`_batsim_numbers` converts or looks into
_NESTED = frozenset((Decimal, dict, list, _Unique))


class _Fallback(Exception):
    """The streamed reader leaves this file to the whole-document reading."""


def _plain_utf8(path: Path) -> bool:
    """The bytes the streaming parser (yajl) could read otherwise than Python's ``json`` and
    ``bytes.decode``: invalid UTF-8 (yajl only checks the shape of sequences) and ``\\u``
    escapes of surrogates (yajl turns a lone one into ``?``).  False: read the file whole."""
    import codecs
    import re

    escape = re.compile(rb"\\u[dD][89a-fA-F]")
    decoder = codecs.getincrementaldecoder("utf-8")()
    tail = b""
    with open(path, "rb") as f:
        while True:
            chunk = f.read(1 << 22)
            if not chunk:
                break
            if escape.search(tail + chunk[:8]) or escape.search(chunk):
                return False
            tail = chunk[-8:]
            if not chunk.isascii() or decoder.getstate()[0]:
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError:
                    return False
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _object_first(path: Path) -> bool:
    """Whether the document starts with ``{`` (after JSON white space): anything else is not a
    workload, and the whole reading says why at once (the streaming parser would first build
    its events: a file of 100,000 nested lists took it 10 GB)."""
    with open(path, "rb") as f:
        while True:
            chunk = f.read(1 << 16)
            if not chunk:
                return False
            rest = chunk.lstrip(b" \t\n\r")
            if rest:
                return rest[:1] == b"{"


class JobStream:
    """The jobs of a validated workload file, read from it again whenever they are needed
    (only the parser's buffer and the job at hand in memory): in file order (``iter``), in
    Batsim's submission order (:meth:`submission_order`, for a file whose subtimes never
    decrease), or one by id (:meth:`find`, error paths only)."""

    def __init__(self, path: Path, name: str, profiles: dict[str, Profile], nb_jobs: int, hashes, stamp):
        self.path = path
        self.source = str(path)
        self.name = name
        self.profiles = profiles
        self.nb_jobs = nb_jobs
        self._hashes = hashes  # sorted hash() of every full job id (numpy int64)
        self._stamp = stamp

    def _objects(self):
        import ijson

        try:
            stat = self.path.stat()
            if (stat.st_size, stat.st_mtime_ns) != self._stamp:
                raise OSError("the file changed since it was validated")
            with open(self.path, "rb") as f:
                for obj in ijson.items(f, "jobs.item"):
                    yield _batsim_numbers(obj)
        except (OSError, ijson.JSONError) as exc:
            raise InputError(self.source, None, f"cannot read the workload again during the simulation: {exc}") \
                from None

    def __iter__(self):
        name, source, profiles = self.name, self.source, self.profiles
        for i, obj in enumerate(self._objects()):
            yield job_from_json(obj, name, source, f"jobs[{i}]", profiles, quiet=True)

    def submission_order(self):
        """Batsim's order (subtime, then full id as a string) of a file sorted by subtime: the
        jobs of one subtime sorted by id, one date at a time."""
        group: list[Job] = []
        for job in self:
            if group and job.subtime != group[0].subtime:
                if len(group) > 1:
                    group.sort(key=lambda j: j.id)
                yield from group
                group = []
            group.append(job)
        if len(group) > 1:
            group.sort(key=lambda j: j.id)
        yield from group

    def find(self, jid: str) -> tuple[float, str] | None:
        """(subtime, id) of job ``jid`` of the file, else None (its id's hash looked up; a hit
        confirmed by reading the file again)."""
        import numpy as np

        h = hash(jid)
        i = int(np.searchsorted(self._hashes, h))
        if i >= len(self._hashes) or int(self._hashes[i]) != h:
            return None
        for job in self:
            if job.id == jid:
                return (job.subtime, jid)
        return None


#: the lengths of event prefixes :func:`scan_workload`'s first pass skips: events inside the
#: top-level values (their prefixes hold a key of 9 characters or more), which it has nothing
#: to check in, but not so deep that the nesting check must see them
_INSIDE = range(9, 10 * _STREAM_DEPTH + 1)


def _outline(events):
    """The events of the top level (prefix ``""``), of the keys up to 8 characters
    (``nb_res``, ``jobs``, ``profiles`` and their first level) and of prefixes longer than
    :data:`_STREAM_DEPTH` x 10 (deep nesting), in order: the others are dropped by C-level
    iteration (``itertools``, ``operator``), with no Python call per event."""
    import itertools
    import operator

    events, copy = itertools.tee(events)
    keep = map(operator.not_, map(_INSIDE.__contains__, map(len, map(operator.itemgetter(0), copy))))
    return itertools.compress(events, keep)


def scan_workload(path: str | Path, name: str) -> Workload | None:
    """Validate a workload file without holding its jobs (two passes of the ijson streaming
    parser: the profiles, then the jobs one at a time) and return it as a streamed
    :class:`Workload`; None when the whole-document reading must decide instead: any problem
    (it reports it, word for word), input the streaming parser could read otherwise than
    :mod:`json` (invalid UTF-8, surrogate escapes, integers past 64 bits, deep nesting, keys
    repeated at the top level, top-level keys with a dot), or jobs not listed in submission
    order (Batsim sorts them all before the first submission: such a file is read whole).
    The warnings of the checks are printed once it succeeds, as the whole reading prints them."""
    import contextlib
    import io
    from array import array

    try:
        import ijson
        import numpy as np
    except ImportError:  # pragma: no cover - dependencies
        return None
    p = Path(path)
    source = str(path)
    from coburst.nesting import file_too_deep, problem, where

    try:
        deep = file_too_deep(p) if p.is_file() else None
    except OSError:
        return None  # (the whole reading names it)
    if deep is not None:  # (before the streaming parser builds its events: 10 GB for 100,000 levels)
        raise InputError(source, where(deep), f"JSON {problem(deep)}")
    try:
        if not p.is_file():
            return None
        stat = p.stat()
        stamp = (stat.st_size, stat.st_mtime_ns)
        if not _plain_utf8(p) or not _object_first(p):
            return None
        warned_profiles, warned_jobs = io.StringIO(), io.StringIO()
        # pass 1: the top level (every event seen: the nesting is bounded before the other
        # passes build profiles and jobs in C)
        top: dict[str, Any] = {}
        keys: list[str] = []
        with open(p, "rb") as f:
            for event in _outline(ijson.parse(f, use_float=True)):
                prefix = event[0]
                if prefix == "":
                    if event[1] == "map_key":
                        keys.append(event[2])
                    elif event[1] not in ("start_map", "end_map"):
                        raise _Fallback  # not an object
                elif len(prefix) > 10 * _STREAM_DEPTH:
                    raise _Fallback  # deeply nested (the parser's prefixes grow with the depth)
                elif prefix in ("nb_res", "jobs", "profiles") and prefix not in top:
                    top[prefix] = event[1:]
        if len(keys) != len(set(keys)) or any("." in k for k in keys):
            return None  # (a dotted key could pass for a part of another's prefix)
        # pass 2: the profiles
        profiles: dict[str, Profile] = {}
        repeated = _REPEATED[0]
        with open(p, "rb") as f, contextlib.redirect_stderr(warned_profiles):
            for pname, prof in ijson.kvitems(f, "profiles", map_type=_Unique):
                if pname in profiles or not _shallow(prof):
                    return None
                prof = _batsim_numbers(prof)
                profiles[pname] = validate_profile(pname, prof, source, f"profiles.{pname}", p.parent)
        if top.get("profiles", ("",))[0] != "start_map" or top.get("jobs", ("",))[0] != "start_array" \
                or _REPEATED[0] != repeated:
            return None  # (repeated keys: the whole reading warns)
        check_composed_references(profiles, source)
        from coburst.simulator.expansion import oversized_profiles

        oversized, _cap = oversized_profiles(profiles)
        # pass 3: the jobs, one at a time
        hashes = array("q")
        used: set[str] = set()
        last = -math.inf
        n = 0
        with open(p, "rb") as f, contextlib.redirect_stderr(warned_jobs):
            for obj in ijson.items(f, "jobs.item", map_type=_Unique):
                if type(obj) is _Unique and not _FLAT.isdisjoint(map(type, obj.values())) and not _shallow(obj):
                    return None
                obj = _batsim_numbers(obj)
                if common_job(obj, profiles):  # what job_from_json checks, without building the job
                    subtime, res, pname, jid = obj["subtime"], obj["res"], obj["profile"], f"{name}!{obj['id']}"
                else:
                    job = job_from_json(obj, name, source, f"jobs[{n}]", profiles)
                    subtime, res, pname, jid = job.subtime, job.res, job.profile, job.id
                if subtime < last or pname in oversized:
                    return None  # not in submission order (read whole), or refused (the whole reading says why)
                last = subtime
                prof = profiles[pname]
                if prof.type == "parallel" and len(prof.data["cpu"]) != res:
                    return None
                used.add(pname)
                hashes.append(hash(jid))
                n += 1
        if _REPEATED[0] != repeated:
            return None  # (repeated keys: the whole reading warns)
        nb_res = top.get("nb_res")
        if nb_res is None or nb_res[0] != "number" or not isinstance(nb_res[1], int) \
                or not 0 < nb_res[1] <= COUNT_MAX:
            return None
        if top.get("profiles", ("",))[0] != "start_map" or top.get("jobs", ("",))[0] != "start_array":
            return None
        ordered = np.sort(np.frombuffer(hashes, dtype=np.int64))
        del hashes
        if len(ordered) > 1 and bool((ordered[1:] == ordered[:-1]).any()):
            return None  # a duplicate id (or two ids of one hash): the whole reading decides
        if p.stat().st_size != stamp[0] or p.stat().st_mtime_ns != stamp[1]:
            return None
    except (InputError, _Fallback, ijson.JSONError, OSError, ValueError, RecursionError):
        return None
    kept = set(used)
    for prof in profiles.values():
        if prof.type == "composed":
            kept.update(prof.data["seq"])
    import sys

    sys.stderr.write(warned_profiles.getvalue() + warned_jobs.getvalue())
    wl = Workload(name=name, path=source, nb_res=nb_res[1], jobs=None, profiles=profiles, kept=kept, from_file=True)
    wl.stream = JobStream(p, name, profiles, n, ordered, stamp)
    return wl
