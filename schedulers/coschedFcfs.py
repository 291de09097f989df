"""pybatsim entry: FCFS, compact (Kellari 2025, §5.1.1).

    pybatsim schedulers/coschedFcfs.py        # against batsim or coburst sim, node-sharing platform

Parameters as options (-o '{"backfill_depth": 100}'); see coburst/policies/cosched/.
"""

from coburst.adapter.cosched import CoschedScheduler


class CoschedFcfs(CoschedScheduler):
    only_policy = "fcfs"
