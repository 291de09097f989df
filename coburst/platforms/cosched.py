"""Node-sharing (co-scheduling) platforms: nodes x sockets x cores, as SimGrid XML.

A co-scheduling scheduler places jobs *compact* (whole nodes), *spread* (half of every
socket on twice the nodes) or *co-located* (two spread jobs sharing the same nodes).  For
that it must allocate pieces of nodes, so here **a Batsim resource (a SimGrid host) is an
allocatable unit of a node**, not a node.

Units (``--unit``)
    - ``half-socket`` (default): a unit is half of a socket (``cores_per_socket / 2`` cores).
      "Spread" is then exactly one unit per socket on twice the nodes, "compact" is all the
      ``2 * sockets`` units of a node, and two spread jobs co-locate on the two halves of
      every socket without ``--enable-compute-sharing``.  Resource counts stay small
      (ARIS: 4 resources per node instead of 20), which keeps both simulators and the
      scheduler's interval sets fast.  Needs an even number of cores per socket.
    - ``core``: a unit is one core: finer (any split of a node), 5 to 12 times more
      resources.

Naming and resource ids
    Unit hosts are named ``n{node}_s{socket}_h{half}`` (half sockets) or
    ``n{node}_s{socket}_c{core}`` (cores), every index **zero-padded** to the width of its
    largest value (ARIS, 8 nodes: ``n0_s0_h0`` .. ``n7_s1_h1``; 100 nodes of Marconi, cores:
    ``n00_s0_c00`` .. ``n99_s1_c23``).  Batsim 4 numbers resources in SimGrid's host order,
    which is lexicographic by name; with padded names that is (node, socket, unit) order, so
    the resource id of a unit is ``(node * sockets + socket) * units_per_socket + unit``
    (:func:`resource_id`) and a node owns the contiguous ids
    ``node * units_per_node .. (node + 1) * units_per_node - 1``.

Host properties (every unit)
    ``role=compute_node``, ``node``, ``socket`` (0-based within its node), ``unit``
    (0-based within its socket) and ``cores`` (cores in the unit).  Speed = ``core_speed``
    x ``cores``.

Zone properties (root zone; ``zone_properties`` for a scheduler)
    ``platform=cosched``, ``preset`` (``aris``, ``marconi``, ``grvingt`` or ``custom``),
    ``nodes``, ``sockets``, ``cores_per_socket``, ``unit`` (``core`` or ``half-socket``),
    ``units_per_socket``, ``cores_per_unit``, ``core_speed`` (flop/s).

Network (``render_xml``)::

    root (routing="Full")
    ├── zone n{i} (routing="Full"), one per node
    │     its unit hosts, router n{i}_router, link n{i}_membus (the node's memory bus)
    │     route unit -> unit and unit -> n{i}_router: [n{i}_membus]
    ├── master_zone (routing="Full"): master_host, master_loopback, route master -> master
    ├── link n{i}_link (one per node: the node's network port), link backbone, link master_link
    ├── zoneRoute n{i} <-> n{j} (i < j) gw n{i}_router/n{j}_router: [n{i}_link, backbone, n{j}_link]
    └── zoneRoute master_zone <-> n{i} gw master_host/n{i}_router: [master_link, backbone, n{i}_link]

    The units of a node share one *memory bus* link (a per-node zone, so that intra-node
    traffic never touches the network and a node's units contend for the same bus, as the
    memory-bound co-scheduling studies assume).  Nodes talk through their own port link and
    a shared backbone, like a SimGrid ``<cluster>``.  That is ``layout="full"`` (the shipped
    files); ``layout="linear"`` (``coburst platform cosched``'s default) gives the same routes
    with O(nodes) zoneRoutes through a hub zone (:func:`render_xml`).  The master host is the one of
    :mod:`coburst.platforms.cluster` (Batsim 4.2.1 aborts on a master alone in a
    ``routing="None"`` zone): a ``Full`` zone with a loopback route to itself, default name
    ``master_host``.  The root zone holds ``nodes * (nodes - 1) / 2 + nodes`` zoneRoutes
    (36 for 8 nodes, 5050 for 100).  Zones, then links, then routes: the order SimGrid's
    DTD requires.

Burst buffers (``--bb-nodes K``, for burst-buffer-aware co-scheduling): a zone
``storage_zone`` with ``K`` storage hosts ``bb{i}`` (``role=storage``, ``bb_capacity`` =
``--bb-capacity`` in bytes, default 40 GB) and the ``pfs`` host (``role=storage``), each behind
its own link (``--bb-bw``, ``--pfs-bw``) to the zone's router, which reaches every node through
the backbone and the node's port: ``bb{i}`` -> unit = [bb link, backbone, node link, memory
bus], so staging and checkpoint traffic contends with the jobs' own communications.

Presets: ARIS (GRNET) 2 sockets x 10 cores, CINECA Marconi (Broadwell) 2 x 24, Grid'5000
Grvingt 2 x 16.  ``aris_small_spec()`` regenerates ``platforms/aris_cosched_small.xml``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

from coburst.errors import InputError
from coburst.platforms.units import known_options, parse_bandwidth, parse_latency, parse_speed
from coburst.platforms.xml import opening, prop, width

__all__ = ["LAYOUTS", "PRESETS", "UNITS", "CoschedSpec", "aris_small_spec", "choose_layout", "host_name",
           "render_xml", "resource_id",
           "spec_from_options", "units"]

#: preset -> (sockets per node, cores per socket)
PRESETS = {"aris": (2, 10), "marconi": (2, 24), "grvingt": (2, 16)}
UNITS = ("half-socket", "core")

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")


@dataclass(frozen=True)
class CoschedSpec:
    """Every parameter of a co-scheduling platform (defaults: 8 ARIS nodes, half sockets)."""

    nodes: int = 8
    preset: str = "aris"          # a key of PRESETS, or "custom" (then sockets/cores required)
    sockets: int | None = None    # None: the preset's
    cores: int | None = None      # cores per socket; None: the preset's
    unit: str = "half-socket"
    core_speed: str = "1Gf"
    link_bw: str = "6GBps"
    link_lat: str = "1us"
    backbone_bw: str = "24GBps"
    backbone_lat: str = "1us"
    membus_bw: str = "50GBps"
    membus_lat: str = "0"
    master: str = "master_host"
    master_bw: str = "1250MBps"
    master_lat: str = "100us"
    loopback_bw: str = "10GBps"
    loopback_lat: str = "0"
    description: str = ""
    bb_nodes: int = 0             # burst-buffer storage hosts (0: none, and no PFS)
    bb_capacity: str = "40GB"
    bb_bw: str = "6GBps"          # a storage host's network link
    pfs_bw: str = "5000MBps"

    # ------------------------------------------------------------------ derived sizes
    @property
    def nb_sockets(self) -> int:
        return self.sockets if self.sockets is not None else PRESETS[self.preset][0]

    @property
    def cores_per_socket(self) -> int:
        return self.cores if self.cores is not None else PRESETS[self.preset][1]

    @property
    def units_per_socket(self) -> int:
        return 2 if self.unit == "half-socket" else self.cores_per_socket

    @property
    def cores_per_unit(self) -> int:
        return self.cores_per_socket // self.units_per_socket

    @property
    def units_per_node(self) -> int:
        return self.nb_sockets * self.units_per_socket

    @property
    def nb_units(self) -> int:
        return self.nodes * self.units_per_node


def aris_small_spec() -> CoschedSpec:
    """``platforms/aris_cosched_small.xml``: 8 ARIS nodes, half-socket units (32 resources)."""
    return CoschedSpec(description="8 nodes of ARIS (GRNET; 2 sockets x 10 cores), one Batsim resource per half "
                                   "socket (32 resources): a small co-scheduling platform.")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def validate(spec: CoschedSpec) -> None:
    """Raise :class:`InputError` naming the faulty option."""
    if not _is_int(spec.nodes) or spec.nodes < 1:
        raise InputError("--nodes", None, f"must be an integer >= 1, got {spec.nodes!r}")
    if spec.preset != "custom" and spec.preset not in PRESETS:
        raise InputError("--preset", None, f"unknown preset {spec.preset!r} (use {', '.join(PRESETS)} or custom)")
    for opt, value in (("--sockets", spec.sockets), ("--cores", spec.cores)):
        if value is None:
            if spec.preset == "custom":
                raise InputError(opt, None, "required without a preset")
        elif not _is_int(value) or value < 1:
            raise InputError(opt, None, f"must be an integer >= 1, got {value!r}")
    if spec.unit not in UNITS:
        raise InputError("--unit", None, f"must be one of {', '.join(UNITS)}, got {spec.unit!r}")
    if spec.unit == "half-socket" and spec.cores_per_socket % 2:
        raise InputError("--unit", None, f"half-socket units need an even number of cores per socket, "
                                         f"got {spec.cores_per_socket}")
    if not _NAME.match(spec.master):
        raise InputError("--master", None, f"not a valid SimGrid identifier: {spec.master!r}")
    if spec.master in ("backbone_zone", "backbone_router", "master_zone", "storage_zone", "storage_router"):
        raise InputError("--master", None, f"{spec.master!r} is the name of a zone or router of the platform")
    if re.fullmatch(r"n[0-9]+(_.*)?", spec.master):
        raise InputError("--master", None, f"{spec.master!r} may clash with a node's hosts, zone or router")
    if parse_speed(spec.core_speed, "--core-speed") <= 0:
        raise InputError("--core-speed", None, "must be > 0")
    for opt, text in (("--link-bw", spec.link_bw), ("--backbone-bw", spec.backbone_bw),
                      ("--membus-bw", spec.membus_bw), ("--master-bw", spec.master_bw),
                      ("--loopback-bw", spec.loopback_bw)):
        if parse_bandwidth(text, opt) <= 0:
            raise InputError(opt, None, "must be > 0 (Batsim sends 1-byte messages over every route)")
    for opt, text in (("--link-lat", spec.link_lat), ("--backbone-lat", spec.backbone_lat),
                      ("--membus-lat", spec.membus_lat), ("--master-lat", spec.master_lat),
                      ("--loopback-lat", spec.loopback_lat)):
        parse_latency(text, opt)
    if not _is_int(spec.bb_nodes) or spec.bb_nodes < 0:
        raise InputError("--bb-nodes", None, f"must be an integer >= 0, got {spec.bb_nodes!r}")
    if spec.bb_nodes:
        from coburst.platforms.units import parse_size
        if parse_size(spec.bb_capacity, "--bb-capacity") <= 0:
            raise InputError("--bb-capacity", None, "must be > 0")
        for opt, text in (("--bb-bw", spec.bb_bw), ("--pfs-bw", spec.pfs_bw)):
            if parse_bandwidth(text, opt) <= 0:
                raise InputError(opt, None, "must be > 0")
    if "--" in spec.description:
        raise InputError("--description", None, "cannot contain '--' (XML comment)")


def host_name(spec: CoschedSpec, node: int, socket: int, unit: int) -> str:
    """The (zero-padded) host name of a unit (module doc)."""
    letter = "h" if spec.unit == "half-socket" else "c"
    return (f"n{node:0{width(spec.nodes)}d}_s{socket:0{width(spec.nb_sockets)}d}"
            f"_{letter}{unit:0{width(spec.units_per_socket)}d}")


def resource_id(spec: CoschedSpec, node: int, socket: int, unit: int) -> int:
    """Batsim resource id of a unit (hosts sorted by name)."""
    return (node * spec.nb_sockets + socket) * spec.units_per_socket + unit


def units(spec: CoschedSpec) -> list[tuple[int, int, int]]:
    """Every (node, socket, unit), in resource-id order."""
    return [(n, s, u) for n in range(spec.nodes) for s in range(spec.nb_sockets)
            for u in range(spec.units_per_socket)]


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def zone_properties(spec: CoschedSpec) -> dict[str, str]:
    return {"platform": "cosched", "preset": spec.preset, "nodes": str(spec.nodes),
            "sockets": str(spec.nb_sockets), "cores_per_socket": str(spec.cores_per_socket),
            "unit": spec.unit, "units_per_socket": str(spec.units_per_socket),
            "cores_per_unit": str(spec.cores_per_unit),
            "core_speed": _number(parse_speed(spec.core_speed, "--core-speed"))}


def host_properties(spec: CoschedSpec, node: int, socket: int, unit: int) -> dict[str, str]:
    return {"role": "compute_node", "node": str(node), "socket": str(socket), "unit": str(unit),
            "cores": str(spec.cores_per_unit)}


#: ``--layout``: ``linear`` (default, O(nodes) zoneRoutes through a hub zone) or ``full``
#: (the n(n-1)/2 node-to-node zoneRoutes of the first versions); same simulated dates
LAYOUTS = ("linear", "full")
#: the hub zone of the linear layout and its router (names no other element may take)
HUB_ZONE, HUB_ROUTER = "backbone_zone", "backbone_router"


def render_xml(spec: CoschedSpec, command: str | None = None, layout: str = "full") -> str:
    """The platform XML (module doc); same spec and layout -> same text.

    ``layout="full"`` (the default here, today's files; ``coburst platform cosched`` writes the
    linear one unless told): a ``routing="Full"`` root with one zoneRoute per pair of nodes
    (n(n-1)/2: 55 MB at 800 Grvingt nodes).  ``layout="linear"``: a
    ``routing="DijkstraCache"`` root where every node zone reaches the others through a hub
    zone ``backbone_zone`` (a lone router): ``n{i} -> hub = [n{i}_link]`` and
    ``hub -> n{j} = [backbone, n{j}_link]`` (both ``symmetrical="NO"``), so a node-to-node
    route is the same link list as the full layout's, ``[n{i}_link, backbone, n{j}_link]``,
    and its latency the same float (SimGrid's Dijkstra adds the hub-to-destination half
    first: ``(backbone + n{j}) + n{i}`` equals ``(n{i} + backbone) + n{j}`` because every
    node link has the same latency).  The master and storage zones keep their direct
    zoneRoutes to every node (n each, the only paths Dijkstra can take to them).  Both
    SimGrid 3.32 (Batsim 4.2.1) and 4.1 load it; the cross-engine tests compare the two
    layouts' outputs (tests/test_platform_linear.py).
    """
    validate(spec)
    if layout not in LAYOUTS:
        raise InputError("--layout", None, f"must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    linear = layout == "linear"
    q = quoteattr
    unit_speed = _number(parse_speed(spec.core_speed, "--core-speed") * spec.cores_per_unit) + "f"
    wn = width(spec.nodes)
    out = opening(spec.description, "Co-scheduling platform (coburst/platforms/cosched.py): one host per allocatable "
                  "unit, the units of a node in a per-node zone behind its memory bus; master host in its own "
                  "routing=\"Full\" zone with a loopback route to itself (Batsim 4.2.1)."
                  + (" Nodes reach each other through the hub zone backbone_zone (DijkstraCache root: "
                     "O(nodes) routes)." if linear else ""), command,
                  zone_properties(spec), routing="DijkstraCache" if linear else "Full")
    all_units = units(spec)
    per_node = spec.units_per_node
    for node in range(spec.nodes):
        zone = f"n{node:0{wn}d}"
        router, bus = f"{zone}_router", f"{zone}_membus"
        out.append(f"    <zone id={q(zone)} routing=\"Full\">\n")
        mine = all_units[node * per_node:(node + 1) * per_node]
        names = [host_name(spec, *u) for u in mine]
        for (n, s, u), name in zip(mine, names):
            out.append(f"      <host id={q(name)} speed={q(unit_speed)}>\n")
            for key, value in host_properties(spec, n, s, u).items():
                out.append(prop(key, value, "        "))
            out.append("      </host>\n")
        out.append(f"      <router id={q(router)}/>\n")
        out.append(f"      <link id={q(bus)} bandwidth={q(spec.membus_bw)} latency={q(spec.membus_lat)}/>\n")
        for i, a in enumerate(names):
            for b in names[i + 1:] + [router]:
                out.append(f"      <route src={q(a)} dst={q(b)}><link_ctn id={q(bus)}/></route>\n")
        out.append("    </zone>\n")
    if spec.bb_nodes:
        out.append(storage_zone(spec))
    if linear:
        out.append(f"    <zone id=\"{HUB_ZONE}\" routing=\"Full\">\n      <router id=\"{HUB_ROUTER}\"/>\n    </zone>\n")
    out.append(f"    <zone id=\"master_zone\" routing=\"Full\">\n"
               f"      <host id={q(spec.master)} speed={q(unit_speed)}/>\n"
               f"      <link id=\"master_loopback\" bandwidth={q(spec.loopback_bw)} latency={q(spec.loopback_lat)}/>\n"
               f"      <route src={q(spec.master)} dst={q(spec.master)}><link_ctn id=\"master_loopback\"/></route>\n"
               f"    </zone>\n")
    for node in range(spec.nodes):
        out.append(f"    <link id={q(f'n{node:0{wn}d}_link')} bandwidth={q(spec.link_bw)} "
                   f"latency={q(spec.link_lat)}/>\n")
    out.append(f"    <link id=\"backbone\" bandwidth={q(spec.backbone_bw)} latency={q(spec.backbone_lat)}/>\n")
    out.append(f"    <link id=\"master_link\" bandwidth={q(spec.master_bw)} latency={q(spec.master_lat)}/>\n")
    if linear:
        # SimGrid's Dijkstra returns an edge's links reversed, its latencies summed in the
        # written order: each edge is written backwards (render_xml's doc)
        for i in range(spec.nodes):
            a = f"n{i:0{wn}d}"
            out.append(f"    <zoneRoute src={q(a)} dst=\"{HUB_ZONE}\" gw_src={q(a + '_router')} "
                       f"gw_dst=\"{HUB_ROUTER}\" symmetrical=\"NO\"><link_ctn id={q(a + '_link')}/></zoneRoute>\n"
                       f"    <zoneRoute src=\"{HUB_ZONE}\" dst={q(a)} gw_src=\"{HUB_ROUTER}\" "
                       f"gw_dst={q(a + '_router')} symmetrical=\"NO\"><link_ctn id={q(a + '_link')}/>"
                       f"<link_ctn id=\"backbone\"/></zoneRoute>\n")
    else:
        for i in range(spec.nodes):
            for j in range(i + 1, spec.nodes):
                a, b = f"n{i:0{wn}d}", f"n{j:0{wn}d}"
                out.append(f"    <zoneRoute src={q(a)} dst={q(b)} gw_src={q(a + '_router')} "
                           f"gw_dst={q(b + '_router')}><link_ctn id={q(a + '_link')}/><link_ctn id=\"backbone\"/>"
                           f"<link_ctn id={q(b + '_link')}/></zoneRoute>\n")
    if linear:
        _check_linear_latencies(spec)
        for node in range(spec.nodes):
            b = f"n{node:0{wn}d}"
            link = f"<link_ctn id={q(b + '_link')}/>"
            out.append(f"    <zoneRoute src=\"master_zone\" dst={q(b)} gw_src={q(spec.master)} gw_dst={q(b + '_router')} "
                       f"symmetrical=\"NO\">{link}<link_ctn id=\"backbone\"/><link_ctn id=\"master_link\"/>"
                       f"</zoneRoute>\n"
                       f"    <zoneRoute src={q(b)} dst=\"master_zone\" gw_src={q(b + '_router')} gw_dst={q(spec.master)} "
                       f"symmetrical=\"NO\"><link_ctn id=\"master_link\"/><link_ctn id=\"backbone\"/>{link}"
                       f"</zoneRoute>\n")
        if spec.bb_nodes:
            for node in range(spec.nodes):
                b = f"n{node:0{wn}d}"
                out.append(f"    <zoneRoute src=\"storage_zone\" dst={q(b)} gw_src=\"storage_router\" "
                           f"gw_dst={q(b + '_router')}><link_ctn id={q(b + '_link')}/><link_ctn id=\"backbone\"/>"
                           f"</zoneRoute>\n")
            out.append(f"    <zoneRoute src=\"master_zone\" dst=\"storage_zone\" gw_src={q(spec.master)} "
                       f"gw_dst=\"storage_router\"><link_ctn id=\"backbone\"/><link_ctn id=\"master_link\"/>"
                       f"</zoneRoute>\n")
    else:
        for node in range(spec.nodes):
            b = f"n{node:0{wn}d}"
            out.append(f"    <zoneRoute src=\"master_zone\" dst={q(b)} gw_src={q(spec.master)} gw_dst={q(b + '_router')}>"
                       f"<link_ctn id=\"master_link\"/><link_ctn id=\"backbone\"/><link_ctn id={q(b + '_link')}/>"
                       f"</zoneRoute>\n")
        if spec.bb_nodes:
            for node in range(spec.nodes):
                b = f"n{node:0{wn}d}"
                out.append(f"    <zoneRoute src=\"storage_zone\" dst={q(b)} gw_src=\"storage_router\" "
                           f"gw_dst={q(b + '_router')}><link_ctn id=\"backbone\"/><link_ctn id={q(b + '_link')}/>"
                           f"</zoneRoute>\n")
            out.append(f"    <zoneRoute src=\"master_zone\" dst=\"storage_zone\" gw_src={q(spec.master)} "
                       f"gw_dst=\"storage_router\"><link_ctn id=\"master_link\"/><link_ctn id=\"backbone\"/>"
                       f"</zoneRoute>\n")
    out.append("  </zone>\n</platform>\n")
    text = "".join(out)
    if linear:  # no indentation, a host on one line: 12 % smaller (800 Grvingt nodes: < 2 MB)
        text = _HOST_BREAK.sub(">", "\n".join(line.lstrip() for line in text.split("\n")))
    return text


_HOST_BREAK = re.compile(r">\n(?=<prop |</host>)")


def choose_layout(spec: CoschedSpec, layout: str | None) -> str:
    """``layout`` when given; else ``linear`` unless the latencies forbid it (then ``full``,
    said on standard error)."""
    if layout is not None:
        return layout
    try:
        _check_linear_latencies(spec)
    except InputError:
        import sys
        print("coburst platform cosched: these latencies need the full layout (the linear one would add the "
              "master routes' latencies in another order): writing the full layout", file=sys.stderr)
        return "full"
    return "linear"


def _check_linear_latencies(spec: CoschedSpec) -> None:
    """The linear layout's master routes sum their three latencies in the other order than
    the full layout's (SimGrid's Dijkstra): refuse the latencies for which binary64 gives
    another total, rather than write a platform with other dates (defaults and zero
    latencies pass)."""
    m = parse_latency(spec.master_lat, "--master-lat")
    bb = parse_latency(spec.backbone_lat, "--backbone-lat")
    n = parse_latency(spec.link_lat, "--link-lat")
    if (m + bb) + n != (n + bb) + m:
        raise InputError("--layout", None, f"with these latencies (--master-lat {spec.master_lat}, --backbone-lat "
                         f"{spec.backbone_lat}, --link-lat {spec.link_lat}) the linear layout's master routes "
                         "would not add up to the same float as the full layout's; use --layout full")


def storage_zone(spec: CoschedSpec) -> str:
    """The burst-buffer storage hosts ``bb{i}`` (``role=storage``, ``bb_capacity`` in bytes)
    and the ``pfs`` host (``role=storage``, no capacity), each behind its own link to the
    zone's router, which joins the backbone (module doc)."""
    from coburst.platforms.units import parse_size

    q = quoteattr
    wb = width(spec.bb_nodes)
    cap = str(parse_size(spec.bb_capacity, "--bb-capacity"))
    names = [f"bb{i:0{wb}d}" for i in range(spec.bb_nodes)]
    out = ["    <zone id=\"storage_zone\" routing=\"Full\">\n"]
    for name in names:
        out.append(f"      <host id={q(name)} speed=\"1f\">\n" + prop("role", "storage", "        ")
                   + prop("bb_capacity", cap, "        ") + "      </host>\n")
    out.append("      <host id=\"pfs\" speed=\"1f\">\n" + prop("role", "storage", "        ") + "      </host>\n")
    out.append("      <router id=\"storage_router\"/>\n")
    for name in names:
        out.append(f"      <link id={q(name + '_link')} bandwidth={q(spec.bb_bw)} latency={q(spec.link_lat)}/>\n")
    out.append(f"      <link id=\"pfs_link\" bandwidth={q(spec.pfs_bw)} latency={q(spec.link_lat)}/>\n")
    hosts = names + ["pfs"]
    for i, a in enumerate(hosts):
        for b in hosts[i + 1:]:
            out.append(f"      <route src={q(a)} dst={q(b)}><link_ctn id={q(a + '_link')}/>"
                       f"<link_ctn id={q(b + '_link')}/></route>\n")
        out.append(f"      <route src={q(a)} dst=\"storage_router\"><link_ctn id={q(a + '_link')}/></route>\n")
    out.append("    </zone>\n")
    return "".join(out)


def spec_from_options(**options) -> CoschedSpec:
    """A spec from CLI-like options (``None`` = default); unknown keys are rejected.  With
    ``sockets``/``cores`` and no ``preset``, the preset is ``custom``."""
    clean = known_options(CoschedSpec, options, "co-scheduling platform")
    if "preset" not in clean and ("sockets" in clean or "cores" in clean):
        clean["preset"] = "custom"
    preset = clean.get("preset", CoschedSpec.preset)
    if preset in PRESETS:
        # a preset fixes the node's shape: an explicit --sockets/--cores must agree with it
        for key, index in (("sockets", 0), ("cores", 1)):
            if key in clean and clean[key] != PRESETS[preset][index]:
                raise InputError(f"--{key}", None, f"contradicts --preset {preset} "
                                                   f"({PRESETS[preset][0]} sockets x {PRESETS[preset][1]} cores)")
    spec = CoschedSpec(**clean)
    validate(spec)
    return spec
