"""pybatsim entry: a trained agent as the scheduler (heterogeneous clusters).

    pybatsim schedulers/heteroAgent.py -o '{"agent": "mypkg.mod:agent", "actions": "class"}'
    coburst run schedulers/heteroAgent.py -o '{"agent": "mypkg.mod:agent", "actions": "class"}' -p PLATFORM -w WORKLOAD

The agent (an object with ``act(observation, mask) -> int``, or such a callable) is asked at
every decision point where a job of the window can start, with the observation and mask
``coburst/BatsimExact-v0`` gives there on the same platform (:mod:`coburst.gym.scheduler`;
the host classes are read from the resources' ``type`` and ``speed`` properties), until it
chooses *wait*.  ``agent``: its import path ``"package.module:attribute"``; ``actions``
(``"job"``, ``"class"``), ``window``, ``features``, ``observation``, ``horizons``,
``time_scale``: the environment's options of the same names, as the agent was trained with.
Other options: the heterogeneous adapter's (trace, decision_log).  Needs a heterogeneous
platform (coburst platform hetero).
"""

from coburst.gym.scheduler import HeteroTrainedAgentScheduler


class HeteroAgent(HeteroTrainedAgentScheduler):
    pass
