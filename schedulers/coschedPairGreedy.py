"""pybatsim entry: heatmap-greedy pairing (Kuchumov & Korkhov 2021, §4.2); option heatmap.

    pybatsim schedulers/coschedPairGreedy.py        # against batsim or coburst sim, node-sharing platform

Parameters as options (-o '{"backfill_depth": 100}'); see coburst/policies/cosched/.
"""

from coburst.adapter.cosched import CoschedScheduler


class CoschedPairGreedy(CoschedScheduler):
    only_policy = "pair-greedy"
