"""pybatsim entry: Duplex: the better of min-min and max-min per batch (Sánchez Sousa 2023, §3.5).

    pybatsim schedulers/heteroDuplex.py            # against batsim or coburst sim, heterogeneous platform
    pybatsim schedulers/heteroDuplex.py -o '{"mapping": "deferred"}'

Needs a heterogeneous platform (``coburst platform hetero``: hosts with node, core, speed
properties).  Parameters as options; see coburst/policies/hetero/ and coburst/adapter/hetero.py.
"""

from coburst.adapter.hetero import HeteroScheduler


class HeteroDuplex(HeteroScheduler):
    only_policy = "duplex"
