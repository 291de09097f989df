"""pybatsim entry: Shortest Job First, compact (Kellari 2025, §5.1.4).

    pybatsim schedulers/coschedSjf.py        # against batsim or coburst sim, node-sharing platform

Parameters as options (-o '{"backfill_depth": 100}'); see coburst/policies/cosched/.
"""

from coburst.adapter.cosched import CoschedScheduler


class CoschedSjf(CoschedScheduler):
    only_policy = "sjf"
