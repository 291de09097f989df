"""Allocations as schedulers write them (``EXECUTE_JOB``'s ``alloc``: ``"0-3 8 10-11"``)."""

from __future__ import annotations

from procset import ProcInt, ProcSet

__all__ = ["parse_allocation"]


def parse_allocation(text: str) -> tuple[ProcSet, bool]:
    """``ProcSet.from_str``, fast for the canonical strings schedulers send (``0-3 8 10-11``:
    sorted, disjoint, not adjacent), and whether ``text`` is already ``str()`` of the result."""
    itvs = []
    last = -2
    canonical = True
    try:
        for token in text.split(" "):
            lo, sep, hi = token.partition("-")
            a = int(lo)
            b = int(hi) if sep else a
            if a < 0 or b < a or a <= last + 1:
                return ProcSet.from_str(text), False
            if sep and (a == b or hi != str(b) or lo != str(a)):
                canonical = False
            elif not sep and lo != str(a):
                canonical = False
            itvs.append(ProcInt(a, b))
            last = b
    except ValueError:
        return ProcSet.from_str(text), False
    result = ProcSet()
    result._itvs = itvs  # already canonical
    return result, canonical
