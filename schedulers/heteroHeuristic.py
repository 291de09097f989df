"""pybatsim entry: IRMaSim's Heuristic: job selection x node selection (Sánchez Sousa 2023, Table 1).

    pybatsim schedulers/heteroHeuristic.py            # against batsim or coburst sim, heterogeneous platform
    pybatsim schedulers/heteroHeuristic.py -o '{"job_selection": "shortest", "node_selection": "high_gflops", "seed": 0}'

Needs a heterogeneous platform (``coburst platform hetero``: hosts with node, core, speed
properties).  Parameters as options; see coburst/policies/hetero/ and coburst/adapter/hetero.py.
"""

from coburst.adapter.hetero import HeteroScheduler


class HeteroHeuristic(HeteroScheduler):
    only_policy = "heuristic"
