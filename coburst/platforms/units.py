"""SimGrid-style quantities with units: speeds (``1Gf``), bandwidths (``1250MBps``),
latencies (``50us``) and sizes (``40GB``).

The spelling follows SimGrid's XML reference (``docs/source/XML_reference.rst``): decimal
prefixes k, M, G, T, P, E (powers of 1000), binary prefixes Ki, Mi, Gi, Ti, Pi, Ei
(powers of 1024), ``Bps`` for bytes and ``bps`` for bits per second.
"""

from __future__ import annotations

import math
import re

from coburst.errors import InputError

_DEC = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_BIN = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60}
_PREFIX = {**_DEC, **_BIN}
_TIME = {"": 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12,
         "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}

_NUM = r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"


def _split(text: str, what: str, source: str) -> tuple[float, str]:
    match = re.fullmatch(_NUM + r"\s*([A-Za-z]*)", str(text).strip())
    if not match:
        if re.fullmatch(r"-\s*" + _NUM + r"\s*[A-Za-z]*", str(text).strip()):
            raise InputError(source, None, f"{what} {text!r} is negative: it must be >= 0")
        raise InputError(source, None, f"cannot read {what} {text!r} (expected a number and a unit)")
    value = float(match.group(1))
    if not math.isfinite(value):
        raise InputError(source, None, f"{what} {text!r} is too large (not a finite number)")
    return value, match.group(2)


def _prefixed(text: str, what: str, source: str, units: tuple[str, ...]) -> tuple[float, str]:
    value, unit = _split(text, what, source)
    for base in units:
        if unit.endswith(base):
            prefix = unit[: len(unit) - len(base)]
            if prefix in _PREFIX:
                return value * _PREFIX[prefix], base
    allowed = "/".join(units)
    raise InputError(source, None, f"cannot read {what} {text!r}: unknown unit {unit!r} (use e.g. k{units[0]}, "
                     f"M{units[0]}, G{units[0]}, Gi{units[0]}; base units {allowed})")


def parse_speed(text: str, source: str = "speed") -> float:
    """Host speed in flop/s (``1Gf`` -> 1e9). A bare number is flop/s."""
    value, unit = _split(text, "speed", source)
    if unit == "":
        return value
    if unit == "flops":
        return value
    return _prefixed(text, "speed", source, ("f",))[0]


def parse_bandwidth(text: str, source: str = "bandwidth") -> float:
    """Bandwidth in bytes/s (``1250MBps`` -> 1.25e9, ``10Gbps`` -> 1.25e9)."""
    value, unit = _split(text, "bandwidth", source)
    if unit == "":
        return value
    amount, base = _prefixed(text, "bandwidth", source, ("Bps", "bps"))
    return amount / 8.0 if base == "bps" else amount


def parse_latency(text: str, source: str = "latency") -> float:
    """Latency in seconds (``50us`` -> 5e-5). A bare number is seconds."""
    value, unit = _split(text, "latency", source)
    if unit not in _TIME:
        raise InputError(source, None, f"cannot read latency {text!r}: unknown unit {unit!r} "
                         "(use s, ms, us, ns)")
    return value * _TIME[unit]


def parse_size(text: str | int, source: str = "size") -> int:
    """A size in bytes (``40GB`` -> 40_000_000_000, ``4GiB`` -> 4294967296)."""
    if isinstance(text, int):
        return text
    value, unit = _split(str(text), "size", source)
    if unit in ("", "B"):
        amount = value
    else:
        amount = _prefixed(str(text), "size", source, ("B",))[0]
    if amount < 0:
        raise InputError(source, None, f"size must be >= 0, got {text!r}")
    return int(round(amount))


def known_options(spec_class, options: dict, what: str) -> dict:
    """The CLI-like ``options`` a generator spec dataclass takes, ``None`` values dropped; an
    unknown key is an :class:`InputError` naming the option (``--key-name``)."""
    fields = spec_class.__dataclass_fields__
    clean = {}
    for key, value in options.items():
        if key not in fields:
            raise InputError(f"--{key.replace('_', '-')}", None, f"unknown {what} parameter")
        if value is not None:
            clean[key] = value
    return clean
