"""pybatsim entry: Min-min (Sánchez Sousa 2023, §3.3).

    pybatsim schedulers/heteroMinMin.py            # against batsim or coburst sim, heterogeneous platform
    pybatsim schedulers/heteroMinMin.py -o '{"mapping": "deferred"}'

Needs a heterogeneous platform (``coburst platform hetero``: hosts with node, core, speed
properties).  Parameters as options; see coburst/policies/hetero/ and coburst/adapter/hetero.py.
"""

from coburst.adapter.hetero import HeteroScheduler


class HeteroMinMin(HeteroScheduler):
    only_policy = "min-min"
