"""Processes of this machine, from /proc, for the tests that check what is left running."""

from __future__ import annotations

import os
from pathlib import Path


def _stat_fields(pid: int) -> list[str] | None:
    """Fields of /proc/PID/stat after the command name (state first, then the parent pid)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def alive(pid: int) -> bool:
    """Running (a zombie, reaped or not, counts as gone)."""
    fields = _stat_fields(pid)
    return fields is not None and fields[0] != "Z"


def children(pid: int) -> set[int]:
    """Living child processes of ``pid`` (started by any of its threads)."""
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(int(entry.name))
            if fields is not None and int(fields[1]) == pid and fields[0] != "Z":
                out.add(int(entry.name))
    return out


def matching(*fragments: bytes, cwd: Path | None = None) -> set[int]:
    """Processes whose command line holds every fragment (and, if given, running in ``cwd``)."""
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes()
                if all(f in cmd for f in fragments) and (cwd is None or os.readlink(entry / "cwd") == str(cwd)):
                    out.add(int(entry.name))
            except OSError:
                pass
    return out
