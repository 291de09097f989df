"""pybatsim entry: FCS, the fastest combination first (Kuchumov & Korkhov 2021, §4.2, Listing 1),
on a node-sharing cluster; options heatmap, weights, node_limit.

    pybatsim schedulers/coschedFCS.py        # against batsim or coburst sim, node-sharing platform

Parameters as options (-o '{"heatmap": "aris-nas", "weights": "nodes"}'); see
coburst/policies/cosched/fcs.py.
"""

from coburst.adapter.cosched import CoschedScheduler


class CoschedFCS(CoschedScheduler):
    only_policy = "fcs"
