"""pybatsim entry: Max-min (Sánchez Sousa 2023, §3.4).

    pybatsim schedulers/heteroMaxMin.py            # against batsim or coburst sim, heterogeneous platform
    pybatsim schedulers/heteroMaxMin.py -o '{"mapping": "deferred"}'

Needs a heterogeneous platform (``coburst platform hetero``: hosts with node, core, speed
properties).  Parameters as options; see coburst/policies/hetero/ and coburst/adapter/hetero.py.
"""

from coburst.adapter.hetero import HeteroScheduler


class HeteroMaxMin(HeteroScheduler):
    only_policy = "max-min"
