"""pybatsim entry: any coburst policy, chosen by options (default ``backfill-1``).

    pybatsim schedulers/coburstBackfill.py -o '{"policy": "backfill-sjf", "depth": 1}'
    pybatsim schedulers/coburstBackfill.py -o '{"policy": "no-future-1"}'

Policies: fcfs, filler, filler-sjf, backfill-D, backfill-sjf-D, no-future-D, conservative.
Other options: bb_capacity, dragonfly, trace, io_aware (see coburst/adapter/scheduler.py).

IO-Aware workloads (jobs with an ``io`` field, ``coburst workload swf --model io-aware``):
run the simulator with ``--enable-dynamic-jobs`` and each such job runs through its phases
(stage-in, compute, checkpoints, flushes, stage-out) as dynamic sub-jobs, one ``_jobs.csv``
row per static job in ``w0`` plus the sub-jobs' rows in workload ``io``
(coburst/adapter/io_aware.py).  Without ``--enable-dynamic-jobs``, or with the option
``"io_aware": false``, they run their static profile (a warning says so).
"""

from coburst.adapter import CoburstScheduler


class CoburstBackfill(CoburstScheduler):
    default_policy = "backfill-1"
