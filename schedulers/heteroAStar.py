"""pybatsim entry: A* with f = g + h and a pruning limit (Sánchez Sousa 2023, §3.6).

    pybatsim schedulers/heteroAStar.py            # against batsim or coburst sim, heterogeneous platform
    pybatsim schedulers/heteroAStar.py -o '{"max_vertices": 128, "mapping": "queue"}'

Needs a heterogeneous platform (``coburst platform hetero``: hosts with node, core, speed
properties).  Parameters as options; see coburst/policies/hetero/ and coburst/adapter/hetero.py.
"""

from coburst.adapter.hetero import HeteroScheduler


class HeteroAStar(HeteroScheduler):
    only_policy = "astar"
