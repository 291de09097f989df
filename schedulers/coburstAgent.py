"""pybatsim entry: a trained agent as the scheduler (burst-buffer platforms; node-sharing
platforms: ``coschedAgent.py``, heterogeneous clusters: ``heteroAgent.py``).

    pybatsim schedulers/coburstAgent.py -o '{"agent": "mypkg.mod:agent"}'
    pybatsim schedulers/coburstAgent.py -o '{"agent": "mypkg.mod:agent", "window": 8, "features": "extended"}'
    coburst run schedulers/coburstAgent.py -o '{"agent": "mypkg.mod:agent"}' -p PLATFORM -w WORKLOAD

The agent (an object with ``act(observation, mask) -> int``, or such a callable) is asked at
every decision point where a job of the window can start, with the observation and mask
``coburst/BatsimExact-v0`` gives there (:mod:`coburst.gym.scheduler`), until it chooses
*wait*.  ``agent``: its import path ``"package.module:attribute"`` (the module must be
importable by the scheduler's process); ``window``, ``features``, ``horizons``,
``time_scale``, ``actions`` (``"job"`` only here): the environment's options of the same
names, as the agent was trained with.
Other options: the adapter's (bb_capacity, dragonfly, trace, io_aware, decision_log).
"""

from coburst.gym.scheduler import TrainedAgentScheduler


class CoburstAgent(TrainedAgentScheduler):
    pass
