"""pybatsim entry: any coburst policy, chosen by options (default ``backfill-1``).

    pybatsim schedulers/coburstBackfill.py -o '{"policy": "backfill-sjf", "depth": 1}'
    pybatsim schedulers/coburstBackfill.py -o '{"policy": "no-future-1"}'

Policies: fcfs, filler, filler-sjf, backfill-D, backfill-sjf-D, no-future-D, conservative.
Other options: bb_capacity, dragonfly (see coburst/adapter/scheduler.py).
"""

from coburst.adapter import CoburstScheduler


class CoburstBackfill(CoburstScheduler):
    default_policy = "backfill-1"
