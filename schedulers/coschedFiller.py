"""pybatsim entry: Filler Co-Scheduler (ELiSE paper, Alg. 2; Kellari 2025, §5.2.6).

    pybatsim schedulers/coschedFiller.py        # against batsim or coburst sim, node-sharing platform

Parameters as options (-o '{"backfill_depth": 100}'); see coburst/policies/cosched/.
"""

from coburst.adapter.cosched import CoschedScheduler


class CoschedFiller(CoschedScheduler):
    only_policy = "filler"
