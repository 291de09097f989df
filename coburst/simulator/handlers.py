"""The server's handlers: internal messages turned into protocol events, and the
scheduler's decisions checked and applied (``server.cpp`` ``server_on_*``, ``protocol.cpp``'s
reader and writer).  A decision Batsim would refuse stops the run with a
:class:`~coburst.errors.ProtocolError` naming the event and the problem.

:class:`ProtocolHandlers` is one part of :class:`coburst.simulator.engine.Simulator`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from procset import ProcSet

from coburst.errors import InputError, ProtocolError
from coburst.simulator.allocation import parse_allocation
from coburst.simulator.execution import JobRun
from coburst.simulator.jobs import ProfileTable, SimJob
from coburst.simulator.leaves import additional_io, check_io_start, to_job_message
from coburst.simulator.output import JobRecord
from coburst.simulator.protocol import RawJSON, batsim_rewritten, encode_text, encode_value
from coburst.simulator.workload import Profile, Workload, job_from_json, referenced_profiles, validate_profile

_DEBUG = bool(os.environ.get("COBURST_DEBUG_SIM"))
_json_string = json.encoder.encode_basestring


_NO_ZONE_PROPERTIES: dict[str, str] = {}


def resource_json(r, zone_props: dict[str, dict[str, str]], texts: dict[int, RawJSON]) -> RawJSON:
    """A resource of SIMULATION_BEGINS, encoded as :func:`encode_value` encodes ``{"id", "name",
    "state": "idle", "properties", "zone_properties"}``; the zone properties a host shares with
    the others (one dict per zone) are encoded once (``texts``, by dict: start-up time on
    platforms of thousands of hosts)."""
    zone = zone_props.get(r.name, _NO_ZONE_PROPERTIES)
    text = texts.get(id(zone))
    if text is None:
        text = texts[id(zone)] = encode_text(zone)
    return RawJSON(f'{{"id":{encode_text(r.id)},"name":{encode_text(r.name)},"state":"idle",'
                   f'"properties":{encode_text(dict(r.properties))},"zone_properties":{text}}}')


def completed_data(jid: str, sjob: SimJob) -> dict[str, Any] | RawJSON:
    """JOB_COMPLETED's data ``{"job_id", "job_state", "return_code", "alloc"}``, as the JSON
    text :func:`encode_value` makes of it (the dict itself for a return code of another
    type than ``int``)."""
    code = sjob.return_code
    if type(code) is not int:
        return {"job_id": jid, "job_state": sjob.state, "return_code": code, "alloc": sjob.alloc_text}
    return RawJSON(f'{{"job_id":{_json_string(jid)},"job_state":{_json_string(sjob.state)},"return_code":{code},'
                   f'"alloc":{_json_string(sjob.alloc_text)}}}')


#: the scheduler's event types and the handler method of each
_DECISION_HANDLERS = {
    "EXECUTE_JOB": "on_execute_job", "REJECT_JOB": "on_reject_job", "KILL_JOB": "on_kill_job",
    "CALL_ME_LATER": "on_call_me_later", "REGISTER_JOB": "on_register_job",
    "REGISTER_PROFILE": "on_register_profile", "SET_JOB_METADATA": "on_set_job_metadata",
    "CHANGE_JOB_STATE": "on_change_job_state", "NOTIFY": "on_notify", "TO_JOB_MSG": "on_to_job_msg",
    "RESIZE_JOB": "on_resize_job",
}


class ProtocolHandlers:
    """Events to the scheduler (:meth:`append`) and the handling of every message the
    server receives (:meth:`handle`, :meth:`apply_decision`)."""

    #: ``SimulatorConfig(elastic=True)``: the elastic jobs' side (coburst.simulator.elastic.ElasticMode)
    elastic = None

    def append(self, etype: str, data: dict[str, Any]) -> None:
        """Queue an event for the scheduler, encoded at once (Batsim's writer appends it to the
        message being built, dated now)."""
        if type(data) is RawJSON:  # (encode_value would copy it as it is)
            self.events.append(RawJSON(f'{{"timestamp":{"%6f" % self.kernel.now},"type":{_json_string(etype)},'
                                       f'"data":{data}}}'))
            return
        out = ['{"timestamp":', "%6f" % self.kernel.now, ',"type":', _json_string(etype), ',"data":']
        encode_value(data, out)
        out.append("}")
        self.events.append(RawJSON("".join(out)))

    def simulation_begins(self) -> dict[str, Any]:
        cfg = self.config
        compute = [r for r in self.resources if r.role == "compute"]
        storage = [r for r in self.resources if r.role == "storage"]

        zone_props = self.zone_properties()
        texts: dict[int, RawJSON] = {}

        def res_json(r):
            return resource_json(r, zone_props, texts)

        return {
            "nb_resources": len(self.resources),
            "nb_compute_resources": len(compute),
            "nb_storage_resources": len(storage),
            "allow_compute_sharing": self.options["enable_compute_sharing"],
            "allow_storage_sharing": not self.options["disable_storage_sharing"],
            "config": self._begins_config(self.options, dynamic_jobs=cfg.dynamic_jobs,
                                               ack_dynamic_jobs=cfg.ack_dynamic_jobs,
                                               profile_reuse=cfg.profile_reuse)
            if self.elastic is None else self.elastic.announce(self._begins_config(
                self.options, dynamic_jobs=cfg.dynamic_jobs, ack_dynamic_jobs=cfg.ack_dynamic_jobs,
                profile_reuse=cfg.profile_reuse)),
            "compute_resources": [res_json(r) for r in compute],
            "storage_resources": [res_json(r) for r in storage],
            "workloads": {name: str(Path(wl.path).resolve()) for name, wl in sorted(self.workloads.items())},
            "profiles": {name: {p.name: p.data for p in wl.profiles.values() if p.name in kept}
                         for name, wl in sorted(self.workloads.items())
                         for kept in (referenced_profiles(wl),)},
        }

    def handle(self, message: tuple) -> None:
        kind = message[0]
        if _DEBUG:
            print(f"{self.kernel.now!r} {kind} {str(message[1:])[:100]}", file=sys.stderr)
        if kind == "DECISION":  # (the most frequent first)
            self.apply_decision(message[1])
        elif kind == "READY":
            self.sched_ready = True
            if self.end_sent:
                self.done = True
            if self.elastic is not None:
                self.elastic.resume()
        elif kind == "COMPLETED":
            sjob: SimJob = message[1]
            self.nb_running -= 1
            self.nb_completed += 1
            self.append("JOB_COMPLETED", completed_data(sjob.id, sjob))
            self.job_row(sjob)
            self.to_delete.append(sjob)
        elif kind == "SUBMIT":
            if self.workflows is not None:
                if self.workflows.ignores_submissions():  # --ignore-beyond-last-workflow
                    return
                self.workflows.submitted(message)
            for job in message[1]:
                sjob = SimJob(job=job, state="SUBMITTED")
                self.jobs[job.id] = sjob
                self.nb_submitted += 1
                self.append("JOB_SUBMITTED", self.submitted_data(sjob))
        elif kind == "HELLO":
            pass
        elif kind == "SWITCHED":
            self.power.on_switched(message[1], message[2])
        elif kind == "BYE":
            if self.workflows is not None:
                self.workflows.said_bye(message)
            self.nb_submitters_done += 1
            if self.nb_submitters_done == self.nb_submitters:
                self.append("NOTIFY", {"type": "no_more_static_job_to_submit"})
        elif kind in ("EVENTS", "EVENTS_BYE"):
            self.external.handle(message)
        elif kind == "FROM_JOB":  # a send profile (server_on_from_job_msg)
            self.append("FROM_JOB_MSG", {"job_id": message[1].id, "msg": message[2]})
        elif kind == "WAITING_DONE":
            self.nb_waiters -= 1
            if not self.end_sent:
                self.append("REQUESTED_CALL", {})
        elif kind == "KILLING_DONE":
            _, ids, progress = message
            self.nb_killers -= 1
            for jid in ids:
                if jid in progress:
                    sjob = self.jobs[jid]
                    self.nb_running -= 1
                    self.nb_completed += 1
                    self.append("JOB_COMPLETED", completed_data(jid, sjob))
                    self.job_row(sjob)
                    self.to_delete.append(sjob)
            self.append("JOB_KILLED", {"job_ids": ids, "job_progress": progress})
        elif kind == "SCHED_POINT":
            self.elastic.at_point(message[1])
        else:  # pragma: no cover - internal
            raise ProtocolError(f"internal: unknown message {kind}")

    def zone_properties(self) -> dict[str, dict[str, str]]:
        """Each host's ``zone_properties`` (``machines.cpp`` ``attach_zone_properties_to_machines``):
        the properties of the netzones from the root down to the host's own, deeper ones
        overriding.

        SimGrid lists a zone's hosts by going over every host of the platform, so asking each
        of thousands of zones is quadratic: down a chain of single zones (SimGrid's root, the
        file's root zone) each zone's own hosts take its properties, and once no zone further
        down has properties of its own every host left takes them (``coburst platform cosched``:
        the root's properties for all); otherwise every zone is asked."""
        def scan(zone):  # (zone, own properties, children, some zone below has properties)
            kids = [scan(child) for child in zone.get_children()]
            return zone, dict(zone.get_properties()), kids, any(k[1] or k[3] for k in kids)

        out: dict[str, dict[str, str]] = {}
        node, acc = scan(self.engine.netzone_root), {}
        while True:
            zone, own, kids, below = node
            acc = {**acc, **own}
            if not below:
                for host in self.engine.all_hosts:
                    out.setdefault(host.name, acc)
                return out
            if len(kids) != 1:
                break
            for host in zone.all_hosts:
                out[host.name] = acc
            node = kids[0]

        def visit(zone, inherited: dict[str, str]) -> None:
            props = {**inherited, **dict(zone.get_properties())}
            for host in zone.all_hosts:
                out[host.name] = props
            for child in zone.get_children():
                visit(child, props)

        out.clear()
        visit(self.engine.netzone_root, {})
        return out

    def submitted_data(self, sjob: SimJob) -> dict[str, Any] | RawJSON:
        """JOB_SUBMITTED's data (with the profile under --forward-profiles-on-submission), or
        its JSON text when that is all it is."""
        job = sjob.job
        text = job.json_text
        if text is None:
            text = job.json_text = encode_text(job.json)
        if not self.options["forward_profiles_on_submission"]:
            return RawJSON(f'{{"job_id":{_json_string(sjob.id)},"job":{text}}}')  # (as encode_value would)
        return {"job_id": sjob.id, "job": text, "profile": self.profile_of(sjob).data}

    def _job(self, data: dict, etype: str, key: str = "job_id") -> SimJob:
        jid = data.get(key)
        if not isinstance(jid, str):
            raise ProtocolError(f"{etype}: '{key}' must be a job id string like \"w0!1\", got {json.dumps(jid)}")
        sjob = self.jobs.get(jid)
        if sjob is None or sjob.deleted:
            what = "has already finished and been reported" if self.job_deleted(jid) else "does not exist"
            raise ProtocolError(f"{etype}: job {jid!r} {what}")
        return sjob

    def apply_decision(self, event: dict[str, Any]) -> None:
        etype = event["type"]
        data = event.get("data")
        if not isinstance(data, dict):
            raise ProtocolError(f"{etype} event without a 'data' object: {json.dumps(event)[:200]}")
        name = _DECISION_HANDLERS.get(etype) if type(etype) is str else None
        if name is None:
            if etype in ("SET_RESOURCE_STATE", "QUERY"):
                if self.power is None:
                    raise ProtocolError(f"{etype} received, but energy is not simulated: run the simulator with "
                                        "-E/--energy (Batsim 4.2.1 aborts too)")
                if etype == "QUERY":
                    self.on_query(data)
                else:
                    if self.external is not None:
                        self.external.check_power_change(data)
                    self.power.set_resource_state(data)
                return
            raise ProtocolError(f"unknown event type {etype!r} from the scheduler")
        getattr(self, name)(data)

    def on_resize_job(self, data: dict) -> None:
        if self.elastic is None:  # (Batsim 4.2.1 knows no such event)
            raise ProtocolError("unknown event type 'RESIZE_JOB' from the scheduler")
        self.elastic.resize(data)

    def on_query(self, data: dict) -> None:
        """``QUERY`` (``handle_query``): only ``consumed_energy`` (with an empty object) exists."""
        requests = data.get("requests")
        if len(data) != 1 or not isinstance(requests, dict) or not requests:
            raise ProtocolError("QUERY: 'data' must be {\"requests\": {\"consumed_energy\": {}}}")
        for key, value in requests.items():
            if key != "consumed_energy":
                raise ProtocolError(f"QUERY: unknown request {key!r} (Batsim 4.2.1 knows only consumed_energy)")
            if value != {}:
                raise ProtocolError("QUERY consumed_energy: its value must be an empty object")
            self.power.answer_energy()

    def pstate_changed(self, rid: int) -> None:
        """Machine ``rid`` changed computation pstate: the parallel tasks coburst computes on it
        get SimGrid's new rate (those SimGrid simulates follow its host's pstate by themselves),
        also a job's merged I/O task on a machine outside its allocation."""
        if not self.machine_busy[rid] and id(self.resources[rid].host) not in self.io_hosts:
            return
        for sjob in self.jobs.values():
            run = sjob.run
            if (run is not None and sjob.state == "RUNNING" and run.energy_task is not None
                    and (rid in sjob.alloc or rid in run.energy_task[0])):
                run.retune()

    def on_execute_job(self, data: dict) -> None:
        sjob = self._job(data, "EXECUTE_JOB")
        if self.elastic is not None and self.elastic.spec(sjob) is not None:
            return self.elastic.execute(sjob, data)
        extra = () if len(data) == 2 and "alloc" in data else set(data) - {"job_id", "alloc"}
        if extra and (len(extra) > 1 or not extra <= {"mapping", "storage_mapping", "additional_io_job"}):
            raise ProtocolError(f"EXECUTE_JOB {sjob.id}: unexpected fields {sorted(extra)} (Batsim 4 accepts at "
                                "most one of mapping, storage_mapping, additional_io_job)")
        if sjob.state != "SUBMITTED":
            raise ProtocolError(f"EXECUTE_JOB: job {sjob.id!r} cannot be executed: its state is {sjob.state} "
                                "(a job is executed at most once, and only after its submission)")
        alloc_str = data.get("alloc")
        try:
            alloc, canonical = parse_allocation(alloc_str) if isinstance(alloc_str, str) else (None, False)
        except (ValueError, TypeError):
            alloc = None
        if alloc is None or not alloc:  # (ProcSet's len sums its intervals: ~1 us a job)
            raise ProtocolError(f"EXECUTE_JOB {sjob.id}: invalid allocation {json.dumps(alloc_str)} "
                                "(expected an interval set such as \"0-3 8\")")
        nres = len(self.resources)
        if alloc.max >= nres or alloc.min < 0:
            raise ProtocolError(f"EXECUTE_JOB {sjob.id}: allocation {alloc} is outside the platform "
                                f"(resource ids are 0-{nres - 1})")
        mapping = None
        if "mapping" in data:
            mapping = self._mapping(sjob, data["mapping"], len(alloc))
        io = io_alloc = None
        if "additional_io_job" in data:  # (protocol.cpp, before the server's checks)
            io, io_alloc = additional_io(self, sjob, data["additional_io_job"])
        profile = self.profile_of(sjob)
        if profile.type == "composed" and (sjob.job.workload, profile.name) in self.late_profiles:
            raise ProtocolError(f"EXECUTE_JOB {sjob.id}: its composed profile {profile.name!r} was registered during "
                                "the simulation, and Batsim 4.2.1 never resolves the sequence of such a profile (it "
                                "reads an empty profile_sequence when the job starts and crashes)")
        ids = [i for lo, hi in alloc.intervals() for i in range(lo, hi + 1)]  # list(alloc), faster
        size = len(mapping) if mapping is not None else len(ids)
        if size != sjob.job.res and not self._total_profile(sjob, profile):
            raise ProtocolError(f"EXECUTE_JOB {sjob.id}: allocation {alloc} has {len(alloc)} resources but the job "
                                f"requests {sjob.job.res}")
        share_compute = self.options["enable_compute_sharing"]
        share_storage = not self.options["disable_storage_sharing"]
        busy = self.machine_busy
        for rid in (ids if max(map(busy.__getitem__, ids)) > 0 else ()):  # (none busy: the usual case)
            res = self.resources[rid]
            if busy[rid] > 0 and not (share_compute if res.role == "compute" else share_storage):
                what = "compute" if res.role == "compute" else "storage"
                option = "--enable-compute-sharing" if res.role == "compute" else "no --disable-storage-sharing"
                raise ProtocolError(f"EXECUTE_JOB {sjob.id}: resource {rid} ({res.name}) is already computing "
                                    f"another job and {what} sharing is disabled (Batsim needs {option})")
        if "storage_mapping" in data:
            smap = data["storage_mapping"]
            if not isinstance(smap, dict) or not all(isinstance(v, int) and not isinstance(v, bool)
                                                     for v in smap.values()):
                raise ProtocolError(f"EXECUTE_JOB {sjob.id}: storage_mapping must map labels to resource ids")
            for label, rid in smap.items():
                if not 0 <= rid < nres or self.resources[rid].role != "storage":
                    raise ProtocolError(f"EXECUTE_JOB {sjob.id}: storage_mapping[{label!r}] = {rid} is not a "
                                        "storage resource")
            sjob.storage_mapping = dict(smap)
        sjob.alloc = alloc
        sjob._ids, sjob._ids_of = ids, alloc  # (SimJob.machine_ids)
        if canonical:
            sjob._alloc_text = alloc_str
        sjob.mapping = mapping
        hosts = [self.resources[ids[mapping[i]]].host for i in range(len(mapping))] if mapping else \
            [self.resources[i].host for i in ids]
        # check the profile can run here before starting anything
        self._check_profile_executable(sjob, profile, hosts)
        if self.external is not None:
            self.external.check_executable(sjob.id, alloc)
        if self.power is not None:
            self.power.check_executable(sjob, alloc)
        if io is not None:
            check_io_start(self, sjob, io, io_alloc)
        sjob.state = "RUNNING"
        self.nb_running += 1
        run = JobRun(sim=self, job=sjob, hosts=hosts, first_host=self.resources[alloc.min].host)
        run.io, run.io_alloc = io, io_alloc
        sjob.run = run
        run.proc = self.kernel.spawn(run.process(), sjob.id)

    def _mapping(self, sjob: SimJob, mapping: Any, nalloc: int) -> dict[int, int]:
        if not isinstance(mapping, dict):
            raise ProtocolError(f"EXECUTE_JOB {sjob.id}: mapping must be an object executor -> index in alloc")
        try:
            parsed = {int(k): int(v) for k, v in mapping.items()}
        except (TypeError, ValueError):
            raise ProtocolError(f"EXECUTE_JOB {sjob.id}: mapping keys and values must be integers") from None
        for i in range(len(parsed)):
            if i not in parsed:
                raise ProtocolError(f"EXECUTE_JOB {sjob.id}: mapping has no resource for executor {i}")
        if any(not 0 <= v < nalloc for v in parsed.values()):
            raise ProtocolError(f"EXECUTE_JOB {sjob.id}: mapping refers outside the allocation (size {nalloc})")
        return parsed

    def _total_profile(self, sjob: SimJob, profile: Profile) -> bool:
        if profile.type == "parallel_homogeneous_total":
            return True
        if profile.type == "composed":
            return all(self._total_profile(sjob, self.profile_named(sjob, n)) for n in profile.data["seq"])
        return False

    def _check_profile_executable(self, sjob: SimJob, profile: Profile, hosts: list) -> None:
        if profile.type == "composed":
            for name in profile.data["seq"]:
                self._check_profile_executable(sjob, self.profile_named(sjob, name), hosts)
            return
        if profile.type == "parallel" and len(profile.data["cpu"]) != len(hosts):
            raise ProtocolError(f"EXECUTE_JOB {sjob.id}: profile {profile.name!r} has {len(profile.data['cpu'])} "
                                f"executors but the job runs on {len(hosts)} hosts")
        if profile.type == "parallel_homogeneous_pfs":
            self.storage_host(sjob, profile.data.get("storage", "pfs"))
        if profile.type == "data_staging":
            for key in ("from", "to"):
                self.storage_host(sjob, profile.data[key], True)
        if profile.type not in ("delay", "data_staging", "parallel_homogeneous_pfs", "send", "recv"):
            for host in hosts:
                if host.speed <= 0:
                    raise ProtocolError(f"EXECUTE_JOB {sjob.id}: profile {profile.name!r} computes on host "
                                        f"{host.name!r} whose speed is 0 (a storage or master host?)")

    def on_to_job_msg(self, data: dict) -> None:
        """``TO_JOB_MSG`` (``server_on_to_job_msg``): the message waits for the job's recv."""
        to_job_message(self._job(data, "TO_JOB_MSG"), data)

    def on_reject_job(self, data: dict) -> None:
        sjob = self._job(data, "REJECT_JOB")
        if sjob.state != "SUBMITTED":
            raise ProtocolError(f"REJECT_JOB: job {sjob.id!r} cannot be rejected: its state is {sjob.state} "
                                "(only submitted, not yet executed jobs can be rejected)")
        sjob.state = "REJECTED"
        self.nb_completed += 1
        self.to_delete.append(sjob)  # Batsim forgets it once the current events are sent
        job = sjob.job
        self.record(JobRecord(job_number=job.id.split("!", 1)[1], workload=job.workload,
                                      profile=job.profile, subtime=job.subtime, res=job.res,
                                      walltime=job.walltime, final_state="REJECTED", metadata=job.metadata))

    def on_kill_job(self, data: dict) -> None:
        """``KILL_JOB``: a killer process stops the jobs not already being killed."""
        ids = data.get("job_ids")
        if not isinstance(ids, list) or not ids:
            raise ProtocolError("KILL_JOB: 'job_ids' must be a non-empty list of job ids")
        to_kill: list[str] = []
        for jid in ids:
            sjob = self._job({"job_id": jid}, "KILL_JOB")
            if sjob.kill_requested:
                continue
            if sjob.state in ("SUBMITTED", "REJECTED", "NOT_SUBMITTED"):
                raise ProtocolError(f"KILL_JOB: job {jid!r} is not running (state {sjob.state})")
            sjob.kill_requested = True
            to_kill.append(jid)
        if to_kill:
            self.nb_killers += 1
            self.kernel.spawn(self.killer(to_kill), "killer")

    def on_call_me_later(self, data: dict) -> None:
        target = data.get("timestamp")
        if isinstance(target, bool) or not isinstance(target, (int, float)):
            raise ProtocolError(f"CALL_ME_LATER: 'timestamp' must be a number, got {json.dumps(target)}")
        if not target > self.now():
            raise ProtocolError(f"CALL_ME_LATER: asked to be called at {target:f}, which is not after the "
                                f"current time {self.now():f} (Batsim rejects calls in the past or present)")
        self.nb_waiters += 1
        self.kernel.spawn(self.waiter(float(target)), "waiter")

    def _dynamic_check(self, etype: str) -> None:
        if not self.config.dynamic_jobs:
            raise ProtocolError(f"{etype} received but dynamic job registration is disabled "
                                "(run the simulator with --enable-dynamic-jobs)")
        if self.registration_finished:
            raise ProtocolError(f"{etype} received after NOTIFY registration_finished")

    def on_register_profile(self, data: dict) -> None:
        self._dynamic_check("REGISTER_PROFILE")
        wname, pname, prof = data.get("workload_name"), data.get("profile_name"), data.get("profile")
        if not isinstance(wname, str) or not wname or "!" in wname or not isinstance(pname, str) or not pname:
            raise ProtocolError("REGISTER_PROFILE: needs string 'workload_name' (without '!') and 'profile_name'")
        wl = self.workloads.get(wname) or self.workloads.setdefault(
            wname, Workload(name=wname, path="dynamic", nb_res=None, profiles=ProfileTable()))
        if pname in wl.profiles:
            raise ProtocolError(f"REGISTER_PROFILE: profile {pname!r} already exists in workload {wname!r}")
        prof = batsim_rewritten(prof)  # (Batsim keeps it as it writes it back: doubles to 6 decimals)
        try:
            profile = validate_profile(pname, prof, "REGISTER_PROFILE", f"{wname}/{pname}")
        except InputError as exc:
            raise ProtocolError(f"REGISTER_PROFILE: invalid profile: {exc}") from None
        if profile.type == "composed":
            for sub in profile.data["seq"]:
                if sub not in wl.profiles:
                    raise ProtocolError(f"REGISTER_PROFILE {pname!r}: unknown profile {sub!r} in seq")
        wl.profiles[pname] = profile
        self.late_profiles.add((wname, pname))

    def on_register_job(self, data: dict) -> None:
        self._dynamic_check("REGISTER_JOB")
        jid, job = data.get("job_id"), data.get("job")
        if not isinstance(jid, str) or jid.count("!") != 1:
            raise ProtocolError(f"REGISTER_JOB: job_id must look like \"workload!name\", got {json.dumps(jid)}")
        wname = jid.split("!")[0]
        wl = self.workloads.get(wname)
        if wl is None:
            raise ProtocolError(f"REGISTER_JOB {jid}: workload {wname!r} does not exist (register a profile in it "
                                "first)")
        if self.job_exists(jid):
            raise ProtocolError(f"REGISTER_JOB: job {jid!r} already exists")
        if isinstance(job, dict) and (wname, job.get("profile")) in self.collected_profiles:
            raise ProtocolError(f"REGISTER_JOB {jid}: profile {job.get('profile')!r} existed but was discarded "
                                "after its last job ended (use --enable-profile-reuse)")
        job = batsim_rewritten(job)  # (as REGISTER_PROFILE's profile)
        try:
            job_obj = job_from_json({**job, "id": jid} if isinstance(job, dict) else job, wname,
                                    "REGISTER_JOB", jid, wl.profiles)
        except InputError as exc:
            raise ProtocolError(f"REGISTER_JOB: invalid job: {exc}") from None
        job_obj.dynamic = True
        if wl.profiles[job_obj.profile].type == "composed":  # (the bound of the workload's own jobs)
            from coburst.simulator.expansion import oversized_profiles

            oversized, cap = oversized_profiles(wl.profiles)
            if job_obj.profile in oversized:
                raise ProtocolError(f"REGISTER_JOB {jid}: its profile {job_obj.profile!r} expands into more than {cap} "
                                    "tasks; set COBURST_MAX_PROFILE_TASKS=N or off to run it")
        if isinstance(wl.profiles, ProfileTable):
            wl.profiles.use(job_obj.profile)
        sjob = SimJob(job=job_obj, state="SUBMITTED")
        self.jobs[jid] = sjob
        self.nb_submitted += 1
        if self.config.ack_dynamic_jobs:
            self.append("JOB_SUBMITTED", self.submitted_data(sjob))

    def on_set_job_metadata(self, data: dict) -> None:
        sjob = self._job(data, "SET_JOB_METADATA")
        meta = data.get("metadata")
        if not isinstance(meta, str) or '"' in meta:
            raise ProtocolError(f"SET_JOB_METADATA {sjob.id}: metadata must be a string without double quotes")
        sjob.job.metadata = meta

    def on_change_job_state(self, data: dict) -> None:
        sjob = self._job(data, "CHANGE_JOB_STATE")
        new = data.get("job_state")
        now = self.now()
        if sjob.state == "SUBMITTED" and new == "RUNNING":
            sjob.state, sjob.start = "RUNNING", now
        elif sjob.state == "SUBMITTED" and new == "REJECTED":
            self.on_reject_job({"job_id": sjob.id})
        elif sjob.state == "RUNNING" and sjob.run is None and new in (
                "COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED"):
            sjob.state, sjob.finish = new, now
            sjob.alloc = sjob.alloc or ProcSet()
            self.nb_completed += 1
            job = sjob.job
            self.record(JobRecord(job_number=job.id.split("!", 1)[1], workload=job.workload,
                                          profile=job.profile, subtime=job.subtime, res=job.res,
                                          walltime=job.walltime, final_state=new, start=sjob.start,
                                          finish=now, alloc=sjob.alloc, metadata=job.metadata))
        else:
            raise ProtocolError(f"CHANGE_JOB_STATE {sjob.id}: cannot go from {sjob.state} to {new}")

    def on_notify(self, data: dict) -> None:
        ntype = data.get("type")
        if ntype == "registration_finished":
            self._dynamic_check("NOTIFY registration_finished")
            self.registration_finished = True
        elif ntype == "continue_registration":
            self.registration_finished = False
        elif ntype == "elastic_jobs" and self.elastic is not None:  # (coburst.simulator.elastic)
            self.elastic.agreed = True
        else:
            raise ProtocolError(f"NOTIFY: unknown type {ntype!r} (expected registration_finished or "
                                "continue_registration)")
