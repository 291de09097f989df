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
from typing import Any

from coburst.errors import InputError
from coburst.validate import AMOUNT_MAX, COUNT_MAX, number, read_json

#: dates and durations of a Batsim workload: any finite double Batsim can print, as Batsim
#: 4.2 reads them (``GetDouble()``; its own test_long_workload.json submits jobs up to
#: 1e17 s; :func:`batsim_writable` is the one bound, Batsim's message writer's).
#: Far dates lose resolution (at 1e10 s a double still resolves 2e-6 s, at 1e17 s 16 s)
#: exactly as they do in Batsim, whose arithmetic coburst repeats.
BATSIM_TIME_MAX = float("inf")

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
            "which the SimGrid 4.1 Python binding coburst runs on does not expose; run such workloads on the real "
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
    name: str
    path: str
    nb_res: int | None
    jobs: list[Job] = field(default_factory=list)
    profiles: dict[str, Profile] = field(default_factory=dict)


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
        batsim_writable(_num(prof["delay"], source, f"{where}.delay", positive=True, maximum=BATSIM_TIME_MAX),
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
        if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
            raise InputError(source, f"{where}.repeat", f"expected an integer >= 1, got {json.dumps(repeat)}")
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
    """Every name in a composed profile's ``seq`` must exist; no cycles."""
    for name, prof in profiles.items():
        if prof.type != "composed":
            continue
        for i, sub in enumerate(prof.data["seq"]):
            if sub not in profiles:
                raise InputError(source, f"profiles.{name}.seq[{i}]", f"unknown profile {sub!r}")
    state: dict[str, int] = {}

    def visit(name: str, trail: list[str]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            raise InputError(source, f"profiles.{name}", "composed profiles form a cycle: "
                             + " -> ".join(trail + [name]))
        state[name] = 1
        prof = profiles[name]
        if prof.type == "composed":
            for sub in prof.data["seq"]:
                visit(sub, trail + [name])
        state[name] = 2

    for name in profiles:
        visit(name, [])


def referenced_profiles(wl: "Workload") -> set[str]:
    """The profiles Batsim 4.2 keeps after loading a workload (``Profiles::
    remove_unreferenced_profiles``): those a job uses or a composed profile lists; the others
    are dropped from memory and left out of ``SIMULATION_BEGINS``.  (Batsim drops by
    reference count while iterating a hash map, so a profile listed only by an unused composed
    profile may or may not survive there; coburst keeps it.)"""
    used = {job.profile for job in wl.jobs}
    for prof in wl.profiles.values():
        if prof.type == "composed":
            used.update(prof.data["seq"])
    return used


def job_from_json(obj: Any, workload: str, source: str, where: str, profiles: dict[str, Profile],
                  nb_compute: int | None = None) -> Job:
    """Validate one job object and build a :class:`Job` (id becomes ``workload!id``)."""
    if not isinstance(obj, dict):
        raise InputError(source, where, "a job must be a JSON object")
    for key in ("id", "subtime", "res", "profile"):
        if key not in obj:
            raise InputError(source, where, f"job lacks field {key!r}")
    raw_id = obj["id"]
    if isinstance(raw_id, bool) or not isinstance(raw_id, (int, str)) or raw_id == "":
        raise InputError(source, f"{where}.id", f"expected an integer or a non-empty string, got {json.dumps(raw_id)}")
    raw_id = str(raw_id)
    if "!" in raw_id:
        wl, _, raw_id = raw_id.partition("!")
        if wl != workload:
            raise InputError(source, f"{where}.id",
                             f"job id names workload {wl!r} but belongs to workload {workload!r}")
    subtime = batsim_writable(number(obj["subtime"], source, f"{where}.subtime"), source, f"{where}.subtime")
    if subtime < 0:
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


class _JsonObject(dict):
    """A JSON object that remembers its duplicated keys (json keeps the last silently)."""

    def __init__(self, pairs):
        super().__init__(pairs)
        self.duplicates = [k for i, (k, _) in enumerate(pairs) if any(k == k2 for k2, _ in pairs[:i])] \
            if len(self) != len(pairs) else []


def load_workload(path: str | Path, name: str) -> Workload:
    """Load and validate a Batsim JSON workload file; its jobs are named ``name!id``."""
    source = str(path)
    doc = read_json(path, "workload file", object_pairs_hook=_JsonObject)
    return workload_from_doc(doc, name, source, base=Path(path).parent)


def workload_from_doc(doc: Any, name: str, source: str, base: Path | None = None) -> Workload:
    """Validate a decoded workload document with Batsim 4.2's rules (see :func:`load_workload`;
    ``base``: the workload file's folder, where ``usage_trace`` profiles find their traces)."""
    if not isinstance(doc, dict):
        raise InputError(source, None, "a workload must be a JSON object with 'jobs' and 'profiles'")
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
    profiles = {pname: validate_profile(pname, p, source, f"profiles.{pname}", base)
                for pname, p in profiles_doc.items()}
    check_composed_references(profiles, source)
    jobs_doc = doc.get("jobs")
    if not isinstance(jobs_doc, list):
        raise InputError(source, "jobs", "expected a list of jobs")
    wl = Workload(name=name, path=source, nb_res=nb_res, profiles=profiles)
    seen: dict[str, int] = {}
    for i, obj in enumerate(jobs_doc):
        job = job_from_json(obj, name, source, f"jobs[{i}]", profiles)
        if job.id in seen:
            raise InputError(source, f"jobs[{i}].id", f"duplicate job id {obj['id']!r} (also jobs[{seen[job.id]}])")
        seen[job.id] = i
        prof = profiles[job.profile]
        if prof.type == "parallel" and len(prof.data["cpu"]) != job.res:  # Batsim's check_single_job_validity
            raise InputError(source, f"jobs[{i}].res", f"the job requests {job.res} resources but its "
                             f"'parallel' profile {job.profile!r} has {len(prof.data['cpu'])} executors")
        wl.jobs.append(job)
    return wl
