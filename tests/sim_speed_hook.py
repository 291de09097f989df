"""Test-only speed hook for ``coburst sim --speed-hook sim_speed_hook:PlannedRates``.

The plan comes from the environment variable ``COBURST_TEST_RATE_PLAN``:
``{"w0!1": [[date, factor], ...], ...}`` — at each (absolute, simulated) date, the job's
speed factor becomes ``factor`` through :meth:`coburst.simulator.execution.JobRun.set_rate`
(if the job is still running).
"""

from __future__ import annotations

import json
import os

from coburst.simulator.kernel import Sleep


class PlannedRates:
    def __init__(self, sim):
        self.sim = sim
        self.plan = json.loads(os.environ.get("COBURST_TEST_RATE_PLAN", "{}"))

    def on_job_start(self, sjob) -> None:
        for date, factor in self.plan.get(sjob.id, []):
            self.sim.kernel.spawn(self._change(sjob, float(date), float(factor)), f"rate_{sjob.id}")

    def _change(self, sjob, date: float, factor: float):
        """A kernel process (see coburst.simulator.kernel): sleep until ``date``, then change
        the job's speed if it still runs."""
        if date > self.sim.kernel.now:
            yield Sleep(date - self.sim.kernel.now)
        if sjob.state == "RUNNING" and sjob.run is not None:
            sjob.run.set_rate(factor)

    def on_job_end(self, sjob) -> None:
        pass
