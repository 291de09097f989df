"""Gymnasium environments on coburst's Batsim-exact engine.

Importing this package registers:

``coburst/BatsimExact-v0``
    :class:`~coburst.gym.env.BatsimExactEnv`: event-driven scheduling, one step per decision
    point of the engine, ``Discrete`` actions with a mask (a job of the window; with
    ``actions=``, also its placement mode or co-run partner on node-sharing platforms, its
    host class on heterogeneous clusters), Dict observations (``features="basic"`` or
    ``"extended"``: :mod:`coburst.gym.observe`), rewards of :mod:`coburst.gym.rewards`;
``coburst/BatsimExactFlat-v0``
    the same with ``observation="flat"`` (one ``Box``);
``coburst/Elastic-v0``
    :class:`~coburst.gym.elastic.ElasticEnv`: jobs that change size (the simulator's elastic
    mode), one step per decision inside a scheduler message: start a waiting job on a size
    bucket, resize a job at its scheduling point, or end the message; ``Dict`` observations;
``coburst/ElasticFlat-v0``
    the same with ``observation="flat"``;
``coburst/RLScheduler-v0``
    :class:`~coburst.gym.rlsched.RLSchedulerEnv`: RLScheduler's job-picking environment
    (its own event loop, not the Batsim-exact engine), decision for decision.

::

    import gymnasium, coburst.gym
    env = gymnasium.make("coburst/BatsimExact-v0", workload="workloads/kth_sp2_delay_5000.json",
                         platform="platforms/kth_sp2.xml")

(``gymnasium.make("coburst.gym:coburst/BatsimExact-v0", ...)`` imports it itself.)
:class:`~coburst.gym.expert.PolicyExpert` plays a built-in policy's decisions as actions,
:class:`~coburst.gym.elastic_expert.ElasticExpert` an elastic policy's.
"""

from __future__ import annotations

import gymnasium

from coburst.gym.elastic import CLUSTER_FEATURES as ELASTIC_CLUSTER_FEATURES
from coburst.gym.elastic import JOB_FEATURES as ELASTIC_JOB_FEATURES
from coburst.gym.elastic import POINT_FEATURES as ELASTIC_POINT_FEATURES
from coburst.gym.elastic import ElasticEnv
from coburst.gym.elastic_expert import ElasticExpert
from coburst.gym.env import ACTIONS, PLACEMENT_MODES, BatsimExactEnv, InvalidAction
from coburst.gym.expert import CONFORMING, ExpertMismatch, PolicyExpert
from coburst.gym.hetero import CLASS_FEATURES
from coburst.gym.observe import (CLUSTER_FEATURES, CORUN_FEATURES, EXTENDED_JOB_FEATURES, JOB_FEATURES,
                                 PARTNER_FEATURES, PROFILE_FEATURES)
from coburst.gym.rewards import (REWARDS, BaselineGap, BoundedSlowdown, Energy, Makespan, Reward, Utilisation,
                                 WaitingTime, WeightedSum)
from coburst.gym.rlsched import RLSchedulerEnv

__all__ = ["BatsimExactEnv", "InvalidAction", "PolicyExpert", "ExpertMismatch", "CONFORMING", "Reward",
           "WaitingTime", "BoundedSlowdown", "Utilisation", "Makespan", "Energy", "BaselineGap", "WeightedSum",
           "REWARDS", "JOB_FEATURES", "EXTENDED_JOB_FEATURES", "CLUSTER_FEATURES", "PROFILE_FEATURES",
           "CORUN_FEATURES", "PARTNER_FEATURES", "CLASS_FEATURES", "ACTIONS", "PLACEMENT_MODES", "ENV_IDS", "RLSchedulerEnv", "RLSCHEDULER_ID",
           "ElasticEnv", "ElasticExpert", "ELASTIC_IDS", "ELASTIC_JOB_FEATURES", "ELASTIC_POINT_FEATURES",
           "ELASTIC_CLUSTER_FEATURES"]

#: the ids of the environments on the Batsim-exact engine
ENV_IDS = ("coburst/BatsimExact-v0", "coburst/BatsimExactFlat-v0")
#: the id of the RLScheduler-compatible environment (:mod:`coburst.gym.rlsched`)
RLSCHEDULER_ID = "coburst/RLScheduler-v0"
#: the ids of the environments of jobs that change size (:mod:`coburst.gym.elastic`)
ELASTIC_IDS = ("coburst/Elastic-v0", "coburst/ElasticFlat-v0")

if ENV_IDS[0] not in gymnasium.registry:
    gymnasium.register(id=ENV_IDS[0], entry_point="coburst.gym.env:BatsimExactEnv", disable_env_checker=True)
if ENV_IDS[1] not in gymnasium.registry:
    gymnasium.register(id=ENV_IDS[1], entry_point="coburst.gym.env:BatsimExactEnv",
                       kwargs={"observation": "flat"}, disable_env_checker=True)
if RLSCHEDULER_ID not in gymnasium.registry:
    gymnasium.register(id=RLSCHEDULER_ID, entry_point="coburst.gym.rlsched:RLSchedulerEnv", disable_env_checker=True)
if ELASTIC_IDS[0] not in gymnasium.registry:
    gymnasium.register(id=ELASTIC_IDS[0], entry_point="coburst.gym.elastic:ElasticEnv", disable_env_checker=True)
if ELASTIC_IDS[1] not in gymnasium.registry:
    gymnasium.register(id=ELASTIC_IDS[1], entry_point="coburst.gym.elastic:ElasticEnv",
                       kwargs={"observation": "flat"}, disable_env_checker=True)
