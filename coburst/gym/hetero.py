"""Heterogeneous clusters (``coburst platform hetero``) in :class:`~coburst.gym.env.BatsimExactEnv`.

The platform's nodes (a node: cores of one speed; a job runs on ``res`` cores of one node,
:mod:`coburst.core.hetero`) fall into **host classes**: the nodes of one ``type`` property
(a node without type: the nodes of its speed), in the order of their first node.
:class:`HeteroBackend` is the backend of the heterogeneous adapter
(:class:`~coburst.adapter.hetero.HeteroScheduler`, driven by the agent): a job fits now when
some node has ``res`` idle cores (given the running jobs and those started in this decision);
it starts on the idle cores of lowest id of a node (as the heterogeneous policies take
them).  Which node: with ``actions="job"``, the fastest node with enough idle cores (the
earliest completion, ties to the lower node index); with ``actions="class"``, the fastest
such node of the class the action names (ties likewise).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any, Sequence

import numpy as np

from coburst.core.hetero import CoreAlloc, HeteroDecisions

__all__ = ["HostClasses", "HeteroBackend", "CLASS_FEATURES"]

#: the columns of ``observation["classes"]`` (one row per host class)
CLASS_FEATURES = ("free_cores", "speed", "power", "widest_free")


def _class_key(node_type: str, speed: float) -> str:
    return node_type or f"{speed:g} flop/s"


class HostClasses:
    """The host classes of a heterogeneous platform, read from its file: ``names`` (one per
    class) and, per node index, its class."""

    def __init__(self, names: Sequence[str], node_class: Sequence[int]):
        self.names = tuple(names)
        self.node_class = np.asarray(node_class, dtype=np.int64)

    @classmethod
    def from_platform(cls, path: str) -> "HostClasses":
        nodes: dict[int, tuple[str, float]] = {}
        for host in ET.parse(path).getroot().iter("host"):
            props = {p.get("id"): p.get("value") for p in host.findall("prop")}
            if props.get("role", "compute_node") != "compute_node" or "node" not in props:
                continue
            nodes.setdefault(int(props["node"]), (props.get("type", ""), float(props.get("speed", 0) or 0)))
        names: list[str] = []
        node_class = []
        for node in sorted(nodes):
            key = _class_key(*nodes[node])
            if key not in names:
                names.append(key)
            node_class.append(names.index(key))
        return cls(names, node_class)

    @classmethod
    def from_cluster(cls, cluster: Any) -> "HostClasses":
        """The same classes from the adapter's :class:`~coburst.core.hetero.HeteroCluster` (the
        nodes' ``type`` and ``speed`` properties as Batsim hands them to a scheduler)."""
        names: list[str] = []
        node_class = []
        for node in cluster.nodes:
            key = _class_key(node.type, float(node.speed))
            if key not in names:
                names.append(key)
            node_class.append(names.index(key))
        return cls(names, node_class)

    def __len__(self) -> int:
        return len(self.names)


class HeteroBackend:
    """What "fits now" and "start it there" mean on a heterogeneous cluster (module doc)."""

    family = "hetero"
    decisions = HeteroDecisions

    def __init__(self, state: Any, cluster: Any, classes: HostClasses):
        self.state = state
        self.cluster = cluster
        self.classes = classes
        self.idle = [list(ids) for ids in state.free]  # idle core ids per node, ascending
        speed = cluster.speed
        # nodes fastest first, ties to the lower index; per class likewise
        self.order = sorted(range(len(cluster.nodes)), key=lambda n: (-speed[n], n))
        self.by_class = [[n for n in self.order if classes.node_class[n] == c] for c in range(len(classes))]
        self.total_units = sum(node.cores for node in cluster.nodes)
        self.total_bb = 0

    @staticmethod
    def units(job: Any) -> int:
        return job.res

    @staticmethod
    def bb_bytes(job: Any) -> int:
        return 0

    def size(self, job: Any) -> float:
        return job.res / self.cluster.max_cores

    def bb(self, job: Any) -> float:
        return 0.0

    def _node(self, job: Any, nodes: Sequence[int]) -> int | None:
        idle = self.idle
        for n in nodes:
            if len(idle[n]) >= job.res:
                return n
        return None

    def fits(self, job: Any) -> bool:
        return self._node(job, self.order) is not None

    def fits_class(self, job: Any, c: int) -> bool:
        return self._node(job, self.by_class[c]) is not None

    def any_fits(self, jobs: Sequence[Any]) -> bool:
        widest = max((len(ids) for ids in self.idle), default=0)
        return any(job.res <= widest for job in jobs)

    def _take(self, job: Any, node: int) -> CoreAlloc:
        idle = self.idle[node]
        alloc = CoreAlloc(node, tuple(idle[:job.res]))
        del idle[:job.res]
        return alloc

    def start(self, job: Any, alloc: Any = None) -> Any:
        if alloc is None:
            node = self._node(job, self.order)
            if node is None:
                raise RuntimeError(f"no node for job {job.id}, which fits now")
            return self._take(job, node)
        taken = set(alloc.ids)
        self.idle[alloc.node] = [i for i in self.idle[alloc.node] if i not in taken]
        return alloc

    fits_choice = fits_class

    def choice_of(self, job: Any, alloc: Any, n_choices: int) -> int:
        """The class whose action puts the job on ``alloc`` (ValueError: none does)."""
        c = int(self.classes.node_class[alloc.node])
        node = self._node(job, self.by_class[c])
        if node != alloc.node or tuple(self.idle[node][:job.res]) != tuple(alloc.ids):
            raise ValueError(f"no class action puts job {job.id} on node {alloc.node} (class "
                             f"{self.classes.names[c]!r}: its first idle node is {node})")
        return c

    def start_choice(self, job: Any, c: int) -> Any:
        return self.start_class(job, c)

    def start_class(self, job: Any, c: int) -> Any:
        node = self._node(job, self.by_class[c])
        if node is None:
            raise RuntimeError(f"no node of class {self.classes.names[c]!r} for job {job.id}, which fits there")
        return self._take(job, node)

    def class_features(self) -> np.ndarray:
        """One row per class: idle cores share, fastest speed / the platform's fastest, power
        at full load per core / the platform's highest, widest idle node / the widest node."""
        cl = self.cluster
        out = np.zeros((len(self.classes), len(CLASS_FEATURES)), dtype=np.float32)
        top_speed = float(cl.speed.max())
        per_core = [node.power / node.cores for node in cl.nodes]
        top_power = max(per_core) or 1.0
        for c, nodes in enumerate(self.by_class):
            if not nodes:
                continue
            cores = sum(cl.nodes[n].cores for n in nodes)
            idle = [len(self.idle[n]) for n in nodes]
            out[c] = (sum(idle) / cores, max(cl.speed[n] for n in nodes) / top_speed,
                      max(per_core[n] for n in nodes) / top_power, max(idle) / cl.max_cores)
        return out
