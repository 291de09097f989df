"""pybatsim entry: any node-sharing (co-scheduling) policy, chosen by options (default ``easy-co``).

    pybatsim schedulers/coschedPolicy.py -o '{"policy": "popularity", "heatmap": "aris-nas"}'

Policies (coburst/policies/cosched/): fcfs, easy, conservative, sjf, ljf (compact);
easy-co, sjf-co, ljf-co, laf-co, popularity, filler, sjf-filler, pop-filler, pair-greedy, fcs
(spread, co-located).  Needs a node-sharing platform (coburst platform cosched).
"""

from coburst.adapter.cosched import CoschedScheduler


class CoschedPolicy(CoschedScheduler):
    default_policy = "easy-co"
