"""pybatsim entry: Shortest Job First Co-schedule (Kellari 2025, §5.2.2).

    pybatsim schedulers/coschedSjfCo.py        # against batsim or coburst sim, node-sharing platform

Parameters as options (-o '{"backfill_depth": 100}'); see coburst/policies/cosched/.
"""

from coburst.adapter.cosched import CoschedScheduler


class CoschedSjfCo(CoschedScheduler):
    only_policy = "sjf-co"
