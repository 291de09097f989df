"""The job a burst-buffer-aware policy schedules (shared by the state and the decisions)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Job"]


@dataclass(frozen=True, slots=True)
class Job:
    """A rigid job: ``res`` compute nodes for at most ``walltime`` seconds, ``bb`` bytes of
    burst buffer per compute node.  ``walltime`` <= 0 (Batsim's "none") is stored as inf."""

    id: str
    subtime: float
    res: int
    walltime: float
    bb: int = 0
    profile: str | None = None
    extra: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if not self.walltime > 0:
            object.__setattr__(self, "walltime", math.inf)

    @property
    def bb_total(self) -> int:
        return self.bb * self.res
