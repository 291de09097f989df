"""pybatsim entry: any heterogeneous-cluster mapping policy, chosen by options (default ``min-min``).

    pybatsim schedulers/heteroPolicy.py -o '{"policy": "heuristic", "job_selection": "shortest"}'

Policies (coburst/policies/hetero/): min-min, max-min, duplex, astar, heuristic (Sánchez Sousa
2023, Ch. 3-4; IRMaSim's job x node selection).  Needs a heterogeneous platform
(``coburst platform hetero``: hosts with node, core, speed properties).
"""

from coburst.adapter.hetero import HeteroScheduler


class HeteroPolicy(HeteroScheduler):
    default_policy = "min-min"
