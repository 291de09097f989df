"""IRMaSim workloads (``workload.json``) -> Batsim workloads in the shared heterogeneous format.

IRMaSim's format (``Simulator.generate_workload``, ``Job.py``; Sánchez Sousa 2023, §2.2.1)::

    {"jobs": [{"id": "1", "subtime": 0, "res": 1, "req_time": 30, "req_ops": 105000000000,
               "ipc": 1, "mem": 1100, "mem_vol": 19}, ...],
     "profiles": {NAME: {"req_ops": ..., "req_time": ..., "ipc": ..., "mem": ..., "mem_vol": ...}}}

Rules, as IRMaSim applies them
    * tasks: ``res`` (then ``nodes`` = 1, ``ntasks`` = ``res``: all tasks on one node), or
      ``ntasks`` / ``nodes`` / ``ntasks_per_node`` (not both forms); ``ntasks_per_node``
      defaults to 1; ``nodes = ceil(ntasks / ntasks_per_node)`` when missing,
      ``ntasks = nodes x ntasks_per_node`` when missing, else ``ntasks_per_node =
      ceil(ntasks / nodes)``; the three given must agree.  Batsim's ``res`` = ``ntasks``;
      the job keeps ``nodes`` and ``ntasks_per_node`` (a policy places ``ntasks_per_node``
      tasks per node).
    * ``req_ops``, ``req_time`` required (from the job, or its ``profile``); ``ipc`` default 1,
      ``mem`` 0, ``mem_vol`` 0 (``generate_workload``; a profile's missing ``mem_vol`` is 1,
      as ``Job.from_profile``).  A task's operations are ``ceil(req_ops / ipc)``
      (``Job.ops``): the Batsim profile's ``cpu``.
    * ``id``: kept (as a string; ``job<index>`` when missing); ids must be unique and
      without ``!`` (Batsim's workload separator).
    * submit times: shifted so that the earliest job arrives at 0 (IRMaSim subtracts the first
      job's submit time; the same for a file in submit order).
    * IRMaSim's CSV workloads are not read (convert them to JSON).
"""

from __future__ import annotations

import math
from pathlib import Path

from coburst.errors import InputError
from coburst.validate import AMOUNT_MAX, COUNT_MAX, TIME_MAX, number, read_json
from coburst.workloads.hetero import _int_if_whole, make_job, workload_doc

__all__ = ["convert"]

_JOB_KEYS = ("id", "subtime", "res", "nodes", "ntasks", "ntasks_per_node", "req_ops", "req_time", "ipc", "mem",
             "mem_vol", "req_energy", "profile")


def _tasks(job: dict, source: str, where: str) -> tuple[int, int, int]:
    """(ntasks, nodes, ntasks_per_node) as ``generate_workload`` derives them."""
    def count(key: str) -> int:
        return int(number(job[key], source, f"{where}.{key}", minimum=1, integer=True, maximum=COUNT_MAX))

    if "res" in job:
        if any(k in job for k in ("nodes", "ntasks", "ntasks_per_node")):
            raise InputError(source, where, "gives 'res' and ('nodes', 'ntasks', 'ntasks_per_node'): IRMaSim "
                                            "accepts one form only")
        res = count("res")
        return res, 1, res
    if "ntasks" not in job and "nodes" not in job:
        raise InputError(source, where, "needs 'res', 'ntasks' or 'nodes'")
    if "nodes" not in job:
        ntasks = count("ntasks")
        per = count("ntasks_per_node") if "ntasks_per_node" in job else 1
        return ntasks, math.ceil(ntasks / per), per
    nodes = count("nodes")
    if "ntasks" not in job:
        per = count("ntasks_per_node") if "ntasks_per_node" in job else 1
        return nodes * per, nodes, per
    ntasks = count("ntasks")
    if "ntasks_per_node" in job and nodes != math.ceil(ntasks / count("ntasks_per_node")):
        raise InputError(source, where, f"nodes={nodes} disagrees with ntasks={ntasks} and "
                                        f"ntasks_per_node={job['ntasks_per_node']} (nodes = ceil(ntasks / "
                                        "ntasks_per_node))")
    return ntasks, nodes, math.ceil(ntasks / nodes)


def convert(path: str | Path) -> dict:
    """The Batsim workload of an IRMaSim ``workload.json`` (module doc)."""
    source = str(path)
    if source.endswith(".csv"):
        raise InputError(source, None, "IRMaSim CSV workloads are not read; convert the file to IRMaSim's JSON")
    doc = read_json(path, "IRMaSim workload file")
    if not isinstance(doc, dict) or "jobs" not in doc:
        raise InputError(source, None, "expected a JSON object with a 'jobs' list (IRMaSim workload)")
    raw = doc["jobs"]
    if not isinstance(raw, list) or not raw:
        raise InputError(source, "jobs", "expected a non-empty list of jobs")
    profiles = doc.get("profiles", {})
    if not isinstance(profiles, dict):
        raise InputError(source, "profiles", "expected a JSON object")
    entries = []
    seen: set[str] = set()
    for i, job in enumerate(raw):
        where = f"jobs[{i}]"
        if not isinstance(job, dict):
            raise InputError(source, where, "expected a JSON object")
        for key in job:
            if key not in _JOB_KEYS:
                raise InputError(source, f"{where}.{key}", f"unknown job field (IRMaSim's: {', '.join(_JOB_KEYS)})")
        jid = str(job["id"]) if "id" in job else f"job{i}"
        if not jid or "!" in jid:
            raise InputError(source, f"{where}.id", f"job id {jid!r} is empty or holds '!' (Batsim's separator)")
        if jid in seen:
            raise InputError(source, f"{where}.id", f"job id {jid!r} used twice")
        seen.add(jid)
        if "subtime" not in job:
            raise InputError(source, where, "the field 'subtime' is missing")
        subtime = number(job["subtime"], source, f"{where}.subtime", minimum=-TIME_MAX, maximum=TIME_MAX)
        ntasks, nodes, per = _tasks(job, source, where)
        if "profile" in job:
            name = job["profile"]
            if not isinstance(name, str) or name not in profiles:
                raise InputError(source, f"{where}.profile", f"no profile named {name!r} in 'profiles'")
            fields, fwhere = profiles[name], f"profiles.{name}"
            if not isinstance(fields, dict):
                raise InputError(source, fwhere, "expected a JSON object")
            defaults = {"ipc": 1, "mem": 0, "mem_vol": 1}
        else:
            fields, fwhere = job, where
            defaults = {"ipc": 1, "mem": 0, "mem_vol": 0}
        for key in ("req_ops", "req_time"):
            if key not in fields:
                raise InputError(source, fwhere, f"the field {key!r} is missing")
        req_ops = number(fields["req_ops"], source, f"{fwhere}.req_ops", minimum=0, exclusive_minimum=True,
                         maximum=AMOUNT_MAX)
        req_time = number(fields["req_time"], source, f"{fwhere}.req_time", minimum=0, maximum=TIME_MAX)
        ipc = number(fields.get("ipc", defaults["ipc"]), source, f"{fwhere}.ipc", minimum=0, exclusive_minimum=True,
                     maximum=1e6)
        mem = number(fields.get("mem", defaults["mem"]), source, f"{fwhere}.mem", minimum=0, maximum=AMOUNT_MAX)
        mem_vol = number(fields.get("mem_vol", defaults["mem_vol"]), source, f"{fwhere}.mem_vol", minimum=0,
                         maximum=AMOUNT_MAX)
        cpu = math.ceil(req_ops / ipc)
        entries.append((jid, subtime, ntasks, cpu, req_time, req_ops, ipc, mem, mem_vol, nodes, per))
    origin = min(e[1] for e in entries)
    jobs = [make_job(jid, sub - origin, ntasks, cpu, req_time=req_time, req_ops=req_ops, ipc=ipc, mem=mem,
                     mem_vol=mem_vol, nodes=nodes, ntasks_per_node=per)
            for jid, sub, ntasks, cpu, req_time, req_ops, ipc, mem, mem_vol, nodes, per in entries]
    meta = {"generator": "irmasim", "source": Path(source).name, "subtime_origin": _int_if_whole(origin)}
    return workload_doc(jobs, f"IRMaSim workload {Path(source).name} ({len(jobs)} jobs)", meta)
