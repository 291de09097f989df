"""A job inside the simulator: its workload description plus its execution state."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from procset import ProcSet

from coburst.simulator.workload import Job


@dataclass
class SimJob:
    """A job in the simulator: its description plus its execution state."""

    job: Job
    state: str = "NOT_SUBMITTED"
    alloc: ProcSet | None = None
    start: float = -1.0
    finish: float = -1.0
    return_code: int = -1
    run: Any = None  # the job's execution.JobRun while it runs
    kill_requested: bool = False
    deleted: bool = False
    storage_mapping: dict[str, int] | None = None
    mapping: dict[int, int] | None = None
    energy: Any = None  # -E: the allocation's energy at the start, then the job's consumed energy
    #: TO_JOB_MSG messages not yet taken by a recv profile (Batsim's incoming_message_buffer;
    #: a deque once the first one comes)
    messages: Any = None

    _alloc_text: str | None = None

    @property
    def alloc_text(self) -> str:
        """The allocation as Batsim prints it (``0-3 8``)."""
        if self._alloc_text is None:
            self._alloc_text = str(self.alloc)
        return self._alloc_text

    @property
    def id(self) -> str:
        return self.job.id

    @property
    def walltime(self) -> float:
        return self.job.walltime
