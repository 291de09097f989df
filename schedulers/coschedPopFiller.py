"""pybatsim entry: Pop-Filler (Kellari 2025, §5.2.7.2); option heatmap (default aris-nas).

    pybatsim schedulers/coschedPopFiller.py        # against batsim or coburst sim, node-sharing platform

Parameters as options (-o '{"backfill_depth": 100}'); see coburst/policies/cosched/.
"""

from coburst.adapter.cosched import CoschedScheduler


class CoschedPopFiller(CoschedScheduler):
    only_policy = "pop-filler"
