"""Energy, as Batsim 4.2.1 models it with ``-E/--energy`` (SimGrid 3.32's ``host_energy`` plugin).

What is emulated, and from where:

* **Host power** (SimGrid 3.32 ``src/plugins/host_energy.cpp``): each host has one
  ``wattage_per_state`` entry per pstate, ``Idle:AllCores`` or ``Idle:Epsilon:AllCores``
  (two values: Epsilon = Idle), and ``wattage_off``.  Its power is ``Idle`` when its CPU
  load is 0, else ``Epsilon + load x (AllCores - Epsilon)``, where the load is
  ``Host::get_load() / speed(pstate) / cores`` capped at 1 (a pstate of speed <= 0 counts
  as fully loaded).  ``get_load()`` is the sum, over the parallel tasks running on the host,
  of the flops they compute there times their rate (the lmm variable's value): a task
  limited by a slower host of its allocation loads the faster ones partially; a ``delay``
  profile loads nothing (its hosts stay at ``Idle``).
* **Lazy integration** (same file, ``HostEnergy::update``): a host's energy grows by
  ``power x (now - last update)`` only when something updates it — a reading
  (``sg_host_get_consumed_energy``), a pstate change (``on_speed_change``: integrated with
  the *previous* pstate), the end or cancellation of a parallel task on it (every host of
  the task), the start of a single-host task — with the power of *that* moment.  Between
  updates a host's load may change (a composed profile's next task on several hosts), and
  SimGrid then integrates the whole interval with the new load; :class:`EnergyMeter` keeps
  the same update points, so its doubles are SimGrid's.
* **Batsim's readings** (``jobs_execution.cpp``, ``job_submitter.cpp``, ``export.cpp``,
  ``machines.cpp``): at a job's start and end the allocation's energy (long double sum in
  id order; the job's ``consumed_energy`` is the difference) and the platform's (every
  compute and storage machine, not the master) for ``_consumed_energy.csv``; at the first
  job submission and at each job end for ``consumed_joules``; at each pstate change; at
  each ``QUERY consumed_energy``.
* **Power states** (``machines.cpp``, ``pstate.cpp``, ``server.cpp``): the
  ``sleep_pstates`` property ``sleep:off:on,...`` names sleep pstates and the virtual
  pstates of their switch off and on; every other pstate is a computation pstate.  A
  switch between computation pstates is immediate; a switch to or from a sleep pstate runs
  one flop at the virtual pstate's speed on the machine (its time and energy), then the
  machine reports to the server.

Not emulated: ``wattage_off`` never applies (Batsim never turns hosts off); a parallel
task left running after its job's walltime (Batsim does not cancel it) keeps loading its
hosts until the job's actor ends, but is assumed not to end by itself before that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from coburst.errors import InputError
from coburst.simulator.output import fmt_Lf
from coburst.simulator.traces import g

LD = np.longdouble

COMPUTATION, SLEEP, VIRTUAL = "computation", "sleep", "virtual"

_STRTOD = re.compile(r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)", re.IGNORECASE)


def _strtod_whole(text: str) -> float | None:
    """``xbt_str_parse_double``: ``strtod`` that must consume the whole string (leading
    blanks allowed, nothing after the number)."""
    m = _STRTOD.match(text)
    if m is None or m.end() != len(text):
        return None
    return float(m.group(0))


def _stod_prefix(text: str) -> float | None:
    """``std::stod``: the longest number at the start (leading blanks allowed, rest ignored)."""
    m = _STRTOD.match(text)
    return None if m is None else float(m.group(0))


@dataclass
class HostPower:
    """One host's power description (per pstate) and pstate kinds, as Batsim reads them."""

    name: str
    speeds: list[float]
    cores: int
    idle: list[float]
    epsilon: list[float]
    slope: list[float]
    watts_off: float
    kinds: list[str]
    #: sleep pstate -> (switch-on virtual pstate, switch-off virtual pstate)
    sleep: dict[int, tuple[int, int]] = field(default_factory=dict)


def read_host_power(name: str, props: dict[str, str], speeds: list[float], cores: int, source: str,
                    compute: bool) -> HostPower:
    """Parse ``wattage_per_state``, ``wattage_off`` and ``sleep_pstates`` of one host (the
    checks of SimGrid 3.32's ``init_watts_range_list`` and Batsim 4.2.1's
    ``create_machines``, as :class:`InputError` naming the host)."""
    where = f"host {name!r}"
    text = props.get("wattage_per_state")
    if text is None:
        raise InputError(source, where, "no 'wattage_per_state' property: with -E every compute and storage host "
                                        "needs one entry 'Idle:AllCores' or 'Idle:Epsilon:AllCores' per pstate "
                                        "(Batsim aborts at its first energy reading)")
    entries = text.split(",")
    if len(entries) != len(speeds):
        raise InputError(source, where, f"'wattage_per_state' has {len(entries)} entries for {len(speeds)} pstates "
                                        "(one 'Idle:AllCores' or 'Idle:Epsilon:AllCores' per pstate)")
    idle, eps, slope = [], [], []
    for ps, entry in enumerate(entries):
        parts = entry.split(":")
        if len(parts) not in (2, 3):
            raise InputError(source, where, f"'wattage_per_state' entry {entry!r} of pstate {ps}: expected "
                                            "'Idle:AllCores' or 'Idle:Epsilon:AllCores'")
        values = [_strtod_whole(p) for p in parts]
        if any(v is None for v in values):
            raise InputError(source, where, f"'wattage_per_state' entry {entry!r} of pstate {ps}: not a number")
        i, e, m = (values[0], values[0], values[1]) if len(values) == 2 else values
        idle.append(i)
        eps.append(e)
        slope.append(m - e)
    off_text = props.get("wattage_off")
    watts_off = 0.0
    if off_text is not None:
        watts_off = _stod_prefix(off_text)
        if watts_off is None:
            raise InputError(source, where, f"invalid 'wattage_off' value {off_text!r}")
    kinds: list[str | None] = [None] * len(speeds)
    sleep: dict[int, tuple[int, int]] = {}
    spec = props.get("sleep_pstates")
    if spec is not None and spec.strip():
        for triplet in [t for t in spec.split(",") if t]:
            parts = [p.strip() for p in triplet.split(":") if p]
            if len(parts) != 3:
                raise InputError(source, where, f"'sleep_pstates' part {triplet!r}: expected three pstates "
                                                "sleep:off:on (e.g. 3:4:5)")
            if not all(p.isdigit() for p in parts):
                raise InputError(source, where, f"'sleep_pstates' part {triplet!r}: pstates must be unsigned integers")
            sleep_ps, off_ps, on_ps = (int(p) for p in parts)
            for ps in (sleep_ps, off_ps, on_ps):
                if ps >= len(speeds):
                    raise InputError(source, where, f"'sleep_pstates' part {triplet!r}: pstate {ps} does not exist "
                                                    f"({len(speeds)} pstates)")
            if kinds[sleep_ps] is not None:
                raise InputError(source, where, f"'sleep_pstates': pstate {sleep_ps} is defined twice or is also a "
                                                "virtual transition pstate")
            for ps in (on_ps, off_ps):
                if kinds[ps] not in (None, VIRTUAL):
                    raise InputError(source, where, f"'sleep_pstates': pstate {ps} is both a virtual transition "
                                                    "pstate and a sleep pstate")
            kinds[sleep_ps] = SLEEP
            kinds[on_ps] = kinds[off_ps] = VIRTUAL
            sleep[sleep_ps] = (on_ps, off_ps)
    final = [k or COMPUTATION for k in kinds]
    if compute:
        for ps, kind in enumerate(final):
            if kind == COMPUTATION and not speeds[ps] > 0:
                raise InputError(source, where, f"computation pstate {ps} has a non-positive speed")
    return HostPower(name=name, speeds=list(speeds), cores=cores, idle=idle, epsilon=eps, slope=slope,
                     watts_off=watts_off, kinds=final, sleep=sleep)


class EnergyMeter:
    """The ``host_energy`` plugin's state for Batsim's machines (index = resource id).

    ``load[i]`` is what SimGrid's ``Host::get_load()`` would return for machine ``i`` (flops
    per second), kept by the engine: :meth:`add_load` when a parallel task starts (after
    :meth:`task_start`), :meth:`task_end` then :meth:`add_load` with the opposite amount
    when it ends or is cancelled.  Machines whose load SimGrid itself computes (parallel
    tasks SimGrid simulates) read it from SimGrid (``sim_tasks``).
    """

    def __init__(self, powers: list[HostPower], pstates: list[int], sg_hosts: list):
        n = len(powers)
        self.powers = powers
        self.pstate = list(pstates)  # the host's current pstate (Host::get_pstate)
        self.saved = list(pstates)  # HostEnergy::pstate_, saved at each update
        self.total = [0.0] * n
        self.last = [0.0] * n
        self.load = [0.0] * n
        self.sim_tasks = [0] * n  # running L07 actions of the kernel, per machine
        self.sg_hosts = sg_hosts
        #: ``Host::get_load()`` of machine i from the kernel's L07 solver (set by the run)
        self.kernel_load = lambda i: 0.0
        self._wattmin = None  # total_wattmin, until a pstate changes

    # -- the plugin ----------------------------------------------------------------------

    def _load(self, i: int) -> float:
        if self.sim_tasks[i]:
            return self.kernel_load(i)
        return self.load[i]

    def watts(self, i: int) -> float:
        """``HostEnergy::get_current_watts_value()`` with the saved pstate."""
        p = self.powers[i]
        ps = self.saved[i]
        speed = p.speeds[ps]
        if speed <= 0:
            cpu = 1.0
        else:
            cpu = self._load(i) / speed
            cpu /= p.cores
            if cpu > 1:
                cpu = 1.0
        if cpu > 0:
            return p.epsilon[ps] + cpu * p.slope[ps]
        return p.idle[ps]

    def update(self, i: int, now: float) -> None:
        """``HostEnergy::update``."""
        last = self.last[i]
        if last < now:
            self.total[i] = self.total[i] + self.watts(i) * (now - last)
            self.last[i] = now
        self.saved[i] = self.pstate[i]

    def consumed(self, i: int, now: float) -> float:
        """``sg_host_get_consumed_energy``."""
        if self.last[i] < now:
            self.update(i, now)
        return self.total[i]

    def set_pstate(self, i: int, pstate: int, now: float) -> None:
        """``Host::set_pstate``: the speed changes, then ``on_speed_change`` updates the host."""
        self.pstate[i] = pstate
        self._wattmin = None
        sg = self.sg_hosts[i]
        if sg.pstate != pstate:
            sg.pstate = pstate
        self.update(i, now)

    def task_start(self, machines: list[int], now: float) -> None:
        """``Exec::on_start``: a task on one host updates that host first."""
        if len(machines) == 1 and machines[0] >= 0:
            self.update(machines[0], now)

    def task_end(self, machines: list[int], now: float) -> None:
        """``CpuAction::on_state_change`` (end or cancellation): every host of the task."""
        for i in machines:
            if i >= 0 and self.last[i] < now:
                self.update(i, now)

    def start_load(self, machines: list[int], flops: list[float], rate: float | None) -> None:
        """A parallel task starts loading ``machines``: ``flops[k] x rate`` on machine
        ``machines[k]`` (SimGrid's ``consumption_weight x value``), or, ``rate`` None, a task
        SimGrid simulates (its hosts' load is read from SimGrid)."""
        for i, amount in zip(machines, flops):
            if i < 0:
                continue
            if rate is None:
                self.sim_tasks[i] += 1
            elif amount > 0:
                self.load[i] = amount * rate

    def end_sim_task(self, machines: list[int], now: float) -> None:
        """An L07 action of the kernel ended: SimGrid updates its hosts while the action still
        loads them (the kernel's loads keep the last solve's values until the next solve)."""
        for i in machines:
            if i < 0:
                continue
            if self.last[i] < now:
                self.update(i, now)
            self.sim_tasks[i] -= 1

    def stop_load(self, machines: list[int], rate: float | None) -> None:
        for i in machines:
            if i < 0:
                continue
            if rate is None:
                self.sim_tasks[i] -= 1
            else:
                self.load[i] = 0.0

    # -- Batsim's readings ---------------------------------------------------------------

    def machines_energy(self, ids, now: float):
        """``consumed_energy_on_machines`` (long double, id order)."""
        consumed = self.consumed
        values = [consumed(i, now) for i in ids]
        return np.add.accumulate(np.array(values, dtype=LD))[-1] if values else LD(0)

    def total_energy(self, now: float):
        """``Machines::total_consumed_energy`` (every machine, id order; the long double sum
        sequential, as Batsim's loop: ``np.add.accumulate``)."""
        last, update = self.last, self.update
        for i in range(len(last)):
            if last[i] < now:
                update(i, now)
        return np.add.accumulate(np.array(self.total, dtype=LD))[-1] if self.total else LD(0)

    def total_wattmin(self):
        """``Machines::total_wattmin``: the Epsilon power of every machine's current pstate."""
        if self._wattmin is None:
            eps = [p.epsilon[ps] for p, ps in zip(self.powers, self.pstate)]
            self._wattmin = np.add.accumulate(np.array(eps, dtype=LD))[-1] if eps else LD(0)
        return self._wattmin


class EnergyTracer:
    """``_consumed_energy.csv`` (``EnergyConsumptionTracer``) and ``_pstate_changes.csv``
    (``PStateChangeTracer``) lines, in Batsim's formats."""

    ENERGY_HEADER = "time,energy,event_type,wattmin,epower\n"
    PSTATE_HEADER = "time,machine_id,new_pstate\n"

    def __init__(self, meter: EnergyMeter, energy_out, pstate_out):
        self.meter = meter
        self.energy_out = energy_out
        self.pstate_out = pstate_out
        self.last_date = LD(0)
        self.last_energy = LD(0)
        self.first_submission = LD(-1)  # context->energy_first_job_submission
        self.last_completion = LD(-1)  # context->energy_last_job_completion
        energy_out.write(self.ENERGY_HEADER)
        pstate_out.write(self.PSTATE_HEADER)

    def entry(self, now: float, kind: str):
        """``EnergyConsumptionTracer::add_entry``."""
        energy = self.meter.total_energy(now)
        wattmin = self.meter.total_wattmin()
        time_diff = LD(now) - self.last_date
        if time_diff > 0:
            epower = "%f" % float((energy - self.last_energy) / time_diff)
        else:
            epower = "NA"
        self.energy_out.write(f"{now:f},{fmt_Lf(energy)},{kind},{fmt_Lf(wattmin)},{epower}\n")
        self.last_date = LD(now)
        self.last_energy = energy
        return energy

    def pstate_change(self, now: float, machines: str, pstate: int) -> None:
        """``PStateChangeTracer::add_pstate_change`` (``%g,%s,%d``)."""
        self.pstate_out.write(f"{g(now)},{machines},{pstate}\n")


_STOI = re.compile(r"\s*[+-]?\d+")

IDLE, SLEEPING, SWITCHING_ON, SWITCHING_OFF = "idle", "sleeping", "switching_on", "switching_off"


class PowerManager:
    """Batsim 4.2.1's server side of ``-E`` on coburst's engine: readings at job starts and
    ends, ``QUERY consumed_energy``, ``SET_RESOURCE_STATE`` (``server_on_pstate_modification``,
    ``CurrentSwitches``, the switch on/off processes of ``pstate.cpp``), the machine states
    it adds (sleeping, switching on/off) and the ``_schedule.csv`` values it feeds."""

    def __init__(self, sim, meter: EnergyMeter, tracer: EnergyTracer):
        self.sim = sim
        self.meter = meter
        self.tracer = tracer
        n = len(meter.powers)
        self.state = [IDLE] * n  # IDLE here covers idle and computing (the engine knows which)
        self.switches: dict[int, list[list]] = {}  # target pstate -> [[all ids, text, remaining ids]]
        self.nb_switching = 0
        self.nb_grouped_switches = 0
        self.nb_machine_switches = 0
        zero = LD(0)
        self.time_in = {SLEEPING: [zero] * n, SWITCHING_ON: [zero] * n, SWITCHING_OFF: [zero] * n}
        self.rid_of = {id(res.host): res.id for res in sim.resources}

    # -- set-up --------------------------------------------------------------------------

    @staticmethod
    def read_meter(sim, source: str) -> EnergyMeter:
        """Every machine's power description and initial pstate (errors before anything runs)."""
        powers, pstates, hosts = [], [], []
        for res in sim.resources:
            host = res.host
            speeds = [host.pstate_speed(i) for i in range(host.pstate_count)]
            props = dict(host.get_properties())
            powers.append(read_host_power(res.name, props, speeds, host.core_count, source,
                                          compute=res.role == "compute"))
            pstates.append(host.pstate)
            hosts.append(host)
        return EnergyMeter(powers, pstates, hosts)

    @classmethod
    def start(cls, sim, meter: EnergyMeter, energy_out, pstate_out) -> "PowerManager":
        """The manager of a run, its two files opened with their first lines
        (``prepare_batsim_outputs``: one line per initial pstate, ascending)."""
        from procset import ProcSet

        manager = cls(sim, meter, EnergyTracer(meter, energy_out, pstate_out))
        hosts = [res.host for res in sim.resources]
        meter.kernel_load = lambda i: sim.kernel.host_load(hosts[i])
        by_pstate: dict[int, list[int]] = {}
        for rid, ps in enumerate(meter.pstate):
            by_pstate.setdefault(ps, []).append(rid)
        for ps in sorted(by_pstate):
            manager.tracer.pstate_change(0.0, str(ProcSet(*by_pstate[ps])), ps)
        return manager

    def machines_of(self, hosts: list) -> list[int]:
        """Machine ids of SimGrid hosts (-1: not a machine, e.g. the master host)."""
        rid_of = self.rid_of
        return [rid_of.get(id(h), -1) for h in hosts]

    # -- readings --------------------------------------------------------------------------

    def first_submission(self, now: float) -> None:
        if self.tracer.first_submission < 0:
            self.tracer.first_submission = self.meter.total_energy(now)

    def job_start(self, sjob, now: float) -> None:
        """``execute_job_process`` before the job's machines are marked computing."""
        sjob.energy = self.meter.machines_energy(sjob.alloc, now)
        self.tracer.entry(now, "s")

    def job_end(self, sjob, now: float) -> None:
        """After the job's machines are released: its consumed energy, the platform's."""
        sjob.energy = self.meter.machines_energy(sjob.alloc, now) - sjob.energy
        self.tracer.last_completion = self.tracer.entry(now, "e")

    def consumed_joules(self) -> float:
        return float(self.tracer.last_completion - self.tracer.first_submission)

    def answer_energy(self) -> None:
        sim = self.sim
        sim.append("ANSWER", {"consumed_energy": float(self.meter.total_energy(sim.kernel.now))})

    # -- machine states --------------------------------------------------------------------

    def _move(self, rid: int, new: str) -> None:
        """``Machine::update_machine_state`` for the states the engine does not track."""
        sim = self.sim
        now = LD(sim.kernel.now)
        old = self.state[rid]
        span = now - sim.machine_last_change[rid]
        if old == IDLE:
            sim.machine_idle[rid] += span
        else:
            self.time_in[old][rid] += span
        sim.machine_last_change[rid] = now
        self.state[rid] = new
        sim.traces.machine_state_changed(old, new)

    def check_executable(self, sjob, alloc) -> None:
        """``server_on_execute_job``: every machine idle or computing, in a computation pstate."""
        from coburst.errors import ProtocolError

        for rid in alloc:
            if self.state[rid] != IDLE:
                raise ProtocolError(f"EXECUTE_JOB {sjob.id}: machine {rid} ({self.sim.resources[rid].name}) cannot "
                                    f"compute jobs now: its state is '{self.state[rid]}'")
            ps = self.meter.pstate[rid]
            if self.meter.powers[rid].kinds[ps] != COMPUTATION:
                raise ProtocolError(f"EXECUTE_JOB {sjob.id}: machine {rid} ({self.sim.resources[rid].name}) is not "
                                    f"in a computation pstate (ps={ps})")

    # -- SET_RESOURCE_STATE ------------------------------------------------------------------

    def set_resource_state(self, data: dict) -> None:
        """``handle_set_resource_state`` then ``server_on_pstate_modification``."""
        from coburst.errors import ProtocolError
        from coburst.simulator.allocation import parse_allocation

        if len(data) != 2 or not isinstance(data.get("resources"), str) or not isinstance(data.get("state"), str):
            raise ProtocolError("SET_RESOURCE_STATE: 'data' must be {\"resources\": \"1 2 3-5\", \"state\": \"42\"}")
        try:
            ids, _ = parse_allocation(data["resources"])
        except (ValueError, TypeError):
            ids = None
        if ids is None or len(ids) == 0:
            raise ProtocolError(f"SET_RESOURCE_STATE: invalid resources {data['resources']!r}")
        m = _STOI.match(data["state"])
        if m is None:
            raise ProtocolError(f"SET_RESOURCE_STATE: the state must be a string holding an integer, got "
                                f"{data['state']!r}")
        target = int(m.group(0))
        sim, meter = self.sim, self.meter
        nres = len(meter.powers)
        if ids.max >= nres:
            raise ProtocolError(f"SET_RESOURCE_STATE: resources {ids} outside the platform (ids 0-{nres - 1})")
        for rid in ids:
            if not 0 <= target < len(meter.powers[rid].kinds):
                raise ProtocolError(f"SET_RESOURCE_STATE: machine {rid} ({sim.resources[rid].name}) has no pstate "
                                    f"{target}")
        now = sim.kernel.now
        text = str(ids)
        self.switches.setdefault(target, []).append([text, set(ids)])
        self.tracer.entry(now, "p")
        kind = meter.powers[ids.min].kinds[target]
        self.tracer.pstate_change(now, text, -1 if kind == COMPUTATION else -2 if kind == SLEEP else -42)
        self.nb_grouped_switches += 1
        self.nb_machine_switches += len(ids)
        for rid in ids:
            kinds = meter.powers[rid].kinds
            current = kinds[meter.pstate[rid]]
            name = sim.resources[rid].name
            if current == COMPUTATION and kinds[target] == COMPUTATION:
                meter.set_pstate(rid, target, now)
                sim.pstate_changed(rid)
                done = self._switch_done(rid, target, now)
                if done is not None:
                    sim.append("RESOURCE_STATE_CHANGED", {"resources": done, "state": str(target)})
            elif current == COMPUTATION and kinds[target] == SLEEP:
                if sim.machine_busy[rid]:
                    raise ProtocolError(f"SET_RESOURCE_STATE: machine {rid} ({name}) is computing a job and cannot "
                                        f"be switched off to sleep pstate {target}")
                self._move(rid, SWITCHING_OFF)
                sim.kernel.spawn(self.switch_process(rid, target, on=False), f"switch OFF {rid}")
                self.nb_switching += 1
            elif current == SLEEP and kinds[target] == COMPUTATION:
                self._move(rid, SWITCHING_ON)
                sim.kernel.spawn(self.switch_process(rid, target, on=True), f"switch ON {rid}")
                self.nb_switching += 1
            elif current == SLEEP:
                raise ProtocolError(f"SET_RESOURCE_STATE: machine {rid} ({name}) is in a sleep pstate and can only "
                                    f"go to a computation pstate, not to {kinds[target]} pstate {target} "
                                    "(Batsim 4.2.1 aborts)")
            else:
                # Batsim 4.2.1 logs an error and goes on: the machine keeps its pstate and this
                # request never completes (no RESOURCE_STATE_CHANGED)
                what = "a virtual transition pstate (it is switching)" if current == VIRTUAL else "a computation pstate"
                import sys

                print(f"coburst sim: warning: SET_RESOURCE_STATE at {now:f}: machine {rid} ({name}) is in {what} and "
                      f"cannot go to {kinds[target]} pstate {target}; ignored, as Batsim 4.2.1 does", file=sys.stderr)
        sim.traces.write_states(now)

    def _switch_done(self, rid: int, target: int, now: float) -> str | None:
        """``CurrentSwitches::mark_switch_as_done``: the machines of the request, when ``rid``
        was its last one."""
        pending = self.switches[target]
        for k, (text, remaining) in enumerate(pending):
            if rid in remaining:
                remaining.discard(rid)
                if remaining:
                    return None
                del pending[k]
                if not pending:
                    del self.switches[target]
                self.tracer.pstate_change(now, text, target)
                self.tracer.entry(now, "p")
                return text
        raise AssertionError(f"machine {rid} was not switching to pstate {target}")  # pragma: no cover

    def switch_process(self, rid: int, target: int, on: bool):
        """``switch_on_machine_process`` / ``switch_off_machine_process`` (on the machine's host)."""
        from coburst.simulator.kernel import Work

        sim, meter = self.sim, self.meter
        kernel = sim.kernel
        power = meter.powers[rid]
        virtual = power.sleep[meter.pstate[rid]][0] if on else power.sleep[target][1]
        meter.set_pstate(rid, virtual, kernel.now)
        rate = power.speeds[virtual] / 1.0  # this_actor::execute(1) at the virtual pstate's speed
        meter.task_start([rid], kernel.now)
        meter.start_load([rid], [1.0], rate)
        yield Work(rate)
        meter.task_end([rid], kernel.now)
        meter.stop_load([rid], rate)
        meter.set_pstate(rid, target, kernel.now)
        self._move(rid, IDLE if on else SLEEPING)
        yield sim.to_server(("SWITCHED", rid, target), sim.resources[rid].host)

    def on_switched(self, rid: int, target: int) -> None:
        """``server_on_switched``."""
        sim = self.sim
        now = sim.kernel.now
        done = self._switch_done(rid, target, now)
        if done is not None:
            sim.traces.write_states(now)
            sim.append("RESOURCE_STATE_CHANGED", {"resources": done, "state": str(target)})
        self.nb_switching -= 1

    def schedule_values(self) -> dict[str, str]:
        def total(state):
            s = LD(0)
            for v in self.time_in[state]:
                s += v
            return f"{float(s):f}"

        return {"consumed_joules": f"{self.consumed_joules():f}",
                "nb_grouped_switches": str(self.nb_grouped_switches),
                "nb_machine_switches": str(self.nb_machine_switches),
                "time_sleeping": total(SLEEPING), "time_switching_on": total(SWITCHING_ON),
                "time_switching_off": total(SWITCHING_OFF)}
