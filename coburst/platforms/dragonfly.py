"""Dragonfly platforms with burst-buffer nodes and a PFS, as SimGrid XML (Kopański 2020, §2.2).

The thesis platform (Listing 1) is a SimGrid ``<cluster topology="DRAGONFLY">`` with
``topo_parameters="3,1;4,1;3,1;3"`` (3 groups x 4 chassis x 3 routers x 3 nodes = 108
hosts), one burst-buffer node per chassis, a ``master`` host and a ``pfs`` host.

Why the generated file does not use ``<cluster>``
    Every host of a SimGrid ``<cluster>`` receives the *same* properties, so a cluster
    cannot say which hosts are burst-buffer nodes, their capacity, or where each host sits
    in the topology (the thesis gave the storage role on Batsim's command line instead).
    coburst wants all of this in host properties, which Batsim forwards to the scheduler.
    :func:`render_xml` therefore writes the same dragonfly as an explicit ``routing="Full"``
    zone: one ``<host>`` per node (with its properties), the ``_UP`` and ``_DOWN`` halves of
    every dragonfly link (a ``<cluster>``'s links are SPLITDUPLEX by default) and one
    ``<route>`` per ordered pair of hosts (SimGrid's dragonfly routes are not symmetrical).
    :func:`node_route` reproduces SimGrid's ``DragonflyZone::get_local_route`` (minimal
    routing, SimGrid 3.32 to 4.1) link for link, so the network behaves exactly like the
    ``<cluster>`` form: the tests compare all 11664 routes of the thesis platform on SimGrid
    (link names map through ``Link.simgrid_name``).  :func:`render_cluster_xml` writes the
    linear ``<cluster>`` form (``--style cluster``): the same node-to-node routes, the roles in
    a ``coburst-roles`` zone property, but longer routes to the master and the PFS (its
    docstring says why).

Numbering (SimGrid ``DragonflyZone::rankId_to_coords``)
    Node of rank ``i`` (host ``{prefix}{i}``) sits in group ``i // (C*R*N)``, chassis
    ``(i // (R*N)) % C`` of that group, router (blade) ``(i // N) % R`` of that chassis,
    where C, R, N are chassis per group, routers per chassis and nodes per router.
    The host properties give *global* indices, so that equal values mean the same piece
    of hardware: ``group = i // (C*R*N)``, ``chassis = i // (R*N)``, ``router = i // N``.

Host properties
    - cluster nodes: ``role`` (``compute_node`` or ``storage``), ``group``, ``chassis``,
      ``router``; burst-buffer nodes also ``bb_capacity`` (bytes).  ``compute_node`` is
      the spelling Batsim 4.2 accepts (``src/permissions.cpp`` knows ``master``,
      ``compute_node`` and ``storage``; any other value aborts Batsim).
    - ``pfs``: ``role=storage``, no ``bb_capacity``.
    - the master host is named ``master`` and tagged ``role=master``, as in Listing 1.
      Batsim 4.2 also makes the host named by ``--master-host`` the master; its default
      name is ``master_host``, so with default options the master is found exactly once
      (a host both named ``master_host`` and tagged ``role=master`` would get the role
      twice, ``master,master``, and be rejected).  ``coburst sim`` behaves the same.
    - burst-buffer nodes are the first ``bb_per_chassis`` nodes of every chassis (the
      thesis: ``node_0, node_9, ..., node_99``).

Speeds
    Cluster hosts and the PFS host compute at ``speed``; the master host at 0 (Listing 1).
    Listing 1 also gave the PFS speed 0, but Batsim 4.2 announces storage hosts as resources
    (``nb_resources`` = compute + storage) and storage-unaware schedulers such as pybatsim's
    ``easyBackfill`` size their pool with it: with a PFS of speed 0 a job placed there would
    never progress.  Burst-buffer-aware schedulers never compute on storage hosts.

Master and PFS links (Listing 1)
    ``master`` and ``pfs`` reach every cluster host through one link each
    (``link_master``: FATPIPE, ``link_pfs``: shared), exactly as the thesis' zoneRoutes
    to the cluster router did: SimGrid added no further link between that router and a
    node, so the PFS link is the only I/O bottleneck of the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

from coburst.errors import InputError
from coburst.platforms.units import parse_bandwidth, parse_latency, parse_size, parse_speed
from coburst.platforms.xml import HEADER, prop

#: Batsim 4.2 role of a host that computes
ROLE_COMPUTE = "compute_node"
ROLE_STORAGE = "storage"


@dataclass(frozen=True)
class DragonflySpec:
    """Every parameter of a dragonfly platform (defaults: the thesis, Listing 1)."""

    groups: int = 3
    group_links: int = 1
    chassis: int = 4
    chassis_links: int = 1
    routers: int = 3
    router_links: int = 1
    nodes: int = 3
    speed: str = "1Gf"
    bw: str = "1250MBps"
    lat: str = "50us"
    loopback_bw: str = "1000MBps"
    loopback_lat: str = "0"
    bb_per_chassis: int = 1
    bb_capacity: int = 40 * 10**9
    pfs_bw: str = "5000MBps"
    pfs_lat: str = "100us"
    master_bw: str = "1250MBps"
    master_lat: str = "100us"
    master: str = "master"
    pfs: str = "pfs"
    prefix: str = "node_"
    cluster_id: str = "cluster"

    # ------------------------------------------------------------------ derived sizes
    @property
    def nodes_per_chassis(self) -> int:
        return self.routers * self.nodes

    @property
    def nodes_per_group(self) -> int:
        return self.chassis * self.nodes_per_chassis

    @property
    def host_count(self) -> int:
        return self.groups * self.nodes_per_group

    @property
    def topo_parameters(self) -> str:
        return (f"{self.groups},{self.group_links};{self.chassis},{self.chassis_links};"
                f"{self.routers},{self.router_links};{self.nodes}")

    def host_name(self, rank: int) -> str:
        return f"{self.prefix}{rank}"


def parse_topology(text: str, source: str = "--topo") -> dict[str, int]:
    """Read SimGrid's ``topo_parameters`` (``"3,1;4,1;3,1;3"``) into spec fields."""
    match = re.fullmatch(r"\s*(\d+),(\d+);(\d+),(\d+);(\d+),(\d+);(\d+)\s*", text)
    if not match:
        raise InputError(source, None, f"cannot read dragonfly topology {text!r} (expected "
                         "'GROUPS,LINKS;CHASSIS,LINKS;ROUTERS,LINKS;NODES', e.g. '3,1;4,1;3,1;3')")
    g, gl, c, cl, r, rl, n = (int(x) for x in match.groups())
    return {"groups": g, "group_links": gl, "chassis": c, "chassis_links": cl,
            "routers": r, "router_links": rl, "nodes": n}


def validate(spec: DragonflySpec) -> None:
    """Reject specs SimGrid cannot build or route, with the option at fault."""
    for name in ("groups", "group_links", "chassis", "chassis_links", "routers", "router_links", "nodes"):
        if getattr(spec, name) < 1:
            raise InputError(f"--{name.replace('_', '-')}", None, f"must be >= 1, got {getattr(spec, name)}")
    if spec.groups > spec.routers * spec.chassis or (spec.groups > 1 and spec.groups > spec.routers):
        # SimGrid sends inter-group traffic through router number <target group> of the
        # source chassis: with more groups than routers per chassis it indexes past the end.
        raise InputError("--groups", None, f"SimGrid's dragonfly routing needs groups <= routers per chassis "
                         f"({spec.groups} groups, {spec.routers} routers)")
    if not 0 <= spec.bb_per_chassis <= spec.nodes_per_chassis:
        raise InputError("--bb-per-chassis", None,
                         f"must be between 0 and the {spec.nodes_per_chassis} nodes of a chassis")
    if spec.bb_per_chassis == spec.nodes_per_chassis:
        raise InputError("--bb-per-chassis", None, "every node would be a burst-buffer node: no compute node left")
    if spec.bb_capacity <= 0 and spec.bb_per_chassis > 0:
        raise InputError("--bb-capacity", None, "must be > 0")
    parse_speed(spec.speed, "--speed")
    for opt, text in (("--bw", spec.bw), ("--loopback-bw", spec.loopback_bw), ("--pfs-bw", spec.pfs_bw),
                      ("--master-bw", spec.master_bw)):
        if parse_bandwidth(text, opt) <= 0:
            raise InputError(opt, None, f"must be > 0, got {text!r}")
    for opt, text in (("--lat", spec.lat), ("--loopback-lat", spec.loopback_lat), ("--pfs-lat", spec.pfs_lat),
                      ("--master-lat", spec.master_lat)):
        parse_latency(text, opt)
    names = {spec.master, spec.pfs}
    if spec.master == "master_host":
        raise InputError("--master", None, "'master_host' is Batsim 4.2's default --master-host: tagged role=master "
                         "too, Batsim would see the master twice; choose another name")
    if len(names) != 2 or any(re.fullmatch(re.escape(spec.prefix) + r"\d+", n) for n in names):
        raise InputError("--master", None, "the master, the PFS and the cluster hosts need distinct names")


# ---------------------------------------------------------------------- topology
def coords(spec: DragonflySpec, rank: int) -> tuple[int, int, int, int]:
    """SimGrid's local coordinates of node ``rank``: (group, chassis in group, blade, node)."""
    group, rest = divmod(rank, spec.nodes_per_group)
    chassis, rest = divmod(rest, spec.nodes_per_chassis)
    blade, node = divmod(rest, spec.nodes)
    return group, chassis, blade, node


def position(spec: DragonflySpec, rank: int) -> dict[str, int]:
    """Global topology position of node ``rank`` as published in host properties."""
    return {"group": rank // spec.nodes_per_group,
            "chassis": rank // spec.nodes_per_chassis,
            "router": rank // spec.nodes}


def bb_ranks(spec: DragonflySpec) -> list[int]:
    """Ranks of the burst-buffer nodes: the first ``bb_per_chassis`` nodes of each chassis."""
    n_chassis = spec.groups * spec.chassis
    return [c * spec.nodes_per_chassis + k for c in range(n_chassis) for k in range(spec.bb_per_chassis)]


# ---------------------------------------------------------------------- links
@dataclass(frozen=True)
class Link:
    id: str
    bandwidth: str
    latency: str
    sharing: str | None = None  # None: SHARED (SimGrid's default)
    simgrid_name: str | None = None  # name of the same link in the <cluster> form


class _Links:
    """The links of the dragonfly, named and numbered as SimGrid's DragonflyZone does.

    A ``<cluster>`` link is SPLITDUPLEX by default: two links, ``<name>_UP`` and
    ``<name>_DOWN``, one per direction.  ``local``, ``green``, ``black`` and ``blue`` map a
    (router, ...) key to the link taken when *leaving* that router in that direction,
    exactly as SimGrid fills ``my_nodes_``, ``green_links_``, ``black_links_`` and
    ``blue_link_``.
    """

    def __init__(self, spec: DragonflySpec):
        self.spec = spec
        s = spec
        uid = 0  # SimGrid's static counter (starts at 0 in a fresh process)
        n_routers = s.groups * s.chassis * s.routers
        self.local: dict[tuple[int, int], tuple[Link, Link]] = {}  # (router, node) -> (up, down)
        self.green: dict[tuple[int, int], Link] = {}  # (router, other blade) -> link
        self.black: dict[tuple[int, int], Link] = {}  # (router, other chassis) -> link
        self.blue: dict[int, Link] = {}  # router -> link
        self.loopback: dict[int, Link] = {}

        def pair(base: str, bandwidth: str, simgrid_base: str) -> tuple[Link, Link]:
            return (Link(f"{base}_UP", bandwidth, s.lat, simgrid_name=f"{simgrid_base}_UP"),
                    Link(f"{base}_DOWN", bandwidth, s.lat, simgrid_name=f"{simgrid_base}_DOWN"))

        for r in range(n_routers):
            for j in range(s.nodes):
                rank = r * s.nodes + j
                self.local[(r, j)] = pair(f"local_{s.host_name(rank)}", s.bw,
                                          f"local_link_from_router_{r}_to_node_{j}_{uid}")
                uid += 1
        for i in range(s.groups * s.chassis):
            g, c = divmod(i, s.chassis)
            for j in range(s.routers):
                for k in range(j + 1, s.routers):
                    up, down = pair(f"green_g{g}_c{c}_r{j}_r{k}", _mult(s.bw, s.router_links),
                                    f"green_link_in_chassis_{c}_between_routers_{j}_and_{k}_{uid}")
                    self.green[(i * s.routers + j, k)] = up
                    self.green[(i * s.routers + k, j)] = down
                    uid += 1
        for g in range(s.groups):
            for j in range(s.chassis):
                for k in range(j + 1, s.chassis):
                    for b in range(s.routers):
                        up, down = pair(f"black_g{g}_c{j}_c{k}_r{b}", _mult(s.bw, s.chassis_links),
                                        f"black_link_in_group_{g}_between_chassis_{j}_and_{k}_blade_{b}_{uid}")
                        self.black[(g * s.chassis * s.routers + j * s.routers + b, k)] = up
                        self.black[(g * s.chassis * s.routers + k * s.routers + b, j)] = down
                        uid += 1
        per_group = s.chassis * s.routers
        for i in range(s.groups):
            for j in range(i + 1, s.groups):
                ri, rj = i * per_group + j, j * per_group + i
                up, down = pair(f"blue_g{i}_g{j}", _mult(s.bw, s.group_links),
                                f"blue_link_between_group_{i}_and_{j}_routers_{ri}_and_{rj}_{uid}")
                self.blue[ri] = up
                self.blue[rj] = down
                uid += 1
        has_loopback = parse_bandwidth(s.loopback_bw) > 0 or parse_latency(s.loopback_lat) > 0
        if has_loopback:
            for rank in range(s.host_count):
                self.loopback[rank] = Link(f"loopback_{s.host_name(rank)}", s.loopback_bw, s.loopback_lat,
                                           sharing="FATPIPE",
                                           simgrid_name=f"{s.cluster_id}_link_{rank}_loopback")

    def all(self) -> list[Link]:
        seen: dict[str, Link] = {}
        locals_ = [link for pair in self.local.values() for link in pair]
        for group in (locals_, self.green.values(), self.black.values(), self.blue.values(),
                      self.loopback.values()):
            for link in group:
                seen.setdefault(link.id, link)
        return list(seen.values())


def _mult(bw: str, count: int) -> str:
    """``count`` parallel links of bandwidth ``bw`` (SimGrid multiplies the bandwidth)."""
    if count == 1:
        return bw
    return f"{parse_bandwidth(bw) * count:.17g}Bps"


def node_route(spec: DragonflySpec, links: _Links, src: int, dst: int) -> list[Link]:
    """Links from node ``src`` to node ``dst``: SimGrid's DragonflyZone minimal routing.

    Transcribed from ``DragonflyZone::get_local_route`` (SimGrid 3.32 to 4.1, no limiter
    links), including its habit of continuing from the chassis-0 router after a green hop.
    """
    s = spec
    if src == dst and links.loopback:
        return [links.loopback[src]]
    per_group = s.chassis * s.routers
    mg, mc, mb, mn = coords(s, src)
    tg, tc, tb, tn = coords(s, dst)
    my_router = mg * per_group + mc * s.routers + mb
    target_router = tg * per_group + tc * s.routers + tb
    current = my_router
    route = [links.local[(my_router, mn)][0]]

    def parts(router: int) -> tuple[int, int, int]:
        g, rest = divmod(router, per_group)
        c, b = divmod(rest, s.routers)
        return g, c, b

    if target_router != my_router:
        if tg != parts(current)[0]:
            if parts(current)[2] != tg:
                route.append(links.green[(current, tg)])
                current = mg * per_group + mc * s.routers + tg
            if parts(current)[1] != 0:
                route.append(links.black[(current, 0)])
                current = mg * per_group + tg
            route.append(links.blue[current])
            current = tg * per_group + mg
        if tb != parts(current)[2]:
            route.append(links.green[(current, tb)])
            current = tg * per_group + tb
        if tc != parts(current)[1]:
            route.append(links.black[(current, tc)])
    route.append(links.local[(target_router, tn)][1])
    return route


# ---------------------------------------------------------------------- XML output
_HEADER = HEADER + "<platform version=\"4.1\">\n"


def zone_properties(spec: DragonflySpec) -> dict[str, str]:
    """Platform-wide facts, published as properties of the root zone."""
    return {
        "coburst_platform": "dragonfly",
        "topo_parameters": spec.topo_parameters,
        "host_speed": f"{parse_speed(spec.speed):.17g}",
        "link_bandwidth": f"{parse_bandwidth(spec.bw):.17g}",
        "pfs_bandwidth": f"{parse_bandwidth(spec.pfs_bw):.17g}",
        "bb_per_chassis": str(spec.bb_per_chassis),
        "bb_capacity": str(spec.bb_capacity),
        "master": spec.master,
        "pfs": spec.pfs,
    }


def host_properties(spec: DragonflySpec, rank: int, bb: set[int]) -> dict[str, str]:
    """The properties of cluster node ``rank`` (see the module docstring)."""
    props = {"role": ROLE_STORAGE if rank in bb else ROLE_COMPUTE}
    if rank in bb:
        props["bb_capacity"] = str(spec.bb_capacity)
    props.update({k: str(v) for k, v in position(spec, rank).items()})
    return props


def _link_xml(link: Link) -> str:
    sharing = f" sharing_policy={quoteattr(link.sharing)}" if link.sharing else ""
    return (f"    <link id={quoteattr(link.id)} bandwidth={quoteattr(link.bandwidth)} "
            f"latency={quoteattr(link.latency)}{sharing}/>\n")


def _route_xml(src: str, dst: str, route: list[Link], symmetrical: bool = True) -> str:
    sym = "" if symmetrical else " symmetrical=\"NO\""
    ctn = "".join(f"<link_ctn id={quoteattr(link.id)}/>" for link in route)
    return f"    <route src={quoteattr(src)} dst={quoteattr(dst)}{sym}>{ctn}</route>\n"


def render_xml(spec: DragonflySpec, command: str | None = None) -> str:
    """The platform as an explicit Full-routing zone with per-host properties."""
    validate(spec)
    links = _Links(spec)
    bb = set(bb_ranks(spec))
    master_link = Link("link_master", spec.master_bw, spec.master_lat, sharing="FATPIPE")
    pfs_link = Link("link_pfs", spec.pfs_bw, spec.pfs_lat)
    out = [_HEADER]
    out.append(f"  <!-- coburst dragonfly platform: topo_parameters=\"{spec.topo_parameters}\", "
               f"{spec.host_count} cluster hosts ({spec.host_count - len(bb)} compute, {len(bb)} burst-buffer "
               f"of {spec.bb_capacity} bytes), master host '{spec.master}', PFS host '{spec.pfs}'. -->\n")
    out.append("  <!-- Same network as SimGrid's <cluster topology=\"DRAGONFLY\">, written as explicit "
               "routes so that every host can carry its own properties (coburst/platforms/dragonfly.py). -->\n")
    out.append(f"  <zone id={quoteattr('root')} routing=\"Full\">\n")
    for key, value in zone_properties(spec).items():
        out.append(prop(key, value, "    "))
    if command:
        out.append(prop("generated_by", command, "    "))
    for rank in range(spec.host_count):
        out.append(f"    <host id={quoteattr(spec.host_name(rank))} speed={quoteattr(spec.speed)}>\n")
        for key, value in host_properties(spec, rank, bb).items():
            out.append(prop(key, value, "      "))
        out.append("    </host>\n")
    out.append(f"    <host id={quoteattr(spec.master)} speed=\"0\">\n")
    out.append(prop("role", "master", "      "))
    out.append("    </host>\n")
    out.append(f"    <host id={quoteattr(spec.pfs)} speed={quoteattr(spec.speed)}>\n")
    out.append(prop("role", ROLE_STORAGE, "      "))
    out.append("    </host>\n")
    for link in links.all() + [master_link, pfs_link]:
        out.append(_link_xml(link))
    n = spec.host_count
    for src in range(n):
        if links.loopback:
            out.append(_route_xml(spec.host_name(src), spec.host_name(src), node_route(spec, links, src, src),
                                  symmetrical=False))
        for dst in range(n):
            if dst != src:
                out.append(_route_xml(spec.host_name(src), spec.host_name(dst), node_route(spec, links, src, dst),
                                      symmetrical=False))
    for special, link in ((spec.master, master_link), (spec.pfs, pfs_link)):
        for rank in range(n):
            out.append(_route_xml(special, spec.host_name(rank), [link]))
    out.append(_route_xml(spec.master, spec.pfs, [master_link, pfs_link]))
    out.append("  </zone>\n</platform>\n")
    return "".join(out)


#: the zone property that carries host roles inside a platform file (``HOSTS:ROLE``, Batsim's
#: ``-r`` syntax); ``coburst sim`` applies it, the real Batsim needs it as ``-r``
ROLES_PROPERTY = "coburst-roles"


def storage_roles(spec: DragonflySpec) -> str:
    """The burst-buffer hosts' role in Batsim's ``-r`` syntax: ``node_0,node_9,...:storage``."""
    return ",".join(spec.host_name(r) for r in bb_ranks(spec)) + ":" + ROLE_STORAGE


def render_cluster_xml(spec: DragonflySpec, command: str | None = None) -> str:
    """The linear ``<cluster topology="DRAGONFLY">`` form of the same platform (O(hosts) bytes).

    Node-to-node routes are SimGrid's own dragonfly routes, link for link those of
    :func:`render_xml`.  What differs:

    * its hosts carry no properties of their own (every host of a ``<cluster>`` gets the
      same ones): the root zone's properties (:func:`zone_properties`: burst-buffer
      capacity, ``bb_per_chassis``, ``topo_parameters``, the PFS's name), which Batsim
      forwards to the scheduler as every resource's ``zone_properties``, tell a scheduler
      where each host sits and how large a burst buffer is;
    * the burst-buffer hosts' ``storage`` role is the ``coburst-roles`` property of
      ``master_zone`` (``node_0,node_9,...:storage``, Batsim's ``-r`` syntax): ``coburst
      sim`` applies it by itself, the real Batsim needs it as ``-r`` (``coburst platform
      info`` prints the argument).  Batsim forwards a zone's properties to the resources of
      that zone only, and the master is no resource: the list is not repeated in every
      resource description;
    * SimGrid (>= 3.32, so Batsim 4.2.1 too) creates no router netpoint for a DRAGONFLY
      cluster, so the master and PFS zones enter the cluster through its first compute host
      (the gateway): a route between the master (or the PFS) and a node is ``link_master``
      (``link_pfs``) plus the dragonfly route between the gateway and that node, where the
      explicit form has the one link.  Messages to the master and PFS transfers take longer
      than on the explicit form, and dates differ; runs of this form agree between the
      two engines, not with the explicit form.

    Each of the master and PFS zones is a ``routing="Full"`` zone with a loopback route to
    its host (Batsim 4.2.1 aborts on a host alone in a ``routing="None"`` zone), and the
    master reaches the PFS through both links, as in the explicit form.
    """
    validate(spec)
    bb = set(bb_ranks(spec))
    gateway = spec.host_name(next(r for r in range(spec.host_count) if r not in bb))
    radical = f"0-{spec.host_count - 1}"
    out = [_HEADER]
    out.append(f"  <!-- coburst dragonfly platform: topo_parameters=\"{spec.topo_parameters}\", "
               f"{spec.host_count} cluster hosts ({spec.host_count - len(bb)} compute, {len(bb)} burst-buffer "
               f"of {spec.bb_capacity} bytes), master host '{spec.master}', PFS host '{spec.pfs}'. -->\n")
    out.append("  <!-- Burst-buffer hosts: the coburst-roles property of master_zone; the real Batsim needs it as "
               "its -r option (coburst platform info prints it). Routes to the master and the PFS enter the "
               f"cluster through {gateway} (coburst/platforms/dragonfly.py). -->\n")
    out.append("  <zone id=\"root\" routing=\"Full\">\n")
    for key, value in zone_properties(spec).items():
        out.append(prop(key, value, "    "))
    if command:
        out.append(prop("generated_by", command, "    "))
    out.append(f"    <cluster id={quoteattr(spec.cluster_id)} topology=\"DRAGONFLY\" "
               f"topo_parameters={quoteattr(spec.topo_parameters)} prefix={quoteattr(spec.prefix)} "
               f"radical={quoteattr(radical)} suffix=\"\" speed={quoteattr(spec.speed)} bw={quoteattr(spec.bw)} "
               f"lat={quoteattr(spec.lat)} loopback_bw={quoteattr(spec.loopback_bw)} "
               f"loopback_lat={quoteattr(spec.loopback_lat)}/>\n")
    # a routing="Full" zone with a loopback route to itself for each of them: Batsim 4.2.1
    # (SimGrid 3.32) aborts on a host alone in a routing="None" zone (coburst/platforms/cluster.py)
    for zone, host, speed, role in (("master_zone", spec.master, "0", "master"),
                                    ("pfs_zone", spec.pfs, spec.speed, ROLE_STORAGE)):
        loop = f"{zone}_loopback"
        roles = prop(ROLES_PROPERTY, storage_roles(spec), "      ") if zone == "master_zone" and bb else ""
        out.append(f"    <zone id={quoteattr(zone)} routing=\"Full\">\n{roles}      <host id={quoteattr(host)} "
                   f"speed={quoteattr(speed)}>\n" + prop("role", role, "        ") + "      </host>\n"
                   f"      <link id={quoteattr(loop)} bandwidth=\"10GBps\" latency=\"0\"/>\n"
                   f"      <route src={quoteattr(host)} dst={quoteattr(host)}>"
                   f"<link_ctn id={quoteattr(loop)}/></route>\n"
                   "    </zone>\n")
    out.append(f"    <link id=\"link_master\" bandwidth={quoteattr(spec.master_bw)} latency={quoteattr(spec.master_lat)} "
               "sharing_policy=\"FATPIPE\"/>\n")
    out.append(f"    <link id=\"link_pfs\" bandwidth={quoteattr(spec.pfs_bw)} latency={quoteattr(spec.pfs_lat)}/>\n")
    for zone, host, link in (("master_zone", spec.master, "link_master"), ("pfs_zone", spec.pfs, "link_pfs")):
        out.append(f"    <zoneRoute src={quoteattr(zone)} dst={quoteattr(spec.cluster_id)} gw_src={quoteattr(host)} "
                   f"gw_dst={quoteattr(gateway)}>\n      <link_ctn id={quoteattr(link)}/>\n    </zoneRoute>\n")
    out.append(f"    <zoneRoute src=\"master_zone\" dst=\"pfs_zone\" gw_src={quoteattr(spec.master)} "
               f"gw_dst={quoteattr(spec.pfs)}>\n      <link_ctn id=\"link_master\"/><link_ctn id=\"link_pfs\"/>\n"
               "    </zoneRoute>\n")
    out.append("  </zone>\n</platform>\n")
    return "".join(out)


def thesis_spec() -> DragonflySpec:
    """The thesis platform: 108 hosts, 96 compute, 12 burst-buffer nodes of 40 GB."""
    return DragonflySpec()


def small_spec() -> DragonflySpec:
    """A small test platform: topology 2,1;2,1;2,1;2 (16 hosts), one BB node per chassis."""
    return DragonflySpec(groups=2, chassis=2, routers=2, nodes=2, bb_capacity=10 * 10**9)


def spec_from_options(**options) -> DragonflySpec:
    """Build a spec from CLI-like options, converting sizes; unknown keys are rejected."""
    fields = DragonflySpec.__dataclass_fields__
    clean = {}
    for key, value in options.items():
        if value is None:
            continue
        if key not in fields:
            raise InputError(f"--{key}", None, "unknown dragonfly parameter")
        clean[key] = parse_size(value, "--bb-capacity") if key == "bb_capacity" else value
    return DragonflySpec(**clean)
