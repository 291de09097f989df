"""How deep a JSON (or TOML) document nests, found without parsing it.

A document of 100,000 nested lists is ten lines of a hostile workload: Python's ``json``
gives up near 1000 levels (a ``RecursionError``), ``tomllib`` near 300, and the streaming
parser of large workloads builds every event's path first (10 GB for such a file).  The
readers refuse a document nesting more than :data:`DEPTH_MAX` levels, naming the file, the
line, the column and the depth (:func:`coburst.validate.parse_json`, the streamed workload
reader, heatmaps, campaign files).

The scan (:func:`too_deep`, :func:`file_too_deep`) looks only at brackets, quotes and
backslashes, with numpy (~50 ms per MB): brackets inside strings do not count, ``\\"`` does
not end a string.  The file is read in chunks of 8 MB (memory bounded for any size).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: the deepest nesting of arrays and objects a coburst input may have (real inputs nest a
#: few levels: a workload's job, its profile, a message's payload)
DEPTH_MAX = 500

_KIND = np.zeros(256, np.int8)  # 1: opens, 2: closes, 3: quote, 4: backslash
_KIND[[ord("["), ord("{")]] = 1
_KIND[[ord("]"), ord("}")]] = 2
_KIND[ord('"')] = 3
_KIND[ord("\\")] = 4
_CHUNK = 1 << 23


def _scan(a: np.ndarray, limit: int, depth: int, inside: int) -> tuple[int, int, int, int]:
    """One chunk: (offset of the first bracket past ``limit`` or -1, its depth, the depth after
    the chunk, 1 if the chunk ends inside a string); ``depth``, ``inside``: before it."""
    kinds = _KIND[a]
    pos = np.flatnonzero(kinds)
    if not len(pos):
        return -1, 0, depth, inside
    kind = kinds[pos]
    quote = kind == 3
    backslash = kind == 4
    if backslash.any():  # a quote after an odd run of backslashes is escaped
        n = len(pos)
        follows = np.zeros(n, bool)
        follows[1:] = backslash[:-1] & (pos[1:] == pos[:-1] + 1)
        starts = backslash & ~follows
        index = np.arange(n)
        first = np.maximum.accumulate(np.where(starts, index, 0))
        run = np.where(backslash, index - first + 1, 0)
        escaped = np.zeros(n, bool)
        escaped[1:] = follows[1:] & (run[:-1] % 2 == 1)
        quote &= ~escaped
    quotes = np.cumsum(quote, dtype=np.int64) + inside
    outside = (quotes % 2 == 0) & ~quote
    step = (kind == 1).astype(np.int64) - (kind == 2)
    levels = np.cumsum(step * outside, dtype=np.int64) + depth
    over = np.flatnonzero(levels > limit)
    if len(over):
        j = int(over[0])
        return int(pos[j]), int(levels[j]), int(levels[-1]), int(quotes[-1] % 2)
    return -1, 0, int(levels[-1]), int(quotes[-1] % 2)


def _place(data: bytes, offset: int, lines_before: int = 0) -> tuple[int, int]:
    line = lines_before + data.count(b"\n", 0, offset) + 1
    return line, offset - (data.rfind(b"\n", 0, offset) + 1) + 1


def too_deep(data: bytes | str, limit: int = DEPTH_MAX) -> tuple[int, int, int] | None:
    """(line, column, depth) of the first array or object opened past ``limit`` levels in
    ``data``, None if it nests at most ``limit`` levels."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if data.count(b"[") + data.count(b"{") <= limit:
        return None
    depth = inside = 0
    start, n = 0, len(data)
    while start < n:
        end = min(n, start + _CHUNK)
        while end < n and data[end - 1] == 92:  # (a run of backslashes is never cut)
            end += 1
        at, level, depth, inside = _scan(np.frombuffer(data, np.uint8, end - start, start), limit, depth, inside)
        if at >= 0:
            return (*_place(data, start + at), level)
        start = end
    return None


def file_too_deep(path: str | Path, limit: int = DEPTH_MAX) -> tuple[int, int, int] | None:
    """:func:`too_deep` of a file, read in chunks (its size does not matter)."""
    depth = inside = lines = column_before = 0
    with open(path, "rb") as f:
        while True:
            chunk = f.read(_CHUNK)
            if not chunk:
                return None
            while chunk.endswith(b"\\"):  # (a run of backslashes is never cut)
                more = f.read(1)
                if not more:
                    break
                chunk += more
            at, level, depth, inside = _scan(np.frombuffer(chunk, np.uint8), limit, depth, inside)
            if at >= 0:
                line, column = _place(chunk, at, lines)
                if chunk.rfind(b"\n", 0, at) < 0:  # the line began in an earlier chunk
                    column += column_before
                return line, column, level
            newline = chunk.rfind(b"\n")
            column_before = len(chunk) - newline - 1 if newline >= 0 else column_before + len(chunk)
            lines += chunk.count(b"\n")


def where(place: tuple[int, int, int]) -> str:
    """The place of :func:`too_deep`'s answer, as error messages give it."""
    line, column, _ = place
    return f"line {line} column {column}"


def problem(place: tuple[int, int, int], limit: int = DEPTH_MAX) -> str:
    """The problem of :func:`too_deep`'s answer, as error messages give it."""
    return (f"nested too deeply: more than {limit} levels (an array or object opened at depth {place[2]}): "
            f"refused, coburst's inputs nest a few levels")
