"""Heterogeneous clusters: node types with their own core counts, speeds and power, as SimGrid XML.

Sánchez Sousa 2023 (IRMaSim heterogeneous-cluster thesis), §2.2.2 and §5.1: a cluster is a
list of nodes; a node is homogeneous (all its cores alike, §1) but nodes differ in core count
and speed.  IRMaSim's modelV1 (``Core.py``, ``Processor.py``) gives a core the speed
``clock_rate (GHz) x dpflops_per_cycle`` and the power figures ``static_power`` (per
processor, shared by its cores), ``dynamic_power`` (per busy core) and ``min_power`` (the
fraction of the static power an all-idle processor draws).

Resources (the shared heterogeneous format, ``/tmp/hetero-format.md``)
    **One SimGrid host = one core = one Batsim resource.**  Hosts are named
    ``n{node}_c{core}``, both indices zero-padded to the width of their largest value
    (``n03_c01``), so SimGrid's lexicographic host order -- Batsim's resource ids -- is
    node-major, core-minor: the cores of a node are contiguous ids.

Host properties (every core)
    ``role=compute_node``; ``node`` (0-based, platform order), ``core`` (0-based in its node),
    ``cores`` (the node's core count), ``type`` (node type id), ``speed`` (flop/s of this core
    at pstate 0, the host speed: Batsim does not send host speeds to the scheduler);
    ``mem`` (GB per node) and ``mem_bw`` (GB/s per node) when known; energy as Batsim 4.2
    reads it: ``wattage_per_state`` = ``idle:full`` and ``wattage_off``; the same figures as
    ``static_power`` (W, the idle draw of this core) and ``dynamic_power`` (W, added while it
    computes), so that a policy need not parse ``wattage_per_state``.

Power (decided here; IRMaSim's model is per processor, Batsim's per host)
    idle = processor ``static_power`` / its cores; full = idle + ``dynamic_power``; off =
    ``min_power`` x idle.  This is IRMaSim's draw exactly while the processor has a busy
    core (``Processor.update_power``: the static power of every core plus the dynamic power
    of the busy ones).  An *all-idle* processor draws ``min_power`` x static in IRMaSim but
    its cores' idle power here: Batsim has no processor-level state, so that IRMaSim figure
    is given as the *off* power (a scheduler that switches idle cores off gets it).  For
    single-core nodes (the presets of Tables 2-3) idle/full/off are IRMaSim's three figures.
    The master host draws nothing (``0:0``).

Presets (Sánchez Sousa 2023, §5.1.1 Tables 2-3, §5.1.2 Tables 4-5; ``PRESETS``)
    ``low16`` (Table 2): 16 single-core nodes, 6 / 5 / 3 / 2 of them clocked 1-5, 5.01-7.5,
    7.51-10 and >10 GHz.  ``high16`` (Table 3): 4 nodes each at 1-10, 10.01-20, 20-30 and
    >30 GHz.  ``dist0`` (Table 4): 13 x 32 cores at 4.6 GHz, 11 x 20 at 10.2, 4 x 8 at 6.4,
    4 x 8 at 15.2 (32 nodes, 700 cores).  ``dist1`` (Table 5): 4 x 32 cores at 2.6 GHz,
    4 x 20 at 5.2, 4 x 8 at 3.4, 4 x 8 at 7.2.
    Decisions where the thesis is silent:

    * clocks in a range are drawn per node, uniformly on a 0.01 GHz grid (the tables' own
      resolution: 5.01, 7.51), from ``numpy.random.default_rng(seed)``, types in table order;
    * the open classes ">10 GHz" and ">30 GHz" get the width of the class before them:
      10.01-12.5 and 30.01-40 GHz;
    * flops per cycle = 1, so a core computes ``clock`` Gflop/s (the tables give clock
      rates only; the workloads' reference speed is 1 Gflop/s, see
      :mod:`coburst.workloads.hetero`);
    * Table 5 as printed has 4 + 4 + 4 + 4 = 16 nodes although §5.1.2 speaks of "two
      platforms with 32 nodes": ``dist1`` keeps the table's counts (16 nodes, 272 cores);
      ``--spec`` builds any other reading;
    * power (the thesis gives none): 6 W static and 2.5 W per GHz dynamic per core
      (IRMaSim's example processors: 5-6.4 W static, 5 W dynamic at 1.4-1.9 GHz),
      ``min_power`` 0.05 (IRMaSim's examples); no memory figures (the tables give none).

Custom platforms (:func:`load_spec`): a TOML or JSON file listing node types::

    description = "two fast nodes and six slow ones"
    seed = 3                       # optional; --seed overrides
    [[types]]
    id = "fast"
    count = 2                      # nodes of this type
    cores = 16                     # cores per node (default 1)
    clock = 3.2                    # GHz, or [lo, hi]: drawn per node
    flops_per_cycle = 4            # default 1
    static_power = 96.0            # W per node, shared by its cores (default 6 W x cores)
    dynamic_power = 8.0            # W per busy core (default 2.5 W/GHz x clock)
    min_power = 0.05               # fraction of the static power when off (default 0.05)
    mem = 64                       # GB per node (optional)
    mem_bw = 25.6                  # GB/s per node (optional)
    pstates = [2.4, [1.6, 3.0]]    # further pstates (Batsim DVFS): GHz, or [GHz, dynamic W];
                                   # pstate 0 = clock; same idle power (optional)

Network (linear in the number of cores; both engines route every pair)::

    root (routing="Full")
    ├── cluster (routing="Dijkstra")
    │     core hosts n{i}_c{j}, router hub, link n{i}_link per node (its port, shared by
    │     its cores), routes core <-> hub: [n{i}_link]
    ├── master_zone (routing="Full"): master_host, master_loopback, route master -> master
    ├── link master_link
    └── zoneRoute master_zone <-> cluster, gateways master_host / hub: [master_link]

    Dijkstra routing finds core -> hub -> core from the one-hop routes, so the file holds
    one route per core (a ``Full`` zone needs one per pair: the co-scheduling platforms'
    quadratic growth, notes/engineering-notes.md) and SimGrid gives every core its loopback when
    it seals the zone.  The master sits in its own ``Full`` zone with an explicit loopback
    route, as in :mod:`coburst.platforms.cluster` (Batsim 4.2.1 sends messages from the
    master to itself): tried and refused, a master inside the Dijkstra zone -- coburst's
    engine asks for the master's route to itself before SimGrid 4.1 seals the zone (its
    loopback edge does not exist yet: ``dynar is not that long``), and an explicit
    self-route there makes Batsim 4.2.1 (SimGrid 3.32) crash with a segmentation fault.
    Jobs on these platforms compute only (``parallel_homogeneous`` with ``com`` = 0), so the
    network carries Batsim's 1-byte messages only.

Zone properties (root zone): ``platform=hetero``, ``preset``, ``nodes``, ``cores`` (total),
``seed`` (``-`` when nothing was drawn), ``types`` (comma-separated type ids).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from coburst.errors import InputError
from coburst.platforms.units import parse_bandwidth, parse_latency
from coburst.platforms.xml import opening, prop, width

__all__ = ["CoreModel", "NodeModel", "NodeType", "HeteroPlatform", "PRESETS", "PRESET_DESCRIPTIONS",
           "build", "host_name", "load_spec", "preset", "render_xml", "types_from_doc"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")
_TYPE_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+@-]*\Z")

#: default power model of coburst's presets (module doc): W per core
STATIC_W_PER_CORE = 6.0
DYNAMIC_W_PER_GHZ = 2.5
MIN_POWER = 0.05
#: clock draws: a 0.01 GHz grid
CLOCK_GRID = 100  # steps per GHz
#: largest platform generated, in cores (hosts)
MAX_CORES = 1_000_000


@dataclass(frozen=True)
class CoreModel:
    """One core (one host, one Batsim resource)."""

    speed: float          # flop/s (pstate 0)
    idle: float           # W while idle (= static power of the core)
    dynamic: float        # W added while computing
    off: float            # W when switched off
    pstates: tuple[tuple[float, float], ...] = ()   # further pstates: (flop/s, dynamic W), same idle


@dataclass(frozen=True)
class NodeModel:
    """One node: its type, its cores (all alike in the presets; IRMaSim nodes may mix
    processor types), memory in GB and memory bandwidth in GB/s when known."""

    type: str
    cores: tuple[CoreModel, ...]
    mem: float | None = None
    mem_bw: float | None = None
    extra: tuple[tuple[str, str], ...] = ()   # further host properties (e.g. IRMaSim's cluster)


@dataclass(frozen=True)
class NodeType:
    """A node type of a preset or a spec file (module doc, "Custom platforms")."""

    id: str
    count: int
    cores: int = 1
    clock: tuple[float, float] = (1.0, 1.0)   # GHz; lo == hi: fixed
    flops_per_cycle: float = 1.0
    static_power: float | None = None         # W per node; None: STATIC_W_PER_CORE x cores
    dynamic_power: float | None = None        # W per busy core; None: DYNAMIC_W_PER_GHZ x clock
    min_power: float = MIN_POWER
    mem: float | None = None
    mem_bw: float | None = None
    pstates: tuple[tuple[float, float | None], ...] = ()   # (GHz, dynamic W or None: the default model)


@dataclass(frozen=True)
class HeteroPlatform:
    """A resolved platform (every clock drawn): what :func:`render_xml` writes."""

    nodes: tuple[NodeModel, ...]
    preset: str = "custom"
    seed: int | None = None
    description: str = ""
    master: str = "master_host"
    link_bw: str = "1250MBps"
    link_lat: str = "50us"
    master_bw: str = "1250MBps"
    master_lat: str = "100us"
    loopback_bw: str = "10GBps"
    loopback_lat: str = "0"
    types: tuple[str, ...] = field(default=())

    @property
    def nb_cores(self) -> int:
        return sum(len(n.cores) for n in self.nodes)


def _ranged(lo: float, hi: float | None = None) -> tuple[float, float]:
    return (lo, lo if hi is None else hi)


#: Sánchez Sousa 2023, Tables 2-5 (module doc for the decisions)
PRESETS: dict[str, tuple[NodeType, ...]] = {
    "low16": (NodeType("low_a", 6, 1, _ranged(1.00, 5.00)), NodeType("low_b", 5, 1, _ranged(5.01, 7.50)),
              NodeType("low_c", 3, 1, _ranged(7.51, 10.00)), NodeType("low_d", 2, 1, _ranged(10.01, 12.50))),
    "high16": (NodeType("high_a", 4, 1, _ranged(1.00, 10.00)), NodeType("high_b", 4, 1, _ranged(10.01, 20.00)),
               NodeType("high_c", 4, 1, _ranged(20.00, 30.00)), NodeType("high_d", 4, 1, _ranged(30.01, 40.00))),
    "dist0": (NodeType("dist0_a", 13, 32, _ranged(4.6)), NodeType("dist0_b", 11, 20, _ranged(10.2)),
              NodeType("dist0_c", 4, 8, _ranged(6.4)), NodeType("dist0_d", 4, 8, _ranged(15.2))),
    "dist1": (NodeType("dist1_a", 4, 32, _ranged(2.6)), NodeType("dist1_b", 4, 20, _ranged(5.2)),
              NodeType("dist1_c", 4, 8, _ranged(3.4)), NodeType("dist1_d", 4, 8, _ranged(7.2))),
}
PRESET_DESCRIPTIONS = {
    "low16": "Low heterogeneity platform (Sanchez Sousa 2023, Table 2): 16 single-core nodes, clocks drawn in "
             "1-5, 5.01-7.5, 7.51-10 and >10 GHz (10.01-12.5)",
    "high16": "High heterogeneity platform (Sanchez Sousa 2023, Table 3): 16 single-core nodes, clocks drawn in "
              "1-10, 10.01-20, 20-30 and >30 GHz (30.01-40)",
    "dist0": "Distributed heterogeneity platform 0 (Sanchez Sousa 2023, Table 4): 13x32 cores at 4.6 GHz, "
             "11x20 at 10.2, 4x8 at 6.4, 4x8 at 15.2",
    "dist1": "Distributed heterogeneity platform 1 (Sanchez Sousa 2023, Table 5 as printed: 16 nodes): 4x32 cores "
             "at 2.6 GHz, 4x20 at 5.2, 4x8 at 3.4, 4x8 at 7.2",
}


# ------------------------------------------------------------------------------ numbers
def _exact(*factors: float) -> float:
    """The product of decimal figures without binary artefacts (1.9 x 4 x 1e9 = 7.6e9 exactly)."""
    out = Decimal(1)
    for f in factors:
        out *= Decimal(repr(float(f)))
    return float(out)


def _num(value: float) -> str:
    """A number as written in the XML: an integer when it is one, else Python's shortest repr."""
    value = float(value)
    if value.is_integer() and abs(value) < 1e18:
        return str(int(value))
    return repr(value)


def _core_models(t: NodeType, clock: float) -> tuple[CoreModel, ...]:
    speed = _exact(clock, t.flops_per_cycle, 1e9)
    static_node = t.static_power if t.static_power is not None else _exact(STATIC_W_PER_CORE, t.cores)
    idle = float(Decimal(repr(float(static_node))) / Decimal(t.cores))
    dynamic = t.dynamic_power if t.dynamic_power is not None else _exact(DYNAMIC_W_PER_GHZ, clock)
    pstates = tuple((_exact(c, t.flops_per_cycle, 1e9), float(d) if d is not None else _exact(DYNAMIC_W_PER_GHZ, c))
                    for c, d in t.pstates)
    core = CoreModel(speed=speed, idle=idle, dynamic=float(dynamic), off=_exact(t.min_power, idle), pstates=pstates)
    return (core,) * t.cores


def draw_clock(rng, lo: float, hi: float) -> float:
    """One clock in [lo, hi] GHz, uniform on the 0.01 GHz grid (module doc)."""
    a, b = math.ceil(round(lo * CLOCK_GRID, 6)), math.floor(round(hi * CLOCK_GRID, 6))
    return int(rng.integers(a, b, endpoint=True)) / CLOCK_GRID


def build(types: tuple[NodeType, ...] | list[NodeType], seed: int | None = 0, *, preset: str = "custom",
          description: str = "", **network: str) -> HeteroPlatform:
    """Draw every ranged clock (types in order, nodes in order) and return the platform.

    ``seed`` may be ``None`` only when no type has a clock range."""
    import numpy as np

    ranged = any(t.clock[0] != t.clock[1] for t in types)
    if ranged and seed is None:
        raise InputError("--seed", None, "needed: some node type has a clock range")
    rng = np.random.default_rng(seed) if ranged else None
    nodes = []
    for t in types:
        for _ in range(t.count):
            clock = draw_clock(rng, *t.clock) if t.clock[0] != t.clock[1] else t.clock[0]
            nodes.append(NodeModel(type=t.id, cores=_core_models(t, clock), mem=t.mem, mem_bw=t.mem_bw))
    plat = HeteroPlatform(nodes=tuple(nodes), preset=preset, seed=seed if ranged else None,
                          description=description, types=tuple(t.id for t in types), **network)
    validate(plat)
    return plat


def preset(name: str, seed: int = 0, **network: str) -> HeteroPlatform:
    """A preset of Tables 2-5 (module doc)."""
    if name not in PRESETS:
        raise InputError("--preset", None, f"unknown preset {name!r} (use {', '.join(PRESETS)})")
    return build(PRESETS[name], seed, preset=name, description=PRESET_DESCRIPTIONS[name], **network)


# ------------------------------------------------------------------------------ validation
def validate(plat: HeteroPlatform) -> None:
    """Raise :class:`InputError` naming the faulty option."""
    if not plat.nodes:
        raise InputError("platform", None, "has no node")
    if plat.nb_cores > MAX_CORES:
        raise InputError("platform", None, f"would have {plat.nb_cores} cores; coburst generates at most {MAX_CORES}")
    if not _NAME.match(plat.master):
        raise InputError("--master", None, f"not a valid SimGrid identifier: {plat.master!r}")
    if re.fullmatch(r"n[0-9]+_.*|hub|.*_link", plat.master):
        raise InputError("--master", None, f"{plat.master!r} may clash with a core host, the hub or a link")
    for opt, text in (("--link-bw", plat.link_bw), ("--master-bw", plat.master_bw)):
        if parse_bandwidth(text, opt) <= 0:
            raise InputError(opt, None, "must be > 0 (Batsim sends 1-byte messages over every route)")
    for opt, text in (("--link-lat", plat.link_lat), ("--master-lat", plat.master_lat)):
        parse_latency(text, opt)
    if "--" in plat.description:
        raise InputError("--description", None, "cannot contain '--' (XML comment)")


# ------------------------------------------------------------------------------ XML
def host_name(plat: HeteroPlatform, node: int, core: int) -> str:
    """``n{node}_c{core}``, zero-padded (module doc)."""
    wc = width(max(len(n.cores) for n in plat.nodes))
    return f"n{node:0{width(len(plat.nodes))}d}_c{core:0{wc}d}"


def zone_properties(plat: HeteroPlatform) -> dict[str, str]:
    return {"platform": "hetero", "preset": plat.preset, "nodes": str(len(plat.nodes)), "cores": str(plat.nb_cores),
            "seed": "-" if plat.seed is None else str(plat.seed), "types": ",".join(plat.types)}


def host_properties(plat: HeteroPlatform, node: int, core: int) -> dict[str, str]:
    n = plat.nodes[node]
    c = n.cores[core]
    props = {"role": "compute_node", "node": str(node), "core": str(core), "cores": str(len(n.cores)),
             "type": n.type, "speed": _num(c.speed)}
    if n.mem is not None:
        props["mem"] = _num(n.mem)
    if n.mem_bw is not None:
        props["mem_bw"] = _num(n.mem_bw)
    states = [(c.speed, c.dynamic), *c.pstates]
    props.update({"wattage_per_state": ", ".join(f"{_num(c.idle)}:{_num(c.idle + d)}" for _, d in states),
                  "wattage_off": _num(c.off),
                  "static_power": _num(c.idle), "dynamic_power": _num(c.dynamic)})
    props.update(dict(n.extra))
    return props


def render_xml(plat: HeteroPlatform, command: str | None = None) -> str:
    """The platform XML (module doc); same platform -> same text."""
    validate(plat)
    q = quoteattr
    wn = width(len(plat.nodes))
    out = opening(plat.description, "Heterogeneous cluster (coburst/platforms/hetero.py): one host per core, named "
                  "n<node>_c<core>; host speed = clock x flops per cycle; energy as Batsim 4.2 reads it; Dijkstra "
                  "routing over one route per host to the hub.", command, zone_properties(plat))
    out.append("    <zone id=\"cluster\" routing=\"Dijkstra\">\n")
    for i, node in enumerate(plat.nodes):
        for j, core in enumerate(node.cores):
            speeds = ", ".join(_num(v) + "f" for v in (core.speed, *(sp for sp, _ in core.pstates)))
            out.append(f"      <host id={q(host_name(plat, i, j))} speed={q(speeds)}>\n")
            for key, value in host_properties(plat, i, j).items():
                out.append(prop(key, value, "        "))
            out.append("      </host>\n")
    out.append("      <router id=\"hub\"/>\n")
    for i in range(len(plat.nodes)):
        out.append(f"      <link id={q(f'n{i:0{wn}d}_link')} bandwidth={q(plat.link_bw)} "
                   f"latency={q(plat.link_lat)}/>\n")
    for i, node in enumerate(plat.nodes):
        link = q(f"n{i:0{wn}d}_link")
        for j in range(len(node.cores)):
            out.append(f"      <route src={q(host_name(plat, i, j))} dst=\"hub\"><link_ctn id={link}/></route>\n")
    out.append("    </zone>\n")
    out.append(f"    <zone id=\"master_zone\" routing=\"Full\">\n"
               f"      <host id={q(plat.master)} speed=\"1Gf\">\n" + prop("wattage_per_state", "0:0", "        ")
               + prop("wattage_off", "0", "        ") + "      </host>\n"
               f"      <link id=\"master_loopback\" bandwidth={q(plat.loopback_bw)} latency={q(plat.loopback_lat)}/>\n"
               f"      <route src={q(plat.master)} dst={q(plat.master)}><link_ctn id=\"master_loopback\"/></route>\n"
               f"    </zone>\n")
    out.append(f"    <link id=\"master_link\" bandwidth={q(plat.master_bw)} latency={q(plat.master_lat)}/>\n")
    out.append(f"    <zoneRoute src=\"master_zone\" dst=\"cluster\" gw_src={q(plat.master)} gw_dst=\"hub\">"
               f"<link_ctn id=\"master_link\"/></zoneRoute>\n")
    out.append("  </zone>\n</platform>\n")
    return "".join(out)


# ------------------------------------------------------------------------------ spec files
_TYPE_KEYS = ("id", "count", "cores", "clock", "flops_per_cycle", "static_power", "dynamic_power", "min_power",
              "mem", "mem_bw", "pstates")
_TOP_KEYS = ("description", "seed", "types")


def _toml_position(exc: Exception) -> tuple[str | None, str]:
    text = str(exc)
    m = re.search(r"\(at line (\d+), column (\d+)\)", text)
    if m:
        return f"line {m.group(1)} column {m.group(2)}", text[: m.start()].strip()
    m = re.search(r"\(at end of document\)", text)
    if m:
        return "end of file", text[: m.start()].strip()
    return None, text


def load_spec(path: str | Path) -> tuple[list[NodeType], dict[str, Any]]:
    """Read a node-type spec (TOML, or JSON for a ``.json`` name): (types, top-level extras)."""
    from coburst.validate import parse_json, read_text

    source = str(path)
    text = read_text(path, "platform spec")
    if source.endswith(".json"):
        doc = parse_json(text, source)
    else:
        import tomllib

        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            where, problem = _toml_position(exc)
            raise InputError(source, where, f"invalid TOML: {problem}") from None
    return types_from_doc(doc, source)


def _number(value: Any, source: str, where: str, *, minimum: float, exclusive: bool = True,
            integer: bool = False, maximum: float | None = None) -> float:
    from coburst.validate import number

    return number(value, source, where, minimum=minimum, exclusive_minimum=exclusive, integer=integer,
                  maximum=maximum)


def _pstates(raw: Any, source: str, where: str) -> tuple[tuple[float, float | None], ...]:
    """Further pstates: a list of clocks (GHz) or of [clock, dynamic_power] pairs."""
    if not isinstance(raw, list) or not raw:
        raise InputError(source, where, "expected a non-empty list of clocks (GHz) or [clock, dynamic_power] pairs")
    out = []
    for i, entry in enumerate(raw):
        if isinstance(entry, list):
            if len(entry) != 2:
                raise InputError(source, f"{where}[{i}]", f"a pstate is [clock, dynamic_power], got {len(entry)} "
                                                         "values")
            clock = _number(entry[0], source, f"{where}[{i}][0]", minimum=0, maximum=1e6)
            dyn = float(_number(entry[1], source, f"{where}[{i}][1]", minimum=0, exclusive=False, maximum=1e15))
            out.append((float(clock), dyn))
        else:
            out.append((float(_number(entry, source, f"{where}[{i}]", minimum=0, maximum=1e6)), None))
    return tuple(out)


def types_from_doc(doc: Any, source: str) -> tuple[list[NodeType], dict[str, Any]]:
    """Check a parsed spec (module doc, "Custom platforms") and return its node types."""
    if not isinstance(doc, dict):
        raise InputError(source, None, "expected a table (TOML) or an object (JSON) with a 'types' list")
    for key in doc:
        if key not in _TOP_KEYS:
            raise InputError(source, key, f"unknown key (expected {', '.join(_TOP_KEYS)})")
    if "description" in doc and not isinstance(doc["description"], str):
        raise InputError(source, "description", "expected a string")
    if "seed" in doc:
        _number(doc["seed"], source, "seed", minimum=0, exclusive=False, integer=True, maximum=2**63 - 1)
    raw = doc.get("types")
    if not isinstance(raw, list) or not raw:
        raise InputError(source, "types", "expected a non-empty list of node types ([[types]] tables in TOML)")
    types: list[NodeType] = []
    seen: set[str] = set()
    for k, t in enumerate(raw):
        where = f"types[{k}]"
        if not isinstance(t, dict):
            raise InputError(source, where, "expected a table/object")
        for key in t:
            if key not in _TYPE_KEYS:
                raise InputError(source, f"{where}.{key}", f"unknown key (expected {', '.join(_TYPE_KEYS)})")
        for key in ("id", "count", "clock"):
            if key not in t:
                raise InputError(source, where, f"the field {key!r} is missing")
        tid = t["id"]
        if not isinstance(tid, str) or not _TYPE_ID.match(tid):
            raise InputError(source, f"{where}.id", f"expected a name of letters, digits and _.+@-, got {tid!r}")
        if tid in seen:
            raise InputError(source, f"{where}.id", f"node type {tid!r} defined twice")
        seen.add(tid)
        count = int(_number(t["count"], source, f"{where}.count", minimum=1, exclusive=False, integer=True,
                            maximum=MAX_CORES))
        cores = int(_number(t.get("cores", 1), source, f"{where}.cores", minimum=1, exclusive=False, integer=True,
                            maximum=MAX_CORES))
        clock = t["clock"]
        if isinstance(clock, list):
            if len(clock) != 2:
                raise InputError(source, f"{where}.clock", f"a range is [lo, hi] in GHz, got {len(clock)} values")
            lo = _number(clock[0], source, f"{where}.clock[0]", minimum=0, maximum=1e6)
            hi = _number(clock[1], source, f"{where}.clock[1]", minimum=0, maximum=1e6)
            if hi < lo:
                raise InputError(source, f"{where}.clock", f"range [{lo:g}, {hi:g}] is empty")
            if math.floor(round(hi * CLOCK_GRID, 6)) < math.ceil(round(lo * CLOCK_GRID, 6)):
                raise InputError(source, f"{where}.clock", f"range [{lo:g}, {hi:g}] holds no value of the 0.01 GHz "
                                                          "grid clocks are drawn on")
            rng = (float(lo), float(hi))
        else:
            v = _number(clock, source, f"{where}.clock", minimum=0, maximum=1e6)
            rng = (float(v), float(v))
        fields: dict[str, Any] = {}
        for key, minimum, exclusive in (("flops_per_cycle", 0, True), ("static_power", 0, False),
                                        ("dynamic_power", 0, False), ("min_power", 0, False), ("mem", 0, False),
                                        ("mem_bw", 0, False)):
            if key in t:
                fields[key] = float(_number(t[key], source, f"{where}.{key}", minimum=minimum, exclusive=exclusive,
                                            maximum=1e15))
        if "pstates" in t:
            fields["pstates"] = _pstates(t["pstates"], source, f"{where}.pstates")
        if fields.get("min_power", 0) > 1:
            raise InputError(source, f"{where}.min_power", "a fraction of the static power: must be <= 1")
        types.append(NodeType(id=tid, count=count, cores=cores, clock=rng, **fields))
    total = sum(t.count * t.cores for t in types)
    if total > MAX_CORES:
        raise InputError(source, "types", f"the platform would have {total} cores; coburst generates at most "
                                          f"{MAX_CORES}")
    return types, {k: doc[k] for k in ("description", "seed") if k in doc}

