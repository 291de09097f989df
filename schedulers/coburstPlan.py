"""pybatsim entry: plan-based scheduling with simulated annealing (Kopański 2020, Alg. 8),
default ``plan-square-0``.

    pybatsim schedulers/coburstPlan.py -o '{"policy": "plan-cube-0", "seed": 3}'

Policies: ``plan-sum-D``, ``plan-square-D``, ``plan-cube-D``, ``plan-start-D``; parameters
``seed``, ``cooling_rate``, ``cooling_steps``, ``temperature_steps``, ``exhaustive``,
``time_cap`` (coburst/policies/plan.py).  Other options: bb_capacity, dragonfly, trace,
io_aware, decision_log (coburst/adapter/scheduler.py).
"""

from coburst.adapter import CoburstScheduler


class CoburstPlan(CoburstScheduler):
    default_policy = "plan-square-0"
