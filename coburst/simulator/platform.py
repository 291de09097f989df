"""Platform loading: SimGrid XML loaded by SimGrid itself, Batsim 4.2 roles and ids.

* The master host is the host named ``-m NAME`` (default ``master``) or the host whose
  ``role`` property is ``master``; it is never a resource.
* Every other host is a resource.  Its role is ``storage`` when its ``role`` property says
  so or ``-r`` gives it; otherwise ``compute``.
* Resource ids follow SimGrid's host order in Batsim 4, which is lexicographic by host
  name (``node_0, node_1, node_10, node_100, ...``), compute and storage hosts in one id
  space, so that a scheduler file means the same hosts on both engines.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from coburst.errors import InputError


@dataclass
class Resource:
    id: int
    name: str
    role: str  # "compute" or "storage"
    properties: dict[str, str]
    host: object = field(repr=False, default=None)  # simgrid.Host


@dataclass
class Machines:
    master: object  # simgrid.Host
    resources: list[Resource]

    @property
    def compute(self) -> list[Resource]:
        return [r for r in self.resources if r.role == "compute"]

    @property
    def storage(self) -> list[Resource]:
        return [r for r in self.resources if r.role == "storage"]

    def by_name(self, name: str) -> Resource | None:
        for res in self.resources:
            if res.name == name:
                return res
        return None


def check_xml(path: str | Path) -> None:
    """Fail early, with file/line/column, on a platform SimGrid would choke on.

    SimGrid aborts the whole process on some malformed files, so the obvious problems
    (missing file, not XML, wrong root element) are caught here first.
    """
    source = str(path)
    p = Path(path)
    if not p.is_file():
        raise InputError(source, None, "platform file not found")
    try:
        root = ET.parse(p).getroot()
    except ET.ParseError as exc:
        line, col = exc.position
        raise InputError(source, f"line {line} column {col + 1}", f"malformed XML: {exc.msg if hasattr(exc, 'msg') else exc}") from None
    if root.tag != "platform":
        raise InputError(source, "line 1", f"root element is <{root.tag}>, expected <platform>")
    version = root.get("version")
    if version is None or not version.replace(".", "").isdigit():
        raise InputError(source, "<platform>", f"missing or invalid version attribute ({version!r}); SimGrid needs e.g. version=\"4.1\"")


def assign_resources(engine, source: str, master_name: str, roles: dict[str, str]) -> Machines:
    """Classify the loaded hosts into master, compute and storage resources."""
    hosts = sorted(engine.all_hosts, key=lambda h: h.name)
    by_name = {h.name: h for h in hosts}
    for name in roles:
        if name not in by_name:
            raise InputError("-r/--add-role-to-hosts", name, f"no host named {name!r} in {source}")
    masters = []
    for host in hosts:
        props = host.get_properties() if hasattr(host, "get_properties") else {}
        role = roles.get(host.name, props.get("role"))
        if host.name == master_name and props.get("role") == "master":
            raise InputError(source, f"host {host.name!r}",
                             f"the master host is both named {master_name!r} (-m) and tagged role=master; "
                             "Batsim 4.2 rejects this: keep only one of the two")
        if host.name == master_name or role == "master":
            masters.append(host)
    if not masters:
        raise InputError(source, None, f"no master host: name a host {master_name!r} (or pass -m NAME) "
                                       "or give one host the property role=master")
    if len(masters) > 1:
        names = ", ".join(h.name for h in masters)
        raise InputError(source, None, f"several master hosts ({names}): a host named {master_name!r} and "
                                       "role=master must designate exactly one host, once")
    master = masters[0]
    resources: list[Resource] = []
    storage: list[Resource] = []
    for host in hosts:
        if host is master:
            continue
        props = dict(host.get_properties())
        role = roles.get(host.name, props.get("role", ""))
        if role not in ("", "compute", "compute_node", "storage"):
            raise InputError(source, f"host {host.name!r}", f"unknown role {role!r} (expected compute, storage or master)")
        # Batsim always announces a "role" property ("" for plain compute hosts)
        props["role"] = "storage" if role == "storage" else props.get("role", "")
        kind = "storage" if role == "storage" else "compute"
        if kind == "compute" and host.speed <= 0:
            raise InputError(source, f"host {host.name!r}", "a compute host needs a speed > 0 "
                             "(give storage hosts the property role=storage)")
        (storage if kind == "storage" else resources).append(
            Resource(id=-1, name=host.name, role=kind, properties=props, host=host))
    # Batsim 4.2: compute hosts get ids 0..C-1, then storage hosts C..C+S-1, each group in
    # SimGrid's (lexicographic) host order
    resources.extend(storage)
    for rid, res in enumerate(resources):
        res.id = rid
    if not any(r.role == "compute" for r in resources):
        raise InputError(source, None, "the platform has no compute host")
    return Machines(master=master, resources=resources)


def master_zone_routing(path: str | Path, master: str) -> str | None:
    """The ``routing`` attribute of the zone that directly holds host ``master``."""
    root = ET.parse(path).getroot()
    for zone in root.iter():
        if zone.tag in ("zone", "AS"):
            for child in zone:
                if child.tag == "host" and child.get("id") == master:
                    return zone.get("routing")
    return None
