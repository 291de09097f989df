"""The one validation layer: every rule coburst applies to what it reads, in one place.

Every problem becomes an :class:`~coburst.errors.InputError` naming the file (or the
option), the place (line, JSON path, XML element, byte) and the problem; the CLI prints it
on one line and exits with status 2.  Nothing here prints a traceback.

Rules (where a choice had to be made, the decision is written next to it):

* **Files** (:func:`read_bytes`, :func:`read_text`, :func:`read_json`): a missing path, a
  directory or an unreadable file is named as such.  Text must be UTF-8 (a UTF-8 byte-order
  mark is dropped); UTF-16 and UTF-32 are *detected* (byte-order mark, or NUL bytes between
  characters) and named, other invalid bytes are located by line and column.
* **JSON** (:func:`read_json`): strict JSON: ``NaN``, ``Infinity`` and ``-Infinity`` (which
  Python's ``json`` accepts) are refused with their line and column; nesting past
  :data:`coburst.nesting.DEPTH_MAX` (500) levels is refused with its line, column and depth
  (:func:`loads_bounded`), not a ``RecursionError``.
* **Numbers** (:func:`number`): finite, and inside the declared range.  Dates and durations
  of coburst's own formats (SWF conversion, IRMaSim workloads, model files) are at most
  :data:`TIME_MAX` = 2**32 s (136 years): up to there a double keeps a resolution finer
  than the microsecond Batsim's messages carry.  Batsim workloads read by the simulator
  have no such limit (Batsim has none; :mod:`coburst.simulator.workload`); quantities (flops, bytes)
  at most :data:`AMOUNT_MAX` = 1e30; counts (resources, processors) at most
  :data:`COUNT_MAX` = 2**31 - 1.
* **Schemas** (:class:`Field`, :func:`check_object`): the JSON parameter files (the
  burst-buffer model) are declared as a table of fields (type, range, required) and
  checked against it; the Batsim workload rules live in
  :mod:`coburst.simulator.workload` (Batsim 4.2's own rules, field by field, with
  :func:`number`).
* **Options** (:func:`opt_float`, :func:`opt_int`): argparse types; a bad value ends with
  ``coburst CMD: error: argument --kappa: expected a finite number >= 0, got 'nan'``, status 2.
* **Outputs** (:func:`check_output`): checked *before* any work: not a directory, its
  folder exists or can be created (no regular file on the way), and a file can really be
  created there (read-only folders and file systems are caught even for root).
  Outputs are then written atomically (:func:`coburst.fileio.atomic_write`).
* **Output folders** (:func:`check_output_folder`, :func:`output_folder`): the rule for every
  command that fills a folder (campaigns, tables, figures): checked before any work without
  creating anything; then created, and *claimed last*: until the command calls
  :meth:`OutputFolder.claim` (after every check passed), a failure removes whatever the
  attempt created (the folders it made, the entries it added to an existing folder), so the
  next run of the same command sees the folder as it was.

The standard JSON Schema / pydantic libraries are not dependencies of coburst, so the
schemas are the small declarative tables of this module.
"""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
import re
import shutil
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from coburst.errors import InputError

#: dates and durations (seconds) of coburst's own formats: 2**32 s keeps sub-microsecond
#: resolution in a double (Batsim workloads in the simulator are not bounded, as in Batsim)
TIME_MAX = float(2**32)
#: quantities (flops, bytes, KB)
AMOUNT_MAX = 1e30
#: counts (resources, processors, jobs)
COUNT_MAX = 2**31 - 1


# ====================================================================== numbers
def number(value: Any, source: Any, where: str | None, *, minimum: float | None = None,
           maximum: float | None = None, exclusive_minimum: bool = False, integer: bool = False,
           allow: Iterable[float] = ()) -> float | int:
    """``value`` as a finite number in range, else InputError naming ``source`` and ``where``.

    ``allow``: special values accepted as they are (e.g. ``-1`` = unknown).
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(source, where, f"expected a number, got {_show(value)}")
    if not math.isfinite(value):
        raise InputError(source, where, f"expected a finite number, got {value}")
    if value in tuple(allow):
        return value
    if integer and int(value) != value:
        raise InputError(source, where, f"expected an integer, got {value}")
    if minimum is not None and (value <= minimum if exclusive_minimum else value < minimum):
        raise InputError(source, where, f"must be {'>' if exclusive_minimum else '>='} {minimum:g}, got {value:g}")
    if maximum is not None and value > maximum:
        raise InputError(source, where, f"must be <= {maximum:g}, got {value:g}")
    return int(value) if integer else value


#: the most characters of an input value an error message quotes (a 50 MB name is cut)
QUOTE_MAX = 200


def cut(text: str, limit: int = QUOTE_MAX) -> str:
    """``text`` cut to ``limit`` characters, its size said when cut (error messages quote input
    values through it: a 50 MB profile name or a 10-million-digit field is never printed whole)."""
    text = str(text)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def quote(value: Any, limit: int = QUOTE_MAX) -> str:
    """An input value as an error message quotes it: its JSON text, cut (:func:`cut`).  A huge
    integer is not turned into text whole (Python refuses past 4300 digits): its size is said."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 600:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return cut(text, limit)


def _show(value: Any) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ====================================================================== schemas
@dataclass(frozen=True)
class Field:
    """One field of a JSON object: its type and range.

    ``kind``: ``"number"``, ``"integer"``, ``"string"``, ``"object"``, ``"any"``.
    """

    name: str
    kind: str = "number"
    required: bool = False
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    choices: tuple = ()
    doc: str = ""


def check_object(doc: Any, fields: Iterable[Field], source: Any, where: str = "", hint: str = "") -> dict:
    """Check ``doc`` (a JSON object) against ``fields``; return it. Unknown keys are kept
    (parameter files carry notes and descriptions); ``hint`` completes missing-field messages."""
    if not isinstance(doc, dict):
        kind = "a list" if isinstance(doc, list) else _show(doc)
        raise InputError(source, where or None, f"expected a JSON object, got {kind}")
    for f in fields:
        path = f"{where}.{f.name}" if where else f.name
        if f.name not in doc:
            if f.required:
                raise InputError(source, where or None,
                                 f"the field {f.name!r} is missing" + (f" ({hint})" if hint else ""))
            continue
        value = doc[f.name]
        if f.kind in ("number", "integer"):
            number(value, source, path, minimum=f.minimum, maximum=f.maximum,
                   exclusive_minimum=f.exclusive_minimum, integer=f.kind == "integer")
        elif f.kind == "string" and not isinstance(value, str):
            raise InputError(source, path, f"expected a string, got {_show(value)}")
        elif f.kind == "object" and not isinstance(value, dict):
            raise InputError(source, path, f"expected a JSON object, got {_show(value)}")
        if f.choices and value not in f.choices:
            expected = f.doc or f"expected one of {', '.join(map(repr, f.choices))}"
            raise InputError(source, path, f"{expected}, got {_show(value)}")
    return doc


# ====================================================================== files
def read_bytes(path: str | Path, what: str = "file") -> bytes:
    """The bytes of ``path``; InputError naming a missing path, a directory, an unreadable file."""
    p = Path(path)
    try:
        if p.is_dir():
            raise InputError(p, None, f"is a directory, expected a {what}")
        return p.read_bytes()
    except FileNotFoundError:
        raise InputError(p, None, f"{what} not found") from None
    except OSError as exc:
        raise InputError(p, None, f"cannot read the {what}: {exc.strerror or exc}") from None


def decode_text(data: bytes, source: Any) -> str:
    """UTF-8 text (BOM dropped); UTF-16/UTF-32 and NUL bytes detected and named."""
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        raise InputError(source, "byte 0", "UTF-32 text detected (byte-order mark); save the file as UTF-8")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError(source, "byte 0", "UTF-16 text detected (byte-order mark); save the file as UTF-8")
    if b"\x00" in data:
        head = data[:200]
        if len(head) >= 4 and (head[1::2].count(0) > len(head) // 4 or head[0::2].count(0) > len(head) // 4):
            raise InputError(source, "byte 0", "UTF-16 text detected (NUL bytes between characters); "
                                               "save the file as UTF-8")
        pos = data.index(0)
        line = data[:pos].count(b"\n") + 1
        raise InputError(source, f"line {line} (byte {pos})", "NUL byte: not a text file")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(source, f"line {line} column {col} (byte {exc.start})",
                         "not valid UTF-8 text; save the file as UTF-8") from None


def read_text(path: str | Path, what: str = "file") -> str:
    return decode_text(read_bytes(path, what), str(path))


def _constant(name: str):
    raise ValueError(name)


def parse_json(text: str, source: Any, object_pairs_hook: Callable | None = None,
               parse_float: Callable[[str], float] | None = None) -> Any:
    """Strict JSON (no NaN/Infinity, bounded nesting); InputError with line and column
    (``parse_float``: the reading of numbers with a fraction or an exponent, default ``float``)."""
    try:
        return loads_bounded(text, source, object_pairs_hook=object_pairs_hook, parse_constant=_constant,
                             parse_float=parse_float)
    except json.JSONDecodeError as exc:
        raise InputError(source, f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}") from None
    except ValueError as exc:  # NaN, Infinity, -Infinity
        pos = _find_constant(text, str(exc))
        raise InputError(source, pos, f"{exc} is not a JSON number (JSON has no NaN or infinities)") from None


def _frames() -> int:
    frame, n = sys._getframe(), 0
    while frame is not None:
        n += 1
        frame = frame.f_back
    return n


def loads_bounded(text: str, source: Any, limit: int | None = None, **kwargs) -> Any:
    """``json.loads`` refusing documents nested more than :data:`coburst.nesting.DEPTH_MAX`
    levels: an InputError naming ``source``, the line, the column and the depth.  (Python's
    C decoder counts its nesting against the recursion limit: the limit is set, for the call,
    that many levels above the caller's frames; a few levels more are the hooks' frames.)
    ``limit``: a lower bound of the caller's (a format that nests a known few levels)."""
    from coburst.nesting import DEPTH_MAX, problem, too_deep, where

    limit = DEPTH_MAX if limit is None else min(limit, DEPTH_MAX)
    saved = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(_frames() + limit + 10)
        return json.loads(text, **kwargs)
    except RecursionError:
        pass
    except ValueError as exc:  # an integer past Python's 4300 digits (a JSONDecodeError passes on)
        digits = None if isinstance(exc, json.JSONDecodeError) or "digits" not in str(exc) else \
            re.search(r"\d{4301,}", text)
        if digits is None:
            raise
        before = text[: digits.start()]
        where = f"line {before.count(chr(10)) + 1} column {digits.start() - (before.rfind(chr(10)) + 1) + 1}"
        raise InputError(source, where, f"a number of {len(digits.group())} digits: more than the 4300 a coburst "
                                        "input may hold") from None
    finally:
        sys.setrecursionlimit(saved)
    place = too_deep(text, limit)
    if place is None:  # (deeper than the hooks allow, not than the limit)
        raise InputError(source, None, f"JSON nested too deeply (more than about {limit} levels of arrays or "
                                       "objects): refused, coburst's inputs nest a few levels")
    raise InputError(source, where(place), f"JSON {problem(place, limit)}")


def _find_constant(text: str, name: str) -> str | None:
    for m in re.finditer(re.escape(name), text):
        before = text[: m.start()]
        if before.count('"') % 2 == 0:
            line = before.count("\n") + 1
            return f"line {line} column {m.start() - (before.rfind(chr(10)) + 1) + 1}"
    return None


def read_json(path: str | Path, what: str = "JSON file", object_pairs_hook: Callable | None = None,
              parse_float: Callable[[str], float] | None = None) -> Any:
    """Read and parse a JSON file with every check of this module."""
    return parse_json(read_text(path, what), str(path), object_pairs_hook, parse_float)


# ====================================================================== outputs
def check_output(path: str | Path, option: str) -> Path:
    """Check *before any work* that ``path`` can be written: InputError naming ``option``.

    Creates the missing folders (as :func:`coburst.fileio.atomic_write` would) and probes
    the folder with a temporary file, removed at once.
    """
    p = Path(path)
    if str(path) == "" or str(path).endswith(os.sep):
        raise InputError(option, str(path), "expected a file name, got a folder")
    if p.is_dir():
        raise InputError(option, str(p), "is a directory; expected a file name")
    parent = p.parent
    for anc in [parent, *parent.parents]:
        if anc.exists() and not anc.is_dir():
            raise InputError(option, str(p), f"{anc} is a regular file, not a folder")
        if anc.exists():
            break
    try:
        parent.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".probe", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(option, str(p), f"cannot write there: {_os_reason(exc)}") from None
    return p


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.EROFS:
        return "read-only file system"
    return exc.strerror or str(exc)


def check_output_folder(path: str | Path, option: str) -> Path:
    """Check *before any work* that ``path`` can be (or already is) an output folder, creating
    nothing: every existing part of the path is a folder, and the deepest existing one
    accepts new entries (probed with a temporary folder, removed at once: read-only and
    virtual file systems are caught even for root).  InputError naming ``option``."""
    p = Path(path)
    if str(path) == "":
        raise InputError(option, "''", "expected a folder name")
    anc = p
    while not anc.exists():
        if anc.is_symlink():
            raise InputError(option, str(p), f"{anc} is a broken symbolic link")
        if anc.parent == anc:
            break
        anc = anc.parent
    if not anc.is_dir():
        where = "is a regular file, not a folder" if anc == p else f"cannot be made: {anc} is a regular file, not a folder"
        raise InputError(option, str(p), where)
    try:
        probe = tempfile.mkdtemp(prefix=".coburst-probe-", dir=anc)
        os.rmdir(probe)
    except OSError as exc:
        raise InputError(option, str(p), f"cannot write there: {_os_reason(exc)}") from None
    return p


class OutputFolder:
    """An output folder being filled (see :func:`output_folder`)."""

    def __init__(self, path: Path, option: str):
        self.path = path
        self.option = option
        self.claimed = False
        self._made: Path | None = None       # outermost folder this attempt created
        self._before: set[str] | None = None  # entries of an existing folder before the attempt
        self._locked = False                  # the body ran (under the lock, if any)

    def claim(self) -> None:
        """Every check passed: from now on the folder is the command's, failures keep it."""
        self.claimed = True

    def _open(self) -> None:
        missing = []
        anc = self.path
        while not anc.exists():
            missing.append(anc)
            anc = anc.parent
        if missing:
            self._made = missing[-1]
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(self.option, str(self.path), f"cannot create the folder: {_os_reason(exc)}") from None

    def _snapshot(self) -> None:
        if self._made is None:
            self._before = set(os.listdir(self.path))

    def _undo(self) -> None:
        if self._made is not None:
            shutil.rmtree(self._made, ignore_errors=True)
            return
        if self._before is None or not self._locked:
            return  # the folder's lock was not ours: what is in it belongs to its holder
        try:
            names = set(os.listdir(self.path)) - self._before
        except OSError:
            return
        for name in names:
            entry = self.path / name
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                try:
                    entry.unlink()
                except OSError:
                    pass


@contextmanager
def output_folder(path: str | Path, option: str, lock: Callable[[Path], Any] | None = None) -> Iterator[OutputFolder]:
    """Check, create and hand over an output folder (module doc, "Output folders").

    ``with output_folder(out, "--out", lock=...) as folder: ...checks...; write the marker;
    folder.claim()`` -- any exception (an InputError, Ctrl-C) before :meth:`OutputFolder.claim`
    removes what the attempt created and propagates.  ``lock``: a context manager factory
    (e.g. the campaign's one-process-per-folder lock) held for the whole body; a command
    refused by another one's lock never touches that one's files."""
    from contextlib import nullcontext

    folder = OutputFolder(check_output_folder(path, option), option)
    folder._open()
    folder._snapshot()  # used only once the lock is ours: then nobody else wrote here meanwhile
    try:
        with (lock(folder.path) if lock is not None else nullcontext()):
            folder._locked = True
            try:
                yield folder
            except BaseException:
                if not folder.claimed:
                    folder._undo()
                raise
    except BaseException:
        if not folder.claimed and folder._made is not None and folder._locked:
            shutil.rmtree(folder._made, ignore_errors=True)  # the lock released: remove the folder we made
        raise


# ====================================================================== argparse types
def _type(name: str, convert: Callable[[str], Any], check: Callable[[Any], str | None]) -> Callable[[str], Any]:
    def parse(text: str):
        try:
            value = convert(text)
        except (TypeError, ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"expected {name}, got {text!r}") from None
        problem = check(value)
        if problem:
            raise argparse.ArgumentTypeError(f"{problem}, got {text!r}")
        return value

    parse.__name__ = name  # argparse shows it in "invalid <name> value" messages
    return parse


def _range_text(minimum, maximum, exclusive_minimum) -> str:
    parts = []
    if minimum is not None:
        parts.append(f"{'>' if exclusive_minimum else '>='} {minimum:g}")
    if maximum is not None:
        parts.append(f"<= {maximum:g}")
    return " and ".join(parts)


def opt_float(minimum: float | None = None, maximum: float | None = None, *,
              exclusive_minimum: bool = False) -> Callable[[str], float]:
    """argparse type: a finite float in range (``nan``, ``inf``, ``1e999`` refused)."""
    rng = _range_text(minimum, maximum, exclusive_minimum)

    def check(v: float) -> str | None:
        if not math.isfinite(v):
            return "expected a finite number"
        if (minimum is not None and (v <= minimum if exclusive_minimum else v < minimum)) or \
                (maximum is not None and v > maximum):
            return f"must be {rng}"
        return None

    return _type("a finite number", float, check)


def opt_int(minimum: int | None = None, maximum: int | None = None) -> Callable[[str], int]:
    """argparse type: an integer in range."""
    rng = _range_text(minimum, maximum, False)

    def check(v: int) -> str | None:
        if (minimum is not None and v < minimum) or (maximum is not None and v > maximum):
            return f"must be {rng}"
        return None

    return _type("an integer", int, check)


#: seeds: numpy's Generator takes any non-negative integer; 2**63 - 1 keeps them printable
SEED = opt_int(0, 2**63 - 1)
#: wall-clock timeouts (seconds)
TIMEOUT = opt_float(0, 1e6, exclusive_minimum=True)
#: generated platform counts (nodes, groups...): big enough for any real machine
PLATFORM_COUNT = opt_int(None, 1_000_000)
