"""Flat clusters with a master host that Batsim 4.2.1 accepts (``platforms/kth_sp2.xml``).

Layout (``render_xml``)::

    root (routing="Full")
    ├── <cluster id=ID prefix=node_ radical=0-(N-1)>   N compute hosts, private links + backbone
    ├── master_zone (routing="Full")
    │     master_host, link master_loopback, route master_host -> master_host
    ├── link master_link
    └── zoneRoute master_zone <-> ID through master_link (gateways: master_host, ID's router)

Why the master has its own ``routing="Full"`` zone with a route to itself
    Batsim runs its server, request-reply, submitter and waiter actors on the master host and
    sends every internal message as a 1-byte SimGrid communication, including the messages
    between two actors of the master.  The usual Batsim example layout puts the master alone
    in a ``routing="None"`` zone: SimGrid 3.32 (Batsim 4.2.1's) aborts on the first
    master-to-master message ("There can't be route in an Empty zone"), and an explicit
    route without any link is refused ("Empty route ... forbidden").  A ``Full`` zone whose
    only route is master -> master over a loopback link is accepted by SimGrid 3.32 and 4.1
    and by ``coburst sim``.  The loopback link has SimGrid's default loopback
    characteristics (``network/loopback-bw`` 10 GBps, ``network/loopback-lat`` 0), which is
    also what a master in a ``Full`` zone without a route to itself gets implicitly (the
    dragonfly platforms): a master-to-master message costs 1e-10 s.  Checked on the real
    Batsim 4.2.1: same ``_jobs.csv`` as with an implicit loopback.

    The master host keeps Batsim's default name ``master_host`` (no ``-m`` needed) and computes
    at the node speed (it never runs jobs).  A cluster host reaches it through its private
    link, the backbone and ``master_link`` (0.65 ms for the defaults below).

Defaults: the KTH IBM SP2 stand-in of ``coburst demo`` -- 100 nodes of 1 Gflop/s, 1250 MBps /
50 us private links, 2500 MBps / 500 us backbone, 1250 MBps / 100 us master link.
``kth_sp2_spec()`` regenerates ``platforms/kth_sp2.xml`` byte for byte (a test checks it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from coburst.errors import InputError
from coburst.platforms.units import known_options, parse_bandwidth, parse_latency, parse_speed
from coburst.platforms.xml import HEADER

__all__ = ["ClusterSpec", "kth_sp2_spec", "render_xml", "spec_from_options"]



@dataclass(frozen=True)
class ClusterSpec:
    """Every parameter of a flat cluster platform (defaults: the KTH SP2 stand-in)."""

    nodes: int = 100
    cluster_id: str = "sp2"
    prefix: str = "node_"
    speed: str = "1Gf"
    bw: str = "1250MBps"
    lat: str = "50us"
    backbone_bw: str = "2500MBps"
    backbone_lat: str = "500us"
    master: str = "master_host"
    master_bw: str = "1250MBps"
    master_lat: str = "100us"
    loopback_bw: str = "10GBps"
    loopback_lat: str = "0"
    description: str = ""


def kth_sp2_spec() -> ClusterSpec:
    """``platforms/kth_sp2.xml``: 100 nodes standing for the KTH IBM SP2."""
    return ClusterSpec(description="A 100-node flat cluster standing for the KTH IBM SP2 of the KTH-SP2-1996 log "
                                   "(Parallel Workloads Archive).")


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")


def validate(spec: ClusterSpec) -> None:
    """Raise :class:`InputError` naming the faulty option."""
    if isinstance(spec.nodes, bool) or not isinstance(spec.nodes, int) or spec.nodes < 1:
        raise InputError("--nodes", None, f"must be an integer >= 1, got {spec.nodes!r}")
    for opt, value in (("--id", spec.cluster_id), ("--master", spec.master)):
        if not _NAME.match(value):
            raise InputError(opt, None, f"not a valid SimGrid identifier: {value!r}")
    if spec.prefix and not _NAME.match(spec.prefix):
        raise InputError("--prefix", None, f"not a valid host name prefix: {spec.prefix!r}")
    if spec.master.startswith(spec.prefix) and spec.master[len(spec.prefix):].isdigit():
        raise InputError("--master", None, f"{spec.master!r} is also the name of a cluster host")
    if parse_speed(spec.speed, "--speed") <= 0:
        raise InputError("--speed", None, "must be > 0")
    for opt, text in (("--bw", spec.bw), ("--backbone-bw", spec.backbone_bw), ("--master-bw", spec.master_bw),
                      ("--loopback-bw", spec.loopback_bw)):
        if parse_bandwidth(text, opt) <= 0:
            raise InputError(opt, None, "must be > 0 (Batsim sends 1-byte messages over every route)")
    for opt, text in (("--lat", spec.lat), ("--backbone-lat", spec.backbone_lat), ("--master-lat", spec.master_lat),
                      ("--loopback-lat", spec.loopback_lat)):
        parse_latency(text, opt)
    if "--" in spec.description:
        raise InputError("--description", None, "cannot contain '--' (XML comment)")


def render_xml(spec: ClusterSpec, command: str | None = None) -> str:
    """The platform XML (module doc)."""
    validate(spec)
    q = quoteattr
    router = f"{spec.prefix}{spec.cluster_id}_router"  # SimGrid's name for a flat cluster's router
    out = [HEADER]
    if spec.description:
        out.append(f"<!-- {escape(spec.description)} -->\n")
    out.append("<!-- Master host in its own routing=\"Full\" zone with a loopback route to itself: Batsim 4.2.1 "
               "(SimGrid 3.32) aborts on a master alone in a routing=\"None\" zone "
               "(coburst/platforms/cluster.py). -->\n")
    out.append("<platform version=\"4.1\">\n  <zone id=\"root\" routing=\"Full\">\n")
    if command:
        out.append(f"    <prop id=\"generated_by\" value={q(command)}/>\n")
    out.append(f"    <cluster id={q(spec.cluster_id)} prefix={q(spec.prefix)} suffix=\"\" "
               f"radical={q(f'0-{spec.nodes - 1}')} speed={q(spec.speed)}\n"
               f"             bw={q(spec.bw)} lat={q(spec.lat)} bb_bw={q(spec.backbone_bw)} "
               f"bb_lat={q(spec.backbone_lat)}/>\n")
    out.append(f"    <zone id=\"master_zone\" routing=\"Full\">\n"
               f"      <host id={q(spec.master)} speed={q(spec.speed)}/>\n"
               f"      <link id=\"master_loopback\" bandwidth={q(spec.loopback_bw)} latency={q(spec.loopback_lat)}/>\n"
               f"      <route src={q(spec.master)} dst={q(spec.master)}><link_ctn id=\"master_loopback\"/></route>\n"
               f"    </zone>\n")
    out.append(f"    <link id=\"master_link\" bandwidth={q(spec.master_bw)} latency={q(spec.master_lat)}/>\n")
    out.append(f"    <zoneRoute src=\"master_zone\" dst={q(spec.cluster_id)} gw_src={q(spec.master)} "
               f"gw_dst={q(router)}>\n      <link_ctn id=\"master_link\"/>\n    </zoneRoute>\n")
    out.append("  </zone>\n</platform>\n")
    return "".join(out)


def spec_from_options(**options) -> ClusterSpec:
    """A spec from CLI-like options (``None`` = default); unknown keys are rejected."""
    spec = ClusterSpec(**known_options(ClusterSpec, options, "cluster"))
    validate(spec)
    return spec
