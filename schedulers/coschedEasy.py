"""pybatsim entry: EASY backfilling, compact (Kellari 2025, §5.1.2).

    pybatsim schedulers/coschedEasy.py        # against batsim or coburst sim, node-sharing platform

Parameters as options (-o '{"backfill_depth": 100}'); see coburst/policies/cosched/.
"""

from coburst.adapter.cosched import CoschedScheduler


class CoschedEasy(CoschedScheduler):
    only_policy = "easy"
