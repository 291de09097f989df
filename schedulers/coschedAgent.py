"""pybatsim entry: a trained agent as the scheduler (node-sharing platforms).

    pybatsim schedulers/coschedAgent.py -o '{"agent": "mypkg.mod:agent", "actions": "placement"}'
    coburst run schedulers/coschedAgent.py -o '{"agent": "mypkg.mod:agent", "actions": "partner", "partners": 4}' \
        -p PLATFORM -w WORKLOAD

The agent (an object with ``act(observation, mask) -> int``, or such a callable) is asked at
every decision point where a job of the window can start, with the observation and mask
``coburst/BatsimExact-v0`` gives there on the same platform (:mod:`coburst.gym.scheduler`),
until it chooses *wait*.  ``agent``: its import path ``"package.module:attribute"``;
``actions`` (``"job"``, ``"placement"``, ``"partner"``), ``window``, ``features``,
``observation``, ``horizons``, ``time_scale``, ``modes``, ``partners``, ``partner_order``,
``heatmap``: the environment's options of the same names, as the agent was trained with.
Other options: the node-sharing adapter's (trace, decision_log).  Needs a node-sharing
platform (coburst platform cosched).
"""

from coburst.gym.scheduler import CoschedTrainedAgentScheduler


class CoschedAgent(CoschedTrainedAgentScheduler):
    pass
