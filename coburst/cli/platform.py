"""``coburst platform``: generate and inspect SimGrid platforms.

``coburst platform dragonfly`` writes a dragonfly platform with burst-buffer nodes and a
PFS (Kopański 2020, §2.2); ``coburst platform cluster`` a flat cluster with a master host
(``platforms/kth_sp2.xml``); ``coburst platform hetero`` a heterogeneous cluster (node types
of their own speed, cores and power; Sánchez Sousa 2023, Tables 2-5) and ``coburst platform
from-irmasim`` converts an IRMaSim modelV1 ``platform.json`` to one; ``coburst platform
info`` summarises any platform file.
"""

from __future__ import annotations

import argparse
import shlex
import sys

from coburst.fileio import atomic_write
from coburst.validate import PLATFORM_COUNT, SEED, check_output, read_bytes

#: largest generated platform, in hosts (an explicit 1M-host XML is already ~200 MB)
MAX_HOSTS = 1_000_000


def _check_size(hosts: int) -> None:
    if hosts > MAX_HOSTS:
        from coburst.errors import InputError

        raise InputError("--nodes", None, f"the platform would have {hosts} hosts; coburst generates at most "
                                          f"{MAX_HOSTS}")


def _emit(args: argparse.Namespace, text: str, summary: str) -> int:
    """Write ``text`` to ``-o`` atomically (then ``summary`` on standard error) or to standard output."""
    if args.output in (None, "-"):
        sys.stdout.write(text)
    else:
        with atomic_write(args.output) as handle:
            handle.write(text)
        print(f"wrote {args.output}: {summary}", file=sys.stderr)
    return 0


def _dragonfly(args: argparse.Namespace) -> int:
    if args.output not in (None, "-"):
        check_output(args.output, "-o/--output")
    from coburst.platforms.dragonfly import parse_topology, render_cluster_xml, render_xml, spec_from_options

    options = {
        "groups": args.groups, "chassis": args.chassis, "routers": args.routers, "nodes": args.nodes,
        "speed": args.speed, "bw": args.bw, "lat": args.lat, "loopback_bw": args.loopback_bw,
        "loopback_lat": args.loopback_lat, "bb_per_chassis": args.bb_per_chassis, "bb_capacity": args.bb_capacity,
        "pfs_bw": args.pfs_bw, "pfs_lat": args.pfs_lat, "master_bw": args.master_bw, "master_lat": args.master_lat,
        "master": args.master, "prefix": args.prefix,
    }
    if args.topo:
        topo = parse_topology(args.topo)
        for key in ("groups", "chassis", "routers", "nodes"):
            if options[key] is not None and options[key] != topo[key]:
                from coburst.errors import InputError

                raise InputError(f"--{key}", None, f"contradicts --topo {args.topo!r}")
        options.update(topo)
    spec = spec_from_options(**options)
    _check_size(spec.host_count)
    command = _command_line(args)
    render = render_cluster_xml if args.style == "cluster" else render_xml
    bb = spec.groups * spec.chassis * spec.bb_per_chassis
    summary = f"{spec.host_count} hosts ({spec.host_count - bb} compute, {bb} burst-buffer), topology " \
              f"{spec.topo_parameters}"
    if args.style == "cluster" and bb:
        from coburst.platforms.dragonfly import storage_roles

        summary += f"; the real Batsim needs -r {storage_roles(spec)}"
    return _emit(args, render(spec, command), summary)


def _cluster(args: argparse.Namespace) -> int:
    if args.output not in (None, "-"):
        check_output(args.output, "-o/--output")
    from coburst.platforms.cluster import kth_sp2_spec, render_xml, spec_from_options

    spec = spec_from_options(
        nodes=args.nodes, cluster_id=args.id, prefix=args.prefix, speed=args.speed, bw=args.bw, lat=args.lat,
        backbone_bw=args.backbone_bw, backbone_lat=args.backbone_lat, master=args.master, master_bw=args.master_bw,
        master_lat=args.master_lat, loopback_bw=args.loopback_bw, loopback_lat=args.loopback_lat,
        description=args.description if not args.kth_sp2 else kth_sp2_spec().description)
    _check_size(spec.nodes)
    command = _command_line(args)
    return _emit(args, render_xml(spec, command), f"{spec.nodes} compute hosts, master host {spec.master!r}")


#: bandwidth of every link of ``platform cosched --zero-latency`` (1 byte: 1e-30 s)
ZERO_LATENCY_BW = "1e30Bps"


def _cosched(args: argparse.Namespace) -> int:
    if args.output not in (None, "-"):
        check_output(args.output, "-o/--output")
    from coburst.platforms.cosched import aris_small_spec, choose_layout, render_xml, spec_from_options

    if args.zero_latency:  # ELiSE's model: no network, a job starts and ends at the decision's date
        lats = ("link_lat", "backbone_lat", "membus_lat", "master_lat", "loopback_lat")
        given = [f"--{k.replace('_', '-')}" for k in lats if getattr(args, k) is not None]
        if given:
            from coburst.errors import InputError
            raise InputError("--zero-latency", None, f"sets every latency to 0: do not give {', '.join(given)}")
        for k in lats:
            setattr(args, k, "0")
        for k in ("link_bw", "backbone_bw", "membus_bw", "master_bw", "loopback_bw"):
            if getattr(args, k) is None:  # Batsim's 1-byte messages then take 1e-30 s: no date moves
                setattr(args, k, ZERO_LATENCY_BW)
    spec = spec_from_options(
        nodes=args.nodes, preset=args.preset, sockets=args.sockets, cores=args.cores, unit=args.unit,
        core_speed=args.core_speed, link_bw=args.link_bw, link_lat=args.link_lat, backbone_bw=args.backbone_bw,
        backbone_lat=args.backbone_lat, membus_bw=args.membus_bw, membus_lat=args.membus_lat, master=args.master,
        master_bw=args.master_bw, master_lat=args.master_lat, loopback_bw=args.loopback_bw,
        loopback_lat=args.loopback_lat, bb_nodes=args.bb_nodes, bb_capacity=args.bb_capacity, bb_bw=args.bb_bw,
        pfs_bw=args.pfs_bw,
        description=args.description if not args.aris_small else aris_small_spec().description)
    _check_size(spec.nb_units)  # nb_units = nodes x units per node
    command = _command_line(args)
    layout = choose_layout(spec, args.layout or ("full" if args.aris_small else None))
    return _emit(args, render_xml(spec, command, layout=layout),
                 f"{spec.nodes} nodes x {spec.nb_sockets} sockets x {spec.cores_per_socket} cores, "
                 f"{spec.nb_units} {spec.unit} units (Batsim resources), master host {spec.master!r}, "
                 f"{layout} layout")


def _command_line(args: argparse.Namespace) -> str | None:
    return "coburst platform " + " ".join(shlex.quote(a) for a in sys.argv[2:]) if args.record_command else None


def _network(args: argparse.Namespace) -> dict[str, str]:
    return {k: v for k, v in (("master", args.master), ("link_bw", args.link_bw), ("link_lat", args.link_lat),
                              ("master_bw", args.master_bw), ("master_lat", args.master_lat)) if v is not None}


def _write_hetero(args: argparse.Namespace, plat) -> int:
    from coburst.platforms.hetero import render_xml

    types = {n.type for n in plat.nodes}
    return _emit(args, render_xml(plat, _command_line(args)),
                 f"{len(plat.nodes)} nodes, {plat.nb_cores} cores (Batsim resources), {len(types)} node types, "
                 f"master host {plat.master!r}")


def _hetero(args: argparse.Namespace) -> int:
    from coburst.errors import InputError
    from coburst.platforms.hetero import build, load_spec, preset

    if args.output not in (None, "-"):
        check_output(args.output, "-o/--output")
    if (args.preset is None) == (args.spec is None):
        raise InputError("--preset/--spec", None, "give exactly one: a preset (low16, high16, dist0, dist1) or a "
                                                  "node-type spec file")
    if args.preset is not None:
        plat = preset(args.preset, 0 if args.seed is None else args.seed, **_network(args))
    else:
        types, extra = load_spec(args.spec)
        seed = args.seed if args.seed is not None else extra.get("seed", 0)
        plat = build(types, seed, description=extra.get("description", f"node types of {args.spec}"),
                     **_network(args))
    if args.description is not None:
        from dataclasses import replace

        from coburst.platforms.hetero import validate

        plat = replace(plat, description=args.description)
        validate(plat)
    return _write_hetero(args, plat)


def _from_irmasim(args: argparse.Namespace) -> int:
    if args.output not in (None, "-"):
        check_output(args.output, "-o/--output")
    from coburst.platforms.irmasim import convert

    plat = convert(args.platform, name=args.platform_name, library=args.library, **_network(args))
    return _write_hetero(args, plat)


def _hetero_network_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--output", help="output XML file (default: standard output)")
    p.add_argument("--master", help="name of the master host (default master_host, Batsim's default -m)")
    p.add_argument("--link-bw", help="bandwidth of a node's network port, shared by its cores (default 1250MBps)")
    p.add_argument("--link-lat", help="latency of a node's network port (default 50us)")
    p.add_argument("--master-bw", help="bandwidth of the master link (default 1250MBps)")
    p.add_argument("--master-lat", help="latency of the master link (default 100us)")
    p.add_argument("--no-record-command", dest="record_command", action="store_false",
                   help="do not write the command line into the XML")


def _info(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from coburst.platforms.info import read_platform

    read_bytes(args.platform, "platform file")
    info = read_platform(args.platform, master=args.master)
    if args.batsim_roles:  # just the real Batsim's -r options: batsim -p F $(coburst platform info --batsim-roles F)
        from coburst.platforms.info import role_arguments

        print(" ".join(shlex.quote(a) for a in role_arguments(args.platform)))
        return 0
    console = Console()
    table = Table(title=f"{args.platform}")
    table.add_column("what")
    table.add_column("value", overflow="fold")
    table.add_row("hosts", str(len(info.hosts)))
    table.add_row("compute hosts", str(info.nb_compute))
    table.add_row("storage hosts", ", ".join(h.name for h in info.storage) or "-")
    table.add_row("burst-buffer nodes", f"{info.nb_bb} x {info.bb_capacity} bytes" if info.nb_bb else "-")
    table.add_row("master host", info.master)
    from coburst.platforms.info import role_arguments

    roles = role_arguments(args.platform)
    if roles:  # the file's coburst-roles: coburst sim applies them, the real Batsim needs them as -r
        table.add_row("real Batsim needs", " ".join(shlex.quote(a) for a in roles))
    if info.nb_compute:
        speeds = sorted({h.speed for h in info.compute})
        if len(speeds) == 1:
            table.add_row("compute host speed", f"{speeds[0]:.6g} flop/s")
        else:  # heterogeneous platforms (coburst platform hetero)
            table.add_row("compute host speeds", f"{speeds[0]:.6g} .. {speeds[-1]:.6g} flop/s ({len(speeds)} distinct)")
    if info.link_bandwidth:
        table.add_row("link bandwidth", f"{info.link_bandwidth:.6g} B/s")
    for key, value in info.zone_properties.items():
        table.add_row(f"zone property {key}", value)
    console.print(table)
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("platform", help="generate or inspect SimGrid platforms",
                                   description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="platform_command", metavar="KIND")
    sub.required = True

    df = sub.add_parser("dragonfly", help="dragonfly cluster with burst-buffer nodes, a PFS and a master host",
                        description="Write a SimGrid dragonfly platform (defaults: the thesis' 108-host platform, "
                                    "Kopański 2020, Listing 1) with burst-buffer nodes and a PFS.")
    df.add_argument("-o", "--output", help="output XML file (default: standard output)")
    df.add_argument("--topo", help="SimGrid topo_parameters 'G,g;C,c;R,r;N' (default 3,1;4,1;3,1;3)")
    df.add_argument("--groups", type=PLATFORM_COUNT, help="groups (default 3)")
    df.add_argument("--chassis", type=PLATFORM_COUNT, help="chassis per group (default 4)")
    df.add_argument("--routers", type=PLATFORM_COUNT, help="routers per chassis (default 3)")
    df.add_argument("--nodes", type=PLATFORM_COUNT, help="nodes per router (default 3)")
    df.add_argument("--speed", help="host speed (default 1Gf)")
    df.add_argument("--bw", help="link bandwidth (default 1250MBps)")
    df.add_argument("--lat", help="link latency (default 50us)")
    df.add_argument("--loopback-bw", help="loopback bandwidth (default 1000MBps)")
    df.add_argument("--loopback-lat", help="loopback latency (default 0)")
    df.add_argument("--bb-per-chassis", type=PLATFORM_COUNT, help="burst-buffer nodes per chassis (default 1)")
    df.add_argument("--bb-capacity", help="capacity of one burst-buffer node, e.g. 40GB (default)")
    df.add_argument("--pfs-bw", help="bandwidth of the shared PFS link (default 5000MBps)")
    df.add_argument("--pfs-lat", help="latency of the PFS link (default 100us)")
    df.add_argument("--master-bw", help="bandwidth of the master link (default 1250MBps)")
    df.add_argument("--master-lat", help="latency of the master link (default 100us)")
    df.add_argument("--master", help="name of the master host (default master)")
    df.add_argument("--prefix", help="host name prefix (default node_)")
    df.add_argument("--style", choices=("explicit", "cluster"), default="explicit",
                    help="explicit: Full routing with per-host properties, one route per pair of hosts (default; "
                         "1000 hosts: ~260 MB); cluster: SimGrid's <cluster topology=DRAGONFLY> (1000 hosts: ~3 KB), "
                         "the burst-buffer roles in a coburst-roles zone property (the real Batsim needs them as -r, "
                         "see coburst platform info); same node-to-node routes, but routes to the master and the "
                         "PFS cross the dragonfly from a gateway host: dates differ from the explicit form")
    df.add_argument("--no-record-command", dest="record_command", action="store_false",
                    help="do not write the command line into the XML")
    df.set_defaults(func=_dragonfly)

    cl = sub.add_parser("cluster", help="flat cluster with a master host that Batsim 4.2 accepts (kth_sp2.xml)",
                        description="A SimGrid <cluster> of compute nodes and a master host in its own "
                                    "routing=Full zone with a loopback route (coburst/platforms/cluster.py). "
                                    "Defaults: platforms/kth_sp2.xml.")
    cl.add_argument("-o", "--output", help="output XML file (default: standard output)")
    cl.add_argument("--nodes", type=PLATFORM_COUNT, help="compute nodes (default 100)")
    cl.add_argument("--id", help="cluster id (default sp2)")
    cl.add_argument("--prefix", help="host name prefix (default node_)")
    cl.add_argument("--speed", help="host speed (default 1Gf)")
    cl.add_argument("--bw", help="private link bandwidth (default 1250MBps)")
    cl.add_argument("--lat", help="private link latency (default 50us)")
    cl.add_argument("--backbone-bw", help="backbone bandwidth (default 2500MBps)")
    cl.add_argument("--backbone-lat", help="backbone latency (default 500us)")
    cl.add_argument("--master", help="name of the master host (default master_host, Batsim's default -m)")
    cl.add_argument("--master-bw", help="bandwidth of the master link (default 1250MBps)")
    cl.add_argument("--master-lat", help="latency of the master link (default 100us)")
    cl.add_argument("--loopback-bw", help="bandwidth of the master's loopback (default 10GBps, SimGrid's default)")
    cl.add_argument("--loopback-lat", help="latency of the master's loopback (default 0)")
    cl.add_argument("--description", help="comment written at the top of the file")
    cl.add_argument("--kth-sp2", action="store_true",
                    help="the description of platforms/kth_sp2.xml (with the defaults: that file)")
    cl.add_argument("--no-record-command", dest="record_command", action="store_false",
                    help="do not write the command line into the XML")
    cl.set_defaults(func=_cluster)

    co = sub.add_parser("cosched", help="node-sharing platform: one resource per core or half socket (co-scheduling)",
                        description="A co-scheduling platform: nodes x sockets x cores, one Batsim resource per "
                                    "allocatable unit (half socket or core), the units of a node behind a memory "
                                    "bus, a cluster network and a master host (coburst/platforms/cosched.py). "
                                    "Defaults: platforms/aris_cosched_small.xml.")
    co.add_argument("-o", "--output", help="output XML file (default: standard output)")
    co.add_argument("--nodes", type=PLATFORM_COUNT, help="nodes (default 8)")
    co.add_argument("--preset", help="node shape: aris (2x10, default), marconi (2x24), grvingt (2x16), custom")
    co.add_argument("--sockets", type=PLATFORM_COUNT, help="sockets per node (without --preset: a custom shape)")
    co.add_argument("--cores", type=PLATFORM_COUNT, help="cores per socket (without --preset: a custom shape)")
    co.add_argument("--unit", help="allocatable unit = Batsim resource: half-socket (default) or core")
    co.add_argument("--core-speed", help="speed of one core (default 1Gf); a unit computes at this x its cores")
    co.add_argument("--link-bw", help="bandwidth of a node's network link (default 6GBps)")
    co.add_argument("--link-lat", help="latency of a node's network link (default 1us)")
    co.add_argument("--backbone-bw", help="backbone bandwidth (default 24GBps)")
    co.add_argument("--backbone-lat", help="backbone latency (default 1us)")
    co.add_argument("--membus-bw", help="bandwidth of a node's memory bus, shared by its units (default 50GBps)")
    co.add_argument("--membus-lat", help="latency of a node's memory bus (default 0)")
    co.add_argument("--master", help="name of the master host (default master_host, Batsim's default -m)")
    co.add_argument("--master-bw", help="bandwidth of the master link (default 1250MBps)")
    co.add_argument("--master-lat", help="latency of the master link (default 100us)")
    co.add_argument("--loopback-bw", help="bandwidth of the master's loopback (default 10GBps, SimGrid's default)")
    co.add_argument("--loopback-lat", help="latency of the master's loopback (default 0)")
    co.add_argument("--zero-latency", action="store_true",
                    help="no network time, as in ELiSE (comparisons with ELiSE): every latency 0 (links, "
                         f"backbone, memory bus, master, loopback) and every bandwidth not given {ZERO_LATENCY_BW}, "
                         "so that Batsim's 1-byte messages move no date: jobs start at their decision's date and "
                         "jobs ending together are reported in one message")
    co.add_argument("--description", help="comment written at the top of the file")
    co.add_argument("--bb-nodes", type=int, help="burst-buffer storage hosts, plus a PFS host (default 0: none)")
    co.add_argument("--bb-capacity", help="capacity of one burst-buffer host, e.g. 40GB (default)")
    co.add_argument("--bb-bw", help="bandwidth of a burst-buffer host's link (default 6GBps)")
    co.add_argument("--pfs-bw", help="bandwidth of the PFS host's link (default 5000MBps)")
    co.add_argument("--aris-small", action="store_true",
                    help="the description of platforms/aris_cosched_small.xml (with the defaults: that file, "
                         "full layout)")
    co.add_argument("--layout", choices=("linear", "full"),
                    help="linear (default): O(nodes) routes through a hub zone (800 Grvingt nodes: 2 MB); full: "
                         "one zoneRoute per pair of nodes (55 MB); same routes, same dates. Without --layout, "
                         "latencies the linear layout cannot add up exactly as the full one get the full layout")
    co.add_argument("--no-record-command", dest="record_command", action="store_false",
                    help="do not write the command line into the XML")
    co.set_defaults(func=_cosched)

    he = sub.add_parser("hetero", help="heterogeneous cluster: node types with their own cores, speed and power",
                        description="A heterogeneous cluster, one Batsim resource per core, host speed = clock x "
                                    "flops per cycle, Batsim energy properties (coburst/platforms/hetero.py). "
                                    "Presets: Sanchez Sousa 2023, Tables 2-5 (low16, high16: 16 single-core nodes "
                                    "with clocks drawn in the tables' ranges; dist0, dist1: the distributed "
                                    "heterogeneity platforms). Or --spec FILE: node types in TOML or JSON.")
    he.add_argument("--preset", choices=("low16", "high16", "dist0", "dist1"),
                    help="Table 2 (low16), Table 3 (high16), Table 4 (dist0), Table 5 (dist1)")
    he.add_argument("--spec", help="node-type spec, TOML (or JSON for a .json name): [[types]] with id, count, "
                                   "cores, clock (GHz or [lo, hi]), flops_per_cycle, static_power, dynamic_power, "
                                   "min_power, mem, mem_bw (module doc of coburst/platforms/hetero.py)")
    he.add_argument("--seed", type=SEED, help="seed of the clock draws (default 0, or the spec's seed); same seed, "
                                              "same bytes")
    he.add_argument("--description", help="comment written at the top of the file")
    _hetero_network_options(he)
    he.set_defaults(func=_hetero)

    ir = sub.add_parser("from-irmasim", help="convert an IRMaSim modelV1 platform.json to a heterogeneous platform",
                        description="Convert an IRMaSim modelV1 platform (platform.json, with its node and "
                                    "processor types) to SimGrid XML: one resource per core, speed = clock_rate x "
                                    "dpflops_per_cycle, power from static/dynamic/min_power "
                                    "(coburst/platforms/irmasim.py).")
    ir.add_argument("platform", help="IRMaSim platform.json")
    ir.add_argument("--platform-name", help="the platform to convert when the file defines several")
    ir.add_argument("--library", help="IRMaSim platform library folder (node_types.json, processor_types.json, "
                                      "platforms.json) for types the file does not define")
    _hetero_network_options(ir)
    ir.set_defaults(func=_from_irmasim)

    info = sub.add_parser("info", help="summarise a platform file (hosts, roles, burst buffers)")
    info.add_argument("platform", help="SimGrid platform XML")
    info.add_argument("-m", "--master", default="master_host",
                      help="name of the master host besides role=master (default master_host, as Batsim 4.2)")
    info.add_argument("--batsim-roles", action="store_true",
                      help="print only the -r options the real Batsim needs for the roles the file carries "
                           "(its coburst-roles zone properties; nothing when it has none): "
                           "batsim -p FILE $(coburst platform info --batsim-roles FILE) ...")
    info.set_defaults(func=_info)
