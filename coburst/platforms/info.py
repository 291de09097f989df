"""Read what the workload side needs from a SimGrid platform XML, without SimGrid.

The SWF converter needs the number of compute hosts, their speed, the compute network
bandwidth and the burst-buffer nodes with their capacity.  :func:`read_platform` reads
them from the host and zone properties written by :mod:`coburst.platforms.dragonfly`
and also understands plain SimGrid files (``<host>`` and ``<cluster>`` elements).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from coburst.errors import InputError
from coburst.platforms.units import parse_bandwidth, parse_speed


@dataclass
class HostInfo:
    name: str
    speed: float
    properties: dict[str, str] = field(default_factory=dict)

    @property
    def role(self) -> str:
        return self.properties.get("role", "")


@dataclass
class PlatformInfo:
    """The hosts of a platform, split as Batsim 4.2 splits them."""

    path: str
    hosts: list[HostInfo]
    zone_properties: dict[str, str]
    master: str = "master_host"
    link_bandwidth: float | None = None  # compute network, bytes/s

    @property
    def compute(self) -> list[HostInfo]:
        return [h for h in self.hosts if h.name != self.master and h.role in ("", "compute", "compute_node")]

    @property
    def storage(self) -> list[HostInfo]:
        return [h for h in self.hosts if h.name != self.master and "storage" in h.role.split(",")]

    @property
    def burst_buffers(self) -> list[HostInfo]:
        return [h for h in self.storage if "bb_capacity" in h.properties]

    @property
    def nb_compute(self) -> int:
        return len(self.compute)

    @property
    def host_speed(self) -> float:
        speeds = {h.speed for h in self.compute}
        if not speeds:
            raise InputError(self.path, None, "the platform has no compute host")
        if len(speeds) > 1:
            raise InputError(self.path, None, f"compute hosts have different speeds {sorted(speeds)}; "
                             "the job models need one host speed")
        return speeds.pop()

    @property
    def bb_capacity(self) -> int:
        """Capacity of one burst-buffer node (the smallest, if they differ), 0 without BB."""
        caps = []
        for h in self.burst_buffers:
            text = h.properties["bb_capacity"].strip()
            if not re.fullmatch(r"\d+", text):
                raise InputError(self.path, f"<host id='{h.name}'> property bb_capacity",
                                 f"expected a whole number of bytes, got {text!r}")
            caps.append(int(text))
        return min(caps) if caps else 0

    @property
    def nb_bb(self) -> int:
        return len(self.burst_buffers)


def _props(elem: ET.Element) -> dict[str, str]:
    return {p.get("id", ""): p.get("value", "") for p in elem.findall("prop")}


def _radicals(text: str, source: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if re.fullmatch(r"\d+-\d+", part):
            lo, hi = (int(x) for x in part.split("-"))
            out.extend(range(lo, hi + 1))
        elif re.fullmatch(r"\d+", part):
            out.append(int(part))
        else:
            raise InputError(source, "<cluster radical>", f"cannot read radical {text!r}")
    return out


def _file_roles(source: str, root: ET.Element) -> dict[str, str]:
    from coburst.platforms.roles import ROLES_PROPERTY, merge_roles

    items = [item for zone in root.iter() if zone.tag in ("zone", "AS")
             for p in zone.findall("prop") if p.get("id") == ROLES_PROPERTY for item in p.get("value", "").split()]
    return merge_roles(source, items, {}) if items else {}


def role_arguments(path: str | Path) -> list[str]:
    """The real Batsim's ``-r`` options for the roles the file carries (``[]``: none)."""
    from coburst.platforms.roles import batsim_arguments, file_role_items

    return batsim_arguments(file_role_items(path))


def read_platform(path: str | Path, master: str = "master_host") -> PlatformInfo:
    """Parse ``path`` and return its hosts (with properties) and root-zone properties.

    The master is the host named ``master`` (Batsim 4.2's ``--master-host``, default
    ``master_host``) or the host tagged ``role=master``.
    """
    source = str(path)
    try:
        root = ET.parse(source).getroot()
    except FileNotFoundError:
        raise InputError(source, None, "platform file not found") from None
    except ET.ParseError as exc:
        line, col = exc.position
        raise InputError(source, f"line {line} column {col}", f"invalid XML: {exc}") from None
    if root.tag != "platform":
        raise InputError(source, None, f"root element is <{root.tag}>, expected <platform>")
    hosts: list[HostInfo] = []
    bandwidths: list[float] = []
    zone_props: dict[str, str] = {}
    first_zone = root.find("zone")
    if first_zone is None:
        first_zone = root.find("AS")
    if first_zone is not None:
        zone_props = _props(first_zone)
    for elem in root.iter():
        if elem.tag == "host":
            name = elem.get("id", "")
            speed_text = (elem.get("speed") or "0").split(",")[0]
            hosts.append(HostInfo(name, parse_speed(speed_text, f"{source}: <host id='{name}'> speed"),
                                  _props(elem)))
        elif elem.tag == "cluster":
            cid = elem.get("id", "")
            speed = parse_speed((elem.get("speed") or "0").split(",")[0], f"{source}: <cluster id='{cid}'> speed")
            props = _props(elem)
            for rad in _radicals(elem.get("radical", ""), source):
                hosts.append(HostInfo(f"{elem.get('prefix', '')}{rad}{elem.get('suffix', '')}", speed, dict(props)))
            if elem.get("bw"):
                bandwidths.append(parse_bandwidth(elem.get("bw"), f"{source}: <cluster id='{cid}'> bw"))
    roles = _file_roles(source, root)
    if roles:  # coburst-roles zone properties (the linear dragonfly): as coburst sim applies them
        dragonfly = zone_props.get("coburst_platform") == "dragonfly"
        for h in hosts:
            if h.name in roles:
                h.properties = {**h.properties, "role": roles[h.name]}
                if dragonfly and roles[h.name] == "storage" and "bb_capacity" in zone_props \
                        and h.name != zone_props.get("pfs", "pfs"):
                    h.properties["bb_capacity"] = zone_props["bb_capacity"]
    names = [h.name for h in hosts]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputError(source, None, f"duplicate host names: {', '.join(dupes[:5])}")
    bandwidth = None
    if "link_bandwidth" in zone_props:
        text = zone_props["link_bandwidth"]
        try:
            bandwidth = float(text)
        except ValueError:
            bandwidth = float("nan")
        if not (bandwidth > 0 and bandwidth != float("inf")):
            raise InputError(source, "root zone property link_bandwidth",
                             f"expected a positive number of bytes per second, got {text!r}")
    elif bandwidths:
        bandwidth = min(bandwidths)
    masters = sorted({h.name for h in hosts if h.name == master or h.role == "master"})
    if len(masters) > 1:
        raise InputError(source, None, f"several master hosts ({', '.join(masters)}): the host named {master!r} "
                         "and the hosts tagged role=master must be one host")
    master = masters[0] if masters else master
    return PlatformInfo(path=source, hosts=hosts, zone_properties=zone_props, master=master,
                        link_bandwidth=bandwidth)
