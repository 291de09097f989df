"""pybatsim entry: window-based combinatorial scheduling (Kopański 2020, Alg. 7), default
``window-1``.

    pybatsim schedulers/coburstWindow.py -o '{"policy": "window-1", "window": 16, "max_age": 5}'

Parameters ``depth``, ``window``, ``max_age``, ``beta``, ``budget`` (search steps per decision)
(coburst/policies/window.py).
Other options: bb_capacity, dragonfly, trace, io_aware, decision_log
(coburst/adapter/scheduler.py).
"""

from coburst.adapter import CoburstScheduler


class CoburstWindow(CoburstScheduler):
    default_policy = "window-1"
