"""Batsim's ``_jobs.csv`` rows as Batsim writes them, quoted for a CSV reader.

Batsim 4.2.1 writes a job's profile name as it is, unquoted (and coburst writes the same
bytes): a profile named ``a,b``, ``"x`` or holding a newline gives a row that a CSV reader
cuts in the wrong places.  Batsim's job ids and workload names cannot hold such characters
(it aborts on them), and every column after the profile has a fixed form (numbers, a job
state, the allocation, the metadata in quotes at the end of the line), so the row can be
read back without doubt: the profile is what lies between the second comma and the
submission time.  :func:`quote_rows` rewrites such rows with the profile (and the metadata)
quoted as CSV quotes them, keeping every newline where it was, so that line numbers stay the
file's; a row a CSV reader already reads right (its quoted metadata holding a newline) is kept
as it is, so the first row refused is the same wherever the quoting starts.  Readers call it
only when the plain reading fails on a file with Batsim's header.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import BinaryIO

#: Batsim 4.2.1's ``_jobs.csv`` header
JOBS_HEADER = (b"job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,"
               b"success,final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,"
               b"stretch,allocated_resources,consumed_energy,metadata")

_STATES = (b"NOT_SUBMITTED|SUBMITTED|RUNNING|COMPLETED_SUCCESSFULLY|COMPLETED_FAILED|"
           b"COMPLETED_WALLTIME_REACHED|COMPLETED_KILLED|REJECTED")
_FIELD = rb'[^,\n"]*'
#: one row: job id, workload, the profile (anything, newlines included), then the 14 columns
#: of fixed form, the metadata quoted to the end of its line
_ROW = re.compile(rb"(" + _FIELD + rb"," + _FIELD + rb"),(.*?),(" + (_FIELD + rb",") * 4 + rb"(?:" + _STATES
                  + rb")," + (_FIELD + rb",") * 8 + rb')"([^\n]*)"(\r?)\n?\Z', re.S)

#: the most lines one row may span (a profile name holding newlines)
MAX_ROW_LINES = 64
#: the longest row (bytes)
MAX_ROW_BYTES = 1 << 20


#: the header's field count
_FIELDS = JOBS_HEADER.count(b",") + 1


def _plain_row(text: bytes) -> bool:
    """Whether ``text`` (whole lines) is one complete CSV record of the header's field count as
    it stands: a row a CSV reader reads right, e.g. its quoted metadata holding a newline."""
    try:
        records = list(csv.reader(io.StringIO(text.decode("utf-8", "surrogateescape"), newline=""), strict=True))
    except csv.Error:
        return False
    return len(records) == 1 and len(records[0]) == _FIELDS


def _quoted(text: bytes) -> bytes:
    return b'"' + text.replace(b'"', b'""') + b'"'


def quote_rows(src: BinaryIO, dst: BinaryIO) -> tuple[int, int]:
    """Copy the rows of ``src`` (from where it is, up to its end) to ``dst``, each with its
    profile and metadata quoted; ``(0, 0)`` when done, else the line (1-based, counted from
    where ``src`` was) of the first row that is not one Batsim writes and the number of
    comma-separated fields on it (``dst`` then incomplete).
    A line equal to the header is copied as it is.  A row that does not end on its line
    continues on the next (a profile name holding a newline) unless that next line is a whole
    row itself: then the row is cut short (a file written in half), not a profile's newline."""
    pending = b""
    lines = row_line = 0
    failed = lambda: (row_line, pending.split(b"\n", 1)[0].count(b",") + 1)  # noqa: E731
    for line in src:
        lines += 1
        if pending and _ROW.match(line) is not None:
            return failed()
        if not pending and line.rstrip(b"\r\n") in (JOBS_HEADER, b"\xef\xbb\xbf" + JOBS_HEADER):
            dst.write(line)
            continue
        if not pending and not line.strip():
            dst.write(line)
            continue
        if not pending:
            row_line = lines
        pending += line
        found = _ROW.match(pending)
        if found is None and _plain_row(pending):
            dst.write(pending)  # already a CSV row of the header's fields (a quoted newline in it)
            pending = b""
            continue
        if found is None:
            if lines - row_line + 1 >= MAX_ROW_LINES or len(pending) > MAX_ROW_BYTES or not line.endswith(b"\n"):
                return failed()
            continue
        head, profile, tail, metadata, cr = found.groups()
        end = b"\n" if pending.endswith(b"\n") else b""
        dst.write(head + b"," + _quoted(profile) + b"," + tail + _quoted(metadata) + cr + end)
        pending = b""
    return failed() if pending else (0, 0)


def quoted_copy(path: Path, offset: int, dst: Path) -> tuple[int, int]:
    """:func:`quote_rows` of the file ``path`` from byte ``offset`` (a row's start) into ``dst``."""
    with open(path, "rb") as src, open(dst, "wb") as out:
        src.seek(offset)
        return quote_rows(src, out)
