"""pybatsim entry: EASY Co-schedule (Kellari 2025, §5.2.1).

    pybatsim schedulers/coschedEasyCo.py        # against batsim or coburst sim, node-sharing platform

Parameters as options (-o '{"backfill_depth": 100}'); see coburst/policies/cosched/.
"""

from coburst.adapter.cosched import CoschedScheduler


class CoschedEasyCo(CoschedScheduler):
    only_policy = "easy-co"
