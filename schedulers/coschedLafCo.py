"""pybatsim entry: Largest Area First Co-schedule (Kellari 2025, §5.2.4).

    pybatsim schedulers/coschedLafCo.py        # against batsim or coburst sim, node-sharing platform

Parameters as options (-o '{"backfill_depth": 100}'); see coburst/policies/cosched/.
"""

from coburst.adapter.cosched import CoschedScheduler


class CoschedLafCo(CoschedScheduler):
    only_policy = "laf-co"
