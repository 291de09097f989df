"""IRMaSim modelV1 platforms (``platform.json``) -> :class:`coburst.platforms.hetero.HeteroPlatform`.

IRMaSim (github irmasim/IRMaSim; Sánchez Sousa 2023, §2.2.2) describes a platform in JSON
groups, merged from a library folder (``platforms.json``, ``node_types.json``,
``processor_types.json``) and the platform file (``Simulator._build_library``: the file's
entries override the library's)::

    {"platform":  {NAME: {"id": ..., "model_name": "modelV1",
                          "clusters": [{"id": ..., "nodes": [{"type": NODE_TYPE, "number": k}]}]}},
     "node":      {NODE_TYPE: {"processors": [{"type": PROC_TYPE, "number": p}],
                               "memory": {"type": "DDR4-2400", "capacity": 32}}},
     "processor": {PROC_TYPE: {"cores": c, "clock_rate": GHz, "dpflops_per_cycle": f,
                               "static_power": W, "dynamic_power": W, "min_power": fraction,
                               "b", "c", "da", "db", "dc", "dd": memory-contention model}}}

What coburst takes (``ModelBuilder.py``, ``Core.py``, ``Processor.py``, ``Node.py``)
    nodes in cluster order then node-list order, ``number`` copies each (default 1);
    processors in order, ``number`` copies each (default 1), ``cores`` cores each.  A core's
    speed = ``clock_rate x dpflops_per_cycle x 1e9`` flop/s (``Core.mops``, in Mops, x 1e6);
    its idle power = ``static_power / cores`` (``Core.static_power``), its dynamic power
    ``dynamic_power``, its off power ``min_power x`` idle (:mod:`coburst.platforms.hetero`,
    "Power").  ``memory.capacity`` becomes ``mem`` (GB), ``memory.type`` the ``mem_type``
    property; the cluster id the ``cluster`` property.  The memory-contention parameters
    (``b``, ``c``, ``da``..``dd``) are not modelled: coburst runs a task at its core's full
    speed, IRMaSim's speed-up of 1 (what it computes while the processor's requested memory
    bandwidth stays below ``c``: the example workloads request < 1 unit against 32000).
    Other keys (``uarch``, ``llc_size``, ``power``, ``id``, ``type``, network groups) are
    ignored.  Every problem is an :class:`InputError` naming the file, the JSON path and the
    problem.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from coburst.errors import InputError
from coburst.platforms.hetero import CoreModel, HeteroPlatform, NodeModel, _exact, validate
from coburst.validate import number, read_json

__all__ = ["convert", "load_library"]

_GROUPS = ("platform", "network", "node", "processor")
_LIBRARY_FILES = (("platform", "platforms.json"), ("network", "network_types.json"), ("node", "node_types.json"),
                  ("processor", "processor_types.json"))
_PROCESSOR_FIELDS = ("cores", "clock_rate", "dpflops_per_cycle", "static_power", "dynamic_power", "min_power")


def _obj(value: Any, source: str, where: str) -> dict:
    if not isinstance(value, dict):
        raise InputError(source, where, f"expected a JSON object, got {type(value).__name__}")
    return value


def _list(value: Any, source: str, where: str) -> list:
    if not isinstance(value, list) or not value:
        raise InputError(source, where, "expected a non-empty JSON list")
    return value


def load_library(platform_file: str | Path, library: str | Path | None = None) -> tuple[dict, dict[tuple, str]]:
    """The merged type library and, for each (group, key), the file that defined it."""
    types: dict[str, dict] = {g: {} for g in _GROUPS}
    origin: dict[tuple, str] = {}
    if library is not None:
        lib = Path(library)
        if not lib.is_dir():
            raise InputError("--library", str(lib), "not a folder (IRMaSim's platform library path)")
        for group, name in _LIBRARY_FILES:
            path = lib / name
            if path.is_file():
                doc = _obj(read_json(path, "IRMaSim library file"), str(path), "top level")
                for key, value in doc.items():
                    if key == "_doc":
                        continue
                    types[group][key] = value
                    origin[(group, key)] = str(path)
    source = str(platform_file)
    doc = _obj(read_json(platform_file, "IRMaSim platform file"), source, "top level")
    for group, entries in doc.items():
        if group not in _GROUPS:
            raise InputError(source, group, f"unknown group (IRMaSim platform files hold {', '.join(_GROUPS)})")
        for key, value in _obj(entries, source, group).items():
            types[group][key] = value
            origin[(group, key)] = source
    return types, origin


def _count(d: dict, key: str, source: str, where: str, default: int | None = None) -> int:
    if key not in d:
        if default is None:
            raise InputError(source, where, f"the field {key!r} is missing")
        return default
    return int(number(d[key], source, f"{where}.{key}", minimum=1, integer=True, maximum=1_000_000))


def convert(platform_file: str | Path, *, name: str | None = None, library: str | Path | None = None,
            **network: str) -> HeteroPlatform:
    """The IRMaSim platform ``name`` (default: the only one defined) as a coburst platform."""
    types, origin = load_library(platform_file, library)
    source = str(platform_file)
    platforms = types["platform"]
    if name is None:
        if len(platforms) != 1:
            listed = ", ".join(sorted(platforms)) or "none"
            raise InputError(source, "platform", f"defines {len(platforms)} platforms ({listed}); choose one with "
                                                 "--platform-name")
        name = next(iter(platforms))
    if name not in platforms:
        raise InputError(source, "platform", f"no platform named {name!r} (defined: "
                                             f"{', '.join(sorted(platforms)) or 'none'})")
    psrc = origin[("platform", name)]
    pwhere = f"platform.{name}"
    pdef = _obj(platforms[name], psrc, pwhere)
    model = pdef.get("model_name", "modelV1")
    if model != "modelV1":
        raise InputError(psrc, f"{pwhere}.model_name", f"only IRMaSim's modelV1 platforms are converted, got {model!r}")
    nodes: list[NodeModel] = []
    node_types: list[str] = []
    for ci, cluster in enumerate(_list(pdef.get("clusters"), psrc, f"{pwhere}.clusters")):
        cwhere = f"{pwhere}.clusters[{ci}]"
        cluster = _obj(cluster, psrc, cwhere)
        cid = str(cluster.get("id", f"cluster{ci}"))
        for ni, entry in enumerate(_list(cluster.get("nodes"), psrc, f"{cwhere}.nodes")):
            nwhere = f"{cwhere}.nodes[{ni}]"
            entry = _obj(entry, psrc, nwhere)
            ntype = entry.get("type")
            if not isinstance(ntype, str):
                raise InputError(psrc, f"{nwhere}.type", "expected the name of a node type")
            if ntype not in types["node"]:
                raise InputError(psrc, f"{nwhere}.type", f"unknown node type {ntype!r} (defined: "
                                                         f"{', '.join(sorted(types['node'])) or 'none'})")
            copies = _count(entry, "number", psrc, nwhere, default=1)
            node = _node(ntype, types, origin, cid)
            if ntype not in node_types:
                node_types.append(ntype)
            nodes.extend([node] * copies)
    plat = HeteroPlatform(nodes=tuple(nodes), preset=f"irmasim:{name}", seed=None,
                          description=f"IRMaSim modelV1 platform {name!r} from {Path(source).name}",
                          types=tuple(node_types), **network)
    validate(plat)
    return plat


def _node(ntype: str, types: dict, origin: dict, cluster: str) -> NodeModel:
    src = origin[("node", ntype)]
    where = f"node.{ntype}"
    ndef = _obj(types["node"][ntype], src, where)
    cores: list[CoreModel] = []
    for pi, pentry in enumerate(_list(ndef.get("processors"), src, f"{where}.processors")):
        pwhere = f"{where}.processors[{pi}]"
        pentry = _obj(pentry, src, pwhere)
        ptype = pentry.get("type")
        if not isinstance(ptype, str) or ptype not in types["processor"]:
            raise InputError(src, f"{pwhere}.type", f"unknown processor type {ptype!r} (defined: "
                                                    f"{', '.join(sorted(types['processor'])) or 'none'})")
        copies = _count(pentry, "number", src, pwhere, default=1)
        cores.extend(_processor_cores(ptype, types, origin) * copies)
    mem = mem_type = None
    if "memory" in ndef:
        memory = _obj(ndef["memory"], src, f"{where}.memory")
        if "capacity" in memory:
            mem = float(number(memory["capacity"], src, f"{where}.memory.capacity", minimum=0, maximum=1e15))
        if "type" in memory:
            mem_type = str(memory["type"])
    extra = [("cluster", cluster)] + ([("mem_type", mem_type)] if mem_type is not None else [])
    return NodeModel(type=ntype, cores=tuple(cores), mem=mem, extra=tuple(extra))


def _processor_cores(ptype: str, types: dict, origin: dict) -> list[CoreModel]:
    src = origin[("processor", ptype)]
    where = f"processor.{ptype}"
    pdef = _obj(types["processor"][ptype], src, where)
    for key in _PROCESSOR_FIELDS:
        if key not in pdef:
            raise InputError(src, where, f"the field {key!r} is missing (IRMaSim's modelV1 Core needs "
                                         f"{', '.join(_PROCESSOR_FIELDS)})")
    cores = _count(pdef, "cores", src, where)
    clock = number(pdef["clock_rate"], src, f"{where}.clock_rate", minimum=0, exclusive_minimum=True, maximum=1e6)
    fpc = number(pdef["dpflops_per_cycle"], src, f"{where}.dpflops_per_cycle", minimum=0, exclusive_minimum=True,
                 maximum=1e6)
    static = number(pdef["static_power"], src, f"{where}.static_power", minimum=0, maximum=1e15)
    dynamic = number(pdef["dynamic_power"], src, f"{where}.dynamic_power", minimum=0, maximum=1e15)
    min_power = number(pdef["min_power"], src, f"{where}.min_power", minimum=0, maximum=1e6)
    idle = float(static) / cores
    core = CoreModel(speed=_exact(clock, fpc, 1e9), idle=idle, dynamic=float(dynamic), off=float(min_power) * idle)
    return [core] * cores
