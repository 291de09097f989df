"""Scheduling metrics computed from Batsim ``_jobs.csv`` files.

Definitions (Kopański 2020, §1.8):

* waiting time ``w = start - submit``; turnaround ``t = finish - submit``;
* slowdown ``t / runtime``; bounded slowdown ``max(t / max(runtime, tau), 1)`` with
  ``tau = 600 s`` (10 minutes) by default;
* makespan: last finish time minus first submission time;
* utilisation: node-seconds used by jobs divided by ``nb_compute * makespan``.

Rejected jobs are excluded from every metric (they never ran).  Only rows of static
workloads (``w0``, ``w1``, ...) count.  IO-Aware jobs (:mod:`coburst.adapter.io_aware`) are
rejected by the scheduler and run as dynamic sub-jobs: :func:`read_jobs` folds them back
into one row per static job (:func:`fold_io_jobs`), which then counts like any other job.

Fold-back rule (:func:`fold_io_jobs`).  The ``REJECTED`` row of a static job ``J`` whose
metadata has an ``io=<phases>`` part (``[bb=...;]alloc=<compute ids>;io=<phases>``, set by
the adapter just before the rejection) and every row whose metadata says ``of=<J's
workload!id>`` (its sub-jobs: ``of=w0!7;step=<tag>[;last]``) become one row for ``J``:

* ``starting_time`` = earliest sub-job start, ``finish_time`` = latest sub-job finish,
  ``execution_time``, ``waiting_time``, ``turnaround_time`` and ``stretch`` recomputed from
  them as Batsim does (``stretch = turnaround / execution``);
* ``allocated_resources`` = the ``alloc`` part (the compute nodes held by ``J`` from its
  start to its finish); ``consumed_energy`` = the sub-jobs' sum, -1 if one of them has -1;
* ``final_state``: ``COMPLETED_WALLTIME_REACHED`` if a sub-job reached its walltime, else
  ``COMPLETED_KILLED`` if a sub-job ended otherwise than successfully, else
  ``COMPLETED_SUCCESSFULLY`` if a sub-job is marked ``last`` (the job's final phase ran),
  else ``COMPLETED_WALLTIME_REACHED`` (the adapter stopped for lack of walltime); ``success``
  = 1 iff ``COMPLETED_SUCCESSFULLY`` -- the adapter's own rule
  (:func:`coburst.adapter.io_aware.final_state`);
* ``metadata`` = ``[bb=...;]alloc=...;phases=<successful compute phases>/<phases>``;
* the other columns (id, workload, profile, submission time, requested resources and
  time) are ``J``'s; the row takes the place of ``J``'s last sub-job row (end order).

An IO-Aware static row without sub-jobs, or a sub-job naming no such row, is an error (a
truncated or mixed-up file).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from procset import ProcSet

from coburst.analysis.batsim_rows import JOBS_HEADER
from coburst.errors import InputError

TAU = 600.0
#: metadata keys of IO-Aware execution (written by coburst.adapter.io_aware)
IO_PHASES, IO_OF, IO_STEP, IO_LAST = "io", "of", "step", "last"
_TIMES = ("submission_time", "starting_time", "finish_time", "execution_time", "waiting_time", "turnaround_time",
          "stretch", "consumed_energy", "requested_time")

REQUIRED = ("job_id", "submission_time", "starting_time", "finish_time", "execution_time", "final_state",
            "allocated_resources", "requested_number_of_resources")


STATIC_WORKLOAD = r"w\d+"


#: the job states Batsim writes (batsim-4.2.1 src/jobs.cpp, job_state_to_string)
JOB_STATES = frozenset({"NOT_SUBMITTED", "SUBMITTED", "RUNNING", "COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED",
                        "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED", "REJECTED"})
#: time columns every job that ran has (a rejected job leaves them empty)
_RAN_TIMES = ("starting_time", "finish_time", "execution_time")


def _row_spans(data: bytes):
    """Per CSV row of ``data`` (quotes respected, vectorised): start offset, end offset (its
    newline, or the end of ``data``), line it starts on (1-based), field count, and whether
    it is not blank."""
    b = np.frombuffer(data, dtype=np.uint8)
    quotes = np.flatnonzero(b == ord('"'))
    newline = np.flatnonzero(b == ord("\n"))
    commas = np.flatnonzero(b == ord(","))
    if len(quotes):  # outside a quoted field: an even number of quotes before ("" counts twice)
        ends = newline[(np.searchsorted(quotes, newline) & 1) == 0]
        commas = commas[(np.searchsorted(quotes, commas) & 1) == 0]
    else:
        ends = newline
    if not len(ends) or ends[-1] != len(b) - 1:
        ends = np.append(ends, len(b))  # the last row has no newline
    starts = np.concatenate(([0], ends[:-1] + 1))
    fields = np.bincount(np.searchsorted(ends, commas), minlength=len(ends)) + 1
    length = ends - starts - (b[np.maximum(ends - 1, 0)] == ord("\r")) * (ends > starts)
    first_line = np.searchsorted(newline, starts) + 1
    return starts, ends, first_line, fields, length > 0  # blank lines: skipped, as pandas does


def _csv_rows(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Per non-blank CSV row of ``data`` (quotes respected, vectorised): the line it starts
    on (1-based) and its field count."""
    _, _, first_line, fields, keep = _row_spans(data)
    return first_line[keep], fields[keep]


#: bytes of a ``_jobs.csv`` read, checked and parsed at a time (:func:`iter_raw_jobs`); a chunk
#: ends after a newline outside quotes (a row longer than this makes its chunk longer)
CHUNK_BYTES = 4 << 20
_TEXT_COLS = ("job_id", "workload_name", "profile", "final_state", "allocated_resources", "metadata")
#: ranks of the checks, in the order the whole-file reader makes them; then two per number column
_R_NUL, _R_UTF8, _R_EMPTY, _R_FIELDS, _R_PARSER, _R_HEADER, _R_STATE, _R_NUMBERS = range(8)
_NUMBER_COLS = (*_TIMES, "requested_number_of_resources")


@dataclass
class RawChunk:
    """Consecutive rows of a ``_jobs.csv`` as :func:`read_raw_jobs` gives them."""

    df: pd.DataFrame
    pos: int     # index of its first row among the file's rows (header excluded)
    offset: int  # byte offset of the chunk in the file
    line: int    # newlines of the file before the chunk


def _blocks(path: Path, chunk_bytes: int, offset: int = 0):
    """(offset, bytes) of the file from ``offset``, each ending after a newline outside
    quotes (the last one: at the end of the file)."""
    from coburst.validate import read_bytes

    try:
        fh = open(path, "rb")
    except OSError:
        read_bytes(path, "jobs file")  # the error naming a missing path, a directory...
        raise
    with fh:
        fh.seek(offset)
        carry = b""
        while True:
            try:
                block = fh.read(chunk_bytes)
            except OSError as exc:
                raise InputError(path, None, f"cannot read the jobs file: {exc.strerror or exc}") from None
            if not block:
                if carry:
                    yield offset, carry
                return
            data = carry + block
            b = np.frombuffer(data, dtype=np.uint8)
            newline = np.flatnonzero(b == ord("\n"))
            quotes = np.flatnonzero(b == ord('"'))
            ends = newline[(np.searchsorted(quotes, newline) & 1) == 0] if len(quotes) else newline
            if not len(ends):
                carry = data
                continue
            cut = int(ends[-1]) + 1
            yield offset, data[:cut]
            offset += cut
            carry = data[cut:]


class JobsFile:
    """A ``_jobs.csv`` read in chunks of rows (:meth:`chunks`), checked as
    :func:`_read_raw_jobs_whole` checks the whole file, with the same error."""

    def __init__(self, path: str | Path, chunk_bytes: int = CHUNK_BYTES):
        self.path = Path(path)
        self.source = str(path)
        self.chunk_bytes = max(int(chunk_bytes), 1)
        self.header: bytes | None = None  # the header row (BOM left out), given to pandas with every chunk
        self.header_fields: int | None = None
        self.header_offset: int | None = None  # of the chunk holding it

    def _fail(self, parse: bytes, i: int, col: str, line: int, problem) -> InputError:
        raw = pd.read_csv(io.BytesIO(parse), dtype=str, keep_default_na=False, usecols=[col],
                          encoding="utf-8")[col].iloc[i]
        return InputError(self.source, f"line {line}, column {col}", problem(raw))

    def _check(self, df: pd.DataFrame, parse: bytes, lines: np.ndarray) -> tuple[int, InputError] | None:
        """The first failing check of the rows of ``df`` (rank, error), the values of the time
        columns made floats in place when none fails."""
        states = df["final_state"]
        bad = np.flatnonzero(~states.isin(JOB_STATES).to_numpy())
        if len(bad):
            return _R_STATE, self._fail(parse, int(bad[0]), "final_state", lines[int(bad[0])], lambda raw: (
                f"unknown job state {raw!r} (Batsim's: {', '.join(sorted(JOB_STATES))})"))
        ran = (states != "REJECTED").to_numpy()
        converted = {}
        for k, col in enumerate(_NUMBER_COLS):
            if col not in df.columns:
                continue
            values, i = _numbers(df[col])
            if i is not None:
                return _R_NUMBERS + 2 * k, self._fail(parse, i, col, lines[i], _not_a_number)
            required = col in ("submission_time", "requested_number_of_resources")
            need = True if required else ran if col in _RAN_TIMES else False
            bad = np.flatnonzero(np.isinf(values) | (need & np.isnan(values)))
            if len(bad):
                i = int(bad[0])
                return _R_NUMBERS + 2 * k + 1, self._fail(parse, i, col, lines[i], lambda raw: (
                    f"{raw!r} is not finite" if raw.strip() else
                    "empty" + ("" if required else f" (the job is {states.iloc[i]})")))
            if col in _TIMES:
                converted[col] = values
        for col, values in converted.items():
            df[col] = values
        return None

    def chunks(self, resume: RawChunk | None = None):
        """:class:`RawChunk` after :class:`RawChunk`, each checked.  A bad file raises the error
        :func:`_read_raw_jobs_whole` raises once every chunk is read (a later row may fail an
        earlier check); no chunk is yielded after a bad one.  ``resume``: a chunk yielded
        before, to read the file again from it."""
        from coburst.validate import decode_text

        errors: dict[int, InputError | None] = {}
        source, head, nonblank, bom = self.source, b"", resume is not None, 0
        pos, lines, start = (resume.pos, resume.line, resume.offset) if resume is not None else (0, 0, 0)
        blocks, base, quoted = _blocks(self.path, self.chunk_bytes, start), 0, None
        while True:
            try:
                offset, data = next(blocks)
            except StopIteration:
                break
            offset += base
            first = offset == 0
            nl = data.count(b"\n")
            line0, lines = lines, lines + nl
            if first:
                head = data[:200]
                decode_text(data[:4], source)  # UTF-16/UTF-32 byte-order marks: named at once
                bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
            if b"\x00" in data:
                if _R_NUL not in errors:
                    k = data.index(0)
                    if len(head) >= 4 and (head[1::2].count(0) > len(head) // 4
                                           or head[0::2].count(0) > len(head) // 4):
                        errors[_R_NUL] = InputError(source, "byte 0", "UTF-16 text detected (NUL bytes between "
                                                    "characters); save the file as UTF-8")
                    else:
                        line = line0 + data[:k].count(b"\n") + 1
                        errors[_R_NUL] = InputError(source, f"line {line} "
                                                    f"(byte {offset + k})", "NUL byte: not a text file")
                continue
            body = data[bom:] if first else data
            try:
                nonblank = bool(body.decode("utf-8").strip()) or nonblank
            except UnicodeDecodeError as exc:
                if _R_UTF8 not in errors:
                    col = exc.start - (body.rfind(b"\n", 0, exc.start) + 1) + 1
                    line = line0 + body[: exc.start].count(b"\n") + 1
                    errors[_R_UTF8] = InputError(
                        source, f"line {line} column {col} "
                        f"(byte {offset + exc.start - (0 if first else bom)})",
                        "not valid UTF-8 text; save the file as UTF-8")
                continue
            if errors and min(errors) <= _R_FIELDS:
                continue  # only the checks that come first can change the error
            starts, ends, row_lines, fields, keep = _row_spans(data)
            starts, ends, row_lines, fields = starts[keep], ends[keep], row_lines[keep] + line0, fields[keep]
            parse = None
            if self.header_fields is None or offset == self.header_offset:
                if not len(fields):
                    continue
                self.header_fields, self.header_offset = int(fields[0]), offset
                self.header = data[max(int(starts[0]), bom): int(ends[0]) + 1]
                if not self.header.endswith(b"\n"):
                    self.header += b"\n"
                row_lines, fields = row_lines[1:], fields[1:]
                parse = data[bom:]
            elif not len(fields):
                continue
            bad = np.flatnonzero(fields != self.header_fields)
            if len(bad) and quoted is None and self.header.rstrip(b"\r\n") == JOBS_HEADER:
                # Batsim's unquoted profile names (a comma, a quote, a newline): the rest of the
                # file read again with them quoted (batsim_rows), from this chunk on
                quoted = self._quoted_rest(offset)
                if isinstance(quoted, Path):
                    blocks, base, lines = _blocks(quoted, self.chunk_bytes, 0), offset, line0
                    if offset == self.header_offset:
                        self.header_fields = None
                    continue
                errors.setdefault(_R_FIELDS, InputError(source, f"line {line0 + quoted[0]}", (
                    f"{quoted[1]} fields, the header has {self.header_fields} (not a row of Batsim's "
                    "_jobs.csv: only a profile name may hold commas, quotes and newlines)")))
                continue
            if len(bad):
                i = int(bad[0])
                errors.setdefault(_R_FIELDS, InputError(source, f"line {row_lines[i]}",
                                                        f"{fields[i]} fields, the header has {self.header_fields}"))
                continue
            if errors and min(errors) <= _R_PARSER:
                continue
            parse = parse if parse is not None else self.header + data
            try:
                df = pd.read_csv(io.BytesIO(parse), dtype={c: str for c in _TEXT_COLS}, keep_default_na=False,
                                 na_values={c: [""] for c in _TIMES}, encoding="utf-8")
            except pd.errors.EmptyDataError:  # blank so far: the whole-file reader's checks decide
                if not nonblank:
                    self.header_fields = self.header_offset = None
                    continue
                errors.setdefault(_R_PARSER, None)
                continue
            except pd.errors.ParserError as exc:  # pandas names lines of the chunk: the whole file's message later
                errors.setdefault(_R_PARSER, InputError(source, None, f"not a Batsim _jobs.csv: {exc}")
                                  if first else None)
                continue
            missing = [c for c in REQUIRED if c not in df.columns]
            if missing:
                errors.setdefault(_R_HEADER, InputError(source, "header",
                                                        f"not a Batsim _jobs.csv: missing columns {missing}"))
                continue
            failed = self._check(df, parse, row_lines)
            if failed is not None:
                errors.setdefault(*failed)
                continue
            if not errors:
                yield RawChunk(df, pos, offset, line0)
            pos += len(df)
        if not nonblank and not errors:
            raise InputError(source, None, "empty file: not a Batsim _jobs.csv (no header)")
        if errors:
            error = errors[min(errors)]
            if error is None:
                _read_raw_jobs_whole(self.path)
                raise InputError(source, None, "not a Batsim _jobs.csv")
            raise error


    def _quoted_rest(self, offset: int) -> Path | tuple[int, int]:
        """The file from ``offset`` with Batsim's unquoted profile names quoted, in a temporary
        file removed at exit; or the line, counted from ``offset``, of the first row that is
        not one Batsim writes, and its field count."""
        import atexit
        import os
        import tempfile

        from coburst.analysis.batsim_rows import quoted_copy

        fd, name = tempfile.mkstemp(prefix="coburst-jobs-", suffix=".csv")
        os.close(fd)
        atexit.register(lambda: os.path.exists(name) and os.unlink(name))
        failed = quoted_copy(self.path, offset, Path(name))
        if not failed[0]:
            return Path(name)
        os.unlink(name)
        return failed


def iter_raw_jobs(path: str | Path, chunk_bytes: int = CHUNK_BYTES):
    """The rows of :func:`read_raw_jobs` in chunks of about ``chunk_bytes`` bytes of the file
    (:class:`RawChunk`), with its checks and errors (raised after the last chunk: see
    :meth:`JobsFile.chunks`)."""
    return JobsFile(path, chunk_bytes).chunks()


def _numbers(column: pd.Series) -> tuple[np.ndarray, int | None]:
    """A number column of ``_jobs.csv`` as floats (NaN where empty) and the row of its first
    cell holding text that is not a number (None: every cell is a number or empty)."""
    if pd.api.types.is_numeric_dtype(column.dtype):
        return column.to_numpy(float), None
    values = pd.to_numeric(column.replace("", None), errors="coerce").to_numpy(float)
    text_cells = column.notna().to_numpy() & (column.astype(str).str.strip().to_numpy() != "")
    bad = np.flatnonzero(text_cells & np.isnan(values))
    return values, (int(bad[0]) if len(bad) else None)


def _not_a_number(raw: str) -> str:
    return f"{raw!r} is " + ("not finite" if raw.strip().lower().lstrip("+-") in ("nan", "inf", "infinity")
                             else "not a number")


def read_raw_jobs(path: str | Path, chunk_bytes: int = CHUNK_BYTES) -> pd.DataFrame:
    """Every row of a Batsim ``_jobs.csv`` as written (time columns as floats, NaN where
    empty; ``job_id``, ``workload_name``, ``profile``, ``final_state``, ``allocated_resources`` and
    ``metadata`` as text), read in chunks (:func:`iter_raw_jobs`: the file is never held whole).

    Checked, with the line and column named: every row has the header's field count; time
    columns are numbers, ``submission_time`` and ``requested_number_of_resources`` present
    and finite, start, finish and execution times present and finite for every job that ran
    (Batsim leaves them empty for a rejected job), no infinite time; ``final_state`` is a
    Batsim job state.  Other columns are typed as the whole-file reading types them, whatever
    the chunks: numbers in every chunk stay numbers (int64, or float64 if a chunk holds a
    fraction), and a column some chunk reads as text is read again as text, whole."""
    parts = [c.df for c in iter_raw_jobs(path, chunk_bytes)]
    parts = [p for p in parts if len(p)] or parts[:1]  # a chunk without rows has text columns only
    df = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
    if len(parts) > 1:
        known = set(_TEXT_COLS) | set(_NUMBER_COLS)
        mixed = [c for c in df.columns if c not in known
                 and {_cell_kind(p[c].dtype) for p in parts} not in ({"number"}, {"bool"})]
        for col in mixed:  # only this column of the file held as text (no other is parsed)
            df[col] = pd.read_csv(path, usecols=[col], dtype=str, keep_default_na=False,
                                  encoding="utf-8-sig")[col].to_numpy()
    return df

def _cell_kind(dtype) -> str:
    """How pandas typed a chunk's column: "bool", "number" (ints and floats mix as floats) or
    "text"; a column whose chunks differ otherwise (e.g. ints and booleans) is text whole."""
    if pd.api.types.is_bool_dtype(dtype):
        return "bool"
    return "number" if pd.api.types.is_numeric_dtype(dtype) else "text"


def _read_raw_jobs_whole(path: str | Path) -> pd.DataFrame:
    """The whole-file reader :func:`read_raw_jobs` replaced (the reference of its errors and
    rows; the benchmark's baseline): the whole file decoded and parsed at once.

    Every row of a Batsim ``_jobs.csv`` as written (time columns as floats, NaN where
    empty; ``job_id``, ``workload_name``, ``allocated_resources`` and ``metadata`` as text).

    Checked, with the line and column named: every row has the header's field count; time
    columns are numbers, ``submission_time`` and ``requested_number_of_resources`` present
    and finite, start, finish and execution times present and finite for every job that ran
    (Batsim leaves them empty for a rejected job), no infinite time; ``final_state`` is a
    Batsim job state."""
    import io

    from coburst.validate import decode_text, read_bytes

    text_cols = ("job_id", "workload_name", "profile", "final_state", "allocated_resources", "metadata")
    data = read_bytes(path, "jobs file")
    text = decode_text(data, str(path))  # UTF-16, NUL bytes, bad UTF-8: named
    if not text.strip():
        raise InputError(path, None, "empty file: not a Batsim _jobs.csv (no header)")
    lines, fields = _csv_rows(data)
    bad = np.flatnonzero(fields != fields[0])
    if len(bad) and text.lstrip("\ufeff").split("\n", 1)[0].rstrip("\r").encode() == JOBS_HEADER:
        from coburst.analysis.batsim_rows import quote_rows

        quoted = io.BytesIO()
        failed = quote_rows(io.BytesIO(data), quoted)
        if failed[0]:
            raise InputError(path, f"line {failed[0]}", (
                f"{failed[1]} fields, the header has {fields[0]} (not a row of Batsim's "
                "_jobs.csv: only a profile name may hold commas, quotes and newlines)"))
        data = quoted.getvalue()
        text = decode_text(data, str(path))
        lines, fields = _csv_rows(data)
        bad = np.flatnonzero(fields != fields[0])
    if len(bad):
        i = int(bad[0])
        raise InputError(path, f"line {lines[i]}", f"{fields[i]} fields, the header has {fields[0]}")
    try:
        df = pd.read_csv(io.StringIO(text), dtype={c: str for c in text_cols}, keep_default_na=False,
                         na_values={c: [""] for c in _TIMES})
    except pd.errors.ParserError as exc:
        raise InputError(path, None, f"not a Batsim _jobs.csv: {exc}") from None
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise InputError(path, "header", f"not a Batsim _jobs.csv: missing columns {missing}")

    def fail(i: int, col: str, problem) -> None:
        raw = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, usecols=[col])[col].iloc[i]
        raise InputError(path, f"line {lines[i + 1]}, column {col}", problem(raw))

    states = df["final_state"]
    bad = np.flatnonzero(~states.isin(JOB_STATES).to_numpy())
    if len(bad):
        fail(int(bad[0]), "final_state",
             lambda raw: f"unknown job state {raw!r} (Batsim's: {', '.join(sorted(JOB_STATES))})")
    ran = (states != "REJECTED").to_numpy()
    for col in (*_TIMES, "requested_number_of_resources"):
        if col not in df.columns:
            continue
        values, i = _numbers(df[col])
        if i is not None:
            fail(i, col, _not_a_number)
        required = col in ("submission_time", "requested_number_of_resources")
        need = True if required else ran if col in _RAN_TIMES else False
        bad = np.flatnonzero(np.isinf(values) | (need & np.isnan(values)))
        if len(bad):
            i = int(bad[0])
            fail(i, col, lambda raw: f"{raw!r} is not finite" if raw.strip() else
                 "empty" + ("" if required else f" (the job is {states.iloc[i]})"))
        if col in _TIMES:
            df[col] = values
    return df


def read_jobs(path: str | Path, static_only: bool = True) -> pd.DataFrame:
    """Read a Batsim ``_jobs.csv`` for metrics: one row per job that ran.

    With ``static_only`` (default), IO-Aware sub-jobs are folded back into their static
    job's row (:func:`fold_io_jobs`) and other dynamic jobs dropped; otherwise every row is
    kept as written.  Rejected jobs are dropped in both cases."""
    df = read_raw_jobs(path)
    if static_only:
        df = fold_io_jobs(df, source=str(path))
        if "workload_name" in df.columns:
            df = df[df["workload_name"].astype(str).str.fullmatch(STATIC_WORKLOAD)]
    return df[df["final_state"] != "REJECTED"].reset_index(drop=True)


def parse_metadata(meta: str) -> dict[str, str]:
    """``k=v;k=v;flag`` -> dict (a flag maps to ``""``)."""
    out = {}
    for part in str(meta).split(";"):
        if part:
            key, _, value = part.partition("=")
            out[key] = value
    return out


def _io_parts(df: pd.DataFrame):
    """(metadata as text, ``of=`` part, static IO-Aware rows, sub-job rows) of rows."""
    meta = df["metadata"].astype(str)
    of = meta.str.extract(rf"(?:^|;){IO_OF}=([^;]*)", expand=False)
    is_static = (df["final_state"] == "REJECTED") & meta.str.contains(rf"(?:^|;){IO_PHASES}=\d+(?:;|$)")
    return meta, of, is_static, of.notna()


def _sub_rows(df: pd.DataFrame, meta: pd.Series, of: pd.Series, is_sub: pd.Series, pos0: int) -> pd.DataFrame:
    """What the fold-back needs of the sub-job rows (``_pos``: their index among the file's rows)."""
    cols = ["starting_time", "finish_time", "final_state"] + (["consumed_energy"] if "consumed_energy" in df else [])
    subs = df.loc[is_sub, cols].assign(_of=of[is_sub], _pos=pos0 + np.arange(len(df))[is_sub.to_numpy()])
    steps = meta[is_sub].str.extract(rf"(?:^|;){IO_STEP}=([^;]*)", expand=False).fillna("")
    subs = subs.assign(
        _walltime=subs["final_state"] == "COMPLETED_WALLTIME_REACHED",
        _failed=subs["final_state"] != "COMPLETED_SUCCESSFULLY",
        _last=meta[is_sub].str.contains(rf"(?:^|;){IO_LAST}(?:;|$)"),
        _phase=steps.str.fullmatch(r"c\d+") & (subs["final_state"] == "COMPLETED_SUCCESSFULLY"),
        _energy_unknown=subs["consumed_energy"] < 0 if "consumed_energy" in subs else True)
    return subs.drop(columns="final_state")


def _fold_values(df: pd.DataFrame, statics: dict, subs: pd.DataFrame, source: str):
    """The folded rows of the static jobs ``statics`` (key -> index of their row in ``df``)
    from their sub-jobs ``subs`` (:func:`_sub_rows`): (indexes, column -> values, positions:
    each just after its last sub-job's row)."""
    orphans = sorted(set(subs["_of"]) - set(statics))
    if orphans:
        raise InputError(source, f"sub-job of {orphans[0]}", "IO-Aware sub-jobs of a job without its rejected "
                         "static row (io= metadata)")
    missing = sorted(set(statics) - set(subs["_of"]))
    if missing:
        raise InputError(source, f"job {missing[0]}", "IO-Aware job (io= metadata) without any sub-job row")
    groups = subs.groupby("_of", sort=False).agg(
        start=("starting_time", "min"), finish=("finish_time", "max"), pos=("_pos", "max"),
        walltime=("_walltime", "any"), failed=("_failed", "any"), last=("_last", "any"), phases=("_phase", "sum"),
        energy=("consumed_energy", "sum") if "consumed_energy" in subs else ("_pos", "size"),
        energy_unknown=("_energy_unknown", "any"))

    keys, idx = list(statics), list(statics.values())
    g = groups.loc[keys]
    smeta = df.loc[idx, "metadata"].astype(str)
    bb = smeta.str.extract(r"(?:^|;)(bb=[^;]*)", expand=False)
    alloc = smeta.str.extract(r"(?:^|;)alloc=([^;]*)", expand=False).fillna("")
    nb_phases = smeta.str.extract(rf"(?:^|;){IO_PHASES}=(\d+)", expand=False)
    ok, wall = "COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"
    state = np.where(g["walltime"], wall, np.where(g["failed"], "COMPLETED_KILLED", np.where(g["last"], ok, wall)))
    start, finish = g["start"].to_numpy(float), g["finish"].to_numpy(float)
    submit = df.loc[idx, "submission_time"].to_numpy(float)
    execution = finish - start
    with np.errstate(divide="ignore", invalid="ignore"):
        stretch = np.where(execution > 0, (finish - submit) / execution, np.inf)
    done = g["phases"].astype(int).astype(str).to_numpy(object)
    phases_part = ";alloc=" + alloc.to_numpy(object) + ";phases=" + done + "/" + nb_phases.to_numpy(object)
    metadata = np.where(bb.notna().to_numpy(), bb.fillna("").to_numpy(object) + phases_part,
                        np.array([x[1:] for x in phases_part], dtype=object))
    values = {"success": (state == ok).astype(int), "final_state": state, "starting_time": start,
              "execution_time": execution, "finish_time": finish, "waiting_time": start - submit,
              "turnaround_time": finish - submit, "stretch": stretch,
              "consumed_energy": np.where(g["energy_unknown"], -1.0, g["energy"].to_numpy(float)),
              "allocated_resources": alloc.to_numpy(object), "metadata": metadata}
    return idx, values, g["pos"].to_numpy(float) + 0.5


def fold_io_jobs(df: pd.DataFrame, source: str = "jobs table") -> pd.DataFrame:
    """Fold IO-Aware sub-jobs back into their static job's row (module doc: fold-back rule).

    ``df``: rows as :func:`read_raw_jobs` gives them.  Rows of other jobs are kept as they
    are and in their order; the result has the same columns.  :func:`iter_folded_jobs`: the
    same, chunk by chunk."""
    if "metadata" not in df.columns or "workload_name" not in df.columns or df.empty:
        return df
    meta, of, is_static, is_sub = _io_parts(df)
    if not is_static.any() and not is_sub.any():
        return df
    key = df["workload_name"].astype(str) + "!" + df["job_id"].astype(str)
    statics = {k: i for k, i in zip(key[is_static], df.index[is_static])}
    subs = _sub_rows(df, meta, of, is_sub, 0)
    idx, values, positions = _fold_values(df, statics, subs, source)
    out = df.copy()
    for col, value in values.items():
        if col in out.columns:
            out.loc[idx, col] = value
    position = pd.Series(np.arange(len(df), dtype=float), index=df.index)
    position.loc[idx] = positions  # just after its last sub-job's row
    keep = ~is_sub
    order = position[keep].sort_values(kind="stable").index
    return out.loc[order].reset_index(drop=True)


def iter_folded_jobs(path: str | Path, chunk_bytes: int = CHUNK_BYTES):
    """The rows of :func:`fold_io_jobs` of :func:`read_raw_jobs` of ``path``, chunk after chunk
    (DataFrames), in the same order and with the same values.  Memory: a chunk, plus, from the
    first chunk holding IO-Aware rows on, the static IO-Aware rows and a few numbers per sub-job
    (their fold-back needs the whole file: those chunks are read twice)."""
    source = str(path)
    reader = JobsFile(path, chunk_bytes)
    first_io, static_rows, subs, statics = None, [], [], {}
    for chunk in reader.chunks():
        df = chunk.df
        if "metadata" not in df.columns or "workload_name" not in df.columns or df.empty:
            if first_io is None:
                yield df
            continue
        meta, of, is_static, is_sub = _io_parts(df)
        if first_io is None:
            if not is_static.any() and not is_sub.any():
                yield df
                continue
            first_io = chunk
        rows = df[is_static].set_axis(chunk.pos + np.flatnonzero(is_static.to_numpy()))
        key = rows["workload_name"].astype(str) + "!" + rows["job_id"].astype(str)
        statics.update(zip(key, rows.index))
        static_rows.append(rows)
        subs.append(_sub_rows(df, meta, of, is_sub, chunk.pos))
    if first_io is None:
        return
    rows = pd.concat(static_rows)
    idx, values, positions = _fold_values(rows, statics, pd.concat(subs, ignore_index=True), source)
    del subs
    folded = rows.loc[idx].copy()
    for col, value in values.items():
        if col in folded.columns:
            folded[col] = value
    del rows, static_rows
    folded = folded.set_axis(positions).sort_index(kind="stable")
    for chunk in reader.chunks(resume=first_io):
        df = chunk.df
        if "metadata" not in df.columns or df.empty:
            continue
        _, _, is_static, is_sub = _io_parts(df)
        keep = ~(is_static | is_sub).to_numpy()
        plain = df[keep].set_axis(chunk.pos + np.flatnonzero(keep).astype(float))
        end = chunk.pos + len(df)
        here = folded[(folded.index >= chunk.pos) & (folded.index < end)]
        yield pd.concat([plain, here]).sort_index(kind="stable").reset_index(drop=True) if len(here) else \
            plain.reset_index(drop=True)


@dataclass(frozen=True)
class Metrics:
    nb_jobs: int
    mean_waiting: float
    mean_bounded_slowdown: float
    mean_turnaround: float
    max_waiting: float
    utilisation: float
    makespan: float

    def as_dict(self) -> dict[str, float]:
        return dict(self.__dict__)


def bounded_slowdown(df: pd.DataFrame, tau: float = TAU) -> np.ndarray:
    turnaround = (df["finish_time"] - df["submission_time"]).to_numpy()
    return bounded_slowdown_of(turnaround, df["execution_time"].to_numpy(), tau)


def bounded_slowdown_of(turnaround: np.ndarray, runtime: np.ndarray, tau: float = TAU) -> np.ndarray:
    """max(turnaround / max(runtime, tau), 1), element-wise."""
    return np.maximum(turnaround / np.maximum(runtime, tau), 1.0)


def node_count(alloc: str, requested: int = 0) -> int:
    """Nodes of an allocation (a job without allocation counts its request)."""
    return len(ProcSet.from_str(alloc)) if alloc else int(requested)


def compute_metrics(df: pd.DataFrame, nb_compute: int | None = None, tau: float = TAU) -> Metrics:
    """Metrics of one run.  ``nb_compute`` defaults to the highest resource id used + 1."""
    if df.empty:
        return Metrics(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    waiting = (df["starting_time"] - df["submission_time"]).to_numpy()
    turnaround = (df["finish_time"] - df["submission_time"]).to_numpy()
    nodes = np.array([node_count(a, r) for a, r in zip(df["allocated_resources"],
                                                         df["requested_number_of_resources"])])
    if nb_compute is None:
        nb_compute = max((ProcSet.from_str(a).max + 1 for a in df["allocated_resources"] if a),
                         default=int(nodes.max()))
    makespan = float(df["finish_time"].max() - df["submission_time"].min())
    used = float(np.sum(nodes * df["execution_time"].to_numpy()))
    return Metrics(
        nb_jobs=len(df),
        mean_waiting=float(waiting.mean()),
        mean_bounded_slowdown=float(bounded_slowdown(df, tau).mean()),
        mean_turnaround=float(turnaround.mean()),
        max_waiting=float(waiting.max()),
        utilisation=used / (nb_compute * makespan) if makespan > 0 else 0.0,
        makespan=makespan,
    )


def metrics_table(runs: dict[str, pd.DataFrame], nb_compute: int | None = None, baseline: str | None = None,
                  energy: dict[str, float] | None = None):
    """A rich table comparing runs; ratios against ``baseline`` when given; an ``energy (kJ)``
    column when ``energy`` gives runs their energy in J (:func:`read_energy`'s ``energy``)."""
    from rich.table import Table

    energy = {k: v for k, v in (energy or {}).items() if v == v}  # NaN: the run had no -E
    table = Table(title="Scheduling metrics" + (f" (ratio vs {baseline})" if baseline else ""))
    for col in ("scheduler", "jobs", "mean wait (s)", "mean bounded slowdown (tau=600s)", "utilisation",
                "makespan (s)") + (("energy (kJ)",) if energy else ()):
        table.add_column(col, justify="left" if col == "scheduler" else "right")
    computed = {name: compute_metrics(df, nb_compute) for name, df in runs.items()}
    base = computed.get(baseline) if baseline else None
    for name, m in computed.items():
        def cell(value: float, ref: float | None, fmt: str) -> str:
            text = format(value, fmt)
            if base is not None and ref:
                text += f" ({value / ref:.2f}x)"
            return text

        table.add_row(name, str(m.nb_jobs),
                      cell(m.mean_waiting, base.mean_waiting if base else None, ",.1f"),
                      cell(m.mean_bounded_slowdown, base.mean_bounded_slowdown if base else None, ",.2f"),
                      cell(m.utilisation, base.utilisation if base else None, ".1%"),
                      cell(m.makespan, base.makespan if base else None, ",.0f"),
                      *([cell(energy[name] / 1e3, energy.get(baseline, 0) / 1e3 if base else None, ",.1f")
                         if name in energy else "-"] if energy else []))
    return table


def _csv_numbers(path: Path, columns: tuple[str, ...], what: str) -> pd.DataFrame:
    """A small numeric CSV of Batsim's (header first), its ``columns`` checked finite numbers
    ("NA" allowed where Batsim writes it), errors naming line and column."""
    import io

    from coburst.validate import decode_text, read_bytes

    text = decode_text(read_bytes(path, what), str(path))
    try:
        df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise InputError(path, None, f"not a Batsim {what}: {exc}") from None
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(path, "header", f"not a Batsim {what}: missing columns {missing}")
    for col in columns:
        values = pd.to_numeric(df[col], errors="coerce").to_numpy(float)
        bad = np.flatnonzero(~np.isfinite(values))
        if len(bad):
            i = int(bad[0])
            raise InputError(path, f"line {i + 2}, column {col}", f"{df[col].iloc[i]!r} is not a finite number")
        df[col] = values
    return df


def read_energy(prefix: str | Path) -> dict[str, float]:
    """Energy of one run (``coburst sim -E`` or ``batsim -E``), NaN when it ran without it.

    * ``energy`` (J): ``_schedule.csv``'s ``consumed_joules``, Batsim's metric: the
      platform's energy from the first job submission to the last job end;
    * ``energy_total`` (J): the last ``energy`` of ``_consumed_energy.csv``: from time 0 to
      the last traced event (a job start or end, a pstate change).

    A run without ``<prefix>_consumed_energy.csv`` had no energy simulation (its
    ``consumed_joules`` is Batsim's placeholder 0): both NaN.
    """
    trace = Path(f"{prefix}_consumed_energy.csv")
    if not trace.is_file():
        return {"energy": float("nan"), "energy_total": float("nan")}
    energy = _csv_numbers(trace, ("time", "energy"), "_consumed_energy.csv")
    total = float(energy["energy"].iloc[-1]) if len(energy) else 0.0
    schedule = Path(f"{prefix}_schedule.csv")
    joules = float("nan")
    if schedule.is_file():
        joules = float(_csv_numbers(schedule, ("consumed_joules",), "_schedule.csv")["consumed_joules"].iloc[0])
    return {"energy": joules, "energy_total": total}


def job_energy(df: pd.DataFrame) -> np.ndarray:
    """Each job's ``consumed_energy`` (J) from a ``_jobs.csv`` table, NaN where Batsim wrote
    -1 (no energy simulation) or nothing."""
    if "consumed_energy" not in df.columns:
        return np.full(len(df), np.nan)
    values = pd.to_numeric(df["consumed_energy"], errors="coerce").to_numpy(float)
    return np.where(values >= 0, values, np.nan)
