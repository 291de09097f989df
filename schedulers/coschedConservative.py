"""pybatsim entry: Conservative backfilling, compact (Kellari 2025, §5.1.3).

    pybatsim schedulers/coschedConservative.py        # against batsim or coburst sim, node-sharing platform

Parameters as options (-o '{"backfill_depth": 100}'); see coburst/policies/cosched/.
"""

from coburst.adapter.cosched import CoschedScheduler


class CoschedConservative(CoschedScheduler):
    only_policy = "conservative"
