"""pybatsim entry: Longest Job First Co-schedule (Kellari 2025, §5.2.3).

    pybatsim schedulers/coschedLjfCo.py        # against batsim or coburst sim, node-sharing platform

Parameters as options (-o '{"backfill_depth": 100}'); see coburst/policies/cosched/.
"""

from coburst.adapter.cosched import CoschedScheduler


class CoschedLjfCo(CoschedScheduler):
    only_policy = "ljf-co"
