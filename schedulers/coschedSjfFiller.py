"""pybatsim entry: SJF-Filler (Kellari 2025, §5.2.7.1).

    pybatsim schedulers/coschedSjfFiller.py        # against batsim or coburst sim, node-sharing platform

Parameters as options (-o '{"backfill_depth": 100}'); see coburst/policies/cosched/.
"""

from coburst.adapter.cosched import CoschedScheduler


class CoschedSjfFiller(CoschedScheduler):
    only_policy = "sjf-filler"
