"""Host roles carried inside a platform file: the ``coburst-roles`` zone property.

A SimGrid ``<cluster>`` gives all its hosts the same properties, so it cannot tag some of
them ``role=storage`` (the burst-buffer hosts of ``coburst platform dragonfly``).  Batsim 4.2
takes roles from host properties or from its ``-r HOSTS:ROLE`` option only; coburst writes
the option's text into the file instead::

    <zone id="master_zone" routing="Full">
      <prop id="coburst-roles" value="node_0,node_9,node_18:storage"/>

``coburst sim`` (and ``coburst run``, the campaigns, the API) apply it by themselves; for the
real Batsim, :func:`batsim_arguments` gives the ``-r`` arguments that say the same
(``coburst platform info`` prints them; ``coburst demo --engine batsim`` and campaigns with
``engine = "batsim"`` pass them).  Several ``HOSTS:ROLE`` items may be separated by white
space, in one property or in properties of several zones.  Roles given both in the file and
with ``-r`` must be the same host:role pairs, or the run stops naming both.
"""

from __future__ import annotations

import re
from pathlib import Path
from xml.sax.saxutils import unescape

from coburst.errors import InputError

__all__ = ["ROLES_PROPERTY", "parse_roles", "file_role_items", "zone_role_items", "batsim_arguments",
           "merge_roles"]

#: the zone property holding ``HOSTS:ROLE`` items
ROLES_PROPERTY = "coburst-roles"

_PROP = re.compile(rb"""<prop\s+id\s*=\s*(["'])coburst-roles\1\s+value\s*=\s*(["'])(.*?)\2""", re.S)


def parse_roles(values: list[str]) -> dict[str, str]:
    """``-r host1,host2:storage`` (repeatable) -> {host: role}.

    Roles as Batsim spells them: ``master``, ``storage``, ``compute_node`` (``compute`` is
    accepted too).  Like Batsim, exactly one ``:`` and a later ``-r`` overrides an earlier one.
    """
    roles: dict[str, str] = {}
    for value in values:
        if value.count(":") != 1:
            raise InputError("-r/--add-role-to-hosts", repr(value),
                             "expected HOST[,HOST...]:ROLE (with exactly one ':')")
        hosts, _, role = value.partition(":")
        if not hosts or not role:
            raise InputError("-r/--add-role-to-hosts", repr(value), "expected HOST[,HOST...]:ROLE")
        if role not in ("compute", "compute_node", "storage", "master"):
            raise InputError("-r/--add-role-to-hosts", repr(value),
                             f"unknown role {role!r} (expected compute_node, storage or master)")
        for host in hosts.split(","):
            if not host:
                raise InputError("-r/--add-role-to-hosts", repr(value), "empty host name")
            roles[host] = role
    return roles


def _items(values: list[str]) -> list[str]:
    return [item for value in values for item in value.split()]


def file_role_items(path: str | Path) -> list[str]:
    """The ``HOSTS:ROLE`` items of every ``coburst-roles`` property of a platform file (read
    as text: a 260 MB explicit platform is not parsed; ``[]`` when the file has none or
    cannot be read)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return []
    if b"coburst-roles" not in data:
        return []
    text = re.sub(rb"<!--.*?-->", b"", data, flags=re.S)
    return _items([unescape(m.group(3).decode("utf-8", "replace"), {"&quot;": '"', "&apos;": "'"})
                   for m in _PROP.finditer(text)])


def zone_role_items(root_zone) -> list[str]:
    """The ``HOSTS:ROLE`` items of the ``coburst-roles`` properties of a loaded platform's
    zones (SimGrid's ``NetZone`` or coburst's cached zone), depth first."""
    values: list[str] = []
    stack = [root_zone]
    while stack:
        zone = stack.pop()
        value = dict(zone.get_properties()).get(ROLES_PROPERTY)
        if value:
            values.append(value)
        stack.extend(reversed(list(zone.get_children())))
    return _items(values)


def batsim_arguments(items: list[str]) -> list[str]:
    """``["-r", "node_0,node_9:storage", ...]``: the real Batsim's options for these roles."""
    out: list[str] = []
    for item in items:
        out += ["-r", item]
    return out


def _pairs(items: list[str], source: str) -> dict[str, str]:
    try:
        return parse_roles(items)
    except InputError as exc:
        raise InputError(source, f"property {ROLES_PROPERTY} {exc.where}", exc.problem) from None


def merge_roles(platform: str, file_items: list[str], cli_roles: dict[str, str]) -> dict[str, str]:
    """The roles a run applies: the file's, or ``-r``'s, which must then say the same."""
    if not file_items:
        return cli_roles
    from_file = _pairs(file_items, platform)
    if not cli_roles or cli_roles == from_file:
        return from_file
    differ = sorted(h for h in set(from_file) | set(cli_roles) if from_file.get(h) != cli_roles.get(h))
    shown = ", ".join(f"{h} ({from_file.get(h, 'no role')} in the file, {cli_roles.get(h, 'no role')} with -r)"
                      for h in differ[:5])
    more = f" and {len(differ) - 5} more" if len(differ) > 5 else ""
    raise InputError(platform, f"property {ROLES_PROPERTY}",
                     f"the roles of the platform file ({' '.join(file_items)[:200]}) and of -r/--add-role-to-hosts "
                     f"({' '.join(f'{h}:{r}' for h, r in sorted(cli_roles.items()))[:200]}) differ: {shown}{more}; "
                     "give the same roles or leave out -r")
