"""pybatsim entry: Longest Job First, compact (Kellari 2025, §5.1.5).

    pybatsim schedulers/coschedLjf.py        # against batsim or coburst sim, node-sharing platform

Parameters as options (-o '{"backfill_depth": 100}'); see coburst/policies/cosched/.
"""

from coburst.adapter.cosched import CoschedScheduler


class CoschedLjf(CoschedScheduler):
    only_policy = "ljf"
