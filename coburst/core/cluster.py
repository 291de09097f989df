"""The machines a scheduler manages: compute nodes and burst-buffer (BB) nodes.

A :class:`Cluster` is built from Batsim resource descriptions (``{"id", "name",
"properties"}`` dicts, as pybatsim exposes them in ``bs.machines``) or directly in tests
(:meth:`Cluster.build`, :meth:`Cluster.dragonfly`).

Conventions (notes/conventions.md):

* compute nodes are the resources Batsim reports as compute resources;
* BB nodes are storage resources with a ``bb_capacity`` property (bytes); every other
  storage resource (the PFS) is ignored;
* topology: ``group``, ``chassis``, ``router`` integer properties on every cluster host.

Internally nodes are addressed by **index** (0..n-1).  Compute nodes are indexed in
*topology order* (group, chassis, router, host number), so that a contiguous index range
is a set of topologically close nodes; BB nodes likewise.  Resource **ids** (Batsim's
numbers) appear only at the boundary (:attr:`compute_ids`, :attr:`bb_ids`).

BB distance (Kopański 2020, §2.2): 0 = same chassis, 1 = same group, 2 = anywhere else
(or unknown topology).  Each compute node has its BB nodes listed nearest first, ties
broken by BB index (:attr:`bb_preference`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from coburst.errors import InputError

__all__ = ["Cluster", "Node", "SAME_CHASSIS", "SAME_GROUP", "ELSEWHERE", "parse_dragonfly"]

SAME_CHASSIS = 0
SAME_GROUP = 1
ELSEWHERE = 2

_DIGITS = re.compile(r"(\d+)")


def _natural_key(name: str) -> tuple:
    """Sort key that orders ``node_2`` before ``node_10``."""
    return tuple(int(p) if p.isdigit() else p for p in _DIGITS.split(name))


def _host_number(name: str) -> int | None:
    m = re.search(r"(\d+)\D*$", name)
    return int(m.group(1)) if m else None


def parse_dragonfly(spec: str | Sequence[int]) -> tuple[int, int, int, int]:
    """Parse a SimGrid dragonfly ``topo_parameters`` string (``"3,1;4,1;3,1;3"``) or a
    4-sequence ``(groups, chassis_per_group, routers_per_chassis, nodes_per_router)``."""
    if isinstance(spec, str):
        try:
            parts = [p.split(",")[0] for p in spec.split(";")]
            values = tuple(int(p) for p in parts)
        except ValueError:
            values = ()
    else:
        try:
            values = tuple(int(v) for v in spec)
        except (TypeError, ValueError):
            values = ()
    if len(values) != 4 or min(values) < 1:
        raise InputError("dragonfly topology", None,
                         f"expected 'G,_;C,_;R,_;N' or [G, C, R, N] with positive integers, got {spec!r}")
    return values  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class Node:
    """One host as the scheduler sees it."""

    id: int
    name: str
    group: int | None = None
    chassis: int | None = None
    router: int | None = None
    bb_capacity: int = 0  # bytes; > 0 only for BB nodes

    def sort_key(self) -> tuple:
        topo = tuple(-1 if v is None else v for v in (self.group, self.chassis, self.router))
        return topo + (_natural_key(self.name), self.id)


def _int_prop(props: Mapping[str, Any], key: str, where: str) -> int | None:
    if key not in props:
        return None
    try:
        value = int(str(props[key]).strip())
    except ValueError:
        raise InputError("platform", where, f"property {key!r} must be an integer, got {props[key]!r}") from None
    if value < 0:
        raise InputError("platform", where, f"property {key!r} must be >= 0, got {value}")
    return value


class Cluster:
    """Compute and BB nodes of a platform, with BB placement preferences.

    Attributes (read-only by convention):

    ``compute`` / ``bb``
        tuples of :class:`Node`, in index order (topology order).
    ``compute_ids`` / ``bb_ids``
        numpy int64 arrays: index -> Batsim resource id.
    ``bb_capacity``
        numpy int64 array: BB index -> capacity in bytes.
    ``bb_distance``
        numpy int8 array ``(n_compute, n_bb)`` of distance classes.
    ``bb_preference``
        tuple per compute index of BB indices, nearest first, ties by BB index.
    """

    def __init__(self, compute: Iterable[Node], bb: Iterable[Node] = ()):
        compute = sorted(compute, key=Node.sort_key)
        bb = sorted(bb, key=Node.sort_key)
        ids = [n.id for n in compute] + [n.id for n in bb]
        if len(set(ids)) != len(ids):
            raise InputError("platform", None, "resource ids must be unique")
        if not compute:
            raise InputError("platform", None, "no compute resource")
        for n in bb:
            if n.bb_capacity <= 0:
                raise InputError("platform", f"host {n.name!r}", "a burst-buffer node needs bb_capacity > 0")
        self.compute: tuple[Node, ...] = tuple(compute)
        self.bb: tuple[Node, ...] = tuple(bb)
        self.n_compute = len(compute)
        self.n_bb = len(bb)
        self.compute_ids = np.array([n.id for n in compute], dtype=np.int64)
        self.bb_ids = np.array([n.id for n in bb], dtype=np.int64)
        self.bb_capacity = np.array([n.bb_capacity for n in bb], dtype=np.int64)
        self.total_bb_capacity = int(self.bb_capacity.sum())
        self.max_bb_capacity = int(self.bb_capacity.max()) if self.n_bb else 0
        self._compute_index = {n.id: i for i, n in enumerate(compute)}
        self._bb_index = {n.id: i for i, n in enumerate(bb)}

        self.bb_distance = dist = self._distances(compute, bb)
        # nearest first, ties by BB index
        order = np.argsort(dist.astype(np.int64) * max(self.n_bb, 1) + np.arange(self.n_bb), axis=1)
        prefs: dict[bytes, tuple[int, ...]] = {}
        rows = []
        for row in order:  # one tuple per distinct row (per chassis on a dragonfly)
            key = row.tobytes()
            pref = prefs.get(key)
            if pref is None:
                pref = prefs[key] = tuple(row.tolist())
            rows.append(pref)
        self.bb_preference: tuple[tuple[int, ...], ...] = tuple(rows)

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_resources(
        cls,
        compute: Iterable[Mapping[str, Any]],
        storage: Iterable[Mapping[str, Any]] = (),
        *,
        default_bb_capacity: int | None = None,
        dragonfly: str | Sequence[int] | None = None,
    ) -> "Cluster":
        """Build from Batsim resource dicts (``id``, ``name``, ``properties``).

        ``compute``: the compute resources; ``storage``: the storage resources.  A storage
        resource is a BB node when it has a ``bb_capacity`` property, or when
        ``default_bb_capacity`` is given and it is not named ``pfs`` (the thesis' command-line
        style, ``-r node_0,node_9,...:storage``).  ``dragonfly`` (SimGrid ``topo_parameters``)
        derives ``group``/``chassis``/``router`` from the host number in the name for hosts
        lacking these properties.
        """
        topo = parse_dragonfly(dragonfly) if dragonfly is not None else None
        compute, storage = list(compute), list(storage)
        # the linear dragonfly (coburst platform dragonfly, <cluster> form): hosts without
        # properties of their own; the root zone's say the topology, the BB capacity and the PFS
        zone: Mapping[str, Any] = {}
        for res in compute + storage:
            zp = res.get("zone_properties") if isinstance(res, Mapping) else None
            if isinstance(zp, Mapping) and zp.get("coburst_platform") == "dragonfly":
                zone = zp
                break
        if topo is None and zone.get("topo_parameters"):
            topo = parse_dragonfly(str(zone["topo_parameters"]))
        zone_cap = _int_prop(zone, "bb_capacity", "zone property") if zone else None
        pfs_name = str(zone.get("pfs", "pfs"))

        def node(res: Mapping[str, Any], capacity: int) -> Node:
            try:
                rid = int(res["id"])
                name = str(res.get("name", rid))
            except (KeyError, TypeError, ValueError):
                raise InputError("platform", None, f"malformed resource description {res!r}") from None
            props = res.get("properties") or {}
            where = f"host {name!r}"
            g, c, r = (_int_prop(props, k, where) for k in ("group", "chassis", "router"))
            if topo is not None and (g is None or c is None or r is None):
                num = _host_number(name)
                if num is not None:
                    _, cpg, rpc, npr = topo
                    router = num // npr
                    chassis = router // rpc
                    g, c, r = chassis // cpg, chassis, router
            return Node(rid, name, g, c, r, capacity)

        compute_nodes = [node(res, 0) for res in compute]
        bb_nodes = []
        for res in storage:
            props = res.get("properties") or {}
            name = str(res.get("name", res.get("id")))
            cap = _int_prop(props, "bb_capacity", f"host {name!r}")
            if cap is None and zone_cap is not None and name != pfs_name:
                cap = zone_cap
            if cap is None and default_bb_capacity is not None and name != "pfs":
                cap = int(default_bb_capacity)
            if cap:
                bb_nodes.append(node(res, cap))
        return cls(compute_nodes, bb_nodes)

    @classmethod
    def build(
        cls,
        n_compute: int,
        bb_capacities: Sequence[int] = (),
        *,
        compute_topology: Sequence[tuple[int, int, int]] | None = None,
        bb_topology: Sequence[tuple[int, int, int]] | None = None,
    ) -> "Cluster":
        """Small cluster for tests: compute ids ``0..n_compute-1`` named ``c<i>``, BB ids
        following, named ``bb<j>``; optional ``(group, chassis, router)`` per node."""
        compute = [Node(i, f"c{i}", *(compute_topology[i] if compute_topology else (None,) * 3))
                   for i in range(n_compute)]
        bb = [Node(n_compute + j, f"bb{j}", *(bb_topology[j] if bb_topology else (None,) * 3),
                   bb_capacity=int(cap)) for j, cap in enumerate(bb_capacities)]
        return cls(compute, bb)

    @classmethod
    def dragonfly(
        cls,
        groups: int = 3,
        chassis: int = 4,
        routers: int = 3,
        nodes_per_router: int = 3,
        bb_capacity: int = 40_000_000_000,
    ) -> "Cluster":
        """The thesis platform (Kopański 2020, §2.2): hosts ``node_0..node_{n-1}`` of a
        SimGrid dragonfly, the first host of every chassis a BB node, resource ids numbered
        as Batsim 4 does (notes/batsim42-digest.md §10): compute hosts ``0..C-1`` in
        lexicographic name order, then storage hosts ``C..`` in lexicographic name order."""
        per_chassis = routers * nodes_per_router
        n = groups * chassis * per_chassis
        pos = {}
        for i in range(n):
            router = i // nodes_per_router
            ch = router // routers
            pos[f"node_{i}"] = (ch // chassis, ch, router, i % per_chassis == 0)
        compute_names = sorted(name for name, p in pos.items() if not p[3])
        bb_names = sorted(name for name, p in pos.items() if p[3])
        compute = [Node(k, name, *pos[name][:3]) for k, name in enumerate(compute_names)]
        bb = [Node(len(compute_names) + k, name, *pos[name][:3], bb_capacity)
              for k, name in enumerate(bb_names)]
        return cls(compute, bb)

    # ------------------------------------------------------------------ queries
    @staticmethod
    def _distances(compute: list[Node], bb: list[Node]) -> np.ndarray:
        """:meth:`_distance` of every (compute, BB) pair, as arrays (10,000 hosts: milliseconds)."""
        def column(nodes: list[Node], key: str) -> tuple[np.ndarray, np.ndarray]:
            values = [getattr(n, key) for n in nodes]
            known = np.array([v is not None for v in values], dtype=bool)
            return np.array([v if v is not None else 0 for v in values], dtype=np.int64), known

        cg, cg_known = column(compute, "group")
        sg, sg_known = column(bb, "group")
        cc, cc_known = column(compute, "chassis")
        sc, sc_known = column(bb, "chassis")
        same_group = (cg[:, None] == sg[None, :]) & cg_known[:, None] & sg_known[None, :]
        same_chassis = same_group & (cc[:, None] == sc[None, :]) & cc_known[:, None] & sc_known[None, :]
        dist = np.full((len(compute), len(bb)), ELSEWHERE, dtype=np.int8)
        dist[same_group] = SAME_GROUP
        dist[same_chassis] = SAME_CHASSIS
        return dist

    @staticmethod
    def _distance(c: Node, s: Node) -> int:
        if c.group is None or s.group is None or c.group != s.group:
            return ELSEWHERE
        if c.chassis is not None and c.chassis == s.chassis:
            return SAME_CHASSIS
        return SAME_GROUP

    def distance(self, compute_id: int, bb_id: int) -> int:
        """Distance class between a compute node and a BB node (by resource id)."""
        return int(self.bb_distance[self._compute_index[compute_id], self._bb_index[bb_id]])

    def compute_index(self, rid: int) -> int:
        return self._compute_index[rid]

    def bb_index(self, rid: int) -> int:
        return self._bb_index[rid]

    def is_compute(self, rid: int) -> bool:
        return rid in self._compute_index

    def never_fits(self, res: int, bb: int) -> str | None:
        """Why a job of ``res`` nodes with ``bb`` bytes per node can never run here, or None.

        Same three tests as the thesis' scheduler: too wide; per-node BB request larger than
        any single BB node; total request not packable in whole per-node pieces.
        """
        if res < 1:
            return f"requests {res} compute nodes"
        if res > self.n_compute:
            return f"requests {res} compute nodes, the platform has {self.n_compute}"
        if bb < 0:
            return f"negative burst-buffer request {bb}"
        if bb > 0:
            if self.n_bb == 0:
                return "requests burst buffers, the platform has no burst-buffer node"
            if bb > self.max_bb_capacity:
                return f"burst-buffer request {bb} B per node exceeds the largest BB node ({self.max_bb_capacity} B)"
            slots = int((self.bb_capacity // bb).sum())
            if slots < res:
                return f"burst-buffer request {bb} B x {res} nodes cannot be packed ({slots} node-slots)"
        return None

    def __repr__(self) -> str:
        return f"Cluster({self.n_compute} compute, {self.n_bb} BB, {self.total_bb_capacity} B)"
