"""What the simulator's parts use of the :class:`~coburst.simulator.engine.Simulator` that
owns them, as a typing ``Protocol``.

A job's execution (:class:`~coburst.simulator.execution.JobRun`), the external events
(:class:`~coburst.simulator.events.ExternalEvents`) and the workflows
(:class:`~coburst.simulator.workflow.Workflows`) are handed the simulator itself; they name
this view of it for their annotations instead of importing the engine, which imports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from coburst.simulator.jobs import SimJob
    from coburst.simulator.kernel import Kernel, Put
    from coburst.simulator.l07 import Route
    from coburst.simulator.workload import Profile, Workload

__all__ = ["SimulatorView"]


class SimulatorView(Protocol):
    """The simulator's state and services its parts read and call."""

    kernel: Kernel
    #: the platform's resources (Batsim's machines), by id
    resources: list
    machines: Any  # coburst.simulator.platform.Machines
    workloads: dict[str, Workload]
    traces: Any  # coburst.simulator.traces.TraceRecorder
    power: Any  # coburst.simulator.energy.Power, or None without -E
    external: Any  # coburst.simulator.events.ExternalEvents, or None without --events
    workflows: Any  # coburst.simulator.workflow.Workflows, or None without -W/--WS
    #: per machine: jobs computing on it, last state change and time spent idle / computing
    machine_busy: list[int]
    machine_last_change: list
    machine_idle: list
    machine_computing: list

    def now(self) -> float: ...

    def to_server(self, message: tuple, host: Any = None) -> Put: ...

    def append(self, etype: str, data: Any) -> None: ...

    def message_route(self, src: Any, dst: Any) -> Route: ...

    def profile_of(self, sjob: SimJob) -> Profile: ...

    def profile_named(self, sjob: SimJob, name: str) -> Profile: ...

    def job_started(self, run: Any) -> None: ...  # run: execution.JobRun

    def job_finished(self, run: Any, code: int) -> None: ...

    def computed_rate(self, hosts: list, flops: list[float], matrix: list[float]) -> float | None: ...

    def check_ptask_permission(self, sjob: SimJob, flops: list[float]) -> None: ...

    def build_ptask(self, sjob: SimJob, profile: Profile, hosts: list) -> tuple[list, list[float], list[float]]: ...
