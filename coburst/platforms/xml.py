"""The pieces every SimGrid platform generator writes the same way: the XML prologue, a
``<prop>`` line, zero-padding widths, and the opening of a platform whose root zone carries
the generator's properties."""

from __future__ import annotations

from typing import Mapping
from xml.sax.saxutils import escape, quoteattr

__all__ = ["HEADER", "prop", "width", "opening"]

#: the XML declaration and SimGrid's DTD
HEADER = ("<?xml version='1.0'?>\n"
          "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n")


def prop(key: str, value: object, indent: str) -> str:
    """``<prop id="key" value="value"/>`` on a line of its own."""
    return f"{indent}<prop id={quoteattr(key)} value={quoteattr(str(value))}/>\n"


def width(count: int) -> int:
    """Digits of the largest of ``count`` 0-based indices (zero-padding that sorts names in
    index order, as SimGrid and Batsim order hosts)."""
    return len(str(max(count - 1, 0)))


def opening(description: str | None, comment: str, command: str | None,
            zone_properties: Mapping[str, str], routing: str = "Full") -> list[str]:
    """The text up to the root zone's properties: prologue, the user's description and the
    generator's comment, ``<platform>``, ``<zone id="root" routing=ROUTING>`` (``Full`` unless
    told), ``generated_by`` (the command line, when recorded) and the zone properties."""
    out = [HEADER]
    if description:
        out.append(f"<!-- {escape(description)} -->\n")
    out.append(f"<!-- {comment} -->\n")
    out.append(f"<platform version=\"4.1\">\n  <zone id=\"root\" routing=\"{routing}\">\n")
    if command:
        out.append(prop("generated_by", command, "    "))
    for key, value in zone_properties.items():
        out.append(prop(key, value, "    "))
    return out
