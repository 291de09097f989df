"""Scheduling core: cluster, availability profile, BB placement, state, decisions.

No Batsim protocol code here; policies (coburst.policies) work on these objects and the
adapter (coburst.adapter) or the reference replay (coburst.core.replay) drive them.
"""

from coburst.core.cluster import Cluster, Node
from coburst.core.decisions import Decisions, Reject, Reservation, Start
from coburst.core.placement import Allocation, place_bb, select_nodes
from coburst.core.profile import Profile, ProfileConflict, ReferenceProfile
from coburst.core.state import Job, RunningJob, SchedulerState

__all__ = [
    "Allocation", "Cluster", "Decisions", "Job", "Node", "Profile", "ProfileConflict",
    "ReferenceProfile", "Reject", "Reservation", "RunningJob", "SchedulerState", "Start",
    "place_bb", "select_nodes",
]
