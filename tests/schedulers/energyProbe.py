"""Test scheduler for energy (``-E``): FCFS on the lowest idle machines, with pstate changes
and energy queries that its options ask for (deterministic, same decisions on any engine).

Options (``-o JSON``):

* ``pstates``: list of computation pstates; the k-th job started (0-based) first gets its
  machines set to ``pstates[k % len(pstates)]`` (``SET_RESOURCE_STATE`` just before its
  ``EXECUTE_JOB``, same date);
* ``busy_pstate``: ``[k, pstate]``: when the k-th job is started, its machines also change to
  ``pstate`` one second later (a ``CALL_ME_LATER``), while the job computes;
* ``initial``: ``[["0-1", 1], ...]``: pstate changes sent in the first reply (time 0);
* ``query``: send ``QUERY consumed_energy`` in every reply that has other events;
* ``sleep``: ``[sleep_pstate, compute_pstate]``: idle machines are put to sleep when no job
  waits, and switched on to ``compute_pstate`` when jobs wait and not enough are awake;
* ``record``: file where every message is recorded (see ``_simtest``).
"""

from __future__ import annotations

from procset import ProcSet

from batsim.batsim import BatsimScheduler

import _simtest


class EnergyProbe(BatsimScheduler):
    def __init__(self, options):
        super().__init__(options)
        if options.get("record"):
            _simtest.install_recorder(options["record"])
        self.pstates = options.get("pstates", [])
        self.busy_pstate = options.get("busy_pstate")
        self.query = bool(options.get("query"))
        self.sleep = options.get("sleep")
        self.initial = options.get("initial", [])
        self.idle: set[int] = set()
        self.asleep: set[int] = set()
        self.switching: set[int] = set()
        self.queue = []
        self.started = 0
        self.later = None  # (date, machines, pstate)

    def onAfterBatsimInit(self):
        self.idle = set(range(self.bs.nb_compute_resources))

    def onJobSubmission(self, job):
        if job.requested_resources > self.bs.nb_compute_resources:
            self.bs.reject_jobs([job])
        else:
            self.queue.append(job)

    def onJobCompletion(self, job):
        self.idle |= set(job.allocation)

    def onMachinePStateChanged(self, nodes, pstate):
        machines = set(range(nodes[0], nodes[1] + 1)) & self.switching
        self.switching -= machines
        if self.sleep and int(pstate) == self.sleep[0]:
            self.asleep |= machines
        else:
            self.idle |= machines

    def onReportEnergyConsumed(self, consumed_energy):
        pass

    def onRequestedCall(self):
        if self.later is not None:
            date, machines, pstate = self.later
            self.later = None
            self.bs.set_resource_state(machines, pstate)

    def onNoMoreEvents(self):
        sent = False
        for machines, pstate in self.initial:
            self.bs.set_resource_state(ProcSet.from_str(machines), pstate)
        self.initial = []
        while self.queue and len(self.idle) >= self.queue[0].requested_resources:
            job = self.queue.pop(0)
            chosen = sorted(self.idle)[:job.requested_resources]
            self.idle -= set(chosen)
            job.allocation = ProcSet(*chosen)
            if self.pstates:
                self.bs.set_resource_state(job.allocation, self.pstates[self.started % len(self.pstates)])
            if self.busy_pstate and self.busy_pstate[0] == self.started:
                self.later = (self.bs.time() + 1, job.allocation, self.busy_pstate[1])
                self.bs.wake_me_up_at(self.bs.time() + 1)
            self.bs.execute_jobs([job])
            self.started += 1
            sent = True
        if self.sleep:
            sleep_ps, on_ps = self.sleep
            if not self.queue and self.idle:
                machines = ProcSet(*sorted(self.idle))
                self.idle.clear()
                self.switching |= set(machines)
                self.bs.set_resource_state(machines, sleep_ps)
                sent = True
            elif self.queue:
                need = self.queue[0].requested_resources - len(self.idle) - len(self.switching)
                wake = sorted(self.asleep)[:max(need, 0)]
                if wake:
                    self.asleep -= set(wake)
                    self.switching |= set(wake)
                    self.bs.set_resource_state(ProcSet(*wake), on_ps)
                    sent = True
        if self.query and sent:
            self.bs.request_consumed_energy()
