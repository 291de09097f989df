"""pybatsim entry: EASY backfilling (``backfill-1``: FCFS, one reservation, FIFO backfilling).

With burst-buffer requests in the workload the reservation also holds burst buffers
(Kopański 2020, Alg. 4); without them this is plain EASY backfilling.

    pybatsim schedulers/coburstEasy.py

IO-Aware workloads run phase by phase with ``--enable-dynamic-jobs`` (see
schedulers/coburstBackfill.py).
"""

from coburst.adapter import CoburstScheduler


class CoburstEasy(CoburstScheduler):
    fixed_policy = "backfill-1"
