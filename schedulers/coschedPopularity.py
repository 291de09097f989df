"""pybatsim entry: Popularity (Kellari 2025, §5.2.5); option heatmap (default aris-nas).

    pybatsim schedulers/coschedPopularity.py        # against batsim or coburst sim, node-sharing platform

Parameters as options (-o '{"backfill_depth": 100}'); see coburst/policies/cosched/.
"""

from coburst.adapter.cosched import CoschedScheduler


class CoschedPopularity(CoschedScheduler):
    only_policy = "popularity"
