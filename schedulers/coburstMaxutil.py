"""pybatsim entry: maximising utilisation by permutation search (Kopański 2020, Alg. 6),
default ``maxutil-1.0-1``.

    pybatsim schedulers/coburstMaxutil.py -o '{"policy": "maxutil-0.5-1", "steps": 5000}'

Parameters ``beta``, ``depth``, ``steps``, ``exhaustive`` (coburst/policies/maxutil.py).
Other options: bb_capacity, dragonfly, trace, io_aware, decision_log
(coburst/adapter/scheduler.py).
"""

from coburst.adapter import CoburstScheduler


class CoburstMaxutil(CoburstScheduler):
    default_policy = "maxutil-1.0-1"
