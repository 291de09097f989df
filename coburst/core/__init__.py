"""Scheduling core: cluster, availability profile, BB placement, state, decisions.

No Batsim protocol code here; policies (coburst.policies) work on these objects and the
adapter (coburst.adapter) or the reference replay (coburst.core.replay) drive them.

The names below are loaded on first use (PEP 562): importing one module of the package
(``coburst.core.decisions``) does not import the others (numpy with ``cluster``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coburst.lazy import module_getattr

if TYPE_CHECKING:  # pragma: no cover - names for type checkers
    from coburst.core.cluster import Cluster, Node
    from coburst.core.decisions import Decisions, Reject, Reservation, Start
    from coburst.core.placement import Allocation, place_bb, select_nodes
    from coburst.core.profile import Profile, ProfileConflict, ReferenceProfile
    from coburst.core.state import Job, RunningJob, SchedulerState

#: public name -> its module in the package
_LAZY = {
    "Cluster": "cluster", "Node": "cluster",
    "Decisions": "decisions", "Reject": "decisions", "Reservation": "decisions", "Start": "decisions",
    "Allocation": "placement", "place_bb": "placement", "select_nodes": "placement",
    "Profile": "profile", "ProfileConflict": "profile", "ReferenceProfile": "profile",
    "Job": "state", "RunningJob": "state", "SchedulerState": "state",
}

__all__ = [
    "Allocation", "Cluster", "Decisions", "Job", "Node", "Profile", "ProfileConflict",
    "ReferenceProfile", "Reject", "Reservation", "RunningJob", "SchedulerState", "Start",
    "place_bb", "select_nodes",
]


__getattr__ = module_getattr(__name__, _LAZY)
