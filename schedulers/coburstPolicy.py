"""pybatsim entry: any registered coburst policy, built-in or plugin, by name (default ``backfill-1``).

    pybatsim schedulers/coburstPolicy.py -o '{"policy": "backfill-sjf-1"}'
    pybatsim schedulers/coburstPolicy.py -o '{"policy": "cosched:easy-co", "backfill_depth": 50}'
    pybatsim schedulers/coburstPolicy.py -o '{"policy": "min-min", "mapping": "deferred"}'
    pybatsim schedulers/coburstPolicy.py -o '{"policy": "<a plugin policy>"}'

The policy runs through its family's adapter (coburst/adapter/generic.py): burst-buffer
policies as schedulers/coburstBackfill.py, co-scheduling ones as schedulers/coschedPolicy.py
(node-sharing platform), mapping ones as schedulers/heteroPolicy.py (heterogeneous platform).
Names: ``[FAMILY:]NAME`` (``coburst policies`` lists them; a name several families share,
such as ``fcfs``, is the burst-buffer one here, ``cosched:fcfs`` the other).  Other options:
the adapter's (bb_capacity, dragonfly, trace, io_aware, decision_log) and the policy's
parameters (``coburst policies NAME``).
"""

from coburst.adapter.generic import PolicyScheduler


class CoburstPolicy(PolicyScheduler):
    default_policy = "backfill-1"
