"""A job inside the simulator: its workload description plus its execution state."""

from __future__ import annotations

import hashlib
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


class CompactIds:
    """A set of job ids kept in 8 bytes each (64-bit BLAKE2b digests in sorted numpy runs,
    merged as they double): the ids of finished jobs Batsim still knows (``Jobs::exists``,
    ``_jobs_met``) without a Python string per job.  Two ids of one digest would make the
    second look present (odds about n²/2^65: 3e-6 for ten million ids)."""

    _FLUSH = 1 << 16

    def __init__(self):
        self._recent: set[int] = set()
        self._runs: list = []
        self._n = 0

    @staticmethod
    def _key(jid: str) -> int:
        return int.from_bytes(hashlib.blake2b(jid.encode("utf-8", "surrogatepass"), digest_size=8).digest(),
                              "little", signed=True)

    def add(self, jid: str) -> None:
        key = self._key(jid)
        if key in self:
            return
        self._recent.add(key)
        self._n += 1
        if len(self._recent) >= self._FLUSH:
            import numpy as np

            run = np.sort(np.fromiter(self._recent, dtype=np.int64, count=len(self._recent)))
            self._recent = set()
            while self._runs and len(self._runs[-1]) <= 2 * len(run):
                run = np.sort(np.concatenate((self._runs.pop(), run)), kind="stable")
            self._runs.append(run)

    def __contains__(self, item) -> bool:
        key = item if isinstance(item, int) else self._key(item)
        if key in self._recent:
            return True
        if self._runs:
            import numpy as np

            for run in self._runs:
                i = int(np.searchsorted(run, key))
                if i < len(run) and int(run[i]) == key:
                    return True
        return False

    def __len__(self) -> int:
        return self._n
