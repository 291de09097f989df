"""Reading Batsim's resource descriptions (``SIMULATION_BEGINS``: ``id``, ``name``,
``properties``) into the scheduling core's clusters: one rule for every family that places jobs
by host properties (node-sharing units, heterogeneous cores)."""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Mapping

from coburst.errors import InputError

__all__ = ["indexed_resources"]


def indexed_resources(compute: Iterable[Mapping[str, Any]], keys: tuple[str, ...], source: str,
                      needs: str) -> Iterator[tuple[int, str, dict, tuple[int, ...]]]:
    """``(id, name, properties, (integer value of each of keys))`` of every compute resource.

    A malformed description, a missing key or a value that is not an integer >= 0 is an
    InputError naming the host; ``needs`` says what platform the family needs (the message's
    advice, e.g. ``"a co-scheduling policy needs a node-sharing platform ... (coburst platform
    cosched)"``)."""
    for res in compute:
        try:
            rid = int(res["id"])
            name = str(res.get("name", rid))
        except (KeyError, TypeError, ValueError):
            raise InputError(source, None, f"malformed resource description {res!r}") from None
        props = res.get("properties") or {}
        where = f"host {name!r}"
        values = []
        for key in keys:
            if key not in props:
                raise InputError(source, where, f"{needs}; property {key!r} is missing")
            try:
                value = int(str(props[key]).strip())
            except ValueError:
                value = -1
            if value < 0:
                raise InputError(source, where, f"property {key!r} must be an integer >= 0, got {props[key]!r}")
            values.append(value)
        yield rid, name, props, tuple(values)
