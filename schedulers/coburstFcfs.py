"""pybatsim entry: First-Come-First-Served without backfilling (Kopański 2020, Alg. 1).

    pybatsim schedulers/coburstFcfs.py

IO-Aware workloads run phase by phase with ``--enable-dynamic-jobs`` (see
schedulers/coburstBackfill.py).
"""

from coburst.adapter import CoburstScheduler


class CoburstFcfs(CoburstScheduler):
    fixed_policy = "fcfs"
